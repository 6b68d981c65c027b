/*
 * salvo-bench-cpp: what salvo.hpp adds to a launch, measured.
 *
 * The host time per recorded launch, as salvo-bench's "host ns per recorded
 * launch" measures it (the same kernel, add with a local size of 64 on 64
 * words; the device's default batch size; 10,000 launch calls timed, their
 * share of the submits included, the synchronize after them not), made
 * through the C call and through the C++ wrapper, in the same program,
 * two ways: runs apart (a run of 10,000 through one API, then one through
 * the other, alternating which goes first), and interleaved (both in one
 * run, alternating blocks of 50 launches, each block timed), where the
 * two share the device's state and the machine's load moment by moment.
 * Dependent launches (one slice: a barrier between each) and independent
 * ones (a slice each). Each figure is the median of --repeats runs
 * (default 5); the results are checked, and a wrong value exits 1.
 *
 * Where the device's own time shows through the host's (lavapipe, whose
 * kernels run on the host's cores, on a loaded machine), the timings
 * scatter; instructions do not:
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out salvo-bench-cpp \
 *       --repeats 1 --launches 2000
 *   callgrind_annotate --inclusive=yes cg.out | grep -E 'launch_c(pp)?\('
 * gives the instructions of each launch loop, the launch calls inside
 * included: each API makes 4 x repeats x launches of them (runs apart and
 * interleaved, dependent and independent), 8,000 here. Without
 * --inclusive, the loops' own instructions: the wrapper's part.
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

/* Launches [from, to) through the C call. Dependent: all on the first
 * slice; independent: launch i on slice base + i. Never inlined, so that
 * an instruction count (valgrind --tool=callgrind) finds each loop as a
 * function of its own. */
