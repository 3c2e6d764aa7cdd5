/*
 * apply.c - `muster apply -f FILE|DIR|- [-f ...]` and `muster cycle`.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"

/* "Pod" + "default/w-0" -> "pod/default/w-0 created"; with -o name "pod/w-0", as kubectl. */
static void print_result(struct cli *cli, json_t *r)
{
    const char *kind = json_string_value(json_object_get(r, "kind"));
    const char *name = json_string_value(json_object_get(r, "name"));
    const char *action = json_string_value(json_object_get(r, "action"));
    char *k = xstrdup(kind ? kind : "object");
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (!name)
        name = "?";
    if (cli->names)
        printf("%s/%s\n", k, strchr(name, '/') ? strchr(name, '/') + 1 : name);
    else
        printf("%s/%s %s\n", k, name, action ? action : "applied");
    free(k);
}

/* "/api/v1/manifests?fieldValidation=Warn" for --validate warn (kubectl's flag); the server's
 * default (Strict unless musterd is configured otherwise) when the flag is absent. *mode is
 * what the CLI checks files against before sending several: the flag's, else Ignore (what
 * any mode refuses). */
static int apply_path(struct cli *cli, char *path, size_t n, enum model_fields *mode)
{
    const char *v = cli__flag(cli, "validate");
    snprintf(path, n, "/api/v1/manifests");
    *mode = MODEL_FIELDS_IGNORE;
    if (!v)
        return 0;
    if (model_fields_parse(v, mode, NULL) < 0)
        return cli__usage_error(cli, "flag '--validate' must be strict, warn or ignore, not '%s'",
                                v);
    snprintf(path, n, "/api/v1/manifests?fieldValidation=%s", model_fields_name(*mode));
    return 0;
}

/* The request body: one file's bytes as they are (so the server's errors name its lines),
 * or every file parsed here first and sent as one JSON array, applied atomically. */
static int apply_body(struct cli *cli, char **paths, size_t n, enum model_fields mode, char **body,
                      size_t *len, const char **ctype, struct err *err)
{
    json_t *docs = NULL;
    if (n == 1) {
        if (cli__read_all(paths[0], body, len, err) < 0)
            return err->code;
        *ctype = cli__content_type(paths[0], *body, *len);
        return 0;
    }
    if (cli__load_manifests(cli, paths, n, &mode, &docs, err) < 0)
        return err->code;
    *body = json_dumps(docs, JSON_COMPACT);
    *len = strlen(*body);
    *ctype = "application/json";
    json_decref(docs);
    return 0;
}

int cli__cmd_apply(struct cli *cli)
{
    struct err err = ERR_INIT;
    char **paths = NULL, *buf = NULL, url[64];
    size_t npaths = 0, len = 0, i;
    const char *ctype = NULL;
    json_t *res = NULL, *w, *r;
    enum model_fields mode;
    int rc = CLI_EXIT_OK;
    if (!cli__flag(cli, "filename"))
        return cli__usage_error(cli, "apply needs -f FILE (or -f - for stdin)");
    if (cli->npos > 0)
        return cli__usage_error(cli, "unexpected argument '%s'", cli->pos[0]);
    if ((rc = apply_path(cli, url, sizeof(url), &mode)) != 0)
        return rc;
    if (cli__manifest_paths(cli, &paths, &npaths, &err) < 0)
        goto fail;
    if (npaths == 0) {
        err_set(&err, ERR_INVALID, "no *.yaml, *.yml or *.json file in '%s'",
                cli__flag(cli, "filename"));
        goto fail;
    }
    if (apply_body(cli, paths, npaths, mode, &buf, &len, &ctype, &err) < 0 ||
        cli__call(cli, "POST", url, buf, len, ctype, &res, &err) < 0)
        goto fail;
    json_array_foreach(json_object_get(res, "warnings"), i, w)
        fprintf(stderr, "Warning: %s\n", json_string_value(json_object_get(w, "message")));
    if (cli->output != CLI_OUT_TABLE)
        cli__print_doc(cli, res);
    else
        json_array_foreach(cli__items(res), i, r) print_result(cli, r);
    goto out;
fail:
    rc = cli__fail(cli, &err);
out:
    json_decref(res);
    free(buf);
    cli__paths_free(paths, npaths);
    return rc;
}

int cli__cmd_cycle(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *sum = NULL;
    if (cli->npos > 0)
        return cli__usage_error(cli, "unexpected argument '%s'", cli->pos[0]);
    if (cli__call(cli, "POST", "/api/v1/cycles", NULL, 0, NULL, &sum, &err) < 0)
        return cli__fail(cli, &err);
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, sum);
        json_decref(sum);
        return CLI_EXIT_OK;
    }
    json_int_t cycle = json_integer_value(json_object_get(sum, "cycle"));
    json_int_t placed = json_integer_value(json_object_get(sum, "placed"));
    json_int_t jobs = json_integer_value(json_object_get(sum, "jobsPlaced"));
    printf("cycle %lld: placed %lld pod%s (%lld job%s), %lld discarded, %lld unschedulable",
           (long long)cycle, (long long)placed, placed == 1 ? "" : "s", (long long)jobs,
           jobs == 1 ? "" : "s", (long long)json_integer_value(json_object_get(sum, "discarded")),
           (long long)json_integer_value(json_object_get(sum, "unschedulable")));
    json_t *d = json_object_get(sum, "durationMs");
    if (json_is_number(d))
        printf(" in %.1f ms", json_number_value(d));
    json_t *seq = json_object_get(sum, "auditSeq");
    if (json_is_integer(seq))
        printf(" (audit seq %lld)", (long long)json_integer_value(seq));
    printf("\n");
    json_decref(sum);
    return CLI_EXIT_OK;
}
