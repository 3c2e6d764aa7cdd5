/*
 * test_manifest_split.c - a big YAML stream (model/manifest_yaml_split.c) or NDJSON body
 * (model/manifest_json.c) read in two parts on two threads gives what the whole read
 * gives: the same documents, numbered the same, on the same lines, or, when a part does
 * not read, no split at all, so that model_manifest_parse answers as the whole read does,
 * error text and all.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/internal.h" /* the split reads and the whole ones */
#include "check_run.h"
#include "err.h"
#include "model.h"

/* A growing text. */
struct text {
    char *s;
    size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = 2 * (t->cap + (size_t)n + 1);
        t->s = realloc(t->s, t->cap);
        ck_assert_ptr_nonnull(t->s);
    }
}

/* Document i of a mixed stream, after its marker: Pods with an anchor, an alias and a
 * merge key, a List of two Nodes, an empty document, a document ended by "..." and one
 * after it with a directive, a block scalar holding an indented "---", comments. */
static void add_doc(struct text *t, int i)
{
    switch (i % 7) {
    case 0:
        add(t,
            "---\n# pod %d\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n"
            "  labels: &l {app: a%d}\n  annotations:\n    <<: *l\n    note: \"x%d\"\n"
            "spec:\n  containers:\n  - name: c\n"
            "    resources: {requests: {cpu: 100m, memory: 1Gi}}\n",
            i, i, i, i);
        break;
    case 1:
        add(t,
            "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: "
            "{name: n%d-a}}\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n%d-b}\n",
            i, i);
        break;
    case 2:
        add(t, "---\n# nothing\n");
        break;
    case 3:
        add(t,
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m%d}\ndata:\n  script: |\n"
            "    ---\n    echo %d\n  flag: yes\n  mode: 0755\n...\n",
            i, i);
        break;
    case 4: /* after a "...", as a directive must be */
        add(t, "%%YAML 1.1\n---\napiVersion: v1\nkind: Node\nmetadata: {name: d%d}\n", i);
        break;
    default:
        add(t,
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%d\nstatus:\n"
            "  allocatable: {cpu: \"32\", memory: 256Gi}\n",
            i);
    }
}

/* A mixed stream of n documents, then the document tail. */
static struct text stream(int n, const char *tail)
{
    struct text t = {0};
    for (int i = 0; i < n; i++)
        add_doc(&t, i);
    add(&t, "---\n%s", tail);
    return t;
}

/* a's documents are b's, numbered alike; with lines, their position maps (NDJSON's: the
 * line) are b's too, else a has none (a YAML read that records no positions). */
static void assert_same_docs(const struct model_manifest *a, const struct model_manifest *b,
                             int lines)
{
    ck_assert_uint_eq(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        ck_assert_int_eq(a->docs[i].index, b->docs[i].index);
        ck_assert_msg(json_equal(a->docs[i].obj, b->docs[i].obj), "document %zu differs", i);
        if (lines)
            ck_assert_msg(json_equal(a->docs[i].pos, b->docs[i].pos), "document %zu's line differs",
                          i);
        else
            ck_assert_ptr_null(a->docs[i].pos);
    }
}

static void assert_same(const struct model_manifest *a, const struct model_manifest *b)
{
    assert_same_docs(a, b, 0);
}

/* Read in two parts, a mixed stream gives the whole read's documents, numbered alike. */
START_TEST(test_yaml_split_same_documents)
{
    struct text t = stream(12000, "apiVersion: v1\nkind: Node\nmetadata: {name: last}\n");
    ck_assert_uint_gt(t.len, MODEL_YAML_SPLIT_BYTES);
    struct model_manifest split = {0}, whole = {0}, parsed;
    struct err err = ERR_INIT;
    ck_assert_int_eq(model__yaml_read_split(t.s, t.len, &split), 0);
    ck_assert_int_eq(model__yaml_parse(t.s, t.len, 0, &whole, &err), 0);
    ck_assert_uint_gt(whole.n, 12000);
    assert_same(&split, &whole);
    /* and model_manifest_parse reads it so */
    ck_assert_int_eq(model_manifest_parse(t.s, t.len, MODEL_FMT_YAML, &parsed, &err), 0);
    assert_same(&parsed, &whole);
    model_manifest_free(&split);
    model_manifest_free(&whole);
    model_manifest_free(&parsed);
    free(t.s);
}
END_TEST

