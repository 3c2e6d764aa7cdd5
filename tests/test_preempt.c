/*
 * test_preempt.c - job-level preemption: case folders (tests/data/preempt/<case>/
 * cluster.yaml + expected.json), the ledger and its filters, preemptedBy, the why
 * verdicts, a rebuilt view equal to the live one, and the bundled demo's preemptions end to
 * end (nominated == bound nodes, victims gone whole). The victims' side is test_victims.c;
 * the grace period, the evictions and the preemptor's binding test_preempt_grace.c.
 *
 * expected.json: cycles (default 1), tick (seconds between cycles, default 1), after
 * (objects deleted between cycles, sched_util.h sched_util_case_after),
 * victims (sorted pod keys over all ledger entries), nominations {pod: node or ""},
 * placements {pod: node, "" unbound, null removed}, states {job: state}, preemption
 * {job: verdict code}, primary {job: code}, whyPreemption {job: text in the reason},
 * audit {kind: count}, ledger {entries, gangsBroken, planBreaksNoGang, bound,
 * boundOnNominatedNodes, victimQueues (sorted names)} (of the last entry), lastEntry
 * {path: value} (of the last entry: "kind", "queue/name"), why {job: {path: value}} and
 * queues {queue: {path: value}} (sched_util.h).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_support.h"
#include "err.h"
#include "http_client.h"
#include "scheduler.h"
#include "sched_invariants.h"
#include "sched_util.h"
#include "why.h"

static int cmp_json_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* Sorted pod keys of every victim in the ledger (new). */
static json_t *ledger_victims(json_t *entries)
{
    json_t *keys[1024];
    size_t n = 0, i, k;
    json_t *e, *x;
    json_array_foreach(entries, i, e)
    {
        json_array_foreach(json_object_get(e, "victims"), k, x)
        {
            if (n < 1024)
                keys[n++] = json_object_get(x, "pod");
        }
    }
    qsort(keys, n, sizeof(*keys), cmp_json_str);
    json_t *out = json_array();
    for (i = 0; i < n; i++)
        json_array_append(out, keys[i]);
    return out;
}

static void check_placements(struct sched_util *u, const char *name, json_t *exp)
{
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(exp, "placements"), key, val)
    {
        char *node = sched_util_node_of(u, key);
        if (json_is_null(val))
            ck_assert_msg(node == NULL, "case '%s': pod '%s' still exists on '%s'", name, key,
                          node);
        else
            ck_assert_msg(node && !strcmp(node, json_string_value(val)),
                          "case '%s': pod '%s' on '%s', expected '%s'", name, key,
                          node ? node : "(gone)", json_string_value(val));
        free(node);
    }
    json_object_foreach(json_object_get(exp, "nominations"), key, val)
    {
        json_t *pod = sched_util_pod(u, key);
        ck_assert_msg(pod != NULL, "case '%s': pod '%s' missing", name, key);
        const char *nom = sched_util_str2(pod, "status", "nominatedNodeName");
        ck_assert_msg(!strcmp(nom ? nom : "", json_string_value(val)),
                      "case '%s': pod '%s' nominated to '%s', expected '%s'", name, key,
                      nom ? nom : "", json_string_value(val));
        json_decref(pod);
    }
}

/* The why document's blockers agree with its preemption part: every PREEMPTION blocker
 * carries the verdict's code, and a verdict that blocks (Preempting, PreemptionWaiting)
 * is among the blockers. */
static void check_verdict_blockers(struct sched_util *u, const char *name, const char *id)
{
    json_t *w = sched_util_why(u, id), *b;
    const char *verdict = sched_util_str2(w, "preemption", "code");
    int blocks = verdict && (!strcmp(verdict, why_code_name(WHY_PREEMPTING)) ||
                             !strcmp(verdict, why_code_name(WHY_PREEMPTION_WAITING)));
    int found = 0;
    size_t i;
    json_array_foreach(json_object_get(w, "blockers"), i, b)
    {
        const char *cls = json_string_value(json_object_get(b, "class"));
        const char *code = json_string_value(json_object_get(b, "code"));
        if (!cls || strcmp(cls, why_class_name(WHY_CLASS_PREEMPTION)))
            continue;
        ck_assert_msg(verdict && !strcmp(code, verdict),
                      "case '%s': job '%s' has blocker %s but preemption verdict %s", name, id,
                      code, verdict ? verdict : "(none)");
        found = 1;
    }
    ck_assert_msg(!blocks || found, "case '%s': job '%s': verdict %s is not among the blockers",
                  name, id, verdict);
    json_decref(w);
}

