#version 450
// The partial words at the ends of a byte fill (salvo_fill_pattern): the
// Vulkan accelerator's own kernel (src/accel/vulkan/fill.c), one
// invocation. vkCmdFillBuffer writes whole words only; these two words
// get the fill's bytes under their masks, the other bytes of each word
// left as they are. Atomically, so a write of those other bytes by other
// work at the same time is not lost.
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Head { uint words[]; } head;
layout(std430, set = 0, binding = 1) buffer Tail { uint words[]; } tail;
layout(push_constant) uniform Edges {
    uint word;       // byte i of each word of the fill is byte i of this
    uint head_index; // the first partial word, in binding 0
    uint head_mask;  // the bits of its bytes inside the fill (0: none)
    uint tail_index; // the last, in binding 1
    uint tail_mask;
} e;

void main()
{
    if (e.head_mask != 0u) {
        atomicAnd(head.words[e.head_index], ~e.head_mask);
        atomicOr(head.words[e.head_index], e.word & e.head_mask);
    }
    if (e.tail_mask != 0u) {
        atomicAnd(tail.words[e.tail_index], ~e.tail_mask);
        atomicOr(tail.words[e.tail_index], e.word & e.tail_mask);
    }
}
