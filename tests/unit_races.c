/* Races made deterministic: the second thread's step is forced into the
 * exact window a race needs, by wrapping a call the library makes
 * (pthread_mutex_trylock or pthread_mutex_lock, through the linker's
 * --wrap, which also works under the sanitizers) or by a fake that runs
 * another thread's call at a chosen point. No sleeps, no luck.
 *
 * Freed host memory is made unreadable (a page allocator that protects
 * what salvo frees instead of reusing it), so a use after free crashes at
 * the first touch in every build, not only under AddressSanitizer. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "accel/accel_fault.h"
#include "api/internal.h"
#include "support/fake_accel.h"

/* ------------------------------------------------------------------ */
/* An allocator that never reuses and protects what is freed           */
/* ------------------------------------------------------------------ */

enum { GUARD_HEADER = 64, GUARD_MAX_FREED = 1 << 14 };

typedef struct guard_alloc {
    salvo_allocator a;
    _Atomic int64_t live;
    uint64_t double_frees;  /* [lock] */
    pthread_mutex_t lock;   /* guards freed and double_frees */
    uint32_t freed_count;
    void *freed[GUARD_MAX_FREED];
} guard_alloc;

/* Each block gets pages of its own, its size in a header of GUARD_HEADER
 * bytes (so what is handed out stays aligned for any object). */
static void *guard_malloc(void *user, size_t size)
{
    guard_alloc *g = user;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t total = (size + GUARD_HEADER + page - 1) / page * page;
    char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, &total, sizeof total);
    atomic_fetch_add(&g->live, 1);
    return p + GUARD_HEADER;
}

/* Protect, never unmap: the address is never handed out again, so a
 * stale pointer always faults. A second free is counted, not followed. */
static void guard_free(void *user, void *ptr)
{
    guard_alloc *g = user;
    if (!ptr)
        return;
    pthread_mutex_lock(&g->lock);
    for (uint32_t i = 0; i < g->freed_count; i++)
        if (g->freed[i] == ptr) {
            g->double_frees++;
            pthread_mutex_unlock(&g->lock);
            return;
        }
    if (g->freed_count < GUARD_MAX_FREED)
        g->freed[g->freed_count++] = ptr;
    pthread_mutex_unlock(&g->lock);
    char *p = (char *)ptr - GUARD_HEADER;
    size_t total;
    memcpy(&total, p, sizeof total);
    atomic_fetch_sub(&g->live, 1);
    mprotect(p, total, PROT_NONE);
}

static void guard_init(guard_alloc *g)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    g->a = (salvo_allocator){guard_malloc, guard_free, g};
}

/* Whether p was handed to guard_free. */
static bool guard_freed(guard_alloc *g, const void *p)
{
    pthread_mutex_lock(&g->lock);
    bool found = false;
    for (uint32_t i = 0; i < g->freed_count && !found; i++)
        found = g->freed[i] == p;
    pthread_mutex_unlock(&g->lock);
    return found;
}

/* A device on a fresh fake (its waits blocking where asked) whose host
 * memory comes from g. */
static salvo_device *guarded_open(guard_alloc *g, fake_accel **f, bool blocking_waits)
{
    guard_init(g);
    *f = fake_create();
    assert_non_null(*f);
    (*f)->blocking_waits = blocking_waits;
    salvo_device_desc d = {.allocator = &g->a};
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(&d, fake_accel_get(*f), &dev), SALVO_OK);
    return dev;
}

/* Destroy dev: nothing freed twice, no host block or fake handle left, no
 * illegal use of the fake. */
static void guarded_close(guard_alloc *g, fake_accel *f, salvo_device *dev)
{
    salvo_device_destroy(dev);
    assert_int_equal(g->double_frees, 0);
    assert_int_equal(atomic_load(&g->live), 0);
    assert_int_equal(fake_illegal_total(f), 0);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
}

/* Destroy dev, made on f with the default allocator: no fake handle
 * left, no illegal use of the fake; then free f. */
static void plain_close(fake_accel *f, salvo_device *dev)
{
    salvo_device_destroy(dev);
    assert_int_equal(fake_illegal_total(f), 0);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
}

/* ------------------------------------------------------------------ */
/* pthread_mutex_trylock, wrapped                                      */
/* ------------------------------------------------------------------ */

