/*
 * explain.c - `muster explain KIND[.field[.field...]]`: the kind or field from the schema
 * muster validates with (model_explain), as kubectl explain prints it: the type, whether
 * muster honours the field (decides with it as kube-scheduler would), knows it (stores it) or
 * does not support it (and what it would change), and the fields below. Offline.
 */
#include <stdio.h>

#include "internal.h"
#include "model.h"

int cli__cmd_explain(struct cli *cli)
{
    struct err err = ERR_INIT;
    json_t *doc = NULL, *f;
    size_t i;
    if (cli->npos != 1)
        return cli__usage_error(cli, "explain needs one KIND or KIND.field.path");
    if (model_explain(cli->pos[0], &doc, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    if (cli->output != CLI_OUT_TABLE) {
        cli__print_doc(cli, doc);
        json_decref(doc);
        return CLI_EXIT_OK;
    }
    const char *path = json_string_value(json_object_get(doc, "path"));
    printf("KIND:   %s\n", json_string_value(json_object_get(doc, "kind")));
    if (path && *path)
        printf("FIELD:  %s <%s> (%s)\n", path, json_string_value(json_object_get(doc, "type")),
               json_string_value(json_object_get(doc, "class")));
    if (json_object_get(doc, "why"))
        printf("NOTE:   not supported: %s\n", json_string_value(json_object_get(doc, "why")));
    json_t *fields = json_object_get(doc, "fields");
    if (!json_array_size(fields)) {
        json_decref(doc);
        return CLI_EXIT_OK;
    }
    static const char *const cols[] = {"field", "type", "muster"};
    struct cli_table *t = cli_table_new(3, cols);
    json_array_foreach(fields, i, f)
    {
        char type[256];
        snprintf(type, sizeof(type), "<%s>", json_string_value(json_object_get(f, "type")));
        const char *row[] = {json_string_value(json_object_get(f, "name")), type,
                             json_string_value(json_object_get(f, "class"))};
        cli_table_add(t, row);
    }
    printf("\n");
    cli_table_print(t, stdout);
    cli_table_free(t);
    json_decref(doc);
    return CLI_EXIT_OK;
}
