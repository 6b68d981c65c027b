/*
 * The slot and fence state machine (src/core/slot.h) on the fake
 * accelerator: every legal transition with what it must do to the command
 * buffer, fence and pool underneath, every illegal one refused without
 * touching anything, and the kernel names a failed batch reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/slot.h"
#include "support/fake_accel.h"

#include "add.spv.h"

typedef struct fixture {
    fake_accel *f;
    accel acc; /* slot_env points at it */
    accel_device *dev;
    salvo_log_sink sink;
    slot_env env;
    slot_table table;
    slot s;
    /* One real dispatch per batch, so pool resets can be observed. */
    accel_buffer *buf;
    accel_pipeline *pipe;
    int errors_logged;
} fixture;

static void on_log(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    (void)file;
    (void)line;
    (void)message;
    fixture *fx = user;
    if (level == SALVO_LOG_ERROR)
        fx->errors_logged++;
}

static const char *const ALPHA = "alpha";
static const char *const BETA = "beta";

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->f = fake_create();
    assert_non_null(fx->f);
    fake_set_complete(fx->f, FAKE_COMPLETE_MANUAL);
    fx->acc = fake_accel_get(fx->f);
    accel_open_options opt = {.index = 0};
    accel_caps caps;
    assert_int_equal(fx->acc.vt->device_open(fx->acc.self, &opt, &fx->dev, &caps), ACCEL_SUCCESS);
    accel_buffer_desc bd = {.size = 256, .domain = SALVO_DOMAIN_DEVICE};
    accel_buffer_info bi;
    assert_int_equal(fx->acc.vt->buffer_create(fx->acc.self, fx->dev, &bd, &fx->buf, &bi),
                     ACCEL_SUCCESS);
    accel_pipeline_binding pb = {.binding = 0};
    accel_pipeline_desc pd = {
        .spirv = add_spv,
        .spirv_size = sizeof add_spv,
        .entry = "main",
        .bindings = &pb,
        .binding_count = 1,
        .push_constant_size = 8,
    };
    assert_int_equal(fx->acc.vt->pipeline_create(fx->acc.self, fx->dev, &pd, &fx->pipe),
                     ACCEL_SUCCESS);
    fx->sink = (salvo_log_sink){on_log, fx};
    fx->env = (slot_env){&fx->acc, fx->dev, &fx->sink, &fx->table};
    assert_int_equal(slot_table_reserve(&fx->table, NULL, 8), SALVO_OK);
    assert_int_equal(slot_init(&fx->s, &fx->env, 4, 8, true), SALVO_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    slot_destroy(&fx->s, &fx->env);
    /* Every batch that left the active states left the table. */
    assert_int_equal(fx->table.count, 0);
    slot_table_free(&fx->table, NULL);
    fx->acc.vt->pipeline_destroy(fx->acc.self, fx->dev, fx->pipe);
    fx->acc.vt->buffer_destroy(fx->acc.self, fx->dev, fx->buf);
    fx->acc.vt->device_close(fx->acc.self, fx->dev);
    fx->acc.vt->destroy(fx->acc.self);
    uint64_t live = fake_live_total(fx->f);
    uint64_t illegal = fake_illegal_total(fx->f);
    char last[256];
    snprintf(last, sizeof last, "%s", fake_illegal_last(fx->f));
    fake_free(fx->f);
    free(fx);
    if (illegal)
        fail_msg("%llu illegal use(s) of the accelerator; last: %s", (unsigned long long)illegal,
                 last);
    assert_int_equal(live, 0);
    return 0;
}

static const accel_sem_op NO_SIGNAL = {NULL, 0};

static void record_dispatch(fixture *fx)
{
    accel_bind b = {.binding = 0, .buffer = fx->buf, .offset = 0, .size = 256};
    uint32_t groups[3] = {1, 1, 1};
    uint32_t push[2] = {64, 1};
    assert_int_equal(fx->acc.vt->cmd_dispatch(fx->acc.self, fx->dev, fx->s.cmd, fx->pipe,
                                              fx->s.pool, &b, 1, groups, push, sizeof push),
                     ACCEL_SUCCESS);
}

/* A batch of three launches of two kernels, recording. */
static void to_recording(fixture *fx)
{
    assert_int_equal(slot_begin(&fx->s, &fx->env, 7, NO_SIGNAL), SALVO_OK);
    record_dispatch(fx);
    slot_note_launch(&fx->s, ALPHA);
    slot_note_launch(&fx->s, BETA);
    slot_note_launch(&fx->s, ALPHA);
    assert_int_equal(fx->s.state, SLOT_RECORDING);
}

static void to_held(fixture *fx)
{
    to_recording(fx);
    assert_int_equal(slot_submit(&fx->s, &fx->env, true), SALVO_OK);
    assert_int_equal(fx->s.state, SLOT_HELD);
}

static void to_in_flight(fixture *fx)
{
    to_recording(fx);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_OK);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
}

static void expect_error_contains(const char *needle)
{
    if (!strstr(salvo_last_error(), needle))
        fail_msg("last error \"%s\" does not contain \"%s\"", salvo_last_error(), needle);
}

static void expect_kernels_named(void)
{
    expect_error_contains("alpha");
    expect_error_contains("beta");
}

/* Retired: IDLE with the batch's fields cleared and its descriptor sets
 * returned to the pool. */
static void expect_clean_idle(fixture *fx)
{
    assert_int_equal(fx->s.state, SLOT_IDLE);
    assert_int_equal(fx->s.launches, 0);
    assert_int_equal(fx->s.name_count, 0);
    assert_int_equal(fx->s.names_dropped, 0);
    assert_int_equal(fx->s.wait_count, 0);
    assert_int_equal(fake_pool_sets_used(fx->f, fx->s.pool), 0);
}

