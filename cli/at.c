/*
 * at.c - the cluster as it was: `muster get nodes|pods|jobs --at T | --seq N` and the
 * query of `muster why ... --at T` (GET /api/v1/state and .../why with ?at= or ?seq=,
 * docs/api.md "Time travel").
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "internal.h"

int cli__at_given(struct cli *cli)
{
    return cli__flag(cli, "at") != NULL || cli__flag(cli, "seq") != NULL;
}

int cli__at_check(struct cli *cli)
{
    const char *at = cli__flag(cli, "at"), *seq = cli__flag(cli, "seq");
    struct err err = ERR_INIT;
    int64_t ms;
    if (at && seq)
        return cli__usage_error(cli, "--at and --seq name the same thing: give one");
    if (at && clock_parse_rfc3339(at, &ms, &err) < 0)
        return cli__usage_error(
            cli, "--at '%s' is not an RFC 3339 time (such as 2026-11-27T14:02:00Z)", at);
    if (seq && (!*seq || strspn(seq, "0123456789") != strlen(seq)))
        return cli__usage_error(cli, "--seq '%s' is not an audit record number", seq);
    return 0;
}

void cli__at_query(struct cli *cli, char **url)
{
    cli__query(url, "at", cli__flag(cli, "at"));
    cli__query(url, "seq", cli__flag(cli, "seq"));
}

static const char *s_of(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* 1 when item (of the state document's `part`) is selected by namespace and name. */
static int wanted(json_t *item, const char *part, const char *ns, const char *name)
{
    if (!strcmp(part, "nodes"))
        return !name || !strcmp(s_of(item, "name"), name);
    if (!strcmp(part, "pods"))
        return (!ns || !strcmp(s_of(item, "namespace"), ns)) &&
               (!name || !strcmp(s_of(item, "name"), name));
    const char *id = s_of(item, "id"), *slash = strchr(id, '/');
    size_t nl = slash ? (size_t)(slash - id) : 0;
    return (!ns || (strlen(ns) == nl && !strncmp(id, ns, nl))) &&
           (!name || !strcmp(slash ? slash + 1 : id, name) || !strcmp(id, name));
}

static void add_row(struct cli_table *t, const char *part, json_t *it)
{
    char a[32], b[32];
    if (!strcmp(part, "nodes")) {
        snprintf(a, sizeof(a), "%zu", json_array_size(json_object_get(it, "pods")));
        const char *row[] = {
            s_of(it, "name"),
            json_is_true(json_object_get(it, "unschedulable")) ? "cordoned" : "Ready", a};
        cli_table_add(t, row);
    } else if (!strcmp(part, "pods")) {
        const char *node = s_of(it, "node"), *nom = s_of(it, "nominatedNodeName");
        const char *row[] = {s_of(it, "namespace"),
                             s_of(it, "name"),
                             s_of(it, "job"),
                             json_is_true(json_object_get(it, "deleting")) ? "Terminating"
                                                                           : s_of(it, "phase"),
                             *node ? node : "<none>",
                             *nom ? nom : "<none>"};
        cli_table_add(t, row);
    } else {
        snprintf(a, sizeof(a), "%lld", (long long)json_integer_value(json_object_get(it, "bound")));
        snprintf(b, sizeof(b), "%lld",
                 (long long)json_integer_value(json_object_get(it, "minMember")));
        const char *row[] = {s_of(it, "id"), s_of(it, "state"), s_of(it, "queue"), b, a};
        cli_table_add(t, row);
    }
}

int cli__get_at(struct cli *cli, const char *res, const char *ns, const char *name)
{
    static const char *const heads[3][6] = {
        {"NAME", "STATUS", "PODS"},
        {"NAMESPACE", "NAME", "JOB", "PHASE", "NODE", "NOMINATED"},
        {"JOB", "STATE", "QUEUE", "MIN", "BOUND"}};
    static const size_t ncols[3] = {3, 6, 5};
    struct err err = ERR_INIT;
    json_t *doc = NULL;
    int which = !strcmp(res, "nodes")  ? 0
                : !strcmp(res, "pods") ? 1
                : !strcmp(res, "jobs") ? 2
                                       : -1;
    if (which < 0)
        return cli__usage_error(cli, "--at and --seq work with nodes, pods and jobs, not '%s'",
                                res);
    char *path = xstrdup("/api/v1/state");
    cli__at_query(cli, &path);
    int rc = cli__call(cli, "GET", path, NULL, 0, NULL, &doc, &err);
    free(path);
    if (rc < 0)
        return cli__fail(cli, &err);
    const char *part = which == 0 ? "nodes" : which == 1 ? "pods" : "jobs";
    json_t *items = json_array(), *it;
    size_t i;
    json_array_foreach(json_object_get(doc, part), i, it) if (wanted(it, part, ns, name))
        json_array_append(items, it);
    json_t *asof = json_object_get(doc, "asOf");
    if (cli->output != CLI_OUT_TABLE) {
        json_t *out = json_pack("{s:O,s:O}", "asOf", asof, "items", items);
        cli__print_doc(cli, out);
        json_decref(out);
    } else {
        printf("# as of audit record %lld (%s)\n",
               (long long)json_integer_value(json_object_get(asof, "seq")), s_of(asof, "ts"));
        struct cli_table *t = cli_table_new(ncols[which], heads[which]);
        json_array_foreach(items, i, it) add_row(t, part, it);
        cli_table_print(t, stdout);
        cli_table_free(t);
    }
    json_decref(items);
    json_decref(doc);
    return name && !json_array_size(items) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
