#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// A storage image that main writes, beside a buffer.
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
layout(binding = 1, rgba8) uniform writeonly image2D img;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(img, p, vec4(1.0));
    d[p.y * 8 + p.x] = 1u;
}
