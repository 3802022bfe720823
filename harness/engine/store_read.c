/*
 * store_read.c - reading the results database: the runs, a run's header,
 * plan, names and calibration, its failures, and the walk of its values
 * (store.h).
 */
#include "store_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/result.h"
#include "lib/util.h"

void run_header_release(struct run_header *h)
{
	free(h->experiment);
	free(h->path);
	free(h->baseline);
	free(h->order);
	free(h->started);
	free(h->ended);
	free(h->status);
	free(h->machine_json);
	free(h->sha256);
	memset(h, 0, sizeof(*h));
}

/* One row of store_block_costs()'s query: kind 0 the block entries of a
 * variant, 1 its warm-ups' costs, 2 its measured runs' costs of a workload. */
struct cost_row {
	int kind, variant, workload;
	size_t n;
	double sum;
};

static void fill_cost(sqlite3_stmt *st, void *row)
{
	struct cost_row *x = row;

	x->kind = sqlite3_column_int(st, 0);
	x->variant = sqlite3_column_int(st, 1);
	x->workload = sqlite3_column_int(st, 2);
	x->n = (size_t)sqlite3_column_int64(st, 3);
	x->sum = sqlite3_column_double(st, 4);
}

static const struct row_kind cost_rows = { sizeof(struct cost_row), fill_cost, NULL, 0 };

int store_block_costs(struct store *s, int64_t run_id, size_t n_variants, size_t n_workloads,
		      struct store_block_cost *vc, struct store_run_cost *rc)
{
	void *rows;
	size_t n;

