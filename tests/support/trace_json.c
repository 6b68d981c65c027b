/* A strict JSON reader for trace files; see trace_json.h. */
#include "support/trace_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
    const char *begin, *p, *end;
    char *error;
    int depth;
} jp;

/* Where an event's fields go while its object is parsed. */
enum role { GENERIC, EVENT, ARGS };

static bool fail(jp *j, const char *what)
{
    if (!j->error[0])
        snprintf(j->error, 256, "%s at byte %ld", what, (long)(j->p - j->begin));
    return false;
}

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool lit(jp *j, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
        return fail(j, "bad literal");
    j->p += n;
    return true;
}

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static bool u4(jp *j, unsigned *out)
{
    if (j->end - j->p < 4)
        return fail(j, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex(j->p[i]);
        if (h < 0)
            return fail(j, "bad \\u escape");
        v = v << 4 | (unsigned)h;
    }
    j->p += 4;
    *out = v;
    return true;
}

/* A string, decoded into out (cap bytes, truncated) when out is given. */
static bool string(jp *j, char *out, size_t cap)
{
    size_t n = 0;
    if (j->p >= j->end || *j->p != '"')
        return fail(j, "expected a string");
    j->p++;
    for (;;) {
        if (j->p >= j->end)
            return fail(j, "unterminated string");
        unsigned char c = (unsigned char)*j->p++;
        char piece[4];
        size_t len = 1;
        if (c == '"')
            break;
        if (c < 0x20)
            return fail(j, "control character in a string");
        if (c == '\\') {
            if (j->p >= j->end)
                return fail(j, "unterminated escape");
            char e = *j->p++;
            switch (e) {
            case '"': piece[0] = '"'; break;
            case '\\': piece[0] = '\\'; break;
            case '/': piece[0] = '/'; break;
            case 'b': piece[0] = '\b'; break;
            case 'f': piece[0] = '\f'; break;
            case 'n': piece[0] = '\n'; break;
            case 'r': piece[0] = '\r'; break;
            case 't': piece[0] = '\t'; break;
            case 'u': {
                unsigned cp;
                if (!u4(j, &cp))
                    return false;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
                        return fail(j, "lone high surrogate");
                    j->p += 2;
                    if (!u4(j, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return fail(j, "bad low surrogate");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return fail(j, "lone low surrogate");
                }
                len = put_utf8(piece, cp);
                break;
            }
            default: return fail(j, "bad escape");
            }
        } else {
            piece[0] = (char)c;
        }
        if (out && n + len < cap) {
            memcpy(out + n, piece, len);
            n += len;
        }
    }
    if (out && cap)
        out[n] = '\0';
    return true;
}

static bool number(jp *j, double *out)
{
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end)
        return fail(j, "bad number");
    if (*j->p == '0') {
        j->p++;
    } else if (*j->p >= '1' && *j->p <= '9') {
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    } else {
        return fail(j, "bad number");
    }
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return fail(j, "bad fraction");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return fail(j, "bad exponent");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    char buf[64];
    size_t len = (size_t)(j->p - s);
    if (len >= sizeof buf)
        return fail(j, "number too long");
    memcpy(buf, s, len);
    buf[len] = '\0';
    *out = strtod(buf, NULL);
    return true;
}

static bool value(jp *j, enum role role, tj_event *ev, tj_trace *t);

/* An object; for EVENT and ARGS roles the keys the tests read are kept. */
static bool object(jp *j, enum role role, tj_event *ev, tj_trace *t)
{
    j->p++; /* '{' */
    ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return true;
    }
    for (;;) {
        char key[64];
        ws(j);
        if (!string(j, key, sizeof key))
            return false;
        ws(j);
        if (j->p >= j->end || *j->p != ':')
            return fail(j, "expected ':'");
        j->p++;
        ws(j);
        bool ok;
        double d = 0;
        if (role == EVENT && (!strcmp(key, "name") || !strcmp(key, "cat") || !strcmp(key, "ph"))) {
            char *dst = !strcmp(key, "name") ? ev->name : !strcmp(key, "cat") ? ev->cat : ev->ph;
            size_t cap = !strcmp(key, "name") ? sizeof ev->name
                         : !strcmp(key, "cat") ? sizeof ev->cat
                                               : sizeof ev->ph;
            /* An "M" event's name is its kind: its args.name, when parsed
             * first, is kept instead. */
            ok = string(j, dst == ev->name && ev->name[0] ? NULL : dst, cap);
        } else if (role == EVENT && (!strcmp(key, "pid") || !strcmp(key, "tid") ||
                                     !strcmp(key, "ts") || !strcmp(key, "dur"))) {
            ok = number(j, &d);
            if (!strcmp(key, "pid"))
                ev->pid = (int64_t)d;
            else if (!strcmp(key, "tid"))
                ev->tid = (int64_t)d;
            else if (!strcmp(key, "ts"))
                ev->ts = d;
            else
                ev->dur = d;
        } else if (role == EVENT && !strcmp(key, "args") && j->p < j->end && *j->p == '{') {
            ok = object(j, ARGS, ev, t);
        } else if (role == ARGS && !strcmp(key, "name") && j->p < j->end && *j->p == '"') {
            ok = string(j, ev->name, sizeof ev->name);
        } else if (role == ARGS && (!strcmp(key, "batch") || !strcmp(key, "launch") ||
                                    !strcmp(key, "launches"))) {
            ok = number(j, &d);
            int64_t *dst = !strcmp(key, "batch") ? &ev->batch
                           : !strcmp(key, "launch") ? &ev->launch
                                                    : &ev->launches;
            *dst = (int64_t)d;
        } else {
            ok = value(j, GENERIC, NULL, t);
        }
        if (!ok)
            return false;
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            return true;
        }
        return fail(j, "expected ',' or '}'");
    }
}

