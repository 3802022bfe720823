/*
 * study.c - the executor (see study.h).
 *
 * experiment -> checks (variants, requires) -> plan -> database -> workload
 * setup -> walk the plan: switch variants through their backend, prepare,
 * run, store each result in its own transaction as soon as it exists.
 * struct study holds what the phases share; each phase returns 0 or -1.
 */
#include "study.h"
#include "config.h"
#include "shard.h"
#include "backends/backend.h"
#include "backends/journal.h"
#include "core/cgroup.h"
#include "core/packages.h"
#include "core/runner.h"
#include "counters/counters.h"
#include "lib/machine.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
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
 * (expand_placeholders_argv()); NULL-terminated. */
static char **build_argv(const struct argv_list *prefix, char **cmd, size_t ncmd,
			 const char *workdir)
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
	v = expand_placeholders_argv(words, np + ncmd, ph, ARRAY_SIZE(ph));
	free(words);
	return v;
}

static char **workload_argv(const struct workload *w, const struct variant *v,
			    const char *workdir)
{
	if (v->cmd.n)
		return build_argv(&v->wrap, v->cmd.v, v->cmd.n, workdir);
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
		       uint64_t seed, const unsigned char *done, const int duet_cpus[2])
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
		char cpu[32] = "";
		/* duet: entries 2k (the baseline) and 2k + 1 are a pair (plan.h) */
		if (exp->order == ORDER_DUET && (i | 1) < p->n)
			snprintf(cpu, sizeof(cpu), "  cpu %d",
				 duet_cpus[plan_duet_slot(&p->e[i | 1]) ^ (int)(i & 1)]);
		printf("%5d  %-6s  %-6d  %-20s  %-20s  %s%d%s%s\n", e->seq, round, e->block,
		       exp->variants[e->variant].name, exp->workloads[e->workload].name,
		       e->warmup ? "warmup " : "", e->repetition + 1, cpu,
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
	const char *suffix[] = { STUDY_SELF_CHECK_AA, STUDY_SELF_CHECK_NOCOUNTERS };

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
	char **names = NULL, *aa = xasprintf("%s%s", baseline, STUDY_SELF_CHECK_AA);
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


struct study {
	const struct study_opts *o;
	struct experiment exp;
	struct plan_filter filter;	/* o's, and --self-check's variants */
	struct plan plan;
	uint64_t seed;
	struct store *st;
	int64_t run_id;
	struct machine_info mi;
	unsigned char *done;	/* resume: entries stored already */
	unsigned char *skip_v, *skip_w;	/* skipped as unavailable */
	char *dbdir, *workroot, *logdir;
	char **workdirs;	/* per workload, absolute; NULL when not used */
	char **base_env;
	struct backend_ctx *ctx;	/* per variant */
	struct counter_set *counters;
	struct store_shard *shards;	/* n_shards rows, or NULL */
	int resuming;		/* the plan is a stored run's */
	int nocounters;		/* --self-check's variant without counters, or -1 */
	size_t n_real_variants;	/* before --self-check's */
	int active, active_block;	/* the variant entered and its block (plan.h) */
	int entry_seq;		/* the plan entry the active block was entered for */
	int duet_cpus[2];	/* order: duet's two CPUs (duet_cpus()) */
	int stopped;		/* the stop signal, 0 when none */
	int walked;		/* the walk reached the end of the plan (and its rounds) */
	int rounds;		/* added by target_ci */
	int lock_fd;		/* DB.lock (run_lock), -1 when not open */
	int began;		/* begin() made perturb's cgroup (when it could) */
	size_t n_ok, n_bad;
	double t0;
};

#define ERRLEN 1024

/*
 * One perturb at a time per stored run: while run N is executed its
 * process holds a write lock on byte 2N of DB.lock (the database's path
 * with ".lock" added), and a resumer holds byte 2N+1 too, so that a
 * refusal can say which it is.  fcntl(2) record locks: the kernel drops
 * them when the process ends however it ends, and F_GETLK names the
 * holder's pid.  The file is opened once and kept open until the study
 * ends (closing any descriptor of it would drop the locks).  0, or -1
 * (printed): "run N is being resumed by pid P" (docs/perturb.1, EXIT
 * STATUS 3) or an error of the lock file.
 */
static int run_lock(struct study *s, int64_t run_id, int resuming)
{
	char *path = xasprintf("%s.lock", s->o->db);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2 * run_id,
			    .l_len = resuming ? 2 : 1 };
	int ret = -1;

	if (s->lock_fd < 0 &&
	    (s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		error("cannot open the lock file '%s': %s", path, strerror(errno));
		goto out;
	}
	if (fcntl(s->lock_fd, F_SETLK, &fl) == 0) {
		ret = 0;
		goto out;
	}
	if (errno != EACCES && errno != EAGAIN) {
		error("cannot lock run %lld in '%s': %s", (long long)run_id, path, strerror(errno));
		goto out;
	}
	{
		struct flock held = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				      .l_start = 2 * run_id, .l_len = 1 };
		struct flock res = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				     .l_start = 2 * run_id + 1, .l_len = 1 };
		if (fcntl(s->lock_fd, F_GETLK, &held) < 0)
			held.l_type = F_UNLCK;
		if (fcntl(s->lock_fd, F_GETLK, &res) < 0)
			res.l_type = F_UNLCK;
		error("run %lld is being %s by pid %d; wait for it to end (or stop it: it "
		      "keeps what it finished, and '--resume' completes the rest)",
		      (long long)run_id, res.l_type != F_UNLCK ? "resumed" : "run",
		      held.l_type != F_UNLCK ? (int)held.l_pid : (int)res.l_pid);
	}
