#version 450
// An array of two buffers, each element bound on its own:
// bufs[e].w[i] += v for i < n, in both.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Words { uint w[]; } bufs[2];
layout(push_constant) uniform Push { uint n; uint v; } p;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) {
        bufs[0].w[i] += p.v;
        bufs[1].w[i] += p.v;
    }
}
