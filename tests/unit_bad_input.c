/*
 * Every public function of salvo.h fed every kind of bad input, on the fake
 * accelerator (DESIGN.md, "Errors and threads": bad arguments return
 * SALVO_ERROR_INVALID_ARGUMENT with a message, never crash and never change
 * state).
 *
 * The cases are rows of tables: {name, a function that makes the call and
 * returns its status, the status expected}. One loop runs them all and, for
 * each, checks
 *  - the status (SALVO_ERROR_INVALID_ARGUMENT unless salvo.h documents
 *    another one);
 *  - that salvo_last_error() holds a message;
 *  - that a create-style call set *out to NULL;
 *  - that nothing changed: both devices' salvo_stats (validation counters
 *    aside), both fakes' live handles of every kind and their call counts,
 *    the gates' values and the bytes of the host buffers;
 *  - that a good call still works afterwards (launch, synchronize, write
 *    and read on both devices).
 * Every case is run and printed; the test fails at the end with the list
 * of cases that did not hold, so one defect does not hide the next.
 *
 * Two fake devices stand for "another device". The last table runs after
 * device 1 was lost (fence_wait scripted to ACCEL_ERROR_DEVICE_LOST at a
 * synchronize): every call that needs the device must return
 * SALVO_ERROR_DEVICE_LOST, while device 2 keeps working, salvo_device_stats
 * still answers and the destroy functions still release everything.
 */
#define _POSIX_C_SOURCE 200809L /* unsetenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/internal.h"
#include "support/fake_accel.h"

#include "add.spv.h"
#include "empty.spv.h"
#include "saxpy.spv.h"

enum {
    BUF_BYTES = 1024,
    GATE_VALUE = 5,
    IMPORT_ALIGN = 4096, /* the fake's host_import_alignment */
    NPUSH = 256          /* the add kernel's n in the good launches */
};

/* ------------------------------------------------------------------ */
/* The fixture: two fake devices with one of everything each            */
/* ------------------------------------------------------------------ */

typedef struct side {
    fake_accel *f;
    salvo_device *dev;
    salvo_stream *st;
    salvo_kernel *add;   /* binding 0 (read-write), 8 push bytes */
    salvo_kernel *saxpy; /* bindings 0 (read) and 1 (read-write), 8 push bytes */
    salvo_kernel *empty; /* no binding, no push constants */
    salvo_buffer *dbuf;  /* BUF_BYTES, DEVICE */
    salvo_buffer *hbuf;  /* BUF_BYTES, HOST */
    salvo_buffer *hbuf2; /* BUF_BYTES, HOST */
    void *hmap, *hmap2;
    salvo_event *ev;       /* recorded after a launch, that batch completed */
    salvo_event *ev_fresh; /* never recorded */
    salvo_gate *gate;      /* raised to GATE_VALUE */
} side;

typedef struct fx {
    side a, b;           /* device 1 and device 2 */
    unsigned char *mem;  /* 2 * IMPORT_ALIGN bytes, aligned for import */
    const char *out_bad; /* set by a case whose *out was not set to NULL */
    int errors;          /* ERROR-level log messages */
} fx;

static void on_log(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)file;
    (void)line;
    (void)message;
    fx *x = user;
    if (level == SALVO_LOG_ERROR)
        x->errors++;
}

static const uint32_t G1[3] = {1, 1, 1};
static const uint32_t PUSH8[3] = {NPUSH, 1, 0}; /* 12 readable bytes; the kernels declare 8 */

