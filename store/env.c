/*
 * env.c - opening and closing the store: the single-owner lock, the LMDB
 * environment, the named databases, the schema version; sync and stats.
 */
#include "internal.h"

#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "err.h"
#include "log.h"

#define DEFAULT_MAP_SIZE ((size_t)64 << 20)

static const struct {
    const char *name;
    unsigned flags;
} dbs[DBI_COUNT] = {
    [DBI_NODES] = {"nodes", 0},
    [DBI_PODS] = {"pods", 0},
    [DBI_PODGROUPS] = {"podgroups", 0},
    [DBI_TOPOLOGIES] = {"topologies", 0},
    [DBI_PRIORITYCLASSES] = {"priorityclasses", 0},
    [DBI_QUEUES] = {"queues", 0},
    [DBI_PDBS] = {"poddisruptionbudgets", 0},
    [DBI_IDX_POD_NODE] = {"pods_by_node", 0},
    [DBI_IDX_POD_GROUP] = {"pods_by_group", 0},
    [DBI_IDX_PENDING] = {"idx_pending", 0},
    [DBI_POD_BIND] = {"pod_bind", 0},
    [DBI_WHY] = {"why", 0},
    [DBI_PREEMPTIONS] = {"preemptions", 0},
    [DBI_MIRROR] = {"mirror", 0},
    [DBI_TIMESERIES] = {"timeseries", 0},
    [DBI_RESERVATIONS] = {"reservations", 0},
    [DBI_META] = {"meta", 0},
    [DBI_AUDIT] = {"audit", 0},
    [DBI_HISTORY] = {"history", 0},
    [DBI_HISTORY_IX] = {"history_ix", 0},
};

static int mkdir_p(const char *dir, struct err *err)
{
    char *path = xstrdup(dir);
    int rc = 0;

    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) < 0 && errno != EEXIST) {
            rc = err_set(err, ERR_IO, "cannot create directory '%s': %s", path, strerror(errno));
            goto out;
        }
        *p = '/';
    }
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        rc = err_set(err, ERR_IO, "cannot create directory '%s': %s", path, strerror(errno));
out:
    free(path);
    return rc;
}

/* flock, not fcntl locks: they belong to the open file description, so a second
 * store_open in this process is refused too, and they vanish with the process. */
