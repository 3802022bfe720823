/* test_store.c - the results database (harness/engine/store*.c) */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/machine.h"
#include "engine/store.h"
#include "backends/qemu_config.h"
#include "testlib.h"
#include "lib/util.h"

static char *tmpdir;
static char dbpath[256];
static char errpath[256];

static void setup(void)
{
	tmpdir = tl_tmpdir();
	snprintf(dbpath, sizeof(dbpath), "%s/sub/dir/perturb.db", tmpdir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmpdir);
}

static void teardown(void)
{
	tl_rmtree(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
}

TestSuite(store, .init = setup, .fini = teardown);

/* stderr into a file while a failure is expected; capture_end returns it. */
static int saved_stderr = -1;

static void capture_begin(void)
{
	int fd;
	fflush(stderr);
	saved_stderr = dup(2);
	fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0 && saved_stderr >= 0);
	dup2(fd, 2);
	close(fd);
}

static char *capture_end(void)
{
	char *s;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	s = read_file(errpath, NULL);
	cr_assert_not_null(s);
	return s;
}

/*
 * The fixture: two variants and two workloads whose stored order differs
 * from their names' order, and a hand-made interleaved plan of 3 rounds
 * (round 0 = warm-ups) over the pairs in the order (v1,w1) (v1,w0) (v0,w1)
 * (v0,w0): 12 entries.
 */
static struct variant variants[] = {
	{ .name = "zeta", .description = "the baseline" },
	{ .name = "alpha", .be = &backend_qemu, .cfg = &(struct boot_cfg){ .deterministic = 1 } },
};
static struct workload workloads[] = {
	{ .name = "w2", .kind = WORKLOAD_REAL, .description = "a real one" },
	{ .name = "w1", .kind = WORKLOAD_MICRO },
};
static char exp_text[] = "name: fixture\nvariants: [zeta, alpha]\n";

static void make_experiment(struct experiment *exp)
{
	memset(exp, 0, sizeof(*exp));
	exp->path = "tests/fixture.yaml";
	exp->text = exp_text;
	exp->text_len = strlen(exp_text);
	exp->name = "fixture";
	exp->baseline = "zeta";
	exp->repetitions = 2;
	exp->warmup = 1;
	exp->order = ORDER_INTERLEAVED;
	exp->variants = variants;
	exp->n_variants = ARRAY_SIZE(variants);
	exp->workloads = workloads;
	exp->n_workloads = ARRAY_SIZE(workloads);
}

#define PLAN_N 12

static void make_plan(struct plan *p)
{
	p->e = xcalloc(PLAN_N, sizeof(*p->e));
	p->n = p->alloc = PLAN_N;
	for (int r = 0, seq = 0; r < 3; r++)
		for (int v = 1; v >= 0; v--)
			for (int w = 1; w >= 0; w--, seq++) {
				struct plan_entry *e = &p->e[seq];
				e->seq = seq;
				e->variant = v;
				e->workload = w;
				e->warmup = r == 0;
				e->repetition = r == 0 ? 0 : r - 1;
				e->round = r;
				e->block = 10 + r;
			}
}

static struct machine_info machine = {
	.hostname = "box", .kernel_release = "6.1.0-test", .kernel_version = "#1",
	.kernel_cmdline = "quiet", .arch = "x86_64", .cpu_model = "Test CPU",
	.cores = 4, .governor = "performance", .smt = "off", .aslr = "2",
	.loadavg = "0.00 0.01 0.05", .perturb_version = PERTURB_VERSION,
};

/* Seq 5 fails (exit 3, only metric "zz" found), seq 6 crashes (no values);
 * every other run is ok with metrics "zz", "a" and, on w1, "mm". */
static enum run_status status_of(int seq)
{
	return seq == 5 ? RUN_FAILED : seq == 6 ? RUN_CRASHED : RUN_OK;
}

static int has_metric(const struct plan *p, int seq, const char *metric)
{
	if (!strcmp(metric, "wall") || !strcmp(metric, "user") ||
	    !strcmp(metric, "sys") || !strcmp(metric, "maxrss"))
		return 1;
	if (!strcmp(metric, "zz"))
		return status_of(seq) != RUN_CRASHED;
	if (status_of(seq) != RUN_OK)
		return 0;
	if (!strcmp(metric, "a"))
		return 1;
	return !strcmp(metric, "mm") && p->e[seq].workload == 1;
}

static double value_of(int seq, const char *metric)
{
	if (!strcmp(metric, "wall"))
		return 1.0 + seq / 8.0;
	if (!strcmp(metric, "user"))
		return seq / 16.0;
	if (!strcmp(metric, "sys"))
		return seq / 32.0;
	if (!strcmp(metric, "maxrss"))
		return 1000 + seq;
	if (!strcmp(metric, "zz"))
		return seq * 2.5;
	if (!strcmp(metric, "a"))
		return -seq * 3.0;
	return seq * 1e-9;
}

static const char *unit_of(const char *metric)
{
	if (!strcmp(metric, "maxrss"))
		return "KiB";
	if (!strcmp(metric, "zz"))
		return "ops";
	if (!strcmp(metric, "a"))
		return "";
	if (!strcmp(metric, "mm"))
		return "ns";
	return "s";
}

static void make_result(const struct plan *p, int seq, struct run_result *r)
{
	static const char *const names[] = { "zz", "a", "mm" };

	memset(r, 0, sizeof(*r));
	r->status = status_of(seq);
	r->exit_code = r->status == RUN_FAILED ? 3 : 0;
	r->signal = r->status == RUN_CRASHED ? 11 : 0;
	if (r->status != RUN_OK)
		snprintf(r->reason, sizeof(r->reason), "went wrong at %d", seq);
	strcpy(r->started, "2026-11-30T10:00:00Z");
	r->wall_s = value_of(seq, "wall");
	r->user_s = value_of(seq, "user");
	r->sys_s = value_of(seq, "sys");
	r->maxrss_kb = (long)value_of(seq, "maxrss");
	r->values = xcalloc(ARRAY_SIZE(names), sizeof(*r->values));
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!has_metric(p, seq, names[i]))
			continue;
		struct metric_value *v = &r->values[r->n_values++];
		v->name = (char *)names[i];
		v->value = value_of(seq, names[i]);
		v->unit = (char *)unit_of(names[i]);
	}
	r->out_tail = xasprintf("output of %d", seq);
	r->output_dropped = (uint64_t)seq << 32;	/* past 32 bits */
}

