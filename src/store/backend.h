/* backend.h — the small interface every database engine of the profile store
 * implements (sqlite.c: libsqlite3, the embedded default; pg.c: libpq).
 *
 * The store's logic (store.c) is written once against it: statements use
 * $1, $2... placeholders and every value goes through a bound parameter,
 * never into the SQL text. Rows come back as text (NULL for SQL NULL), one
 * at a time: a result is streamed, never materialized by the client library.
 * Bulk inserts of integer rows go through the engine's fast path (COPY FROM
 * STDIN on PostgreSQL, one prepared INSERT re-bound per row on SQLite).
 * Nothing here prints or exits; errors are values. */
#ifndef PK_STORE_BACKEND_H
#define PK_STORE_BACKEND_H

#include "common/pk_common.h"

typedef struct pk_store_db pk_store_db;  /* a connection; defined by each backend */

/* One bound parameter: an integer, a text (len bytes, not NUL-terminated
 * necessarily) or NULL. */
typedef struct pk_store_val {
    enum { PK_SV_NULL, PK_SV_INT, PK_SV_TEXT } type;
    int64_t i;
    const char *s;
} pk_store_val;

static inline pk_store_val pk_sv_int(int64_t i) { return (pk_store_val){PK_SV_INT, i, NULL}; }
static inline pk_store_val pk_sv_text(const char *s)
{
    return s ? (pk_store_val){PK_SV_TEXT, 0, s} : (pk_store_val){PK_SV_NULL, 0, NULL};
}

/* The most parameters a statement binds. */
#define PK_STORE_MAX_PARAMS 192

/* Called for each row; vals[i] is NULL for SQL NULL. Nonzero stops. */
typedef int (*pk_store_row_fn)(void *ctx, int ncols, const char *const *vals, pk_err *err);

typedef struct pk_store_backend {
    const char *name;            /* "sqlite", "postgresql" */
    const char *id_column;       /* DDL of an auto-numbered primary key */
    const char *begin_write;     /* starts a read-write transaction */
    const char *begin_read;      /* starts a transaction that reads one snapshot */
    const char *table_exists;    /* SELECT count(*) ... of table $1 */
    /* `create`: make the database if absent (init); else it must exist. */
    pk_store_db *(*open)(const char *target, bool create, pk_err *err);
    void (*close)(pk_store_db *db);
    /* Once the database is known to be a store (or is being made one): the
     * connection's settings that write to it (SQLite: the WAL journal).
     * NULL: none. Never run on a file that is not a store. */
    int (*ready)(pk_store_db *db, pk_err *err);
    /* A statement without parameters (DDL, COMMIT, ROLLBACK). */
    int (*exec)(pk_store_db *db, const char *sql, pk_err *err);
    /* A statement with bound parameters; rows (if any) stream into fn. */
    int (*query)(pk_store_db *db, const char *sql, int nparams, const pk_store_val *params,
                 pk_store_row_fn fn, void *ctx, pk_err *err);
    /* Bulk insert of integer rows into table(cols), ncols columns. */
    int (*copy_begin)(pk_store_db *db, const char *table, const char *cols, int ncols, pk_err *err);
    int (*copy_row)(pk_store_db *db, const int64_t *vals, pk_err *err);
    int (*copy_end)(pk_store_db *db, pk_err *err);
    /* The condition "column is in a list of integers", the list being bound
     * as one text parameter: a printf format of the column and the
     * parameter ($n), and the brackets the list text is written in (the
     * numbers go between them, separated by commas). One parameter
     * whatever the length, and a condition PostgreSQL ships to a foreign
     * server with the rest of the query. */
    const char *in_list;
    const char list_open, list_close;
    /* SELECT of the bytes the database occupies (for reports). */
    const char *size_sql;
} pk_store_backend;

/* The target as messages name it: every password in it (URI userinfo,
 * ?password=, keyword/value password=) replaced by "***"; malloc'd. */
char *pk_store_masked(const char *target);
/* Masks, in place, the passwords of target that a message from the engine
 * repeats (the message only shrinks or keeps its length). */
void pk_store_scrub(char *msg, const char *target);

extern const pk_store_backend pk_store_sqlite;
extern const pk_store_backend pk_store_pg;

#endif
