/*
 * queues.c - queues for people: the `muster get queues` table and `muster describe queue
 * NAME` (every number of the queue document, its jobs, and the reclaims by and against it
 * from the preemption ledger). Both read the API's queue documents (docs/api.md); fields a
 * document does not have print as "-" or are skipped, so newer documents still print.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"

#define GPU "nvidia.com/gpu"

static const char *s_of(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* resources.<res>.<what> of a queue, formatted as a quantity ("24", "12", "48Gi"), "-" when
 * the document has no such number and `null_text` when it is null (an unlimited
 * capability). */
static void res_cell(json_t *q, const char *res, const char *what, const char *null_text, char *buf,
                     size_t n)
{
    json_t *r = json_object_get(json_object_get(q, "resources"), res);
    json_t *v = json_object_get(r, what);
    if (r && json_is_null(v))
        snprintf(buf, n, "%s", null_text);
    else if (!json_is_integer(v))
        snprintf(buf, n, "-");
    else
        model_quantity_format(json_integer_value(v), model_resource_is_milli(res), buf, n);
}

/* 1 when some queue of the list has the resource (the cluster or a queue names it). */
static int any_has(json_t *queues, const char *res)
{
    size_t i;
    json_t *q;
    json_array_foreach(queues, i, q)
    {
        if (json_object_get(json_object_get(q, "resources"), res))
            return 1;
    }
    return 0;
}

void cli__print_queues(json_t *queues)
{
    static const char *const base[] = {"name",    "parent", "weight", "share", "pending",
                                       "running", NULL,     NULL,     NULL};
    static const char *const res_all[] = {"cpu", "memory", GPU};
    static const char *const head_all[] = {"cpu", "memory", "gpu"};
    const char *headers[9], *res[3];
    size_t nres = 0;
    memcpy(headers, base, sizeof(headers));
    for (size_t k = 0; k < 3; k++)
        if (any_has(queues, res_all[k])) {
            headers[6 + nres] = head_all[k];
            res[nres++] = res_all[k];
        }
    struct cli_table *t = cli_table_new(6 + nres, headers);
    size_t i;
    json_t *q;
    json_array_foreach(queues, i, q)
    {
        char weight[32], share[32], pending[32], running[32], cells[3][80];
        json_t *jobs = json_object_get(q, "jobs");
        cli__int(weight, sizeof(weight), json_object_get(q, "weight"));
        snprintf(share, sizeof(share), "%.2f", json_number_value(json_object_get(q, "share")));
        cli__int(pending, sizeof(pending), json_object_get(jobs, "pending"));
        cli__int(running, sizeof(running), json_object_get(jobs, "running"));
        const char *row[9] = {s_of(q, "name"), s_of(q, "parent") ? s_of(q, "parent") : "root",
                              weight,          share,
                              pending,         running};
        for (size_t k = 0; k < nres; k++) {
            char a[32], d[32];
            res_cell(q, res[k], "allocated", "-", a, sizeof(a));
            res_cell(q, res[k], "deserved", "-", d, sizeof(d));
            snprintf(cells[k], sizeof(cells[k]), "%s/%s", a, d);
            row[6 + k] = cells[k];
        }
        cli_table_add(t, row);
    }
    if (json_array_size(queues) == 0)
        fprintf(stderr, "No resources found\n");
    else
        cli_table_print(t, stdout);
    cli_table_free(t);
}

/* Every number of the queue per resource, in the order the API lists the resources. */
static void print_resources(json_t *q)
{
    static const char *const cols[] = {"resource",  "allocated",  "deserved", "request",
                                       "guarantee", "capability", "borrowed", "lent"};
    struct cli_table *t = cli_table_new(8, cols);
    const char *res;
    json_t *r;
    json_object_foreach(json_object_get(q, "resources"), res, r)
    {
        char c[7][40];
        for (size_t k = 0; k < 7; k++)
            res_cell(q, res, cols[k + 1], "unlimited", c[k], sizeof(c[k]));
        const char *row[] = {res, c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
        cli_table_add(t, row);
    }
    printf("Resources:\n");
    cli_table_print(t, stdout);
    cli_table_free(t);
}

static void print_jobs(const char *title, json_t *ids)
{
    printf("%s%s\n", title, json_array_size(ids) ? "" : " <none>");
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id) printf("  %s\n", json_string_value(id));
}

/* The name of a queue as a ledger entry gives it: {"name", "shareBefore", "shareAfter"} (or
 * a bare name). Borrowed; NULL when absent. */
static const char *queue_name(json_t *q)
{
    return json_is_string(q) ? json_string_value(q) : s_of(q, "name");
}

/* "name" or "name (share 2.00 -> 1.00)" when the entry has the queue's shares. */
static void queue_cell(json_t *q, char *buf, size_t n)
{
    const char *name = queue_name(q);
    json_t *b = json_object_get(q, "shareBefore"), *a = json_object_get(q, "shareAfter");
    if (json_is_number(b) && json_is_number(a))
        snprintf(buf, n, "%s (share %.2f -> %.2f)", name ? name : "?", json_number_value(b),
                 json_number_value(a));
    else
        snprintf(buf, n, "%s", name ? name : "?");
}

/* 1 when the ledger entry is a reclaim whose victims include a job of queue name. */
static int reclaims_from(json_t *e, const char *name)
{
    size_t i;
    json_t *vq;
    json_array_foreach(json_object_get(e, "victimQueues"), i, vq)
    {
        const char *n = queue_name(vq);
        if (n && !strcmp(n, name))
            return 1;
    }
    return 0;
}

