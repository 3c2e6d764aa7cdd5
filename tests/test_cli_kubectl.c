/*
 * test_cli_kubectl.c - `muster` doing what kubectl does, against a real musterd: apply
 * -f repeated and -f DIR (all or nothing), delete of several names and delete -f, -o name
 * and -o wide, a YAML syntax error printed once, a 401 that says how to pass a token, delete
 * job NS/NAME (its pods and PodGroup), delete --all, -l label selectors on get and delete,
 * describe node (health, cordon, taints, use, pods), --field-selector, get -w and audit
 * export --follow (run on a pipe until the change shows, then interrupted).
 * Case files are in tests/data/cli/kubectl.
 */
#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "cli_support.h"
#include "check_run.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static struct cli_musterd d;
static const char *env[2];

static void run_ok(struct cli_result *r, const char *const *args)
{
    cli_run_ok(env, NULL, args, r);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* `muster get KIND -A -o name` equals want. */
static void expect_names(const char *kind, const char *want)
{
    struct cli_result r;
    run_ok(&r, ARGS("get", kind, "-A", "-o", "name"));
    ck_assert_str_eq(r.out, want);
    cli_result_release(&r);
}

static void apply_dir(void)
{
    struct cli_result r;
    char *dir = cli_data_path("kubectl/dir");
    run_ok(&r, ARGS("apply", "-f", dir));
    ck_assert_str_eq(r.out, "node/n1 created\n"
                            "node/n2 created\n"
                            "pod/ux/a created\n"
                            "pod/ux/b created\n"
                            "pod/ux/c created\n");
    cli_result_release(&r);
    free(dir);
}

START_TEST(test_cli_kubectl_apply_every_file)
{
    struct cli_result r;
    char *a = cli_data_path("kubectl/dir/a-nodes.yaml");
    char *b = cli_data_path("kubectl/dir/b-pod.json");
    run_ok(&r, ARGS("apply", "-f", a, "-f", b));
    ck_assert_str_eq(r.out, "node/n1 created\n"
                            "node/n2 created\n"
                            "pod/ux/a created\n");
    cli_result_release(&r);
    expect_names("nodes", "node/n1\nnode/n2\n");
    expect_names("pods", "pod/a\n");
    free(a);
    free(b);
}
END_TEST

START_TEST(test_cli_kubectl_apply_dir_in_name_order)
{
    apply_dir();
    expect_names("pods", "pod/a\npod/b\npod/c\n");
}
END_TEST

/* A file that cannot be read, or a YAML syntax error in one file, stops them all: nothing is
 * applied, and the error names the file; the syntax error is printed once. */
START_TEST(test_cli_kubectl_apply_bad_file_applies_nothing)
{
    struct cli_result r;
    char *a = cli_data_path("kubectl/dir/a-nodes.yaml");
    char *tab = cli_data_path("kubectl/bad/tab.yaml");
    char *missing = cli_data_path("kubectl/no-such.yaml");
    char want[1024];

    cli_run(env, NULL, ARGS("apply", "-f", a, "-f", tab), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "");
    snprintf(want, sizeof(want),
             "error: '%s': document 1: found character that cannot start any token at line 5 "
             "col 1\n",
             tab);
    ck_assert_str_eq(r.err, want);
    cli_result_release(&r);

    cli_run(env, NULL, ARGS("apply", "-f", a, "-f", missing), &r);
    ck_assert_int_eq(r.status, 1);
    snprintf(want, sizeof(want), "error: cannot open '%s': No such file or directory\n", missing);
    ck_assert_str_eq(r.err, want);
    cli_result_release(&r);

    /* the server's syntax error, for one file, is printed once too */
    cli_run(env, NULL, ARGS("apply", "-f", tab), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: document 1: found character that cannot start any token at "
                            "line 5 col 1\n");
    cli_result_release(&r);

    run_ok(&r, ARGS("get", "nodes"));
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "No resources found\n");
    cli_result_release(&r);
    free(a);
    free(tab);
    free(missing);
}
END_TEST

