/* test_audit_sig.c - signed checkpoints against a real musterd and its real store: a
 * rewritten chain, a deleted tail, a forged checkpoint, pruning, offline verification. */
#include <check.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../store/internal.h" /* store__audit_put_raw, store__meta_put: the attacker's tools */
#include "audit_sig.h"
#include "check_run.h"
#include "cli_support.h"
#include "err.h"
#include "http_client.h"
#include "kube_support.h"
#include "store.h"
#include "store_util.h"

struct env {
    struct musterd m;
    char key[320], pub[320], other[320], witness[320], config[320];
    int token; /* musterd runs with --token s3cret (auth on): send it */
};

static const char *const auth_hdr[] = {"Authorization: Bearer s3cret", NULL};
static const char *const auth_yaml_hdr[] = {"Authorization: Bearer s3cret",
                                            "Content-Type: application/yaml", NULL};
static const char *const yaml_hdr[] = {"Content-Type: application/yaml", NULL};

static void write_key(const char *priv, const char *pub)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    FILE *f = fopen(priv, "w");

    ck_assert_ptr_nonnull(k);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    if (pub) {
        ck_assert_ptr_nonnull(f = fopen(pub, "w"));
        ck_assert_int_eq(PEM_write_PUBKEY(f, k), 1);
        fclose(f);
    }
    EVP_PKEY_free(k);
}

/* A temp root with a key, another key, a config (checkpoint every 4 records) outside the
 * data directory. */
