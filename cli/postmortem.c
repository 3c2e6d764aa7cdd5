/*
 * postmortem.c - `muster postmortem --job J [--since T] [--until T2] -o DIR`: the job's
 * whole story as a bundle a reader can check offline (docs/postmortem.md), and
 * `muster audit verify --bundle DIR [--key PUB.pem]`, the offline check.
 *
 * The bundle, all from musterd's read API:
 *   timeline.ndjson   one line per audit record naming the job in any role (GET
 *                     /api/v1/audit?job=J): seq, ts, cycle, kind, role, what, nodes, hash
 *   report.md         the readable report: summary, timeline, preemptions both ways (the
 *                     ledger), the nodes at each decision, the audit range and its verdict
 *   timeline.png      the timeline chart (postmortem_chart.c)
 *   nodes/SEQ.json    the job's nodes (those the record names and those holding its pods)
 *                     as they were at each decision (GET /api/v1/state?seq=SEQ)
 *   nodes/end.json    every node the timeline names, at the end of the range (--until's
 *                     last record, else now): who holds the job's nodes after its story
 *   audit.ndjson      the audit records from an anchor (the newest checkpoint at or before
 *                     the first timeline record, else the first record kept) to the last
 *                     timeline record: a range the hash chain verifies on its own
 *   verify.json       musterd's verdict on that range (GET /api/v1/audit/verify; admin)
 *   bundle.json       job, range, counts
 * Nothing is written unless DIR is new or empty; a failure part way leaves what was
 * written and says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "audit_sig.h"
#include "clock.h"
#include "internal.h"

#define MAX_STATES 200 /* decisions whose nodes are fetched: the first ones */