/* The slot can go round again: the proof that a path left it usable. */
static void expect_reusable(fixture *fx)
{
    uint64_t submits = fake_calls(fx->f, "submit");
    to_in_flight(fx);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
    expect_clean_idle(fx);
    assert_int_equal(fake_calls(fx->f, "submit"), submits + 1);
    assert_int_equal(fake_illegal(fx->f, "begin_while_recording"), 0);
}

/* ------------------------------------------------------------------ */
/* Creation and destruction                                            */
/* ------------------------------------------------------------------ */

static void test_init_is_idle(void **state)
{
    fixture *fx = *state;
    assert_int_equal(fx->s.state, SLOT_IDLE);
    assert_non_null(fx->s.cmd);
    assert_non_null(fx->s.fence);
    assert_non_null(fx->s.pool);
    assert_int_equal(fake_live(fx->f, FAKE_CMD), 1);
    assert_int_equal(fake_live(fx->f, FAKE_FENCE), 1);
    assert_int_equal(fake_live(fx->f, FAKE_DESCPOOL), 1);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_INITIAL);
    assert_false(slot_active(&fx->s));
}

static void test_init_failure_leaves_nothing(void **state)
{
    fixture *fx = *state;
    static const char *const ops[] = {"cmd_create", "fence_create", "descpool_create"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        uint64_t before = fake_live_total(fx->f);
        slot t;
        memset(&t, 0xA5, sizeof t);
        fake_set_result(fx->f, ops[i], 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
        assert_int_equal(slot_init(&t, &fx->env, 4, 8, true), SALVO_ERROR_OUT_OF_HOST_MEMORY);
        slot zero;
        memset(&zero, 0, sizeof zero);
        assert_memory_equal(&t, &zero, sizeof t);
        assert_int_equal(fake_live_total(fx->f), before);
    }
}

static void test_destroy_releases_everything(void **state)
{
    fixture *fx = *state;
    to_in_flight(fx);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_poll(&fx->s, &fx->env), SALVO_OK);
    slot_destroy(&fx->s, &fx->env);
    assert_int_equal(fake_live(fx->f, FAKE_CMD), 0);
    assert_int_equal(fake_live(fx->f, FAKE_FENCE), 0);
    assert_int_equal(fake_live(fx->f, FAKE_DESCPOOL), 0);
    assert_null(fx->s.cmd);
    assert_null(fx->s.fence);
    assert_null(fx->s.pool);
}

/* ------------------------------------------------------------------ */
/* Legal transitions                                                   */
/* ------------------------------------------------------------------ */

static void test_begin_records(void **state)
{
    fixture *fx = *state;
    assert_int_equal(slot_begin(&fx->s, &fx->env, 42, NO_SIGNAL), SALVO_OK);
    assert_int_equal(fx->s.state, SLOT_RECORDING);
    assert_int_equal(fx->s.serial, 42);
    assert_int_equal(fx->s.launches, 0);
    assert_true(slot_active(&fx->s));
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_RECORDING);
    assert_int_equal(fake_calls(fx->f, "cmd_begin"), 1);
}

static void test_begin_failure_stays_idle(void **state)
{
    fixture *fx = *state;
    fake_set_result(fx->f, "cmd_begin", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(slot_begin(&fx->s, &fx->env, 3, NO_SIGNAL), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(fx->s.state, SLOT_IDLE);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_INITIAL);
    expect_reusable(fx);
}

/* A slot begun ahead: its command buffer recording with the lead barrier
 * in it, the slot IDLE; the begin then calls the accelerator no more. */
static void test_prepare_begins_ahead(void **state)
{
    fixture *fx = *state;
    slot_prepare(&fx->s, &fx->env, ACCEL_BARRIER_WORK);
    assert_int_equal(fx->s.state, SLOT_IDLE);
    assert_true(fx->s.prepared);
    assert_false(slot_active(&fx->s));
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_RECORDING);
    assert_int_equal(fake_calls(fx->f, "cmd_begin"), 1);
    assert_int_equal(fake_calls(fx->f, "cmd_barrier"), 1);
    /* Again: nothing more. */
    slot_prepare(&fx->s, &fx->env, ACCEL_BARRIER_WORK);
    assert_int_equal(fake_calls(fx->f, "cmd_begin"), 1);
    assert_int_equal(fake_calls(fx->f, "cmd_barrier"), 1);
    assert_int_equal(slot_begin(&fx->s, &fx->env, 9, NO_SIGNAL), SALVO_OK);
    assert_int_equal(fx->s.state, SLOT_RECORDING);
    assert_false(fx->s.prepared);
    assert_int_equal(fake_calls(fx->f, "cmd_begin"), 1);
    assert_int_equal(fake_calls(fx->f, "cmd_barrier"), 1);
    record_dispatch(fx);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_OK);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
    expect_clean_idle(fx);
    expect_reusable(fx);
}

/* A prepare the accelerator refuses leaves the slot as it was, says
 * nothing, and the begin after it begins (and succeeds). */
static void test_prepare_failure_leaves_slot_as_it_was(void **state)
{
    fixture *fx = *state;
    fake_set_result(fx->f, "cmd_begin", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    slot_prepare(&fx->s, &fx->env, ACCEL_BARRIER_WORK);
    assert_int_equal(fx->s.state, SLOT_IDLE);
    assert_false(fx->s.prepared);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_INITIAL);
    assert_int_equal(fake_calls(fx->f, "cmd_barrier"), 0);
    assert_int_equal(fx->errors_logged, 0);
    assert_int_equal(slot_begin(&fx->s, &fx->env, 4, NO_SIGNAL), SALVO_OK);
    assert_int_equal(fake_calls(fx->f, "cmd_begin"), 2);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_RECORDING);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_OK);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
    expect_reusable(fx);
}

