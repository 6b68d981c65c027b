#version 450
// Workgroup variables of 16048 bytes as Vulkan sizes them (std430, one
// after another): vec3 tile[1000] 16000, float extra[3] 12, then Pair
// pairs[2] aligned to 16: 32.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { float data[]; };
struct Pair {
    vec3 v;
    float f;
};
shared vec3 tile[1000];
shared float extra[3];
shared Pair pairs[2];
void main()
{
    uint i = gl_LocalInvocationID.x;
    tile[i] = vec3(float(i));
    if (i < 3u)
        extra[i] = 1.0;
    if (i < 2u)
        pairs[i] = Pair(vec3(2.0), 3.0);
    barrier();
    data[gl_GlobalInvocationID.x] = tile[63u - i].x + extra[i % 3u] + pairs[i % 2u].f;
}
