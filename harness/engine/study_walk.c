/*
 * study_walk.c - the walk of a study's plan (study_int.h): switch variants
 * through their backend, prepare, run, store each result in its own
 * transaction as soon as it exists; order: duet's pairs; --target-ci's
 * added rounds; the progress line.
 */
#include "study_int.h"
#include "core/packages.h"
#include "core/proc.h"
#include "core/runner.h"
#include "core/stop.h"
#include "counters/counters.h"
#include "lib/stages.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
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

/* argv = prefix (may be NULL) + cmd, every word with {workdir}, {perturb}
 * and {micro} (perturb-micro next to perturb) expanded; a shell's script
 * (a workload's shell:, sh -c S) so that no value is read as shell code
 * (expand_placeholders_argv()); with verbatim (placeholders: false) every
 * word as it is; NULL-terminated. */
static char **build_argv(const struct argv_list *prefix, char **cmd, size_t ncmd,
			 const char *workdir, int verbatim)
{
	const struct placeholder ph[] = {
		{ "{workdir}", workdir },
		{ "{perturb}", perturb_self_exe() },
		{ "{micro}", perturb_micro_exe() },
	};
	size_t np = prefix ? prefix->n : 0;
	char **words = xcalloc(np + ncmd + 1, sizeof(char *)), **v;

	for (size_t i = 0; i < np; i++)
		words[i] = prefix->v[i];
	for (size_t i = 0; i < ncmd; i++)
		words[np + i] = cmd[i];
	v = expand_placeholders_argv(words, np + ncmd, ph, verbatim ? 0 : ARRAY_SIZE(ph));
	free(words);
	return v;
}

static char **workload_argv(const struct workload *w, const struct variant *v,
			    const char *workdir, int verbatim)
{
	if (v->cmd.n)
		return build_argv(&v->wrap, v->cmd.v, v->cmd.n, workdir, verbatim);
	if (w->shell) {
		char *sh[] = { "/bin/sh", "-c", w->shell };
		return build_argv(&v->wrap, sh, 3, workdir, verbatim);
	}
	return build_argv(&v->wrap, w->cmd.v, w->cmd.n, workdir, verbatim);
}

