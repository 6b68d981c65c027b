/*
 * Graphs: work captured from streams once, replayed many times.
 *
 * A capture appends nodes (launches and copies, in the order the calls
 * came, whichever of the capture's streams they came on). End of capture
 * compiles them: each node gets a level, one more than the highest level
 * of an earlier node it conflicts with (reads what that one wrote, or
 * writes what it read or wrote), so that nodes of one level touch nothing
 * another of the level writes. Recorded level after level with a barrier
 * between levels, independent nodes (those of forked branches among them)
 * run side by side and dependent ones in order: the barriers a stream
 * would put, computed once.
 *
 * The recording is split into chunks of GRAPH_CHUNK_NODES nodes, each a
 * reusable command buffer with its own descriptor pool. A replay records
 * one command (execute the chunks) into the stream's open batch, so it is
 * ordered with the stream's other work by the same hazard rules, and
 * costs no host work per node. An update gives the node a chunk of its
 * own the first time (splitting the chunk that held it). Where recording
 * the node takes no descriptor set from a pool (the device pushes
 * descriptors, or the node binds none), that chunk is inline: every
 * replay records the node into its own batch between the executions of
 * the chunks around it, as a launch, so that later updates of it record
 * nothing and cost the replay one launch. Otherwise the one-node chunk
 * goes stale at each update, and updating the node costs the recording
 * of one node. A graph of GRAPH_INLINE_NODES nodes or fewer that may all
 * be inline is inline from the start, a chunk per node, and records
 * nothing but at its replays. Chunks whose order or barriers new bindings change go
 * stale too; the next replay records stale chunks again, into fresh
 * command buffers when a batch still pending executes the old ones
 * (those go to the retire queue), so replays already made keep what they
 * had. An inline node's parameters are copied into the replay's command
 * (and its batch's log), so those keep what they had too.
 *
 * A replay into a stream's batch that holds nothing else yet is made
 * ahead instead (graph_direct_locked, core/ahead.h): the batch is
 * submitted as a command buffer of the graph's own that holds the replay,
 * made at the end of the capture (graph_make_ahead_locked), and after an
 * update by the second replay of the new payload (the first, and a graph
 * updated before every replay, records into the batch, which costs less
 * than a recording of its own). Work recorded after it in the batch
 * records the replay into the batch first (stream_undirect_locked), from
 * the batch's log, as it was made.
 *
 * Capture order is a valid order of the work: an event wait that orders
 * a branch after another's point comes after that point was captured. A
 * level is computed from every earlier conflicting node, ordered or not,
 * so work that a program leaves unordered between branches is ordered
 * too where it conflicts.
 *
 * Every function named _locked runs under the queue's lock; the others
 * touch only the graph (its owner serialises them, under the same lock).
 */
#ifndef SALVO_CORE_GRAPH_H
#define SALVO_CORE_GRAPH_H

#include "core/ahead.h"
#include "core/stream_engine.h"

#ifndef SALVO_GRAPH_CHUNK_NODES
#define SALVO_GRAPH_CHUNK_NODES 512
#endif
enum {
    /* Fewer, larger chunks make each replay cheaper for the driver (on
     * the H200, a busy 10,000-node replay executing 20 recordings instead
     * of 40 took the host 10.2-11.5 us against 10.9-12.7); a larger chunk
     * makes the first update of each of its nodes record more (once per
     * node). */
    GRAPH_CHUNK_NODES = SALVO_GRAPH_CHUNK_NODES,
    /* Nodes that may get a chunk of their own when updated. */
    GRAPH_MAX_SPLITS = 64,
    /* A graph of this many nodes or fewer, each of which may be inline,
     * is inline whole: recorded into each replay's batch as launches are,
     * which costs the host what the execution of a recording would and
     * spares the device the secondary command buffer's own latency. */
    GRAPH_INLINE_NODES = 4
};

/* A node: one command (a dispatch, copy, fill or image copy; see
 * core/command.h for what binds and push hold for each), its binds and
 * push bytes kept in the graph's arrays. */
