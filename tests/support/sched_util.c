/*
 * sched_util.c - see sched_util.h.
 */
#include "sched_util.h"

#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "err.h"
#include "store_util.h"

void sched_util_open(struct sched_util *u, const struct sched_options *opts)
{
    struct err err = ERR_INIT;
    memset(u, 0, sizeof(*u));
    if (opts)
        u->opts = *opts;
    u->dir = store_util_tmpdir();
    u->st = store_util_open(u->dir, 0, STORE_SYNC_NONE);
    ck_assert_msg(sched_open(u->st, &u->opts, &u->s, &err) == 0, "sched_open: %s", err.msg);
}

void sched_util_close(struct sched_util *u)
{
    sched_close(u->s);
    store_close(u->st);
    store_util_rmrf(u->dir);
    memset(u, 0, sizeof(*u));
}

void sched_util_reopen(struct sched_util *u)
{
    struct err err = ERR_INIT;
    sched_close(u->s);
    u->s = NULL;
    ck_assert_msg(sched_open(u->st, &u->opts, &u->s, &err) == 0, "sched_open: %s", err.msg);
}

json_t *sched_util_apply(struct sched_util *u, const char *yaml, int64_t now_ms)
{
    struct err err = ERR_INIT;
    struct model_manifest m = {0};
    json_t *results = NULL;
    ck_assert_msg(model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_AUTO, &m, &err) == 0,
                  "parse: %s", err.msg);
    ck_assert_msg(sched_apply(u->s, &m, now_ms, &results, &err) == 0, "apply: %s", err.msg);
    model_manifest_free(&m);
    return results;
}

