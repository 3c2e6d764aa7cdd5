/*
 * test_manifest.c - manifest decoding and validation, driven by the case folders
 * tests/data/manifests/{valid,invalid}/<case>/ (adding a case is adding a folder),
 * plus the decoder behaviours the folders cannot show (positions, scalar typing).
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "model.h"
#include "model_support.h"
#include "check_run.h"

/* The input file of a case: input.yaml or input.json. */
static char *read_input(const char *dir, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/input.yaml", dir);
    char *buf = model_test_read(path, len);
    if (!buf) {
        snprintf(path, sizeof(path), "%s/input.json", dir);
        buf = model_test_read(path, len);
    }
    return buf;
}

/* Runs fn on every case folder of kind; returns the number of cases. */
static int for_each_case(const char *kind, void (*fn)(const char *dir, const char *name))
{
    char base[4096];
    int n = 0;
    snprintf(base, sizeof(base), "%s/%s", model_test_data_dir(), kind);
    DIR *d = opendir(base);
    ck_assert_msg(d != NULL, "cannot open %s", base);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char dir[4096 + 256];
        snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
        fn(dir, e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static void check_valid(const char *dir, const char *name)
{
    char path[8192];
    size_t len;
    json_t *docs, *want;
    json_error_t jerr;
    char *buf = read_input(dir, &len);
    ck_assert_msg(buf != NULL, "%s: no input", name);
    json_t *messages = model_test_check(buf, len, &docs);
    ck_assert_msg(json_array_size(messages) == 0, "%s: unexpected error '%s'", name,
                  json_string_value(json_array_get(messages, 0)));
    snprintf(path, sizeof(path), "%s/expected.json", dir);
    want = json_load_file(path, 0, &jerr);
    ck_assert_msg(want != NULL, "%s: expected.json: %s", name, jerr.text);
    if (!json_equal(docs, want)) {
        char *got = json_dumps(docs, JSON_INDENT(2));
        ck_abort_msg("%s: documents differ from expected.json, got:\n%s", name, got);
    }
    json_decref(want);
    json_decref(docs);
    json_decref(messages);
    free(buf);
}

static void check_invalid(const char *dir, const char *name)
{
    char path[8192];
    size_t len, i;
    char *buf = read_input(dir, &len);
    ck_assert_msg(buf != NULL, "%s: no input", name);
    json_t *messages = model_test_check(buf, len, NULL);
    snprintf(path, sizeof(path), "%s/expected.txt", dir);
    char *want = model_test_read(path, NULL);
    ck_assert_msg(want != NULL, "%s: no expected.txt", name);
    char *line = want, *nl;
    for (i = 0; (nl = strchr(line, '\n')) != NULL; i++, line = nl + 1) {
        *nl = '\0';
        const char *got = json_string_value(json_array_get(messages, i));
        ck_assert_msg(got != NULL, "%s: missing error %zu: '%s'", name, i + 1, line);
        ck_assert_msg(!strcmp(got, line), "%s: error %zu\n got: %s\nwant: %s", name, i + 1, got,
                      line);
    }
    ck_assert_msg(i > 0, "%s: expected.txt is empty", name);
    ck_assert_msg(json_array_size(messages) == i, "%s: %zu errors, expected %zu (extra: '%s')",
                  name, json_array_size(messages), i,
                  json_string_value(json_array_get(messages, i)));
    json_decref(messages);
    free(want);
    free(buf);
}

START_TEST(test_manifest_valid_cases)
{
    ck_assert_int_ge(for_each_case("valid", check_valid), 6);
}
END_TEST

START_TEST(test_manifest_invalid_cases)
{
    ck_assert_int_ge(for_each_case("invalid", check_invalid), 12);
}
END_TEST

static json_t *parse_one(const char *text, struct model_manifest *m)
{
    struct err err = ERR_INIT;
    ck_assert_msg(model_manifest_parse_positions(text, strlen(text), MODEL_FMT_AUTO, m, &err) == 0,
                  "%s", err.msg);
    ck_assert_uint_ge(m->n, 1);
    return m->docs[0].obj;
}

static void assert_pos(json_t *pos, const char *path, int line, int col)
{
    json_t *p = json_object_get(pos, path);
    ck_assert_msg(p != NULL, "no position for '%s'", path);
    ck_assert_int_eq(json_integer_value(json_array_get(p, 0)), line);
    ck_assert_int_eq(json_integer_value(json_array_get(p, 1)), col);
}

START_TEST(test_manifest_positions)
{
    struct model_manifest m;
    parse_one("apiVersion: v1\n"
              "kind: Pod\n"
              "metadata:\n"
              "  name: p\n"
              "  labels: {app: web}\n"
              "spec:\n"
              "  containers:\n"
              "  - name: c\n"
              "    resources:\n"
              "      requests:\n"
              "        cpu: 100m\n",
              &m);
    assert_pos(m.docs[0].pos, "kind", 2, 7);
    assert_pos(m.docs[0].pos, "metadata.labels.app", 5, 17);
    assert_pos(m.docs[0].pos, "spec.containers[0].name", 8, 11);
    assert_pos(m.docs[0].pos, "spec.containers[0].resources.requests.cpu", 11, 14);
    model_manifest_free(&m);
    ck_assert_uint_eq(m.n, 0);
}
END_TEST

START_TEST(test_manifest_scalar_typing)
{
    struct model_manifest m;
    json_t *o = parse_one("a: yes\nb: 'yes'\nc: 010\nd: \"010\"\ne: 1.5\nf: ~\ng: 0x1F\n"
                          "h: 12345678901234567890\ni: 1e3\nj: -.5\nk: 1_000\n"
                          "l: 0o7777777777777777777777\nm: 0x1FFFFFFFFFFFFFFFF\n"
                          "n: 07777777777777777777777\n"
                          "o: On\np: NO\nq: Off\nr: Null\ns: TRUE\nt: +1\nu: .5\nv: nope\n"
                          "w: octal\nx: fish\ny: bench\nz: v1\naa:\nab: true\nac: Yes\nad: false\n"
                          "ae: False\naf: null\nag: off\n",
                          &m);
    ck_assert(json_is_true(json_object_get(o, "a")));
    ck_assert_str_eq(json_string_value(json_object_get(o, "b")), "yes");
    ck_assert_int_eq(json_integer_value(json_object_get(o, "c")), 8);
    ck_assert_str_eq(json_string_value(json_object_get(o, "d")), "010");
    ck_assert(json_real_value(json_object_get(o, "e")) == 1.5);
    ck_assert(json_is_null(json_object_get(o, "f")));
    ck_assert_int_eq(json_integer_value(json_object_get(o, "g")), 31);
    ck_assert(json_is_real(json_object_get(o, "h")));
    ck_assert(json_real_value(json_object_get(o, "i")) == 1000.0);
    ck_assert(json_real_value(json_object_get(o, "j")) == -0.5);
    ck_assert_str_eq(json_string_value(json_object_get(o, "k")), "1_000");
    /* 0x and 0o integers too big for int64 stay strings (strtod read 0o... as 0.0); a
     * 1.1-style octal one is a decimal real, as in Go's YAML decoder */
    ck_assert_str_eq(json_string_value(json_object_get(o, "l")), "0o7777777777777777777777");
    ck_assert_str_eq(json_string_value(json_object_get(o, "m")), "0x1FFFFFFFFFFFFFFFF");
    ck_assert(json_real_value(json_object_get(o, "n")) == 7777777777777777777777.0);
    /* the words and numbers by their first letter; other scalars are strings at once */
    ck_assert(json_is_true(json_object_get(o, "o")));
    ck_assert(json_is_false(json_object_get(o, "p")));
    ck_assert(json_is_false(json_object_get(o, "q")));
    ck_assert(json_is_null(json_object_get(o, "r")));
    ck_assert(json_is_true(json_object_get(o, "s")));
    ck_assert_int_eq(json_integer_value(json_object_get(o, "t")), 1);
    ck_assert(json_real_value(json_object_get(o, "u")) == 0.5);
    const char *strings[] = {"v", "nope", "w", "octal", "x", "fish", "y", "bench", "z", "v1"};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i += 2)
        ck_assert_str_eq(json_string_value(json_object_get(o, strings[i])), strings[i + 1]);
    ck_assert(json_is_null(json_object_get(o, "aa")));
    ck_assert(json_is_true(json_object_get(o, "ab")) && json_is_true(json_object_get(o, "ac")));
    ck_assert(json_is_false(json_object_get(o, "ad")) && json_is_false(json_object_get(o, "ae")));
    ck_assert(json_is_null(json_object_get(o, "af")) && json_is_false(json_object_get(o, "ag")));
    model_manifest_free(&m);
}
END_TEST

/* Keys of any length, a key that ends at an escaped NUL as jansson's keys do, and a
 * repeated long key refused. */
START_TEST(test_manifest_keys)
{
    char longkey[301], text[1024];
    memset(longkey, 'k', 300);
    longkey[300] = '\0';
    struct model_manifest m;
    snprintf(text, sizeof(text), "%s: 1\nshort: 2\n\"nul\\0after\": 3\n", longkey);
    json_t *o = parse_one(text, &m);
    ck_assert_int_eq(json_integer_value(json_object_get(o, longkey)), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "short")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "nul")), 3);
    ck_assert_uint_eq(json_object_size(o), 3);
    model_manifest_free(&m);
    struct err err = ERR_INIT;
    snprintf(text, sizeof(text), "%s: 1\n%s: 2\n", longkey, longkey);
    ck_assert_int_eq(model_manifest_parse(text, strlen(text), MODEL_FMT_YAML, &m, &err),
                     ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate key 'kkkk"));
}
END_TEST

