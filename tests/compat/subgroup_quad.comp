#version 450
// targets: vulkan1.1 vulkan1.3
// Subgroup quad operations: d[i] = i + 1 where quad broadcasts and swaps
// fetch the right lanes (subgroups of 4 and more).
#extension GL_KHR_shader_subgroup_quad : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_LocalInvocationIndex;
    uint lane = gl_SubgroupInvocationID;
    bool ok = true;
    if (gl_SubgroupSize >= 4u)
        ok = subgroupQuadBroadcast(lane, 0u) == (lane & ~3u) &&
             subgroupQuadSwapHorizontal(lane) == (lane ^ 1u) &&
             subgroupQuadSwapVertical(lane) == (lane ^ 2u) &&
             subgroupQuadSwapDiagonal(lane) == (lane ^ 3u);
    d[i] = ok ? i + 1u : 0u;
}
