/* test_why_class.c - failing jobs that differ only by their name share one stored why
 * document (why_class.c): each job's answer is byte for byte the one a whole document gives
 * (why_whole), over every case folder and a cluster of many jobs of one class; a job that
 * leaves its class gets its own answer; a restart reads class documents back; the class
 * documents go when no record names them; after random creates, placements, edits and
 * deletes of every kind the why DB holds the documents of live jobs only (why_store.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "scheduler.h"
#include "sched_util.h"
#include "store.h"
#include "why_store.h"

/* One 4-cpu node, a 3-cpu pod placed first, then n lone 2-cpu pods (job-00 ...) and two
 * gangs of two 2-cpu pods, in creation order: most cannot fit. */
static char *cluster(int n)
{
    char *y = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&y, &len);
    fputs(
        "---\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{"
        "\"allocatable\":{\"cpu\":\"4\"}}}\n---\n",
        f);
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"first\",\"namespace\":"
          "\"default\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"containers\":[{"
          "\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]}}\n",
          f);
    for (int i = 0; i < n; i++)
        fprintf(f,
                "---\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"job-%02d\","
                "\"namespace\":\"default\",\"creationTimestamp\":\"2026-01-01T00:%02d:00Z\"},"
                "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
                "\"requests\":{\"cpu\":\"2\"}}}]}}\n",
                i, i + 1);
    for (int g = 0; g < 3; g++) {
        fprintf(f,
                "---\n{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
                "\"metadata\":{\"name\":\"gang-%d\",\"namespace\":\"default\"},\"spec\":{"
                "\"minMember\":2}}\n",
                g);
        for (int p = 0; p < 2; p++)
            fprintf(f,
                    "---\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                    "\"gang-%d-%d\",\"namespace\":\"default\",\"creationTimestamp\":"
                    "\"2026-01-01T01:%02d:00Z\",\"labels\":{\"pod-group.scheduling.sigs.k8s.io\":"
                    "\"gang-%d\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\","
                    "\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}\n",
                    g, p, g, g);
    }
    fclose(f);
    return y;
}

/* Every job's why answer, compact, in an object by job id (new). */
static json_t *answers(struct sched_util *u)
{
    struct err err = ERR_INIT;
    json_t *jobs = NULL, *out = json_object(), *j;
    size_t i;
    ck_assert_msg(sched_jobs(u->s, NULL, &jobs, &err) == 0, "%s", err.msg);
    json_array_foreach(jobs, i, j)
    {
        const char *id = json_string_value(json_object_get(j, "id"));
        json_t *w = sched_util_why(u, id);
        char *d = json_dumps(w, JSON_COMPACT);
        json_object_set_new(out, id, json_string(d));
        free(d);
        json_decref(w);
    }
    json_decref(jobs);
    return out;
}

static void free_answers(json_t *a)
{
    json_decref(a);
}

/* The why DB is empty: every job, and with them every class, is gone. */
static void assert_none_stored(struct sched_util *u)
{
    json_t *all = why_store_all(u->st);
    char *left = json_dumps(all, JSON_COMPACT);
    ck_assert_msg(json_object_size(all) == 0, "left: %.400s", left);
    free(left);
    json_decref(all);
}

/* Number of stored job records naming a class, and of class documents. */
static void count_classes(struct sched_util *u, int *records, int *classes)
{
    json_t *all = why_store_all(u->st), *v;
    const char *k;
    *records = *classes = 0;
    json_object_foreach(all, k, v)
    {
        if (json_object_get(v, "classRecord"))
            (*records)++;
        if (!strncmp(k, "~class/", 7) && !strstr(k, "/members"))
            (*classes)++;
    }
    json_decref(all);
}

/* The why DB holds the documents of live jobs and retained victims only, and class
 * documents with their records' counts (why_store.h). */
static void assert_counts(struct sched_util *u)
{
    char why[512];
    ck_assert_msg(why_store_check(u->s, u->st, why, sizeof(why)) == 0, "%s", why);
}