out:
	free(path);
	return ret;
}

/* A task (o->shard >= 0): every entry outside its shard counts as done. */
static int shard_only(struct study *s)
{
	const struct study_opts *o = s->o;
	const struct store_shard *row;

	if (!o->n_shards || o->shard < 0)
		return 0;
	if (o->shard >= o->n_shards)
		return error("--shard %d/%d: no such shard", o->shard, o->n_shards);
	row = &s->shards[o->shard];
	if (!s->done)
		s->done = xcalloc(s->plan.n ? s->plan.n : 1, 1);
	for (size_t i = 0; i < s->plan.n; i++)
		if ((int)i < row->seq_lo || (int)i >= row->seq_hi)
			s->done[i] = 1;
	return 0;
}

/* A resumed run's shards: a task resumes its own shard (its database holds
 * the whole plan), the main database of a split study is resumed through
 * perturb run --slurm --resume. */
static int load_shards(struct study *s, enum study_result *res)
{
	const struct study_opts *o = s->o;
	size_t n;

	*res = STUDY_FAILED;
	if (store_load_shards(s->st, s->run_id, &s->shards, &n) < 0)
		return -1;
	*res = STUDY_REFUSED;
	if (!n && !o->n_shards)
		return 0;
	if (!n || o->shard < 0 || (int)n != o->n_shards || s->shards[0].n_shards != o->n_shards)
		return error("--resume: run %lld in '%s' is %s; %s", (long long)s->run_id, o->db,
			     n ? "split into shards" : "not split into shards",
			     n ? "'perturb run --slurm --resume' resubmits its missing shards"
			       : "resume it without --shard");
	return shard_only(s);
}

/* The experiment and its plan: built, or loaded to be resumed.  -1 with
 * *res set: STUDY_REFUSED, or STUDY_FAILED for a database error. */