/* A document past the cut that reads but is invalid is refused in the same words, its
 * number and line the whole stream's. */
START_TEST(test_yaml_split_validation_names_the_document)
{
    struct text t = stream(12000, "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n"
                                  "  containers:\n  - name: c\n    resources: {requests: {cpu: "
                                  "lots}}\n");
    struct model_manifest split = {0}, whole = {0};
    struct err err = ERR_INIT;
    ck_assert_int_eq(model__yaml_read_split(t.s, t.len, &split), 0);
    ck_assert_int_eq(model__yaml_parse(t.s, t.len, 0, &whole, &err), 0);
    json_t *e_split = json_array(), *e_whole = json_array();
    /* (the mixed stream's ConfigMaps are refused too: a kind muster does not know) */
    int n = model_validate_all(&split, t.s, t.len, MODEL_FIELDS_STRICT, e_split, NULL);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(model_validate_all(&whole, t.s, t.len, MODEL_FIELDS_STRICT, e_whole, NULL), n);
    ck_assert(json_equal(e_split, e_whole));
    json_t *e = json_array_get(e_split, json_array_size(e_split) - 1);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "document")), (int)whole.n);
    const char *msg = json_string_value(json_object_get(e, "message"));
    ck_assert_msg(strstr(msg, "lots") && strstr(msg, "line"), "%s", msg);
    json_decref(e_split);
    json_decref(e_whole);
    model_manifest_free(&split);
    model_manifest_free(&whole);
    free(t.s);
}
END_TEST

/* A stream whose second part does not read is not split: model_manifest_parse names the
 * problem as the whole read does (its document's number, line and column in the whole
 * stream), and the split read leaves its manifest empty. */
START_TEST(test_yaml_split_errors_read_whole)
{
    static const char *const tails[] = {
        /* a duplicate key */
        "apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\n",
        /* a marker inside a quoted scalar: an error, not a cut */
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: \"a\n--- b\"\n",
        /* an alias to an anchor of an earlier document */
        "apiVersion: v1\nkind: Node\nmetadata: {name: *l}\n",
        /* not YAML */
        "apiVersion: v1\nkind: [Node\n",
    };
    for (size_t k = 0; k < sizeof(tails) / sizeof(tails[0]); k++) {
        struct text t = stream(12000, tails[k]);
        struct model_manifest split = {0}, whole = {0}, parsed;
        struct err e_whole = ERR_INIT, e_parsed = ERR_INIT;
        ck_assert_int_eq(model__yaml_read_split(t.s, t.len, &split), -1);
        ck_assert_uint_eq(split.n, 0);
        ck_assert_ptr_null(split.docs);
        ck_assert_int_eq(model__yaml_parse(t.s, t.len, 0, &whole, &e_whole), ERR_INVALID);
        ck_assert_int_eq(model_manifest_parse(t.s, t.len, MODEL_FMT_YAML, &parsed, &e_parsed),
                         ERR_INVALID);
        ck_assert_str_eq(e_parsed.msg, e_whole.msg);
        ck_assert_msg(strncmp(e_whole.msg, "document ", 9) == 0, "%s", e_whole.msg);
        model_manifest_free(&whole);
        free(t.s);
    }
}
END_TEST

/* The stream's budget for alias expansion is shared: a second part that spends more than
 * its share is read whole, which keeps within the whole budget (the documents as the
 * whole read gives them), or refuses past it with the whole read's words. */
START_TEST(test_yaml_split_alias_budget)
{
    struct text big = {0};
    for (int i = 0; i < 100 * 1024; i++)
        add(&big, "x");
    for (int aliases = 40; aliases <= 400; aliases += 360) {
        struct text tail = {0};
        add(&tail, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a: &s %s\n",
            big.s);
        for (int i = 0; i < aliases; i++)
            add(&tail, "  b%d: *s\n", i);
        struct text t = stream(12000, tail.s);
        size_t whole_budget = model__yaml_budget(t.len);
        /* 40 aliases: over the second part's share (about half), within the whole budget;
         * 400: over both */
        ck_assert(aliases == 40 ? 40 * big.len > whole_budget / 2 && 41 * big.len < whole_budget
                                : 400 * big.len > whole_budget);
        struct model_manifest split = {0}, whole = {0}, parsed;
        struct err e_whole = ERR_INIT, e_parsed = ERR_INIT;
        ck_assert_int_eq(model__yaml_read_split(t.s, t.len, &split), -1);
        int rc = model__yaml_parse(t.s, t.len, 0, &whole, &e_whole);
        ck_assert_int_eq(rc, aliases == 40 ? 0 : ERR_INVALID);
        ck_assert_int_eq(model_manifest_parse(t.s, t.len, MODEL_FMT_YAML, &parsed, &e_parsed), rc);
        if (rc == 0) {
            assert_same(&parsed, &whole);
            model_manifest_free(&parsed);
        } else {
            ck_assert_str_eq(e_parsed.msg, e_whole.msg);
            ck_assert_ptr_nonnull(strstr(e_whole.msg, "alias bomb"));
        }
        model_manifest_free(&whole);
        free(tail.s);
        free(t.s);
    }
    free(big.s);
}
END_TEST