static void env_init(struct env *e)
{
    memset(e, 0, sizeof(*e));
    snprintf(e->m.root, sizeof(e->m.root), "/tmp/muster-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(e->m.root));
    snprintf(e->key, sizeof(e->key), "%s/audit.pem", e->m.root);
    snprintf(e->pub, sizeof(e->pub), "%s/audit.pub.pem", e->m.root);
    snprintf(e->other, sizeof(e->other), "%s/other.pem", e->m.root);
    snprintf(e->witness, sizeof(e->witness), "%s/witness.ndjson", e->m.root);
    snprintf(e->config, sizeof(e->config), "%s/musterd.yaml", e->m.root);
    write_key(e->key, e->pub);
    write_key(e->other, NULL);
    ck_assert_int_eq(test_write_file(e->config, "audit_checkpoint_records: 4\n"
                                                "audit_checkpoint_interval: 0.2\n"
                                                "cycle_interval: 0\n"),
                     0);
}

static void start(struct env *e)
{
    const char *args[] = {"--config",        e->config,  "--audit-key", e->key,
                          "--audit-witness", e->witness, NULL};
    ck_assert_int_eq(musterd_start(&e->m, e->m.root, args), 0);
}

static json_t *get_json(struct env *e, const char *path)
{
    struct http_resp r;

    http_request("GET", e->m.base, path, NULL, e->token ? auth_hdr : NULL, &r);
    ck_assert_msg(r.status == 200, "GET %s: %ld %s", path, r.status, r.body);
    json_t *doc = json_incref(r.json);
    http_resp_free(&r);
    return doc;
}

static long post(struct env *e, const char *path, const char *body, char **reply)
{
    struct http_resp r;

    http_request("POST", e->m.base, path, body,
                 e->token ? (body ? auth_yaml_hdr : auth_hdr) : (body ? yaml_hdr : NULL), &r);
    long status = r.status;
    if (reply)
        *reply = strdup(r.body ? r.body : "");
    http_resp_free(&r);
    return status;
}

/* Applies n nodes and runs a cycle after each: a few records each. */
static void activity(struct env *e, int first, int n)
{
    char yaml[256], path[32];

    for (int i = first; i < first + n; i++) {
        snprintf(yaml, sizeof(yaml),
                 "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                 "status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n",
                 i);
        ck_assert_int_eq(post(e, "/api/v1/manifests", yaml, NULL), 201);
        snprintf(path, sizeof(path), "/api/v1/cycles");
        ck_assert_int_eq(post(e, path, NULL, NULL), 200);
    }
}

static int witness_lines(struct env *e)
{
    char *text = test_read_file(e->witness, NULL);
    int n = 0;

    for (char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* Runs musterd, makes records, waits for checkpoints, stops (a last checkpoint). */
static void run_and_stop(struct env *e, int nodes)
{
    start(e);
    activity(e, 1, nodes);
    for (int i = 0; i < 300 && witness_lines(e) < 2; i++)
        usleep(10000);
    ck_assert_int_ge(witness_lines(e), 2);
    ck_assert_int_eq(musterd_stop(&e->m), 0);
}

static struct store *open_store(struct env *e)
{
    return store_util_open(e->m.data_dir, 0, STORE_SYNC_FULL);
}

static int collect_raw(void *ctx, uint64_t seq, const char *json, size_t len)
{
    json_t *arr = ctx;
    (void)seq;
    json_array_append_new(arr, json_loadb(json, len, 0, NULL));
    return 0;
}

/* The attacker: rewrites record k, recomputes every later hash and the head, and makes
 * every later checkpoint record name the new hashes (it cannot sign them). */
static void rewrite_recompute(struct store *st, uint64_t k)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *recs = json_array(), *prev_rec = NULL;
    unsigned char prev[32], h[40];
    char hex[65];
    size_t i;
    json_t *rec;

    ck_assert_int_eq(store_audit_scan(txn, k - 1, 0, collect_raw, recs, &err), 0);
    prev_rec = json_array_get(recs, 0);
    ck_assert_int_eq(store__unhex(json_string_value(json_object_get(prev_rec, "hash")), prev, 32),
                     0);
    json_object_set_new(json_array_get(recs, 1), "forged", json_true());
    json_array_foreach(recs, i, rec)
    {
        if (i == 0)
            continue;
        if (!strcmp(json_string_value(json_object_get(rec, "kind")), "checkpoint")) {
            store__hex(prev, 32, hex);
            json_object_set_new(json_object_get(rec, "checkpoint"), "hash", json_string(hex));
        }
        json_object_del(rec, "hash");
        char *canon = json_dumps(rec, STORE__CANON);
        size_t n = strlen(canon);
        unsigned char *buf = malloc(32 + n);
        unsigned int dl = 32;
        memcpy(buf, prev, 32);
        memcpy(buf + 32, canon, n);
        EVP_Digest(buf, 32 + n, prev, &dl, EVP_sha256(), NULL);
        free(buf);
        free(canon);
        store__hex(prev, 32, hex);
        json_object_set_new(rec, "hash", json_string(hex));
        canon = json_dumps(rec, STORE__CANON);
        uint64_t seq = (uint64_t)json_integer_value(json_object_get(rec, "seq"));
        ck_assert_int_eq(store__audit_put_raw(txn, seq, canon, strlen(canon), &err), 0);
        store__be64_put(h, seq);
        free(canon);
    }
    memcpy(h + 8, prev, 32);
    ck_assert_int_eq(store__meta_put(txn, STORE__META_HEAD, h, 40, &err), 0);
    store_util_commit(&txn);
    json_decref(recs);
}

static struct store_audit_verdict offline(const char *export_text, const char *key_path)
{
    struct store_audit_key *key = NULL;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;

    ck_assert_msg(store_audit_key_load(key_path, &key, &err) == 0, "%s", err.msg);
    struct store_audit_offline *o = store_audit_offline_new(key);
    for (const char *p = export_text; *p;) {
        size_t n = strcspn(p, "\n");
        if (store_audit_offline_line(o, p, n))
            break;
        p += n + (p[n] == '\n');
    }
    store_audit_offline_finish(o, &v);
    store_audit_key_free(key);
    return v;
}

static char *export_all(struct env *e)
{
    struct http_resp r;

    http_request("GET", e->m.base, "/api/v1/audit", NULL, e->token ? auth_hdr : NULL, &r);
    ck_assert_int_eq(r.status, 200);
    char *text = strdup(r.body);
    http_resp_free(&r);
    return text;
}

static json_t *health_audit(struct env *e)
{
    json_t *h = get_json(e, "/api/v1/health");
    json_t *a = json_incref(json_object_get(h, "audit"));
    json_decref(h);
    return a;
}

static uint64_t witness_last_seq(struct env *e)
{
    struct store_ckpt cp;
    int found = 0;

    ck_assert_int_eq(store_witness_last(e->witness, &cp, &found, NULL), 0);
    ck_assert_int_eq(found, 1);
    return cp.seq;
}

/* A good chain: it verifies on start, over the API with signatures and offline. */
START_TEST(test_audit_sig_good_chain_verifies)
{
    struct env e;

    env_init(&e);
    run_and_stop(&e, 6);
    start(&e);
    json_t *h = get_json(&e, "/api/v1/health");
    ck_assert_str_eq(json_string_value(json_object_get(h, "status")), "ok");
    ck_assert(json_is_true(json_object_get(json_object_get(h, "audit"), "ok")));
    json_decref(h);
    json_t *v = get_json(&e, "/api/v1/audit/verify");
    ck_assert(json_is_true(json_object_get(v, "ok")));
    ck_assert(json_is_true(json_object_get(v, "signaturesChecked")));
    ck_assert_int_ge(json_integer_value(json_object_get(v, "checkpoints")), 3);
    json_decref(v);
    activity(&e, 100, 1); /* writable */
    char *text = export_all(&e);
    struct store_audit_verdict ov = offline(text, e.pub);
    ck_assert_msg(ov.ok, "%s", ov.reason);
    ck_assert_uint_eq(ov.from, 1);
    ck_assert_uint_ge(ov.checkpoints, 3);
    /* the CLI, offline, over a file */
    char path[400];
    snprintf(path, sizeof(path), "%s/export.ndjson", e.m.root);
    test_write_file(path, text);
    struct cli_result cr;
    cli_run(NULL, NULL, (const char *const[]){"audit", "verify", "--key", e.pub, "-f", path, NULL},
            &cr);
    ck_assert_msg(cr.status == 0, "%s%s", cr.out, cr.err);
    ck_assert_ptr_nonnull(strstr(cr.out, "audit export ok: records 1.."));
    cli_result_release(&cr);
    free(text);
    musterd_cleanup(&e.m);
}
END_TEST

/* The attack of the issue: record 3 rewritten, every later hash and the head recomputed.
 * The plain chain still verifies; the signed checkpoints do not, on start and offline. */
START_TEST(test_audit_sig_rewritten_record_is_caught)
{
    struct env e;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;

    env_init(&e);
    run_and_stop(&e, 6);
    uint64_t signed_seq = witness_last_seq(&e);
    struct store *st = open_store(&e);
    rewrite_recompute(st, 3);
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_verify(txn, 0, 0, &v, &err), 0);
    ck_assert_msg(v.ok, "the unsigned chain is fooled, as the issue says: %s", v.reason);
    store_txn_abort(&txn);
    store_close(st);

    start(&e);
    json_t *a = health_audit(&e);
    ck_assert(json_is_false(json_object_get(a, "ok")));
    json_t *sc = json_object_get(a, "startCheck");
    ck_assert_int_eq(json_integer_value(json_object_get(sc, "firstBad")), (json_int_t)signed_seq);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(sc, "reason")), "rewritten"));
    json_decref(a);
    char *log = test_read_file(e.m.log_file, NULL);
    ck_assert_ptr_nonnull(strstr(log, "audit chain broken at record"));
    free(log);
    /* read-only: reads work, changes and cycles answer 503 with the reason */
    json_decref(get_json(&e, "/api/v1/nodes"));
    char *reply = NULL;
    ck_assert_int_eq(post(&e, "/api/v1/manifests",
                          "apiVersion: v1\nkind: Node\nmetadata: {name: late}\n", &reply),
                     503);
    ck_assert_ptr_nonnull(strstr(reply, "read-only: audit chain broken at record"));
    free(reply);
    ck_assert_int_eq(post(&e, "/api/v1/cycles", NULL, NULL), 503);

    /* offline: the first checkpoint after record 3 no longer matches */
    char *text = export_all(&e);
    v = offline(text, e.pub);
    ck_assert(!v.ok);
    ck_assert_uint_ge(v.first_bad, 3);
    ck_assert_uint_le(v.first_bad, signed_seq);
    ck_assert_msg(strstr(v.reason, "signature does not verify") != NULL, "%s", v.reason);
    free(text);
    musterd_cleanup(&e.m);
}
END_TEST

