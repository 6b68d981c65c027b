/*
 * cg-mpi: cg.c's solver across MPI ranks, one device per rank.
 *
 *     mpirun -np R cg_mpi [--rows N] [--2d] [--tol T] [--bench-iters N] [--reps R] [--json FILE]
 *
 * Rows are split in R contiguous blocks. Row i of the Poisson matrix
 * reaches at most one plane (nx * ny rows in 3D, nx in 2D) either side, so
 * a rank's SpMV needs, besides its own p, the last plane of the rank below
 * and the first plane of the rank above: the halo. A rank keeps p as
 * [halo below | own rows | halo above] in one device buffer (its columns
 * are numbered that way), and the halo goes through host memory: the
 * device copies its boundary planes into a HOST buffer, MPI sends them
 * straight from that mapping and receives straight into another, and the
 * device copies those into the halo. No host-side copy: MPI reads and
 * writes the mapped memory itself.
 *
 * The dot products are reduced in two steps: on the device within the
 * rank (the same two-pass kernels as cg.c, the second pass leaving the
 * rank's sum in the scalars), then across ranks with MPI_Allreduce. alpha
 * and beta are computed on the host from the global sums and written
 * into the scalars, which live in a mapped SHARED buffer. So an
 * iteration is three waits for the device, around replays of small graphs:
 *
 *     p update, boundary planes out; then the SpMV of the interior rows,
 *       which need no halo       -> wait for the planes, halo exchange (MPI)
 *                                   while the device runs the interior
 *     halo in, SpMV of the rows next to each neighbour, p . Ap
 *                                -> Allreduce -> alpha
 *     x, r updates, r . r        -> Allreduce -> beta, stop test
 *
 * The time per iteration is split into compute (the replays and the waits
 * for them: kernels and the device's halo copies, less what the exchange
 * hid), exchange (the MPI sends and receives of the halo) and reductions
 * (the two MPI_Allreduce, waiting for the slowest rank included).
 *
 * Devices: rank r opens the (r mod m)-th of the m devices of the best
 * type present (discrete GPUs if any, else integrated, ...), counting
 * ranks within the host (MPI_COMM_TYPE_SHARED) so that ranks on several
 * hosts each use their own host's GPUs; --device NAME or $SALVO_DEVICE
 * names one for every rank instead.
 *
 * Exit 0 on every rank only when the true residual |b - A x| / |b|,
 * computed on the CPUs (each rank its rows, halo of x exchanged, summed
 * with MPI), is within the tolerance and no rank's validation layer
 * (SALVO_VALIDATION=1) said anything; 77 on every rank when a rank has no
 * Vulkan device. A salvo failure inside the solve ends all ranks with
 * MPI_Abort: the others would wait forever in the next collective.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <salvo/salvo.h>

#include "cg_common.h"
#include "reduce.spv.h"
#include "spmv_dot.spv.h"
#include "update_p.spv.h"
#include "update_xr.spv.h"

static int g_rank;

/* Past device creation every rank is in the same collective sequence: a
 * rank that fails cannot leave alone, so the job ends. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        salvo_status st_ = (call);                                                                 \
        if (st_ < 0) {                                                                             \
            const char *name_ = salvo_status_string(st_);                                          \
            fprintf(stderr, "cg-mpi rank %d: %s:%d: %s failed: %s: %s\n", g_rank, __FILE__,         \
                    __LINE__, #call, name_, salvo_last_error());                                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define MPI_CHECK(call)                                                                            \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            fprintf(stderr, "cg-mpi rank %d: %s:%d: %s failed (%d)\n", g_rank, __FILE__,            \
                    __LINE__, #call, rc_);                                                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static void log_to_stderr(void *user, salvo_log_level level, const char *file, int line,
                          const char *message)
{
    (void)user;
    (void)line;
    if (level == SALVO_LOG_WARNING)
        fprintf(stderr, "cg-mpi rank %d: salvo warning: %s\n", g_rank, message);
    else if (level == SALVO_LOG_ERROR)
        fprintf(stderr, "cg-mpi rank %d: salvo error (%s): %s\n", g_rank, file ? file : "?",
                message);
}

static int type_order(salvo_device_type t)
{
    switch (t) {
    case SALVO_DEVICE_TYPE_DISCRETE: return 0;
    case SALVO_DEVICE_TYPE_INTEGRATED: return 1;
    case SALVO_DEVICE_TYPE_VIRTUAL: return 2;
    case SALVO_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

/* The name of the device for the local_rank-th rank of this host: of the
 * devices of the best type, the (local_rank mod m)-th (enumerated names of
 * identical GPUs carry " #2", " #3", so each opens by its name). */