#define MUST(call)                                                                                 \
    do {                                                                                           \
        salvo_status must_ = (call);                                                               \
        if (must_ != SALVO_OK)                                                                     \
            fail_msg("%s: %s: %s", #call, salvo_status_string(must_), salvo_last_error());         \
    } while (0)

static salvo_kernel *make_kernel(salvo_device *dev, const uint32_t *spirv, size_t size,
                                 const char *name)
{
    salvo_kernel_desc kd = {.spirv = spirv, .spirv_size = size, .name = name};
    salvo_kernel *k = NULL;
    MUST(salvo_kernel_create(dev, &kd, &k));
    return k;
}

static salvo_status launch_add(salvo_stream *st, salvo_kernel *k, salvo_buffer *b)
{
    const salvo_binding bind = {.binding = 0, .buffer = b};
    return salvo_launch(st, k, G1, &bind, 1, PUSH8, 8);
}

static void open_side(fx *x, side *s)
{
    s->f = fake_create();
    assert_non_null(s->f);
    salvo_device_desc d = {.batch_size = 64, .log = on_log, .log_user = x};
    MUST(device_create_with_accel(&d, fake_accel_get(s->f), &s->dev));
    MUST(salvo_stream_create(s->dev, NULL, &s->st));
    s->add = make_kernel(s->dev, add_spv, sizeof add_spv, "adder");
    s->saxpy = make_kernel(s->dev, saxpy_spv, sizeof saxpy_spv, "saxpy");
    s->empty = make_kernel(s->dev, empty_spv, sizeof empty_spv, "empty");
    MUST(salvo_buffer_create(s->dev, BUF_BYTES, SALVO_DOMAIN_DEVICE, &s->dbuf));
    MUST(salvo_buffer_create(s->dev, BUF_BYTES, SALVO_DOMAIN_HOST, &s->hbuf));
    MUST(salvo_buffer_create(s->dev, BUF_BYTES, SALVO_DOMAIN_HOST, &s->hbuf2));
    MUST(salvo_buffer_map(s->hbuf, &s->hmap));
    MUST(salvo_buffer_map(s->hbuf2, &s->hmap2));
    memset(s->hmap, 0x11, BUF_BYTES);
    memset(s->hmap2, 0x22, BUF_BYTES);
    MUST(salvo_event_create(s->dev, &s->ev));
    MUST(salvo_event_create(s->dev, &s->ev_fresh));
    MUST(launch_add(s->st, s->add, s->dbuf));
    MUST(salvo_event_record(s->ev, s->st));
    MUST(salvo_stream_synchronize(s->st));
    MUST(salvo_gate_create(s->dev, &s->gate));
    MUST(salvo_gate_raise(s->gate, GATE_VALUE));
}

static void destroy_side_objects(side *s)
{
    salvo_gate_destroy(s->gate);
    salvo_event_destroy(s->ev_fresh);
    salvo_event_destroy(s->ev);
    salvo_buffer_destroy(s->hbuf2);
    salvo_buffer_destroy(s->hbuf);
    salvo_buffer_destroy(s->dbuf);
    salvo_kernel_destroy(s->empty);
    salvo_kernel_destroy(s->saxpy);
    salvo_kernel_destroy(s->add);
    salvo_stream_destroy(s->st);
}

/* Destroy the device; the fake must end with no handle and no illegal use. */
static void close_side(side *s)
{
    salvo_device_destroy(s->dev);
    uint64_t live = fake_live_total(s->f), illegal = fake_illegal_total(s->f);
    char last[256];
    snprintf(last, sizeof last, "%s", fake_illegal_last(s->f));
    bool destroyed = fake_destroyed(s->f);
    fake_free(s->f);
    memset(s, 0, sizeof *s);
    if (illegal)
        fail_msg("%llu illegal use(s) of the accelerator; last: %s", (unsigned long long)illegal,
                 last);
    assert_int_equal(live, 0);
    assert_true(destroyed);
}

/* ------------------------------------------------------------------ */
/* What "no state changed" compares                                    */
/* ------------------------------------------------------------------ */

typedef struct side_snap {
    salvo_stats stats;
    uint64_t live[FAKE_KIND_COUNT];
    uint64_t calls;
    uint64_t gate;
    unsigned char host[2][BUF_BYTES];
} side_snap;

typedef struct snap {
    side_snap s[2];
} snap;

static void take_side(side *s, side_snap *o)
{
    memset(o, 0, sizeof *o);
    if (!s->dev)
        return;
    assert_int_equal(salvo_device_stats(s->dev, &o->stats), SALVO_OK);
    o->stats.validation_messages = 0; /* the one counter allowed to move */
    for (int k = 0; k < FAKE_KIND_COUNT; k++)
        o->live[k] = fake_live(s->f, (fake_kind)k);
    o->calls = fake_calls_total(s->f);
    o->gate = salvo_gate_value(s->gate);
    memcpy(o->host[0], s->hmap, BUF_BYTES);
    memcpy(o->host[1], s->hmap2, BUF_BYTES);
}

static void take(fx *x, snap *o)
{
    take_side(&x->a, &o->s[0]);
    take_side(&x->b, &o->s[1]);
}

/* Names what differs between two snapshots, or returns NULL. */
static const char *snap_diff(const snap *p, const snap *q, char *buf, size_t size)
{
    static const char *const kinds[FAKE_KIND_COUNT] = {"device", "buffer",   "pipeline",
                                                       "cmd",    "fence",    "descpool",
                                                       "timeline", "querypool", "image",
                                                       "sampler"};
    for (int d = 0; d < 2; d++) {
        const side_snap *a = &p->s[d], *b = &q->s[d];
        if (memcmp(&a->stats, &b->stats, sizeof a->stats) != 0) {
            snprintf(buf, size,
                     "device %d: salvo_stats changed (launches_total %llu -> %llu, "
                     "batches_submitted %llu -> %llu, live_buffers %llu -> %llu, "
                     "transfer_bytes %llu -> %llu, releases_run %llu -> %llu)",
                     d + 1, (unsigned long long)a->stats.launches_total,
                     (unsigned long long)b->stats.launches_total,
                     (unsigned long long)a->stats.batches_submitted,
                     (unsigned long long)b->stats.batches_submitted,
                     (unsigned long long)a->stats.live_buffers,
                     (unsigned long long)b->stats.live_buffers,
                     (unsigned long long)a->stats.transfer_bytes,
                     (unsigned long long)b->stats.transfer_bytes,
                     (unsigned long long)a->stats.releases_run,
                     (unsigned long long)b->stats.releases_run);
            return buf;
        }
        for (int k = 0; k < FAKE_KIND_COUNT; k++)
            if (a->live[k] != b->live[k]) {
                snprintf(buf, size, "device %d: live %s handles %llu -> %llu", d + 1, kinds[k],
                         (unsigned long long)a->live[k], (unsigned long long)b->live[k]);
                return buf;
            }
        if (a->calls != b->calls) {
            snprintf(buf, size, "device %d: %llu accelerator call(s) made", d + 1,
                     (unsigned long long)(b->calls - a->calls));
            return buf;
        }
        if (a->gate != b->gate) {
            snprintf(buf, size, "device %d: gate value %llu -> %llu", d + 1,
                     (unsigned long long)a->gate, (unsigned long long)b->gate);
            return buf;
        }
        if (memcmp(a->host, b->host, sizeof a->host) != 0) {
            snprintf(buf, size, "device %d: host buffer contents changed", d + 1);
            return buf;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* "A good call still works"                                           */
/* ------------------------------------------------------------------ */

static const char *side_works(side *s, char *buf, size_t size)
{
    salvo_status r = launch_add(s->st, s->add, s->dbuf);
    if (r == SALVO_OK)
        r = salvo_stream_synchronize(s->st);
    unsigned char in[64], out[64];
    memset(in, 0x5a, sizeof in);
    if (r == SALVO_OK)
        r = salvo_buffer_write(s->dbuf, 64, in, sizeof in);
    if (r == SALVO_OK)
        r = salvo_buffer_read(s->dbuf, 64, out, sizeof out);
    if (r == SALVO_OK && memcmp(in, out, sizeof in) != 0) {
        snprintf(buf, size, "%s: write/read round trip lost the bytes", s->dev->info.name);
        return buf;
    }
    if (r != SALVO_OK) {
        snprintf(buf, size, "%s no longer works: %s: %s", s->dev->info.name,
                 salvo_status_string(r), salvo_last_error());
        return buf;
    }
    return NULL;
}

typedef enum phase {
    PHASE_LIVE,      /* both devices healthy */
    PHASE_LOST_DEV1, /* device 1 lost, device 2 healthy */
} phase;

static const char *still_works(fx *x, phase ph, char *buf, size_t size)
{
    if (ph == PHASE_LIVE) {
        const char *why = side_works(&x->a, buf, size);
        if (why)
            return why;
    } else {
        salvo_stats st;
        if (salvo_device_stats(x->a.dev, &st) != SALVO_OK)
            return "salvo_device_stats fails on the lost device";
        if (!salvo_device_is_lost(x->a.dev))
            return "device 1 no longer reads as lost";
    }
    return side_works(&x->b, buf, size);
}

/* ------------------------------------------------------------------ */
/* The table machinery                                                  */
/* ------------------------------------------------------------------ */

typedef salvo_status (*case_fn)(fx *x);

typedef struct bad_case {
    const char *name;
    case_fn call;
    salvo_status expect;
} bad_case;

/* A pointer no create function returns: *out must not keep it. */
static char sentinel[1];

static void out_check(fx *x, const void *o)
{
    if (o == (const void *)sentinel)
        x->out_bad = "*out was not set to NULL";
    else if (o)
        x->out_bad = "*out was set to an object";
}

/* A case: one call. */
#define BAD(id, expr)                                                                              \
    static salvo_status id(fx *x)                                                                  \
    {                                                                                              \
        (void)x;                                                                                   \
        return (expr);                                                                             \
    }
/* A case of a function with an out-pointer: o starts as the sentinel and
 * the call gets &o. */
#define BAD_OUT(id, T, expr)                                                                       \
    static salvo_status id(fx *x)                                                                  \
    {                                                                                              \
        T *o = (T *)(void *)sentinel;                                                              \
        salvo_status r_ = (expr);                                                                  \
        out_check(x, o);                                                                           \
        return r_;                                                                                 \
    }

#define ROW(id, expect) {#id, id, expect}
#define INVALID SALVO_ERROR_INVALID_ARGUMENT
#define LOST SALVO_ERROR_DEVICE_LOST

/* Runs the rows; returns how many failed (each printed). */
static int run_table(fx *x, const bad_case *rows, size_t n, phase ph)
{
    int failed = 0;
    char why[SALVO_ERROR_MAX + 256];
    for (size_t i = 0; i < n; i++) {
        const bad_case *c = &rows[i];
        snap before, after;
        take(x, &before); /* salvo_device_stats also clears the last error */
        x->out_bad = NULL;
        salvo_status got = c->call(x);
        char msg[SALVO_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", salvo_last_error());
        take(x, &after);

        const char *problem = NULL;
        char diff[512];
        if (got != c->expect) {
            snprintf(why, sizeof why, "returned %s, expected %s (%s)", salvo_status_string(got),
                     salvo_status_string(c->expect), msg);
            problem = why;
        } else if (msg[0] == '\0') {
            problem = "salvo_last_error() is empty";
        } else if (x->out_bad) {
            problem = x->out_bad;
        } else if ((problem = snap_diff(&before, &after, diff, sizeof diff)) != NULL) {
        } else {
            problem = still_works(x, ph, why, sizeof why);
        }
        if (problem) {
            failed++;
            printf("[  FAILED  ] %s: %s\n", c->name, problem);
        } else {
            printf("[       OK ] %s: %s\n", c->name, msg);
        }
    }
    return failed;
}

/* ------------------------------------------------------------------ */
/* Device                                                               */
/* ------------------------------------------------------------------ */

static const salvo_device_desc bad_fault_desc = {.fault = "not a fault spec"};

BAD(enumerate_count_null, salvo_device_enumerate(NULL, NULL))
static salvo_status enumerate_entries_count_null(fx *x)
{
    (void)x;
    salvo_device_entry e[2];
    return salvo_device_enumerate(e, NULL);
}
BAD(device_create_out_null, salvo_device_create(NULL, NULL))
BAD(device_create_out_null_with_desc, salvo_device_create(&bad_fault_desc, NULL))
BAD_OUT(device_create_bad_fault_spec, salvo_device, salvo_device_create(&bad_fault_desc, &o))
static salvo_status device_info_device_null(fx *x)
{
    (void)x;
    salvo_device_info info;
    return salvo_device_info_get(NULL, &info);
}
BAD(device_info_out_null, salvo_device_info_get(x->a.dev, NULL))
BAD(device_synchronize_null, salvo_device_synchronize(NULL))
static salvo_status device_stats_device_null(fx *x)
{
    (void)x;
    salvo_stats s;
    return salvo_device_stats(NULL, &s);
}
BAD(device_stats_out_null, salvo_device_stats(x->a.dev, NULL))

/* An allocator with only one of its two functions: salvo would pair the
 * user's alloc with libc's free (or malloc with the user's free). Opened on
 * a fake of its own through the seam salvo_device_create delegates to
 * (which, being internal, leaves *out alone on failure). The halves given
 * here are malloc and free themselves, so a library that accepts them
 * still runs correctly and the case can only fail by its status. */
static void *plain_alloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}
static void plain_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}
static salvo_status create_with_allocator(fx *x, const salvo_allocator *a)
{
    fake_accel *f = fake_create();
    assert_non_null(f);
    salvo_device_desc d = {.allocator = a, .log = on_log, .log_user = x};
    salvo_device *o = NULL;
    salvo_status r = device_create_with_accel(&d, fake_accel_get(f), &o);
    out_check(x, o);
    salvo_device_destroy(o);
    if (fake_live_total(f) != 0)
        x->out_bad = "the fake was left with live handles";
    fake_free(f);
    return r;
}
static const salvo_allocator alloc_without_free = {plain_alloc, NULL, NULL};
static const salvo_allocator free_without_alloc = {NULL, plain_free, NULL};
BAD(device_create_allocator_without_free, create_with_allocator(x, &alloc_without_free))
BAD(device_create_allocator_without_alloc, create_with_allocator(x, &free_without_alloc))

/* ------------------------------------------------------------------ */
/* Buffers                                                              */
/* ------------------------------------------------------------------ */

BAD_OUT(buffer_create_device_null, salvo_buffer,
        salvo_buffer_create(NULL, 64, SALVO_DOMAIN_HOST, &o))
BAD(buffer_create_out_null, salvo_buffer_create(x->a.dev, 64, SALVO_DOMAIN_HOST, NULL))
BAD_OUT(buffer_create_size_0, salvo_buffer, salvo_buffer_create(x->a.dev, 0, SALVO_DOMAIN_HOST, &o))
BAD_OUT(buffer_create_domain_3, salvo_buffer,
        salvo_buffer_create(x->a.dev, 64, (salvo_domain)3, &o))
BAD_OUT(buffer_create_domain_minus_1, salvo_buffer,
        salvo_buffer_create(x->a.dev, 64, (salvo_domain)-1, &o))

BAD_OUT(import_device_null, salvo_buffer,
        salvo_buffer_import_host(NULL, x->mem, IMPORT_ALIGN, SALVO_DOMAIN_HOST, &o))
BAD(import_out_null,
    salvo_buffer_import_host(x->a.dev, x->mem, IMPORT_ALIGN, SALVO_DOMAIN_HOST, NULL))
BAD_OUT(import_ptr_null, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, NULL, IMPORT_ALIGN, SALVO_DOMAIN_HOST, &o))
BAD_OUT(import_size_0, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, x->mem, 0, SALVO_DOMAIN_HOST, &o))
BAD_OUT(import_ptr_misaligned, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, x->mem + 64, IMPORT_ALIGN, SALVO_DOMAIN_HOST, &o))
BAD_OUT(import_size_misaligned, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, x->mem, IMPORT_ALIGN + 4, SALVO_DOMAIN_HOST, &o))
BAD_OUT(import_into_device_domain, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, x->mem, IMPORT_ALIGN, SALVO_DOMAIN_DEVICE, &o))
BAD_OUT(import_domain_9, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, x->mem, IMPORT_ALIGN, (salvo_domain)9, &o))
/* ptr + size past the end of the address space (both aligned). */
BAD_OUT(import_range_wraps, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, x->mem, UINT64_MAX & ~(uint64_t)(IMPORT_ALIGN - 1),
                                 SALVO_DOMAIN_HOST, &o))