static void check_jobs(struct sched_util *u, const char *name, json_t *exp)
{
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(exp, "states"), key, val)
    {
        json_t *j = sched_util_job(u, key);
        const char *state = json_string_value(json_object_get(j, "state"));
        ck_assert_msg(!strcmp(state, json_string_value(val)),
                      "case '%s': job '%s' is %s, expected %s", name, key, state,
                      json_string_value(val));
        json_decref(j);
    }
    json_object_foreach(json_object_get(exp, "preemption"), key, val)
    {
        json_t *w = sched_util_why(u, key);
        const char *code = sched_util_str2(w, "preemption", "code");
        ck_assert_msg(code && !strcmp(code, json_string_value(val)),
                      "case '%s': job '%s' preemption %s (%s), expected %s", name, key,
                      code ? code : "(none)", sched_util_str2(w, "preemption", "reason"),
                      json_string_value(val));
        json_decref(w);
    }
    json_object_foreach(json_object_get(exp, "preemption"), key, val)
        check_verdict_blockers(u, name, key);
    json_object_foreach(json_object_get(exp, "whyPreemption"), key, val)
    {
        json_t *w = sched_util_why(u, key);
        const char *reason = sched_util_str2(w, "preemption", "reason");
        ck_assert_msg(reason && strstr(reason, json_string_value(val)),
                      "case '%s': job '%s' preemption reason '%s' lacks '%s'", name, key, reason,
                      json_string_value(val));
        json_decref(w);
    }
    json_object_foreach(json_object_get(exp, "primary"), key, val)
    {
        json_t *w = sched_util_why(u, key);
        const char *code = sched_util_str2(w, "primary", "code");
        ck_assert_msg(code && !strcmp(code, json_string_value(val)),
                      "case '%s': job '%s' primary %s, expected %s", name, key,
                      code ? code : "(none)", json_string_value(val));
        json_decref(w);
    }
    json_object_foreach(json_object_get(exp, "audit"), key, val)
    {
        int n = sched_util_audit_count(u, key, NULL);
        ck_assert_msg(n == json_integer_value(val), "case '%s': %d audit '%s' records, expected %d",
                      name, n, key, (int)json_integer_value(val));
    }
}

/* "ledger": {"victimQueues": [names, sorted]}: the queues the last entry took jobs from. */
static void check_victim_queues(const char *name, json_t *want, json_t *last)
{
    json_t *names[64], *q;
    size_t i, n = 0;
    if (!want)
        return;
    json_array_foreach(json_object_get(last, "victimQueues"), i, q)
    {
        if (n < 64)
            names[n++] = json_object_get(q, "name");
    }
    qsort(names, n, sizeof(*names), cmp_json_str);
    json_t *got = json_array();
    for (i = 0; i < n; i++)
        json_array_append(got, names[i]);
    char *gs = json_dumps(got, JSON_COMPACT);
    ck_assert_msg(json_equal(got, want), "case '%s': ledger victimQueues %s", name, gs);
    free(gs);
    json_decref(got);
}

