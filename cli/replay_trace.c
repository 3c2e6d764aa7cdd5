/*
 * replay_trace.c - the trace of `muster replay` (replay.h): CSV in, manifests out.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "model.h"
#include "replay.h"

enum col {
    C_ID,
    C_ARRIVAL,
    C_QUEUE,
    C_PRIORITY,
    C_PODS,
    C_GANG,
    C_CPU,
    C_MEMORY,
    C_GPU,
    C_TOPOLOGY,
    C_RUNTIME,
    C_LIMIT,
    C_COUNT
};
static const char *const col_names[C_COUNT] = {"id",   "arrival",  "queue",   "priority",
                                               "pods", "gang",     "cpu",     "memory",
                                               "gpu",  "topology", "runtime", "limit"};

/* Splits line in place at commas (no quoting: no field of the trace holds a comma). */
static size_t split(char *line, char **f, size_t max)
{
    size_t n = 0;
    for (char *p = line;; p++) {
        if (n < max)
            f[n] = p;
        n++;
        p += strcspn(p, ",");
        if (!*p)
            break;
        *p = 0;
    }
    for (size_t i = 0; i < n && i < max; i++) { /* trim */
        char *s = f[i];
        while (*s == ' ' || *s == '\t')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
            *--e = 0;
        f[i] = s;
    }
    return n;
}

static int bad(struct err *err, const char *path, int line, int col, const char *what,
               const char *got)
{
    return err_set(err, ERR_INVALID, "%s line %d: column '%s': %s, got '%s'", path, line,
                   col_names[col], what, got);
}

/* Seconds (a decimal number >= 0) to ms. */
static int seconds(const char *s, int64_t *ms)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(x) || x < 0 || x > 1e9)
        return -1;
    *ms = (int64_t)llround(x * 1000.0);
    return 0;
}

static int integer(const char *s, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

/* A DNS-1123 label (dots 0) or subdomain (dots 1): lowercase letters, digits, '-' (and
 * '.'), starting and ending with a letter or digit. */
static int name_ok(const char *s, int dots)
{
    size_t n = strlen(s);
    if (!n || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < n) &&
            !(dots && c == '.' && i > 0 && i + 1 < n))
            return 0;
    }
    return 1;
}

static int quantity_ok(const char *s, const char *res)
{
    int64_t v;
    return model_quantity_parse(s, model_resource_is_milli(res), &v, NULL) == 0 && v >= 0;
}

