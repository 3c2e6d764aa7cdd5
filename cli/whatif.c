/*
 * whatif.c - `muster whatif [-f FILE|DIR|- ...] [--cordon N,...] [--delete KIND/NAME,...]`:
 * POST /api/v1/whatif, printed as what the next cycle would do: each job of the manifests
 * (placed where, or why not), the preemptions it would make, and the other jobs it would
 * displace or place; -o json|yaml prints the whole answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* "n1,n2" of a job's members' nodes (or nominated nodes, with nominated set), at most 4
 * named. */
static void member_nodes(json_t *job, const char *field, char *buf, size_t n)
{
    size_t i, o = 0, named = 0, more = 0;
    json_t *m;
    buf[0] = '\0';
    json_array_foreach(json_object_get(job, "members"), i, m)
    {
        const char *node = str(m, field);
        if (!node)
            continue;
        if (named == 4) {
            more++;
            continue;
        }
        int w = snprintf(buf + o, n - o, "%s%s", named ? "," : "", node);
        o += w > 0 && (size_t)w < n - o ? (size_t)w : 0;
        named++;
    }
    if (more)
        snprintf(buf + o, n - o, ",+%zu", more);
}

static void print_jobs(json_t *jobs)
{
    static const char *const headers[] = {"JOB", "STATE", "WOULD PLACE", "NODES", "WHY"};
    struct cli_table *t = cli_table_new(5, headers);
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        char nodes[256], nominated[256], where[300];
        member_nodes(j, "node", nodes, sizeof(nodes));
        member_nodes(j, "nominatedNode", nominated, sizeof(nominated));
        if (nodes[0])
            snprintf(where, sizeof(where), "%s", nodes);
        else if (nominated[0])
            snprintf(where, sizeof(where), "nominated %s", nominated);
        else
            snprintf(where, sizeof(where), "-");
        json_t *primary = json_object_get(json_object_get(j, "why"), "primary");
        const char *why = str(primary, "message");
        int yes = json_is_true(json_object_get(j, "wouldPlace"));
        const char *cells[] = {str(j, "id"), str(j, "state") ? str(j, "state") : "-",
                               yes ? "yes" : "no", where, yes || !why ? "" : why};
        cli_table_add(t, cells);
    }
    cli_table_print(t, stdout);
    cli_table_free(t);
}

/* "batch/etl (8 pods on 8 nodes), lab/x (1 pod on n3)": an entry's victims by job. */
static void print_victims(json_t *victims)
{
    json_t *jobs = json_object(), *v, *nodes;
    const char *job;
    size_t i;
    json_array_foreach(victims, i, v)
    {
        job = str(v, "job") ? str(v, "job") : str(v, "pod");
        json_t *j = json_object_get(jobs, job);
        if (!j)
            json_object_set_new(jobs, job, j = json_pack("{s:i,s:{}}", "pods", 0, "nodes"));
        json_object_set_new(j, "pods",
                            json_integer(json_integer_value(json_object_get(j, "pods")) + 1));
        if (str(v, "node"))
            json_object_set_new(json_object_get(j, "nodes"), str(v, "node"), json_true());
    }
    int first = 1;
    json_t *j;
    json_object_foreach(jobs, job, j)
    {
        long long pods = json_integer_value(json_object_get(j, "pods"));
        nodes = json_object_get(j, "nodes");
        printf("%s %s (%lld pod%s", first ? "" : ",", job, pods, pods == 1 ? "" : "s");
        if (json_object_size(nodes) == 1)
            printf(" on %s", json_object_iter_key(json_object_iter(nodes)));
        else if (json_object_size(nodes) > 1)
            printf(" on %zu nodes", json_object_size(nodes));
        printf(")");
        first = 0;
    }
    json_decref(jobs);
}

