/*
 * What reaches the log callback, and what salvo_stats.validation_messages
 * counts; no device needed.
 *
 *  - A message's text never repeats the file and line the callback gets
 *    as arguments (the guide's logger prints both: each must show once);
 *    salvo_last_error(), which has no such arguments, keeps "file:line: ".
 *  - A VK_EXT_debug_utils message is a validation message (counted, file
 *    "validation") only when it is a finding: type VALIDATION, or a
 *    layer's PERFORMANCE, at WARNING or ERROR. The loader's notices (id
 *    name "Loader Message", GENERAL alone; VK_INSTANCE_LAYERS' "adding
 *    layers" at WARNING is one) are logged lower and not counted. Checked
 *    on the pure classifier, then end to end: the messenger's own callback
 *    (accel_vk_messenger_info) into a device on the fake accelerator,
 *    whose stats must move for the finding only.
 *  - With no callback, the stderr sink (stderr captured into a file): a
 *    line per message, "salvo: LEVEL: MESSAGE (FILE:LINE)"; warnings and
 *    errors by default, $SALVO_LOG's level otherwise, nothing for "off";
 *    a value of SALVO_LOG it cannot use named once; a device with
 *    validation on prints from info on, validation findings included; an
 *    installed callback takes every message and stderr stays empty.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, dup, fileno */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "accel/vulkan/vk_internal.h"
#include "api/internal.h"
#include "base/diag.h"
#include "support/fake_accel.h"

/* ------------------------------------------------------------------ */
/* What the callback saw                                               */
/* ------------------------------------------------------------------ */

enum {
    SEEN_MAX = 16
};

typedef struct seen_msg {
    salvo_log_level level;
    char file[64];
    int line;
    char message[SALVO_ERROR_MAX];
} seen_msg;

typedef struct seen {
    seen_msg m[SEEN_MAX];
    int count;
} seen;

static void record(void *user, salvo_log_level level, const char *file, int line,
                   const char *message)
{
    seen *s = user;
    if (s->count >= SEEN_MAX)
        return;
    seen_msg *m = &s->m[s->count++];
    m->level = level;
    snprintf(m->file, sizeof m->file, "%s", file ? file : "(null)");
    m->line = line;
    snprintf(m->message, sizeof m->message, "%s", message ? message : "(null)");
}

/* The message must not carry the place the callback was handed. */
static void assert_no_place_in_text(const seen_msg *m)
{
    char place[96];
    snprintf(place, sizeof place, "%s:%d", m->file, m->line);
    if (strstr(m->message, place))
        fail_msg("message \"%s\" repeats its place %s", m->message, place);
    char file_colon[72];
    snprintf(file_colon, sizeof file_colon, "%s:", m->file);
    if (strstr(m->message, file_colon))
        fail_msg("message \"%s\" names its file %s", m->message, m->file);
}

static const seen_msg *find(const seen *s, const char *needle)
{
    for (int i = 0; i < s->count; i++)
        if (strstr(s->m[i].message, needle))
            return &s->m[i];
    fail_msg("no logged message contains \"%s\" (%d logged)", needle, s->count);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* (b) file and line once                                              */
/* ------------------------------------------------------------------ */

static void test_fail_passes_the_reason_alone(void **state)
{
    (void)state;
    seen s = {0};
    salvo_log_sink sink = {record, &s};
    int line = __LINE__ + 1;
    salvo_status r = SALVO_FAIL(&sink, SALVO_ERROR_INVALID_ARGUMENT, "width %d is odd", 7);
    assert_int_equal(r, SALVO_ERROR_INVALID_ARGUMENT);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.m[0].level, SALVO_LOG_ERROR);
    assert_string_equal(s.m[0].file, "unit_log.c");
    assert_int_equal(s.m[0].line, line);
    assert_string_equal(s.m[0].message, "width 7 is odd");
    assert_no_place_in_text(&s.m[0]);

    /* The last error has no file or line beside it: it keeps them. */
    char want[128];
    snprintf(want, sizeof want, "unit_log.c:%d: width 7 is odd", line);
    assert_string_equal(salvo_last_error(), want);
}