static unsigned char host_bytes[2 * BUF_BYTES];

BAD(write_buffer_null, salvo_buffer_write(NULL, 0, host_bytes, 16))
BAD(write_src_null, salvo_buffer_write(x->a.dbuf, 0, NULL, 16))
BAD(write_size_0, salvo_buffer_write(x->a.dbuf, 0, host_bytes, 0))
BAD(write_offset_at_end, salvo_buffer_write(x->a.dbuf, BUF_BYTES, host_bytes, 1))
BAD(write_offset_max, salvo_buffer_write(x->a.hbuf, UINT64_MAX, host_bytes, 1))
BAD(write_range_past_end, salvo_buffer_write(x->a.hbuf, BUF_BYTES - 8, host_bytes, 16))
BAD(write_size_past_end, salvo_buffer_write(x->a.dbuf, 0, host_bytes, BUF_BYTES + 1))
BAD(write_range_wraps, salvo_buffer_write(x->a.hbuf, 16, host_bytes, UINT64_MAX - 8))
BAD(read_buffer_null, salvo_buffer_read(NULL, 0, host_bytes, 16))
BAD(read_dst_null, salvo_buffer_read(x->a.dbuf, 0, NULL, 16))
BAD(read_size_0, salvo_buffer_read(x->a.dbuf, 0, host_bytes, 0))
BAD(read_offset_at_end, salvo_buffer_read(x->a.dbuf, BUF_BYTES, host_bytes, 1))
BAD(read_offset_max, salvo_buffer_read(x->a.hbuf, UINT64_MAX, host_bytes, 1))
BAD(read_range_past_end, salvo_buffer_read(x->a.hbuf, BUF_BYTES - 8, host_bytes, 16))
BAD(read_size_past_end, salvo_buffer_read(x->a.dbuf, 0, host_bytes, BUF_BYTES + 1))
BAD(read_range_wraps, salvo_buffer_read(x->a.hbuf, 16, host_bytes, UINT64_MAX - 8))

BAD_OUT(map_buffer_null, void, salvo_buffer_map(NULL, &o))
BAD(map_out_null, salvo_buffer_map(x->a.hbuf, NULL))
BAD_OUT(map_device_buffer, void, salvo_buffer_map(x->a.dbuf, &o))

/* ------------------------------------------------------------------ */
/* Kernels                                                              */
/* ------------------------------------------------------------------ */

static const uint32_t garbage_words[16] = {0xdeadbeef, 0x01234567, 0x89abcdef, 0xfeedface,
                                           0xdeadbeef, 0x01234567, 0x89abcdef, 0xfeedface,
                                           0xdeadbeef, 0x01234567, 0x89abcdef, 0xfeedface,
                                           0xdeadbeef, 0x01234567, 0x89abcdef, 0xfeedface};
/* A good header, then an instruction claiming 0xffff words. */
static const uint32_t header_then_garbage[12] = {0x07230203, 0x00010300, 0,          64,
                                                 0,          0xffffffff, 0xffffffff, 0xffffffff,
                                                 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};
/* A good header, then an instruction of word count 0 (a walk that trusts
 * it never ends). */
static const uint32_t header_then_zero[8] = {0x07230203, 0x00010300, 0, 64, 0, 0x0000000e, 0, 0};

static salvo_status create_kernel(fx *x, const uint32_t *spirv, size_t size, const char *entry,
                                  const salvo_spec_constant *sc, uint32_t sc_count)
{
    salvo_kernel_desc kd = {.spirv = spirv,
                            .spirv_size = size,
                            .entry = entry,
                            .name = "bad",
                            .spec_constants = sc,
                            .spec_constant_count = sc_count};
    salvo_kernel *o = (salvo_kernel *)(void *)sentinel;
    salvo_status r = salvo_kernel_create(x->a.dev, &kd, &o);
    out_check(x, o);
    return r;
}

static const salvo_kernel_desc add_desc = {.spirv = add_spv, .spirv_size = sizeof add_spv};

BAD_OUT(kernel_create_device_null, salvo_kernel, salvo_kernel_create(NULL, &add_desc, &o))
BAD_OUT(kernel_create_desc_null, salvo_kernel, salvo_kernel_create(x->a.dev, NULL, &o))
BAD(kernel_create_out_null, salvo_kernel_create(x->a.dev, &add_desc, NULL))
BAD(kernel_spirv_null, create_kernel(x, NULL, sizeof add_spv, NULL, NULL, 0))
BAD(kernel_spirv_size_0, create_kernel(x, add_spv, 0, NULL, NULL, 0))
BAD(kernel_spirv_size_not_words, create_kernel(x, add_spv, sizeof add_spv - 2, NULL, NULL, 0))
BAD(kernel_spirv_garbage, create_kernel(x, garbage_words, sizeof garbage_words, NULL, NULL, 0))
BAD(kernel_spirv_header_then_garbage,
    create_kernel(x, header_then_garbage, sizeof header_then_garbage, NULL, NULL, 0))
