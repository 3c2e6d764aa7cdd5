/*
 * test_victims.c - what a preemption's victims are told: state Preempted, PreemptedBy naming
 * every preemptor with ledger links, the priority kept, the record answerable after the pods
 * are gone until the retention ends; the preemptions HTTP endpoint on a real musterd, and
 * the bundled demo's victims end to end.
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

/* Victims know what happened: three nodes; a gang default/v (minMember 1, priority 10) on
 * n1 and n2, a lone pod default/lone (priority 5) on n3. hi-1 (cycle 1) takes lone, hi-2
 * (cycle 2) and hi-3 (cycle 3) one pod of v each. */
static const char victims_cluster[] =
    "# victims\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n2\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n3\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"scheduling.sigs.k8s.io/v1alpha1\", \"kind\": \"PodGroup\", \"metadata\": "
    "{\"name\": \"v\", \"namespace\": \"default\"}, \"spec\": {\"minMember\": 1}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"v-0\", \"namespace\": "
    "\"default\", \"labels\": {\"pod-group.scheduling.sigs.k8s.io\": \"v\"}}, \"spec\": "
    "{\"nodeName\": \"n1\", \"priority\": 10, \"containers\": [{\"name\": \"c\", \"image\": "
    "\"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"v-1\", \"namespace\": "
    "\"default\", \"labels\": {\"pod-group.scheduling.sigs.k8s.io\": \"v\"}}, \"spec\": "
    "{\"nodeName\": \"n2\", \"priority\": 10, \"containers\": [{\"name\": \"c\", \"image\": "
    "\"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"lone\", \"namespace\": "
    "\"default\"}, \"spec\": {\"nodeName\": \"n3\", \"priority\": 5, \"containers\": [{\"name\": "
    "\"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}}\n";

static void victims_rounds(struct sched_util *u)
{
    char doc[1024], pod[1024];
    json_decref(sched_util_apply(u, victims_cluster, 1000));
    snprintf(doc, sizeof(doc), "# hi\n%s", sched_util_hi_pod);
    for (int k = 1; k <= 3; k++) {
        snprintf(pod, sizeof(pod), doc, k == 1 ? "hi-1" : k == 2 ? "hi-2" : "hi-3");
        json_decref(sched_util_apply(u, pod, 1000 + k * 1000));
        json_decref(sched_util_cycle(u, 1500 + k * 1000));
    }
}

static void expect_job(struct sched_util *u, const char *id, const char *state, int prio)
{
    json_t *j = sched_util_job(u, id);
    ck_assert_msg(!strcmp(json_string_value(json_object_get(j, "state")), state),
                  "job '%s' is %s, expected %s", id, json_string_value(json_object_get(j, "state")),
                  state);
    ck_assert_msg(json_integer_value(json_object_get(j, "priority")) == prio,
                  "job '%s' has priority %d, expected %d", id,
                  (int)json_integer_value(json_object_get(j, "priority")), prio);
    json_decref(j);
}

/* The why of a victim: state Preempted, primary PreemptedBy naming exactly the preemptors
 * (in order) with their ledger entries and links that the ledger answers. */
static void expect_preempted_by(struct sched_util *u, const char *id, const char *const *pre,
                                size_t n)
{
    json_t *w = sched_util_why(u, id);
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "Preempted");
    ck_assert_str_eq(sched_util_str2(w, "primary", "code"), "PreemptedBy");
    ck_assert_str_eq(sched_util_str2(w, "primary", "class"), "PREEMPTION");
    json_t *by = json_object_get(w, "preemptedBy");
    ck_assert_msg(json_array_size(by) == n, "why '%s': %zu preemptors, expected %zu", id,
                  json_array_size(by), n);
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(by, i);
        ck_assert_str_eq(json_string_value(json_object_get(x, "preemptor")), pre[i]);
        const char *msg = sched_util_str2(w, "primary", "message");
        ck_assert_msg(strstr(msg, pre[i]), "why '%s': '%s' does not name %s", id, msg, pre[i]);
        json_t *l = sched_util_ledger(u, pre[i], NULL, NULL);
        json_t *entry = json_array_get(l, 0);
        ck_assert(json_equal(json_object_get(x, "ledger"), json_object_get(entry, "id")));
        char want[64];
        snprintf(want, sizeof(want), "/api/v1/preemptions/%lld",
                 (long long)json_integer_value(json_object_get(entry, "id")));
        ck_assert_str_eq(json_string_value(json_object_get(x, "link")), want);
        json_t *one = NULL;
        struct err err = ERR_INIT;
        ck_assert_int_eq(sched_preemption(u->s, want + strlen("/api/v1/preemptions/"), &one, &err),
                         0);
        ck_assert(json_equal(one, entry));
        json_decref(one);
        json_decref(l);
    }
    json_t *h = json_object_get(w, "history");
    json_t *last = json_array_get(h, json_array_size(h) - 1);
    ck_assert_str_eq(json_string_value(json_object_get(last, "code")), "PreemptedBy");
    ck_assert_str_eq(json_string_value(json_object_get(last, "preemptor")), pre[n - 1]);
    json_decref(w);
}