static void test_log_passes_the_reason_alone(void **state)
{
    (void)state;
    seen s = {0};
    salvo_log_sink sink = {record, &s};
    salvo_set_error("untouched");
    int line = __LINE__ + 1;
    SALVO_LOG(&sink, SALVO_LOG_WARNING, "%u launch(es) dropped", 3u);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.m[0].level, SALVO_LOG_WARNING);
    assert_string_equal(s.m[0].file, "unit_log.c");
    assert_int_equal(s.m[0].line, line);
    assert_string_equal(s.m[0].message, "3 launch(es) dropped");
    /* A log is not a failure: the last error stays. */
    assert_string_equal(salvo_last_error(), "untouched");
}

/* Through the public API: a refusal (SALVO_FAIL) and a warning (SALVO_LOG)
 * of a device on the fake accelerator. */
static void test_device_messages_name_their_place_once(void **state)
{
    (void)state;
    seen s = {0};
    fake_accel *f = fake_create();
    assert_non_null(f);
    salvo_device_desc d = {.log = record, .log_user = &s};
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(&d, fake_accel_get(f), &dev), SALVO_OK);

    salvo_buffer *b = NULL;
    assert_int_equal(salvo_buffer_create(dev, 0, SALVO_DOMAIN_DEVICE, &b),
                     SALVO_ERROR_INVALID_ARGUMENT);
    assert_null(b);
    const seen_msg *refusal = find(&s, "size is 0");
    assert_int_equal(refusal->level, SALVO_LOG_ERROR);
    assert_true(refusal->line > 0);
    assert_no_place_in_text(refusal);
    /* salvo_last_error() = "file:line: " + the message the callback got. */
    char want[SALVO_ERROR_MAX + 96];
    snprintf(want, sizeof want, "%s:%d: %s", refusal->file, refusal->line, refusal->message);
    assert_string_equal(salvo_last_error(), want);

    /* Left for the device to reclaim: a warning of salvo's own. */
    assert_int_equal(salvo_buffer_create(dev, 256, SALVO_DOMAIN_DEVICE, &b), SALVO_OK);
    salvo_device_destroy(dev);
    const seen_msg *reclaimed = find(&s, "reclaimed");
    assert_int_equal(reclaimed->level, SALVO_LOG_WARNING);
    assert_true(reclaimed->line > 0);
    assert_no_place_in_text(reclaimed);

    for (int i = 0; i < s.count; i++)
        assert_no_place_in_text(&s.m[i]);
    assert_int_equal(fake_illegal_total(f), 0);
    fake_free(f);
}

/* ------------------------------------------------------------------ */
/* (a) the loader's notices are not validation messages                */
/* ------------------------------------------------------------------ */

#define SEV(x) VK_DEBUG_UTILS_MESSAGE_SEVERITY_##x##_BIT_EXT
#define TYPE(x) VK_DEBUG_UTILS_MESSAGE_TYPE_##x##_BIT_EXT
#define LOADER ACCEL_VK_LOADER_MESSAGE_ID
#define VUID "VUID-vkCmdDispatch-None-02697"

typedef struct classify_case {
    const char *what;
    VkDebugUtilsMessageSeverityFlagBitsEXT severity;
    VkDebugUtilsMessageTypeFlagsEXT types;
    const char *id_name;
    bool validation;
    salvo_log_level level;
    const char *file;
} classify_case;

