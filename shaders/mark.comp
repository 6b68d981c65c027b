#version 450
// Writes one word: the raw-Vulkan yardstick's launch-cost kernel. Launches
// on one buffer overwrite each other's word, so a stream or graph orders
// them with a barrier each, as the yardstick does.
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
void main() { data[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x + 1u; }