/* Only an IDLE slot is prepared; one in any other state is left alone. */
static void test_prepare_only_when_idle(void **state)
{
    fixture *fx = *state;
    to_recording(fx);
    slot_prepare(&fx->s, &fx->env, ACCEL_BARRIER_WORK);
    assert_false(fx->s.prepared);
    assert_int_equal(fake_calls(fx->f, "cmd_begin"), 1);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_OK);
    slot_prepare(&fx->s, &fx->env, ACCEL_BARRIER_WORK);
    assert_false(fx->s.prepared);
    assert_int_equal(fake_calls(fx->f, "cmd_begin"), 1);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_PENDING);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
}

/* A slot destroyed while prepared leaves nothing behind (teardown checks
 * every handle is gone and no use was illegal). */
static void test_prepared_slot_destroyed(void **state)
{
    fixture *fx = *state;
    slot_prepare(&fx->s, &fx->env, ACCEL_BARRIER_WORK);
    assert_true(fx->s.prepared);
}

static void test_submit_goes_in_flight(void **state)
{
    fixture *fx = *state;
    to_recording(fx);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_OK);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_true(slot_active(&fx->s));
    assert_int_equal(fx->s.launches, 3);
    assert_int_equal(fx->s.serial, 7);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_PENDING);
    assert_false(fake_fence_signalled(fx->f, fx->s.fence));
    assert_int_equal(fake_pending(fx->f), 1);
    assert_int_equal(fake_calls(fx->f, "cmd_end"), 1);
    assert_int_equal(fake_calls(fx->f, "fence_reset"), 1);
    assert_int_equal(fake_calls(fx->f, "submit"), 1);
    assert_int_equal(fake_complete_all(fx->f), 1);
    assert_true(fake_fence_signalled(fx->f, fx->s.fence));
    assert_int_equal(slot_wait(&fx->s, &fx->env, 0), SALVO_OK);
}

static void test_poll_not_ready_then_retire(void **state)
{
    fixture *fx = *state;
    to_in_flight(fx);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(slot_poll(&fx->s, &fx->env), SALVO_NOT_READY);
        assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
        assert_int_equal(fx->s.launches, 3);
    }
    assert_int_equal(fake_pool_sets_used(fx->f, fx->s.pool), 1);
    uint64_t resets = fake_calls(fx->f, "descpool_reset");
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_poll(&fx->s, &fx->env), SALVO_OK);
    expect_clean_idle(fx);
    assert_int_equal(fake_calls(fx->f, "descpool_reset"), resets + 1);
    assert_int_equal(fake_dispatches_completed(fx->f), 1);
}

static void test_complete_applies_observed_result(void **state)
{
    fixture *fx = *state;
    to_in_flight(fx);
    assert_int_equal(slot_complete(&fx->s, &fx->env, ACCEL_NOT_READY), SALVO_NOT_READY);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_int_equal(slot_complete(&fx->s, &fx->env, ACCEL_TIMEOUT), SALVO_TIMEOUT);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_int_equal(fx->s.launches, 3);
    /* The fence really signalled: the observed SUCCESS retires. */
    assert_true(fake_complete_next(fx->f));
    uint64_t calls = fake_calls_total(fx->f);
    assert_int_equal(slot_complete(&fx->s, &fx->env, ACCEL_SUCCESS), SALVO_OK);
    expect_clean_idle(fx);
    /* Retire only returns the sets: one pool reset, nothing else. */
    assert_int_equal(fake_calls_total(fx->f), calls + 1);
    expect_reusable(fx);
}

static void test_wait_success_retires(void **state)
{
    fixture *fx = *state;
    fake_set_complete(fx->f, FAKE_COMPLETE_AUTO);
    to_in_flight(fx);
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
    expect_clean_idle(fx);
    assert_int_equal(fake_calls(fx->f, "fence_wait"), 1);
}

static void test_wait_timeout_stays_in_flight(void **state)
{
    fixture *fx = *state;
    to_in_flight(fx);
    /* Manual mode: the work has not finished, the bounded wait expires. */
    assert_int_equal(slot_wait(&fx->s, &fx->env, 1000), SALVO_TIMEOUT);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_int_equal(fx->s.launches, 3);
    assert_int_equal(fake_pool_sets_used(fx->f, fx->s.pool), 1);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_wait(&fx->s, &fx->env, 1000), SALVO_OK);
    expect_clean_idle(fx);
}

static void test_wait_scripted_timeout_then_success(void **state)
{
    fixture *fx = *state;
    fake_set_complete(fx->f, FAKE_COMPLETE_AUTO);
    to_in_flight(fx);
    /* The fence is signalled, but this wait reports a timeout: it must
     * not retire on a result that does not say the work is over. */
    fake_set_result(fx->f, "fence_wait", 1, ACCEL_TIMEOUT);
    assert_int_equal(slot_wait(&fx->s, &fx->env, 1000), SALVO_TIMEOUT);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_int_equal(slot_wait(&fx->s, &fx->env, 1000), SALVO_OK);
    expect_clean_idle(fx);
}