static void check_ledger(struct sched_util *u, const char *name, json_t *exp)
{
    json_t *entries = sched_util_ledger(u, NULL, NULL, NULL), *victims = ledger_victims(entries);
    json_t *want = json_object_get(exp, "victims");
    char *got = json_dumps(victims, JSON_COMPACT);
    ck_assert_msg(!want || json_equal(victims, want), "case '%s': victims %s", name, got);
    free(got);
    json_t *l = json_object_get(exp, "ledger"),
           *last = json_array_get(entries, json_array_size(entries) - 1);
    json_t *n = json_object_get(l, "entries");
    if (n)
        ck_assert_msg(json_array_size(entries) == (size_t)json_integer_value(n),
                      "case '%s': %zu ledger entries, expected %d", name, json_array_size(entries),
                      (int)json_integer_value(n));
    static const char *const cost_keys[] = {"gangsBroken", "planBreaksNoGang"};
    for (size_t i = 0; i < 2; i++)
        if (json_object_get(l, cost_keys[i]))
            ck_assert_msg(json_equal(json_object_get(json_object_get(last, "cost"), cost_keys[i]),
                                     json_object_get(l, cost_keys[i])),
                          "case '%s': ledger cost.%s differs", name, cost_keys[i]);
    static const char *const keys[] = {"bound", "boundOnNominatedNodes"};
    for (size_t i = 0; i < 2; i++)
        if (json_object_get(l, keys[i]))
            ck_assert_msg(json_equal(json_object_get(last, keys[i]), json_object_get(l, keys[i])),
                          "case '%s': ledger %s differs", name, keys[i]);
    check_victim_queues(name, json_object_get(l, "victimQueues"), last);
    sched_util_expect_paths(name, "last ledger entry", last, json_object_get(exp, "lastEntry"));
    /* Every pod marked for deletion is a victim with a ledger entry. */
    size_t i;
    json_t *p;
    json_t *all = sched_view_dump(u->s);
    const char *key;
    json_object_foreach(json_object_get(all, "pods"), key, p)
    {
        json_t *pod = sched_util_pod(u, key);
        int marked = json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL;
        int listed = 0;
        json_array_foreach(victims, i, p) listed |= !strcmp(json_string_value(p), key);
        ck_assert_msg(!marked || listed, "case '%s': pod '%s' terminating without a ledger entry",
                      name, key);
        json_decref(pod);
    }
    json_decref(all);
    json_decref(victims);
    json_decref(entries);
}

static void run_case(const char *dir, const char *name)
{
    char path[2400];
    snprintf(path, sizeof(path), "%s/%s/cluster.yaml", dir, name);
    char *yaml = sched_util_read(path);
    ck_assert_msg(yaml != NULL, "case '%s': cannot read '%s'", name, path);
    snprintf(path, sizeof(path), "%s/%s/expected.json", dir, name);
    json_error_t jerr;
    json_t *exp = json_load_file(path, 0, &jerr);
    ck_assert_msg(exp != NULL, "case '%s': expected.json: %s", name, jerr.text);
    struct sched_options opts = {.mark_running = 1};
    struct sched_util u;
    sched_util_open(&u, &opts);
    json_decref(sched_util_apply(&u, yaml, 1000));
    json_int_t cycles = json_integer_value(json_object_get(exp, "cycles"));
    json_int_t tick = json_integer_value(json_object_get(exp, "tick"));
    for (json_int_t i = 0; i < (cycles ? cycles : 1); i++) {
        int64_t at = 2000 + i * (tick ? tick : 1) * 1000;
        json_decref(sched_util_cycle(&u, at));
        sched_util_case_after(&u, name, exp, (int)i + 1, at + 500);
    }
    check_placements(&u, name, exp);
    check_jobs(&u, name, exp);
    check_ledger(&u, name, exp);
    sched_util_expect_why(&u, name, exp);
    sched_util_expect_queues(&u, name, exp);
    char msg[512];
    /* invariantsExempt: gangs the case's own input leaves partly bound */
    ck_assert_msg(sched_invariants_check_ex(u.st, 0, json_object_get(exp, "invariantsExempt"), msg,
                                            sizeof(msg)) == 0,
                  "case '%s': %s", name, msg);
    json_t *live = sched_view_dump(u.s), *stored = NULL;
    struct err err = ERR_INIT;
    ck_assert(sched_view_dump_store(u.s, &stored, &err) == 0);
    ck_assert_msg(json_equal(live, stored), "case '%s': live view differs from the store", name);
    json_decref(live);
    json_decref(stored);
    sched_util_close(&u);
    json_decref(exp);
    free(yaml);
}

START_TEST(test_preempt_cases)
{
    char *dir = sched_util_case_path("preempt", "");
    json_t *cases = sched_util_cases("preempt");
    ck_assert_uint_ge(json_array_size(cases), 12);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) run_case(dir, json_string_value(c));
    json_decref(cases);
    free(dir);
}
END_TEST

