/*
 * test_replay.c - `muster replay` (cli/replay*.c, docs/replay.md): the real binary on small
 * traces in virtual time. A gang that does not fit behind a stream of one-node jobs starts
 * only with reservations; a job past its limit is ended by the scheduler; the outputs (the
 * summary, replay.json, the per-job and utilisation CSVs) say the same; bad traces are
 * refused with the line and column named (exit 2 for usage, 1 for a bad file).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "cli_support.h"
#include "http_client.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/muster-replay-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static char *file(const char *name, const char *text)
{
    char *path = NULL;
    ck_assert_int_ne(asprintf(&path, "%s/%s", dir, name), -1);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* 4 nodes of 1 GPU. */
static char *cluster(void)
{
    char buf[2048];
    size_t len = 0;
    for (int i = 0; i < 4; i++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                                "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\nstatus:\n"
                                "  allocatable: {cpu: \"8\", nvidia.com/gpu: \"1\"}\n---\n",
                                i);
    return file("cluster.yaml", buf);
}

/* A one-node job every 30 s for 2 h (each runs 100 s, limit 120 s), and at 5 s a gang of
 * all 4 nodes (runtime 60 s, limit 120 s): one-node jobs overlap, so 4 nodes are never
 * free together unless the gang reserves them. */
static char *trace(void)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(buf, cap,
                            "# a stream of one-node jobs and one gang\n"
                            "id,arrival,pods,gang,cpu,gpu,runtime,limit\n"
                            "big,5,4,4,1,1,60,120\n");
    for (int i = 0; i < 240; i++)
        len += (size_t)snprintf(buf + len, cap - len, "s%d,%d,1,0,1,1,100,120\n", i, i * 30);
    char *p = file("jobs.csv", buf);
    free(buf);
    return p;
}

static json_t *run_json(const char *const *args)
{
    struct cli_result r;
    cli_run(NULL, NULL, args, &r);
    ck_assert_msg(r.status == 0, "replay exited %d: %s", r.status, r.err);
    json_error_t je;
    json_t *doc = json_loads(r.out, 0, &je);
    ck_assert_msg(doc != NULL, "not JSON: %s", je.text);
    cli_result_release(&r);
    return doc;
}

static json_t *class_of(json_t *run, const char *size)
{
    return json_object_get(json_object_get(run, "waitBySize"), size);
}

/* BestEffortFIFO: the gang never starts while one-node jobs keep coming; with a max_wait of
 * 5 min it reserves the nodes that free soonest and starts within 5 min plus the longest
 * limit, the one-node jobs still finish, and the outputs agree. */
START_TEST(test_replay_gang_starts_only_with_reservations)
{
    char *c = cluster(), *t = trace();
    char *a = file("besteffort.yaml", "cycle_interval: 10\n");
    char *b = file("reserve.yaml", "cycle_interval: 10\nmax_wait: 5m\n");
    char *out = NULL;
    ck_assert_int_ne(asprintf(&out, "%s/out", dir), -1);
    json_t *doc =
        run_json((const char *[]){"replay", "-f", c, "--trace", t, "--policy-a", a, "--policy-b", b,
                                  "--out", out, "--horizon", "9000", "-o", "json", NULL});
    json_t *ra = json_array_get(json_object_get(doc, "runs"), 0);
    json_t *rb = json_array_get(json_object_get(doc, "runs"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(ra, "policy")), "besteffort.yaml");
    /* BestEffortFIFO: the gang starts only once the stream has ended (the last one-node job
     * arrives at 7170 s) */
    double wa = json_real_value(json_object_get(class_of(ra, "2-7"), "maxWaitSeconds"));
    ck_assert_msg(wa > 7000, "the gang waited %.1f s", wa);
    ck_assert_int_eq(json_integer_value(json_object_get(ra, "reservations")), 0);
    /* reservations: it started within max_wait + the longest limit (300 + 120 s), plus two
     * cycle intervals (it is seen starving at the first cycle past its threshold, and
     * placed at the first cycle past its expected start) */
    json_t *g = class_of(rb, "2-7");
    ck_assert_int_eq(json_integer_value(json_object_get(g, "unstarted")), 0);
    double w = json_real_value(json_object_get(g, "maxWaitSeconds"));
    ck_assert_msg(w > 300 && w <= 440, "the gang waited %.1f s", w);
    ck_assert_int_ge(json_integer_value(json_object_get(rb, "reservations")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(class_of(rb, "1"), "unstarted")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(rb, "finished")), 241);
    /* the files: the gang's row in the CSV of each run, and replay.json */
    char *path = NULL, *csv;
    ck_assert_int_ne(asprintf(&path, "%s/reserve.yaml-jobs.csv", out), -1);
    csv = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(csv);
    ck_assert_ptr_nonnull(strstr(csv, "id,queue,pods,size,arrival_s,start_s,end_s,wait_s,state"));
    char *row = strstr(csv, "\nbig,");
    ck_assert_ptr_nonnull(row);
    ck_assert_ptr_nonnull(strstr(row, ",finished,"));
    ck_assert_msg(strstr(row, ",1\n") != NULL, "the gang's row does not say reserved: %.80s", row);
    free(csv);
    free(path);
    ck_assert_int_ne(asprintf(&path, "%s/besteffort.yaml-jobs.csv", out), -1);
    csv = test_read_file(path, NULL);
    row = strstr(csv, "\nbig,");
    ck_assert_ptr_nonnull(strstr(row, ",finished,0,0\n"));
    free(csv);
    free(path);
    ck_assert_int_ne(asprintf(&path, "%s/replay.json", out), -1);
    json_t *file_doc = json_load_file(path, 0, NULL);
    ck_assert(json_equal(file_doc, doc));
    json_decref(file_doc);
    free(path);
    ck_assert_int_ne(asprintf(&path, "%s/reserve.yaml-util.csv", out), -1);
    csv = test_read_file(path, NULL);
    ck_assert_ptr_nonnull(
        strstr(csv, "t_s,used,capacity,utilisation,pending,running,reservations\n"));
    free(csv);
    free(path);
    json_decref(doc);
    free(out);
    free(a);
    free(b);
    free(c);
    free(t);
}
END_TEST

