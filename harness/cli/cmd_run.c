/*
 * cmd_run.c - `perturb run`: the executor.
 *
 * experiment → checks (variants, requires) → plan → database → workload
 * setup → walk the plan: switch variants through their backend, prepare,
 * run, store each result in its own transaction as soon as it exists.
 *
 * Stop paths: SIGINT/SIGTERM/SIGHUP end the current run (it is not stored),
 * leave the active variant, mark the run "interrupted" and exit 3; the
 * stored plan lets `--resume` finish exactly the runs still missing.
 */
#include "backends/backend.h"
#include "commands.h"
#include "options.h"
#include "engine/config.h"
#include "counters/counters.h"
#include "backends/kbuild.h"
#include "lib/machine.h"
#include "core/packages.h"
#include "engine/plan.h"
#include "core/runner.h"
#include "stats/stats.h"
#include "engine/store.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Progress on a terminal: one line on stderr, "[done/total] variant /
 * workload  elapsed  ETA", drawn before a run starts and erased as soon as
 * it ends, so that nothing is written while a workload runs and warnings
 * land on clean lines.  Off when stderr is not a terminal or with -q; bold
 * counts only when colour is allowed (NO_COLOR unset, TERM not dumb).  The
 * ETA is the mean time per finished run times the runs left.
 */
struct progress {
	int on, color;
	size_t done, total;
	double t0;
};

static void progress_init(struct progress *pg, const struct plan *p, const unsigned char *done)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	memset(pg, 0, sizeof(*pg));
	pg->on = !perturb_quiet && isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
	pg->color = !(nc && *nc);
	for (size_t i = 0; i < p->n; i++)
		pg->total += !(done && done[i]);
	pg->t0 = now_mono();
}

static void progress_show(const struct progress *pg, const char *variant, const char *workload)
{
	double el = now_mono() - pg->t0;
	char eta[32] = "?";

	if (!pg->on)
		return;
	if (pg->done)
		snprintf(eta, sizeof(eta), "%.0fs", el / (double)pg->done * (double)(pg->total - pg->done));
	fprintf(stderr, "\r%s[%zu/%zu]%s %s / %s  elapsed %.0fs  ETA %s\033[K",
		pg->color ? "\033[1m" : "", pg->done, pg->total, pg->color ? "\033[0m" : "",
		variant, workload, el, eta);
	fflush(stderr);
}

static void progress_end_run(struct progress *pg)
{
	pg->done++;
	if (!pg->on)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
}

#define ERRLEN 1024

struct run_opts {
	const char *file;
	const char *db;
	struct plan_filter filter;
	int has_seed;
	uint64_t seed;
	int dry_run, resume, skip_unavailable;
	double target_ci;	/* --target-ci in %; 0 = off */
	double max_time;	/* --max-time in s; 0 = TARGET_DEFAULT_MAX_TIME */
	int self_check;
};

/* --self-check's variants: the baseline's name and these suffixes. */
#define SELF_CHECK_AA "~aa"
#define SELF_CHECK_NOCOUNTERS "~nocounters"

/* --target-ci without --max-time: ten minutes in all. */
#define TARGET_DEFAULT_MAX_TIME 600.0
/* --target-ci's intervals: confidence and bootstrap resamples. */
#define TARGET_CONFIDENCE 0.95
#define TARGET_BOOTSTRAP 1000

