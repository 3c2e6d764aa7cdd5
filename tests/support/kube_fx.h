/*
 * kube_fx.h - a bind-mode mirror against the test API server for the write-back suites
 * (test_kube_events.c, test_kube_pgstatus.c, test_kube_writeback.c): two 4-cpu nodes,
 * a scheduler on a fresh store (mirrored), the mirror in bind mode for "muster".
 *
 *     struct kube_fx f;
 *     kube_fx_open(&f);                        API server, nodes n1 and n2, scheduler
 *     kube_fx_put(&f, "pods", pod);            create or replace on the server (takes pod)
 *     kube_fx_start(&f, 0);                    mirror + write-back (0: default give-up)
 *     kube_fx_cycle(&f, 1000);                 one cycle, then waits for the write-back
 *     kube_fx_close(&f);
 */
#ifndef MUSTER_TESTS_KUBE_FX_H
#define MUSTER_TESTS_KUBE_FX_H

#include <jansson.h>
#include <stdint.h>

#include "kube_support.h"
#include "sched_util.h"

struct kube;
struct kube_options;

struct kube_fx {
    struct kube_testapi api;
    struct sched_util u;
    struct kube *k;
};

void kube_fx_open(struct kube_fx *f);
/* The mirror settings of the kube suites on top of KUBE_OPTIONS_INIT: f's kubeconfig,
 * backoff 50-400 ms, a missing CRD retried every 300 ms, 20 s watches. */
void kube_fx_options(const struct kube_fx *f, struct kube_options *o);
/* Opens and starts the mirror with o on f's scheduler and store, and waits (20 s) for its
 * first sync; fails the test otherwise. */
void kube_fx_mirror(struct kube_fx *f, const struct kube_options *o);
/* Starts the mirror in bind mode and waits for its first sync; giveup_ms 0: default. */
void kube_fx_start(struct kube_fx *f, int64_t giveup_ms);
void kube_fx_close(struct kube_fx *f);
/* Creates or replaces obj (taken) of a resource on the API server. */
void kube_fx_put(struct kube_fx *f, const char *res, json_t *obj);
/* A gang: PodGroup name of res ("podgroups" or "podgroups.scheduling.volcano.sh") with
 * minMember min, and n pods name-0.. of cpu each (members by label or annotation as the
 * group wants; owned by the Job name). */
void kube_fx_gang(struct kube_fx *f, const char *res, const char *name, int min, int n,
                  const char *cpu);
/* A counter of kube_sources_json. */
json_int_t kube_fx_counter(struct kube_fx *f, const char *name);
/* One cycle at now, then waits until the write-back caught up. */
void kube_fx_cycle(struct kube_fx *f, int64_t now);
/* The string member k of o; fails the test when there is none. Borrowed. */
const char *kube_fx_str(json_t *o, const char *k);
/* Fails the test unless s matches the extended regular expression re. */
void kube_fx_matches(const char *s, const char *re);

#endif
