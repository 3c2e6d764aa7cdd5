/*
 * get.c - `muster get <resource> [NAME]`.
 */
#include <ctype.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"

#define GPU "nvidia.com/gpu"

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);
    if (b)
        v = json_object_get(v, b);
    return json_string_value(v);
}

/* A node's requested amount of a resource, wherever the API put its usage. */
static json_t *node_usage(json_t *node, const char *what)
{
    json_t *u = json_object_get(node, "usage");
    if (!u)
        u = json_object_get(json_object_get(node, "status"), "usage");
    return json_object_get(u, what);
}

static int64_t quantity(json_t *v, int milli)
{
    int64_t x = 0;
    if (json_is_integer(v))
        return milli ? json_integer_value(v) * 1000 : json_integer_value(v);
    if (json_is_real(v))
        return (int64_t)(json_real_value(v) * (milli ? 1000 : 1));
    if (json_is_string(v))
        model_quantity_parse(json_string_value(v), milli, &x, NULL);
    return x;
}

/* "used/allocatable" in kubectl quantity syntax, "-" when the node has none. */
static void usage_cell(json_t *node, const char *res, char *buf, size_t n)
{
    int milli = model_resource_is_milli(res);
    json_t *alloc = json_object_get(json_object_get(node, "status"), "allocatable");
    json_t *a = json_object_get(alloc, res);
    if (!a)
        a = json_object_get(node_usage(node, "allocatable"), res);
    if (!a) {
        snprintf(buf, n, "-");
        return;
    }
    int64_t used = quantity(json_object_get(node_usage(node, "requested"), res), milli);
    if (!strcmp(res, "pods") && !json_object_get(node_usage(node, "requested"), res)) {
        json_t *pods = json_object_get(node, "pods");
        if (json_is_array(pods))
            used = (int64_t)json_array_size(pods);
    }
    char u[32], t[32];
    model_quantity_format(used, milli, u, sizeof(u));
    model_quantity_format(quantity(a, milli), milli, t, sizeof(t));
    snprintf(buf, n, "%s/%s", u, t);
}

static void node_row(struct cli *cli, struct cli_table *t, json_t *node)
{
    char cpu[80], mem[80], gpu[80], pods[80], age[32];
    json_t *spec = json_object_get(node, "spec");
    const char *status =
        json_is_true(json_object_get(spec, "unschedulable")) ? "Ready,SchedulingDisabled" : "Ready";
    usage_cell(node, "cpu", cpu, sizeof(cpu));
    usage_cell(node, "memory", mem, sizeof(mem));
    usage_cell(node, GPU, gpu, sizeof(gpu));
    usage_cell(node, "pods", pods, sizeof(pods));
    cli__age(cli, node, age, sizeof(age));
    const char *row[] = {str_at(node, "metadata", "name"), status, cpu, mem, gpu, pods, age};
    cli_table_add(t, row);
}

/* -o wide adds NOMINATED NODE (kubectl's), PRIORITY and PODGROUP. */
static void pod_row(struct cli *cli, struct cli_table *t, json_t *pod, int all_ns)
{
    char age[32], prio[32] = "0";
    const char *phase = str_at(pod, "status", "phase");
    const char *node = str_at(pod, "spec", "nodeName");
    json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
        phase = "Terminating";
    if (json_is_integer(json_object_get(json_object_get(pod, "spec"), "priority")))
        cli__int(prio, sizeof(prio), json_object_get(json_object_get(pod, "spec"), "priority"));
    cli__age(cli, pod, age, sizeof(age));
    const char *row[] = {str_at(pod, "metadata", "namespace"),
                         str_at(pod, "metadata", "name"),
                         phase ? phase : "Pending",
                         node,
                         age,
                         str_at(pod, "status", "nominatedNodeName"),
                         prio,
                         str_at(labels, "pod-group.scheduling.sigs.k8s.io", NULL)};
    cli_table_add(t, all_ns ? row : row + 1);
}

static void podgroup_row(struct cli *cli, struct cli_table *t, json_t *pg, int all_ns)
{
    char age[32], min[32];
    cli__int(min, sizeof(min), json_object_get(json_object_get(pg, "spec"), "minMember"));
    cli__age(cli, pg, age, sizeof(age));
    const char *row[] = {str_at(pg, "metadata", "namespace"), str_at(pg, "metadata", "name"), min,
                         age};
    cli_table_add(t, all_ns ? row : row + 1);
}

