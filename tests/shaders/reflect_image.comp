#version 450
// A storage image next to a buffer.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) buffer Data { float data[]; };
layout(set = 0, binding = 1, r32f) uniform readonly image2D img;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    data[p.y * 8 + p.x] = imageLoad(img, p).x;
}