static void test_wait_out_of_memory_stays_in_flight(void **state)
{
    fixture *fx = *state;
    fake_set_complete(fx->f, FAKE_COMPLETE_AUTO);
    to_in_flight(fx);
    fake_set_result(fx->f, "fence_wait", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    int errors = fx->errors_logged;
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_int_equal(fx->s.launches, 3);
    expect_kernels_named();
    expect_error_contains("3 launches");
    assert_int_equal(fx->errors_logged, errors + 1);
    /* Each kernel once, however often it was launched. */
    const char *msg = salvo_last_error();
    const char *first = strstr(msg, "alpha");
    assert_non_null(first);
    assert_null(strstr(first + 1, "alpha"));
    /* Not over: the next wait tries again and retires. */
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
    expect_clean_idle(fx);
}

static void test_wait_device_lost_abandons(void **state)
{
    fixture *fx = *state;
    to_in_flight(fx);
    fake_set_result(fx->f, "fence_wait", 1, ACCEL_ERROR_DEVICE_LOST);
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(fx->s.state, SLOT_ABANDONED);
    assert_false(slot_active(&fx->s));
    expect_kernels_named();
    /* The work is over: later waits do not report it again. */
    uint64_t waits = fake_calls(fx->f, "fence_wait");
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_ERROR_INVALID_STATE);
    assert_int_equal(fake_calls(fx->f, "fence_wait"), waits);
    /* An abandoned slot still owns its handles until destroyed. */
    assert_int_equal(fake_live(fx->f, FAKE_CMD), 1);
    slot_destroy(&fx->s, &fx->env);
    assert_int_equal(fake_live(fx->f, FAKE_CMD), 0);
    assert_int_equal(fake_live(fx->f, FAKE_FENCE), 0);
    assert_int_equal(fake_live(fx->f, FAKE_DESCPOOL), 0);
}

static void test_poll_device_lost_abandons(void **state)
{
    fixture *fx = *state;
    to_in_flight(fx);
    fake_set_result(fx->f, "fence_status", 1, ACCEL_ERROR_DEVICE_LOST);
    assert_int_equal(slot_poll(&fx->s, &fx->env), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(fx->s.state, SLOT_ABANDONED);
    expect_kernels_named();
}

/* A submission refused by op (not device loss): the error names the
 * batch; none of it runs, yet the batch stands in, in flight as a
 * submission of no command buffer (its command buffer back in the
 * initial state, its launches no longer counted), until the device
 * reaches it; then IDLE with the pool's sets returned, and the slot works
 * again. */
static void submit_refused(void **state, const char *op, accel_result r, salvo_status expect,
                           const char *what)
{
    fixture *fx = *state;
    to_recording(fx);
    uint64_t resets = fake_calls(fx->f, "cmd_reset");
    uint64_t submits = fake_calls(fx->f, "submit");
    fake_set_result(fx->f, op, 1, r);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), expect);
    expect_kernels_named();
    expect_error_contains(what);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_true(fx->s.empty);
    assert_int_equal(fx->s.launches, 0);
    assert_int_equal(fake_calls(fx->f, "cmd_reset"), resets + 1);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_INITIAL);
    assert_int_equal(fake_pending(fx->f), 1);
    assert_int_equal(fake_calls(fx->f, "submit"), submits + 1 + !strcmp(op, "submit"));
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(fake_dispatches_completed(fx->f), 0); /* none of it ran */
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
    expect_clean_idle(fx);
    assert_false(fx->s.empty);
    expect_reusable(fx);
}

/* Where the stand-in is refused too (its fence reset, or its submit):
 * IDLE as before, the command buffer reset, nothing pending, the error
 * of the batch reported once; and the slot works again. */
static void stand_in_refused(void **state, const char *op, accel_result r)
{
    fixture *fx = *state;
    to_recording(fx);
    fake_set_result(fx->f, "cmd_end", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    fake_set_result(fx->f, op, 1, r);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    expect_kernels_named();
    expect_error_contains("could not be ended");
    expect_clean_idle(fx);
    assert_false(slot_active(&fx->s));
    assert_false(fx->s.empty);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_INITIAL);
    assert_int_equal(fake_pending(fx->f), 0);
    expect_reusable(fx);
}

