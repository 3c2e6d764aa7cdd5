/*
 * outbox.c - decoding and encoding the audit records write-back reads (outbox.h).
 *
 * The decoder is strict about what write-back acts on (a missing job or a "nodes" that
 * does not pair with "pods" is refused, naming the member) and ignores every member it
 * does not read, so a writer may add members without touching the contract.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "outbox.h"

int sched_outbox_has_pods(enum store_audit_kind kind)
{
    return kind == STORE_AUDIT_PLACED || kind == STORE_AUDIT_NOMINATED ||
           kind == STORE_AUDIT_PREEMPTED || kind == STORE_AUDIT_EVICTED ||
           kind == STORE_AUDIT_DEADLINE_EXCEEDED;
}

static int read_by_writeback(enum store_audit_kind kind)
{
    return sched_outbox_has_pods(kind) || kind == STORE_AUDIT_UNSCHEDULABLE ||
           kind == STORE_AUDIT_APPLIED || kind == STORE_AUDIT_DELETED;
}

static int evicting(enum store_audit_kind kind)
{
    return kind == STORE_AUDIT_PREEMPTED || kind == STORE_AUDIT_EVICTED;
}

static int bad(struct err *err, enum store_audit_kind kind, const char *member, const char *what)
{
    return err_setf(err, ERR_INVALID, member, "audit record '%s': member '%s' %s",
                    store_audit_kind_name(kind), member, what);
}

/* A string member into *out (new; NULL when absent and optional). */
static int string_member(const json_t *rec, enum store_audit_kind kind, const char *member,
                         int required, char **out, struct err *err)
{
    json_t *v = json_object_get(rec, member);
    if (!v && !required)
        return 0;
    if (!json_is_string(v))
        return bad(err, kind, member, v ? "is not a string" : "is missing");
    *out = xstrdup(json_string_value(v));
    return 0;
}

static int decode_cycle(const json_t *rec, struct sched_outbox_rec *out, struct err *err)
{
    json_t *v = json_object_get(rec, SCHED_OUTBOX_M_CYCLE);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return bad(err, out->kind, SCHED_OUTBOX_M_CYCLE, "is not a cycle number");
    out->cycle = (int64_t)json_integer_value(v);
    return 0;
}

/* "pods" and "nodes", paired. Only evictions may lack nodes (absent array, or null). */
static int decode_pods(const json_t *rec, struct sched_outbox_rec *out, struct err *err)
{
    json_t *pods = json_object_get(rec, SCHED_OUTBOX_M_PODS);
    json_t *nodes = json_object_get(rec, SCHED_OUTBOX_M_NODES);
    int optional_nodes = evicting(out->kind);
    if (!json_is_array(pods))
        return bad(err, out->kind, SCHED_OUTBOX_M_PODS,
                   pods ? "is not an array of pod keys" : "is missing");
    if (!(nodes ? json_is_array(nodes) : optional_nodes))
        return bad(err, out->kind, SCHED_OUTBOX_M_NODES,
                   nodes ? "is not an array of node names" : "is missing");
    if (nodes && json_array_size(nodes) != json_array_size(pods))
        return bad(err, out->kind, SCHED_OUTBOX_M_NODES, "is not as long as 'pods'");
    out->pods = xcalloc(json_array_size(pods) + 1, sizeof(*out->pods));
    for (size_t i = 0; i < json_array_size(pods); i++) {
        json_t *p = json_array_get(pods, i), *n = json_array_get(nodes, i);
        if (!json_is_string(p))
            return bad(err, out->kind, SCHED_OUTBOX_M_PODS, "holds a value that is not a pod key");
        if (!json_is_string(n) && !(optional_nodes && (!n || json_is_null(n))))
            return bad(err, out->kind, SCHED_OUTBOX_M_NODES,
                       "holds a value that is not a node name");
        struct sched_outbox_pod *op = &out->pods[out->npods++];
        op->pod = xstrdup(json_string_value(p));
        op->node = json_is_string(n) ? xstrdup(json_string_value(n)) : NULL;
    }
    return 0;
}

/* A nominated record's "cleared": pods whose nominations it voided, as pods with no node
 * (write-back removes their status.nominatedNodeName), after the nominated ones. */
static int decode_cleared(const json_t *rec, struct sched_outbox_rec *out, struct err *err)
{
    json_t *cl = json_object_get(rec, SCHED_OUTBOX_M_CLEARED), *p;
    size_t i;
    if (!cl)
        return 0;
    if (!json_is_array(cl))
        return bad(err, out->kind, SCHED_OUTBOX_M_CLEARED, "is not an array of pod keys");
    out->pods = xrealloc(out->pods, (out->npods + json_array_size(cl) + 1) * sizeof(*out->pods));
    json_array_foreach(cl, i, p)
    {
        if (!json_is_string(p))
            return bad(err, out->kind, SCHED_OUTBOX_M_CLEARED,
                       "holds a value that is not a pod key");
        out->pods[out->npods++] = (struct sched_outbox_pod){xstrdup(json_string_value(p)), NULL};
    }
    return 0;
}

static int decode_unschedulable(const json_t *rec, struct sched_outbox_rec *out, struct err *err)
{
    json_t *v = json_object_get(rec, SCHED_OUTBOX_M_REASON);
    int code = why_code_from_name(json_string_value(v));
    if (code < 0)
        return bad(err, out->kind, SCHED_OUTBOX_M_REASON,
                   v ? "is not a reason code (reason.h)" : "is missing");
    out->code = (enum why_code)code;
    return string_member(rec, out->kind, SCHED_OUTBOX_M_MESSAGE, 0, &out->message, err);
}

