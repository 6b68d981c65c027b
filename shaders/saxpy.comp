#version 450
// y = a * x + y. The grid may be two-dimensional (x is limited by the
// device's maxComputeWorkGroupCount[0]): it is flattened to one index.
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { float a; uint n; } pc;
void main()
{
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (i < pc.n)
        y[i] = pc.a * x[i] + y[i];
}