static int listed(struct sched_util *u, const char *state, const char *id)
{
    struct err err = ERR_INIT;
    json_t *all = NULL, *x;
    ck_assert_msg(sched_jobs(u->s, state, &all, &err) == 0, "%s", err.msg);
    size_t i;
    int found = 0;
    json_array_foreach(all, i, x) found |= !strcmp(json_string_value(json_object_get(x, "id")), id);
    json_decref(all);
    return found;
}

START_TEST(test_preempt_victims_know_what_happened)
{
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 60000, .retention_ms = 5000};
    static const char *const v_by[] = {"default/hi-2", "default/hi-3"};
    static const char *const lone_by[] = {"default/hi-1"};
    struct err err = ERR_INIT;
    json_t *doc = NULL;
    sched_util_open(&u, &opts);
    victims_rounds(&u);
    /* pods terminating */
    expect_job(&u, "default/v", "Preempted", 10);
    expect_job(&u, "default/lone", "Preempted", 5);
    expect_preempted_by(&u, "default/v", v_by, 2);
    expect_preempted_by(&u, "default/lone", lone_by, 1);
    ck_assert(listed(&u, "Preempted", "default/v") && listed(&u, "Preempted", "default/lone"));
    /* pods gone (grace 60 s from 2.5 s .. 4.5 s): the records stay, live and rebuilt */
    json_decref(sched_util_cycle(&u, 65000));
    ck_assert_ptr_null(sched_util_pod(&u, "default/lone"));
    ck_assert_ptr_null(sched_util_pod(&u, "default/v-0"));
    for (int reopen = 0; reopen < 2; reopen++) {
        if (reopen)
            sched_util_reopen(&u);
        json_decref(sched_util_cycle(&u, 66000)); /* v is not tried: no MembersMissing */
        expect_job(&u, "default/v", "Preempted", 10);
        expect_job(&u, "default/lone", "Preempted", 5);
        expect_preempted_by(&u, "default/v", v_by, 2);
        expect_preempted_by(&u, "default/lone", lone_by, 1);
        ck_assert(listed(&u, NULL, "default/lone") && listed(&u, "Preempted", "default/lone"));
        ck_assert(!listed(&u, "Running", "default/lone"));
        json_t *w = sched_util_why(&u, "default/lone");
        ck_assert_str_eq(sched_util_str2(w, "retention", "retainedUntil"), "1970-01-01T00:01:10Z");
        json_decref(w);
        json_t *j = sched_util_job(&u, "default/lone");
        ck_assert(json_is_true(json_object_get(j, "retained")));
        ck_assert_str_eq(sched_util_str2(j, "preemptedBy", "retainedUntil"),
                         "1970-01-01T00:01:10Z");
        json_decref(j);
    }
    /* a cycle before the end of the retention keeps them; the first one after drops them */
    json_decref(sched_util_cycle(&u, 69999));
    expect_job(&u, "default/lone", "Preempted", 5);
    json_decref(sched_util_cycle(&u, 70000));
    ck_assert_int_eq(sched_job(u.s, "default/lone", &doc, &err), ERR_NOT_FOUND);
    ck_assert_int_eq(sched_why(u.s, "default/lone", &doc, &err), ERR_NOT_FOUND);
    ck_assert(!listed(&u, NULL, "default/lone"));
    /* the PodGroup is still there: now it is missing its members, like any other */
    json_t *w = sched_util_why(&u, "default/v");
    ck_assert_str_eq(sched_util_str2(w, "primary", "code"), "MembersMissing");
    json_decref(w);
    /* the ledger keeps its entries */
    json_t *l = sched_util_ledger(&u, NULL, NULL, NULL);
    ck_assert_int_eq(json_array_size(l), 3);
    json_decref(l);
    json_t *live = sched_view_dump(u.s), *stored = NULL;
    ck_assert(sched_view_dump_store(u.s, &stored, &err) == 0);
    ck_assert(json_equal(live, stored));
    json_decref(live);
    json_decref(stored);
    sched_util_close(&u);
}
END_TEST

