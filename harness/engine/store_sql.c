/*
 * store_sql.c - the helpers every query of the results database is written
 * with (store_int.h).
 */
#include "store_int.h"

#include <stdlib.h>

#include "lib/util.h"

int db_prepare(struct store *s, const char *sql, sqlite3_stmt **st,
	       int (*fail)(struct store *))
{
	*st = NULL;
	if (db_write_pending(s) < 0)	/* what waits comes first */
		return -1;
	return db_compile(s, sql, st, fail);
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