START_TEST(test_preempt_ledger_filters)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_util_two_rounds(&u);
    json_t *all = sched_util_ledger(&u, NULL, NULL, NULL);
    ck_assert_int_eq(json_array_size(all), 2);
    json_t *e = json_array_get(all, 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "preemptor")), "default/hi-1");
    ck_assert_str_eq(json_string_value(json_object_get(e, "triggerPod")), "default/hi-1");
    json_t *want = json_pack("[{s:s,s:s,s:s,s:i,s:s}]", "pod", "default/lo-1", "job",
                             "default/lo-1", "node", "n1", "priority", 1, "queue", "default");
    ck_assert(json_equal(json_object_get(e, "victims"), want));
    /* one queue: a preemption by priority, not a reclaim */
    ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), "preemption");
    ck_assert_ptr_null(json_object_get(e, "victimQueues"));
    json_decref(want);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(e, "cost"), "pods")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "id")), 1);
    json_t *one = sched_util_ledger(&u, "default/hi-2", NULL, NULL);
    ck_assert_int_eq(json_array_size(one), 1);
    json_t *v = json_array_get(json_object_get(json_array_get(one, 0), "victims"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(v, "pod")), "default/lo-2");
    json_decref(one);
    one = sched_util_ledger(&u, NULL, "default/lo-1", NULL);
    ck_assert_int_eq(json_array_size(one), 1);
    json_decref(one);
    one = sched_util_ledger(&u, NULL, NULL, "2");
    ck_assert_int_eq(json_array_size(one), 1);
    json_decref(one);
    one = sched_util_ledger(&u, NULL, NULL, "1970-01-01T00:00:03Z");
    ck_assert_int_eq(json_array_size(one), 1);
    json_decref(one);
    struct err err = ERR_INIT;
    json_t *bad = NULL;
    ck_assert_int_eq(sched_preemptions(u.s, NULL, NULL, "yesterday", &bad, &err), ERR_INVALID);
    /* victim -> preemptor */
    json_t *j = sched_util_job(&u, "default/lo-2");
    ck_assert_str_eq(sched_util_str2(j, "preemptedBy", "preemptor"), "default/hi-2");
    json_decref(j);
    j = sched_util_job(&u, "default/hi-1");
    ck_assert(json_is_null(json_object_get(j, "preemptedBy")));
    json_decref(j);
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

/* A higher-priority job that takes a lower preemptor's nominated room without preempting
 * (its victims are gone, and a nomination reserves only against lower priorities) clears the
 * lower one's plan too: the ledger (nominationsCleared by it, byLedger 0), an audit record
 * and both whys say so, instead of a nomination that silently goes stale. */
START_TEST(test_preempt_nomination_displaced_by_placement)
{
    struct sched_util u;
    sched_util_mid_nominated_then_hi(&u);
    json_decref(sched_util_cycle(&u, 13000)); /* lo gone: hi (first by priority) takes n1 */
    char *node = sched_util_node_of(&u, "default/hi");
    ck_assert_str_eq(node, "n1");
    free(node);
    json_t *l = sched_util_ledger(&u, "default/hi", NULL, NULL);
    ck_assert_int_eq(json_array_size(l), 0); /* hi did not preempt */
    json_decref(l);
    l = sched_util_ledger(&u, "default/mid", NULL, NULL);
    json_t *e = json_array_get(l, 0);
    ck_assert_str_eq(sched_util_str2(e, "nominationsCleared", "by"), "default/hi");
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(e, "nominationsCleared"), "byLedger")),
        0);
    json_decref(l);
    json_t *pod = sched_util_pod(&u, "default/mid");
    ck_assert_ptr_null(sched_util_str2(pod, "status", "nominatedNodeName"));
    json_decref(pod);
    json_t *w = sched_util_why(&u, "default/mid");
    ck_assert_msg(
        strstr(sched_util_str2(w, "preemption", "reason"), "cleared by higher-priority default/hi"),
        "mid's why: %s", sched_util_str2(w, "preemption", "reason"));
    json_decref(w);
    w = sched_util_why(&u, "default/hi"); /* both whys say so */
    ck_assert_msg(strstr(sched_util_str2(w, "preemption", "reason"), "lower-priority default/mid"),
                  "hi's why: %s", sched_util_str2(w, "preemption", "reason"));
    json_decref(w);
    ck_assert_int_ge(sched_util_audit_count(&u, "nominated", "default/hi"), 1);
    sched_util_close(&u);
}
END_TEST

/* A higher-priority preemptor that takes a lower one's nominated node clears the lower
 * one's whole plan: the ledger (clearedJobs; the lower entry's nominationsCleared) and both
 * whys say so, the lower job is Starving, the higher binds on its nominated node. */