static void free_result(struct run_result *r)
{
	free(r->values);
	free(r->out_tail);
}

static void put_result(struct store *s, int64_t run, const struct plan *p,
		       int seq)
{
	struct run_result r;
	make_result(p, seq, &r);
	cr_assert_eq(store_put_result(s, run, seq, &r), 0, "seq %d", seq);
	free_result(&r);
}

/* A stored fixture run with results for the given seqs (all when n < 0). */
static struct store *fixture(struct plan *p, int64_t *run, const int *seqs, int n)
{
	struct experiment exp;
	struct store *s;

	make_experiment(&exp);
	make_plan(p);
	cr_assert_eq(store_open(dbpath, 1, &s), 0);
	cr_assert_eq(store_begin_run(s, &exp, p, 42, "perturb run x.yaml",
				     &machine, NULL, run), 0);
	cr_assert_gt(*run, 0);
	for (int i = 0; i < (n < 0 ? PLAN_N : n); i++)
		put_result(s, *run, p, n < 0 ? i : seqs[i]);
	return s;
}

struct rec {
	int seq, repetition, warmup;
	char variant[16], workload[16], metric[16], unit[8], status[16];
	double value;
	int variant_idx, workload_idx, metric_idx;
};

struct recs {
	struct rec *v;
	size_t n, alloc;
	size_t stop_after;	/* 0 = never */
};

static int collect(const struct stored_value *v, void *ctx)
{
	struct recs *rs = ctx;
	struct rec *r;

	ALLOC_GROW(rs->v, rs->n + 1, rs->alloc);
	r = &rs->v[rs->n++];
	r->seq = v->seq;
	r->repetition = v->repetition;
	r->warmup = v->warmup;
	snprintf(r->variant, sizeof(r->variant), "%s", v->variant);
	snprintf(r->workload, sizeof(r->workload), "%s", v->workload);
	snprintf(r->metric, sizeof(r->metric), "%s", v->metric);
	snprintf(r->unit, sizeof(r->unit), "%s", v->unit);
	snprintf(r->status, sizeof(r->status), "%s", v->status);
	r->value = v->value;
	r->variant_idx = v->variant_idx;
	r->workload_idx = v->workload_idx;
	r->metric_idx = v->metric_idx;
	return rs->stop_after && rs->n == rs->stop_after ? 7 : 0;
}

/* The documented order, spelled out independently of the SQL: by seq,
 * then the built-in metrics, then the others by name. */
static void check_values(struct store *s, int64_t run, const struct plan *p,
			 int warmup, int failed)
{
	static const char *const metrics[] = {
		"wall", "user", "sys", "maxrss", "a", "mm", "zz",
	};
	int metric_idx[ARRAY_SIZE(metrics)];
	struct recs got = { 0 };
	size_t k = 0;

	for (size_t m = 0; m < ARRAY_SIZE(metrics); m++)
		metric_idx[m] = m < 4 ? (int)m : -1;
	cr_assert_eq(store_each_value(s, run, warmup, failed, collect, &got), 0);
	for (int seq = 0; seq < PLAN_N; seq++)
		for (size_t m = 0; m < ARRAY_SIZE(metrics); m++) {
			const struct plan_entry *e = &p->e[seq];
			const char *metric = metrics[m];
			if ((e->warmup && !warmup) ||
			    (status_of(seq) != RUN_OK && !failed) ||
			    !has_metric(p, seq, metric))
				continue;
			cr_assert_lt(k, got.n, "missing %s of seq %d", metric, seq);
			const struct rec *r = &got.v[k++];
			cr_assert_eq(r->seq, seq, "value %zu", k - 1);
			cr_assert_str_eq(r->metric, metric);
			cr_assert_str_eq(r->variant, variants[e->variant].name);
			cr_assert_str_eq(r->workload, workloads[e->workload].name);
			cr_assert_eq(r->variant_idx, e->variant);
			cr_assert_eq(r->workload_idx, e->workload);
			/* the same name, the same number (>= 4 when not built in) */
			if (metric_idx[m] < 0) {
				cr_assert_geq(r->metric_idx, 4);
				for (size_t o = 0; o < m; o++)
					cr_assert_neq(r->metric_idx, metric_idx[o]);
				metric_idx[m] = r->metric_idx;
			}
			cr_assert_eq(r->metric_idx, metric_idx[m], "%s", metric);
			cr_assert_str_eq(r->unit, unit_of(metric));
			cr_assert_str_eq(r->status, run_status_name(status_of(seq)));
			cr_assert_eq(r->repetition, e->repetition);
			cr_assert_eq(r->warmup, e->warmup);
			cr_assert_eq(r->value, value_of(seq, metric),
				     "%s of seq %d: %g", metric, seq, r->value);
		}
	cr_assert_eq(got.n, k, "%zu values, %zu expected", got.n, k);
	free(got.v);
}

Test(store, each_value_round_trip)
{
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, -1);

	for (int warmup = 0; warmup < 2; warmup++)
		for (int failed = 0; failed < 2; failed++)
			check_values(s, run, &p, warmup, failed);
	store_close(s);

	/* and again from the file */
	cr_assert_eq(store_open(dbpath, 0, &s), 0);
	check_values(s, run, &p, 1, 1);
	store_close(s);
	free(p.e);
}

/* store_walk_values() counts every measured result per (workload, variant)
 * as store_count_failed() does, whatever it passes to fn; results missing
 * from the plan's tail (a resumable run) are simply not there. */
