#version 450
// data[i] += v for i < n, reaching the buffer through its device address
// (salvo_buffer_address) rather than a binding.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };
layout(push_constant) uniform Push { uvec2 data; uint n; uint v; } p;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) {
        Words words = Words(p.data);
        words.w[i] += p.v;
    }
}
