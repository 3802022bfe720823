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
#include "backend.h"
#include "commands.h"
#include "config.h"
#include "counters.h"
#include "machine.h"
#include "packages.h"
#include "plan.h"
#include "runner.h"
#include "store.h"
#include "util.h"

#include <errno.h>
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
};

static int parse_args(int argc, char **argv, struct run_opts *o)
{
	const char *val;
	int r, have_file = 0;

	o->file = "experiments.yaml";
	o->db = "results/perturb.db";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((r = opt_value(argc, argv, &i, "--db", &val))) {
			if (r < 0)
				return -1;
			o->db = val;
		} else if ((r = opt_value(argc, argv, &i, "--repetitions", &val))) {
			long n;
			if (r < 0)
				return -1;
			if (parse_long(val, 1, 1000000, &n))
				return error("--repetitions must be an integer from 1 to 1000000, got '%s'", val);
			o->filter.repetitions = (int)n;
		} else if ((r = opt_value(argc, argv, &i, "--only-variant", &val))) {
			if (r < 0)
				return -1;
			o->filter.variants = xrealloc(o->filter.variants,
				(o->filter.n_variants + 1) * sizeof(char *));
			o->filter.variants[o->filter.n_variants++] = (char *)val;
		} else if ((r = opt_value(argc, argv, &i, "--only-workload", &val))) {
			if (r < 0)
				return -1;
			o->filter.workloads = xrealloc(o->filter.workloads,
				(o->filter.n_workloads + 1) * sizeof(char *));
			o->filter.workloads[o->filter.n_workloads++] = (char *)val;
		} else if ((r = opt_value(argc, argv, &i, "--seed", &val))) {
			char *end;
			if (r < 0)
				return -1;
			errno = 0;
			unsigned long long s = strtoull(val, &end, 10);
			if (errno || !*val || *end || *val == '-')
				return error("--seed must be a non-negative integer, got '%s'", val);
			o->has_seed = 1;
			o->seed = s;
		} else if (!strcmp(a, "--dry-run")) {
			o->dry_run = 1;
		} else if (!strcmp(a, "--resume")) {
			o->resume = 1;
		} else if (!strcmp(a, "--skip-unavailable")) {
			o->skip_unavailable = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			perturb_quiet = 1;
		} else if (!strncmp(a, "--target-ci", 11) || !strncmp(a, "--max-time", 10) ||
			   !strcmp(a, "--self-check")) {
			return error("option '%s' is not supported yet by perturb %s", a,
				     PERTURB_VERSION);
		} else if (a[0] == '-' && a[1]) {
			return error("unknown option '%s' (see 'perturb help run')", a);
		} else if (!have_file) {
			o->file = a;
			have_file = 1;
		} else {
			return error("unexpected argument '%s' (one experiment file at a time)", a);
		}
	}
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
	printf("%5s  %-6s  %-20s  %-20s  %s\n", "seq", "round", "variant", "workload", "run");
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->e[i];
		char round[16] = "-";
		if (e->round >= 0)
			snprintf(round, sizeof(round), "%d", e->round);
		printf("%5d  %-6s  %-20s  %-20s  %s%d%s\n", e->seq, round,
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
	int ret = EXIT_USAGE, active = -1, stopped = 0;
	uint64_t seed;
	size_t n_ok = 0, n_bad = 0;
	double t0 = now_mono();

	if (parse_args(argc, argv, &o) < 0)
		goto out;
	if (config_load(o.file, &exp, err, sizeof(err)) < 0) {
		error("%s", err);
		goto out;
	}

	/* Every check that can fail happens before anything is written. */
	skip_v = xcalloc(exp.n_variants, 1);
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
		if (!plan_uses_workload(&plan, done, (int)w))
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
		if (!plan_uses_workload(&plan, done, (int)w))
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
	for (size_t i = 0; i < plan.n; i++) {
		const struct plan_entry *pe = &plan.e[i];
		if (done && done[i])
			continue;
		if ((stopped = runner_stop_requested()))
			break;
		const struct variant *var = &exp.variants[pe->variant];
		const struct workload *wl = &exp.workloads[pe->workload];
		const struct backend *be = backend_for(var);
		if (active != pe->variant) {
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
			.counters = counters,
		};
		struct run_result res;
		progress_show(&prog, var->name, wl->name);
		r = be->run(&ctx[pe->variant], &req, &res);
		argv_free(wargv);
		progress_end_run(&prog);
		if (counters) {
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
		int failed_pairs = 0;
		for (size_t v = 0; v < exp.n_variants; v++)
			for (size_t w = 0; w < exp.n_workloads; w++) {
				int failed = 0, total = 0;
				if (store_count_failed(st, run_id, exp.variants[v].name,
						       exp.workloads[w].name, &failed, &total) < 0)
					continue;
				if (total && failed == total) {
					error("every run of workload '%s' under variant '%s' failed",
					      exp.workloads[w].name, exp.variants[v].name);
					failed_pairs++;
				}
			}
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
