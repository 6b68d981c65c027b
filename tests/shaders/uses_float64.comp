#version 450
// A kernel that declares capability Float64 (shaderFloat64).
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { double data[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    data[i] = double(i) * 0.25 + 1099511627776.0;
}
