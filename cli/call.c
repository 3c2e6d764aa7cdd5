/*
 * call.c - requests to musterd, error bodies, output helpers.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "client.h"
#include "clock.h"
#include "internal.h"
#include "model.h"

static int open_client(struct cli *cli, struct err *err)
{
    struct client_tls tls = {.ca = cli->ca, .cert = cli->cert, .key = cli->key};
    int rc;

    if (cli->client)
        return 0;
    if ((rc = client_open(cli->server, cli->token, &cli->client, err)) < 0)
        return rc;
    return client_set_tls(cli->client, &tls, err);
}

/* Keeps the server's message and its list of validation errors. */
static int take_error(struct cli *cli, struct client_response *resp, struct err *err)
{
    int rc = client_error(resp, err);
    json_t *doc = json_loadb(resp->body ? resp->body : "", resp->len, 0, NULL);
    json_t *errors = json_object_get(doc, "errors");
    if (json_is_array(errors) && json_array_size(errors) > 0) {
        json_decref(cli->errors);
        cli->errors = json_incref(errors);
    }
    json_decref(doc);
    return rc;
}

int cli__call(struct cli *cli, const char *method, const char *path, const char *body, size_t len,
              const char *ctype, json_t **out, struct err *err)
{
    struct client_response resp = CLIENT_RESPONSE_INIT;
    int rc;
    if (out)
        *out = NULL;
    if ((rc = open_client(cli, err)) < 0)
        return rc;
    if ((rc = client_request(cli->client, method, path, body, len, ctype, &resp, err)) < 0)
        goto out;
    if (resp.status < 200 || resp.status >= 300) {
        rc = take_error(cli, &resp, err);
        goto out;
    }
    if (out && resp.len > 0) {
        json_error_t je;
        *out = model_json_load(resp.body, resp.len, &je); /* json_loadb's value, faster */
        if (!*out)
            rc = err_set(err, ERR_INVALID, "musterd sent invalid JSON for '%s': %s", path, je.text);
    }
out:
    client_response_release(&resp);
    return rc;
}

int cli__stream(struct cli *cli, const char *path, FILE *out, struct err *err)
{
    struct client_response resp = CLIENT_RESPONSE_INIT;
    int rc;
    if ((rc = open_client(cli, err)) < 0)
        return rc;
    if ((rc = client_stream(cli->client, "GET", path, out, &resp, err)) < 0)
        goto out;
    if (resp.status < 200 || resp.status >= 300)
        rc = take_error(cli, &resp, err);
out:
    client_response_release(&resp);
    return rc;
}

void cli__query(char **url, const char *key, const char *value)
{
    if (!value)
        return;
    char *v = client_escape(value);
    char *n = xasprintf("%s%c%s=%s", *url, strchr(*url, '?') ? '&' : '?', key, v);
    free(v);
    free(*url);
    *url = n;
}

int cli__get_for_table(struct cli *cli, const char *path, json_t **doc, int *rc)
{
    struct err err = ERR_INIT;

    *rc = CLI_EXIT_OK;
    if (cli__call(cli, "GET", path, NULL, 0, NULL, doc, &err) < 0) {
        *rc = cli__fail(cli, &err);
        return 0;
    }
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, *doc);
        return 0;
    }
    return 1;
}

void cli__print_doc(struct cli *cli, json_t *doc)
{
    if (cli->output == CLI_OUT_YAML) {
        char *y = model_yaml_dump(doc);
        fputs(y ? y : "", stdout);
        if (y && *y && y[strlen(y) - 1] != '\n')
            fputc('\n', stdout);
        free(y);
        return;
    }
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_ENCODE_ANY);
    printf("%s\n", s ? s : "null");
    free(s);
}

json_t *cli__items(json_t *doc)
{
    if (json_is_array(doc))
        return doc;
    json_t *items = json_object_get(doc, "items");
    if (json_is_array(items))
        return items;
    const char *k;
    json_t *v;
    json_object_foreach(doc, k, v)
    {
        if (json_is_array(v))
            return v;
    }
    return NULL;
}

void cli__age(struct cli *cli, json_t *obj, char *buf, size_t n)
{
    json_t *ts = json_object_get(json_object_get(obj, "metadata"), "creationTimestamp");
    if (!ts)
        ts = json_object_get(obj, "creationTimestamp");
    int64_t ms;
    if (!json_is_string(ts) || clock_parse_rfc3339(json_string_value(ts), &ms, NULL) < 0) {
        snprintf(buf, n, "<unknown>");
        return;
    }
    cli_format_age(cli->now_ms - ms < 0 ? 0 : cli->now_ms - ms, buf, n);
}

void cli__int(char *buf, size_t n, json_t *v)
{
    snprintf(buf, n, "%lld", (long long)json_integer_value(v));
}

int cli__split_id(const char *id, const char *default_ns, char **ns, char **name, struct err *err)
{
    *ns = *name = NULL;
    const char *slash = strchr(id, '/');
    if (slash) {
        if (slash == id || !slash[1] || strchr(slash + 1, '/'))
            return err_set(err, ERR_INVALID, "invalid name '%s' (want NAMESPACE/NAME)", id);
        *ns = xstrndup(id, (size_t)(slash - id));
        *name = xstrdup(slash + 1);
        return 0;
    }
    if (!*id)
        return err_set(err, ERR_INVALID, "empty name");
    *ns = xstrdup(default_ns ? default_ns : "default");
    *name = xstrdup(id);
    return 0;
}
