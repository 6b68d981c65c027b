/*
 * cuda-streams: the CUDA side of salvo-bench's "streams side by side"
 * figures, the same program shape with CUDA streams, for comparing on one
 * machine in one run. Not built by CMake (CUDA is optional); build with
 *
 *     nvcc -O2 -o cuda-streams examples/cuda_streams.cu
 *
 * Prints, as medians of 5 runs:
 *  - two streams of single-block kernels of about 2 ms each: time for both
 *    streams together / time for one alone (1.00: side by side, 2.00: one
 *    after the other);
 *  - a 256 MiB host-to-device copy (pinned memory) on one stream while the
 *    other runs kernels of about the copy's length: how far from fully
 *    overlapped (0) to fully serial (1).
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                     \
    do {                                                                             \
        cudaError_t e_ = (x);                                                        \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* One block, one thread doing dependent arithmetic: a kernel that takes
 * time without filling the GPU, as salvo-bench's spin kernel. */
__global__ void spin(unsigned *out, unsigned iterations)
{
    unsigned x = threadIdx.x + 1;
    for (unsigned i = 0; i < iterations; i++)
        x = x * 1664525u + 1013904223u;
    out[threadIdx.x] = x;
}

static double now_s()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static double spin_alone(cudaStream_t s, unsigned *out, unsigned it, int count)
{
    double t0 = now_s();
    for (int i = 0; i < count; i++)
        spin<<<1, 1, 0, s>>>(out, it);
    CHECK(cudaStreamSynchronize(s));
    return now_s() - t0;
}

int main()
{
    const int repeats = 5, count = 8;
    cudaStream_t st[2];
    unsigned *out[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
        CHECK(cudaMalloc(&out[i], 64 * sizeof(unsigned)));
    }
    spin_alone(st[0], out[0], 1, 1);
    unsigned it = 1024;
    while (it < (1u << 30) && spin_alone(st[0], out[0], it, 4) < 8e-3)
        it *= 2;
    std::vector<double> one, two;
    for (int r = 0; r < repeats; r++) {
        one.push_back(spin_alone(st[0], out[0], it, count));
        double t0 = now_s();
        for (int i = 0; i < count; i++) {
            spin<<<1, 1, 0, st[0]>>>(out[0], it);
            spin<<<1, 1, 0, st[1]>>>(out[1], it);
        }
        CHECK(cudaStreamSynchronize(st[0]));
        CHECK(cudaStreamSynchronize(st[1]));
        two.push_back(now_s() - t0);
    }
    printf("two streams of %d kernels of %.1f ms (one block): both together / one alone %.2f\n",
           count, median(one) / count * 1e3, median(two) / median(one));

    const size_t bytes = 256ull << 20;
    void *host = nullptr, *dev = nullptr;
    CHECK(cudaMallocHost(&host, bytes));
    CHECK(cudaMalloc(&dev, bytes));
    double copy_s = 0;
    for (int warm = 0; warm < 2; warm++) {
        double t0 = now_s();
        CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, st[0]));
        CHECK(cudaStreamSynchronize(st[0]));
        copy_s = now_s() - t0;
    }
    double kernel_s = spin_alone(st[1], out[1], it, 4) / 4;
    int kernels = copy_s / kernel_s < 1 ? 1 : (int)(copy_s / kernel_s + 0.5);
    std::vector<double> tc, tk, tb;
    for (int r = 0; r < repeats; r++) {
        double t0 = now_s();
        CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, st[0]));
        CHECK(cudaStreamSynchronize(st[0]));
        tc.push_back(now_s() - t0);
        tk.push_back(spin_alone(st[1], out[1], it, kernels));
        t0 = now_s();
        CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, st[0]));
        for (int i = 0; i < kernels; i++)
            spin<<<1, 1, 0, st[1]>>>(out[1], it);
        CHECK(cudaStreamSynchronize(st[0]));
        CHECK(cudaStreamSynchronize(st[1]));
        tb.push_back(now_s() - t0);
    }
    double c = median(tc), k = median(tk), both = median(tb);
    double longer = std::max(c, k), shorter = std::min(c, k);
    printf("copy %zu MiB (%.1f ms) beside %d kernels (%.1f ms) on another stream: %.2f of the way "
           "from overlapped (0) to serial (1)\n",
           bytes >> 20, c * 1e3, kernels, k * 1e3, (both - longer) / shorter);
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(dev));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFree(out[i]));
        CHECK(cudaStreamDestroy(st[i]));
    }
    return 0;
}