/* A victim deleted by hand (or by the API server in bind mode) is answerable too. */
START_TEST(test_preempt_victim_deleted_stays_answerable)
{
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 60000, .retention_ms = 5000};
    static const char *const lone_by[] = {"default/hi-1"};
    struct err err = ERR_INIT;
    sched_util_open(&u, &opts);
    victims_rounds(&u);
    ck_assert_int_eq(sched_delete(u.s, MODEL_POD, "default/lone", 10000, &err), 0);
    expect_job(&u, "default/lone", "Preempted", 5);
    expect_preempted_by(&u, "default/lone", lone_by, 1);
    json_t *j = sched_util_job(&u, "default/lone");
    ck_assert_str_eq(sched_util_str2(j, "preemptedBy", "goneAt"), "1970-01-01T00:00:10Z");
    json_decref(j);
    /* the muster_jobs gauge counts the Preempted jobs the API lists, the retained one too */
    json_t *list = NULL;
    ck_assert_int_eq(sched_jobs(u.s, "Preempted", &list, &err), 0);
    ck_assert_int_ge(json_array_size(list), 2);
    char want[96], *m = sched_metrics(u.s);
    snprintf(want, sizeof(want), "muster_jobs{state=\"Preempted\"} %zu\n", json_array_size(list));
    ck_assert_msg(strstr(m, want), "metrics lack '%s'", want);
    free(m);
    json_decref(list);
    sched_util_close(&u);
}
END_TEST

/* The endpoint and preemptedBy over HTTP on a real musterd (cycles only on demand). */
static json_t *http_json(const char *base, const char *method, const char *path, const char *body,
                         long want)
{
    static const char *const hdr[] = {"Content-Type: application/yaml", NULL};
    struct http_resp r;
    http_request(method, base, path, body, body ? hdr : NULL, &r);
    ck_assert_msg(r.status == want, "%s %s: %ld %s", method, path, r.status, r.body);
    json_t *out = json_incref(r.json);
    http_resp_free(&r);
    return out;
}

START_TEST(test_preempt_http)
{
    char cfg[] = "/tmp/muster-preempt-cfg-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    const char *text = "cycle_interval: 0\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    const char *args[] = {"--config", cfg, NULL};
    struct musterd m;
    ck_assert_msg(musterd_start(&m, NULL, args) == 0, "musterd did not start");
    unlink(cfg);
    char doc[1024];
    snprintf(doc, sizeof(doc), sched_util_hi_pod, "hi-1");
    char *all = malloc(strlen(sched_util_two_preemptions) + strlen(doc) + 8);
    sprintf(all, "%s---\n%s", sched_util_two_preemptions, doc);
    json_decref(http_json(m.base, "POST", "/api/v1/manifests", all, 201));
    free(all);
    json_decref(http_json(m.base, "POST", "/api/v1/cycles", NULL, 200));
    json_t *l = http_json(m.base, "GET", "/api/v1/preemptions?job=default/hi-1", NULL, 200);
    json_t *items = json_object_get(l, "items");
    ck_assert_int_eq(json_array_size(items), 1);
    json_t *e = json_array_get(items, 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "preemptor")), "default/hi-1");
    ck_assert(json_is_false(json_object_get(e, "bound")));
    ck_assert_int_eq(json_array_size(json_object_get(e, "nominatedNodes")), 1);
    json_decref(l);
    l = http_json(m.base, "GET", "/api/v1/preemptions?job=default/nobody", NULL, 200);
    ck_assert_int_eq(json_array_size(json_object_get(l, "items")), 0);
    json_decref(l);
    json_decref(http_json(m.base, "GET", "/api/v1/preemptions?since=never", NULL, 400));
    json_t *victim = http_json(m.base, "GET", "/api/v1/jobs/default/lo-1", NULL, 200);
    ck_assert_str_eq(sched_util_str2(victim, "preemptedBy", "preemptor"), "default/hi-1");
    json_decref(victim);
    /* The preemptor waits for its victims: nothing changes until their grace period ends,
     * so it is retried when its backoff (1 s) runs out and then says PreemptionWaiting. */
    json_t *w = http_json(m.base, "GET", "/api/v1/jobs/default/hi-1/why", NULL, 200);
    for (int i = 0; i < 200; i++) {
        const char *code = sched_util_str2(w, "preemption", "code");
        if (code && !strcmp(code, "PreemptionWaiting"))
            break;
        json_decref(w);
        usleep(50 * 1000);
        json_decref(http_json(m.base, "POST", "/api/v1/cycles", NULL, 200));
        w = http_json(m.base, "GET", "/api/v1/jobs/default/hi-1/why", NULL, 200);
    }
    ck_assert_str_eq(sched_util_str2(w, "preemption", "code"), "PreemptionWaiting");
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "Pipelined");
    json_decref(w);
    ck_assert_int_eq(musterd_stop(&m), 0);
    musterd_cleanup(&m);
}
END_TEST