/* 0, -1 (printed: exit 2) or OPT_EXIT_DONE (help printed: exit 0). */
static int parse_args(int argc, char **argv, struct run_opts *o)
{
	struct opt opts[] = {
		OPT_ARG("EXPERIMENT.yaml", &o->file, "default ./experiments.yaml"),
		OPT_STRING(0, "db", &o->db, "PATH", "results database (default results/perturb.db)"),
		OPT_INTEGER(0, "repetitions", &o->filter.repetitions, 1, 1000000, "N",
			    "measured runs per (variant, workload), overrides the file"),
		OPT_LIST(0, "only-variant", &o->filter.variants, &o->filter.n_variants, "NAME",
			 "run this variant (and the baseline); repeatable, or NAME,NAME"),
		OPT_LIST(0, "only-workload", &o->filter.workloads, &o->filter.n_workloads, "NAME",
			 "run this workload; repeatable, or NAME,NAME"),
		OPT_UNSIGNED(0, "seed", &o->seed, "N",
			     "seed of the run order (default: the file's, or drawn)"),
		OPT_FLAG(0, "dry-run", &o->dry_run, "print the plan; run and write nothing"),
		OPT_FLAG(0, "resume", &o->resume,
			 "complete the latest interrupted run of this experiment"),
		OPT_FLAG(0, "skip-unavailable", &o->skip_unavailable,
			 "run what this machine can; report the rest as skipped"),
		OPT_PERCENT(0, "target-ci", &o->target_ci, 0, 10, OPT_ABOVE_MIN, "X%",
			    "after the plan, add interleaved rounds until every wall\n"
			    "dilation CI (p50 and mean) is at most +-X wide"),
		OPT_DURATION(0, "max-time", &o->max_time, 0, INFINITY, OPT_ABOVE_MIN, "D",
			     "with --target-ci: stop adding rounds after D (default 10m)"),
		OPT_FLAG(0, "self-check", &o->self_check,
			 "add an A/A pair: the baseline again (BASELINE~aa) and\n"
			 "without counters (BASELINE~nocounters)"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "print only errors"),
		OPT_END(),
	};
	int rc;

	o->file = "experiments.yaml";
	o->db = "results/perturb.db";
	if ((rc = parse_options(argc, argv, opts, "run")))
		return rc;
	o->has_seed = !!opt_given(opts, &o->seed);
	o->target_ci *= 100;	/* in % */
	if (o->max_time > 0 && !o->target_ci)
		return error("--max-time bounds --target-ci; give --target-ci too");
	if (o->resume && (o->filter.n_variants || o->filter.n_workloads ||
			  o->filter.repetitions || o->has_seed))
		return error("--resume completes the stored plan; it takes no --only-*, "
			     "--repetitions or --seed");
	return 0;
}

/* argv = prefix (may be NULL) + cmd, every word with {workdir}, {perturb}
 * and {micro} (perturb-micro next to perturb) expanded; NULL-terminated. */
static char **build_argv(const struct argv_list *prefix, char **cmd, size_t ncmd,
			 const char *workdir)
{
	const struct placeholder ph[] = {
		{ "{workdir}", workdir },
		{ "{perturb}", perturb_self_exe() },
		{ "{micro}", perturb_micro_exe() },
	};
	size_t np = prefix ? prefix->n : 0;
	char **v = xcalloc(np + ncmd + 1, sizeof(char *));
	for (size_t i = 0; i < np; i++)
		v[i] = expand_placeholders(prefix->v[i], ph, ARRAY_SIZE(ph));
	for (size_t i = 0; i < ncmd; i++)
		v[np + i] = expand_placeholders(cmd[i], ph, ARRAY_SIZE(ph));
	return v;
}

static char **workload_argv(const struct workload *w, const struct variant *v,
			    const char *workdir)
{
	if (w->shell) {
		char *sh[] = { "/bin/sh", "-c", w->shell };
		return build_argv(&v->wrap, sh, 3, workdir);
	}
	return build_argv(&v->wrap, w->cmd.v, w->cmd.n, workdir);
}

static int run_commands(const struct argv_list *cmds, size_t n, char **envp,
			const char *workdir, double timeout, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		char **argv = build_argv(NULL, cmds[i].v, cmds[i].n, workdir);
		int r = proc_run_command(argv, envp, workdir, timeout, what);
		argv_free(argv);
		if (r < 0)
			return -1;
	}
	return 0;
}

static char *join_argv(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "perturb");
	for (int i = 0; i < argc; i++)
		strbuf_addf(&sb, " %s", argv[i]);
	return strbuf_detach(&sb);
}

/*
 * Decide once which counters this machine can count: one warning line
 * naming those it cannot (short reasons), and one "unavailable" row each,
 * with the whole reason, for the report.  The study runs either way.
 */
static int report_unavailable(struct store *st, int64_t run_id,
			      const struct counter_set *cs)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = counters_count(cs);
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		if (counters_available(cs, i))
			continue;
		strbuf_addf(&sb, "%s%s (%s)", sb.len ? ", " : "", counters_name(cs, i),
			    counters_short_reason(cs, i));
		if (store_put_unavailable(st, run_id, counters_name(cs, i),
					  counters_reason(cs, i)) < 0)
			ret = -1;
	}
	if (sb.len)
		warning("counters unavailable here: %s", sb.buf);
	if (n && !counters_n_available(cs))
		warning("none of the counters asked for can be counted here; "
			"the runs record times and metrics only");
	strbuf_release(&sb);
	return ret;
}

