#version 450
// targets: vulkan1.3
// The local size through spec constant 0: SPIR-V 1.6 from glslang gives
// it as LocalSizeId (needs maintenance4).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MUL = 3u;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = i * MUL + gl_WorkGroupSize.x * 1000u + gl_WorkGroupID.x;
}
