#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// A uniform buffer beside storage buffers: out[i] = in[i] * scale + bias + add.
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { float o[]; };
layout(std140, binding = 1) uniform Params { vec4 k; uvec4 add; } params;
layout(std430, binding = 2) readonly buffer In { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    o[i] = x[i] * params.k.x + params.k.y + float(params.add.z);
}