static const classify_case cases[] = {
    /* What the loader sends (its loader_log), as lavapipe's loader did with
     * VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation: */
    {"VK_INSTANCE_LAYERS notice", SEV(WARNING), TYPE(GENERAL), LOADER, false, SALVO_LOG_INFO,
     ACCEL_VK_FILE_LOADER},
    {"loader error notice", SEV(ERROR), TYPE(GENERAL), LOADER, false, SALVO_LOG_INFO,
     ACCEL_VK_FILE_LOADER},
    {"loader search trace", SEV(INFO), TYPE(GENERAL), LOADER, false, SALVO_LOG_DEBUG,
     ACCEL_VK_FILE_LOADER},
    {"loader debug", SEV(VERBOSE), TYPE(GENERAL), LOADER, false, SALVO_LOG_DEBUG,
     ACCEL_VK_FILE_LOADER},
    {"loader performance note", SEV(WARNING), TYPE(PERFORMANCE), LOADER, false, SALVO_LOG_INFO,
     ACCEL_VK_FILE_LOADER},
    /* The loader's own invalid-use check (an invalid handle): a finding. */
    {"loader's invalid-use error", SEV(ERROR), TYPE(GENERAL) | TYPE(VALIDATION), LOADER, true,
     SALVO_LOG_ERROR, ACCEL_VK_FILE_VALIDATION},
    /* The validation layer: */
    {"validation error", SEV(ERROR), TYPE(VALIDATION), VUID, true, SALVO_LOG_ERROR,
     ACCEL_VK_FILE_VALIDATION},
    {"validation warning", SEV(WARNING), TYPE(VALIDATION), VUID, true, SALVO_LOG_WARNING,
     ACCEL_VK_FILE_VALIDATION},
    {"validation error without id", SEV(ERROR), TYPE(VALIDATION), NULL, true, SALVO_LOG_ERROR,
     ACCEL_VK_FILE_VALIDATION},
    {"layer performance warning", SEV(WARNING), TYPE(PERFORMANCE), "UNASSIGNED-BestPractices",
     true, SALVO_LOG_WARNING, ACCEL_VK_FILE_VALIDATION},
    {"layer active banner", SEV(INFO), TYPE(VALIDATION),
     "UNASSIGNED-khronos-validation-createinstance-status-message", false, SALVO_LOG_DEBUG,
     ACCEL_VK_FILE_OTHER},
    {"layer general warning", SEV(WARNING), TYPE(GENERAL), "WARNING-debug-build", false,
     SALVO_LOG_INFO, ACCEL_VK_FILE_OTHER},
    {"general without id", SEV(ERROR), TYPE(GENERAL), NULL, false, SALVO_LOG_INFO,
     ACCEL_VK_FILE_OTHER},
};

static void test_classify(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const classify_case *c = &cases[i];
        accel_vk_message_class got = accel_vk_message_classify(c->severity, c->types, c->id_name);
        if (got.validation != c->validation || got.level != c->level ||
            strcmp(got.file, c->file) != 0)
            fail_msg("%s: got validation %d, level %d, file %s; want %d, %d, %s", c->what,
                     got.validation, (int)got.level, got.file, c->validation, (int)c->level,
                     c->file);
        /* The core counts by file: the two must agree. */
        assert_int_equal(strcmp(got.file, "validation") == 0, got.validation);
    }
}

/* The fake accelerator with its device_open wrapped, to catch the sink the
 * core hands the accelerator for validation messages (what the Vulkan
 * accelerator stores as accel_device.log). */
static accel_vtable wrapped_vt;
static const accel_vtable *fake_vt;
static salvo_log_sink opened_sink;

static accel_result capture_open(void *self, const accel_open_options *opt, accel_device **out,
                                 accel_caps *caps)
{
    opened_sink = (salvo_log_sink){opt->log, opt->log_user};
    return fake_vt->device_open(self, opt, out, caps);
}

static uint64_t validation_count(salvo_device *dev)
{
    salvo_stats st;
    assert_int_equal(salvo_device_stats(dev, &st), SALVO_OK);
    return st.validation_messages;
}

/* Send one message as the layer or the loader would: through the
 * messenger's own callback, with a device of the accelerator's whose log
 * is the core's sink. */
static void deliver(accel_device *d, VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                    VkDebugUtilsMessageTypeFlagsEXT types, const char *id_name,
                    const char *text)
{
    VkDebugUtilsMessengerCreateInfoEXT mi = accel_vk_messenger_info(d);
    assert_non_null(mi.pfnUserCallback);
    assert_ptr_equal(mi.pUserData, d);
    /* Only what salvo subscribes to can arrive. */
    assert_true(mi.messageSeverity & severity);
    VkDebugUtilsMessengerCallbackDataEXT data = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT,
        .pMessageIdName = id_name,
        .pMessage = text,
    };
    /* The layer must never be told to fail the call. */
    assert_int_equal(mi.pfnUserCallback(severity, types, &data, mi.pUserData), VK_FALSE);
}