/* The bundled demo (examples/demo) on a real musterd, end to end for the victims: every
 * victim job the ledger names is Preempted at its priority, its why's primary is
 * PreemptedBy naming exactly the preemptors the ledger has for it (in order), with links
 * the API answers; after the grace period its pods are gone and it still answers (job,
 * why, the jobs list, muster describe) until the retention ends, then 404. */
static char *demo_file(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/examples/demo/%s", getenv("MUSTER_SOURCE_DIR"), name);
    char *text = sched_util_read(path);
    ck_assert_msg(text != NULL, "cannot read '%s'", path);
    return text;
}

/* victim job -> [preemptor, ...] in ledger order, from GET /api/v1/preemptions (new). */
static json_t *demo_victims(const char *base)
{
    json_t *l = http_json(base, "GET", "/api/v1/preemptions", NULL, 200), *out = json_object();
    size_t i, k;
    json_t *e, *x;
    json_array_foreach(json_object_get(l, "items"), i, e)
    {
        json_array_foreach(json_object_get(e, "victims"), k, x)
        {
            const char *vj = json_string_value(json_object_get(x, "job"));
            json_t *list = json_object_get(out, vj);
            if (!list) {
                list = json_array();
                json_object_set_new(out, vj, list);
            }
            json_t *pre = json_object_get(e, "preemptor");
            size_t n = json_array_size(list);
            if (!n || !json_equal(json_array_get(list, n - 1), pre))
                json_array_append(list, pre);
        }
    }
    json_decref(l);
    return out;
}

static void demo_check_victim(const char *base, const char *id, json_t *preemptors, int gone)
{
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/jobs/%s", id);
    json_t *j = http_json(base, "GET", path, NULL, 200);
    ck_assert_msg(!strcmp(json_string_value(json_object_get(j, "state")), "Preempted"),
                  "demo: victim '%s' is %s", id, json_string_value(json_object_get(j, "state")));
    /* the demo's victims: the etl gangs at 10, the notebooks at 5 */
    int want = strncmp(id, "batch/", 6) ? 5 : 10;
    ck_assert_msg(json_integer_value(json_object_get(j, "priority")) == want,
                  "demo: victim '%s' has priority %d", id,
                  (int)json_integer_value(json_object_get(j, "priority")));
    json_decref(j);
    snprintf(path, sizeof(path), "/api/v1/jobs/%s/why", id);
    json_t *w = http_json(base, "GET", path, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "Preempted");
    ck_assert_msg(!strcmp(sched_util_str2(w, "primary", "code"), "PreemptedBy"),
                  "demo: why '%s' is %s", id, sched_util_str2(w, "primary", "code"));
    json_t *by = json_object_get(w, "preemptedBy");
    ck_assert_msg(json_array_size(by) == json_array_size(preemptors),
                  "demo: why '%s' names %zu preemptors, the ledger %zu", id, json_array_size(by),
                  json_array_size(preemptors));
    size_t i;
    json_t *x;
    json_array_foreach(by, i, x)
    {
        ck_assert(json_equal(json_object_get(x, "preemptor"), json_array_get(preemptors, i)));
        ck_assert(strstr(sched_util_str2(w, "primary", "message"),
                         json_string_value(json_array_get(preemptors, i))));
        json_t *entry =
            http_json(base, "GET", json_string_value(json_object_get(x, "link")), NULL, 200);
        ck_assert(json_equal(json_object_get(entry, "id"), json_object_get(x, "ledger")));
        ck_assert(json_equal(json_object_get(entry, "preemptor"), json_object_get(x, "preemptor")));
        json_decref(entry);
    }
    const char *until = sched_util_str2(w, "retention", "retainedUntil");
    ck_assert_msg(gone ? until != NULL : until == NULL, "demo: why '%s' retainedUntil %s", id,
                  until ? until : "null");
    json_decref(w);
}

