#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// A combined image sampler that main reads with texelFetch.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { float d[]; };
layout(binding = 1) uniform sampler2D tex;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    d[i] = texelFetch(tex, ivec2(i, 0), 0).x;
}
