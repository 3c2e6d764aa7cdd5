/*
 * why_class.c - failing jobs that share one stored why document.
 *
 * Thousands of jobs often fail in one cycle for the same reason with the same shape (a full
 * cluster: every one-node job says "0/1024 nodes fit", names the same jobs ahead of it, the
 * same queue). Their documents differ only where they name the job itself. The class of a
 * document is its text from "primary" to "ahead" and its "queue", with every occurrence of
 * the job's own id replaced by a marker byte (why_mid.c's sched__why_mark). Jobs of one cycle with
 * the same class text share it: the first keeps its whole document; each later one stores a small
 * record
 *
 *   {"job","state","cycle","auditSeq","primary":{"code"},"classRecord":K,"history"[,"gangTimeout"]}
 *
 * and the class text is stored once under K ("~class/<cycle>/<n>", a key no job id can be:
 * job ids are "namespace/name"). A reader puts the job's id back in place of the marker and
 * the record's members around it (sched__why_class_complete): replacing every occurrence of
 * the id by the marker and back is the identity, so the answer is the document the job
 * would have had, byte for byte, whatever the id occurs in. A text where the id occurs in
 * "ahead" or "queue" (kept as text, not templated) is not shared.
 *
 * Class documents are counted: K + "/members" holds how many records name K. A record that
 * is replaced or deleted takes one off (in a cycle: summed and written once at its end,
 * sched__why_class_flush); at zero both keys go.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "why.h"

#define CLASS_MEMBER "classRecord"

struct class_ent {
    char *tmpl;   /* "primary" .. "preemption" members, the job's id marked */
    char *ahead;  /* text of "ahead" */
    char *queue;  /* text of "queue" */
    char *key;    /* NULL until a second job shares it */
    long members; /* records written this cycle */
};

struct sched_why_classes {
    struct sched_strmap by_tmpl; /* tmpl -> ent index (the latest) */
    struct class_ent *ents;
    size_t n, cap, last; /* last: the entry of the last shareable document */
    /* records taken off a class this cycle: key -> index into drops */
    struct sched_strmap drop_ix;
    struct class_drop {
        char *key;
        long n;
    } * drops;
    size_t ndrops, capdrops;
};

/* One record fewer names class key (counted in this cycle). */
static void drop_add(struct sched_why_classes *w, const char *key)
{
    int i = sched__strmap_get(&w->drop_ix, key);
    if (i < 0) {
        XGROW(w->drops, w->ndrops + 1, w->capdrops);
        w->drops[w->ndrops] = (struct class_drop){xstrdup(key), 0};
        sched__strmap_put(&w->drop_ix, key, (int)w->ndrops);
        i = (int)w->ndrops++;
    }
    w->drops[i].n++;
}

static char *members_key(const char *key)
{
    return xasprintf("%s/members", key);
}

/* Adds d to the stored count of class key; at zero the class goes. */
static int count_add(MDB_txn *txn, const char *key, long d, struct err *err)
{
    char *mk = members_key(key);
    json_t *doc = NULL;
    int rc = store_doc_get(txn, STORE_DB_WHY, mk, &doc, err);
    if (rc == ERR_NOT_FOUND) { /* already gone: nothing names it */
        err_clear(err);
        rc = 0;
        goto out;
    }
    if (rc < 0)
        goto out;
    long n = (long)json_integer_value(json_object_get(doc, "members")) + d;
    if (n > 0) {
        json_object_set_new(doc, "members", json_integer(n));
        rc = store_doc_put(txn, STORE_DB_WHY, mk, doc, err);
    } else if ((rc = store_doc_delete(txn, STORE_DB_WHY, mk, err)) == 0) {
        rc = store_doc_delete(txn, STORE_DB_WHY, key, err);
        rc = rc == ERR_NOT_FOUND ? (err_clear(err), 0) : rc;
    }
out:
    json_decref(doc);
    free(mk);
    return rc;
}

