/*
 * store_write.c - writing a run into the results database: its experiment,
 * names, calibration and plan (store_begin_run), each result as it comes,
 * and its end (store.h).
 */
#include "store_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/tracers.h"
#include "core/result.h"
#include "lib/machine.h"
#include "lib/util.h"

static const char *const run_statuses[] = {
	"running", "completed", "interrupted", "failed",
};

static int valid_run_status(const char *status)
{
	for (size_t i = 0; i < ARRAY_SIZE(run_statuses); i++)
		if (!strcmp(status, run_statuses[i]))
			return 1;
	return 0;
}

/* Experiment row for exp (inserted unless its sha256 is known): its id. */
static int put_experiment(struct store *s, const struct experiment *exp,
			  int64_t *id)
{
	sqlite3_stmt *st = NULL;
	const char *text = exp->text ? exp->text : "";
	size_t len = exp->text ? exp->text_len : 0;
	char sha[65];
	int ret = -1;

	sha256_hex(text, len, sha);
	if (db_prepare(s, "INSERT OR IGNORE INTO experiments (name, path, text, sha256)"
		       " VALUES (?1, ?2, ?3, ?4)", &st, db_write_error) < 0)
		goto out;
	if (db_step_bound(s, st, sqlite3_bind_text(st, 1, exp->name, -1, SQLITE_STATIC) |
			      sqlite3_bind_text(st, 2, exp->path, -1, SQLITE_STATIC) |
			      sqlite3_bind_text64(st, 3, text, len, SQLITE_STATIC, SQLITE_UTF8) |
			      sqlite3_bind_text(st, 4, sha, -1, SQLITE_STATIC)) < 0)
		goto out;
	sqlite3_finalize(st);
	if (db_prepare(s, "SELECT id FROM experiments WHERE sha256 = ?1", &st,
		       db_write_error) < 0)
		goto out;
	if (sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_ROW) {
		db_write_error(s);
		goto out;
	}
	*id = sqlite3_column_int64(st, 0);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

static int put_run(struct store *s, const struct experiment *exp,
		   int64_t experiment_id, uint64_t seed, const char *argv,
		   const struct machine_info *m, const struct run_tags *tags, int64_t *run_id)
{
	static const char sql[] =
		"INSERT INTO runs (experiment_id, name, baseline, seed, \"order\","
		" argv, started, status, perturb_version, machine_json,"
		" kernel_release, kernel_cmdline, cpu_model, cores, governor, smt,"
		" aslr, loadavg, label, repo, revision, commit_id)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9, ?10, ?11,"
		" ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)";
	sqlite3_stmt *st = NULL;
	char seedbuf[24], started[32];
	char *json = m ? machine_json(m) : NULL;
	int rc, ret = -1;

	snprintf(seedbuf, sizeof(seedbuf), "%" PRIu64, seed);
	now_iso8601(started, sizeof(started));
	if (db_prepare(s, sql, &st, db_write_error) < 0)
		goto out;
	rc = sqlite3_bind_int64(st, 1, experiment_id) |
	     sqlite3_bind_text(st, 2, exp->name, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 3, exp->baseline, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 4, seedbuf, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 5, order_name(exp->order), -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 6, argv, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 7, started, -1, SQLITE_STATIC) |
	     sqlite3_bind_text(st, 9, json, -1, SQLITE_STATIC);
	if (m)
		rc |= sqlite3_bind_text(st, 8, m->perturb_version, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 10, m->kernel_release, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 11, m->kernel_cmdline, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 12, m->cpu_model, -1, SQLITE_STATIC) |
		      sqlite3_bind_int(st, 13, m->cores) |
		      sqlite3_bind_text(st, 14, m->governor, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 15, m->smt, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 16, m->aslr, -1, SQLITE_STATIC) |
		      sqlite3_bind_text(st, 17, m->loadavg, -1, SQLITE_STATIC);
	else
		rc |= sqlite3_bind_text(st, 8, PERTURB_VERSION, -1, SQLITE_STATIC);
	if (tags)
		rc |= db_bind_opt_text(st, 18, tags->label) |
		      db_bind_opt_text(st, 19, tags->repo) |
		      db_bind_opt_text(st, 20, tags->revision) |
		      db_bind_opt_text(st, 21, tags->commit);
	if (db_step_bound(s, st, rc) < 0)
		goto out;
	*run_id = sqlite3_last_insert_rowid(s->db);
	ret = 0;
out:
	sqlite3_finalize(st);
	free(json);
	return ret;
}

/* The parameters of the instances of matrices (table matrix). */
static int put_matrix(struct store *s, const char *kind, const char *name, const char *base,
		      const struct matrix_value *mv, size_t n, int64_t run_id)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (!n)
		return 0;
	if (db_prepare(s, "INSERT INTO matrix (run_id, kind, name, base, param, value, x, is_list)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &st, db_write_error) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		if (db_step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
				         sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC) |
				         sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC) |
				         sqlite3_bind_text(st, 4, base, -1, SQLITE_STATIC) |
				         sqlite3_bind_text(st, 5, mv[i].param, -1, SQLITE_STATIC) |
				         sqlite3_bind_text(st, 6, mv[i].value, -1, SQLITE_STATIC) |
				         (isfinite(mv[i].x) ? sqlite3_bind_double(st, 7, mv[i].x)
							    : sqlite3_bind_null(st, 7)) |
				         sqlite3_bind_int(st, 8, mv[i].is_list)) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