BAD(kernel_spirv_word_count_0,
    create_kernel(x, header_then_zero, sizeof header_then_zero, NULL, NULL, 0))
BAD(kernel_spirv_header_only, create_kernel(x, add_spv, 20, NULL, NULL, 0))
BAD(kernel_spirv_truncated, create_kernel(x, add_spv, (sizeof add_spv / 8) * 4, NULL, NULL, 0))
BAD(kernel_entry_unknown, create_kernel(x, add_spv, sizeof add_spv, "no_such_entry", NULL, 0))
BAD(kernel_entry_empty, create_kernel(x, add_spv, sizeof add_spv, "", NULL, 0))
BAD(kernel_spec_constants_null, create_kernel(x, add_spv, sizeof add_spv, NULL, NULL, 1))
static const salvo_spec_constant spec_twice[2] = {{0, 64}, {0, 32}};
static const salvo_spec_constant spec_local_0 = {0, 0};
static const salvo_spec_constant spec_local_2048 = {0, 2048}; /* the fake allows 1024 */
BAD(kernel_spec_constant_id_twice, create_kernel(x, add_spv, sizeof add_spv, NULL, spec_twice, 2))
BAD(kernel_local_size_0, create_kernel(x, add_spv, sizeof add_spv, NULL, &spec_local_0, 1))
BAD(kernel_local_size_over_max,
    create_kernel(x, add_spv, sizeof add_spv, NULL, &spec_local_2048, 1))
static salvo_status kernel_info_kernel_null(fx *x)
{
    (void)x;
    salvo_kernel_info info;
    return salvo_kernel_info_get(NULL, &info);
}
BAD(kernel_info_out_null, salvo_kernel_info_get(x->a.add, NULL))

/* ------------------------------------------------------------------ */
/* Streams, launches, copies                                            */
/* ------------------------------------------------------------------ */

BAD_OUT(stream_create_device_null, salvo_stream, salvo_stream_create(NULL, NULL, &o))
BAD(stream_create_out_null, salvo_stream_create(x->a.dev, NULL, NULL))

/* One launch on device 1's stream with the given bindings, push and groups. */
static salvo_status launch_with(fx *x, salvo_kernel *k, const uint32_t *groups,
                                const salvo_binding *b, uint32_t count, const void *push,
                                uint32_t push_size)
{
    return salvo_launch(x->a.st, k, groups, b, count, push, push_size);
}

static salvo_status launch_one(fx *x, salvo_binding b)
{
    return launch_with(x, x->a.add, G1, &b, 1, PUSH8, 8);
}

static salvo_status launch_groups(fx *x, uint32_t g0, uint32_t g1, uint32_t g2)
{
    const uint32_t g[3] = {g0, g1, g2};
    const salvo_binding b = {.binding = 0, .buffer = x->a.dbuf};
    return launch_with(x, x->a.add, g, &b, 1, PUSH8, 8);
}

static salvo_status launch_two(fx *x, salvo_kernel *k, uint32_t b0, uint32_t b1)
{
    const salvo_binding b[2] = {{.binding = b0, .buffer = x->a.hbuf},
                                {.binding = b1, .buffer = x->a.hbuf2}};
    return launch_with(x, k, G1, b, 2, PUSH8, 8);
}

#define BIND0(...) ((salvo_binding){.binding = 0, __VA_ARGS__})

BAD(launch_stream_null, salvo_launch(NULL, x->a.add, G1, &BIND0(.buffer = x->a.dbuf), 1, PUSH8, 8))
BAD(launch_kernel_null, launch_with(x, NULL, G1, &BIND0(.buffer = x->a.dbuf), 1, PUSH8, 8))
BAD(launch_groups_null, launch_with(x, x->a.add, NULL, &BIND0(.buffer = x->a.dbuf), 1, PUSH8, 8))
BAD(launch_bindings_null, launch_with(x, x->a.add, G1, NULL, 1, PUSH8, 8))
BAD(launch_binding_missing, launch_with(x, x->a.add, G1, NULL, 0, PUSH8, 8))
BAD(launch_binding_missing_second,
    launch_with(x, x->a.saxpy, G1, &BIND0(.buffer = x->a.hbuf), 1, PUSH8, 8))
BAD(launch_binding_extra, launch_two(x, x->a.add, 0, 1))
BAD(launch_binding_duplicate_extra, launch_two(x, x->a.add, 0, 0))
BAD(launch_binding_duplicate, launch_two(x, x->a.saxpy, 0, 0))
BAD(launch_binding_duplicate_second, launch_two(x, x->a.saxpy, 1, 1))
BAD(launch_binding_wrong_number,
    launch_one(x, (salvo_binding){.binding = 5, .buffer = x->a.dbuf}))
BAD(launch_binding_wrong_number_max,
    launch_one(x, (salvo_binding){.binding = UINT32_MAX, .buffer = x->a.dbuf}))
BAD(launch_binding_wrong_number_of_two, launch_two(x, x->a.saxpy, 0, 2))
BAD(launch_binding_buffer_null, launch_one(x, BIND0(.buffer = NULL)))
BAD(launch_binding_offset_at_end, launch_one(x, BIND0(.buffer = x->a.dbuf, .offset = BUF_BYTES)))
BAD(launch_binding_offset_max,
    launch_one(x, BIND0(.buffer = x->a.dbuf, .offset = UINT64_MAX & ~(uint64_t)15)))
BAD(launch_binding_size_past_end,
    launch_one(x, BIND0(.buffer = x->a.dbuf, .size = BUF_BYTES + 16)))
BAD(launch_binding_range_past_end,
    launch_one(x, BIND0(.buffer = x->a.dbuf, .offset = 512, .size = 528)))
BAD(launch_binding_range_wraps,
    launch_one(x, BIND0(.buffer = x->a.dbuf, .offset = 16, .size = UINT64_MAX - 8)))
BAD(launch_binding_offset_misaligned,
    launch_one(x, BIND0(.buffer = x->a.dbuf, .offset = 4, .size = 16)))
BAD(launch_push_larger, launch_with(x, x->a.add, G1, &BIND0(.buffer = x->a.dbuf), 1, PUSH8, 12))
BAD(launch_push_smaller, launch_with(x, x->a.add, G1, &BIND0(.buffer = x->a.dbuf), 1, PUSH8, 4))
BAD(launch_push_size_0, launch_with(x, x->a.add, G1, &BIND0(.buffer = x->a.dbuf), 1, PUSH8, 0))
BAD(launch_push_null, launch_with(x, x->a.add, G1, &BIND0(.buffer = x->a.dbuf), 1, NULL, 8))
BAD(launch_push_to_kernel_without, launch_with(x, x->a.empty, G1, NULL, 0, PUSH8, 4))
BAD(launch_binding_to_kernel_without,
    launch_with(x, x->a.empty, G1, &BIND0(.buffer = x->a.dbuf), 1, NULL, 0))
BAD(launch_groups_x_0, launch_groups(x, 0, 1, 1))
BAD(launch_groups_y_0, launch_groups(x, 1, 0, 1))
BAD(launch_groups_z_0, launch_groups(x, 1, 1, 0))
BAD(launch_groups_x_over_max, launch_groups(x, 65536, 1, 1))
BAD(launch_groups_y_over_max, launch_groups(x, 1, 65536, 1))
BAD(launch_groups_z_over_max, launch_groups(x, 1, 1, 65536))
BAD(launch_groups_uint32_max, launch_groups(x, UINT32_MAX, UINT32_MAX, UINT32_MAX))
BAD(launch_buffer_of_device_2, launch_one(x, BIND0(.buffer = x->b.dbuf)))
BAD(launch_kernel_of_device_2,
    launch_with(x, x->b.add, G1, &BIND0(.buffer = x->a.dbuf), 1, PUSH8, 8))