/* Records after the witness's checkpoint deleted, with the head set back consistently. */
START_TEST(test_audit_sig_deleted_tail_is_caught)
{
    struct env e;
    struct err err = ERR_INIT;
    struct store_audit_verdict v;

    env_init(&e);
    run_and_stop(&e, 6);
    uint64_t signed_seq = witness_last_seq(&e), cut = signed_seq - 2;
    struct store *st = open_store(&e);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    uint64_t head = 0;
    ck_assert_int_eq(store_audit_last_seq(txn, &head, &err), 0);
    for (uint64_t s = cut; s <= head; s++)
        ck_assert_int_eq(store__audit_del_raw(txn, s, &err), 0);
    json_t *recs = json_array();
    ck_assert_int_eq(store_audit_scan(txn, cut - 1, cut - 1, collect_raw, recs, &err), 0);
    unsigned char h[40];
    store__be64_put(h, cut - 1);
    store__unhex(json_string_value(json_object_get(json_array_get(recs, 0), "hash")), h + 8, 32);
    ck_assert_int_eq(store__meta_put(txn, STORE__META_HEAD, h, 40, &err), 0);
    json_decref(recs);
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_verify(txn, 0, 0, &v, &err), 0);
    ck_assert_msg(v.ok, "a truncated chain is self-consistent: %s", v.reason);
    store_txn_abort(&txn);
    store_close(st);

    start(&e);
    json_t *a = health_audit(&e);
    json_t *sc = json_object_get(a, "startCheck");
    ck_assert(json_is_false(json_object_get(a, "ok")));
    ck_assert_int_eq(json_integer_value(json_object_get(sc, "firstBad")), (json_int_t)cut);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(sc, "reason")), "deleted"));
    json_decref(a);
    ck_assert_int_eq(post(&e, "/api/v1/cycles", NULL, NULL), 503);
    musterd_cleanup(&e.m);
}
END_TEST

