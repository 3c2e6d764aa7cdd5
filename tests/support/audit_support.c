/* audit_support.c - see audit_support.h. */
#include <check.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../store/internal.h" /* store__audit_put_raw, store__meta_put: the attacker's tools */
#include "audit_sig.h"
#include "audit_support.h"
#include "err.h"
#include "store_util.h"

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
void audit_env_init(struct audit_env *e)
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

void audit_env_start(struct audit_env *e)
{
    const char *args[] = {"--config",        e->config,  "--audit-key", e->key,
                          "--audit-witness", e->witness, NULL};
    ck_assert_int_eq(musterd_start(&e->m, e->m.root, args), 0);
}

json_t *audit_env_get(struct audit_env *e, const char *path)
{
    struct http_resp r;

    http_request("GET", e->m.base, path, NULL, e->token ? auth_hdr : NULL, &r);
    ck_assert_msg(r.status == 200, "GET %s: %ld %s", path, r.status, r.body);
    json_t *doc = json_incref(r.json);
    http_resp_free(&r);
    return doc;
}

long audit_env_post(struct audit_env *e, const char *path, const char *body, char **reply)
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
void audit_env_activity(struct audit_env *e, int first, int n)
{
    char yaml[256], path[32];

    for (int i = first; i < first + n; i++) {
        snprintf(yaml, sizeof(yaml),
                 "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                 "status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n",
                 i);
        ck_assert_int_eq(audit_env_post(e, "/api/v1/manifests", yaml, NULL), 201);
        snprintf(path, sizeof(path), "/api/v1/cycles");
        ck_assert_int_eq(audit_env_post(e, path, NULL, NULL), 200);
    }
}

int audit_env_witness_lines(struct audit_env *e)
{
    char *text = test_read_file(e->witness, NULL);
    int n = 0;

    for (char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* Runs musterd, makes records, waits for checkpoints, stops (a last checkpoint). */
void audit_env_run_and_stop(struct audit_env *e, int nodes)
{
    audit_env_start(e);
    audit_env_activity(e, 1, nodes);
    for (int i = 0; i < 3000 && audit_env_witness_lines(e) < 2; i++)
        usleep(10000);
    ck_assert_int_ge(audit_env_witness_lines(e), 2);
    ck_assert_int_eq(musterd_stop(&e->m), 0);
}

struct store *audit_env_open_store(struct audit_env *e)
{
    return store_util_open(e->m.data_dir, 0, STORE_SYNC_FULL);
}

int audit_collect_raw(void *ctx, uint64_t seq, const char *json, size_t len)
{
    json_t *arr = ctx;
    (void)seq;
    json_array_append_new(arr, json_loadb(json, len, 0, NULL));
    return 0;
}

/* The attacker: rewrites record k, recomputes every later hash and the head, and makes
 * every later checkpoint record name the new hashes (it cannot sign them). */
void audit_rewrite_recompute(struct store *st, uint64_t k)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *recs = json_array(), *prev_rec = NULL;
    unsigned char prev[32], h[40];
    char hex[65];
    size_t i;
    json_t *rec;

    ck_assert_int_eq(store_audit_scan(txn, k - 1, 0, audit_collect_raw, recs, &err), 0);
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

void audit_edit_text(struct store *st, uint64_t k)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *recs = json_array();

    ck_assert_int_eq(store_audit_scan(txn, k, k, audit_collect_raw, recs, &err), 0);
    json_t *rec = json_array_get(recs, 0);
    ck_assert_ptr_nonnull(rec);
    json_object_set_new(rec, "forged", json_true());
    char *canon = json_dumps(rec, STORE__CANON);
    ck_assert_int_eq(store__audit_put_raw(txn, k, canon, strlen(canon), &err), 0);
    free(canon);
    store_util_commit(&txn);
    json_decref(recs);
}

struct store_audit_verdict audit_offline(const char *export_text, const char *key_path)
{
    return audit_offline_rotated(export_text, key_path, NULL);
}

struct store_audit_verdict audit_offline_rotated(const char *export_text, const char *key_path,
                                                 const char *retired)
{
    struct store_audit_key *key = NULL;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;

    ck_assert_msg(store_audit_key_load(key_path, &key, &err) == 0, "%s", err.msg);
    ck_assert_msg(store_audit_key_retire_list(key, retired, &err) == 0, "%s", err.msg);
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

char *audit_env_export(struct audit_env *e)
{
    struct http_resp r;

    http_request("GET", e->m.base, "/api/v1/audit", NULL, e->token ? auth_hdr : NULL, &r);
    ck_assert_int_eq(r.status, 200);
    char *text = strdup(r.body);
    http_resp_free(&r);
    return text;
}

json_t *audit_env_health(struct audit_env *e)
{
    json_t *h = audit_env_get(e, "/api/v1/health");
    json_t *a = json_incref(json_object_get(h, "audit"));
    json_decref(h);
    return a;
}

uint64_t audit_env_witness_seq(struct audit_env *e)
{
    struct store_ckpt cp;
    int found = 0;

    ck_assert_int_eq(store_witness_last(e->witness, &cp, &found, NULL), 0);
    ck_assert_int_eq(found, 1);
    return cp.seq;
}

void audit_truncate(struct store *st, uint64_t last)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    uint64_t head = 0;
    unsigned char h[40];

    ck_assert_int_eq(store_audit_last_seq(txn, &head, &err), 0);
    for (uint64_t s = last + 1; s <= head; s++)
        ck_assert_int_eq(store__audit_del_raw(txn, s, &err), 0);
    json_t *recs = json_array();
    ck_assert_int_eq(store_audit_scan(txn, last, last, audit_collect_raw, recs, &err), 0);
    store__be64_put(h, last);
    ck_assert_int_eq(
        store__unhex(json_string_value(json_object_get(json_array_get(recs, 0), "hash")), h + 8,
                     32),
        0);
    ck_assert_int_eq(store__meta_put(txn, STORE__META_HEAD, h, 40, &err), 0);
    json_decref(recs);
    store_util_commit(&txn);
}
