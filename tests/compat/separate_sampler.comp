#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// A separate sampler and texture, combined in main to sample.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float d[]; };
layout(binding = 1) uniform sampler smp;
layout(binding = 2) uniform texture2D tex;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = textureLod(sampler2D(tex, smp), vec2(float(i) / 64.0, 0.5), 0.0).x;
}