static void test_stand_in_fence_refused(void **state)
{
    stand_in_refused(state, "fence_reset", ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
}

static void test_stand_in_submit_refused(void **state)
{
    stand_in_refused(state, "submit", ACCEL_ERROR_OUT_OF_HOST_MEMORY);
}

/* Refused where it was to be held (it waits for something not yet on the
 * device): the stand-in is held, then sent empty; refused again there, it
 * goes IDLE with nothing more reported. */
static void test_held_stand_in(void **state)
{
    fixture *fx = *state;
    to_recording(fx);
    fake_set_result(fx->f, "cmd_end", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(slot_submit(&fx->s, &fx->env, true), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    expect_kernels_named();
    assert_int_equal(fx->s.state, SLOT_HELD);
    assert_true(fx->s.empty);
    assert_int_equal(fake_pending(fx->f), 0);
    assert_int_equal(slot_send_held(&fx->s, &fx->env), SALVO_OK);
    assert_int_equal(fx->s.state, SLOT_IN_FLIGHT);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(fake_dispatches_completed(fx->f), 0);
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
    expect_clean_idle(fx);

    to_recording(fx);
    fake_set_result(fx->f, "cmd_end", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(slot_submit(&fx->s, &fx->env, true), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    salvo_clear_error();
    fake_set_result(fx->f, "submit", 1, ACCEL_ERROR_OUT_OF_HOST_MEMORY);
    assert_int_equal(slot_send_held(&fx->s, &fx->env), SALVO_ERROR_OUT_OF_HOST_MEMORY);
    assert_string_equal(salvo_last_error(), ""); /* reported once, before */
    expect_clean_idle(fx);
    assert_int_equal(fake_pending(fx->f), 0);
    expect_reusable(fx);
}

static void test_submit_refused_at_end(void **state)
{
    submit_refused(state, "cmd_end", ACCEL_ERROR_OUT_OF_DEVICE_MEMORY,
                   SALVO_ERROR_OUT_OF_DEVICE_MEMORY, "could not be ended");
}

static void test_submit_refused_at_fence_reset(void **state)
{
    submit_refused(state, "fence_reset", ACCEL_ERROR_OUT_OF_DEVICE_MEMORY,
                   SALVO_ERROR_OUT_OF_DEVICE_MEMORY, "could not be submitted");
}

static void test_submit_refused_by_queue(void **state)
{
    submit_refused(state, "submit", ACCEL_ERROR_OUT_OF_DEVICE_MEMORY,
                   SALVO_ERROR_OUT_OF_DEVICE_MEMORY, "could not be submitted");
}

static void test_submit_refused_out_of_host_memory(void **state)
{
    submit_refused(state, "submit", ACCEL_ERROR_OUT_OF_HOST_MEMORY,
                   SALVO_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY");
}

static void test_submit_device_lost_abandons(void **state)
{
    fixture *fx = *state;
    to_recording(fx);
    fake_set_result(fx->f, "submit", 1, ACCEL_ERROR_DEVICE_LOST);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_ERROR_DEVICE_LOST);
    assert_int_equal(fx->s.state, SLOT_ABANDONED);
    expect_kernels_named();
    assert_int_equal(fake_pending(fx->f), 0);
}

static void test_discard_drops_the_batch(void **state)
{
    fixture *fx = *state;
    to_recording(fx);
    uint64_t resets = fake_calls(fx->f, "cmd_reset");
    assert_int_equal(slot_discard(&fx->s, &fx->env), SALVO_OK);
    expect_clean_idle(fx);
    assert_int_equal(fake_calls(fx->f, "cmd_reset"), resets + 1);
    assert_int_equal(fake_cmd_state_of(fx->f, fx->s.cmd), FAKE_CMD_INITIAL);
    assert_int_equal(fake_calls(fx->f, "submit"), 0);
    assert_int_equal(fake_dispatches_completed(fx->f), 0);
    expect_reusable(fx);
}

/* ------------------------------------------------------------------ */
/* Abandon, and refusals                                               */
/* ------------------------------------------------------------------ */

static void reach(fixture *fx, slot_state st)
{
    switch (st) {
    case SLOT_IDLE:
        break;
    case SLOT_RECORDING:
        to_recording(fx);
        break;
    case SLOT_HELD:
        to_held(fx);
        break;
    case SLOT_IN_FLIGHT:
        to_in_flight(fx);
        break;
    case SLOT_ABANDONED:
        to_in_flight(fx);
        fake_lose_device(fx->f);
        slot_abandon(&fx->s, &fx->env);
        break;
    }
    assert_int_equal(fx->s.state, st);
}

static void test_abandon_from_every_state(void **state)
{
    static const slot_state from[] = {SLOT_IDLE, SLOT_RECORDING, SLOT_HELD, SLOT_IN_FLIGHT,
                                      SLOT_ABANDONED};
    for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
        fixture *fx = NULL;
        assert_int_equal(setup((void **)&fx), 0);
        reach(fx, from[i]);
        /* Abandon is what a lost device does to in-flight work. */
        if (from[i] == SLOT_IN_FLIGHT)
            fake_lose_device(fx->f);
        slot_abandon(&fx->s, &fx->env);
        assert_int_equal(fx->s.state, SLOT_ABANDONED);
        assert_false(slot_active(&fx->s));
        /* Terminal: nothing leads out of it. */
        assert_int_equal(slot_begin(&fx->s, &fx->env, 9, NO_SIGNAL), SALVO_ERROR_INVALID_STATE);
        assert_int_equal(slot_poll(&fx->s, &fx->env), SALVO_ERROR_INVALID_STATE);
        assert_int_equal(fx->s.state, SLOT_ABANDONED);
        assert_int_equal(teardown((void **)&fx), 0);
    }
    (void)state;
}

typedef enum slot_op {
    OP_BEGIN,
    OP_SUBMIT,
    OP_COMPLETE,
    OP_POLL,
    OP_WAIT,
    OP_DISCARD,
    OP_ADD_WAIT,
    OP_SEND_HELD,
    OP_COUNT
} slot_op;

static const char *const op_names[OP_COUNT] = {"begin",   "submit",   "complete", "poll",
                                               "wait",    "discard",  "add_wait", "send_held"};

static salvo_status apply(fixture *fx, slot_op op)
{
    slot_dep dep = {.op = {(accel_timeline *)NULL, 1}};
    switch (op) {
    case OP_BEGIN: return slot_begin(&fx->s, &fx->env, 99, NO_SIGNAL);
    case OP_SUBMIT: return slot_submit(&fx->s, &fx->env, false);
    case OP_COMPLETE: return slot_complete(&fx->s, &fx->env, ACCEL_SUCCESS);
    case OP_POLL: return slot_poll(&fx->s, &fx->env);
    case OP_WAIT: return slot_wait(&fx->s, &fx->env, UINT64_MAX);
    case OP_DISCARD: return slot_discard(&fx->s, &fx->env);
    case OP_ADD_WAIT: return slot_add_wait(&fx->s, &fx->env, &dep);
    case OP_SEND_HELD: return slot_send_held(&fx->s, &fx->env);
    case OP_COUNT: break;
    }
    return SALVO_ERROR_UNKNOWN;
}

static bool legal(slot_state st, slot_op op)
{
    switch (st) {
    case SLOT_IDLE: return op == OP_BEGIN;
    case SLOT_RECORDING: return op == OP_SUBMIT || op == OP_DISCARD || op == OP_ADD_WAIT;
    /* A held batch is polled (not ready: not on the device) and sent. */
    case SLOT_HELD: return op == OP_POLL || op == OP_SEND_HELD;
    case SLOT_IN_FLIGHT: return op == OP_COMPLETE || op == OP_POLL || op == OP_WAIT;
    case SLOT_ABANDONED: return false;
    }
    return false;
}

static void test_illegal_transitions_change_nothing(void **state)
{
    static const slot_state states[] = {SLOT_IDLE, SLOT_RECORDING, SLOT_HELD, SLOT_IN_FLIGHT,
                                        SLOT_ABANDONED};
    int checked = 0;
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        for (int op = 0; op < OP_COUNT; op++) {
            if (legal(states[i], (slot_op)op))
                continue;
            fixture *fx = NULL;
            assert_int_equal(setup((void **)&fx), 0);
            reach(fx, states[i]);
            slot before = fx->s;
            uint64_t calls = fake_calls_total(fx->f);
            salvo_status r = apply(fx, (slot_op)op);
            if (r != SALVO_ERROR_INVALID_STATE)
                fail_msg("%s in state %s returned %s", op_names[op],
                         slot_state_name(states[i]), salvo_status_string(r));
            /* Refused means untouched: the slot, and the device under it. */
            assert_memory_equal(&fx->s, &before, sizeof before);
            assert_int_equal(fake_calls_total(fx->f), calls);
            expect_error_contains(slot_state_name(states[i]));
            if (states[i] == SLOT_HELD)
                assert_int_equal(slot_send_held(&fx->s, &fx->env), SALVO_OK);
            if (states[i] == SLOT_IN_FLIGHT || states[i] == SLOT_HELD)
                fake_complete_all(fx->f);
            if (states[i] == SLOT_IN_FLIGHT || states[i] == SLOT_HELD)
                assert_int_equal(slot_wait(&fx->s, &fx->env, 0), SALVO_OK);
            if (states[i] == SLOT_RECORDING)
                assert_int_equal(slot_discard(&fx->s, &fx->env), SALVO_OK);
            assert_int_equal(teardown((void **)&fx), 0);
            checked++;
        }
    }
    /* 7 refusals from IDLE, 5 from RECORDING, 6 from HELD, 5 from
     * IN_FLIGHT, 8 from ABANDONED. */
    assert_int_equal(checked, 31);
    (void)state;
}

/* ------------------------------------------------------------------ */
/* Timelines: the signal and the waits a batch carries                 */
/* ------------------------------------------------------------------ */

static void test_submit_carries_signal_and_waits(void **state)
{
    fixture *fx = *state;
    const accel_vtable *vt = fx->acc.vt;
    accel_timeline *own = NULL, *other = NULL;
    assert_int_equal(vt->timeline_create(fx->acc.self, fx->dev, 0, &own), ACCEL_SUCCESS);
    assert_int_equal(vt->timeline_create(fx->acc.self, fx->dev, 0, &other), ACCEL_SUCCESS);

    assert_int_equal(slot_begin(&fx->s, &fx->env, 1, (accel_sem_op){own, 5}), SALVO_OK);
    slot_dep low = {.op = {other, 2}, .serial = 0};
    slot_dep high = {.op = {other, 3}, .serial = 0};
    assert_int_equal(slot_add_wait(&fx->s, &fx->env, &low), SALVO_OK);
    assert_int_equal(slot_add_wait(&fx->s, &fx->env, &high), SALVO_OK);
    assert_int_equal(slot_add_wait(&fx->s, &fx->env, &low), SALVO_OK);
    /* One wait per timeline, the highest value kept. */
    assert_int_equal(fx->s.wait_count, 1);
    assert_int_equal(fx->s.waits[0].op.value, 3);
    slot_note_launch(&fx->s, ALPHA);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_OK);

    /* The batch cannot start before its wait is met... */
    assert_false(fake_complete_next(fx->f));
    assert_int_equal(vt->timeline_signal(fx->acc.self, fx->dev, other, 2), ACCEL_SUCCESS);
    assert_false(fake_complete_next(fx->f));
    assert_int_equal(slot_poll(&fx->s, &fx->env), SALVO_NOT_READY);
    assert_int_equal(vt->timeline_signal(fx->acc.self, fx->dev, other, 3), ACCEL_SUCCESS);
    uint64_t v = 0;
    assert_int_equal(vt->timeline_value(fx->acc.self, fx->dev, own, &v), ACCEL_SUCCESS);
    assert_int_equal(v, 0);
    /* ...and signals its value when it completes. */
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(vt->timeline_value(fx->acc.self, fx->dev, own, &v), ACCEL_SUCCESS);
    assert_int_equal(v, 5);
    assert_int_equal(slot_poll(&fx->s, &fx->env), SALVO_OK);
    expect_clean_idle(fx);

    vt->timeline_destroy(fx->acc.self, fx->dev, own);
    vt->timeline_destroy(fx->acc.self, fx->dev, other);
}

static void test_add_wait_bounded(void **state)
{
    fixture *fx = *state;
    const accel_vtable *vt = fx->acc.vt;
    accel_timeline *tl[SLOT_MAX_WAITS + 1];
    for (int i = 0; i <= SLOT_MAX_WAITS; i++)
        assert_int_equal(vt->timeline_create(fx->acc.self, fx->dev, 0, &tl[i]), ACCEL_SUCCESS);
    assert_int_equal(slot_begin(&fx->s, &fx->env, 1, NO_SIGNAL), SALVO_OK);
    for (int i = 0; i < SLOT_MAX_WAITS; i++) {
        slot_dep d = {.op = {tl[i], 1}};
        assert_int_equal(slot_add_wait(&fx->s, &fx->env, &d), SALVO_OK);
    }
    slot_dep extra = {.op = {tl[SLOT_MAX_WAITS], 1}};
    slot before = fx->s;
    assert_int_equal(slot_add_wait(&fx->s, &fx->env, &extra), SALVO_ERROR_INVALID_STATE);
    assert_memory_equal(&fx->s, &before, sizeof before);
    /* Raising a timeline already waited on still fits. */
    slot_dep again = {.op = {tl[0], 4}};
    assert_int_equal(slot_add_wait(&fx->s, &fx->env, &again), SALVO_OK);
    assert_int_equal(fx->s.wait_count, SLOT_MAX_WAITS);
    assert_int_equal(fx->s.waits[0].op.value, 4);
    assert_int_equal(slot_discard(&fx->s, &fx->env), SALVO_OK);
    assert_int_equal(fx->s.wait_count, 0);
    for (int i = 0; i <= SLOT_MAX_WAITS; i++)
        vt->timeline_destroy(fx->acc.self, fx->dev, tl[i]);
}

/* ------------------------------------------------------------------ */
/* The kernel names a failed batch reports                             */
/* ------------------------------------------------------------------ */

static char names_storage[16][8];

static const char *kname(int i)
{
    snprintf(names_storage[i], sizeof names_storage[i], "k%d", i);
    return names_storage[i];
}

static void test_kernel_list_caps_at_eight(void **state)
{
    fixture *fx = *state;
    char buf[512];
    assert_int_equal(slot_begin(&fx->s, &fx->env, 1, NO_SIGNAL), SALVO_OK);
    slot_kernel_list(&fx->s, buf, sizeof buf);
    assert_string_equal(buf, "(none)");
    for (int i = 0; i < 11; i++)
        slot_note_launch(&fx->s, kname(i));
    /* Launches of kernels already listed add nothing. */
    for (int i = 0; i < 8; i++)
        slot_note_launch(&fx->s, kname(i));
    assert_int_equal(fx->s.launches, 19);
    assert_int_equal(fx->s.name_count, SLOT_MAX_NAMES);
    slot_kernel_list(&fx->s, buf, sizeof buf);
    assert_string_equal(buf, "k0, k1, k2, k3, k4, k5, k6, k7 (+3 more)");

    /* The list in a failure message, through a refused submit. */
    fake_set_result(fx->f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    expect_error_contains("k0, k1, k2, k3, k4, k5, k6, k7 (+3 more)");
    expect_error_contains("19 launches");
    assert_true(fake_complete_next(fx->f)); /* its stand-in */
    assert_int_equal(slot_wait(&fx->s, &fx->env, UINT64_MAX), SALVO_OK);
}

static void test_kernel_list_counts_kernels_not_launches(void **state)
{
    fixture *fx = *state;
    char buf[512];
    assert_int_equal(slot_begin(&fx->s, &fx->env, 1, NO_SIGNAL), SALVO_OK);
    for (int i = 0; i < 9; i++)
        slot_note_launch(&fx->s, kname(i));
    /* k8 is the one kernel past the cap; launching it again does not make
     * it more kernels. */
    for (int i = 0; i < 4; i++)
        slot_note_launch(&fx->s, kname(8));
    slot_kernel_list(&fx->s, buf, sizeof buf);
    assert_string_equal(buf, "k0, k1, k2, k3, k4, k5, k6, k7 (+1 more)");
    assert_int_equal(slot_discard(&fx->s, &fx->env), SALVO_OK);
}

static void test_kernel_list_truncates_safely(void **state)
{
    fixture *fx = *state;
    assert_int_equal(slot_begin(&fx->s, &fx->env, 1, NO_SIGNAL), SALVO_OK);
    for (int i = 0; i < 12; i++)
        slot_note_launch(&fx->s, kname(i));
    for (size_t size = 1; size < 48; size++) {
        char *buf = malloc(size); /* exact size, so ASan sees any overrun */
        assert_non_null(buf);
        slot_kernel_list(&fx->s, buf, size);
        assert_true(strlen(buf) < size);
        assert_true(strncmp(buf, "k0, k1, k2", strlen(buf) < 10 ? strlen(buf) : 10) == 0);
        free(buf);
    }
    assert_int_equal(slot_discard(&fx->s, &fx->env), SALVO_OK);
}

static void test_retire_forgets_names(void **state)
{
    fixture *fx = *state;
    to_in_flight(fx);
    assert_true(fake_complete_next(fx->f));
    assert_int_equal(slot_wait(&fx->s, &fx->env, 0), SALVO_OK);
    /* The next batch reports only its own kernels. */
    assert_int_equal(slot_begin(&fx->s, &fx->env, 8, NO_SIGNAL), SALVO_OK);
    slot_note_launch(&fx->s, kname(3));
    fake_set_result(fx->f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    expect_error_contains("kernels: k3");
    assert_null(strstr(salvo_last_error(), "alpha"));
    expect_error_contains("1 launch ");
    assert_true(fake_complete_next(fx->f)); /* its stand-in */
    assert_int_equal(slot_wait(&fx->s, &fx->env, 0), SALVO_OK);
}

/* ------------------------------------------------------------------ */
/* The table of active batches by serial                               */
/* ------------------------------------------------------------------ */

/* A batch is in the table from begin until it is done (or dropped), in
 * every active state, HELD included. */
static void test_table_follows_the_batch(void **state)
{
    fixture *fx = *state;
    assert_null(slot_table_find(&fx->table, 7));
    to_recording(fx);
    assert_ptr_equal(slot_table_find(&fx->table, 7), &fx->s);
    assert_int_equal(slot_submit(&fx->s, &fx->env, true), SALVO_OK);
    assert_int_equal(fx->s.state, SLOT_HELD);
    assert_ptr_equal(slot_table_find(&fx->table, 7), &fx->s);
    assert_int_equal(slot_send_held(&fx->s, &fx->env), SALVO_OK);
    assert_ptr_equal(slot_table_find(&fx->table, 7), &fx->s);
    fake_complete_all(fx->f);
    assert_int_equal(slot_wait(&fx->s, &fx->env, 0), SALVO_OK);
    assert_null(slot_table_find(&fx->table, 7));
    assert_int_equal(fx->table.count, 0);
    /* A refused batch leaves it once its stand-in is done (or at once
     * where that is refused too), and a discarded one. */
    to_recording(fx);
    fake_set_result(fx->f, "submit", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_ptr_equal(slot_table_find(&fx->table, 7), &fx->s);
    fake_complete_all(fx->f);
    assert_int_equal(slot_wait(&fx->s, &fx->env, 0), SALVO_OK);
    assert_null(slot_table_find(&fx->table, 7));
    to_recording(fx);
    fake_set_result(fx->f, "cmd_end", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    fake_set_result(fx->f, "fence_reset", 1, ACCEL_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_int_equal(slot_submit(&fx->s, &fx->env, false), SALVO_ERROR_OUT_OF_DEVICE_MEMORY);
    assert_null(slot_table_find(&fx->table, 7));
    to_recording(fx);
    assert_int_equal(slot_discard(&fx->s, &fx->env), SALVO_OK);
    assert_null(slot_table_find(&fx->table, 7));
    assert_int_equal(fx->table.count, 0);
}

/* Many batches at once, begun and retired out of serial order (as on
 * several queues): each found while active and only then, whatever the
 * collisions and removals in between; growing keeps them all. */
static void test_table_many_batches_out_of_order(void **state)
{
    fixture *fx = *state;
    enum { N = 24 };
    slot *s = calloc(N, sizeof *s);
    assert_non_null(s);
    slot_table t = {0};
    assert_int_equal(slot_table_reserve(&t, NULL, 4), SALVO_OK);
    slot_env env = fx->env;
    env.table = &t;
    for (int i = 0; i < N; i++) {
        assert_int_equal(slot_init(&s[i], &env, 4, 8, true), SALVO_OK);
        /* Room before the batch begins, as a stream's creation makes it. */
        assert_int_equal(slot_table_reserve(&t, NULL, (uint32_t)i + 1), SALVO_OK);
        /* Serials with gaps and a shared low part: they collide. */
        assert_int_equal(slot_begin(&s[i], &env, 1000 + 64 * (uint64_t)i, NO_SIGNAL), SALVO_OK);
        assert_int_equal(slot_submit(&s[i], &env, i % 3 == 0), SALVO_OK);
    }
    assert_int_equal(t.count, N);
    /* Done in a scrambled order; after each, exactly the others found. */
    bool done[N] = {0};
    for (int k = 0; k < N; k++) {
        int i = (k * 7) % N;
        if (s[i].state == SLOT_HELD)
            assert_int_equal(slot_send_held(&s[i], &env), SALVO_OK);
        fake_complete_all(fx->f);
        assert_int_equal(slot_complete(&s[i], &env, ACCEL_SUCCESS), SALVO_OK);
        done[i] = true;
        for (int j = 0; j < N; j++) {
            slot *found = slot_table_find(&t, 1000 + 64 * (uint64_t)j);
            if (done[j])
                assert_null(found);
            else
                assert_ptr_equal(found, &s[j]);
        }
        assert_null(slot_table_find(&t, 999));
    }
    assert_int_equal(t.count, 0);
    for (int i = 0; i < N; i++)
        slot_destroy(&s[i], &env);
    slot_table_free(&t, NULL);
    free(s);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_init_is_idle),
        T(test_init_failure_leaves_nothing),
        T(test_destroy_releases_everything),
        T(test_begin_records),
        T(test_begin_failure_stays_idle),
        T(test_prepare_begins_ahead),
        T(test_prepare_failure_leaves_slot_as_it_was),
        T(test_prepare_only_when_idle),
        T(test_prepared_slot_destroyed),
        T(test_submit_goes_in_flight),
        T(test_poll_not_ready_then_retire),
        T(test_complete_applies_observed_result),
        T(test_wait_success_retires),
        T(test_wait_timeout_stays_in_flight),
        T(test_wait_scripted_timeout_then_success),
        T(test_wait_out_of_memory_stays_in_flight),
        T(test_wait_device_lost_abandons),
        T(test_poll_device_lost_abandons),
        T(test_submit_refused_at_end),
        T(test_submit_refused_at_fence_reset),
        T(test_submit_refused_by_queue),
        T(test_submit_refused_out_of_host_memory),
        T(test_stand_in_fence_refused),
        T(test_stand_in_submit_refused),
        T(test_held_stand_in),
        T(test_submit_device_lost_abandons),
        T(test_discard_drops_the_batch),
        cmocka_unit_test(test_abandon_from_every_state),
        cmocka_unit_test(test_illegal_transitions_change_nothing),
        T(test_submit_carries_signal_and_waits),
        T(test_add_wait_bounded),
        T(test_kernel_list_caps_at_eight),
        T(test_kernel_list_counts_kernels_not_launches),
        T(test_kernel_list_truncates_safely),
        T(test_retire_forgets_names),
        T(test_table_follows_the_batch),
        T(test_table_many_batches_out_of_order),
    };
#undef T
    return cmocka_run_group_tests_name("slot", tests, NULL, NULL);
}
