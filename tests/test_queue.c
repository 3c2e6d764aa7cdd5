/*
 * test_queue.c - fair share between queues (docs/queues.md): deserved shares by weight,
 * guarantee, capability and hierarchy, the blockers of the queue rules, reclaim, and a
 * rebuilt view equal to the live one. The peers' own cases are folders under
 * tests/data/sched/queue_*.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "scheduler.h"
#include "sched_util.h"

static void node(struct sched_util *u, const char *name, int cpu)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},"
             "\"status\":{\"allocatable\":{\"cpu\":\"%d\",\"memory\":\"64Gi\"}}}",
             name, cpu);
    json_decref(sched_util_apply(u, buf, 1000));
}

/* A queue; spec is the JSON of its spec's members ("\"weight\":2"), may be "". */
static void queue(struct sched_util *u, const char *name, const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{%s}}",
             name, spec);
    json_decref(sched_util_apply(u, buf, 1000));
}

/* n one-cpu pods <prefix>-<i> in queue q (NULL: no annotation), bound round-robin to the
 * nodes named in on (comma-free list "n1 n2", NULL: pending). */
static void pods(struct sched_util *u, const char *prefix, const char *q, int n, int prio,
                 const char *on, int64_t at)
{
    char nodes[8][16];
    int nn = 0;
    if (on)
        for (const char *p = on; *p && nn < 8;) {
            int len = (int)strcspn(p, " ");
            snprintf(nodes[nn++], sizeof(nodes[0]), "%.*s", len, p);
            p += len + (p[len] == ' ');
        }
    for (int i = 0; i < n; i++) {
        char buf[1024], ann[256] = "", bind[128] = "";
        if (q)
            snprintf(ann, sizeof(ann),
                     ",\"annotations\":{\"scheduling.volcano.sh/queue-name\":\"%s\"}", q);
        if (nn)
            snprintf(bind, sizeof(bind), ",\"nodeName\":\"%s\"", nodes[i % nn]);
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%d\","
                 "\"namespace\":\"default\",\"creationTimestamp\":\"2026-01-01T00:%02d:%02dZ\""
                 "%s},\"spec\":{\"priority\":%d%s,\"containers\":[{\"name\":\"c\",\"image\":\"x\","
                 "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}%s}",
                 prefix, i, i / 60, i % 60, ann, prio, bind,
                 nn ? ",\"status\":{\"phase\":\"Running\"}" : "");
        json_decref(sched_util_apply(u, buf, at));
    }
}

static json_t *q_get(struct sched_util *u, const char *name)
{
    json_t *q = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(sched_queue(u->s, name, &q, &err) == 0, "%s", err.msg);
    return q;
}

/* resources.<res>.<what> of queue name, in model units. */
static long long q_num(struct sched_util *u, const char *name, const char *res, const char *what)
{
    json_t *q = q_get(u, name);
    json_t *v = json_object_get(json_object_get(json_object_get(q, "resources"), res), what);
    long long n = json_is_null(v) ? -1 : (long long)json_integer_value(v);
    json_decref(q);
    return n;
}

static const char *primary(json_t *why)
{
    return json_string_value(json_object_get(json_object_get(why, "primary"), "code"));
}

static void assert_primary(struct sched_util *u, const char *job, const char *code)
{
    json_t *w = sched_util_why(u, job);
    ck_assert_msg(primary(w) && !strcmp(primary(w), code), "job %s: primary %s, expected %s", job,
                  primary(w) ? primary(w) : "(none)", code);
    json_decref(w);
}

static void assert_rebuilt_equal(struct sched_util *u)
{
    struct err err = ERR_INIT;
    json_t *live = sched_view_dump(u->s), *stored = NULL;
    ck_assert_msg(sched_view_dump_store(u->s, &stored, &err) == 0, "%s", err.msg);
    ck_assert_msg(json_equal(live, stored), "live view (queues included) differs from the store");
    json_decref(live);
    json_decref(stored);
}

/* Volcano's proportion: 12 cpus by weight 1:2:3 among queues that want 2, 10 and 10. The
 * first wants less than its part (2 of 2): it keeps what it asks for and the others split
 * the remaining 10 by 2:3. One cycle places exactly the deserved shares. */