static void topology_row(struct cli *cli, struct cli_table *t, json_t *cnt)
{
    char age[32], layers[32];
    json_t *spec = json_object_get(json_object_get(cnt, "spec"), "networkTopologySpec");
    snprintf(layers, sizeof(layers), "%zu", json_array_size(spec));
    cli__age(cli, cnt, age, sizeof(age));
    const char *row[] = {str_at(cnt, "metadata", "name"), layers, age};
    cli_table_add(t, row);
}

static void priorityclass_row(struct cli *cli, struct cli_table *t, json_t *pc)
{
    char age[32], value[32];
    const char *policy = str_at(pc, "preemptionPolicy", NULL);
    cli__int(value, sizeof(value), json_object_get(pc, "value"));
    cli__age(cli, pc, age, sizeof(age));
    const char *row[] = {str_at(pc, "metadata", "name"), value,
                         json_is_true(json_object_get(pc, "globalDefault")) ? "true" : "false",
                         policy ? policy : "PreemptLowerPriority", age};
    cli_table_add(t, row);
}

/* kubectl's columns: MIN AVAILABLE, MAX UNAVAILABLE (N/A when unset), ALLOWED DISRUPTIONS
 * (the status's, "-" when the budget has none: muster computes it when choosing victims). */
static void pdb_row(struct cli *cli, struct cli_table *t, json_t *b, int all_ns)
{
    char age[32], cell[2][32], allowed[32] = "-";
    static const char *const keys[] = {"minAvailable", "maxUnavailable"};
    json_t *spec = json_object_get(b, "spec");
    for (int i = 0; i < 2; i++) {
        json_t *x = json_object_get(spec, keys[i]);
        if (json_is_integer(x))
            cli__int(cell[i], sizeof(cell[i]), x);
        else
            snprintf(cell[i], sizeof(cell[i]), "%s",
                     json_is_string(x) ? json_string_value(x) : "N/A");
    }
    json_t *a = json_object_get(json_object_get(b, "status"), "disruptionsAllowed");
    if (json_is_integer(a))
        cli__int(allowed, sizeof(allowed), a);
    cli__age(cli, b, age, sizeof(age));
    const char *row[] = {str_at(b, "metadata", "namespace"),
                         str_at(b, "metadata", "name"),
                         cell[0],
                         cell[1],
                         allowed,
                         age};
    cli_table_add(t, all_ns ? row : row + 1);
}

/* The nodes a job's members are placed on, distinct, comma-separated, into buf. */
static void job_nodes(json_t *job, char *buf, size_t n)
{
    size_t i, used = 0;
    json_t *m;
    buf[0] = '\0';
    json_array_foreach(json_object_get(job, "members"), i, m)
    {
        const char *node = json_string_value(json_object_get(m, "node"));
        size_t len = node ? strlen(node) : 0;
        int seen = 0;
        for (const char *p = buf; node && (p = strstr(p, node)) != NULL; p += len)
            seen |= (p == buf || p[-1] == ',') && (p[len] == ',' || p[len] == '\0');
        if (!node || seen || used + len + 2 > n)
            continue;
        used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "", node);
    }
    if (!used)
        snprintf(buf, n, "<none>");
}

/* -o wide adds QUEUE, KIND (gang, ...) and NODES. */
static void job_row(struct cli *cli, struct cli_table *t, json_t *job)
{
    char age[32], prio[32], min[32], placed[32], pending[32], nodes[256];
    cli__int(prio, sizeof(prio), json_object_get(job, "priority"));
    cli__int(min, sizeof(min), json_object_get(job, "minMember"));
    cli__int(placed, sizeof(placed), json_object_get(job, "placed"));
    cli__int(pending, sizeof(pending), json_object_get(job, "pending"));
    cli__age(cli, job, age, sizeof(age));
    job_nodes(job, nodes, sizeof(nodes));
    const char *reason = str_at(job, "reason", NULL);
    const char *row[] = {str_at(job, "namespace", NULL),
                         str_at(job, "name", NULL),
                         str_at(job, "state", NULL),
                         reason && *reason ? reason : "<none>",
                         prio,
                         min,
                         placed,
                         pending,
                         age,
                         str_at(job, "queue", NULL),
                         str_at(job, "kind", NULL),
                         nodes};
    cli_table_add(t, row);
}

static const char *const node_cols[] = {"name", "status", "cpu", "memory", "gpu", "pods", "age"};
static const char *const pod_cols[] = {"namespace", "name",           "phase",    "node",
                                       "age",       "nominated node", "priority", "podgroup"};
static const char *const pg_cols[] = {"namespace", "name", "minmember", "age"};
static const char *const cnt_cols[] = {"name", "layers", "age"};
static const char *const pc_cols[] = {"name", "value", "global-default", "preemption-policy",
                                      "age"};
