/*
 * sched_invariants.c - see sched_invariants.h.
 */
#include "sched_invariants.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "model.h"
#include "store.h"

struct inv {
    json_t *nodes;  /* name -> {res: allocatable} */
    json_t *used;   /* name -> {res: requested} */
    json_t *groups; /* "ns/group" -> {"bound": n, "members": n} */
    json_t *broken; /* "ns/group" -> true: a preemption broke it (ledger cost.brokenGangs) */
    json_t *exempt; /* "ns/group" -> anything: the caller's gangs not to check (borrowed) */
    char *msg;
    size_t n;
    int bad;
};

static int fail(struct inv *c, const char *fmt, const char *a, const char *b)
{
    if (!c->bad)
        snprintf(c->msg, c->n, fmt, a, b);
    c->bad = 1;
    return 1;
}

static int each_node(void *ctx, const char *key, json_t *obj)
{
    struct inv *c = ctx;
    struct model_node n = {0};
    struct err err = ERR_INIT;
    if (model_node_decode(obj, &n, &err) < 0)
        return fail(c, "node '%s' does not decode: %s", key, err.msg);
    json_t *alloc = json_object();
    json_object_set_new(alloc, "pods", json_integer(110));
    for (size_t i = 0; i < n.nallocatable; i++)
        json_object_set_new(alloc, n.allocatable[i].name, json_integer(n.allocatable[i].value));
    json_object_set_new(c->nodes, key, alloc);
    model_node_release(&n);
    return 0;
}

static void bump(json_t *obj, const char *k, json_int_t by)
{
    json_object_set_new(obj, k, json_integer(json_integer_value(json_object_get(obj, k)) + by));
}

static int each_pod(void *ctx, const char *key, json_t *obj)
{
    struct inv *c = ctx;
    struct model_pod p = {0};
    struct err err = ERR_INIT;
    if (model_pod_decode(obj, &p, &err) < 0)
        return fail(c, "pod '%s' does not decode: %s", key, err.msg);
    int terminal = p.phase && (!strcmp(p.phase, "Succeeded") || !strcmp(p.phase, "Failed"));
    int rc = 0;
    if (p.group) {
        char gk[512];
        snprintf(gk, sizeof(gk), "%s/%s", p.ns, p.group);
        json_t *g = json_object_get(c->groups, gk);
        if (!g) {
            g = json_pack("{s:i,s:i}", "bound", 0, "members", 0);
            json_object_set_new(c->groups, gk, g);
        }
        /* Failed and Succeeded members never count toward minMember */
        bump(g, "members", !terminal);
        bump(g, "bound", model_pod_gang_bound(&p));
    }
    if (p.node_name && !terminal) {
        if (!json_object_get(c->nodes, p.node_name)) {
            rc = fail(c, "pod '%s' is bound to missing node '%s'", key, p.node_name);
        } else {
            json_t *u = json_object_get(c->used, p.node_name);
            if (!u) {
                u = json_object();
                json_object_set_new(c->used, p.node_name, u);
            }
            int has_pods = 0;
            for (size_t i = 0; i < p.nrequests; i++) {
                bump(u, p.requests[i].name, p.requests[i].value);
                has_pods |= !strcmp(p.requests[i].name, "pods");
            }
            if (!has_pods)
                bump(u, "pods", 1);
        }
    }
    model_pod_release(&p);
    return rc;
}

static int ledger_entry(void *ctx, const char *key, json_t *entry)
{
    struct inv *c = ctx;
    size_t i;
    json_t *g;
    (void)key;
    json_array_foreach(json_object_get(json_object_get(entry, "cost"), "brokenGangs"), i, g)
        json_object_set_new(c->broken, json_string_value(g), json_true());
    return 0;
}

static int group_ok(struct inv *c, const char *key, int min, int strict)
{
    /* DESIGN.md section 3: preemption may break a gang (costed, in the ledger); it evicts
     * only the pods it needs, so the rest keeps running below minMember */
    if (json_object_get(c->broken, key) || json_object_get(c->exempt, key))
        return 1;
    json_t *g = json_object_get(c->groups, key);
    json_int_t bound = json_integer_value(json_object_get(g, "bound"));
    json_int_t members = json_integer_value(json_object_get(g, "members"));
    json_int_t need = min < members ? min : members;
    /* strict (a GangGroup member): placed, unless preemption or the user removed every
     * member pod, which leaves nothing that could be placed */
    if (strict)
        return (bound > 0 || members == 0) && bound >= need;
    return bound == 0 || bound >= need;
}

