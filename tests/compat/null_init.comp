#version 450
// targets: vulkan1.3
// Zero-initialised workgroup memory (GL_EXT_null_initializer): every
// invocation reads a neighbour's slot before anyone writes one.
#extension GL_EXT_null_initializer : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
shared uint s[64] = {};
void main()
{
    uint i = gl_LocalInvocationID.x;
    uint before = s[63u - i];
    barrier();
    s[i] = i + 1000u;
    barrier();
    d[i] = before + s[63u - i] * 2u;
}