START_TEST(test_preempt_nomination_cleared)
{
    struct sched_util u;
    sched_util_mid_nominated_then_hi(&u);
    json_decref(sched_util_cycle(&u, 3000)); /* hi takes n1 over, lo still terminating */
    json_t *l = sched_util_ledger(&u, "default/hi", NULL, NULL), *e = json_array_get(l, 0);
    ck_assert_int_eq(json_array_size(l), 1);
    ck_assert_int_eq(json_array_size(json_object_get(e, "victims")), 0);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(e, "awaited"), 0)),
                     "default/lo");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(e, "clearedJobs"), 0)),
                     "default/mid");
    json_int_t hi_id = json_integer_value(json_object_get(e, "id"));
    /* it lives on the room of mid's victim: the entry says whose (ledger_room.c) */
    json_t *from = json_array_get(json_object_get(e, "roomFrom"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(from, "preemptor")), "default/mid");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(from, "victims"), 0)),
                     "default/lo");
    json_decref(l);
    /* its nominated record names the job whose nominations it cleared (audit export --job) */
    json_t *recs = sched_util_audit(&u), *rec;
    size_t ri;
    int named = 0;
    json_array_foreach(recs, ri, rec)
    {
        const char *k = json_string_value(json_object_get(rec, "kind")),
                   *jb = json_string_value(json_object_get(rec, "job"));
        if (k && jb && !strcmp(k, "nominated") && !strcmp(jb, "default/hi"))
            named +=
                !strcmp(json_string_value(json_array_get(json_object_get(rec, "clearedJobs"), 0)),
                        "default/mid");
    }
    ck_assert_int_eq(named, 1);
    json_decref(recs);
    /* and the victim's record says who took the room its pod frees */
    json_t *vw = sched_util_why(&u, "default/lo");
    json_t *took = json_array_get(json_object_get(vw, "roomTakenBy"), 0);
    ck_assert_ptr_nonnull(took);
    ck_assert_str_eq(json_string_value(json_object_get(took, "preemptor")), "default/hi");
    json_decref(vw);
    l = sched_util_ledger(&u, "default/mid", NULL, NULL);
    e = json_array_get(l, 0);
    ck_assert_str_eq(sched_util_str2(e, "nominationsCleared", "by"), "default/hi");
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(e, "nominationsCleared"), "byLedger")),
        hi_id);
    json_decref(l);
    json_t *pod = sched_util_pod(&u, "default/mid");
    ck_assert_ptr_null(sched_util_str2(pod, "status", "nominatedNodeName"));
    json_decref(pod);
    json_t *w = sched_util_why(&u, "default/hi");
    ck_assert_ptr_nonnull(strstr(sched_util_str2(w, "preemption", "reason"),
                                 "cleared the nominations of default/mid"));
    json_decref(w);
    w = sched_util_why(&u, "default/mid");
    ck_assert_msg(
        strstr(sched_util_str2(w, "preemption", "reason"), "cleared by higher-priority default/hi"),
        "mid's why: %s", sched_util_str2(w, "preemption", "reason"));
    ck_assert_str_eq(sched_util_str2(w, "preemption", "nominationsClearedBy"), "default/hi");
    json_decref(w);
    json_t *j = sched_util_job(&u, "default/mid");
    ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "Starving");
    json_decref(j);
    sched_util_reopen(&u); /* a restart keeps it starving (the ledger), cleared by hi */
    j = sched_util_job(&u, "default/mid");
    ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "Starving");
    json_decref(j);
    json_decref(sched_util_cycle(&u, 12000)); /* lo gone: hi binds where it was nominated */
    w = sched_util_why(&u, "default/mid");
    ck_assert_str_eq(sched_util_str2(w, "preemption", "nominationsClearedBy"), "default/hi");
    json_decref(w);
    char *node = sched_util_node_of(&u, "default/hi");
    ck_assert_str_eq(node, "n1");
    free(node);
    l = sched_util_ledger(&u, "default/hi", NULL, NULL);
    ck_assert(json_is_true(json_object_get(json_array_get(l, 0), "boundOnNominatedNodes")));
    json_decref(l);
    sched_util_close(&u);
}
END_TEST

