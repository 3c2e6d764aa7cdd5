/* test_server.c - musterd as a process: config file and flags, restart, locking, signals. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpus.h"
#include "err.h"
#include "http_client.h"
#include "server.h"
#include "check_run.h"
#include "proc_sched.h"
#include "thread.h"

static struct musterd md;
static char cfg_path[64];

static void teardown(void)
{
    musterd_cleanup(&md);
    if (cfg_path[0])
        unlink(cfg_path);
    cfg_path[0] = '\0';
}

/* Writes a temporary config file; returns its path (static). */
static const char *config(const char *text)
{
    snprintf(cfg_path, sizeof(cfg_path), "/tmp/muster-test-cfg-XXXXXX");
    int fd = mkstemp(cfg_path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return cfg_path;
}

static json_t *get(const char *path, long want)
{
    struct http_resp r;
    http_request("GET", md.base, path, NULL, NULL, &r);
    ck_assert_msg(r.status == want, "GET %s: %ld, want %ld: %s", path, r.status, want, r.body);
    json_t *j = json_incref(r.json);
    http_resp_free(&r);
    return j;
}

static void apply(const char *yaml)
{
    const char *ct[] = {"Content-Type: application/yaml", NULL};
    struct http_resp r;
    http_request("POST", md.base, "/api/v1/manifests", yaml, ct, &r);
    ck_assert_msg(r.status == 201, "apply: %ld %s", r.status, r.body);
    http_resp_free(&r);
}

static const char *cluster = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n"
                             "  allocatable:\n    cpu: \"4\"\n    pods: \"10\"\n---\n"
                             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p1\nspec:\n"
                             "  containers:\n  - name: c\n    resources:\n      requests:\n"
                             "        cpu: \"1\"\n";

START_TEST(test_server_restart_keeps_objects_and_audit)
{
    ck_assert_int_eq(musterd_start(&md, NULL, NULL), 0);
    apply(cluster);
    json_t *v = get("/api/v1/audit/verify", 200);
    json_int_t last = json_integer_value(json_object_get(v, "to"));
    ck_assert_int_ge(last, 2);
    json_decref(v);
    ck_assert_int_eq(musterd_stop(&md), 0); /* SIGTERM is a clean exit */

    ck_assert_int_eq(musterd_start(&md, md.root, NULL), 0);
    json_decref(get("/api/v1/nodes/n1", 200));
    json_decref(get("/api/v1/pods/default/p1", 200));
    v = get("/api/v1/audit/verify", 200);
    ck_assert(json_is_true(json_object_get(v, "ok")));
    ck_assert_int_ge(json_integer_value(json_object_get(v, "to")), last);
    ck_assert_int_ge(json_integer_value(json_object_get(v, "checked")), last);
    json_decref(v);
    ck_assert_int_eq(musterd_stop(&md), 0);
}
END_TEST

START_TEST(test_server_second_instance_exits_in_use)
{
    ck_assert_int_eq(musterd_start(&md, NULL, NULL), 0);
    const char *args[] = {"--data-dir", md.data_dir, "--listen", "127.0.0.1:0", NULL};
    char *err = NULL;
    int code = musterd_run(args, &err);
    ck_assert_int_ne(code, 0);
    ck_assert_msg(err && strstr(err, "in use"), "stderr: %s", err ? err : "(none)");
    free(err);
    /* the first one is unaffected */
    json_decref(get("/healthz", 200));
}
END_TEST

static void expect_config_error(const char *text, const char *want1, const char *want2)
{
    const char *args[] = {"--config", config(text), "--data-dir", "/tmp/muster-never-created",
                          NULL};
    char *err = NULL;
    int code = musterd_run(args, &err);
    ck_assert_int_eq(code, 2);
    ck_assert_msg(err && strstr(err, want1) && strstr(err, want2), "stderr: %s",
                  err ? err : "(none)");
    free(err);
    unlink(cfg_path);
    cfg_path[0] = '\0';
}

START_TEST(test_server_config_errors_name_the_line)
{
    expect_config_error("listen: 127.0.0.1:0\nlistn: x\n", "line 2", "unknown key 'listn'");
    expect_config_error("sync: sometimes\n", "line 1", "'sync' must be full, meta or none");
    expect_config_error("\n\nbody_limit: lots\n", "line 3", "'body_limit'");
    expect_config_error("cycle_interval: -1\n", "line 1", "'cycle_interval'");
    expect_config_error("threads: 0\n", "line 1", "'threads'");
    expect_config_error("\nbackground_nice: 20\n", "line 2",
                        "'background_nice' must be an integer from 0 to 19, not '20'");
    expect_config_error("background_nice: -1\n", "line 1", "'background_nice'");
    expect_config_error("front_priority: high\n", "line 1",
                        "'front_priority' must be normal or realtime, not 'high'");
    expect_config_error("auth_reads: maybe\n", "line 1", "true or false");
    expect_config_error("\ncycle_cpus: 3-1\n", "line 2",
                        "'cycle_cpus': CPU list '3-1': the range 3-1 runs backwards");
    expect_config_error("front_cpus: 0-7:2\n", "line 1", "'front_cpus': CPU list '0-7:2'");
    expect_config_error("front_cpus: \"\"\n", "line 1", "'front_cpus': the CPU list is empty");
    expect_config_error("listen: [a, b\n", "line", "config");
    expect_config_error("- a\n- b\n", "line 1", "mapping");
    expect_config_error("retention: 0\n", "line 1", "'retention' must be a duration above 0");
    expect_config_error("\nretention: 7 weeks\n", "line 2", "'retention'");
    expect_config_error("retention: 7w\n", "line 1", "'retention'");
    expect_config_error("\nwriteback_giveup: soon\n", "line 2",
                        "'writeback_giveup' must be a duration above 0");
    expect_config_error("\nallowed_hosts: [a, 'b c']\n", "line 2",
                        "'allowed_hosts' must be a list of names");
    expect_config_error("allowed_hosts: {a: b}\n", "line 1", "'allowed_hosts' must be a single");
    expect_config_error("cors_origins: [https://ui.example, '*']\n", "line 1",
                        "entry '*' is not an origin");
    expect_config_error("cors_origins: https://ui.example/app\n", "line 1",
                        "entry 'https://ui.example/app' is not an origin");

    const char *missing[] = {"--config", "/tmp/muster-no-such-config.yaml", NULL};
    char *err = NULL;
    ck_assert_int_eq(musterd_run(missing, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "cannot open config"));
    free(err);
    const char *bad_flag[] = {"--colour", "red", NULL};
    ck_assert_int_eq(musterd_run(bad_flag, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "unknown argument '--colour'"));
    free(err);
    const char *bad_retention[] = {"--retention", "-1d", NULL};
    ck_assert_int_eq(musterd_run(bad_retention, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "flag '--retention' must be a duration above 0"));
    free(err);
    const char *bad_level[] = {"--log-level", "loud", NULL};
    ck_assert_int_eq(musterd_run(bad_level, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--log-level"));
    free(err);
}
END_TEST

/* retention: seconds or s/m/h/d, above 0; 7 days when not set */
START_TEST(test_server_retention_parse)
{
    static const struct {
        const char *text;
        int64_t ms; /* -1: refused */
    } cases[] = {{"7d", 7LL * 86400000},
                 {"36h", 36LL * 3600000},
                 {"90m", 5400000},
                 {"45s", 45000},
                 {"3600", 3600000},
                 {"0.5", 500},
                 {"0", -1},
                 {"-1d", -1},
                 {"7w", -1},
                 {"", -1},
                 {"d", -1},
                 {"1dd", -1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = 0;
        int rc = server_parse_retention(cases[i].text, &ms);
        ck_assert_msg(cases[i].ms < 0 ? rc < 0 : rc == 0 && ms == cases[i].ms,
                      "'%s': rc %d, %lld ms", cases[i].text, rc, (long long)ms);
    }
    struct server_config c;
    server_config_init(&c);
    ck_assert_int_eq(c.retention_ms, 7LL * 86400000);
    ck_assert_int_eq(c.writeback_giveup_ms, 300000);
    server_config_release(&c);
}
END_TEST

/* musterd refuses bad (flag, value) naming want, exit 1, and no data directory appears. */
static void expect_refused_untouched(const char *flag, const char *value, const char *flag2,
                                     const char *value2, const char *want)
{
    char dir[] = "/tmp/muster-refused-XXXXXX", data[64], *err = NULL;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(data, sizeof(data), "%s/data", dir);
    const char *args[] = {"--data-dir", data,  "--listen", "127.0.0.1:0", flag,
                          value,        flag2, value2,     NULL};
    int code = musterd_run(args, &err);
    ck_assert_msg(code == 1 && err && strstr(err, want), "%s %s: exit %d, want 1 and '%s': %s",
                  flag, value, code, want, err ? err : "");
    ck_assert_msg(access(data, F_OK) != 0, "%s %s: the data directory was made", flag, value);
    free(err);
    rmdir(dir);
}

/* Every file or address the configuration names is checked before the store is opened:
 * a musterd that refuses to start leaves no data directory (and no store) behind. */
START_TEST(test_server_bad_input_leaves_no_store)
{
    expect_refused_untouched("--tokens-file", "/nonexistent/tokens", NULL, NULL,
                             "cannot read tokens file '/nonexistent/tokens'");
    expect_refused_untouched("--tls-cert", "/nonexistent/cert.pem", "--tls-key",
                             "/nonexistent/key.pem", "tls_cert '/nonexistent/cert.pem'");
    expect_refused_untouched("--audit-key", "/nonexistent/audit.pem", NULL, NULL,
                             "audit key '/nonexistent/audit.pem'");
    expect_refused_untouched("--audit-witness", "/tmp/muster-witness", NULL, NULL,
                             "audit_witness needs audit_key");
    expect_refused_untouched("--audit-key-retired", "/nonexistent/old.pem", NULL, NULL,
                             "audit_key_retired needs audit_key");
    expect_refused_untouched("--kubeconfig", "/nonexistent/kubeconfig", NULL, NULL,
                             "kubernetes mirror: cannot read '/nonexistent/kubeconfig'");
    /* the flag pair's second listen wins: an address that does not parse */
    expect_refused_untouched("--listen", "999.1.1.1:80", NULL, NULL,
                             "listen address '999.1.1.1:80'");
}
END_TEST

/* Leader election follows kube-scheduler's default: on in bind mode unless turned off,
 * off without bind mode; an explicit true without bind mode is refused. */
START_TEST(test_server_leader_elect_default)
{
    static const struct {
        const char *args[8];
        int rc, on; /* rc: server_args' return; on: leader election runs */
    } cases[] = {
        {{"musterd", "--kubeconfig", "k", "--scheduler-name", "muster", NULL}, 0, 1},
        {{"musterd", "--kubeconfig", "k", "--scheduler-name", "muster", "--leader-elect=false",
          NULL},
         0,
         0},
        {{"musterd", "--kubeconfig", "k", NULL}, 0, 0},
        {{"musterd", NULL}, 0, 0},
        {{"musterd", "--kubeconfig", "k", "--leader-elect", NULL}, ERR_INVALID, 1},
        /* on by default, so its settings are checked too */
        {{"musterd", "--kubeconfig", "k", "--scheduler-name", "muster",
          "--leader-elect-renew-deadline", "20", NULL},
         ERR_INVALID,
         1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct server_config c;
        struct err err = ERR_INIT;
        int argc = 0, done = 0;
        while (cases[i].args[argc])
            argc++;
        server_config_init(&c);
        int rc = server_args(argc, (char **)cases[i].args, &c, &done, &err);
        ck_assert_msg(rc == cases[i].rc, "case %zu: rc %d (%s)", i, rc, err.msg);
        ck_assert_msg(server_config_leader_elect(&c) == cases[i].on, "case %zu", i);
        server_config_release(&c);
    }
}
END_TEST

START_TEST(test_server_help_and_version)
{
    const char *help[] = {"--help", NULL};
    const char *version[] = {"--version", NULL};
    char *out = NULL;

    ck_assert_int_eq(musterd_run(help, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: musterd"));
    free(out);
    ck_assert_int_eq(musterd_run(version, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "musterd 0."));
    free(out);
}
END_TEST

START_TEST(test_server_flags_override_config)
{
    /* the file asks for a port that cannot be had; --listen 127.0.0.1:0 from the fixture wins */
    const char *args[] = {
        "--config", config("listen: 127.0.0.1:1\nlog_level: debug\ncycle_interval: 0.5\n"), NULL};
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    json_decref(get("/healthz", 200));
    ck_assert_int_eq(musterd_stop(&md), 0);
    char *log = test_read_file(md.log_file, NULL);
    char want[128];
    snprintf(want, sizeof(want), "musterd listening on http://127.0.0.1:%d", md.port);
    ck_assert_msg(strstr(log, want), "log: %s", log);
    ck_assert_msg(strstr(log, "GET /healthz 200"), "log: %s", log);
    free(log);
}
END_TEST

START_TEST(test_server_cycle_runs_soon_after_apply)
{
    /* the timer is off: only the apply can have triggered the cycle */
    const char *args[] = {"--config", config("cycle_interval: 0\n"), NULL};
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    apply(cluster);
    const char *node = NULL;
    json_t *pod = NULL;
    for (int i = 0; i < 3000 && !node; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        json_decref(pod);
        pod = get("/api/v1/pods/default/p1", 200);
        node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    }
    ck_assert_msg(node && !strcmp(node, "n1"), "p1 was not bound after the apply");
    json_decref(pod);
}
END_TEST

/* proc_sched_policy once the thread has named itself and set its policy (it may not have yet
 * when the port file appears), waiting up to 30 s for want. */
static int policy_of(pid_t pid, const char *comm, int want)
{
    int got = -1;
    for (int i = 0; i < 3000 && (got = proc_sched_policy(pid, comm)) != want; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return got;
}

/* Applies manifests of 5,000 pods from a child process until a thread named musterd-bulk
 * is seen in musterd (at most 20 of them), with its slice when with_slice; returns its
 * policy (-1: never seen), its slice in *slice and its nice value in *nice. */
static int bulk_seen(int with_slice, uint64_t *slice, int *nice)
{
    size_t cap = 5000 * 200 + 64, n = 0;
    char *body = malloc(cap);
    ck_assert_ptr_nonnull(body);
    n += (size_t)snprintf(body, cap, "[");
    for (int i = 0; i < 5000; i++)
        n += (size_t)snprintf(body + n, cap - n,
                              "%s{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                              "\"bulk-%d\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
                              i ? "," : "", i);
    snprintf(body + n, cap - n, "]");
    int policy = -1;
    for (int round = 0; round < 20 && policy < 0; round++) {
        pid_t child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
            const char *ct[] = {"Content-Type: application/json", NULL};
            struct http_resp r;
            http_request("POST", md.base, "/api/v1/manifests", body, ct, &r);
            _exit(r.status == 200 || r.status == 201 ? 0 : 1);
        }
        int status = 0;
        while (policy < 0 && waitpid(child, &status, WNOHANG) == 0) {
            int seen = proc_sched_policy(md.pid, "musterd-bulk");
            *slice = proc_sched_slice(md.pid, "musterd-bulk"); /* 0: it ended in between */
            *nice = proc_sched_nice(md.pid, "musterd-bulk");
            policy = seen >= 0 && (!with_slice || *slice) && *nice != PROC_SCHED_NONE ? seen : -1;
        }
        if (policy >= 0)
            ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the apply failed");
    }
    free(body);
    return policy;
}

START_TEST(test_server_background_threads_run_as_batch)
{
    ck_assert_int_eq(musterd_start(&md, NULL, NULL), 0);
    /* the cycle keeps SCHED_OTHER (with a long slice, below: not SCHED_BATCH, which other
     * processes' busy threads kept from its core), and so does the front end */
    ck_assert_int_eq(policy_of(md.pid, "musterd-cycle", SCHED_OTHER), SCHED_OTHER);
    ck_assert_int_eq(policy_of(md.pid, "musterd-front", SCHED_OTHER), SCHED_OTHER);
    struct http_resp r;
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    ck_assert_msg(r.body && strstr(r.body, "\nmuster_http_front_realtime 0\n"), "%s", r.body);
    http_resp_free(&r);
    /* the read cache's remaker starts with the first stale answer served */
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    apply(cluster);
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    ck_assert_int_eq(policy_of(md.pid, "musterd-remake", SCHED_BATCH), SCHED_BATCH);
    /* the background threads' weight is a tenth of the cycle's and the front end's */
    ck_assert_int_eq(proc_sched_nice(md.pid, "musterd-remake"), THREAD_BACKGROUND_NICE);
    ck_assert_int_eq(proc_sched_nice(md.pid, "musterd-cycle"), 0);
    ck_assert_int_eq(proc_sched_nice(md.pid, "musterd-front"), 0);
    /* the slices (thread.h): long for the bulk threads, short for the front end, the
     * kernel's for civetweb's workers (an apply runs on a bulk thread of its own) */
    uint64_t dflt = proc_sched_slice(md.pid, "musterd"), bulk = 0;
    int bulk_nice = 0;
    /* an apply runs on a thread of its own, as background work: seen while big ones run */
    ck_assert_int_eq(bulk_seen(dflt != 0, &bulk, &bulk_nice), SCHED_BATCH);
    ck_assert_int_eq(bulk_nice, THREAD_BACKGROUND_NICE);
    if (dflt) {
        ck_assert_uint_eq(bulk, THREAD_LONG_SLICE_NS);
        ck_assert_uint_eq(proc_sched_slice(md.pid, "musterd-cycle"), THREAD_LONG_SLICE_NS);
        ck_assert_uint_eq(proc_sched_slice(md.pid, "musterd-remake"), THREAD_LONG_SLICE_NS);
        ck_assert_uint_eq(proc_sched_slice(md.pid, "musterd-front"), THREAD_SHORT_SLICE_NS);
        ck_assert_uint_eq(proc_sched_slice(md.pid, "civetweb-worker"), dflt);
    } else {
        fprintf(stderr, "server: the kernel reports no slices: they are not checked\n");
    }
    musterd_cleanup(&md);

    /* background_nice sets how much lower they run */
    const char *args[] = {"--config", config("background_nice: 4\n"), NULL};
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    apply(cluster);
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    ck_assert_int_eq(policy_of(md.pid, "musterd-remake", SCHED_BATCH), SCHED_BATCH);
    ck_assert_int_eq(proc_sched_nice(md.pid, "musterd-remake"), 4);
    ck_assert_int_eq(proc_sched_nice(md.pid, "musterd-cycle"), 0);
    musterd_cleanup(&md);
    unlink(cfg_path);

    /* an operator's policy is kept: here SCHED_RR (chrt -r 1), inherited from the starting
     * process (not SCHED_IDLE: on a loaded machine an idle-policy musterd may not start in
     * time). Setting it takes CAP_SYS_NICE, which the suites have as root. */
    struct sched_param rr = {.sched_priority = 1}, other = {0};
    if (pthread_setschedparam(pthread_self(), SCHED_RR, &rr) != 0) {
        fprintf(stderr, "server: no SCHED_RR here (not root?): the kept policy is not checked\n");
        return;
    }
    int rc = musterd_start(&md, NULL, NULL);
    ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(policy_of(md.pid, "musterd-cycle", SCHED_RR), SCHED_RR);
    /* the front end's real-time policy is the operator's here: /metrics says so */
    ck_assert_int_eq(policy_of(md.pid, "musterd-front", SCHED_RR), SCHED_RR);
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    ck_assert_msg(r.body && strstr(r.body, "\nmuster_http_front_realtime 1\n"), "%s", r.body);
    http_resp_free(&r);
}
END_TEST

/* front_priority realtime: the front end answers as a SCHED_FIFO thread; the others keep
 * their policies. */
START_TEST(test_server_front_priority_realtime)
{
    if (thread_realtime_allowed() != 0) {
        fprintf(stderr, "server: no SCHED_FIFO here (not root?): only the refusal is checked\n");
        return;
    }
    const char *args[] = {"--config", config("front_priority: realtime\n"), NULL};
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    ck_assert_int_eq(policy_of(md.pid, "musterd-front", SCHED_FIFO), SCHED_FIFO);
    ck_assert_int_eq(policy_of(md.pid, "musterd-cycle", SCHED_OTHER), SCHED_OTHER);
    apply(cluster);
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    ck_assert_int_eq(policy_of(md.pid, "civetweb-worker", SCHED_OTHER), SCHED_OTHER);
    /* and says so */
    struct http_resp r;
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    ck_assert_msg(r.body && strstr(r.body, "\nmuster_http_front_realtime 1\n"), "%s", r.body);
    http_resp_free(&r);
}
END_TEST

/* The Cpus_allowed_list of pid's thread comm into buf once it is want (the thread pins itself
 * after it starts), waiting up to 30 s; the last read is left in buf either way. */
static void cpus_of(pid_t pid, const char *comm, const char *want, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < 3000; i++) {
        if (proc_sched_cpus(pid, comm, buf, n) == 0 && !strcmp(buf, want))
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The first and last CPUs this process may run on, and the whole list (cpus_format writes
 * it as the kernel's Cpus_allowed_list does, which test_server_cpus compares it with). */
static void my_cpus(int *first, int *last, char *all, size_t n)
{
    struct cpus may = {.set = 1};
    ck_assert_int_eq(sched_getaffinity(0, sizeof(may.mask), &may.mask), 0);
    *first = *last = -1;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET((size_t)i, &may.mask)) {
            *first = *first < 0 ? i : *first;
            *last = i;
        }
    ck_assert_int_ge(*first, 0);
    cpus_format(&may, all, n);
}

/* cycle_cpus and front_cpus: the cycle's thread on the first CPU this process may use, the
 * front end's and the read cache's remaker on the last (the same one on a machine of one);
 * every other thread where the process may run. */
START_TEST(test_server_cpus)
{
    int first, last;
    char all[256], text[128], got[256], want_c[16], want_f[16];
    my_cpus(&first, &last, all, sizeof(all));
    snprintf(want_c, sizeof(want_c), "%d", first);
    snprintf(want_f, sizeof(want_f), "%d", last);
    snprintf(text, sizeof(text), "cycle_cpus: %d\nfront_cpus: \"%d\"\n", first, last);
    const char *args[] = {"--config", config(text), NULL};
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    cpus_of(md.pid, "musterd-cycle", want_c, got, sizeof(got));
    ck_assert_str_eq(got, want_c);
    cpus_of(md.pid, "musterd-front", want_f, got, sizeof(got));
    ck_assert_str_eq(got, want_f);
    /* the remaker starts with the first stale answer served */
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    apply(cluster);
    json_decref(get("/api/v1/jobs?resourceVersion=0", 200));
    cpus_of(md.pid, "musterd-remake", want_f, got, sizeof(got));
    ck_assert_str_eq(got, want_f);
    /* the rest run where the process may: civetweb's workers, an apply's thread */
    ck_assert_int_eq(proc_sched_cpus(md.pid, "civetweb-worker", got, sizeof(got)), 0);
    ck_assert_str_eq(got, all);
    ck_assert_int_eq(proc_sched_cpus(md.pid, "musterd", got, sizeof(got)), 0);
    ck_assert_str_eq(got, all);
    /* and it schedules as without: the pod is bound */
    json_t *pod = NULL;
    for (int i = 0; i < 300; i++) {
        json_decref(pod);
        pod = get("/api/v1/pods/default/p1", 200);
        if (json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")))
            break;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")),
                     "n1");
    json_decref(pod);
}
END_TEST

/* A CPU the process may not run on is refused at start (exit 1), naming the setting and the
 * CPU, before the data directory is made; the same for front_cpus. */
START_TEST(test_server_cpus_refused)
{
    cpu_set_t may;
    ck_assert_int_eq(sched_getaffinity(0, sizeof(may), &may), 0);
    int outside = -1;
    for (int i = 0; i < CPU_SETSIZE && outside < 0; i++)
        if (!CPU_ISSET((size_t)i, &may))
            outside = i;
    if (outside < 0) {
        fprintf(stderr, "server: this process may use every CPU a list can name: no refusal\n");
        return;
    }
    const char *keys[] = {"cycle_cpus", "front_cpus"};
    for (int k = 0; k < 2; k++) {
        char text[64], want[128];
        snprintf(text, sizeof(text), "%s: \"%d\"\n", keys[k], outside);
        const char *args[] = {"--config", config(text), "--data-dir", "/tmp/muster-never-created",
                              NULL};
        char *err = NULL;
        int code = musterd_run(args, &err);
        snprintf(want, sizeof(want), "%s: CPU %d: not one this process may run on", keys[k],
                 outside);
        ck_assert_msg(code == 1 && err && strstr(err, want), "exit %d, stderr: %s", code,
                      err ? err : "(none)");
        free(err);
        ck_assert_int_ne(access("/tmp/muster-never-created", F_OK), 0);
        unlink(cfg_path);
        cfg_path[0] = '\0';
    }
}
END_TEST

/* Without the privilege (no real-time limit and, as root, CAP_SYS_NICE out of the bounding
 * set) musterd refuses front_priority realtime at start (exit 1, as for a TLS file it cannot
 * read), naming it, before it makes its data directory. Run in a child, whose limits the
 * musterd it starts inherits. Returns 0 when so; 10 when the privilege cannot be taken away
 * here (root without CAP_SETPCAP). */
static int refused_without_sys_nice(const char *cfg)
{
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_RTPRIO, &none) != 0 ||
        (geteuid() == 0 && prctl(PR_CAPBSET_DROP, CAP_SYS_NICE) != 0))
        return 10;
    const char *args[] = {"--config", cfg, "--data-dir", "/tmp/muster-never-created", NULL};
    char *err = NULL;
    int code = musterd_run(args, &err);
    int named = err && strstr(err, "front_priority realtime: the kernel refuses SCHED_FIFO");
    if (!named)
        fprintf(stderr, "musterd's stderr: %s\n", err ? err : "(none)");
    free(err);
    return code != 1 ? 11 : !named ? 12 : access("/tmp/muster-never-created", F_OK) == 0 ? 13 : 0;
}

START_TEST(test_server_front_priority_refused)
{
    const char *cfg = config("front_priority: realtime\n");
    fflush(stderr);
    pid_t child = fork();
    if (child == 0)
        _exit(refused_without_sys_nice(cfg));
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
    if (WEXITSTATUS(status) == 10) {
        fprintf(stderr, "server: CAP_SYS_NICE cannot be taken away here: the refusal is not "
                        "checked\n");
        return;
    }
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("server");

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_server_restart_keeps_objects_and_audit);
    tcase_add_test(tc, test_server_second_instance_exits_in_use);
    tcase_add_test(tc, test_server_config_errors_name_the_line);
    tcase_add_test(tc, test_server_bad_input_leaves_no_store);
    tcase_add_test(tc, test_server_leader_elect_default);
    tcase_add_test(tc, test_server_help_and_version);
    tcase_add_test(tc, test_server_retention_parse);
    tcase_add_test(tc, test_server_flags_override_config);
    tcase_add_test(tc, test_server_cycle_runs_soon_after_apply);
    tcase_add_test(tc, test_server_background_threads_run_as_batch);
    tcase_add_test(tc, test_server_front_priority_realtime);
    tcase_add_test(tc, test_server_front_priority_refused);
    tcase_add_test(tc, test_server_cpus);
    tcase_add_test(tc, test_server_cpus_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
