/*
 * objects.c - the objects of every kind (model_kind), and the pod indexes.
 *
 * Index entries are derived from the pod document only (spec.nodeName, its PodGroup by
 * model_pod_group_name, pending by model_pod_json_pending), so they can always be recomputed
 * from the old and new values; store_put touches only the entries that change. The indexes
 * by node and by group are plain databases keyed "<node or group>\0<pod key>" (pair_key),
 * scanned by prefix: as DUPSORT databases each binding rewrote its node's duplicate page, a
 * few percent of a cycle (bench/README.md, "Session 14"). A pod
 * is read with its binding record applied (pod_bind.c), so "the stored value" of a pod
 * everywhere below means that merged document.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

const enum store_dbi store__kind_dbi[MODEL_KIND_COUNT] = {[MODEL_NODE] = DBI_NODES,
                                                          [MODEL_POD] = DBI_PODS,
                                                          [MODEL_PODGROUP] = DBI_PODGROUPS,
                                                          [MODEL_TOPOLOGY] = DBI_TOPOLOGIES,
                                                          [MODEL_PRIORITYCLASS] =
                                                              DBI_PRIORITYCLASSES,
                                                          [MODEL_QUEUE] = DBI_QUEUES,
                                                          [MODEL_PDB] = DBI_PDBS};
static const char *const kind_word[MODEL_KIND_COUNT] = {[MODEL_NODE] = "node",
                                                        [MODEL_POD] = "pod",
                                                        [MODEL_PODGROUP] = "podgroup",
                                                        [MODEL_TOPOLOGY] = "topology",
                                                        [MODEL_PRIORITYCLASS] = "priorityclass",
                                                        [MODEL_QUEUE] = "queue",
                                                        [MODEL_PDB] = "poddisruptionbudget"};

/* Index keys of one pod: node and group NULL when none; borrowed (from the pod document, or
 * group from group_buf, where pod_index makes it). */
struct pod_idx {
    const char *node, *group; /* spec.nodeName, "ns/group" */
    int pending;
    char group_buf[512];
};

static int check_kind(enum model_kind kind, struct err *err)
{
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return err_set(err, ERR_INVALID, "unknown object kind %d", (int)kind);
    return 0;
}

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(obj, a), b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* model_object_key into buf, refusing what the store cannot keep: no or an empty
 * metadata.name, a key of n bytes or more. */
static int object_key(enum model_kind kind, json_t *obj, char *buf, size_t n, struct err *err)
{
    const char *name = str_at(obj, "metadata", "name");
    char *key;
    size_t len;

    if (!name || !*name)
        return err_setf(err, ERR_INVALID, "metadata.name", "%s without metadata.name",
                        kind_word[kind]);
    key = model_object_key(kind, obj);
    len = strlen(key);
    if (len < n)
        memcpy(buf, key, len + 1);
    free(key);
    if (len >= n)
        return err_setf(err, ERR_INVALID, "metadata.name", "%s key '%s' is too long",
                        kind_word[kind], name);
    return 0;
}

static void pod_index(json_t *pod, struct pod_idx *idx)
{
    const char *ns = str_at(pod, "metadata", "namespace");
    const char *group = model_pod_group_name(pod);

    idx->node = str_at(pod, "spec", "nodeName");
    if (idx->node && !*idx->node)
        idx->node = NULL;
    idx->group = NULL;
    if (group) {
        snprintf(idx->group_buf, sizeof(idx->group_buf), "%s/%s", ns && *ns ? ns : "default",
                 group);
        idx->group = idx->group_buf;
    }
    idx->pending = model_pod_json_pending(pod);
}

static int streq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The key of index entry (ikey, pod) into buf (IX_KEY_MAX bytes): "<ikey>\0<pod key>", its
 * value empty; a pair too long for an LMDB key keeps the pod key's start and a hash of it,
 * and the whole pod key as its value. Returns the key's length, 0 for an ikey too long to
 * index (names are validated far shorter). */
