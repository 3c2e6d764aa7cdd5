/*
 * preemptions.c - `muster preemptions [--job J] [--victim V] [--since T|CYCLE]`: the
 * preemption ledger as a table (one row per preemption) or -o json|yaml.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

static void row(struct cli_table *t, json_t *e)
{
    char id[32], cyc[32], victims[32], gangs[32], pdbs[32], lat[32], nodes[256];
    cli__int(id, sizeof(id), json_object_get(e, "id"));
    cli__int(cyc, sizeof(cyc), json_object_get(e, "cycle"));
    json_t *cost = json_object_get(e, "cost");
    cli__int(victims, sizeof(victims), json_object_get(cost, "pods"));
    cli__int(gangs, sizeof(gangs), json_object_get(cost, "gangsBroken"));
    cli__int(pdbs, sizeof(pdbs), json_object_get(e, "pdbViolations"));
    json_t *l = json_object_get(e, "latencyMs");
    if (json_is_integer(l))
        snprintf(lat, sizeof(lat), "%.1fs", (double)json_integer_value(l) / 1000.0);
    else
        snprintf(lat, sizeof(lat), "-");
    size_t i, o = 0;
    json_t *n;
    nodes[0] = 0;
    json_array_foreach(json_object_get(e, "nominatedNodes"), i, n)
    {
        if (i == 3) {
            snprintf(nodes + o, sizeof(nodes) - o, ",+%zu",
                     json_array_size(json_object_get(e, "nominatedNodes")) - 3);
            break;
        }
        int w = snprintf(nodes + o, sizeof(nodes) - o, "%s%s", i ? "," : "", json_string_value(n));
        o += w > 0 && (size_t)w < sizeof(nodes) - o ? (size_t)w : 0;
    }
    /* an entry that evicted nothing (or less) took room earlier victims free: whose */
    char room[256];
    size_t ro = 0;
    json_t *src;
    room[0] = 0;
    json_array_foreach(json_object_get(e, "roomFrom"), i, src)
    {
        int w = snprintf(room + ro, sizeof(room) - ro, "%s#%lld %s", i ? "," : "",
                         (long long)json_integer_value(json_object_get(src, "ledger")),
                         json_string_value(json_object_get(src, "preemptor")));
        ro += w > 0 && (size_t)w < sizeof(room) - ro ? (size_t)w : 0;
    }
    const char *cells[] = {id,
                           cyc,
                           json_string_value(json_object_get(e, "preemptor")),
                           json_string_value(json_object_get(e, "triggerPod")),
                           victims,
                           gangs,
                           pdbs,
                           nodes,
                           room[0] ? room : "-",
                           json_is_true(json_object_get(e, "bound")) ? "yes" : "no",
                           lat};
    cli_table_add(t, cells);
}

int cli__cmd_preemptions(struct cli *cli)
{
    json_t *doc = NULL;
    char *path = xstrdup("/api/v1/preemptions");
    int rc = CLI_EXIT_OK;
    cli__query(&path, "job", cli__flag(cli, "job"));
    cli__query(&path, "victim", cli__flag(cli, "victim"));
    cli__query(&path, "since", cli__flag(cli, "since"));
    if (!cli__get_for_table(cli, path, &doc, &rc))
        goto out;
    json_t *items = cli__items(doc);
    if (!json_array_size(items)) {
        printf("No preemptions.\n");
        goto out;
    }
    static const char *const headers[] = {"ID",        "CYCLE",        "PREEMPTOR",      "TRIGGER",
                                          "VICTIMS",   "GANGS BROKEN", "PDB VIOLATIONS", "NODES",
                                          "ROOM FROM", "BOUND",        "LATENCY"};
    struct cli_table *t = cli_table_new(11, headers);
    size_t i;
    json_t *e;
    json_array_foreach(items, i, e) row(t, e);
    cli_table_print(t, stdout);
    cli_table_free(t);
out:
    json_decref(doc);
    free(path);
    return rc;
}
