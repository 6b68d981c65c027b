/*
 * salvo-bench-cpp: what salvo.hpp adds to a launch, measured.
 *
 * The host time per recorded launch, as salvo-bench's "host ns per recorded
 * launch" measures it (the same kernel, add with a local size of 64 on 64
 * words; the device's default batch size; 10,000 launch calls timed, their
 * share of the submits included, the synchronize after them not), through
 * the C call and through the C++ wrapper, in the same program: runs of
 * the two alternate, each going first every other time. Dependent
 * launches (one slice: a barrier between each) and independent ones (a
 * slice each). Then the same with nothing submitted while the calls are
 * timed ("record only": a batch as large as the run), the host's own cost
 * of a launch, whatever the device does. Each figure is the median of
 * --repeats runs (default 11), printed beside the best run (the least
 * disturbed by the rest of the machine); the results are checked, and a
 * wrong value exits 1.
 *
 * Where the device's own time shows through the host's (lavapipe, whose
 * kernels run on the host's cores, on a loaded machine), the timings
 * scatter; instructions do not:
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out salvo-bench-cpp \
 *       --repeats 1 --launches 2000
 *   callgrind_annotate --inclusive=yes cg.out | grep -E 'launch_c(pp)?\('
 * gives the instructions of each launch loop, the launch calls inside
 * included: each API makes 4 x repeats x launches of them (dependent and
 * independent, at the default batch size and record only), 8,000 here. Without --inclusive, the
 * loops' own instructions: the wrapper's part.
 *
 * SPDX-License-Identifier: MIT
 */
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <salvo/salvo.hpp>

#include "add.spv.h"

#if defined(__GNUC__)
#define SALVO_BENCH_NOINLINE __attribute__((noinline))
#else
#define SALVO_BENCH_NOINLINE
#endif

namespace {

std::uint32_t launches = 10000; /* a run; --launches */

struct bench {
    salvo::device dev;
    salvo::kernel add;
    salvo::buffer buf;
    std::uint64_t align;
};

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A run's launches through the C call. Dependent: all on the first
 * slice; independent: launch i on slice base + i. Never inlined, so that
 * an instruction count (valgrind --tool=callgrind) finds each loop as a
 * function of its own. */
SALVO_BENCH_NOINLINE void launch_c(bench &b, salvo_stream *st, bool dependent, std::uint32_t base)
{
    salvo_kernel *k = b.add.get();
    const std::uint32_t push[2] = {64, 1};
    const std::uint32_t groups[3] = {1, 1, 1};
    salvo_binding bd{};
    bd.binding = 0;
    bd.buffer = b.buf.get();
    bd.size = 256;
    for (std::uint32_t i = 0; i < launches; i++) {
        bd.offset = dependent ? 0 : (base + i) * b.align;
        salvo_status r = salvo_launch(st, k, groups, &bd, 1, push, sizeof push);
        if (r < 0) {
            std::fprintf(stderr, "salvo_launch: %s: %s\n", salvo_status_string(r),
                         salvo_last_error());
            std::exit(1);
        }
    }
}

/* The same through the C++ wrapper, as a program would write it. */
SALVO_BENCH_NOINLINE void launch_cpp(bench &b, salvo::stream &s, bool dependent, std::uint32_t base)
{
    struct {
        std::uint32_t n, value;
    } push = {64, 1};
    for (std::uint32_t i = 0; i < launches; i++)
        s.launch(b.add, {1}, salvo::bind(0, b.buf, dependent ? 0 : (base + i) * b.align, 256),
                 push);
}

/* Seconds per launch call of one run through one API: C on slices
 * [0, launches), C++ on [launches, 2 launches). Record only: the whole
 * run in one batch, submitted by the synchronize after the timed calls,
 * so that they do nothing but record. */
double run(bench &b, bool cxx, bool dependent, bool record_only)
{
    salvo_stream_desc one_batch{};
    one_batch.batch_size = launches;
    one_batch.first_batch = launches;
    salvo::stream s = b.dev.create_stream(record_only ? &one_batch : nullptr);
    double t0 = now_s();
    if (cxx)
        launch_cpp(b, s, dependent, launches);
    else
        launch_c(b, s.get(), dependent, 0);
    double t = (now_s() - t0) / launches;
    s.synchronize();
    return t;
}

/* Each slice was written runs times by its API (dependent: the first
 * slice, by every launch of both). */
void expect(bench &b, bool dependent, std::uint32_t runs)
{
    std::uint32_t want = dependent ? 2 * launches * runs : runs;
    std::uint64_t slices[3] = {0, launches - 1, 2 * std::uint64_t(launches) - 1};
    for (std::uint64_t slice : slices) {
        std::uint32_t v[64];
        b.buf.read(v, 64, dependent ? 0 : slice * b.align);
        for (int i = 0; i < 64; i++)
            if (v[i] != want) {
                std::fprintf(stderr, "wrong result: slice %llu holds %u, want %u\n",
                             static_cast<unsigned long long>(slice), v[i], want);
                std::exit(1);
            }
    }
}

} // namespace