BAD(launch_kernel_and_buffer_of_device_2,
    launch_with(x, x->b.add, G1, &BIND0(.buffer = x->b.dbuf), 1, PUSH8, 8))

BAD(copy_stream_null, salvo_copy(NULL, x->a.hbuf, 0, x->a.hbuf2, 0, 16))
BAD(copy_src_null, salvo_copy(x->a.st, NULL, 0, x->a.hbuf2, 0, 16))
BAD(copy_dst_null, salvo_copy(x->a.st, x->a.hbuf, 0, NULL, 0, 16))
BAD(copy_size_0, salvo_copy(x->a.st, x->a.hbuf, 0, x->a.hbuf2, 0, 0))
BAD(copy_src_offset_at_end, salvo_copy(x->a.st, x->a.hbuf, BUF_BYTES, x->a.hbuf2, 0, 1))
BAD(copy_dst_offset_at_end, salvo_copy(x->a.st, x->a.hbuf, 0, x->a.hbuf2, BUF_BYTES, 1))
BAD(copy_src_range_past_end, salvo_copy(x->a.st, x->a.hbuf, 1000, x->a.hbuf2, 0, 100))
BAD(copy_dst_range_past_end, salvo_copy(x->a.st, x->a.hbuf, 0, x->a.hbuf2, 1000, 100))
BAD(copy_size_past_end, salvo_copy(x->a.st, x->a.hbuf, 0, x->a.hbuf2, 0, BUF_BYTES + 1))
BAD(copy_src_range_wraps, salvo_copy(x->a.st, x->a.hbuf, 16, x->a.hbuf2, 0, UINT64_MAX - 8))
BAD(copy_dst_range_wraps, salvo_copy(x->a.st, x->a.hbuf, 0, x->a.hbuf2, 16, UINT64_MAX - 8))
BAD(copy_offsets_max, salvo_copy(x->a.st, x->a.hbuf, UINT64_MAX, x->a.hbuf2, UINT64_MAX, 1))
BAD(copy_overlapping_ranges, salvo_copy(x->a.st, x->a.hbuf, 0, x->a.hbuf, 8, 16))
BAD(copy_src_of_device_2, salvo_copy(x->a.st, x->b.hbuf, 0, x->a.hbuf2, 0, 16))
BAD(copy_dst_of_device_2, salvo_copy(x->a.st, x->a.hbuf, 0, x->b.hbuf2, 0, 16))
BAD(copy_stream_of_device_2, salvo_copy(x->b.st, x->a.hbuf, 0, x->a.hbuf2, 0, 16))

BAD(flush_stream_null, salvo_stream_flush(NULL))
BAD(stream_synchronize_null, salvo_stream_synchronize(NULL))

/* ------------------------------------------------------------------ */
/* Events                                                               */
/* ------------------------------------------------------------------ */

BAD_OUT(event_create_device_null, salvo_event, salvo_event_create(NULL, &o))
BAD(event_create_out_null, salvo_event_create(x->a.dev, NULL))
BAD(event_record_event_null, salvo_event_record(NULL, x->a.st))
BAD(event_record_stream_null, salvo_event_record(x->a.ev, NULL))
BAD(event_record_both_null, salvo_event_record(NULL, NULL))
BAD(event_record_event_of_device_2, salvo_event_record(x->b.ev, x->a.st))
BAD(event_record_stream_of_device_2, salvo_event_record(x->a.ev, x->b.st))
BAD(event_query_null, salvo_event_query(NULL))
BAD(event_synchronize_null, salvo_event_synchronize(NULL))
BAD(event_cancel_null, salvo_event_cancel(NULL))
BAD(event_cancel_never_recorded, salvo_event_cancel(x->a.ev_fresh))
BAD(event_cancel_work_completed, salvo_event_cancel(x->a.ev))
BAD(wait_event_stream_null, salvo_stream_wait_event(NULL, x->a.ev))
BAD(wait_event_event_null, salvo_stream_wait_event(x->a.st, NULL))
BAD(wait_event_event_of_device_2, salvo_stream_wait_event(x->a.st, x->b.ev))
BAD(wait_event_fresh_event_of_device_2, salvo_stream_wait_event(x->a.st, x->b.ev_fresh))

/* ------------------------------------------------------------------ */
/* Gates                                                                */
/* ------------------------------------------------------------------ */

BAD_OUT(gate_create_device_null, salvo_gate, salvo_gate_create(NULL, &o))
BAD(gate_create_out_null, salvo_gate_create(x->a.dev, NULL))
BAD(gate_raise_null, salvo_gate_raise(NULL, GATE_VALUE + 1))
BAD(gate_raise_below_value, salvo_gate_raise(x->a.gate, GATE_VALUE - 1))
BAD(gate_raise_to_0, salvo_gate_raise(x->a.gate, 0))
BAD(wait_gate_stream_null, salvo_stream_wait_gate(NULL, x->a.gate, GATE_VALUE + 1))
BAD(wait_gate_gate_null, salvo_stream_wait_gate(x->a.st, NULL, GATE_VALUE + 1))
BAD(wait_gate_gate_of_device_2, salvo_stream_wait_gate(x->a.st, x->b.gate, GATE_VALUE + 1))