static const char *s_of(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static long long i_of(json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

/* GET path as NDJSON into an array of records (new). */
static int get_ndjson(struct cli *cli, const char *path, json_t **out, struct err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int rc = cli__stream(cli, path, mem, err);
    fclose(mem);
    *out = json_array();
    for (char *line = buf, *nl; rc == 0 && line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        json_t *rec = *line ? json_loads(line, 0, NULL) : NULL;
        if (rec)
            json_array_append_new(*out, rec);
    }
    free(buf);
    return rc;
}

/* ---- the timeline ---- */

static int in_array(json_t *arr, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(arr, i,
                       x) if (json_is_string(x) && !strcmp(json_string_value(x), s)) return 1;
    return 0;
}

/* The job's role in rec (the lanes of the chart). */
static const char *role_of(json_t *rec, const char *job)
{
    const char *kind = s_of(rec, "kind"), *j = s_of(rec, "job"), *pre = s_of(rec, "preemptor");
    int mine = !strcmp(j, job);
    if (mine && (!strcmp(kind, "preempted") || !strcmp(kind, "evicted")))
        return "victim";
    if (!strcmp(pre, job) && !mine)
        return "preemptor";
    if (mine)
        return "decision";
    if (in_array(json_object_get(rec, "clearedJobs"), job))
        return "nominations cleared";
    return "named";
}

/* One line saying what rec did, for the job (new). */
static char *what_of(json_t *rec, const char *role)
{
    const char *kind = s_of(rec, "kind");
    size_t np = json_array_size(json_object_get(rec, "pods"));
    json_t *o = json_object_get(rec, "object");
    if (!strcmp(kind, "preempted") && !strcmp(role, "victim"))
        return xasprintf("%zu pod(s) preempted by %s (ledger entry %lld)", np,
                         s_of(rec, "preemptor"), i_of(rec, "ledger"));
    if (!strcmp(kind, "preempted"))
        return xasprintf("preempted %zu pod(s) of %s (ledger entry %lld)", np, s_of(rec, "job"),
                         i_of(rec, "ledger"));
    if (!strcmp(kind, "evicted"))
        return xasprintf("%s evicted (preemptor %s)",
                         np ? json_string_value(json_array_get(json_object_get(rec, "pods"), 0))
                            : s_of(rec, "pod"),
                         s_of(rec, "preemptor"));
    if (!strcmp(kind, "nominated") && !strcmp(role, "nominations cleared"))
        return xasprintf("its nominations were cleared by %s (ledger entry %lld)", s_of(rec, "job"),
                         i_of(rec, "ledger"));
    if (!strcmp(kind, "nominated"))
        return xasprintf("%zu pod(s) nominated to %zu node(s)%s", np,
                         json_array_size(json_object_get(rec, "nodes")),
                         json_array_size(json_object_get(rec, "clearedJobs"))
                             ? ", clearing others' nominations"
                             : "");
    if (!strcmp(kind, "placed"))
        return xasprintf("%zu pod(s) bound to %zu node(s)", np,
                         json_array_size(json_object_get(rec, "nodes")));
    if (!strcmp(kind, "running"))
        return xasprintf("%zu pod(s) Running", np);
    if (!strcmp(kind, "unschedulable") || !strcmp(kind, "discarded"))
        return xasprintf("%s: %s", s_of(rec, "reason"), s_of(rec, "message"));
    if (o)
        return xasprintf("%s %s %s", *s_of(rec, "action") ? s_of(rec, "action") : kind,
                         s_of(o, "kind"), s_of(o, "name"));
    return xasprintf("%s%s%s", kind, *s_of(rec, "reason") ? ": " : "", s_of(rec, "reason"));
}

static json_t *timeline_of(json_t *recs, const char *job)
{
    json_t *out = json_array(), *rec;
    size_t i;
    json_array_foreach(recs, i, rec)
    {
        const char *role = role_of(rec, job);
        int64_t ms = 0;
        struct err ignored = ERR_INIT;
        clock_parse_rfc3339(s_of(rec, "ts"), &ms, &ignored);
        char *what = what_of(rec, role);
        json_t *e = json_pack(
            "{s:I,s:s,s:I,s:I,s:s,s:s,s:s,s:s}", "seq", (json_int_t)i_of(rec, "seq"), "ts",
            s_of(rec, "ts"), "tsMs", (json_int_t)ms, "cycle", (json_int_t)i_of(rec, "cycle"),
            "kind", s_of(rec, "kind"), "role", role, "what", what, "hash", s_of(rec, "hash"));
        free(what);
        const char *keep[] = {"nodes", "pods", "ledger", "preemptor", "reason"};
        for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
            if (json_object_get(rec, keep[k]))
                json_object_set(e, keep[k], json_object_get(rec, keep[k]));
        json_array_append_new(out, e);
    }
    return out;
}

/* ---- the nodes at a decision ---- */

static int is_decision(json_t *e)
{
    static const char *const kinds[] = {"placed",         "preempted",    "nominated",
                                        "evicted",        "discarded",    "running",
                                        "gang-timed-out", "unschedulable"};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(s_of(e, "kind"), kinds[i]))
            return 1;
    return 0;
}

/* {"asOf", "nodes": [state nodes the record names or holding the job's pods, each with
 * "podsThen": [its pods' entries]]} from a state document. New. */
static json_t *nodes_then(json_t *state, json_t *e, const char *job)
{
    json_t *want = json_object(), *x, *pods = json_object();
    size_t i;
    json_array_foreach(json_object_get(e, "nodes"), i, x) if (json_is_string(x))
        json_object_set_new(want, json_string_value(x), json_true());
    json_array_foreach(json_object_get(state, "pods"), i, x)
    {
        char *key = xasprintf("%s/%s", s_of(x, "namespace"), s_of(x, "name"));
        json_object_set(pods, key, x);
        free(key);
        if (!strcmp(s_of(x, "job"), job)) {
            if (*s_of(x, "node"))
                json_object_set_new(want, s_of(x, "node"), json_true());
            if (*s_of(x, "nominatedNodeName"))
                json_object_set_new(want, s_of(x, "nominatedNodeName"), json_true());
        }
    }
    json_t *nodes = json_array();
    json_array_foreach(json_object_get(state, "nodes"), i, x)
    {
        if (!json_object_get(want, s_of(x, "name")))
            continue;
        json_t *n = json_deep_copy(x), *then = json_array(), *pk;
        size_t k;
        json_array_foreach(json_object_get(x, "pods"), k, pk)
        {
            json_t *p = json_object_get(pods, json_string_value(pk));
            if (p)
                json_array_append(then, p);
        }
        json_object_del(n, "pods");
        json_object_set_new(n, "podsThen", then);
        json_array_append_new(nodes, n);
    }
    json_decref(want);
    json_decref(pods);
    return json_pack("{s:O,s:o}", "asOf", json_object_get(state, "asOf"), "nodes", nodes);
}

/* ---- writing ---- */

static int write_json(const char *dir, const char *name, json_t *doc, size_t flags, struct err *err)
{
    char *path = xasprintf("%s/%s", dir, name);
    int rc = json_dump_file(doc, path, flags) == 0
                 ? 0
                 : err_set(err, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    free(path);
    return rc;
}

static int write_ndjson(const char *dir, const char *name, json_t *arr, struct err *err)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    size_t i;
    json_t *x;
    int rc = 0;
    if (!f)
        rc = err_set(err, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    json_array_foreach(arr, i, x) if (f)
    {
        char *t = json_dumps(x, JSON_COMPACT | JSON_SORT_KEYS);
        fprintf(f, "%s\n", t);
        free(t);
    }
    if (f && fclose(f) != 0)
        rc = err_set(err, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    free(path);
    return rc;
}

/* DIR must be new or empty; created (with DIR/nodes). */
static int prepare_dir(struct cli *cli, const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode))
            return cli__usage_error(cli, "-o '%s' is not a directory", dir);
        char *probe = xasprintf("%s/bundle.json", dir);
        int used = access(probe, F_OK) == 0;
        free(probe);
        char *tl = xasprintf("%s/timeline.ndjson", dir);
        used |= access(tl, F_OK) == 0;
        free(tl);
        if (used)
            return cli__usage_error(cli, "-o '%s' already holds a bundle: give a new directory",
                                    dir);
    } else if (mkdir(dir, 0755) < 0) {
        return cli__usage_error(cli, "cannot create -o '%s': %s", dir, strerror(errno));
    }
    char *nodes = xasprintf("%s/nodes", dir);
    int rc = mkdir(nodes, 0755) < 0 && errno != EEXIST ? -1 : 0;
    free(nodes);
    return rc < 0 ? cli__usage_error(cli, "cannot create '%s/nodes': %s", dir, strerror(errno)) : 0;
}

