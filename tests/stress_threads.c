#define _POSIX_C_SOURCE 200809L
/*
 * Eight threads on one device, each with its own stream, for
 * $SALVO_STRESS_SECONDS seconds (default 30):
 *
 *  - dependent chains of the add kernel on the thread's own buffer, checked
 *    after every synchronize;
 *  - every round the thread records its event, and the next thread's stream
 *    waits on it (also while the owner re-records it: the event's fields are
 *    read and written under the device's lock);
 *  - every round a new buffer is created, written, launched on and handed
 *    to the next thread through a mutex-protected mailbox; the receiver
 *    waits on the sender's event, launches on the buffer, copies it into
 *    its own check buffer and destroys it at once, while the sender's
 *    launches may still be pending (the release must wait for both);
 *  - the own buffer is copied out, destroyed while launches on it are
 *    pending, and replaced every few rounds.
 *
 * Every value the device computes is checked; at the end every live
 * counter of the device is zero and nothing is pending.
 *
 * The validation layer is off (SALVO_VALIDATION is unset): with it, eight
 * threads on lavapipe manage a small fraction of the launches, and this
 * program is about threads and lifetimes; the lava_* suites cover
 * validation. Assertions are plain (not cmocka's, whose longjmp is only
 * safe on the main thread): a failure prints where and why, then aborts.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "add.spv.h"
#include "copy.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"

enum {
    THREADS = 8,
    OWN_N = 1024,         /* elements of a thread's own buffer */
    SLOT_N = 1024,        /* elements per check slot (the largest parcel) */
    CHECK_SLOTS = 24,     /* copies checked per synchronize, at most */
    MAILBOX_CAP = 4,      /* parcels waiting for one thread */
    SYNC_EVERY = 4,       /* rounds between synchronizes */
    RECYCLE_EVERY = 16    /* rounds between own-buffer replacements */
};

/* Per-stream batch sizes: submit-and-wait, tiny, odd, default-like. */
static const uint32_t batch_sizes[THREADS] = {1, 3, 16, 128, 7, 32, 2, 64};

static _Noreturn void die(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stress_threads.c:%d: ", line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    abort();
}

#define CHECK(call)                                                                        \
    do {                                                                                   \
        salvo_status check_r_ = (call);                                                    \
        if (check_r_ != SALVO_OK)                                                          \
            die(__LINE__, "%s: %s (%s)", #call, salvo_status_string(check_r_),             \
                salvo_last_error());                                                       \
    } while (0)

#define REQUIRE(cond, ...)                                                                 \
    do {                                                                                   \
        if (!(cond))                                                                       \
            die(__LINE__, __VA_ARGS__);                                                    \
    } while (0)

/* A buffer in transit: what it holds once its sender's launches ran,
 * element k = base + k. */
typedef struct parcel {
    salvo_buffer *buf;
    uint32_t n;
    uint32_t base;
} parcel;

typedef struct mailbox {
    pthread_mutex_t lock; /* guards count and items */
    uint32_t count;
    parcel items[MAILBOX_CAP];
} mailbox;

/* A check slot's expected contents: element k = base + k * stride, k < n. */
typedef struct expect {
    uint32_t n, base, stride;
} expect;

typedef struct worker {
    int id;
    pthread_t thread;
    uint32_t batch;
    salvo_domain domain; /* of its own and check buffers */
    salvo_stream *stream;
    salvo_event *event; /* recorded by this thread only */
    salvo_buffer *own;
    uint32_t own_value; /* what every element of own holds after its launches */
    salvo_buffer *check;
    expect checks[CHECK_SLOTS];
    uint32_t check_count;
    mailbox box; /* parcels handed to this thread */
    /* results, read by main after the join */
    uint64_t launches, rounds, syncs, parcels_sent, parcels_received, buffers_created;
} worker;

