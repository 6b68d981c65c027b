#version 450
// A depth-comparison sampler (sampler2DShadow): salvo refuses it by name.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler2DShadow depth_map;
layout(set = 0, binding = 1) buffer Out { float lit[]; };
void main()
{
    lit[0] = textureLod(depth_map, vec3(0.5, 0.5, 0.25), 0.0);
}
