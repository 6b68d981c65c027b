#version 450
// dst[i] = src[i] * factor for i < n (uint): the examples' two-buffer kernel.
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint n; uint factor; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        dst[i] = src[i] * pc.factor;
}
