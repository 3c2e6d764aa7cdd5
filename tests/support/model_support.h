/*
 * model_support.h - helpers for the model suites: reading case files and running
 * a manifest through parse + validate the way the API does.
 */
#ifndef MUSTER_MODEL_SUPPORT_H
#define MUSTER_MODEL_SUPPORT_H

#include <jansson.h>
#include <stddef.h>

/* The whole file as a new NUL-terminated buffer (length in *len), or NULL. */
char *model_test_read(const char *path, size_t *len);

/* Parses and validates buf. Returns a new array of the error messages (the parse
 * error alone, or every validation message); *docs (if not NULL) receives a new
 * array of the normalized documents. */
json_t *model_test_check(const char *buf, size_t len, json_t **docs);

/* The one document of text, parsed and validated (fails the running test otherwise). New. */
json_t *model_test_load_one(const char *text);

/* "$MUSTER_SOURCE_DIR/tests/data/manifests" (or the compiled-in source dir). Static. */
const char *model_test_data_dir(void);

#endif
