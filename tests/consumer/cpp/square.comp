#version 450
// v[i] = v[i] * v[i] + k for i < n.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer V { float v[]; };
layout(push_constant) uniform Push { uint n; float k; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        v[i] = v[i] * v[i] + pc.k;
}
