#version 450
// Two descriptor sets declared out of order; a local size mixing literals
// with a specialization constant (default 8, SpecId 1).
layout(local_size_x = 16, local_size_y = 8, local_size_z = 2) in;
layout(local_size_y_id = 1) in;

layout(set = 1, binding = 0) buffer A { uint a[]; };
layout(set = 0, binding = 2) buffer B { uint b[]; };
layout(set = 0, binding = 0) readonly buffer C { uint c[]; };
layout(set = 1, binding = 5) uniform U { uint u; };

void main()
{
    uint i = gl_GlobalInvocationID.x;
    a[i] = b[i] + c[i] + u + gl_WorkGroupSize.y;
}
