#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// An array of three buffers on binding 1, each element bound on its own.
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { float o[]; };
layout(std430, binding = 1) readonly buffer In { float v[]; } ins[3];
void main()
{
    uint i = gl_GlobalInvocationID.x;
    o[i] = ins[0].v[i] + 10.0 * ins[1].v[i] + 100.0 * ins[2].v[i];
}