START_TEST(test_cli_kubectl_delete_several_names)
{
    struct cli_result r;
    apply_dir();
    run_ok(&r, ARGS("delete", "pod", "a", "b", "-n", "ux"));
    ck_assert_str_eq(r.out, "pod/ux/a deleted\npod/ux/b deleted\n");
    cli_result_release(&r);
    expect_names("pods", "pod/c\n");
    /* every name is tried; a missing one fails the command */
    cli_run(env, NULL, ARGS("delete", "node", "n1", "gone", "n2", "-o", "name"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "node/n1\nnode/n2\n");
    ck_assert_str_eq(r.err, "error: node 'gone' not found\n");
    cli_result_release(&r);
    expect_names("nodes", "");
}
END_TEST

START_TEST(test_cli_kubectl_delete_file)
{
    struct cli_result r;
    char *dir = cli_data_path("kubectl/dir");
    char *pods = cli_data_path("kubectl/dir/c-pods.yml");
    apply_dir();
    run_ok(&r, ARGS("delete", "-f", pods));
    ck_assert_str_eq(r.out, "pod/ux/b deleted\npod/ux/c deleted\n");
    cli_result_release(&r);
    expect_names("pods", "pod/a\n");
    /* a directory: what is left goes, what is gone is reported */
    cli_run(env, NULL, ARGS("delete", "-f", dir), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "node/n1 deleted\nnode/n2 deleted\npod/ux/a deleted\n");
    ck_assert_str_eq(r.err, "error: pod 'ux/b' not found\nerror: pod 'ux/c' not found\n");
    cli_result_release(&r);
    expect_names("nodes", "");
    expect_names("pods", "");
    free(dir);
    free(pods);
}
END_TEST

/* -o name is kubectl's kind/name (no namespace); -o wide adds columns. */
START_TEST(test_cli_kubectl_output_name_and_wide)
{
    struct cli_result r;
    char *a = cli_data_path("kubectl/dir/a-nodes.yaml");
    char *pods = cli_data_path("kubectl/dir/c-pods.yml");
    run_ok(&r, ARGS("apply", "-f", a, "-f", pods, "-o", "name"));
    ck_assert_str_eq(r.out, "node/n1\nnode/n2\npod/b\npod/c\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("cycle"));
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "jobs", "-o", "NAME"));
    ck_assert_str_eq(r.out, "job/b\njob/c\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pod", "b", "-n", "ux", "-o", "name"));
    ck_assert_str_eq(r.out, "pod/b\n");
    cli_result_release(&r);

    run_ok(&r, ARGS("get", "pods", "-n", "ux"));
    ck_assert_msg(starts_with(r.out, "NAME   PHASE     NODE   AGE\n"), "%s", r.out);
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pods", "-n", "ux", "-o", "wide"));
    ck_assert_msg(starts_with(r.out, "NAME   PHASE     NODE   AGE   NOMINATED NODE   PRIORITY   "
                                     "PODGROUP\n"),
                  "%s", r.out);
    ck_assert_int_eq(count_lines(r.out), 3);
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "jobs", "-o", "wide"));
    ck_assert_msg(strstr(r.out, "   AGE   QUEUE     KIND   NODES\n") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "   default   pod    n") != NULL, "%s", r.out);
    cli_result_release(&r);
    free(a);
    free(pods);
}
END_TEST

START_TEST(test_cli_kubectl_401_says_how_to_pass_a_token)
{
    struct cli_result r;
    cli_musterd_stop(&d);
    cli_musterd_start("s3cret", &d);
    env[0] = d.server_env;
    cli_run(env, NULL, ARGS("cycle"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "\npass a token with --token TOKEN or the MUSTER_TOKEN environment "
                                "variable\n") != NULL,
                  "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("--token", "wrong", "cycle"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "\nthe token given (--token or MUSTER_TOKEN) was refused") != NULL,
                  "%s", r.err);
    cli_result_release(&r);
}
END_TEST

static void apply_jobs(void)
{
    struct cli_result r;
    char *f = cli_data_path("kubectl/jobs/gang.yaml");
    run_ok(&r, ARGS("apply", "-f", f));
    cli_result_release(&r);
    free(f);
}

/* A gang job goes with its pods and its PodGroup; a pod job with its pod; a job that is not
 * there is an error. */
START_TEST(test_cli_kubectl_delete_job_and_its_objects)
{
    struct cli_result r;
    apply_jobs();
    run_ok(&r, ARGS("delete", "job", "ux/train"));
    ck_assert_str_eq(r.out, "pod/ux/train-0 deleted\n"
                            "pod/ux/train-1 deleted\n"
                            "podgroup/ux/train deleted\n");
    cli_result_release(&r);
    expect_names("podgroups", "");
    expect_names("pods", "pod/x\npod/solo\npod/web\n");
    run_ok(&r, ARGS("delete", "jobs", "solo", "-n", "ux", "-o", "name"));
    ck_assert_str_eq(r.out, "pod/solo\n");
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("delete", "job", "ux/train"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "error: job 'ux/train' not found\n");
    cli_result_release(&r);
    expect_names("jobs", "job/x\njob/web\n");
}
END_TEST

