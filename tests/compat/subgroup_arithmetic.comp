#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup arithmetic: d[i] = i + 1 where the reductions and scans agree
// with the invocation ids (active invocations are 0..n-1 of a subgroup).
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    uint lane = gl_SubgroupInvocationID;
    uint n = subgroupMax(lane) + 1u;
    bool ok = subgroupAdd(1u) == n && subgroupInclusiveAdd(1u) == lane + 1u &&
              subgroupExclusiveAdd(2u) == 2u * lane && subgroupMin(lane) == 0u &&
              subgroupAdd(lane) == n * (n - 1u) / 2u;
    d[i] = ok ? i + 1u : 0u;
}
