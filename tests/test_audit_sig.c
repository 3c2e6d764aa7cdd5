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
#include "audit_support.h"
#include "check_run.h"
#include "cli_support.h"
#include "err.h"
#include "http_client.h"
#include "kube_support.h"
#include "store.h"
#include "store_util.h"

/* A good chain: it verifies on start, over the API with signatures and offline. */
START_TEST(test_audit_sig_good_chain_verifies)
{
    struct audit_env e;

    audit_env_init(&e);
    audit_env_run_and_stop(&e, 6);
    audit_env_start(&e);
    json_t *h = audit_env_get(&e, "/api/v1/health");
    ck_assert_str_eq(json_string_value(json_object_get(h, "status")), "ok");
    ck_assert(json_is_true(json_object_get(json_object_get(h, "audit"), "ok")));
    json_decref(h);
    json_t *v = audit_env_get(&e, "/api/v1/audit/verify");
    ck_assert(json_is_true(json_object_get(v, "ok")));
    ck_assert(json_is_true(json_object_get(v, "signaturesChecked")));
    ck_assert_int_ge(json_integer_value(json_object_get(v, "checkpoints")), 3);
    json_decref(v);
    audit_env_activity(&e, 100, 1); /* writable */
    char *text = audit_env_export(&e);
    struct store_audit_verdict ov = audit_offline(text, e.pub);
    ck_assert_msg(ov.ok, "%s", ov.reason);
    ck_assert_uint_eq(ov.from, 1);
    ck_assert_uint_ge(ov.checkpoints, 3);
    /* the CLI, audit_offline, over a file */
    char path[400];
    snprintf(path, sizeof(path), "%s/export.ndjson", e.m.root);
    test_write_file(path, text);
    struct cli_result cr;
    cli_run(NULL, NULL, (const char *const[]){"audit", "verify", "--key", e.pub, "-f", path, NULL},
            &cr);
    ck_assert_msg(cr.status == 0, "%s%s", cr.out, cr.err);
    ck_assert_ptr_nonnull(strstr(cr.out, "audit export ok: records 1.."));
    cli_result_release(&cr);
    cli_run(NULL, NULL,
            (const char *const[]){"audit", "verify", "--key", e.pub, "-f", path, "--witness",
                                  e.witness, NULL},
            &cr);
    ck_assert_msg(cr.status == 0, "%s%s", cr.out, cr.err);
    cli_result_release(&cr);
    free(text);
    musterd_cleanup(&e.m);
}
END_TEST

/* The attack of the issue: record 3 rewritten, every later hash and the head recomputed.
 * The plain chain still verifies; the signed checkpoints do not, on start and offline. */