#define IX_KEY_MAX 511 /* LMDB's largest key */
static size_t pair_key(char *buf, const char *ikey, const MDB_val *pod, MDB_val *val)
{
    size_t n = strlen(ikey);
    *val = (MDB_val){0, ""};
    if (n + 1 + pod->mv_size <= IX_KEY_MAX) {
        memcpy(buf, ikey, n + 1);
        memcpy(buf + n + 1, pod->mv_data, pod->mv_size);
        return n + 1 + pod->mv_size;
    }
    if (n + 1 + 16 >= IX_KEY_MAX)
        return 0;
    size_t keep = IX_KEY_MAX - n - 1 - 16;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < pod->mv_size; i++)
        h = (h ^ ((const unsigned char *)pod->mv_data)[i]) * 1099511628211ULL;
    memcpy(buf, ikey, n + 1);
    memcpy(buf + n + 1, pod->mv_data, keep);
    for (int i = 0; i < 16; i++)
        buf[n + 1 + keep + (size_t)i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
    *val = *pod;
    return IX_KEY_MAX;
}

/* Moves one index entry (pair_key) from old_key to new_key (either may be NULL). */
static int move_dup(MDB_txn *txn, MDB_dbi dbi, MDB_val *pod, const char *old_key,
                    const char *new_key, struct err *err)
{
    struct store *st = store__of(txn);
    char buf[IX_KEY_MAX];
    MDB_val k, d;
    int rc;

    if (streq(old_key, new_key))
        return 0;
    if (old_key && (k.mv_size = pair_key(buf, old_key, pod, &d)) > 0) {
        k.mv_data = buf;
        rc = store__del(txn, dbi, &k, NULL);
        if (rc && rc != MDB_NOTFOUND)
            return store__mdb_err(st, rc, err, "cannot update a pod index");
    }
    if (new_key && (k.mv_size = pair_key(buf, new_key, pod, &d)) > 0) {
        k.mv_data = buf;
        rc = store__put(txn, dbi, &k, &d, 0);
        if (rc)
            return store__mdb_err(st, rc, err, "cannot update a pod index");
    }
    return 0;
}

static int update_index(MDB_txn *txn, const char *key, const struct pod_idx *o,
                        const struct pod_idx *n, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val pod = {strlen(key), (void *)key}, empty = {0, ""};
    int rc;

    rc =
        move_dup(txn, st->dbi[DBI_IDX_POD_NODE], &pod, o ? o->node : NULL, n ? n->node : NULL, err);
    if (rc < 0)
        return rc;
    rc = move_dup(txn, st->dbi[DBI_IDX_POD_GROUP], &pod, o ? o->group : NULL, n ? n->group : NULL,
                  err);
    if (rc < 0)
        return rc;
    if ((o && o->pending) == (n && n->pending))
        return 0;
    if (n && n->pending)
        rc = store__put(txn, st->dbi[DBI_IDX_PENDING], &pod, &empty, 0);
    else
        rc = store__del(txn, st->dbi[DBI_IDX_PENDING], &pod, NULL);
    if (rc && rc != MDB_NOTFOUND)
        return store__mdb_err(st, rc, err, "cannot update the pending index");
    return 0;
}

/* Decodes a stored value; a pod with its binding record applied (pod_bind.c). */
static int decode(MDB_txn *txn, const MDB_val *v, enum model_kind kind, const char *key,
                  json_t **out, struct err *err)
{
    json_error_t jerr;
    int rc;

    *out = store__json_load(v->mv_data, v->mv_size, &jerr);
    if (!*out)
        return err_set(err, ERR_STORE, "corrupt %s '%s': %s", kind_word[kind], key, jerr.text);
    if (kind == MODEL_POD && (rc = store__pod_overlay(txn, key, *out, err)) < 0) {
        json_decref(*out);
        *out = NULL;
        return rc;
    }
    return 0;
}

/* The stored value of kind and key into *v (borrowed, valid in txn): 0, ERR_NOT_FOUND
 * naming the object, or the store's error. */