Test(store, walk_counts_results)
{
	static const int seqs[] = { 0, 3, 4, 5, 6, 9, 10 };
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, seqs, ARRAY_SIZE(seqs));
	int total[4] = { 0 }, failed[4] = { 0 };
	struct recs got = { 0 };
	struct store_walk w = {
		.fn = collect, .ctx = &got,
		.total = total, .failed = failed, .n_workloads = 2, .n_variants = 2,
	};

	cr_assert_eq(store_walk_values(s, run, &w), 0);
	for (int wi = 0; wi < 2; wi++)
		for (int vi = 0; vi < 2; vi++) {
			int t, f;
			cr_assert_eq(store_count_failed(s, run, variants[vi].name,
							workloads[wi].name, &f, &t), 0);
			cr_expect_eq(total[wi * 2 + vi], t, "w%d v%d", wi, vi);
			cr_expect_eq(failed[wi * 2 + vi], f, "w%d v%d", wi, vi);
		}
	/* measured: seq 4, 9 and 10 ok, 5 failed, 6 crashed (0 and 3 are warm-ups) */
	cr_expect_eq(total[0] + total[1] + total[2] + total[3], 5);
	cr_expect_eq(failed[0] + failed[1] + failed[2] + failed[3], 2);
	/* fn saw measured, ok results only, in seq order */
	for (size_t i = 0; i < got.n; i++) {
		cr_expect(got.v[i].seq == 4 || got.v[i].seq == 9 || got.v[i].seq == 10);
		cr_expect(!i || got.v[i].seq >= got.v[i - 1].seq);
	}
	free(got.v);
	store_close(s);
	free(p.e);
}

Test(store, each_value_stops_when_asked)
{
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, -1);
	struct recs got = { .stop_after = 3 };

	cr_assert_eq(store_each_value(s, run, 1, 1, collect, &got), 7);
	cr_assert_eq(got.n, 3);
	free(got.v);
	/* an unknown run has no values */
	got = (struct recs){ 0 };
	cr_assert_eq(store_each_value(s, run + 1, 1, 1, collect, &got), 0);
	cr_assert_eq(got.n, 0);
	store_close(s);
	free(p.e);
}

Test(store, resume_plan_and_done)
{
	static const int seqs[] = { 0, 3, 4, 9 };
	struct plan p, q = { 0 };
	unsigned char *done;
	int64_t run, found;
	char sha[65];
	struct store *s = fixture(&p, &run, seqs, ARRAY_SIZE(seqs));

	sha256_hex(exp_text, strlen(exp_text), sha);
	cr_assert_eq(store_find_resumable(s, sha, &found), 0);
	cr_assert_eq(found, run);
	cr_assert_eq(store_find_resumable(s, "0000", &found), 0);
	cr_assert_eq(found, 0);

	cr_assert_eq(store_load_plan(s, run, &q, &done), 0);
	cr_assert_eq(q.n, p.n);
	for (size_t i = 0; i < p.n; i++) {
		cr_assert_eq(q.e[i].seq, p.e[i].seq);
		cr_assert_eq(q.e[i].variant, p.e[i].variant);
		cr_assert_eq(q.e[i].workload, p.e[i].workload);
		cr_assert_eq(q.e[i].repetition, p.e[i].repetition);
		cr_assert_eq(q.e[i].warmup, p.e[i].warmup);
		cr_assert_eq(q.e[i].round, p.e[i].round);
		cr_assert_eq(done[i], i == 0 || i == 3 || i == 4 || i == 9, "seq %zu", i);
	}
	free(done);
	free(q.e);

	cr_assert_eq(store_set_status(s, run, "interrupted"), 0);
	cr_assert_eq(store_find_resumable(s, sha, &found), 0);
	cr_assert_eq(found, run);
	cr_assert_eq(store_end_run(s, run, "completed"), 0);
	cr_assert_eq(store_find_resumable(s, sha, &found), 0);
	cr_assert_eq(found, 0);

	capture_begin();
	cr_assert_eq(store_load_plan(s, run + 1, &q, &done), -1);
	char *msg = capture_end();
	cr_assert_not_null(strstr(msg, "no run"), "%s", msg);
	cr_assert_null(done);
	cr_assert_eq(q.n, 0);
	free(msg);
	store_close(s);
	free(p.e);
}

Test(store, latest_run_header_and_seed)
{
	struct experiment exp;
	struct plan p;
	struct store *s;
	struct run_header h;
	int64_t latest, a, b;
	char sha[65];

	make_experiment(&exp);
	make_plan(&p);
	cr_assert_eq(store_open(dbpath, 1, &s), 0);
	cr_assert_eq(store_latest_run(s, &latest), 0);
	cr_assert_eq(latest, 0);
	cr_assert_eq(store_begin_run(s, &exp, &p, 1, "a", &machine, NULL, &a), 0);
	cr_assert_eq(store_begin_run(s, &exp, &p, UINT64_MAX, "b", NULL, NULL, &b), 0);
	cr_assert_gt(b, a);
	cr_assert_eq(store_latest_run(s, &latest), 0);
	cr_assert_eq(latest, b);

	cr_assert_eq(store_run_header(s, b, &h), 0);
	cr_assert_eq(h.id, b);
	cr_assert_eq(h.seed, UINT64_MAX);
	cr_assert_str_eq(h.experiment, "fixture");
	cr_assert_str_eq(h.path, "tests/fixture.yaml");
	cr_assert_str_eq(h.baseline, "zeta");
	cr_assert_str_eq(h.order, order_name(ORDER_INTERLEAVED));
	cr_assert_str_eq(h.status, "running");
	cr_assert_null(h.ended);
	cr_assert_null(h.machine_json);
	cr_assert_eq(strlen(h.started), 20);
	sha256_hex(exp_text, strlen(exp_text), sha);
	cr_assert_str_eq(h.sha256, sha);
	run_header_release(&h);

	cr_assert_eq(store_end_run(s, a, "failed"), 0);
	cr_assert_eq(store_run_header(s, a, &h), 0);
	cr_assert_eq(h.seed, 1);
	cr_assert_str_eq(h.status, "failed");
	cr_assert_not_null(h.ended);
	cr_assert_not_null(h.machine_json);
	cr_assert_not_null(strstr(h.machine_json, "Test CPU"));
	run_header_release(&h);

	capture_begin();
	cr_assert_eq(store_run_header(s, b + 1, &h), -1);
	cr_assert_eq(store_set_status(s, a, "done"), -1);
	cr_assert_eq(store_end_run(s, b + 1, "completed"), -1);
	char *msg = capture_end();
	cr_assert_not_null(strstr(msg, "invalid run status 'done'"), "%s", msg);
	free(msg);
	store_close(s);

	/* one experiment row for both runs; machine columns stored */
	sqlite3 *db;
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM experiments),"
					" cpu_model, cores, seed FROM runs WHERE id = ?1",
					-1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, a);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(st, 0), 1);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 1), "Test CPU");
	cr_assert_eq(sqlite3_column_int(st, 2), 4);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 3), "1");
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(p.e);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* store_count_failed() finds want_failed failed runs of want_total for the
 * pair (variant, workload). */
