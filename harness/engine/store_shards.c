/*
 * store_shards.c - a study split for a cluster in the results database:
 * its shards (engine/shard.h), and the merge of a shard's results into
 * the study's database (engine/merge.h).
 */
#include "store_int.h"

#include <stddef.h>
#include <stdlib.h>

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
 * The copy runs in this connection with the shard's file attached: one
 * INSERT ... SELECT per table, each a scan of the shard's rows in key
 * order with a primary-key probe of ours, so it costs O(rows log rows);
 * the seqs copied are collected first (temp.merge_new), so that a
 * result stored here already is skipped with its metric values.
 */
int store_merge_results(struct store *s, int64_t run_id, const char *src_db,
			int64_t src_run, int lo, int hi, size_t *added)
{
	static const char *const sql[] = {
		"CREATE TEMP TABLE IF NOT EXISTS merge_new (seq INTEGER PRIMARY KEY)",
		"DELETE FROM temp.merge_new",
		"INSERT INTO temp.merge_new SELECT r.seq FROM shard.results r"
		" WHERE r.run_id = ?2 AND r.seq >= ?3 AND r.seq < ?4 AND NOT EXISTS"
		" (SELECT 1 FROM main.results m WHERE m.run_id = ?1 AND m.seq = r.seq)",
		"INSERT INTO main.results (run_id, seq, status, exit_code, signal, reason,"
		" started, wall_s, user_s, sys_s, maxrss_kb, output_tail, output_dropped,"
		" cpu, start_mono)"
		" SELECT ?1, seq, status, exit_code, signal, reason, started, wall_s,"
		" user_s, sys_s, maxrss_kb, output_tail, output_dropped, cpu, start_mono"
		" FROM shard.results"
		" WHERE run_id = ?2 AND seq IN (SELECT seq FROM temp.merge_new)",
		"INSERT INTO main.metric_values (run_id, seq, metric, value, unit, scaled,"
		" time_enabled_ns, time_running_ns)"
		" SELECT ?1, seq, metric, value, unit, scaled, time_enabled_ns,"
		" time_running_ns FROM shard.metric_values"
		" WHERE run_id = ?2 AND seq IN (SELECT seq FROM temp.merge_new)",
		"INSERT OR IGNORE INTO main.unavailable (run_id, metric, reason)"
		" SELECT ?1, metric, reason FROM shard.unavailable WHERE run_id = ?2",
		"INSERT OR IGNORE INTO main.block_entries (run_id, first_seq, enter_s, leave_s)"
		" SELECT ?1, first_seq, enter_s, leave_s FROM shard.block_entries"
		" WHERE run_id = ?2 AND first_seq >= ?3 AND first_seq < ?4",
	};
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
		if (i == 3)
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
	if (attached)
		sqlite3_exec(s->db, "DETACH DATABASE shard", NULL, NULL, NULL);
	return ret;
}
