/*
 * describe.c - `muster describe job NS/NAME` and `muster why NS/NAME`: the job and
 * its why document printed for people (`describe queue NAME` is queues.c's). Every number of the
 * why document is shown (the topology part as its summary, counts, best domains and tries; the
 * preemption part as its verdict and numbers, with the victims of the job's ledger entry; the
 * queue part as its share, rank and quantities); fields the document does not have are
 * skipped, so newer documents still print.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"
#include "reason.h"

static const char *s_of(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static long long i_of(json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

/* Numbers a blocker carries besides its class, code and message: " (need 8, maxFree 4)". */
static void print_numbers(json_t *b, FILE *out)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(b, k, v)
    {
        if (!json_is_integer(v) && !json_is_real(v))
            continue;
        fprintf(out, "%s%s %g", first ? " (" : ", ", k, json_number_value(v));
        first = 0;
    }
    if (!first)
        fputc(')', out);
}

static void print_blockers(json_t *why, FILE *out)
{
    json_t *blockers = json_object_get(why, "blockers");
    if (json_array_size(blockers) == 0)
        return;
    fprintf(out, "Blockers:\n");
    size_t i;
    json_t *b;
    json_array_foreach(blockers, i, b)
    {
        fprintf(out, "  %-10s  %s: %s", s_of(b, "class") ? s_of(b, "class") : "?",
                s_of(b, "code") ? s_of(b, "code") : "?",
                s_of(b, "message") ? s_of(b, "message") : "");
        if (!s_of(b, "message")) /* the message already carries the numbers */
            print_numbers(b, out);
        fputc('\n', out);
    }
}

static void print_gang(json_t *why, FILE *out)
{
    json_t *gang = json_object_get(why, "gang");
    if (json_array_size(gang) == 0)
        return;
    fprintf(out, "Gang:\n");
    size_t i;
    json_t *g;
    json_array_foreach(gang, i, g)
    {
        fprintf(out, "  %s: minMember %lld, members %lld, bound %lld, placeable %lld",
                s_of(g, "podGroup") ? s_of(g, "podGroup") : "?", i_of(g, "minMember"),
                i_of(g, "members"), i_of(g, "bound"), i_of(g, "placeable"));
        /* placeable counts the bound pods already (bound + placed in the attempt) */
        long long have =
            i_of(g, "placeable") > i_of(g, "bound") ? i_of(g, "placeable") : i_of(g, "bound");
        long long short_by = i_of(g, "minMember") - have;
        if (short_by > 0)
            fprintf(out, " (short by %lld)", short_by);
        fputc('\n', out);
    }
}

static void print_node_filter(json_t *why, FILE *out)
{
    json_t *nf = json_object_get(why, "nodeFilter");
    if (!json_is_object(nf))
        return;
    if (s_of(nf, "summary")) {
        /* the summary already names every reason of the histogram */
        fprintf(out, "Nodes:       %s\n", s_of(nf, "summary"));
        return;
    }
    fprintf(out, "Nodes:       %lld/%lld nodes fit\n", i_of(nf, "fit"), i_of(nf, "total"));
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(nf, "reasons"), i, r)
    {
        fprintf(out, "  %6lld  %s", i_of(r, "nodes"), s_of(r, "reason") ? s_of(r, "reason") : "?");
        if (json_object_get(r, "need"))
            fprintf(out, " (need %lld, max free %lld)", i_of(r, "need"), i_of(r, "maxFree"));
        fputc('\n', out);
    }
}