static void assert_failed_count(struct store *s, int64_t run, const char *variant,
				const char *workload, int want_failed, int want_total)
{
	int failed, total;

	cr_assert_eq(store_count_failed(s, run, variant, workload, &failed, &total), 0);
	cr_assert_eq(failed, want_failed, "%s/%s", variant, workload);
	cr_assert_eq(total, want_total, "%s/%s", variant, workload);
}

Test(store, names_and_failure_counts)
{
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, -1);
	char **names;
	size_t n;
	int failed, total;

	cr_assert_eq(store_variant_names(s, run, &names, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(names[0], "zeta");
	cr_assert_str_eq(names[1], "alpha");
	free_names(names, n);
	cr_assert_eq(store_workload_names(s, run, &names, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(names[0], "w2");
	cr_assert_str_eq(names[1], "w1");
	free_names(names, n);

	/* seq 5 = (alpha, w2) round 1; seq 6 = (zeta, w1) round 1 */
	assert_failed_count(s, run, "alpha", "w2", 1, 2);
	assert_failed_count(s, run, "zeta", "w1", 1, 2);
	assert_failed_count(s, run, "alpha", "w1", 0, 2);
	cr_assert_eq(store_count_failed(s, run, "nope", "w2", &failed, &total), 0);
	cr_assert_eq(total, 0);
	store_close(s);
	free(p.e);
}

Test(store, result_columns)
{
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, -1);
	sqlite3 *db;
	sqlite3_stmt *st;

	store_close(s);
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT seq, status, exit_code, signal,"
					" reason, output_tail, output_dropped FROM results"
					" WHERE run_id = ?1 ORDER BY seq", -1, &st,
					NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, run);
	for (int seq = 0; seq < PLAN_N; seq++) {
		cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
		cr_assert_eq(sqlite3_column_int(st, 0), seq);
		cr_assert_eq(sqlite3_column_int64(st, 6), (sqlite3_int64)seq << 32);
		cr_assert_str_eq((const char *)sqlite3_column_text(st, 1),
				 run_status_name(status_of(seq)));
		if (status_of(seq) == RUN_OK) {
			cr_assert_eq(sqlite3_column_int(st, 2), 0);
			cr_assert_eq(sqlite3_column_type(st, 3), SQLITE_NULL);
			cr_assert_eq(sqlite3_column_type(st, 4), SQLITE_NULL);
			cr_assert_eq(sqlite3_column_type(st, 5), SQLITE_NULL);
			continue;
		}
		char want[32];
		snprintf(want, sizeof(want), "output of %d", seq);
		cr_assert_str_eq((const char *)sqlite3_column_text(st, 5), want);
		snprintf(want, sizeof(want), "went wrong at %d", seq);
		cr_assert_str_eq((const char *)sqlite3_column_text(st, 4), want);
		if (status_of(seq) == RUN_FAILED) {
			cr_assert_eq(sqlite3_column_int(st, 2), 3);
			cr_assert_eq(sqlite3_column_type(st, 3), SQLITE_NULL);
		} else {
			cr_assert_eq(sqlite3_column_type(st, 2), SQLITE_NULL);
			cr_assert_eq(sqlite3_column_int(st, 3), 11);
		}
	}
	cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(p.e);
}

Test(store, bad_results_are_refused_whole)
{
	static const int seqs[] = { 2 };
	struct plan p, q;
	unsigned char *done;
	int64_t run;
	struct store *s = fixture(&p, &run, seqs, 1);
	struct metric_value twice[] = {
		{ .name = "x", .value = 1, .unit = "" },
		{ .name = "x", .value = 2, .unit = "" },
	};
	struct metric_value reserved[] = { { .name = "wall", .value = 1, .unit = "s" } };
	struct run_result r = { .status = RUN_OK, .wall_s = 1 };

	capture_begin();
	r.values = twice;
	r.n_values = 2;
	cr_assert_eq(store_put_result(s, run, 0, &r), -1);
	r.values = reserved;
	r.n_values = 1;
	cr_assert_eq(store_put_result(s, run, 1, &r), -1);
	r.n_values = 0;
	r.status = RUN_INTERRUPTED;
	cr_assert_eq(store_put_result(s, run, 3, &r), -1);
	r.status = RUN_OK;
	/* what only SQLite can refuse is refused when the batch is written:
	 * at once when the batch is due (a bound of 0)... */
	store_set_batch(s, 0);
	cr_assert_eq(store_put_result(s, run, 2, &r), -1);	/* stored already */
	cr_assert_eq(store_put_result(s, run, PLAN_N, &r), -1);	/* not in the plan */
	/* ... else by the flush (or the next statement), the rest kept */
	store_set_batch(s, 3600);
	cr_assert_eq(store_put_result(s, run, 2, &r), 0);
	cr_assert_eq(store_put_result(s, run, 4, &r), 0);
	cr_assert_eq(store_put_result(s, run, 4, &r), -1);	/* twice in the batch */
	cr_assert_eq(store_put_result(s, run, PLAN_N, &r), 0);
	cr_assert_eq(store_flush(s), -1);
	char *msg = capture_end();
	cr_assert_not_null(strstr(msg, "cannot write results database"), "%s", msg);
	cr_assert_not_null(strstr(msg, "'wall' is reserved"), "%s", msg);
	cr_assert_not_null(strstr(msg, "metric 'x' twice"), "%s", msg);
	cr_assert_not_null(strstr(msg, "entry 4 is stored already"), "%s", msg);
	free(msg);

	/* nothing of the failed writes is left, and the store still works */
	cr_assert_eq(store_load_plan(s, run, &q, &done), 0);
	for (size_t i = 0; i < q.n; i++)
		cr_assert_eq(done[i], i == 2 || i == 4, "seq %zu", i);
	free(done);
	free(q.e);
	cr_assert_eq(store_put_result(s, run, 0, &r), 0);
	store_close(s);
	free(p.e);
}

/* The rows of a count query that another connection (a reader: perturb
 * runs, status) sees. */
static int64_t rows_seen(const char *count_sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t n;

	cr_assert_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, count_sql, -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static int64_t results_seen(void)
{
	return rows_seen("SELECT count(*) FROM results");
}

/*
 * Results are committed in batches (store.h): within the bound they wait
 * in one transaction, unseen by a reader, and a flush, a result past the
 * bound, the run's end or the close commits them; a refused result leaves
 * the batch whole.
 */
Test(store, results_are_committed_in_batches)
{
	static const int none[] = { 0 };
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, none, 0);
	struct run_result r = { .status = RUN_OK, .wall_s = 1 };

	cr_assert_eq(store_flush_due(s), 0);
	store_set_batch(s, 3600);
	put_result(s, run, &p, 0);
	put_result(s, run, &p, 1);
	put_result(s, run, &p, 2);
	cr_assert_eq(results_seen(), 0, "a batch was committed before its bound");
	{	/* this connection's queries see the batch, written first */
		int64_t done, total;
		cr_assert_eq(store_run_counts(s, run, &done, &total), 0);
		cr_assert_eq(done, 3);
		cr_assert_eq(results_seen(), 0);
	}
	cr_assert_gt(store_flush_due(s), now_mono() + 3600);
	cr_assert_eq(store_flush(s), 0);
	cr_assert_eq(results_seen(), 3);
	cr_assert_eq(store_flush_due(s), 0);

	put_result(s, run, &p, 3);
	capture_begin();
	cr_assert_eq(store_put_result(s, run, 3, &r), -1);	/* stored already */
	free(capture_end());
	put_result(s, run, &p, 4);
	cr_assert_eq(results_seen(), 3);
	cr_assert_eq(store_end_run(s, run, "completed"), 0);	/* the results first */
	cr_assert_eq(results_seen(), 5);

	put_result(s, run, &p, 5);
	store_set_batch(s, 0);	/* past the bound: this result commits the batch */
	put_result(s, run, &p, 6);
	cr_assert_eq(results_seen(), 7);

	store_set_batch(s, 3600);
	put_result(s, run, &p, 7);
	store_close(s);
	cr_assert_eq(results_seen(), 8, "closing lost the batch");
	free(p.e);
}

/*
 * At most STORE_PENDING_MAX (256, engine/store_int.h) results wait in
 * memory, whatever the batch's bound in seconds: the put that finds the
 * batch full writes it, says so when one of it is refused (-1), and its
 * own result waits all the same.  256 results of entries not in the plan
 * (refused only when written) then one of the plan's.
 */
Test(store, a_full_batch_is_written_and_its_refusal_told)
{
	static const int none[] = { 0 };
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, none, 0);
	struct run_result r = { .status = RUN_OK, .wall_s = 1 };
	char *msg;

	store_set_batch(s, 3600);
	capture_begin();
	for (int i = 0; i < 256; i++)
		cr_assert_eq(store_put_result(s, run, PLAN_N + i, &r), 0, "result %d", i);
	cr_assert_eq(store_put_result(s, run, 0, &r), -1, "a batch of 256 was not written");
	msg = capture_end();
	cr_assert_not_null(strstr(msg, "cannot write results database"), "%s", msg);
	free(msg);
	cr_assert_eq(results_seen(), 0, "the full batch was committed, not written");
	cr_assert_eq(store_flush(s), 0);
	cr_assert_eq(results_seen(), 1, "the put that found the batch full lost its result");
	store_close(s);
	free(p.e);
}