static int each_pg(void *ctx, const char *key, json_t *obj)
{
    struct inv *c = ctx;
    struct model_podgroup g = {0};
    struct err err = ERR_INIT;
    if (model_podgroup_decode(obj, &g, &err) < 0)
        return fail(c, "podgroup '%s' does not decode: %s", key, err.msg);
    int rc = 0;
    if (!group_ok(c, key, g.min_member, 0))
        rc = fail(c, "gang '%s' is partially placed%s", key, "");
    /* GangGroup members are checked in sched_invariants_check with the txn. */
    model_podgroup_release(&g);
    return rc;
}

struct gg {
    struct inv *c;
    MDB_txn *txn;
};

static int each_pg_group(void *ctx, const char *key, json_t *obj)
{
    struct gg *x = ctx;
    struct model_podgroup g = {0};
    if (model_podgroup_decode(obj, &g, NULL) < 0)
        return 0;
    json_int_t bound =
        json_integer_value(json_object_get(json_object_get(x->c->groups, key), "bound"));
    for (size_t i = 0; i < g.ngroups; i++)
        if (json_object_get(x->c->exempt, g.groups[i]))
            bound = 0; /* the caller disturbed a member: the GangGroup is not checked */
    for (size_t i = 0; bound > 0 && i < g.ngroups && !x->c->bad; i++) {
        json_t *other = NULL;
        struct model_podgroup og = {0};
        if (store_get(x->txn, MODEL_PODGROUP, g.groups[i], &other, NULL) < 0 ||
            model_podgroup_decode(other, &og, NULL) < 0 ||
            !group_ok(x->c, g.groups[i], og.min_member, 1))
            fail(x->c, "GangGroup of '%s' is partially placed: '%s' is not satisfied", key,
                 g.groups[i]);
        model_podgroup_release(&og);
        json_decref(other);
    }
    model_podgroup_release(&g);
    return x->c->bad;
}

static void check_nodes(struct inv *c)
{
    const char *node, *res;
    json_t *u, *v;
    json_object_foreach(c->used, node, u)
    {
        json_t *alloc = json_object_get(c->nodes, node);
        json_object_foreach(u, res, v)
        {
            json_int_t have = json_integer_value(json_object_get(alloc, res));
            if (json_integer_value(v) > have && !c->bad) {
                snprintf(c->msg, c->n, "node '%s' is over-committed on '%s': %lld > %lld", node,
                         res, (long long)json_integer_value(v), (long long)have);
                c->bad = 1;
            }
        }
    }
}

int sched_invariants_check(struct store *st, char *msg, size_t n)
{
    return sched_invariants_check_ex(st, 0, NULL, msg, n);
}

int sched_invariants_check_ex(struct store *st, uint64_t audit_from, json_t *exempt, char *msg,
                              size_t n)
{
    struct inv c = {json_object(), json_object(), json_object(), json_object(), exempt, msg, n, 0};
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    struct store_audit_verdict verdict;
    msg[0] = '\0';
    int rc = store_txn_begin(st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_doc_each(txn, STORE_DB_PREEMPTIONS, "e:", ledger_entry, &c, &err);
    if (rc == 0)
        rc = store_each(txn, MODEL_NODE, NULL, each_node, &c, &err);
    if (rc == 0 && !c.bad)
        rc = store_each(txn, MODEL_POD, NULL, each_pod, &c, &err);
    if (rc == 0 && !c.bad)
        rc = store_each(txn, MODEL_PODGROUP, NULL, each_pg, &c, &err);
    struct gg x = {&c, txn};
    if (rc == 0 && !c.bad)
        rc = store_each(txn, MODEL_PODGROUP, NULL, each_pg_group, &x, &err);
    if (rc == 0 && !c.bad)
        check_nodes(&c);
    if (rc == 0 && !c.bad && (rc = store_audit_verify(txn, audit_from, 0, &verdict, &err)) == 0 &&
        !verdict.ok) {
        snprintf(msg, n, "audit chain does not verify: %s", verdict.reason);
        c.bad = 1;
    }
    if (rc < 0)
        snprintf(msg, n, "reading the store: %s", err.msg);
    store_txn_abort(&txn);
    json_decref(c.nodes);
    json_decref(c.used);
    json_decref(c.groups);
    json_decref(c.broken);
    return rc < 0 ? rc : c.bad ? -1 : 0;
}
