/* pg.c — the profile store on PostgreSQL (libpq), the server for a fleet.
 * Parameters travel separately from the SQL text (PQexecParams), results
 * stream row by row (single-row mode), bulk rows go through COPY FROM STDIN
 * in text format (integers only, so nothing needs escaping). Messages name
 * the connection string with any password masked. */
#include "store/backend.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>

struct pk_store_db {
    PGconn *c;
    char *where;                 /* the connection string, password masked */
    char *buf;                   /* COPY rows not yet sent */
    size_t len, cap;
    int copy_ncols;
};

/* libpq messages end with a newline (sometimes two lines): one line here */
static const char *oneline(char *m)
{
    for (char *q = m; *q; q++)
        if (*q == '\n')
            *q = q[1] ? ' ' : 0;
        else if (*q == '\t')
            *q = ' ';
    return m;
}

static int fail(pk_store_db *db, pk_err *err, const char *what, const char *msg)
{
    char m[PK_ERR_MAX];
    snprintf(m, sizeof m, "%s", msg ? msg : PQerrorMessage(db->c));
    return pk_err_set(err, "%s: %s: %s", db->where, what, oneline(m));
}

static void quiet_notices(void *arg, const char *message) {}

static void pg_close(pk_store_db *db)
{
    if (!db)
        return;
    PQfinish(db->c);
    free(db->where);
    free(db->buf);
    free(db);
}

static pk_store_db *pg_open(const char *target, bool create, pk_err *err)
{
    pk_store_db *db = calloc(1, sizeof *db);
    if (!db || !(db->where = pk_store_masked(target))) {
        free(db);
        pk_err_set(err, "out of memory");
        return NULL;
    }
    /* the connection string's own settings win over these defaults */
    const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *vals[] = {"10", "pgokit-store", target, NULL};
    db->c = PQconnectdbParams(keys, vals, 1);
    if (!db->c || PQstatus(db->c) != CONNECTION_OK) {
        if (db->c) {
            fail(db, err, "cannot connect", NULL);
            pk_store_scrub(err->msg, target); /* libpq may quote the bad part of it */
        } else
            pk_err_set(err, "%s: cannot connect: out of memory", db->where);
        pg_close(db);
        return NULL;
    }
    PQsetNoticeProcessor(db->c, quiet_notices, NULL);
    return db;
}

static int check(pk_store_db *db, PGresult *r, const char *what, pk_err *err)
{
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    int rc = 0;
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && s != PGRES_SINGLE_TUPLE)
        rc = fail(db, err, what, r ? PQresultErrorMessage(r) : NULL);
    return rc;
}

static int pg_exec(pk_store_db *db, const char *sql, pk_err *err)
{
    PGresult *r = PQexec(db->c, sql);
    int rc = check(db, r, "statement failed", err);
    PQclear(r);
    return rc;
}

static int pg_query(pk_store_db *db, const char *sql, int nparams, const pk_store_val *params,
                    pk_store_row_fn fn, void *ctx, pk_err *err)
{
    /* up to a multi-row INSERT's worth (store.c inserts contexts 64 rows
     * of 3 values at a time) */
    char ints[PK_STORE_MAX_PARAMS][24];
    const char *pv[PK_STORE_MAX_PARAMS];
    if (nparams > PK_STORE_MAX_PARAMS)
        return pk_err_set(err, "%s: too many parameters", db->where);
    for (int i = 0; i < nparams; i++) {
        if (params[i].type == PK_SV_INT) {
            snprintf(ints[i], sizeof ints[i], "%lld", (long long)params[i].i);
            pv[i] = ints[i];
        } else {
            pv[i] = params[i].type == PK_SV_TEXT ? params[i].s : NULL;
        }
    }
    if (!PQsendQueryParams(db->c, sql, nparams, NULL, pv, NULL, NULL, 0))
        return fail(db, err, "query failed", NULL);
    PQsetSingleRowMode(db->c);
    int rc = 0;
    const char *vals[32];
    PGresult *r;
    while ((r = PQgetResult(db->c))) {
        if (!rc && check(db, r, "query failed", err))
            rc = -1;
        if (!rc && PQresultStatus(r) == PGRES_SINGLE_TUPLE && fn) {
            int n = PQnfields(r);
            if (n > 32)
                n = 32;
            for (int i = 0; i < n; i++)
                vals[i] = PQgetisnull(r, 0, i) ? NULL : PQgetvalue(r, 0, i);
            if (fn(ctx, n, vals, err))
                rc = -1; /* keep draining: the connection must end the result */
        }
        PQclear(r);
    }
    return rc;
}

static int flush(pk_store_db *db, pk_err *err)
{
    if (db->len && PQputCopyData(db->c, db->buf, (int)db->len) != 1)
        return fail(db, err, "COPY failed", NULL);
    db->len = 0;
    return 0;
}

static int pg_copy_begin(pk_store_db *db, const char *table, const char *cols, int ncols, pk_err *err)
{
    char sql[512];
    snprintf(sql, sizeof sql, "COPY %s (%s) FROM STDIN", table, cols);
    if (!db->buf) {
        db->cap = 1 << 18;
        if (!(db->buf = malloc(db->cap)))
            return pk_err_set(err, "out of memory");
    }
    db->len = 0;
    db->copy_ncols = ncols;
    PGresult *r = PQexec(db->c, sql);
    int rc = 0;
    if (!r || PQresultStatus(r) != PGRES_COPY_IN)
        rc = fail(db, err, "COPY failed", r ? PQresultErrorMessage(r) : NULL);
    PQclear(r);
    return rc;
}

static int pg_copy_row(pk_store_db *db, const int64_t *v, pk_err *err)
{
    if (db->cap - db->len < 21u * 8 + 8 && flush(db, err))
        return -1;
    char *p = db->buf + db->len;
    for (int i = 0; i < db->copy_ncols && i < 8; i++) {
        /* integer to decimal, by hand: this loop is the ingest hot path */
        char tmp[24];
        int k = 0;
        uint64_t u = v[i] < 0 ? 0 - (uint64_t)v[i] : (uint64_t)v[i];
        do
            tmp[k++] = (char)('0' + u % 10);
        while (u /= 10);
        if (v[i] < 0)
            *p++ = '-';
        while (k)
            *p++ = tmp[--k];
        *p++ = i + 1 < db->copy_ncols ? '\t' : '\n';
    }
    db->len = (size_t)(p - db->buf);
    return 0;
}

static int pg_copy_end(pk_store_db *db, pk_err *err)
{
    int rc = flush(db, err);
    if (PQputCopyEnd(db->c, rc ? "aborted by pgokit" : NULL) != 1 && !rc)
        rc = fail(db, err, "COPY failed", NULL);
    PGresult *r;
    while ((r = PQgetResult(db->c))) {
        if (!rc && check(db, r, "COPY failed", err))
            rc = -1;
        PQclear(r);
    }
    return rc;
}

const pk_store_backend pk_store_pg = {
    .name = "postgresql",
    .id_column = "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    .begin_write = "BEGIN",
    .begin_read = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    .table_exists = "SELECT count(*) FROM information_schema.tables "
                    "WHERE table_schema = current_schema() AND table_name = $1",
    .open = pg_open,
    .close = pg_close,
    .exec = pg_exec,
    .query = pg_query,
    .copy_begin = pg_copy_begin,
    .copy_row = pg_copy_row,
    .copy_end = pg_copy_end,
    .in_list = "%s = ANY(CAST(%s AS BIGINT[]))",
    .list_open = '{',
    .list_close = '}',
    .size_sql = "SELECT pg_database_size(current_database())",
};