START_TEST(test_manifest_list_and_array_flattened)
{
    struct model_manifest m;
    parse_one("apiVersion: v1\nkind: List\nitems:\n"
              "- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"
              "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: b\n"
              "---\n"
              "- {apiVersion: v1, kind: Node, metadata: {name: c}}\n",
              &m);
    ck_assert_uint_eq(m.n, 3);
    for (size_t i = 0; i < m.n; i++)
        ck_assert_int_eq(m.docs[i].index, (int)i + 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(m.docs[1].obj, "metadata"), "name")),
        "b");
    /* positions are re-keyed to the item */
    assert_pos(m.docs[1].pos, "metadata.name", 8, 11);
    assert_pos(m.docs[2].pos, "metadata.name", 10, 49);
    model_manifest_free(&m);
}
END_TEST

START_TEST(test_manifest_empty_and_json)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    ck_assert_int_eq(model_manifest_parse("---\n---\n# nothing\n", 18, MODEL_FMT_AUTO, &m, &err),
                     0);
    ck_assert_uint_eq(m.n, 0);
    model_manifest_free(&m);

    const char *json =
        "  {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}}";
    ck_assert_int_eq(model_manifest_parse(json, strlen(json), MODEL_FMT_AUTO, &m, &err), 0);
    ck_assert_uint_eq(m.n, 1);
    ck_assert_uint_eq(json_object_size(m.docs[0].pos), 0);
    model_manifest_free(&m);

    /* YAML forced as JSON is a JSON syntax error with a position */
    ck_assert_int_eq(model_manifest_parse("a: 1\n", 5, MODEL_FMT_JSON, &m, &err), ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "document 1: ") == err.msg && strstr(err.msg, " at line 1 col"),
                  "%s", err.msg);
    ck_assert_uint_eq(m.n, 0);
}
END_TEST