/* docs/why.md's reason-code table is reason.h's WHY_MAP: same codes, classes and order. */
START_TEST(test_preempt_why_doc_table)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/docs/why.md", getenv("MUSTER_SOURCE_DIR"));
    char *doc = sched_util_read(path);
    ck_assert_msg(doc != NULL, "cannot read '%s'", path);
    char *sec = strstr(doc, "\n## Reason codes\n");
    ck_assert_msg(sec != NULL, "docs/why.md has no '## Reason codes' section");
    char *end = strstr(sec + 1, "\n## ");
    if (end)
        *end = 0;
    int rows = 0;
    for (char *line = strtok(sec, "\n"); line; line = strtok(NULL, "\n")) {
        int prec = 0, used = 0;
        char code[64], cls[32];
        if (sscanf(line, "| %d | `%63[^`]` | %31[A-Z] |%n", &prec, code, cls, &used) != 3 || !used)
            continue;
        ck_assert_msg(rows < WHY_CODE_COUNT, "docs/why.md: extra row '%s'", code);
        ck_assert_msg(prec == rows + 1, "docs/why.md: row '%s' has precedence %d, expected %d",
                      code, prec, rows + 1);
        ck_assert_msg(!strcmp(code, why_code_name(rows)),
                      "docs/why.md: precedence %d is '%s', reason.h has '%s'", prec, code,
                      why_code_name(rows));
        ck_assert_msg(!strcmp(cls, why_class_name(why_code_class(rows))),
                      "docs/why.md: '%s' has class %s, reason.h has %s", code, cls,
                      why_class_name(why_code_class(rows)));
        rows++;
    }
    ck_assert_msg(rows == WHY_CODE_COUNT, "docs/why.md lists %d codes, reason.h has %d", rows,
                  WHY_CODE_COUNT);
    free(doc);
}
END_TEST

/* The bundled demo (examples/demo, grace period 2 s) end to end: every preemptor binds
 * with each pod on the node it was nominated to, no victim job is preempted by two
 * preemptions, and no victim gang is left bound below minMember. */
START_TEST(test_preempt_demo_end_to_end)
{
    char path[1024];
    const char *src = getenv("MUSTER_SOURCE_DIR");
    snprintf(path, sizeof(path), "%s/examples/demo/cluster.yaml", src);
    char *cluster = sched_util_read(path);
    snprintf(path, sizeof(path), "%s/examples/demo/workloads.yaml", src);
    char *work = sched_util_read(path);
    ck_assert(cluster && work);
    struct sched_options opts = {.mark_running = 1, .grace_ms = 2000};
    struct sched_util u;
    sched_util_open(&u, &opts);
    json_decref(sched_util_apply(&u, cluster, 1000));
    json_decref(sched_util_apply(&u, work, 1000));
    json_decref(sched_util_cycle(&u, 2000)); /* the preemptions */
    json_t *entries = sched_util_ledger(&u, NULL, NULL, NULL), *e, *x;
    ck_assert_int_ge(json_array_size(entries), 2);
    json_t *nominated = json_object(), *victim_jobs = json_object();
    size_t i, k;
    const char *pod;
    json_array_foreach(entries, i, e)
    {
        json_t *noms = json_object_get(e, "nominations");
        ck_assert_int_gt(json_object_size(noms), 0);
        json_object_foreach(noms, pod, x)
        {
            json_t *p = sched_util_pod(&u, pod);
            ck_assert_str_eq(sched_util_str2(p, "status", "nominatedNodeName"),
                             json_string_value(x));
            json_decref(p);
            json_object_set(nominated, pod, x);
        }
        json_t *seen = json_object();
        json_array_foreach(json_object_get(e, "victims"), k, x)
            json_object_set(seen, json_string_value(json_object_get(x, "job")), json_true());
        const char *vj;
        json_t *t;
        json_object_foreach(seen, vj, t)
        {
            ck_assert_msg(!json_object_get(victim_jobs, vj), "demo: job '%s' preempted twice", vj);
            json_object_set(victim_jobs, vj, t);
        }
        json_decref(seen);
    }
    for (int64_t t = 3000; t <= 6000; t += 1000)
        json_decref(sched_util_cycle(&u, t));
    json_decref(entries);
    entries = sched_util_ledger(&u, NULL, NULL, NULL);
    json_array_foreach(entries, i, e)
    {
        const char *pre = json_string_value(json_object_get(e, "preemptor"));
        ck_assert_msg(json_is_true(json_object_get(e, "bound")), "demo: '%s' did not bind", pre);
        ck_assert_msg(json_is_true(json_object_get(e, "boundOnNominatedNodes")),
                      "demo: '%s' bound off its nominated nodes", pre);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "podsOnNominatedNodes")),
                         json_object_size(json_object_get(e, "nominations")));
    }
    /* nominated == bound, pod by pod */
    json_object_foreach(nominated, pod, x)
    {
        char *node = sched_util_node_of(&u, pod);
        ck_assert_msg(node && !strcmp(node, json_string_value(x)),
                      "demo: '%s' nominated to '%s', bound on '%s'", pod, json_string_value(x),
                      node ? node : "(gone)");
        free(node);
    }
    /* victims are gone whole: no victim job keeps a bound pod */
    json_t *all = sched_view_dump(u.s), *p;
    json_object_foreach(json_object_get(all, "pods"), pod, p)
    {
        const char *vj = NULL;
        json_t *t;
        json_object_foreach(victim_jobs, vj, t)
        {
            size_t n = strlen(vj);
            ck_assert_msg(strncmp(pod, vj, n) || pod[n] != '-',
                          "demo: pod '%s' of preempted job '%s' is still there", pod, vj);
        }
    }
    json_decref(all);
    json_decref(nominated);
    json_decref(victim_jobs);
    json_decref(entries);
    char msg[512];
    ck_assert_msg(sched_invariants_check_ex(u.st, 0, NULL, msg, sizeof(msg)) == 0, "demo: %s", msg);
    sched_util_close(&u);
    free(cluster);
    free(work);
}
END_TEST

