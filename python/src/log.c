/*
 * The library's log, routed to Python's logging (logger "salvo").
 *
 * salvo calls the log callback from whichever thread is inside it, with
 * the device's lock held, the GIL released (see salvo_py.h). Taking the
 * GIL there could deadlock against a Python thread that holds the GIL and
 * waits for that lock, so the callback only copies the message onto a
 * queue; the next thread to return from a salvo call (with the GIL)
 * drains it into Python (salvo.__init__'s _deliver). A message from
 * salvo's own threads (the host-call thread) waits for the next call.
 *
 * SPDX-License-Identifier: MIT
 */
#include "salvo_py.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct log_entry {
    struct log_entry *next;
    salvo_log_level level;
    int line;
    unsigned long thread;
    char file[64];
    char text[]; /* NUL-terminated */
} log_entry;

/* Beyond this many queued messages the rest are counted, not kept: a
 * program that never returns to Python must not grow without bound. */
enum {
    LOG_QUEUE_MAX = 4096
};

/* log_lock guards head, tail, queued and dropped. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static log_entry *head, *tail;
static size_t queued;
static uint64_t dropped;
atomic_int py_log_pending;

PyObject *py_log_deliver;

void py_log_callback(void *user, salvo_log_level level, const char *file, int line,
                     const char *message)
{
    (void)user;
    size_t len = message ? strlen(message) : 0;
    log_entry *e = malloc(sizeof *e + len + 1);
    pthread_mutex_lock(&log_lock);
    if (!e || queued >= LOG_QUEUE_MAX) {
        dropped++;
        pthread_mutex_unlock(&log_lock);
        free(e);
        atomic_store_explicit(&py_log_pending, 1, memory_order_relaxed);
        return;
    }
    e->next = NULL;
    e->level = level;
    e->line = line;
    e->thread = PyThread_get_thread_ident();
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    memcpy(e->text, message ? message : "", len + 1);
    if (tail)
        tail->next = e;
    else
        head = e;
    tail = e;
    queued++;
    pthread_mutex_unlock(&log_lock);
    atomic_store_explicit(&py_log_pending, 1, memory_order_relaxed);
}

/* salvo_last_error() is "file:line: reason", the entry's reason alone. */
static bool is_failure(const log_entry *e, const char *failure)
{
    if (!failure || e->level != SALVO_LOG_ERROR || e->thread != PyThread_get_thread_ident())
        return false;
    char place[96];
    int n = snprintf(place, sizeof place, "%s:%d: ", e->file, e->line);
    if (n < 0 || (size_t)n >= sizeof place || strncmp(failure, place, (size_t)n) != 0)
        return false;
    return strcmp(failure + n, e->text) == 0;
}

void py_log_drain(const char *failure)
{
    pthread_mutex_lock(&log_lock);
    log_entry *e = head;
    uint64_t lost = dropped;
    head = tail = NULL;
    queued = 0;
    dropped = 0;
    atomic_store_explicit(&py_log_pending, 0, memory_order_relaxed);
    pthread_mutex_unlock(&log_lock);

    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    py_host_call_drain(); /* host calls' leftovers (host.c), with no exception pending */
    bool failure_seen = false;
    while (e) {
        log_entry *next = e->next;
        if (py_log_deliver) {
            /* The failure being raised goes at DEBUG: the exception says it. */
            bool raised = !failure_seen && is_failure(e, failure);
            failure_seen |= raised;
            PyObject *r = PyObject_CallFunction(py_log_deliver, "isiNO", (int)e->level, e->file,
                                                e->line, py_text(e->text),
                                                raised ? Py_True : Py_False);
            if (!r)
                PyErr_WriteUnraisable(py_log_deliver);
            Py_XDECREF(r);
        }
        free(e);
        e = next;
    }
    if (lost && py_log_deliver) {
        char text[128];
        snprintf(text, sizeof text, "%llu log messages dropped (queue full)",
                 (unsigned long long)lost);
        PyObject *r = PyObject_CallFunction(py_log_deliver, "isisO", (int)SALVO_LOG_WARNING,
                                            "python", 0, text, Py_False);
        if (!r)
            PyErr_WriteUnraisable(py_log_deliver);
        Py_XDECREF(r);
    }
    PyErr_Restore(type, value, tb);
}
