/*
 * cuda_image_bench: image-bench's filter in CUDA, the yardstick for it.
 *
 * The same 3x3 box blur (float32, one channel, edges clamped) of an N x N
 * grid, three ways, as image-bench writes it on salvo:
 *  - buffer:        global memory in and out, row-major;
 *  - surface:       CUDA arrays read and written through surface objects
 *                   (the counterpart of Vulkan storage images);
 *  - texture:       read through a texture object (point sampling, clamp),
 *                   written through a surface (a sampled image).
 * 16 x 16 blocks, as image-bench's workgroups. For each size and variant:
 * one launch is checked against a CPU reference (1e-5; a mismatch exits
 * 1), then a chain of --launches launches ping-ponging between two
 * resources on one stream is timed with events, --reps times after one
 * untimed chain; the figure is the median time per launch. Bandwidth
 * counts 8 bytes per texel per launch, as image-bench does.
 *
 *   cuda_image_bench [--sizes N,N,...] [--launches R] [--reps N] [--json FILE]
 *
 * SPDX-License-Identifier: MIT
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                    cudaGetErrorString(e_));                                                 \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

__global__ void blur_buffer(const float *src, float *dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int qx = min(max(x + dx, 0), w - 1), qy = min(max(y + dy, 0), h - 1);
            acc += src[qy * w + qx];
        }
    dst[y * w + x] = acc / 9.0f;
}

__global__ void blur_surface(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int qx = min(max(x + dx, 0), w - 1), qy = min(max(y + dy, 0), h - 1);
            acc += surf2Dread<float>(src, qx * (int)sizeof(float), qy);
        }
    surf2Dwrite(acc / 9.0f, dst, x * (int)sizeof(float), y);
}

__global__ void blur_texture(cudaTextureObject_t src, cudaSurfaceObject_t dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            acc += tex2D<float>(src, x + dx + 0.5f, y + dy + 0.5f); /* clamp addressing */
    surf2Dwrite(acc / 9.0f, dst, x * (int)sizeof(float), y);
}

enum { V_BUFFER, V_SURFACE, V_TEXTURE, V_COUNT };
static const char *const names[V_COUNT] = {"buffer", "surface", "texture"};

/* Two resources of one variant: buffers, or arrays with surface (and
 * texture) objects. */
struct pair {
    float *buf[2] = {nullptr, nullptr};
    cudaArray_t arr[2] = {nullptr, nullptr};
    cudaSurfaceObject_t surf[2] = {0, 0};
    cudaTextureObject_t tex[2] = {0, 0};
};

static void make(pair &p, int v, int n)
{
    size_t bytes = (size_t)n * n * sizeof(float);
    for (int i = 0; i < 2; i++) {
        if (v == V_BUFFER) {
            CK(cudaMalloc(&p.buf[i], bytes));
            continue;
        }
        cudaChannelFormatDesc cd = cudaCreateChannelDesc<float>();
        CK(cudaMallocArray(&p.arr[i], &cd, n, n, cudaArraySurfaceLoadStore));
        cudaResourceDesc rd = {};
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = p.arr[i];
        CK(cudaCreateSurfaceObject(&p.surf[i], &rd));
        cudaTextureDesc td = {};
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        td.normalizedCoords = 0;
        CK(cudaCreateTextureObject(&p.tex[i], &rd, &td, nullptr));
    }
}

static void drop(pair &p)
{
    for (int i = 0; i < 2; i++) {
        if (p.buf[i])
            CK(cudaFree(p.buf[i]));
        if (p.arr[i]) {
            CK(cudaDestroyTextureObject(p.tex[i]));
            CK(cudaDestroySurfaceObject(p.surf[i]));
            CK(cudaFreeArray(p.arr[i]));
        }
    }
}

static void upload(pair &p, int v, int n, int i, const float *host)
{
    size_t row = (size_t)n * sizeof(float);
    if (v == V_BUFFER)
        CK(cudaMemcpy(p.buf[i], host, row * n, cudaMemcpyHostToDevice));
    else
        CK(cudaMemcpy2DToArray(p.arr[i], 0, 0, host, row, row, n, cudaMemcpyHostToDevice));
}

