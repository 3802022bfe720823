/*
 * store_sql.c - the helpers every query of the results database is written
 * with (store_int.h).
 */
#include "store_int.h"

#include <stdlib.h>

#include "lib/util.h"

static int db_error(struct store *s, const char *what)
{
	return error("cannot %s results database '%s': %s", what, s->path,
		     sqlite3_errmsg(s->db));
}

int db_write_error(struct store *s)
{
	return db_error(s, "write");
}

int db_read_error(struct store *s)
{
	return db_error(s, "read");
}

int db_prepare(struct store *s, const char *sql, sqlite3_stmt **st,
	       int (*fail)(struct store *))
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return fail(s);
	}
	return 0;
}

int db_prepare_run(struct store *s, const char *sql, int64_t run_id,
		   sqlite3_stmt **st)
{
	if (db_prepare(s, sql, st, db_read_error) < 0)
		return -1;
	if (sqlite3_bind_int64(*st, 1, run_id)) {
		sqlite3_finalize(*st);
		*st = NULL;
		return db_read_error(s);
	}
	return 0;
}

/* Step a statement that returns no rows, then make it reusable. */
static int step_done(struct store *s, sqlite3_stmt *st)
{
	int ret = 0;
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_write_error(s);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

int db_step_bound(struct store *s, sqlite3_stmt *st, int bind_rc)
{
	if (bind_rc)
		return db_write_error(s);
	return step_done(s, st);
}

int db_cached(struct store *s, enum cached_stmt slot, const char *sql,
	      sqlite3_stmt **st)
{
	if (!s->cache[slot] && db_prepare(s, sql, &s->cache[slot], db_write_error) < 0)
		return -1;
	sqlite3_reset(s->cache[slot]);
	sqlite3_clear_bindings(s->cache[slot]);
	*st = s->cache[slot];
	return 0;
}

int db_cached_unchecked(struct store *s, enum cached_stmt slot, const char *sql,
			sqlite3_stmt **st)
{
	/* read when a statement is compiled, and setting it expires every
	 * compiled one: set once, and left on */
	if (!s->unchecked &&
	    sqlite3_exec(s->db, "PRAGMA ignore_check_constraints = ON", NULL, NULL, NULL) ==
		    SQLITE_OK)
		s->unchecked = 1;
	return db_cached(s, slot, sql, st);
}

static int exec_cached(struct store *s, enum cached_stmt slot, const char *sql)
{
	sqlite3_stmt *st;
	if (db_cached(s, slot, sql, &st) < 0)
		return -1;
	return step_done(s, st);
}

int db_begin(struct store *s)
{
	if (s->batch_open && db_commit(s) < 0)
		return -1;
	/* IMMEDIATE: take the write lock now (waiting up to busy_timeout)
	 * rather than fail half-way on a read-to-write upgrade. */
	return exec_cached(s, ST_BEGIN, "BEGIN IMMEDIATE");
}

int db_batch(struct store *s)
{
	if (s->batch_open)
		return 0;
	if (db_begin(s) < 0)
		return -1;
	s->batch_open = 1;
	return 0;
}

int db_commit(struct store *s)
{
	if (exec_cached(s, ST_COMMIT, "COMMIT") < 0)
		return -1;
	s->batch_open = 0;
	s->last_commit = now_mono();
	return 0;
}

void db_rollback(struct store *s)
{
	s->batch_open = 0;
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

char *db_column_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? xstrdup((const char *)t) : NULL;
}

void db_rows_free(const struct row_kind *k, void *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < k->nstrs; j++)
			free(*(char **)((char *)rows + i * k->size + k->strs[j]));
	free(rows);
}

int db_rows_collect(struct store *s, sqlite3_stmt *st, const struct row_kind *k,
		    void **out, size_t *n)
{
	void *rows = NULL;
	size_t nr = 0, alloc = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		grow_array(&rows, &alloc, nr + 1, k->size);
		k->fill(st, (char *)rows + nr++ * k->size);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_rows_free(k, rows, nr);
		*out = NULL;
		*n = 0;
		return db_read_error(s);
	}
	*out = rows;
	*n = nr;
	return 0;
}

int db_rows_of_run(struct store *s, const char *sql, int64_t run_id,
		   const struct row_kind *k, void **out, size_t *n)
{
	sqlite3_stmt *st = NULL;

	*out = NULL;
	*n = 0;
	if (db_prepare_run(s, sql, run_id, &st) < 0)
		return -1;
	return db_rows_collect(s, st, k, out, n);
}

int db_bind_opt_text(sqlite3_stmt *st, int i, const char *t)
{
	if (!t || !*t)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
}

int db_query_id(struct store *s, const char *sql, const char *arg, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	*out = 0;
	if (db_prepare(s, sql, &st, db_read_error) < 0)
		return -1;
	if (arg && sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC)) {
		ret = db_read_error(s);
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		ret = db_read_error(s);
out:
	sqlite3_finalize(st);
	return ret;
}
