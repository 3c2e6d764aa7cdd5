/*
 * report.c - `muster report usage|jobs|waits`: accounting read from PostgreSQL (--db or
 * $MUSTER_DB) with no musterd; ship/ computes every figure, this file parses the flags
 * and prints (docs/cli.md, docs/accounting.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "internal.h"
#include "ship.h"

/* T: RFC 3339, or an age back from now ("30d", "12h", "90m", "45s", "3600"). */
static int parse_time(struct cli *cli, const char *flag, int64_t *out, struct err *err)
{
    const char *v = cli__flag(cli, flag);
    char *end = NULL;
    if (!v)
        return 0;
    if (clock_parse_rfc3339(v, out, NULL) == 0)
        return 0;
    double n = strtod(v, &end);
    double unit = !strcmp(end, "d")            ? 86400
                  : !strcmp(end, "h")          ? 3600
                  : !strcmp(end, "m")          ? 60
                  : !strcmp(end, "s") || !*end ? 1
                                               : 0;
    if (end == v || !unit || !(n >= 0) || n > 36500.0 * 86400 / unit)
        return err_setf(err, ERR_INVALID, flag,
                        "--%s '%s' is neither an RFC 3339 time nor an age such as 30d, 12h or 90m",
                        flag, v);
    *out = cli->now_ms - (int64_t)(n * unit * 1000.0);
    return 0;
}

static int query_of(struct cli *cli, struct ship_query *q, struct err *err)
{
    uint64_t limit = 0;
    q->since_ms = cli->now_ms - 30LL * 86400 * 1000;
    q->until_ms = 0;
    if (parse_time(cli, "since", &q->since_ms, err) < 0 ||
        parse_time(cli, "until", &q->until_ms, err) < 0 ||
        cli__flag_u64(cli, "limit", &limit, err) < 0)
        return -1;
    if (q->until_ms && q->until_ms <= q->since_ms)
        return err_set(err, ERR_INVALID, "--until must be after --since");
    q->cluster = cli__flag(cli, "cluster");
    q->state = cli__flag(cli, "state");
    q->queue = cli__flag(cli, "queue");
    q->ns = cli__flag(cli, "namespace");
    q->limit = (size_t)limit;
    static const char *const states[] = {"pending", "running", "completed", "preempted",
                                         "cancelled"};
    if (q->state) {
        size_t i = 0;
        while (i < 5 && strcmp(states[i], q->state))
            i++;
        if (i == 5)
            return err_setf(err, ERR_INVALID, "state",
                            "--state '%s' is not a job state (pending, running, completed, "
                            "preempted, cancelled)",
                            q->state);
    }
    return 0;
}

static void usage_table(json_t *doc)
{
    json_t *row, *v;
    size_t i;
    const char *res;
    printf("%-24s %-20s %14s %8s\n", "KEY", "RESOURCE", "HOURS", "SHARE");
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        json_object_foreach(json_object_get(row, "resources"), res, v)
        {
            const char *key = json_string_value(json_object_get(row, "key"));
            char name[64];
            snprintf(name, sizeof(name), "%s%s", res, !strcmp(res, "memory") ? " (GiB)" : "");
            printf("%-24s %-20s %14.3f %7.1f%%\n", *key ? key : "-", name, json_number_value(v),
                   100.0 * json_number_value(json_object_get(json_object_get(row, "share"), res)));
        }
    }
}

static void csv_cell(json_t *v)
{
    char *text = json_is_string(v)
                     ? NULL
                     : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    const char *s = json_is_string(v) ? json_string_value(v) : json_is_null(v) ? "" : text;
    if (strpbrk(s, ",\"\n")) {
        putchar('"');
        for (; *s; s++) {
            if (*s == '"')
                putchar('"');
            putchar(*s);
        }
        putchar('"');
    } else {
        fputs(s, stdout);
    }
    free(text);
}