/* The topology part: the summary, the counts, the best domains and every domain tried. */
static void print_topology(json_t *t, FILE *out)
{
    if (!json_is_object(t))
        return;
    const char *layer = s_of(t, "layer") ? s_of(t, "layer") : "?";
    fprintf(out, "Topology:    %s\n",
            s_of(t, "summary")    ? s_of(t, "summary")
            : s_of(t, "strategy") ? s_of(t, "strategy")
                                  : "?");
    long long needed = i_of(t, "needed");
    fprintf(out,
            "  %lld pending pods, %lld needed in one domain; %lld %s domains hold the job, "
            "%lld candidates, %lld tried\n",
            i_of(t, "jobPods"), needed, i_of(t, "domainsHolding"), layer, i_of(t, "candidates"),
            i_of(t, "domainsTried"));
    size_t i;
    json_t *d;
    if (json_array_size(json_object_get(t, "best")) > 0)
        fprintf(out, "  Best domains:\n");
    json_array_foreach(json_object_get(t, "best"), i, d)
    {
        char dom[128];
        snprintf(dom, sizeof(dom), "%s %s", s_of(d, "layer") ? s_of(d, "layer") : "?",
                 s_of(d, "name") ? s_of(d, "name") : "?");
        fprintf(out, "    %-28s holds %lld/%lld pods", dom, i_of(d, "holds"), needed);
        if (s_of(d, "limit"))
            fprintf(out, ", limited by %s", s_of(d, "limit"));
        fputc('\n', out);
    }
    if (json_array_size(json_object_get(t, "tried")) > 0)
        fprintf(out, "  Tried:\n");
    json_array_foreach(json_object_get(t, "tried"), i, d)
    {
        char dom[128];
        snprintf(dom, sizeof(dom), "%s %s", s_of(d, "layer") ? s_of(d, "layer") : "?",
                 s_of(d, "name") ? s_of(d, "name") : "?");
        fprintf(out, "    %-28s offer slots %lld, placed %lld: %s\n", dom, i_of(d, "offerSlots"),
                i_of(d, "placed"), s_of(d, "result") ? s_of(d, "result") : "?");
    }
}

static const char *job_of(json_t *victim)
{
    return s_of(victim, "job") ? s_of(victim, "job") : "";
}

/* "pod@node ..." for the victims of one job, pods without their namespace. */
static void print_job_victims(json_t *victims, const char *job, FILE *out)
{
    size_t i;
    json_t *v;
    json_array_foreach(victims, i, v)
    {
        if (strcmp(job_of(v), job) != 0)
            continue;
        const char *pod = s_of(v, "pod") ? s_of(v, "pod") : "?";
        const char *slash = strchr(pod, '/');
        fprintf(out, " %s@%s", slash ? slash + 1 : pod, s_of(v, "node") ? s_of(v, "node") : "?");
    }
}

/* The victims of the job's ledger entry `id` (the latest entry when id < 0), one line per
 * victim job; nothing when the ledger cannot be read. */
static void print_victims(struct cli *cli, const char *job, long long id, FILE *out)
{
    struct err err = ERR_INIT;
    json_t *doc = NULL, *e = NULL, *x;
    char *path = xstrdup("/api/v1/preemptions");
    cli__query(&path, "job", job);
    size_t i, j;
    if (cli__call(cli, "GET", path, NULL, 0, NULL, &doc, &err) < 0)
        goto out;
    json_array_foreach(json_object_get(doc, "items"), i, x)
    {
        if (id < 0 || i_of(x, "id") == id)
            e = x;
    }
    if (!e)
        goto out;
    fprintf(out, "  Victims (ledger entry %lld, cycle %lld):\n", i_of(e, "id"), i_of(e, "cycle"));
    json_t *victims = json_object_get(e, "victims"), *v;
    json_array_foreach(victims, i, v)
    {
        int first = 1; /* one line per job, at its first victim */
        for (j = 0; j < i && first; j++)
            first = strcmp(job_of(v), job_of(json_array_get(victims, j))) != 0;
        if (!first)
            continue;
        fprintf(out, "    %s (priority %lld):", job_of(v), i_of(v, "priority"));
        print_job_victims(victims, job_of(v), out);
        fputc('\n', out);
    }
out:
    json_decref(doc);
    free(path);
}

/* The preemption part: attempted or not, the verdict, its numbers and the victims. */
static void print_preemption(struct cli *cli, json_t *why, FILE *out)
{
    json_t *p = json_object_get(why, "preemption");
    /* only when preemption was relevant: a verdict was reached (docs/why.md) */
    if (!json_is_object(p) || !s_of(p, "code") || json_is_false(json_object_get(p, "relevant")))
        return;
    const char *code = s_of(p, "code");
    int attempted = json_is_true(json_object_get(p, "attempted"));
    int waiting = why_code_from_name(code) == WHY_PREEMPTION_WAITING;
    fprintf(out, "Preemption:  %s%s%s%s%s%s\n",
            attempted ? "preempting"
            : waiting ? "waiting"
                      : "not attempted",
            code ? " (" : "", code ? code : "", code ? ")" : "", s_of(p, "reason") ? ": " : "",
            s_of(p, "reason") ? s_of(p, "reason") : "");
    if (json_object_get(p, "victims"))
        fprintf(out, "  %lld victim pods, %lld gangs broken, %zu nominated nodes\n",
                i_of(p, "victims"), i_of(p, "gangsBroken"),
                json_array_size(json_object_get(p, "nominatedNodes")));
    if (json_object_get(p, "potentialVictims"))
        fprintf(out, "  %lld potential victims\n", i_of(p, "potentialVictims"));
    if (json_object_get(p, "nodesFailedForResources"))
        fprintf(out, "  %lld nodes failed for resources\n", i_of(p, "nodesFailedForResources"));
    if ((attempted || waiting) && s_of(why, "job"))
        print_victims(cli, s_of(why, "job"), json_object_get(p, "ledger") ? i_of(p, "ledger") : -1,
                      out);
}