/* ---- the report ---- */

static void md_ledger(FILE *f, json_t *entries, const char *job, int made)
{
    size_t i;
    json_t *e;
    if (!json_array_size(entries)) {
        fprintf(f, "None.\n\n");
        return;
    }
    json_array_foreach(entries, i, e)
    {
        json_t *cost = json_object_get(e, "cost"), *v;
        size_t k, mine = 0;
        json_array_foreach(json_object_get(e, "victims"), k, v) mine +=
            !strcmp(s_of(v, "job"), job);
        if (made)
            fprintf(
                f,
                "- Ledger entry %lld, cycle %lld, %s: preempted %lld pod(s), %lld gang(s) broken",
                i_of(e, "id"), i_of(e, "cycle"), s_of(e, "ts"), i_of(cost, "pods"),
                i_of(cost, "gangsBroken"));
        else
            fprintf(f,
                    "- Ledger entry %lld, cycle %lld, %s: **%s** (priority %lld) evicted %zu of "
                    "its pods",
                    i_of(e, "id"), i_of(e, "cycle"), s_of(e, "ts"), s_of(e, "preemptor"),
                    i_of(e, "priority"), mine);
        json_t *rf;
        json_array_foreach(json_object_get(e, "roomFrom"), k, rf)
            fprintf(f, "; took the room of %zu pod(s) that **%s** preempted (ledger entry %lld)",
                    json_array_size(json_object_get(rf, "pods")), s_of(rf, "preemptor"),
                    i_of(rf, "ledger"));
        if (json_is_true(json_object_get(e, "bound")))
            fprintf(f, "; the preemptor bound %.1f s later%s",
                    (double)i_of(e, "latencyMs") / 1000.0,
                    json_is_true(json_object_get(e, "boundOnNominatedNodes"))
                        ? " on the nominated nodes"
                        : "");
        else
            fprintf(f, "; the preemptor had not bound yet");
        fprintf(f, ".\n");
    }
    fprintf(f, "\n");
}

