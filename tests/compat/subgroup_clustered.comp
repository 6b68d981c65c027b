#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup clustered reductions: d[i] = i + 1 where clusters of 1 and 2
// add up (64 invocations leave no cluster partly active).
#extension GL_KHR_shader_subgroup_clustered : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    uint lane = gl_SubgroupInvocationID;
    bool ok = subgroupClusteredAdd(lane, 1u) == lane;
    if (gl_SubgroupSize >= 2u)
        ok = ok && subgroupClusteredAdd(1u, 2u) == 2u &&
             subgroupClusteredMax(lane, 2u) == (lane | 1u);
    d[i] = ok ? i + 1u : 0u;
}