/* The writer's destructor of its classes (why_mem.c calls nothing above it). */
static void classes_free(struct sched_why_classes *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->ents[i].tmpl);
        free(w->ents[i].ahead);
        free(w->ents[i].queue);
        free(w->ents[i].key);
    }
    free(w->ents);
    sched__strmap_free(&w->by_tmpl);
    for (size_t i = 0; i < w->ndrops; i++)
        free(w->drops[i].key);
    free(w->drops);
    sched__strmap_free(&w->drop_ix);
    free(w);
}

static struct sched_why_classes *classes(struct sched_cyc *c)
{
    struct sched_why_writer *ww = sched__why_w(c);
    if (!ww->classes) {
        ww->classes = xcalloc(1, sizeof(*ww->classes));
        sched__strmap_init(&ww->classes->by_tmpl);
        sched__strmap_init(&ww->classes->drop_ix);
        ww->classes_free = classes_free;
    }
    return ww->classes;
}

void sched__why_class_leave(struct sched_cyc *c, struct sv_job *j)
{
    struct why_job *w = sched__why_job(c->why_mem, c->v, (int)(j - c->v->jobs));
    if (!w->cls)
        return;
    drop_add(classes(c), w->cls);
    free(w->cls);
    w->cls = NULL;
}

/* The record's text: the id part without its '}', the primary code, the class, the tail
 * without its '{'. New. */
static char *record_text(const char *idh, const char *code, const char *key, const char *tail,
                         size_t *len)
{
    size_t il = strlen(idh), cl = strlen(code), kl = strlen(key), tl = strlen(tail);
    char *r = xmalloc(il + cl + kl + tl + 64), *p = r;
    memcpy(p, idh, il - 1);
    p += il - 1;
    memcpy(p, ",\"primary\":{\"code\":\"", 20);
    p += 20;
    memcpy(p, code, cl);
    p += cl;
    memcpy(p, "\"},\"" CLASS_MEMBER "\":\"", 18);
    p += 18;
    memcpy(p, key, kl);
    p += kl;
    memcpy(p, "\",", 2);
    p += 2;
    memcpy(p, tail + 1, tl); /* with its NUL */
    *len = (size_t)(p - r) + tl - 1;
    return r;
}

int sched__why_class_put(struct sched_cyc *c, struct sv_job *j, const struct sched_why_text *t,
                         struct err *err)
{
    sched__why_class_leave(c, j);
    struct class_ent *e = NULL;
    char *marked = NULL; /* the members, without the braces, the id marked (t->tmpl, known) */
    if (t->shareable && !c->opts->why_whole && !strstr(t->ahead, j->id) &&
        !strstr(t->queue, j->id)) {
        struct sched_why_classes *w = classes(c);
        const char *tmpl =
            t->tmpl ? t->tmpl
                    : (marked = sched__why_mark(t->mid->text + 1, strlen(t->mid->text) - 2, j->id));
        /* jobs of one class mostly fail in a row: the last class first, then the map */
        int i = w->n && !strcmp(w->ents[w->last].tmpl, tmpl) ? (int)w->last
                                                             : sched__strmap_get(&w->by_tmpl, tmpl);
        if (i >= 0 && !strcmp(w->ents[i].ahead, t->ahead) && !strcmp(w->ents[i].queue, t->queue))
            e = &w->ents[i];
        else { /* the first of its class keeps its whole document */
            char *own = marked ? marked : xstrdup(tmpl);
            marked = NULL;
            XGROW(w->ents, w->n + 1, w->cap);
            w->ents[w->n] = (struct class_ent){own, xstrdup(t->ahead), xstrdup(t->queue), NULL, 0};
            sched__strmap_put(&w->by_tmpl, own, (int)w->n++);
            i = (int)w->n - 1;
        }
        w->last = (size_t)i;
    }
    free(marked);
    int rc;
    if (e) {
        if (!e->key)
            e->key = xasprintf("~class/%llu/%zu", (unsigned long long)c->cycle,
                               (size_t)(e - classes(c)->ents));
        size_t len;
        char *r = record_text(t->idh, t->primary_code, e->key, t->tail, &len);
        rc = store_doc_put_text(c->txn, STORE_DB_WHY, j->id, r, len, err);
        free(r);
        if (rc == 0) {
            e->members++;
            sched__why_job(c->why_mem, c->v, (int)(j - c->v->jobs))->cls = xstrdup(e->key);
        }
        return rc;
    }
    /* {id..., mid..., "ahead": ahead, tail..., "queue": queue}: the text a dump of the whole
     * document would be */
    char *plain = t->mid->marked ? sched__why_unmark(t->mid->text, j->id) : NULL;
    const char *mid = plain ? plain : t->mid->text;
    size_t il = strlen(t->idh), ml = strlen(mid), al = strlen(t->ahead), tl = strlen(t->tail),
           ql = strlen(t->queue);
    char *doc = xmalloc(il + ml + al + tl + ql + 32), *p = doc;
    memcpy(p, t->idh, il - 1);
    p += il - 1;
    *p++ = ',';
    memcpy(p, mid + 1, ml - 2);
    p += ml - 2;
    memcpy(p, ",\"ahead\":", 9);
    p += 9;
    memcpy(p, t->ahead, al);
    p += al;
    *p++ = ',';
    memcpy(p, t->tail + 1, tl - 2);
    p += tl - 2;
    memcpy(p, ",\"queue\":", 9);
    p += 9;
    memcpy(p, t->queue, ql);
    p += ql;
    *p++ = '}';
    rc = store_doc_put_text(c->txn, STORE_DB_WHY, j->id, doc, (size_t)(p - doc), err);
    free(doc);
    free(plain);
    return rc;
}

