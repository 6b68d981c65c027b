#version 450
// A texture of unsigned integers sampled through a separate sampler
// (textureLod of usampler2D(tex, smp)): texel i of a 64x1 image into a
// buffer. Integer formats are not filtered linearly: a linear sampler
// here is refused at the launch.
layout(local_size_x = 64) in;
layout(binding = 0) uniform utexture2D tex;
layout(binding = 1) uniform sampler smp;
layout(binding = 2) writeonly buffer Out { uint v[]; } dst;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    dst.v[i] = textureLod(usampler2D(tex, smp), vec2((float(i) + 0.5) / 64.0, 0.5), 0.0).x;
}
