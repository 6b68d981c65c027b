#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Refused: a buffer in descriptor set 1 (salvo binds set 0 only).
layout(local_size_x = 64) in;
layout(std430, set = 1, binding = 0) buffer Out { uint d[]; };
void main() { d[gl_GlobalInvocationID.x] = 1u; }
