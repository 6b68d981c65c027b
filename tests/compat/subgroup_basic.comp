#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup basic: ids within range and one elected invocation per
// subgroup. d[i] = i + 1 where every check holds; d[64] counts elections,
// d[65] is the number of subgroups: equal.
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[66]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    bool ok = gl_SubgroupInvocationID < gl_SubgroupSize && gl_SubgroupID < gl_NumSubgroups;
    subgroupBarrier();
    if (subgroupElect())
        atomicAdd(d[64], 1u);
    if (i == 0u)
        d[65] = gl_NumSubgroups;
    d[i] = ok ? i + 1u : 0u;
}