typedef struct graph_node {
    command_kind kind;
    const engine_kernel *kernel; /* a dispatch's, else NULL */
    uint32_t groups[3];
    uint32_t bind_count;
    uint32_t push_size;
    size_t bind_at; /* first of its binds in the graph's binds */
    size_t push_at; /* its push constants in the graph's push bytes */
    uint32_t level;
    uint32_t pos; /* where it is in the recorded order */
} graph_node;

/* A stream's last replay of a graph: its number (the graph counts its
 * replays) and the batch it went into. A stream's batches complete in
 * order, those of different streams in any order: a recording is free
 * once, for every stream whose last replay came after the recording was
 * made (and so executes it, or a later one of the stream does), that
 * replay's batch is done, whatever the serials say. */
typedef struct graph_use {
    uint32_t stream; /* the stream's number */
    uint64_t replay;
    uint64_t serial;
} graph_use;

/* A chunk's recording: a reusable command buffer and the pool its
 * descriptor sets come from. */
typedef struct graph_recording {
    retire_entry release; /* when replaced: freed once no batch executes it */
    queue *q;
    accel_cmd *cmd;
    accel_descpool *pool;
    uint32_t pool_sets, pool_per_set, pool_images; /* what the pool was made for */
    uint64_t born; /* the first replay (number) that executes it */
} graph_recording;

typedef struct graph_chunk {
    uint32_t first, count; /* positions in the recorded order */
    graph_recording *rec;  /* NULL until first recorded, and while inline */
    bool stale;            /* recorded again before the next replay */
    /* One updated node, recorded into each replay's batch (as a launch
     * is) rather than into a recording of its own: an update of it then
     * records nothing until the replay, and costs the replay one launch. */
    bool inline_node;
} graph_chunk;

/* One buffer range the graph touches, for the stream's hazards. */
typedef struct graph_touch {
    const void *buffer;
    uint64_t begin, end;
    salvo_access how;
} graph_touch;

typedef struct engine_graph {
    queue *q;
    char label[32]; /* "graph 3": in failures and traces */
    graph_node *nodes;
    uint32_t node_count;
    size_t node_cap;
    accel_bind *binds;
    size_t bind_count, bind_cap;
    unsigned char *push;
    size_t push_used, push_cap;
    /* Compiled at end of capture (and again after new bindings). */
    uint32_t *order;   /* node indices in recorded order */
    bool *barrier;     /* [pos]: a barrier before the node at pos */
    uint32_t levels;
    bool has_copy;
    bool addresses; /* some node's kernel uses buffer addresses */
    bool to_host;   /* some node may write memory the host maps (plan) */
    graph_chunk *chunks;
    accel_cmd **cmds; /* [chunk]: the recordings a replay executes (NULL: inline) */
    uint32_t chunk_count;
    /* What a replay records (command.h, command_graph), made again before
     * a replay after anything in it changed. */
    unsigned char *payload;
    size_t payload_size, payload_cap;
    accel_bind *payload_binds;
    size_t payload_bind_count, payload_bind_cap;
    bool payload_stale;
    /* Its replays recorded ahead (graph_direct_locked); the parameters
     * change with the payload. */
    ahead_ring ahead;
    graph_touch *touch; /* distinct ranges, merged per buffer */
    uint32_t touch_count;
    uint64_t groups_total;
    uint32_t launch_count;
    /* Each plan a new number: a replay's payload made under another one
     * (kept by a batch's log) touches what no longer is in touch. */
    uint64_t plan_number;
    /* Each stream's last replay [lock]; replays so far. */
    graph_use *uses;
    uint32_t use_count;
    size_t use_cap;
    uint64_t replays;
    /* Distinct kernel names, for failures. */
    const char **names;
    uint32_t name_count;
    bool compiled;
} engine_graph;

void graph_init(engine_graph *g, queue *q, uint32_t number);
/* Free what the graph holds: its recordings at once (the caller knows no
 * batch executes them any more) and its memory. */
void graph_fini(engine_graph *g);