int __real_pthread_mutex_trylock(pthread_mutex_t *m);
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m);

/* Set on the thread one of whose next trylocks must let the other thread
 * run first: the nth from now (1: the next) posts go, then waits for
 * done. */
static _Thread_local int hold_trylock;
static sem_t go, done;

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
    if (hold_trylock && --hold_trylock == 0) {
        sem_post(&go);
        sem_wait(&done);
    }
    return __real_pthread_mutex_trylock(m);
}

/* ------------------------------------------------------------------ */
/* pthread_mutex_lock, wrapped                                         */
/* ------------------------------------------------------------------ */

int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);

/* Set on the thread whose next mutex lock must let the other thread run
 * first: that lock posts go, then waits for done, then locks. */
static _Thread_local bool hold_lock;

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
    if (hold_lock) {
        hold_lock = false;
        sem_post(&go);
        sem_wait(&done);
    }
    return __real_pthread_mutex_lock(m);
}

/* ------------------------------------------------------------------ */
/* salvo_stream_destroy against another thread's drain point           */
/* ------------------------------------------------------------------ */

typedef struct other {
    salvo_stream *st;
    salvo_status flushed;
} other;

static void *flush_when_told(void *arg)
{
    other *o = arg;
    sem_wait(&go);
    /* A flush is a drain point: it frees destroyed streams that are idle. */
    o->flushed = salvo_stream_flush(o->st);
    sem_post(&done);
    return NULL;
}

/* One thread destroys an idle stream while another flushes its own: the
 * flush runs exactly at the destroy's first trylock of the device lock
 * (where it leaves a capture). The stream must be freed once, and the
 * destroy must not read it after the other thread could have freed it.
 * (The destroy whose own trylock finds the lock busy is
 * test_stream_destroy_lock_busy below.) */
static void test_stream_destroy_against_flush(void **state)
{
    (void)state;
    static guard_alloc g; /* large: not on the stack */
    fake_accel *f = NULL;
    salvo_device *dev = guarded_open(&g, &f, false);
    assert_int_equal(sem_init(&go, 0, 0), 0);
    assert_int_equal(sem_init(&done, 0, 0), 0);

    for (int round = 0; round < 20; round++) {
        other o = {0};
        salvo_stream *victim = NULL;
        assert_int_equal(salvo_stream_create(dev, NULL, &o.st), SALVO_OK);
        assert_int_equal(salvo_stream_create(dev, NULL, &victim), SALVO_OK);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, flush_when_told, &o), 0);
        hold_trylock = true;
        salvo_stream_destroy(victim);
        assert_false(hold_trylock); /* the destroy did try the lock */
        pthread_join(t, NULL);
        assert_int_equal(o.flushed, SALVO_OK);
        salvo_stats s;
        assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
        assert_int_equal(s.live_streams, 1);
        salvo_stream_destroy(o.st);
        assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
        assert_int_equal(s.live_streams, 0);
    }
    guarded_close(&g, f, dev);
    sem_destroy(&go);
    sem_destroy(&done);
}

/* ------------------------------------------------------------------ */
/* A release that found the lock held, then salvo_device_stats         */
/* ------------------------------------------------------------------ */

static sem_t unlock_now;

/* Holds the device lock across the destroying thread's trylock (as the
 * host-call worker, or a log callback, may), and lets go when told,
 * without running any salvo code that would take in the release. */
static void *hold_lock_when_told(void *arg)
{
    salvo_device *dev = arg;
    sem_wait(&go);
    salvo_mutex_lock(&dev->q.lock);
    sem_post(&done);
    sem_wait(&unlock_now);
    salvo_mutex_unlock(&dev->q.lock);
    return NULL;
}

/* A stream destroyed while another thread holds the device lock across the
 * destroy's own trylock (its second: the first, where it leaves a capture,
 * finds the lock free): the destroy marks it destroyed and returns, freeing
 * nothing and touching nothing of it after that; the next drain point,
 * once the lock is free, frees it, once. Each round also checks the
 * stream was not freed early. */
