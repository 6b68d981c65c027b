#version 450
// Keeps one workgroup busy for a while: each invocation runs a chain of
// `iterations` dependent integer steps and stores where it ended, so the
// loop cannot be dropped. The benchmark's unit of "a long kernel".
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { uint v[]; };
layout(push_constant) uniform Push { uint iterations; } pc;
void main()
{
    uint x = gl_LocalInvocationID.x + 1u;
    for (uint i = 0u; i < pc.iterations; i++)
        x = x * 1664525u + 1013904223u;
    v[gl_GlobalInvocationID.x] = x;
}
