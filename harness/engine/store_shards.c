/*
 * store_shards.c - a study split for a cluster in the results database:
 * its shards (engine/shard.h), and the merge of a shard's results into
 * the study's database (engine/merge.h).
 */
#include "store_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

int store_put_shards(struct store *s, int64_t run_id, const struct store_shard *sh, size_t n)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (db_begin(s) < 0)
		return -1;
	if (db_prepare(s, "INSERT OR REPLACE INTO shards (run_id, shard, n_shards, seq_lo,"
		       " seq_hi, db, job, node, plan_sha256)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		       &st, db_write_error) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (db_step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
				      sqlite3_bind_int(st, 2, sh[i].shard) |
				      sqlite3_bind_int(st, 3, sh[i].n_shards) |
				      sqlite3_bind_int(st, 4, sh[i].seq_lo) |
				      sqlite3_bind_int(st, 5, sh[i].seq_hi) |
				      db_bind_opt_text(st, 6, sh[i].db) |
				      db_bind_opt_text(st, 7, sh[i].job) |
				      db_bind_opt_text(st, 8, sh[i].node) |
				      db_bind_opt_text(st, 9, sh[i].plan_sha)) < 0)
			goto out;
	ret = db_commit(s);
out:
	sqlite3_finalize(st);
	if (ret < 0)
		db_rollback(s);
	return ret;
}

int store_latest_sharded_run(struct store *s, int64_t *run_id)
{
	return db_query_id(s, "SELECT max(run_id) FROM shards", NULL, run_id);
}

static void fill_shard(sqlite3_stmt *st, void *row)
{
	struct store_shard *x = row;

	x->shard = sqlite3_column_int(st, 0);
	x->n_shards = sqlite3_column_int(st, 1);
	x->seq_lo = sqlite3_column_int(st, 2);
	x->seq_hi = sqlite3_column_int(st, 3);
	x->db = db_column_dup(st, 4);
	x->job = db_column_dup(st, 5);
	x->node = db_column_dup(st, 6);
	x->plan_sha = db_column_dup(st, 7);
	x->n_results = sqlite3_column_int(st, 8);
}

static const size_t shard_strs[] = {
	offsetof(struct store_shard, db), offsetof(struct store_shard, job),
	offsetof(struct store_shard, node), offsetof(struct store_shard, plan_sha),
};

static const struct row_kind shard_rows = {
	sizeof(struct store_shard), fill_shard, shard_strs, ARRAY_SIZE(shard_strs),
};

void store_shards_free(struct store_shard *sh, size_t n)
{
	db_rows_free(&shard_rows, sh, n);
}

int store_load_shards(struct store *s, int64_t run_id, struct store_shard **out, size_t *n)
{
	void *rows;
	int rc = db_rows_of_run(s, "SELECT shard, n_shards, seq_lo, seq_hi, db, job, node, plan_sha256,"
			        " (SELECT count(*) FROM results r WHERE r.run_id = ?1"
			        "  AND r.seq >= s.seq_lo AND r.seq < s.seq_hi)"
			        " FROM shards s WHERE run_id = ?1 ORDER BY shard", run_id, &shard_rows,
			        &rows, n);

	*out = rows;
	return rc;
}

/*
 * The tables of a run's results that a shard holds, and which of a
 * table's rows are the shard's (?2 its run, ?3..?4 its seqs; seqs listed
 * in temp.merge_new: the results not stored here yet).  What is copied of
 * a row follows the schema: every column the table has in both files
 * (PRAGMA table_info), never a hand-kept list, so that a column added to
 * the schema is merged without a word here.
 */
static const struct {
	const char *table, *insert, *where;
} merged[] = {
	{ "results", "INSERT", "run_id = ?2 AND seq IN (SELECT seq FROM temp.merge_new)" },
	{ "metric_values", "INSERT", "run_id = ?2 AND seq IN (SELECT seq FROM temp.merge_new)" },
	{ "unavailable", "INSERT OR IGNORE", "run_id = ?2" },
	{ "block_entries", "INSERT OR IGNORE",
	  "run_id = ?2 AND first_seq >= ?3 AND first_seq < ?4" },
};

/* merged[i]'s copy: INSERT INTO main.T (every column) SELECT ?1 as the
 * run_id, every other column FROM shard.T WHERE ...; malloc'd, or NULL
 * (printed). */
