/* The command: one tagged value for every kind of stream work, and the
 * one function that records it. See command.h. */
#include "core/command.h"
#include "base/inline.h"

#include <string.h>

const char *command_name(const command *c)
{
    switch (c->kind) {
    case COMMAND_DISPATCH:
    case COMMAND_DISPATCH_INDIRECT:
        return ((const engine_kernel *)c->object)->name;
    case COMMAND_COPY:
        return "(copy)";
    case COMMAND_FILL:
    case COMMAND_FILL_BYTES:
        return "(fill)";
    case COMMAND_IMAGE_COPY:
        return "(image copy)";
    case COMMAND_IMAGE_TO_IMAGE:
        return "(image to image)";
    case COMMAND_NATIVE:
        return "(vulkan)";
    case COMMAND_GRAPH:
        return "(graph)";
    case COMMAND_MARK:
        break;
    }
    return "(mark)";
}

salvo_access command_access(const command *c, uint32_t i)
{
    switch (c->kind) {
    case COMMAND_DISPATCH:
    case COMMAND_DISPATCH_INDIRECT: {
        const engine_kernel *k = c->object;
        if (i == k->refl.binding_count) /* the indirect counts */
            return SALVO_ACCESS_READ;
        return c->binds[i].uniform ? SALVO_ACCESS_READ : k->refl.bindings[i].access;
    }
    case COMMAND_COPY:
    case COMMAND_IMAGE_COPY:
    case COMMAND_IMAGE_TO_IMAGE:
        return i == 0 ? SALVO_ACCESS_READ : SALVO_ACCESS_WRITE;
    case COMMAND_FILL:
    case COMMAND_FILL_BYTES:
        return SALVO_ACCESS_WRITE;
    case COMMAND_NATIVE: {
        command_native np;
        memcpy(&np, c->push, sizeof np);
        return (salvo_access)np.how[i];
    }
    case COMMAND_GRAPH:
    case COMMAND_MARK:
        break;
    }
    return SALVO_ACCESS_READ_WRITE;
}

bool command_writes_host(const command *c)
{
    if (c->kind == COMMAND_MARK)
        return false;
    if (command_touches_any(c))
        return true;
    for (uint32_t i = 0; i < c->bind_count; i++)
        if ((command_access(c, i) & SALVO_ACCESS_WRITE) && !c->binds[i].unmapped)
            return true;
    return false;
}

bool command_takes_pool(const command *c, bool pushes)
{
    if (!command_takes_set(c))
        return false;
    if (!pushes)
        return true;
    if (!command_is_dispatch(c))
        return false; /* a fill's own kernel binds no array */
    const reflect_module *r = &((const engine_kernel *)c->object)->refl;
    for (uint32_t i = 0; i < r->binding_count; i++)
        if (r->bindings[i].count > 1)
            return true;
    return false;
}

uint32_t command_descriptors(const command *c)
{
    switch (c->kind) {
    case COMMAND_DISPATCH:
        return c->bind_count;
    case COMMAND_DISPATCH_INDIRECT:
        return c->bind_count - 1;
    case COMMAND_FILL_BYTES:
        return ACCEL_FILL_BYTES_DESCRIPTORS;
    default:
        return 0;
    }
}

uint32_t command_image_descriptors(const command *c)
{
    uint32_t n = 0;
    if (command_is_dispatch(c))
        for (uint32_t i = 0; i < c->bind_count; i++)
            n += c->binds[i].image != NULL || c->binds[i].sampler != NULL;
    return n;
}

accel_result command_record_graph(const accel *acc, accel_device *dev, accel_cmd *cmd,
                                  accel_descpool *pool, const command *c, bool *partial)
{
    *partial = false;
    command_graph h;
    memcpy(&h, c->push, sizeof h);
    /* The payload is kept 8-byte aligned (malloc'd, or a log entry's). */
    accel_cmd *const *parts = (accel_cmd *const *)((const unsigned char *)c->push + sizeof h);
    const unsigned char *node_at = (const unsigned char *)(parts + h.parts);
    const unsigned char *push_at = node_at + (size_t)h.nodes * sizeof(command_graph_node);
    const accel_bind *binds = c->binds;
    uint32_t run = 0;
    for (uint32_t i = 0; i <= h.parts; i++) {
        if (i < h.parts && parts[i]) {
            run++;
            continue;
        }
        if (run) {
            acc->vt->cmd_execute(acc->self, dev, cmd, parts + i - run, run);
            *partial = true;
        }
        run = 0;
        if (i == h.parts)
            break;
        command_graph_node n;
        memcpy(&n, node_at, sizeof n);
        node_at += sizeof n;
        if (n.barrier)
            acc->vt->cmd_barrier(acc->self, dev, cmd, n.barrier_kind);
        command node = {.kind = n.kind,
                        .object = n.object,
                        .groups = {n.groups[0], n.groups[1], n.groups[2]},
                        .binds = binds,
                        .bind_count = n.bind_count,
                        .push = push_at,
                        .push_size = n.push_size};
        accel_result ar = command_record(acc, dev, cmd, pool, &node);
        if (ar != ACCEL_SUCCESS)
            return ar;
        *partial = true;
        binds += n.bind_count;
        push_at += n.push_size;
    }
    return ACCEL_SUCCESS;
}

