/*
 * tokens.c - the tokens file: named credentials with a role, stored as SHA-256 hashes.
 *
 *     tokens:
 *       - name: alice
 *         role: admin
 *         sha256: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
 *       - name: batch-robot
 *         role: operator
 *         subject: CN=batch-robot,O=ml-platform
 *
 * An entry names either a token's sha256 or, with mTLS (tls_client_ca), a verified client
 * certificate's subject as RFC 2253 prints it (the front end checked the certificate
 * against tls_client_ca; the subject is compared whole). YAML or the same in JSON. The clear token
 * never touches the disk: a presented token is hashed and compared with every entry (no early
 * exit). The file is reloaded when its inode, size or modification time changes, looked at no more
 * than once a second; a file that does not load is logged with its line and the last good entries
 * stay in force.
 */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "access.h"
#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "log.h"
#include "model.h"

#define NAME_MAX_LEN 200

#define SUBJECT_MAX_LEN 500

struct token_entry {
    char name[NAME_MAX_LEN + 1];
    enum api_role role;
    unsigned char sha[32];
    char subject[SUBJECT_MAX_LEN + 1]; /* "" for a token entry */
};

struct stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct api_tokens {
    char *path;
    pthread_mutex_t mu;
    struct token_entry *e;
    size_t n;
    struct stamp loaded; /* of the file in force */
    struct stamp failed; /* of the last file that did not load (logged once) */
    int64_t checked_ns;  /* when the file was last looked at */
};

static int stamp_of(const char *path, struct stamp *s)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return -1;
    *s = (struct stamp){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
    return 0;
}

static int stamp_eq(const struct stamp *a, const struct stamp *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static int hex_digest(const char *hex, unsigned char out[32])
{
    if (!hex || strlen(hex) != 64)
        return -1;
    for (size_t i = 0; i < 32; i++) {
        unsigned v = 0;
        for (size_t k = 0; k < 2; k++) {
            char c = hex[2 * i + k];
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0)
                return -1;
            v = v << 4 | (unsigned)d;
        }
        out[i] = (unsigned char)v;
    }
    return 0;
}

/* "line L" of a field from the YAML positions, or "entry N" (JSON has none). */
static void where(json_t *pos, const char *path, size_t index, char *buf, size_t n)
{
    json_t *p = pos ? json_object_get(pos, path) : NULL;

    if (p)
        snprintf(buf, n, "line %d", (int)json_integer_value(json_array_get(p, 0)));
    else
        snprintf(buf, n, "entry %zu", index + 1);
}

