/*
 * test_cli_kubectl.c - `muster` doing what kubectl does, against a real musterd: apply
 * -f repeated and -f DIR (all or nothing), delete of several names and delete -f, -o name
 * and -o wide, a YAML syntax error printed once, a 401 that says how to pass a token, delete
 * job NS/NAME (its pods and PodGroup), delete --all, -l label selectors on get and delete,
 * describe node (health, cordon, taints, use, pods).
 * Case files are in tests/data/cli/kubectl.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    suite_add_tcase(s, tc);
    return check_run(s);
}
