/*
 * store_batch.c - the statements every write is made of, and the batch of
 * results (store_int.h): errors, cached statements, transactions, and the
 * results and block times that wait for the batch's commit (struct
 * pending).  The lowest of the store's files: db_prepare() (store_sql.c)
 * writes what waits before any other statement, and nothing here calls
 * back up.
 */
#include "store_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"
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

int db_compile(struct store *s, const char *sql, sqlite3_stmt **st,
	       int (*fail)(struct store *))
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return fail(s);
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
	if (!s->cache[slot] && db_compile(s, sql, &s->cache[slot], db_write_error) < 0)
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
	/* the batch first (its own db_batch() comes here with nothing open,
	 * while it is being written: store_flush() does nothing then) */
	if (!s->writing_pending && store_flush(s) < 0)
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

int db_bind_opt_text(sqlite3_stmt *st, int i, const char *t)
{
	if (!t || !*t)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
}

/* ---- the batch of results (store.h) ---- */

/* A name of a column of results (core/result.h's one list). */
static int reserved_metric(const char *name)
{
	const struct reserved_metric *r = result_metric_reserved(name);
	return r && r->column;
}

/*
 * A result that failed half-way is taken out of the batch, and the batch
 * (the results stored before it) kept: a failed statement undoes only
 * itself, so what is left is its results row (inserted), whose values go
 * with it (ON DELETE CASCADE).  Where SQLite ended the transaction itself
 * (an I/O error, a full disk), the batch is gone: said, as its runs are
 * run again by --resume.
 */
static void undo_result(struct store *s, int64_t run_id, int seq, int inserted)
{
	sqlite3_stmt *st;

	if (sqlite3_get_autocommit(s->db)) {
		if (s->batch_open)
			warning("results database '%s': the results stored since the last commit "
				"are lost; --resume runs them again", s->path);
		s->batch_open = 0;
		return;
	}
	if (!inserted ||
	    db_cached(s, ST_UNDO, "DELETE FROM results WHERE run_id = ?1 AND seq = ?2", &st) < 0)
		return;
	db_step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) | sqlite3_bind_int(st, 2, seq));
}

int store_put_result(struct store *s, int64_t run_id, int seq,
		     const struct run_result *r)
{
	return store_put_result_cost(s, run_id, seq, r, NAN);
}

/* Result p's rows (results, metric_values) in the open batch: 0, or -1
 * (printed) with nothing of it left. */