/* command_record's kinds but a dispatch (not inlined there: see it). */
static SALVO_NOINLINE accel_result record_other(const accel *acc, accel_device *dev,
                                                accel_cmd *cmd, accel_descpool *pool,
                                                const command *c)
{
    const accel_vtable *vt = acc->vt;
    const accel_bind *b = c->binds;
    switch (c->kind) {
    case COMMAND_DISPATCH:
        break; /* command_record's */
    case COMMAND_DISPATCH_INDIRECT: {
        const engine_kernel *k = c->object;
        const accel_bind *counts = &b[c->bind_count - 1];
        /* Whatever wrote the counts, here or before, is seen by their read. */
        vt->cmd_barrier(acc->self, dev, cmd, ACCEL_BARRIER_INDIRECT);
        return vt->cmd_dispatch_indirect(acc->self, dev, cmd, k->pipe, pool, b, c->bind_count - 1,
                                         counts->buffer, counts->offset, c->push, c->push_size);
    }
    case COMMAND_COPY:
        vt->cmd_copy(acc->self, dev, cmd, b[0].buffer, b[0].offset, b[1].buffer, b[1].offset,
                     b[0].size);
        return ACCEL_SUCCESS;
    case COMMAND_FILL: {
        uint32_t value;
        memcpy(&value, c->push, sizeof value);
        vt->cmd_fill(acc->self, dev, cmd, b[0].buffer, b[0].offset, b[0].size, value);
        return ACCEL_SUCCESS;
    }
    case COMMAND_FILL_BYTES: {
        command_fill_bytes f;
        memcpy(&f, c->push, sizeof f);
        return vt->cmd_fill_bytes(acc->self, dev, cmd, pool, b[0].buffer, b[0].offset + f.lead,
                                  b[0].size - f.lead - f.trail, f.word);
    }
    case COMMAND_IMAGE_COPY: {
        accel_image_region region;
        memcpy(&region, c->push, sizeof region);
        bool to_image = b[1].image != NULL;
        const accel_bind *buf = to_image ? &b[0] : &b[1];
        vt->cmd_copy_image(acc->self, dev, cmd, buf->buffer, buf->offset,
                           to_image ? b[1].image : b[0].image, &region, to_image);
        return ACCEL_SUCCESS;
    }
    case COMMAND_IMAGE_TO_IMAGE: {
        command_image_pair pair;
        memcpy(&pair, c->push, sizeof pair);
        vt->cmd_copy_image_to_image(acc->self, dev, cmd, b[0].image, &pair.src, b[1].image,
                                    &pair.dst);
        return ACCEL_SUCCESS;
    }
    case COMMAND_NATIVE: {
        command_native np;
        memcpy(&np, c->push, sizeof np);
        np.fn(vt->cmd_native(acc->self, dev, cmd), np.record, np.user);
        return ACCEL_SUCCESS;
    }
    case COMMAND_GRAPH: {
        bool partial;
        return command_record_graph(acc, dev, cmd, pool, c, &partial);
    }
    case COMMAND_MARK:
        break;
    }
    return ACCEL_SUCCESS;
}

accel_result command_record(const accel *acc, accel_device *dev, accel_cmd *cmd,
                            accel_descpool *pool, const command *c)
{
    /* Every launch's: apart from the switch, whose other kinds would have
     * it save registers first. */
    if (c->kind == COMMAND_DISPATCH) {
        const engine_kernel *k = c->object;
        return acc->vt->cmd_dispatch(acc->self, dev, cmd, k->pipe, pool, c->binds, c->bind_count,
                                     c->groups, c->push, c->push_size);
    }
    return record_other(acc, dev, cmd, pool, c);
}