static void test_stream_destroy_lock_busy(void **state)
{
    (void)state;
    static guard_alloc g; /* large: not on the stack */
    fake_accel *f = NULL;
    salvo_device *dev = guarded_open(&g, &f, false);
    assert_int_equal(sem_init(&go, 0, 0), 0);
    assert_int_equal(sem_init(&done, 0, 0), 0);
    assert_int_equal(sem_init(&unlock_now, 0, 0), 0);
    for (int round = 0; round < 10; round++) {
        salvo_stream *keep = NULL, *victim = NULL;
        assert_int_equal(salvo_stream_create(dev, NULL, &keep), SALVO_OK);
        assert_int_equal(salvo_stream_create(dev, NULL, &victim), SALVO_OK);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, hold_lock_when_told, dev), 0);
        hold_trylock = 2;
        salvo_stream_destroy(victim);
        assert_int_equal(hold_trylock, 0); /* the destroy's own trylock was held */
        assert_false(guard_freed(&g, victim)); /* the lock is still held */
        sem_post(&unlock_now);
        pthread_join(t, NULL);
        assert_false(guard_freed(&g, victim)); /* nothing has drained yet */
        assert_int_equal(salvo_stream_flush(keep), SALVO_OK);
        assert_true(guard_freed(&g, victim));
        salvo_stats s;
        assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
        assert_int_equal(s.live_streams, 1);
        salvo_stream_destroy(keep);
    }
    guarded_close(&g, f, dev);
    sem_destroy(&go);
    sem_destroy(&done);
    sem_destroy(&unlock_now);
}

/* A buffer destroyed while another thread holds the device lock queues its
 * release on the lock-free list. Nothing pending uses the buffer, so the
 * next salvo_device_stats must count it released, not pending: a program
 * that waits for "nothing pending" would otherwise wait for ever. */
static void test_stats_take_in_a_queued_release(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(NULL, fake_accel_get(f), &dev), SALVO_OK);
    assert_int_equal(sem_init(&go, 0, 0), 0);
    assert_int_equal(sem_init(&done, 0, 0), 0);
    assert_int_equal(sem_init(&unlock_now, 0, 0), 0);
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_lock_when_told, dev), 0);
    hold_trylock = true;
    salvo_buffer_destroy(b); /* its trylock finds the lock held */
    assert_false(hold_trylock);
    sem_post(&unlock_now);
    pthread_join(t, NULL);
    salvo_stats s;
    assert_int_equal(salvo_device_stats(dev, &s), SALVO_OK);
    assert_int_equal(s.live_buffers, 0);
    assert_int_equal(s.releases_pending, 0);
    assert_int_equal(s.releases_run, 1);
    plain_close(f, dev);
    sem_destroy(&go);
    sem_destroy(&done);
    sem_destroy(&unlock_now);
}

/* ------------------------------------------------------------------ */
/* salvo_device_stats while another thread runs a release             */
/* ------------------------------------------------------------------ */

typedef struct half_release {
    salvo_device *dev;
    sem_t inside, looked;
    salvo_stats seen;
} half_release;

/* The fake's buffer_destroy, inside the release (the device lock held):
 * let the other thread read the stats now, and give it a moment. A stats
 * call that waits for the lock cannot answer within it; the release then
 * goes on. */
static void in_release(void *user)
{
    half_release *h = user;
    sem_post(&h->inside);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000 * 1000 * 1000) {
        until.tv_sec++;
        until.tv_nsec -= 1000 * 1000 * 1000;
    }
    sem_timedwait(&h->looked, &until);
}

static void *stats_when_inside(void *arg)
{
    half_release *h = arg;
    sem_wait(&h->inside);
    salvo_device_stats(h->dev, &h->seen);
    sem_post(&h->looked);
    return NULL;
}

/* A release runs on one thread while another asks for the stats: the
 * snapshot has the buffer either pending and live, or neither, never
 * taken off the pending count and still live. */
static void test_stats_during_a_release(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    static half_release h;
    memset(&h, 0, sizeof h);
    assert_int_equal(sem_init(&h.inside, 0, 0), 0);
    assert_int_equal(sem_init(&h.looked, 0, 0), 0);
    f->buffer_destroy_hook = in_release;
    f->hook_user = &h;
    assert_int_equal(device_create_with_accel(NULL, fake_accel_get(f), &h.dev), SALVO_OK);
    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(h.dev, 4096, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stats_when_inside, &h), 0);
    salvo_buffer_destroy(b); /* idle: the release runs here, the hook inside it */
    pthread_join(t, NULL);
    if (h.seen.live_buffers != h.seen.releases_pending)
        fail_msg("stats during a release: live buffers %llu, releases pending %llu",
                 (unsigned long long)h.seen.live_buffers,
                 (unsigned long long)h.seen.releases_pending);
    f->buffer_destroy_hook = NULL;
    salvo_device_destroy(h.dev);
    assert_int_equal(fake_illegal_total(f), 0);
    assert_int_equal(fake_live_total(f), 0);
    fake_free(f);
    sem_destroy(&h.inside);
    sem_destroy(&h.looked);
}

