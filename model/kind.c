/*
 * kind.c - the kinds muster knows, their API groups and resource names.
 */
#include "model_kind.h"

#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "err.h"

struct kind_info {
    const char *name;
    const char *api_version; /* what muster writes */
    const char *group;       /* NULL: core group, apiVersion must be exactly "v1" */
    const char *group2;      /* a second group of the same kind, or NULL */
    const char *plural;
    const char *aliases[4];
    int namespaced;
};

static const struct kind_info kinds[MODEL_KIND_COUNT] = {
    [MODEL_NODE] = {"Node", "v1", NULL, NULL, "nodes", {"node", "no", NULL}, 0},
    [MODEL_POD] = {"Pod", "v1", NULL, NULL, "pods", {"pod", "po", NULL}, 1},
    /* scheduler-plugins' (Koordinator's) and Volcano's: one kind, one store key */
    [MODEL_PODGROUP] = {"PodGroup",
                        "scheduling.sigs.k8s.io/v1alpha1",
                        "scheduling.sigs.k8s.io",
                        MODEL_GROUP_VOLCANO,
                        "podgroups",
                        {"podgroup", "pg", "pgs", NULL},
                        1},
    [MODEL_TOPOLOGY] = {"ClusterNetworkTopology",
                        "scheduling.koordinator.sh/v1alpha1",
                        "scheduling.koordinator.sh",
                        NULL,
                        "clusternetworktopologies",
                        {"clusternetworktopology", "cnt", NULL},
                        0},
    [MODEL_PRIORITYCLASS] = {"PriorityClass",
                             "scheduling.k8s.io/v1",
                             "scheduling.k8s.io",
                             NULL,
                             "priorityclasses",
                             {"priorityclass", "pc", NULL},
                             0},
    [MODEL_QUEUE] = {"Queue",
                     MODEL_GROUP_VOLCANO "/v1beta1",
                     MODEL_GROUP_VOLCANO,
                     NULL,
                     "queues",
                     {"queue", "q", NULL},
                     0},
    [MODEL_PDB] = {"PodDisruptionBudget",
                   "policy/v1",
                   "policy",
                   NULL,
                   "poddisruptionbudgets",
                   {"poddisruptionbudget", "pdb", NULL},
                   1},
};

static int kind_ok(enum model_kind kind)
{
    return (int)kind >= 0 && kind < MODEL_KIND_COUNT;
}

const char *model_kind_name(enum model_kind kind)
{
    return kind_ok(kind) ? kinds[kind].name : "Unknown";
}

const char *model_kind_api_version(enum model_kind kind)
{
    return kind_ok(kind) ? kinds[kind].api_version : "";
}

const char *model_kind_plural(enum model_kind kind)
{
    return kind_ok(kind) ? kinds[kind].plural : "";
}

int model_kind_namespaced(enum model_kind kind)
{
    return kind_ok(kind) ? kinds[kind].namespaced : 0;
}

int model_kind_from_resource(const char *resource, enum model_kind *out)
{
    if (!resource)
        return ERR_INVALID;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const struct kind_info *ki = &kinds[k];
        int hit = !strcasecmp(resource, ki->plural) || !strcasecmp(resource, ki->name);
        for (int a = 0; !hit && ki->aliases[a]; a++)
            hit = !strcasecmp(resource, ki->aliases[a]);
        if (hit) {
            *out = (enum model_kind)k;
            return 0;
        }
    }
    return ERR_INVALID;
}

/* "group/version" with a non-empty version and nothing after it. */
static int group_matches(const char *api_version, const char *group)
{
    size_t n = strlen(group);
    if (strncmp(api_version, group, n) != 0 || api_version[n] != '/')
        return 0;
    const char *version = api_version + n + 1;
    return *version && !strchr(version, '/');
}

int model_kind_from_doc(const char *kind, const char *api_version, enum model_kind *out,
                        struct err *err)
{
    if (!kind || !*kind)
        return err_setf(err, ERR_INVALID, "kind", "kind must be set");
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const struct kind_info *ki = &kinds[k];
        if (strcmp(kind, ki->name) != 0)
            continue;
        if (!api_version || !*api_version)
            return err_setf(err, ERR_INVALID, "apiVersion", "apiVersion must be set");
        int ok = ki->group ? group_matches(api_version, ki->group) ||
                                 (ki->group2 && group_matches(api_version, ki->group2))
                           : !strcmp(api_version, ki->api_version);
        if (!ok)
            return err_setf(err, ERR_INVALID, "apiVersion", "unknown apiVersion '%s' for kind '%s'",
                            api_version, kind);
        *out = (enum model_kind)k;
        return 0;
    }
    return err_setf(err, ERR_INVALID, "kind", "unknown kind '%s'", kind);
}

char *model_object_key(enum model_kind kind, json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!name)
        return NULL;
    if (!model_kind_namespaced(kind))
        return xstrdup(name);
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (!ns || !*ns)
        ns = "default";
    size_t a = strlen(ns), b = strlen(name); /* one per document of an apply: no printf */
    char *key = xmalloc(a + 1 + b + 1);
    memcpy(key, ns, a);
    key[a] = '/';
    memcpy(key + a + 1, name, b + 1);
    return key;
}