/* "cpu 4, nvidia.com/gpu 8" from a map of quantities, "none" when empty. */
static void print_quantities(json_t *m, FILE *out)
{
    const char *r;
    json_t *q;
    int first = 1;
    json_object_foreach(m, r, q)
    {
        fprintf(out, "%s%s %s", first ? "" : ", ", r, json_string_value(q));
        first = 0;
    }
    if (first)
        fputs("none", out);
}

/* The job's queue as the attempt saw it: share, rank, allocated, deserved, capability. */
static void print_queue(json_t *why, FILE *out)
{
    json_t *q = json_object_get(why, "queue");
    if (!json_is_object(q))
        return;
    fprintf(out, "Queue:       %s: share %.3f", s_of(q, "name") ? s_of(q, "name") : "?",
            json_number_value(json_object_get(q, "share")));
    if (s_of(q, "dominantResource"))
        fprintf(out, " (%s)", s_of(q, "dominantResource"));
    if (i_of(q, "rank") > 0)
        fprintf(out, ", rank %lld", i_of(q, "rank"));
    fputs("\n  allocated:  ", out);
    print_quantities(json_object_get(q, "allocated"), out);
    fputs("\n  deserved:   ", out);
    print_quantities(json_object_get(q, "deserved"), out);
    fputs("\n  capability: ", out);
    if (json_object_size(json_object_get(q, "capability")))
        print_quantities(json_object_get(q, "capability"), out);
    else
        fputs("unlimited", out);
    fputc('\n', out);
}

static void print_list_section(struct cli *cli, json_t *why, FILE *out)
{
    size_t i;
    json_t *a;
    print_topology(json_object_get(why, "topology"), out);
    print_preemption(cli, why, out);
    print_queue(why, out);
    if (json_array_size(json_object_get(why, "ahead")) > 0)
        fprintf(out, "Jobs ahead:\n");
    json_array_foreach(json_object_get(why, "ahead"), i, a)
    {
        fprintf(out, "  %s (priority %lld)", s_of(a, "job") ? s_of(a, "job") : "?",
                i_of(a, "priority"));
        json_t *pods = json_object_get(a, "pods");
        if (pods) {
            long long np = json_is_array(pods) ? (long long)json_array_size(pods)
                                               : (long long)json_integer_value(pods);
            fprintf(out, ": %lld pod%s", np, np == 1 ? "" : "s");
        }
        json_t *nodes = json_object_get(a, "nodes");
        size_t j;
        json_t *n;
        json_array_foreach(nodes, j, n)
            fprintf(out, "%s%s", j ? ", " : " on ", json_string_value(n));
        fputc('\n', out);
    }
    json_t *pl = json_object_get(why, "placement");
    if (json_is_object(pl)) {
        fprintf(out, "Placement:   cycle %lld%s%s\n", i_of(pl, "cycle"),
                s_of(pl, "ts") ? " at " : "", s_of(pl, "ts") ? s_of(pl, "ts") : "");
        const char *pod;
        json_t *node;
        json_object_foreach(json_object_get(pl, "nodes"), pod, node)
            fprintf(out, "  %s -> %s\n", pod, json_string_value(node));
    }
    if (json_array_size(json_object_get(why, "history")) > 0)
        fprintf(out, "History:\n");
    json_array_foreach(json_object_get(why, "history"), i, a)
    {
        fprintf(out, "  cycle %-6lld %-22s %s", i_of(a, "cycle"),
                s_of(a, "ts") ? s_of(a, "ts") : "", s_of(a, "code") ? s_of(a, "code") : "?");
        if (s_of(a, "preemptor")) /* PreemptedBy */
            fprintf(out, " %s (ledger entry %lld)", s_of(a, "preemptor"), i_of(a, "ledger"));
        fprintf(out, "\n");
    }
}