/* Checks one entry into *e. 0 or ERR_INVALID without the file's name. */
static int entry_decode(json_t *item, json_t *pos, size_t i, struct token_entry *e, struct err *err)
{
    char at[64], path[64];
    const char *name = NULL, *role = NULL, *sha = NULL, *subject = NULL, *key;
    json_t *v;

    snprintf(path, sizeof(path), "tokens[%zu]", i);
    where(pos, path, i, at, sizeof(at));
    if (!json_is_object(item))
        return err_set(err, ERR_INVALID,
                       "%s: an entry must be a mapping of name, role and sha256 or subject", at);
    json_object_foreach(item, key, v)
    {
        snprintf(path, sizeof(path), "tokens[%zu].%s", i, key);
        where(pos, path, i, at, sizeof(at));
        if (strcmp(key, "name") && strcmp(key, "role") && strcmp(key, "sha256") &&
            strcmp(key, "subject"))
            return err_set(err, ERR_INVALID,
                           "%s: unknown key '%.64s' (an entry has name, role and sha256 or "
                           "subject; the token itself is never stored, only its SHA-256)",
                           at, key);
        if (!json_is_string(v))
            return err_set(err, ERR_INVALID, "%s: '%s' must be a string", at, key);
        *(!strcmp(key, "name")     ? &name
          : !strcmp(key, "role")   ? &role
          : !strcmp(key, "sha256") ? &sha
                                   : &subject) = json_string_value(v);
    }
    snprintf(path, sizeof(path), "tokens[%zu]", i);
    where(pos, path, i, at, sizeof(at));
    if (!name || !role || (!sha && !subject))
        return err_set(err, ERR_INVALID, "%s: the entry needs '%s'", at,
                       !name   ? "name"
                       : !role ? "role"
                               : "sha256' or 'subject");
    if (sha && subject)
        return err_set(err, ERR_INVALID,
                       "%s: an entry names a token (sha256) or a client certificate (subject), "
                       "not both",
                       at);
    snprintf(path, sizeof(path), "tokens[%zu].name", i);
    where(pos, path, i, at, sizeof(at));
    if (!*name || strlen(name) > NAME_MAX_LEN || strpbrk(name, "\"\\\r\n\t"))
        return err_set(err, ERR_INVALID,
                       "%s: 'name' must be 1 to %d characters without quotes or control "
                       "characters",
                       at, NAME_MAX_LEN);
    snprintf(e->name, sizeof(e->name), "%s", name);
    snprintf(path, sizeof(path), "tokens[%zu].role", i);
    where(pos, path, i, at, sizeof(at));
    if (api_role_parse(role, &e->role, err) < 0)
        return err_prefix(err, "%s", at);
    if (subject) {
        snprintf(path, sizeof(path), "tokens[%zu].subject", i);
        where(pos, path, i, at, sizeof(at));
        if (!*subject || strlen(subject) > SUBJECT_MAX_LEN || strpbrk(subject, "\r\n"))
            return err_set(err, ERR_INVALID,
                           "%s: 'subject' must be a certificate subject as RFC 2253 prints it "
                           "(\"CN=alice,O=team\"), 1 to %d characters on one line",
                           at, SUBJECT_MAX_LEN);
        snprintf(e->subject, sizeof(e->subject), "%s", subject);
        return 0;
    }
    snprintf(path, sizeof(path), "tokens[%zu].sha256", i);
    where(pos, path, i, at, sizeof(at));
    if (hex_digest(sha, e->sha) < 0)
        return err_set(err, ERR_INVALID,
                       "%s: 'sha256' must be 64 hex digits (sha256sum of the token), not "
                       "'%.80s'",
                       at, sha);
    return 0;
}

static int entries_decode(json_t *doc, json_t *pos, struct token_entry **out, size_t *n,
                          struct err *err)
{
    json_t *list = json_object_get(doc, "tokens");
    char at[64];

    *out = NULL;
    *n = 0;
    where(pos, "tokens", 0, at, sizeof(at));
    if (!json_is_object(doc) || !json_is_array(list) || json_object_size(doc) != 1)
        return err_set(err, ERR_INVALID,
                       "line 1: expected a mapping with one key, 'tokens', a "
                       "list of {name, role, sha256}");
    struct token_entry *e = xcalloc(json_array_size(list) + 1, sizeof(*e));
    for (size_t i = 0; i < json_array_size(list); i++) {
        int rc = entry_decode(json_array_get(list, i), pos, i, &e[i], err);
        for (size_t k = 0; rc == 0 && k < i; k++) {
            const char *what = !strcmp(e[k].name, e[i].name) ? "name"
                               : e[i].subject[0]
                                   ? (!strcmp(e[k].subject, e[i].subject) ? "subject" : NULL)
                               : !e[k].subject[0] && !memcmp(e[k].sha, e[i].sha, 32) ? "sha256"
                                                                                     : NULL;
            if (what) {
                char path[64];
                snprintf(path, sizeof(path), "tokens[%zu]", i);
                where(pos, path, i, at, sizeof(at));
                rc = err_set(err, ERR_INVALID, "%s: the %s of entry '%s' repeats entry %zu's", at,
                             what, e[i].name, k + 1);
            }
        }
        if (rc < 0) {
            free(e);
            return rc;
        }
    }
    *out = e;
    *n = json_array_size(list);
    return 0;
}

/* Reads and checks path. 0 or ERR_IO / ERR_INVALID naming the file. */
static int load(const char *path, struct token_entry **out, size_t *n, struct stamp *st,
                struct err *err)
{
    struct model_manifest m = {0};
    size_t len = 0;
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    int rc = 0;

