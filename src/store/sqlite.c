/* sqlite.c — the profile store on SQLite (libsqlite3), the embedded default:
 * one file, WAL journal (readers never wait for the writer), writers wait up
 * to a minute for one another (busy timeout). Placeholders $1..$n are bound
 * by name. */
#include "store/backend.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

struct pk_store_db {
    sqlite3 *h;
    char *path;
    sqlite3_stmt *copy;          /* the bulk INSERT in progress */
    int copy_ncols;
};

static int fail(pk_store_db *db, pk_err *err, const char *what)
{
    return pk_err_set(err, "%s: %s: %s", db->path, what, sqlite3_errmsg(db->h));
}

static void sq_close(pk_store_db *db)
{
    if (!db)
        return;
    if (db->copy)
        sqlite3_finalize(db->copy);
    sqlite3_close(db->h);
    free(db->path);
    free(db);
}

static pk_store_db *sq_open(const char *target, bool create, pk_err *err)
{
    pk_store_db *db = calloc(1, sizeof *db);
    /* messages name the target masked: a PostgreSQL connection string that
     * was not recognised as one (keyword/value form) lands here */
    if (!db || !(db->path = pk_store_masked(target))) {
        free(db);
        pk_err_set(err, "out of memory");
        return NULL;
    }
    struct stat st;
    if (!create && stat(target, &st)) {
        pk_err_errno(err, "%s: no such store (create it with `pgokit store init %s`)", db->path, db->path);
        sq_close(db);
        return NULL;
    }
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(target, &db->h, flags, NULL) != SQLITE_OK) {
        if (db->h)
            fail(db, err, "cannot open");
        else
            pk_err_set(err, "%s: cannot open: out of memory", db->path);
        sq_close(db);
        return NULL;
    }
    sqlite3_extended_result_codes(db->h, 1);
    sqlite3_busy_timeout(db->h, 60000);
    /* A file that is not a database fails here, on the first read (which
     * writes nothing: an empty file stays empty). */
    char *msg = NULL;
    if (sqlite3_exec(db->h, "SELECT count(*) FROM sqlite_master", NULL, NULL, &msg) != SQLITE_OK) {
        pk_err_set(err, "%s: not a usable SQLite database: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        sq_close(db);
        return NULL;
    }
    return db;
}

/* Switching to WAL writes the database header (an empty file becomes a
 * database): done only once the schema check passed or init runs. */
static int sq_ready(pk_store_db *db, pk_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", NULL, NULL, &msg) != SQLITE_OK) {
        pk_err_set(err, "%s: not a usable SQLite database: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int sq_exec(pk_store_db *db, const char *sql, pk_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        pk_err_set(err, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int bind(pk_store_db *db, sqlite3_stmt *st, int n, const pk_store_val *p, pk_err *err)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "$%d", i + 1);
        int idx = sqlite3_bind_parameter_index(st, name);
        if (!idx)
            continue; /* a parameter the statement does not use */
        int rc = p[i].type == PK_SV_INT    ? sqlite3_bind_int64(st, idx, p[i].i)
                 : p[i].type == PK_SV_TEXT ? sqlite3_bind_text(st, idx, p[i].s, -1, SQLITE_STATIC)
                                           : sqlite3_bind_null(st, idx);
        if (rc != SQLITE_OK)
            return fail(db, err, "binding a parameter");
    }
    return 0;
}

static int sq_query(pk_store_db *db, const char *sql, int nparams, const pk_store_val *params,
                    pk_store_row_fn fn, void *ctx, pk_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "preparing a statement");
    int rc = bind(db, st, nparams, params, err);
    int ncols = sqlite3_column_count(st);
    const char *vals[32];
    if (ncols > 32)
        ncols = 32;
    while (!rc) {
        int s = sqlite3_step(st);
        if (s == SQLITE_DONE)
            break;
        if (s != SQLITE_ROW) {
            rc = fail(db, err, "query");
            break;
        }
        for (int i = 0; i < ncols; i++)
            vals[i] = (const char *)sqlite3_column_text(st, i);
        if (fn && fn(ctx, ncols, vals, err))
            rc = -1;
    }
    sqlite3_finalize(st);
    return rc;
}

static int sq_copy_begin(pk_store_db *db, const char *table, const char *cols, int ncols, pk_err *err)
{
    char sql[512];
    int k = snprintf(sql, sizeof sql, "INSERT INTO %s (%s) VALUES (", table, cols);
    for (int i = 0; i < ncols && k < (int)sizeof sql - 8; i++)
        k += snprintf(sql + k, sizeof sql - (size_t)k, "%s?%d", i ? "," : "", i + 1);
    snprintf(sql + k, sizeof sql - (size_t)k, ")");
    if (sqlite3_prepare_v2(db->h, sql, -1, &db->copy, NULL) != SQLITE_OK)
        return fail(db, err, "preparing a bulk insert");
    db->copy_ncols = ncols;
    return 0;
}

static int sq_copy_row(pk_store_db *db, const int64_t *v, pk_err *err)
{
    for (int i = 0; i < db->copy_ncols; i++)
        sqlite3_bind_int64(db->copy, i + 1, v[i]);
    int s = sqlite3_step(db->copy);
    sqlite3_reset(db->copy);
    return s == SQLITE_DONE ? 0 : fail(db, err, "bulk insert");
}

static int sq_copy_end(pk_store_db *db, pk_err *err)
{
    sqlite3_finalize(db->copy);
    db->copy = NULL;
    return 0;
}

const pk_store_backend pk_store_sqlite = {
    .name = "sqlite",
    .id_column = "id INTEGER PRIMARY KEY",
    .begin_write = "BEGIN IMMEDIATE",
    .begin_read = "BEGIN",
    .table_exists = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1",
    .open = sq_open,
    .close = sq_close,
    .ready = sq_ready,
    .exec = sq_exec,
    .query = sq_query,
    .copy_begin = sq_copy_begin,
    .copy_row = sq_copy_row,
    .copy_end = sq_copy_end,
    .in_list = "%s IN (SELECT value FROM json_each(%s))",
    .list_open = '[',
    .list_close = ']',
    .size_sql = "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
};
