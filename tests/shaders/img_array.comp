#version 450
// Twelve r32f storage images in one array: a launch that takes a
// descriptor set with more image descriptors than a quarter of a small
// pool's room.
layout(local_size_x = 1) in;
layout(binding = 0, r32f) uniform writeonly image2D imgs[12];
void main()
{
    for (int i = 0; i < 12; i++)
        imageStore(imgs[i], ivec2(0), vec4(float(i)));
}