int sched__why_class_flush(struct sched_cyc *c, struct err *err)
{
    struct sched_why_writer *ww = sched__why_w(c);
    struct sched_why_classes *w = ww->classes;
    int rc = 0;
    for (size_t i = 0; w && rc == 0 && i < w->n; i++) {
        struct class_ent *e = &w->ents[i];
        if (!e->key)
            continue;
        int d = sched__strmap_get(&w->drop_ix, e->key);
        long n = e->members - (d < 0 ? 0 : w->drops[d].n);
        if (d >= 0)
            w->drops[d].n = 0; /* a class of this cycle: counted here, none stored yet */
        if (n <= 0)
            continue;
        char *text = xasprintf("{%s,\"ahead\":%s,\"queue\":%s}", e->tmpl, e->ahead, e->queue);
        json_t *doc = json_pack("{s:s}", "template", text);
        rc = store_doc_put(c->txn, STORE_DB_WHY, e->key, doc, err);
        json_decref(doc);
        free(text);
        char *mk = members_key(e->key);
        doc = json_pack("{s:I}", "members", (json_int_t)n);
        if (rc == 0)
            rc = store_doc_put(c->txn, STORE_DB_WHY, mk, doc, err);
        json_decref(doc);
        free(mk);
    }
    for (size_t i = 0; w && rc == 0 && i < w->ndrops; i++)
        if (w->drops[i].n)
            rc = count_add(c->txn, w->drops[i].key, -w->drops[i].n, err);
    return rc;
}

const char *sched__why_class_of(json_t *doc)
{
    return json_string_value(json_object_get(doc, CLASS_MEMBER));
}

