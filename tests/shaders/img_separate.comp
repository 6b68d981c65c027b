#version 450
// A texture and a sampler bound separately, texelFetch from a 2D array
// layer: the layer's texels, converted to float, into a buffer.
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform texture2DArray tex;
layout(binding = 1) uniform sampler smp;
layout(binding = 2) writeonly buffer Out { float v[]; } dst;
layout(push_constant) uniform P { uint w; uint h; uint layer; } pc;
void main()
{
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.w || p.y >= pc.h)
        return;
    dst.v[p.y * pc.w + p.x] =
        texelFetch(sampler2DArray(tex, smp), ivec3(p, pc.layer), 0).x;
}