static void test_messenger_counts_findings_only(void **state)
{
    (void)state;
    seen s = {0};
    fake_accel *f = fake_create();
    assert_non_null(f);
    accel acc = fake_accel_get(f);
    fake_vt = acc.vt;
    wrapped_vt = *acc.vt;
    wrapped_vt.device_open = capture_open;
    acc.vt = &wrapped_vt;
    opened_sink = (salvo_log_sink){0};

    salvo_device_desc desc = {.log = record, .log_user = &s};
    salvo_device *dev = NULL;
    assert_int_equal(device_create_with_accel(&desc, acc, &dev), SALVO_OK);
    assert_non_null(opened_sink.fn);
    static accel_device vk; /* zeroed: the messenger reads only its log */
    vk.log = opened_sink;
    assert_int_equal(validation_count(dev), 0);

    /* What lavapipe's loader sent with VK_INSTANCE_LAYERS set. */
    deliver(&vk, SEV(WARNING), TYPE(GENERAL), "Loader Message",
            "env var 'VK_INSTANCE_LAYERS' defined and adding layers "
            "\"VK_LAYER_KHRONOS_validation\"");
    assert_int_equal(validation_count(dev), 0);
    const seen_msg *notice = find(&s, "VK_INSTANCE_LAYERS");
    assert_string_equal(notice->file, "vulkan-loader");
    assert_int_equal(notice->level, SALVO_LOG_INFO);

    deliver(&vk, SEV(ERROR), TYPE(GENERAL), "Loader Message", "loader: a manifest was skipped");
    assert_int_equal(validation_count(dev), 0);
    assert_int_equal(find(&s, "manifest was skipped")->level, SALVO_LOG_INFO);

    /* A real validation error still counts, and reaches the user as one. */
    deliver(&vk, SEV(ERROR), TYPE(VALIDATION), VUID, "Validation Error: [ " VUID " ] ...");
    assert_int_equal(validation_count(dev), 1);
    const seen_msg *error = find(&s, "Validation Error");
    assert_string_equal(error->file, "validation");
    assert_int_equal(error->level, SALVO_LOG_ERROR);

    deliver(&vk, SEV(WARNING), TYPE(VALIDATION), "UNASSIGNED-warning", "Validation Warning: x");
    assert_int_equal(validation_count(dev), 2);
    assert_string_equal(find(&s, "Validation Warning")->file, "validation");

    salvo_device_destroy(dev);
    assert_int_equal(fake_live_total(f), 0);
    assert_int_equal(fake_illegal_total(f), 0);
    fake_free(f);
}

/* ------------------------------------------------------------------ */
/* (c) the stderr sink                                                  */
/* ------------------------------------------------------------------ */

/* stderr, captured into a file while calls run. Assertions wait for
 * capture_end, so that a failure's report is not captured. */
typedef struct capture {
    FILE *file;
    int saved;
} capture;

static void capture_begin(capture *c)
{
    fflush(stderr);
    c->file = tmpfile();
    assert_non_null(c->file);
    c->saved = dup(2);
    assert_true(c->saved >= 0);
    assert_true(dup2(fileno(c->file), 2) >= 0);
}

static char captured[16384];

static const char *capture_end(capture *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->file);
    size_t n = fread(captured, 1, sizeof captured - 1, c->file);
    captured[n] = '\0';
    fclose(c->file);
    return captured;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