static int get_raw(MDB_txn *txn, enum model_kind kind, const char *key, MDB_val *v, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key};
    int rc;

    if ((rc = check_kind(kind, err)) < 0)
        return rc;
    rc = store__get(txn, st->dbi[store__kind_dbi[kind]], &k, v);
    if (rc == MDB_NOTFOUND)
        return err_set(err, ERR_NOT_FOUND, "%s '%s' not found", kind_word[kind], key);
    return rc ? store__mdb_err(st, rc, err, "cannot read") : 0;
}

int store_get(MDB_txn *txn, enum model_kind kind, const char *key, json_t **out, struct err *err)
{
    MDB_val v;
    int rc;

    *out = NULL;
    if ((rc = get_raw(txn, kind, key, &v, err)) < 0)
        return rc;
    return decode(txn, &v, kind, key, out, err);
}

int store_exists(MDB_txn *txn, enum model_kind kind, const char *key, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc;

    if ((rc = check_kind(kind, err)) < 0)
        return rc;
    rc = store__get(txn, st->dbi[store__kind_dbi[kind]], &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    return rc ? store__mdb_err(st, rc, err, "cannot read") : 1;
}

/* Writes text (len bytes) as the object kind/key, with its history, and moves a pod's index
 * entries from the stored pod old's (NULL: none) to ni's (NULL for another kind). */
static int put_text(MDB_txn *txn, enum model_kind kind, const char *key, const char *text,
                    size_t len, json_t *old, const struct pod_idx *ni, struct err *err)
{
    struct store *st = store__of(txn);
    struct pod_idx oi;
    MDB_val k = {strlen(key), (void *)key}, v = {len, (void *)text};
    int rc = store__put(txn, st->dbi[store__kind_dbi[kind]], &k, &v, 0);
    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot write");
        return err_prefix(err, "%s '%s'", kind_word[kind], key);
    }
    if ((rc = store__history_add(txn, (unsigned char)kind, key, 'P', text, len, err)) < 0)
        return rc;
    if (kind != MODEL_POD)
        return 0;
    if (old)
        pod_index(old, &oi);
    /* obj carries the binding now; only a bound pod has a record, and its stored JSON was
     * pending: the pending index still lists it */
    if (old && oi.node && (rc = store__pod_overlay_drop(txn, key, err)) < 0)
        return rc;
    if (old && oi.node && rc == 1)
        oi.pending = 1;
    return update_index(txn, key, old ? &oi : NULL, ni, err);
}

/* Writes obj under key over old (the stored value, NULL when none) and updates the pod
 * indexes. stored: the stored bytes as the caller read them (mv_data NULL: none), or NULL
 * when it did not (store__history_unlive). */
static int put_over(MDB_txn *txn, enum model_kind kind, const char *key, json_t *obj, json_t *old,
                    const MDB_val *stored, struct err *err)
{
    struct pod_idx ni;
    int rc;

    if ((rc = store__history_unlive(txn, (unsigned char)kind, key, stored, err)) < 0)
        return rc;
    struct store__scratch *sc = store__scratch(txn);
    size_t len = store__dump(sc, obj, JSON_COMPACT, 0);
    if (kind == MODEL_POD)
        pod_index(obj, &ni);
    return put_text(txn, kind, key, sc->buf, len, old, kind == MODEL_POD ? &ni : NULL, err);
}

int store__index_listed(MDB_txn *txn, const char *key, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val pod = {strlen(key), (void *)key}, v;
    if (store__dry_of(txn)) /* a session keeps no pod index (dry.c): pods it added are not
                               listed, and the scheduler binds only pods its view holds
                               pending; a pod bound already has its record (MDB_KEYEXIST) */
        return 0;
    int rc = store__get(txn, st->dbi[DBI_IDX_PENDING], &pod, &v);
    if (rc == MDB_NOTFOUND)
        return ERR_NOT_FOUND;
    return rc ? store__mdb_err(st, rc, err, "cannot read the pending index") : 0;
}

int store__index_bind(MDB_txn *txn, const char *key, const char *node, struct err *err)
{
    struct pod_idx o, n; /* the group unchanged by a binding, and so is the pending index */
    o.node = o.group = n.group = NULL;
    n.node = node;
    o.pending = n.pending = 0;
    return update_index(txn, key, &o, &n, err);
}

