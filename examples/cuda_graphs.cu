/*
 * cuda-graphs: the CUDA side of salvo-bench's graph figures, the same
 * shapes with CUDA graphs, for comparing on one machine in one run. Not
 * built by CMake (CUDA is optional); build with
 *
 *     nvcc -O2 -o cuda-graphs examples/cuda_graphs.cu
 *
 * Graphs of 10,000 tiny kernels (one block of 64 threads, each adding 1
 * to 64 words), captured from a stream and instantiated:
 *  - dependent: every kernel adds to the same 64 words (a chain);
 *  - independent: every kernel adds to its own 256-byte slice, and the
 *    capture drops the stream's dependency before each, so that the graph
 *    has no edges (stream capture alone would chain them);
 * each replayed 10 times back to back after a warm-up, then synchronized:
 * us per node (the replays and the synchronize over 10 x 10,000), host us
 * per cudaGraphLaunch (the first 3 launches after a synchronize, as
 * salvo-bench counts the replays that find a free batch slot), and
 * capture ms (capture, end of capture and instantiation). Then one node's
 * parameters changed (cudaGraphExecKernelNodeSetParams) and a replay: the
 * host time of the two calls; a one-node graph's launch + synchronize
 * round trip, alternating with a kernel launch's. Medians of 5 runs
 * (updates: of 100; round trips: of 2000). Results are checked; a wrong
 * value exits 1.
 *
 * Prints one "name value unit" line per figure: salvo-bench's names with
 * a cuda_ prefix.
 */
#include <sys/resource.h>

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

/* data[i] += value for i < n: salvo-bench's add.comp. */
__global__ void add(unsigned *data, unsigned n, unsigned value)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += value;
}

static double now_s()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static double cpu_s()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void metric(const char *name, double value, const char *unit)
{
    printf("%s %.6g %s\n", name, value, unit);
}

/* Exit 1 unless the 64 words at each of count slices (64 words apart)
 * of data are all want. */
static void expect_words(const unsigned *data, unsigned count, unsigned want, const char *what)
{
    std::vector<unsigned> v((size_t)count * 64);
    CHECK(cudaMemcpy(v.data(), data, v.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < v.size(); i++)
        if (v[i] != want) {
            fprintf(stderr, "%s: word %zu of slice %zu is %u, want %u\n", what, i % 64, i / 64,
                    v[i], want);
            exit(1);
        }
}

/* The next captured node depends on nothing. CUDA 13 added edge data to
 * the call. */
static void drop_dependencies(cudaStream_t s)
{
#if CUDART_VERSION >= 13000
    CHECK(cudaStreamUpdateCaptureDependencies(s, nullptr, nullptr, 0,
                                              cudaStreamSetCaptureDependencies));
#else
    CHECK(cudaStreamUpdateCaptureDependencies(s, nullptr, 0, cudaStreamSetCaptureDependencies));
#endif
}

/* n adds captured on s and instantiated: on one slice (dependent) or each
 * on its own slice with no edges (independent). */
static cudaGraphExec_t capture_adds(cudaStream_t s, unsigned *data, unsigned n, bool dependent,
                                    cudaGraph_t *graph)
{
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (unsigned i = 0; i < n; i++) {
        if (!dependent)
            drop_dependencies(s);
        add<<<1, 64, 0, s>>>(data + (dependent ? 0 : (size_t)i * 64), 64, 1);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaStreamEndCapture(s, graph));
    size_t nodes = 0, roots = 0;
    CHECK(cudaGraphGetNodes(*graph, nullptr, &nodes));
    CHECK(cudaGraphGetRootNodes(*graph, nullptr, &roots));
    if (nodes != n || roots != (dependent ? 1 : n)) {
        fprintf(stderr, "graph: %zu nodes, %zu roots, want %u and %u\n", nodes, roots, n,
                dependent ? 1 : n);
        exit(1);
    }
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiateWithFlags(&exec, *graph, 0));
    return exec;
}

