#version 450
// image-bench: 3x3 box blur, edges clamped, between two row-major float
// storage buffers of w x h texels.
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) readonly buffer Src { float v[]; } src;
layout(binding = 1) writeonly buffer Dst { float v[]; } dst;
layout(push_constant) uniform P { int w; int h; } pc;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= pc.w || p.y >= pc.h)
        return;
    ivec2 last = ivec2(pc.w - 1, pc.h - 1);
    float acc = 0.0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            ivec2 q = clamp(p + ivec2(dx, dy), ivec2(0), last);
            acc += src.v[q.y * pc.w + q.x];
        }
    dst.v[p.y * pc.w + p.x] = acc / 9.0;
}