START_TEST(test_queue_deserved_water_filling)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof(n), "n%d", i);
        node(&u, n, 4);
    }
    queue(&u, "a", "\"weight\":1");
    queue(&u, "b", "\"weight\":2");
    queue(&u, "c", "\"weight\":3");
    pods(&u, "a", "a", 2, 0, NULL, 1000);
    pods(&u, "b", "b", 10, 0, NULL, 1000);
    pods(&u, "c", "c", 10, 0, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(q_num(&u, "a", "cpu", "deserved"), 2000);
    ck_assert_int_eq(q_num(&u, "b", "cpu", "deserved"), 4000);
    ck_assert_int_eq(q_num(&u, "c", "cpu", "deserved"), 6000);
    ck_assert_int_eq(q_num(&u, "a", "cpu", "allocated"), 2000);
    ck_assert_int_eq(q_num(&u, "b", "cpu", "allocated"), 4000);
    ck_assert_int_eq(q_num(&u, "c", "cpu", "allocated"), 6000);
    ck_assert_int_eq(q_num(&u, "c", "cpu", "request"), 10000);
    /* b and c are at their share and nobody borrows: at the next cycle their pending pods
     * wait for capacity, not for their share */
    assert_primary(&u, "default/b-9", "TakenByEarlierJobs");
    json_decref(sched_util_cycle(&u, 3000));
    assert_primary(&u, "default/b-9", "InsufficientCapacity");
    json_t *q = q_get(&u, "c");
    ck_assert_double_eq_tol(json_real_value(json_object_get(q, "share")), 1.0, 1e-9);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(q, "jobs"), "running")), 6);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(q, "jobs"), "pending")), 4);
    ck_assert_int_eq(json_array_size(json_object_get(q, "pendingJobs")), 4);
    json_decref(q);
    assert_rebuilt_equal(&u);
    sched_util_close(&u);
}
END_TEST

/* A guarantee is a floor reserved for its queue: g deserves its 6 cpus though it asks for
 * 1, and nobody borrows them; x stops at its capability (QueueOverCapability), y at what
 * g's guarantee leaves it, borrowing x's unused part up to there. */
START_TEST(test_queue_guarantee_and_capability)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 6);
    node(&u, "n2", 6);
    queue(&u, "g", "\"guarantee\":{\"resource\":{\"cpu\":\"6\"}}");
    queue(&u, "x", "\"capability\":{\"cpu\":\"3\"}");
    queue(&u, "y", "");
    pods(&u, "g", "g", 1, 0, NULL, 1000);
    pods(&u, "x", "x", 5, 0, NULL, 1000);
    pods(&u, "y", "y", 8, 0, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(q_num(&u, "g", "cpu", "deserved"), 6000);
    ck_assert_int_eq(q_num(&u, "x", "cpu", "deserved"), 3000);
    ck_assert_int_eq(q_num(&u, "y", "cpu", "deserved"), 3000);
    ck_assert_int_eq(q_num(&u, "x", "cpu", "capability"), 3000);
    ck_assert_int_eq(q_num(&u, "y", "cpu", "capability"), 6000); /* 12 less g's 6 */
    ck_assert_int_eq(q_num(&u, "g", "cpu", "allocated"), 1000);
    ck_assert_int_eq(q_num(&u, "x", "cpu", "allocated"), 3000);
    ck_assert_int_eq(q_num(&u, "y", "cpu", "allocated"), 6000);
    ck_assert_int_eq(q_num(&u, "y", "cpu", "borrowed"), 3000);
    assert_primary(&u, "default/x-4", "QueueOverCapability");
    assert_primary(&u, "default/y-7", "QueueOverCapability");
    json_t *w = sched_util_why(&u, "default/x-4");
    json_t *b = json_array_get(json_object_get(w, "blockers"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(b, "queue")), "x");
    ck_assert_int_eq(json_integer_value(json_object_get(b, "capability")), 3000);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(b, "message")), "3 cpu allocated + 1 asked"));
    ck_assert_str_eq(sched_util_str2(w, "queue", "name"), "x");
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

/* A job that would take its queue over its capability preempts lower-priority jobs of
 * that queue, even with free nodes elsewhere, and never jobs of other queues. */
START_TEST(test_queue_capability_preempts_inside)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 4);
    node(&u, "n2", 4);
    queue(&u, "x", "\"capability\":{\"cpu\":\"3\"}");
    queue(&u, "y", "");
    pods(&u, "lo", "x", 3, 1, "n1", 1000);
    pods(&u, "ylo", "y", 1, 0, "n1", 1000);
    pods(&u, "hi", "x", 1, 100, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    assert_primary(&u, "default/hi-0", "Preempting");
    json_t *ledger = sched_util_ledger(&u, NULL, NULL, NULL);
    ck_assert_int_eq(json_array_size(ledger), 1);
    json_t *e = json_array_get(ledger, 0), *victims = json_object_get(e, "victims");
    ck_assert_int_eq(json_array_size(victims), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(victims, 0), "queue")), "x");
    ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), "preemption");
    json_decref(ledger);
    sched_util_close(&u);
}
END_TEST

