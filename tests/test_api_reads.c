/*
 * test_api_reads.c - reads of the scheduler's view while applies grow the store's map: a
 * why read once held a store read transaction while waiting for the view's lock, and an
 * apply growing the map under that lock waited for every read transaction to end, so
 * musterd hung (found by bench_reads). Here readers ask for a why document without pause
 * while manifests grow a 1 MiB map several times; every apply and every read must answer.
 * The hang needs a reader to fall between its transaction and the lock just as a growth
 * starts: against the old order this test hung (Check's timeout: a failure) in about one
 * run of three; it never fails on a correct order.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "api_util.h"
#include "check_run.h"

#define READERS 6

static struct musterd md;

struct reader {
    atomic_int *stop;
    long ok, bad;
};

static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\nmap_size: 1Mi\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static int read_main(void *arg)
{
    struct reader *rd = arg;
    const char *paths[] = {"/api/v1/jobs/t/w/why", "/api/v1/jobs/t/w/why", "/api/v1/nodes?limit=5"};
    for (long k = 0; !atomic_load(rd->stop); k++) {
        struct http_resp r;
        http_request("GET", md.base, paths[k % 3], NULL, NULL, &r);
        if (r.status == 200)
            rd->ok++;
        else
            rd->bad++;
        http_resp_free(&r);
    }
    return 0;
}

START_TEST(test_api_reads_during_map_growth)
{
    json_decref(api_util_call(&md, "POST", "/api/v1/manifests",
                              "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
                              "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '110'}}\n"
                              "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: t}\n"
                              "spec: {containers: [{name: c, image: x}]}\n",
                              api_util_yaml, 201));
    atomic_int halt = 0;
    struct reader rd[READERS];
    thrd_t t[READERS];
    for (int i = 0; i < READERS; i++) {
        rd[i] = (struct reader){.stop = &halt};
        ck_assert_int_eq(thrd_create(&t[i], read_main, &rd[i]), thrd_success);
    }
    /* 20 manifests of 300 pods (~2 KiB stored each): the 1 MiB map doubles several times */
    for (int m = 0; m < 20; m++) {
        char *all = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&all, &len);
        for (int i = 0; i < 300; i++)
            fprintf(
                f,
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%02d-%03d\n  namespace: t\n"
                "  annotations: {pad: '%0512d'}\nspec: {containers: [{name: c, image: x, "
                "resources: {requests: {cpu: 1m}}}]}\n",
                m, i, 0);
        fclose(f);
        json_decref(api_util_call(&md, "POST", "/api/v1/manifests", all, api_util_yaml, 201));
        free(all);
    }
    atomic_store(&halt, 1);
    long ok = 0, bad = 0;
    for (int i = 0; i < READERS; i++) {
        thrd_join(t[i], NULL);
        ok += rd[i].ok, bad += rd[i].bad;
    }
    ck_assert_int_gt(ok, 0);
    ck_assert_int_eq(bad, 0);
    /* every pod is there: ~13 MiB stored in a map that started at 1 MiB */
    json_t *pods =
        api_util_call(&md, "GET", "/api/v1/pods?namespace=t&limit=10000", NULL, NULL, 200);
    ck_assert_uint_eq(json_array_size(json_object_get(pods, "items")), 6001);
    json_decref(pods);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_reads");
    TCase *tc = tcase_create("reads");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_reads_during_map_growth);
    suite_add_tcase(s, tc);
    return check_run(s);
}
