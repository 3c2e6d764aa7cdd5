/*
 * base.c - the bottom of store/: the store a transaction belongs to, LMDB codes
 * translated to ERR_*, big-endian keys and stored JSON parsed, hashes as hex and the
 * audit records' time. Every other file of store/ may call these; they call nothing else
 * in store/.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>

#include "clock.h"
#include "err.h"

struct store *store__of(MDB_txn *txn)
{
    return mdb_env_get_userctx(mdb_txn_env(txn));
}

/* 1 when the filesystem of dir has no block left for musterd. */
static int disk_full(const char *dir)
{
    struct statvfs s;
    return dir && statvfs(dir, &s) == 0 && s.f_bavail == 0;
}

int store__mdb_err(struct store *st, int rc, struct err *err, const char *what)
{
    switch (rc) {
    case MDB_MAP_FULL:
        if (st)
            atomic_store(&st->grow_pending, 1);
        return err_set(err, ERR_MAP_FULL, "%s: store map full (it grows when the transaction ends)",
                       what);
    case MDB_NOTFOUND:
        return err_set(err, ERR_NOT_FOUND, "%s: not found", what);
    case MDB_BAD_VALSIZE:
        return err_set(err, ERR_INVALID, "%s: key too long or empty", what);
    case ENOSPC:
    case EDQUOT:
        return err_set(err, ERR_MAP_FULL, "%s: the disk holding the store is full (%s)", what,
                       mdb_strerror(rc));
    case EIO:
        /* a write to a full disk through the map comes back as EIO */
        if (st && disk_full(st->dir))
            return err_set(err, ERR_MAP_FULL, "%s: the disk holding the store is full (%s)", what,
                           mdb_strerror(rc));
        return err_set(err, ERR_STORE, "%s: %s", what, mdb_strerror(rc));
    default:
        return err_set(err, ERR_STORE, "%s: %s", what, mdb_strerror(rc));
    }
}

void store__be64_put(unsigned char out[8], uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (unsigned char)(v & 0xff);
}

uint64_t store__be64_get(const unsigned char in[8])
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = (v << 8) | in[i];
    return v;
}

json_t *store__json_load(const char *s, size_t n, json_error_t *jerr)
{
    return model_json_load(s, n, jerr);
}

void store__hex(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

int store__unhex(const char *s, unsigned char *out, size_t n)
{
    if (!s || strlen(s) != 2 * n)
        return -1;
    for (size_t i = 0; i < 2 * n; i++) {
        int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        out[i / 2] = (unsigned char)(i % 2 ? (out[i / 2] << 4) | d : d);
    }
    return 0;
}

void store__now_rfc3339(char *buf, size_t n)
{
    /* a cycle writes thousands of records in the same millisecond: formatted once */
    static _Thread_local int64_t last_ms = -1;
    static _Thread_local char last[64];
    int64_t now = clock_now_ms();
    if (now != last_ms) {
        clock_format_rfc3339_ms(now, last, sizeof(last));
        last_ms = now;
    }
    size_t l = strlen(last);
    if (n == 0)
        return;
    l = l < n ? l : n - 1;
    memcpy(buf, last, l);
    buf[l] = '\0';
}
