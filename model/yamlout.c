/*
 * yamlout.c - JSON values as kubectl-style YAML, through libyaml's emitter.
 *
 * Block style, sequences not indented under their key, empty collections as {}
 * and []. A string that would re-parse as something else ("true", "123", "")
 * is double-quoted, using the same scalar rules as the reader, so that
 * dump -> parse gives back the same document.
 */
#include "model_manifest.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "alloc.h"

struct out_buf {
    char *p;
    size_t n, cap;
};

static int write_cb(void *data, unsigned char *buffer, size_t size)
{
    struct out_buf *b = data;
    XGROW(b->p, b->n + size + 1, b->cap);
    memcpy(b->p + b->n, buffer, size);
    b->n += size;
    b->p[b->n] = '\0';
    return 1;
}

static int scalar(yaml_emitter_t *em, const char *s, size_t len, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    int plain = style == YAML_ANY_SCALAR_STYLE || style == YAML_PLAIN_SCALAR_STYLE;
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len, plain, !plain, style);
    return yaml_emitter_emit(em, &ev);
}

/* Strings that the reader would not read back as the same string get quotes. */
static int string(yaml_emitter_t *em, const char *s, size_t len)
{
    json_t *r = model__scalar_resolve(s, len);
    int is_string = json_is_string(r);
    json_decref(r);
    if (!is_string || len == 0)
        return scalar(em, s, len, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    if (memchr(s, '\n', len))
        return scalar(em, s, len, YAML_LITERAL_SCALAR_STYLE);
    return scalar(em, s, len, YAML_ANY_SCALAR_STYLE);
}

static int emit_value(yaml_emitter_t *em, json_t *v);

static int emit_object(yaml_emitter_t *em, json_t *v)
{
    yaml_event_t ev;
    const char *k;
    json_t *c;
    yaml_mapping_style_t style =
        json_object_size(v) ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, style);
    if (!yaml_emitter_emit(em, &ev))
        return 0;
    json_object_foreach(v, k, c)
    {
        /* a plain << key is a merge key to the reader: a key named "<<" needs quotes */
        int ok = strcmp(k, "<<") ? string(em, k, strlen(k))
                                 : scalar(em, k, 2, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
        if (!ok || !emit_value(em, c))
            return 0;
    }
    yaml_mapping_end_event_initialize(&ev);
    return yaml_emitter_emit(em, &ev);
}

static int emit_array(yaml_emitter_t *em, json_t *v)
{
    yaml_event_t ev;
    size_t i;
    json_t *c;
    yaml_sequence_style_t style =
        json_array_size(v) ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE;
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, style);
    if (!yaml_emitter_emit(em, &ev))
        return 0;
    json_array_foreach(v, i, c)
    {
        if (!emit_value(em, c))
            return 0;
    }
    yaml_sequence_end_event_initialize(&ev);
    return yaml_emitter_emit(em, &ev);
}

static int emit_value(yaml_emitter_t *em, json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return emit_object(em, v);
    case JSON_ARRAY:
        return emit_array(em, v);
    case JSON_STRING:
        return string(em, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        model__real_format(json_real_value(v), buf, sizeof(buf));
        break;
    case JSON_TRUE:
        snprintf(buf, sizeof(buf), "true");
        break;
    case JSON_FALSE:
        snprintf(buf, sizeof(buf), "false");
        break;
    default:
        snprintf(buf, sizeof(buf), "null");
        break;
    }
    return scalar(em, buf, strlen(buf), YAML_PLAIN_SCALAR_STYLE);
}

char *model_yaml_dump(json_t *value)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    struct out_buf b = {0};
    int ok;

    yaml_emitter_initialize(&em);
    yaml_emitter_set_output(&em, write_cb, &b);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    yaml_emitter_set_indent(&em, 2);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    ok = yaml_emitter_emit(&em, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    ok = ok && yaml_emitter_emit(&em, &ev);
    ok = ok && emit_value(&em, value ? value : json_null());
    yaml_document_end_event_initialize(&ev, 1);
    ok = ok && yaml_emitter_emit(&em, &ev);
    yaml_stream_end_event_initialize(&ev);
    ok = ok && yaml_emitter_emit(&em, &ev);
    ok = ok && yaml_emitter_flush(&em);
    yaml_emitter_delete(&em);
    if (!ok) {
        free(b.p);
        return NULL;
    }
    return b.p ? b.p : xstrdup("");
}
