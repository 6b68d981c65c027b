#version 450
// One Jacobi sweep for -u'' = f with u = 0 at both ends:
// y[i] = (f[i] * h^2 + x[i - 1] + x[i + 1]) / 2 for i < n.
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer F { float f[]; };
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n; float h2; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n)
        return;
    float left = i > 0u ? x[i - 1u] : 0.0;
    float right = i + 1u < pc.n ? x[i + 1u] : 0.0;
    y[i] = (f[i] * pc.h2 + left + right) * 0.5;
}