/*
 * A block's entry and leave times go into the batch too: a block of one
 * run (the default order, one variant) enters and leaves at every run, and
 * two transactions of their own a run, each with its fsync, were most of
 * perturb's own time per run.
 */
Test(store, block_times_are_committed_with_the_batch)
{
	static const int none[] = { 0 };
	static const char entered[] = "SELECT count(*) FROM block_entries WHERE enter_s = 0.5",
			  left[] = "SELECT count(*) FROM block_entries WHERE leave_s = 0.25";
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, none, 0);

	store_set_batch(s, 3600);
	for (int seq = 0; seq < 3; seq++) {
		cr_assert_eq(store_put_block_time(s, run, seq, 0, 0.5), 0);
		put_result(s, run, &p, seq);
		cr_assert_eq(store_put_block_time(s, run, seq, 1, 0.25), 0);
	}
	cr_assert_eq(rows_seen(entered), 0, "a block time was committed on its own");
	cr_assert_eq(rows_seen(left), 0);
	cr_assert_gt(store_flush_due(s), 0, "a block time left the batch closed");
	cr_assert_eq(store_flush(s), 0);
	cr_assert_eq(rows_seen(entered), 3);
	cr_assert_eq(rows_seen(left), 3);
	cr_assert_eq(results_seen(), 3);

	/* on its own, a block time opens the batch; closing commits it */
	cr_assert_eq(store_put_block_time(s, run, 3, 0, 0.5), 0);
	cr_assert_eq(rows_seen(entered), 3);
	store_close(s);
	cr_assert_eq(rows_seen(entered), 4, "closing lost a block time");
	free(p.e);
}