/* A failed search is remembered within the cycle only for jobs no easier: a gang of two
 * finds one victim too few; a lone pod of the same shape and priority after it, asking
 * half as much, still searches and preempts (preempt_memo.c). */
START_TEST(test_preempt_memo_only_for_no_easier_jobs)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    const char *pod = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
                      "\"%s\", \"namespace\": \"default\", \"creationTimestamp\": "
                      "\"2026-01-01T00:00:0%dZ\"%s}, \"spec\": {%s\"priority\": %d, "
                      "\"containers\": [{\"name\": \"c\", \"image\": \"x\", \"resources\": "
                      "{\"requests\": {\"cpu\": \"4\"}}}]}}\n";
    const char *gang = ", \"labels\": {\"pod-group.scheduling.sigs.k8s.io\": \"x\"}";
    char buf[1024];
    json_decref(sched_util_apply(
        &u,
        "---\n{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}, "
        "\"status\": {\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n2\"}, "
        "\"status\": {\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
        "{\"apiVersion\": \"scheduling.sigs.k8s.io/v1alpha1\", \"kind\": \"PodGroup\", "
        "\"metadata\": {\"name\": \"x\", \"namespace\": \"default\", \"creationTimestamp\": "
        "\"2026-01-01T00:00:01Z\"}, \"spec\": {\"minMember\": 2}}\n",
        1000));
    snprintf(buf, sizeof(buf), pod, "lo", 0, "", "\"nodeName\": \"n1\", ", 1);
    json_decref(sched_util_apply(&u, buf, 1000));
    snprintf(buf, sizeof(buf), pod, "mid", 0, "", "\"nodeName\": \"n2\", ", 100);
    json_decref(sched_util_apply(&u, buf, 1000));
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "x-%d", i);
        snprintf(buf, sizeof(buf), pod, name, 1, gang, "", 50);
        json_decref(sched_util_apply(&u, buf, 1000));
    }
    snprintf(buf, sizeof(buf), pod, "y", 2, "", "", 50);
    json_decref(sched_util_apply(&u, buf, 1000));
    json_decref(sched_util_cycle(&u, 2000));
    json_t *x = sched_util_why(&u, "default/x"), *y = sched_util_why(&u, "default/y");
    ck_assert_str_eq(sched_util_str2(x, "preemption", "code"), "PreemptionNotHelpful");
    ck_assert_str_eq(sched_util_str2(y, "preemption", "code"), "Preempting");
    json_decref(x);
    json_decref(y);
    sched_util_close(&u);
}
END_TEST

static Suite *preempt_suite(void)
{
    Suite *s = suite_create("preempt");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_preempt_demo_end_to_end);
    tcase_add_test(tc, test_preempt_cases);
    tcase_add_test(tc, test_preempt_ledger_filters);
    tcase_add_test(tc, test_preempt_nomination_cleared);
    tcase_add_test(tc, test_preempt_nomination_displaced_by_placement);
    tcase_add_test(tc, test_preempt_why_doc_table);
    tcase_add_test(tc, test_preempt_memo_only_for_no_easier_jobs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(preempt_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
