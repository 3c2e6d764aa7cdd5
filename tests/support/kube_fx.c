/* kube_fx.c - see kube_fx.h. */
#include "kube_fx.h"

#include <check.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kube.h"

void kube_fx_options(const struct kube_fx *f, struct kube_options *o)
{
    *o = (struct kube_options)KUBE_OPTIONS_INIT;
    o->kubeconfig = f->api.kubeconfig;
    o->backoff_min_ms = 50;
    o->backoff_max_ms = 400;
    o->missing_retry_ms = 300;
    o->watch_timeout_s = 20;
}

void kube_fx_mirror(struct kube_fx *f, const struct kube_options *o)
{
    struct err err = ERR_INIT;
    ck_assert_msg(kube_open(f->u.s, f->u.st, o, &f->k, &err) == 0, "%s", err.msg);
    ck_assert_msg(kube_start(f->k, &err) == 0, "%s", err.msg);
    ck_assert_msg(kube_wait_synced(f->k, 20000, &err) == 0, "%s", err.msg);
}

void kube_fx_start(struct kube_fx *f, int64_t giveup_ms)
{
    struct kube_options o;
    kube_fx_options(f, &o);
    o.scheduler_name = "muster";
    o.writeback_giveup_ms = giveup_ms;
    kube_fx_mirror(f, &o);
}

void kube_fx_open(struct kube_fx *f)
{
    memset(f, 0, sizeof(*f));
    kube_testapi_start(&f->api, 0, NULL);
    struct sched_options so = {0};
    so.mirrored = 1;
    sched_util_open(&f->u, &so);
    for (int i = 1; i <= 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", i);
        json_t *n = kube_test_node(name, "4", "b0");
        kube_testapi_apply(&f->api, "nodes", n);
        json_decref(n);
    }
}

void kube_fx_close(struct kube_fx *f)
{
    kube_close(f->k);
    sched_util_close(&f->u);
    kube_testapi_stop(&f->api);
}

void kube_fx_put(struct kube_fx *f, const char *res, json_t *obj)
{
    kube_testapi_apply(&f->api, res, obj);
    json_decref(obj);
}

/* A gang of n pods of cpu each, in a PodGroup of group ("podgroups" or the Volcano one). */
void kube_fx_gang(struct kube_fx *f, const char *res, const char *name, int min, int n,
                  const char *cpu)
{
    kube_fx_put(f, res,
                json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", name, "namespace", "default",
                          "spec", "minMember", min));
    for (int i = 0; i < n; i++) {
        char pn[32];
        snprintf(pn, sizeof(pn), "%s-%d", name, i);
        json_t *p = kube_test_pod(pn, "muster", NULL, strcmp(res, "podgroups") ? NULL : name, cpu);
        json_t *md = json_object_get(p, "metadata");
        if (strcmp(res, "podgroups"))
            json_object_set_new(md, "annotations",
                                json_pack("{s:s}", "scheduling.k8s.io/group-name", name));
        json_object_set_new(md, "ownerReferences",
                            json_pack("[{s:s,s:s,s:s,s:s}]", "apiVersion", "batch/v1", "kind",
                                      "Job", "name", name, "uid", "u-1"));
        kube_fx_put(f, "pods", p);
    }
}

json_int_t kube_fx_counter(struct kube_fx *f, const char *name)
{
    json_t *doc = kube_sources_json(f->k);
    json_int_t v = json_integer_value(json_object_get(json_object_get(doc, "counters"), name));
    json_decref(doc);
    return v;
}

void kube_fx_cycle(struct kube_fx *f, int64_t now)
{
    struct err err = ERR_INIT;
    json_decref(sched_util_cycle(&f->u, now));
    ck_assert_msg(kube_wait_writeback(f->k, 15000, &err) == 0, "%s", err.msg);
}

const char *kube_fx_str(json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    ck_assert_msg(v != NULL, "no string '%s'", k);
    return v;
}

void kube_fx_matches(const char *s, const char *re)
{
    regex_t r;
    ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
    int ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    ck_assert_msg(ok, "'%s' does not match /%s/", s, re);
}