	memset(vc, 0, n_variants * sizeof(*vc));
	memset(rc, 0, n_workloads * n_variants * sizeof(*rc));
	if (db_rows_of_run(s, "SELECT 0, p.variant_idx, 0, count(*), total(e.enter_s) + total(e.leave_s)"
			   " FROM block_entries e JOIN plan p ON p.run_id = e.run_id"
			   " AND p.seq = e.first_seq WHERE e.run_id = ?1 GROUP BY p.variant_idx"
			   " UNION ALL"
			   " SELECT 1 + (p.warmup = 0), p.variant_idx, p.workload_idx, count(*),"
			   " total(r.cost_s) FROM results r JOIN plan p ON p.run_id = r.run_id"
			   " AND p.seq = r.seq WHERE r.run_id = ?1 AND r.cost_s IS NOT NULL"
			   " GROUP BY p.variant_idx, p.workload_idx, p.warmup",
			   run_id, &cost_rows, &rows, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct cost_row *x = (const struct cost_row *)rows + i;
		if (x->variant < 0 || (size_t)x->variant >= n_variants)
			continue;
		if (x->kind == 0) {
			vc[x->variant].entries = x->n;
			vc[x->variant].switch_s = x->sum;
		} else if (x->kind == 1) {
			vc[x->variant].warmup_s += x->sum;
		} else if (x->workload >= 0 && (size_t)x->workload < n_workloads) {
			rc[(size_t)x->workload * n_variants + (size_t)x->variant] =
				(struct store_run_cost){ x->n, x->sum };
		}
	}
	free(rows);
	return 0;
}

int store_each_unavailable(struct store *s, int64_t run_id,
			   store_unavailable_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (db_prepare_run(s, "SELECT metric, reason FROM unavailable WHERE run_id = ?1"
			   " ORDER BY metric", run_id, &st) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ret = fn((const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1), ctx);
		if (ret)
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_read_error(s);
out:
	sqlite3_finalize(st);
	return ret;
}

int store_find_resumable(struct store *s, const char *sha256, int64_t *run_id)
{
	return db_query_id(s, "SELECT r.id FROM runs r"
			   " JOIN experiments e ON e.id = r.experiment_id"
			   " WHERE e.sha256 = ?1 AND r.status <> 'completed'"
			   " ORDER BY r.id DESC LIMIT 1", sha256, run_id);
}

int store_latest_run(struct store *s, int64_t *run_id)
{
	return db_query_id(s, "SELECT max(id) FROM runs", NULL, run_id);
}

/* "1-3, 7, 9-12" */
static void add_id_range(struct strbuf *sb, int64_t first, int64_t last)
{
	strbuf_addf(sb, "%s%" PRId64, sb->len ? ", " : "", first);
	if (last > first)
		strbuf_addf(sb, "-%" PRId64, last);
}

/* The ids of the runs stored, as ranges: "1-3, 7, 9-12". */
static int add_run_ids(struct store *s, struct strbuf *sb)
{
	sqlite3_stmt *st = NULL;
	int64_t first = 0, last = 0, id;
	int rc, ret = 0, have = 0;

	if (db_prepare(s, "SELECT id FROM runs ORDER BY id", &st, db_read_error) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		if (have && id == last + 1) {
			last = id;
			continue;
		}
		if (have)
			add_id_range(sb, first, last);
		first = last = id;
		have = 1;
	}
	if (have)
		add_id_range(sb, first, last);
	if (rc != SQLITE_DONE)
		ret = db_read_error(s);
	sqlite3_finalize(st);
	return ret;
}

/* "no run SPEC in results database 'PATH'", and what it holds. */
static int no_run_named(struct store *s, const char *spec)
{
	struct strbuf ids = STRBUF_INIT, cmd = STRBUF_INIT;

	if (add_run_ids(s, &ids) < 0) {
		strbuf_release(&ids);
		return -1;
	}
	if (!ids.len)
		error("no run %s in results database '%s': it holds no run yet (run 'perturb run' "
		      "first)", spec, s->path);
	else {
		strbuf_addstr(&cmd, "perturb runs --db ");
		strbuf_add_shell_word(&cmd, s->path);
		error("no run %s in results database '%s': it holds run%s %s ('%s' lists them; "
		      "--run latest or -1 is the latest, -2 the one before)", spec, s->path,
		      strchr(ids.buf, ',') || strchr(ids.buf, '-') ? "s" : "", ids.buf, cmd.buf);
	}
	strbuf_release(&cmd);
	strbuf_release(&ids);
	return -1;
}

static int no_run(struct store *s, int64_t run_id)
{
	char spec[32];

	snprintf(spec, sizeof(spec), "%" PRId64, run_id);
	return no_run_named(s, spec);
}

/* The labels stored, distinct (*labels for argv_free(); NULL: none). */
static int stored_labels(struct store *s, char ***labels)
{
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int rc;

	*labels = NULL;
	if (db_prepare(s, "SELECT DISTINCT label FROM runs WHERE label IS NOT NULL ORDER BY label",
		       &st, db_read_error) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		argv_push(labels, &n, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_read_error(s);
}

/* --run LABEL: the one run with that label. */
static int resolve_label(struct store *s, const char *label, int64_t *run_id, int *usage)
{
	sqlite3_stmt *st = NULL;
	struct strbuf ids = STRBUF_INIT;
	char **labels = NULL;
	size_t n = 0;
	int rc;

	if (db_prepare(s, "SELECT id FROM runs WHERE label = ?1 ORDER BY id", &st, db_read_error) < 0)
		return -1;
	if (sqlite3_bind_text(st, 1, label, -1, SQLITE_STATIC) != SQLITE_OK) {
		sqlite3_finalize(st);
		return db_read_error(s);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		strbuf_addf(&ids, "%s%lld", n++ ? ", " : "", (long long)*run_id);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		strbuf_release(&ids);
		*run_id = 0;
		return db_read_error(s);
	}
	if (n == 1) {
		strbuf_release(&ids);
		return 0;
	}
	*run_id = 0;
	if (usage)
		*usage = 1;
	if (n > 1) {
		error("--run '%s' is ambiguous: runs %s have that label in results database '%s' "
		      "(name one by its id)", label, ids.buf, s->path);
		strbuf_release(&ids);
		return -1;
	}
	strbuf_release(&ids);
	if (stored_labels(s, &labels) < 0)
		return -1;
	const char *sug = labels ? did_you_mean(label, (const char *const *)labels) : NULL;
	if (sug)
		error("no run labelled '%s' in results database '%s'; did you mean '%s'?", label,
		      s->path, sug);
	else
		no_run_named(s, label);
	argv_free(labels);
	return -1;
}

int store_resolve_run(struct store *s, const char *spec, int64_t *run_id, int *usage)
{
	sqlite3_stmt *st = NULL;
	long n;
	int rc, ret = -1;

	if (usage)
		*usage = 0;
	*run_id = 0;
	if (!spec || !*spec || !strcmp(spec, "latest")) {
		n = 1;
	} else if (spec[0] == '-' && !parse_long(spec + 1, 1, LONG_MAX, &n)) {
		;
	} else if (!parse_long(spec, 1, LONG_MAX, &n)) {
		if (db_prepare_run(s, "SELECT id FROM runs WHERE id = ?1", n, &st) < 0)
			return -1;
		goto step;
	} else {
		return resolve_label(s, spec, run_id, usage);
	}
	/* the Nth latest */
	if (db_prepare_run(s, "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1 - 1", n,
			   &st) < 0)
		return -1;
step:
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*run_id = sqlite3_column_int64(st, 0);
		ret = 0;
	} else if (rc == SQLITE_DONE) {
		if (usage)
			*usage = 1;
		no_run_named(s, spec && *spec ? spec : "latest");
	} else {
		db_read_error(s);
	}
	sqlite3_finalize(st);
	return ret;
}

int store_each_failure(struct store *s, int64_t run_id, store_failure_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (db_prepare_run(s, "SELECT r.seq, p.repetition, p.warmup, p.variant, p.workload,"
			   " r.status, r.reason, r.output_tail FROM results r"
			   " JOIN plan p ON p.run_id = r.run_id AND p.seq = r.seq"
			   " WHERE r.run_id = ?1 AND r.status <> 'ok' ORDER BY r.seq", run_id, &st) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *tail = (const char *)sqlite3_column_text(st, 7);
		struct stored_failure f = {
			.seq = sqlite3_column_int(st, 0),
			.repetition = sqlite3_column_int(st, 1),
			.warmup = sqlite3_column_int(st, 2),
			.variant = (const char *)sqlite3_column_text(st, 3),
			.workload = (const char *)sqlite3_column_text(st, 4),
			.status = (const char *)sqlite3_column_text(st, 5),
			.reason = (const char *)sqlite3_column_text(st, 6),
			.output_tail = tail ? tail : "",
		};
		if ((ret = fn(&f, ctx)))
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_read_error(s);
	sqlite3_finalize(st);
	return ret;
}

static void fill_summary(sqlite3_stmt *st, void *row)
{
	struct run_summary *r = row;

	r->id = sqlite3_column_int64(st, 0);
	r->name = db_column_dup(st, 1);
	r->started = db_column_dup(st, 2);
	r->ended = db_column_dup(st, 3);
	r->status = db_column_dup(st, 4);
	r->hostname = db_column_dup(st, 5);
	r->cpu_model = db_column_dup(st, 6);
	r->cores = sqlite3_column_int64(st, 7);
	r->kernel_release = db_column_dup(st, 8);
	r->total = sqlite3_column_int64(st, 9);
	r->done = sqlite3_column_int64(st, 10);
	r->failed = sqlite3_column_int64(st, 11);
	r->label = db_column_dup(st, 12);
	r->revision = db_column_dup(st, 13);
	r->commit = db_column_dup(st, 14);
	r->sha256 = db_column_dup(st, 15);
	r->repo = db_column_dup(st, 16);
}

static const size_t summary_strs[] = {
	offsetof(struct run_summary, name), offsetof(struct run_summary, started),
	offsetof(struct run_summary, ended), offsetof(struct run_summary, status),
	offsetof(struct run_summary, hostname), offsetof(struct run_summary, cpu_model),
	offsetof(struct run_summary, kernel_release), offsetof(struct run_summary, label),
	offsetof(struct run_summary, revision), offsetof(struct run_summary, commit),
	offsetof(struct run_summary, sha256), offsetof(struct run_summary, repo),
};

static const struct row_kind summary_rows = {
	sizeof(struct run_summary), fill_summary, summary_strs, ARRAY_SIZE(summary_strs),
};

/* The runs (columns as fill_summary() reads them), with counts: the
 * three counts' columns (total, done, failed). */
#define RUNS_SQL(counts) \
	"SELECT r.id, r.name, r.started, r.ended, r.status," \
	" CASE WHEN json_valid(r.machine_json)" \
	"  THEN json_extract(r.machine_json, '$.hostname') END," \
	" r.cpu_model, r.cores, r.kernel_release, " counts "," \
	" r.label, r.revision, r.commit_id, e.sha256, r.repo" \
	" FROM runs r JOIN experiments e ON e.id = r.experiment_id ORDER BY r.id"

static int list_runs(struct store *s, const char *sql, struct run_summary **runs, size_t *n)
{
	sqlite3_stmt *st = NULL;
	void *rows;
	int rc;

	*runs = NULL;
	*n = 0;
	if (db_prepare(s, sql, &st, db_read_error) < 0)
		return -1;
	rc = db_rows_collect(s, st, &summary_rows, &rows, n);
	*runs = rows;
	return rc;
}

int store_list_runs(struct store *s, struct run_summary **runs, size_t *n)
{
	return list_runs(s, RUNS_SQL(
		"(SELECT count(*) FROM plan p WHERE p.run_id = r.id),"
		" (SELECT count(*) FROM results x WHERE x.run_id = r.id),"
		" (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status <> 'ok')"),
		runs, n);
}

int store_list_runs_brief(struct store *s, struct run_summary **runs, size_t *n)
{
	return list_runs(s, RUNS_SQL("0, 0, 0"), runs, n);
}

struct run_counts {
	int64_t total, done;
};

static void fill_counts(sqlite3_stmt *st, void *row)
{
	struct run_counts *c = row;

	c->total = sqlite3_column_int64(st, 0);
	c->done = sqlite3_column_int64(st, 1);
}

static const struct row_kind counts_rows = { sizeof(struct run_counts), fill_counts, NULL, 0 };

int store_run_counts(struct store *s, int64_t run_id, int64_t *done, int64_t *total)
{
	struct run_counts *c;
	void *rows;
	size_t n;

	*done = *total = 0;
	if (db_rows_of_run(s, "SELECT (SELECT count(*) FROM plan WHERE run_id = ?1),"
			   " (SELECT count(*) FROM results WHERE run_id = ?1)", run_id,
			   &counts_rows, &rows, &n) < 0)
		return -1;
	if ((c = rows) && n) {
		*total = c->total;
		*done = c->done;
	}
	db_rows_free(&counts_rows, rows, n);
	return 0;
}

void run_summaries_release(struct run_summary *runs, size_t n)
{
	db_rows_free(&summary_rows, runs, n);
}

/* Step st (from db_prepare_run()) to the run's row: 0, or -1 (printed) when
 * there is no such run or the query fails. */
static int step_run_row(struct store *s, sqlite3_stmt *st, int64_t run_id)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? no_run(s, run_id) : db_read_error(s);
}

int store_load_plan(struct store *s, int64_t run_id, struct plan *plan,
		    unsigned char **done)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	memset(plan, 0, sizeof(*plan));
	*done = NULL;
	if (db_prepare_run(s, "SELECT id FROM runs WHERE id = ?1", run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	sqlite3_finalize(st);

	if (db_prepare_run(s, "SELECT seq, variant_idx, workload_idx, repetition, warmup,"
			   " round, block FROM plan WHERE run_id = ?1 ORDER BY seq", run_id, &st) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct plan_entry *e;
		ALLOC_GROW(plan->e, plan->n + 1, plan->alloc);
		e = &plan->e[plan->n];
		e->seq = sqlite3_column_int(st, 0);
		e->variant = sqlite3_column_int(st, 1);
		e->workload = sqlite3_column_int(st, 2);
		e->repetition = sqlite3_column_int(st, 3);
		e->warmup = sqlite3_column_int(st, 4);
		e->round = sqlite3_column_int(st, 5);
		e->block = sqlite3_column_int(st, 6);
		if (e->seq != (int)plan->n) {
			error("results database '%s' is damaged: run %" PRId64 " has no plan entry %zu",
			      s->path, run_id, plan->n);
			goto out;
		}
		plan->n++;
	}
	if (rc != SQLITE_DONE) {
		db_read_error(s);
		goto out;
	}
	sqlite3_finalize(st);

	*done = xcalloc(plan->n ? plan->n : 1, 1);
	if (db_prepare_run(s, "SELECT seq FROM results WHERE run_id = ?1", run_id, &st) < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int seq = sqlite3_column_int(st, 0);
		if (seq >= 0 && (size_t)seq < plan->n)
			(*done)[seq] = 1;
	}
	if (rc != SQLITE_DONE) {
		db_read_error(s);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	if (ret < 0) {
		free(plan->e);
		memset(plan, 0, sizeof(*plan));
		free(*done);
		*done = NULL;
	}
	return ret;
}

int store_run_header(struct store *s, int64_t run_id, struct run_header *h)
{
	sqlite3_stmt *st = NULL;
	const char *seed;
	char *end;
	int ret = -1;

	memset(h, 0, sizeof(*h));
	if (db_prepare_run(s, "SELECT r.id, r.name, e.path, r.baseline, r.seed,"
			   " r.\"order\", r.started, r.ended, r.status, r.machine_json,"
			   " e.sha256 FROM runs r JOIN experiments e ON e.id = r.experiment_id"
			   " WHERE r.id = ?1", run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	seed = (const char *)sqlite3_column_text(st, 4);
	errno = 0;
	h->seed = seed ? strtoull(seed, &end, 10) : 0;
	if (!seed || !*seed || *end || errno || *seed == '-') {
		error("results database '%s' is damaged: run %" PRId64 " has seed '%s'",
		      s->path, run_id, seed ? seed : "");
		goto out;
	}
	h->id = sqlite3_column_int64(st, 0);
	h->experiment = db_column_dup(st, 1);
	h->path = db_column_dup(st, 2);
	h->baseline = db_column_dup(st, 3);
	h->order = db_column_dup(st, 5);
	h->started = db_column_dup(st, 6);
	h->ended = db_column_dup(st, 7);
	h->status = db_column_dup(st, 8);
	h->machine_json = db_column_dup(st, 9);
	h->sha256 = db_column_dup(st, 10);
	ret = 0;
out:
	sqlite3_finalize(st);
	if (ret < 0)
		run_header_release(h);
	return ret;
}

static void fill_name(sqlite3_stmt *st, void *row)
{
	*(char **)row = db_column_dup(st, 0);
}

static const size_t name_strs[] = { 0 };
static const struct row_kind name_rows = { sizeof(char *), fill_name, name_strs, 1 };

static void free_names(char **v, size_t n)
{
	db_rows_free(&name_rows, v, n);
}

static int names(struct store *s, const char *sql, int64_t run_id,
		 char ***out, size_t *n)
{
	void *rows;
	int rc = db_rows_of_run(s, sql, run_id, &name_rows, &rows, n);

	*out = rows;
	return rc;
}

int store_variant_names(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT name FROM variants WHERE run_id = ?1 ORDER BY idx",
		     run_id, names_out, n);
}

const char *variant_timebase(const struct variant *v)
{
	return backend_virtual_time(v) ? "virtual" : "real";
}

int store_variant_timebases(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT timebase FROM variants WHERE run_id = ?1 ORDER BY idx",
		     run_id, names_out, n);
}

int store_calibration(struct store *s, int64_t run_id, int col, char ***out, size_t *n)
{
	static const char *const sql[] = {
		"SELECT CAST(c.hits AS TEXT) FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
		"SELECT c.hits_metric FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
		"SELECT c.metric FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
		"SELECT c.ops_metric FROM workloads w LEFT JOIN calibration c"
		" ON c.run_id = w.run_id AND c.workload = w.name WHERE w.run_id = ?1 ORDER BY w.idx",
	};
	return names(s, sql[col], run_id, out, n);
}

int store_variant_tracers(struct store *s, int64_t run_id, int col, char ***out, size_t *n)
{
	static const char *const sql[] = {
		"SELECT t.tracer FROM variants v LEFT JOIN tracer_variants t"
		" ON t.run_id = v.run_id AND t.variant = v.name WHERE v.run_id = ?1 ORDER BY v.idx",
		"SELECT t.attach FROM variants v LEFT JOIN tracer_variants t"
		" ON t.run_id = v.run_id AND t.variant = v.name WHERE v.run_id = ?1 ORDER BY v.idx",
	};
	return names(s, sql[col], run_id, out, n);
}

int store_workload_names(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT name FROM workloads WHERE run_id = ?1 ORDER BY idx",
		     run_id, names_out, n);
}

int store_workload_primaries(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT primary_metric FROM workloads WHERE run_id = ?1 ORDER BY idx",
		     run_id, names_out, n);
}

int store_metric_names(struct store *s, int64_t run_id, char ***names_out, size_t *n)
{
	return names(s, "SELECT column1 FROM (VALUES ('wall'), ('user'), ('sys'), ('maxrss'))"
		     " WHERE EXISTS (SELECT 1 FROM results WHERE run_id = ?1)"
		     " UNION SELECT DISTINCT metric FROM metric_values WHERE run_id = ?1",
		     run_id, names_out, n);
}

static void fill_matrix(sqlite3_stmt *st, void *row)
{
	struct store_matrix_row *r = row;

	r->is_variant = !strcmp((const char *)sqlite3_column_text(st, 0), "variant");
	r->name = db_column_dup(st, 1);
	r->base = db_column_dup(st, 2);
	r->param = db_column_dup(st, 3);
	r->value = db_column_dup(st, 4);
	r->x = sqlite3_column_type(st, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 5);
	r->is_list = sqlite3_column_int(st, 6);
}

static const size_t matrix_strs[] = {
	offsetof(struct store_matrix_row, name), offsetof(struct store_matrix_row, base),
	offsetof(struct store_matrix_row, param), offsetof(struct store_matrix_row, value),
};

static const struct row_kind matrix_rows = {
	sizeof(struct store_matrix_row), fill_matrix, matrix_strs, ARRAY_SIZE(matrix_strs),
};

void store_matrix_free(struct store_matrix_row *rows, size_t n)
{
	db_rows_free(&matrix_rows, rows, n);
}

int store_matrix(struct store *s, int64_t run_id, struct store_matrix_row **out, size_t *n)
{
	void *rows;
	int rc;

	/* in stored order: the instances as the experiment listed them */
	rc = db_rows_of_run(s, "SELECT m.kind, m.name, m.base, m.param, m.value, m.x, m.is_list"
			    " FROM matrix m"
			    " LEFT JOIN variants v ON m.kind = 'variant' AND v.run_id = m.run_id AND v.name = m.name"
			    " LEFT JOIN workloads w ON m.kind = 'workload' AND w.run_id = m.run_id AND w.name = m.name"
			    " WHERE m.run_id = ?1"
			    " ORDER BY m.kind, coalesce(v.idx, w.idx), m.param", run_id, &matrix_rows,
			    &rows, n);
	*out = rows;
	return rc;
}

int store_count_failed(struct store *s, int64_t run_id, const char *variant,
		       const char *workload, int *failed, int *total)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	*failed = *total = 0;
	if (db_prepare(s, "SELECT count(*), coalesce(sum(r.status <> 'ok'), 0)"
		       " FROM plan p JOIN results r ON r.run_id = p.run_id AND r.seq = p.seq"
		       " WHERE p.run_id = ?1 AND p.variant = ?2 AND p.workload = ?3"
		       " AND p.warmup = 0", &st, db_read_error) < 0)
		return -1;
	if (sqlite3_bind_int64(st, 1, run_id) |
	    sqlite3_bind_text(st, 2, variant, -1, SQLITE_STATIC) |
	    sqlite3_bind_text(st, 3, workload, -1, SQLITE_STATIC) ||
	    sqlite3_step(st) != SQLITE_ROW) {
		db_read_error(s);
		goto out;
	}
	*total = sqlite3_column_int(st, 0);
	*failed = sqlite3_column_int(st, 1);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * store_each_value(): three scans of the run's rows in primary-key order,
 * merged by seq here (SQLite joins by a b-tree search per row and orders by
 * sorting; this does neither): plan (variant, workload, repetition and
 * warm-up of every seq), results (status and the four built-in metrics),
 * metric_values (by seq, then metric).  Names by index from two small
 * queries.  One snapshot: each statement takes its first step while the
 * others are pending, and SQLite keeps a connection's read transaction
 * while any statement is.  At 10^6 runs this reads in 0.5 s what one
 * ORDER BY over every value took 15 s for (bench/report-1e6.sh).
 */
static const char walk_plan_sql[] =
	"SELECT seq, variant_idx, workload_idx, repetition, warmup, block"
	" FROM plan WHERE run_id = ?1 ORDER BY seq";
static const char walk_results_sql[] =
	"SELECT seq, status, wall_s, user_s, sys_s, maxrss_kb"
	" FROM results WHERE run_id = ?1 ORDER BY seq";
static const char walk_values_sql[] =
	"SELECT seq, metric, unit, value, scaled"
	" FROM metric_values WHERE run_id = ?1 ORDER BY seq, metric";

/* The columns given as metrics: the first entries of core/result.h's one
 * list, in the order of walk_results_sql's columns after status. */
#define builtin_metrics result_reserved_metrics
enum { N_BUILTIN = 4 };

/* One cursor of the walk: a statement and whether it is on a row. */
struct cursor {
	sqlite3_stmt *st;
	int row;		/* 1: on a row, 0: done */
	int seq;		/* column 0 of the row */
};

static int cursor_open(struct store *s, struct cursor *c, const char *sql, int64_t run_id)
{
	c->row = 0;
	return db_prepare_run(s, sql, run_id, &c->st);
}

static int cursor_step(struct store *s, struct cursor *c)
{
	int rc = sqlite3_step(c->st);

	c->row = rc == SQLITE_ROW;
	if (c->row)
		c->seq = sqlite3_column_int(c->st, 0);
	else if (rc != SQLITE_DONE)
		return db_read_error(s);
	return 0;
}

/* Step c until it is on seq or past it (or done). */
static int cursor_seek(struct store *s, struct cursor *c, int seq)
{
	while (c->row && c->seq < seq)
		if (cursor_step(s, c) < 0)
			return -1;
	return 0;
}

/* The metric names met in one walk, the built-ins first: their index is a
 * stored_value's metric_idx. */
struct metric_names {
	char **v;
	size_t n, alloc;
	size_t last;		/* index of the previous lookup */
};

/*
 * The index of name, added when new.  A seq's metrics come by name and
 * most seqs have the same set, so the one after the previous lookup is
 * tried first: one strcmp a row in the common case.
 */
static int metric_index(struct metric_names *mn, const char *name)
{
	size_t guess = mn->last + 1 < mn->n ? mn->last + 1 : 0;

	if (mn->n && !strcmp(mn->v[guess], name))
		return (int)(mn->last = guess);
	for (size_t i = 0; i < mn->n; i++)
		if (!strcmp(mn->v[i], name))
			return (int)(mn->last = i);
	ALLOC_GROW(mn->v, mn->n + 1, mn->alloc);
	mn->v[mn->n] = xstrdup(name);
	return (int)(mn->last = mn->n++);
}

/* Names by stored index (variant_idx / workload_idx of the plan). */
static const char *name_at(char **names, size_t n, int idx)
{
	return idx >= 0 && (size_t)idx < n ? names[idx] : "?";
}

/* The state of one walk. */
struct walk {
	struct store *s;
	const struct store_walk *w;
	struct cursor plan, res, val;
	struct metric_names mn;
	char **vn, **wn;	/* variant and workload names by idx */
	size_t nv, nw;
};

/*
 * The values of the result row res is on (its plan row is plan's): the
 * built-in metrics from the row, then its metric_values rows.  Returns 0,
 * -1 after an error, or what fn returned when that was non-zero.
 */
static int walk_result(struct walk *k)
{
	const struct store_walk *w = k->w;
	sqlite3_stmt *r = k->res.st, *p = k->plan.st;
	struct stored_value v = { .seq = k->res.seq };
	int ok, ret;

	v.variant_idx = sqlite3_column_int(p, 1);
	v.workload_idx = sqlite3_column_int(p, 2);
	v.variant = name_at(k->vn, k->nv, v.variant_idx);
	v.workload = name_at(k->wn, k->nw, v.workload_idx);
	v.repetition = sqlite3_column_int(p, 3);
	v.warmup = sqlite3_column_int(p, 4);
	v.block = sqlite3_column_int(p, 5);
	v.status = (const char *)sqlite3_column_text(r, 1);
	ok = v.status && !strcmp(v.status, "ok");
	if (w->not_ok && !ok)
		(*w->not_ok)++;
	if (w->total && !v.warmup && v.variant_idx >= 0 &&
	    (size_t)v.variant_idx < w->n_variants && v.workload_idx >= 0 &&
	    (size_t)v.workload_idx < w->n_workloads) {
		size_t i = (size_t)v.workload_idx * w->n_variants + (size_t)v.variant_idx;
		w->total[i]++;
		w->failed[i] += !ok;
	}
	if (!w->fn || (v.warmup && !w->include_warmup) || (!ok && !w->include_failed))
		return 0;
	for (int m = 0; m < N_BUILTIN; m++) {
		if (sqlite3_column_type(r, 2 + m) == SQLITE_NULL)
			continue;
		v.metric = builtin_metrics[m].name;
		v.unit = builtin_metrics[m].unit;
		v.metric_idx = m;
		v.value = sqlite3_column_double(r, 2 + m);
		if ((ret = w->fn(&v, w->ctx)))
			return ret;
	}
	if (cursor_seek(k->s, &k->val, v.seq) < 0)
		return -1;
	while (k->val.row && k->val.seq == v.seq) {
		sqlite3_stmt *m = k->val.st;
		const char *name = (const char *)sqlite3_column_text(m, 1);

		v.metric = name ? name : "";
		v.unit = (const char *)sqlite3_column_text(m, 2);
		v.value = sqlite3_column_double(m, 3);
		v.scaled = sqlite3_column_int(m, 4);
		v.metric_idx = metric_index(&k->mn, v.metric);
		if ((ret = w->fn(&v, w->ctx)))
			return ret;
		if (cursor_step(k->s, &k->val) < 0)
			return -1;
	}
	return 0;
}

int store_walk_values(struct store *s, int64_t run_id, const struct store_walk *w)
{
	struct walk k = { .s = s, .w = w };
	int ret = -1;

	for (size_t i = 0; i < N_BUILTIN; i++)
		metric_index(&k.mn, builtin_metrics[i].name);
	if (store_variant_names(s, run_id, &k.vn, &k.nv) < 0 ||
	    store_workload_names(s, run_id, &k.wn, &k.nw) < 0 ||
	    cursor_open(s, &k.plan, walk_plan_sql, run_id) < 0 ||
	    cursor_open(s, &k.res, walk_results_sql, run_id) < 0 ||
	    cursor_open(s, &k.val, walk_values_sql, run_id) < 0 ||
	    cursor_step(s, &k.plan) < 0 || cursor_step(s, &k.res) < 0 ||
	    cursor_step(s, &k.val) < 0)
		goto out;
	while (k.res.row) {
		if (cursor_seek(s, &k.plan, k.res.seq) < 0)
			goto out;
		/* a result without a plan entry (the schema forbids it) is skipped */
		if (k.plan.row && k.plan.seq == k.res.seq && (ret = walk_result(&k)))
			goto out;
		ret = -1;
		if (cursor_step(s, &k.res) < 0)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(k.plan.st);
	sqlite3_finalize(k.res.st);
	sqlite3_finalize(k.val.st);
	free_names(k.mn.v, k.mn.n);
	free_names(k.vn, k.nv);
	free_names(k.wn, k.nw);
	return ret;
}

int store_each_value(struct store *s, int64_t run_id, int include_warmup,
		     int include_failed, store_value_fn fn, void *ctx)
{
	struct store_walk w = {
		.include_warmup = include_warmup,
		.include_failed = include_failed,
		.fn = fn,
		.ctx = ctx,
	};
	return store_walk_values(s, run_id, &w);
}

int store_experiment_text(struct store *s, int64_t run_id, char **text, size_t *len)
{
	sqlite3_stmt *st = NULL;
	const void *p;
	int ret = -1, n;

	*text = NULL;
	*len = 0;
	if (db_prepare_run(s, "SELECT e.text FROM runs r JOIN experiments e"
			   " ON e.id = r.experiment_id WHERE r.id = ?1", run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	p = sqlite3_column_blob(st, 0);
	n = sqlite3_column_bytes(st, 0);
	*text = xmalloc((size_t)n + 1);
	if (n)
		memcpy(*text, p, (size_t)n);
	(*text)[n] = '\0';
	*len = (size_t)n;
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

const char *const store_provenance_keys[STORE_N_PROVENANCE] = {
	"perturb_version", "kernel_release", "kernel_cmdline", "cpu_model",
	"cores", "governor", "smt", "aslr",
};

int store_run_provenance(struct store *s, int64_t run_id, char *out[STORE_N_PROVENANCE])
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	for (size_t i = 0; i < STORE_N_PROVENANCE; i++)
		out[i] = NULL;
	if (db_prepare_run(s, "SELECT perturb_version, kernel_release, kernel_cmdline,"
			   " cpu_model, cores, governor, smt, aslr FROM runs WHERE id = ?1",
			   run_id, &st) < 0)
		return -1;
	if (step_run_row(s, st, run_id) < 0)
		goto out;
	for (int i = 0; i < STORE_N_PROVENANCE; i++)
		out[i] = db_column_dup(st, i);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}