static void test_stderr_line(void **state)
{
    (void)state;
    unsetenv("SALVO_LOG");
    capture c;
    capture_begin(&c);
    int line = __LINE__ + 1;
    salvo_status r = SALVO_FAIL(NULL, SALVO_ERROR_INVALID_ARGUMENT, "width %d is odd", 7);
    salvo_log_sink empty = {NULL, NULL}; /* a sink with no callback is the same */
    int line2 = __LINE__ + 1;
    SALVO_LOG(&empty, SALVO_LOG_WARNING, "two\nlines");
    const char *out = capture_end(&c);
    assert_int_equal(r, SALVO_ERROR_INVALID_ARGUMENT);
    char want[256];
    snprintf(want, sizeof want,
             "salvo: error: width 7 is odd (unit_log.c:%d)\n"
             "salvo: warning: two lines (unit_log.c:%d)\n",
             line, line2);
    assert_string_equal(out, want);

    /* Vulkan's messages have no line: the file names the source. */
    capture_begin(&c);
    salvo_log_print(SALVO_LOG_WARNING, SALVO_LOG_ERROR, "validation", 0, "Validation Error: x");
    out = capture_end(&c);
    assert_string_equal(out, "salvo: error: validation: Validation Error: x\n");

    /* A message too long for the line is cut, still one line. */
    static char longer[5000];
    memset(longer, 'x', sizeof longer - 1);
    capture_begin(&c);
    salvo_log_print(SALVO_LOG_WARNING, SALVO_LOG_ERROR, "validation", 0, longer);
    out = capture_end(&c);
    assert_int_equal(count_lines(out), 1);
    assert_non_null(strstr(out, "xxx...\n"));
}

/* One message of each level through a sink with no callback, under each
 * value of SALVO_LOG: the levels printed. */
static void test_stderr_levels(void **state)
{
    (void)state;
    static const struct {
        const char *value; /* NULL: unset */
        const char *printed;
    } rows[] = {
        {NULL, "WE"}, {"off", ""}, {"error", "E"}, {"warning", "WE"}, {"info", "IWE"},
        {"debug", "DIWE"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].value)
            setenv("SALVO_LOG", rows[i].value, 1);
        else
            unsetenv("SALVO_LOG");
        capture c;
        capture_begin(&c);
        SALVO_LOG(NULL, SALVO_LOG_DEBUG, "m-D");
        SALVO_LOG(NULL, SALVO_LOG_INFO, "m-I");
        SALVO_LOG(NULL, SALVO_LOG_WARNING, "m-W");
        (void)SALVO_FAIL(NULL, SALVO_ERROR_UNKNOWN, "m-E");
        const char *out = capture_end(&c);
        char got[8] = "";
        size_t n = 0;
        for (const char *l = "DIWE"; *l; l++) {
            char tag[8];
            snprintf(tag, sizeof tag, "m-%c ", *l);
            if (strstr(out, tag))
                got[n++] = *l;
        }
        if (strcmp(got, rows[i].printed) != 0)
            fail_msg("SALVO_LOG=%s: printed %s, want %s:\n%s",
                     rows[i].value ? rows[i].value : "(unset)", got, rows[i].printed, out);
        assert_int_equal(count_lines(out), (int)strlen(rows[i].printed));
    }
    unsetenv("SALVO_LOG");
}

/* A value of SALVO_LOG that cannot be used: warning, named once. */
static void test_stderr_bad_level(void **state)
{
    (void)state;
    setenv("SALVO_LOG", "loud", 1);
    capture c;
    capture_begin(&c);
    SALVO_LOG(NULL, SALVO_LOG_INFO, "m-I");
    SALVO_LOG(NULL, SALVO_LOG_WARNING, "m-W1");
    SALVO_LOG(NULL, SALVO_LOG_WARNING, "m-W2");
    const char *out = capture_end(&c);
    unsetenv("SALVO_LOG");
    const char *w = strstr(out, "salvo: warning: SALVO_LOG=\"loud\" is not one of off, error, "
                                "warning, info, debug; using warning");
    if (!w)
        fail_msg("no warning naming SALVO_LOG:\n%s", out);
    assert_null(strstr(w + strlen("salvo: warning: SALVO_LOG="), "SALVO_LOG="));
    assert_null(strstr(out, "m-I"));
    assert_non_null(strstr(out, "m-W1"));
    assert_non_null(strstr(out, "m-W2"));
    assert_int_equal(count_lines(out), 3);
}

/* A device with no callback prints its refusals and warnings, from the
 * level it settled at create; with a callback, stderr stays empty. */
