#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Plain 32-bit float and int arithmetic: the baseline every device runs.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float f[64]; int n[64]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    f[i] = float(i) * 1.5 + 0.25;
    n[i] = int(i) * -7 + 3;
}