START_TEST(test_audit_sig_rewritten_record_is_caught)
{
    struct audit_env e;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;

    audit_env_init(&e);
    audit_env_run_and_stop(&e, 6);
    uint64_t signed_seq = audit_env_witness_seq(&e);
    struct store *st = audit_env_open_store(&e);
    audit_rewrite_recompute(st, 3);
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_verify(txn, 0, 0, &v, &err), 0);
    ck_assert_msg(v.ok, "the unsigned chain is fooled, as the issue says: %s", v.reason);
    store_txn_abort(&txn);
    store_close(st);

    audit_env_start(&e);
    json_t *a = audit_env_health(&e);
    ck_assert(json_is_false(json_object_get(a, "ok")));
    json_t *sc = json_object_get(a, "startCheck");
    ck_assert_int_eq(json_integer_value(json_object_get(sc, "firstBad")), (json_int_t)signed_seq);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(sc, "reason")), "rewritten"));
    json_decref(a);
    char *log = test_read_file(e.m.log_file, NULL);
    ck_assert_ptr_nonnull(strstr(log, "audit chain broken at record"));
    free(log);
    /* read-only: reads work, changes and cycles answer 503 with the reason */
    json_decref(audit_env_get(&e, "/api/v1/nodes"));
    char *reply = NULL;
    ck_assert_int_eq(audit_env_post(&e, "/api/v1/manifests",
                                    "apiVersion: v1\nkind: Node\nmetadata: {name: late}\n", &reply),
                     503);
    ck_assert_ptr_nonnull(strstr(reply, "read-only: audit chain broken at record"));
    free(reply);
    ck_assert_int_eq(audit_env_post(&e, "/api/v1/cycles", NULL, NULL), 503);

    /* offline: the first checkpoint after record 3 no longer matches */
    char *text = audit_env_export(&e);
    v = audit_offline(text, e.pub);
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
    struct audit_env e;
    struct err err = ERR_INIT;
    struct store_audit_verdict v;

    audit_env_init(&e);
    audit_env_run_and_stop(&e, 6);
    uint64_t signed_seq = audit_env_witness_seq(&e), cut = signed_seq - 2;
    struct store *st = audit_env_open_store(&e);
    audit_truncate(st, cut - 1);
    MDB_txn *txn = NULL;
    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_verify(txn, 0, 0, &v, &err), 0);
    ck_assert_msg(v.ok, "a truncated chain is self-consistent: %s", v.reason);
    store_txn_abort(&txn);
    store_close(st);

    audit_env_start(&e);
    json_t *a = audit_env_health(&e);
    json_t *sc = json_object_get(a, "startCheck");
    ck_assert(json_is_false(json_object_get(a, "ok")));
    ck_assert_int_eq(json_integer_value(json_object_get(sc, "firstBad")), (json_int_t)cut);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(sc, "reason")), "deleted"));
    json_decref(a);
    ck_assert_int_eq(audit_env_post(&e, "/api/v1/cycles", NULL, NULL), 503);
    /* offline, the export alone verifies; held to the witness, it is cut */
    char *text = audit_env_export(&e), path[400];
    snprintf(path, sizeof(path), "%s/export.ndjson", e.m.root);
    test_write_file(path, text);
    free(text);
    struct cli_result cr;
    cli_run(NULL, NULL, (const char *const[]){"audit", "verify", "--key", e.pub, "-f", path, NULL},
            &cr);
    ck_assert_msg(cr.status == 0, "%s%s", cr.out, cr.err);
    cli_result_release(&cr);
    cli_run(NULL, NULL,
            (const char *const[]){"audit", "verify", "--key", e.pub, "-f", path, "--witness",
                                  e.witness, NULL},
            &cr);
    ck_assert_int_eq(cr.status, 1);
    ck_assert_msg(strstr(cr.out, "BROKEN") && strstr(cr.out, "are missing"), "%s", cr.out);
    cli_result_release(&cr);
    musterd_cleanup(&e.m);
}
END_TEST

/* A checkpoint signed with another key: refused in the witness and offline. */
START_TEST(test_audit_sig_forged_checkpoint_is_refused)
{
    struct audit_env e;
    struct store_audit_key *other = NULL;
    struct store_ckpt cp;
    int found = 0;

    audit_env_init(&e);
    audit_env_run_and_stop(&e, 5);
    /* offline with the wrong public key */
    audit_env_start(&e);
    char *text = audit_env_export(&e);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    struct store_audit_verdict v = audit_offline(text, e.other);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.reason, "not by the audit key"));
    free(text);
    /* a forged witness line: the right seq and hash, signed by another key */
    ck_assert_int_eq(store_witness_last(e.witness, &cp, &found, NULL), 0);
    ck_assert_int_eq(store_audit_key_load(e.other, &other, NULL), 0);
    ck_assert_int_eq(store_ckpt_sign(other, &cp, NULL), 0);
    ck_assert_int_eq(store_witness_append(e.witness, &cp, NULL), 0);
    store_audit_key_free(other);
    audit_env_start(&e);
    json_t *a = audit_env_health(&e);
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

/* Starts musterd signing with key, the earlier keys retired (NULL: none). */
static void start_with_key(struct audit_env *e, const char *key, const char *retired)
{
    const char *args[] = {"--config",
                          e->config,
                          "--audit-key",
                          key,
                          "--audit-witness",
                          e->witness,
                          retired ? "--audit-key-retired" : NULL,
                          retired,
                          NULL};
    ck_assert_int_eq(musterd_start(&e->m, e->m.root, args), 0);
}

/* The key id the witness's newest checkpoint names. */
static void witness_key(struct audit_env *e, char id[17])
{
    struct store_ckpt cp;
    int found = 0;

    ck_assert_int_eq(store_witness_last(e->witness, &cp, &found, NULL), 0);
    ck_assert_int_eq(found, 1);
    memcpy(id, cp.key, 17);
}