static int put_names(struct store *s, const struct experiment *exp, int64_t run_id)
{
	sqlite3_stmt *v = NULL, *w = NULL;
	int ret = -1;

	if (db_prepare(s, "INSERT INTO variants (run_id, idx, name, description, timebase)"
		       " VALUES (?1, ?2, ?3, ?4, ?5)", &v, db_write_error) < 0 ||
	    db_prepare(s, "INSERT INTO workloads (run_id, idx, name, kind, description,"
		       " primary_metric) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &w, db_write_error) < 0)
		goto out;
	for (size_t i = 0; i < exp->n_variants; i++) {
		const struct variant *x = &exp->variants[i];
		if (db_step_bound(s, v, sqlite3_bind_int64(v, 1, run_id) |
				      sqlite3_bind_int64(v, 2, (int64_t)i) |
				      sqlite3_bind_text(v, 3, x->name, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(v, 4, x->description, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(v, 5, variant_timebase(x), -1,
						        SQLITE_STATIC)) < 0 ||
		    put_matrix(s, "variant", x->name, x->base, x->matrix, x->n_matrix, run_id) < 0)
			goto out;
	}
	for (size_t i = 0; i < exp->n_workloads; i++) {
		const struct workload *x = &exp->workloads[i];
		const char *kind = x->kind == WORKLOAD_MICRO ? "micro" : "real";
		if (db_step_bound(s, w, sqlite3_bind_int64(w, 1, run_id) |
				      sqlite3_bind_int64(w, 2, (int64_t)i) |
				      sqlite3_bind_text(w, 3, x->name, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(w, 4, kind, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(w, 5, x->description, -1, SQLITE_STATIC) |
				      db_bind_opt_text(w, 6, x->primary)) < 0 ||
		    put_matrix(s, "workload", x->name, x->base, x->matrix, x->n_matrix, run_id) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(v);
	sqlite3_finalize(w);
	return ret;
}

/* The calibration workloads and the traced variants (migrate_calibration). */
static int put_tracing(struct store *s, const struct experiment *exp, int64_t run_id)
{
	sqlite3_stmt *c = NULL, *t = NULL;
	char attach[512];
	int ret = -1;

	if (db_prepare(s, "INSERT INTO calibration (run_id, workload, hits, hits_metric, metric,"
		       " ops_metric) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &c, db_write_error) < 0 ||
	    db_prepare(s, "INSERT INTO tracer_variants (run_id, variant, tracer, attach)"
		       " VALUES (?1, ?2, ?3, ?4)", &t, db_write_error) < 0)
		goto out;
	for (size_t i = 0; i < exp->n_workloads; i++) {
		const struct workload *x = &exp->workloads[i];
		if (!x->calib_hits && !x->calib_hits_metric)
			continue;
		if (db_step_bound(s, c, sqlite3_bind_int64(c, 1, run_id) |
				      sqlite3_bind_text(c, 2, x->name, -1, SQLITE_STATIC) |
				      (x->calib_hits ? sqlite3_bind_double(c, 3, x->calib_hits) :
				       sqlite3_bind_null(c, 3)) |
				      db_bind_opt_text(c, 4, x->calib_hits_metric) |
				      db_bind_opt_text(c, 5, x->calib_metric) |
				      db_bind_opt_text(c, 6, x->calib_ops_metric)) < 0)
			goto out;
	}
	for (size_t i = 0; i < exp->n_variants; i++) {
		const struct variant *x = &exp->variants[i];
		const struct tracer_kind *k = tracer_of_variant(x, attach, sizeof(attach));
		if (k && db_step_bound(s, t, sqlite3_bind_int64(t, 1, run_id) |
					   sqlite3_bind_text(t, 2, x->name, -1, SQLITE_STATIC) |
					   sqlite3_bind_text(t, 3, k->name, -1, SQLITE_STATIC) |
					   sqlite3_bind_text(t, 4, attach, -1, SQLITE_STATIC)) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(c);
	sqlite3_finalize(t);
	return ret;
}

static int put_plan(struct store *s, const struct experiment *exp,
		    const struct plan *plan, size_t from, int64_t run_id)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (db_prepare(s, "INSERT INTO plan (run_id, seq, variant, workload,"
		       " variant_idx, workload_idx, repetition, warmup, round, block)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", &st,
		       db_write_error) < 0)
		goto out;
	for (size_t i = from; i < plan->n; i++) {
		const struct plan_entry *e = &plan->e[i];
		if (e->seq != (int)i || e->variant < 0 ||
		    (size_t)e->variant >= exp->n_variants || e->workload < 0 ||
		    (size_t)e->workload >= exp->n_workloads) {
			error("cannot write results database '%s': plan entry %zu is inconsistent (seq %d, variant %d, workload %d)",
			      s->path, i, e->seq, e->variant, e->workload);
			goto out;
		}
		if (db_step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
				      sqlite3_bind_int(st, 2, e->seq) |
				      sqlite3_bind_text(st, 3, exp->variants[e->variant].name, -1, SQLITE_STATIC) |
				      sqlite3_bind_text(st, 4, exp->workloads[e->workload].name, -1, SQLITE_STATIC) |
				      sqlite3_bind_int(st, 5, e->variant) |
				      sqlite3_bind_int(st, 6, e->workload) |
				      sqlite3_bind_int(st, 7, e->repetition) |
				      sqlite3_bind_int(st, 8, !!e->warmup) |
				      sqlite3_bind_int(st, 9, e->round) |
				      sqlite3_bind_int(st, 10, e->block)) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int store_begin_run(struct store *s, const struct experiment *exp,
		    const struct plan *plan, uint64_t seed, const char *argv,
		    const struct machine_info *m, const struct run_tags *tags,
		    int64_t *run_id)
{
	int64_t experiment_id, id;

	if (db_begin(s) < 0)
		return -1;
	if (put_experiment(s, exp, &experiment_id) < 0 ||
	    put_run(s, exp, experiment_id, seed, argv, m, tags, &id) < 0 ||
	    put_names(s, exp, id) < 0 ||
	    put_tracing(s, exp, id) < 0 ||
	    put_plan(s, exp, plan, 0, id) < 0 ||
	    db_commit(s) < 0) {
		db_rollback(s);
		return -1;
	}
	*run_id = id;
	return 0;
}

int store_append_plan(struct store *s, const struct experiment *exp,
		      const struct plan *plan, size_t from, int64_t run_id)
{
	if (db_begin(s) < 0)
		return -1;
	if (put_plan(s, exp, plan, from, run_id) < 0 || db_commit(s) < 0) {
		db_rollback(s);
		return -1;
	}
	return 0;
}

int store_put_unavailable(struct store *s, int64_t run_id, const char *metric,
			  const char *reason)
{
	sqlite3_stmt *st = NULL;
	int ret;

	if (db_prepare(s, "INSERT OR IGNORE INTO unavailable (run_id, metric, reason)"
		       " VALUES (?1, ?2, ?3)", &st, db_write_error) < 0)
		return -1;
	ret = db_step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
			    sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC) |
			    sqlite3_bind_text(st, 3, reason, -1, SQLITE_STATIC));
	sqlite3_finalize(st);
	return ret;
}

static int update_run(struct store *s, int64_t run_id, const char *status,
		      const char *ended)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (!valid_run_status(status))
		return error("cannot write results database '%s': invalid run status '%s'",
			     s->path, status);
	if (store_flush(s) < 0)	/* the results come before their end */
		return -1;
	if (db_prepare(s, "UPDATE runs SET status = ?2, ended = coalesce(?3, ended)"
		       " WHERE id = ?1", &st, db_write_error) < 0)
		return -1;
	if (db_step_bound(s, st, sqlite3_bind_int64(st, 1, run_id) |
			      sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC) |
			      sqlite3_bind_text(st, 3, ended, -1, SQLITE_STATIC)) < 0)
		goto out;
	if (sqlite3_changes(s->db) != 1) {
		error("cannot write results database '%s': no run %" PRId64,
		      s->path, run_id);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int store_end_run(struct store *s, int64_t run_id, const char *status)
{
	char ended[32];

	now_iso8601(ended, sizeof(ended));
	return update_run(s, run_id, status, ended);
}

int store_set_status(struct store *s, int64_t run_id, const char *status)
{
	return update_run(s, run_id, status, NULL);
}