static salvo_status pick_device(int local_rank, char name[SALVO_NAME_MAX])
{
    uint32_t count = 0;
    salvo_status st = salvo_device_enumerate(NULL, &count);
    if (st < 0)
        return st;
    if (count == 0)
        return SALVO_ERROR_NO_DEVICE;
    salvo_device_entry *e = calloc(count, sizeof *e);
    if (!e)
        return SALVO_ERROR_OUT_OF_HOST_MEMORY;
    st = salvo_device_enumerate(e, &count);
    if (st >= 0 && count == 0)
        st = SALVO_ERROR_NO_DEVICE;
    if (st >= 0) {
        int best = 5;
        uint32_t m = 0;
        for (uint32_t i = 0; i < count; i++)
            best = type_order(e[i].type) < best ? type_order(e[i].type) : best;
        for (uint32_t i = 0; i < count; i++)
            m += type_order(e[i].type) == best;
        uint32_t want = (uint32_t)local_rank % m;
        for (uint32_t i = 0; i < count; i++) {
            if (type_order(e[i].type) != best)
                continue;
            if (want-- == 0) {
                snprintf(name, SALVO_NAME_MAX, "%s", e[i].name);
                break;
            }
        }
    }
    free(e);
    return st;
}

typedef struct spmv_push {
    uint32_t row_begin, row_end, p_offset, partial_base;
} spmv_push;
typedef struct vec_push {
    uint32_t n, p_offset;
} vec_push;
typedef struct reduce_push {
    uint32_t count, mode;
} reduce_push;

/* One rank's solver state. */
typedef struct rank_state {
    int rank, size;
    uint32_t n;        /* own rows */
    uint32_t plane;    /* halo rows on each side that has a neighbour */
    uint32_t halo_lo;  /* plane when there is a rank below, else 0 */
    uint32_t halo_hi;  /* plane when there is a rank above, else 0 */
    salvo_stream *stream;
    salvo_buffer *b, *x, *r, *p, *send, *recv;
    salvo_graph *g_p;  /* p update, boundary planes out */
    salvo_graph *g_in; /* SpMV of the interior rows */
    salvo_graph *g_bd; /* halo in, SpMV of the boundary rows, p . Ap */
    salvo_graph *g_xr; /* x, r updates, r . r */
    salvo_event *planes_out; /* recorded after g_p */
    cg_scalars *s;     /* the mapped scalars */
    double *send_map;  /* [to the rank below | to the rank above], plane each */
    double *recv_map;  /* [from the rank below | from the rank above] */
    double bb;         /* b . b over all ranks */
    /* Seconds spent, accumulated by iterate(). */
    double compute_s, exchange_s, reduce_s;
} rank_state;

/* Send our first plane of rows to the rank below and our last to the rank
 * above, receive theirs into the halo: p's through the mapped buffers, or
 * x's on the host for the CPU check. Pointers for a missing neighbour are
 * not used. */
static void exchange(const rank_state *st, const double *send_lo, const double *send_hi,
                     double *recv_lo, double *recv_hi)
{
    MPI_Request req[4];
    int k = 0;
    if (st->halo_lo) {
        MPI_CHECK(MPI_Irecv(recv_lo, (int)st->plane, MPI_DOUBLE, st->rank - 1, 1, MPI_COMM_WORLD,
                            &req[k++]));
        MPI_CHECK(MPI_Isend(send_lo, (int)st->plane, MPI_DOUBLE, st->rank - 1, 0, MPI_COMM_WORLD,
                            &req[k++]));
    }
    if (st->halo_hi) {
        MPI_CHECK(MPI_Irecv(recv_hi, (int)st->plane, MPI_DOUBLE, st->rank + 1, 0, MPI_COMM_WORLD,
                            &req[k++]));
        MPI_CHECK(MPI_Isend(send_hi, (int)st->plane, MPI_DOUBLE, st->rank + 1, 1, MPI_COMM_WORLD,
                            &req[k++]));
    }
    MPI_CHECK(MPI_Waitall(k, req, MPI_STATUSES_IGNORE));
}

