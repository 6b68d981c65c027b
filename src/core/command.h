/*
 * The command: everything a stream can ask of the device, as one tagged
 * value. A command names its kind; its payload is read by kind only,
 * never told apart by which fields happen to be set.
 *
 * command_record puts a command onto an accelerator command buffer. The
 * live batch, the batch recorded again after a cancel (from the batch
 * log, which keeps commands) and graph parts all record through it, so a
 * new kind of command is written here once. command_access says how a
 * command touches each of its ranges, for the stream's hazards and the
 * graph's levels alike.
 *
 * Plain data over the accelerator: no lock, no queue, no stream.
 */
#ifndef SALVO_CORE_COMMAND_H
#define SALVO_CORE_COMMAND_H

#include <stdbool.h>
#include <stdint.h>

#include "accel/accel.h"
#include "core/reflect.h"

/* A kernel as the engine records it: the pipeline, what it binds, and the
 * name failures and traces give. It outlives every batch that holds it
 * (its release waits for them). */
typedef struct engine_kernel {
    accel_pipeline *pipe;
    reflect_module refl;
    char *name;
} engine_kernel;

typedef enum command_kind {
    /* object: the engine_kernel; binds: one per binding the kernel
     * declares; push: its push constants */
    COMMAND_DISPATCH,
    /* as a dispatch, with one more bind after the kernel's: the 12 bytes
     * the device reads its workgroup counts from (read, indirect) */
    COMMAND_DISPATCH_INDIRECT,
    /* binds[0] the source range, binds[1] the destination (same size) */
    COMMAND_COPY,
    /* binds[0] the range written (whole words); push: the 32-bit value */
    COMMAND_FILL,
    /* A fill with partial words at an end: binds[0] what it orders
     * against (its words, partial ones whole, from where the kernel for
     * those binds: accel.h, cmd_fill_bytes); push: a command_fill_bytes */
    COMMAND_FILL_BYTES,
    /* binds[0] the source, binds[1] the destination: the image's end
     * names the image, range [0, 1); push: the accel_image_region */
    COMMAND_IMAGE_COPY,
    /* binds[0] the source image, binds[1] the destination, each range
     * [0, 1); push: a command_image_pair */
    COMMAND_IMAGE_TO_IMAGE,
    /* the program's own commands; binds: the ranges it declared (none:
     * it may touch anything); push: a command_native */
    COMMAND_NATIVE,
    /* a graph replay; object: the engine_graph; push: a command_graph
     * (below); binds: the ranges of the nodes it records inline */
    COMMAND_GRAPH,
    /* an event's timestamp, no work; push: its timing mark */
    COMMAND_MARK
} command_kind;

typedef struct command {
    command_kind kind;
    const void *object;
    uint32_t groups[3]; /* DISPATCH */
    const accel_bind *binds;
    uint32_t bind_count;
    const void *push;
    uint32_t push_size;
} command;

/* The program records its commands itself: fn(native command buffer,
 * record, user), now and again should the batch be recorded again. */
typedef void (*command_native_fn)(void *native_cmd, void (*record)(void), void *user);
typedef struct command_native {
    command_native_fn fn;
    void (*record)(void);
    void *user;
    uint8_t how[SALVO_MAX_BINDINGS]; /* salvo_access of each declared range */
} command_native;

/* A FILL_BYTES's payload: the bytes of binds[0] it leaves alone at
 * either end (lead + trail < its size), and the word each of its words
 * gets its bytes from, as accel cmd_fill_bytes takes it. */
typedef struct command_fill_bytes {
    uint32_t word;
    uint32_t lead, trail; /* trail 0..3; lead below the alignment + 4 */
} command_fill_bytes;

/* An IMAGE_TO_IMAGE's payload: the source's box and the destination's
 * (the same extents). */
typedef struct command_image_pair {
    accel_image_region src, dst;
} command_image_pair;

/* A GRAPH's payload, in order: this header; one accel_cmd * per part of
 * the graph (a reusable recording executed, or NULL for a node recorded
 * into the batch itself, as a launch is); a command_graph_node for each
 * NULL part; then those nodes' push constants, one after another. The
 * command's binds are those nodes' ranges, one after another. A node kept
 * here keeps the parameters it had at its replay, whatever updates come
 * after (a cancel that records the batch again records them again). */
typedef struct command_graph {
    uint32_t parts;
    uint32_t nodes;
    /* The graph's plan_number when it was made; 64 bits keep the
     * pointers after the header aligned. */
    uint64_t plan;
} command_graph;
_Static_assert(sizeof(command_graph) % sizeof(void *) == 0,
               "the accel_cmd pointers after the header must stay aligned");
typedef struct command_graph_node {
    const void *object;
    command_kind kind;
    uint32_t groups[3];
    uint32_t bind_count, push_size;
    bool barrier;               /* a barrier of barrier_kind before it */
    accel_barrier barrier_kind;
} command_graph_node;

/* What failures and traces call it: the kernel's name, "(copy)", ... */
const char *command_name(const command *c);
/* How c touches its range i (all kinds but GRAPH and MARK). */
salvo_access command_access(const command *c, uint32_t i);
/* A kernel's work, direct or indirect: object is its engine_kernel, and
 * barriers of the compute stages order it. */
static inline bool command_is_dispatch(const command *c)
{
    return c->kind == COMMAND_DISPATCH || c->kind == COMMAND_DISPATCH_INDIRECT;
}
/* Whether c may touch memory beyond its ranges (buffer addresses, or
 * native commands that declared none). Inline: on every launch's path. */
static inline bool command_touches_any(const command *c)
{
    if (command_is_dispatch(c))
        return ((const engine_kernel *)c->object)->refl.buffer_addresses;
    return c->kind == COMMAND_NATIVE && c->bind_count == 0;
}
/* Whether c may write memory the host maps: a range it writes that is
 * not known to be unmapped, or any memory at all. A graph replay asks its
 * graph (engine_graph.to_host). */
bool command_writes_host(const command *c);
/* Whether recording c binds descriptors (one set from the pool, where
 * they are not pushed): dispatches and fills of partial words. Only such
 * a recording can fail; ACCEL_ERROR_OUT_OF_POOL_MEMORY asks for a fresh
 * pool. */
static inline bool command_takes_set(const command *c)
{
    return command_is_dispatch(c) || c->kind == COMMAND_FILL_BYTES;
}
/* Whether recording c takes that set from a pool on a device whose
 * dispatches push their descriptors where they can (pushes: the queue's
 * push_descriptors): a kernel that binds an array of buffers still takes
 * one (accel.h, cmd_dispatch). A recording with no pool (one made ahead
 * of its batch) may hold only commands that take none. */
bool command_takes_pool(const command *c, bool pushes);
/* How many descriptors that set holds (0 for other commands), and how
 * many of them name an image or a sampler. */
uint32_t command_descriptors(const command *c);
uint32_t command_image_descriptors(const command *c);
/* Record c onto cmd; a dispatch's descriptor sets come from pool. A
 * MARK records nothing here (its timestamp is the timing module's). A
 * failure records nothing, but a GRAPH's (below). */
accel_result command_record(const accel *acc, accel_device *dev, accel_cmd *cmd,
                            accel_descpool *pool, const command *c);
/* A GRAPH recorded onto cmd. On failure (an inline node's recording)
 * *partial says whether part of it was recorded (runs of recordings or
 * nodes before the node that failed): then the caller records the batch
 * again without it. A first node that fails records nothing, as any
 * command's failure. */
accel_result command_record_graph(const accel *acc, accel_device *dev, accel_cmd *cmd,
                                  accel_descpool *pool, const command *c, bool *partial);

#endif