static void assert_same_answers(json_t *whole, json_t *shared, const char *where)
{
    const char *k;
    json_t *v;
    ck_assert_int_eq(json_object_size(whole), json_object_size(shared));
    json_object_foreach(whole, k, v)
    {
        const char *a = json_string_value(v), *b = json_string_value(json_object_get(shared, k));
        ck_assert_msg(b && !strcmp(a, b), "%s: job '%s'\nwhole  %s\nshared %s", where, k, a,
                      b ? b : "(none)");
    }
}

/* Each case folder run twice, with whole documents and with shared ones: every job's
 * answer is the same bytes. */
static void cases_same(const char *area, int *records)
{
    json_t *names = sched_util_cases(area), *name;
    size_t i;
    json_array_foreach(names, i, name)
    {
        const char *n = json_string_value(name);
        struct sched_util u;
        json_t *exp = sched_util_case_run(&u, area, n, NULL);
        struct sched_options o = u.opts;
        json_t *shared = answers(&u);
        int r, c;
        count_classes(&u, &r, &c);
        *records += r;
        sched_util_close(&u);
        json_decref(exp);
        o.why_whole = 1;
        exp = sched_util_case_run(&u, area, n, &o);
        json_t *whole = answers(&u);
        count_classes(&u, &r, &c);
        ck_assert_msg(r == 0 && c == 0, "%s/%s: why_whole stored %d records", area, n, r);
        sched_util_close(&u);
        json_decref(exp);
        char where[256];
        snprintf(where, sizeof(where), "%s/%s", area, n);
        assert_same_answers(whole, shared, where);
        free_answers(whole);
        free_answers(shared);
    }
    json_decref(names);
}

START_TEST(test_why_class_cases_same_answers)
{
    int records = 0;
    cases_same("sched", &records);
    cases_same("topology", &records);
    cases_same("preempt", &records);
    ck_assert_msg(records > 0, "no case shared a document: the comparison shows nothing");
}
END_TEST

/* The answers of many ids read in one batch (sched_whys: one transaction, each class
 * document read once) are the ones read one by one. */
static void assert_batch_same(struct sched_util *u, json_t *one_by_one)
{
    size_t n = json_object_size(one_by_one), i = 0;
    const char **ids = calloc(n + 1, sizeof(*ids));
    json_t **out = calloc(n + 1, sizeof(*out)), *v;
    const char *k;
    json_object_foreach(one_by_one, k, v) ids[i++] = k;
    sched_whys(u->s, n, ids, out);
    for (i = 0; i < n; i++) {
        ck_assert_ptr_nonnull(out[i]);
        char *d = json_dumps(out[i], JSON_COMPACT);
        const char *want = json_string_value(json_object_get(one_by_one, ids[i]));
        ck_assert_msg(!strcmp(d, want), "batch: job '%s'\nbatch %s\nalone %s", ids[i], d, want);
        free(d);
        json_decref(out[i]);
    }
    free(out);
    free(ids);
}

/* The same cluster of n failing jobs in u (documents shared) and w (every document
 * stored whole), after one cycle each. */
static void open_pair(struct sched_util *u, struct sched_util *w, int n)
{
    char *y = cluster(n);
    struct sched_options whole = {.why_whole = 1};
    sched_util_open(u, NULL);
    sched_util_open(w, &whole);
    json_decref(sched_util_apply(u, y, 1000));
    json_decref(sched_util_apply(w, y, 1000));
    json_decref(sched_util_cycle(u, 2000));
    json_decref(sched_util_cycle(w, 2000));
    free(y);
}

/* Many jobs of one class: the first whole, the others records of one class; each answer
 * names its own job and pod, and is what the whole document says. */
