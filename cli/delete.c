/*
 * delete.c - `muster delete KIND NAME...`, `muster delete KIND --all|-l SEL` and
 * `muster delete -f FILE|DIR|-`.
 *
 * As kubectl: every object is tried even when one fails (each failure printed), and the
 * exit status is 1 when any did. With -f every file is read and parsed first, so a file
 * that cannot be is an error before anything is deleted. A job is muster's own: deleting
 * one deletes its member pods and, for a gang, its PodGroup (whichever of them exist).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"

/* Deletes one object; ns is NULL for a cluster-scoped kind. Prints "pod/default/a deleted"
 * ("pod/a" with -o name, the server's reply with -o json|yaml). With missing_ok, a 404 is
 * not a failure and prints nothing. *found (may be NULL) says whether it existed. Returns an
 * exit code. */
static int delete_one(struct cli *cli, enum model_kind kind, const char *ns, const char *name,
                      int missing_ok, int *found)
{
    struct err err = ERR_INIT;
    json_t *res = NULL;
    char *path = ns ? xasprintf("/api/v1/%s/%s/%s", model_kind_plural(kind), ns, name)
                    : xasprintf("/api/v1/%s/%s", model_kind_plural(kind), name);
    char *k = xstrdup(model_kind_name(kind));
    int rc = CLI_EXIT_OK, ret;
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    ret = cli__call(cli, "DELETE", path, NULL, 0, NULL, &res, &err);
    if (found)
        *found = ret != ERR_NOT_FOUND;
    if (ret < 0) {
        if (!missing_ok || ret != ERR_NOT_FOUND)
            rc = cli__fail(cli, &err);
    } else if (cli->output != CLI_OUT_TABLE && res) {
        cli__print_doc(cli, res);
    } else if (cli->names) {
        printf("%s/%s\n", k, name);
    } else if (ns) {
        printf("%s/%s/%s deleted\n", k, ns, name);
    } else {
        printf("%s/%s deleted\n", k, name);
    }
    json_decref(cli->errors); /* the next object's failure lists only its own */
    cli->errors = NULL;
    fflush(stdout);
    json_decref(res);
    free(path);
    free(k);
    return rc;
}

/* A job NS/NAME: its member pods, then (a gang's, or when no job has the name) the PodGroup
 * NS/NAME. Each is printed as it goes; "job 'NS/NAME' not found" when none exists. */
static int delete_job(struct cli *cli, const char *ns, const char *name)
{
    struct err err = ERR_INIT;
    json_t *job = NULL, *m;
    char *path = xasprintf("/api/v1/jobs/%s/%s", ns, name);
    int rc = CLI_EXIT_OK, found = 0, any = 0, ret;
    size_t i;
    ret = cli__call(cli, "GET", path, NULL, 0, NULL, &job, &err);
    json_decref(cli->errors);
    cli->errors = NULL;
    if (ret < 0 && ret != ERR_NOT_FOUND) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    json_array_foreach(json_object_get(job, "members"), i, m)
    {
        const char *pod = json_string_value(json_object_get(m, "name"));
        if (pod) {
            rc |= delete_one(cli, MODEL_POD, ns, pod, 1, &found);
            any |= found;
        }
    }
    const char *jkind = json_string_value(json_object_get(job, "kind"));
    if (!jkind || strcmp(jkind, "pod") != 0) {
        rc |= delete_one(cli, MODEL_PODGROUP, ns, name, 1, &found);
        any |= found;
    }
    if (!any && rc == CLI_EXIT_OK) {
        err_set(&err, ERR_NOT_FOUND, "job '%s/%s' not found", ns, name);
        rc = cli__fail(cli, &err);
    }
out:
    json_decref(job);
    free(path);
    return rc;
}

static int is_job(const char *kind)
{
    return !strcasecmp(kind, "job") || !strcasecmp(kind, "jobs");
}

/* One NAME (or NS/NAME) of a kind; kind is ignored when job is set. */
static int delete_named(struct cli *cli, int job, enum model_kind kind, const char *ns,
                        const char *id)
{
    struct err err = ERR_INIT;
    char *n = NULL, *name = NULL;
    int rc;
    if (!job && !model_kind_namespaced(kind))
        return delete_one(cli, kind, NULL, id, 0, NULL);
    if (cli__split_id(id, ns, &n, &name, &err) < 0)
        rc = cli__fail(cli, &err);
    else
        rc = job ? delete_job(cli, n, name) : delete_one(cli, kind, n, name, 0, NULL);
    free(n);
    free(name);
    return rc;
}

/* --all or -l: every object the list of the kind answers (in -n NS, all namespaces with
 * -A), kept by the selector when one is given. */