static int collect_unavailable(const char *metric, const char *reason, void *ctx)
{
	struct strbuf *sb = ctx;
	strbuf_addf(sb, "%s=%s;", metric, reason);
	return 0;
}

Test(store, unavailable_is_stored_once)
{
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, 0);
	struct strbuf sb = STRBUF_INIT;

	cr_assert_eq(store_put_unavailable(s, run, "cycles", "no PMU"), 0);
	cr_assert_eq(store_put_unavailable(s, run, "cycles", "again"), 0);
	cr_assert_eq(store_put_unavailable(s, run, "branches", "no PMU"), 0);
	cr_assert_eq(store_each_unavailable(s, run, collect_unavailable, &sb), 0);
	cr_assert_str_eq(sb.buf, "branches=no PMU;cycles=no PMU;");
	strbuf_release(&sb);
	store_close(s);
	free(p.e);
}

/*
 * A VFS over SQLite's default that counts the files' syncs: how a test
 * sees what store_open() and store_close() put on disk.
 */
struct counted_file {
	sqlite3_file base;
	sqlite3_file *real;
};

static sqlite3_vfs *real_vfs, counting_vfs;
static sqlite3_io_methods counting_io;
static int n_syncs;

#define REAL(f) (((struct counted_file *)(f))->real)

static int cf_close(sqlite3_file *f)
{
	int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;

	sqlite3_free(REAL(f));
	return rc;
}
static int cf_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{ return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int cf_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{ return REAL(f)->pMethods->xWrite(REAL(f), b, n, o); }
static int cf_truncate(sqlite3_file *f, sqlite3_int64 n)
{ return REAL(f)->pMethods->xTruncate(REAL(f), n); }
static int cf_sync(sqlite3_file *f, int flags)
{ n_syncs++; return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int cf_size(sqlite3_file *f, sqlite3_int64 *n)
{ return REAL(f)->pMethods->xFileSize(REAL(f), n); }
static int cf_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int cf_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int cf_reserved(sqlite3_file *f, int *r)
{ return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int cf_control(sqlite3_file *f, int op, void *a)
{ return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int cf_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int cf_device(sqlite3_file *f)
{ return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int cf_shm_map(sqlite3_file *f, int i, int n, int w, void volatile **p)
{ return REAL(f)->pMethods->xShmMap(REAL(f), i, n, w, p); }
static int cf_shm_lock(sqlite3_file *f, int o, int n, int fl)
{ return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
static void cf_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int cf_shm_unmap(sqlite3_file *f, int d) { return REAL(f)->pMethods->xShmUnmap(REAL(f), d); }
static int cf_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p)
{ return REAL(f)->pMethods->xFetch(REAL(f), o, n, p); }
static int cf_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p)
{ return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static int cf_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct counted_file *c = (struct counted_file *)f;
	int rc;

	(void)vfs;
	c->base.pMethods = NULL;
	if (!(c->real = sqlite3_malloc(real_vfs->szOsFile)))
		return SQLITE_NOMEM;
	memset(c->real, 0, (size_t)real_vfs->szOsFile);
	rc = real_vfs->xOpen(real_vfs, name, c->real, flags, out);
	if (rc != SQLITE_OK || !c->real->pMethods) {
		sqlite3_free(c->real);
		return rc;
	}
	c->base.pMethods = &counting_io;
	return rc;
}

/* Counting from now, as the default VFS (counting_off() puts SQLite's
 * back). */
static void counting_on(void)
{
	static const sqlite3_io_methods io = {
		3, cf_close, cf_read, cf_write, cf_truncate, cf_sync, cf_size, cf_lock,
		cf_unlock, cf_reserved, cf_control, cf_sector, cf_device, cf_shm_map,
		cf_shm_lock, cf_shm_barrier, cf_shm_unmap, cf_fetch, cf_unfetch,
	};

	real_vfs = sqlite3_vfs_find(NULL);
	cr_assert(real_vfs);
	counting_vfs = *real_vfs;
	counting_vfs.zName = "perturb-test-counting";
	counting_vfs.szOsFile = sizeof(struct counted_file);
	counting_vfs.xOpen = cf_open;
	counting_vfs.pNext = NULL;
	counting_io = io;
	n_syncs = 0;
	cr_assert_eq(sqlite3_vfs_register(&counting_vfs, 1), SQLITE_OK);
}

static void counting_off(void)
{
	sqlite3_vfs_unregister(&counting_vfs);
	cr_assert_eq(sqlite3_vfs_register(real_vfs, 1), SQLITE_OK);
}

/* A new database is made without a sync, up to its schema
 * (store_schema.c, "Durability"); then it is synchronous=NORMAL as a
 * database that was there: its close (the checkpoint) syncs what was
 * written, the schema included. */
Test(store, a_new_database_is_made_without_syncs_and_synced_at_its_close)
{
	struct store *s;

	counting_on();
	cr_assert_eq(store_open(dbpath, STORE_CREATE, &s), 0);
	cr_expect_eq(n_syncs, 0, "making a new database synced %d times", n_syncs);
	store_close(s);
	cr_expect_geq(n_syncs, 2, "the close of a new database synced %d times: its "
		      "checkpoint syncs the log, then the database", n_syncs);
	counting_off();
}

Test(store, reopen_keeps_wal_and_data)
{
	struct plan p;
	int64_t run, latest;
	struct store *s = fixture(&p, &run, NULL, 0);
	sqlite3 *db;
	sqlite3_stmt *st;

	store_close(s);
	cr_assert_eq(store_open(dbpath, 0, &s), 0);
	cr_assert_eq(store_latest_run(s, &latest), 0);
	cr_assert_eq(latest, run);
	store_close(s);

	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(st, 0), STORE_SCHEMA_VERSION);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(p.e);
}

/*
 * The costs the engine stores (block_entries, results.cost_s) come back
 * summed by variant, and by workload and variant: runs cost 1 + seq
 * seconds (seq 11's not measured), warm-ups (seqs 0-3) apart; alpha's
 * blocks entered at seq 0 (2 s, left in 3 s) and at seq 4 (7 s, then
 * entered again at that seq by a resume: 9 s, not left), zeta's at seq 2
 * (5 s, not left).
 */
Test(store, block_and_run_costs_are_summed)
{
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, 0);
	struct store_block_cost vc[2];
	struct store_run_cost rc[4];

	for (int seq = 0; seq < PLAN_N; seq++) {
		struct run_result r;
		make_result(&p, seq, &r);
		cr_assert_eq(store_put_result_cost(s, run, seq, &r, seq == 11 ? NAN : 1.0 + seq),
			     0);
		free_result(&r);
	}
	cr_assert_eq(store_put_block_time(s, run, 0, 0, 2), 0);
	cr_assert_eq(store_put_block_time(s, run, 0, 1, 3), 0);
	cr_assert_eq(store_put_block_time(s, run, 2, 0, 5), 0);
	cr_assert_eq(store_put_block_time(s, run, 4, 0, 7), 0);
	cr_assert_eq(store_put_block_time(s, run, 4, 1, 1), 0);
	cr_assert_eq(store_put_block_time(s, run, 4, 0, 9), 0);
	cr_assert_eq(store_block_costs(s, run, 2, 2, vc, rc), 0);
	cr_assert_eq(vc[1].entries, 2);
	cr_assert_float_eq(vc[1].switch_s, 2 + 3 + 9, 1e-12);
	cr_assert_float_eq(vc[1].warmup_s, 1 + 2, 1e-12);
	cr_assert_eq(vc[0].entries, 1);
	cr_assert_float_eq(vc[0].switch_s, 5, 1e-12);
	cr_assert_float_eq(vc[0].warmup_s, 3 + 4, 1e-12);
	/* rc[workload * 2 + variant]: seqs 4-11 run (v1,w1) (v1,w0) (v0,w1) (v0,w0) */
	cr_assert(rc[1 * 2 + 1].n == 2 && rc[1 * 2 + 1].sum_s == 5 + 9);
	cr_assert(rc[0 * 2 + 1].n == 2 && rc[0 * 2 + 1].sum_s == 6 + 10);
	cr_assert(rc[1 * 2 + 0].n == 2 && rc[1 * 2 + 0].sum_s == 7 + 11);
	cr_assert(rc[0 * 2 + 0].n == 1 && rc[0 * 2 + 0].sum_s == 8, "seq 11 has no cost");
	/* a run of another id has none */
	cr_assert_eq(store_block_costs(s, run + 1, 2, 2, vc, rc), 0);
	cr_assert(!vc[0].entries && !vc[1].entries && !rc[0].n && !rc[3].n);
	store_close(s);
	free(p.e);
}

Test(store, version_1_database_gains_plan_blocks)
{
	struct plan p, q;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, 0);
	unsigned char *done;
	sqlite3 *db;

	/* blocks round-trip */
	cr_assert_eq(store_load_plan(s, run, &q, &done), 0);
	for (size_t i = 0; i < q.n; i++)
		cr_assert_eq(q.e[i].block, p.e[i].block);
	free(done);
	free(q.e);
	store_close(s);
	/* what perturb's schema version 1 wrote: no plan.block */
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "ALTER TABLE plan DROP COLUMN block;"
				  "ALTER TABLE variants DROP COLUMN timebase;"
				  "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	cr_assert_eq(store_open(dbpath, 0, &s), 0);
	cr_assert_eq(store_load_plan(s, run, &q, &done), 0);
	cr_assert_eq(q.n, p.n);
	for (size_t i = 0; i < q.n; i++)
		cr_assert_eq(q.e[i].block, 0);
	char **tb;
	size_t ntb;
	cr_assert_eq(store_variant_timebases(s, run, &tb, &ntb), 0);
	cr_assert(ntb == 2 && !strcmp(tb[1], "real"), "a v1 run has real time only");
	free_names(tb, ntb);
	store_close(s);
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(st, 0), STORE_SCHEMA_VERSION);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(done);
	free(q.e);
	free(p.e);
}