/* Not split: a stream without a marker past its middle. A small stream is
 * split (model_manifest_parse reads one under MODEL_YAML_SPLIT_BYTES whole) and reads as
 * its whole read. */
START_TEST(test_yaml_split_not_split)
{
    struct model_manifest m = {0}, whole = {0};
    struct text one = stream(6000, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n");
    size_t half = one.len;
    for (int i = 0; one.len < 2 * half + 1024; i++)
        add(&one, "  k%d: \"---\"\n", i);
    ck_assert_int_eq(model__yaml_read_split(one.s, one.len, &m), -1);
    ck_assert_int_eq(model_manifest_parse(one.s, one.len, MODEL_FMT_YAML, &whole, NULL), 0);
    ck_assert_uint_gt(whole.n, 6000);
    model_manifest_free(&whole);
    struct text small = stream(100, "");
    ck_assert_uint_lt(small.len, MODEL_YAML_SPLIT_BYTES);
    struct err err = ERR_INIT;
    ck_assert_int_eq(model__yaml_read_split(small.s, small.len, &m), 0);
    ck_assert_int_eq(model__yaml_parse(small.s, small.len, 0, &whole, &err), 0);
    assert_same(&m, &whole);
    model_manifest_free(&m);
    model_manifest_free(&whole);
    free(small.s);
    free(one.s);
}
END_TEST

/* The UTF-16LE code units of the ASCII text s[0..n) after t. */
static void add_utf16(struct text *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        add(t, "%c", s[i]);
        t->s[t->len++] = '\0'; /* add's NUL, kept: the high byte */
    }
}

/* A big UTF-16 stream (libyaml reads it after its byte order mark) reads as its UTF-8
 * text, also when its bytes hold a "\n---\n" past the middle where no line is: U+2D0A
 * U+2D2D and a newline, in a comment, are the bytes 0A 2D 2D 2D 0A 00. */