int store_put(MDB_txn *txn, enum model_kind kind, json_t *obj, json_t **old_out, struct err *err)
{
    struct store *st = store__of(txn);
    json_t *old = NULL;
    char key[512];
    MDB_val k, v;
    int rc;

    if (old_out)
        *old_out = NULL;
    if ((rc = check_kind(kind, err)) < 0 || (rc = object_key(kind, obj, key, sizeof(key), err)) < 0)
        return rc;
    k = (MDB_val){strlen(key), key};
    /* read for the history (put_over); decoded only when someone needs it: the caller or
     * the pod index */
    rc = store__get(txn, st->dbi[store__kind_dbi[kind]], &k, &v);
    if (rc == MDB_NOTFOUND)
        v = (MDB_val){0, NULL};
    else if (rc)
        return store__mdb_err(st, rc, err, "cannot read");
    if (v.mv_data && (kind == MODEL_POD || old_out) &&
        (rc = decode(txn, &v, kind, key, &old, err)) < 0)
        return rc;
    rc = put_over(txn, kind, key, obj, old, &v, err);
    if (rc == 0 && old_out) {
        *old_out = old;
        old = NULL;
    }
    json_decref(old);
    return rc;
}

int store_replace(MDB_txn *txn, enum model_kind kind, json_t *obj, json_t *old, struct err *err)
{
    char key[512];
    int rc;

    if ((rc = check_kind(kind, err)) < 0 || (rc = object_key(kind, obj, key, sizeof(key), err)) < 0)
        return rc;
    return put_over(txn, kind, key, obj, old, NULL, err);
}

int store_ready_make(struct store_ready *r, enum model_kind kind, json_t *obj, json_t *rv,
                     struct err *err)
{
    char key[512];
    size_t at[2] = {0, 0};
    int rc;

    memset(r, 0, sizeof(*r));
    if ((rc = check_kind(kind, err)) < 0 || (rc = object_key(kind, obj, key, sizeof(key), err)) < 0)
        return rc;
    struct store__scratch sc = {NULL, 0};
    r->kind = kind;
    r->key = xstrdup(key);
    r->len = store__dump_mark(&sc, obj, JSON_COMPACT, 0, rv, at);
    r->text = sc.buf;
    r->rv_at = at[0];
    r->rv_end = at[1];
    if (!at[1]) {
        store_ready_release(r);
        return err_set(err, ERR_INTERNAL, "%s '%s': the version to replace is not in it",
                       kind_word[kind], key);
    }
    if (kind != MODEL_POD)
        return 0;
    struct pod_idx ni;
    pod_index(obj, &ni);
    r->node = ni.node ? xstrdup(ni.node) : NULL;
    r->group = ni.group ? xstrdup(ni.group) : NULL;
    r->pending = ni.pending;
    return 0;
}

void store_ready_release(struct store_ready *r)
{
    free(r->key);
    free(r->text);
    free(r->node);
    free(r->group);
    memset(r, 0, sizeof(*r));
}

int store_put_ready(MDB_txn *txn, const struct store_ready *r, const char *rv, size_t n,
                    struct err *err)
{
    int rc;
    if ((rc = store__history_unlive(txn, (unsigned char)r->kind, r->key, NULL, err)) < 0)
        return rc;
    struct store__scratch *sc = store__scratch(txn);
    size_t tail = r->len - r->rv_end, len = r->rv_at + n + 2 + tail;
    if (!sc->buf || sc->cap < len) {
        sc->cap = len > 4096 ? len : 4096;
        sc->buf = xrealloc(sc->buf, sc->cap);
    }
    memcpy(sc->buf, r->text, r->rv_at);
    sc->buf[r->rv_at] = '"';
    memcpy(sc->buf + r->rv_at + 1, rv, n);
    sc->buf[r->rv_at + 1 + n] = '"';
    memcpy(sc->buf + r->rv_at + 2 + n, r->text + r->rv_end, tail);
    struct pod_idx ni; /* the ready keys as they are: no group_buf */
    ni.node = r->node;
    ni.group = r->group;
    ni.pending = r->pending;
    return put_text(txn, r->kind, r->key, sc->buf, len, NULL, r->kind == MODEL_POD ? &ni : NULL,
                    err);
}