struct story {
    const char *job, *since, *until, *dir, *server;
    json_t *timeline, *made, *suffered, *why, *states, *verify, *end;
    uint64_t from, to, records;
};

static void md_counts(FILE *f, struct story *s)
{
    const char *roles[] = {"decision", "preemptor", "victim", "nominations cleared", "named"};
    size_t i, n[5] = {0};
    json_t *e;
    json_array_foreach(s->timeline, i, e) for (size_t r = 0; r < 5; r++) n[r] +=
        !strcmp(s_of(e, "role"), roles[r]);
    fprintf(f,
            "- %zu audit records name the job: %zu of its own decisions, %zu as preemptor, %zu as "
            "victim, %zu clearing its nominations, %zu naming it otherwise.\n",
            json_array_size(s->timeline), n[0], n[1], n[2], n[3], n[4]);
    json_t *p = json_object_get(s->why, "primary");
    if (s->why)
        fprintf(f, "- Now: %s%s%s%s.\n", *s_of(s->why, "state") ? s_of(s->why, "state") : "?",
                json_is_object(p) ? " (" : "", json_is_object(p) ? s_of(p, "code") : "",
                json_is_object(p) ? ")" : "");
    json_t *rt;
    json_array_foreach(json_object_get(s->why, "roomTakenBy"), i, rt) fprintf(
        f, "- **%s** took the room of %zu of its evicted pods (ledger entry %lld).\n",
        s_of(rt, "preemptor"), json_array_size(json_object_get(rt, "pods")), i_of(rt, "ledger"));
}

static void md_nodes(FILE *f, json_t *then)
{
    size_t k;
    json_t *n;
    fprintf(f, "| node | pods |\n| --- | --- |\n");
    json_array_foreach(json_object_get(then, "nodes"), k, n)
    {
        fprintf(f, "| %s%s | ", s_of(n, "name"),
                json_is_true(json_object_get(n, "unschedulable")) ? " (cordoned)" : "");
        size_t m;
        json_t *p;
        json_array_foreach(json_object_get(n, "podsThen"), m, p) fprintf(
            f, "%s%s/%s (%s, %s)", m ? ", " : "", s_of(p, "namespace"), s_of(p, "name"),
            s_of(p, "job"),
            json_is_true(json_object_get(p, "deleting")) ? "Terminating" : s_of(p, "phase"));
        if (!json_array_size(json_object_get(n, "podsThen")))
            fprintf(f, "(none)");
        fprintf(f, " |\n");
    }
    fprintf(f, "\n");
}

