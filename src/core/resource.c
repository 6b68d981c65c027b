/* The resource header: kinds, holds, the release. See resource.h. */
#include "core/resource.h"

const char *resource_kind_name(resource_kind kind)
{
    static const char *const names[RESOURCE_KIND_COUNT] = {
        [RESOURCE_BUFFER] = "buffer", [RESOURCE_IMAGE] = "image",
        [RESOURCE_SAMPLER] = "sampler", [RESOURCE_KERNEL] = "kernel",
        [RESOURCE_EVENT] = "event", [RESOURCE_GATE] = "gate",
        [RESOURCE_GRAPH] = "graph",
    };
    if ((unsigned)kind >= RESOURCE_KIND_COUNT || !names[kind])
        return "not a resource";
    return names[kind];
}

#ifdef SALVO_CHECKS
void resource_check_kind(const resource *r, resource_kind want)
{
    SALVO_CHECK(r->kind == want, "%s resource cast to %s", resource_kind_name(r->kind),
                resource_kind_name(want));
}
#endif

void resource_init(resource *r, resource_kind kind, retire_fn fn, uint64_t bytes)
{
    r->kind = kind;
    atomic_init(&r->holds, 1);
    atomic_init(&r->last_use, 0);
    r->release = (retire_entry){.fn = fn, .bytes = bytes};
    r->live = (resource_link){NULL, NULL};
}

/* A launch names buffers, images, samplers and a kernel by handles a
 * later object may reuse once these are released: such a release is
 * counted (queue.released, in the key of a launch recorded ahead). */
static void note_released(const resource *r, queue *q)
{
    if (r->kind == RESOURCE_BUFFER || r->kind == RESOURCE_IMAGE || r->kind == RESOURCE_SAMPLER ||
        r->kind == RESOURCE_KERNEL)
        atomic_fetch_add_explicit(&q->released, 1, memory_order_release);
}

void resource_let_go(resource *r, queue *q)
{
    uint32_t was = atomic_fetch_sub_explicit(&r->holds, 1, memory_order_acq_rel);
    SALVO_CHECK(was > 0, "a %s let go of more often than held", resource_kind_name(r->kind));
    if (was == 1) {
        note_released(r, q);
        queue_release(q, &r->release);
    }
}

void resource_let_go_locked(resource *r, queue *q)
{
    uint32_t was = atomic_fetch_sub_explicit(&r->holds, 1, memory_order_acq_rel);
    SALVO_CHECK(was > 0, "a %s let go of more often than held", resource_kind_name(r->kind));
    if (was == 1) {
        note_released(r, q);
        retire_push(&q->retire, &r->release, atomic_load(&q->next_serial));
    }
}

void resource_link_into(resource_link *head, resource *r)
{
    r->live.next = head->next;
    r->live.prev = head;
    head->next->prev = &r->live;
    head->next = &r->live;
}

void resource_unlink(resource *r)
{
    if (!r->live.prev)
        return;
    r->live.prev->next = r->live.next;
    r->live.next->prev = r->live.prev;
    r->live.prev = r->live.next = NULL;
}