static int take_lock(struct store *st, struct err *err)
{
    char path[4096], buf[32];
    ssize_t n;

    snprintf(path, sizeof(path), "%s/LOCK", st->dir);
    st->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (st->lock_fd < 0)
        return err_set(err, ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    if (flock(st->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno != EWOULDBLOCK)
            return err_set(err, ERR_IO, "cannot lock '%s': %s", path, strerror(errno));
        n = pread(st->lock_fd, buf, sizeof(buf) - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        return err_set(err, ERR_BUSY, "data directory '%s' is in use by another musterd (pid %ld)",
                       st->dir, strtol(buf, NULL, 10));
    }
    n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (ftruncate(st->lock_fd, 0) < 0 || pwrite(st->lock_fd, buf, (size_t)n, 0) != n)
        return err_set(err, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

static int check_schema(struct store *st, MDB_txn *txn, struct err *err)
{
    uint64_t version;
    int rc = store_meta_get_u64(txn, "schema_version", &version, err);

    if (rc < 0)
        return rc;
    /* 0: a new store; 1: no binding records yet, which schema 2 reads as it is; 2: the pod
     * indexes by node and by group were DUPSORT databases, rebuilt as pair keys; 3: no
     * history version read from its object ('L', history.c), which schema 4 reads as it is
     * (a musterd of schema 3 could not read one) */
    if (version < 3 && (rc = store__index_migrate(txn, err)) < 0)
        return rc;
    if (version < STORE_SCHEMA_VERSION)
        return store_meta_put_u64(txn, "schema_version", STORE_SCHEMA_VERSION, err);
    if (version > STORE_SCHEMA_VERSION)
        return err_set(err, ERR_STORE,
                       "data directory '%s' has schema version %llu, newer than this musterd "
                       "supports (%d): upgrade musterd",
                       st->dir, (unsigned long long)version, STORE_SCHEMA_VERSION);
    return 0;
}

static int open_dbs(struct store *st, struct err *err)
{
    MDB_txn *txn = NULL;
    int rc;

    rc = mdb_txn_begin(st->env, NULL, 0, &txn);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot begin the opening transaction");
    for (int i = 0; i < DBI_COUNT; i++) {
        rc = mdb_dbi_open(txn, dbs[i].name, dbs[i].flags | MDB_CREATE, &st->dbi[i]);
        if (rc) {
            mdb_txn_abort(txn);
            return store__mdb_err(st, rc, err, "cannot open a database");
        }
    }
    rc = check_schema(st, txn, err);
    if (rc == 0)
        rc = store__history_open(txn, err);
    if (rc < 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    rc = mdb_txn_commit(txn);
    return rc ? store__mdb_err(st, rc, err, "cannot commit the opening transaction") : 0;
}

static int open_env(struct store *st, size_t map_size, struct err *err)
{
    unsigned flags = MDB_NOTLS;
    int rc;

    if (st->sync == STORE_SYNC_META)
        flags |= MDB_NOMETASYNC;
    else if (st->sync == STORE_SYNC_NONE)
        flags |= MDB_NOSYNC;
    rc = mdb_env_create(&st->env);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot create the environment");
    mdb_env_set_userctx(st->env, st);
    if ((rc = mdb_env_set_maxdbs(st->env, DBI_COUNT + 4)) ||
        (rc = mdb_env_set_mapsize(st->env, map_size ? map_size : DEFAULT_MAP_SIZE)) ||
        (rc = mdb_env_set_maxreaders(st->env, 256)))
        return store__mdb_err(st, rc, err, "cannot configure the environment");
    rc = mdb_env_open(st->env, st->dir, flags, 0644);
    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot open the environment");
        err_prefix(err, "data directory '%s'", st->dir);
        return rc;
    }
    return open_dbs(st, err);
}

int store_open(const struct store_options *opts, struct store **out, struct err *err)
{
    struct store *st = xcalloc(1, sizeof(*st));
    pthread_rwlockattr_t attr;
    int rc;

    *out = NULL;
    if (!opts->dir || !*opts->dir) {
        free(st);
        return err_set(err, ERR_INVALID, "no data directory given");
    }
    char made[4096];
    if (opts->temporary) {
        snprintf(made, sizeof(made), "%s", opts->dir);
        if (!mkdtemp(made)) {
            free(st);
            return err_set(err, ERR_IO, "cannot make a scratch directory from '%s': %s", opts->dir,
                           strerror(errno));
        }
        st->temporary = 1;
    }
    st->dir = xstrdup(opts->temporary ? made : opts->dir);
    st->lock_fd = -1;
    st->sync = opts->sync;
    /* Growth must not starve behind overlapping readers (txn.c explains nesting). */
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&st->grow_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&st->child_mu, NULL);
    atomic_init(&st->grow_pending, 0);
    atomic_init(&st->nchildren, 0);
    atomic_init(&st->write_txn, NULL);
    atomic_init(&st->last_txn, 0);

    if ((rc = mkdir_p(st->dir, err)) < 0 || (rc = take_lock(st, err)) < 0 ||
        (rc = open_env(st, opts->map_size, err)) < 0)
        goto out;
    MDB_envinfo info;
    mdb_env_info(st->env, &info); /* no transaction can be active yet */
    atomic_store(&st->last_txn, (uint64_t)info.me_last_txnid);
    *out = st;
out:
    if (rc < 0)
        store_close(st);
    return rc;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path) < 0 ? -1 : 0;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    if (st->env)
        mdb_env_close(st->env);
    if (st->lock_fd >= 0)
        close(st->lock_fd); /* releases the flock */
    if (st->temporary && nftw(st->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
        log_warn("store: cannot remove the scratch directory '%s': %s", st->dir, strerror(errno));
    pthread_rwlock_destroy(&st->grow_lock);
    pthread_mutex_destroy(&st->child_mu);
    free(st->scratch.buf);
    free(st->hist_pend);
    free(st->dir);
    free(st);
}

int store_sync_parse(const char *s, enum store_sync *out, struct err *err)
{
    for (int i = STORE_SYNC_FULL; i <= STORE_SYNC_NONE; i++) {
        if (s && strcmp(s, store_sync_name((enum store_sync)i)) == 0) {
            *out = (enum store_sync)i;
            return 0;
        }
    }
    return err_set(err, ERR_INVALID, "invalid sync mode '%s' (want full, meta or none)",
                   s ? s : "");
}

const char *store_sync_name(enum store_sync sync)
{
    switch (sync) {
    case STORE_SYNC_FULL:
        return "full";
    case STORE_SYNC_META:
        return "meta";
    case STORE_SYNC_NONE:
        return "none";
    }
    return "unknown";
}

int store_sync(struct store *st, struct err *err)
{
    int rc = mdb_env_sync(st->env, 1);

    return rc ? store__mdb_err(st, rc, err, "cannot sync the store") : 0;
}

int store_stats(struct store *st, struct store_stats *out, struct err *err)
{
    MDB_txn *txn = NULL;
    MDB_envinfo info;
    MDB_stat ms;
    struct stat sb;
    char path[4096];
    int rc;

    memset(out, 0, sizeof(*out));
    rc = store_txn_begin(st, STORE_READ, &txn, err);
    if (rc < 0)
        return rc;
    /* Inside the txn: the map cannot be resized under mdb_env_info. */
    mdb_env_info(st->env, &info);
    mdb_env_stat(st->env, &ms);
    out->map_size = info.me_mapsize;
    out->used_bytes = (info.me_last_pgno + 1) * (size_t)ms.ms_psize;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        if ((rc = mdb_stat(txn, st->dbi[store__kind_dbi[k]], &ms))) {
            rc = store__mdb_err(st, rc, err, "cannot read database statistics");
            goto out;
        }
        out->entries[k] = ms.ms_entries;
    }
    rc = store_audit_last_seq(txn, &out->audit_last_seq, err);
    snprintf(path, sizeof(path), "%s/data.mdb", st->dir);
    if (rc == 0 && stat(path, &sb) == 0)
        out->file_bytes = (size_t)sb.st_size;
out:
    store_txn_abort(&txn);
    return rc;
}