/* An elastic gang (minMember 2, six pods) in a queue capped at 4 cpus starts with the four
 * pods the capability allows, as Volcano allocates task by task; the other two wait. */
START_TEST(test_queue_capability_elastic_gang)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 16);
    queue(&u, "capped", "\"capability\":{\"cpu\":\"4\"}");
    json_decref(sched_util_apply(
        &u,
        "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":"
        "{\"name\":\"el\",\"namespace\":\"default\"},\"spec\":{\"minMember\":2,\"queue\":"
        "\"capped\"}}",
        1000));
    for (int i = 0; i < 6; i++) {
        char buf[512];
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"el-%d\","
                 "\"namespace\":\"default\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
                 "\"el\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\","
                 "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
                 i);
        json_decref(sched_util_apply(&u, buf, 1000));
    }
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(q_num(&u, "capped", "cpu", "allocated"), 4000);
    json_t *job = sched_util_job(&u, "default/el");
    ck_assert_int_eq(json_integer_value(json_object_get(job, "placed")), 4);
    json_decref(job);
    json_decref(sched_util_cycle(&u, 3000));
    ck_assert_int_eq(q_num(&u, "capped", "cpu", "allocated"), 4000);
    assert_primary(&u, "default/el", "QueueOverCapability");
    assert_rebuilt_equal(&u);
    sched_util_close(&u);
}
END_TEST

/* Children divide their parent's share by weight; a job in a queue with children, or in a
 * queue that does not exist, waits and says why, and runs once the queue exists. */
START_TEST(test_queue_hierarchy_and_missing)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 8);
    node(&u, "n2", 8);
    queue(&u, "p", "");
    queue(&u, "q", "");
    queue(&u, "p1", "\"parent\":\"p\"");
    queue(&u, "p2", "\"parent\":\"p\",\"weight\":3");
    pods(&u, "p1", "p1", 10, 0, NULL, 1000);
    pods(&u, "p2", "p2", 10, 0, NULL, 1000);
    pods(&u, "q", "q", 10, 0, NULL, 1000);
    pods(&u, "in-p", "p", 1, 0, NULL, 1000);
    pods(&u, "lost", "nowhere", 1, 0, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(q_num(&u, "p", "cpu", "deserved"), 8000);
    ck_assert_int_eq(q_num(&u, "q", "cpu", "deserved"), 8000);
    ck_assert_int_eq(q_num(&u, "p1", "cpu", "deserved"), 2000);
    ck_assert_int_eq(q_num(&u, "p2", "cpu", "deserved"), 6000);
    ck_assert_int_eq(q_num(&u, "p1", "cpu", "allocated"), 2000);
    ck_assert_int_eq(q_num(&u, "p2", "cpu", "allocated"), 6000);
    ck_assert_int_eq(q_num(&u, "p", "cpu", "allocated"), 8000); /* its children's */
    json_t *p = q_get(&u, "p");
    ck_assert_int_eq(json_array_size(json_object_get(p, "children")), 2);
    json_decref(p);
    assert_primary(&u, "default/in-p-0", "QueueNotLeaf");
    assert_primary(&u, "default/lost-0", "QueueNotFound");
    json_t *job = sched_util_job(&u, "default/lost-0");
    ck_assert_str_eq(json_string_value(json_object_get(job, "queue")), "nowhere");
    json_decref(job);
    json_t *w = sched_util_why(&u, "default/lost-0");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(w, "blockers"), 0), "queue")),
                     "nowhere");
    json_decref(w);
    /* the queue appears: the job joins it (and its allocation follows the job) */
    queue(&u, "nowhere", "\"capability\":{\"cpu\":\"0\"}");
    json_decref(sched_util_cycle(&u, 3000));
    assert_primary(&u, "default/lost-0", "QueueOverCapability");
    assert_rebuilt_equal(&u);
    sched_util_close(&u);
}
END_TEST

/* Volcano's reclaim: queue a (weight 1) has lent the whole cluster at priority 100; queue
 * b (weight 3) asks for 4 cpus at priority 0 and takes them back whatever the priorities,
 * leaving a exactly at its deserved 4 (never below). */