/* A job that runs past its limit is ended by the scheduler (activeDeadlineSeconds) at
 * start + limit, within one cycle; one within its limit finishes at start + runtime. */
START_TEST(test_replay_limit_ends_a_job)
{
    char *c = cluster();
    char *t = file("jobs.csv", "id,arrival,pods,gpu,runtime,limit\nover,0,1,1,500,60\n"
                               "fine,0,1,1,50,60\n");
    char *out = NULL;
    ck_assert_int_ne(asprintf(&out, "%s/out", dir), -1);
    json_t *doc = run_json(
        (const char *[]){"replay", "-f", c, "--trace", t, "--out", out, "-o", "json", NULL});
    json_t *r = json_array_get(json_object_get(doc, "runs"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "killedByLimit")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(r, "finished")), 2);
    char *path = NULL;
    ck_assert_int_ne(asprintf(&path, "%s/default-jobs.csv", out), -1);
    char *csv = test_read_file(path, NULL);
    /* cycles every second from 0: both start at 0; over ends at 60 s, fine at 50 s */
    ck_assert_ptr_nonnull(strstr(csv, "\nover,default,1,1,0.000,0.000,60.000,0.000,killed,"));
    ck_assert_ptr_nonnull(strstr(csv, "\nfine,default,1,1,0.000,0.000,50.000,0.000,finished,"));
    free(csv);
    free(path);
    json_decref(doc);
    free(out);
    free(c);
    free(t);
}
END_TEST

/* A bad trace names its line and column; bad flags are usage errors (exit 2). */
START_TEST(test_replay_bad_input)
{
    struct cli_result r;
    char *c = cluster();
    const struct {
        const char *csv, *want;
    } bad[] = {
        {"id,arrival,pods,runtime\na,0,zero,10\n", "line 2: column 'pods'"},
        {"id,arrival,pods,runtime\na,-1,1,10\n", "line 2: column 'arrival'"},
        {"id,arrival,pods\na,0,1\n", "the header has no column 'runtime'"},
        {"id,arrival,pods,runtime,colour\na,0,1,10,red\n", "unknown column 'colour'"},
        {"id,arrival,pods,runtime\na,0,1,10\na,5,1,10\n", "job 'a' is also on line 2"},
        {"id,arrival,pods,runtime,cpu\na,0,1,10,lots\n", "column 'cpu'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *t = file("bad.csv", bad[i].csv);
        cli_run(NULL, NULL, (const char *[]){"replay", "-f", c, "--trace", t, "--out", dir, NULL},
                &r);
        ck_assert_msg(r.status == 1 && strstr(r.err, bad[i].want), "case %zu: exit %d, stderr '%s'",
                      i, r.status, r.err);
        cli_result_release(&r);
        free(t);
    }
    cli_run(NULL, NULL, (const char *[]){"replay", "-f", c, NULL}, &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--trace"));
    cli_result_release(&r);
    cli_run(NULL, NULL,
            (const char *[]){"replay", "-f", c, "--trace", "x.csv", "--horizon", "-5", NULL}, &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--horizon"));
    cli_result_release(&r);
    free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_replay_gang_starts_only_with_reservations);
    tcase_add_test(tc, test_replay_limit_ends_a_job);
    tcase_add_test(tc, test_replay_bad_input);
    suite_add_tcase(s, tc);
    return check_run(s);
}
