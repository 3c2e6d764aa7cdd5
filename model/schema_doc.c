/*
 * schema_doc.c - the field schema as Markdown (docs/pod-spec.md's "Fields" section), so the
 * documentation is the schema: test_model_fields_doc compares the two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_manifest.h"
#include "schema.h"

/* Far deeper than the schema nests; a guard should a recursive type ever be added. */
#define DOC_MAX_DEPTH 24

static int all_honoured(const struct model__type *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->fields[i].cls != MODEL__HONOURED)
            return 0;
    return 1;
}

static void child_path(char *buf, size_t n, const char *path, const struct model__field *f)
{
    const char *list = f->shape == MODEL__OBJECTS || f->shape == MODEL__LIST ? "[]" : "";
    if (snprintf(buf, n, "%s%s%s%s", path, *path ? "." : "", f->name, list) >= (int)n)
        buf[n - 1] = '\0'; /* no field path is that long; one would only read cut */
}

/* The honoured fields under t; the known fields beside them go to known, one line per
 * object. */
static void honoured(FILE *out, FILE *known, const struct model__type *t, const char *path,
                     int depth)
{
    char p[512], *names = NULL;
    size_t nlen = 0;
    int any_known = 0;
    FILE *here = open_memstream(&names, &nlen);
    for (size_t i = 0; i < t->n && depth < DOC_MAX_DEPTH; i++) {
        const struct model__field *f = &t->fields[i];
        child_path(p, sizeof(p), path, f);
        if (f->cls == MODEL__KNOWN) {
            fprintf(here, "%s`%s`", any_known++ ? ", " : "- ", f->name);
            continue;
        }
        if (f->cls != MODEL__HONOURED)
            continue;
        if (!f->type)
            fprintf(out, "- `%s`\n", p);
        else if (all_honoured(f->type))
            fprintf(out, "- `%s` and every field under it\n", p);
        else
            honoured(out, known, f->type, p, depth + 1);
    }
    fclose(here);
    if (any_known)
        fprintf(known, *path ? "%s (in `%s`)\n" : "%s (at the top level)\n", names, path);
    free(names);
}

/* Every unsupported field under t, by every path that reaches it. */
static void unsupported(FILE *out, const struct model__type *t, const char *path, int depth)
{
    char p[512];
    for (size_t i = 0; i < t->n && depth < DOC_MAX_DEPTH; i++) {
        const struct model__field *f = &t->fields[i];
        child_path(p, sizeof(p), path, f);
        if (f->cls == MODEL__UNSUPPORTED)
            fprintf(out, "- `%s`: %s\n", p, f->why);
        else if (f->type)
            unsupported(out, f->type, p, depth + 1);
    }
}

char *model_fields_doc(void)
{
    static const enum model_kind kinds[] = {MODEL_POD,      MODEL_NODE,          MODEL_PODGROUP,
                                            MODEL_TOPOLOGY, MODEL_PRIORITYCLASS, MODEL_QUEUE,
                                            MODEL_PDB};
    char *buf = NULL, *kbuf = NULL;
    size_t len = 0, klen = 0;
    FILE *out = open_memstream(&buf, &len);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        const struct model__type *root = model__schema_root(kinds[k]);
        FILE *known = open_memstream(&kbuf, &klen);
        fprintf(out, "### %s\n\nHonoured (muster's scheduler reads them):\n\n",
                model_kind_name(kinds[k]));
        honoured(out, known, root, "", 0);
        fclose(known);
        fprintf(out,
                "\nKnown, accepted and stored, not read: every other field of the schema, "
                "among them\n\n%s\nRefused (not supported by muster), with what each "
                "would change:\n\n",
                kbuf);
        free(kbuf);
        kbuf = NULL;
        long before = ftell(out);
        unsupported(out, root, "", 0);
        if (ftell(out) == before)
            fputs("- none\n", out);
        fputs("\n", out);
    }
    fclose(out);
    return buf;
}