static const bad_case live_cases[] = {
    ROW(enumerate_count_null, INVALID),
    ROW(enumerate_entries_count_null, INVALID),
    ROW(device_create_out_null, INVALID),
    ROW(device_create_out_null_with_desc, INVALID),
    ROW(device_create_bad_fault_spec, INVALID),
    ROW(device_info_device_null, INVALID),
    ROW(device_info_out_null, INVALID),
    ROW(device_synchronize_null, INVALID),
    ROW(device_stats_device_null, INVALID),
    ROW(device_stats_out_null, INVALID),
    ROW(device_create_allocator_without_free, INVALID),
    ROW(device_create_allocator_without_alloc, INVALID),

    ROW(buffer_create_device_null, INVALID),
    ROW(buffer_create_out_null, INVALID),
    ROW(buffer_create_size_0, INVALID),
    ROW(buffer_create_domain_3, INVALID),
    ROW(buffer_create_domain_minus_1, INVALID),
    ROW(import_device_null, INVALID),
    ROW(import_out_null, INVALID),
    ROW(import_ptr_null, INVALID),
    ROW(import_size_0, INVALID),
    ROW(import_ptr_misaligned, INVALID),
    ROW(import_size_misaligned, INVALID),
    ROW(import_into_device_domain, INVALID),
    ROW(import_domain_9, INVALID),
    ROW(import_range_wraps, INVALID),
    ROW(write_buffer_null, INVALID),
    ROW(write_src_null, INVALID),
    ROW(write_size_0, INVALID),
    ROW(write_offset_at_end, INVALID),
    ROW(write_offset_max, INVALID),
    ROW(write_range_past_end, INVALID),
    ROW(write_size_past_end, INVALID),
    ROW(write_range_wraps, INVALID),
    ROW(read_buffer_null, INVALID),
    ROW(read_dst_null, INVALID),
    ROW(read_size_0, INVALID),
    ROW(read_offset_at_end, INVALID),
    ROW(read_offset_max, INVALID),
    ROW(read_range_past_end, INVALID),
    ROW(read_size_past_end, INVALID),
    ROW(read_range_wraps, INVALID),
    ROW(map_buffer_null, INVALID),
    ROW(map_out_null, INVALID),
    ROW(map_device_buffer, INVALID),

    ROW(kernel_create_device_null, INVALID),
    ROW(kernel_create_desc_null, INVALID),
    ROW(kernel_create_out_null, INVALID),
    ROW(kernel_spirv_null, INVALID),
    ROW(kernel_spirv_size_0, INVALID),
    ROW(kernel_spirv_size_not_words, INVALID),
    ROW(kernel_spirv_garbage, INVALID),
    ROW(kernel_spirv_header_then_garbage, INVALID),
    ROW(kernel_spirv_word_count_0, INVALID),
    ROW(kernel_spirv_header_only, INVALID),
    ROW(kernel_spirv_truncated, INVALID),
    ROW(kernel_entry_unknown, INVALID),
    ROW(kernel_entry_empty, INVALID),
    ROW(kernel_spec_constants_null, INVALID),
    ROW(kernel_spec_constant_id_twice, INVALID),
    ROW(kernel_local_size_0, INVALID),
    ROW(kernel_local_size_over_max, INVALID),
    ROW(kernel_info_kernel_null, INVALID),
    ROW(kernel_info_out_null, INVALID),

    ROW(stream_create_device_null, INVALID),
    ROW(stream_create_out_null, INVALID),
    ROW(launch_stream_null, INVALID),
    ROW(launch_kernel_null, INVALID),
    ROW(launch_groups_null, INVALID),
    ROW(launch_bindings_null, INVALID),
    ROW(launch_binding_missing, INVALID),
    ROW(launch_binding_missing_second, INVALID),
    ROW(launch_binding_extra, INVALID),
    ROW(launch_binding_duplicate_extra, INVALID),
    ROW(launch_binding_duplicate, INVALID),
    ROW(launch_binding_duplicate_second, INVALID),
    ROW(launch_binding_wrong_number, INVALID),
    ROW(launch_binding_wrong_number_max, INVALID),
    ROW(launch_binding_wrong_number_of_two, INVALID),
    ROW(launch_binding_buffer_null, INVALID),
    ROW(launch_binding_offset_at_end, INVALID),
    ROW(launch_binding_offset_max, INVALID),
    ROW(launch_binding_size_past_end, INVALID),
    ROW(launch_binding_range_past_end, INVALID),
    ROW(launch_binding_range_wraps, INVALID),
    ROW(launch_binding_offset_misaligned, INVALID),
    ROW(launch_push_larger, INVALID),
    ROW(launch_push_smaller, INVALID),
    ROW(launch_push_size_0, INVALID),
    ROW(launch_push_null, INVALID),
    ROW(launch_push_to_kernel_without, INVALID),
    ROW(launch_binding_to_kernel_without, INVALID),
    ROW(launch_groups_x_0, INVALID),
    ROW(launch_groups_y_0, INVALID),
    ROW(launch_groups_z_0, INVALID),
    ROW(launch_groups_x_over_max, INVALID),
    ROW(launch_groups_y_over_max, INVALID),
    ROW(launch_groups_z_over_max, INVALID),
    ROW(launch_groups_uint32_max, INVALID),
    ROW(launch_buffer_of_device_2, INVALID),
    ROW(launch_kernel_of_device_2, INVALID),
    ROW(launch_kernel_and_buffer_of_device_2, INVALID),
    ROW(copy_stream_null, INVALID),
    ROW(copy_src_null, INVALID),
    ROW(copy_dst_null, INVALID),
    ROW(copy_size_0, INVALID),
    ROW(copy_src_offset_at_end, INVALID),
    ROW(copy_dst_offset_at_end, INVALID),
    ROW(copy_src_range_past_end, INVALID),
    ROW(copy_dst_range_past_end, INVALID),
    ROW(copy_size_past_end, INVALID),
    ROW(copy_src_range_wraps, INVALID),
    ROW(copy_dst_range_wraps, INVALID),
    ROW(copy_offsets_max, INVALID),
    ROW(copy_overlapping_ranges, INVALID),
    ROW(copy_src_of_device_2, INVALID),
    ROW(copy_dst_of_device_2, INVALID),
    ROW(copy_stream_of_device_2, INVALID),
    ROW(flush_stream_null, INVALID),
    ROW(stream_synchronize_null, INVALID),

    ROW(event_create_device_null, INVALID),
    ROW(event_create_out_null, INVALID),
    ROW(event_record_event_null, INVALID),
    ROW(event_record_stream_null, INVALID),
    ROW(event_record_both_null, INVALID),
    ROW(event_record_event_of_device_2, INVALID),
    ROW(event_record_stream_of_device_2, INVALID),
    ROW(event_query_null, INVALID),
    ROW(event_synchronize_null, INVALID),
    ROW(event_cancel_null, INVALID),
    /* salvo.h: nothing pending before the event, or already submitted. */
    ROW(event_cancel_never_recorded, SALVO_ERROR_INVALID_STATE),
    ROW(event_cancel_work_completed, SALVO_ERROR_INVALID_STATE),
    ROW(wait_event_stream_null, INVALID),
    ROW(wait_event_event_null, INVALID),
    ROW(wait_event_event_of_device_2, INVALID),
    ROW(wait_event_fresh_event_of_device_2, INVALID),

    ROW(gate_create_device_null, INVALID),
    ROW(gate_create_out_null, INVALID),
    ROW(gate_raise_null, INVALID),
    ROW(gate_raise_below_value, INVALID),
    ROW(gate_raise_to_0, INVALID),
    ROW(wait_gate_stream_null, INVALID),
    ROW(wait_gate_gate_null, INVALID),
    ROW(wait_gate_gate_of_device_2, INVALID),
};

/* ------------------------------------------------------------------ */
/* After the loss of device 1: good arguments, DEVICE_LOST             */
/* ------------------------------------------------------------------ */

BAD_OUT(lost_buffer_create, salvo_buffer, salvo_buffer_create(x->a.dev, 64, SALVO_DOMAIN_HOST, &o))
BAD_OUT(lost_buffer_create_device, salvo_buffer,
        salvo_buffer_create(x->a.dev, 64, SALVO_DOMAIN_DEVICE, &o))
BAD_OUT(lost_buffer_import_host, salvo_buffer,
        salvo_buffer_import_host(x->a.dev, x->mem, IMPORT_ALIGN, SALVO_DOMAIN_HOST, &o))
BAD(lost_buffer_write_host, salvo_buffer_write(x->a.hbuf, 0, host_bytes, 16))
BAD(lost_buffer_write_device, salvo_buffer_write(x->a.dbuf, 0, host_bytes, 16))
BAD(lost_buffer_read_host, salvo_buffer_read(x->a.hbuf, 0, host_bytes, 16))
BAD(lost_buffer_read_device, salvo_buffer_read(x->a.dbuf, 0, host_bytes, 16))
BAD_OUT(lost_kernel_create, salvo_kernel, salvo_kernel_create(x->a.dev, &add_desc, &o))
BAD_OUT(lost_stream_create, salvo_stream, salvo_stream_create(x->a.dev, NULL, &o))
BAD(lost_launch, launch_add(x->a.st, x->a.add, x->a.dbuf))
BAD(lost_copy, salvo_copy(x->a.st, x->a.hbuf, 0, x->a.hbuf2, 0, 16))
BAD(lost_stream_flush, salvo_stream_flush(x->a.st))
BAD(lost_stream_synchronize, salvo_stream_synchronize(x->a.st))
BAD(lost_device_synchronize, salvo_device_synchronize(x->a.dev))
BAD_OUT(lost_event_create, salvo_event, salvo_event_create(x->a.dev, &o))
BAD(lost_event_record, salvo_event_record(x->a.ev, x->a.st))
BAD(lost_event_query, salvo_event_query(x->a.ev))
BAD(lost_event_query_fresh, salvo_event_query(x->a.ev_fresh))
BAD(lost_event_synchronize, salvo_event_synchronize(x->a.ev))
BAD(lost_event_cancel, salvo_event_cancel(x->a.ev))
BAD(lost_stream_wait_event, salvo_stream_wait_event(x->a.st, x->a.ev))
BAD_OUT(lost_gate_create, salvo_gate, salvo_gate_create(x->a.dev, &o))
BAD(lost_gate_raise, salvo_gate_raise(x->a.gate, GATE_VALUE + 1))
BAD(lost_stream_wait_gate, salvo_stream_wait_gate(x->a.st, x->a.gate, GATE_VALUE + 1))
/* Sticky: asking again changes nothing. */
BAD(lost_stream_synchronize_again, salvo_stream_synchronize(x->a.st))
BAD(lost_launch_again, launch_add(x->a.st, x->a.add, x->a.dbuf))