int store_delete(MDB_txn *txn, enum model_kind kind, const char *key, json_t **old_out,
                 struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key}, v;
    struct pod_idx oi;
    json_t *old = NULL;
    int rc;

    if (old_out)
        *old_out = NULL;
    if ((rc = get_raw(txn, kind, key, &v, err)) < 0)
        return rc;
    if ((kind == MODEL_POD || old_out) && (rc = decode(txn, &v, kind, key, &old, err)) < 0)
        return rc;
    if ((rc = store__history_unlive(txn, (unsigned char)kind, key, &v, err)) < 0)
        goto out;
    rc = store__del(txn, st->dbi[store__kind_dbi[kind]], &k, NULL);
    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot delete");
        goto out;
    }
    if ((rc = store__history_add(txn, (unsigned char)kind, key, 'D', NULL, 0, err)) < 0)
        goto out;
    if (kind == MODEL_POD) {
        pod_index(old, &oi);
        if (oi.node && (rc = store__pod_overlay_drop(txn, key, err)) < 0)
            goto out;
        if (oi.node && rc == 1) /* bound by its record: listed as pending (put_over) */
            oi.pending = 1;
        if ((rc = update_index(txn, key, &oi, NULL, err)) < 0)
            goto out;
    }
    if (old_out) {
        *old_out = old;
        old = NULL;
    }
out:
    json_decref(old);
    return rc;
}

int store_each(MDB_txn *txn, enum model_kind kind, const char *prefix, store_obj_fn fn, void *ctx,
               struct err *err)
{
    return store_each_after(txn, kind, prefix, NULL, fn, ctx, err);
}

int store_each_after(MDB_txn *txn, enum model_kind kind, const char *prefix, const char *after,
                     store_obj_fn fn, void *ctx, struct err *err)
{
    int rc = check_kind(kind, err);

    if (rc < 0)
        return rc;
    return store__each_json(txn, store__of(txn)->dbi[store__kind_dbi[kind]], prefix, after, fn, ctx,
                            err);
}

/* Calls fn for each pod key of index dbi under key (its pair_key entries), or, key NULL,
 * for each key of a plain db. */
static int each_key(MDB_txn *txn, enum store_dbi dbi, const char *key, store_key_fn fn, void *ctx,
                    struct err *err)
{
    struct store *st = store__of(txn);
    struct store__cur cur;
    size_t pl = key ? strlen(key) + 1 : 0; /* the prefix "<key>\0" */
    MDB_val k = {pl, (void *)key}, v, in;
    MDB_cursor_op op = key ? MDB_SET_RANGE : MDB_FIRST;
    char buf[512];
    int rc;

    if (key && (!*key || pl >= IX_KEY_MAX))
        return 0;
    rc = store__cur_open(txn, st->dbi[dbi], &cur);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    for (;; op = MDB_NEXT) {
        rc = store__cur_get(&cur, &k, &v, op);
        if (rc == MDB_NOTFOUND) {
            rc = 0;
            break;
        }
        if (rc) {
            rc = store__mdb_err(st, rc, err, "cannot scan an index");
            break;
        }
        if (key && (k.mv_size < pl || memcmp(k.mv_data, key, pl)))
            break; /* past the prefix */
        in = (MDB_val){k.mv_size - pl, (char *)k.mv_data + pl};
        const MDB_val *pod = !key ? &k : v.mv_size ? &v : &in;
        if (pod->mv_size >= sizeof(buf))
            continue;
        memcpy(buf, pod->mv_data, pod->mv_size);
        buf[pod->mv_size] = '\0';
        if ((rc = fn(ctx, buf)) != 0) {
            rc = rc > 0 ? 0 : rc;
            break;
        }
    }
    store__cur_close(&cur);
    return rc;
}

