#version 450
// targets: vulkan1.2 vulkan1.3
// Buffer device addresses: reads through an address (what an earlier
// launch wrote there) into a bound buffer.
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Words { uint v[]; };
layout(push_constant) uniform Push { Words src; } pc;
layout(std430, binding = 0) writeonly buffer Out { uint o[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    o[i] = pc.src.v[i] * 2u + 1u;
}