void sched_util_applyf(struct sched_util *u, int64_t now_ms, const char *fmt, ...)
{
    char yaml[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(yaml, sizeof(yaml), fmt, ap);
    va_end(ap);
    ck_assert_msg(n >= 0 && (size_t)n < sizeof(yaml), "sched_util_applyf: YAML over 1 KiB");
    json_decref(sched_util_apply(u, yaml, now_ms));
}

long sched_util_metric(struct sched_util *u, const char *name)
{
    char *m = sched_metrics(u->s), *line = xasprintf("\n%s ", name);
    const char *p = strstr(m, line);
    ck_assert_msg(p != NULL, "no metric %s", name);
    long n = strtol(p + strlen(line), NULL, 10);
    free(line);
    free(m);
    return n;
}

json_t *sched_util_cycle(struct sched_util *u, int64_t now_ms)
{
    struct err err = ERR_INIT;
    json_t *sum = NULL;
    ck_assert_msg(sched_cycle(u->s, now_ms, &sum, &err) == 0, "cycle: %s", err.msg);
    return sum;
}

json_t *sched_util_pod(struct sched_util *u, const char *key)
{
    MDB_txn *txn = NULL;
    json_t *pod = NULL;
    ck_assert_int_eq(store_txn_begin(u->st, STORE_READ, &txn, NULL), 0);
    store_get(txn, MODEL_POD, key, &pod, NULL);
    store_txn_abort(&txn);
    return pod;
}

char *sched_util_node_of(struct sched_util *u, const char *key)
{
    json_t *pod = sched_util_pod(u, key);
    if (!pod)
        return NULL;
    const char *n = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    char *out = strdup(n ? n : "");
    json_decref(pod);
    return out;
}

static int audit_collect(void *ctx, uint64_t seq, const char *json, size_t len)
{
    json_t *rec = json_loadb(json, len, 0, NULL);
    if (rec)
        json_array_append_new(ctx, rec);
    return 0;
}

json_t *sched_util_audit(struct sched_util *u)
{
    MDB_txn *txn = NULL;
    json_t *all = json_array();
    ck_assert_int_eq(store_txn_begin(u->st, STORE_READ, &txn, NULL), 0);
    ck_assert_int_eq(store_audit_scan(txn, 1, 0, audit_collect, all, NULL), 0);
    store_txn_abort(&txn);
    return all;
}

int sched_util_audit_count(struct sched_util *u, const char *kind, const char *job)
{
    json_t *all = sched_util_audit(u), *rec;
    size_t i;
    int n = 0;
    json_array_foreach(all, i, rec)
    {
        const char *k = json_string_value(json_object_get(rec, "kind"));
        const char *j = json_string_value(json_object_get(rec, "job"));
        n += k && !strcmp(k, kind) && (!job || (j && !strcmp(j, job)));
    }
    json_decref(all);
    return n;
}

char *sched_util_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

char *sched_util_case_path(const char *area, const char *rel)
{
    const char *src = getenv("MUSTER_SOURCE_DIR");
    size_t n = strlen(src ? src : MUSTER_SOURCE_DIR) + strlen(area) + strlen(rel) + 32;
    char *p = malloc(n);
    snprintf(p, n, "%s/tests/data/%s/%s", src ? src : MUSTER_SOURCE_DIR, area, rel);
    return p;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *sched_util_cases(const char *area)
{
    char *root = sched_util_case_path(area, "");
    DIR *d = opendir(root);
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 512) {
        if (e->d_name[0] == '.')
            continue;
        names[n++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof(*names), cmp_name);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(out, json_string(names[i]));
        free(names[i]);
    }
    free(root);
    return out;
}

json_t *sched_util_case_run(struct sched_util *u, const char *area, const char *name,
                            const struct sched_options *opts)
{
    char rel[512];
    json_error_t jerr;
    snprintf(rel, sizeof(rel), "%s/cluster.yaml", name);
    char *path = sched_util_case_path(area, rel), *yaml = sched_util_read(path);
    ck_assert_msg(yaml != NULL, "case '%s': cannot read '%s'", name, path);
    free(path);
    snprintf(rel, sizeof(rel), "%s/expected.json", name);
    path = sched_util_case_path(area, rel);
    json_t *exp = json_load_file(path, 0, &jerr);
    ck_assert_msg(exp != NULL, "case '%s': expected.json: %s", name, jerr.text);
    free(path);
    struct sched_options from_exp = {0};
    from_exp.mark_running =
        json_is_true(json_object_get(json_object_get(exp, "options"), "mark_running"));
    sched_util_open(u, opts ? opts : &from_exp);
    json_decref(sched_util_apply(u, yaml, 1000));
    free(yaml);
    json_int_t cycles = json_integer_value(json_object_get(exp, "cycles"));
    for (json_int_t i = 0; i < (cycles ? cycles : 1); i++) {
        json_decref(sched_util_cycle(u, 2000 + i * 1000));
        sched_util_case_after(u, name, exp, (int)i + 1, 2500 + i * 1000);
    }
    return exp;
}

void sched_util_case_after(struct sched_util *u, const char *name, json_t *exp, int cycle,
                           int64_t now_ms)
{
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(exp, "after"), i, ev)
    {
        if (json_integer_value(json_object_get(ev, "cycle")) != cycle)
            continue;
        size_t k;
        json_t *obj;
        json_array_foreach(json_object_get(ev, "delete"), k, obj)
        {
            const char *what = json_string_value(obj), *slash = what ? strchr(what, '/') : NULL;
            ck_assert_msg(slash, "case '%s': after: delete '%s' is not Kind/key", name,
                          what ? what : "(not a string)");
            char *resource = strndup(what, (size_t)(slash - what));
            enum model_kind kind;
            struct err err = ERR_INIT;
            ck_assert_msg(model_kind_from_resource(resource, &kind) == 0,
                          "case '%s': after: unknown kind '%s'", name, resource);
            ck_assert_msg(sched_delete(u->s, kind, slash + 1, now_ms, &err) == 0,
                          "case '%s': after: delete '%s': %s", name, what, err.msg);
            free(resource);
        }
    }
}

void sched_util_case_expect(struct sched_util *u, const char *name, json_t *exp)
{
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(exp, "placements"), key, val)
    {
        char *node = sched_util_node_of(u, key);
        ck_assert_msg(node != NULL, "case '%s': pod '%s' missing", name, key);
        ck_assert_msg(!strcmp(node, json_string_value(val)),
                      "case '%s': pod '%s' on '%s', expected '%s'", name, key, node,
                      json_string_value(val));
        free(node);
    }
    json_object_foreach(json_object_get(exp, "states"), key, val)
    {
        json_t *j = NULL;
        struct err err = ERR_INIT;
        ck_assert_msg(sched_job(u->s, key, &j, &err) == 0, "case '%s': %s", name, err.msg);
        const char *state = json_string_value(json_object_get(j, "state"));
        ck_assert_msg(!strcmp(state, json_string_value(val)),
                      "case '%s': job '%s' is %s, expected %s", name, key, state,
                      json_string_value(val));
        json_decref(j);
    }
    json_object_foreach(json_object_get(exp, "audit"), key, val)
    {
        int n = sched_util_audit_count(u, key, NULL);
        ck_assert_msg(n == json_integer_value(val), "case '%s': %d audit '%s' records, expected %d",
                      name, n, key, (int)json_integer_value(val));
    }
    sched_util_expect_queues(u, name, exp);
}