/* ------------------------------------------------------------------ */
/* A destroyed stream in a capture, with another thread in a wait      */
/* ------------------------------------------------------------------ */

static void *synchronize_thread(void *arg)
{
    other *o = arg;
    o->flushed = salvo_stream_synchronize(o->st);
    return NULL;
}

/* A stream that joined a capture is destroyed while another thread holds
 * the device lock: it stays in the capture, destroyed, not freed. The
 * capture then ends while a third thread sits in a fence wait on a batch
 * of yet another stream. The stream's count (its handle, the capture's
 * reference) reaches zero as the capture ends: it is freed right there,
 * exactly once, whatever other stream is being waited on. */
static void test_stream_in_capture_freed_at_capture_end(void **state)
{
    (void)state;
    static guard_alloc g;
    fake_accel *f = NULL;
    salvo_device *dev = guarded_open(&g, &f, true);
    fake_set_complete(f, FAKE_COMPLETE_MANUAL);
    assert_int_equal(sem_init(&go, 0, 0), 0);
    assert_int_equal(sem_init(&done, 0, 0), 0);
    assert_int_equal(sem_init(&unlock_now, 0, 0), 0);
    salvo_stream *origin = NULL, *member = NULL;
    other waiter = {0};
    assert_int_equal(salvo_stream_create(dev, NULL, &origin), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &member), SALVO_OK);
    assert_int_equal(salvo_stream_create(dev, NULL, &waiter.st), SALVO_OK);
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(dev, 4096, SALVO_DOMAIN_DEVICE, &buf), SALVO_OK);

    /* member joins origin's capture through an event of it. */
    salvo_event *ev = NULL;
    assert_int_equal(salvo_event_create(dev, &ev), SALVO_OK);
    assert_int_equal(salvo_stream_begin_capture(origin), SALVO_OK);
    assert_int_equal(salvo_event_record(ev, origin), SALVO_OK);
    assert_int_equal(salvo_stream_wait_event(member, ev), SALVO_OK);
    assert_int_equal(salvo_fill(member, buf, 0, 256, 7), SALVO_OK);
    assert_ptr_equal(member->capture, origin->capture);
    assert_int_equal(member->e.refs, 2); /* its handle, the capture */

    /* Another stream's batch, waited for by a thread of its own. */
    assert_int_equal(salvo_fill(waiter.st, buf, 0, 256, 1), SALVO_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, synchronize_thread, &waiter), 0);
    for (bool waiting = false; !waiting;) {
        salvo_mutex_lock(&dev->q.lock);
        for (int i = 0; i < STREAM_SLOTS; i++)
            waiting |= waiter.st->e.slots[i].waiters > 0;
        salvo_mutex_unlock(&dev->q.lock);
        if (!waiting)
            sched_yield();
    }

    /* Destroyed with the lock busy: still in the capture, not freed (no
     * capture call or synchronize takes the destroy in meanwhile). */
    pthread_t holder;
    assert_int_equal(pthread_create(&holder, NULL, hold_lock_when_told, dev), 0);
    hold_trylock = true;
    salvo_stream_destroy(member);
    assert_false(hold_trylock);
    sem_post(&unlock_now);
    pthread_join(holder, NULL);
    assert_false(guard_freed(&g, member));

    salvo_graph *gr = NULL;
    assert_int_equal(salvo_stream_end_capture(origin, &gr), SALVO_OK);
    assert_true(guard_freed(&g, member));
    assert_int_equal(g.double_frees, 0);

    while (fake_complete_all(f) == 0)
        sched_yield();
    pthread_join(t, NULL);
    assert_int_equal(waiter.flushed, SALVO_OK);
    fake_set_complete(f, FAKE_COMPLETE_AUTO);
    salvo_graph_destroy(gr);
    salvo_event_destroy(ev);
    salvo_buffer_destroy(buf);
    salvo_stream_destroy(origin);
    salvo_stream_destroy(waiter.st);
    guarded_close(&g, f, dev);
    sem_destroy(&go);
    sem_destroy(&done);
    sem_destroy(&unlock_now);
}

