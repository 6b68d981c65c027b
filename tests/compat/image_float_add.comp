#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 32-bit float atomic add on storage image texels
// (GL_EXT_shader_atomic_float; shaderImageFloat32AtomicAdd): 64 invocations
// add 1.0 to texel i % 4 and 0.5 to texel 4.
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;
layout(binding = 0, r32f) uniform coherent image2D img;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    imageAtomicAdd(img, ivec2(i % 4, 0), 1.0);
    imageAtomicAdd(img, ivec2(4, 0), 0.5);
}
