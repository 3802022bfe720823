/*
 * store_int.h - what the files of the results database share (store.h is
 * its interface): the connection, and the helpers every query is written
 * with.  Private to store_*.c.
 *
 * store_schema.c  the schema, its migrations, opening and closing
 * store_write.c   writing a run: its experiment, names, plan, results, end
 * store_read.c    reading: runs, headers, plans, names, the walk of values
 * store_shards.c  the shards of a study on a cluster and their merge
 * store_sql.c     the helpers of queries: db_prepare(), rows, ids
 * store_batch.c   the helpers of writes (errors, cached statements,
 *                 transactions) and the batch of results; the lowest
 *
 * Every statement is prepared from constant SQL; values are always bound.
 */
#ifndef PERTURB_STORE_INT_H
#define PERTURB_STORE_INT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Statements run once per stored run: prepared once, kept until close, so
 * that storing a result parses no SQL (bench/harness-overhead.sh). */
enum cached_stmt {
	ST_BEGIN, ST_COMMIT, ST_RESULT, ST_VALUE, ST_BLOCK_ENTER, ST_BLOCK_LEAVE, ST_UNDO,
	ST_COUNT
};

/*
 * What the batch of results holds until it is written (store.h): a result
 * or a block's time, in the order they came.  Written together, at the
 * commit or before any other statement of the connection
 * (db_write_pending()), the inserts run with SQLite's code and pages in
 * the CPU's caches.  On the 2-core development VM a result of /bin/true
 * (its row and 3 values) cost 30 us inserted right after a run, 6 us in
 * a row; bench/harness-breakdown.sh's store stage went from 29 to 18 us
 * a run, commits included.
 */
enum pending_kind { PENDING_RESULT, PENDING_BLOCK_ENTER, PENDING_BLOCK_LEAVE };
struct pending {
	enum pending_kind kind;
	int64_t run_id;
	int seq;		/* the result's plan entry; the block's first */
	double secs;		/* the result's cost (NaN: none); the block's time */
	struct run_result r;	/* a result's, its own copy */
};
/* At most this many wait: the batch is written (not committed) when full. */
#define STORE_PENDING_MAX 256

struct store {
	sqlite3 *db;
	char *path;
	int readonly;
	sqlite3_stmt *cache[ST_COUNT];
	/* The batch of results (store.h, store_put_result_cost()): a write
	 * transaction is open (batch_open) since the last commit, at
	 * last_commit (now_mono()). */
	int batch_open;
	double last_commit, batch_s;
	struct pending *pending;	/* the batch not written yet */
	size_t n_pending, alloc_pending;
	int writing_pending;		/* db_write_pending() is on */
	int unchecked;		/* db_cached_unchecked() */
};

/* "cannot write/read results database 'PATH': SQLite's message": -1. */
int db_write_error(struct store *s);
int db_read_error(struct store *s);

/* Prepare sql into *st, the batch's waiting rows written first
 * (db_write_pending()); on failure *st is NULL and -1 returned (fail(s)'s
 * message, or the batch's). */
int db_prepare(struct store *s, const char *sql, sqlite3_stmt **st,
	       int (*fail)(struct store *));
/* db_prepare() without writing the batch first: for the batch's own
 * statements (store_batch.c). */
int db_compile(struct store *s, const char *sql, sqlite3_stmt **st,
	       int (*fail)(struct store *));
/* db_prepare() a query of one run's rows, run_id bound to ?1. */
int db_prepare_run(struct store *s, const char *sql, int64_t run_id,
		   sqlite3_stmt **st);
/* Step st, whose values were bound with their result codes or'ed into
 * bind_rc (0: all bound), expecting no row; st is reset for reuse. */
int db_step_bound(struct store *s, sqlite3_stmt *st, int bind_rc);
/* The cached statement for slot (prepared on first use), reset and with no
 * bindings.  Never finalized by the caller. */
int db_cached(struct store *s, enum cached_stmt slot, const char *sql,
	      sqlite3_stmt **st);
/* db_cached() for a statement run once a stored run, compiled without the
 * tables' CHECK constraints, where SQLite would build a table of an IN
 * list's values at every step (results.status: a fifth of storing a
 * result).  From then on the connection compiles every statement so
 * (PRAGMA ignore_check_constraints cannot be set per statement): each
 * value a CHECK tests is tested in C before it is bound (results.status
 * and runs.status in store_write.c, workloads.kind and matrix.kind are
 * constants). */
int db_cached_unchecked(struct store *s, enum cached_stmt slot, const char *sql,
			sqlite3_stmt **st);
/* A write transaction (BEGIN IMMEDIATE; the batch of results is written
 * and committed first), its commit, its rollback (a no-op outside one; an
 * open batch is rolled back with it). */
int db_begin(struct store *s);
int db_commit(struct store *s);
/* Open the batch of results when none is (store.h, store_flush()): 0 or -1
 * (printed). */
int db_batch(struct store *s);
void db_rollback(struct store *s);
/* The results and block times waiting (struct pending) written into the
 * batch, in order, not committed: by db_prepare() before any other
 * statement, so that every query sees them, and by store_flush().  0, or
 * -1 when one was refused (printed; it leaves nothing of itself, the rest
 * are written). */
int db_write_pending(struct store *s);
/* Column col as a malloc'd string; NULL for NULL. */
char *db_column_dup(sqlite3_stmt *st, int col);
/* Bind t to parameter i, NULL when t is NULL or empty. */
int db_bind_opt_text(sqlite3_stmt *st, int i, const char *t);
/* Run a query that yields at most one integer (arg bound to ?1 unless
 * NULL); *out = 0 when no row/NULL. */
int db_query_id(struct store *s, const char *sql, const char *arg, int64_t *out);

/*
 * A kind of row read into an array: elements of size bytes, each filled
 * from a result row by fill(); the malloc'd strings of an element are its
 * fields at offsets strs[0 .. nstrs - 1] (freed by db_rows_free()).
 */
struct row_kind {
	size_t size;
	void (*fill)(sqlite3_stmt *st, void *row);
	const size_t *strs;
	size_t nstrs;
};

void db_rows_free(const struct row_kind *k, void *rows, size_t n);
/* Every row of st (prepared; finalized here) into *out, n of them (NULL
 * and 0 when none).  On a read error -1 (printed), nothing kept. */
int db_rows_collect(struct store *s, sqlite3_stmt *st, const struct row_kind *k,
		    void **out, size_t *n);
/* db_rows_collect() of one run's query (db_prepare_run()). */
int db_rows_of_run(struct store *s, const char *sql, int64_t run_id,
		   const struct row_kind *k, void **out, size_t *n);

#endif