static bool array(jp *j, bool events, tj_trace *t)
{
    j->p++; /* '[' */
    ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return true;
    }
    for (;;) {
        ws(j);
        if (events) {
            if (j->p >= j->end || *j->p != '{')
                return fail(j, "an event is not an object");
            /* Doubling: a trace holds tens of thousands of events, and a
             * sanitizer's realloc copies every time. */
            if (t->count == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 256;
                tj_event *grown = realloc(t->events, cap * sizeof *grown);
                if (!grown)
                    return fail(j, "out of memory");
                t->events = grown;
                t->cap = cap;
            }
            tj_event *ev = &t->events[t->count++];
            memset(ev, 0, sizeof *ev);
            ev->batch = ev->launch = ev->launches = -1;
            if (!object(j, EVENT, ev, t))
                return false;
        } else if (!value(j, GENERIC, NULL, t)) {
            return false;
        }
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == ']') {
            j->p++;
            return true;
        }
        return fail(j, "expected ',' or ']'");
    }
}

static bool value(jp *j, enum role role, tj_event *ev, tj_trace *t)
{
    ws(j);
    if (j->p >= j->end)
        return fail(j, "unexpected end");
    if (++j->depth > 64)
        return fail(j, "nested too deep");
    bool ok;
    double d;
    switch (*j->p) {
    case '{': ok = object(j, role, ev, t); break;
    case '[': ok = array(j, false, t); break;
    case '"': ok = string(j, NULL, 0); break;
    case 't': ok = lit(j, "true"); break;
    case 'f': ok = lit(j, "false"); break;
    case 'n': ok = lit(j, "null"); break;
    default: ok = number(j, &d); break;
    }
    j->depth--;
    return ok;
}

bool tj_load(const char *path, tj_trace *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(out->error, sizeof out->error, "cannot open %s", path);
        return false;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (!buf) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return false;
    }
    jp j = {buf, buf, buf + len, out->error, 0};
    bool ok = false;
    bool seen = false;
    ws(&j);
    if (j.p >= j.end || *j.p != '{') {
        fail(&j, "not an object");
    } else {
        j.p++;
        for (;;) {
            char key[64];
            ws(&j);
            if (!string(&j, key, sizeof key))
                break;
            ws(&j);
            if (j.p >= j.end || *j.p != ':') {
                fail(&j, "expected ':'");
                break;
            }
            j.p++;
            ws(&j);
            if (!strcmp(key, "traceEvents")) {
                if (j.p >= j.end || *j.p != '[') {
                    fail(&j, "traceEvents is not an array");
                    break;
                }
                seen = true;
                if (!array(&j, true, out))
                    break;
            } else if (!value(&j, GENERIC, NULL, out)) {
                break;
            }
            ws(&j);
            if (j.p < j.end && *j.p == ',') {
                j.p++;
                continue;
            }
            if (j.p < j.end && *j.p == '}') {
                j.p++;
                ws(&j);
                ok = j.p == j.end;
                if (!ok)
                    fail(&j, "text after the object");
                else if (!seen) {
                    ok = false;
                    snprintf(out->error, sizeof out->error, "no traceEvents");
                }
                break;
            }
            fail(&j, "expected ',' or '}'");
            break;
        }
    }
    free(buf);
    return ok;
}

void tj_free(tj_trace *t)
{
    free(t->events);
    memset(t, 0, sizeof *t);
}

size_t tj_count(const tj_trace *t, const char *ph, int64_t pid, const char *cat)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++) {
        const tj_event *e = &t->events[i];
        n += strcmp(e->ph, ph) == 0 && e->pid == pid && (!cat || strcmp(e->cat, cat) == 0);
    }
    return n;
}