/* A checkpoint signed with another key: refused in the witness and offline. */
START_TEST(test_audit_sig_forged_checkpoint_is_refused)
{
    struct env e;
    struct store_audit_key *other = NULL;
    struct store_ckpt cp;
    int found = 0;

    env_init(&e);
    run_and_stop(&e, 5);
    /* offline with the wrong public key */
    start(&e);
    char *text = export_all(&e);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    struct store_audit_verdict v = offline(text, e.other);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.reason, "not by the audit key"));
    free(text);
    /* a forged witness line: the right seq and hash, signed by another key */
    ck_assert_int_eq(store_witness_last(e.witness, &cp, &found, NULL), 0);
    ck_assert_int_eq(store_audit_key_load(e.other, &other, NULL), 0);
    ck_assert_int_eq(store_ckpt_sign(other, &cp, NULL), 0);
    ck_assert_int_eq(store_witness_append(e.witness, &cp, NULL), 0);
    store_audit_key_free(other);
    start(&e);
    json_t *a = health_audit(&e);
    ck_assert(json_is_false(json_object_get(a, "ok")));
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(a, "reason")), "not by the audit key"));
    json_decref(a);
    /* the signature itself: the key id claimed, the bytes forged */
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    ck_assert_int_eq(store_witness_last(e.witness, &cp, &found, NULL), 0);
    struct store_audit_key *key = NULL;
    ck_assert_int_eq(store_audit_key_load(e.pub, &key, NULL), 0);
    memcpy(cp.key, store_audit_key_id(key), sizeof(cp.key));
    struct err err = ERR_INIT;
    ck_assert_int_eq(store_ckpt_verify(key, &cp, &err), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not verify"));
    store_audit_key_free(key);
    musterd_cleanup(&e.m);
}
END_TEST

