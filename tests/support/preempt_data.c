/*
 * preempt_data.c - clusters shared by the preemption suites (sched_util.h).
 */
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