int study_run_commands(const struct argv_list *cmds, size_t n, char **envp,
		       const char *workdir, double timeout, const char *what, int verbatim)
{
	for (size_t i = 0; i < n; i++) {
		char **argv = build_argv(NULL, cmds[i].v, cmds[i].n, workdir, verbatim);
		int r = proc_run_command(argv, envp, workdir, timeout, what);
		argv_free(argv);
		if (r < 0)
			return -1;
	}
	return 0;
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

/*
 * After the plan's last run, with --target-ci: 1 when a goal ends the run
 * (said: "target reached" or "time spent"), 0 when another round is due,
 * -1 on an error (printed).
 */
static int target_done(const struct study_opts *o, struct store *st, int64_t run_id,
		       double t0, int rounds)
{
	double widest, max_time = o->max_time > 0 ? o->max_time : STUDY_DEFAULT_MAX_TIME;
	double el = now_mono() - t0;
	char what[256];

	if (o->widest(st, run_id, &widest, what, sizeof(what), o->widest_arg) < 0)
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

int study_leave_active(struct study *s, const struct variant *next)
{
	struct backend_ctx *ctx;
	double t = now_mono();
	int r = 0;

	if (s->active < 0)
		return 0;
	ctx = &s->ctx[s->active];
	ctx->next = next;
	if (ctx->variant->be->leave)
		r = ctx->variant->be->leave(ctx);
	ctx->next = NULL;
	s->active = -1;
	if (r == 0 && s->entry_seq >= 0 &&
	    store_put_block_time(s->st, s->run_id, s->entry_seq, 1, now_mono() - t) < 0)
		r = -1;
	s->entry_seq = -1;
	return r;
}

/*
 * Make the system be entry pe's variant, unless it is already, in the
 * same block.  The engine, not the backend, times the block's entry (its
 * backend's enter(): a boot, its readiness, the kernel state) and its
 * leave, for every backend alike, and stores them (store.h,
 * block_entries): the cost of a boot, from which the report sizes the
 * runs per boot (docs/report-json.md, runs_per_boot).
 */
static int switch_to(struct study *s, const struct plan_entry *pe)
{
	const struct variant *var = &s->exp.variants[pe->variant];
	double t;

	if (s->active == pe->variant && s->active_block == pe->block)
		return 0;
	/* the next variant: a backend may hand state over to it */
	if (study_leave_active(s, var) < 0)
		return -1;
	t = now_mono();
	if (var->be->enter && var->be->enter(&s->ctx[pe->variant]) < 0)
		return -1;
	s->active = pe->variant;
	s->active_block = pe->block;
	if (store_put_block_time(s->st, s->run_id, pe->seq, 0, now_mono() - t) < 0)
		return -1;
	s->entry_seq = pe->seq;
	return 0;
}

/* Entry pe's workload prepare: commands and its request (argv in *wargv,
 * freed by the caller).  0, or -1 (printed). */
static int prepare_entry(struct study *s, const struct plan_entry *pe, struct run_request *req,
			 char ***wargv)
{
	const struct experiment *exp = &s->exp;
	const struct variant *var = &exp->variants[pe->variant];
	const struct workload *wl = &exp->workloads[pe->workload];
	struct backend_ctx *ctx = &s->ctx[pe->variant];
	char *what;
	int r;

	if (wl->n_prepare) {
		what = xasprintf("workload '%s' prepare", wl->name);
		r = study_run_commands(wl->prepare, wl->n_prepare, ctx->envp,
				       s->workdirs[pe->workload], workload_timeout(exp, wl),
				       what, exp->verbatim);
		free(what);
		if (r < 0)
			return -1;
	}
	*wargv = workload_argv(wl, var, s->workdirs[pe->workload], exp->verbatim);
	*req = (struct run_request){
		.argv = *wargv,
		.envp = ctx->envp,
		.cpus = exp->cpus,
		.n_cpus = exp->n_cpus,
		.timeout_s = workload_timeout(exp, wl),
		.metrics = wl->metrics,
		.n_metrics = wl->n_metrics,
		.cwd = s->workdirs[pe->workload],
		.counters = pe->variant == s->nocounters ? NULL : s->counters,
	};
	return 0;
}

/* proc_call_at()'s: the batch of results, due while a run goes on. */
static void flush_results(void *st)
{
	store_flush(st);
}

/* Entry pe's result, as its backend's run() returned r: said, stored
 * with its cost (seconds; NaN: not measured) unless store is 0 (a resumed
 * pair's entry stored before), and released.  1 when a stop ended it
 * (nothing stored), 0, or -1 (printed). */
static int finish_entry(struct study *s, const struct plan_entry *pe, int r,
			struct run_result *res, int store, double cost_s)
{
	const struct variant *var = &s->exp.variants[pe->variant];
	const struct workload *wl = &s->exp.workloads[pe->workload];

	if (r < 0) {
		run_result_release(res);
		return -1;
	}
	if (res->status == RUN_INTERRUPTED) {
		run_result_release(res);
		if (!(s->stopped = stop_requested()))	/* never a silent end */
			return error("%s/%s: the run was interrupted, and perturb was not asked "
				     "to stop", var->name, wl->name);
		return 1;
	}
	if (!store) {
		run_result_release(res);
		return 0;
	}
	if (res->status != RUN_OK) {
		s->n_bad++;
		warning("%s/%s %s%d: %s: %s", var->name, wl->name,
			pe->warmup ? "warm-up " : "run ", pe->repetition + 1,
			run_status_name(res->status), res->reason);
	} else {
		s->n_ok++;
	}
	stage_enter(STAGE_STORE);
	r = store_put_result_cost(s->st, s->run_id, pe->seq, res, cost_s);
	/* a batch still open is committed from the next long wait */
	proc_call_at(store_flush_due(s->st), flush_results, s->st);
	stage_enter(STAGE_PLAN);
	run_result_release(res);
	return r < 0 ? -1 : 0;
}

/* Plan entry i: prepare, run, store.  Its cost is the time from its
 * workload's prepare to its result in hand: what one more run of a block
 * costs, the block's entry aside (switch_to); the store's write of it
 * (into the batch of results, engine/store.h) is not counted.  1 when a stop ended it
 * (nothing stored), 0, or -1 (printed). */
static int run_entry(struct study *s, size_t i, struct progress *prog)
{
	const struct plan_entry *pe = &s->plan.e[i];
	const struct variant *var = &s->exp.variants[pe->variant];
	struct backend_ctx *ctx = &s->ctx[pe->variant];
	struct run_request req;
	struct run_result res;
	char **wargv;
	double t;
	int r;

	if (switch_to(s, pe) < 0)
		return -1;
	t = now_mono();
	if (prepare_entry(s, pe, &req, &wargv) < 0)
		return -1;
	progress_show(prog, var->name, s->exp.workloads[pe->workload].name);
	r = var->be->run(ctx, &req, &res);
	argv_free(wargv);
	progress_end_run(prog);
	if (req.counters) {
		struct failure_ctx f = { var->name, s->exp.workloads[pe->workload].name,
					 pe->repetition, pe->warmup };
		counters_run_failures(s->counters, counter_failed, &f);
	}
	return finish_entry(s, pe, r, &res, 1, now_mono() - t);
}

/* ---- order: duet (docs/experiment.md) ---- */

int study_duet_cpus(const struct experiment *exp, int cpus[2], char *why, size_t len)
{
	cpu_set_t set;
	int n = 0, count;

	if (exp->n_cpus >= 2) {
		cpus[0] = exp->cpus[0];
		cpus[1] = exp->cpus[1];
		return 0;
	}
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		snprintf(why, len, "cannot read the CPUs perturb may run on: %s", strerror(errno));
		return -1;
	}
	count = CPU_COUNT(&set);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (n < 2) {
		snprintf(why, len, "order: duet runs the baseline and a variant at the same time on "
			 "two CPUs, and perturb may run on %d (the machine's online CPUs, or its "
			 "cpuset, allow fewer than two): use order: interleaved", count);
		return -1;
	}
	return 0;
}

/* One side of a duet pair, run in a thread of its own (the other side in
 * the study's thread). */
struct duet_side {
	struct backend_ctx *ctx;
	struct run_request req;
	struct run_result res;
	int r;
};

static void *duet_side_run(void *arg)
{
	struct duet_side *d = arg;

	d->r = d->ctx->variant->be->run(d->ctx, &d->req, &d->res);
	return NULL;
}

/*
 * Entries i (the baseline) and i + 1 (the variant) of a duet plan: both
 * prepared, then started together (runner.h: struct run_gate), each pinned
 * to one of the two CPUs (plan_duet_slot()), and stored, each but one that
 * a resumed run has already.  Variants change nothing of the system
 * (engine/config.c), so nothing is entered or left.  1 when a stop ended
 * it, 0, or -1 (printed).
 */
static int run_pair(struct study *s, size_t i, struct progress *prog)
{
	const struct plan_entry *pe[2] = { &s->plan.e[i], &s->plan.e[i + 1] };
	struct duet_side side[2];
	char **wargv[2] = { NULL, NULL };
	int cpu[2], slot = plan_duet_slot(pe[1]), ret = 0, started = 0;
	struct run_gate gate;
	pthread_t th;

	cpu[0] = s->duet_cpus[slot];
	cpu[1] = s->duet_cpus[!slot];
	for (int k = 0; k < 2; k++) {
		side[k] = (struct duet_side){ .ctx = &s->ctx[pe[k]->variant] };
		if (prepare_entry(s, pe[k], &side[k].req, &wargv[k]) < 0) {
			ret = -1;
			goto out;
		}
		side[k].req.cpus = &cpu[k];
		side[k].req.n_cpus = 1;
		side[k].req.counters = NULL;	/* refused with duet (engine/config.c) */
		side[k].req.gate = &gate;
	}
	run_gate_init(&gate, 2);
	progress_show(prog, s->exp.variants[pe[1]->variant].name,
		      s->exp.workloads[pe[1]->workload].name);
	if ((errno = pthread_create(&th, NULL, duet_side_run, &side[1])) != 0) {
		run_gate_destroy(&gate);
		ret = error("cannot start a thread for order: duet: %s", strerror(errno));
		goto out;
	}
	duet_side_run(&side[0]);
	pthread_join(th, NULL);
	run_gate_destroy(&gate);
	started = 1;
	progress_end_run(prog);
	progress_end_run(prog);
out:
	for (int k = 0; k < 2; k++) {
		argv_free(wargv[k]);
		if (started) {
			/* a pair's sides share their time: no cost of one run */
			int r = finish_entry(s, pe[k], side[k].r, &side[k].res,
					     !(s->done && s->done[i + (size_t)k]), NAN);
			if (r < 0 || (r > 0 && ret >= 0))
				ret = r;
		}
	}
	return ret;
}

/* After the plan's last entry with target_ci: 1 when a round was added,
 * 0 when the study ends, -1 (printed). */
static int add_round(struct study *s, struct progress *prog)
{
	size_t from = s->plan.n;
	int r;

	if ((s->stopped = stop_requested()))
		return 0;
	if (s->o->more && !s->o->target_ci) {
		if ((r = s->o->more(s->st, s->run_id, s->rounds, s->o->more_arg)) <= 0)
			return r < 0 ? -1 : 0;
	} else if ((r = target_done(s->o, s->st, s->run_id, s->t0, s->rounds)) != 0) {
		return r < 0 ? -1 : 0;
	}
	if (!plan_add_round(&s->plan, s->exp.n_variants, s->exp.n_workloads, s->seed))
		return 0;
	if (store_append_plan(s->st, &s->exp, &s->plan, from, s->run_id) < 0)
		return -1;
	if (s->done) {
		s->done = xrealloc(s->done, s->plan.n);
		for (size_t k = from; k < s->plan.n; k++)
			s->done[k] = s->skip_v[s->plan.e[k].variant] ||
				     s->skip_w[s->plan.e[k].workload];
	}
	prog->total += s->plan.n - from;
	s->rounds++;
	return 1;
}

int study_walk(struct study *s)
{
	struct progress prog;
	int r;

	progress_init(&prog, &s->plan, s->done);
	for (size_t i = 0;; i++) {
		if (i == s->plan.n) {
			if (!s->o->target_ci && !s->o->more) {
				s->walked = 1;
				break;
			}
			if ((r = add_round(s, &prog)) < 0)
				return -1;
			if (!r) {
				s->walked = !s->stopped;
				break;
			}
		}
		/* duet: entries i and i + 1 are a pair (plan.h), run together */
		int pair = s->exp.order == ORDER_DUET && i + 1 < s->plan.n &&
			   s->plan.e[i].round == s->plan.e[i + 1].round &&
			   s->plan.e[i].workload == s->plan.e[i + 1].workload;
		if (s->done && s->done[i] && !(pair && !s->done[i + 1])) {
			i += (size_t)pair;
			continue;
		}
		if ((s->stopped = stop_requested()))
			break;
		if ((r = pair ? run_pair(s, i, &prog) : run_entry(s, i, &prog)) < 0)
			return -1;
		i += (size_t)pair;
		if (r)
			break;
	}
	stage_leave();	/* what comes after the runs (the report) is no stage */
	return study_leave_active(s, NULL);
}