static void halo_exchange(rank_state *st)
{
    double t0 = cg_now_s();
    exchange(st, st->send_map, st->send_map + st->plane, st->recv_map,
             st->recv_map + st->plane);
    st->exchange_s += cg_now_s() - t0;
}

/* Workgroups for a kernel over `rows` rows (grid stride beyond the cap). */
static uint32_t groups_for(uint32_t rows)
{
    uint32_t g = (rows + CG_LOCAL - 1) / CG_LOCAL;
    return g < CG_MAX_GROUPS ? g : CG_MAX_GROUPS;
}

static double allreduce(rank_state *st, double local)
{
    double t0 = cg_now_s(), global = 0;
    MPI_CHECK(MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    st->reduce_s += cg_now_s() - t0;
    return global;
}

static void replay(rank_state *st, salvo_graph *g)
{
    double t0 = cg_now_s();
    CHECK(salvo_graph_launch(g, st->stream));
    CHECK(salvo_stream_synchronize(st->stream));
    st->compute_s += cg_now_s() - t0;
}

/* x = 0, r = b, p = 0 and beta = 0, so that the first iteration's p
 * update makes p = b (zeroed first: 0 * NaN bits would be NaN); returns
 * rr = b . b. */
static double reset(rank_state *st)
{
    const uint64_t vec = (uint64_t)st->n * sizeof(double);
    CHECK(salvo_fill(st->stream, st->x, 0, vec, 0));
    CHECK(salvo_copy(st->stream, st->b, 0, st->r, 0, vec));
    CHECK(salvo_fill(st->stream, st->p, 0, salvo_buffer_size(st->p), 0));
    CHECK(salvo_stream_synchronize(st->stream));
    st->s->beta = 0;
    return st->bb;
}

/* Up to `iters` iterations from the current state; with stop_rr > 0, stops
 * once rr <= stop_rr. Returns the iterations done; *rr is the last rr. */
static uint32_t iterate(rank_state *st, uint32_t iters, double stop_rr, double *rr)
{
    uint32_t it = 0;
    while (it < iters) {
        /* The planes' batch is submitted alone, so that its event ends
         * before the interior SpMV behind it: the exchange runs beside
         * that. */
        double t0 = cg_now_s();
        CHECK(salvo_graph_launch(st->g_p, st->stream));
        CHECK(salvo_event_record(st->planes_out, st->stream));
        CHECK(salvo_stream_flush(st->stream));
        if (st->g_in) {
            CHECK(salvo_graph_launch(st->g_in, st->stream));
            CHECK(salvo_stream_flush(st->stream));
        }
        CHECK(salvo_event_synchronize(st->planes_out));
        st->compute_s += cg_now_s() - t0;
        halo_exchange(st);
        replay(st, st->g_bd);
        const double pq = allreduce(st, st->s->local_sum);
        st->s->alpha = pq != 0 ? *rr / pq : 0;
        replay(st, st->g_xr);
        const double rr_new = allreduce(st, st->s->local_sum);
        it++;
        st->s->beta = *rr != 0 ? rr_new / *rr : 0;
        *rr = rr_new;
        if (stop_rr > 0 && rr_new <= stop_rr)
            break;
    }
    return it;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank_state st;
    memset(&st, 0, sizeof st);
    MPI_Comm_rank(MPI_COMM_WORLD, &st.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &st.size);
    g_rank = st.rank;

    cg_options o;
    if (cg_parse(argc, argv, &o)) {
        MPI_Finalize();
        return 2;
    }
    if (o.json && st.rank != 0)
        o.json = NULL; /* one line per run, from rank 0 */

    /* Blocks as even as whole rows allow. Each rank's halo must come from
     * its neighbours alone: at least a plane of rows per rank. */
    const uint64_t rows = o.rows;
    const uint32_t lo = (uint32_t)(rows * (uint64_t)st.rank / (uint64_t)st.size);
    const uint32_t hi = (uint32_t)(rows * (uint64_t)(st.rank + 1) / (uint64_t)st.size);
    st.n = hi - lo;
    st.plane = cg_plane(&o);
    if (st.size > 1 && rows / (uint64_t)st.size < st.plane) {
        if (st.rank == 0)
            fprintf(stderr,
                    "cg-mpi: %d ranks for %llu rows: each needs at least a plane (%u rows)\n",
                    st.size, (unsigned long long)rows, st.plane);
        MPI_Finalize();
        return 2;
    }
    st.halo_lo = st.rank > 0 ? st.plane : 0;
    st.halo_hi = st.rank + 1 < st.size ? st.plane : 0;
    const uint32_t ext_n = st.halo_lo + st.n + st.halo_hi;

    cg_csr m;
    double *hb = malloc((size_t)st.n * sizeof *hb);
    double *hx = malloc((size_t)ext_n * sizeof *hx);
    double *times = malloc(o.reps * 4 * sizeof *times);
    if (cg_poisson(&o, lo, hi, lo - st.halo_lo, &m) != 0 || !hb || !hx || !times) {
        fprintf(stderr, "cg-mpi rank %d: out of host memory for %u rows\n", st.rank, st.n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (uint32_t i = 0; i < st.n; i++)
        hb[i] = 1.0;
    double bb_local = 0;
    for (uint32_t i = 0; i < st.n; i++)
        bb_local += hb[i] * hb[i];
    MPI_CHECK(MPI_Allreduce(&bb_local, &st.bb, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));

    /* The device, agreed on by all: one rank without a device (or failing
     * to open it) stops them all, with 77 for "no device". */
    MPI_Comm host;
    int local_rank = 0;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, st.rank, MPI_INFO_NULL,
                                  &host));
    MPI_CHECK(MPI_Comm_rank(host, &local_rank));
    MPI_CHECK(MPI_Comm_free(&host));
    char name[SALVO_NAME_MAX] = "";
    salvo_status status = SALVO_OK;
    if (!o.device && !getenv("SALVO_DEVICE"))
        status = pick_device(local_rank, name);
    salvo_device *device = NULL;
    salvo_device_info info;
    if (status >= 0) {
        salvo_device_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.name = o.device ? o.device : name[0] ? name : NULL;
        desc.log = log_to_stderr;
        status = salvo_device_create(&desc, &device);
    }
    if (status >= 0)
        status = salvo_device_info_get(device, &info);
    if (status >= 0 && info.features.checked && !info.features.shader_float64) {
        fprintf(stderr, "cg-mpi rank %d: %s has no float64 in shaders\n", st.rank, info.name);
        status = SALVO_ERROR_UNSUPPORTED;
    }
    if (status < 0)
        fprintf(stderr, "cg-mpi rank %d: no device: %s: %s\n", st.rank,
                salvo_status_string(status), salvo_last_error());
    int mine = status < 0 ? (status == SALVO_ERROR_NO_DEVICE ? 77 : 1) : 0, worst = 0;
    MPI_CHECK(MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (worst) {
        salvo_device_destroy(device);
        MPI_Finalize();
        return worst;
    }

    /* Buffers: the matrix and vectors in device memory; the halo in HOST
     * memory, mapped: MPI reads and writes it right there, the device
     * copies it in and out. The scalars SHARED, mapped: the host writes
     * alpha and beta there and reads the rank's sums, and every
     * invocation of the vector kernels reads alpha or beta, which from
     * host memory (a PCIe read per warp on a discrete GPU) would cost more
     * than from device-local memory the host can map, where the device
     * has that. */
    const uint64_t vec = (uint64_t)st.n * sizeof(double);
    salvo_buffer *row_ptr, *col, *val, *q, *partial, *scalars;
    CHECK(salvo_buffer_create(device, ((uint64_t)st.n + 1) * 4, SALVO_DOMAIN_DEVICE, &row_ptr));
    CHECK(salvo_buffer_create(device, m.nnz * 4, SALVO_DOMAIN_DEVICE, &col));
    CHECK(salvo_buffer_create(device, m.nnz * 8, SALVO_DOMAIN_DEVICE, &val));
    CHECK(salvo_buffer_create(device, vec, SALVO_DOMAIN_DEVICE, &st.b));
    CHECK(salvo_buffer_create(device, vec, SALVO_DOMAIN_DEVICE, &st.x));
    CHECK(salvo_buffer_create(device, vec, SALVO_DOMAIN_DEVICE, &st.r));
    CHECK(salvo_buffer_create(device, vec, SALVO_DOMAIN_DEVICE, &q));
    CHECK(salvo_buffer_create(device, (uint64_t)ext_n * sizeof(double), SALVO_DOMAIN_DEVICE,
                              &st.p));
    /* Partial sums: of the interior rows, then of each boundary. */
    CHECK(salvo_buffer_create(device, 3 * CG_MAX_GROUPS * sizeof(double), SALVO_DOMAIN_DEVICE,
                              &partial));
    CHECK(salvo_buffer_create(device, sizeof(cg_scalars), SALVO_DOMAIN_SHARED, &scalars));
    /* A buffer cannot be empty: one plane each way even for a single rank. */
    const uint64_t halo_bytes = 2ull * st.plane * sizeof(double);
    CHECK(salvo_buffer_create(device, halo_bytes, SALVO_DOMAIN_HOST, &st.send));
    CHECK(salvo_buffer_create(device, halo_bytes, SALVO_DOMAIN_HOST, &st.recv));
    void *map;
    CHECK(salvo_buffer_map(scalars, &map));
    st.s = map;
    memset(st.s, 0, sizeof *st.s);
    CHECK(salvo_buffer_map(st.send, &map));
    st.send_map = map;
    CHECK(salvo_buffer_map(st.recv, &map));
    st.recv_map = map;

    CHECK(salvo_buffer_write(row_ptr, 0, m.row_ptr, ((uint64_t)st.n + 1) * 4));
    CHECK(salvo_buffer_write(col, 0, m.col, m.nnz * 4));
    CHECK(salvo_buffer_write(val, 0, m.val, m.nnz * 8));
    CHECK(salvo_buffer_write(st.b, 0, hb, vec));

    salvo_kernel *k_spmv, *k_reduce, *k_xr, *k_p;
    salvo_kernel_desc kd;
    memset(&kd, 0, sizeof kd);
    kd.spirv = spmv_dot_spv;
    kd.spirv_size = sizeof spmv_dot_spv;
    kd.name = "spmv_dot";
    CHECK(salvo_kernel_create(device, &kd, &k_spmv));
    kd.spirv = reduce_spv;
    kd.spirv_size = sizeof reduce_spv;
    kd.name = "reduce";
    CHECK(salvo_kernel_create(device, &kd, &k_reduce));
    kd.spirv = update_xr_spv;
    kd.spirv_size = sizeof update_xr_spv;
    kd.name = "update_xr";
    CHECK(salvo_kernel_create(device, &kd, &k_xr));
    kd.spirv = update_p_spv;
    kd.spirv_size = sizeof update_p_spv;
    kd.name = "update_p";
    CHECK(salvo_kernel_create(device, &kd, &k_p));
    CHECK(salvo_stream_create(device, NULL, &st.stream));
    CHECK(salvo_event_create(device, &st.planes_out));

    /* Rows [0, in_lo) need the halo below, [in_hi, n) the halo above, the
     * interior [in_lo, in_hi) none (n >= plane >= halo_lo). */
    const uint32_t in_lo = st.halo_lo;
    const uint32_t in_hi = st.n - st.halo_hi > in_lo ? st.n - st.halo_hi : in_lo;
    const uint32_t g_all = groups_for(st.n), g_in = groups_for(in_hi - in_lo);
    const uint32_t g_lo = groups_for(in_lo), g_hi = groups_for(st.n - in_hi);
    const uint32_t groups[3] = {g_all, 1, 1}, one[3] = {1, 1, 1};
    const vec_push vp = {st.n, st.halo_lo};
    const spmv_push sp_in = {in_lo, in_hi, st.halo_lo, 0};
    const spmv_push sp_lo = {0, in_lo, st.halo_lo, g_in};
    const spmv_push sp_hi = {in_hi, st.n, st.halo_lo, g_in + g_lo};
    const reduce_push rp_pq = {g_in + g_lo + g_hi, CG_REDUCE_LOCAL};
    const reduce_push rp_rr = {g_all, CG_REDUCE_LOCAL};
    const salvo_binding b_spmv[] = {
        {.binding = 0, .buffer = row_ptr}, {.binding = 1, .buffer = col},
        {.binding = 2, .buffer = val},     {.binding = 3, .buffer = st.p},
        {.binding = 4, .buffer = q},       {.binding = 5, .buffer = partial},
    };
    const salvo_binding b_reduce[] = {
        {.binding = 0, .buffer = partial},
        {.binding = 1, .buffer = scalars},
    };
    const salvo_binding b_xr[] = {
        {.binding = 0, .buffer = scalars}, {.binding = 1, .buffer = st.p},
        {.binding = 2, .buffer = q},       {.binding = 3, .buffer = st.x},
        {.binding = 4, .buffer = st.r},    {.binding = 5, .buffer = partial},
    };
    const salvo_binding b_p[] = {
        {.binding = 0, .buffer = scalars},
        {.binding = 1, .buffer = st.r},
        {.binding = 2, .buffer = st.p},
    };
    const uint64_t plane_bytes = (uint64_t)st.plane * sizeof(double);
    /* Where p's own rows start and end in the buffer, in bytes. */
    const uint64_t own_lo = (uint64_t)st.halo_lo * sizeof(double);
    const uint64_t own_hi = own_lo + vec;

    /* p, and its boundary planes out. */
    CHECK(salvo_stream_begin_capture(st.stream));
    CHECK(salvo_launch(st.stream, k_p, groups, b_p, 3, &vp, sizeof vp));
    if (st.halo_lo)
        CHECK(salvo_copy(st.stream, st.p, own_lo, st.send, 0, plane_bytes));
    if (st.halo_hi)
        CHECK(salvo_copy(st.stream, st.p, own_hi - plane_bytes, st.send, plane_bytes,
                         plane_bytes));
    CHECK(salvo_stream_end_capture(st.stream, &st.g_p));
    /* The interior SpMV (none when the boundaries cover every row). */
    if (g_in) {
        const uint32_t gr[3] = {g_in, 1, 1};
        CHECK(salvo_stream_begin_capture(st.stream));
        CHECK(salvo_launch(st.stream, k_spmv, gr, b_spmv, 6, &sp_in, sizeof sp_in));
        CHECK(salvo_stream_end_capture(st.stream, &st.g_in));
    }
    /* Halo in, the boundary rows' SpMV, and the rank's p . Ap. */
    CHECK(salvo_stream_begin_capture(st.stream));
    if (st.halo_lo)
        CHECK(salvo_copy(st.stream, st.recv, 0, st.p, 0, plane_bytes));
    if (st.halo_hi)
        CHECK(salvo_copy(st.stream, st.recv, plane_bytes, st.p, own_hi, plane_bytes));
    if (g_lo) {
        const uint32_t gr[3] = {g_lo, 1, 1};
        CHECK(salvo_launch(st.stream, k_spmv, gr, b_spmv, 6, &sp_lo, sizeof sp_lo));
    }
    if (g_hi) {
        const uint32_t gr[3] = {g_hi, 1, 1};
        CHECK(salvo_launch(st.stream, k_spmv, gr, b_spmv, 6, &sp_hi, sizeof sp_hi));
    }
    CHECK(salvo_launch(st.stream, k_reduce, one, b_reduce, 2, &rp_pq, sizeof rp_pq));
    CHECK(salvo_stream_end_capture(st.stream, &st.g_bd));
    /* x and r, and the rank's r . r. */
    CHECK(salvo_stream_begin_capture(st.stream));
    CHECK(salvo_launch(st.stream, k_xr, groups, b_xr, 6, &vp, sizeof vp));
    CHECK(salvo_launch(st.stream, k_reduce, one, b_reduce, 2, &rp_rr, sizeof rp_rr));
    CHECK(salvo_stream_end_capture(st.stream, &st.g_xr));

    /* The solve. */
    const double stop_rr = o.tol * o.tol * st.bb;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = cg_now_s();
    double rr = reset(&st);
    const uint32_t iterations = iterate(&st, o.max_iters, stop_rr, &rr);
    double solve_s = cg_now_s() - t0;

    /* The true residual on the CPUs: x with its halo, as the columns are
     * numbered, then each rank's rows. */
    CHECK(salvo_buffer_read(st.x, 0, hx + st.halo_lo, vec));
    double *x_own = hx + st.halo_lo;
    exchange(&st, x_own, st.halo_hi ? x_own + st.n - st.plane : NULL, hx, x_own + st.n);
    const double res2_local = cg_residual2(&m, hb, hx);
    double res2 = 0, solve_max = 0;
    MPI_CHECK(MPI_Allreduce(&res2_local, &res2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allreduce(&solve_s, &solve_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    const double true_rel = sqrt(res2 / st.bb);

    cg_report rep;
    memset(&rep, 0, sizeof rep);
    rep.impl = "salvo-mpi";
    rep.device = info.name;
    rep.ranks = st.size;
    rep.nnz = 0; /* summed below */
    uint64_t nnz_local = m.nnz;
    MPI_CHECK(MPI_Allreduce(&nnz_local, &rep.nnz, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
    rep.converged = rr <= stop_rr;
    rep.iterations = iterations;
    rep.rel_residual = sqrt(rr / st.bb);
    rep.true_rel_residual = true_rel;
    rep.passed = rep.converged && cg_residual_ok(true_rel, o.tol);
    rep.solve_s = solve_max;
    rep.us_per_iter = rep.us_per_iter_min = -1;
    rep.compute_us = rep.exchange_us = rep.reduce_us = -1;

    /* Timed runs: bench_iters iterations from x = 0, no stop test; per
     * run, the slowest rank's time, and rank 0's split. */
    if (o.bench_iters) {
        double *total = times, *comp = times + o.reps, *exch = comp + o.reps,
               *red = exch + o.reps;
        for (uint32_t t = 0; t < o.reps; t++) {
            rr = reset(&st);
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            st.compute_s = st.exchange_s = st.reduce_s = 0;
            t0 = cg_now_s();
            iterate(&st, o.bench_iters, 0, &rr);
            double mine_s = cg_now_s() - t0;
            MPI_CHECK(MPI_Allreduce(&mine_s, &total[t], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
            total[t] *= 1e6 / o.bench_iters;
            comp[t] = st.compute_s * 1e6 / o.bench_iters;
            exch[t] = st.exchange_s * 1e6 / o.bench_iters;
            red[t] = st.reduce_s * 1e6 / o.bench_iters;
        }
        rep.us_per_iter = cg_median(total, o.reps);
        rep.us_per_iter_min = total[0];
        rep.compute_us = cg_median(comp, o.reps);
        rep.exchange_us = cg_median(exch, o.reps);
        rep.reduce_us = cg_median(red, o.reps);
    }

    salvo_stats stats;
    CHECK(salvo_device_stats(device, &stats));
    int bad = stats.validation_messages != 0, any_bad = 0;
    if (bad)
        fprintf(stderr, "cg-mpi rank %d: the validation layer reported %llu messages\n", st.rank,
                (unsigned long long)stats.validation_messages);
    MPI_CHECK(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));

    int result = 0;
    if (st.rank == 0) {
        printf("cg-mpi: rank 0 on %s, %u rows of %llu\n", info.name, st.n,
               (unsigned long long)rows);
        cg_print_report(&o, &rep);
        if (cg_write_json(&o, &rep) != 0)
            result = 1;
        if (!rep.passed)
            fprintf(stderr, "cg-mpi: true residual %.3g over the tolerance %.3g%s\n", true_rel,
                    o.tol, rep.converged ? "" : " (no convergence)");
    }
    if (!rep.passed || any_bad)
        result = 1;

    salvo_graph_destroy(st.g_p);
    salvo_graph_destroy(st.g_in);
    salvo_graph_destroy(st.g_bd);
    salvo_graph_destroy(st.g_xr);
    salvo_event_destroy(st.planes_out);
    salvo_stream_destroy(st.stream);
    salvo_kernel_destroy(k_spmv);
    salvo_kernel_destroy(k_reduce);
    salvo_kernel_destroy(k_xr);
    salvo_kernel_destroy(k_p);
    salvo_buffer *all[] = {row_ptr, col, val, st.b, st.x, st.r, q, st.p, partial, scalars,
                           st.send, st.recv};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
        salvo_buffer_destroy(all[j]);
    salvo_device_destroy(device);
    free(times);
    free(hx);
    free(hb);
    cg_csr_free(&m);
    MPI_Finalize();
    return result;
}
