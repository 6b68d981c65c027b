#version 450
#extension GL_EXT_debug_printf : require
// Prints each value it finds with its index (shader printf), then doubles it.
layout(local_size_x = 2) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    debugPrintfEXT("value %u at %u", v[i], i);
    v[i] *= 2u;
}
