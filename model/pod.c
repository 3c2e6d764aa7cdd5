/*
 * pod.c - the Pod fields muster writes, the one "pod is terminal" rule, the one "pod is
 * pending" rule and the one "which PodGroup a pod is in" rule.
 *
 * Kubernetes keeps a pod's scheduling state in a handful of fields (spec.nodeName,
 * status.phase, status.nominatedNodeName, status.conditions, metadata.deletionTimestamp);
 * these functions are the only code that edits them, so their shape (which members a
 * condition has, where a replaced condition goes) is decided here once.
 */
#include <string.h>

#include "clock.h"
#include "err.h"
#include "model_pod.h"
#include "decode.h"

int model_pod_phase_terminal(const char *phase)
{
    /* the first letter first: every pod of a preemption's nodes is asked, and most run */
    return phase && ((phase[0] == 'S' && !strcmp(phase, "Succeeded")) ||
                     (phase[0] == 'F' && !strcmp(phase, "Failed")));
}

int model_pod_terminal(const struct model_pod *p)
{
    return model_pod_phase_terminal(p->phase);
}

int64_t model_pod_limit_ms(const struct model_pod *p)
{
    return p->deadline_ms > 0 ? p->deadline_ms : p->expected_ms;
}

int model_pod_gang_bound(const struct model_pod *p)
{
    return p->node_name && !model_pod_terminal(p);
}

/* Both forms of "pending" end here, so a decoded pod and its document cannot disagree. */
static int unstarted(const char *phase, int64_t deletion_ms)
{
    /* "Pending" spelled out: a strcmp call per pod showed in the cycle's profile */
    return !deletion_ms &&
           (!phase || (phase[0] == 'P' && phase[1] == 'e' && phase[2] == 'n' && phase[3] == 'd' &&
                       phase[4] == 'i' && phase[5] == 'n' && phase[6] == 'g' && !phase[7]));
}

int model_pod_unstarted(const struct model_pod *p)
{
    return unstarted(p->phase, p->deletion_ms);
}

int model_pod_is_pending(const struct model_pod *p)
{
    return !p->node_name && unstarted(p->phase, p->deletion_ms);
}

int model_pod_json_pending(json_t *pod)
{
    struct model__pod_state s;
    model__pod_state(pod, &s);
    return !s.node_name && unstarted(s.phase, s.deletion_ms);
}

int64_t model__time_ms(json_t *meta, const char *key)
{
    int64_t ms = 0;
    const char *s = json_string_value(json_object_get(meta, key));
    if (!s || clock_parse_rfc3339(s, &ms, NULL) < 0)
        return 0;
    return ms;
}

/* A non-empty string, or NULL. */
static const char *nonempty(json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s ? s : NULL;
}

void model__pod_state(json_t *pod, struct model__pod_state *out)
{
    out->node_name = nonempty(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    out->phase = nonempty(json_object_get(json_object_get(pod, "status"), "phase"));
    out->deletion_ms = model__time_ms(json_object_get(pod, "metadata"), "deletionTimestamp");
}

/* A non-empty string member of pod.metadata.<where>, or NULL. */
static const char *meta_str(json_t *pod, const char *where, const char *key)
{
    json_t *map = json_object_get(json_object_get(pod, "metadata"), where);
    const char *s = json_string_value(json_object_get(map, key));
    return s && *s ? s : NULL;
}

const char *model_pod_group_name(json_t *pod)
{
    const char *g = meta_str(pod, "labels", MODEL_LABEL_POD_GROUP);
    return g ? g : meta_str(pod, "annotations", MODEL_ANN_GROUP_NAME);
}

const char *model_pod_phase(json_t *pod)
{
    const char *ph = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return ph ? ph : "Pending";
}

/* Member name of pod (an object, created when missing). */
static json_t *member_object(json_t *pod, const char *name)
{
    json_t *o = json_object_get(pod, name);
    if (!o) {
        o = json_object();
        json_object_set_new(pod, name, o);
    }
    return o;
}

json_t *model_pod_status(json_t *pod)
{
    return member_object(pod, "status");
}

void model_pod_set_phase(json_t *pod, const char *phase, const char *reason, const char *message)
{
    json_t *st = model_pod_status(pod);
    json_object_set_new(st, "phase", json_string(phase));
    if (reason)
        json_object_set_new(st, "reason", json_string(reason));
    if (message)
        json_object_set_new(st, "message", json_string(message));
}

void model_pod_set_nominated(json_t *pod, const char *node)
{
    if (node)
        json_object_set_new(model_pod_status(pod), "nominatedNodeName", json_string(node));
    else /* nothing to clear on a pod without status: leave it without one */
        json_object_del(json_object_get(pod, "status"), "nominatedNodeName");
}

static int is_type(json_t *cond, const char *type)
{
    const char *t = json_string_value(json_object_get(cond, "type"));
    return t && !strcmp(t, type);
}

void model_pod_set_condition(json_t *pod, const char *type, const char *status, const char *reason,
                             const char *message, const char *ts)
{
    json_t *st = model_pod_status(pod), *keep = json_array(), *cd;
    size_t i;
    /* A new array, never an edit of the old one: the old one may be shared with the
     * stored document this pod was shallow-copied from. */
    json_array_foreach(json_object_get(st, "conditions"), i, cd)
    {
        if (!is_type(cd, type))
            json_array_append(keep, cd);
    }
    cd = json_object(); /* members in this order: the stored bytes depend on it */
    json_object_set_new(cd, "type", json_string(type));
    json_object_set_new(cd, "status", json_string(status));
    if (reason)
        json_object_set_new(cd, "reason", json_string(reason));
    if (message)
        json_object_set_new(cd, "message", json_string(message));
    json_object_set_new(cd, "lastTransitionTime", json_string(ts));
    json_array_append_new(keep, cd);
    json_object_set_new(st, "conditions", keep);
}

int model_pod_condition_time(json_t *pod, const char *type, int64_t *ms)
{
    size_t i;
    json_t *cd;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, cd)
    {
        const char *t = json_string_value(json_object_get(cd, "lastTransitionTime"));
        int64_t v;
        if (is_type(cd, type) && t && clock_parse_rfc3339(t, &v, NULL) == 0) {
            *ms = v;
            return 0;
        }
    }
    return ERR_NOT_FOUND;
}

void model_pod_set_deletion(json_t *pod, const char *ts)
{
    json_object_set_new(member_object(pod, "metadata"), "deletionTimestamp", json_string(ts));
}

void model_pod_set_bound(json_t *pod, const char *node, const char *ts)
{
    json_object_set_new(member_object(pod, "spec"), "nodeName", json_string(node));
    json_t *st = model_pod_status(pod);
    if (!json_object_get(st, "phase"))
        json_object_set_new(st, "phase", json_string("Pending"));
    /* a kubelet would set it when it takes the pod; preemption orders victims by it */
    if (!json_is_string(json_object_get(st, "startTime")))
        json_object_set_new(st, "startTime", json_string(ts));
    model_pod_set_nominated(pod, NULL);
    model_pod_set_condition(pod, "PodScheduled", "True", NULL, NULL, ts);
}
