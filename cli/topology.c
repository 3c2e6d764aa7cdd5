/*
 * topology.c - `muster topology [--like NS/JOB | --pod-cpu Q --pod-memory Q --pod-gpu N]`:
 * GET /api/v1/topology printed as an indented tree (layer -> domain -> nodes) with
 * node count, cpu / gpu use, the largest gang of the shape each domain can still take and
 * the jobs placed there; -o json|yaml prints the document.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

#define NODES_SHOWN 6

static void use_cell(json_t *d, const char *res, char *buf, size_t n)
{
    const char *cap = json_string_value(json_object_get(json_object_get(d, "capacity"), res));
    const char *used = json_string_value(json_object_get(json_object_get(d, "used"), res));
    snprintf(buf, n, "%s/%s", used ? used : "0", cap ? cap : "0");
}

static void print_dom(json_t *d, int depth, int gpu)
{
    char name[160], cpu[64], g[64], gang[32] = "-";
    const char *nm = json_string_value(json_object_get(d, "name"));
    snprintf(name, sizeof(name), "%*s%s", depth * 2, "", depth ? nm : "(cluster)");
    use_cell(d, "cpu", cpu, sizeof(cpu));
    use_cell(d, "nvidia.com/gpu", g, sizeof(g));
    json_t *lg = json_object_get(d, "largestGang");
    if (lg)
        cli__int(gang, sizeof(gang), lg);
    printf("%-28s %-20s %6lld %-14s", name, json_string_value(json_object_get(d, "layer")),
           (long long)json_integer_value(json_object_get(d, "nodeNum")), cpu);
    if (gpu)
        printf(" %-10s", g);
    printf(" %6s %5zu\n", gang, json_array_size(json_object_get(d, "jobs")));
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(d, "children"), i, k) print_dom(k, depth + 1, gpu);
    json_t *nodes = json_object_get(d, "nodes");
    if (!json_array_size(nodes))
        return;
    printf("%*snodes:", depth * 2 + 2, "");
    json_array_foreach(nodes, i, k)
    {
        if (i == NODES_SHOWN) {
            printf(" +%zu more", json_array_size(nodes) - NODES_SHOWN);
            break;
        }
        printf(" %s", json_string_value(k));
    }
    printf("\n");
}

int cli__cmd_topology(struct cli *cli)
{
    json_t *doc = NULL;
    char *path = xstrdup("/api/v1/topology");
    int rc = CLI_EXIT_OK;
    cli__query(&path, "like", cli__flag(cli, "like"));
    cli__query(&path, "pod_cpu", cli__flag(cli, "pod-cpu"));
    cli__query(&path, "pod_memory", cli__flag(cli, "pod-memory"));
    cli__query(&path, "pod_gpu", cli__flag(cli, "pod-gpu"));
    if (!cli__get_for_table(cli, path, &doc, &rc))
        goto out;
    json_t *root = json_object_get(doc, "root");
    int gpu = json_object_get(json_object_get(root, "capacity"), "nvidia.com/gpu") != NULL;
    if (json_is_null(json_object_get(doc, "topology")) || !json_object_get(doc, "topology"))
        printf("No ClusterNetworkTopology 'default': every node is in the cluster domain.\n");
    printf("%-28s %-20s %6s %-14s", "DOMAIN", "LAYER", "NODES", "CPU USED/CAP");
    if (gpu)
        printf(" %-10s", "GPU");
    printf(" %6s %5s\n", "GANG", "JOBS");
    print_dom(root, 0, gpu);
out:
    json_decref(doc);
    free(path);
    return rc;
}