static const bad_case lost_cases[] = {
    ROW(lost_buffer_create, LOST),
    ROW(lost_buffer_create_device, LOST),
    ROW(lost_buffer_import_host, LOST),
    ROW(lost_buffer_write_host, LOST),
    ROW(lost_buffer_write_device, LOST),
    ROW(lost_buffer_read_host, LOST),
    ROW(lost_buffer_read_device, LOST),
    ROW(lost_kernel_create, LOST),
    ROW(lost_stream_create, LOST),
    ROW(lost_launch, LOST),
    ROW(lost_copy, LOST),
    ROW(lost_stream_flush, LOST),
    ROW(lost_stream_synchronize, LOST),
    ROW(lost_device_synchronize, LOST),
    ROW(lost_event_create, LOST),
    ROW(lost_event_record, LOST),
    ROW(lost_event_query, LOST),
    ROW(lost_event_query_fresh, LOST),
    ROW(lost_event_synchronize, LOST),
    ROW(lost_event_cancel, LOST),
    ROW(lost_stream_wait_event, LOST),
    ROW(lost_gate_create, LOST),
    ROW(lost_gate_raise, LOST),
    ROW(lost_stream_wait_gate, LOST),
    ROW(lost_stream_synchronize_again, LOST),
    ROW(lost_launch_again, LOST),
};

/* ------------------------------------------------------------------ */
/* Functions that cannot fail: their documented answer to bad input    */
/* ------------------------------------------------------------------ */

typedef bool (*total_fn)(fx *x);
typedef struct total_case {
    const char *name;
    total_fn check;
} total_case;

static bool status_string_unknown(fx *x)
{
    (void)x;
    const char *s[] = {salvo_status_string((salvo_status)12345),
                       salvo_status_string((salvo_status)-12345),
                       salvo_status_string((salvo_status)INT32_MIN),
                       salvo_status_string((salvo_status)INT32_MAX)};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (!s[i] || !s[i][0])
            return false;
    return strstr(s[1], "ERROR") != NULL && strstr(s[0], "ERROR") == NULL;
}
static bool buffer_size_null(fx *x)
{
    (void)x;
    return salvo_buffer_size(NULL) == 0;
}
static bool gate_value_null(fx *x)
{
    (void)x;
    return salvo_gate_value(NULL) == 0;
}
static bool device_is_lost_null(fx *x)
{
    (void)x;
    return !salvo_device_is_lost(NULL);
}
static bool destroy_null(fx *x)
{
    (void)x;
    salvo_device_destroy(NULL);
    salvo_buffer_destroy(NULL);
    salvo_kernel_destroy(NULL);
    salvo_stream_destroy(NULL);
    salvo_event_destroy(NULL);
    salvo_gate_destroy(NULL);
    return true;
}
static bool gate_raise_equal_changes_nothing(fx *x)
{
    return salvo_gate_raise(x->a.gate, GATE_VALUE) == SALVO_OK &&
           salvo_gate_value(x->a.gate) == GATE_VALUE && salvo_last_error()[0] == '\0';
}

static const total_case total_cases[] = {
    {"status_string_unknown", status_string_unknown},
    {"buffer_size_null", buffer_size_null},
    {"gate_value_null", gate_value_null},
    {"device_is_lost_null", device_is_lost_null},
    {"destroy_null", destroy_null},
    {"gate_raise_equal_changes_nothing", gate_raise_equal_changes_nothing},
};

/* ------------------------------------------------------------------ */
/* The test                                                             */
/* ------------------------------------------------------------------ */

static const char *const SALVO_VARS[] = {
    "SALVO_BATCH",  "SALVO_FENCE_TIMEOUT_S", "SALVO_RELEASE_MAX_COUNT", "SALVO_RELEASE_MAX_BYTES",
    "SALVO_DEVICE", "SALVO_VALIDATION",      "SALVO_FAULT",             "SALVO_SPIN_US",
    "SALVO_DESCRIPTORS",
};

static int clear_salvo_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SALVO_VARS / sizeof SALVO_VARS[0]; i++)
        unsetenv(SALVO_VARS[i]);
    return 0;
}

static void lose_device_1(fx *x)
{
    MUST(launch_add(x->a.st, x->a.add, x->a.dbuf));
    fake_set_result(x->a.f, "timeline_wait", 1, ACCEL_ERROR_DEVICE_LOST);
    salvo_status r = salvo_stream_synchronize(x->a.st);
    if (r != SALVO_ERROR_DEVICE_LOST)
        fail_msg("synchronize at the scripted loss returned %s (%s)", salvo_status_string(r),
                 salvo_last_error());
    assert_true(salvo_device_is_lost(x->a.dev));
    assert_false(salvo_device_is_lost(x->b.dev));
    assert_true(fake_is_lost(x->a.f));
}

static void test_bad_input_table(void **state)
{
    (void)state;
    fx x;
    memset(&x, 0, sizeof x);
    x.mem = aligned_alloc(IMPORT_ALIGN, 2 * IMPORT_ALIGN);
    assert_non_null(x.mem);
    memset(host_bytes, 0x77, sizeof host_bytes);
    open_side(&x, &x.a);
    open_side(&x, &x.b);

    int failed = 0;
    printf("-- bad input, both devices healthy (%zu cases)\n",
           sizeof live_cases / sizeof live_cases[0]);
    failed += run_table(&x, live_cases, sizeof live_cases / sizeof live_cases[0], PHASE_LIVE);

    printf("-- functions that cannot fail (%zu cases)\n",
           sizeof total_cases / sizeof total_cases[0]);
    for (size_t i = 0; i < sizeof total_cases / sizeof total_cases[0]; i++) {
        bool ok = total_cases[i].check(&x);
        printf("[ %s ] %s\n", ok ? "      OK" : "  FAILED", total_cases[i].name);
        failed += !ok;
    }

    printf("-- device 1 lost (%zu cases)\n", sizeof lost_cases / sizeof lost_cases[0]);
    lose_device_1(&x);
    failed += run_table(&x, lost_cases, sizeof lost_cases / sizeof lost_cases[0],
                        PHASE_LOST_DEV1);

    /* What does not need the device still answers. */
    salvo_device_info info;
    assert_int_equal(salvo_device_info_get(x.a.dev, &info), SALVO_OK);
    salvo_kernel_info kinfo;
    assert_int_equal(salvo_kernel_info_get(x.a.add, &kinfo), SALVO_OK);
    assert_int_equal(salvo_buffer_size(x.a.dbuf), BUF_BYTES);
    assert_int_equal(salvo_gate_value(x.a.gate), GATE_VALUE);

    /* The destroy functions still release everything of the lost device:
     * the fake keeps only the device itself, and the counters say so. */
    destroy_side_objects(&x.a);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(x.a.dev, &s), SALVO_OK);
    printf("lost device after its destroys: %llu buffers, %llu kernels, %llu streams, %llu "
           "events, %llu gates, %llu releases pending, %llu launches pending, fake handles "
           "%llu\n",
           (unsigned long long)s.live_buffers, (unsigned long long)s.live_kernels,
           (unsigned long long)s.live_streams, (unsigned long long)s.live_events,
           (unsigned long long)s.live_gates, (unsigned long long)s.releases_pending,
           (unsigned long long)s.launches_pending, (unsigned long long)fake_live_total(x.a.f));
    assert_int_equal(s.live_buffers, 0);
    assert_int_equal(s.live_buffer_bytes, 0);
    assert_int_equal(s.live_kernels, 0);
    assert_int_equal(s.live_streams, 0);
    assert_int_equal(s.live_events, 0);
    assert_int_equal(s.live_gates, 0);
    assert_int_equal(s.releases_pending, 0);
    assert_int_equal(s.launches_pending, 0);
    assert_int_equal(fake_live(x.a.f, FAKE_BUFFER), 0);
    assert_int_equal(fake_live(x.a.f, FAKE_PIPELINE), 0);
    assert_int_equal(fake_live(x.a.f, FAKE_TIMELINE), 0);
    assert_int_equal(fake_live(x.a.f, FAKE_CMD), 0);
    assert_int_equal(fake_live(x.a.f, FAKE_FENCE), 0);
    assert_int_equal(fake_live(x.a.f, FAKE_DESCPOOL), 0);
    close_side(&x.a);

    /* Device 2 was never disturbed. */
    char why[SALVO_ERROR_MAX + 256];
    const char *problem = side_works(&x.b, why, sizeof why);
    if (problem)
        fail_msg("device 2: %s", problem);
    destroy_side_objects(&x.b);
    assert_int_equal(salvo_device_stats(x.b.dev, &s), SALVO_OK);
    assert_int_equal(s.live_buffers + s.live_kernels + s.live_streams + s.live_events +
                         s.live_gates,
                     0);
    close_side(&x.b);
    free(x.mem);

    printf("%d ERROR message(s) reached the devices' log callback\n", x.errors);
    fflush(stdout);
    if (failed)
        fail_msg("%d case(s) failed (see [  FAILED  ] above)", failed);
}