    if (!f || stamp_of(path, st) < 0) {
        rc = err_set(err, ERR_IO, "cannot read tokens file '%s': %s", path, strerror(errno));
        goto out;
    }
    buf = xmalloc((size_t)st->size + 1);
    len = fread(buf, 1, (size_t)st->size, f);
    buf[len] = '\0';
    rc = model_manifest_parse_positions(buf, len, MODEL_FMT_AUTO, &m, err);
    if (rc == 0 && m.n != 1)
        rc = err_set(err, ERR_INVALID, "line 1: expected one document, found %zu", m.n);
    if (rc == 0)
        rc = entries_decode(m.docs[0].obj, m.docs[0].pos, out, n, err);
    if (rc < 0)
        err_prefix(err, "tokens file '%s'", path);
out:
    model_manifest_free(&m);
    free(buf);
    if (f)
        fclose(f);
    return rc;
}

int api__tokens_open(const char *path, struct api_tokens **out, struct err *err)
{
    struct api_tokens *t = xcalloc(1, sizeof(*t));
    int rc = load(path, &t->e, &t->n, &t->loaded, err);

    if (rc < 0) {
        free(t);
        return rc;
    }
    t->path = xstrdup(path);
    pthread_mutex_init(&t->mu, NULL);
    t->checked_ns = clock_mono_ns();
    *out = t;
    log_info("tokens file '%s': %zu credentials", path, t->n);
    return 0;
}

int api__tokens_check(const char *path, struct err *err)
{
    struct token_entry *e = NULL;
    size_t n = 0;
    struct stamp st;
    int rc = load(path, &e, &n, &st, err);
    free(e);
    return rc;
}

void api__tokens_free(struct api_tokens *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->e);
    free(t->path);
    free(t);
}

/* Reloads when the file changed. Under t->mu. */
static void maybe_reload(struct api_tokens *t)
{
    struct err err = ERR_INIT;
    struct stamp now;
    struct token_entry *e = NULL;
    size_t n = 0;
    int64_t ns = clock_mono_ns();

    if (ns - t->checked_ns < 1000000000LL)
        return;
    t->checked_ns = ns;
    if (stamp_of(t->path, &now) < 0 || stamp_eq(&now, &t->loaded) || stamp_eq(&now, &t->failed))
        return;
    if (load(t->path, &e, &n, &now, &err) < 0) {
        t->failed = now;
        log_error("%s; the %zu credentials loaded before stay in force", err.msg, t->n);
        return;
    }
    free(t->e);
    t->e = e;
    t->n = n;
    t->loaded = now;
    log_info("tokens file '%s' reloaded: %zu credentials", t->path, n);
}

int api__tokens_find(struct api_tokens *t, const char *token, struct api_identity *out)
{
    unsigned char sha[32];
    unsigned int len = 0;
    int found = -1;

    EVP_Digest(token, strlen(token), sha, &len, EVP_sha256(), NULL);
    pthread_mutex_lock(&t->mu);
    maybe_reload(t);
    for (size_t i = 0; i < t->n; i++)
        if (CRYPTO_memcmp(sha, t->e[i].sha, sizeof(sha)) == 0 && !t->e[i].subject[0])
            found = (int)i;
    if (found >= 0) {
        snprintf(out->name, sizeof(out->name), "%s", t->e[found].name);
        out->role = t->e[found].role;
        snprintf(out->source, sizeof(out->source), "tokens-file");
    }
    pthread_mutex_unlock(&t->mu);
    return found >= 0 ? 0 : ERR_UNAUTHORIZED;
}

int api__tokens_find_subject(struct api_tokens *t, const char *subject, struct api_identity *out)
{
    int found = -1;

    pthread_mutex_lock(&t->mu);
    maybe_reload(t);
    for (size_t i = 0; i < t->n && found < 0; i++)
        if (t->e[i].subject[0] && !strcmp(t->e[i].subject, subject))
            found = (int)i;
    if (found >= 0) {
        snprintf(out->name, sizeof(out->name), "%s", t->e[found].name);
        out->role = t->e[found].role;
        snprintf(out->source, sizeof(out->source), "client-cert");
    }
    pthread_mutex_unlock(&t->mu);
    return found >= 0 ? 0 : ERR_UNAUTHORIZED;
}
