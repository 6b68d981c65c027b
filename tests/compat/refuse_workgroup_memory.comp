#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Refused: 3 MiB of workgroup memory, over any device's limit.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float d[]; };
shared float s[3 * 1024 * 1024 / 4];
void main()
{
    uint i = gl_LocalInvocationID.x;
    s[i * 4096u] = float(i);
    barrier();
    d[i] = s[(63u - i) * 4096u];
}