static const char *const pdb_cols[] = {
    "namespace", "name", "min-available", "max-unavailable", "allowed-disruptions", "age"};
static const char *const job_cols[] = {"namespace", "name",  "state",  "reason",
                                       "priority",  "min",   "placed", "pending",
                                       "age",       "queue", "kind",   "nodes"};

/* Prints a list (or one object) of a resource as a table. */
/* The table of items on out; without the header line when !header (a watch's later rows). */
static void print_table_to(struct cli *cli, const char *res, json_t *items, int all_ns, FILE *out,
                           int header)
{
    struct cli_table *t;
    if (!strcmp(res, "queues")) {
        cli__print_queues(items); /* stdout: a watch prints the whole table again */
        return;
    }
    int is_node = !strcmp(res, "nodes"), is_pod = !strcmp(res, "pods");
    int is_pg = !strcmp(res, "podgroups"), is_job = !strcmp(res, "jobs");
    int is_pc = !strcmp(res, "priorityclasses"), is_pdb = !strcmp(res, "poddisruptionbudgets");
    if (is_node)
        t = cli_table_new(7, node_cols);
    else if (is_pod)
        t = all_ns ? cli_table_new(cli->wide ? 8 : 5, pod_cols)
                   : cli_table_new(cli->wide ? 7 : 4, pod_cols + 1);
    else if (is_pg)
        t = all_ns ? cli_table_new(4, pg_cols) : cli_table_new(3, pg_cols + 1);
    else if (is_job)
        t = cli_table_new(cli->wide ? 12 : 9, job_cols);
    else if (is_pc)
        t = cli_table_new(5, pc_cols);
    else if (is_pdb)
        t = all_ns ? cli_table_new(6, pdb_cols) : cli_table_new(5, pdb_cols + 1);
    else
        t = cli_table_new(3, cnt_cols);
    size_t i;
    json_t *o;
    json_array_foreach(items, i, o)
    {
        if (is_node)
            node_row(cli, t, o);
        else if (is_pod)
            pod_row(cli, t, o, all_ns);
        else if (is_pg)
            podgroup_row(cli, t, o, all_ns);
        else if (is_job)
            job_row(cli, t, o);
        else if (is_pc)
            priorityclass_row(cli, t, o);
        else if (is_pdb)
            pdb_row(cli, t, o, all_ns);
        else
            topology_row(cli, t, o);
    }
    if (json_array_size(items) == 0 && header) {
        fprintf(stderr, "No resources found\n");
    } else if (header) {
        cli_table_print(t, out);
    } else {
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        cli_table_print(t, mem);
        fclose(mem);
        const char *nl = strchr(buf, '\n');
        fputs(nl ? nl + 1 : "", out);
        free(buf);
    }
    cli_table_free(t);
}

static void print_table(struct cli *cli, const char *res, json_t *items, int all_ns)
{
    print_table_to(cli, res, items, all_ns, stdout, 1);
}

/* -o name: "pod/w-0" a line, kubectl's form (the namespace is not shown); "job/NAME" for
 * jobs, which are muster's own. */
static void print_names(const char *res, enum model_kind kind, json_t *items)
{
    char *k = xstrdup(!strcmp(res, "jobs") ? "job" : model_kind_name(kind));
    size_t i;
    json_t *o;
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    json_array_foreach(items, i, o)
    {
        const char *name = str_at(o, "metadata", "name");
        printf("%s/%s\n", k, name ? name : str_at(o, "name", NULL));
    }
    free(k);
}

/* The spelling of v in names (NULL-ended) when it matches one case-insensitively, else v
 * (musterd names what it accepts). Borrowed. */
static const char *canon(const char *v, const char *const *names)
{
    for (size_t i = 0; v && names[i]; i++)
        if (!strcasecmp(v, names[i]))
            return names[i];
    return v;
}

/* --state in musterd's spelling (GET /api/v1/jobstates lists them), so "running" is
 * Running; as given when it matches none or the list cannot be read. Static storage or v. */
static const char *job_state(struct cli *cli, const char *v)
{
    static char buf[64];
    json_t *doc = NULL, *s;
    size_t i;
    struct err err = ERR_INIT;
    if (!v || cli__call(cli, "GET", "/api/v1/jobstates", NULL, 0, NULL, &doc, &err) < 0)
        return v;
    const char *out = v;
    json_array_foreach(cli__items(doc), i, s)
    {
        const char *name = json_string_value(json_object_get(s, "name"));
        if (name && !strcasecmp(name, v)) {
            snprintf(buf, sizeof(buf), "%s", name);
            out = buf;
        }
    }
    json_decref(doc);
    return out;
}

