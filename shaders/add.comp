#version 450
// data[i] += value for i < n: the unit of the dependent-chain tests.
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint n; uint value; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        data[i] += pc.value;
}