static int delete_listed(struct cli *cli, int job, enum model_kind kind, const char *ns)
{
    struct err err = ERR_INIT;
    const char *sel = cli__flag(cli, "selector");
    int all_ns = cli__flag(cli, "all-namespaces") != NULL, rc = CLI_EXIT_OK;
    json_t *doc = NULL, *o;
    size_t i;
    char *path = xasprintf("/api/v1/%s", job ? "jobs" : model_kind_plural(kind));
    if (!job && model_kind_namespaced(kind) && !all_ns)
        cli__query(&path, "namespace", ns);
    if (cli__call(cli, "GET", path, NULL, 0, NULL, &doc, &err) < 0 ||
        (sel && cli__select(cli__items(doc), sel, &err) < 0)) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    if (json_array_size(cli__items(doc)) == 0)
        fprintf(stderr, "No resources found\n");
    json_array_foreach(cli__items(doc), i, o)
    {
        json_t *meta = json_object_get(o, "metadata");
        const char *ons = json_string_value(json_object_get(meta ? meta : o, "namespace"));
        const char *name = json_string_value(json_object_get(meta ? meta : o, "name"));
        if (!name || (job && !all_ns && (!ons || strcmp(ons, ns) != 0)))
            continue;
        if (job)
            rc |= delete_job(cli, ons, name);
        else
            rc |= delete_one(cli, kind, model_kind_namespaced(kind) ? ons : NULL, name, 0, NULL);
    }
out:
    json_decref(doc);
    free(path);
    return rc;
}

static int delete_names(struct cli *cli)
{
    struct err err = ERR_INIT;
    enum model_kind kind = MODEL_POD;
    int rc = CLI_EXIT_OK, job, every = cli__flag(cli, "all") != NULL;
    const char *sel = cli__flag(cli, "selector");
    const char *ns = cli__flag(cli, "namespace");
    if (cli->npos < 1)
        return cli__usage_error(cli, "delete needs a kind and at least one name (or -f FILE)");
    job = is_job(cli->pos[0]);
    if (!job && model_kind_from_resource(cli->pos[0], &kind) < 0)
        return cli__usage_error(cli, "unknown kind '%s'", cli->pos[0]);
    if ((every || sel) && cli->npos > 1)
        return cli__usage_error(cli, "names cannot be given with --all or -l");
    if (!every && !sel && cli->npos < 2)
        return cli__usage_error(cli, "delete %s needs a name, --all or -l SELECTOR", cli->pos[0]);
    if (cli__flag(cli, "all-namespaces") && ns)
        return cli__usage_error(cli, "-n and -A cannot be used together");
    if (cli__flag(cli, "all-namespaces") && !every && !sel)
        return cli__usage_error(cli, "-A needs --all or -l SELECTOR");
    if (sel && job)
        return cli__usage_error(cli, "jobs have no labels: select their pods or podgroups");
    if (sel && cli__select(NULL, sel, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    if (!ns)
        ns = "default";
    if (every || sel)
        return delete_listed(cli, job, kind, ns);
    for (size_t i = 1; i < cli->npos; i++)
        rc |= delete_named(cli, job, kind, ns, cli->pos[i]);
    return rc;
}

/* The object a manifest document names: its kind, namespace (the document's, else -n, else
 * "default"; NULL for a cluster-scoped kind) and name, all borrowed. */
static int doc_target(struct cli *cli, json_t *doc, enum model_kind *kind, const char **ns,
                      const char **name, struct err *err)
{
    json_t *meta = json_object_get(doc, "metadata");
    const char *k = json_string_value(json_object_get(doc, "kind"));
    const char *api = json_string_value(json_object_get(doc, "apiVersion"));
    if (model_kind_from_doc(k ? k : "", api ? api : "", kind, err) < 0)
        return err->code;
    *name = json_string_value(json_object_get(meta, "name"));
    if (!*name || !**name)
        return err_set(err, ERR_INVALID, "a %s without metadata.name", k);
    *ns = NULL;
    if (model_kind_namespaced(*kind)) {
        *ns = json_string_value(json_object_get(meta, "namespace"));
        if (!*ns)
            *ns = cli__flag(cli, "namespace");
        if (!*ns)
            *ns = "default";
    }
    return 0;
}

static int delete_files(struct cli *cli)
{
    struct err err = ERR_INIT;
    char **paths = NULL;
    size_t npaths = 0, i;
    json_t *docs = NULL, *doc;
    int rc = CLI_EXIT_OK;
    if (cli->npos > 0)
        return cli__usage_error(cli, "delete -f takes no kind or name, got '%s'", cli->pos[0]);
    if (cli__manifest_paths(cli, &paths, &npaths, &err) < 0 ||
        cli__load_manifests(cli, paths, npaths, NULL, &docs, &err) < 0) {
        rc = cli__fail(cli, &err);
        goto out;
    }
    json_array_foreach(docs, i, doc)
    {
        enum model_kind kind = MODEL_POD;
        const char *ns = NULL, *name = NULL;
        struct err derr = ERR_INIT;
        if (doc_target(cli, doc, &kind, &ns, &name, &derr) < 0)
            rc |= cli__fail(cli, &derr);
        else
            rc |= delete_one(cli, kind, ns, name, 0, NULL);
    }
out:
    json_decref(docs);
    cli__paths_free(paths, npaths);
    return rc;
}

int cli__cmd_delete(struct cli *cli)
{
    return cli__flag(cli, "filename") ? delete_files(cli) : delete_names(cli);
}