static void download(pair &p, int v, int n, int i, float *host)
{
    size_t row = (size_t)n * sizeof(float);
    if (v == V_BUFFER)
        CK(cudaMemcpy(host, p.buf[i], row * n, cudaMemcpyDeviceToHost));
    else
        CK(cudaMemcpy2DFromArray(host, row, p.arr[i], 0, 0, row, n, cudaMemcpyDeviceToHost));
}

/* One launch from resource i into the other. */
static void launch(pair &p, int v, int n, int i, cudaStream_t s)
{
    dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
    int o = 1 - i;
    if (v == V_BUFFER)
        blur_buffer<<<grid, block, 0, s>>>(p.buf[i], p.buf[o], n, n);
    else if (v == V_SURFACE)
        blur_surface<<<grid, block, 0, s>>>(p.surf[i], p.surf[o], n, n);
    else
        blur_texture<<<grid, block, 0, s>>>(p.tex[i], p.surf[o], n, n);
    CK(cudaGetLastError());
}

static void cpu_blur(const float *src, float *dst, int n)
{
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            float acc = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int qx = std::min(std::max(x + dx, 0), n - 1);
                    int qy = std::min(std::max(y + dy, 0), n - 1);
                    acc += src[(size_t)qy * n + qx];
                }
            dst[(size_t)y * n + x] = acc / 9.0f;
        }
}

int main(int argc, char **argv)
{
    std::vector<int> sizes = {1024, 2048, 4096};
    int launches = 50, reps = 7;
    const char *json = nullptr;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (!strcmp(argv[i], "--sizes") && more) {
            sizes.clear();
            for (char *t = strtok(argv[++i], ","); t; t = strtok(nullptr, ","))
                sizes.push_back(atoi(t));
        } else if (!strcmp(argv[i], "--launches") && more) {
            launches = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--reps") && more) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--json") && more) {
            json = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--sizes N,N,...] [--launches R] [--reps N] [--json FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (launches < 1 || reps < 1)
        return 2;
    FILE *jf = json ? fopen(json, "w") : nullptr;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s\n%-8s %-8s %12s %10s %9s\n", prop.name, "size", "variant", "us/launch",
           "GB/s", "x buffer");
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int n : sizes) {
        size_t texels = (size_t)n * n;
        std::vector<float> in(texels), want(texels), got(texels);
        for (size_t i = 0; i < texels; i++)
            in[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
        cpu_blur(in.data(), want.data(), n);
        double base = 0;
        for (int v = 0; v < V_COUNT; v++) {
            pair p;
            make(p, v, n);
            upload(p, v, n, 0, in.data());
            launch(p, v, n, 0, s);
            CK(cudaStreamSynchronize(s));
            download(p, v, n, 1, got.data());
            for (size_t i = 0; i < texels; i++)
                if (std::fabs(got[i] - want[i]) > 1e-5f) {
                    fprintf(stderr, "%s %d: texel %zu is %g, want %g\n", names[v], n, i, got[i],
                            want[i]);
                    return 1;
                }
            std::vector<double> per;
            for (int r = 0; r <= reps; r++) {
                CK(cudaEventRecord(e0, s));
                for (int l = 0; l < launches; l++)
                    launch(p, v, n, l % 2, s);
                CK(cudaEventRecord(e1, s));
                CK(cudaEventSynchronize(e1));
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r > 0) /* the first chain is untimed */
                    per.push_back(ms * 1000.0 / launches);
            }
            std::sort(per.begin(), per.end());
            double us = per[per.size() / 2];
            if (v == V_BUFFER)
                base = us;
            double gbs = 8.0 * texels / (us * 1e3);
            printf("%-8d %-8s %12.2f %10.1f %9.2f\n", n, names[v], us, gbs, us / base);
            if (jf)
                fprintf(jf,
                        "{\"bench\":\"cuda_image_bench\",\"size\":%d,\"variant\":\"%s\","
                        "\"us_per_launch\":%.3f,\"gb_per_s\":%.1f,\"x_buffer\":%.3f}\n",
                        n, names[v], us, gbs, us / base);
            drop(p);
        }
    }
    if (jf)
        fclose(jf);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(s));
    return 0;
}
