/*
 * audit_key.c - the Ed25519 checkpoint key, signing and checking a checkpoint, its JSON
 * form and the witness file.
 *
 * Ed25519 rather than HMAC-SHA256: whoever verifies an HMAC holds the secret and could
 * forge checkpoints with it. With Ed25519 only musterd holds the private key; auditors,
 * the CLI and a post-mortem verify with the public half.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "audit_sig.h"
#include "clock.h"
#include "err.h"

/* A retired key: its public half only. */
struct retired {
    EVP_PKEY *pkey;
    char id[17];
};

struct store_audit_key {
    EVP_PKEY *pkey;
    int can_sign;
    char id[17];
    struct retired *old; /* oldest first */
    size_t nold;
};

int store_audit_key_load(const char *path, struct store_audit_key **out, struct err *err)
{
    unsigned char raw[32], digest[32];
    size_t rawlen = sizeof(raw);
    unsigned int dlen = sizeof(digest);
    EVP_PKEY *pkey = NULL;
    int can_sign = 1;
    FILE *f = fopen(path, "rb");

    *out = NULL;
    if (!f)
        return err_set(err, ERR_IO, "cannot open audit key '%s': %s", path, strerror(errno));
    pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    if (!pkey) {
        rewind(f);
        pkey = PEM_read_PUBKEY(f, NULL, NULL, NULL);
        can_sign = 0;
    }
    fclose(f);
    if (!pkey || EVP_PKEY_id(pkey) != EVP_PKEY_ED25519 ||
        EVP_PKEY_get_raw_public_key(pkey, raw, &rawlen) != 1) {
        EVP_PKEY_free(pkey);
        return err_set(err, ERR_INVALID,
                       "audit key '%s' is not an Ed25519 private or public key in PEM "
                       "(make one with: openssl genpkey -algorithm ed25519 -out %s)",
                       path, path);
    }
    EVP_Digest(raw, rawlen, digest, &dlen, EVP_sha256(), NULL);
    *out = xcalloc(1, sizeof(**out));
    (*out)->pkey = pkey;
    (*out)->can_sign = can_sign;
    store__hex(digest, 8, (*out)->id);
    return 0;
}

void store_audit_key_free(struct store_audit_key *key)
{
    if (!key)
        return;
    for (size_t i = 0; i < key->nold; i++)
        EVP_PKEY_free(key->old[i].pkey);
    free(key->old);
    EVP_PKEY_free(key->pkey);
    free(key);
}

int store_audit_key_retire(struct store_audit_key *key, const char *path, struct err *err)
{
    struct store_audit_key *k = NULL;
    int rc = store_audit_key_load(path, &k, err);

    if (rc < 0)
        return err_prefix(err, "retired audit key");
    if (store_audit_key_rank(key, k->id) >= 0) {
        rc = err_set(err, ERR_INVALID, "retired audit key '%s' (key '%s') is %s", path, k->id,
                     strcmp(k->id, key->id) ? "listed twice" : "the audit key itself");
        store_audit_key_free(k);
        return rc;
    }
    key->old = xrealloc(key->old, (key->nold + 1) * sizeof(*key->old));
    key->old[key->nold].pkey = k->pkey;
    memcpy(key->old[key->nold].id, k->id, sizeof(k->id));
    key->nold++;
    k->pkey = NULL;
    store_audit_key_free(k);
    return 0;
}

int store_audit_key_retire_list(struct store_audit_key *key, const char *list, struct err *err)
{
    for (const char *p = list ? list : ""; *p;) {
        p += strspn(p, ", \t");
        size_t n = strcspn(p, ",");
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (!n)
            break;
        char *path = xstrndup(p, n);
        int rc = store_audit_key_retire(key, path, err);
        free(path);
        if (rc < 0)
            return rc;
        p += n;
    }
    return 0;
}

int store_audit_key_rank(const struct store_audit_key *key, const char *id)
{
    for (size_t i = 0; i < key->nold; i++)
        if (!strcmp(key->old[i].id, id))
            return (int)i;
    return strcmp(key->id, id) ? -1 : (int)key->nold;
}

