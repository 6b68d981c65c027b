#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup vote: d[i] = i + 1 where every vote came out as it must.
#extension GL_KHR_shader_subgroup_vote : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    bool ok = subgroupAll(i < 64u) && !subgroupAny(i >= 64u) && subgroupAllEqual(7u) &&
              subgroupAny(gl_SubgroupInvocationID == 0u);
    d[i] = ok ? i + 1u : 0u;
}
