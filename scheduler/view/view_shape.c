/*
 * view_shape.c - pod shapes (view_shape.h).
 *
 * A shape is the part of a pod that decides where it fits on its own (requests, node
 * selector, tolerations, priority, node affinity); rules that depend on other pods
 * (inter-pod affinity, topology spread) are the pod's, not its shape's. Pods of one shape share
 * placement caches, so a cycle over 50,000 similar pods does not rescan every node per pod.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "numfmt.h"
#include "strmap.h"
#include "view_shape.h"

static char *dupn(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* A growing string for shape keys: a restart builds one for each of half a million pods, and
 * stdio's memory streams cost more than the rest of the key's work. */
struct sbuf {
    char *s;
    size_t n, cap;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
    XGROW(b->s, b->n + n + 1, b->cap);
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static void sb_int(struct sbuf *b, long long v)
{
    char d[NUMFMT_INT64_LEN], *e = d + sizeof(d), *q = numfmt_i64(e, v);
    sb_put(b, q, (size_t)(e - q));
}

/* The shape key: "p<prio>|<res>=<v>,...|<key>\x1f<value>\x1e...|<tolerations>|<aff key>". */
static char *shape_key(const struct sv_pod *p)
{
    struct sbuf b = {0};
    sb_put(&b, "p", 1);
    sb_int(&b, p->prio);
    sb_put(&b, "|", 1);
    for (int i = 0; i < p->nreq; i++) {
        sb_int(&b, p->req[i].res);
        sb_put(&b, "=", 1);
        sb_int(&b, (long long)p->req[i].v);
        sb_put(&b, ",", 1);
    }
    sb_put(&b, "|", 1);
    for (size_t i = 0; i < p->m.nnode_selector; i++) {
        sb_str(&b, p->m.node_selector[i].key);
        sb_put(&b, "\x1f", 1);
        sb_str(&b, p->m.node_selector[i].value);
        sb_put(&b, "\x1e", 1);
    }
    sb_put(&b, "|", 1);
    for (size_t i = 0; i < p->m.ntolerations; i++) {
        const struct model_toleration *t = &p->m.tolerations[i];
        const char *f[] = {t->key, t->op, t->value, t->effect};
        for (int k = 0; k < 4; k++) {
            sb_str(&b, f[k] ? f[k] : "");
            sb_put(&b, k < 3 ? "\x1f" : "\x1e", 1);
        }
    }
    sb_put(&b, "|", 1);
    sb_str(&b, p->m.aff ? p->m.aff->node_key : "");
    return b.s;
}

int sched__view_shape_of(struct sched_view *v, struct sv_pod *p)
{
    char *buf = shape_key(p);
    int si = sched__strmap_get(&v->shape_ix, buf);
    if (si >= 0) {
        free(buf);
        return si;
    }
    XGROW(v->shapes, v->nshapes + 1, v->capshapes);
    si = (int)v->nshapes++;
    struct sv_shape *sh = &v->shapes[si];
    memset(sh, 0, sizeof(*sh));
    sh->nreq = p->nreq;
    sh->req = xcalloc((size_t)p->nreq + 1, sizeof(*sh->req));
    memcpy(sh->req, p->req, (size_t)p->nreq * sizeof(*sh->req));
    sh->nsel = p->m.nnode_selector;
    sh->sel = xcalloc(sh->nsel + 1, sizeof(*sh->sel));
    for (size_t i = 0; i < sh->nsel; i++) {
        sh->sel[i].key = dupn(p->m.node_selector[i].key);
        sh->sel[i].value = dupn(p->m.node_selector[i].value);
    }
    sh->ntol = p->m.ntolerations;
    sh->tol = xcalloc(sh->ntol + 1, sizeof(*sh->tol));
    for (size_t i = 0; i < sh->ntol; i++) {
        const struct model_toleration *t = &p->m.tolerations[i];
        sh->tol[i] =
            (struct model_toleration){dupn(t->key), dupn(t->op), dupn(t->value), dupn(t->effect)};
    }
    sh->priority = p->prio;
    if (p->m.aff && *p->m.aff->node_key)
        sh->aff = model_affinity_ref(p->m.aff);
    sched__strmap_put(&v->shape_ix, buf, si);
    free(buf);
    return si;
}

static void shape_clear(struct sv_shape *sh)
{
    free(sh->req);
    for (size_t i = 0; i < sh->nsel; i++) {
        free(sh->sel[i].key);
        free(sh->sel[i].value);
    }
    free(sh->sel);
    for (size_t i = 0; i < sh->ntol; i++) {
        free(sh->tol[i].key);
        free(sh->tol[i].op);
        free(sh->tol[i].value);
        free(sh->tol[i].effect);
    }
    free(sh->tol);
    free(sh->cand);
    free(sh->heap);
    model_affinity_unref(sh->aff);
}

void sched__view_shapes_free(struct sched_view *v)
{
    for (size_t i = 0; i < v->nshapes; i++)
        shape_clear(&v->shapes[i]);
    free(v->shapes);
    sched__strmap_free(&v->shape_ix);
}
