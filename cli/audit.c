/*
 * audit.c - `muster audit export` (NDJSON streamed to stdout, never held in memory),
 * `muster audit verify` (exit 1 when the chain is broken; with --key, offline over an
 * export) and `muster audit prune --before SEQ`.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "audit_sig.h"
#include "internal.h"
#include "ship.h"

static int check_u64(struct cli *cli, const char *flag, struct err *err)
{
    uint64_t x;
    return cli__flag_u64(cli, flag, &x, err);
}

/* The log's last sequence (GET /api/v1/audit?tail=1; 0 when it is empty) into *out. */
static int last_seq(struct cli *cli, uint64_t *out, struct err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = cli__stream(cli, "/api/v1/audit?tail=1", f, err);
    fclose(f);
    *out = 0;
    json_t *rec = rc == 0 && len ? json_loadb(buf, len, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    if (rec)
        *out = (uint64_t)json_integer_value(json_object_get(rec, "seq"));
    json_decref(rec);
    free(buf);
    return rc;
}

/* --follow: after the export up to `to` (the log's end when it began), the records after
 * it, polled once a second with the same job and kind filters, each written as it comes.
 * Runs until interrupted or an error. */
static int follow(struct cli *cli, uint64_t to, const char *kind, struct err *err)
{
    for (;;) {
        fflush(stdout);
        sleep(1);
        uint64_t now;
        if (last_seq(cli, &now, err) < 0)
            return -1;
        if (now <= to)
            continue;
        char *path = xasprintf("/api/v1/audit?from=%" PRIu64 "&to=%" PRIu64, to + 1, now);
        cli__query(&path, "job", cli__flag(cli, "job"));
        cli__query(&path, "kind", kind);
        int rc = cli__stream(cli, path, stdout, err);
        free(path);
        if (rc < 0)
            return rc;
        to = now;
    }
}

/* GET *path with the --from and --to given (verify, replay): *v new. */
static int get_range(struct cli *cli, char **path, json_t **v, struct err *err)
{
    cli__query(path, "from", cli__flag(cli, "from"));
    cli__query(path, "to", cli__flag(cli, "to"));
    return cli__call(cli, "GET", *path, NULL, 0, NULL, v, err);
}

static int audit_export(struct cli *cli)
{
    struct err err = ERR_INIT;
    static const char *const flags[] = {"since", "until", "from", "to", "job", "kind", "limit"};
    char *path = NULL;
    int rc = CLI_EXIT_OK;
    if (cli__flag(cli, "key") || cli__flag(cli, "retired-keys") || cli__flag(cli, "witness") ||
        cli__flag(cli, "filename") || cli__flag(cli, "before") || cli__flag(cli, "bundle") ||
        cli__flag(cli, "from-db") || cli__flag(cli, "cluster") || cli__flag(cli, "chain") ||
        cli__flag(cli, "quick"))
        return cli__usage_error(cli, "audit export does not take --key, --retired-keys, "
                                     "--witness, -f, --before, --bundle, --from-db, --cluster, "
                                     "--chain or --quick");
    path = xstrdup("/api/v1/audit");
    if (check_u64(cli, "from", &err) < 0 || check_u64(cli, "to", &err) < 0 ||
        check_u64(cli, "limit", &err) < 0) {
        free(path);
        return cli__usage_error(cli, "%s", err.msg);
    }
    int following = cli__flag(cli, "follow") != NULL;
    /* audit kinds are lower case: "Placed" is placed */
    char kind[64] = "";
    if (cli__flag(cli, "kind"))
        for (size_t i = 0; cli__flag(cli, "kind")[i] && i + 1 < sizeof(kind); i++)
            kind[i] = (char)tolower((unsigned char)cli__flag(cli, "kind")[i]);
    uint64_t end = 0;
    if (following && (cli__flag(cli, "to") || cli__flag(cli, "until") || cli__flag(cli, "limit"))) {
        free(path);
        return cli__usage_error(cli,
                                "audit export --follow has no end: no --to, --until or --limit");
    }
    if (following && last_seq(cli, &end, &err) < 0) {
        free(path);
        return cli__fail(cli, &err);
    }
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        cli__query(&path, flags[i],
                   strcmp(flags[i], "kind") ? cli__flag(cli, flags[i]) : (*kind ? kind : NULL));
    if (following) {
        char to[32];
        snprintf(to, sizeof(to), "%" PRIu64, end);
        cli__query(&path, "to", end ? to : NULL);
    }
    if ((following && !end ? 0 : cli__stream(cli, path, stdout, &err)) < 0 ||
        (following && follow(cli, end, *kind ? kind : NULL, &err) < 0))
        rc = cli__fail(cli, &err);
    free(path);
    return rc;
}

static void print_offline(struct cli *cli, const struct store_audit_verdict *v, uint64_t line,
                          const char *key_id)
{
    if (cli->output != CLI_OUT_TABLE) {
        json_t *doc = json_pack("{s:b, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:s}", "ok", v->ok,
                                "from", (json_int_t)v->from, "to", (json_int_t)v->to, "checked",
                                (json_int_t)v->checked, "firstBad", (json_int_t)v->first_bad,
                                "reason", v->reason, "checkpoints", (json_int_t)v->checkpoints,
                                "signedTo", (json_int_t)v->signed_to, "key", key_id);
        if (!v->ok && line)
            json_object_set_new(doc, "line", json_integer((json_int_t)line));
        cli__print_doc(cli, doc);
        json_decref(doc);
    } else if (!v->ok) {
        if (line)
            printf("audit export BROKEN at record %" PRIu64 " (line %" PRIu64 "): %s\n",
                   v->first_bad, line, v->reason);
        else
            printf("audit export BROKEN at record %" PRIu64 ": %s\n", v->first_bad, v->reason);
    } else {
        printf("audit export ok: records %" PRIu64 "..%" PRIu64 ", %" PRIu64 " checked, %" PRIu64
               " signed checkpoints verified with key %s\n",
               v->from, v->to, v->checked, v->checkpoints, key_id);
        if (!v->signed_to)
            printf("no signed checkpoint: the records are only consistent with each other\n");
        else if (v->signed_to + 2 == v->to) /* record signed_to + 1 is that checkpoint */
            printf("the last checkpoint signs record %" PRIu64 "; record %" PRIu64
                   " after it is covered by the hash chain only\n",
                   v->signed_to, v->to);
        else if (v->signed_to + 2 < v->to)
            printf("the last checkpoint signs record %" PRIu64 "; records %" PRIu64 "..%" PRIu64
                   " after it are covered by the hash chain only\n",
                   v->signed_to, v->signed_to + 2, v->to);
    }
}

/* --witness FILE: the export must reach the witness's newest checkpoint, signed by key. */
static int witness_or_fail(struct cli *cli, struct store_audit_offline *o,
                           const struct store_audit_key *key, struct err *err)
{
    const char *path = cli__flag(cli, "witness");
    struct store_ckpt cp;
    int found = 0;

    if (!path)
        return 0;
    if (store_witness_last(path, &cp, &found, err) < 0)
        return -1;
    if (!found)
        return err_set(err, ERR_INVALID, "audit witness '%s' holds no checkpoint", path);
    if (store_ckpt_verify(key, &cp, err) < 0)
        return err_prefix(err, "audit witness '%s'", path);
    store_audit_offline_expect(o, &cp);
    return 0;
}

/* muster audit verify --key FILE [-f FILE|-] [--witness FILE]: no server, the export. */
static int audit_verify_offline(struct cli *cli)
{
    const char *path = cli__flag(cli, "filename");
    struct store_audit_key *key = NULL;
    struct store_audit_offline *o;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;
    FILE *in = stdin;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0, bad_line = 0;

    if (cli__flag(cli, "from") || cli__flag(cli, "to"))
        return cli__usage_error(cli, "audit verify --key checks a whole export: no --from or --to");
    if (store_audit_key_load(cli__flag(cli, "key"), &key, &err) < 0 ||
        store_audit_key_retire_list(key, cli__flag(cli, "retired-keys"), &err) < 0) {
        store_audit_key_free(key);
        return cli__fail(cli, &err);
    }
    if (path && strcmp(path, "-") && !(in = fopen(path, "rb"))) {
        err_set(&err, ERR_IO, "cannot open '%s': %s", path, strerror(errno));
        store_audit_key_free(key);
        return cli__fail(cli, &err);
    }
    o = store_audit_offline_new(key);
    if (witness_or_fail(cli, o, key, &err) < 0) {
        store_audit_offline_finish(o, &v);
        if (in != stdin)
            fclose(in);
        store_audit_key_free(key);
        return cli__fail(cli, &err);
    }
    while ((n = getline(&line, &cap, in)) >= 0) {
        lineno++;
        if (n && line[n - 1] == '\n')
            n--;
        if (store_audit_offline_line(o, line, (size_t)n)) {
            bad_line = lineno;
            break;
        }
    }
    store_audit_offline_finish(o, &v);
    print_offline(cli, &v, bad_line, store_audit_key_id(key));
    free(line);
    if (in != stdin)
        fclose(in);
    store_audit_key_free(key);
    return v.ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static int feed_offline(void *ctx, uint64_t seq, const char *json, size_t len)
{
    return store_audit_offline_line(ctx, json, len);
}

/* muster audit verify --from-db URL --cluster C [--chain N] [--key PUB.pem]: the copy
 * shipped to PostgreSQL, checked by the walker that checks an export (audit_verify.c). */
static int audit_verify_db(struct cli *cli)
{
    const char *cluster = cli__flag(cli, "cluster");
    struct store_audit_key *key = NULL;
    struct store_audit_offline *o = NULL;
    struct store_audit_verdict v;
    struct err err = ERR_INIT;
    uint64_t chain = 0;
    int rc;

    if (!cluster)
        return cli__usage_error(cli, "audit verify --from-db needs --cluster NAME");
    if (cli__flag(cli, "from") || cli__flag(cli, "to") || cli__flag(cli, "filename") ||
        cli__flag(cli, "witness"))
        return cli__usage_error(cli, "audit verify --from-db checks the whole copy: no --from, "
                                     "--to, -f or --witness");
    if (cli__flag_u64(cli, "chain", &chain, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    if (cli__flag(cli, "key") &&
        (store_audit_key_load(cli__flag(cli, "key"), &key, &err) < 0 ||
         store_audit_key_retire_list(key, cli__flag(cli, "retired-keys"), &err) < 0)) {
        store_audit_key_free(key);
        return cli__fail(cli, &err);
    }
    o = store_audit_offline_new(key);
    rc = ship_db_audit_each(cli__flag(cli, "from-db"), cluster, chain, feed_offline, o, &chain,
                            &err);
    store_audit_offline_finish(o, &v);
    if (rc < 0) {
        store_audit_key_free(key);
        return cli__fail(cli, &err);
    }
    if (cli->output != CLI_OUT_TABLE) {
        json_t *doc = json_pack(
            "{s:b,s:s,s:I,s:I,s:I,s:I,s:I,s:s,s:I,s:I,s:s?}", "ok", v.ok, "cluster", cluster,
            "chain", (json_int_t)chain, "from", (json_int_t)v.from, "to", (json_int_t)v.to,
            "checked", (json_int_t)v.checked, "firstBad", (json_int_t)v.first_bad, "reason",
            v.reason, "checkpoints", (json_int_t)v.checkpoints, "signedTo", (json_int_t)v.signed_to,
            "key", key ? store_audit_key_id(key) : NULL);
        cli__print_doc(cli, doc);
        json_decref(doc);
    } else if (!v.ok) {
        printf("audit copy of cluster '%s' chain %llu BROKEN at record %llu: %s\n", cluster,
               (unsigned long long)chain, (unsigned long long)v.first_bad, v.reason);
    } else {
        printf("audit copy of cluster '%s' chain %llu ok: records %llu..%llu, %llu checked, "
               "%llu checkpoints %s\n",
               cluster, (unsigned long long)chain, (unsigned long long)v.from,
               (unsigned long long)v.to, (unsigned long long)v.checked,
               (unsigned long long)v.checkpoints,
               key ? "with verified signatures"
                   : "fitting the chain (no --key: signatures not checked)");
    }
    store_audit_key_free(key);
    return v.ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static int audit_prune(struct cli *cli)
{
    struct err err = ERR_INIT;
    char *path = xstrdup("/api/v1/audit/prune");
    json_t *v = NULL;
    uint64_t before = 0;
    int rc = CLI_EXIT_OK;

    if (cli__flag_u64(cli, "before", &before, &err) < 0 || !before) {
        free(path);
        return cli__usage_error(cli, "%s",
                                before || err.msg[0] ? err.msg : "audit prune needs --before SEQ");
    }
    cli__query(&path, "before", cli__flag(cli, "before"));
    if (cli__call(cli, "POST", path, NULL, 0, NULL, &v, &err) < 0) {
        rc = cli__fail(cli, &err);
    } else if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, v);
    } else {
        printf("pruned %lld records: the log now starts at checkpoint record %lld\n",
               (long long)json_integer_value(json_object_get(v, "deleted")),
               (long long)json_integer_value(json_object_get(v, "firstSeq")));
    }
    json_decref(v);
    free(path);
    return rc;
}

static int audit_verify(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *v = NULL;
    char *path = xstrdup("/api/v1/audit/verify");
    int rc = CLI_EXIT_OK;
    if (cli__flag(cli, "bundle")) {
        free(path);
        return cli__bundle_verify(cli);
    }
    if (cli__flag(cli, "since") || cli__flag(cli, "until") || cli__flag(cli, "job") ||
        cli__flag(cli, "kind") || cli__flag(cli, "limit") || cli__flag(cli, "before") ||
        cli__flag(cli, "quick")) {
        free(path);
        return cli__usage_error(cli, "audit verify accepts only --from and --to (or --key and -f)");
    }
    if (cli__flag(cli, "from-db")) {
        free(path);
        return audit_verify_db(cli);
    }
    if (cli__flag(cli, "cluster") || cli__flag(cli, "chain")) {
        free(path);
        return cli__usage_error(cli, "--cluster and --chain go with --from-db");
    }
    if (cli__flag(cli, "key")) {
        free(path);
        return audit_verify_offline(cli);
    }
    if (cli__flag(cli, "filename") || cli__flag(cli, "witness") || cli__flag(cli, "retired-keys")) {
        free(path);
        return cli__usage_error(cli,
                                "audit verify -f FILE, --witness and --retired-keys need --key "
                                "(the public key to check the "
                                "checkpoints with)");
    }
    if (check_u64(cli, "from", &err) < 0 || check_u64(cli, "to", &err) < 0) {
        free(path);
        return cli__usage_error(cli, "%s", err.msg);
    }
    if (get_range(cli, &path, &v, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    int ok = json_is_true(json_object_get(v, "ok"));
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, v);
    } else if (ok) {
        printf("audit chain ok: records %lld..%lld, %lld checked",
               (long long)json_integer_value(json_object_get(v, "from")),
               (long long)json_integer_value(json_object_get(v, "to")),
               (long long)json_integer_value(json_object_get(v, "checked")));
        if (json_is_true(json_object_get(v, "signaturesChecked")))
            printf(", %lld signed checkpoints verified",
                   (long long)json_integer_value(json_object_get(v, "checkpoints")));
        printf("\n");
    } else {
        json_t *bad = json_object_get(v, "firstBad");
        if (!bad)
            bad = json_object_get(v, "first_bad");
        const char *reason = json_string_value(json_object_get(v, "reason"));
        printf("audit chain BROKEN at record %lld: %s\n", (long long)json_integer_value(bad),
               reason ? reason : "verification failed");
    }
    if (!ok)
        rc = CLI_EXIT_FAIL;
out:
    json_decref(v);
    free(path);
    return rc;
}

/* muster audit replay --from SEQ [--to SEQ] [--quick]: the replay check; exit 1 when a cycle's
 * decisions differ from the log. */
/* Where the replay began when not where it was asked to, or that it could not begin where
 * the scheduler's waiting jobs are known. */
static void replay_begin_note(json_t *v)
{
    long long from = (long long)json_integer_value(json_object_get(v, "from"));
    long long begun = (long long)json_integer_value(json_object_get(v, "replayedFrom"));
    if (!json_is_true(json_object_get(v, "exact")))
        printf("not exact: run from record %lld, the jobs that were waiting there parked "
               "anew (a job may be retried a cycle earlier or later than the log says)\n",
               from);
    else if (begun < from)
        printf("run from record %lld (%s), where the scheduler's waiting jobs are known; "
               "compared from record %lld\n",
               begun, begun == 1 ? "the log's first" : "a restart", from);
}

static int audit_replay(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *v = NULL;
    char *path = xstrdup("/api/v1/audit/replay");
    int rc = CLI_EXIT_OK;
    if (!cli__flag(cli, "from") || check_u64(cli, "from", &err) < 0 ||
        check_u64(cli, "to", &err) < 0) {
        free(path);
        return cli__usage_error(cli, "%s", err.msg[0] ? err.msg : "audit replay needs --from SEQ");
    }
    if (cli__flag(cli, "quick"))
        cli__query(&path, "exact", "false");
    if (get_range(cli, &path, &v, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    int ok = json_is_true(json_object_get(v, "ok"));
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, v);
    } else {
        printf("replayed records %lld..%lld: %lld cycles, %lld inputs; ",
               (long long)json_integer_value(json_object_get(v, "from")),
               (long long)json_integer_value(json_object_get(v, "to")),
               (long long)json_integer_value(json_object_get(v, "cycles")),
               (long long)json_integer_value(json_object_get(v, "inputs")));
        if (ok)
            printf("all %lld decisions as the log says\n",
                   (long long)json_integer_value(json_object_get(v, "decisions")));
        else
            printf("%lld cycles decided otherwise than the log says\n",
                   (long long)json_integer_value(json_object_get(v, "differences")));
        replay_begin_note(v);
        size_t i, k;
        json_t *d, *x;
        json_array_foreach(json_object_get(v, "cyclesDiffering"), i, d)
        {
            printf("cycle %lld (record %lld):\n",
                   (long long)json_integer_value(json_object_get(d, "cycle")),
                   (long long)json_integer_value(json_object_get(d, "seq")));
            json_array_foreach(json_object_get(d, "logged"), k, x)
                printf("  logged:   %s\n", json_string_value(x));
            json_array_foreach(json_object_get(d, "replayed"), k, x)
                printf("  replayed: %s\n", json_string_value(x));
        }
    }
    if (!ok)
        rc = CLI_EXIT_FAIL;
out:
    json_decref(v);
    free(path);
    return rc;
}

int cli__cmd_audit(struct cli *cli)
{
    if (cli->npos != 1)
        return cli__usage_error(cli, "audit needs 'export', 'verify', 'prune' or 'replay'");
    if (!strcmp(cli->pos[0], "export"))
        return audit_export(cli);
    if (!strcmp(cli->pos[0], "verify"))
        return audit_verify(cli);
    if (!strcmp(cli->pos[0], "prune"))
        return audit_prune(cli);
    if (!strcmp(cli->pos[0], "replay"))
        return audit_replay(cli);
    return cli__usage_error(cli, "unknown audit command '%s' (export, verify, prune or replay)",
                            cli->pos[0]);
}
