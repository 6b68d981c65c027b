#version 450
// dst[i] = src[i] + add: joins two buffers so a test can see what a
// consumer read.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint n; uint add; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        dst[i] = src[i] + pc.add;
}