static int row(const char *path, int line, char **f, size_t nf, const int *at, struct replay_job *j,
               struct err *err)
{
    const char *v[C_COUNT];
    long long x;
    for (int c = 0; c < C_COUNT; c++)
        v[c] = at[c] >= 0 && (size_t)at[c] < nf ? f[at[c]] : "";
    memset(j, 0, sizeof(*j));
    j->line = line;
    if (seconds(v[C_ARRIVAL], &j->arrival_ms) < 0)
        return bad(err, path, line, C_ARRIVAL, "must be a number of seconds >= 0", v[C_ARRIVAL]);
    if (integer(v[C_PODS], 1, 100000, &x) < 0)
        return bad(err, path, line, C_PODS, "must be an integer from 1 to 100000", v[C_PODS]);
    j->pods = (int)x;
    if (*v[C_GANG] && integer(v[C_GANG], 0, j->pods, &x) < 0)
        return bad(err, path, line, C_GANG, "must be an integer from 0 to pods", v[C_GANG]);
    j->gang = *v[C_GANG] ? (int)x : 0;
    if (*v[C_PRIORITY] && integer(v[C_PRIORITY], -2147483648LL, 1000000000LL, &x) < 0)
        return bad(err, path, line, C_PRIORITY, "must be an integer up to 1000000000",
                   v[C_PRIORITY]);
    j->priority = *v[C_PRIORITY] ? (int32_t)x : 0;
    if (seconds(v[C_RUNTIME], &j->runtime_ms) < 0 || j->runtime_ms <= 0)
        return bad(err, path, line, C_RUNTIME, "must be a number of seconds > 0", v[C_RUNTIME]);
    if (*v[C_LIMIT] && seconds(v[C_LIMIT], &j->limit_ms) < 0)
        return bad(err, path, line, C_LIMIT, "must be a number of seconds >= 0 (0: none)",
                   v[C_LIMIT]);
    /* activeDeadlineSeconds is whole seconds: round a limit up */
    j->limit_ms = (j->limit_ms + 999) / 1000 * 1000;
    if (*v[C_CPU] && !quantity_ok(v[C_CPU], "cpu"))
        return bad(err, path, line, C_CPU, "must be a quantity such as 4 or 500m", v[C_CPU]);
    if (*v[C_MEMORY] && !quantity_ok(v[C_MEMORY], "memory"))
        return bad(err, path, line, C_MEMORY, "must be a quantity such as 16Gi", v[C_MEMORY]);
    if (*v[C_GPU] && integer(v[C_GPU], 0, 1024, &x) < 0)
        return bad(err, path, line, C_GPU, "must be an integer from 0 to 1024", v[C_GPU]);
    j->gpu = *v[C_GPU] ? x : 0;
    if (*v[C_QUEUE] && !name_ok(v[C_QUEUE], 1))
        return bad(err, path, line, C_QUEUE, "must be a queue name (a DNS-1123 subdomain)",
                   v[C_QUEUE]);
    char id[64];
    snprintf(id, sizeof(id), "j%d", line);
    if (*v[C_ID] && (strlen(v[C_ID]) > 50 || !name_ok(v[C_ID], 0)))
        return bad(err, path, line, C_ID,
                   "must be a DNS-1123 label of at most 50 characters (lowercase letters, "
                   "digits, '-')",
                   v[C_ID]);
    j->id = xstrdup(*v[C_ID] ? v[C_ID] : id);
    j->queue = *v[C_QUEUE] ? xstrdup(v[C_QUEUE]) : NULL;
    j->cpu = xstrdup(*v[C_CPU] ? v[C_CPU] : "1");
    j->memory = *v[C_MEMORY] ? xstrdup(v[C_MEMORY]) : NULL;
    j->topology = *v[C_TOPOLOGY] ? xstrdup(v[C_TOPOLOGY]) : NULL;
    return 0;
}

static int cmp_arrival(const void *a, const void *b)
{
    const struct replay_job *x = a, *y = b;
    if (x->arrival_ms != y->arrival_ms)
        return x->arrival_ms < y->arrival_ms ? -1 : 1;
    return x->line - y->line;
}