START_TEST(test_queue_reclaim)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 4);
    node(&u, "n2", 4);
    queue(&u, "a", "\"weight\":1");
    queue(&u, "b", "\"weight\":3");
    pods(&u, "a", "a", 8, 100, "n1 n2", 1000);
    pods(&u, "b", "b", 4, 0, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(q_num(&u, "a", "cpu", "deserved"), 4000);
    ck_assert_int_eq(q_num(&u, "b", "cpu", "deserved"), 4000);
    json_t *ledger = sched_util_ledger(&u, NULL, NULL, NULL);
    size_t i, victims = 0;
    json_t *e;
    json_array_foreach(ledger, i, e)
    {
        ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), "reclaim");
        ck_assert_str_eq(sched_util_str2(e, "queue", "name"), "b");
        json_t *vq = json_array_get(json_object_get(e, "victimQueues"), 0);
        ck_assert_str_eq(json_string_value(json_object_get(vq, "name")), "a");
        ck_assert(json_real_value(json_object_get(vq, "shareAfter")) <
                  json_real_value(json_object_get(vq, "shareBefore")));
        victims += json_array_size(json_object_get(e, "victims"));
    }
    ck_assert_int_eq(json_array_size(ledger), 4);
    ck_assert_int_eq(victims, 4); /* minimal: one 1-cpu pod of a per 1-cpu pod of b */
    json_decref(ledger);
    assert_primary(&u, "default/b-0", "Reclaiming");
    json_t *b = q_get(&u, "b"), *a = q_get(&u, "a");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(b, "reclaims"), "by")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(a, "reclaims"), "from")),
                     4);
    json_decref(a);
    json_decref(b);
    /* the victims terminate; b binds on the room it reclaimed; a keeps its deserved 4 */
    for (int t = 40; t <= 120; t += 40)
        json_decref(sched_util_cycle(&u, t * 1000));
    ck_assert_int_eq(q_num(&u, "b", "cpu", "allocated"), 4000);
    ck_assert_int_eq(q_num(&u, "a", "cpu", "allocated"), 4000);
    assert_rebuilt_equal(&u);
    sched_util_close(&u);
}
END_TEST

/* A queue that is not reclaimable keeps what it borrowed. */
START_TEST(test_queue_not_reclaimable)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 4);
    node(&u, "n2", 4);
    queue(&u, "a", "\"reclaimable\":false");
    queue(&u, "b", "");
    pods(&u, "a", "a", 8, 0, "n1 n2", 1000);
    pods(&u, "b", "b", 2, 100, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    json_t *ledger = sched_util_ledger(&u, NULL, NULL, NULL);
    ck_assert_int_eq(json_array_size(ledger), 0);
    json_decref(ledger);
    json_t *w = sched_util_why(&u, "default/b-0");
    ck_assert_str_eq(sched_util_str2(w, "preemption", "code"), "PreemptionNoVictims");
    ck_assert_ptr_nonnull(strstr(sched_util_str2(w, "preemption", "reason"),
                                 "no reclaimable queue above its deserved share"));
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

/* Queues over their deserved share cannot reclaim: a's pending pod waits for its share
 * while c borrows too; d, under its share, reclaims from both a and c, never taking
 * either below its deserved 4. */
START_TEST(test_queue_waiting_for_share)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 4);
    node(&u, "n2", 4);
    node(&u, "n3", 4);
    queue(&u, "a", "");
    queue(&u, "c", "");
    queue(&u, "d", "");
    pods(&u, "a", "a", 5, 0, "n1 n1 n1 n1 n2", 1000);
    pods(&u, "c", "c", 5, 0, "n3 n3 n3 n3 n2", 1000);
    pods(&u, "d", "d", 2, 0, "n2 n2", 1000);
    pods(&u, "a-new", "a", 1, 0, NULL, 1000);
    pods(&u, "c-new", "c", 1, 0, NULL, 1000);
    pods(&u, "d-new", "d", 2, 0, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(q_num(&u, "a", "cpu", "deserved"), 4000);
    ck_assert_int_eq(q_num(&u, "d", "cpu", "deserved"), 4000);
    assert_primary(&u, "default/a-new-0", "WaitingForQueueShare");
    assert_primary(&u, "default/d-new-0", "Reclaiming");
    assert_primary(&u, "default/d-new-1", "Reclaiming");
    json_t *ledger = sched_util_ledger(&u, NULL, NULL, NULL);
    ck_assert_int_eq(json_array_size(ledger), 2);
    int from_a = 0, from_c = 0;
    size_t i;
    json_t *e;
    json_array_foreach(ledger, i, e)
    {
        const char *vq = json_string_value(
            json_object_get(json_array_get(json_object_get(e, "victimQueues"), 0), "name"));
        from_a += !strcmp(vq, "a");
        from_c += !strcmp(vq, "c");
    }
    ck_assert_int_eq(from_a, 1); /* one each: two from one queue would take it below 4 */
    ck_assert_int_eq(from_c, 1);
    json_decref(ledger);
    sched_util_close(&u);
}
END_TEST