int main()
{
    const int repeats = 5, replays = 10, free_slots = 3;
    const unsigned n = 10000;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t dep_graph = nullptr;
    cudaGraphExec_t dep_exec = nullptr;
    unsigned *dep_data = nullptr;
    for (int mode = 0; mode < 2; mode++) {
        bool dependent = mode == 0;
        unsigned slices = dependent ? 1 : n;
        unsigned *data;
        CHECK(cudaMalloc(&data, (size_t)slices * 64 * sizeof(unsigned)));
        CHECK(cudaMemset(data, 0, (size_t)slices * 64 * sizeof(unsigned)));
        std::vector<double> node, capture, host;
        for (int r = 0; r < repeats; r++) {
            cudaGraph_t graph;
            double t0 = now_s();
            cudaGraphExec_t exec = capture_adds(s, data, n, dependent, &graph);
            capture.push_back(now_s() - t0);
            CHECK(cudaGraphLaunch(exec, s)); /* warm-up, and the upload */
            CHECK(cudaStreamSynchronize(s));
            t0 = now_s();
            for (int k = 0; k < replays; k++) {
                double t1 = now_s();
                CHECK(cudaGraphLaunch(exec, s));
                if (k < free_slots)
                    host.push_back(now_s() - t1);
            }
            CHECK(cudaStreamSynchronize(s));
            node.push_back((now_s() - t0) / ((double)replays * n));
            /* The dependent graph of the last run stays for the update. */
            if (dependent && r == repeats - 1) {
                dep_graph = graph;
                dep_exec = exec;
            } else {
                CHECK(cudaGraphExecDestroy(exec));
                CHECK(cudaGraphDestroy(graph));
            }
        }
        /* Every replay adds n (dependent) or 1 (each slice) to each word. */
        unsigned want = (unsigned)repeats * (replays + 1) * (dependent ? n : 1);
        expect_words(data, slices, want, dependent ? "graph dep" : "graph indep");
        const char *kind = dependent ? "dep" : "indep";
        char name[96];
        snprintf(name, sizeof name, "cuda_graph_%s_n%u_us_per_node", kind, n);
        metric(name, median(node) * 1e6, "us/node");
        snprintf(name, sizeof name, "cuda_graph_%s_n%u_host_us_per_replay", kind, n);
        metric(name, median(host) * 1e6, "us");
        snprintf(name, sizeof name, "cuda_graph_%s_n%u_capture_ms", kind, n);
        metric(name, median(capture) * 1e3, "ms");
        if (dependent) {
            dep_data = data;
        } else {
            CHECK(cudaFree(data));
        }
    }

    /* Update: new arguments for one node, then a replay; the host time of
     * the two calls. Every node of the chain is alike, so any one will do. */
    {
        const int iters = 100;
        std::vector<cudaGraphNode_t> nodes(n);
        size_t count = n;
        CHECK(cudaGraphGetNodes(dep_graph, nodes.data(), &count));
        cudaGraphNode_t target = nodes[count / 2];
        cudaKernelNodeParams p;
        CHECK(cudaGraphKernelNodeGetParams(target, &p));
        CHECK(cudaMemset(dep_data, 0, 64 * sizeof(unsigned)));
        unsigned *arg_data = dep_data, arg_n = 64, arg_value = 1;
        void *args[] = {&arg_data, &arg_n, &arg_value};
        p.kernelParams = args;
        p.extra = nullptr;
        std::vector<double> t;
        unsigned want = 0;
        for (int i = 0; i < iters; i++) {
            arg_value = 1 + (i & 1); /* alternate, so each call changes it */
            double t0 = now_s();
            CHECK(cudaGraphExecKernelNodeSetParams(dep_exec, target, &p));
            CHECK(cudaGraphLaunch(dep_exec, s));
            t.push_back(now_s() - t0);
            CHECK(cudaStreamSynchronize(s));
            want += n - 1 + arg_value;
        }
        expect_words(dep_data, 1, want, "graph update");
        metric("cuda_graph_update_host_us", median(t) * 1e6, "us");
        /* The same with the device busy: a replay in flight, then two
         * updates and replays timed. */
        std::vector<double> tb;
        for (int r = 0; r < 20; r++) {
            arg_value = 1;
            CHECK(cudaGraphExecKernelNodeSetParams(dep_exec, target, &p));
            CHECK(cudaGraphLaunch(dep_exec, s));
            want += n;
            for (int i = 0; i < 2; i++) {
                arg_value = 1 + (i & 1);
                double t0 = now_s();
                CHECK(cudaGraphExecKernelNodeSetParams(dep_exec, target, &p));
                CHECK(cudaGraphLaunch(dep_exec, s));
                tb.push_back(now_s() - t0);
                want += n - 1 + arg_value;
            }
            CHECK(cudaStreamSynchronize(s));
        }
        expect_words(dep_data, 1, want, "graph update, device busy");
        metric("cuda_graph_update_busy_host_us", median(tb) * 1e6, "us");
        CHECK(cudaGraphExecDestroy(dep_exec));
        CHECK(cudaGraphDestroy(dep_graph));
        CHECK(cudaFree(dep_data));
    }

    /* A one-node graph's launch + synchronize, alternating with a kernel
     * launch + synchronize so that both see the same machine. */
    {
        const int iters = 2000;
        unsigned *data;
        CHECK(cudaMalloc(&data, 64 * sizeof(unsigned)));
        CHECK(cudaMemset(data, 0, 64 * sizeof(unsigned)));
        cudaGraph_t graph;
        cudaGraphExec_t exec = capture_adds(s, data, 1, true, &graph);
        CHECK(cudaGraphLaunch(exec, s)); /* warm-up */
        add<<<1, 64, 0, s>>>(data, 64, 1);
        CHECK(cudaStreamSynchronize(s));
        std::vector<double> tg, tk;
        double cpu = 0;
        for (int i = 0; i < iters; i++) {
            double c0 = cpu_s(), t0 = now_s();
            CHECK(cudaGraphLaunch(exec, s));
            CHECK(cudaStreamSynchronize(s));
            double t1 = now_s();
            cpu += cpu_s() - c0;
            tg.push_back(t1 - t0);
            add<<<1, 64, 0, s>>>(data, 64, 1);
            CHECK(cudaStreamSynchronize(s));
            tk.push_back(now_s() - t1);
        }
        CHECK(cudaGetLastError());
        expect_words(data, 1, 2 * iters + 2, "graph 1 node");
        metric("cuda_graph_1node_roundtrip_us", median(tg) * 1e6, "us");
        metric("cuda_graph_1node_roundtrip_cpu_us", cpu / iters * 1e6, "us");
        metric("cuda_launch_sync_roundtrip_median_us", median(tk) * 1e6, "us");
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(graph));
        CHECK(cudaFree(data));
    }
    CHECK(cudaStreamDestroy(s));
    return 0;
}
