#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// A 272-byte push-constant block: refused where max_push_constants_size
// is smaller (256 and 128 are common), run where it fits.
layout(local_size_x = 64) in;
layout(push_constant) uniform Push { vec4 v[17]; } pc;
layout(std430, binding = 0) buffer Out { float d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = pc.v[i % 17u][i % 4u] + pc.v[16].w;
}
