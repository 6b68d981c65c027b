/*
 * Reading back a trace file (salvo_trace_start): a strict JSON parser,
 * small enough to trust, that checks the whole file and keeps the fields
 * of each event in "traceEvents" the tests look at.
 */
#ifndef SALVO_TESTS_TRACE_JSON_H
#define SALVO_TESTS_TRACE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tj_event {
    char name[256]; /* decoded; for "M" events the args.name */
    char cat[32];
    char ph[4];
    int64_t pid, tid;
    double ts, dur;     /* microseconds */
    int64_t batch;      /* args.batch, -1 when absent */
    int64_t launch;     /* args.launch, -1 when absent */
    int64_t launches;   /* args.launches, -1 when absent */
} tj_event;

typedef struct tj_trace {
    tj_event *events;
    size_t count;
    size_t cap; /* events allocated */
    char error[256]; /* why the file is not valid, or "" */
} tj_trace;

/* Read and check path. False (error set) when it is missing or not valid
 * JSON of the shape {"traceEvents":[{...},...], ...}. */
bool tj_load(const char *path, tj_trace *out);
void tj_free(tj_trace *t);
/* Events with this ph, pid and cat (NULL: any cat). */
size_t tj_count(const tj_trace *t, const char *ph, int64_t pid, const char *cat);

#endif
