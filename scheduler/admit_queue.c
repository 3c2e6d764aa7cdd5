/*
 * admit_queue.c - the rules of a Queue that need the other queues and jobs: the tree at
 * apply, and what a deletion would orphan. (One document's own rules are model/queue.c's.)
 *
 * Apply (standalone): a queue's spec.parent names a queue that exists (stored, the built-in
 * default, one of the same manifest) or "root"; following parents from any queue of the
 * manifest never comes back to it (the manifest's queues replace the stored ones of the
 * same name, so re-parenting a stored queue is checked as it will be); the queue named
 * "root" names no parent; spec.dequeueStrategy is not "fifo". Volcano's queue webhook
 * (pkg/webhooks/admission/queues/validate) refuses a parent that does not exist and a queue
 * that is its own parent; its CRD keeps the tree of names, and muster refuses any cycle.
 *
 * Delete (standalone): a queue holding a job that is not Finished, or named as spec.parent
 * by a stored queue, is not deleted (Volcano refuses a queue with child queues, and with
 * allocated pods when asked to). A stored "default" may always go: the built-in default
 * takes its jobs and children back.
 *
 * Mirror mode: the API server admitted the change; nothing is refused (the view reads a
 * parent that does not exist as top-level, and cuts a cycle at the member whose name sorts
 * first: view_queue.c).
 */
#include <stdio.h>
#include <string.h>

#include "core.h"

/* The queues as the manifest would leave them: the manifest's over the view's. */
struct tree {
    const struct sched_view *v;
    const struct model_manifest *m;
};

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(obj, a), b));
}

static int is_queue_doc(const struct model_doc *d)
{
    return model_doc_is(d, MODEL_QUEUE);
}

/* spec.parent as written, NULL when absent, empty or "root". */
static const char *doc_parent(json_t *obj)
{
    const char *p = str_at(obj, "spec", "parent");
    return p && *p && strcmp(p, MODEL_QUEUE_ROOT) ? p : NULL;
}

/* The last document of the manifest that is the queue name (a later one replaces an
 * earlier one when applied), or NULL. */
static const struct model_doc *manifest_queue(const struct tree *t, const char *name)
{
    for (size_t i = t->m->n; i-- > 0;) {
        const struct model_doc *d = &t->m->docs[i];
        const char *n = str_at(d->obj, "metadata", "name");
        if (is_queue_doc(d) && n && !strcmp(n, name))
            return d;
    }
    return NULL;
}

/* The parent queue name names in the tree: *parent borrowed, NULL for a top-level queue
 * ("root" or none). Returns 1 when the queue exists (stored, built-in or in the manifest),
 * else 0. */
static int lookup(const struct tree *t, const char *name, const char **parent)
{
    const struct model_doc *d = manifest_queue(t, name);
    *parent = NULL;
    if (d) {
        *parent = doc_parent(d->obj);
        return 1;
    }
    int q = sched__view_queue(t->v, name);
    if (q < 0 || !t->v->queues[q].alive)
        return 0;
    *parent = t->v->queues[q].m.parent;
    return 1;
}

/* The chain from name up to where it closes or leaves the tree, "a -> b -> a", into buf. */
static void chain(const struct tree *t, const char *name, size_t steps, char *buf, size_t n)
{
    const char *cur = name, *parent;
    size_t len = (size_t)snprintf(buf, n, "%s", name);
    for (size_t i = 0; i < steps && lookup(t, cur, &parent) && parent && len < n; i++) {
        len += (size_t)snprintf(buf + len, n - len, " -> %s", parent);
        cur = parent;
    }
}

/* Refuses a cycle through the parents of queue name. limit bounds the walk: more steps
 * than there are queues means a cycle above name that does not pass through it. */
static int check_cycle(const struct tree *t, const char *name, struct err *err)
{
    size_t limit = t->v->nqueues + t->m->n + 1, steps = 0;
    const char *cur = name, *parent;
    char path[512];
    while (lookup(t, cur, &parent) && parent) {
        steps++;
        if (!strcmp(parent, name)) {
            chain(t, name, steps, path, sizeof(path));
            return err_setf(err, ERR_INVALID, "spec.parent",
                            "spec.parent: the queues would form a cycle (%s): a queue cannot "
                            "be its own ancestor",
                            path);
        }
        if (steps > limit) {
            chain(t, name, 8, path, sizeof(path));
            return err_setf(err, ERR_INVALID, "spec.parent",
                            "spec.parent: the ancestors of queue '%s' form a cycle (%s ...)", name,
                            path);
        }
        cur = parent;
    }
    return 0;
}

