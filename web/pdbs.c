/* pdbs.c - GET /api/v1/poddisruptionbudgets?namespace=, GET and DELETE
 * /api/v1/poddisruptionbudgets/{ns}/{name}. */
#include <stdlib.h>

#include "alloc.h"
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "model.h"

void api__pdbs_list(struct req *r)
{
    char *ns = NULL, *prefix = NULL;

    if (api__query_str_or_reply(r, "namespace", &ns) < 0)
        return;
    prefix = ns ? xasprintf("%s/", ns) : NULL;
    api__object_list(r, MODEL_PDB, prefix, NULL, NULL);
    free(prefix);
    free(ns);
}

void api__pdb_get(struct req *r)
{
    char *key = api__ns_key(r);
    json_t *obj = api__object_or_reply(r, MODEL_PDB, key);

    if (obj)
        api__reply_json(r, 200, obj);
    free(key);
}

void api__pdb_delete(struct req *r)
{
    char *key = api__ns_key(r);

    api__object_delete(r, MODEL_PDB, key);
    free(key);
}