START_TEST(test_manifest_aliases)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    json_t *o = parse_one("base: &b {x: 1, y: 2}\ncopy: *b\nmerged:\n  <<: *b\n  y: 3\n", &m);
    ck_assert(json_equal(json_object_get(o, "copy"), json_object_get(o, "base")));
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "merged"), "x")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "merged"), "y")), 3);
    model_manifest_free(&m);

    const char *bad = "a: 1\n---\nb: *nowhere\n";
    ck_assert_int_eq(model_manifest_parse(bad, strlen(bad), MODEL_FMT_AUTO, &m, &err), ERR_INVALID);
    ck_assert_str_eq(err.msg, "document 2: unknown alias '*nowhere' at line 3 col 4");
}
END_TEST

/* Found by fuzz/fuzz_rfc3339: a leap second at the end of 9999 parsed and formatted as
 * year 10000, which did not parse back. Times now parse strictly and round-trip. */
START_TEST(test_manifest_timestamps)
{
    static const struct {
        const char *in;
        int ok;
        int64_t ms;
    } cases[] = {
        {"1970-01-01T00:00:00Z", 1, 0},
        {"2026-11-22T03:50:04Z", 1, 1795319404000LL},
        {"2026-11-22T03:50:04.1239Z", 1, 1795319404123LL},
        {"2026-11-22T05:20:04+01:30", 1, 1795319404000LL},
        {"1969-12-31T23:59:59.999z", 1, -1LL},
        {"0000-01-01T00:00:00Z", 1, -62167219200000LL},
        {"9999-12-31T23:59:59.999Z", 1, 253402300799999LL},
        {"2024-02-29T00:00:00Z", 1, 1709164800000LL},
        {"9999-12-31T23:59:60Z", 0, 0},
        {"2026-02-29T00:00:00Z", 0, 0},
        {"0000-01-01T00:00:00+00:01", 0, 0},
        {"2026-11-22T03:50:04+-1:-1", 0, 0},
        {"2026-11-22 03:50:04Z", 0, 0},
        {"2026-1-22T03:50:04Z", 0, 0},
        {"2026-11-22T03:50:04", 0, 0},
        {"2026-11-22T03:50:04.Z", 0, 0},
        {"2026-11-22T24:00:00Z", 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = 0, back = 0;
        char text[64];
        int rc = clock_parse_rfc3339(cases[i].in, &ms, NULL);
        if (!cases[i].ok) {
            ck_assert_msg(rc == ERR_INVALID, "'%s' parsed", cases[i].in);
            continue;
        }
        ck_assert_msg(rc == 0 && ms == cases[i].ms, "'%s': rc %d, %lld", cases[i].in, rc,
                      (long long)ms);
        clock_format_rfc3339_ms(ms, text, sizeof(text));
        ck_assert_int_eq(clock_parse_rfc3339(text, &back, NULL), 0);
        ck_assert_int_eq(back, ms);
    }
}
END_TEST

/* A big List's text (new, its length in *len): head, then n items of item (a format of the
 * item's number) each after sep but the first, then tail. */
static char *big_list(const char *head, const char *item, const char *sep, int n, const char *tail,
                      size_t *len)
{
    size_t cap = strlen(head) + (size_t)n * (strlen(item) + strlen(sep) + 16) + strlen(tail) + 1;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    *len = (size_t)snprintf(buf, cap, "%s", head);
    for (int i = 0; i < n; i++) {
        *len += (size_t)snprintf(buf + *len, cap - *len, "%s", i ? sep : "");
        *len += (size_t)snprintf(buf + *len, cap - *len, item, i);
    }
    *len += (size_t)snprintf(buf + *len, cap - *len, "%s", tail);
    return buf;
}

/* Found by fuzzing model_validate_all: placing errors in a big kind: List re-keyed every
 * field's position once per item (quadratic: a 2.7 MB List took minutes). This checks the
 * error is placed right in a 30,001-item List; speed is not asserted (shared machines),
 * but a quadratic regression would run into the suite's CTest timeout. */
START_TEST(test_manifest_big_list_errors_placed)
{
    size_t len;
    char *buf = big_list("apiVersion: v1\nkind: List\nitems:\n",
                         "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n%d\n"
                         "    labels: {a: b}\n",
                         "", 30000, "- {apiVersion: v1, kind: Node, metadata: {}}\n", &len);
    json_t *messages = model_test_check(buf, len, NULL);
    ck_assert_uint_eq(json_array_size(messages), 1);
    ck_assert_str_eq(json_string_value(json_array_get(messages, 0)),
                     "document 30001 (Node), metadata.name: missing required field at line 150004 "
                     "col 42");
    json_decref(messages);
    free(buf);
}
END_TEST

/* A JSON List over 1 MiB is read in two halves on two threads (model/manifest_json.c): every
 * item a document, in order, and a broken one still refused with jansson's words. */
START_TEST(test_manifest_big_json_list_in_order)
{
    enum { N = 14000 };
    size_t len;
    char *buf = big_list("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[",
                         "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                         "{\"name\":\"n%d\",\"labels\":{\"a\":\"b, [c]\"}}}",
                         ",", N, "],\"metadata\":{}}", &len);
    ck_assert_uint_gt(len, 1 << 20);
    struct model_manifest m;
    struct err err = ERR_INIT;
    ck_assert_int_eq(model_manifest_parse(buf, len, MODEL_FMT_JSON, &m, &err), 0);
    ck_assert_uint_eq(m.n, N);
    for (size_t i = 0; i < m.n; i++) {
        char want[32];
        snprintf(want, sizeof(want), "n%zu", i);
        json_t *md = json_object_get(m.docs[i].obj, "metadata");
        ck_assert_int_eq(m.docs[i].index, (int)i + 1);
        ck_assert_str_eq(json_string_value(json_object_get(md, "name")), want);
    }
    model_manifest_free(&m);
    buf[len - 20] = '}'; /* the last item's "labels" closed too early: broken */
    ck_assert_int_lt(model_manifest_parse(buf, len, MODEL_FMT_JSON, &m, &err), 0);
    ck_assert_msg(strstr(err.msg, "document 1: ") && strstr(err.msg, " at line 1 col "), "%s",
                  err.msg);
    free(buf);
}
END_TEST

/* A JSON array of n documents: nodes first (cheaper to validate), then pods; the pods whose
 * number is 7 modulo 450 request "12x" cpus (invalid), those 3 modulo 700 have an unknown
 * field, and those 11 modulo 1300 are nested 70 levels deep. New, its length in *len. */
static char *mixed_docs(int n, int nodes, size_t *len)
{
    size_t cap = (size_t)n * 400 + 64, at = 0;
    char *buf = malloc(cap);
    buf[at++] = '[';
    for (int i = 0; i < n; i++) {
        if (i)
            buf[at++] = ',';
        if (i < nodes) {
            at += (size_t)snprintf(buf + at, cap - at,
                                   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                                   "{\"name\":\"n%d\"}}",
                                   i);
            continue;
        }
        at += (size_t)snprintf(
            buf + at, cap - at,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\"},"
            "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":"
            "{\"requests\":{\"cpu\":\"%s\"}}}]}",
            i, i % 700 == 3 ? "\"bogus\":1," : "", i % 450 == 7 ? "12x" : "1");
        if (i % 1300 == 11) {
            at += (size_t)snprintf(buf + at, cap - at, ",\"x\":");
            for (int d = 0; d < 70; d++)
                buf[at++] = '[';
            for (int d = 0; d < 70; d++)
                buf[at++] = ']';
        }
        buf[at++] = '}';
    }
    buf[at++] = ']';
    *len = at;
    return buf;
}

/* The documents of the JSON array buf, each problem's document numbers in problems
 * (new: "5,457,..."), as model_validate_all found them in mode. */
static char *problem_docs(const char *buf, size_t len, enum model_fields mode, int warnings)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    ck_assert_int_eq(model_manifest_parse(buf, len, MODEL_FMT_JSON, &m, &err), 0);
    json_t *errors = json_array(), *warned = json_array();
    model_validate_all(&m, buf, len, mode, errors, warned);
    json_t *list = warnings ? warned : errors, *e;
    size_t i, at = 0, cap = 16 * json_array_size(list) + 1;
    char *out = calloc(1, cap);
    json_array_foreach(list, i, e)
    {
        at += (size_t)snprintf(out + at, cap - at, "%s%lld", i ? "," : "",
                               (long long)json_integer_value(json_object_get(e, "document")));
    }
    json_decref(errors);
    json_decref(warned);
    model_manifest_free(&m);
    return out;
}

/* A big manifest is validated, and walked for depth, in halves on two threads
 * (model/manifest.c): the problems come in document order, as one pass in order gives them,
 * and the document named too deep is the first, though each half has one. */
START_TEST(test_manifest_big_problems_in_order)
{
    enum { N = 6000, NODES = 1500 };
    size_t len;
    char *buf = mixed_docs(N, NODES, &len), want[4096] = "", *got;
    size_t at = 0;
    /* strict: the bad quantities and the unknown fields (the deep ones' "x" too), in
     * document order (1-based) */
    for (int i = NODES; i < N; i++)
        if (i % 450 == 7 || i % 700 == 3 || i % 1300 == 11)
            at += (size_t)snprintf(want + at, sizeof(want) - at, "%s%d", at ? "," : "", i + 1);
    got = problem_docs(buf, len, MODEL_FIELDS_STRICT, 0);
    ck_assert_str_eq(got, want);
    free(got);
    /* warn: the unknown fields are warnings, in order */
    at = 0;
    want[0] = '\0';
    for (int i = NODES; i < N; i++)
        if (i % 700 == 3 || i % 1300 == 11)
            at += (size_t)snprintf(want + at, sizeof(want) - at, "%s%d", at ? "," : "", i + 1);
    got = problem_docs(buf, len, MODEL_FIELDS_WARN, 1);
    ck_assert_str_eq(got, want);
    free(got);
    /* depth: the first pod numbered 11 modulo 1300 past the nodes */
    struct model_manifest m;
    struct err err = ERR_INIT;
    ck_assert_int_eq(model_manifest_parse(buf, len, MODEL_FMT_JSON, &m, &err), 0);
    size_t deep = SIZE_MAX;
    char *path = NULL;
    ck_assert_int_eq(model_manifest_too_deep(&m, &deep, &path), 1);
    ck_assert_uint_eq(deep, 2611);
    ck_assert_msg(!strncmp(path, "x[0][0][0]", 10), "%s", path);
    free(path);
    model_manifest_free(&m);
    free(buf);
}
END_TEST

/* Found by fuzz/fuzz_yaml_dump: a key named "<<" was dumped plain and read back as a
 * merge key (merged away, or refused when its value was not a mapping). */
START_TEST(test_manifest_dump_quotes_merge_key)
{
    json_t *v = json_pack("{s{s{si}s{si}}}", "v", "<<", "a", 1, "x", "<<", 1);
    char *yaml = model_yaml_dump(v);
    struct model_manifest m;
    struct err err = ERR_INIT;
    ck_assert_ptr_nonnull(strstr(yaml, "\"<<\": 1"));
    ck_assert_msg(model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_YAML, &m, &err) == 0, "%s",
                  err.msg);
    ck_assert_uint_eq(m.n, 1);
    ck_assert_msg(json_equal(m.docs[0].obj, v), "round trip changed the value:\n%s", yaml);
    model_manifest_free(&m);
    free(yaml);
    json_decref(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("manifest");
    TCase *tc = tcase_create("manifest");
    tcase_add_test(tc, test_manifest_valid_cases);
    tcase_add_test(tc, test_manifest_invalid_cases);
    tcase_add_test(tc, test_manifest_positions);
    tcase_add_test(tc, test_manifest_keys);
    tcase_add_test(tc, test_manifest_scalar_typing);
    tcase_add_test(tc, test_manifest_list_and_array_flattened);
    tcase_add_test(tc, test_manifest_empty_and_json);
    tcase_add_test(tc, test_manifest_aliases);
    tcase_add_test(tc, test_manifest_timestamps);
    tcase_add_test(tc, test_manifest_big_list_errors_placed);
    tcase_add_test(tc, test_manifest_big_json_list_in_order);
    tcase_add_test(tc, test_manifest_big_problems_in_order);
    tcase_add_test(tc, test_manifest_dump_quotes_merge_key);
    suite_add_tcase(s, tc);
    return check_run(s);
}