int main(int argc, char **argv)
{
    int repeats = 11;
    const char *json = nullptr;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc)
            launches = static_cast<std::uint32_t>(std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--repeats N] [--launches N] [--json FILE]\n", argv[0]);
            return 2;
        }
    }
    if (repeats < 1 || repeats > 101)
        repeats = 11;
    if (launches < 100 || launches > 1000000)
        launches = 10000;

    try {
        bench b;
        b.dev = salvo::device::create();
        salvo_device_info info = b.dev.info();
        b.align = std::max<std::uint64_t>(info.min_storage_buffer_offset_alignment, 256);
        b.add = b.dev.create_kernel(add_spv, {{0, 64}}, "add");
        b.buf = b.dev.create_buffer(2 * std::uint64_t(launches) * b.align); /* a slice each */
        std::printf("device %s, default batch %u, %u launches a run, medians of %d runs\n",
                    info.name, info.batch_size, launches, repeats);
        std::printf("\n%-32s %8s %8s %7s   %8s %8s %7s\n", "host ns per recorded launch", "C",
                    "C++", "C++/C", "best C", "C++", "C++/C");

        /* [default batch: dependent, independent; record only: the same][C, C++] */
        double figures[4][2];
        const char *labels[4] = {"dependent (with barrier)", "independent",
                                 "record only, dependent", "record only, independent"};
        for (int m = 0; m < 4; m++) {
            bool dependent = m % 2 == 0, record_only = m >= 2;
            std::vector<std::uint32_t> zero(b.buf.size() / 4, 0);
            b.buf.write(zero);
            std::vector<double> times[2];
            /* Each API goes first every other time: drift and warm-up fall
             * on both alike. */
            for (int r = 0; r < repeats; r++) {
                bool cxx_first = r % 2 == 1;
                times[cxx_first].push_back(run(b, cxx_first, dependent, record_only));
                times[!cxx_first].push_back(run(b, !cxx_first, dependent, record_only));
            }
            expect(b, dependent, static_cast<std::uint32_t>(repeats));
            figures[m][0] = median(times[0]) * 1e9;
            figures[m][1] = median(times[1]) * 1e9;
            double best[2] = {*std::min_element(times[0].begin(), times[0].end()) * 1e9,
                              *std::min_element(times[1].begin(), times[1].end()) * 1e9};
            std::printf("%-32s %8.0f %8.0f %7.3f   %8.0f %8.0f %7.3f\n", labels[m], figures[m][0],
                        figures[m][1], figures[m][1] / figures[m][0], best[0], best[1],
                        best[1] / best[0]);
        }
        if (json) {
            std::FILE *f = std::fopen(json, "w");
            if (!f) {
                std::perror(json);
                return 1;
            }
            std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"repeats\": %d,\n  \"metrics\": {",
                         info.name, repeats);
            int n = 0;
            const char *names[4] = {"record_dependent", "record_independent",
                                    "record_only_dependent", "record_only_independent"};
            for (int m = 0; m < 4; m++)
                for (int api = 0; api < 2; api++)
                    std::fprintf(f,
                                 "%s\n    \"%s_ns_per_launch_%s\": {\"value\": %.6g, "
                                 "\"unit\": \"ns/launch\"}",
                                 n++ ? "," : "", names[m], api ? "cpp" : "c", figures[m][api]);
            std::fprintf(f, "\n  }\n}\n");
            std::fclose(f);
        }
        return 0;
    } catch (const salvo::error &e) {
        std::fprintf(stderr, "salvo-bench-cpp: %s\n", e.what());
        return 1;
    }
}
