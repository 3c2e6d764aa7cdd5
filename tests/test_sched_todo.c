/*
 * test_sched_todo.c - the jobs a cycle looks at (view.h todo, cycle.c pending_jobs) against
 * all jobs: after random applies, deletes, finished pods, node changes and cycles, every
 * job a full scan finds work for (sched__job_has_work) is in the todo, once; and the
 * count of terminating pods that gates the housekeeping's scan (view.h ndeleting) matches a
 * count of every pod.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "core.h"
#include "cycle.h"
#include "err.h"
#include "sched_util.h"
#include "view.h"

#define NODE_YAML                                                                                  \
    "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"                                          \
    "status: {allocatable: {cpu: \"2\", pods: \"10\"}}\n"
#define POD_YAML                                                                                   \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t%s}\n"                           \
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n"
#define TERMINATING_POD_YAML                                                                       \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t, deletionTimestamp: "           \
    "\"1970-01-01T00:00:01Z\"}\n"                                                                  \
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n"
#define GANG_POD_YAML                                                                              \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t, labels: "                      \
    "{pod-group.scheduling.sigs.k8s.io: g%d}}\n"                                                   \
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n"
#define GROUP_YAML                                                                                 \
    "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"                                \
    "metadata: {name: g%d, namespace: t}\nspec: {minMember: %d}\n"

/* Every job with work is in the todo, and the todo lists each job once. */
static void check_todo(struct sched_util *u, int step)
{
    struct sched_view *v = u->s->v;
    size_t marked = 0;
    for (size_t i = 0; i < v->njobs; i++) {
        const struct sv_job *j = &v->jobs[i];
        int in = i < v->capin_todo && v->in_todo[i];
        marked += in;
        ck_assert_msg(!sched__job_has_work(v, j) || in,
                      "step %d: job '%s' has work but the cycle would not look at it", step, j->id);
    }
    ck_assert_int_eq(marked, v->ntodo);
    size_t deleting = 0;
    for (size_t i = 0; i < v->npods; i++)
        deleting += v->pods[i].alive && v->pods[i].m.deletion_ms;
    ck_assert_msg(deleting == v->ndeleting, "step %d: %zu terminating pods, the view counts %zu",
                  step, deleting, v->ndeleting);
}

START_TEST(test_sched_todo_holds_every_job_with_work)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    unsigned seed = 3;
    int64_t now = 1000;
    int nodes = 0, pods = 0, groups = 0, cycles = 0, deleted = 0, finished = 0, terminating = 0;
    for (; nodes < 3; nodes++)
        sched_util_applyf(&u, now, NODE_YAML, nodes);
    for (int step = 0; step < 400; step++) {
        int op = (int)(rand_r(&seed) % 100);
        now += 100;
        if (op < 22) { /* a lone pod */
            sched_util_applyf(&u, now, POD_YAML, pods++, "");
        } else if (op < 25) { /* a pod already terminating: housekeeping removes it after
                                 the grace period */
            sched_util_applyf(&u, now, TERMINATING_POD_YAML, pods++);
            terminating++;
        } else if (op < 35) { /* a gang of 2 or 3 */
            int size = 2 + (int)(rand_r(&seed) % 2);
            sched_util_applyf(&u, now, GROUP_YAML, groups, size);
            for (int k = 0; k < size; k++)
                sched_util_applyf(&u, now, GANG_POD_YAML, pods++, groups);
            groups++;
        } else if (op < 50 && pods) { /* a pod deleted, placed or not */
            char key[32];
            struct err err = ERR_INIT;
            snprintf(key, sizeof(key), "t/p%d", (int)(rand_r(&seed) % (unsigned)pods));
            int rc = sched_delete(u.s, MODEL_POD, key, now, &err);
            ck_assert_msg(rc == 0 || rc == ERR_NOT_FOUND, "%s", err.msg);
            deleted += rc == 0;
        } else if (op < 60 && pods) { /* a pod finished (Succeeded) */
            int k = (int)(rand_r(&seed) % (unsigned)pods);
            char key[32];
            snprintf(key, sizeof(key), "t/p%d", k);
            json_t *pod = sched_util_pod(&u, key);
            if (pod) {
                json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Succeeded"));
                json_object_del(json_object_get(pod, "metadata"), "resourceVersion");
                char *text = json_dumps(pod, JSON_COMPACT);
                json_decref(sched_util_apply(&u, text, now));
                free(text);
                finished++;
            }
            json_decref(pod);
        } else if (op < 65) { /* room added */
            sched_util_applyf(&u, now, NODE_YAML, nodes++);
        } else if (op < 68 && nodes > 1) { /* a node deleted: its pods fail */
            char key[16];
            struct err err = ERR_INIT;
            snprintf(key, sizeof(key), "n%d", (int)(rand_r(&seed) % (unsigned)nodes));
            int rc = sched_delete(u.s, MODEL_NODE, key, now, &err);
            ck_assert_msg(rc == 0 || rc == ERR_NOT_FOUND, "%s", err.msg);
        } else { /* a cycle, sometimes past every backoff */
            json_decref(sched_util_cycle(&u, op < 75 ? now + 61000 : now));
            cycles++;
        }
        check_todo(&u, step);
    }
    ck_assert_int_gt(cycles, 50);
    ck_assert_int_gt(deleted, 10);
    ck_assert_int_gt(finished, 10);
    ck_assert_int_gt(terminating, 5);
    /* the todo shrinks: a cycle drops the jobs it has nothing to do for */
    json_decref(sched_util_cycle(&u, now + 200000));
    check_todo(&u, 400);
    ck_assert_int_lt(u.s->v->ntodo, u.s->v->njobs);
    /* every terminating pod is past its grace period by now, and gone */
    ck_assert_uint_eq(u.s->v->ndeleting, 0);
    sched_util_close(&u);
}
END_TEST

static Suite *sched_todo_suite(void)
{
    Suite *s = suite_create("sched_todo");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_sched_todo_holds_every_job_with_work);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(sched_todo_suite());
}
