/*
 * reservations.c - `muster get reservations`: the reservations of starving jobs
 * (GET /api/v1/reservations, docs/reservations.md) as a table or -o json|yaml.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

/* "a,b,c" of the first three strings of arr, then ",+N". */
static void list_text(json_t *arr, char *buf, size_t n)
{
    size_t i, o = 0;
    json_t *x;
    buf[0] = 0;
    json_array_foreach(arr, i, x)
    {
        if (i == 3) {
            snprintf(buf + o, n - o, ",+%zu", json_array_size(arr) - 3);
            break;
        }
        int w = snprintf(buf + o, n - o, "%s%s", i ? "," : "", json_string_value(x));
        o += w > 0 && (size_t)w < n - o ? (size_t)w : 0;
    }
    if (!buf[0])
        snprintf(buf, n, "-");
}

int cli__get_reservations(struct cli *cli)
{
    json_t *doc = NULL;
    int rc = CLI_EXIT_OK;
    if (cli->npos > 1)
        return cli__usage_error(cli, "get reservations takes no name");
    if (!cli__get_for_table(cli, "/api/v1/reservations", &doc, &rc))
        goto out;
    json_t *items = cli__items(doc);
    if (!json_array_size(items)) {
        fprintf(stderr, "No resources found\n");
        goto out;
    }
    static const char *const headers[] = {"JOB",   "PRIORITY",    "EXPECTED START", "NODES",
                                          "COUNT", "WAITING FOR", "REASON",         "SINCE"};
    struct cli_table *t = cli_table_new(8, headers);
    size_t i;
    json_t *e;
    json_array_foreach(items, i, e)
    {
        char prio[32], count[32], nodes[256], waits[512];
        cli__int(prio, sizeof(prio), json_object_get(e, "priority"));
        snprintf(count, sizeof(count), "%zu", json_array_size(json_object_get(e, "nodes")));
        list_text(json_object_get(e, "nodes"), nodes, sizeof(nodes));
        list_text(json_object_get(e, "waitingFor"), waits, sizeof(waits));
        const char *start = json_string_value(json_object_get(e, "expectedStart"));
        const char *cells[] = {json_string_value(json_object_get(e, "job")),
                               prio,
                               start ? start : "unknown",
                               nodes,
                               count,
                               waits,
                               json_string_value(json_object_get(e, "reason")),
                               json_string_value(json_object_get(e, "since"))};
        cli_table_add(t, cells);
    }
    cli_table_print(t, stdout);
    cli_table_free(t);
out:
    json_decref(doc);
    return rc;
}