/* Prune behind a checkpoint: the log starts at it, and verifies from it, on the API,
 * offline and on start. */
START_TEST(test_audit_sig_prune_keeps_verification)
{
    struct env e;
    char *reply = NULL, path[64];

    env_init(&e);
    start(&e);
    activity(&e, 1, 8);
    for (int i = 0; i < 300 && witness_lines(&e) < 3; i++)
        usleep(10000);
    json_t *before = get_json(&e, "/api/v1/audit/verify");
    uint64_t head = (uint64_t)json_integer_value(json_object_get(before, "to"));
    json_decref(before);
    /* nothing to prune before the first checkpoint record */
    ck_assert_int_eq(post(&e, "/api/v1/audit/prune?before=1", NULL, &reply), 404);
    ck_assert_ptr_nonnull(strstr(reply, "no checkpoint record at or before record 1"));
    free(reply);
    snprintf(path, sizeof(path), "/api/v1/audit/prune?before=%" PRIu64, head - 1);
    ck_assert_int_eq(post(&e, path, NULL, &reply), 200);
    json_t *pr = json_loads(reply, 0, NULL);
    free(reply);
    uint64_t first = (uint64_t)json_integer_value(json_object_get(pr, "firstSeq"));
    ck_assert_uint_gt(first, 1);
    ck_assert_int_eq(json_integer_value(json_object_get(pr, "deleted")), (json_int_t)first - 1);
    json_decref(pr);
    json_t *v = get_json(&e, "/api/v1/audit/verify");
    ck_assert_msg(json_is_true(json_object_get(v, "ok")), "%s",
                  json_string_value(json_object_get(v, "reason")));
    ck_assert_int_eq(json_integer_value(json_object_get(v, "from")), (json_int_t)first);
    json_decref(v);
    char *text = export_all(&e);
    struct store_audit_verdict ov = offline(text, e.pub);
    ck_assert_msg(ov.ok, "%s", ov.reason);
    ck_assert_uint_eq(ov.from, first);
    /* an export that starts anywhere else has nothing to anchor it */
    const char *second = strchr(text, '\n') + 1;
    ov = offline(second, e.pub);
    ck_assert(!ov.ok);
    ck_assert_ptr_nonnull(strstr(ov.reason, "no checkpoint to anchor them"));
    free(text);
    activity(&e, 50, 2);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    start(&e);
    json_t *a = health_audit(&e);
    ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
                  json_string_value(json_object_get(a, "reason")));
    json_decref(a);
    activity(&e, 60, 1);
    musterd_cleanup(&e.m);
}
END_TEST

static int configmap_seq(struct kube_testapi *t)
{
    json_t *cm = kube_testapi_object(t, "configmaps", "default/muster-audit-witness");
    const char *line =
        json_string_value(json_object_get(json_object_get(cm, "data"), "checkpoint"));
    json_t *doc = line ? json_loads(line, 0, NULL) : NULL;
    int seq = (int)json_integer_value(json_object_get(doc, "seq"));
    json_decref(doc);
    json_decref(cm);
    return seq;
}

/* Mirror mode: the checkpoints also go to a ConfigMap in the API server, so a deleted tail
 * is caught even when the witness file is gone too. */
