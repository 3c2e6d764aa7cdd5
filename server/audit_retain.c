/*
 * audit_retain.c - audit log retention: archive the oldest segment to a file, then prune
 * it behind a signed checkpoint (store_audit_prune), so the kept log still verifies from
 * that checkpoint and the archive verifies on its own (muster audit verify --key).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "audit_sig.h"
#include "err.h"
#include "internal.h"
#include "log.h"
#include "ship.h"
#include "store.h"

struct segment {
    int fd;
    int failed;
};

static int write_record(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct segment *s = ctx;

    (void)seq;
    if (write(s->fd, json, len) != (ssize_t)len || write(s->fd, "\n", 1) != 1) {
        s->failed = errno ? errno : EIO;
        return 1;
    }
    return 0;
}

/* Writes records [first, last] to dir/audit-FIRST-LAST.ndjson, fsynced, via a temporary
 * name so a partial archive never looks complete. Disk I/O in a read transaction only. */
static int archive(struct store *st, const char *dir, uint64_t first, uint64_t last,
                   struct err *err)
{
    char *path = xasprintf("%s/audit-%020" PRIu64 "-%020" PRIu64 ".ndjson", dir, first, last);
    char *tmp = xasprintf("%s.tmp", path);
    struct segment s = {.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
    MDB_txn *txn = NULL;
    int rc = 0;

    if (s.fd < 0) {
        rc = err_set(err, ERR_IO, "cannot write the audit archive '%s': %s", tmp, strerror(errno));
        goto out;
    }
    if ((rc = store_txn_begin(st, STORE_READ, &txn, err)) == 0)
        rc = store_audit_scan(txn, first, last, write_record, &s, err);
    store_txn_abort(&txn);
    if (rc == 0 && (s.failed || fsync(s.fd) != 0 || rename(tmp, path) != 0))
        rc = err_set(err, ERR_IO, "cannot write the audit archive '%s': %s", path,
                     strerror(s.failed ? s.failed : errno));
out:
    if (s.fd >= 0)
        close(s.fd);
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    free(path);
    return rc;
}

int server__audit_retain(struct store *st, const char *dir, uint64_t keep, int hold_unshipped,
                         const struct store_audit_key *key, struct err *err)
{
    uint64_t first = 0, head = 0, ckpt = 0, first_kept = 0, deleted = 0, shipped = 0;
    MDB_txn *txn = NULL;
    int rc;

    if ((rc = store_txn_begin(st, STORE_READ, &txn, err)) == 0 &&
        (rc = store_audit_first_seq(txn, &first, err)) == 0 &&
        (rc = store_audit_last_seq(txn, &head, err)) == 0 &&
        (!hold_unshipped || (rc = ship_cursor_read(txn, &shipped, err)) == 0) &&
        head > keep + first) {
        /* the checkpoint pruned behind may be at most the first record not shipped */
        uint64_t at = head - keep;
        if (hold_unshipped && at > shipped + 1)
            at = shipped + 1;
        rc = store_audit_find_checkpoint(txn, at, &ckpt, err);
    }
    store_txn_abort(&txn);
    if (rc < 0 || ckpt <= first)
        return rc;
    if ((rc = archive(st, dir, first, ckpt - 1, err)) < 0)
        return rc;
    if ((rc = store_audit_prune_write(st, ckpt, key, &first_kept, &deleted, err)) < 0)
        return rc;
    log_info("audit: archived records %" PRIu64 "..%" PRIu64 " to '%s' and pruned them; the log "
             "starts at checkpoint record %" PRIu64,
             first, ckpt - 1, dir, first_kept);
    return 0;
}