static salvo_device *dev;
static salvo_kernel *add_k, *copy_k;
static worker workers[THREADS];
static pthread_barrier_t ready_barrier, go_barrier, stop_barrier;
static struct timespec deadline;
static uint64_t min_offset_alignment;
static _Atomic uint64_t log_problems;

static void log_cb(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)user;
    if (level >= SALVO_LOG_WARNING) {
        atomic_fetch_add(&log_problems, 1);
        fprintf(stderr, "salvo (%s:%d): %s\n", file ? file : "?", line, message);
    }
}

static bool past_deadline(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline.tv_sec ||
           (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
}

/* ------------------------------------------------------------------ */

static bool mailbox_post(mailbox *m, parcel p)
{
    pthread_mutex_lock(&m->lock);
    bool ok = m->count < MAILBOX_CAP;
    if (ok)
        m->items[m->count++] = p;
    pthread_mutex_unlock(&m->lock);
    return ok;
}

static uint32_t mailbox_take(mailbox *m, parcel out[MAILBOX_CAP])
{
    pthread_mutex_lock(&m->lock);
    uint32_t n = m->count;
    memcpy(out, m->items, n * sizeof *out);
    m->count = 0;
    pthread_mutex_unlock(&m->lock);
    return n;
}

/* ------------------------------------------------------------------ */

static void add(worker *w, salvo_buffer *buf, uint32_t n, uint32_t value)
{
    uint32_t groups[3] = {(n + 63) / 64, 1, 1};
    salvo_binding b = {.binding = 0, .buffer = buf};
    uint32_t push[2] = {n, value};
    CHECK(salvo_launch(w->stream, add_k, groups, &b, 1, push, sizeof push));
    w->launches++;
}

/* check slot j = src + plus, elementwise over n */
static void copy_out(worker *w, salvo_buffer *src, uint32_t n, uint32_t plus, uint32_t j)
{
    uint32_t groups[3] = {(n + 63) / 64, 1, 1};
    salvo_binding b[2] = {
        {.binding = 0, .buffer = src, .size = n * 4ull},
        {.binding = 1, .buffer = w->check, .offset = j * SLOT_N * 4ull, .size = n * 4ull},
    };
    uint32_t push[2] = {n, plus};
    CHECK(salvo_launch(w->stream, copy_k, groups, b, 2, push, sizeof push));
    w->launches++;
}

static salvo_buffer *new_buffer(worker *w, uint64_t bytes, salvo_domain domain)
{
    salvo_buffer *b = NULL;
    CHECK(salvo_buffer_create(dev, bytes, domain, &b));
    w->buffers_created++;
    return b;
}

/* Through the mapping for host-visible domains, else an explicit read. */
static void read_back(const worker *w, salvo_buffer *buf, uint32_t *dst, uint64_t bytes)
{
    if (w->domain == SALVO_DOMAIN_DEVICE) {
        CHECK(salvo_buffer_read(buf, 0, dst, bytes));
        return;
    }
    void *p = NULL;
    CHECK(salvo_buffer_map(buf, &p));
    memcpy(dst, p, bytes);
}

/* Synchronize the stream and check everything it computed since the last
 * time: the own buffer's chain and every check slot. */
static void sync_and_check(worker *w)
{
    static _Thread_local uint32_t host[CHECK_SLOTS * SLOT_N];
    CHECK(salvo_stream_synchronize(w->stream));
    w->syncs++;
    read_back(w, w->own, host, OWN_N * 4ull);
    for (uint32_t k = 0; k < OWN_N; k++)
        REQUIRE(host[k] == w->own_value, "thread %d: own[%u] = %u, want %u", w->id, k, host[k],
                w->own_value);
    if (w->check_count == 0)
        return;
    read_back(w, w->check, host, w->check_count * SLOT_N * 4ull);
    for (uint32_t j = 0; j < w->check_count; j++) {
        const expect *e = &w->checks[j];
        const uint32_t *got = &host[j * SLOT_N];
        for (uint32_t k = 0; k < e->n; k++)
            REQUIRE(got[k] == e->base + k * e->stride,
                    "thread %d: check slot %u element %u: %u, want %u", w->id, j, k, got[k],
                    e->base + k * e->stride);
    }
    w->check_count = 0;
}

static uint32_t take_slot(worker *w, expect e)
{
    if (w->check_count == CHECK_SLOTS)
        sync_and_check(w);
    w->checks[w->check_count] = e;
    return w->check_count++;
}

/* Launch on a parcel, copy it out for checking, destroy it: its release
 * must wait for the sender's launches and for these. */
static void consume(worker *w, parcel p, uint32_t value)
{
    add(w, p.buf, p.n, value);
    uint32_t plus = (uint32_t)w->id;
    uint32_t j = take_slot(w, (expect){p.n, p.base + value + plus, 1});
    copy_out(w, p.buf, p.n, plus, j);
    salvo_buffer_destroy(p.buf);
}

/* A new buffer of 64..1024 elements holding base + k, launched on twice. */
static parcel make_parcel(worker *w, uint32_t round)
{
    static const salvo_domain domains[3] = {SALVO_DOMAIN_DEVICE, SALVO_DOMAIN_HOST,
                                            SALVO_DOMAIN_SHARED};
    static _Thread_local uint32_t init[SLOT_N];
    parcel p = {.n = 64u * (1 + (round * 7 + (uint32_t)w->id) % 16),
                .base = round * 1000u + (uint32_t)w->id};
    p.buf = new_buffer(w, p.n * 4ull, domains[(round + (uint32_t)w->id) % 3]);
    for (uint32_t k = 0; k < p.n; k++)
        init[k] = p.base + k;
    CHECK(salvo_buffer_write(p.buf, 0, init, p.n * 4ull));
    uint32_t v = 3 + round % 11;
    add(w, p.buf, p.n, v);
    add(w, p.buf, p.n, v);
    p.base += 2 * v;
    return p;
}

/* Copy the own buffer out, destroy it with that copy (and maybe more)
 * pending, start a new one at zero. */
static void recycle_own(worker *w)
{
    uint32_t j = take_slot(w, (expect){OWN_N, w->own_value, 0});
    copy_out(w, w->own, OWN_N, 0, j);
    salvo_buffer_destroy(w->own);
    w->own = new_buffer(w, OWN_N * 4ull, w->domain);
    static const uint32_t zero[OWN_N];
    CHECK(salvo_buffer_write(w->own, 0, zero, sizeof zero));
    w->own_value = 0;
}

static void round_once(worker *w, uint32_t r)
{
    worker *prev = &workers[(w->id + THREADS - 1) % THREADS];
    worker *next = &workers[(w->id + 1) % THREADS];

    /* Order after the previous thread's last mark, which it may be moving
     * right now; poll it from the host as well. */
    CHECK(salvo_stream_wait_event(w->stream, prev->event));
    salvo_status q = salvo_event_query(prev->event);
    REQUIRE(q == SALVO_OK || q == SALVO_NOT_READY, "event_query: %s (%s)",
            salvo_status_string(q), salvo_last_error());
    if (r % 29 == 5)
        CHECK(salvo_event_synchronize(prev->event));

    /* A dependent chain on the own buffer. */
    uint32_t links = 1 + (r + (uint32_t)w->id) % 7;
    uint32_t v = 1 + (r * 3 + (uint32_t)w->id) % 5;
    for (uint32_t i = 0; i < links; i++) {
        add(w, w->own, OWN_N, v);
        w->own_value += v;
    }

    /* A new buffer for the next thread; the event marks its launches. */
    parcel out = make_parcel(w, r);
    CHECK(salvo_event_record(w->event, w->stream));
    if (mailbox_post(&next->box, out))
        w->parcels_sent++;
    else
        consume(w, out, 1); /* the next thread is behind: keep it */

    /* What the previous thread handed over: its launches on those buffers
     * precede its event's current mark, whatever record that is now. */
    parcel in[MAILBOX_CAP];
    uint32_t n = mailbox_take(&w->box, in);
    if (n)
        CHECK(salvo_stream_wait_event(w->stream, prev->event));
    for (uint32_t i = 0; i < n; i++) {
        consume(w, in[i], 5 + (uint32_t)w->id);
        w->parcels_received++;
    }

    /* A buffer that lives for one call, never used. */
    if (r % 5 == 2)
        salvo_buffer_destroy(new_buffer(w, 4096, SALVO_DOMAIN_DEVICE));

    if (r % RECYCLE_EVERY == RECYCLE_EVERY - 1)
        recycle_own(w);

    if (r % SYNC_EVERY == SYNC_EVERY - 1)
        sync_and_check(w);
    else if (r % 3 == 1)
        CHECK(salvo_stream_flush(w->stream));

    if (r % 13 == 0) {
        salvo_stats s;
        CHECK(salvo_device_stats(dev, &s));
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    salvo_stream_desc sd = {.batch_size = w->batch};
    CHECK(salvo_stream_create(dev, &sd, &w->stream));
    CHECK(salvo_event_create(dev, &w->event));
    w->own = new_buffer(w, OWN_N * 4ull, w->domain);
    w->check = new_buffer(w, CHECK_SLOTS * SLOT_N * 4ull, w->domain);
    static const uint32_t zero[OWN_N];
    CHECK(salvo_buffer_write(w->own, 0, zero, sizeof zero));

    pthread_barrier_wait(&ready_barrier);
    pthread_barrier_wait(&go_barrier); /* main has set the deadline */
    uint32_t r = 0;
    while (!past_deadline())
        round_once(w, r++);
    w->rounds = r;

    /* Nobody posts after this barrier: empty the mailbox and finish. */
    pthread_barrier_wait(&stop_barrier);
    worker *prev = &workers[(w->id + THREADS - 1) % THREADS];
    parcel in[MAILBOX_CAP];
    uint32_t n = mailbox_take(&w->box, in);
    if (n)
        CHECK(salvo_stream_wait_event(w->stream, prev->event));
    for (uint32_t i = 0; i < n; i++) {
        consume(w, in[i], 5 + (uint32_t)w->id);
        w->parcels_received++;
    }
    sync_and_check(w);
    salvo_buffer_destroy(w->own);
    salvo_buffer_destroy(w->check);
    w->own = w->check = NULL;
    return NULL;
}

static salvo_kernel *make_kernel(const uint32_t *spv, size_t size, const char *name)
{
    salvo_spec_constant sc = {0, 64};
    salvo_kernel_desc kd = {.spirv = spv, .spirv_size = size, .name = name,
                            .spec_constants = &sc, .spec_constant_count = 1};
    salvo_kernel *k = NULL;
    CHECK(salvo_kernel_create(dev, &kd, &k));
    return k;
}

int main(void)
{
    /* Speed over validation here; see the top of the file. */
    unsetenv("SALVO_VALIDATION");
    lava_require_device();

    double seconds = 30;
    const char *env = getenv("SALVO_STRESS_SECONDS");
    if (env && *env) {
        char *end = NULL;
        double x = strtod(env, &end);
        if (*end || !(x > 0) || x > 86400) {
            fprintf(stderr, "SALVO_STRESS_SECONDS='%s': expected seconds (0, 86400]\n", env);
            return 2;
        }
        seconds = x;
    }

    salvo_device_desc desc = {.log = log_cb};
    salvo_status st = salvo_device_create(&desc, &dev);
    if (st != SALVO_OK) {
        fprintf(stderr, "device_create: %s: %s\n", salvo_status_string(st), salvo_last_error());
        return st == SALVO_ERROR_NO_DEVICE ? LAVA_SKIP : 1;
    }
    salvo_device_info info;
    CHECK(salvo_device_info_get(dev, &info));
    min_offset_alignment = info.min_storage_buffer_offset_alignment;
    REQUIRE(min_offset_alignment <= 1 || (SLOT_N * 4ull) % min_offset_alignment == 0,
            "check slots of %u bytes are not aligned to %llu", SLOT_N * 4,
            (unsigned long long)min_offset_alignment);
    add_k = make_kernel(add_spv, sizeof add_spv, "add");
    copy_k = make_kernel(copy_spv, sizeof copy_spv, "copy");

    pthread_barrier_init(&ready_barrier, NULL, THREADS + 1);
    pthread_barrier_init(&go_barrier, NULL, THREADS + 1);
    pthread_barrier_init(&stop_barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) {
        worker *w = &workers[i];
        w->id = i;
        w->batch = batch_sizes[i];
        w->domain = (i & 1) ? SALVO_DOMAIN_SHARED : SALVO_DOMAIN_DEVICE;
        pthread_mutex_init(&w->box.lock, NULL);
    }
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0)
            die(__LINE__, "pthread_create failed");
    /* The clock starts once every thread has made its objects. */
    pthread_barrier_wait(&ready_barrier);
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)seconds;
    deadline.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_barrier_wait(&go_barrier);
    for (int i = 0; i < THREADS; i++)
        pthread_join(workers[i].thread, NULL);

    uint64_t total = 0;
    for (int i = 0; i < THREADS; i++) {
        worker *w = &workers[i];
        printf("thread %d (batch %3u): %8llu launches, %6llu rounds, %5llu synchronizes, "
               "%5llu buffers created, %5llu handed on, %5llu received\n",
               i, w->batch, (unsigned long long)w->launches, (unsigned long long)w->rounds,
               (unsigned long long)w->syncs, (unsigned long long)w->buffers_created,
               (unsigned long long)w->parcels_sent, (unsigned long long)w->parcels_received);
        total += w->launches;
        REQUIRE(w->rounds > 0, "thread %d ran no round", i);
    }
    printf("%llu launches in %.1f s\n", (unsigned long long)total, seconds);

    CHECK(salvo_device_synchronize(dev));
    for (int i = 0; i < THREADS; i++) {
        salvo_stream_destroy(workers[i].stream);
        salvo_event_destroy(workers[i].event);
        pthread_mutex_destroy(&workers[i].box.lock);
    }
    salvo_kernel_destroy(add_k);
    salvo_kernel_destroy(copy_k);

    salvo_stats s;
    CHECK(salvo_device_stats(dev, &s));
    REQUIRE(s.launches_total == total, "launches_total %llu, the threads made %llu",
            (unsigned long long)s.launches_total, (unsigned long long)total);
    REQUIRE(s.launches_pending == 0, "launches_pending %llu", (unsigned long long)s.launches_pending);
    REQUIRE(s.live_buffers == 0 && s.live_kernels == 0 && s.live_streams == 0 &&
                s.live_events == 0 && s.live_gates == 0 && s.live_buffer_bytes == 0,
            "live after destroy: %llu buffers (%llu bytes), %llu kernels, %llu streams, "
            "%llu events, %llu gates",
            (unsigned long long)s.live_buffers, (unsigned long long)s.live_buffer_bytes,
            (unsigned long long)s.live_kernels, (unsigned long long)s.live_streams,
            (unsigned long long)s.live_events, (unsigned long long)s.live_gates);
    REQUIRE(s.releases_pending == 0, "releases_pending %llu", (unsigned long long)s.releases_pending);
    salvo_device_destroy(dev);
    pthread_barrier_destroy(&ready_barrier);
    pthread_barrier_destroy(&go_barrier);
    pthread_barrier_destroy(&stop_barrier);

    if (atomic_load(&log_problems)) {
        fprintf(stderr, "%llu warning(s) or error(s) logged\n",
                (unsigned long long)atomic_load(&log_problems));
        return 1;
    }
    return 0;
}
