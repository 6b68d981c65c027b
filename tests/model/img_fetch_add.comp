#version 450
// image_add mode 1 of model_random: texelFetch of a box of an r32ui image
// through a combined image sampler, plus v, into a buffer's words from
// off, the box's rows one after another (as a copy of the box lays them).
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform usampler2D src;
layout(std430, binding = 1) writeonly buffer Words { uint words[]; } dst;
layout(push_constant) uniform Push { uint x; uint y; uint w; uint h; uint off; uint v; } p;
void main()
{
    uvec2 q = gl_GlobalInvocationID.xy;
    if (q.x >= p.w || q.y >= p.h)
        return;
    ivec2 at = ivec2(p.x + q.x, p.y + q.y);
    dst.words[p.off + q.y * p.w + q.x] = texelFetch(src, at, 0).x + p.v;
}