/* ------------------------------------------------------------------ */
/* The wording of messages that must read alike                         */
/* ------------------------------------------------------------------ */

/* salvo_last_error() without its "file:line: ". */
static const char *reason(void)
{
    const char *e = salvo_last_error();
    const char *r = strstr(e, ": ");
    return r ? r + 2 : e;
}

#define SAYS(call, status, text)                                                                   \
    do {                                                                                           \
        salvo_status says_ = (call);                                                               \
        if (says_ != (status) || strcmp(reason(), (text)) != 0)                                    \
            fail_msg("%s: %s, \"%s\"; want %s, \"%s\"", #call, salvo_status_string(says_),        \
                     reason(), salvo_status_string(status), (text));                               \
    } while (0)

static void test_messages(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    f->device_memory_limit = 1u << 20;
    fx x;
    memset(&x, 0, sizeof x);
    salvo_device_desc d = {.log = on_log, .log_user = &x};
    salvo_device *dev = NULL;
    MUST(device_create_with_accel(&d, fake_accel_get(f), &dev));
    salvo_buffer *a = NULL, *b = NULL;
    MUST(salvo_buffer_create(dev, 1024, SALVO_DOMAIN_DEVICE, &a));
    MUST(salvo_buffer_create(dev, 1024, SALVO_DOMAIN_HOST, &b));
    salvo_stream *st = NULL;
    MUST(salvo_stream_create(dev, NULL, &st));
    char host[16] = {0};

    /* A size of 0 is said as such, whatever the offset. */
    SAYS(salvo_buffer_write(a, 0, host, 0), INVALID, "buffer_write: size is 0");
    SAYS(salvo_buffer_read(a, 0, host, 0), INVALID, "buffer_read: size is 0");
    SAYS(salvo_buffer_write(a, 4096, host, 0), INVALID, "buffer_write: size is 0");
    SAYS(salvo_copy(st, a, 0, b, 0, 0), INVALID, "copy: size is 0");
    SAYS(salvo_buffer_write(a, 1020, host, 8), INVALID,
         "buffer_write: range [1020, +8) outside the buffer of 1024 bytes");

    /* Every refusal of a create names the function. */
    SAYS(salvo_device_create(NULL, NULL), INVALID, "device_create: out is NULL");

    /* Out of memory names the memory: its kind, the domain, and the heaps
     * of that kind with their sizes (the fake's one heap is device-local,
     * so a HOST buffer names it too). */
    salvo_buffer *c = NULL;
    SAYS(salvo_buffer_create(dev, 2u << 20, SALVO_DOMAIN_DEVICE, &c),
         SALVO_ERROR_OUT_OF_DEVICE_MEMORY,
         "buffer_create: 2097152 bytes of device-local memory (SALVO_DOMAIN_DEVICE; heap 0 of "
         "1.0 MiB): VK_ERROR_OUT_OF_DEVICE_MEMORY");
    assert_null(c);
    SAYS(salvo_buffer_create(dev, 2u << 20, SALVO_DOMAIN_HOST, &c),
         SALVO_ERROR_OUT_OF_DEVICE_MEMORY,
         "buffer_create: 2097152 bytes of host-visible memory (SALVO_DOMAIN_HOST; heap 0 of "
         "1.0 MiB): VK_ERROR_OUT_OF_DEVICE_MEMORY");

    /* A size within 3 of 2**64 (it rounded up to 0 bytes, and the driver
     * was handed a buffer of none) is said as too large, as any size no
     * heap holds, in every domain. */
    for (int k = 0; k < 4; k++) {
        static const salvo_domain domains[] = {SALVO_DOMAIN_DEVICE, SALVO_DOMAIN_HOST,
                                               SALVO_DOMAIN_SHARED, SALVO_DOMAIN_DEVICE};
        char want[96];
        uint64_t size = UINT64_MAX - (uint64_t)(k % 3);
        snprintf(want, sizeof want, "buffer_create: %llu bytes: more than any device's memory",
                 (unsigned long long)size);
        SAYS(salvo_buffer_create(dev, size, domains[k], &c), SALVO_ERROR_OUT_OF_DEVICE_MEMORY,
             want);
        assert_null(c);
    }

    /* A batch size past the largest is refused, not taken as the default. */
    salvo_device *big = NULL;
    salvo_device_desc too_big = {.batch_size = (1u << 20) + 1};
    SAYS(salvo_device_create(&too_big, &big), INVALID,
         "device_create: batch_size 1048577 is more than 1048576");
    assert_null(big);

    /* Formats: UNDEFINED is a format's name of its own. */
    assert_string_equal(salvo_format_name(SALVO_FORMAT_UNDEFINED), "UNDEFINED");
    assert_string_equal(salvo_format_name(SALVO_FORMAT_COUNT), "unknown");
    assert_string_equal(salvo_format_name((salvo_format)-1), "unknown");
    assert_string_equal(salvo_format_name(SALVO_FORMAT_RGBA8_UNORM), "RGBA8_UNORM");

    salvo_stream_destroy(st);
    salvo_buffer_destroy(b);
    salvo_buffer_destroy(a);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
}

/* A refusal whose call was given an object of the device goes to that
 * device's log callback, whichever argument was missing. */
static void test_refusals_reach_the_device_log(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    fx x;
    memset(&x, 0, sizeof x);
    salvo_device_desc d = {.log = on_log, .log_user = &x};
    salvo_device *dev = NULL;
    MUST(device_create_with_accel(&d, fake_accel_get(f), &dev));
    salvo_stream *st = NULL;
    MUST(salvo_stream_create(dev, NULL, &st));
    salvo_event *ev = NULL;
    MUST(salvo_event_create(dev, &ev));
    salvo_gate *gate = NULL;
    MUST(salvo_gate_create(dev, &gate));
    salvo_buffer *b = NULL;
    MUST(salvo_buffer_create(dev, 64, SALVO_DOMAIN_HOST, &b));
    static const char *const names[] = {
        "event_record(ev, NULL)",        "event_record(NULL, st)",
        "stream_wait_event(st, NULL)",   "stream_wait_event(NULL, ev)",
        "stream_wait_gate(st, NULL)",    "stream_wait_gate(NULL, gate)",
        "device_info_get(dev, NULL)",    "device_stats(dev, NULL)",
        "stream_create(dev, NULL, NULL)", "device_memory_info(dev, NULL)",
        "buffer_map(b, NULL)",           "event_elapsed(ev, NULL, NULL)",
    };
    int missed = 0;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        int before = x.errors;
        salvo_status r = SALVO_OK;
        switch (i) {
        case 0: r = salvo_event_record(ev, NULL); break;
        case 1: r = salvo_event_record(NULL, st); break;
        case 2: r = salvo_stream_wait_event(st, NULL); break;
        case 3: r = salvo_stream_wait_event(NULL, ev); break;
        case 4: r = salvo_stream_wait_gate(st, NULL, 1); break;
        case 5: r = salvo_stream_wait_gate(NULL, gate, 1); break;
        case 6: r = salvo_device_info_get(dev, NULL); break;
        case 7: r = salvo_device_stats(dev, NULL); break;
        case 8: r = salvo_stream_create(dev, NULL, NULL); break;
        case 9: r = salvo_device_memory_info(dev, NULL); break;
        case 10: r = salvo_buffer_map(b, NULL); break;
        case 11: r = salvo_event_elapsed(ev, NULL, NULL); break;
        }
        bool ok = r == INVALID && x.errors == before + 1;
        printf("[ %s ] %s: %s, %d message(s) to the callback\n", ok ? "      OK" : "  FAILED",
               names[i], salvo_status_string(r), x.errors - before);
        missed += !ok;
    }
    salvo_buffer_destroy(b);
    salvo_gate_destroy(gate);
    salvo_event_destroy(ev);
    salvo_stream_destroy(st);
    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
    if (missed)
        fail_msg("%d refusal(s) did not reach the device's log callback", missed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input_table),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_refusals_reach_the_device_log),
    };
    return cmocka_run_group_tests_name("bad_input", tests, clear_salvo_env, NULL);
}