static int write_report(struct story *s, struct err *err)
{
    char *path = xasprintf("%s/report.md", s->dir);
    FILE *f = fopen(path, "w");
    size_t i;
    json_t *e;
    if (!f) {
        int rc = err_set(err, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        free(path);
        return rc;
    }
    fprintf(f, "# Post-mortem: %s\n\n", s->job);
    fprintf(
        f, "Written by `muster postmortem --job %s%s%s%s%s` from %s. Audit records %llu..%llu.\n\n",
        s->job, s->since ? " --since " : "", s->since ? s->since : "", s->until ? " --until " : "",
        s->until ? s->until : "", s->server, (unsigned long long)s->from,
        (unsigned long long)s->to);
    fprintf(f, "## Summary\n\n");
    md_counts(f, s);
    fprintf(f, "\n![timeline](timeline.png)\n\n## Timeline\n\n");
    fprintf(f,
            "| seq | time | cycle | role | kind | what |\n| --- | --- | --- | --- | --- | --- |\n");
    json_array_foreach(s->timeline, i, e)
        fprintf(f, "| %lld | %s | %lld | %s | %s | %s |\n", i_of(e, "seq"), s_of(e, "ts"),
                i_of(e, "cycle"), s_of(e, "role"), s_of(e, "kind"), s_of(e, "what"));
    fprintf(f, "\n## Preemptions\n\n### Suffered (the job as a victim)\n\n");
    md_ledger(f, s->suffered, s->job, 0);
    fprintf(f, "### Made (the job as preemptor)\n\n");
    md_ledger(f, s->made, s->job, 1);
    fprintf(f, "## Nodes at each decision\n\n");
    json_array_foreach(s->timeline, i, e)
    {
        char key[32];
        snprintf(key, sizeof(key), "%lld", i_of(e, "seq"));
        json_t *st = json_object_get(s->states, key);
        if (!st)
            continue;
        fprintf(f, "### Record %s (%s, %s): `nodes/%s.json`\n\n", key, s_of(e, "kind"),
                s_of(e, "ts"), key);
        md_nodes(f, st);
    }
    fprintf(f,
            "## Its nodes at the end (`nodes/end.json`, %s)\n\n"
            "Every node the timeline names, as of audit record %lld: who holds them after "
            "the job's story.\n\n",
            s->until ? "the last record of the range" : "now",
            i_of(json_object_get(s->end, "asOf"), "seq"));
    md_nodes(f, s->end);
    fprintf(f, "## Audit range and verification\n\n");
    fprintf(f,
            "`audit.ndjson` holds records %llu..%llu (%llu records), from the anchor the hash "
            "chain verifies from (record 1, or a checkpoint) to the last record of the "
            "timeline; every timeline line carries its record's hash.\n\n",
            (unsigned long long)s->from, (unsigned long long)s->to, (unsigned long long)s->records);
    if (json_object_get(s->verify, "error"))
        fprintf(f, "musterd's verification was not available: %s\n\n", s_of(s->verify, "error"));
    else
        fprintf(f, "musterd verified the range: %s (%s).\n\n",
                json_is_true(json_object_get(s->verify, "ok")) ? "ok" : "BROKEN",
                s_of(s->verify, "reason"));
    fprintf(f,
            "Check it offline: `muster audit verify --bundle %s` (with `--key PUB.pem` when "
            "musterd signs checkpoints).\n",
            s->dir);
    int rc = fclose(f) ? err_set(err, ERR_IO, "cannot write '%s': %s", path, strerror(errno)) : 0;
    free(path);
    return rc;
}

/* ---- the command ---- */

/* The anchor of the range: the newest checkpoint at or before seq, else the first record. */
static uint64_t anchor_of(struct cli *cli, uint64_t seq, struct err *err)
{
    json_t *recs = NULL;
    char *path = xasprintf("/api/v1/audit?kind=checkpoint&to=%llu", (unsigned long long)seq);
    uint64_t a = 0;
    if (get_ndjson(cli, path, &recs, err) == 0 && json_array_size(recs))
        a = (uint64_t)i_of(json_array_get(recs, json_array_size(recs) - 1), "seq");
    free(path);
    json_decref(recs);
    if (a)
        return a;
    if (get_ndjson(cli, "/api/v1/audit?limit=1", &recs, err) == 0 && json_array_size(recs))
        a = (uint64_t)i_of(json_array_get(recs, 0), "seq");
    json_decref(recs);
    return a;
}

static int fetch_states(struct cli *cli, struct story *s, struct err *err)
{
    size_t i, n = 0;
    json_t *e;
    s->states = json_object();
    json_array_foreach(s->timeline, i, e)
    {
        if (!is_decision(e) || n >= MAX_STATES)
            continue;
        char key[32], *path;
        snprintf(key, sizeof(key), "%lld", i_of(e, "seq"));
        path = xasprintf("/api/v1/state?seq=%s", key);
        json_t *state = NULL;
        int rc = cli__call(cli, "GET", path, NULL, 0, NULL, &state, err);
        free(path);
        if (rc < 0)
            return rc;
        json_t *then = nodes_then(state, e, s->job);
        json_decref(state);
        char *name = xasprintf("nodes/%s.json", key);
        rc = write_json(s->dir, name, then, JSON_INDENT(1) | JSON_SORT_KEYS, err);
        free(name);
        json_object_set_new(s->states, key, then);
        if (rc < 0)
            return rc;
        n++;
    }
    return 0;
}

/* nodes/end.json: the nodes of the whole timeline at its last record (or now). */
static int fetch_end(struct cli *cli, struct story *s, struct err *err)
{
    json_t *all = json_object(), *e, *n, *state = NULL;
    size_t i, k;
    json_array_foreach(s->timeline, i, e)
        json_array_foreach(json_object_get(e, "nodes"), k, n) if (json_is_string(n))
            json_object_set_new(all, json_string_value(n), json_true());
    json_t *names = json_array();
    const char *name;
    json_object_foreach(all, name, n) json_array_append_new(names, json_string(name));
    json_decref(all);
    char *path = s->until ? xasprintf("/api/v1/state?seq=%llu", (unsigned long long)s->to)
                          : xstrdup("/api/v1/state");
    int rc = cli__call(cli, "GET", path, NULL, 0, NULL, &state, err);
    free(path);
    if (rc == 0) {
        json_t *fake = json_pack("{s:o}", "nodes", names);
        names = NULL;
        s->end = nodes_then(state, fake, s->job);
        json_decref(fake);
        rc = write_json(s->dir, "nodes/end.json", s->end, JSON_INDENT(1) | JSON_SORT_KEYS, err);
    }
    json_decref(names);
    json_decref(state);
    return rc;
}

static int story_fetch(struct cli *cli, struct story *s, struct err *err)
{
    json_t *recs = NULL, *doc = NULL;
    char *path = xstrdup("/api/v1/audit");
    cli__query(&path, "job", s->job);
    cli__query(&path, "since", s->since);
    cli__query(&path, "until", s->until);
    int rc = get_ndjson(cli, path, &recs, err);
    free(path);
    if (rc == 0 && !json_array_size(recs))
        rc = err_set(err, ERR_NOT_FOUND, "no audit record names job '%s'%s", s->job,
                     s->since || s->until ? " in that range" : "");
    if (rc < 0) {
        json_decref(recs);
        return rc;
    }
    s->timeline = timeline_of(recs, s->job);
    json_decref(recs);
    s->to = (uint64_t)i_of(json_array_get(s->timeline, json_array_size(s->timeline) - 1), "seq");
    path = xstrdup("/api/v1/preemptions");
    cli__query(&path, "job", s->job);
    if ((rc = cli__call(cli, "GET", path, NULL, 0, NULL, &doc, err)) == 0)
        s->made = json_incref(cli__items(doc));
    json_decref(doc);
    free(path);
    path = xstrdup("/api/v1/preemptions");
    cli__query(&path, "victim", s->job);
    if (rc == 0 && (rc = cli__call(cli, "GET", path, NULL, 0, NULL, &doc, err)) == 0)
        s->suffered = json_incref(cli__items(doc));
    json_decref(doc);
    free(path);
    if (rc < 0)
        return rc;
    struct err ignored = ERR_INIT;
    path = xasprintf("/api/v1/jobs/%s/why", s->job);
    if (cli__call(cli, "GET", path, NULL, 0, NULL, &s->why, &ignored) < 0)
        s->why = NULL; /* the job may be gone: the story stands without "now" */
    free(path);
    return 0;
}

static int story_audit(struct cli *cli, struct story *s, struct err *err)
{
    uint64_t first = (uint64_t)i_of(json_array_get(s->timeline, 0), "seq");
    s->from = anchor_of(cli, first, err);
    if (!s->from)
        return err_set(err, ERR_NOT_FOUND, "cannot find where the audit log starts");
    char *path = xasprintf("/api/v1/audit?from=%llu&to=%llu", (unsigned long long)s->from,
                           (unsigned long long)s->to);
    char *file = xasprintf("%s/audit.ndjson", s->dir);
    FILE *f = fopen(file, "w");
    int rc = f ? cli__stream(cli, path, f, err)
               : err_set(err, ERR_IO, "cannot write '%s': %s", file, strerror(errno));
    if (f && fclose(f) && rc == 0)
        rc = err_set(err, ERR_IO, "cannot write '%s': %s", file, strerror(errno));
    free(path);
    free(file);
    s->records = s->to - s->from + 1;
    if (rc < 0)
        return rc;
    struct err verr = ERR_INIT;
    path = xasprintf("/api/v1/audit/verify?from=%llu&to=%llu", (unsigned long long)s->from,
                     (unsigned long long)s->to);
    if (cli__call(cli, "GET", path, NULL, 0, NULL, &s->verify, &verr) < 0)
        s->verify = json_pack("{s:s}", "error", verr.msg);
    free(path);
    return write_json(s->dir, "verify.json", s->verify, JSON_INDENT(1) | JSON_SORT_KEYS, err);
}

int cli__cmd_postmortem(struct cli *cli)
{
    struct err err = ERR_INIT;
    struct story s = {.job = cli__flag(cli, "job"),
                      .since = cli__flag(cli, "since"),
                      .until = cli__flag(cli, "until"),
                      .dir = cli__flag(cli, "output"),
                      .server = cli->server};
    int64_t ms;
    int rc;
    if (cli->npos)
        return cli__usage_error(cli, "postmortem takes no arguments: --job NS/NAME -o DIR");
    if (!s.job || !strchr(s.job, '/'))
        return cli__usage_error(cli, "postmortem needs --job NAMESPACE/NAME");
    if (!s.dir || !*s.dir)
        return cli__usage_error(cli, "postmortem needs -o DIR (the bundle's directory)");
    if ((s.since && clock_parse_rfc3339(s.since, &ms, &err) < 0) ||
        (s.until && clock_parse_rfc3339(s.until, &ms, &err) < 0))
        return cli__usage_error(
            cli, "--%s '%s' is not an RFC 3339 time",
            s.since && clock_parse_rfc3339(s.since, &ms, &err) < 0 ? "since" : "until",
            s.since && clock_parse_rfc3339(s.since, &ms, &err) < 0 ? s.since : s.until);
    if ((rc = story_fetch(cli, &s, &err)) < 0)
        goto fail;
    if ((rc = prepare_dir(cli, s.dir)) != 0)
        goto out;
    char *title = xasprintf("%s: records %lld..%lld", s.job,
                            i_of(json_array_get(s.timeline, 0), "seq"), (long long)s.to);
    char *png = xasprintf("%s/timeline.png", s.dir);
    rc = write_ndjson(s.dir, "timeline.ndjson", s.timeline, &err);
    if (rc == 0)
        rc = cli__postmortem_chart(s.timeline, title, png, &err);
    free(title);
    free(png);
    if (rc == 0)
        rc = fetch_states(cli, &s, &err);
    if (rc == 0)
        rc = fetch_end(cli, &s, &err);
    if (rc == 0)
        rc = story_audit(cli, &s, &err);
    if (rc == 0)
        rc = write_report(&s, &err);
    if (rc == 0) {
        json_t *b = json_pack("{s:s,s:s?,s:s?,s:I,s:I,s:I,s:I,s:[sssss]}", "job", s.job, "since",
                              s.since, "until", s.until, "from", (json_int_t)s.from, "to",
                              (json_int_t)s.to, "records", (json_int_t)s.records, "timeline",
                              (json_int_t)json_array_size(s.timeline), "files", "timeline.ndjson",
                              "report.md", "timeline.png", "audit.ndjson", "verify.json");
        rc = write_json(s.dir, "bundle.json", b, JSON_INDENT(1) | JSON_SORT_KEYS, &err);
        json_decref(b);
    }
    if (rc < 0)
        goto fail;
    printf("wrote %s: %zu timeline records, %zu node snapshots, audit records %llu..%llu "
           "(musterd: %s)\n",
           s.dir, json_array_size(s.timeline), json_object_size(s.states),
           (unsigned long long)s.from, (unsigned long long)s.to,
           json_object_get(s.verify, "error")              ? "verification not available"
           : json_is_true(json_object_get(s.verify, "ok")) ? "verified"
                                                           : "BROKEN");
    rc = CLI_EXIT_OK;
    goto out;
fail:
    rc = cli__fail(cli, &err);
out:
    json_decref(s.timeline);
    json_decref(s.made);
    json_decref(s.suffered);
    json_decref(s.why);
    json_decref(s.states);
    json_decref(s.verify);
    json_decref(s.end);
    return rc;
}

/* ---- muster audit verify --bundle DIR ---- */

/* Every timeline line is a record of audit.ndjson, with its hash. 0, or -1 with why. */
static int timeline_in_audit(const char *dir, json_t *hashes, char *why, size_t n)
{
    char *path = xasprintf("%s/timeline.ndjson", dir);
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, lines = 0;
    if (!f) {
        snprintf(why, n, "cannot read '%s': %s", path, strerror(errno));
        free(path);
        return -1;
    }
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        json_t *e = json_loads(line, 0, NULL);
        char key[32];
        lines++;
        snprintf(key, sizeof(key), "%lld", i_of(e, "seq"));
        const char *h = json_string_value(json_object_get(hashes, key));
        if (!e || !h || strcmp(h, s_of(e, "hash"))) {
            snprintf(why, n, "timeline line %d (record %s) is %s", lines, key,
                     !e   ? "not JSON"
                     : !h ? "not in audit.ndjson"
                          : "not the record of that seq");
            rc = -1;
        }
        json_decref(e);
    }
    if (rc == 0 && !lines) {
        snprintf(why, n, "the timeline is empty");
        rc = -1;
    }
    free(line);
    fclose(f);
    free(path);
    return rc;
}

