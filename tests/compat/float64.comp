#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Float64: values a float cannot hold.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { double d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = double(i) * 0.125LF + 1099511627776.0LF;
}