START_TEST(test_yaml_utf16_reads_as_utf8)
{
    struct text u8 = stream(3000, "apiVersion: v1\nkind: Node\nmetadata: {name: last}\n"),
                u16 = {0};
    /* a line between documents, past the middle of the UTF-16 bytes too */
    const char *at = strstr(u8.s + u8.len / 2 + 64, "\n---\n") + 1;
    size_t head = (size_t)(at - u8.s);
    u16.s = calloc(1, 2), u16.cap = 2;
    add(&u16, "%s", "\xff\xfe");
    add_utf16(&u16, u8.s, head);
    const unsigned char odd[] = {'#', 0, ' ', 0, 0x0a, 0x2d, 0x2d, 0x2d, '\n', 0};
    for (size_t i = 0; i < sizeof(odd); i++) {
        add(&u16, " ");
        u16.s[u16.len - 1] = (char)odd[i];
    }
    add_utf16(&u16, at, u8.len - head);
    ck_assert_uint_ge(u16.len, MODEL_YAML_SPLIT_BYTES);
    ck_assert_ptr_nonnull(memmem(u16.s + u16.len / 2, u16.len - u16.len / 2, "\n---\n", 5));
    struct model_manifest a = {0}, b = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_manifest_parse(u16.s, u16.len, MODEL_FMT_YAML, &a, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(model_manifest_parse(u8.s, u8.len, MODEL_FMT_YAML, &b, NULL), 0);
    ck_assert_uint_gt(b.n, 3000);
    assert_same(&a, &b);
    model_manifest_free(&a);
    model_manifest_free(&b);
    free(u8.s);
    free(u16.s);
}
END_TEST

/* An NDJSON body of n lines: Nodes, a List of two on one line, blank lines, then tail. */
static struct text ndjson(int n, const char *tail)
{
    struct text t = {0};
    for (int i = 0; i < n; i++) {
        if (i % 5 == 0)
            add(&t,
                "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\","
                "\"kind\":\"Node\",\"metadata\":{\"name\":\"a%d\"}},{\"apiVersion\":\"v1\","
                "\"kind\":\"Node\",\"metadata\":{\"name\":\"b%d\"}}]}\n",
                i, i);
        else if (i % 7 == 0)
            add(&t, "  \n");
        else
            add(&t,
                "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\"},"
                "\"status\":{\"allocatable\":{\"cpu\":\"32\"}}}\n",
                i);
    }
    add(&t, "%s", tail);
    return t;
}

/* A big NDJSON body reads as its whole read: the documents, their numbers and their lines
 * (what validation's messages name). */
START_TEST(test_ndjson_split_same_documents)
{
    struct text t = ndjson(5000, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{}}");
    ck_assert_uint_gt(t.len, 256 << 10);
    struct model_manifest parsed, whole = {0};
    struct err err = ERR_INIT;
    ck_assert_int_eq(model_manifest_parse(t.s, t.len, MODEL_FMT_NDJSON, &parsed, &err), 0);
    ck_assert_int_eq(model__ndjson_read(t.s, t.len, 1, &whole, &err), 0);
    ck_assert_uint_gt(whole.n, 5000);
    assert_same_docs(&parsed, &whole, 1);
    json_t *line = json_object_get(parsed.docs[parsed.n - 1].pos, "");
    ck_assert_int_eq(json_integer_value(json_array_get(line, 0)), 5001);
    /* the last document has no name: refused on its line */
    json_t *errors = json_array();
    ck_assert_int_gt(model_validate_all(&parsed, t.s, t.len, MODEL_FIELDS_STRICT, errors, NULL), 0);
    const char *msg = json_string_value(
        json_object_get(json_array_get(errors, json_array_size(errors) - 1), "message"));
    ck_assert_msg(strstr(msg, "line 5001"), "%s", msg);
    json_decref(errors);
    model_manifest_free(&parsed);
    model_manifest_free(&whole);
    free(t.s);
}
END_TEST

/* A bad line is named as the whole read names it: the first one, on its line, wherever the
 * cut falls. */
START_TEST(test_ndjson_split_errors_read_whole)
{
    struct text one = ndjson(5000, "{\"kind\": [}\n");
    struct text two = ndjson(5000, "[1]\n");
    memcpy(strstr(two.s, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n3\""),
           "{\"apiVersion\"  \"v1\"", 19); /* line 4 broken too */
    struct text *bodies[] = {&one, &two};
    const char *want[] = {"line 5001: ", "line 4: "};
    for (size_t k = 0; k < 2; k++) {
        struct model_manifest m;
        struct err e_parsed = ERR_INIT, e_whole = ERR_INIT;
        struct model_manifest whole = {0};
        ck_assert_int_eq(
            model_manifest_parse(bodies[k]->s, bodies[k]->len, MODEL_FMT_NDJSON, &m, &e_parsed),
            ERR_INVALID);
        ck_assert_int_eq(model__ndjson_read(bodies[k]->s, bodies[k]->len, 1, &whole, &e_whole),
                         ERR_INVALID);
        model_manifest_free(&whole);
        ck_assert_str_eq(e_parsed.msg, e_whole.msg);
        ck_assert_msg(strncmp(e_parsed.msg, want[k], strlen(want[k])) == 0, "%s", e_parsed.msg);
        free(bodies[k]->s);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("manifest_split");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_yaml_split_same_documents);
    tcase_add_test(tc, test_yaml_split_errors_read_whole);
    tcase_add_test(tc, test_yaml_split_validation_names_the_document);
    tcase_add_test(tc, test_yaml_split_alias_budget);
    tcase_add_test(tc, test_yaml_split_not_split);
    tcase_add_test(tc, test_yaml_utf16_reads_as_utf8);
    tcase_add_test(tc, test_ndjson_split_same_documents);
    tcase_add_test(tc, test_ndjson_split_errors_read_whole);
    suite_add_tcase(s, tc);
    return check_run(s);
}