static int load(struct study *s, enum study_result *res)
{
	const struct study_opts *o = s->o;
	struct experiment *exp = &s->exp;
	char err[ERRLEN];

	*res = STUDY_REFUSED;
	if (config_load(o->file, exp, err, sizeof(err)) < 0)
		return error("%s", err);
	s->n_real_variants = exp->n_variants;
	s->skip_v = xcalloc(exp->n_variants + 2, 1);	/* + --self-check's */
	s->skip_w = xcalloc(exp->n_workloads, 1);
	if (o->n_shards && o->shard >= 0 && !o->resume && access(o->db, F_OK) == 0) {
		/* a task started again: it finishes its last attempt's run */
		char sha[65];

		sha256_hex(exp->text, exp->text_len, sha);
		if (store_open(o->db, 0, &s->st) < 0 ||
		    store_find_resumable(s->st, sha, &s->run_id) < 0) {
			*res = STUDY_FAILED;
			return -1;
		}
	}
	if (o->resume || s->run_id) {
		s->resuming = 1;
		struct run_header h = { 0 };
		char sha[65];

		sha256_hex(exp->text, exp->text_len, sha);
		if (!s->st && access(o->db, F_OK) < 0)
			return error("--resume: no results database at '%s'", o->db);
		if (!s->st && store_open(o->db, STORE_WRITE, &s->st) < 0)
			return -1;
		*res = STUDY_FAILED;
		if (store_find_resumable(s->st, sha, &s->run_id) < 0)
			return -1;
		*res = STUDY_REFUSED;
		if (!s->run_id)
			return error("--resume: '%s' holds no unfinished run of this version of '%s'",
				     o->db, exp->path);
		/* a dry run writes nothing, not even the lock file */
		*res = STUDY_FAILED;
		if (!o->dry_run && run_lock(s, s->run_id, 1) < 0)
			return -1;
		*res = STUDY_REFUSED;
		if (stored_self_check(s->st, s->run_id, exp->baseline) &&
		    (s->nocounters = self_check_add(exp, &s->filter)) < 0)
			return -1;
		*res = STUDY_FAILED;
		if (store_load_plan(s->st, s->run_id, &s->plan, &s->done) < 0 ||
		    store_run_header(s->st, s->run_id, &h) < 0)
			return -1;
		s->seed = h.seed;
		run_header_release(&h);
		return load_shards(s, res);
	}
	s->seed = o->has_seed ? o->seed : exp->has_seed ? exp->seed : plan_draw_seed();
	if (o->self_check && (s->nocounters = self_check_add(exp, &s->filter)) < 0)
		return -1;
	if (o->n_shards) {
		if (shard_plan_build(exp, &s->filter, s->seed, o->n_shards, &s->plan,
				     &s->shards, err, sizeof(err)) < 0)
			return error("%s", err);
		return shard_only(s);
	}
	if (plan_build(exp, &s->filter, s->seed, &s->plan, err, sizeof(err)) < 0)
		return error("%s", err);
	return 0;
}

/*
 * Every selected variant through its backend's check(), every used
 * workload's requires: (and perturb-micro for {micro}): what this machine
 * cannot run is an error, or skipped with skip_unavailable (never the
 * baseline).  -1 when something is missing (said).
 */
static int check_available(struct study *s)
{
	const struct experiment *exp = &s->exp;
	const struct study_opts *o = s->o;
	int unavailable = 0;

	for (size_t v = 0; v < exp->n_variants; v++) {
		const struct variant *var = &exp->variants[v];
		struct pos at = var->cfg_pos;
		char why[512];

		if (!plan_uses_variant(&s->plan, (int)v) || !var->be->check ||
		    var->be->check(var, &at, why, sizeof(why)) == 0)
			continue;
		if (!strcmp(var->name, exp->baseline) || !o->skip_unavailable) {
			error("%s:%d:%d: %s", at.file, at.line, at.col, why);
			unavailable = 1;
		} else {
			warning("%s:%d:%d: %s; skipped", at.file, at.line, at.col, why);
			s->skip_v[v] = 1;
		}
	}
	for (size_t w = 0; w < exp->n_workloads; w++) {
		const struct workload *wl = &exp->workloads[w];
		if (!plan_uses_workload(&s->plan, o->target_ci ? NULL : s->done, (int)w))
			continue;
		for (size_t r = 0; r <= wl->n_requires; r++) {
			char why[512];
			/* every requires: entry, then perturb-micro for {micro} */
			if (r < wl->n_requires ? requirement_met(wl->requires[r], why, sizeof(why))
					       : micro_available(wl, why, sizeof(why)))
				continue;
			if (o->skip_unavailable) {
				warning("%s:%d:%d: workload '%s' requires %s; skipped",
					wl->pos.file, wl->pos.line, wl->pos.col, wl->name, why);
				s->skip_w[w] = 1;
			} else {
				error("%s:%d:%d: workload '%s' requires %s",
				      wl->pos.file, wl->pos.line, wl->pos.col, wl->name, why);
				unavailable = 1;
			}
		}
	}
	if (unavailable) {
		if (!o->skip_unavailable)
			note("nothing was run; --skip-unavailable runs what this machine can");
		return -1;
	}
	return 0;
}

/* The shard rows: a submission's (each shard's database beside o->db),
 * or a task's (its own row: this task's Slurm job and node). */