int store_each_key(MDB_txn *txn, enum model_kind kind, store_key_fn fn, void *ctx, struct err *err)
{
    int rc = check_kind(kind, err);
    return rc < 0 ? rc : each_key(txn, store__kind_dbi[kind], NULL, fn, ctx, err);
}

int store_pods_on_node(MDB_txn *txn, const char *node, store_key_fn fn, void *ctx, struct err *err)
{
    return each_key(txn, DBI_IDX_POD_NODE, node, fn, ctx, err);
}

struct migrate {
    MDB_txn *txn;
    struct err *err;
};

/* Filled from a pod: the index entries it has (store__index_migrate's). */
static int index_pod(void *ctx, const char *key, json_t *pod)
{
    struct migrate *m = ctx;
    struct pod_idx ni;
    pod_index(pod, &ni);
    return update_index(m->txn, key, NULL, &ni, m->err);
}

int store__index_migrate(MDB_txn *txn, struct err *err)
{
    struct store *st = store__of(txn);
    static const char *const old[] = {"idx_pod_node", "idx_pod_group"};
    for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
        MDB_dbi d;
        int rc = mdb_dbi_open(txn, old[i], MDB_DUPSORT, &d);
        if (rc == MDB_NOTFOUND)
            continue;
        if (rc == 0)
            rc = mdb_drop(txn, d, 1);
        if (rc)
            return store__mdb_err(st, rc, err, "cannot drop an old pod index");
    }
    struct migrate m = {txn, err};
    return store_each(txn, MODEL_POD, NULL, index_pod, &m, err);
}

int store_pods_of_group(MDB_txn *txn, const char *group_key, store_key_fn fn, void *ctx,
                        struct err *err)
{
    return each_key(txn, DBI_IDX_POD_GROUP, group_key, fn, ctx, err);
}

struct unbound {
    MDB_txn *txn;
    store_key_fn fn;
    void *ctx;
};

/* A listed pod without a binding record (store__index_listed) is pending. */
static int if_unbound(void *ctx, const char *key)
{
    struct unbound *u = ctx;
    struct store *st = store__of(u->txn);
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc = store__get(u->txn, st->dbi[DBI_POD_BIND], &k, &v);
    if (rc == MDB_NOTFOUND)
        return u->fn(u->ctx, key);
    return rc ? store__mdb_err(st, rc, NULL, "cannot read a binding") : 0;
}

int store_pods_pending(MDB_txn *txn, store_key_fn fn, void *ctx, struct err *err)
{
    struct unbound u = {txn, fn, ctx};
    return each_key(txn, DBI_IDX_PENDING, NULL, if_unbound, &u, err);
}

int store_pod_groups_count(MDB_txn *txn, uint64_t *groups, uint64_t *grouped, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_cursor *cur = NULL;
    MDB_stat ms;
    MDB_val k, v;
    *groups = *grouped = 0;
    int rc = mdb_stat(txn, st->dbi[DBI_IDX_POD_GROUP], &ms);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot count");
    *grouped = ms.ms_entries;
    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_IDX_POD_GROUP], &cur)) != 0)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    char last[IX_KEY_MAX + 1] = "";
    size_t ll = 0; /* the group of the last entry, with its NUL */
    for (MDB_cursor_op op = MDB_FIRST; (rc = mdb_cursor_get(cur, &k, &v, op)) == 0; op = MDB_NEXT) {
        const char *nul = memchr(k.mv_data, '\0', k.mv_size);
        size_t gl = nul ? (size_t)(nul - (const char *)k.mv_data) + 1 : k.mv_size;
        if (gl != ll || memcmp(last, k.mv_data, gl)) {
            ++*groups;
            memcpy(last, k.mv_data, gl);
            ll = gl;
        }
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? 0 : store__mdb_err(st, rc, err, "cannot scan an index");
}

int store_count(MDB_txn *txn, enum model_kind kind, uint64_t *out, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_stat ms;
    int rc;

    *out = 0;
    if ((rc = check_kind(kind, err)) < 0)
        return rc;
    rc = mdb_stat(txn, st->dbi[store__kind_dbi[kind]], &ms);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot count");
    *out = ms.ms_entries;
    return 0;
}
