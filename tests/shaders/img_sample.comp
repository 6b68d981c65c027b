#version 450
// Sample a 2D image through its sampler at the centres of an out_w x out_h
// grid (normalized coordinates), one float per texel into a buffer.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D src;
layout(binding = 1) writeonly buffer Out { float v[]; } dst;
layout(push_constant) uniform P { uint out_w; uint out_h; } pc;
void main()
{
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.out_w || p.y >= pc.out_h)
        return;
    vec2 uv = (vec2(p) + 0.5) / vec2(pc.out_w, pc.out_h);
    dst.v[p.y * pc.out_w + p.x] = textureLod(src, uv, 0.0).x;
}