static void key_id(const char *path, char id[17])
{
    struct store_audit_key *k = NULL;

    ck_assert_int_eq(store_audit_key_load(path, &k, NULL), 0);
    memcpy(id, store_audit_key_id(k), 17);
    store_audit_key_free(k);
}

/* Rotation: the old key retired, musterd starts on the old checkpoints, signs with the new
 * key at once, and the whole export verifies offline with both; not with the new key alone;
 * and a checkpoint signed with the retired key after the rotation is refused. */
START_TEST(test_audit_sig_key_rotation)
{
    struct audit_env e;
    char old_id[17], new_id[17], got[17];

    audit_env_init(&e);
    key_id(e.key, old_id);
    key_id(e.other, new_id);
    audit_env_run_and_stop(&e, 5);
    witness_key(&e, got);
    ck_assert_str_eq(got, old_id);

    /* the new key alone: the witness's checkpoint is not its own */
    start_with_key(&e, e.other, NULL);
    json_t *a = audit_env_health(&e);
    ck_assert(json_is_false(json_object_get(a, "ok")));
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(a, "reason")), "not by the audit key"));
    json_decref(a);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    /* that refused start signed nothing: the witness still ends with the old key */
    witness_key(&e, got);
    ck_assert_str_eq(got, old_id);

    start_with_key(&e, e.other, e.pub);
    a = audit_env_health(&e);
    ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
                  json_string_value(json_object_get(a, "reason")));
    ck_assert_str_eq(json_string_value(json_object_get(a, "key")), new_id);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(a, "retiredKeys"), 0)),
                     old_id);
    json_decref(a);
    /* the rotation is signed at once, with nothing new written */
    for (int i = 0; i < 3000; i++) {
        witness_key(&e, got);
        if (!strcmp(got, new_id))
            break;
        usleep(10000);
    }
    ck_assert_str_eq(got, new_id);
    audit_env_activity(&e, 50, 3);
    char *text = audit_env_export(&e);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    struct store_audit_verdict v = audit_offline_rotated(text, e.other, e.pub);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.from, 1);
    v = audit_offline(text, e.other);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.reason, "not by the audit key"));
    free(text);

    /* the leaked old key signs a checkpoint after the rotation */
    struct store *st = audit_env_open_store(&e);
    struct store_audit_key *old = NULL;
    struct store_ckpt cp;
    struct err err = ERR_INIT;
    ck_assert_int_eq(store_audit_key_load(e.key, &old, NULL), 0);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_audit_checkpoint(txn, old, &cp, &err), 0);
    ck_assert_int_eq(store_txn_commit(&txn, &err), 0);
    store_audit_key_free(old);
    store_close(st);
    start_with_key(&e, e.other, e.pub);
    a = audit_env_health(&e);
    ck_assert(json_is_false(json_object_get(a, "ok")));
    ck_assert_msg(strstr(json_string_value(json_object_get(a, "reason")), "retired key"), "%s",
                  json_string_value(json_object_get(a, "reason")));
    json_decref(a);
    text = audit_env_export(&e);
    v = audit_offline_rotated(text, e.other, e.pub);
    ck_assert(!v.ok);
    ck_assert_ptr_nonnull(strstr(v.reason, "retired key"));
    free(text);
    /* the CLI takes the retired keys too */
    char path[400];
    snprintf(path, sizeof(path), "%s/export.ndjson", e.m.root);
    text = audit_env_export(&e);
    test_write_file(path, text);
    free(text);
    struct cli_result cr;
    cli_run(NULL, NULL,
            (const char *const[]){"audit", "verify", "--key", e.other, "--retired-keys", e.pub,
                                  "-f", path, NULL},
            &cr);
    ck_assert_int_ne(cr.status, 0);
    ck_assert_msg(strstr(cr.out, "retired key"), "%s%s", cr.out, cr.err);
    cli_result_release(&cr);
    musterd_cleanup(&e.m);
}
END_TEST