static int put_shards(struct study *s)
{
	const struct study_opts *o = s->o;
	char sha[65];

	shard_plan_hash(&s->plan, sha);
	for (int k = 0; k < o->n_shards; k++) {
		free(s->shards[k].plan_sha);
		s->shards[k].plan_sha = xstrdup(sha);
	}

	if (o->shard >= 0) {
		struct store_shard *row = &s->shards[o->shard];
		free(row->db);
		row->db = xstrdup(o->db);
		shard_set_provenance(row);
		note("shard %d/%d on node %s%s%s", o->shard, o->n_shards, row->node,
		     row->job ? ", Slurm task " : "", row->job ? row->job : "");
		/* a new run stores every row (the plan's split); a resumed
		 * one updates its own */
		if (s->resuming)
			return store_put_shards(s->st, s->run_id, row, 1);
		return store_put_shards(s->st, s->run_id, s->shards, (size_t)o->n_shards);
	}
	for (int k = 0; k < o->n_shards; k++) {
		free(s->shards[k].db);
		s->shards[k].db = shard_db_path(o->db, s->run_id, k);
	}
	return store_put_shards(s->st, s->run_id, s->shards, (size_t)o->n_shards);
}

/* The run in the database, its folders, the workloads' setup, the
 * variants' contexts: everything before the first run.  -1 (printed);
 * s->run_id is set once the run is stored. */
static int begin(struct study *s)
{
	const struct study_opts *o = s->o;
	const struct experiment *exp = &s->exp;
	size_t todo = 0;
	int e;

	stop_install_signals();
	/* long preparations (kernels to build) happen before the study */
	for (size_t v = 0; v < exp->n_variants; v++) {
		const struct variant *var = &exp->variants[v];
		if (!s->skip_v[v] && var->be->build && plan_uses_variant(&s->plan, (int)v) &&
		    var->be->build(var) < 0)
			return -1;
	}
	machine_probe(&s->mi);
	s->began = 1;
	/* every process of the study goes into perturb's cgroup: journaled
	 * first, so that a killed perturb's are stopped by the next one */
	if (cgroup_base() && journal_set_cgroup(journal_self(), cgroup_base()) < 0)
		warning("without a journal, what a killed perturb leaves in cgroup '%s' is not "
			"stopped by 'perturb restore'", cgroup_base());
	if (exp->n_counters && counters_open(exp->counters, exp->n_counters, &s->counters) < 0)
		return -1;
	if (!s->st && store_open(o->db, STORE_CREATE, &s->st) < 0)
		return -1;
	if (s->resuming) {
		if (store_set_status(s->st, s->run_id, "running") < 0)
			return -1;
		note("resuming run %lld of '%s'", (long long)s->run_id, exp->name);
	} else if (store_begin_run(s->st, exp, &s->plan, s->seed, o->cmdline, &s->mi,
				   &s->run_id) < 0) {
		return -1;
	} else if (run_lock(s, s->run_id, 0) < 0) {
		s->run_id = 0;	/* a resumer took it first: its status is the resumer's */
		return -1;
	}
	if (s->shards && put_shards(s) < 0)
		return -1;
	if (o->submit)
		return 0;
	for (size_t i = 0; i < s->plan.n; i++)
		todo += !(s->done && s->done[i]);
	note("run %lld of '%s': %zu runs to do (order %s, seed %llu), results in %s",
	     (long long)s->run_id, exp->name, todo, order_name(exp->order),
	     (unsigned long long)s->seed, o->db);
	if (s->counters && report_unavailable(s->st, s->run_id, s->counters) < 0)
		return -1;
	s->dbdir = dir_name(o->db);
	if (o->n_shards && o->shard >= 0) {
		/* tasks share the folder: each has its own work and logs */
		s->workroot = xasprintf("%s/work-%d", s->dbdir, o->shard);
		s->logdir = xasprintf("%s/logs/shard-%d/run-%lld", s->dbdir, o->shard,
				      (long long)s->run_id);
	} else {
		s->workroot = xasprintf("%s/work", s->dbdir);
		s->logdir = xasprintf("%s/logs/run-%lld", s->dbdir, (long long)s->run_id);
	}
	if ((e = mkdir_p(s->logdir, 0755)) < 0)
		return error("cannot create '%s': %s", s->logdir, strerror(-e));
	s->base_env = env_build(&(struct variant){ 0 });
	s->workdirs = xcalloc(exp->n_workloads, sizeof(char *));
	for (size_t w = 0; w < exp->n_workloads; w++) {
		const struct workload *wl = &exp->workloads[w];
		char *rel, *what;
		int r;

		if (s->skip_w[w] ||
		    !plan_uses_workload(&s->plan, o->target_ci ? NULL : s->done, (int)w))
			continue;
		rel = wl->dir ? xstrdup(wl->dir) : xasprintf("%s/%s", s->workroot, wl->name);
		if (!wl->dir && (e = mkdir_p(rel, 0755)) < 0) {
			error("cannot create '%s': %s", rel, strerror(-e));
			free(rel);
			return -1;
		}
		s->workdirs[w] = realpath(rel, NULL);
		free(rel);
		if (!s->workdirs[w])
			return error("cannot resolve work folder of '%s': %s", wl->name,
				     strerror(errno));
		what = xasprintf("workload '%s' setup", wl->name);
		r = run_commands(wl->setup, wl->n_setup, s->base_env, s->workdirs[w],
				 workload_timeout(exp, wl), what);
		free(what);
		if (r < 0)
			return -1;
	}
	s->ctx = xcalloc(exp->n_variants, sizeof(*s->ctx));
	for (size_t v = 0; v < exp->n_variants; v++) {
		const struct backend *be = exp->variants[v].be;
		s->ctx[v].exp = exp;
		s->ctx[v].variant = &exp->variants[v];
		s->ctx[v].envp = env_build(&exp->variants[v]);
		s->ctx[v].logdir = s->logdir;
		s->ctx[v].cwd = s->workroot;
		if (be->priv_size)
			s->ctx[v].priv = xcalloc(1, be->priv_size);
	}
	return 0;
}

