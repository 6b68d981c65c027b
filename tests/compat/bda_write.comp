#version 450
// targets: vulkan1.2 vulkan1.3
// Buffer device addresses: writes through an address given in push
// constants; the buffer is not bound.
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant) uniform Push { Words dst; uint mul; uint add; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    pc.dst.v[i] = i * pc.mul + pc.add;
}