size_t store_audit_key_retired(const struct store_audit_key *key, const char **ids, size_t n)
{
    for (size_t i = 0; i < key->nold && i < n; i++)
        ids[i] = key->old[i].id;
    return key->nold;
}

int store_audit_key_can_sign(const struct store_audit_key *key)
{
    return key->can_sign;
}

const char *store_audit_key_id(const struct store_audit_key *key)
{
    return key->id;
}

/* The signed bytes: a fixed text, so the signature never depends on JSON formatting. */
static int message(const struct store_ckpt *cp, char *buf, size_t n)
{
    char h[2 * STORE_CKPT_HASH_LEN + 1];

    store__hex(cp->hash, STORE_CKPT_HASH_LEN, h);
    return snprintf(buf, n, "muster-audit-checkpoint/1 seq=%" PRIu64 " hash=%s time=%s", cp->seq, h,
                    cp->time);
}

int store_ckpt_sign(const struct store_audit_key *key, struct store_ckpt *cp, struct err *err)
{
    char msg[256];
    size_t siglen = STORE_CKPT_SIG_LEN;
    EVP_MD_CTX *ctx;
    int ok, len;

    if (!key->can_sign)
        return err_set(err, ERR_INVALID, "audit key '%s' is a public key: it cannot sign", key->id);
    store__now_rfc3339(cp->time, sizeof(cp->time));
    memcpy(cp->key, key->id, sizeof(cp->key));
    len = message(cp, msg, sizeof(msg));
    ctx = EVP_MD_CTX_new();
    ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key->pkey) == 1 &&
         EVP_DigestSign(ctx, cp->sig, &siglen, (unsigned char *)msg, (size_t)len) == 1;
    EVP_MD_CTX_free(ctx);
    return ok ? 0
              : err_set(err, ERR_INTERNAL, "cannot sign the checkpoint of record %" PRIu64,
                        cp->seq);
}

int store_ckpt_verify(const struct store_audit_key *key, const struct store_ckpt *cp,
                      struct err *err)
{
    char msg[256];
    EVP_MD_CTX *ctx;
    int ok, len, rank = store_audit_key_rank(key, cp->key);

    if (rank < 0)
        return err_set(err, ERR_INVALID,
                       "checkpoint of record %" PRIu64 " is signed by key '%s', not by the "
                       "audit key '%s'%s",
                       cp->seq, cp->key, key->id, key->nold ? " or a retired one" : "");
    EVP_PKEY *pkey = (size_t)rank < key->nold ? key->old[rank].pkey : key->pkey;
    len = message(cp, msg, sizeof(msg));
    ctx = EVP_MD_CTX_new();
    ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
         EVP_DigestVerify(ctx, cp->sig, STORE_CKPT_SIG_LEN, (unsigned char *)msg, (size_t)len) == 1;
    EVP_MD_CTX_free(ctx);
    return ok ? 0
              : err_set(err, ERR_INVALID,
                        "checkpoint of record %" PRIu64 ": the signature does not verify with "
                        "key '%s' (forged or altered)",
                        cp->seq, cp->key);
}

json_t *store_ckpt_json(const struct store_ckpt *cp)
{
    char h[2 * STORE_CKPT_HASH_LEN + 1], s[2 * STORE_CKPT_SIG_LEN + 1];

    store__hex(cp->hash, STORE_CKPT_HASH_LEN, h);
    store__hex(cp->sig, STORE_CKPT_SIG_LEN, s);
    return json_pack("{s:I, s:s, s:s, s:s, s:s}", "seq", (json_int_t)cp->seq, "hash", h, "time",
                     cp->time, "key", cp->key, "sig", s);
}

