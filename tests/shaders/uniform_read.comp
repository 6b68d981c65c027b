#version 450
// dst[i] = params.v[i].x + i: a uniform block read by a kernel, for the
// checks of uniform binding ranges and offsets.
layout(local_size_x = 16) in;
layout(std140, set = 0, binding = 0) uniform Params { uvec4 v[16]; } params;
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    dst[i] = params.v[i].x + i;
}