START_TEST(test_audit_sig_configmap_witness_catches_deleted_tail)
{
    struct kube_testapi api;
    struct env e;
    struct err err = ERR_INIT;

    kube_testapi_start(&api, 0, NULL);
    env_init(&e);
    const char *args[] = {"--config",     e.config,  "--audit-key", e.key, "--kubeconfig",
                          api.kubeconfig, "--token", "s3cret",      NULL};
    e.token = 1;
    ck_assert_int_eq(musterd_start(&e.m, e.m.root, args), 0);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(post(&e, "/api/v1/cycles", NULL, NULL), 200);
    for (int i = 0; i < 300 && configmap_seq(&api) < 6; i++)
        usleep(10000);
    ck_assert_int_ge(configmap_seq(&api), 6);
    json_t *a = health_audit(&e);
    ck_assert_str_eq(json_string_value(json_object_get(a, "witnessConfigMap")),
                     "default/muster-audit-witness");
    json_decref(a);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    uint64_t signed_seq = (uint64_t)configmap_seq(&api);

    /* the attacker cuts the log back to record 3, consistently */
    struct store *st = open_store(&e);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    uint64_t head = 0;
    ck_assert_int_eq(store_audit_last_seq(txn, &head, &err), 0);
    ck_assert_uint_ge(head, signed_seq);
    for (uint64_t s = 4; s <= head; s++)
        ck_assert_int_eq(store__audit_del_raw(txn, s, &err), 0);
    json_t *recs = json_array();
    ck_assert_int_eq(store_audit_scan(txn, 3, 3, collect_raw, recs, &err), 0);
    unsigned char h[40];
    store__be64_put(h, 3);
    store__unhex(json_string_value(json_object_get(json_array_get(recs, 0), "hash")), h + 8, 32);
    ck_assert_int_eq(store__meta_put(txn, STORE__META_HEAD, h, 40, &err), 0);
    json_decref(recs);
    store_util_commit(&txn);
    store_close(st);

    ck_assert_int_eq(musterd_start(&e.m, e.m.root, args), 0);
    a = health_audit(&e);
    ck_assert(json_is_false(json_object_get(a, "ok")));
    json_t *sc = json_object_get(a, "startCheck");
    ck_assert_int_eq(json_integer_value(json_object_get(sc, "firstBad")), 4);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(sc, "reason")), "deleted"));
    json_decref(a);
    ck_assert_int_eq(post(&e, "/api/v1/cycles", NULL, NULL), 503);
    musterd_cleanup(&e.m);
    kube_testapi_stop(&api);
}
END_TEST

/* Retention by configuration: old records go to an archive file and are pruned behind a
 * checkpoint; the archive verifies on its own, the archive followed by the kept log
 * verifies from record 1, and the kept log verifies from its checkpoint (also on start). */
START_TEST(test_audit_sig_retention_archives_and_prunes)
{
    struct env e;
    char dir[400], cfg[800], cmd[1200];

    env_init(&e);
    snprintf(dir, sizeof(dir), "%s/archive", e.m.root);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cfg, sizeof(cfg),
             "audit_checkpoint_records: 4\naudit_checkpoint_interval: 0.2\ncycle_interval: 0\n"
             "audit_keep_records: 6\naudit_archive: %s\n",
             dir);
    ck_assert_int_eq(test_write_file(e.config, cfg), 0);
    start(&e);
    activity(&e, 1, 8);
    json_t *v = NULL;
    for (int i = 0; i < 300; i++) {
        json_decref(v);
        v = get_json(&e, "/api/v1/audit/verify");
        if (json_integer_value(json_object_get(v, "from")) > 1)
            break;
        usleep(10000);
    }
    uint64_t first = (uint64_t)json_integer_value(json_object_get(v, "from"));
    ck_assert_uint_gt(first, 1);
    ck_assert(json_is_true(json_object_get(v, "ok")));
    json_decref(v);
    /* the archives, oldest first (their names sort by sequence) */
    snprintf(cmd, sizeof(cmd), "cat '%s'/audit-*.ndjson > '%s/all.ndjson'", dir, e.m.root);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/all.ndjson", e.m.root);
    char *archived = test_read_file(cmd, NULL);
    struct store_audit_verdict av = offline(archived, e.pub);
    ck_assert_msg(av.ok, "%s", av.reason);
    ck_assert_uint_eq(av.from, 1);
    char *kept = export_all(&e);
    char *whole = malloc(strlen(archived) + strlen(kept) + 1);
    strcpy(whole, archived);
    strcat(whole, kept);
    av = offline(whole, e.pub);
    ck_assert_msg(av.ok, "%s", av.reason);
    ck_assert_uint_eq(av.from, 1);
    free(whole);
    free(archived);
    free(kept);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    start(&e);
    json_t *a = health_audit(&e);
    ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
                  json_string_value(json_object_get(a, "reason")));
    json_decref(a);
    musterd_cleanup(&e.m);
}
END_TEST