/* Leave the active variant (next: the variant entered right after, or
 * NULL), and store how long that took; -1 when its backend failed to, or
 * the store. */
static int leave_active(struct study *s, const struct variant *next)
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
	if (leave_active(s, var) < 0)
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

	what = xasprintf("workload '%s' prepare", wl->name);
	r = run_commands(wl->prepare, wl->n_prepare, ctx->envp, s->workdirs[pe->workload],
			 workload_timeout(exp, wl), what);
	free(what);
	if (r < 0)
		return -1;
	*wargv = workload_argv(wl, var, s->workdirs[pe->workload]);
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
	r = store_put_result_cost(s->st, s->run_id, pe->seq, res, cost_s);
	run_result_release(res);
	return r < 0 ? -1 : 0;
}

/* Plan entry i: prepare, run, store.  Its cost is the time from its
 * workload's prepare to its result in hand: what one more run of a block
 * costs, the block's entry aside (switch_to); the store's write of it
 * (a transaction: milliseconds) is not counted.  1 when a stop ended it
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

/*
 * The two CPUs of a duet: the first two of the experiment's cpus:, else
 * the first two CPUs perturb may run on (its affinity: the online CPUs its
 * cpuset allows).  0, or -1 with the reason in why.
 */
static int duet_cpus(const struct experiment *exp, int cpus[2], char *why, size_t len)
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
	if ((r = target_done(s->o, s->st, s->run_id, s->t0, s->rounds)) != 0)
		return r < 0 ? -1 : 0;
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

/* Walk the plan (and target_ci's rounds); then leave the active variant.
 * 0 when done or stopped (s->stopped), -1 (printed). */