/* A gang whose PodGroup is gone (PodGroupMissing) still goes with its pods; a PodGroup
 * without pods goes too. */
START_TEST(test_cli_kubectl_delete_job_whatever_exists)
{
    struct cli_result r;
    apply_jobs();
    run_ok(&r, ARGS("delete", "podgroup", "train", "-n", "ux"));
    cli_result_release(&r);
    run_ok(&r, ARGS("delete", "job", "ux/train"));
    ck_assert_str_eq(r.out, "pod/ux/train-0 deleted\npod/ux/train-1 deleted\n");
    cli_result_release(&r);
    apply_jobs();
    run_ok(&r, ARGS("delete", "pod", "train-0", "train-1", "-n", "ux"));
    cli_result_release(&r);
    run_ok(&r, ARGS("delete", "job", "ux/train"));
    ck_assert_str_eq(r.out, "podgroup/ux/train deleted\n");
    cli_result_release(&r);
    expect_names("podgroups", "");
}
END_TEST

START_TEST(test_cli_kubectl_delete_all)
{
    struct cli_result r;
    apply_jobs();
    run_ok(&r, ARGS("delete", "pods", "--all", "-n", "ux", "-o", "name"));
    ck_assert_str_eq(r.out, "pod/solo\npod/train-0\npod/train-1\npod/web\n");
    cli_result_release(&r);
    expect_names("pods", "pod/x\n");
    run_ok(&r, ARGS("delete", "pods", "--all"));
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "No resources found\n");
    cli_result_release(&r);
    apply_jobs();
    run_ok(&r, ARGS("delete", "jobs", "--all", "-A"));
    ck_assert_str_eq(r.out, "pod/other/x deleted\n"
                            "pod/ux/solo deleted\n"
                            "pod/ux/train-0 deleted\n"
                            "pod/ux/train-1 deleted\n"
                            "podgroup/ux/train deleted\n"
                            "pod/ux/web deleted\n");
    cli_result_release(&r);
    expect_names("pods", "");
    expect_names("podgroups", "");
    cli_run(env, NULL, ARGS("delete", "pods", "a", "--all"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "error: names cannot be given with --all or -l\n"
                            "run 'muster help delete' for usage\n");
    cli_result_release(&r);
}
END_TEST

/* -l: key=value, key==value, key!=value, key and !key, comma-separated, all must hold. */
START_TEST(test_cli_kubectl_label_selectors)
{
    struct cli_result r;
    apply_jobs();
    run_ok(&r, ARGS("get", "pods", "-A", "-l", "app=web", "-o", "name"));
    ck_assert_str_eq(r.out, "pod/x\npod/solo\npod/web\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pods", "-n", "ux", "-l", "app==web,tier!=front", "-o", "name"));
    ck_assert_str_eq(r.out, "pod/web\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pods", "-n", "ux", "--selector=tier,!pod-group.scheduling.sigs.k8s.io",
                    "-o", "name"));
    ck_assert_str_eq(r.out, "pod/solo\npod/web\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pods", "-n", "ux", "-l", "app=nope"));
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "No resources found\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pods", "-n", "ux", "-l", "app=train", "-o", "json"));
    ck_assert_msg(strstr(r.out, "\"train-0\"") && strstr(r.out, "\"train-1\"") &&
                      !strstr(r.out, "\"solo\""),
                  "%s", r.out);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("get", "pods", "-l", "a=b=c"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "error: invalid label selector requirement 'a=b=c'\n"
                            "run 'muster help get' for usage\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("delete", "pods", "-A", "-l", "app=web"));
    ck_assert_str_eq(r.out, "pod/other/x deleted\npod/ux/solo deleted\npod/ux/web deleted\n");
    cli_result_release(&r);
    expect_names("pods", "pod/train-0\npod/train-1\n");
}
END_TEST