SALVO_BENCH_NOINLINE void launch_c(bench &b, salvo_stream *st, bool dependent, std::uint32_t base,
                                   std::uint32_t from, std::uint32_t to)
{
    salvo_kernel *k = b.add.get();
    const std::uint32_t push[2] = {64, 1};
    const std::uint32_t groups[3] = {1, 1, 1};
    salvo_binding bd{};
    bd.binding = 0;
    bd.buffer = b.buf.get();
    bd.size = 256;
    for (std::uint32_t i = from; i < to; i++) {
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
SALVO_BENCH_NOINLINE void launch_cpp(bench &b, salvo::stream &s, bool dependent, std::uint32_t base,
                                     std::uint32_t from, std::uint32_t to)
{
    struct {
        std::uint32_t n, value;
    } push = {64, 1};
    for (std::uint32_t i = from; i < to; i++)
        s.launch(b.add, {1}, salvo::bind(0, b.buf, dependent ? 0 : (base + i) * b.align, 256),
                 push);
}

/* Seconds per launch call of one run through one API (salvo-bench's way):
 * C on slices [0, launches), C++ on [launches, 2 launches). */
double run_apart(bench &b, bool cxx, bool dependent)
{
    salvo::stream s = b.dev.create_stream();
    double t0 = now_s();
    if (cxx)
        launch_cpp(b, s, dependent, launches, 0, launches);
    else
        launch_c(b, s.get(), dependent, 0, 0, launches);
    double t = (now_s() - t0) / launches;
    s.synchronize();
    return t;
}

/* Both APIs on one stream, in alternating blocks of 50 launches (which
 * the batch sizes do not divide, so that submits fall in both), each
 * block timed: seconds per launch call of each. */
struct pair {
    double c, cpp;
};
pair run_interleaved(bench &b, bool dependent)
{
    constexpr std::uint32_t block = 50;
    salvo::stream s = b.dev.create_stream();
    pair t = {0, 0};
    for (std::uint32_t from = 0, k = 0; from < launches; from += block, k++) {
        std::uint32_t to = std::min(from + block, launches);
        for (int half = 0; half < 2; half++) {
            bool c_turn = (half == 0) == (k % 2 == 0);
            double t0 = now_s();
            if (c_turn)
                launch_c(b, s.get(), dependent, 0, from, to);
            else
                launch_cpp(b, s, dependent, launches, from, to);
            (c_turn ? t.c : t.cpp) += now_s() - t0;
        }
    }
    s.synchronize();
    return {t.c / launches, t.cpp / launches};
}

/* Each slice was written runs times by each API (dependent: the first
 * slice, by every launch of both). */
void expect(bench &b, bool dependent, std::uint32_t runs)
{
    std::uint32_t want = dependent ? 2 * launches * runs : runs;
    std::uint64_t slices[3] = {0, launches - 1, 2 * launches - 1};
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
    int repeats = 5;
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
        repeats = 5;
    if (launches < 100 || launches > 1000000)
        launches = 10000;

    try {
        bench b;
        b.dev = salvo::device::create();
        salvo_device_info info = b.dev.info();
        b.align = std::max<std::uint64_t>(info.min_storage_buffer_offset_alignment, 256);
        b.add = b.dev.create_kernel(add_spv, {{0, 64}}, "add");
        b.buf = b.dev.create_buffer(2 * launches * b.align + 256); /* a slice per launch and API */
        std::printf("device %s, default batch %u, %u launches a run, medians of %d runs\n",
                    info.name, info.batch_size, launches, repeats);
        std::printf("\n%-42s %10s %10s %8s\n", "host ns per recorded launch", "C", "C++", "C++/C");

        /* [mode][dependent, independent][C, C++] */
        double figures[2][2][2];
        const char *labels[2][2] = {
            {"runs apart, dependent (with barrier)", "runs apart, independent"},
            {"interleaved, dependent (with barrier)", "interleaved, independent"}};
        for (int m = 0; m < 2; m++) {
            bool dependent = m == 0;
            std::vector<std::uint32_t> zero(b.buf.size() / 4, 0);
            b.buf.write(zero);
            std::vector<double> c, cpp, ic, icpp;
            /* Runs apart alternate, each API first every other time, so
             * that drift and warm-up fall on both alike. */
            for (int r = 0; r < repeats; r++) {
                bool c_first = r % 2 == 0;
                (c_first ? c : cpp).push_back(run_apart(b, !c_first, dependent));
                (c_first ? cpp : c).push_back(run_apart(b, c_first, dependent));
            }
            for (int r = 0; r < repeats; r++) {
                pair t = run_interleaved(b, dependent);
                ic.push_back(t.c);
                icpp.push_back(t.cpp);
            }
            expect(b, dependent, static_cast<std::uint32_t>(2 * repeats));
            figures[0][m][0] = median(c) * 1e9;
            figures[0][m][1] = median(cpp) * 1e9;
            figures[1][m][0] = median(ic) * 1e9;
            figures[1][m][1] = median(icpp) * 1e9;
        }
        for (int way = 0; way < 2; way++)
            for (int m = 0; m < 2; m++)
                std::printf("%-42s %10.0f %10.0f %8.3f\n", labels[way][m], figures[way][m][0],
                            figures[way][m][1], figures[way][m][1] / figures[way][m][0]);
        if (json) {
            std::FILE *f = std::fopen(json, "w");
            if (!f) {
                std::perror(json);
                return 1;
            }
            const char *names[2][2] = {{"apart_dependent", "apart_independent"},
                                       {"interleaved_dependent", "interleaved_independent"}};
            std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"repeats\": %d,\n  \"metrics\": {",
                         info.name, repeats);
            int n = 0;
            for (int way = 0; way < 2; way++)
                for (int m = 0; m < 2; m++)
                    for (int api = 0; api < 2; api++)
                        std::fprintf(f,
                                     "%s\n    \"record_%s_ns_per_launch_%s\": {\"value\": %.6g, "
                                     "\"unit\": \"ns/launch\"}",
                                     n++ ? "," : "", names[way][m], api ? "cpp" : "c",
                                     figures[way][m][api]);
            std::fprintf(f, "\n  }\n}\n");
            std::fclose(f);
        }
        return 0;
    } catch (const salvo::error &e) {
        std::fprintf(stderr, "salvo-bench-cpp: %s\n", e.what());
        return 1;
    }
}
