#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Refused: a runtime-sized array of buffers (descriptor indexing). The
// index is not a constant: glslang would size the array by the largest
// constant index used.
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float d[]; };
layout(std430, binding = 1) buffer B { float x[]; } bs[];
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = bs[nonuniformEXT(i % 3u)].x[i];
}