/* The command node n holds (pointing into the graph's arrays). */
command graph_node_command(const engine_graph *g, const graph_node *n);

/* Append c as a node (capture), its ranges and push data copied. Out of
 * host memory: the call is not captured (and says so); the capture goes
 * on. */
salvo_status graph_add_command(engine_graph *g, const command *c);

/* Compute the levels, the order and the chunks, and record every chunk.
 * On failure the graph is as captured, not compiled. */
salvo_status graph_compile_locked(engine_graph *g) SALVO_REQUIRES(g->q->lock);

/* Before a replay on the stream numbered `stream`: record the stale
 * chunks again and make room to note the replay
 * (graph_note_replay_locked then cannot fail). On failure the
 * stale chunks stay stale and nothing else changed. */
salvo_status graph_prepare_locked(engine_graph *g, uint32_t stream) SALVO_REQUIRES(g->q->lock);
/* The command a replay records (after graph_prepare_locked). */
command graph_replay_command(const engine_graph *g);
/* Whether replay command c (a batch log's copy, perhaps) was made under
 * the graph's plan as it is: its touches, has_copy and to_host are c's.
 * Not so after salvo_graph_set_bindings or salvo_graph_update: c's
 * buffers are then known to no one. */
bool graph_replay_current(const engine_graph *g, const command *c);
/* For failures: the graph's kernels, and the nodes a replay records
 * inline. */
void graph_failure_names(const engine_graph *g, char *buf, size_t size);
/* The replay (after graph_prepare_locked) as a command buffer of its
 * own, recorded ahead, for a batch that holds nothing else and has this
 * serial: its lead barrier, the replay, a barrier to the host where the
 * graph writes memory the host maps. NULL where there is none free (each
 * goes with a batch still active, or the accelerator has none, or a
 * recording failed: the replay is then recorded into the batch, which
 * reports what fails). */
accel_cmd *graph_direct_locked(engine_graph *g, accel_barrier lead, uint64_t serial)
    SALVO_REQUIRES(g->q->lock);
/* After graph_compile_locked: the replay's recordings made ahead now
 * (ahead_make_locked, each with this lead barrier), so that the first
 * replays cost a submit each. Fails only where the device was lost
 * meanwhile (marked so and reported, naming the graph's kernels); other
 * failures leave the replays to record as they would have. */
salvo_status graph_make_ahead_locked(engine_graph *g, accel_barrier lead)
    SALVO_REQUIRES(g->q->lock);
/* Note the replay on stream `stream` in its batch `serial`. */
void graph_note_replay_locked(engine_graph *g, uint32_t stream, uint64_t serial)
    SALVO_REQUIRES(g->q->lock);

/* Updates of launch node n (checked by the caller: a launch, direct or
 * indirect, the right sizes). Bindings (the kernel's) recompute the
 * levels; the recording is redone at the next replay. */
salvo_status graph_set_push(engine_graph *g, uint32_t n, const void *push, uint32_t size)
    SALVO_REQUIRES(g->q->lock);
salvo_status graph_set_bindings_locked(engine_graph *g, uint32_t n, const accel_bind *binds)
    SALVO_REQUIRES(g->q->lock);
/* Every node's parameters (groups, ranges, push constants) taken from
 * from, a graph of the same shape: as many nodes, each of the same kind
 * and kernel with as many ranges and push constant bytes. The levels are
 * planned again and every chunk recorded again at the next replay.
 * SALVO_ERROR_INVALID_ARGUMENT naming the first node that differs, or out
 * of host memory: nothing changed. */
salvo_status graph_update_locked(engine_graph *g, const engine_graph *from)
    SALVO_REQUIRES(g->q->lock);

/* Replay g on st: record its execution into st's open batch (the batch
 * opened, a copy-queue batch submitted first, stale chunks recorded
 * again). *serial: the batch it went into. */
salvo_status stream_graph_locked(stream_engine *st, engine_graph *g, uint64_t *serial)
    SALVO_REQUIRES(st->q->lock);

#endif