static int walk(struct study *s)
{
	struct progress prog;
	int r;

	progress_init(&prog, &s->plan, s->done);
	for (size_t i = 0;; i++) {
		if (i == s->plan.n) {
			if (!s->o->target_ci) {
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
	return leave_active(s, NULL);
}

/* Lines of a failed run's output check_failed_pairs() shows. */
#define STUDY_TAIL_LINES 5

/* The first failed run of one (variant, workload), for check_failed_pairs(). */
struct first_failure {
	const char *variant, *workload;
	int found;
};

static int print_first_failure(const struct stored_failure *f, void *ctx)
{
	struct first_failure *ff = ctx;
	char *tail;

	if (strcmp(f->variant, ff->variant) || strcmp(f->workload, ff->workload))
		return 0;
	ff->found = 1;
	tail = last_lines(f->output_tail, STUDY_TAIL_LINES);
	fprintf(stderr, "  the first, %s%d: %s%s%s%s\n", f->warmup ? "warm-up " : "run ",
		f->repetition + 1, f->status, f->reason && *f->reason ? ", " : "",
		f->reason ? f->reason : "", *tail ? "; its last lines of output:" : "");
	for (const char *p = tail; *p;) {
		size_t len = strcspn(p, "\n");
		fprintf(stderr, "    | %.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
	free(tail);
	return 1;
}

/* A (variant, workload) pair without a single good measured run cannot be
 * reported: said, with the first failure's reason and last lines of
 * output; -1 when there is one. */
static int check_failed_pairs(struct study *s)
{
	const struct experiment *exp = &s->exp;
	size_t nv = exp->n_variants, nw = exp->n_workloads;
	int *total = xcalloc(nv * nw, sizeof(int)), *failed = xcalloc(nv * nw, sizeof(int));
	struct store_walk walk = { .total = total, .failed = failed,
				   .n_workloads = nw, .n_variants = nv };
	int failed_pairs = 0;

	if (store_walk_values(s->st, s->run_id, &walk) == 0)
		for (size_t v = 0; v < nv; v++)
			for (size_t w = 0; w < nw; w++) {
				size_t k = w * nv + v;
				if (!total[k] || failed[k] != total[k])
					continue;
				struct first_failure ff = { exp->variants[v].name,
							    exp->workloads[w].name, 0 };
				error("every run of workload '%s' under variant '%s' failed",
				      exp->workloads[w].name, exp->variants[v].name);
				if (store_each_failure(s->st, s->run_id, print_first_failure, &ff) < 0)
					break;
				failed_pairs++;
			}
	free(total);
	free(failed);
	return failed_pairs ? -1 : 0;
}

static void study_release(struct study *s)
{
	if (s->ctx) {
		for (size_t v = 0; v < s->exp.n_variants; v++) {
			const struct backend *be = s->exp.variants[v].be;
			if (be->done)
				be->done(&s->ctx[v]);
			argv_free(s->ctx[v].envp);
			if (be->priv_size)
				free(s->ctx[v].priv);
		}
		free(s->ctx);
	}
	if (s->workdirs) {
		for (size_t w = 0; w < s->exp.n_workloads; w++)
			free(s->workdirs[w]);
		free(s->workdirs);
	}
	argv_free(s->base_env);
	counters_close(s->counters);
	if (s->st)
		store_close(s->st);
	if (s->began) {	/* nothing of the study is left running */
		cgroup_base_remove();
		journal_set_cgroup(journal_self(), NULL);
	}
	if (s->lock_fd >= 0)
		close(s->lock_fd);	/* the run's lock goes with it */
	machine_release(&s->mi);
	plan_release(&s->plan);
	self_check_release(&s->exp, s->n_real_variants);
	experiment_release(&s->exp);
	free(s->filter.variants);
	free(s->filter.workloads);
	free(s->done);
	store_shards_free(s->shards, s->shards ? (size_t)s->shards[0].n_shards : 0);
	free(s->skip_v);
	free(s->skip_w);
	free(s->dbdir);
	free(s->workroot);
	free(s->logdir);
}

/* The command that resumes this study, as it can be pasted: the file and
 * the database the run used, quoted for the shell where needed. */
static char *resume_hint(const struct study_opts *o)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "perturb run ");
	strbuf_add_shell_word(&sb, o->file);
	if (o->n_shards && o->shard >= 0) {
		/* a task: its shard is submitted again from the main database */
		strbuf_addstr(&sb, " --slurm --resume' (with the main database) or 'perturb run ");
		strbuf_add_shell_word(&sb, o->file);
		strbuf_addf(&sb, " --shard %d/%d", o->shard, o->n_shards);
	}
	strbuf_addstr(&sb, " --db ");
	strbuf_add_shell_word(&sb, o->db);
	if (!o->n_shards || o->shard < 0)
		strbuf_addstr(&sb, " --resume");
	return strbuf_detach(&sb);
}

enum study_result study_run(const struct study_opts *o)
{
	struct study s = {
		.o = o, .nocounters = -1, .n_real_variants = SIZE_MAX, .lock_fd = -1,
		.active = -1, .active_block = -1, .entry_seq = -1, .t0 = now_mono(),
	};
	enum study_result ret = STUDY_REFUSED;

	if (o->filter) {
		s.filter = *o->filter;
		s.filter.variants = xcalloc(o->filter->n_variants + 1, sizeof(char *));
		if (o->filter->n_variants)	/* variants may be NULL when there are none */
			memcpy(s.filter.variants, o->filter->variants,
			       o->filter->n_variants * sizeof(char *));
		s.filter.workloads = xcalloc(o->filter->n_workloads + 1, sizeof(char *));
		if (o->filter->n_workloads)
			memcpy(s.filter.workloads, o->filter->workloads,
			       o->filter->n_workloads * sizeof(char *));
	}
	if (o->target_ci && !o->widest) {
		error("target_ci needs a way to compute intervals (no widest())");
		goto out;
	}
	if (o->n_shards && (o->skip_unavailable || o->target_ci)) {
		error("a study in shards takes no %s: every shard runs the same design",
		      o->skip_unavailable ? "--skip-unavailable" : "--target-ci");
		goto out;
	}
	/* Every check that can fail happens before anything is written. */
	backend_dry_run = o->dry_run;
	if (load(&s, &ret) < 0 || check_available(&s) < 0)
		goto out;
	if (s.exp.order == ORDER_DUET) {
		char why[512];
		if (o->target_ci) {
			error("%s: order: duet takes no --target-ci (it adds interleaved rounds)",
			      s.exp.path);
			goto out;
		}
		if (duet_cpus(&s.exp, s.duet_cpus, why, sizeof(why)) < 0) {
			error("%s: %s", s.exp.path, why);
			goto out;
		}
	}
	if (s.resuming || (s.shards && s.done)) {
		/* Skipped parts of a resumed plan stay missing in the database. */
		for (size_t i = 0; i < s.plan.n; i++)
			if (s.skip_v[s.plan.e[i].variant] || s.skip_w[s.plan.e[i].workload])
				s.done[i] = 1;
	} else {
		plan_drop(&s.plan, s.skip_v, s.skip_w);
	}
	if (!s.plan.n) {
		error("%s: the plan is empty: nothing to run", s.exp.path);
		goto out;
	}
	if (o->dry_run) {
		print_plan(&s.exp, &s.plan, s.seed, s.done, s.duet_cpus);
		ret = STUDY_DONE;
		goto out;
	}

	/* From here on, failures are runtime failures. */
	ret = STUDY_FAILED;
	if (o->submit) {
		if (begin(&s) < 0)
			goto out;
		if (o->run_id_out)
			*o->run_id_out = s.run_id;
		ret = STUDY_DONE;
		goto out;
	}
	if (begin(&s) < 0 || walk(&s) < 0)
		goto fail_run;
	if (s.stopped) {
		char *hint = resume_hint(o);
		error("stopped by signal %d (%s); run %lld keeps every finished run; "
		      "'%s' completes it", s.stopped, strsignal(s.stopped), (long long)s.run_id,
		      hint);
		free(hint);
		store_end_run(s.st, s.run_id, "interrupted");
		goto out;
	}
	if (!s.walked) {	/* a run that stopped early is never completed */
		error("run %lld of '%s' ended before its plan did", (long long)s.run_id,
		      s.exp.name);
		goto fail_run;
	}
	if (store_end_run(s.st, s.run_id, "completed") < 0)
		goto out;
	note("run %lld of '%s' done: %zu runs, %zu failed, %.1f s; 'perturb report --db %s' shows it",
	     (long long)s.run_id, s.exp.name, s.n_ok + s.n_bad, s.n_bad, now_mono() - s.t0, o->db);
	ret = check_failed_pairs(&s) < 0 ? STUDY_FAILED : STUDY_DONE;
	goto out;

fail_run:
	if (!s.stopped)
		s.stopped = stop_requested();
	leave_active(&s, NULL);
	if (s.st && s.run_id) {
		if (s.stopped) {
			char *hint = resume_hint(o);
			error("stopped by signal %d (%s); '%s' completes run %lld",
			      s.stopped, strsignal(s.stopped), hint, (long long)s.run_id);
			free(hint);
			store_end_run(s.st, s.run_id, "interrupted");
		} else {
			store_end_run(s.st, s.run_id, "failed");
		}
	}
	ret = STUDY_FAILED;
out:
	study_release(&s);
	return ret;
}
