#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup relative shuffle: d[i] = i + 1 where shuffling up and down by
// one fetch the neighbouring lanes' values (a workgroup of 64 fills its
// subgroups from lane 0).
#extension GL_KHR_shader_subgroup_shuffle_relative : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    uint lane = gl_SubgroupInvocationID;
    uint up = subgroupShuffleUp(lane, 1u);
    uint down = subgroupShuffleDown(lane + 100u, 1u);
    uint live = min(gl_SubgroupSize, 64u);
    bool ok = (lane == 0u || up == lane - 1u) && (lane + 1u >= live || down == lane + 101u);
    d[i] = ok ? i + 1u : 0u;
}
