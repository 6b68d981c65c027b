#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Two declarations of binding 0 with different block types: one binding,
// read and written (16 invocations, each on its own 16 bytes).
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 0) writeonly buffer B { vec4 b[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    vec4 t = vec4(a[4u * i], a[4u * i + 1u], a[4u * i + 2u], a[4u * i + 3u]);
    b[i] = t.wzyx * 2.0 + 1.0;
}
