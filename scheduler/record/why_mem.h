/*
 * why_mem.h - what the records remember of a job between cycles (why_mem.c): each job's
 * memory (the signature of its last document, its history while short, the last discard)
 * and the counted texts the why memo shares between jobs. Included by why.h.
 */
#ifndef MUSTER_SCHED_WHY_MEM_H
#define MUSTER_SCHED_WHY_MEM_H

#include <jansson.h>
#include <stdint.h>

#include "cyc.h"

/* What the records remember of a job between cycles (why_mem.c), not durable but through
 * its why document: the scheduler holds it beside the view (c->why_mem), indexed like the
 * view's jobs; an entry whose serial is not its job's (sv_job.serial) is another job's. */
/* A document's text from "primary" to "preemption", kept as its signature: counted, as the
 * why memo hands one text to every job it answers. marked: the job's id in it is the class
 * marker (sched__why_mark), so one text reads the same for each of them. */
struct why_mid {
    int refs;
    int marked;
    char *text;
};
/* A new text (text taken), one reference; another reference; one reference fewer (NULL:
 * nothing). */
struct why_mid *sched__why_mid_new(char *text, int marked);
struct why_mid *sched__why_mid_ref(struct why_mid *m);
void sched__why_mid_unref(struct why_mid *m);
/* a and b (either may be NULL) say the same of job id. */
int sched__why_mid_eq(const struct why_mid *a, const struct why_mid *b, const char *id);

struct why_job {
    uint64_t serial;
    int loaded;               /* the stored document was read (sched__why_load) */
    int last_code;            /* primary reason reported last (-1 none) */
    char *last_sig;           /* signature of the last stored document: its head (why_record.c) */
    struct why_mid *last_mid; /* and its text from "primary" to "preemption" (NULL: none) */
    char *cls;       /* the class document its stored record names (why_class.c), or NULL */
    json_t *history; /* reason history, loaded lazily from the document */
    /* while the history is one entry and no tree was made of it (history NULL; most jobs
     * fail once or are placed at once): that entry's cycle, time and code (a static name) */
    int has_first;
    uint64_t first_cycle;
    const char *first_code;
    char first_ts[40];
    char *last_discard;    /* reason + message of the last "discarded" record, NULL after a
                              placement (cycle/cycle_stmt.c) */
    json_t *plan_topology; /* the topology part of the attempt that preempted, kept while the
                              job waits for its victims */
};
struct sched_why_memory {
    struct why_job *jobs;
    size_t n, cap;
};
struct sched_why_memory *sched__why_memory_new(void);
/* Forgets every job (the view was rebuilt: its indexes and serials start again). */
void sched__why_memory_reset(struct sched_why_memory *m);
void sched__why_memory_free(struct sched_why_memory *m);
/* Job ji's entry, created (or cleared, when its slot held another job) as needed. */
struct why_job *sched__why_job(struct sched_why_memory *m, const struct sched_view *v, int ji);
/* Job ji's entry, or NULL when there is none (m may be NULL). */
const struct why_job *sched__why_job_peek(const struct sched_why_memory *m,
                                          const struct sched_view *v, int ji);

#endif
