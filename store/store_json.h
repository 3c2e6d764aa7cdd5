/*
 * store_json.h - the store's JSON writer (jsonw.c): jansson's compact output, byte for byte,
 * several times faster; whole values (store_json_text) or texts written member by member
 * (struct store_jw). Part of store.h, which includes it.
 */
#ifndef MUSTER_STORE_JSON_H
#define MUSTER_STORE_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* v as JSON text, exactly as json_dumps(v, JSON_COMPACT | flags) writes it, for flags 0 or
 * JSON_SORT_KEYS (the writer the store keeps every value with, store/jsonw.c), several
 * times faster. New (free). */
char *store_json_text(json_t *v, size_t flags);

/* A JSON text written piece by piece with store_json_text's rules (git's strbuf, for JSON):
 * for records built from typed facts, where a jansson tree would be built only to be
 * written once. Nothing is checked: the caller writes a well-formed value.
 *
 *     struct store_jw w = STORE_JW_INIT;
 *     store_jw_raw(&w, "{", 1);
 *     store_jw_key(&w, "job"); store_jw_str(&w, id);     a ',' first unless after '{' or '['
 *     store_jw_key(&w, "cycle"); store_jw_int(&w, n);
 *     store_jw_raw(&w, "}", 1);                          w.buf[0 .. w.len): the text
 *     store_jw_release(&w);                              (or w.len = 0 to write another)
 */
struct store_jw {
    char *buf; /* not NUL-terminated */
    size_t len, cap;
};
#define STORE_JW_INIT                                                                              \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }
void store_jw_release(struct store_jw *w);
/* s[0..n) as it is (JSON text already written). */
void store_jw_raw(struct store_jw *w, const char *s, size_t n);
#define store_jw_lit(w, lit) store_jw_raw((w), (lit), sizeof(lit) - 1)
/* s (n bytes; store_jw_str: a C string, its length folded for a literal) as a JSON string,
 * escaped. */
void store_jw_strn(struct store_jw *w, const char *s, size_t n);
static inline void store_jw_str(struct store_jw *w, const char *s)
{
    store_jw_strn(w, s, strlen(s));
}
void store_jw_int(struct store_jw *w, int64_t v);
/* v as jansson writes a real. */
void store_jw_real(struct store_jw *w, double v);
/* v as store_json_text(v, flags) writes it ("null" for NULL). */
void store_jw_value(struct store_jw *w, json_t *v, size_t flags);
/* An object member's key: ',' unless the text ends in '{' or '[', then "key": (n bytes;
 * store_jw_key: a C string, its length folded for a literal). */
void store_jw_keyn(struct store_jw *w, const char *key, size_t n);
static inline void store_jw_key(struct store_jw *w, const char *key)
{
    store_jw_keyn(w, key, strlen(key));
}

#endif