void cli__print_why(struct cli *cli, json_t *why, FILE *out)
{
    json_t *p = json_object_get(why, "primary");
    fprintf(out, "Job:         %s\n", s_of(why, "job") ? s_of(why, "job") : "?");
    json_t *pod = json_object_get(why, "pod");
    if (json_is_object(pod))
        fprintf(out, "Pod:         %s (a member of job %s)\n",
                s_of(pod, "name") ? s_of(pod, "name") : "?",
                s_of(pod, "job") ? s_of(pod, "job") : "?");
    if (s_of(why, "state"))
        fprintf(out, "State:       %s\n", s_of(why, "state"));
    if (json_object_get(why, "auditSeq"))
        fprintf(out, "Computed:    cycle %lld, audit seq %lld\n", i_of(why, "cycle"),
                i_of(why, "auditSeq"));
    else if (json_object_get(why, "cycle")) /* no cycle has tried the job: nothing stored */
        fprintf(out, "Computed:    not tried by a cycle yet (now cycle %lld)\n",
                i_of(why, "cycle"));
    if (json_is_object(p))
        fprintf(out, "Primary:     %s (%s): %s\n", s_of(p, "code") ? s_of(p, "code") : "?",
                s_of(p, "class") ? s_of(p, "class") : "?",
                s_of(p, "message") ? s_of(p, "message") : "");
    else
        fprintf(out, "Primary:     none\n");
    json_t *ret = json_object_get(why, "retention");
    if (json_is_object(ret) && s_of(ret, "retainedUntil"))
        fprintf(out, "Retained:    until %s (pods gone at %s)\n", s_of(ret, "retainedUntil"),
                s_of(ret, "goneAt") ? s_of(ret, "goneAt") : "?");
    else if (json_is_object(ret))
        fprintf(out, "Retained:    while its pods terminate, then %g s\n",
                json_number_value(json_object_get(ret, "retentionSeconds")));
    size_t ri;
    json_t *rt;
    json_array_foreach(json_object_get(why, "roomTakenBy"), ri, rt) fprintf(
        out, "%s %s took the room of %zu of its pods (ledger entry %lld)\n",
        ri ? "            " : "RoomTakenBy:", s_of(rt, "preemptor") ? s_of(rt, "preemptor") : "?",
        json_array_size(json_object_get(rt, "pods")), i_of(rt, "ledger"));
    print_blockers(why, out);
    print_gang(why, out);
    print_node_filter(why, out);
    print_list_section(cli, why, out);
}

/* GET /api/v1/jobs/{ns}/{name}[suffix] */
static int get_job(struct cli *cli, const char *id, const char *suffix, json_t **out,
                   struct err *err)
{
    char *ns = NULL, *name = NULL;
    int rc = cli__split_id(id, cli__flag(cli, "namespace"), &ns, &name, err);
    if (rc == 0) {
        char *path = xasprintf("/api/v1/jobs/%s/%s%s", ns, name, suffix);
        rc = cli__call(cli, "GET", path, NULL, 0, NULL, out, err);
        free(path);
    }
    free(ns);
    free(name);
    return rc;
}

int cli__cmd_why(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *why = NULL;
    if (cli->npos != 1)
        return cli__usage_error(cli, "why needs one job NAMESPACE/NAME");
    int bad = cli__at_check(cli);
    if (bad)
        return bad;
    char *suffix = xstrdup("/why");
    cli__at_query(cli, &suffix);
    int rc = get_job(cli, cli->pos[0], suffix, &why, &err);
    free(suffix);
    if (rc < 0)
        return cli__fail(cli, &err);
    if (cli->output != CLI_OUT_TABLE)
        cli__print_doc(cli, why);
    else
        cli__print_why(cli, why, stdout);
    json_decref(why);
    return CLI_EXIT_OK;
}