/* One path segment with "~1" -> "/" and "~0" -> "~" undone, in place. */
static void unescape(char *k)
{
    char *w = k;
    for (const char *r = k; *r; r++) {
        if (r[0] == '~' && (r[1] == '0' || r[1] == '1'))
            *w++ = *++r == '1' ? '/' : '~';
        else
            *w++ = *r;
    }
    *w = '\0';
}

json_t *sched_util_at_path(json_t *doc, const char *path)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", path);
    json_t *cur = doc;
    for (char *save = NULL, *k = strtok_r(buf, "/", &save); cur && k;
         k = strtok_r(NULL, "/", &save)) {
        unescape(k);
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(k, NULL, 10))
                                 : json_object_get(cur, k);
    }
    return cur;
}

int sched_util_match(json_t *got, json_t *want)
{
    if (json_is_string(want))
        return json_is_string(got) && strstr(json_string_value(got), json_string_value(want));
    if (json_is_null(want))
        return !got || json_is_null(got);
    if (json_is_number(want) && json_is_number(got)) {
        double d = json_number_value(got) - json_number_value(want), w = json_number_value(want);
        double tol = 1e-6 * (w > 1.0 ? w : w < -1.0 ? -w : 1.0);
        return d <= tol && -d <= tol;
    }
    return got && json_equal(got, want);
}

void sched_util_expect_paths(const char *name, const char *what, json_t *doc, json_t *fields)
{
    const char *path;
    json_t *want;
    json_object_foreach(fields, path, want)
    {
        json_t *got = sched_util_at_path(doc, path);
        if (sched_util_match(got, want))
            continue;
        char *gs = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
        char *ws = json_dumps(want, JSON_ENCODE_ANY);
        ck_abort_msg("case '%s': %s %s is %s, expected %s", name, what, path, gs ? gs : "(absent)",
                     ws);
        free(gs);
        free(ws);
    }
}

void sched_util_expect_why(struct sched_util *u, const char *name, json_t *exp)
{
    const char *job;
    json_t *fields;
    char what[300];
    json_object_foreach(json_object_get(exp, "why"), job, fields)
    {
        json_t *w = sched_util_why(u, job);
        snprintf(what, sizeof(what), "job '%s' why", job);
        sched_util_expect_paths(name, what, w, fields);
        json_decref(w);
    }
}

void sched_util_expect_queues(struct sched_util *u, const char *name, json_t *exp)
{
    const char *queue;
    json_t *fields;
    char what[300];
    json_object_foreach(json_object_get(exp, "queues"), queue, fields)
    {
        struct err err = ERR_INIT;
        json_t *q = NULL;
        ck_assert_msg(sched_queue(u->s, queue, &q, &err) == 0, "case '%s': queue '%s': %s", name,
                      queue, err.msg);
        snprintf(what, sizeof(what), "queue '%s'", queue);
        sched_util_expect_paths(name, what, q, fields);
        json_decref(q);
    }
}

json_t *sched_util_why(struct sched_util *u, const char *id)
{
    struct err err = ERR_INIT;
    json_t *doc = NULL;
    ck_assert_msg(sched_why(u->s, id, &doc, &err) == 0, "why '%s': %s", id, err.msg);
    return doc;
}

json_t *sched_util_job(struct sched_util *u, const char *id)
{
    struct err err = ERR_INIT;
    json_t *doc = NULL;
    ck_assert_msg(sched_job(u->s, id, &doc, &err) == 0, "job '%s': %s", id, err.msg);
    return doc;
}

json_t *sched_util_job_states(struct sched *s)
{
    json_t *jobs = NULL, *j, *out = json_object();
    struct err err = ERR_INIT;
    size_t i;
    ck_assert_msg(sched_jobs(s, NULL, &jobs, &err) == 0, "jobs: %s", err.msg);
    json_array_foreach(jobs, i, j)
    {
        char buf[256];
        snprintf(buf, sizeof(buf), "%s %s", json_string_value(json_object_get(j, "state")),
                 json_string_value(json_object_get(j, "reason")));
        json_object_set_new(out, json_string_value(json_object_get(j, "id")), json_string(buf));
    }
    json_decref(jobs);
    return out;
}

json_t *sched_util_ledger(struct sched_util *u, const char *job, const char *victim,
                          const char *since)
{
    struct err err = ERR_INIT;
    json_t *out = NULL;
    ck_assert_msg(sched_preemptions(u->s, job, victim, since, &out, &err) == 0, "%s", err.msg);
    return out;
}

const char *sched_util_str2(json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}