/* Path of a list or of one object; jobs are filtered by namespace here, others by the API. */
static char *get_path(struct cli *cli, const char *res, const char *name, const char *ns,
                      int namespaced, struct err *err)
{
    char *url = NULL;
    if (name) {
        char *n = NULL, *m = NULL;
        if (!namespaced)
            return xasprintf("/api/v1/%s/%s", res, name);
        if (cli__split_id(name, ns, &n, &m, err) < 0)
            return NULL;
        url = xasprintf("/api/v1/%s/%s/%s", res, n, m);
        free(n);
        free(m);
        return url;
    }
    url = xasprintf("/api/v1/%s", res);
    if (!strcmp(res, "pods") || !strcmp(res, "podgroups") || !strcmp(res, "poddisruptionbudgets"))
        cli__query(&url, "namespace", ns);
    if (!strcmp(res, "pods")) {
        static const char *const phases[] = {"Pending", "Running", "Succeeded",
                                             "Failed",  "Unknown", NULL};
        cli__query(&url, "node", cli__flag(cli, "node"));
        cli__query(&url, "phase", canon(cli__flag(cli, "phase"), phases));
    }
    if (!strcmp(res, "jobs"))
        cli__query(&url, "state", job_state(cli, cli__flag(cli, "state")));
    return url;
}

static void filter_jobs(json_t *items, const char *ns);

/* An item's identity in a list: a job's or queue's name, else namespace/name. New. */
static char *item_key(json_t *o)
{
    const char *id = str_at(o, "id", NULL);
    if (id)
        return xstrdup(id);
    const char *ns = str_at(o, "metadata", "namespace"), *name = str_at(o, "metadata", "name");
    if (!name)
        name = str_at(o, "name", NULL);
    return xasprintf("%s/%s", ns ? ns : "", name ? name : "?");
}

/* What -w compares: the item's row as printed (for tables) or its JSON. New. */
static char *item_text(struct cli *cli, const char *res, json_t *o, int all_ns)
{
    if (cli->output != CLI_OUT_TABLE || cli->names || !strcmp(res, "queues"))
        return json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    json_t *one = json_array();
    json_array_append(one, o);
    print_table_to(cli, res, one, all_ns, mem, 0);
    fclose(mem);
    json_decref(one);
    return buf;
}

/* The list at path with the namespace, label and field filters of get applied. */
static int fetch_list(struct cli *cli, const char *res, const char *path, const char *ns,
                      const char *sel, const char *fsel, json_t **doc, struct err *err)
{
    if (cli__call(cli, "GET", path, NULL, 0, NULL, doc, err) < 0)
        return -1;
    if (!strcmp(res, "jobs"))
        filter_jobs(cli__items(*doc), ns);
    if (sel)
        cli__select(cli__items(*doc), sel, err); /* syntax checked before */
    if (fsel)
        cli__field_select(cli__items(*doc), fsel, err);
    return 0;
}

/* get -w: after the list, once a second, every object that is new or changed printed again
 * (a table row without the header, or the object with -o json|yaml, or its name with
 * -o name), as kubectl get -w does; queues print the whole table again. Until interrupted,
 * or an error (exit 1). seen: key -> text of the objects printed (borrowed, updated). */
static int watch(struct cli *cli, const char *res, const char *path, const char *ns,
                 const char *sel, const char *fsel, int all_ns, json_t *seen, struct err *err)
{
    enum model_kind kind = MODEL_NODE;
    model_kind_from_resource(res, &kind);
    for (;;) {
        json_t *doc = NULL, *o;
        size_t i;
        fflush(stdout);
        sleep(1);
        if (fetch_list(cli, res, path, ns, sel, fsel, &doc, err) < 0)
            return -1;
        json_array_foreach(cli__items(doc), i, o)
        {
            char *key = item_key(o), *text = item_text(cli, res, o, all_ns);
            const char *was = json_string_value(json_object_get(seen, key));
            if (!was || strcmp(was, text) != 0) {
                json_t *one = json_array();
                json_array_append(one, o);
                if (cli->output != CLI_OUT_TABLE)
                    cli__print_doc(cli, o);
                else if (cli->names)
                    print_names(res, kind, one);
                else if (!strcmp(res, "queues"))
                    cli__print_queues(cli__items(doc));
                else
                    fputs(text, stdout);
                json_decref(one);
                json_object_set_new(seen, key, json_string(text));
            }
            free(key);
            free(text);
        }
        json_decref(doc);
    }
}