int store_ckpt_parse(json_t *doc, struct store_ckpt *cp, struct err *err)
{
    json_t *seq = json_object_get(doc, "seq");
    const char *time = json_string_value(json_object_get(doc, "time"));
    const char *key = json_string_value(json_object_get(doc, "key"));

    memset(cp, 0, sizeof(*cp));
    if (!json_is_integer(seq) || json_integer_value(seq) < 1)
        return err_setf(err, ERR_INVALID, "seq", "checkpoint has no positive 'seq'");
    cp->seq = (uint64_t)json_integer_value(seq);
    if (store__unhex(json_string_value(json_object_get(doc, "hash")), cp->hash,
                     STORE_CKPT_HASH_LEN) < 0)
        return err_setf(err, ERR_INVALID, "hash",
                        "checkpoint of record %" PRIu64 " has no 64-digit hex 'hash'", cp->seq);
    if (store__unhex(json_string_value(json_object_get(doc, "sig")), cp->sig, STORE_CKPT_SIG_LEN) <
        0)
        return err_setf(err, ERR_INVALID, "sig",
                        "checkpoint of record %" PRIu64 " has no 128-digit hex 'sig'", cp->seq);
    if (!time || strlen(time) >= sizeof(cp->time) || !key || strlen(key) != 16)
        return err_setf(err, ERR_INVALID, "time",
                        "checkpoint of record %" PRIu64 " needs 'time' and a 16-digit 'key'",
                        cp->seq);
    strcpy(cp->time, time);
    strcpy(cp->key, key);
    return 0;
}

/* ---- the witness file ---- */

int store_witness_append(const char *path, const struct store_ckpt *cp, struct err *err)
{
    json_t *doc = store_ckpt_json(cp);
    char *line = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    size_t len = strlen(line);
    int fd, rc = 0;

    line = xrealloc(line, len + 2);
    line[len++] = '\n';
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, line, len) != (ssize_t)len || fsync(fd) != 0)
        rc = err_set(err, ERR_IO, "cannot append to the audit witness '%s': %s", path,
                     strerror(errno));
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = err_set(err, ERR_IO, "cannot append to the audit witness '%s': %s", path,
                     strerror(errno));
    free(line);
    json_decref(doc);
    return rc;
}

/* Lines are ~300 bytes; the newest complete one is within the last 64 KiB. */
#define WITNESS_TAIL 65536

int store_witness_last(const char *path, struct store_ckpt *out, int *found, struct err *err)
{
    char *buf = NULL, *end, *start;
    struct stat sb;
    off_t off;
    ssize_t n;
    json_error_t je;
    json_t *doc = NULL;
    int fd, rc = 0;

    *found = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        rc = err_set(err, ERR_IO, "cannot read the audit witness '%s': %s", path, strerror(errno));
        goto out;
    }
    off = sb.st_size > WITNESS_TAIL ? sb.st_size - WITNESS_TAIL : 0;
    buf = xmalloc((size_t)(sb.st_size - off) + 1);
    n = pread(fd, buf, (size_t)(sb.st_size - off), off);
    if (n < 0) {
        rc = err_set(err, ERR_IO, "cannot read the audit witness '%s': %s", path, strerror(errno));
        goto out;
    }
    buf[n] = '\0';
    /* the last newline ends the newest complete line; bytes after it are a torn write */
    while (n > 0 && buf[n - 1] != '\n')
        n--;
    while (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n == 0)
        goto out;
    end = buf + n;
    *end = '\0';
    start = memrchr(buf, '\n', (size_t)n);
    start = start ? start + 1 : buf;
    if (start == buf && off > 0) {
        rc = err_set(err, ERR_INVALID, "audit witness '%s': its last line is too long", path);
        goto out;
    }
    doc = json_loads(start, 0, &je);
    if (!doc) {
        rc = err_set(err, ERR_INVALID, "audit witness '%s': last line is not JSON: %s", path,
                     je.text);
        goto out;
    }
    if ((rc = store_ckpt_parse(doc, out, err)) < 0) {
        err_prefix(err, "audit witness '%s': last line", path);
        goto out;
    }
    *found = 1;
out:
    json_decref(doc);
    free(buf);
    if (fd >= 0)
        close(fd);
    return rc;
}
