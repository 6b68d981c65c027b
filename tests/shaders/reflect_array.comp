#version 450
// An array of storage buffers under one binding: not supported.
layout(local_size_x = 64) in;
layout(set = 0, binding = 3) buffer Chunk { float v[]; } chunks[4];
void main()
{
    uint i = gl_GlobalInvocationID.x;
    chunks[i & 3u].v[i] = 1.0;
}
