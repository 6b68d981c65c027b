#version 450
// targets: vulkan1.0 vulkan1.1
// The local size through spec constants 0 and 2 (x, y) in a SPIR-V 1.0 /
// 1.3 module: the WorkgroupSize built-in made of spec constants.
layout(local_size_x_id = 0, local_size_y_id = 2) in;
layout(constant_id = 1) const uint MUL = 3u;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = i * MUL + gl_WorkGroupSize.x * 1000u + gl_WorkGroupID.x;
}
