/*
 * preempt_data.c - clusters shared by the preemption suites (sched_util.h).
 */
#include <stdio.h>

#include "sched_util.h"

const char sched_util_two_preemptions[] =
    "# two nodes, two low pods\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n2\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"lo-1\", \"namespace\": "
    "\"default\"}, \"spec\": {\"nodeName\": \"n1\", \"priority\": 1, \"containers\": [{\"name\": "
    "\"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"lo-2\", \"namespace\": "
    "\"default\"}, \"spec\": {\"nodeName\": \"n2\", \"priority\": 2, \"containers\": [{\"name\": "
    "\"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}}\n";

const char sched_util_hi_pod[] =
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"%s\", \"namespace\": "
    "\"default\"}, \"spec\": {\"priority\": 100, \"containers\": [{\"name\": \"c\", \"image\": "
    "\"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}}\n";

void sched_util_two_rounds(struct sched_util *u)
{
    char doc[1024];
    json_decref(sched_util_apply(u, sched_util_two_preemptions, 1000));
    snprintf(doc, sizeof(doc), "# hi\n%s", sched_util_hi_pod);
    char pod[1024];
    snprintf(pod, sizeof(pod), doc, "hi-1");
    json_decref(sched_util_apply(u, pod, 1500));
    json_decref(sched_util_cycle(u, 2000));
    snprintf(pod, sizeof(pod), doc, "hi-2");
    json_decref(sched_util_apply(u, pod, 5000));
    json_decref(sched_util_cycle(u, 6000));
}

void sched_util_mid_nominated_then_hi(struct sched_util *u)
{
    struct sched_options opts = {.grace_ms = 10000};
    sched_util_open(u, &opts);
    json_decref(sched_util_apply(
        u,
        "# one node, lo on it, mid pending\n"
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}, "
        "\"status\": {\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
        "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"lo\", "
        "\"namespace\": \"default\"}, \"spec\": {\"nodeName\": \"n1\", \"priority\": 1, "
        "\"containers\": [{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": "
        "{\"cpu\": \"4\"}}}]}}\n---\n"
        "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"mid\", "
        "\"namespace\": \"default\"}, \"spec\": {\"priority\": 50, \"containers\": [{\"name\": "
        "\"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}}\n",
        1000));
    json_decref(sched_util_cycle(u, 2000));
    char doc[1024];
    snprintf(doc, sizeof(doc), sched_util_hi_pod, "hi");
    json_decref(sched_util_apply(u, doc, 2500));
}