START_TEST(test_why_class_members_own_answers)
{
    struct sched_util u, w;
    open_pair(&u, &w, 6);
    json_t *a = answers(&u), *b = answers(&w);
    assert_same_answers(b, a, "one cycle");
    assert_batch_same(&u, a);
    json_t *all = why_store_all(u.st);
    ck_assert_ptr_null(json_object_get(json_object_get(all, "default/job-00"), "classRecord"));
    const char *key =
        json_string_value(json_object_get(json_object_get(all, "default/job-01"), "classRecord"));
    ck_assert_ptr_nonnull(key);
    for (int i = 1; i < 6; i++) {
        char id[64];
        snprintf(id, sizeof(id), "default/job-%02d", i);
        json_t *rec = json_object_get(all, id);
        ck_assert_str_eq(json_string_value(json_object_get(rec, "classRecord")), key);
        ck_assert_str_eq(sched_util_str2(rec, "primary", "code"), "TakenByEarlierJobs");
        json_t *why = sched_util_why(&u, id);
        ck_assert_str_eq(json_string_value(json_object_get(why, "job")), id);
        char want[128];
        snprintf(want, sizeof(want), "pod '%s' ", id);
        ck_assert_msg(strstr(sched_util_str2(why, "primary", "message"), want), "%s: %s", id,
                      sched_util_str2(why, "primary", "message"));
        json_decref(why);
    }
    /* the second gang shares the first's class: its pods' names differ only by the gang's */
    /* gangs of one shape that fail after the first share a class too: their pods' names
     * differ only by the gang's */
    int gangs = 0;
    for (int g = 0; g < 3; g++) {
        char id[64];
        snprintf(id, sizeof(id), "default/gang-%d", g);
        gangs += json_object_get(json_object_get(all, id), "classRecord") != NULL;
    }
    ck_assert_int_ge(gangs, 1);
    json_decref(all);
    free_answers(a);
    free_answers(b);
    assert_counts(&u);

    /* a restart reads the class documents back (both rebuilt: a restarted view says
     * Pending until a cycle tries the job again) */
    sched_util_reopen(&u);
    sched_util_reopen(&w);
    a = answers(&u);
    b = answers(&w);
    assert_same_answers(b, a, "restart");
    free_answers(a);
    free_answers(b);
    sched_util_close(&u);
    sched_util_close(&w);
}
END_TEST

/* Deletes every job whose state is `state`. */
static void delete_jobs(struct sched_util *u, const char *state, int64_t now_ms)
{
    struct err err = ERR_INIT;
    json_t *jobs = NULL, *j;
    size_t i;
    ck_assert_msg(sched_jobs(u->s, state, &jobs, &err) == 0, "%s", err.msg);
    json_array_foreach(jobs, i, j)
    {
        const char *id = json_string_value(json_object_get(j, "id"));
        if (!strncmp(id, "default/gang-", 13)) {
            for (int p = 0; p < 2; p++) {
                char pod[64];
                snprintf(pod, sizeof(pod), "%s-%d", id, p);
                ck_assert_msg(sched_delete(u->s, MODEL_POD, pod, now_ms, &err) == 0, "%s", err.msg);
            }
            ck_assert_msg(sched_delete(u->s, MODEL_PODGROUP, id, now_ms, &err) == 0, "%s", err.msg);
        } else {
            ck_assert_msg(sched_delete(u->s, MODEL_POD, id, now_ms, &err) == 0, "%s", err.msg);
        }
    }
    json_decref(jobs);
}

/* job-03 asks for 1 cpu (still too much), then the placed jobs go and more fit. */
static void edit_and_free(struct sched_util *u)
{
    json_decref(sched_util_apply(
        u,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"job-03\",\"namespace\":"
        "\"default\",\"creationTimestamp\":\"2026-01-01T00:04:00Z\"},\"spec\":{\"containers\":[{"
        "\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
        3000));
    json_decref(sched_util_cycle(u, 4000));
    delete_jobs(u, "Scheduled", 5000);
    json_decref(sched_util_cycle(u, 6000));
    json_decref(sched_util_cycle(u, 7000));
}

/* A job whose class changes (its spec edited, room freed) gets its own answer, the same as a
 * whole document gives; the others keep theirs; class documents go with their last record. */