static void jobs_print(struct cli *cli, json_t *doc)
{
    json_t *items = json_object_get(doc, "items"), *o, *v;
    size_t i;
    const char *k;
    if (cli->csv) {
        int first = 1;
        json_object_foreach(json_array_get(items, 0), k, v)
        {
            printf("%s%s", first ? "" : ",", k);
            first = 0;
        }
        if (!first)
            putchar('\n');
        json_array_foreach(items, i, o)
        {
            first = 1;
            json_object_foreach(o, k, v)
            {
                if (!first)
                    putchar(',');
                csv_cell(v);
                first = 0;
            }
            putchar('\n');
        }
        return;
    }
    printf("%-12s %-28s %-12s %-10s %-24s %9s %5s %9s %s\n", "CLUSTER", "JOB", "QUEUE", "STATE",
           "SUBMIT", "WAIT(s)", "PODS", "PREEMPT", "GPU-HOURS");
    json_array_foreach(items, i, o)
    {
        char job[256], pre[32], wait[32], gpu[32];
        json_t *w = json_object_get(o, "waitSeconds");
        json_t *g = json_object_get(json_object_get(o, "resourceSeconds"), "nvidia.com/gpu");
        snprintf(job, sizeof(job), "%s/%s", json_string_value(json_object_get(o, "namespace")),
                 json_string_value(json_object_get(o, "name")));
        snprintf(pre, sizeof(pre), "%lld/%lld",
                 (long long)json_integer_value(json_object_get(o, "preemptionsSuffered")),
                 (long long)json_integer_value(json_object_get(o, "preemptionsCaused")));
        snprintf(wait, sizeof(wait), w && !json_is_null(w) ? "%.3f" : "-", json_number_value(w));
        snprintf(gpu, sizeof(gpu), g ? "%.3f" : "-", json_number_value(g) / 3600.0);
        const char *q = json_string_value(json_object_get(o, "queue"));
        printf("%-12s %-28s %-12s %-10s %-24s %9s %5lld %9s %s\n",
               json_string_value(json_object_get(o, "cluster")), job, q ? q : "-",
               json_string_value(json_object_get(o, "state")),
               json_string_value(json_object_get(o, "submit")), wait,
               (long long)json_integer_value(json_object_get(o, "pods")), pre, gpu);
    }
}

static void waits_table(json_t *doc)
{
    json_t *row;
    size_t i;
    printf("%-16s %-6s %6s %10s %10s %10s %10s\n", "QUEUE", "SIZE", "JOBS", "P50(s)", "P90(s)",
           "P99(s)", "MAX(s)");
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        const char *q = json_string_value(json_object_get(row, "queue"));
        printf("%-16s %-6s %6lld %10.3f %10.3f %10.3f %10.3f\n", *q ? q : "-",
               json_string_value(json_object_get(row, "size")),
               (long long)json_integer_value(json_object_get(row, "jobs")),
               json_number_value(json_object_get(row, "p50")),
               json_number_value(json_object_get(row, "p90")),
               json_number_value(json_object_get(row, "p99")),
               json_number_value(json_object_get(row, "max")));
    }
}

int cli__cmd_report(struct cli *cli)
{
    struct err err = ERR_INIT;
    struct ship_query q = {0};
    const char *db = cli__flag(cli, "db"), *by = cli__flag(cli, "by");
    json_t *doc = NULL;
    int rc;

    if (!db)
        db = getenv("MUSTER_DB");
    if (cli->npos != 1)
        return cli__usage_error(cli, "report needs 'usage', 'jobs' or 'waits'");
    const char *what = cli->pos[0];
    if (strcmp(what, "usage") && strcmp(what, "jobs") && strcmp(what, "waits"))
        return cli__usage_error(cli, "unknown report '%s' (usage, jobs or waits)", what);
    if (!db || !*db)
        return cli__usage_error(cli, "report needs --db URL (or $MUSTER_DB): the accounting "
                                     "database, postgresql://...");
    if (query_of(cli, &q, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    if (cli->csv && strcmp(what, "jobs"))
        return cli__usage_error(cli, "-o csv is for 'report jobs'");
    if (!strcmp(what, "usage")) {
        enum ship_usage_by b;
        if (!by)
            return cli__usage_error(cli, "report usage needs --by queue|namespace|cluster");
        if (!strcmp(by, "queue"))
            b = SHIP_BY_QUEUE;
        else if (!strcmp(by, "namespace"))
            b = SHIP_BY_NAMESPACE;
        else if (!strcmp(by, "cluster"))
            b = SHIP_BY_CLUSTER;
        else
            return cli__usage_error(cli, "--by '%s' is not queue, namespace or cluster", by);
        rc = ship_report_usage(db, b, &q, &doc, &err);
    } else if (by) {
        return cli__usage_error(cli, "--by is for 'report usage'");
    } else if (!strcmp(what, "jobs")) {
        rc = ship_report_jobs(db, &q, &doc, &err);
    } else {
        rc = ship_report_waits(db, &q, &doc, &err);
    }
    if (rc < 0)
        return cli__fail(cli, &err);
    if (cli->output == CLI_OUT_JSON) {
        /* 15 digits: 0.945 s, not the double's 0.94499999999999995 */
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        printf("%s\n", text);
        free(text);
    } else if (cli->output != CLI_OUT_TABLE)
        cli__print_doc(cli, doc);
    else if (!strcmp(what, "usage"))
        usage_table(doc);
    else if (!strcmp(what, "jobs"))
        jobs_print(cli, doc);
    else
        waits_table(doc);
    json_decref(doc);
    return CLI_EXIT_OK;
}