int cli__bundle_verify(struct cli *cli)
{
    const char *dir = cli__flag(cli, "bundle"), *kp = cli__flag(cli, "key");
    struct store_audit_key *key = NULL;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;
    json_t *hashes = json_object();
    char *path = xasprintf("%s/audit.ndjson", dir), *line = NULL, why[512] = "";
    size_t cap = 0;
    ssize_t n;
    int rc = CLI_EXIT_OK;
    FILE *in = NULL;
    if (cli__flag(cli, "from") || cli__flag(cli, "to") || cli__flag(cli, "filename")) {
        rc = cli__usage_error(cli, "audit verify --bundle checks the bundle's own range: no "
                                   "--from, --to or -f");
        goto out;
    }
    if (kp && store_audit_key_load(kp, &key, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    if (!(in = fopen(path, "rb"))) {
        rc = cli__usage_error(cli, "'%s' is not a post-mortem bundle: cannot read '%s': %s", dir,
                              path, strerror(errno));
        goto out;
    }
    struct store_audit_offline *o = store_audit_offline_new(key);
    while ((n = getline(&line, &cap, in)) >= 0) {
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        json_t *rec = json_loads(line, 0, NULL);
        char k[32];
        snprintf(k, sizeof(k), "%lld", i_of(rec, "seq"));
        if (rec)
            json_object_set_new(hashes, k, json_string(s_of(rec, "hash")));
        json_decref(rec);
        if (store_audit_offline_line(o, line, (size_t)n))
            break;
    }
    store_audit_offline_finish(o, &v);
    int tl = v.ok ? timeline_in_audit(dir, hashes, why, sizeof(why)) : 0;
    if (!v.ok)
        printf("bundle %s BROKEN: audit.ndjson at record %llu: %s\n", dir,
               (unsigned long long)v.first_bad, v.reason);
    else if (tl < 0)
        printf("bundle %s BROKEN: %s\n", dir, why);
    else
        printf("bundle %s ok: audit records %llu..%llu verify (%llu checked); every timeline "
               "record is one of them; %s\n",
               dir, (unsigned long long)v.from, (unsigned long long)v.to,
               (unsigned long long)v.checked,
               key             ? (v.checkpoints ? "signed checkpoints verified with the key"
                                                : "no checkpoint in range: nothing signed to check")
               : v.checkpoints ? "checkpoints checked for fit only (give --key to check their "
                                 "signatures)"
                               : "no checkpoint in range (musterd has no audit key)");
    rc = v.ok && tl == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
out:
    if (in)
        fclose(in);
    free(line);
    free(path);
    json_decref(hashes);
    store_audit_key_free(key);
    return rc;
}
