#include "model_support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "model.h"

char *model_test_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, r;
    if (!f)
        return NULL;
    do {
        if (n + 4097 > cap) {
            cap = cap ? cap * 2 : 8192;
            buf = realloc(buf, cap);
        }
        r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
    } while (r > 0);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

json_t *model_test_check(const char *buf, size_t len, json_t **docs)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    json_t *messages = json_array(), *errors = json_array(), *e;
    size_t i;

    if (docs)
        *docs = json_array();
    if (model_manifest_parse(buf, len, MODEL_FMT_AUTO, &m, &err) < 0) {
        json_array_append_new(messages, json_string(err.msg));
        json_decref(errors);
        return messages;
    }
    model_validate_all(&m, buf, len, MODEL_FIELDS_STRICT, errors, NULL);
    for (i = 0; docs && i < m.n; i++)
        json_array_append(*docs, m.docs[i].obj);
    json_array_foreach(errors, i, e) json_array_append(messages, json_object_get(e, "message"));
    json_decref(errors);
    model_manifest_free(&m);
    return messages;
}

const char *model_test_data_dir(void)
{
    static char dir[4096];
    const char *src = getenv("MUSTER_SOURCE_DIR");
    snprintf(dir, sizeof(dir), "%s/tests/data/manifests", src ? src : MUSTER_SOURCE_DIR);
    return dir;
}

json_t *model_test_load_one(const char *text)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    json_t *errors = json_array();
    ck_assert_msg(model_manifest_parse(text, strlen(text), MODEL_FMT_AUTO, &m, &err) == 0, "%s",
                  err.msg);
    ck_assert_uint_eq(m.n, 1);
    ck_assert_msg(model_validate(&m.docs[0], errors) == 0, "%s",
                  json_string_value(json_object_get(json_array_get(errors, 0), "message")));
    json_t *obj = json_incref(m.docs[0].obj);
    json_decref(errors);
    model_manifest_free(&m);
    return obj;
}
