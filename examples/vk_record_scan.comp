#version 450
// Inclusive prefix sum within each workgroup, in place: data[i] becomes the
// sum of data[first of i's group .. i], for i < n. The kernel of the
// "library" in vk_record.c, which builds its own pipeline for it; the
// group size is its specialization constant 0 (Hillis-Steele over shared
// memory, one element per invocation).
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint n; } pc;

// One element per invocation, sized by the specialized group.
shared uint tile[gl_WorkGroupSize.x];

void main()
{
    uint i = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationID.x;
    // Past n a zero adds nothing, and every invocation must still reach the
    // barriers below.
    tile[l] = i < pc.n ? data[i] : 0u;
    barrier();
    for (uint d = 1u; d < gl_WorkGroupSize.x; d <<= 1u) {
        uint left = l >= d ? tile[l - d] : 0u;
        // All reads of this step before any write of it: the step reads the
        // previous step's values only.
        barrier();
        tile[l] += left;
        barrier();
    }
    if (i < pc.n)
        data[i] = tile[l];
}