/* Keeps the jobs of one namespace. */
static void filter_jobs(json_t *items, const char *ns)
{
    for (size_t i = json_array_size(items); ns && i-- > 0;) {
        const char *jns = json_string_value(json_object_get(json_array_get(items, i), "namespace"));
        if (!jns || strcmp(jns, ns) != 0)
            json_array_remove(items, i);
    }
}

/* What get answered (one object when name, else a list), as -o asks. */
static void print_got(struct cli *cli, const char *res, enum model_kind kind, const char *name,
                      json_t *doc, int all_ns)
{
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, doc);
        return;
    }
    json_t *one = json_array();
    if (name)
        json_array_append(one, doc);
    if (cli->names)
        print_names(res, kind, name ? one : cli__items(doc));
    else
        print_table(cli, res, name ? one : cli__items(doc), all_ns);
    json_decref(one);
}

/* get -w: watches from the list doc (what was printed). */
static int watch_after(struct cli *cli, const char *res, const char *path, const char *ns,
                       const char *sel, const char *fsel, int all_ns, json_t *doc, struct err *err)
{
    json_t *seen = json_object(), *o;
    size_t i;
    json_array_foreach(cli__items(doc), i, o)
    {
        char *key = item_key(o), *text = item_text(cli, res, o, all_ns);
        json_object_set_new(seen, key, json_string(text));
        free(key);
        free(text);
    }
    int rc = watch(cli, res, path, ns, sel, fsel, all_ns, seen, err);
    json_decref(seen);
    return rc;
}

int cli__cmd_get(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *doc = NULL;
    int rc = CLI_EXIT_OK, all_ns = cli__flag(cli, "all-namespaces") != NULL;
    enum model_kind kind = MODEL_NODE;
    const char *res;
    if (cli->npos < 1 || cli->npos > 2)
        return cli__usage_error(cli, "get needs a resource and at most one name");
    if (!strcasecmp(cli->pos[0], "reservations") || !strcasecmp(cli->pos[0], "reservation"))
        return cli__get_reservations(cli);
    if (!strcasecmp(cli->pos[0], "jobs") || !strcasecmp(cli->pos[0], "job"))
        res = "jobs";
    else if (model_kind_from_resource(cli->pos[0], &kind) == 0)
        res = model_kind_plural(kind);
    else
        return cli__usage_error(cli, "unknown resource '%s'", cli->pos[0]);
    int namespaced = !strcmp(res, "jobs") || model_kind_namespaced(kind);
    const char *ns = cli__flag(cli, "namespace");
    if (all_ns && ns)
        return cli__usage_error(cli, "-n and -A cannot be used together");
    if (!ns && !all_ns && namespaced && strcmp(res, "jobs") != 0)
        ns = "default";
    const char *name = cli->npos == 2 ? cli->pos[1] : NULL;
    const char *sel = cli__flag(cli, "selector");
    if (sel && name)
        return cli__usage_error(cli, "a name cannot be given with -l");
    if (sel && !strcmp(res, "jobs"))
        return cli__usage_error(cli, "jobs have no labels: select their pods or podgroups");
    if (sel && cli__select(NULL, sel, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    if (cli__at_given(cli)) {
        if ((rc = cli__at_check(cli)) != 0)
            return rc;
        if (sel)
            return cli__usage_error(cli, "-l cannot be used with --at or --seq");
        if (cli__flag(cli, "field-selector") || cli__flag(cli, "watch"))
            return cli__usage_error(cli,
                                    "--field-selector and -w cannot be used with --at or --seq");
        return cli__get_at(cli, res, all_ns ? NULL : ns, name);
    }
    const char *fsel = cli__flag(cli, "field-selector");
    if (fsel && name)
        return cli__usage_error(cli, "a name cannot be given with --field-selector");
    if (fsel && cli__field_select(NULL, fsel, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    int watching = cli__flag(cli, "watch") != NULL;
    if (watching && name)
        return cli__usage_error(cli, "get -w watches a list: no name");
    char *path = get_path(cli, res, name, ns, namespaced, &err);
    if (!path)
        rc = cli__fail(cli, &err);
    else if (name ? cli__call(cli, "GET", path, NULL, 0, NULL, &doc, &err)
                  : fetch_list(cli, res, path, ns, sel, fsel, &doc, &err))
        rc = cli__fail(cli, &err);
    if (rc != CLI_EXIT_OK)
        goto out;
    print_got(cli, res, kind, name, doc, all_ns);
    if (watching && watch_after(cli, res, path, ns, sel, fsel, all_ns, doc, &err) < 0)
        rc = cli__fail(cli, &err);
out:
    json_decref(doc);
    free(path);
    return rc;
}
