/*
 * manifests.c - what `-f` names, for apply and delete: files, directories (their *.yaml,
 * *.yml and *.json files in name order, not recursed) and "-" (stdin), every one read and
 * parsed before the caller sends anything, so one bad file stops them all.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "alloc.h"
#include "internal.h"
#include "model.h"

int cli__read_all(const char *path, char **out, size_t *len, struct err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    *out = NULL;
    if (!f)
        return err_set(err, ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    for (;;) {
        XGROW(buf, n + 65536 + 1, cap);
        size_t got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got < 65536)
            break;
    }
    if (ferror(f)) {
        rc = err_set(err, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        free(buf);
        goto out;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
out:
    if (f != stdin)
        fclose(f);
    return rc;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

const char *cli__content_type(const char *path, const char *buf, size_t len)
{
    if (ends_with(path, ".json"))
        return "application/json";
    if (ends_with(path, ".ndjson") || ends_with(path, ".jsonl"))
        return "application/x-ndjson";
    if (ends_with(path, ".yaml") || ends_with(path, ".yml"))
        return "application/yaml";
    for (size_t i = 0; i < len; i++) {
        if (isspace((unsigned char)buf[i]))
            continue;
        return buf[i] == '{' || buf[i] == '[' ? "application/json" : "application/yaml";
    }
    return "application/yaml";
}

static int is_dir(const char *path)
{
    struct stat st;
    return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends dir's manifest files, sorted by name, to *paths (new strings). */
static int list_dir(const char *dir, char ***paths, size_t *n, size_t *cap, struct err *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t first = *n;
    if (!d)
        return err_set(err, ERR_IO, "cannot open '%s': %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !(ends_with(e->d_name, ".yaml") ||
                                     ends_with(e->d_name, ".yml") || ends_with(e->d_name, ".json")))
            continue;
        XGROW(*paths, *n + 1, *cap);
        (*paths)[(*n)++] = xasprintf("%s%s%s", dir, ends_with(dir, "/") ? "" : "/", e->d_name);
    }
    closedir(d);
    if (*n > first) /* an empty directory leaves *paths NULL, which qsort may not be given */
        qsort(*paths + first, *n - first, sizeof(char *), by_name);
    return 0;
}

int cli__manifest_paths(struct cli *cli, char ***paths, size_t *n, struct err *err)
{
    const char *given[CLI_MAX_FLAGS];
    size_t ng = cli__flag_all(cli, "filename", given, CLI_MAX_FLAGS), cap = 0;
    *paths = NULL;
    *n = 0;
    for (size_t i = 0; i < ng; i++) {
        if (is_dir(given[i])) {
            if (list_dir(given[i], paths, n, &cap, err) < 0)
                return err->code;
            continue;
        }
        XGROW(*paths, *n + 1, cap);
        (*paths)[(*n)++] = xstrdup(given[i]);
    }
    return 0;
}

void cli__paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static enum model_format format_of(const char *ctype)
{
    if (!strcmp(ctype, "application/json"))
        return MODEL_FMT_JSON;
    if (!strcmp(ctype, "application/x-ndjson"))
        return MODEL_FMT_NDJSON;
    return MODEL_FMT_YAML;
}

/* Appends each problem of one file, its message prefixed with the file's name. */
static void add_problems(json_t *all, json_t *problems, const char *path)
{
    size_t i;
    json_t *p;
    json_array_foreach(problems, i, p)
    {
        const char *msg = json_string_value(json_object_get(p, "message"));
        json_t *q = json_deep_copy(p);
        json_object_set_new(q, "message", json_sprintf("%s: %s", path, msg ? msg : "invalid"));
        json_array_append_new(all, q);
    }
}

/* Parses one file's bytes; appends a copy of each document (as parsed) to docs and, when
 * mode is not NULL, each problem validation finds to problems. */
static int parse_one(const char *path, const char *buf, size_t len, const enum model_fields *mode,
                     json_t *docs, json_t *problems, struct err *err)
{
    struct model_manifest m = {0};
    struct err perr = ERR_INIT;
    if (model_manifest_parse(buf, len, format_of(cli__content_type(path, buf, len)), &m, &perr) < 0)
        return err_set(err, ERR_INVALID, "'%s': %s", path, perr.msg);
    for (size_t i = 0; i < m.n; i++)
        json_array_append_new(docs, json_deep_copy(m.docs[i].obj));
    if (mode) {
        json_t *found = json_array();
        model_validate_all(&m, buf, len, *mode, found, NULL);
        add_problems(problems, found, path);
        json_decref(found);
    }
    model_manifest_free(&m);
    return 0;
}

int cli__load_manifests(struct cli *cli, char **paths, size_t n, const enum model_fields *mode,
                        json_t **docs, struct err *err)
{
    json_t *problems = json_array();
    int rc = 0;
    *docs = json_array();
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *buf = NULL;
        size_t len = 0;
        if ((rc = cli__read_all(paths[i], &buf, &len, err)) == 0)
            rc = parse_one(paths[i], buf, len, mode, *docs, problems, err);
        free(buf);
    }
    if (rc == 0 && json_array_size(problems) > 0) {
        size_t np = json_array_size(problems);
        rc = err_set(err, ERR_INVALID, "%zu error%s: nothing was sent", np, np == 1 ? "" : "s");
        json_decref(cli->errors);
        cli->errors = json_incref(problems);
    } else if (rc == 0 && json_array_size(*docs) == 0) {
        rc = err_set(err, ERR_INVALID, "the files hold no documents");
    }
    json_decref(problems);
    if (rc < 0) {
        json_decref(*docs);
        *docs = NULL;
    }
    return rc;
}