static int insert_result(struct store *s, const struct pending *p)
{
	static const char result_sql[] =
		"INSERT INTO results (run_id, seq, status, exit_code, signal,"
		" reason, started, wall_s, user_s, sys_s, maxrss_kb, output_tail,"
		" output_dropped, cpu, start_mono, cost_s)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
	const struct run_result *r = &p->r;
	sqlite3_stmt *res = NULL, *val = NULL;
	int rc, ret = -1, inserted = 0;

	if (db_batch(s) < 0)
		return -1;
	if (db_cached_unchecked(s, ST_RESULT, result_sql, &res) < 0 ||
	    db_cached(s, ST_VALUE, "INSERT INTO metric_values (run_id, seq, metric, value, unit,"
		      " scaled, time_enabled_ns, time_running_ns)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &val) < 0)
		goto out;
	rc = sqlite3_bind_int64(res, 1, p->run_id) |
	     sqlite3_bind_int(res, 2, p->seq) |
	     sqlite3_bind_text(res, 3, run_status_name(r->status), -1, SQLITE_STATIC) |
	     db_bind_opt_text(res, 6, r->reason) |
	     db_bind_opt_text(res, 7, r->started) |
	     sqlite3_bind_double(res, 8, r->wall_s) |
	     sqlite3_bind_double(res, 9, r->user_s) |
	     sqlite3_bind_double(res, 10, r->sys_s) |
	     sqlite3_bind_int64(res, 11, r->maxrss_kb) |
	     sqlite3_bind_int64(res, 13, (sqlite3_int64)r->output_dropped);
	if (r->status == RUN_OK || r->status == RUN_FAILED)
		rc |= sqlite3_bind_int(res, 4, r->exit_code);
	if (r->status == RUN_CRASHED)
		rc |= sqlite3_bind_int(res, 5, r->signal);
	if (r->has_cpu)
		rc |= sqlite3_bind_int(res, 14, r->cpu);
	if (r->start_mono > 0)
		rc |= sqlite3_bind_double(res, 15, r->start_mono);
	if (isfinite(p->secs) && p->secs >= 0)
		rc |= sqlite3_bind_double(res, 16, p->secs);
	if (r->status != RUN_OK)
		rc |= sqlite3_bind_text(res, 12, r->out_tail ? r->out_tail : "",
					-1, SQLITE_STATIC);
	if (db_step_bound(s, res, rc) < 0)
		goto out;
	inserted = 1;
	for (size_t i = 0; i < r->n_values; i++) {
		const struct metric_value *v = &r->values[i];
		if (db_step_bound(s, val, sqlite3_bind_int64(val, 1, p->run_id) |
				      sqlite3_bind_int(val, 2, p->seq) |
				      sqlite3_bind_text(val, 3, v->name, -1, SQLITE_STATIC) |
				      sqlite3_bind_double(val, 4, v->value) |
				      sqlite3_bind_text(val, 5, v->unit ? v->unit : "", -1, SQLITE_STATIC) |
				      sqlite3_bind_int(val, 6, !!v->scaled) |
				      (v->time_enabled_ns ?
				       sqlite3_bind_int64(val, 7, (sqlite3_int64)v->time_enabled_ns) |
				       sqlite3_bind_int64(val, 8, (sqlite3_int64)v->time_running_ns) : 0)) < 0)
			goto out;
	}
	ret = 0;
out:
	if (res)
		sqlite3_reset(res);
	if (val)
		sqlite3_reset(val);
	if (ret < 0)
		undo_result(s, p->run_id, p->seq, inserted);
	return ret;
}

/* Block time p's row in the open batch (store_put_block_time()). */
static int insert_block_time(struct store *s, const struct pending *p)
{
	static const char *const sql[] = {
		"INSERT OR REPLACE INTO block_entries (run_id, first_seq, enter_s)"
		" VALUES (?1, ?2, ?3)",
		"UPDATE block_entries SET leave_s = ?3 WHERE run_id = ?1 AND first_seq = ?2",
	};
	int leave = p->kind == PENDING_BLOCK_LEAVE;
	sqlite3_stmt *st;

	if (db_batch(s) < 0 ||
	    db_cached(s, leave ? ST_BLOCK_LEAVE : ST_BLOCK_ENTER, sql[leave], &st) < 0)
		return -1;
	return db_step_bound(s, st, sqlite3_bind_int64(st, 1, p->run_id) |
			     sqlite3_bind_int(st, 2, p->seq) |
			     sqlite3_bind_double(st, 3, p->secs));
}

int db_write_pending(struct store *s)
{
	int ret = 0;

	if (!s->n_pending || s->writing_pending)
		return 0;
	s->writing_pending = 1;
	for (size_t i = 0; i < s->n_pending; i++) {
		struct pending *p = &s->pending[i];

		if ((p->kind == PENDING_RESULT ? insert_result(s, p) : insert_block_time(s, p)) < 0)
			ret = -1;	/* said; the rest of the batch stays */
		run_result_release(&p->r);
	}
	s->n_pending = 0;
	s->writing_pending = 0;
	return ret;
}

/* Queue what the batch writes (store.h), always; the batch is written
 * first when it is full, and *failed set when one of it was refused. */
static struct pending *queue(struct store *s, int kind, int64_t run_id, int seq, double secs,
			     int *failed)
{
	struct pending *p;

	*failed = s->n_pending >= STORE_PENDING_MAX && db_write_pending(s) < 0;
	ALLOC_GROW(s->pending, s->n_pending + 1, s->alloc_pending);
	p = &s->pending[s->n_pending++];
	*p = (struct pending){ .kind = kind, .run_id = run_id, .seq = seq, .secs = secs };
	return p;
}

/* The batch written and committed when it is due, STORE_BATCH_S after the
 * last commit. */
static int commit_if_due(struct store *s)
{
	if (now_mono() - s->last_commit < s->batch_s)
		return 0;
	return store_flush(s);
}

static int cmp_value_names(const void *a, const void *b)
{
	return strcmp((*(const struct metric_value *const *)a)->name,
		      (*(const struct metric_value *const *)b)->name);
}

/* A name twice among r's values (the key of metric_values): its name, or
 * NULL. */
static const char *value_named_twice(const struct run_result *r)
{
	const struct metric_value **v;
	const char *twice = NULL;

	if (r->n_values < 2)
		return NULL;
	v = xmalloc(r->n_values * sizeof(*v));
	for (size_t i = 0; i < r->n_values; i++)
		v[i] = &r->values[i];
	qsort(v, r->n_values, sizeof(*v), cmp_value_names);
	for (size_t i = 1; i < r->n_values && !twice; i++)
		if (!strcmp(v[i - 1]->name, v[i]->name))
			twice = v[i]->name;
	free(v);
	return twice;
}

int store_put_result_cost(struct store *s, int64_t run_id, int seq,
			  const struct run_result *r, double cost_s)
{
	struct pending *p;
	const char *twice;
	int failed;

	if (r->status == RUN_INTERRUPTED)
		return error("cannot write results database '%s': an interrupted run is never stored",
			     s->path);
	if (r->status < RUN_OK || r->status > RUN_ERROR)	/* results.status's CHECK */
		return error("cannot write results database '%s': invalid result status %d",
			     s->path, (int)r->status);
	for (size_t i = 0; i < r->n_values; i++)
		if (reserved_metric(r->values[i].name))
			return error("cannot write results database '%s': metric name '%s' is reserved",
				     s->path, r->values[i].name);
	if ((twice = value_named_twice(r)))
		return error("cannot write results database '%s': metric '%s' twice in the "
			     "result of run %" PRId64 " entry %d", s->path, twice, run_id, seq);
	for (size_t i = 0; i < s->n_pending; i++)
		if (s->pending[i].kind == PENDING_RESULT && s->pending[i].run_id == run_id &&
		    s->pending[i].seq == seq)
			return error("cannot write results database '%s': the result of run %"
				     PRId64 " entry %d is stored already", s->path, run_id, seq);
	p = queue(s, PENDING_RESULT, run_id, seq, cost_s, &failed);
	p->r = *r;
	p->r.values = r->n_values ? xcalloc(r->n_values, sizeof(*r->values)) : NULL;
	for (size_t i = 0; i < r->n_values; i++) {
		p->r.values[i] = r->values[i];
		p->r.values[i].name = xstrdup(r->values[i].name);
		p->r.values[i].unit = r->values[i].unit ? xstrdup(r->values[i].unit) : NULL;
	}
	p->r.out_tail = r->out_tail && r->status != RUN_OK ? xstrdup(r->out_tail) : NULL;
	return commit_if_due(s) < 0 || failed ? -1 : 0;
}

int store_flush(struct store *s)
{
	int ret;

	if (!s)
		return 0;
	ret = db_write_pending(s);
	if (s->batch_open && db_commit(s) < 0)
		ret = -1;
	return ret;
}

double store_flush_due(const struct store *s)
{
	return s && (s->batch_open || s->n_pending) ? s->last_commit + 2 * s->batch_s : 0;
}

void store_set_batch(struct store *s, double seconds)
{
	s->batch_s = seconds;
}

int store_put_block_time(struct store *s, int64_t run_id, int first_seq, int leave,
			 double secs)
{
	/* A randomized block of one run each enters and leaves a block at
	 * every run: in the batch of results (two transactions of their own,
	 * each with its fsync, were the largest part of storing a run). */
	int failed;

	queue(s, leave ? PENDING_BLOCK_LEAVE : PENDING_BLOCK_ENTER, run_id, first_seq, secs,
	      &failed);
	return failed ? -1 : 0;
}