int replay_trace_load(const char *path, struct replay_trace *t, struct err *err)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL, *fields[C_COUNT + 8];
    size_t cap = 0, capjobs = 0;
    int at[C_COUNT], line = 0, rc = 0, header = 0;
    memset(t, 0, sizeof(*t));
    if (!f)
        return err_set(err, ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    for (int c = 0; c < C_COUNT; c++)
        at[c] = -1;
    json_t *seen = json_object();
    while (rc == 0 && getline(&buf, &cap, f) >= 0) {
        line++;
        char *s = buf + strspn(buf, " \t\r\n");
        if (!*s || *s == '#')
            continue;
        size_t nf = split(s, fields, C_COUNT + 8);
        if (!header) {
            header = 1;
            for (size_t i = 0; i < nf && i < C_COUNT + 8; i++) {
                int c = 0;
                while (c < C_COUNT && strcmp(fields[i], col_names[c]))
                    c++;
                if (c == C_COUNT)
                    rc = err_set(err, ERR_INVALID,
                                 "%s line %d: unknown column '%s' (known: id, arrival, queue, "
                                 "priority, pods, gang, cpu, memory, gpu, topology, runtime, "
                                 "limit)",
                                 path, line, fields[i]);
                else
                    at[c] = (int)i;
            }
            const int need[] = {C_ARRIVAL, C_PODS, C_RUNTIME};
            for (size_t k = 0; rc == 0 && k < 3; k++)
                if (at[need[k]] < 0)
                    rc = err_set(err, ERR_INVALID, "%s line %d: the header has no column '%s'",
                                 path, line, col_names[need[k]]);
            continue;
        }
        XGROW(t->jobs, t->n + 1, capjobs);
        if ((rc = row(path, line, fields, nf, at, &t->jobs[t->n], err)) < 0)
            break;
        struct replay_job *j = &t->jobs[t->n++];
        if (json_object_get(seen, j->id))
            rc = err_set(err, ERR_INVALID, "%s line %d: column 'id': job '%s' is also on line %d",
                         path, line, j->id, (int)json_integer_value(json_object_get(seen, j->id)));
        json_object_set_new(seen, j->id, json_integer(line));
        t->longest_limit_ms = j->limit_ms > t->longest_limit_ms ? j->limit_ms : t->longest_limit_ms;
        t->uses_gpu |= j->gpu > 0;
    }
    if (rc == 0 && ferror(f))
        rc = err_set(err, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    if (rc == 0 && t->n == 0)
        rc = err_set(err, ERR_INVALID, "%s: no jobs (a header line, then one line per job)", path);
    json_decref(seen);
    free(buf);
    fclose(f);
    if (rc < 0)
        replay_trace_free(t);
    else
        qsort(t->jobs, t->n, sizeof(*t->jobs), cmp_arrival);
    return rc;
}

void replay_trace_free(struct replay_trace *t)
{
    for (size_t i = 0; t && i < t->n; i++) {
        free(t->jobs[i].id);
        free(t->jobs[i].queue);
        free(t->jobs[i].cpu);
        free(t->jobs[i].memory);
        free(t->jobs[i].topology);
    }
    if (t) {
        free(t->jobs);
        memset(t, 0, sizeof(*t));
    }
}

int replay_job_is_gang(const struct replay_job *j)
{
    return j->pods > 1 || j->gang > 1;
}

void replay_pod_name(const struct replay_job *j, int i, char *buf, size_t n)
{
    if (replay_job_is_gang(j))
        snprintf(buf, n, "%s-%d", j->id, i);
    else
        snprintf(buf, n, "%s", j->id);
}

json_t *replay_job_docs(const struct replay_job *j, int64_t t0_ms)
{
    json_t *docs = json_array();
    char created[64];
    clock_format_rfc3339(t0_ms + j->arrival_ms, created, sizeof(created));
    int gang = replay_job_is_gang(j);
    if (gang) {
        json_t *ann = json_object();
        if (j->topology) {
            char *spec = xasprintf("{\"gatherStrategy\":[{\"layer\":\"%s\",\"strategy\":"
                                   "\"MustGather\"}]}",
                                   j->topology);
            json_object_set_new(ann, MODEL_ANN_TOPOLOGY_SPEC, json_string(spec));
            free(spec);
        }
        json_t *spec = json_pack("{s:i}", "minMember", j->gang > 0 ? j->gang : j->pods);
        if (j->queue)
            json_object_set_new(spec, "queue", json_string(j->queue));
        json_array_append_new(docs, json_pack("{s:s,s:s,s:{s:s,s:s,s:o},s:o}", "apiVersion",
                                              "scheduling.sigs.k8s.io/v1alpha1", "kind", "PodGroup",
                                              "metadata", "name", j->id, "namespace", "replay",
                                              "annotations", ann, "spec", spec));
    }
    for (int i = 0; i < j->pods; i++) {
        char name[96];
        replay_pod_name(j, i, name, sizeof(name));
        json_t *req = json_pack("{s:s}", "cpu", j->cpu);
        if (j->memory)
            json_object_set_new(req, "memory", json_string(j->memory));
        if (j->gpu)
            json_object_set_new(req, "nvidia.com/gpu", json_integer(j->gpu));
        json_t *spec =
            json_pack("{s:i,s:[{s:s,s:s,s:{s:o}}]}", "priority", (int)j->priority, "containers",
                      "name", "c", "image", "replay", "resources", "requests", req);
        if (j->limit_ms > 0)
            json_object_set_new(spec, "activeDeadlineSeconds", json_integer(j->limit_ms / 1000));
        json_t *meta = json_pack("{s:s,s:s,s:s}", "name", name, "namespace", "replay",
                                 "creationTimestamp", created);
        if (gang)
            json_object_set_new(meta, "labels",
                                json_pack("{s:s}", "pod-group.scheduling.sigs.k8s.io", j->id));
        else if (j->queue)
            json_object_set_new(meta, "annotations",
                                json_pack("{s:s}", MODEL_ANN_QUEUE_NAME, j->queue));
        json_array_append_new(docs, json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind",
                                              "Pod", "metadata", meta, "spec", spec));
    }
    return docs;
}
