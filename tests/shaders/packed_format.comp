#version 450
// A storage image of a packed format salvo has no salvo_format for.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r11f_g11f_b10f) uniform writeonly image2D hdr;
void main()
{
    imageStore(hdr, ivec2(gl_GlobalInvocationID.xy), vec4(1.0));
}