/* "; takes the room of prod/x's victims batch/etl-a (ledger 1)" per roomFrom item. */
static void print_room_from(json_t *from)
{
    size_t i, k;
    json_t *r, *v;
    json_array_foreach(from, i, r)
    {
        printf("%s room %s's preemption frees (", i ? "," : "; takes the", str(r, "preemptor"));
        json_array_foreach(json_object_get(r, "victims"), k, v)
            printf("%s%s", k ? ", " : "", json_string_value(v));
        if (json_is_integer(json_object_get(r, "ledger")))
            printf(", ledger %lld", (long long)json_integer_value(json_object_get(r, "ledger")));
        printf(")");
    }
}

static void print_preemptions(json_t *entries)
{
    size_t i;
    json_t *e;
    if (!json_array_size(entries))
        return;
    printf("\nPreemptions it would make:\n");
    json_array_foreach(entries, i, e)
    {
        printf("  %s preempts", str(e, "preemptor"));
        if (json_array_size(json_object_get(e, "victims")))
            print_victims(json_object_get(e, "victims"));
        else
            printf(" nothing");
        print_room_from(json_object_get(e, "roomFrom"));
        printf("\n");
    }
}

/* Returns how many it printed. */
static int print_others(json_t *others)
{
    static const char *const lists[] = {"displaced", "placed", "changed"};
    int any = 0;
    for (size_t l = 0; l < 3; l++) {
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(others, lists[l]), i, o)
        {
            if (!any++)
                printf("\nOther jobs it would change:\n");
            printf("  %-10s %s: %s -> %s\n", lists[l], str(o, "id"), str(o, "before"),
                   str(o, "after"));
        }
    }
    return any;
}

/* The request path with --cordon and --delete. New. */
static char *whatif_path(struct cli *cli)
{
    char *path = xstrdup("/api/v1/whatif");
    cli__query(&path, "cordon", cli__flag(cli, "cordon"));
    cli__query(&path, "delete", cli__flag(cli, "delete"));
    return path;
}

int cli__cmd_whatif(struct cli *cli)
{
    struct err err = ERR_INIT;
    char **paths = NULL, *body = NULL, *path = NULL;
    size_t npaths = 0, len = 0;
    json_t *docs = NULL, *res = NULL;
    int rc = CLI_EXIT_OK;
    if (cli->npos > 0)
        return cli__usage_error(cli, "unexpected argument '%s'", cli->pos[0]);
    if (!cli__flag(cli, "filename") && !cli__flag(cli, "cordon") && !cli__flag(cli, "delete"))
        return cli__usage_error(cli, "whatif needs -f FILE, --cordon NODES or --delete KIND/NAME");
    if (cli__flag(cli, "filename")) {
        enum model_fields mode = MODEL_FIELDS_IGNORE;
        if (cli__manifest_paths(cli, &paths, &npaths, &err) < 0 ||
            cli__load_manifests(cli, paths, npaths, &mode, &docs, &err) < 0)
            goto fail;
        body = json_dumps(docs, JSON_COMPACT);
        len = strlen(body);
    }
    path = whatif_path(cli);
    if (cli__call(cli, "POST", path, body ? body : "", len, "application/json", &res, &err) < 0)
        goto fail;
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, res);
        goto out;
    }
    json_t *based = json_object_get(res, "basedOn");
    printf("What the next cycle would do (from cycle %lld, audit seq %lld; nothing written):\n\n",
           (long long)json_integer_value(json_object_get(based, "cycle")),
           (long long)json_integer_value(json_object_get(based, "auditSeq")));
    if (json_array_size(json_object_get(res, "jobs")))
        print_jobs(json_object_get(res, "jobs"));
    print_preemptions(json_object_get(res, "preemptions"));
    if (!print_others(json_object_get(res, "others")) &&
        !json_array_size(json_object_get(res, "jobs")))
        printf("No job would change.\n");
    goto out;
fail:
    rc = cli__fail(cli, &err);
out:
    json_decref(docs);
    json_decref(res);
    free(body);
    free(path);
    cli__paths_free(paths, npaths);
    return rc;
}