/* Rewrites record seq in place (a field added, its hash kept), through raw LMDB. */
static void edit_record_raw(const char *dir, uint64_t seq)
{
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    unsigned char kb[8];
    MDB_val k = {8, kb}, v;

    for (int i = 0; i < 8; i++)
        kb[i] = (unsigned char)(seq >> (56 - 8 * i));
    ck_assert_int_eq(mdb_env_create(&env), 0);
    ck_assert_int_eq(mdb_env_set_maxdbs(env, 64), 0);
    ck_assert_int_eq(mdb_env_open(env, dir, 0, 0644), 0);
    ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
    ck_assert_int_eq(mdb_dbi_open(txn, "audit", 0, &dbi), 0);
    ck_assert_int_eq(mdb_get(txn, dbi, &k, &v), 0);
    json_t *rec = json_loadb(v.mv_data, v.mv_size, 0, NULL);
    ck_assert_ptr_nonnull(rec);
    json_object_set_new(rec, "forged", json_true());
    char *canon = json_dumps(rec, STORE__CANON);
    v.mv_data = canon;
    v.mv_size = strlen(canon);
    ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
    ck_assert_int_eq(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    free(canon);
    json_decref(rec);
}

/* A record edited under a running musterd: the next checkpoint verifies first, finds it,
 * signs nothing and turns musterd read-only. */
START_TEST(test_audit_sig_break_while_running)
{
    struct audit_env e;

    audit_env_init(&e);
    ck_assert_int_eq(test_write_file(e.config, "audit_checkpoint_records: 12\n"
                                               "audit_checkpoint_interval: 3600\n"
                                               "cycle_interval: 0\n"),
                     0);
    audit_env_start(&e);
    audit_env_activity(&e, 1, 2);
    ck_assert_int_eq(audit_env_witness_lines(&e), 0);
    /* the edit, with LMDB itself beside the running musterd (muster's own store refuses a
     * second opener; an attacker does not ask it) */
    edit_record_raw(e.m.data_dir, 2);
    /* more records until a checkpoint is due */
    json_t *a = NULL;
    for (int i = 10; i < 200; i++) {
        char yaml[160];
        snprintf(yaml, sizeof(yaml), "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n", i);
        long status = audit_env_post(&e, "/api/v1/manifests", yaml, NULL);
        ck_assert_msg(status == 201 || status == 503, "%ld", status);
        json_decref(a);
        a = audit_env_health(&e);
        if (json_is_false(json_object_get(a, "ok")))
            break;
        usleep(20000);
    }
    ck_assert(json_is_false(json_object_get(a, "ok")));
    ck_assert_msg(strstr(json_string_value(json_object_get(a, "reason")), "record 2"), "%s",
                  json_string_value(json_object_get(a, "reason")));
    json_decref(a);
    ck_assert_int_eq(audit_env_witness_lines(&e), 0); /* nothing signed over it */
    char *reply = NULL;
    ck_assert_int_eq(audit_env_post(&e, "/api/v1/manifests",
                                    "apiVersion: v1\nkind: Node\nmetadata: {name: late}\n", &reply),
                     503);
    ck_assert_ptr_nonnull(strstr(reply, "read-only"));
    free(reply);
    /* the liveness probe stays up and says why (the UI's read-only badge reads it) */
    json_t *hz = audit_env_get(&e, "/healthz");
    ck_assert_str_eq(json_string_value(json_object_get(hz, "status")), "ok");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(hz, "readOnly")), "record 2"));
    json_decref(hz);
    musterd_cleanup(&e.m);
}
END_TEST

/* Prune behind a checkpoint: the log starts at it, and verifies from it, on the API,
 * offline and on start. */
