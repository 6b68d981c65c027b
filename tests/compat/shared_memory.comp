#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Workgroup memory within every device's limit: 4 KiB + 256 bytes, of the
// 16 KiB Vulkan guarantees.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
shared uint tile[1024];
shared uvec4 extra[16];
void main()
{
    uint i = gl_LocalInvocationID.x;
    for (uint k = 0u; k < 16u; k++)
        tile[k * 64u + i] = k * 64u + i;
    if (i < 16u)
        extra[i] = uvec4(i, i * 2u, i * 3u, i * 4u);
    barrier();
    d[i] = tile[1023u - i] + extra[i % 16u].w;
}