int sched__why_doc_drop(MDB_txn *txn, struct sched_cyc *c, struct sched_view *v, const char *job,
                        struct err *err)
{
    json_t *doc = NULL;
    int rc = store_doc_get(txn, STORE_DB_WHY, job, &doc, err);
    if (rc == ERR_NOT_FOUND) {
        err_clear(err);
        return 0;
    }
    if (rc < 0)
        return rc;
    const char *key = sched__why_class_of(doc);
    /* In a cycle the view forgets the class too (the next document starts afresh; a cycle
     * that fails rebuilds the view). An apply changes the view only after its commit, and
     * the lone pod's job it drops leaves the view then: if the delete failed, the view must
     * still name the class the stored record names, or its count would never come down. */
    int ji = c ? sched__view_job(v, job) : -1;
    if (ji >= 0) {
        struct why_job *w = sched__why_job(c->why_mem, v, ji);
        free(w->cls);
        w->cls = NULL;
    }
    if (key && c) {
        drop_add(classes(c), key);
    } else if (key) {
        rc = count_add(txn, key, -1, err);
    }
    json_decref(doc);
    if (rc == 0)
        rc = store_doc_delete(txn, STORE_DB_WHY, job, err);
    return rc;
}

void sched__why_class_cache_release(struct sched_why_class_cache *k)
{
    free(k->key);
    free(k->tmpl);
    k->key = k->tmpl = NULL;
}

/* The template of class key (borrowed from k), read once per cache. */
static int template_of(MDB_txn *txn, const char *job, const char *key,
                       struct sched_why_class_cache *k, struct err *err)
{
    if (k->key && !strcmp(k->key, key))
        return 0;
    json_t *cls = NULL;
    int rc = k->at ? store_history_doc_at(txn, STORE_DB_WHY, key, k->at, &cls, err)
                   : store_doc_get(txn, STORE_DB_WHY, key, &cls, err);
    if (rc == ERR_NOT_FOUND)
        return err_set(err, ERR_STORE, "why of job '%s': class document '%s' is missing",
                       job ? job : "?", key);
    if (rc < 0)
        return rc;
    const char *tmpl = json_string_value(json_object_get(cls, "template"));
    if (!tmpl) {
        json_decref(cls);
        return err_set(err, ERR_STORE, "why of job '%s': class document '%s' is not a template",
                       job ? job : "?", key);
    }
    sched__why_class_cache_release(k);
    k->key = xstrdup(key);
    k->tmpl = xstrdup(tmpl);
    json_decref(cls);
    return 0;
}

/* The members a record and its whole document open with, in order. */
static const char *const record_head[] = {"job", "state", "cycle", "auditSeq"};

static int is_head(const char *m)
{
    for (size_t i = 0; i < sizeof(record_head) / sizeof(record_head[0]); i++)
        if (!strcmp(m, record_head[i]))
            return 1;
    return 0;
}

int sched__why_class_complete(MDB_txn *txn, json_t **doc, struct sched_why_class_cache *k,
                              struct err *err)
{
    const char *key = sched__why_class_of(*doc);
    if (!key)
        return 0;
    const char *job = json_string_value(json_object_get(*doc, "job"));
    int rc = template_of(txn, job, key, k, err);
    if (rc < 0)
        return rc;
    char *text = job ? sched__why_unmark(k->tmpl, job) : NULL;
    json_error_t jerr;
    json_t *t = text ? json_loads(text, 0, &jerr) : NULL;
    free(text);
    if (!json_is_object(t)) {
        json_decref(t);
        return err_set(err, ERR_STORE, "why of job '%s': class document '%s' is not a template",
                       job ? job : "?", key);
    }
    json_t *out = json_object(), *x;
    for (size_t i = 0; i < sizeof(record_head) / sizeof(record_head[0]); i++)
        if ((x = json_object_get(*doc, record_head[i])) != NULL)
            json_object_set(out, record_head[i], x);
    const char *m, *rm;
    json_t *rx;
    json_object_foreach(t, m, x)
    {
        if (!strcmp(m, "queue")) /* the record's own tail (history, gangTimeout, whatever
                                    the writer copied) comes before the queue, in order */
            json_object_foreach(*doc, rm, rx)
            {
                if (!is_head(rm) && strcmp(rm, "primary") && strcmp(rm, CLASS_MEMBER) &&
                    !json_object_get(t, rm))
                    json_object_set(out, rm, rx);
            }
        json_object_set(out, m, x);
    }
    json_decref(t);
    json_decref(*doc);
    *doc = out;
    return 0;
}