START_TEST(test_audit_sig_prune_keeps_verification)
{
    struct audit_env e;
    char *reply = NULL, path[64];

    audit_env_init(&e);
    audit_env_start(&e);
    audit_env_activity(&e, 1, 8);
    for (int i = 0; i < 3000 && audit_env_witness_lines(&e) < 3; i++)
        usleep(10000);
    json_t *before = audit_env_get(&e, "/api/v1/audit/verify");
    uint64_t head = (uint64_t)json_integer_value(json_object_get(before, "to"));
    json_decref(before);
    /* nothing to prune before the first checkpoint record */
    ck_assert_int_eq(audit_env_post(&e, "/api/v1/audit/prune?before=1", NULL, &reply), 404);
    ck_assert_ptr_nonnull(strstr(reply, "no checkpoint record at or before record 1"));
    free(reply);
    snprintf(path, sizeof(path), "/api/v1/audit/prune?before=%" PRIu64, head - 1);
    ck_assert_int_eq(audit_env_post(&e, path, NULL, &reply), 200);
    json_t *pr = json_loads(reply, 0, NULL);
    free(reply);
    uint64_t first = (uint64_t)json_integer_value(json_object_get(pr, "firstSeq"));
    ck_assert_uint_gt(first, 1);
    ck_assert_int_eq(json_integer_value(json_object_get(pr, "deleted")), (json_int_t)first - 1);
    json_decref(pr);
    json_t *v = audit_env_get(&e, "/api/v1/audit/verify");
    ck_assert_msg(json_is_true(json_object_get(v, "ok")), "%s",
                  json_string_value(json_object_get(v, "reason")));
    ck_assert_int_eq(json_integer_value(json_object_get(v, "from")), (json_int_t)first);
    json_decref(v);
    char *text = audit_env_export(&e);
    struct store_audit_verdict ov = audit_offline(text, e.pub);
    ck_assert_msg(ov.ok, "%s", ov.reason);
    ck_assert_uint_eq(ov.from, first);
    /* an export that starts anywhere else has nothing to anchor it */
    const char *second = strchr(text, '\n') + 1;
    ov = audit_offline(second, e.pub);
    ck_assert(!ov.ok);
    ck_assert_ptr_nonnull(strstr(ov.reason, "no checkpoint to anchor them"));
    free(text);
    audit_env_activity(&e, 50, 2);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    audit_env_start(&e);
    json_t *a = audit_env_health(&e);
    ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
                  json_string_value(json_object_get(a, "reason")));
    json_decref(a);
    audit_env_activity(&e, 60, 1);
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
    struct audit_env e;

    kube_testapi_start(&api, 0, NULL);
    audit_env_init(&e);
    const char *args[] = {"--config",     e.config,  "--audit-key", e.key, "--kubeconfig",
                          api.kubeconfig, "--token", "s3cret",      NULL};
    e.token = 1;
    ck_assert_int_eq(musterd_start(&e.m, e.m.root, args), 0);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(audit_env_post(&e, "/api/v1/cycles", NULL, NULL), 200);
    for (int i = 0; i < 3000 && configmap_seq(&api) < 6; i++)
        usleep(10000);
    ck_assert_int_ge(configmap_seq(&api), 6);
    json_t *a = audit_env_health(&e);
    ck_assert_str_eq(json_string_value(json_object_get(a, "witnessConfigMap")),
                     "default/muster-audit-witness");
    json_decref(a);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    uint64_t signed_seq = (uint64_t)configmap_seq(&api);
    ck_assert_uint_gt(signed_seq, 3); /* the cut below goes behind the signed record */

    /* the attacker cuts the log back to record 3, consistently */
    struct store *st = audit_env_open_store(&e);
    audit_truncate(st, 3);
    store_close(st);

    ck_assert_int_eq(musterd_start(&e.m, e.m.root, args), 0);
    a = audit_env_health(&e);
    ck_assert(json_is_false(json_object_get(a, "ok")));
    json_t *sc = json_object_get(a, "startCheck");
    ck_assert_int_eq(json_integer_value(json_object_get(sc, "firstBad")), 4);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(sc, "reason")), "deleted"));
    json_decref(a);
    ck_assert_int_eq(audit_env_post(&e, "/api/v1/cycles", NULL, NULL), 503);
    musterd_cleanup(&e.m);
    kube_testapi_stop(&api);
}
END_TEST

/* Retention by configuration: old records go to an archive file and are pruned behind a
 * checkpoint; the archive verifies on its own, the archive followed by the kept log
 * verifies from record 1, and the kept log verifies from its checkpoint (also on start).
 */