START_TEST(test_cli_kubectl_describe_node)
{
    struct cli_result r;
    char *f = cli_data_path("kubectl/node/node.yaml");
    run_ok(&r, ARGS("apply", "-f", f));
    cli_result_release(&r);
    run_ok(&r, ARGS("describe", "node", "sick"));
    ck_assert_str_eq(r.out, "Name:          sick\n"
                            "Ready:         False (NotReady: KubeletNotReady)\n"
                            "Unschedulable: true (cordoned)\n"
                            "Taints:        gpu-broken=yes:NoSchedule\n"
                            "Labels:        network.topology.nvidia.com/block=b1\n"
                            "Resources:\n"
                            "RESOURCE   ALLOCATABLE   REQUESTED   FREE\n"
                            "cpu        8             1500m       6500m\n"
                            "memory     32Gi          1Gi         31Gi\n"
                            "pods       110           1           109\n"
                            "Pods:          1\n"
                            "POD    JOB\n"
                            "ux/w   ux/w\n"
                            "Nominated:     0\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("describe", "NODE", "sick", "-o", "json"));
    ck_assert_msg(strstr(r.out, "\"nominated\": []") && strstr(r.out, "\"KubeletNotReady\""), "%s",
                  r.out);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("describe", "node", "gone"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: node 'gone' not found\n");
    cli_result_release(&r);
    free(f);
}
END_TEST

START_TEST(test_cli_kubectl_field_selectors)
{
    struct cli_result r;
    apply_dir();
    run_ok(&r,
           ARGS("get", "pods", "-n", "ux", "--field-selector", "metadata.name=b", "-o", "name"));
    ck_assert_str_eq(r.out, "pod/b\n");
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pods", "-A", "--field-selector",
                    "metadata.namespace==ux,metadata.name!=b", "-o", "name"));
    ck_assert_str_eq(r.out, "pod/a\npod/c\n");
    cli_result_release(&r);
    /* an absent field reads as "": the unbound pods and the bound ones split the three */
    struct cli_result bound;
    run_ok(&r, ARGS("get", "pods", "-n", "ux", "--field-selector", "spec.nodeName=", "-o", "name"));
    run_ok(&bound,
           ARGS("get", "pods", "-n", "ux", "--field-selector", "spec.nodeName!=", "-o", "name"));
    ck_assert_int_eq(count_lines(r.out) + count_lines(bound.out), 3);
    for (const char *p = "pod/a\n"; p; p = !strcmp(p, "pod/a\n")   ? "pod/b\n"
                                           : !strcmp(p, "pod/b\n") ? "pod/c\n"
                                                                   : NULL)
        ck_assert_msg(!strstr(r.out, p) != !strstr(bound.out, p), "%s in exactly one", p);
    cli_result_release(&r);
    cli_result_release(&bound);
    run_ok(&r, ARGS("get", "nodes", "--field-selector", "spec.unschedulable=true"));
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "No resources found\n");
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("get", "pods", "--field-selector", "spec.nodeName"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "error: invalid field selector requirement 'spec.nodeName': it needs "
                            "= or != and a value\nrun 'muster help get' for usage\n");
    cli_result_release(&r);
}
END_TEST

/* Runs muster args with its stdout on a pipe until its output holds want (or the test's own
 * timeout ends it), then interrupts it; the output so far (new). apply (a manifest, may be
 * NULL) is applied once after muster printed first (the change a watch must see). */
static char *run_until(const char *const *args, const char *first, const char *apply,
                       const char *want)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        putenv((char *)env[0]);
        const char *argv[16] = {"muster"};
        size_t n = 1;
        for (; args[n - 1] && n < 15; n++)
            argv[n] = args[n - 1];
        argv[n] = NULL;
        char bin[4096];
        snprintf(bin, sizeof(bin), "%s/muster", getenv("MUSTER_BIN_DIR"));
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    char *out = xcalloc(1, 1);
    size_t len = 0;
    int applied = apply == NULL;
    while (!strstr(out, want)) {
        char buf[4096];
        ssize_t k = read(fd[0], buf, sizeof(buf));
        ck_assert_msg(k > 0, "muster ended before printing '%s': %s", want, out);
        out = xrealloc(out, len + (size_t)k + 1);
        memcpy(out + len, buf, (size_t)k);
        len += (size_t)k;
        out[len] = '\0';
        if (!applied && strstr(out, first)) {
            struct cli_result r;
            cli_run_ok(env, apply, ARGS("apply", "-f", "-"), &r);
            cli_result_release(&r);
            applied = 1;
        }
    }
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    close(fd[0]);
    return out;
}

static const char new_pod[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: late, namespace: ux}\n"
                              "spec:\n  containers: [{name: c, image: x}]\n";

