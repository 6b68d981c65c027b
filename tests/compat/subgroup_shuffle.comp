#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup shuffle: d[i] = i + 1 where a shuffle by index and by xor
// fetch the partner's values.
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    uint lane = gl_SubgroupInvocationID;
    bool ok = true;
    if (gl_SubgroupSize >= 2u) {
        uint partner = lane ^ 1u;
        ok = subgroupShuffle(lane, partner) == partner &&
             subgroupShuffleXor(subgroupShuffleXor(i, 1u), 1u) == i &&
             subgroupShuffleXor(lane, 1u) == partner;
    }
    d[i] = ok ? i + 1u : 0u;
}
