/*
 * sched_at.h - the cluster as it was (history_api.c): the store read at an audit record
 * through the object history. Part of the scheduler's interface; scheduler.h includes it.
 */
#ifndef MUSTER_SCHED_AT_H
#define MUSTER_SCHED_AT_H

#include <jansson.h>
#include <stdint.h>

struct err;
struct sched;

/* Questions about the past name an audit record: at (RFC 3339: the last record at or
 * before it), seq (that record), or neither (the last record). The answer is the store as
 * the object history has it at that record (store.h). ERR_INVALID, field "at" or "seq",
 * for both given, a time that is not RFC 3339, in the future (after now_ms), before the
 * first record kept or before history began, a seq that is not a number or names no kept
 * record. */
struct sched_at {
    const char *at;  /* NULL: not given */
    const char *seq; /* NULL: not given */
    int64_t now_ms;
};
/* {"kind": "ClusterState", "asOf": {"seq", "ts", "requested"?}, "nodes": [{"name",
 * "labels", "unschedulable", "allocatable", "pods": [keys]}], "pods": [{"namespace",
 * "name", "job", "phase", "node"?, "nominatedNodeName"?, "deleting"}], "jobs": [{"id",
 * "state", "queue", "pods": [names], "bound", "minMember"}]}. *out new. */
int sched_state_at(struct sched *s, const struct sched_at *at, json_t **out, struct err *err);
/* The why document of job id as stored at the record, with "asOf". ERR_NOT_FOUND when
 * the job had none then. *out new. */
int sched_why_at(struct sched *s, const char *id, const struct sched_at *at, json_t **out,
                 struct err *err);

#endif