/* The reclaims by (the preemptor's queue is name) and against (a victim's queue is name)
 * the queue: new arrays of ledger entries of kind reclaim, oldest first. */
static void split_reclaims(json_t *ledger, const char *name, json_t *by, json_t *against)
{
    size_t i;
    json_t *e;
    json_array_foreach(cli__items(ledger), i, e)
    {
        const char *kind = s_of(e, "kind");
        if (!kind || strcmp(kind, "reclaim") != 0)
            continue;
        const char *q = queue_name(json_object_get(e, "queue"));
        if (q && !strcmp(q, name))
            json_array_append(by, e);
        if (reclaims_from(e, name))
            json_array_append(against, e);
    }
}

static void print_reclaims(const char *title, json_t *entries)
{
    printf("%s%s\n", title, json_array_size(entries) ? "" : " <none>");
    if (!json_array_size(entries))
        return;
    static const char *const cols[] = {"id",    "cycle",   "preemptor",
                                       "queue", "victims", "victim queues"};
    struct cli_table *t = cli_table_new(6, cols);
    size_t i, k;
    json_t *e, *vq;
    json_array_foreach(entries, i, e)
    {
        char id[32], cycle[32], pods[32], queue[160], queues[512] = "";
        cli__int(id, sizeof(id), json_object_get(e, "id"));
        cli__int(cycle, sizeof(cycle), json_object_get(e, "cycle"));
        snprintf(pods, sizeof(pods), "%zu", json_array_size(json_object_get(e, "victims")));
        size_t o = 0;
        json_array_foreach(json_object_get(e, "victimQueues"), k, vq)
        {
            char one[160];
            queue_cell(vq, one, sizeof(one));
            int w = snprintf(queues + o, sizeof(queues) - o, "%s%s", k ? ", " : "", one);
            o += w > 0 && (size_t)w < sizeof(queues) - o ? (size_t)w : 0;
        }
        queue_cell(json_object_get(e, "queue"), queue, sizeof(queue));
        const char *row[] = {id, cycle, s_of(e, "preemptor"), queue, pods, queues};
        cli_table_add(t, row);
    }
    cli_table_print(t, stdout);
    cli_table_free(t);
}

static void print_queue(json_t *q, json_t *by, json_t *against)
{
    json_t *jobs = json_object_get(q, "jobs"), *rec = json_object_get(q, "reclaims");
    json_t *kids = json_object_get(q, "children"), *k;
    size_t i;
    printf("Name:        %s%s\n", s_of(q, "name") ? s_of(q, "name") : "?",
           json_is_true(json_object_get(q, "builtin")) ? " (built-in, not stored)" : "");
    printf("Parent:      %s\n", s_of(q, "parent") ? s_of(q, "parent") : "root");
    printf("Children:   %s", json_array_size(kids) ? "" : " <none>");
    json_array_foreach(kids, i, k) printf(" %s", json_string_value(k));
    printf("\nWeight:      %lld\n", (long long)json_integer_value(json_object_get(q, "weight")));
    printf("Reclaimable: %s\n",
           json_is_false(json_object_get(q, "reclaimable")) ? "false" : "true");
    printf("Share:       %.3f", json_number_value(json_object_get(q, "share")));
    if (s_of(q, "dominantResource"))
        printf(" (dominant resource %s)", s_of(q, "dominantResource"));
    long long rank = (long long)json_integer_value(json_object_get(q, "rank"));
    if (rank > 0)
        printf("\nRank:        %lld in the last cycle's queue order\n", rank);
    else
        printf("\nRank:        - (not ordered by the last cycle: no pending job, or no cycle)\n");
    printf("Jobs:        %lld pending, %lld running\n",
           (long long)json_integer_value(json_object_get(jobs, "pending")),
           (long long)json_integer_value(json_object_get(jobs, "running")));
    printf("Reclaims:    %lld by its jobs, %lld against them\n",
           (long long)json_integer_value(json_object_get(rec, "by")),
           (long long)json_integer_value(json_object_get(rec, "from")));
    print_resources(q);
    print_jobs("Pending jobs:", json_object_get(q, "pendingJobs"));
    print_jobs("Running jobs:", json_object_get(q, "runningJobs"));
    print_reclaims("Reclaims by this queue:", by);
    print_reclaims("Reclaims against this queue:", against);
}

int cli__cmd_describe_queue(struct cli *cli, const char *name)
{
    struct err err = ERR_INIT;
    json_t *q = NULL, *ledger = NULL, *by = json_array(), *against = json_array();
    int rc = CLI_EXIT_OK;
    char *path = xasprintf("/api/v1/queues/%s", name);
    if (cli__call(cli, "GET", path, NULL, 0, NULL, &q, &err) < 0 ||
        cli__call(cli, "GET", "/api/v1/preemptions", NULL, 0, NULL, &ledger, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    split_reclaims(ledger, name, by, against);
    if (cli->output != CLI_OUT_TABLE) {
        json_t *doc =
            json_pack("{s:O, s:{s:O, s:O}}", "queue", q, "reclaims", "by", by, "against", against);
        cli__print_doc(cli, doc);
        json_decref(doc);
        goto out;
    }
    print_queue(q, by, against);
out:
    json_decref(q);
    json_decref(ledger);
    json_decref(by);
    json_decref(against);
    free(path);
    return rc;
}
