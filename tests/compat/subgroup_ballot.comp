#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup ballot: d[i] = i + 1 where ballots, bit counts and broadcasts
// agree.
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    uint lane = gl_SubgroupInvocationID;
    uvec4 all = subgroupBallot(true);
    uvec4 even = subgroupBallot((lane & 1u) == 0u);
    bool ok = subgroupBallotBitExtract(all, lane) &&
              subgroupBallotExclusiveBitCount(all) == lane &&
              subgroupBallotBitCount(even) == (subgroupBallotBitCount(all) + 1u) / 2u &&
              subgroupBallotFindLSB(all) == 0u &&
              subgroupBroadcast(i, 0u) == subgroupBroadcastFirst(i) &&
              subgroupBroadcastFirst(lane) == 0u && subgroupInverseBallot(all);
    d[i] = ok ? i + 1u : 0u;
}