START_TEST(test_why_class_leaving_and_gone)
{
    struct sched_util u, w;
    open_pair(&u, &w, 6);
    edit_and_free(&u);
    edit_and_free(&w);
    json_t *a = answers(&u), *b = answers(&w);
    assert_same_answers(b, a, "after the edit and the frees");
    json_t *why = sched_util_why(&u, "default/job-03");
    ck_assert_msg(strstr(sched_util_str2(why, "nodeFilter", "summary"), "need 1"), "%s",
                  sched_util_str2(why, "nodeFilter", "summary"));
    json_decref(why);
    free_answers(a);
    free_answers(b);
    int r, c;
    count_classes(&u, &r, &c);
    ck_assert_int_gt(c, 0);
    assert_counts(&u);

    /* every job goes: no record is left, so no class document either, nor a document of
     * a gang whose PodGroup went after its pods */
    delete_jobs(&u, NULL, 8000);
    json_decref(sched_util_cycle(&u, 9000));
    assert_none_stored(&u);
    assert_counts(&u);

    /* the same jobs made again are new: no cycle has tried them, whatever the old ones said */
    char *y = cluster(6);
    json_decref(sched_util_apply(&u, y, 10000));
    free(y);
    struct err err = ERR_INIT;
    json_t *jobs = NULL, *j;
    size_t i;
    ck_assert_msg(sched_jobs(u.s, NULL, &jobs, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(json_array_size(jobs), 10);
    json_array_foreach(jobs, i, j)
    {
        ck_assert_msg(!strcmp(json_string_value(json_object_get(j, "reason")), "NotTried"),
                      "job '%s' made again says '%s'", json_string_value(json_object_get(j, "id")),
                      json_string_value(json_object_get(j, "reason")));
    }
    json_decref(jobs);
    sched_util_close(&u);
    sched_util_close(&w);
}
END_TEST

/* ---- random lifecycles ---- */

#define RND_NODE                                                                                   \
    "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\nstatus: {allocatable: {cpu: \"4\"}}\n"
#define RND_POD                                                                                    \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t}\n"                             \
    "spec: {priority: %d, containers: [{name: c, image: x, resources: {requests: {cpu: "           \
    "\"%d\"}}}]}\n"
#define RND_GANG_POD                                                                               \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t, labels: "                      \
    "{pod-group.scheduling.sigs.k8s.io: %s}}\n"                                                    \
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"%d\"}}}]}\n"
#define RND_GROUP                                                                                  \
    "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"                                \
    "metadata: {name: g%d, namespace: t}\nspec: {minMember: %d}\n"

static void delete_key(struct sched_util *u, enum model_kind kind, const char *fmt, int i,
                       int64_t now, int *deleted)
{
    char key[32];
    struct err err = ERR_INIT;
    snprintf(key, sizeof(key), fmt, i);
    int rc = sched_delete(u->s, kind, key, now, &err);
    ck_assert_msg(rc == 0 || rc == ERR_NOT_FOUND, "%s", err.msg);
    *deleted += rc == 0;
}

/* Stored pod t/p<i> applied again with edit done to it (none when it is gone). */
static void edit_pod(struct sched_util *u, int i, int64_t now, void (*edit)(json_t *, int64_t))
{
    char key[32];
    snprintf(key, sizeof(key), "t/p%d", i);
    json_t *pod = sched_util_pod(u, key);
    if (!pod)
        return;
    json_object_del(json_object_get(pod, "metadata"), "resourceVersion");
    edit(pod, now);
    char *text = json_dumps(pod, JSON_COMPACT);
    json_decref(sched_util_apply(u, text, now));
    free(text);
    json_decref(pod);
}

static void make_terminating(json_t *pod, int64_t now)
{
    (void)now;
    json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
                        json_string("1970-01-01T00:00:01Z"));
}

/* Moves the pod to group t/g<now % 7>, or out of its group. */
static void relabel(json_t *pod, int64_t now)
{
    json_t *meta = json_object_get(pod, "metadata");
    char g[16];
    snprintf(g, sizeof(g), "g%d", (int)(now / 100 % 7));
    if (now / 100 % 3 == 0)
        json_object_del(meta, "labels");
    else
        json_object_set_new(meta, "labels",
                            json_pack("{s:s}", "pod-group.scheduling.sigs.k8s.io", g));
}

/* Jobs come and go every way they can: lone pods and gangs created (many fail and share a
 * class), placed, preempted (victims removed after their grace period, their records
 * retained), moved to another gang, deleted pod by pod, PodGroup first or last, removed
 * by the housekeeping. After every step the why DB holds only live jobs' documents and
 * counted classes; a restart (the view rebuilt from the store) agrees; once everything is
 * gone and retention has ended, the why DB is empty. */
START_TEST(test_why_class_random_lifecycles)
{
    struct sched_util u;
    struct sched_options o = {.grace_ms = 500, .retention_ms = 3000};
    sched_util_open(&u, &o);
    unsigned seed = 8;
    int64_t now = 1000;
    int nodes = 0, pods = 0, groups = 0, deleted = 0, gdeleted = 0, cycles = 0, restarts = 0;
    for (; nodes < 2; nodes++)
        sched_util_applyf(&u, now, RND_NODE, nodes);
    for (int step = 0; step < 600; step++) {
        int op = (int)(rand_r(&seed) % 100), i;
        now += 100;
        if (op < 20) { /* a lone pod: most wait, several of one shape share a class */
            sched_util_applyf(&u, now, RND_POD, pods++, 0, 1 + (int)(rand_r(&seed) % 3));
        } else if (op < 24 && pods) { /* terminating: housekeeping removes it */
            edit_pod(&u, (int)(rand_r(&seed) % (unsigned)pods), now, make_terminating);
        } else if (op < 32) { /* a gang */
            int size = 2 + (int)(rand_r(&seed) % 2);
            sched_util_applyf(&u, now, RND_GROUP, groups, size);
            char g[16];
            snprintf(g, sizeof(g), "g%d", groups++);
            for (int k = 0; k < size; k++)
                sched_util_applyf(&u, now, RND_GANG_POD, pods++, g, 1 + (int)(rand_r(&seed) % 2));
        } else if (op < 35) { /* pods naming a PodGroup nobody made */
            sched_util_applyf(&u, now, RND_GANG_POD, pods++, "ghost", 1);
        } else if (op < 47 && pods) {
            delete_key(&u, MODEL_POD, "t/p%d", (int)(rand_r(&seed) % (unsigned)pods), now,
                       &deleted);
        } else if (op < 53 && groups) {
            delete_key(&u, MODEL_PODGROUP, "t/g%d", (int)(rand_r(&seed) % (unsigned)groups), now,
                       &gdeleted);
        } else if (op < 57 && pods) { /* a pod moves to another gang, or out of its gang */
            i = (int)(rand_r(&seed) % (unsigned)pods);
            edit_pod(&u, i, now + (int64_t)(rand_r(&seed) % 21) * 100, relabel);
        } else if (op < 60) { /* a high-priority pod: preempts */
            sched_util_applyf(&u, now, RND_POD, pods++, 100, 4);
        } else if (op < 62) {
            sched_util_applyf(&u, now, RND_NODE, nodes++);
        } else { /* a cycle, sometimes past every grace period, backoff and retention */
            json_decref(sched_util_cycle(&u, op < 72 ? now + 61000 : now));
            cycles++;
        }
        assert_counts(&u);
        if (step % 75 == 74) {
            sched_util_reopen(&u);
            assert_counts(&u);
            restarts++;
        }
    }
    ck_assert_int_gt(cycles, 100);
    ck_assert_int_gt(deleted, 20);
    ck_assert_int_gt(gdeleted, 5);
    ck_assert_int_eq(restarts, 8);
    ck_assert_int_gt(sched_util_audit_count(&u, "evicted", NULL), 0);
    int r, c;
    count_classes(&u, &r, &c);
    ck_assert_msg(r > 0 && c > 0, "no class at the end (%d records, %d classes)", r, c);

    /* everything goes; after the grace periods and the retention, nothing is left */
    for (int k = 0; k < pods; k++)
        delete_key(&u, MODEL_POD, "t/p%d", k, now, &deleted);
    for (int k = 0; k < groups; k++)
        delete_key(&u, MODEL_PODGROUP, "t/g%d", k, now, &gdeleted);
    assert_counts(&u);
    json_decref(sched_util_cycle(&u, now + 100000));
    assert_counts(&u);
    assert_none_stored(&u);
    sched_util_close(&u);
}
END_TEST

/* A gang of one running pod and a pending one (minMember 1), cpu each, the gang with
 * MustGather BlockLayer when gather is set (the sched_util_applyf of a PodGroup and pods). */
static void gang(struct sched_util *u, int64_t now, const char *name, int gather, const char *cpu,
                 int pod)
{
    if (pod == 0)
        sched_util_applyf(
            u, now,
            "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s, "
            "namespace: default%s}\nspec: {minMember: 1}\n",
            name,
            gather ? ", annotations: {gang.scheduling.koordinator.sh/network-topology-spec: "
                     "'{\"gatherStrategy\":[{\"layer\":\"BlockLayer\",\"strategy\":"
                     "\"MustGather\"}]}'}"
                   : "");
    sched_util_applyf(u, now,
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: default, "
                      "labels: {pod-group.scheduling.sigs.k8s.io: %s}}\nspec: {containers: [{name: "
                      "c, image: x, resources: {requests: {cpu: \"%s\"}}}]}\n",
                      name, pod, name, cpu);
}

/* A job placed in the cycle takes the room a failing job of the same shape was told of: the
 * node filter made for that shape earlier in the cycle no longer holds after the bind, and
 * the later job's document names the capacity (stress seed 1274: it said a node fit, with no
 * primary and no blockers). Here gang g's new pod must join g-0's full block (b1) though node
 * b has room for it, nothing bound; then s-1 takes b's room; then h-1, of g-1's shape, fits
 * nowhere. The gangs' running pods order them (DRF: g, s, h). */
START_TEST(test_why_class_filter_after_bind)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    sched_util_applyf(
        &u, 1000, "%s",
        "apiVersion: scheduling.koordinator.sh/v1alpha1\nkind: ClusterNetworkTopology\n"
        "metadata: {name: default}\nspec: {networkTopologySpec: [{topologyLayer: BlockLayer, "
        "labelKey: [block]}, {topologyLayer: NodeTopologyLayer, parentTopologyLayer: "
        "BlockLayer}]}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {block: b1}}\n"
        "status: {allocatable: {cpu: \"4\", pods: \"10\"}}\n");
    gang(&u, 1000, "g", 1, "3", 0);
    json_decref(sched_util_cycle(&u, 1500)); /* g-0 on a */
    sched_util_applyf(&u, 2000, "%s",
                      "apiVersion: v1\nkind: Node\nmetadata: {name: b, labels: {block: b2}}\n"
                      "status: {allocatable: {cpu: \"11\", pods: \"10\"}}\n");
    gang(&u, 2000, "s", 0, "3500m", 0);
    gang(&u, 2000, "h", 0, "4", 0);
    json_decref(sched_util_cycle(&u, 2500)); /* s-0 and h-0 on b: 3.5 cpu left there */
    gang(&u, 3000, "g", 1, "3", 1);
    gang(&u, 3000, "s", 0, "1500m", 1);
    gang(&u, 3000, "h", 0, "3", 1);
    json_decref(sched_util_cycle(&u, 3500));
    json_t *g = NULL, *h = NULL;
    ck_assert_int_eq(sched_why(u.s, "default/g", &g, &err), 0);
    ck_assert_int_eq(sched_why(u.s, "default/h", &h, &err), 0);
    char *gd = json_dumps(g, JSON_COMPACT), *hd = json_dumps(h, JSON_COMPACT);
    /* g-1 was told b fits it (before s-1 took b's room) */
    ck_assert_msg(json_integer_value(json_object_get(json_object_get(g, "nodeFilter"), "fit")) == 1,
                  "%s", gd);
    ck_assert_msg(json_is_object(json_object_get(h, "primary")), "no primary: %s", hd);
    ck_assert_msg(json_array_size(json_object_get(h, "blockers")) > 0, "no blockers: %s", hd);
    ck_assert_msg(json_integer_value(json_object_get(json_object_get(h, "nodeFilter"), "fit")) == 0,
                  "%s", hd);
    free(gd);
    free(hd);
    json_decref(g);
    json_decref(h);
    sched_util_close(&u);
}
END_TEST

static Suite *why_class_suite(void)
{
    Suite *s = suite_create("why_class");
    TCase *tc = tcase_create("why_class");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_why_class_cases_same_answers);
    tcase_add_test(tc, test_why_class_members_own_answers);
    tcase_add_test(tc, test_why_class_leaving_and_gone);
    tcase_add_test(tc, test_why_class_random_lifecycles);
    tcase_add_test(tc, test_why_class_filter_after_bind);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(why_class_suite());
}