/* sqlite_master of the database at path, in its order, and its version. */
static char *schema_of(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3 *db;
	sqlite3_stmt *st;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, sql FROM sqlite_master"
					" ORDER BY rowid", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		strbuf_addf(&sb, "%s %s %s: %s\n", sqlite3_column_text(st, 0),
			    sqlite3_column_text(st, 1), sqlite3_column_text(st, 2),
			    sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "");
	sqlite3_finalize(st);
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	strbuf_addf(&sb, "user_version %d\n", sqlite3_column_int(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return strbuf_detach(&sb);
}

/* A new database is made at once with the schema the migrations make one
 * by one (store_schema.c: schema_new), the same text for every object. */
Test(store, a_new_database_has_the_schema_the_migrations_make)
{
	char *by_steps = xasprintf("%s/steps.db", tmpdir), *at_once, *stepped;
	struct store *s;

	store_new_by_migrations(1);
	cr_assert_eq(store_open(by_steps, STORE_CREATE, &s), 0);
	store_close(s);
	store_new_by_migrations(0);
	cr_assert_eq(store_open(dbpath, STORE_CREATE, &s), 0);
	store_close(s);
	stepped = schema_of(by_steps);
	at_once = schema_of(dbpath);
	cr_assert_str_eq(at_once, stepped, "schema_new (store_schema.c) is not what the "
			 "migrations make; theirs:\n%s", stepped);
	free(at_once);
	free(stepped);
	free(by_steps);
}

Test(store, deterministic_variants_have_virtual_time)
{
	struct plan p;
	int64_t run;
	struct store *s = fixture(&p, &run, NULL, 0);
	char **tb;
	size_t n;

	cr_assert_eq(store_variant_timebases(s, run, &tb, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(tb[0], "real");
	cr_assert_str_eq(tb[1], "virtual");
	free_names(tb, n);
	store_close(s);
	free(p.e);
}

Test(store, newer_schema_is_refused)
{
	struct store *s;
	sqlite3 *db;
	char *msg, want[64];

	cr_assert_eq(store_open(dbpath, 1, &s), 0);
	store_close(s);
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	capture_begin();
	cr_assert_eq(store_open(dbpath, 0, &s), -1);
	cr_assert_null(s);
	msg = capture_end();
	snprintf(want, sizeof(want), "version %d at most", STORE_SCHEMA_VERSION);
	cr_assert_not_null(strstr(msg, "schema version 99"), "%s", msg);
	cr_assert_not_null(strstr(msg, want), "%s", msg);
	free(msg);
}

Test(store, not_a_database_is_refused)
{
	struct store *s;
	char path[300], *msg;
	FILE *f;

	snprintf(path, sizeof(path), "%s/notes.txt", tmpdir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < 20; i++)
		fputs("this is not a database\n", f);
	fclose(f);

	capture_begin();
	cr_assert_eq(store_open(path, 0, &s), -1);
	cr_assert_eq(store_open(path, 1, &s), -1);
	msg = capture_end();
	cr_assert_not_null(strstr(msg, "notes.txt"), "%s", msg);
	cr_assert_not_null(strstr(msg, "not a database"), "%s", msg);
	free(msg);

	/* an SQLite file of some other program */
	sqlite3 *db;
	snprintf(path, sizeof(path), "%s/other.db", tmpdir);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	capture_begin();
	cr_assert_eq(store_open(path, 0, &s), -1);
	msg = capture_end();
	cr_assert_not_null(strstr(msg, "not a perturb results database"), "%s", msg);
	free(msg);
}

Test(store, missing_without_create_creates_nothing)
{
	struct store *s;
	struct stat sb;
	char *msg, want[300];

	capture_begin();
	cr_assert_eq(store_open(dbpath, 0, &s), -1);
	msg = capture_end();
	snprintf(want, sizeof(want), "no results database at '%s'", dbpath);
	cr_assert_not_null(strstr(msg, want), "%s", msg);
	free(msg);
	snprintf(want, sizeof(want), "%s/sub", tmpdir);
	cr_assert_eq(stat(want, &sb), -1);
}

/* ---- perturb merge: every column of a shard's results ---- */

/* The columns of table in schema s of h, as "a,b,c" in cid order,
 * run_id left out (a merge renumbers the run). */
static char *columns_of(sqlite3 *h, const char *s, const char *table)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st;
	char *sql = xasprintf("SELECT name FROM pragma_table_info('%s', '%s')"
			      " WHERE name <> 'run_id' ORDER BY cid", table, s);

	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s",
		     sqlite3_errmsg(h));
	while (sqlite3_step(st) == SQLITE_ROW)
		strbuf_addf(&sb, "%s\"%s\"", sb.len ? "," : "",
			    (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	free(sql);
	return strbuf_detach(&sb);
}

static int64_t one_int(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * The class: the columns of a run's results that a merge copies.  Each
 * table a shard's results are in has the same column set in the shard
 * and in the main database, and every row of the shard is in the main
 * database with every column equal (cost_s was dropped: a hand-kept
 * list).  Two shards of one plan, run without Slurm: shard 0 in the
 * main database, shard 1 in its own, merged.
 */
Test(store, merge_copies_every_column_of_a_shards_results)
{
	static const char *const tables[] = {
		"results", "metric_values", "unavailable", "block_entries",
	};
	char *main_db = xasprintf("%s/main.db", tmpdir), *shard = xasprintf("%s/s1.db", tmpdir);
	struct cli_result r;
	sqlite3 *h;

	tl_write(tmpdir, "e.yaml", "name: m\nwarmup: 0\nrepetitions: 2\n"
		 "variants: [{name: a}, {name: b, env: {X: '1'}}]\n"
		 "workloads:\n"
		 "  - name: t\n"
		 "    shell: 'echo ops=7'\n"
		 "    metrics: [{name: ops, regex: 'ops=([0-9]+)'}]\n");
	cli_run(tmpdir, &r, "run", "e.yaml", "--db", main_db, "--shard", "0/2", "--seed", "3",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cli_run(tmpdir, &r, "run", "e.yaml", "--db", shard, "--shard", "1/2", "--seed", "3",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cli_run(tmpdir, &r, "merge", "--db", main_db, shard, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);

	cr_assert_eq(sqlite3_open_v2(main_db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	char *attach = xasprintf("ATTACH DATABASE '%s' AS shard", shard);
	cr_assert_eq(sqlite3_exec(h, attach, NULL, NULL, NULL), SQLITE_OK, "%s",
		     sqlite3_errmsg(h));
	free(attach);
	/* not vacuous: the shard stored its runs' costs and its metric */
	cr_assert_gt(one_int(h, "SELECT count(*) FROM shard.results WHERE cost_s IS NOT NULL"), 0);
	cr_assert_gt(one_int(h, "SELECT count(*) FROM shard.metric_values"), 0);
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		char *in_main = columns_of(h, "main", tables[i]);
		char *in_shard = columns_of(h, "shard", tables[i]);
		cr_expect_str_eq(in_main, in_shard, "%s: the column sets differ", tables[i]);
		char *missing = xasprintf("SELECT count(*) FROM (SELECT %s FROM shard.%s"
					  " EXCEPT SELECT %s FROM main.%s)",
					  in_shard, tables[i], in_shard, tables[i]);
		cr_expect_eq(one_int(h, missing), 0, "%s: rows of the shard not merged whole",
			     tables[i]);
		free(missing);
		free(in_main);
		free(in_shard);
	}
	cr_expect_eq(one_int(h, "SELECT count(*) FROM main.results WHERE cost_s IS NOT NULL"),
		     one_int(h, "SELECT count(*) FROM main.results"));
	sqlite3_close(h);
	free(main_db);
	free(shard);
}