static int decode_eviction(const json_t *rec, struct sched_outbox_rec *out, struct err *err)
{
    json_t *obs = json_object_get(rec, SCHED_OUTBOX_M_OBSERVED);
    int rc = string_member(rec, out->kind, SCHED_OUTBOX_M_PREEMPTOR, 0, &out->preemptor, err);
    if (rc == 0)
        rc = string_member(rec, out->kind, SCHED_OUTBOX_M_REASON, 0, &out->reason, err);
    if (rc == 0 && out->kind == STORE_AUDIT_PREEMPTED)
        rc = string_member(rec, out->kind, SCHED_OUTBOX_M_TRIGGER_POD, 0, &out->trigger_pod, err);
    if (rc == 0 && out->kind == STORE_AUDIT_EVICTED && obs) {
        if (!json_is_boolean(obs))
            return bad(err, out->kind, SCHED_OUTBOX_M_OBSERVED, "is not true or false");
        out->observed = json_is_true(obs);
    }
    return rc;
}

int sched_outbox_decode(const json_t *audit_record, struct sched_outbox_rec *out, struct err *err)
{
    memset(out, 0, sizeof(*out));
    out->cycle = -1;
    json_t *kind = json_object_get(audit_record, SCHED_OUTBOX_M_KIND);
    if (!json_is_object(audit_record) || !json_is_string(kind) ||
        store_audit_kind_parse(json_string_value(kind), &out->kind, NULL) < 0)
        return err_setf(err, ERR_INVALID, SCHED_OUTBOX_M_KIND, "audit record: member 'kind' is %s",
                        json_is_string(kind) ? "not an audit kind" : "missing");
    if (!read_by_writeback(out->kind))
        return 0;
    int job_required = out->kind != STORE_AUDIT_EVICTED && out->kind != STORE_AUDIT_APPLIED &&
                       out->kind != STORE_AUDIT_DELETED;
    int rc =
        string_member(audit_record, out->kind, SCHED_OUTBOX_M_JOB, job_required, &out->job, err);
    if (rc == 0)
        rc = decode_cycle(audit_record, out, err);
    if (rc == 0 && sched_outbox_has_pods(out->kind))
        rc = decode_pods(audit_record, out, err);
    if (rc == 0 && out->kind == STORE_AUDIT_NOMINATED)
        rc = decode_cleared(audit_record, out, err);
    if (rc == 0 && evicting(out->kind))
        rc = decode_eviction(audit_record, out, err);
    if (rc == 0 && out->kind == STORE_AUDIT_UNSCHEDULABLE)
        rc = decode_unschedulable(audit_record, out, err);
    if (rc < 0) {
        enum store_audit_kind k = out->kind;
        sched_outbox_rec_release(out);
        out->kind = k;
        return rc;
    }
    return 1;
}

void sched_outbox_rec_release(struct sched_outbox_rec *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->npods; i++) {
        free(r->pods[i].pod);
        free(r->pods[i].node);
    }
    free(r->pods);
    free(r->job);
    free(r->preemptor);
    free(r->trigger_pod);
    free(r->reason);
    free(r->message);
    memset(r, 0, sizeof(*r));
    r->cycle = -1;
}

static void set_string(json_t *rec, const char *member, const char *s)
{
    if (s)
        json_object_set_new(rec, member, json_string(s));
}

json_t *sched_outbox_encode(const struct sched_outbox_rec *r)
{
    json_t *rec = json_object();
    json_object_set_new(rec, SCHED_OUTBOX_M_KIND, json_string(store_audit_kind_name(r->kind)));
    set_string(rec, SCHED_OUTBOX_M_JOB, r->job);
    if (r->cycle >= 0)
        json_object_set_new(rec, SCHED_OUTBOX_M_CYCLE, json_integer((json_int_t)r->cycle));
    if (sched_outbox_has_pods(r->kind)) {
        json_t *pods = json_array(), *nodes = json_array();
        json_t *cleared = r->kind == STORE_AUDIT_NOMINATED ? json_array() : NULL;
        for (size_t i = 0; i < r->npods; i++) {
            if (cleared && !r->pods[i].node) {
                json_array_append_new(cleared, json_string(r->pods[i].pod));
                continue;
            }
            json_array_append_new(pods, json_string(r->pods[i].pod));
            json_array_append_new(nodes,
                                  r->pods[i].node ? json_string(r->pods[i].node) : json_null());
        }
        json_object_set_new(rec, SCHED_OUTBOX_M_PODS, pods);
        json_object_set_new(rec, SCHED_OUTBOX_M_NODES, nodes);
        if (cleared)
            json_object_set_new(rec, SCHED_OUTBOX_M_CLEARED, cleared);
    }
    if (evicting(r->kind)) {
        set_string(rec, SCHED_OUTBOX_M_PREEMPTOR, r->preemptor);
        set_string(rec, SCHED_OUTBOX_M_REASON, r->reason);
        if (r->kind == STORE_AUDIT_PREEMPTED)
            set_string(rec, SCHED_OUTBOX_M_TRIGGER_POD, r->trigger_pod);
        if (r->kind == STORE_AUDIT_EVICTED && r->observed)
            json_object_set_new(rec, SCHED_OUTBOX_M_OBSERVED, json_true());
    }
    if (r->kind == STORE_AUDIT_UNSCHEDULABLE) {
        set_string(rec, SCHED_OUTBOX_M_REASON, why_code_name(r->code));
        set_string(rec, SCHED_OUTBOX_M_MESSAGE, r->message);
    }
    return rec;
}