/* Bad configuration is refused with the reason, before anything is opened. */
START_TEST(test_audit_sig_bad_key_refused)
{
    struct env e;
    char *err = NULL, pubk[400], inside[400];

    env_init(&e);
    snprintf(pubk, sizeof(pubk), "%s", e.pub);
    const char *a1[] = {"--data-dir", e.m.root, "--audit-key", pubk, NULL};
    snprintf(inside, sizeof(inside), "%s/data/w", e.m.root);
    ck_assert_int_ne(musterd_run(a1, &err), 0);
    ck_assert_msg(strstr(err, "holds a public key") != NULL, "%s", err);
    free(err);
    const char *a2[] = {"--data-dir", e.m.root, "--audit-key", e.config, NULL};
    ck_assert_int_ne(musterd_run(a2, &err), 0);
    ck_assert_msg(strstr(err, "is not an Ed25519") != NULL, "%s", err);
    free(err);
    const char *a3[] = {"--audit-witness", e.witness, NULL};
    ck_assert_int_ne(musterd_run(a3, &err), 0);
    ck_assert_msg(strstr(err, "needs audit_key") != NULL, "%s", err);
    free(err);
    musterd_cleanup(&e.m);
}
END_TEST

/* The witness file: a torn last line (a crash mid-write) is skipped; a malformed complete
 * line is an error naming the file; a missing file is no witness. */
START_TEST(test_audit_sig_witness_file_lines)
{
    struct env e;
    struct store_audit_key *key = NULL;
    struct store_ckpt cp = {.seq = 7}, got;
    struct err err = ERR_INIT;
    int found = -1;
    char *text;

    env_init(&e);
    ck_assert_int_eq(store_witness_last(e.witness, &got, &found, &err), 0);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(store_audit_key_load(e.key, &key, &err), 0);
    memset(cp.hash, 0xab, sizeof(cp.hash));
    ck_assert_int_eq(store_ckpt_sign(key, &cp, &err), 0);
    ck_assert_int_eq(store_witness_append(e.witness, &cp, &err), 0);
    text = test_read_file(e.witness, NULL);
    char *torn = malloc(strlen(text) + 40);
    sprintf(torn, "%s{\"seq\":9,\"hash\":\"ab", text);
    ck_assert_int_eq(test_write_file(e.witness, torn), 0);
    ck_assert_int_eq(store_witness_last(e.witness, &got, &found, &err), 0);
    ck_assert_int_eq(found, 1);
    ck_assert_uint_eq(got.seq, 7);
    ck_assert_int_eq(store_ckpt_verify(key, &got, &err), 0);
    sprintf(torn, "%s{\"seq\":9}\n", text);
    ck_assert_int_eq(test_write_file(e.witness, torn), 0);
    ck_assert_int_eq(store_witness_last(e.witness, &got, &found, &err), ERR_INVALID);
    ck_assert_msg(strstr(err.msg, e.witness) && strstr(err.msg, "hash"), "%s", err.msg);
    free(torn);
    free(text);
    store_audit_key_free(key);
    musterd_cleanup(&e.m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("audit_sig");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_audit_sig_good_chain_verifies);
    tcase_add_test(tc, test_audit_sig_rewritten_record_is_caught);
    tcase_add_test(tc, test_audit_sig_deleted_tail_is_caught);
    tcase_add_test(tc, test_audit_sig_forged_checkpoint_is_refused);
    tcase_add_test(tc, test_audit_sig_prune_keeps_verification);
    tcase_add_test(tc, test_audit_sig_bad_key_refused);
    tcase_add_test(tc, test_audit_sig_witness_file_lines);
    tcase_add_test(tc, test_audit_sig_retention_archives_and_prunes);
    tcase_add_test(tc, test_audit_sig_configmap_witness_catches_deleted_tail);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
