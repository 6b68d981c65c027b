#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// Refused: a cube map that main samples.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float d[]; };
layout(binding = 1) uniform samplerCube cube;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = textureLod(cube, vec3(1.0, float(i) / 64.0, 0.5), 0.0).x;
}
