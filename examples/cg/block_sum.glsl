// The workgroup's sum of each invocation's `value`, left in sums[0] for
// every invocation (a shared-memory tree: deterministic, so a run repeats
// the last digit of every dot product, and no float64 atomics are needed).
// Call from uniform control flow: it holds barriers. Local size 256.
shared double sums[256];

double block_sum(double value)
{
    uint t = gl_LocalInvocationID.x;
    sums[t] = value;
    barrier();
    for (uint w = 128u; w > 0u; w >>= 1) {
        if (t < w)
            sums[t] += sums[t + w];
        barrier();
    }
    return sums[0];
}