static int admit_one(const struct tree *t, const struct model_doc *d, struct err *err)
{
    const char *name = str_at(d->obj, "metadata", "name");
    const char *written = str_at(d->obj, "spec", "parent");
    const char *parent = doc_parent(d->obj), *grand;
    const char *dequeue = str_at(d->obj, "spec", "dequeueStrategy");
    if (!strcmp(name, MODEL_QUEUE_ROOT) && written && *written)
        return err_setf(err, ERR_INVALID, "spec.parent",
                        "spec.parent: queue '%s' is the root of the queue tree and cannot have "
                        "a parent (it names '%s')",
                        name, written);
    if (parent && !lookup(t, parent, &grand))
        return err_setf(err, ERR_INVALID, "spec.parent",
                        "spec.parent: queue '%s' names parent '%s', which does not exist "
                        "(neither stored nor in this manifest; a top-level queue names '%s' "
                        "or no parent)",
                        name, parent, MODEL_QUEUE_ROOT);
    if (parent && check_cycle(t, name, err) < 0)
        return ERR_INVALID;
    if (dequeue && !strcmp(dequeue, "fifo"))
        return err_setf(err, ERR_INVALID, "spec.dequeueStrategy",
                        "spec.dequeueStrategy: 'fifo' is not supported by muster (a first job "
                        "that cannot be placed would hold back every job behind it); muster "
                        "tries each job of a queue in turn, as 'traverse' does");
    return 0;
}

int sched__admit_queues(const struct sched_view *v, const struct model_manifest *m, struct err *err)
{
    struct tree t = {v, m};
    for (size_t i = 0; i < m->n; i++) {
        const struct model_doc *d = &m->docs[i];
        if (!is_queue_doc(d))
            continue;
        int rc = admit_one(&t, d, err);
        if (rc < 0) {
            err_prefix(err, "document %d (Queue %s)", d->index, str_at(d->obj, "metadata", "name"));
            return rc;
        }
    }
    return 0;
}

/* The children of queue name, "'a', 'b'" (at most a few named), into buf; their count. */
static int children(const struct sched_view *v, const char *name, char *buf, size_t n)
{
    int count = 0;
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < v->nqueues; i++) {
        const struct sv_queue *q = &v->queues[i];
        if (!q->alive || !q->stored || !q->m.parent || strcmp(q->m.parent, name) != 0)
            continue;
        if (count++ < 4 && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s'%s'", count > 1 ? ", " : "", q->m.name);
    }
    if (count > 4 && len < n)
        snprintf(buf + len, n - len, ", ...");
    return count;
}

int sched__queue_deletable(struct sched *s, const char *name, struct err *err)
{
    const struct sched_view *v = s->v;
    const char *first = NULL;
    char names[256];
    int jobs = 0;
    if (s->opts.mirrored || !strcmp(name, MODEL_QUEUE_DEFAULT))
        return 0;
    for (size_t i = 0; i < v->njobs; i++) {
        const struct sv_job *j = &v->jobs[i];
        if (!j->alive || strcmp(sched__job_queue_name(v, j), name) != 0 ||
            sched__job_state(s->v, j) == SCHED_JOB_FINISHED)
            continue;
        jobs++;
        if (!first || strcmp(j->id, first) < 0)
            first = j->id;
    }
    if (jobs == 1)
        return err_set(err, ERR_CONFLICT,
                       "queue '%s' has 1 job that is not finished, '%s': delete it or move it "
                       "to another queue first",
                       name, first);
    if (jobs)
        return err_set(err, ERR_CONFLICT,
                       "queue '%s' has %d jobs that are not finished, among them '%s': delete "
                       "them or move them to another queue first",
                       name, jobs, first);
    int n = children(v, name, names, sizeof(names));
    if (n)
        return err_set(err, ERR_CONFLICT,
                       "queue '%s' is the parent of %d queue%s (%s): delete %s or give %s "
                       "another parent first",
                       name, n, n == 1 ? "" : "s", names, n == 1 ? "it" : "them",
                       n == 1 ? "it" : "them");
    return 0;
}
