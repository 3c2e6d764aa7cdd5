/*
 * delete.c - `muster delete KIND NAME...` and `muster delete -f FILE|DIR|-`.
 *
 * As kubectl: every object is tried even when one fails (each failure printed), and the
 * exit status is 1 when any did. With -f every file is read and parsed first, so a file
 * that cannot be is an error before anything is deleted.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"

/* Deletes one object; ns is NULL for a cluster-scoped kind. Prints "pod/default/a deleted"
 * ("pod/a" with -o name, the server's reply with -o json|yaml). Returns an exit code. */
static int delete_one(struct cli *cli, enum model_kind kind, const char *ns, const char *name)
{
    struct err err = ERR_INIT;
    json_t *res = NULL;
    char *path = ns ? xasprintf("/api/v1/%s/%s/%s", model_kind_plural(kind), ns, name)
                    : xasprintf("/api/v1/%s/%s", model_kind_plural(kind), name);
    char *k = xstrdup(model_kind_name(kind));
    int rc = CLI_EXIT_OK;
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (cli__call(cli, "DELETE", path, NULL, 0, NULL, &res, &err) < 0) {
        rc = cli__fail(cli, &err);
        json_decref(cli->errors); /* the next object's failure lists only its own */
        cli->errors = NULL;
    } else if (cli->output != CLI_OUT_TABLE && res) {
        cli__print_doc(cli, res);
    } else if (cli->names) {
        printf("%s/%s\n", k, name);
    } else if (ns) {
        printf("%s/%s/%s deleted\n", k, ns, name);
    } else {
        printf("%s/%s deleted\n", k, name);
    }
    fflush(stdout);
    json_decref(res);
    free(path);
    free(k);
    return rc;
}

static int delete_names(struct cli *cli)
{
    struct err err = ERR_INIT;
    enum model_kind kind;
    int rc = CLI_EXIT_OK;
    if (cli->npos < 2)
        return cli__usage_error(cli, "delete needs a kind and at least one name (or -f FILE)");
    if (model_kind_from_resource(cli->pos[0], &kind) < 0)
        return cli__usage_error(cli, "unknown kind '%s'", cli->pos[0]);
    for (size_t i = 1; i < cli->npos; i++) {
        char *ns = NULL, *name = NULL;
        if (!model_kind_namespaced(kind))
            rc |= delete_one(cli, kind, NULL, cli->pos[i]);
        else if (cli__split_id(cli->pos[i], cli__flag(cli, "namespace"), &ns, &name, &err) < 0)
            rc |= cli__fail(cli, &err);
        else
            rc |= delete_one(cli, kind, ns, name);
        free(ns);
        free(name);
    }
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
            rc |= delete_one(cli, kind, ns, name);
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