/* The ledger's victim record: every preemptor with its ledger entry, and the retention. */
static void print_preempted_by(json_t *pb)
{
    if (!json_is_object(pb))
        return;
    json_t *all = json_object_get(pb, "preemptors"), *x;
    size_t i;
    if (json_array_size(all) == 0) /* a record written before victims kept every preemptor */
        printf("PreemptedBy: %s (cycle %lld, %s, ledger entry %lld)\n",
               s_of(pb, "preemptor") ? s_of(pb, "preemptor") : "?", i_of(pb, "cycle"),
               s_of(pb, "ts") ? s_of(pb, "ts") : "?", i_of(pb, "id"));
    json_array_foreach(all, i, x) printf(
        "%s %s (cycle %lld, %s, ledger entry %lld, %zu pod%s)\n",
        i ? "            " : "PreemptedBy:", s_of(x, "preemptor") ? s_of(x, "preemptor") : "?",
        i_of(x, "cycle"), s_of(x, "ts") ? s_of(x, "ts") : "?", i_of(x, "ledger"),
        json_array_size(json_object_get(x, "pods")),
        json_array_size(json_object_get(x, "pods")) == 1 ? "" : "s");
    json_array_foreach(json_object_get(pb, "roomTakenBy"), i, x) printf(
        "%s %s took the room of %zu of its pods (cycle %lld, %s, ledger entry %lld)\n",
        i ? "            " : "RoomTakenBy:", s_of(x, "preemptor") ? s_of(x, "preemptor") : "?",
        json_array_size(json_object_get(x, "pods")), i_of(x, "cycle"),
        s_of(x, "ts") ? s_of(x, "ts") : "?", i_of(x, "ledger"));
    if (s_of(pb, "retainedUntil"))
        printf("Retained:    pods gone at %s; this record is kept until %s\n",
               s_of(pb, "goneAt") ? s_of(pb, "goneAt") : "?", s_of(pb, "retainedUntil"));
}

static void print_job(struct cli *cli, json_t *job)
{
    char age[32];
    cli__age(cli, job, age, sizeof(age));
    printf("Name:        %s\n", s_of(job, "name") ? s_of(job, "name") : "?");
    printf("Namespace:   %s\n", s_of(job, "namespace") ? s_of(job, "namespace") : "?");
    printf("Kind:        %s\n", s_of(job, "kind") ? s_of(job, "kind") : "?");
    printf("State:       %s\n", s_of(job, "state") ? s_of(job, "state") : "?");
    printf("Priority:    %lld\n", i_of(job, "priority"));
    printf("MinMember:   %lld\n", i_of(job, "minMember"));
    printf("Placed:      %lld\n", i_of(job, "placed"));
    printf("Pending:     %lld\n", i_of(job, "pending"));
    printf("Created:     %s (%s ago)\n",
           s_of(job, "creationTimestamp") ? s_of(job, "creationTimestamp") : "?", age);
    print_preempted_by(json_object_get(job, "preemptedBy"));
    json_t *gg = json_object_get(job, "gangGroup");
    if (json_array_size(gg) > 1) {
        printf("GangGroup:  ");
        size_t i;
        json_t *g;
        json_array_foreach(gg, i, g) printf(" %s", json_string_value(g));
        printf("\n");
    }
    static const char *const cols[] = {"name", "node", "phase", "nominated"};
    struct cli_table *t = cli_table_new(4, cols);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(job, "members"), i, m)
    {
        const char *row[] = {s_of(m, "name"), s_of(m, "node"), s_of(m, "phase"),
                             s_of(m, "nominatedNode")};
        cli_table_add(t, row);
    }
    printf("Members:\n");
    cli_table_print(t, stdout);
    cli_table_free(t);
}

int cli__cmd_describe(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *job = NULL, *why = NULL;
    int rc = CLI_EXIT_OK;
    enum model_kind kind;
    if (cli->npos == 2 && model_kind_from_resource(cli->pos[0], &kind) == 0 && kind == MODEL_QUEUE)
        return cli__cmd_describe_queue(cli, cli->pos[1]);
    if (cli->npos == 2 && model_kind_from_resource(cli->pos[0], &kind) == 0 && kind == MODEL_NODE)
        return cli__cmd_describe_node(cli, cli->pos[1]);
    if (cli->npos != 2 || strcasecmp(cli->pos[0], "job") != 0)
        return cli__usage_error(cli,
                                "describe needs 'job NAMESPACE/NAME', 'node NAME' or 'queue NAME'");
    if (get_job(cli, cli->pos[1], "", &job, &err) < 0 ||
        get_job(cli, cli->pos[1], "/why", &why, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    if (cli->output != CLI_OUT_TABLE) {
        json_t *both = json_pack("{s:O, s:O}", "job", job, "why", why);
        cli__print_doc(cli, both);
        json_decref(both);
        goto out;
    }
    print_job(cli, job);
    printf("Why:\n");
    cli__print_why(cli, why, stdout);
out:
    json_decref(job);
    json_decref(why);
    return rc;
}