static char *copy_sql(struct store *s, size_t i)
{
	struct strbuf cols = STRBUF_INIT, vals = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	char *sql = NULL;
	int rc;

	if (db_prepare(s, "SELECT m.name FROM pragma_table_info(?1, 'main') m"
		       " WHERE m.name IN (SELECT name FROM pragma_table_info(?1, 'shard'))"
		       " ORDER BY m.cid", &st, db_write_error) < 0)
		return NULL;
	sqlite3_bind_text(st, 1, merged[i].table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		strbuf_addf(&cols, "%s\"%s\"", cols.len ? ", " : "", name);
		if (!strcmp(name, "run_id"))
			strbuf_addf(&vals, "%s?1", vals.len ? ", " : "");
		else
			strbuf_addf(&vals, "%s\"%s\"", vals.len ? ", " : "", name);
	}
	if (rc != SQLITE_DONE)
		error("cannot read the columns of '%s' in '%s': %s", merged[i].table, s->path,
		      sqlite3_errmsg(s->db));
	else if (!cols.len)
		error("shard database: no table '%s'", merged[i].table);
	else
		sql = xasprintf("%s INTO main.%s (%s) SELECT %s FROM shard.%s WHERE %s",
				merged[i].insert, merged[i].table, cols.buf, vals.buf,
				merged[i].table, merged[i].where);
	sqlite3_finalize(st);
	strbuf_release(&cols);
	strbuf_release(&vals);
	return sql;
}

/*
 * The copy runs in this connection with the shard's file attached: one
 * INSERT ... SELECT per table of merged[], each a scan of the shard's rows
 * in key order with a primary-key probe of ours, so it costs O(rows log
 * rows); the seqs copied are collected first (temp.merge_new), so that a
 * result stored here already is skipped with its metric values.
 */
int store_merge_results(struct store *s, int64_t run_id, const char *src_db,
			int64_t src_run, int lo, int hi, size_t *added)
{
	static const char *const prepare[] = {
		"CREATE TEMP TABLE IF NOT EXISTS merge_new (seq INTEGER PRIMARY KEY)",
		"DELETE FROM temp.merge_new",
		"INSERT INTO temp.merge_new SELECT r.seq FROM shard.results r"
		" WHERE r.run_id = ?2 AND r.seq >= ?3 AND r.seq < ?4 AND NOT EXISTS"
		" (SELECT 1 FROM main.results m WHERE m.run_id = ?1 AND m.seq = r.seq)",
	};
	char *sql[ARRAY_SIZE(prepare) + ARRAY_SIZE(merged)] = { 0 };
	sqlite3_stmt *st = NULL;
	int ret = -1, attached = 0;

	*added = 0;
	if (db_prepare(s, "ATTACH DATABASE ?1 AS shard", &st, db_write_error) < 0)
		return -1;
	if (sqlite3_bind_text(st, 1, src_db, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_DONE) {
		error("cannot read shard database '%s': %s", src_db, sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	st = NULL;
	attached = 1;
	if (db_begin(s) < 0)
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(prepare); i++)
		sql[i] = xstrdup(prepare[i]);
	for (size_t i = 0; i < ARRAY_SIZE(merged); i++)
		if (!(sql[ARRAY_SIZE(prepare) + i] = copy_sql(s, i)))
			goto fail;
	for (size_t i = 0; i < ARRAY_SIZE(sql); i++) {
		if (db_prepare(s, sql[i], &st, db_write_error) < 0)
			goto fail;
		/* parameters a statement does not name are not bound */
		for (int p = 1; p <= sqlite3_bind_parameter_count(st); p++) {
			const char *name = sqlite3_bind_parameter_name(st, p);
			int64_t v = name[1] == '1' ? run_id : name[1] == '2' ? src_run :
				    name[1] == '3' ? lo : hi;
			sqlite3_bind_int64(st, p, v);
		}
		if (sqlite3_step(st) != SQLITE_DONE) {
			error("cannot merge shard database '%s' into '%s': %s", src_db,
			      s->path, sqlite3_errmsg(s->db));
			goto fail;
		}
		if (i == ARRAY_SIZE(prepare))	/* results */
			*added = (size_t)sqlite3_changes(s->db);
		sqlite3_finalize(st);
		st = NULL;
	}
	if (db_commit(s) < 0)
		goto fail;
	ret = 0;
	goto out;
fail:
	db_rollback(s);
	*added = 0;
out:
	sqlite3_finalize(st);
	for (size_t i = 0; i < ARRAY_SIZE(sql); i++)
		free(sql[i]);
	if (attached)
		sqlite3_exec(s->db, "DETACH DATABASE shard", NULL, NULL, NULL);
	return ret;
}
