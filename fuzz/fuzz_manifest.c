/*
 * fuzz_manifest.c - manifest bytes (YAML or JSON, sniffed) through everything the API
 * does with them: parse, validate (which re-parses with positions when there are
 * problems) and the typed decoders on every document.
 *
 * Invariants: parsing with and without positions gives the same documents; validating
 * again (normalized documents) finds as many problems; a document that validated
 * cleanly decodes with the decoder of its kind; the documents written as JSON are no more
 * than the alias budget (1 MiB plus 4 times the input) beyond a few times the input (an
 * alias bomb is refused before it grows).
 */
#include "fuzz.h"

#include "err.h"
#include "model.h"

static void decode_all(json_t *obj)
{
    struct model_node n;
    struct model_pod p;
    struct model_podgroup g;
    struct model_topology t;
    struct model_queue q;
    /* decoders are defensive (documents may come from an older store): any object */
    if (model_node_decode(obj, &n, NULL) == 0)
        model_node_release(&n);
    if (model_pod_decode(obj, &p, NULL) == 0)
        model_pod_release(&p);
    if (model_podgroup_decode(obj, &g, NULL) == 0)
        model_podgroup_release(&g);
    if (model_topology_decode(obj, &t, NULL) == 0)
        model_topology_release(&t);
    if (model_queue_decode(obj, &q, NULL) == 0)
        model_queue_release(&q);
}

static void decode_valid(json_t *obj)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *api = json_string_value(json_object_get(obj, "apiVersion"));
    enum model_kind k;
    struct err err = ERR_INIT;
    int rc = 0;
    FUZZ_CHECK(model_kind_from_doc(kind, api, &k, NULL) == 0, "valid document of unknown kind");
    if (k == MODEL_NODE) {
        struct model_node n;
        if ((rc = model_node_decode(obj, &n, &err)) == 0)
            model_node_release(&n);
    } else if (k == MODEL_POD) {
        struct model_pod p;
        if ((rc = model_pod_decode(obj, &p, &err)) == 0)
            model_pod_release(&p);
    } else if (k == MODEL_PODGROUP) {
        struct model_podgroup g;
        if ((rc = model_podgroup_decode(obj, &g, &err)) == 0)
            model_podgroup_release(&g);
    } else if (k == MODEL_PRIORITYCLASS) {
        struct model_priorityclass pc;
        if ((rc = model_priorityclass_decode(obj, &pc, &err)) == 0)
            model_priorityclass_release(&pc);
    } else if (k == MODEL_QUEUE) {
        struct model_queue q;
        if ((rc = model_queue_decode(obj, &q, &err)) == 0)
            model_queue_release(&q);
    } else if (k == MODEL_PDB) {
        struct model_pdb b;
        if ((rc = model_pdb_decode(obj, &b, &err)) == 0)
            model_pdb_release(&b);
    } else {
        struct model_topology t;
        if ((rc = model_topology_decode(obj, &t, &err)) == 0)
            model_topology_release(&t);
    }
    /* the groups annotation is checked by the decoder only: allowed to fail */
    FUZZ_CHECK(rc == 0 || k == MODEL_PODGROUP || k == MODEL_POD, "valid %s does not decode: %s",
               kind, err.msg);
    char *key = model_object_key(k, obj);
    FUZZ_CHECK(key && *key, "valid %s has no key", kind);
    free(key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct model_manifest m = {0}, placed = {0};
    struct err err = ERR_INIT;
    const char *buf = (const char *)data;
    int rc = model_manifest_parse(buf, size, MODEL_FMT_AUTO, &m, &err);
    int rc2 = model_manifest_parse_positions(buf, size, MODEL_FMT_AUTO, &placed, NULL);
    FUZZ_CHECK(rc == rc2, "parse %d, parse with positions %d", rc, rc2);
    if (rc < 0) {
        FUZZ_CHECK(m.n == 0 && m.docs == NULL, "failed parse left documents");
        FUZZ_CHECK(*err.msg, "failed parse without a message");
        return 0;
    }
    FUZZ_CHECK(m.n == placed.n, "%zu documents, %zu with positions", m.n, placed.n);
    size_t out = 0;
    for (size_t i = 0; i < m.n; i++) {
        FUZZ_CHECK(json_equal(m.docs[i].obj, placed.docs[i].obj),
                   "document %zu differs with positions", i + 1);
        out += json_dumpb(m.docs[i].obj, NULL, 0, JSON_COMPACT);
    }
    FUZZ_CHECK(out <= (1u << 20) + 16 * size + 64, "%zu bytes of input made %zu bytes of JSON",
               size, out);
    model_manifest_free(&placed);

    json_t *errors = json_array();
    int n = model_validate_all(&m, buf, size, MODEL_FIELDS_STRICT, errors, NULL);
    FUZZ_CHECK(n == (int)json_array_size(errors), "%d problems, %zu errors", n,
               json_array_size(errors));
    int again = 0;
    for (size_t i = 0; i < m.n; i++) {
        json_t *alone = json_array();
        int bad = model_validate_fields(&m.docs[i], MODEL_FIELDS_STRICT, alone, NULL);
        again += bad;
        if (!bad)
            decode_valid(m.docs[i].obj);
        decode_all(m.docs[i].obj);
        json_decref(alone);
    }
    /* model_validate_all relies on it when it validates again to place the problems */
    FUZZ_CHECK(again == n, "validation is not idempotent: %d problems, then %d", n, again);
    json_decref(errors);
    model_manifest_free(&m);
    return 0;
}