struct failure_ctx {
	const char *variant, *workload;
	int repetition, warmup;
};

/* A counter that could be counted here failed in a run (said once). */
static void counter_failed(const char *name, const char *reason, void *ctx)
{
	const struct failure_ctx *f = ctx;
	warning("counter '%s' has no value for %s/%s %s%d: %s; later failures "
		"of it are not reported", name, f->variant, f->workload,
		f->warmup ? "warm-up " : "run ", f->repetition + 1, reason);
}

static void print_plan(const struct experiment *exp, const struct plan *p,
		       uint64_t seed, const unsigned char *done)
{
	size_t left = 0;
	for (size_t i = 0; i < p->n; i++)
		left += !(done && done[i]);
	printf("# plan of '%s': %zu runs (%zu to do), order %s, seed %llu\n",
	       exp->name, p->n, left, order_name(exp->order), (unsigned long long)seed);
	printf("%5s  %-6s  %-6s  %-20s  %-20s  %s\n", "seq", "round", "block", "variant",
	       "workload", "run");
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->e[i];
		char round[16] = "-";
		if (e->round >= 0)
			snprintf(round, sizeof(round), "%d", e->round);
		printf("%5d  %-6s  %-6d  %-20s  %-20s  %s%d%s\n", e->seq, round, e->block,
		       exp->variants[e->variant].name, exp->workloads[e->workload].name,
		       e->warmup ? "warmup " : "", e->repetition + 1,
		       done && done[i] ? "  (done)" : "");
	}
}

/* Is w needed by the (filtered) plan? */
static int plan_uses_workload(const struct plan *p, const unsigned char *done, int w)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].workload == w && !(done && done[i]))
			return 1;
	return 0;
}

static int plan_uses_variant(const struct plan *p, int v)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].variant == v)
			return 1;
	return 0;
}

/* Remove the entries of skipped variants/workloads, renumbering seq. */
static void plan_drop(struct plan *p, const unsigned char *skip_v, const unsigned char *skip_w)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (skip_v[p->e[i].variant] || skip_w[p->e[i].workload])
			continue;
		p->e[k] = p->e[i];
		p->e[k].seq = (int)k;
		k++;
	}
	p->n = k;
}

/*
 * --target-ci: the stored wall times of the measured, successful runs, by
 * (workload, variant) in stored order.
 */
struct wall_values {
	size_t n_variants, n_workloads;
	double **x;
	size_t *n, *alloc;
};

static int collect_wall(const struct stored_value *v, void *vctx)
{
	struct wall_values *wv = vctx;
	size_t k;

	if (v->metric_idx != 0 || v->variant_idx < 0 || v->workload_idx < 0 ||
	    (size_t)v->variant_idx >= wv->n_variants || (size_t)v->workload_idx >= wv->n_workloads)
		return 0;
	k = (size_t)v->workload_idx * wv->n_variants + (size_t)v->variant_idx;
	ALLOC_GROW(wv->x[k], wv->n[k] + 1, wv->alloc[k]);
	wv->x[k][wv->n[k]++] = v->value;
	return 0;
}

/*
 * The widest half-width, in % of the baseline, of the 95 % CIs of the wall
 * dilation of the median and of the mean of every (variant, workload) of
 * the plan against the baseline, on the runs stored so far (stats_dilation:
 * percentile bootstrap, TARGET_BOOTSTRAP resamples seeded with the run's
 * seed): *widest, and in what (which comparison, or why it has no
 * interval yet; then *widest is INFINITY).  Returns 0, or -1 on a database
 * error.
 */