START_TEST(test_cli_kubectl_get_watch)
{
    apply_dir();
    /* the list first, then the new pod as a row of its own when it appears */
    char *out = run_until(ARGS("get", "pods", "-n", "ux", "-w"), "NAME", new_pod, "\nlate ");
    ck_assert_msg(strncmp(out, "NAME   PHASE", 12) == 0 && strstr(out, "\na ") &&
                      strstr(out, "\nc "),
                  "%s", out);
    const char *late = strstr(out, "\nlate ");
    ck_assert_msg(strstr(late, "Pending"), "%s", out);
    ck_assert_msg(!strstr(late, "NAME"), "no second header: %s", out);
    free(out);
    /* -o name: names only, the new one after */
    out = run_until(ARGS("get", "pods", "-n", "ux", "-w", "-o", "name"), "pod/c\n",
                    "apiVersion: v1\nkind: Pod\nmetadata: {name: later, namespace: ux}\n"
                    "spec:\n  containers: [{name: c, image: x}]\n",
                    "pod/later\n");
    ck_assert_str_eq(out, "pod/a\npod/b\npod/c\npod/late\npod/later\n");
    free(out);
}
END_TEST

START_TEST(test_cli_kubectl_audit_follow)
{
    apply_dir();
    /* what is there, then the record of an apply made while it follows, and nothing of
     * another kind (the filter holds) */
    char *out = run_until(ARGS("audit", "export", "--kind", "applied", "--follow"),
                          "\"name\":\"ux/c\"", new_pod, "\"name\":\"ux/late\"");
    size_t lines = 0;
    for (char *p = out; (p = strchr(p, '\n')); p++)
        lines++;
    ck_assert_uint_eq(lines, 6); /* two nodes, three pods, then the late pod */
    ck_assert_msg(!strstr(out, "\"kind\":\"cycle\""), "%s", out);
    free(out);
    struct cli_result r;
    cli_run(env, NULL, ARGS("audit", "export", "--follow", "--to", "5"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "error: audit export --follow has no end: no --to, --until or "
                            "--limit\nrun 'muster help audit' for usage\n");
    cli_result_release(&r);
}
END_TEST

/* Values are matched without case, as their names are spelled by musterd. */
START_TEST(test_cli_kubectl_values_any_case)
{
    struct cli_result a, b;
    apply_dir();
    run_ok(&a, ARGS("get", "PODS", "-n", "ux", "--phase", "PENDING", "-o", "NAME"));
    run_ok(&b, ARGS("get", "pods", "-n", "ux", "--phase", "Pending", "-o", "name"));
    ck_assert_str_eq(a.out, b.out);
    cli_result_release(&a);
    cli_result_release(&b);
    run_ok(&a, ARGS("get", "jobs", "-n", "ux", "--state", "pending", "-o", "Json"));
    run_ok(&b, ARGS("get", "jobs", "-n", "ux", "--state", "Pending", "-o", "json"));
    ck_assert_str_eq(a.out, b.out);
    cli_result_release(&a);
    cli_result_release(&b);
    run_ok(&a, ARGS("audit", "export", "--kind", "APPLIED", "--limit", "1"));
    ck_assert_msg(strstr(a.out, "\"kind\":\"applied\""), "%s", a.out);
    cli_result_release(&a);
    cli_run(env, NULL, ARGS("get", "pods", "--phase", "asleep"), &a);
    ck_assert_int_eq(a.status, 1);
    ck_assert_msg(strstr(a.err, "unknown pod phase 'asleep'"), "%s", a.err);
    cli_result_release(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_kubectl");
    TCase *tc = tcase_create("musterd");
    tcase_set_timeout(tc, 120);
    cli_fixture_use(&d, env);
    tcase_add_checked_fixture(tc, cli_fixture_setup, cli_fixture_teardown);
    tcase_add_test(tc, test_cli_kubectl_apply_every_file);
    tcase_add_test(tc, test_cli_kubectl_apply_dir_in_name_order);
    tcase_add_test(tc, test_cli_kubectl_apply_bad_file_applies_nothing);
    tcase_add_test(tc, test_cli_kubectl_delete_several_names);
    tcase_add_test(tc, test_cli_kubectl_delete_file);
    tcase_add_test(tc, test_cli_kubectl_output_name_and_wide);
    tcase_add_test(tc, test_cli_kubectl_401_says_how_to_pass_a_token);
    tcase_add_test(tc, test_cli_kubectl_delete_job_and_its_objects);
    tcase_add_test(tc, test_cli_kubectl_delete_job_whatever_exists);
    tcase_add_test(tc, test_cli_kubectl_delete_all);
    tcase_add_test(tc, test_cli_kubectl_label_selectors);
    tcase_add_test(tc, test_cli_kubectl_describe_node);
    tcase_add_test(tc, test_cli_kubectl_field_selectors);
    tcase_add_test(tc, test_cli_kubectl_get_watch);
    tcase_add_test(tc, test_cli_kubectl_audit_follow);
    tcase_add_test(tc, test_cli_kubectl_values_any_case);
    suite_add_tcase(s, tc);
    return check_run(s);
}
