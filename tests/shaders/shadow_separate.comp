#version 450
// A texture read through a comparison sampler (samplerShadow): the
// texture's type is a depth image, refused as a shadow sampler is.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform texture2D depth_map;
layout(set = 0, binding = 1) uniform samplerShadow compare;
layout(set = 0, binding = 2) buffer Out { float lit[]; };
void main()
{
    lit[0] = textureLod(sampler2DShadow(depth_map, compare), vec3(0.5, 0.5, 0.25), 0.0);
}