/* ------------------------------------------------------------------ */
/* The fault decorator: a loss while a submit waits for the queue      */
/* ------------------------------------------------------------------ */

typedef struct gated_submit {
    salvo_device *dev;
    accel_cmd *cmd;
    accel_timeline *gate;
    accel_result r;
} gated_submit;

/* A submission that waits for the gate, held at its first mutex lock:
 * in the decorator's submit that is the inner queue's, taken after the
 * check for a loss. */
static void *submit_held_at_the_queue(void *arg)
{
    gated_submit *s = arg;
    accel_sem_op wait = {s->gate, 1};
    accel_submit_desc d = {.queue = 0, .cmd = s->cmd, .waits = &wait, .wait_count = 1};
    hold_lock = true;
    s->r = s->dev->acc.vt->submit(s->dev->acc.self, s->dev->adev, &d);
    return NULL;
}

/* An injected loss releases the gated work already on the inner device
 * (nothing will raise its gates now). A submit that another thread's
 * loss overtook between its check and the queue must not reach the inner
 * device: its gate would be waited on for ever there, and every inner
 * wait behind it with it (the random tester hung so, seed 12802762: a
 * gate's raise was the faulted call while a stream's batch waiting on
 * that gate was being submitted). */
static void test_fault_loss_overtakes_a_gated_submit(void **state)
{
    (void)state;
    fake_accel *f = fake_create();
    assert_non_null(f);
    accel wrapped;
    fault_accel *h = NULL;
    assert_true(accel_fault_wrap(NULL, fake_accel_get(f), &wrapped, &h));
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(NULL, wrapped, &dev), SALVO_OK);
    assert_int_equal(sem_init(&go, 0, 0), 0);
    assert_int_equal(sem_init(&done, 0, 0), 0);
    const accel_vtable *vt = dev->acc.vt;
    void *self = dev->acc.self;
    gated_submit s = {.dev = dev};
    assert_int_equal(vt->timeline_create(self, dev->adev, 0, &s.gate), ACCEL_SUCCESS);
    assert_int_equal(vt->cmd_create(self, dev->adev, 0, &s.cmd), ACCEL_SUCCESS);
    assert_int_equal(vt->cmd_begin(self, dev->adev, s.cmd), ACCEL_SUCCESS);
    assert_int_equal(vt->cmd_end(self, dev->adev, s.cmd), ACCEL_SUCCESS);
    uint64_t submits = fake_queue_submits(f, 0);

    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, submit_held_at_the_queue, &s), 0);
    sem_wait(&go); /* past the decorator's check, not yet at the queue */
    /* The device is lost here, by this thread's call (no other thread of
     * the device makes timelines). */
    assert_true(accel_fault_add(h, "timeline_create", accel_fault_calls(h, "timeline_create") + 1,
                                ACCEL_ERROR_DEVICE_LOST, FAULT_LOST));
    accel_timeline *other = NULL;
    assert_int_equal(vt->timeline_create(self, dev->adev, 0, &other), ACCEL_ERROR_DEVICE_LOST);
    assert_null(other);
    sem_post(&done);
    pthread_join(t, NULL);

    assert_int_equal(s.r, ACCEL_ERROR_DEVICE_LOST);
    assert_int_equal(fake_queue_submits(f, 0), submits); /* nothing reached the device */
    vt->cmd_destroy(self, dev->adev, s.cmd);
    vt->timeline_destroy(self, dev->adev, s.gate);
    plain_close(f, dev);
    sem_destroy(&go);
    sem_destroy(&done);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_destroy_against_flush),
        cmocka_unit_test(test_stream_destroy_lock_busy),
        cmocka_unit_test(test_stats_take_in_a_queued_release),
        cmocka_unit_test(test_stats_during_a_release),
        cmocka_unit_test(test_stream_in_capture_freed_at_capture_end),
        cmocka_unit_test(test_fault_loss_overtakes_a_gated_submit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