/* Deleting a queue's object puts its jobs in QueueNotFound; re-creating it moves their
 * allocation back; the built-in default queue is listed. */
START_TEST(test_queue_default_and_listing)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 4);
    pods(&u, "plain", NULL, 2, 0, NULL, 1000);
    json_decref(sched_util_cycle(&u, 2000));
    json_t *all = NULL;
    struct err err = ERR_INIT;
    ck_assert_int_eq(sched_queues(u.s, &all, &err), 0);
    ck_assert_int_eq(json_array_size(all), 1);
    json_t *d = json_array_get(all, 0);
    ck_assert_str_eq(json_string_value(json_object_get(d, "name")), "default");
    ck_assert(json_is_true(json_object_get(d, "builtin")));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "allocated"), "cpu")),
                     "2");
    json_decref(all);
    ck_assert_int_eq(sched_queue(u.s, "nope", &all, &err), ERR_NOT_FOUND);
    sched_util_close(&u);
}
END_TEST

/* Volcano's enqueue: a PodGroup's spec.minResources counts against its queue's capability
 * when it asks for more than its pending pods do. */
START_TEST(test_queue_min_resources)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    node(&u, "n1", 16);
    queue(&u, "small", "\"capability\":{\"cpu\":\"4\"}");
    json_decref(sched_util_apply(
        &u,
        "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
        "\"metadata\":{\"name\":\"big\",\"namespace\":\"default\"},\"spec\":{\"minMember\":1,"
        "\"queue\":\"small\",\"minResources\":{\"cpu\":\"8\"}}}",
        1000));
    json_decref(sched_util_apply(
        &u,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"big-0\",\"namespace\":"
        "\"default\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"big\"}},\"spec\":{"
        "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
        "\"cpu\":\"1\"}}}]}}",
        1000));
    json_decref(sched_util_cycle(&u, 2000));
    assert_primary(&u, "default/big", "QueueOverCapability");
    json_t *w = sched_util_why(&u, "default/big");
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_array_get(json_object_get(w, "blockers"), 0), "asked")),
                     8000);
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

/* A deleted queue leaves an empty slot the fair share, the order and reclaim skip: a
 * reclaim in the next cycle still works. */
START_TEST(test_queue_deleted_then_reclaim)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    node(&u, "n1", 4);
    queue(&u, "gone", "");
    queue(&u, "a", "");
    queue(&u, "b", "");
    pods(&u, "a", "a", 4, 0, "n1", 1000);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(sched_delete(u.s, MODEL_QUEUE, "gone", 3000, &err), 0);
    pods(&u, "b", "b", 2, 0, NULL, 3000);
    json_decref(sched_util_cycle(&u, 4000));
    assert_primary(&u, "default/b-0", "Reclaiming");
    ck_assert_int_eq(sched_queue(u.s, "gone", &(json_t *){NULL}, &err), ERR_NOT_FOUND);
    assert_rebuilt_equal(&u);
    sched_util_close(&u);
}
END_TEST

static Suite *queue_suite(void)
{
    Suite *s = suite_create("queue");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_queue_deserved_water_filling);
    tcase_add_test(tc, test_queue_guarantee_and_capability);
    tcase_add_test(tc, test_queue_hierarchy_and_missing);
    tcase_add_test(tc, test_queue_capability_preempts_inside);
    tcase_add_test(tc, test_queue_capability_elastic_gang);
    tcase_add_test(tc, test_queue_reclaim);
    tcase_add_test(tc, test_queue_not_reclaimable);
    tcase_add_test(tc, test_queue_waiting_for_share);
    tcase_add_test(tc, test_queue_default_and_listing);
    tcase_add_test(tc, test_queue_min_resources);
    tcase_add_test(tc, test_queue_deleted_then_reclaim);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(queue_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