static void test_device_without_callback(void **state)
{
    (void)state;
    for (int pass = 0; pass < 3; pass++) {
        /* 0: no callback; 1: no callback, SALVO_LOG=off; 2: a callback */
        if (pass == 1)
            setenv("SALVO_LOG", "off", 1);
        else
            unsetenv("SALVO_LOG");
        seen s = {0};
        fake_accel *f = fake_create();
        assert_non_null(f);
        salvo_device_desc d = {.log = pass == 2 ? record : NULL, .log_user = &s};
        salvo_device *dev = NULL;
        capture c;
        capture_begin(&c);
        salvo_status created = device_create_with_accel(&d, fake_accel_get(f), &dev);
        salvo_buffer *b = NULL;
        salvo_status refused = created == SALVO_OK
                                   ? salvo_buffer_create(dev, 0, SALVO_DOMAIN_DEVICE, &b)
                                   : created;
        /* Left for the device to reclaim: a warning. */
        salvo_status made = created == SALVO_OK
                                ? salvo_buffer_create(dev, 64, SALVO_DOMAIN_DEVICE, &b)
                                : created;
        salvo_device_destroy(dev);
        const char *out = capture_end(&c);
        assert_int_equal(created, SALVO_OK);
        assert_int_equal(refused, SALVO_ERROR_INVALID_ARGUMENT);
        assert_int_equal(made, SALVO_OK);
        if (pass == 0) {
            assert_non_null(strstr(out, "salvo: error: buffer_create: size is 0 (buffer.c:"));
            assert_non_null(strstr(out, "salvo: warning: device destroyed with 1 object(s) "
                                        "never destroyed: reclaimed (device.c:"));
            assert_null(strstr(out, "opened")); /* info: not by default */
            assert_int_equal(count_lines(out), 2);
        } else {
            assert_string_equal(out, "");
        }
        if (pass == 2) {
            find(&s, "size is 0");
            find(&s, "reclaimed");
            find(&s, "opened fake0"); /* the callback takes every level */
        }
        fake_free(f);
    }
    unsetenv("SALVO_LOG");
}

/* Validation on and no callback: the layer's findings reach stderr, and
 * the sink prints from info on, so the confirmation shows. */
static void test_validation_findings_on_stderr(void **state)
{
    (void)state;
    unsetenv("SALVO_LOG");
    fake_accel *f = fake_create();
    assert_non_null(f);
    accel acc = fake_accel_get(f);
    fake_vt = acc.vt;
    wrapped_vt = *acc.vt;
    wrapped_vt.device_open = capture_open;
    acc.vt = &wrapped_vt;
    opened_sink = (salvo_log_sink){0};
    salvo_device_desc desc = {.flags = SALVO_DEVICE_VALIDATION};
    salvo_device *dev = NULL;
    capture c;
    capture_begin(&c);
    salvo_status st = device_create_with_accel(&desc, acc, &dev);
    static accel_device vk;
    vk.log = opened_sink;
    if (st == SALVO_OK && vk.log.fn)
        deliver(&vk, SEV(ERROR), TYPE(VALIDATION), VUID, "Validation Error: [ " VUID " ]\nmore");
    salvo_device_info info = {0};
    if (st == SALVO_OK)
        salvo_device_info_get(dev, &info);
    salvo_device_destroy(dev);
    const char *out = capture_end(&c);
    assert_int_equal(st, SALVO_OK);
    assert_non_null(opened_sink.fn);
    assert_int_equal(info.log_level, SALVO_LOG_INFO);
    assert_int_equal(info.validation, 1);
    assert_non_null(strstr(out, "salvo: info: validation on: VK_LAYER_KHRONOS_validation; "));
    assert_non_null(strstr(out, "salvo: error: validation: Validation Error: [ " VUID " ] more\n"));
    fake_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fail_passes_the_reason_alone),
        cmocka_unit_test(test_log_passes_the_reason_alone),
        cmocka_unit_test(test_device_messages_name_their_place_once),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_messenger_counts_findings_only),
        cmocka_unit_test(test_stderr_line),
        cmocka_unit_test(test_stderr_levels),
        cmocka_unit_test(test_stderr_bad_level),
        cmocka_unit_test(test_device_without_callback),
        cmocka_unit_test(test_validation_findings_on_stderr),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
