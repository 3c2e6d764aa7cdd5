/*
 * apply.c - `muster apply -f FILE|-` and `muster cycle`.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"

/* Reads a whole file ("-" is stdin) into a new buffer. */
static int read_all(const char *path, char **out, size_t *len, struct err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    *out = NULL;
    if (!f)
        return err_set(err, ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    for (;;) {
        XGROW(buf, n + 65536 + 1, cap);
        size_t got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got < 65536)
            break;
    }
    if (ferror(f)) {
        rc = err_set(err, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        free(buf);
        goto out;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
out:
    if (f != stdin)
        fclose(f);
    return rc;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* By extension, else by the first non-space byte ('{' or '[' is JSON). */
static const char *content_type(const char *path, const char *buf, size_t len)
{
    if (ends_with(path, ".json"))
        return "application/json";
    if (ends_with(path, ".ndjson") || ends_with(path, ".jsonl"))
        return "application/x-ndjson";
    if (ends_with(path, ".yaml") || ends_with(path, ".yml"))
        return "application/yaml";
    for (size_t i = 0; i < len; i++) {
        if (isspace((unsigned char)buf[i]))
            continue;
        return buf[i] == '{' || buf[i] == '[' ? "application/json" : "application/yaml";
    }
    return "application/yaml";
}

/* "Pod" + "default/w-0" -> "pod/default/w-0 created". */
static void print_result(json_t *r)
{
    const char *kind = json_string_value(json_object_get(r, "kind"));
    const char *name = json_string_value(json_object_get(r, "name"));
    const char *action = json_string_value(json_object_get(r, "action"));
    char *k = xstrdup(kind ? kind : "object");
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    printf("%s/%s %s\n", k, name ? name : "?", action ? action : "applied");
    free(k);
}

/* "/api/v1/manifests?fieldValidation=Warn" for --validate warn (kubectl's flag); the server's
 * default (Strict unless musterd is configured otherwise) when the flag is absent. */
static int apply_path(struct cli *cli, char *path, size_t n)
{
    const char *v = cli__flag(cli, "validate");
    enum model_fields mode;
    snprintf(path, n, "/api/v1/manifests");
    if (!v)
        return 0;
    if (model_fields_parse(v, &mode, NULL) < 0)
        return cli__usage_error("flag '--validate' must be strict, warn or ignore, not '%s'", v);
    snprintf(path, n, "/api/v1/manifests?fieldValidation=%s", model_fields_name(mode));
    return 0;
}

int cli__cmd_apply(struct cli *cli)
{
    struct err err = ERR_INIT;
    const char *path = cli__flag(cli, "filename");
    char *buf = NULL, url[64];
    size_t len = 0, i;
    json_t *res = NULL, *w;
    int rc = CLI_EXIT_OK;
    if (!path)
        return cli__usage_error("apply needs -f FILE (or -f - for stdin)");
    if (cli->npos > 0)
        return cli__usage_error("unexpected argument '%s'", cli->pos[0]);
    if ((rc = apply_path(cli, url, sizeof(url))) != 0)
        return rc;
    if (read_all(path, &buf, &len, &err) < 0)
        return cli__fail(cli, &err);
    if (cli__call(cli, "POST", url, buf, len, content_type(path, buf, len), &res, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    json_array_foreach(json_object_get(res, "warnings"), i, w)
        fprintf(stderr, "Warning: %s\n", json_string_value(json_object_get(w, "message")));
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, res);
        goto out;
    }
    json_t *items = cli__items(res);
    json_t *r;
    json_array_foreach(items, i, r) print_result(r);
out:
    json_decref(res);
    free(buf);
    return rc;
}

int cli__cmd_cycle(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *sum = NULL;
    if (cli->npos > 0)
        return cli__usage_error("unexpected argument '%s'", cli->pos[0]);
    if (cli__call(cli, "POST", "/api/v1/cycles", NULL, 0, NULL, &sum, &err) < 0)
        return cli__fail(cli, &err);
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, sum);
        json_decref(sum);
        return CLI_EXIT_OK;
    }
    json_int_t cycle = json_integer_value(json_object_get(sum, "cycle"));
    printf("cycle %lld: placed %lld pods (%lld jobs), %lld discarded, %lld unschedulable",
           (long long)cycle, (long long)json_integer_value(json_object_get(sum, "placed")),
           (long long)json_integer_value(json_object_get(sum, "jobsPlaced")),
           (long long)json_integer_value(json_object_get(sum, "discarded")),
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
