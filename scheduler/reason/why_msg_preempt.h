/*
 * why_msg_preempt.h - the preemption part's reasons that no reason code carries: the texts
 * a job's why document gives for preemption when it was placed, not tried, or moot. The
 * rest of the messages, and how they are written, are why_msg.h's; it includes this.
 *
 * Owns: nothing but these strings. Includes nothing.
 */
#ifndef MUSTER_SCHED_WHY_MSG_PREEMPT_H
#define MUSTER_SCHED_WHY_MSG_PREEMPT_H

/* ---- the preemption part's reason when no code says it ---- */
/* Appended to any verdict: "; " or "" (the verdict was empty); the clearing job's id. */
#define WHY_MSG_PREEMPT_CLEARED "%sits nominations were cleared by higher-priority %s"
/* Preemption cannot help: the pod's key. */
#define WHY_MSG_PREEMPT_MOOT "not relevant: pod '%s' fits no node even with every other pod removed"
/* The job was placed. No arguments. */
#define WHY_MSG_PREEMPT_PLACED "not needed: the job was placed"
/* The job was placed on lower preemptors' room: their ids, comma-separated. */
#define WHY_MSG_PREEMPT_DISPLACED                                                                  \
    "not needed: the job was placed, on nominated room of lower-priority %s, whose "               \
    "nominations were cleared"
/* The attempt failed before preemption. No arguments. */
#define WHY_MSG_PREEMPT_NOT_TRIED "not tried"
/* No cycle has tried the job. No arguments. */
#define WHY_MSG_PREEMPT_UNTRIED "not tried yet"
/* The job was preempted. No arguments. */
#define WHY_MSG_PREEMPT_VICTIM "not tried: the job is a victim of preemption"

#endif