START_TEST(test_preempt_demo_victims_http)
{
    char cfg[] = "/tmp/muster-demo-cfg-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    const char *text = "cycle_interval: 0\nmark_running: true\ngrace_period: 1\nretention: 3s\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    const char *args[] = {"--config", cfg, NULL};
    struct musterd m;
    ck_assert_msg(musterd_start(&m, NULL, args) == 0, "musterd did not start");
    unlink(cfg);
    char *cluster = demo_file("cluster.yaml"), *work = demo_file("workloads.yaml");
    json_decref(http_json(m.base, "POST", "/api/v1/manifests", cluster, 201));
    json_decref(http_json(m.base, "POST", "/api/v1/manifests", work, 201));
    free(cluster);
    free(work);
    json_t *victims = NULL;
    for (int i = 0; i < 3 && json_object_size(victims) == 0; i++) {
        json_decref(http_json(m.base, "POST", "/api/v1/cycles", NULL, 200));
        json_decref(victims);
        victims = demo_victims(m.base);
    }
    ck_assert_msg(json_object_get(victims, "research/notebook-0") &&
                      json_object_get(victims, "batch/etl-a"),
                  "demo: the preemptions should take research/notebook-0 and batch/etl-a");
    const char *id;
    json_t *pre;
    json_object_foreach(victims, id, pre) demo_check_victim(m.base, id, pre, 0);
    json_t *list = http_json(m.base, "GET", "/api/v1/jobs?state=Preempted", NULL, 200);
    ck_assert_int_eq(json_array_size(json_object_get(list, "items")), json_object_size(victims));
    json_decref(list);
    /* the grace period (1 s) ends: the victims' pods are removed */
    usleep(1200 * 1000);
    json_decref(http_json(m.base, "POST", "/api/v1/cycles", NULL, 200));
    json_decref(http_json(m.base, "GET", "/api/v1/pods/research/notebook-0", NULL, 404));
    json_object_foreach(victims, id, pre) demo_check_victim(m.base, id, pre, 1);
    list = http_json(m.base, "GET", "/api/v1/jobs?state=Preempted", NULL, 200);
    ck_assert_int_eq(json_array_size(json_object_get(list, "items")), json_object_size(victims));
    json_decref(list);
    char env_server[128];
    snprintf(env_server, sizeof(env_server), "MUSTER_SERVER=%s", m.base);
    const char *env[] = {env_server, NULL};
    struct cli_result r;
    cli_run(env, NULL, (const char *[]){"describe", "job", "research/notebook-0", NULL}, &r);
    ck_assert_msg(r.status == 0 && strstr(r.out, "State:       Preempted") &&
                      strstr(r.out, "PreemptedBy: prod/urgent-finetune") &&
                      strstr(r.out, "Retained:    until"),
                  "muster describe: %d %s %s", r.status, r.out, r.err);
    cli_result_release(&r);
    /* the retention (3 s) ends: the lone pod's record goes, the gang is a PodGroup again */
    usleep(3200 * 1000);
    json_decref(http_json(m.base, "POST", "/api/v1/cycles", NULL, 200));
    json_decref(http_json(m.base, "GET", "/api/v1/jobs/research/notebook-0", NULL, 404));
    json_decref(http_json(m.base, "GET", "/api/v1/jobs/research/notebook-0/why", NULL, 404));
    json_t *etl = http_json(m.base, "GET", "/api/v1/jobs/batch/etl-a", NULL, 200);
    ck_assert_str_ne(json_string_value(json_object_get(etl, "state")), "Preempted");
    json_decref(etl);
    json_decref(victims);
    ck_assert_int_eq(musterd_stop(&m), 0);
    musterd_cleanup(&m);
}
END_TEST

static Suite *victims_suite(void)
{
    Suite *s = suite_create("victims");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_preempt_http);
    tcase_add_test(tc, test_preempt_victims_know_what_happened);
    tcase_add_test(tc, test_preempt_victim_deleted_stays_answerable);
    tcase_add_test(tc, test_preempt_demo_victims_http);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(victims_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