static int widest_half_width(struct store *st, int64_t run_id, const struct experiment *exp,
			     const struct plan *p, uint64_t seed, double *widest,
			     char *what, size_t len)
{
	size_t nv = exp->n_variants, nw = exp->n_workloads, cells = nv * nw;
	struct wall_values wv = {
		.n_variants = nv, .n_workloads = nw,
		.x = xcalloc(cells + 1, sizeof(double *)),
		.n = xcalloc(cells + 1, sizeof(size_t)),
		.alloc = xcalloc(cells + 1, sizeof(size_t)),
	};
	unsigned char *used = xcalloc(cells + 1, 1);
	int b = experiment_find_variant(exp, exp->baseline), ret = -1;

	*widest = 0;
	snprintf(what, len, "no comparison");
	if (store_each_value(st, run_id, 0, 0, collect_wall, &wv) < 0)
		goto out;
	for (size_t i = 0; i < p->n; i++)
		used[(size_t)p->e[i].workload * nv + (size_t)p->e[i].variant] = 1;
	for (size_t w = 0; w < nw && b >= 0; w++) {
		size_t kb = w * nv + (size_t)b;
		for (size_t v = 0; v < nv; v++) {
			size_t k = w * nv + v;
			if ((int)v == b || !used[k] || !used[kb])
				continue;
			for (int mean = 0; mean <= 1; mean++) {
				struct boot_opts bo = {
					.B = TARGET_BOOTSTRAP, .seed = seed,
					.conf = TARGET_CONFIDENCE,
				};
				struct dilation d;
				const char *stat = mean ? "mean" : "p50";
				double hw;

				if (wv.n[kb] < 2 || wv.n[k] < 2 ||
				    stats_dilation(wv.x[kb], wv.n[kb], wv.x[k], wv.n[k],
						   mean ? STATK_MEAN : STATK_QUANTILE, 0.5, &bo, &d) < 0 ||
				    !d.ci_pct.has_ci) {
					*widest = INFINITY;
					snprintf(what, len, "%s / %s %s: no interval yet",
						 exp->variants[v].name, exp->workloads[w].name, stat);
					ret = 0;
					goto out;
				}
				hw = (d.ci_pct.hi - d.ci_pct.lo) / 2;
				if (hw >= *widest) {
					*widest = hw;
					snprintf(what, len, "%s / %s %s", exp->variants[v].name,
						 exp->workloads[w].name, stat);
				}
			}
		}
	}
	ret = 0;
out:
	for (size_t k = 0; k < cells; k++)
		free(wv.x[k]);
	free(wv.x);
	free(wv.n);
	free(wv.alloc);
	free(used);
	return ret;
}

/*
 * After the plan's last run, with --target-ci: 1 when a goal ends the run
 * (said: "target reached" or "time spent"), 0 when another round is due,
 * -1 on a database error.
 */
