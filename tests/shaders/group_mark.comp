#version 450
// marks[(z * height + y) * width + x] += value for each workgroup (x, y, z)
// that runs: what an indirect dispatch's counts made of it. Workgroups
// outside width x height x depth add to the word after those instead.
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Marks { uint marks[]; };
layout(push_constant) uniform Push { uint width; uint height; uint depth; uint value; } pc;
void main()
{
    uvec3 g = gl_WorkGroupID;
    bool inside = g.x < pc.width && g.y < pc.height && g.z < pc.depth;
    uint i = inside ? (g.z * pc.height + g.y) * pc.width + g.x : pc.width * pc.height * pc.depth;
    atomicAdd(marks[i], pc.value);
}
