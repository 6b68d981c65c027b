#version 450
// Float atomics on r32f storage image texels: an exchange (core GLSL;
// Vulkan asks for shaderImageFloat32Atomics) in main, an add
// (GL_EXT_shader_atomic_float; shaderImageFloat32AtomicAdd) in a function
// main calls. Reflection reports each; an integer image atomic is neither.
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;
layout(binding = 0, r32f) uniform coherent image2D img;
layout(binding = 1, r32ui) uniform coherent uimage2D counts;
void add_half(int i)
{
    imageAtomicAdd(img, ivec2(i % 4, 1), 0.5);
}
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    imageAtomicExchange(img, ivec2(i, 0), float(i));
    imageAtomicAdd(counts, ivec2(i, 0), 1u);
    add_half(i);
}