static int target_done(struct store *st, int64_t run_id, const struct experiment *exp,
		       const struct plan *p, uint64_t seed, const struct run_opts *o,
		       double t0, int rounds)
{
	double widest, max_time = o->max_time > 0 ? o->max_time : TARGET_DEFAULT_MAX_TIME;
	double el = now_mono() - t0;
	char what[256];

	if (widest_half_width(st, run_id, exp, p, seed, &widest, what, sizeof(what)) < 0)
		return -1;
	if (widest <= o->target_ci) {
		note("target reached: widest half-width %.2f %% <= %g %% (%s) after %d added "
		     "round%s", widest, o->target_ci, what, rounds, rounds == 1 ? "" : "s");
		return 1;
	}
	if (el >= max_time) {
		char hw[32] = "inf";
		if (isfinite(widest))
			snprintf(hw, sizeof(hw), "%.2f", widest);
		warning("time spent: widest half-width %s %% > %g %% (%s) after %.1f s and %d "
			"added round%s", hw, o->target_ci, what, el, rounds, rounds == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

/*
 * --self-check: the baseline twice more, BASELINE~aa as it is (an A/A pair:
 * the noise and bookkeeping floor) and BASELINE~nocounters without the
 * experiment's counters (its dilation is minus the cost of counting).  The
 * two are shallow copies of the baseline appended to exp->variants (their
 * names their own): drop them with self_check_release() before
 * experiment_release().  With --only-variant they are added to the filter.
 * Returns the index of the no-counters variant, or -1 (printed) when a
 * variant of the experiment has one of the names.
 */
static int self_check_add(struct experiment *exp, struct plan_filter *f)
{
	int b = experiment_find_variant(exp, exp->baseline);
	const char *suffix[] = { SELF_CHECK_AA, SELF_CHECK_NOCOUNTERS };

	if (b < 0)
		return error("%s: no baseline variant '%s'", exp->path, exp->baseline);
	for (size_t i = 0; i < ARRAY_SIZE(suffix); i++) {
		char *name = xasprintf("%s%s", exp->baseline, suffix[i]);
		if (experiment_find_variant(exp, name) >= 0) {
			error("%s: --self-check adds a variant '%s', and the experiment "
			      "has one of that name already", exp->path, name);
			free(name);
			return -1;
		}
		exp->variants = xrealloc(exp->variants, (exp->n_variants + 1) * sizeof(*exp->variants));
		exp->variants[exp->n_variants] = exp->variants[b];
		exp->variants[exp->n_variants].name = name;
		exp->n_variants++;
		if (f->n_variants) {
			f->variants = xrealloc(f->variants, (f->n_variants + 1) * sizeof(char *));
			f->variants[f->n_variants++] = name;
		}
	}
	return (int)exp->n_variants - 1;
}

static void self_check_release(struct experiment *exp, size_t n_real)
{
	while (exp->n_variants > n_real)
		free(exp->variants[--exp->n_variants].name);
}

/* Does the stored run have --self-check's variants? */
static int stored_self_check(struct store *st, int64_t run_id, const char *baseline)
{
	char **names = NULL, *aa = xasprintf("%s%s", baseline, SELF_CHECK_AA);
	size_t n = 0;
	int found = 0;

	if (store_variant_names(st, run_id, &names, &n) < 0)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		found |= !strcmp(names[i], aa);
		free(names[i]);
	}
	free(names);
	free(aa);
	return found;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	struct experiment exp = { 0 };
	struct plan plan = { 0 };
	struct store *st = NULL;
	struct machine_info mi = { 0 };
	unsigned char *done = NULL, *skip_v = NULL, *skip_w = NULL;
	char err[ERRLEN];
	char *dbdir = NULL, *workroot = NULL, *logdir = NULL, *cmdline = NULL;
	char **workdirs = NULL;
	char **base_env = NULL;
	struct backend_ctx *ctx = NULL;
	struct counter_set *counters = NULL;
	int64_t run_id = 0;
	int ret = EXIT_USAGE, active = -1, stopped = 0, rounds = 0, nocounters = -1;
	int active_block = -1;	/* the block of the active variant (plan.h) */
	size_t n_real_variants = SIZE_MAX;	/* before --self-check */
	uint64_t seed;
	size_t n_ok = 0, n_bad = 0;
	double t0 = now_mono();

	switch (parse_args(argc, argv, &o)) {
	case 0:
		break;
	case OPT_EXIT_DONE:
		ret = EXIT_OK;
		/* fall through */
	default:
		goto out;
	}
	if (config_load(o.file, &exp, err, sizeof(err)) < 0) {
		error("%s", err);
		goto out;
	}
	n_real_variants = exp.n_variants;

	/* Every check that can fail happens before anything is written. */
	skip_v = xcalloc(exp.n_variants + 2, 1);	/* + --self-check's */
	skip_w = xcalloc(exp.n_workloads, 1);
	if (o.resume) {
		char sha[65];
		sha256_hex(exp.text, exp.text_len, sha);
		if (access(o.db, F_OK) < 0) {
			error("--resume: no results database at '%s'", o.db);
			goto out;
		}
		if (store_open(o.db, 0, &st) < 0)
			goto out;
		if (store_find_resumable(st, sha, &run_id) < 0) {
			ret = EXIT_RUNTIME;
			goto out;
		}
		if (!run_id) {
			error("--resume: '%s' holds no unfinished run of this version of '%s'",
			      o.db, exp.path);
			goto out;
		}
		if (stored_self_check(st, run_id, exp.baseline) &&
		    (nocounters = self_check_add(&exp, &o.filter)) < 0)
			goto out;
		if (store_load_plan(st, run_id, &plan, &done) < 0) {
			ret = EXIT_RUNTIME;
			goto out;
		}
		struct run_header h = { 0 };
		if (store_run_header(st, run_id, &h) < 0) {
			ret = EXIT_RUNTIME;
			goto out;
		}
		seed = h.seed;
		run_header_release(&h);
	} else {
		seed = o.has_seed ? o.seed : exp.has_seed ? exp.seed : plan_draw_seed();
		if (o.self_check && (nocounters = self_check_add(&exp, &o.filter)) < 0)
			goto out;
		if (plan_build(&exp, &o.filter, seed, &plan, err, sizeof(err)) < 0) {
			error("%s", err);
			goto out;
		}
	}

	int unavailable = 0;
	for (size_t v = 0; v < exp.n_variants; v++) {
		char why[512];
		const struct variant *var = &exp.variants[v];
		if (!plan_uses_variant(&plan, (int)v))
			continue;
		if (backend_for(var)->check(var, why, sizeof(why)) == 0)
			continue;
		const struct pos *p = backend_pos(var);
		if (!strcmp(var->name, exp.baseline) || !o.skip_unavailable) {
			error("%s:%d:%d: %s", p->file, p->line, p->col, why);
			unavailable = 1;
		} else {
			warning("%s:%d:%d: %s; skipped", p->file, p->line, p->col, why);
			skip_v[v] = 1;
		}
	}
	for (size_t w = 0; w < exp.n_workloads; w++) {
		const struct workload *wl = &exp.workloads[w];
		if (!plan_uses_workload(&plan, o.target_ci ? NULL : done, (int)w))
			continue;
		for (size_t r = 0; r <= wl->n_requires; r++) {
			char why[512];
			/* every requires: entry, then perturb-micro for {micro} */
			if (r < wl->n_requires ? requirement_met(wl->requires[r], why, sizeof(why))
					       : micro_available(wl, why, sizeof(why)))
				continue;
			if (o.skip_unavailable) {
				warning("%s:%d:%d: workload '%s' requires %s; skipped",
					wl->pos.file, wl->pos.line, wl->pos.col, wl->name, why);
				skip_w[w] = 1;
			} else {
				error("%s:%d:%d: workload '%s' requires %s",
				      wl->pos.file, wl->pos.line, wl->pos.col, wl->name, why);
				unavailable = 1;
			}
		}
	}
	if (unavailable) {
		if (!o.skip_unavailable)
			note("nothing was run; --skip-unavailable runs what this machine can");
		goto out;
	}
	if (o.resume) {
		/* Skipped parts of a resumed plan stay missing in the database. */
		for (size_t i = 0; i < plan.n; i++)
			if (skip_v[plan.e[i].variant] || skip_w[plan.e[i].workload])
				done[i] = 1;
	} else {
		plan_drop(&plan, skip_v, skip_w);
	}
	if (!plan.n) {
		error("%s: the plan is empty: nothing to run", exp.path);
		goto out;
	}
	if (o.dry_run) {
		print_plan(&exp, &plan, seed, done);
		ret = EXIT_OK;
		goto out;
	}

	/* From here on, failures are runtime failures. */
	ret = EXIT_RUNTIME;
	runner_install_signals();
	/* kernels to build (config:) are built before the study, not in it */
	for (size_t v = 0; v < exp.n_variants; v++) {
		const struct variant *var = &exp.variants[v];
		char *img;
		if (skip_v[v] || !var->boot.config || !plan_uses_variant(&plan, (int)v))
			continue;
		if (!(img = kbuild_image(&var->boot)))
			goto out;
		free(img);
	}
	machine_probe(&mi);
	if (exp.n_counters && counters_open(exp.counters, exp.n_counters, &counters) < 0)
		goto out;
	if (!st && store_open(o.db, 1, &st) < 0)
		goto out;
	cmdline = join_argv(argc, argv);
	if (o.resume) {
		if (store_set_status(st, run_id, "running") < 0)
			goto out;
		note("resuming run %lld of '%s'", (long long)run_id, exp.name);
	} else if (store_begin_run(st, &exp, &plan, seed, cmdline, &mi, &run_id) < 0) {
		goto out;
	}

	{
		size_t todo = 0;
		for (size_t i = 0; i < plan.n; i++)
			todo += !(done && done[i]);
		note("run %lld of '%s': %zu runs to do (order %s, seed %llu), results in %s",
		     (long long)run_id, exp.name, todo, order_name(exp.order),
		     (unsigned long long)seed, o.db);
	}
	if (counters && report_unavailable(st, run_id, counters) < 0)
		goto fail_run;
	dbdir = dir_name(o.db);
	workroot = xasprintf("%s/work", dbdir);
	logdir = xasprintf("%s/logs/run-%lld", dbdir, (long long)run_id);
	int e;
	if ((e = mkdir_p(logdir, 0755)) < 0) {
		error("cannot create '%s': %s", logdir, strerror(-e));
		goto fail_run;
	}
	base_env = env_build(&(struct variant){ 0 });
	workdirs = xcalloc(exp.n_workloads, sizeof(char *));
	for (size_t w = 0; w < exp.n_workloads; w++) {
		const struct workload *wl = &exp.workloads[w];
		if (skip_w[w] || !plan_uses_workload(&plan, o.target_ci ? NULL : done, (int)w))
			continue;
		char *rel = xasprintf("%s/%s", workroot, wl->name);
		if ((e = mkdir_p(rel, 0755)) < 0) {
			error("cannot create '%s': %s", rel, strerror(-e));
			free(rel);
			goto fail_run;
		}
		workdirs[w] = realpath(rel, NULL);
		free(rel);
		if (!workdirs[w]) {
			error("cannot resolve work folder of '%s': %s", wl->name, strerror(errno));
			goto fail_run;
		}
		char *what = xasprintf("workload '%s' setup", wl->name);
		int r = run_commands(wl->setup, wl->n_setup, base_env, workdirs[w],
				     workload_timeout(&exp, wl), what);
		free(what);
		if (r < 0)
			goto fail_run;
	}

	ctx = xcalloc(exp.n_variants, sizeof(*ctx));
	for (size_t v = 0; v < exp.n_variants; v++) {
		ctx[v].exp = &exp;
		ctx[v].variant = &exp.variants[v];
		ctx[v].envp = env_build(&exp.variants[v]);
		ctx[v].logdir = logdir;
		ctx[v].cwd = workroot;
	}

	struct progress prog;
	progress_init(&prog, &plan, done);
	for (size_t i = 0;; i++) {
		if (i == plan.n) {
			size_t from = plan.n;
			if (!o.target_ci || (stopped = runner_stop_requested()))
				break;
			int r = target_done(st, run_id, &exp, &plan, seed, &o, t0, rounds);
			if (r < 0)
				goto fail_run;
			if (r)
				break;
			if (!plan_add_round(&plan, exp.n_variants, exp.n_workloads, seed))
				break;
			if (store_append_plan(st, &exp, &plan, from, run_id) < 0)
				goto fail_run;
			if (done) {
				done = xrealloc(done, plan.n);
				for (size_t k = from; k < plan.n; k++)
					done[k] = skip_v[plan.e[k].variant] || skip_w[plan.e[k].workload];
			}
			prog.total += plan.n - from;
			rounds++;
		}
		const struct plan_entry *pe = &plan.e[i];
		if (done && done[i])
			continue;
		if ((stopped = runner_stop_requested()))
			break;
		const struct variant *var = &exp.variants[pe->variant];
		const struct workload *wl = &exp.workloads[pe->workload];
		const struct backend *be = backend_for(var);
		if (active != pe->variant || active_block != pe->block) {
			if (active >= 0) {
				/* the next variant: a backend may hand state over to it */
				ctx[active].next = var;
				int r = backend_for(&exp.variants[active])->leave(&ctx[active]);
				ctx[active].next = NULL;
				active = -1;
				if (r < 0)
					goto fail_run;
			}
			if (be->enter(&ctx[pe->variant]) < 0)
				goto fail_run;
			active = pe->variant;
			active_block = pe->block;
		}
		char *what = xasprintf("workload '%s' prepare", wl->name);
		int r = run_commands(wl->prepare, wl->n_prepare, ctx[pe->variant].envp,
				     workdirs[pe->workload], workload_timeout(&exp, wl), what);
		free(what);
		if (r < 0)
			goto fail_run;

		char **wargv = workload_argv(wl, var, workdirs[pe->workload]);
		struct run_request req = {
			.argv = wargv,
			.envp = ctx[pe->variant].envp,
			.cpus = exp.cpus,
			.n_cpus = exp.n_cpus,
			.timeout_s = workload_timeout(&exp, wl),
			.metrics = wl->metrics,
			.n_metrics = wl->n_metrics,
			.cwd = workdirs[pe->workload],
			.counters = pe->variant == nocounters ? NULL : counters,
		};
		struct run_result res;
		progress_show(&prog, var->name, wl->name);
		r = be->run(&ctx[pe->variant], &req, &res);
		argv_free(wargv);
		progress_end_run(&prog);
		if (req.counters) {
			struct failure_ctx f = { var->name, wl->name, pe->repetition, pe->warmup };
			counters_run_failures(counters, counter_failed, &f);
		}
		if (r < 0) {
			run_result_release(&res);
			goto fail_run;
		}
		if (res.status == RUN_INTERRUPTED) {
			run_result_release(&res);
			stopped = runner_stop_requested();
			break;
		}
		if (res.status != RUN_OK) {
			n_bad++;
			warning("%s/%s %s%d: %s: %s", var->name, wl->name,
				pe->warmup ? "warm-up " : "run ", pe->repetition + 1,
				run_status_name(res.status), res.reason);
		} else {
			n_ok++;
		}
		r = store_put_result(st, run_id, pe->seq, &res);
		run_result_release(&res);
		if (r < 0)
			goto fail_run;
	}
	if (active >= 0) {
		int r = backend_for(&exp.variants[active])->leave(&ctx[active]);
		active = -1;
		if (r < 0)
			goto fail_run;
	}
	if (stopped) {
		error("stopped by signal %d (%s); run %lld keeps every finished run; "
		      "'perturb run %s --resume' completes it", stopped, strsignal(stopped),
		      (long long)run_id, o.file);
		store_end_run(st, run_id, "interrupted");
		goto out;
	}
	if (store_end_run(st, run_id, "completed") < 0)
		goto out;
	note("run %lld of '%s' done: %zu runs, %zu failed, %.1f s; 'perturb report --db %s' shows it",
	     (long long)run_id, exp.name, n_ok + n_bad, n_bad, now_mono() - t0, o.db);
	ret = EXIT_OK;
	/* A (variant, workload) pair without a single good measured run cannot be reported. */
	{
		size_t nv = exp.n_variants, nw = exp.n_workloads;
		int *total = xcalloc(nv * nw, sizeof(int)), *failed = xcalloc(nv * nw, sizeof(int));
		struct store_walk walk = { .total = total, .failed = failed,
					   .n_workloads = nw, .n_variants = nv };
		int failed_pairs = 0;
		if (store_walk_values(st, run_id, &walk) == 0)
			for (size_t v = 0; v < nv; v++)
				for (size_t w = 0; w < nw; w++) {
					size_t k = w * nv + v;
					if (!total[k] || failed[k] != total[k])
						continue;
					error("every run of workload '%s' under variant '%s' failed",
					      exp.workloads[w].name, exp.variants[v].name);
					failed_pairs++;
				}
		free(total);
		free(failed);
		if (failed_pairs)
			ret = EXIT_RUNTIME;
	}
	goto out;

fail_run:
	if (!stopped)
		stopped = runner_stop_requested();
	if (active >= 0)
		backend_for(&exp.variants[active])->leave(&ctx[active]);
	active = -1;
	if (st && run_id) {
		if (stopped) {
			error("stopped by signal %d (%s); 'perturb run %s --resume' completes run %lld",
			      stopped, strsignal(stopped), o.file, (long long)run_id);
			store_end_run(st, run_id, "interrupted");
		} else {
			store_end_run(st, run_id, "failed");
		}
	}
	ret = EXIT_RUNTIME;
out:
	if (ctx) {
		for (size_t v = 0; v < exp.n_variants; v++)
			argv_free(ctx[v].envp);
		free(ctx);
	}
	if (workdirs) {
		for (size_t w = 0; w < exp.n_workloads; w++)
			free(workdirs[w]);
		free(workdirs);
	}
	argv_free(base_env);
	counters_close(counters);
	if (st)
		store_close(st);
	machine_release(&mi);
	plan_release(&plan);
	self_check_release(&exp, n_real_variants);
	experiment_release(&exp);
	free(done);
	free(skip_v);
	free(skip_w);
	free(dbdir);
	free(workroot);
	free(logdir);
	free(cmdline);
	free(o.filter.variants);
	free(o.filter.workloads);
	return ret;
}
