/*
 * sched_objs.c - small objects applied by the scheduler suites, and the consistency check
 * they end with (see sched_objs.h).
 */
#include <check.h>
#include <stdio.h>

#include "err.h"
#include "sched_invariants.h"
#include "sched_objs.h"
#include "scheduler.h"

static const char *NODE_FMT = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                              "\"%s\",\"labels\":{\"pool\":\"%s\"}},\"status\":{\"allocatable\":{"
                              "\"cpu\":\"%d\",\"nvidia.com/gpu\":\"%d\"}}}";
static const char *POD_FMT =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
    "\"default\",\"labels\":{%s}},\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\","
    "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"%d\"}}}]}}";
static const char *PG_FMT = "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":"
                            "\"PodGroup\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
                            "\"spec\":{\"minMember\":%d}}";

void sched_objs_node(struct sched_util *u, const char *name, const char *pool, int cpu, int gpu)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), NODE_FMT, name, pool, cpu, gpu);
    json_decref(sched_util_apply(u, buf, 1000));
}

void sched_objs_pod_json(char *buf, size_t n, const char *name, const char *group, int prio,
                         int cpu)
{
    char labels[256] = "";
    if (group)
        snprintf(labels, sizeof(labels), "\"pod-group.scheduling.sigs.k8s.io\":\"%s\"", group);
    snprintf(buf, n, POD_FMT, name, labels, prio, cpu);
}

void sched_objs_pod(struct sched_util *u, const char *name, const char *group, int prio, int cpu)
{
    char buf[1024];
    sched_objs_pod_json(buf, sizeof(buf), name, group, prio, cpu);
    json_decref(sched_util_apply(u, buf, 1000));
}

/* A node of cpu cpus held whole by a bound pod of priority 1000: the cluster's capacity
 * counts it (no ExceedsClusterCapacity), yet nothing lower can use or preempt it. */
void sched_objs_busy_node(struct sched_util *u, const char *name, int cpu)
{
    char buf[1024];
    sched_objs_node(u, name, "busy", cpu, 0);
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"hog-%s\","
             "\"namespace\":\"default\"},\"spec\":{\"priority\":1000,\"nodeName\":\"%s\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
             "\"cpu\":\"%d\"}}}]},\"status\":{\"phase\":\"Running\"}}",
             name, name, cpu);
    json_decref(sched_util_apply(u, buf, 1000));
}

void sched_objs_pg(struct sched_util *u, const char *name, int min)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), PG_FMT, name, min);
    json_decref(sched_util_apply(u, buf, 1000));
}

/* exempt (borrowed, may be NULL): gangs the case's own input leaves partly bound. */
void sched_objs_assert_consistent_ex(struct sched_util *u, json_t *exempt)
{
    char why[512];
    struct err err = ERR_INIT;
    json_t *live = sched_view_dump(u->s), *stored = NULL;
    ck_assert_msg(sched_view_dump_store(u->s, &stored, &err) == 0, "%s", err.msg);
    if (!json_equal(live, stored)) {
        char *a = json_dumps(live, JSON_SORT_KEYS), *b = json_dumps(stored, JSON_SORT_KEYS);
        ck_abort_msg("live view differs from the store:\nlive:   %s\nstored: %s", a, b);
    }
    json_decref(live);
    json_decref(stored);
    ck_assert_msg(sched_invariants_check_ex(u->st, 0, exempt, why, sizeof(why)) == 0, "%s", why);
}

void sched_objs_assert_consistent(struct sched_util *u)
{
    sched_objs_assert_consistent_ex(u, NULL);
}

const char *sched_objs_primary(json_t *why)
{
    return json_string_value(json_object_get(json_object_get(why, "primary"), "code"));
}
