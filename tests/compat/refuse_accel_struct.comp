#version 460
// targets: vulkan1.2 vulkan1.3
// Refused: an acceleration structure (GL_EXT_ray_query) that main uses.
#extension GL_EXT_ray_query : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint d[]; };
layout(binding = 1) uniform accelerationStructureEXT tlas;
void main()
{
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, 0xffu, vec3(0.0), 0.0,
                          vec3(0.0, 0.0, 1.0), 100.0);
    while (rayQueryProceedEXT(q)) {
    }
    d[gl_GlobalInvocationID.x] = uint(rayQueryGetIntersectionTypeEXT(q, true));
}
