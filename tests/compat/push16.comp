#version 450
// targets: vulkan1.0 vulkan1.1 vulkan1.3
// 16-bit push constants (StoragePushConstant16), read through 32 bits.
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(push_constant) uniform Push { uint16_t a; uint16_t b; float16_t h; float16_t g; } pc;
layout(std430, binding = 0) buffer Out { uint d[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    d[i] = uint(pc.a) * i + uint(pc.b) + uint(float(pc.h) * 4.0) + uint(float(pc.g));
}
