#version 450
// Every buffer access kind, a uniform block and a std430 push block whose
// layout has padding to get right (vec3 alignment, matrices, arrays).
layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float dst[]; };
layout(std140, set = 0, binding = 2) uniform Params { vec4 scale; uint count; };
layout(std430, set = 0, binding = 3) buffer Both { uint head; float both[]; };

struct Inner {
    vec2 p;
    float q;
};

// std430: offsets a 0, b 12, m 16, inner 80 (align 8, padded to 16),
// arr 96, v3 112 (stride 16), last 144; size 148.
layout(push_constant) uniform Push {
    vec3 a;
    float b;
    mat4 m;
    Inner inner;
    float arr[3];
    vec3 v3[2];
    uint last;
} pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= count + pc.last)
        return;
    vec4 v = pc.m * vec4(pc.a, pc.b) + vec4(pc.inner.p, pc.inner.q, pc.arr[i % 3u]);
    dst[i] = src[i] * scale.x + v.x + pc.v3[i & 1u].y;
    both[i] += float(head);
}
