/*
 * describe_node.c - `muster describe node NAME`: a node for people, as kubectl describes
 * one: health (the Ready condition), cordon, taints, labels, allocatable / requested / free
 * per resource, the pods bound to it with their jobs, and the pods nominated to it.
 * GET /api/v1/nodes/{name} gives the node and its use, GET /api/v1/jobs which job each pod
 * is of and which pods wait for the node; -o json|yaml prints {"node", "nominated"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

static const char *s_of(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* "ns/pod" -> job id of every member of jobs (a new object). */
static json_t *pod_jobs(json_t *jobs)
{
    json_t *m = json_object(), *j, *mem;
    size_t i, k;
    json_array_foreach(jobs, i, j)
    {
        json_array_foreach(json_object_get(j, "members"), k, mem)
        {
            char *key = xasprintf("%s/%s", s_of(j, "namespace"), s_of(mem, "name"));
            json_object_set_new(m, key, json_string(s_of(j, "id")));
            free(key);
        }
    }
    return m;
}

/* The pending pods nominated to node: [{"pod", "job"}] (new). */
static json_t *nominated_to(json_t *jobs, const char *node)
{
    json_t *out = json_array(), *j, *mem;
    size_t i, k;
    json_array_foreach(jobs, i, j)
    {
        json_array_foreach(json_object_get(j, "members"), k, mem)
        {
            const char *nom = s_of(mem, "nominatedNode");
            if (!nom || strcmp(nom, node) != 0 || s_of(mem, "node"))
                continue;
            char *pod = xasprintf("%s/%s", s_of(j, "namespace"), s_of(mem, "name"));
            json_array_append_new(out, json_pack("{s:s, s:s}", "pod", pod, "job", s_of(j, "id")));
            free(pod);
        }
    }
    return out;
}

static void print_ready(json_t *node)
{
    json_t *c;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c)
    {
        const char *type = s_of(c, "type"), *st = s_of(c, "status");
        if (!type || strcmp(type, "Ready") != 0)
            continue;
        if (st && strcmp(st, "True") == 0)
            printf("Ready:         True\n");
        else
            printf("Ready:         %s (NotReady%s%s)\n", st ? st : "?",
                   s_of(c, "reason") ? ": " : "", s_of(c, "reason") ? s_of(c, "reason") : "");
        return;
    }
    printf("Ready:         <no condition> (counted as ready)\n");
}

static void print_taints(json_t *spec)
{
    json_t *taints = json_object_get(spec, "taints"), *t;
    size_t i;
    if (!json_array_size(taints)) {
        printf("Taints:        <none>\n");
        return;
    }
    json_array_foreach(taints, i, t)
    {
        const char *v = s_of(t, "value");
        printf("%s%s%s%s:%s\n",
               i ? "               " : "Taints:        ", s_of(t, "key") ? s_of(t, "key") : "?",
               v && *v ? "=" : "", v && *v ? v : "", s_of(t, "effect") ? s_of(t, "effect") : "?");
    }
}

static void print_labels(json_t *meta)
{
    json_t *labels = json_object_get(meta, "labels"), *v;
    const char *k;
    int first = 1;
    json_object_foreach(labels, k, v)
    {
        printf("%s%s=%s\n", first ? "Labels:        " : "               ", k,
               json_string_value(v) ? json_string_value(v) : "");
        first = 0;
    }
    if (first)
        printf("Labels:        <none>\n");
}

static void print_use(json_t *usage)
{
    static const char *const cols[] = {"resource", "allocatable", "requested", "free"};
    struct cli_table *t = cli_table_new(4, cols);
    json_t *alloc = json_object_get(usage, "allocatable"), *v;
    const char *res;
    json_object_foreach(alloc, res, v)
    {
        const char *req =
            json_string_value(json_object_get(json_object_get(usage, "requested"), res));
        const char *fr = json_string_value(json_object_get(json_object_get(usage, "free"), res));
        const char *row[] = {res, json_string_value(v), req ? req : "0", fr ? fr : "0"};
        cli_table_add(t, row);
    }
    printf("Resources:\n");
    cli_table_print(t, stdout);
    cli_table_free(t);
}

static void print_node(json_t *node, json_t *jobs, json_t *nominated)
{
    json_t *meta = json_object_get(node, "metadata"), *spec = json_object_get(node, "spec");
    printf("Name:          %s\n", s_of(meta, "name") ? s_of(meta, "name") : "?");
    print_ready(node);
    printf("Unschedulable: %s\n",
           json_is_true(json_object_get(spec, "unschedulable")) ? "true (cordoned)" : "false");
    print_taints(spec);
    print_labels(meta);
    print_use(json_object_get(node, "usage"));

    json_t *pj = pod_jobs(jobs), *pods = json_object_get(node, "pods"), *p;
    size_t i;
    printf("Pods:          %zu\n", json_array_size(pods));
    if (json_array_size(pods)) {
        static const char *const cols[] = {"pod", "job"};
        struct cli_table *t = cli_table_new(2, cols);
        json_array_foreach(pods, i, p)
        {
            const char *row[] = {json_string_value(p),
                                 json_string_value(json_object_get(pj, json_string_value(p)))};
            cli_table_add(t, row);
        }
        cli_table_print(t, stdout);
        cli_table_free(t);
    }
    json_decref(pj);
    printf("Nominated:     %zu\n", json_array_size(nominated));
    if (json_array_size(nominated)) {
        static const char *const cols[] = {"pod", "job"};
        struct cli_table *t = cli_table_new(2, cols);
        json_array_foreach(nominated, i, p)
        {
            const char *row[] = {s_of(p, "pod"), s_of(p, "job")};
            cli_table_add(t, row);
        }
        cli_table_print(t, stdout);
        cli_table_free(t);
    }
}

int cli__cmd_describe_node(struct cli *cli, const char *name)
{
    struct err err = ERR_INIT;
    json_t *node = NULL, *jobs = NULL, *nominated = NULL;
    int rc = CLI_EXIT_OK;
    if (!*name || strpbrk(name, "/?#%"))
        return cli__usage_error(cli, "describe node: '%s' is not a node name", name);
    char *path = xasprintf("/api/v1/nodes/%s", name);
    if (cli__call(cli, "GET", path, NULL, 0, NULL, &node, &err) < 0 ||
        cli__call(cli, "GET", "/api/v1/jobs", NULL, 0, NULL, &jobs, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    nominated = nominated_to(cli__items(jobs), name);
    if (cli->output != CLI_OUT_TABLE) {
        json_t *doc = json_pack("{s:O, s:O}", "node", node, "nominated", nominated);
        cli__print_doc(cli, doc);
        json_decref(doc);
        goto out;
    }
    print_node(node, cli__items(jobs), nominated);
out:
    json_decref(node);
    json_decref(jobs);
    json_decref(nominated);
    free(path);
    return rc;
}
