#version 450
// Writes an indirect dispatch's workgroup counts: counts[at + i] = (x, y, z)[i].
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Counts { uint counts[]; };
layout(push_constant) uniform Push { uint at; uint x; uint y; uint z; } pc;
void main()
{
    counts[pc.at] = pc.x;
    counts[pc.at + 1u] = pc.y;
    counts[pc.at + 2u] = pc.z;
}
