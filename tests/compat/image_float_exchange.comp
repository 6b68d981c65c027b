#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 32-bit float atomic exchange on a storage image texel (core GLSL, but
// Vulkan asks for shaderImageFloat32Atomics): each invocation swaps its
// texel for i + 0.5 and keeps the old value.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float old[]; };
layout(binding = 1, r32f) uniform coherent image2D img;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    old[i] = imageAtomicExchange(img, ivec2(i, 0), float(i) + 0.5);
}
