/*
 * manifest_json.c - JSON and NDJSON manifest bytes to jansson documents (manifest.c
 * dispatches here; YAML stays there).
 */
#include "model_manifest.h"
#include "internal.h"

#include <string.h>

#include "err.h"

int model__json_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err)
{
    json_error_t jerr;
    /* the reader where it can (a scalar at the top is jansson's: JSON_DECODE_ANY) */
    json_t *v = model_json_read(buf, len, 1);
    if (!v)
        v = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!v)
        return err_set(err, ERR_INVALID, "document 1: %s at line %d col %d", jerr.text, jerr.line,
                       jerr.column);
    model__manifest_add(out, v, NULL);
    return 0;
}

/* One JSON value a line; blank lines are skipped. Each document's position map holds its
 * line for the whole document (""), so every problem found in it names that line. */
int model__ndjson_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err)
{
    const char *p = buf, *end = buf + len;
    for (int line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *next_line = nl ? nl + 1 : end;
        size_t i = 0;
        while (i < n && strchr(" \t\r", p[i]))
            i++;
        if (i < n) {
            json_error_t jerr;
            json_t *v = model_json_read(p, n, 1);
            if (!v)
                v = json_loadb(p, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
            if (!v)
                return err_set(err, ERR_INVALID, "line %d: %s at col %d", line, jerr.text,
                               jerr.column);
            if (!json_is_object(v)) {
                json_decref(v);
                return err_set(err, ERR_INVALID, "line %d: an NDJSON line must be one object",
                               line);
            }
            json_t *pos = json_object();
            size_t first = out->n;
            model__manifest_add(out, v, pos);
            for (size_t d = first; d < out->n; d++) { /* the items of a List on the line */
                if (!out->docs[d].pos)
                    out->docs[d].pos = json_object();
                model__pos_set(out->docs[d].pos, "", line, 1);
            }
        }
        p = next_line;
    }
    return 0;
}
