/*
 * audit.c - `muster audit export` (NDJSON streamed to stdout, never held in memory)
 * and `muster audit verify` (exit 1 when the chain is broken).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

static int check_u64(struct cli *cli, const char *flag, struct err *err)
{
    uint64_t x;
    return cli__flag_u64(cli, flag, &x, err);
}

static int audit_export(struct cli *cli)
{
    struct err err = ERR_INIT;
    static const char *const flags[] = {"since", "until", "from", "to", "job", "kind", "limit"};
    char *path = xstrdup("/api/v1/audit");
    int rc = CLI_EXIT_OK;
    if (check_u64(cli, "from", &err) < 0 || check_u64(cli, "to", &err) < 0 ||
        check_u64(cli, "limit", &err) < 0) {
        free(path);
        return cli__usage_error("%s", err.msg);
    }
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        cli__query(&path, flags[i], cli__flag(cli, flags[i]));
    if (cli__stream(cli, path, stdout, &err) < 0)
        rc = cli__fail(cli, &err);
    free(path);
    return rc;
}

static int audit_verify(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *v = NULL;
    char *path = xstrdup("/api/v1/audit/verify");
    int rc = CLI_EXIT_OK;
    if (cli__flag(cli, "since") || cli__flag(cli, "until") || cli__flag(cli, "job") ||
        cli__flag(cli, "kind") || cli__flag(cli, "limit")) {
        free(path);
        return cli__usage_error("audit verify accepts only --from and --to");
    }
    if (check_u64(cli, "from", &err) < 0 || check_u64(cli, "to", &err) < 0) {
        free(path);
        return cli__usage_error("%s", err.msg);
    }
    cli__query(&path, "from", cli__flag(cli, "from"));
    cli__query(&path, "to", cli__flag(cli, "to"));
    if (cli__call(cli, "GET", path, NULL, 0, NULL, &v, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    int ok = json_is_true(json_object_get(v, "ok"));
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, v);
    } else if (ok) {
        printf("audit chain ok: records %lld..%lld, %lld checked\n",
               (long long)json_integer_value(json_object_get(v, "from")),
               (long long)json_integer_value(json_object_get(v, "to")),
               (long long)json_integer_value(json_object_get(v, "checked")));
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

int cli__cmd_audit(struct cli *cli)
{
    if (cli->npos != 1)
        return cli__usage_error("audit needs 'export' or 'verify'");
    if (!strcmp(cli->pos[0], "export"))
        return audit_export(cli);
    if (!strcmp(cli->pos[0], "verify"))
        return audit_verify(cli);
    return cli__usage_error("unknown audit command '%s' (export or verify)", cli->pos[0]);
}
