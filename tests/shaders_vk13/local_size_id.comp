#version 450
// Compiled for Vulkan 1.3 (SPIR-V 1.6), where glslang gives the local
// size as LocalSizeId: a module that needs maintenance4.
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    data[i] = i * 3u + gl_WorkGroupSize.x;
}