START_TEST(test_audit_sig_retention_archives_and_prunes)
{
    struct audit_env e;
    char dir[400], cfg[800], cmd[1200];

    audit_env_init(&e);
    snprintf(dir, sizeof(dir), "%s/archive", e.m.root);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cfg, sizeof(cfg),
             "audit_checkpoint_records: 4\naudit_checkpoint_interval: 0.2\ncycle_interval: 0\n"
             "audit_keep_records: 6\naudit_archive: %s\n",
             dir);
    ck_assert_int_eq(test_write_file(e.config, cfg), 0);
    audit_env_start(&e);
    audit_env_activity(&e, 1, 8);
    json_t *v = NULL;
    for (int i = 0; i < 3000; i++) {
        json_decref(v);
        v = audit_env_get(&e, "/api/v1/audit/verify");
        if (json_integer_value(json_object_get(v, "from")) > 1)
            break;
        usleep(10000);
    }
    uint64_t first = (uint64_t)json_integer_value(json_object_get(v, "from"));
    ck_assert_uint_gt(first, 1);
    ck_assert(json_is_true(json_object_get(v, "ok")));
    json_decref(v);
    /* the archives, oldest first (their names sort by sequence), then the kept log: read
     * while retention may still run, so both are read again when a pass archived and
     * pruned between the two reads (a real gap stays) */
    struct store_audit_verdict av = {0};
    for (int tries = 0; tries < 50; tries++) {
        snprintf(cmd, sizeof(cmd), "cat '%s'/audit-*.ndjson > '%s/all.ndjson'", dir, e.m.root);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(cmd, sizeof(cmd), "%s/all.ndjson", e.m.root);
        char *archived = test_read_file(cmd, NULL);
        av = audit_offline(archived, e.pub);
        ck_assert_msg(av.ok, "%s", av.reason);
        ck_assert_uint_eq(av.from, 1);
        char *kept = audit_env_export(&e);
        char *whole = malloc(strlen(archived) + strlen(kept) + 1);
        strcpy(whole, archived);
        strcat(whole, kept);
        av = audit_offline(whole, e.pub);
        free(whole);
        free(archived);
        free(kept);
        if (av.ok)
            break;
        usleep(100000);
    }
    ck_assert_msg(av.ok, "%s", av.reason);
    ck_assert_uint_eq(av.from, 1);
    ck_assert_int_eq(musterd_stop(&e.m), 0);
    audit_env_start(&e);
    json_t *a = audit_env_health(&e);
    ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
                  json_string_value(json_object_get(a, "reason")));
    json_decref(a);
    musterd_cleanup(&e.m);
}
END_TEST

/* Bad configuration is refused with the reason, before anything is opened. */
START_TEST(test_audit_sig_bad_key_refused)
{
    struct audit_env e;
    char *err = NULL, pubk[400], inside[400];

    audit_env_init(&e);
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
    const char *a3[] = {"--data-dir", e.m.root, "--audit-witness", e.witness, NULL};
    ck_assert_int_ne(musterd_run(a3, &err), 0);
    ck_assert_msg(strstr(err, "needs audit_key") != NULL, "%s", err);
    free(err);
    /* a retired key that is the audit key itself, or not a key */
    const char *a4[] = {"--data-dir",          e.m.root, "--audit-key", e.key,
                        "--audit-key-retired", pubk,     NULL};
    ck_assert_int_ne(musterd_run(a4, &err), 0);
    ck_assert_msg(strstr(err, "audit_key_retired") && strstr(err, "the audit key itself"), "%s",
                  err);
    free(err);
    const char *a5[] = {"--data-dir",          e.m.root, "--audit-key", e.key,
                        "--audit-key-retired", e.config, NULL};
    ck_assert_int_ne(musterd_run(a5, &err), 0);
    ck_assert_msg(strstr(err, "retired audit key") && strstr(err, "is not an Ed25519"), "%s", err);
    free(err);
    musterd_cleanup(&e.m);
}
END_TEST

/* The witness file: a torn last line (a crash mid-write) is skipped; a malformed complete
 * line is an error naming the file; a missing file is no witness. */
START_TEST(test_audit_sig_witness_file_lines)
{
    struct audit_env e;
    struct store_audit_key *key = NULL;
    struct store_ckpt cp = {.seq = 7}, got;
    struct err err = ERR_INIT;
    int found = -1;
    char *text;

    audit_env_init(&e);
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
    tcase_add_test(tc, test_audit_sig_key_rotation);
    tcase_add_test(tc, test_audit_sig_break_while_running);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
