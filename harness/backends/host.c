/*
 * host.c - the default backend: variants of the running system: env, wrap, setup and
 * teardown commands, a daemon, a background load, the `kernel:` block
 * (the running kernel's tracing state, through tracefs), and the `bpf:`
 * block it claims (bpftrace as a managed daemon, bpf.h; tracefs mounted
 * and kernel.bpf_stats_enabled set through the journal) and the `perf:`
 * block (perf record or perf trace as a managed daemon, perf_tracer.h).
 * and kernel.bpf_stats_enabled set through the journal), and the `lttng:`
 * block's user-space tracing (a private LTTng session daemon, lttng.h).
 *
 * Kernel state.  check() finds out before the study starts whether this
 * machine can put itself in the variant: root, tracefs mountable, the tracer
 * listed, every event glob matching, and a trial application (journal, apply,
 * verify, restore) so that refusals such as EPERM for `function` on a
 * locked-down kernel are reported by variant and never halfway through.
 * A dry run (backend_dry_run) changes nothing: it checks what can be read
 * (ktrace_check_readonly) and says that the trial was not made.
 * enter() writes the journal (the complete prior state) before the first
 * change, applies the block and reads it back: a difference is an error
 * (the study stops, exit 3, after leave()).  leave() stops the processes,
 * restores the prior state, checks it, unmounts tracefs if perturb mounted
 * it and removes the journal.  Between variants the machine is exactly as
 * it was before perturb started; see journal.h for what happens when
 * perturb dies.
 *
 * Processes.  The pids (with start times) of daemons and background-load
 * supervisors are journaled too, so that `perturb restore` can stop them
 * after a SIGKILL of perturb.  Variant commands (setup, teardown, daemon,
 * background) expand {logdir} (the run's log folder, absolute), {variant}
 * and {perturb}.
 */
#include "backend.h"
#include "bpf.h"
#include "perf_tracer.h"
#include "lttng.h"
#include "journal.h"
#include "instrumentation/tracefs.h"
#include "lib/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/*
 * This process's journal (journal_self(), shared with the study, which
 * records its cgroup there), kept from the first change to the end of the
 * study (one variant is active at a time).  kernel_dirty: the kernel's
 * tracing state may differ from its prior state (a kernel: variant is in
 * place, or its restore failed).
 */
static struct journal *jr(void)
{
	return journal_self();
}
static int kernel_dirty;
static int journal_broken;	/* journal of processes could not be written: said once */

struct host_kernel {
	int active;		/* this variant's kernel state was (partly) applied */
};

/* A variant's state (ctx->priv), from enter() to leave(). */
struct host_state {
	int entered;
	size_t setup_done;	/* setup commands that succeeded */
	struct daemon *daemon;
	struct daemon *bpf;	/* the bpf: block's bpftrace */
	struct perf_tracer *perf;	/* the perf: block's perf */
	struct lttng_host *lttng;	/* the lttng: block's session daemon (lttng.h) */
	int bpf_mounted;	/* its enter() mounted tracefs */
	struct background *background;
	long bg_starts;		/* background load starts, over the whole study */
	unsigned long long bpf_lost;	/* events bpftrace lost, over the whole study */
	int bg_entries;		/* times the variant was entered with its load */
	struct host_kernel kernel;
};

/* The target state of each kernel: block on top of the journal's prior state, computed
 * at its first enter (expanding event globs takes milliseconds) and
 * dropped with the prior state. */
static struct target_cache {
	const struct ktrace_spec *k;
	struct ktrace_state t;
} *targets;
static size_t n_targets;

static void drop_targets(void)
{
	for (size_t i = 0; i < n_targets; i++)
		ktrace_state_release(&targets[i].t);
	free(targets);
	targets = NULL;
	n_targets = 0;
}

static const struct ktrace_state *target_of(const struct ktrace_spec *k, char *why, size_t len)
{
	struct ktrace_state t;
	for (size_t i = 0; i < n_targets; i++)
		if (targets[i].k == k)
			return &targets[i].t;
	if (ktrace_target(&jr()->prior, k, &t, why, len) < 0)
		return NULL;
	targets = xrealloc(targets, (n_targets + 1) * sizeof(*targets));
	targets[n_targets].k = k;
	targets[n_targets].t = t;
	return &targets[n_targets++].t;
}

/* ---- {logdir}, {variant}, {perturb} ---- */

static char **expand_argv(struct backend_ctx *ctx, const struct argv_list *a)
{
	char abs[PATH_MAX];
	const char *logdir = ctx->logdir && realpath(ctx->logdir, abs) ? abs :
			     ctx->logdir ? ctx->logdir : ".";
	const struct placeholder ph[] = {
		{ "{logdir}", logdir },
		{ "{variant}", ctx->variant->name },
		{ "{perturb}", perturb_self_exe() },
	};
	/* a shell's script so that no value is read as shell code */
	return expand_placeholders_argv(a->v, a->n, ph, ARRAY_SIZE(ph));
}

static int run_cmd(struct backend_ctx *ctx, const struct argv_list *a, const char *what)
{
	char **argv = expand_argv(ctx, a);
	char *w = xasprintf("variant '%s' %s", ctx->variant->name, what);
	int r = proc_run_command(argv, ctx->envp, ctx->cwd, ctx->exp->timeout_s, w);
	free(w);
	argv_free(argv);
	return r;
}

/* ---- journal of processes ---- */

static void journal_proc(struct backend_ctx *ctx, pid_t pid, const char *what,
			 const struct argv_list *a)
{
	char *cmd, *desc;
	if (pid <= 0 || journal_broken)
		return;
	cmd = proc_argv_string(a->v);
	desc = xasprintf("%s '%s' of variant '%s'", what, cmd, ctx->variant->name);
	if (journal_add_proc(jr(), pid, desc) < 0) {
		warning("without a journal, a %s left by a killed perturb is not found by "
			"'perturb restore'", what);
		journal_broken = 1;
	}
	free(cmd);
	free(desc);
}

/* ---- kernel: block ---- */

/* Put the journaled prior state back.  On failure the journal stays (for
 * `perturb restore`) and kernel_dirty stays set. */
static int restore_prior(const char *variant)
{
	char why[1024];

	if (!kernel_dirty || !jr()->has_kernel)
		return 0;
	if (ktrace_restore(&jr()->prior, NULL, 0, why, sizeof(why)) < 0)
		return error("variant '%s': cannot restore the kernel tracing state: %s; the "
			     "journal '%s' keeps it for 'perturb restore'", variant, why,
			     jr()->path);
	kernel_dirty = 0;
	return 0;
}

/* The end: unmount tracefs when perturb mounted it, remove the journal. */
static int finish_journal(void)
{
	char why[512];

	if (kernel_dirty || jr()->n_sysctls)
		return 0;
	drop_targets();
	if (jr()->mounted && jr()->tracefs &&
	    ktrace_umount(jr()->tracefs, why, sizeof(why)) < 0)
		warning("%s", why);
	return journal_remove(jr());
}

/*
 * Journal the prior state (once: the journal always holds the state before
 * perturb's first change), then make the kernel be k on top of it, from
 * whatever state is in place (the prior one, or the previous kernel
 * variant's, handed over by leave()), and read it back.
 */
static int kernel_enter(struct host_kernel *hk, const struct ktrace_spec *k,
			char *why, size_t len)
{
	const struct ktrace_state *target;
	int mounted = 0;
	const char *path;

	if (journal_lock_kernel(why, len) < 0)
		return -1;
	if (!(path = ktrace_mount(&mounted, why, len)))
		return -1;
	if (!jr()->has_kernel || mounted) {
		if (!jr()->has_kernel) {
			struct ktrace_state prior;
			if (ktrace_read_state(&prior, why, len) < 0)
				goto fail_unmount;
			jr()->prior = prior;
			free(jr()->tracefs);
			jr()->tracefs = xstrdup(path);
		}
		jr()->mounted |= mounted;
		jr()->has_kernel = 1;
		if (journal_write(jr()) < 0) {
			snprintf(why, len, "cannot write the journal '%s'", jr()->path);
			goto fail_unmount;
		}
	}
	if (!(target = target_of(k, why, len)))
		return -1;
	hk->active = 1;
	kernel_dirty = 1;
	return ktrace_set_state(target, NULL, 0, why, len);
fail_unmount:
	if (!kernel_dirty && !jr()->n_procs) {
		ktrace_state_release(&jr()->prior);
		jr()->has_kernel = 0;
		jr()->mounted = 0;
	}
	if (mounted) {
		char w2[256];
		ktrace_umount(path, w2, sizeof(w2));
	}
	return -1;
}

static int kernel_check(const struct variant *v, char *why, size_t len)
{
	const struct ktrace_spec *k = v->kernel;
	struct host_kernel hk = { 0 };
	char msg[1024];
	int ret = -1, mounted = 0;
	const char *path;

	if (geteuid() != 0) {
		snprintf(why, len, "variant '%s': kernel: needs root (it changes the kernel's "
			 "tracing state through tracefs)", v->name);
		return -1;
	}
	if (backend_dry_run) {
		/* nothing changed: no lock, no journal, no trial */
		if (ktrace_check_readonly(k, msg, sizeof(msg)) < 0) {
			snprintf(why, len, "variant '%s': %s", v->name, msg);
			return -1;
		}
		note("variant '%s': dry run: the kernel: block's names, options and file "
		     "permissions were checked; whether the kernel accepts its values was "
		     "not tried (nothing was changed)", v->name);
		return 0;
	}
	if (journal_lock_kernel(msg, sizeof(msg)) < 0) {
		snprintf(why, len, "variant '%s': %s", v->name, msg);
		return -1;
	}
	/* what can be found without changing anything */
	if (!(path = ktrace_mount(&mounted, msg, sizeof(msg)))) {
		snprintf(why, len, "variant '%s': %s", v->name, msg);
		return -1;
	}
	if (ktrace_check_names(k, path, "this kernel", msg, sizeof(msg)) < 0) {
		snprintf(why, len, "variant '%s': %s", v->name, msg);
		goto out;
	}
	if (mounted) {
		ktrace_umount(path, msg, sizeof(msg));
		mounted = 0;
	}
	/* a dry application: what the kernel refuses shows now */
	if (kernel_enter(&hk, k, msg, sizeof(msg)) < 0)
		snprintf(why, len, "variant '%s': %s", v->name, msg);
	else
		ret = 0;
	if (restore_prior(v->name) < 0) {
		snprintf(why, len, "variant '%s': the kernel tracing state could not be "
			 "restored after a trial", v->name);
		ret = -1;
	}
	finish_journal();
out:
	if (mounted)
		ktrace_umount(path, msg, sizeof(msg));
	return ret;
}

/* ---- bpf: block (bpf.h) ---- */

/*
 * Start the block's bpftrace, logging to log, and wait until it is ready
 * (every probe attached).  RLIMIT_MEMLOCK is raised for it (inherited) and
 * put back.
 */
static int bpf_start(const struct variant *v, const char *prog_path, const char *log,
		     char **envp, double timeout_s, struct daemon **out)
{
	const struct bpf_cfg *c = v->cfg;
	regex_t re;
	struct rlimit old;
	char **argv;
	int r;

	if (!(argv = bpf_argv(c, prog_path)))
		return error("variant '%s': cannot write the bpftrace program '%s': %s", v->name,
			     prog_path, strerror(errno));
	if (regcomp(&re, bpf_ready_regex(c), REG_EXTENDED | REG_NOSUB | REG_NEWLINE)) {
		argv_free(argv);
		return error("variant '%s': bad readiness pattern", v->name);
	}
	bpf_memlock_raise(&old);
	r = daemon_start(argv, envp, NULL, log, 0, &re, timeout_s, out);
	bpf_memlock_restore(&old);
	regfree(&re);
	argv_free(argv);
	return r;
}

/*
 * What bpftrace would refuse, found before the study: root, the attach
 * types this kernel allows, and a trial start (every probe attached, then
 * stopped) so that what only the kernel knows is refused now too.
 */
static int bpf_check(const struct variant *v, char *why, size_t len)
{
	char msg[1024], dir[] = "/tmp/perturb-bpf-XXXXXX", *prog = NULL, *log = NULL, **env;
	const char *path;
	struct daemon *d = NULL;
	int mounted = 0, ret = -1, r;

	if (geteuid() != 0)
		return why_error(why, len, "variant '%s': bpf: needs root (it loads BPF programs "
				 "and sets kernel.bpf_stats_enabled)", v->name);
	if (backend_dry_run) {
		/* nothing changed: no lock, no mount, no trial start */
		if ((path = ktrace_find_mount()) && bpf_check_attach(v->cfg, path, msg,
								     sizeof(msg)) < 0)
			return why_error(why, len, "variant '%s': %s", v->name, msg);
		note("variant '%s': dry run: the bpf: block's %s; whether bpftrace attaches "
		     "its probes was not tried (nothing was changed)", v->name,
		     path ? "attach types were checked against tracefs" :
			    "attach types were not checked (tracefs is not mounted, and mounting "
			    "it would change the machine)");
		return 0;
	}
	if (journal_lock_kernel(msg, sizeof(msg)) < 0)
		return why_error(why, len, "variant '%s': %s", v->name, msg);
	if (!(path = ktrace_mount(&mounted, msg, sizeof(msg))))
		return why_error(why, len, "variant '%s': bpf: %s", v->name, msg);
	if (bpf_check_attach(v->cfg, path, msg, sizeof(msg)) < 0) {
		why_error(why, len, "variant '%s': %s", v->name, msg);
		goto out;
	}
	if (!mkdtemp(dir)) {
		why_error(why, len, "variant '%s': bpf: cannot make a folder in /tmp: %s",
			  v->name, strerror(errno));
		goto out;
	}
	prog = xasprintf("%s/trial.bt", dir);
	log = xasprintf("%s/trial.log", dir);
	env = env_build(v);
	r = bpf_start(v, prog, log, env, 60, &d);
	argv_free(env);
	if (r < 0) {
		char *said = bpf_log_error(log);
		why_error(why, len, "variant '%s': bpf: bpftrace did not attach its probes: %s",
			  v->name, said ? said : "see its output above");
		free(said);
	} else {
		ret = daemon_stop(d);
		if (ret < 0)
			why_error(why, len, "variant '%s': bpf: bpftrace ended on its own during "
				  "its trial", v->name);
	}
	unlink(prog);
	unlink(log);
	rmdir(dir);
out:
	free(prog);
	free(log);
	if (mounted)
		ktrace_umount(path, msg, sizeof(msg));
	return ret;
}

/* Mount tracefs (journaled) for a tracer's daemon (what: "bpf"). */
static int tracefs_for(const struct variant *v, const char *what)
{
	char why[1024];
	const char *path;
	int mounted = 0;

	if (journal_lock_kernel(why, sizeof(why)) < 0 ||
	    !(path = ktrace_mount(&mounted, why, sizeof(why))))
		return error("variant '%s': %s: %s", v->name, what, why);
	if (mounted) {
		free(jr()->tracefs);
		jr()->tracefs = xstrdup(path);
		jr()->mounted = 1;
		if (journal_write(jr()) < 0) {
			ktrace_umount(path, why, sizeof(why));
			jr()->mounted = 0;
			return -1;
		}
	}
	return 0;
}

/* Mount tracefs (journaled) for bpftrace, switch the BPF statistics on
 * (journaled), start bpftrace. */
static int bpf_enter(struct backend_ctx *ctx, struct host_state *st)
{
	const struct variant *v = ctx->variant;
	char *prog, *log;
	int r;

	if (tracefs_for(v, "bpf") < 0)
		return -1;
	if (journal_set_sysctl(jr(), BPF_STATS_SYSCTL, "1") < 0)
		return -1;
	prog = xasprintf("%s/%s-bpf.bt", ctx->logdir, v->name);
	log = xasprintf("%s/%s-bpf.log", ctx->logdir, v->name);
	r = bpf_start(v, prog, log, ctx->envp, ctx->exp->timeout_s, &st->bpf);
	if (r == 0) {
		struct argv_list a = { .v = (char *[]){ "bpftrace", prog, NULL }, .n = 2 };
		journal_proc(ctx, daemon_pid(st->bpf), "bpftrace", &a);
	}
	free(prog);
	free(log);
	return r;
}

/* ---- perf: block (perf_tracer.h) ---- */

static int is_perf(const struct variant *v)
{
	return v->cfg && !strcmp(v->cfg_key, PERF_TRACER_KEY);
}

/* Mount tracefs (journaled: perf would mount it and leave it), start perf. */
static int perf_enter(struct backend_ctx *ctx, struct host_state *st)
{
	struct argv_list a = { 0 };

	if (tracefs_for(ctx->variant, "perf") < 0 ||
	    perf_tracer_start(ctx->variant->cfg, ctx->logdir, ctx->variant->name, ctx->envp,
			      ctx->exp->timeout_s, &st->perf) < 0)
		return -1;
	for (a.v = perf_tracer_argv(st->perf); a.v[a.n]; a.n++)
		;
	journal_proc(ctx, perf_tracer_pid(st->perf), "perf", &a);
	return 0;
}

/* ---- the backend ---- */

static int host_check(const struct variant *v, struct pos *at, char *why, size_t len)
{
	const char *progs[3] = {
		v->wrap.n ? v->wrap.v[0] : NULL,
		v->daemon.n ? v->daemon.v[0] : NULL,
		v->background.n ? v->background.v[0] : NULL,
	};
	const char *what[3] = { "wrap", "daemon", "background" };

	/* a kernel: variant's refusals are shown at its kernel: block */
	if (v->kernel)
		*at = v->kernel_pos;
	for (int i = 0; i < 3; i++) {
		if (progs[i] && !strchr(progs[i], '{') && !program_exists(progs[i])) {
			snprintf(why, len, "variant '%s': %s program '%s' not found", v->name,
				 what[i], progs[i]);
			return -1;
		}
	}
	/* a system-wide perf daemon (the profiling variants) fails at its start
	 * without the right to watch every CPU: say so before anything runs */
	if (v->daemon.n && !strcmp(v->daemon.v[0], "perf") && geteuid() != 0) {
		char *par = read_line_file("/proc/sys/kernel/perf_event_paranoid");
		int system_wide = 0;
		for (size_t i = 1; i < v->daemon.n; i++)
			system_wide |= !strcmp(v->daemon.v[i], "-a") ||
				       !strcmp(v->daemon.v[i], "--all-cpus");
		if (system_wide && (!par || atoi(par) > 0)) {
			snprintf(why, len, "variant '%s': daemon 'perf ... -a' profiles every CPU: "
				 "it needs root (or kernel.perf_event_paranoid <= 0, it is %s)",
				 v->name, par ? par : "unknown");
			free(par);
			return -1;
		}
		free(par);
	}
	if (v->kernel && kernel_check(v, why, len) < 0)
		return -1;
	if (v->lttng && lttng_host_check(v, backend_dry_run, why, len) < 0)
		return -1;
	if (v->cfg) {
		*at = v->cfg_pos;
		return is_perf(v) ? perf_tracer_check_variant(v, why, len) : bpf_check(v, why, len);
	}
	return 0;
}

static char *log_path(struct backend_ctx *ctx, const char *what)
{
	return xasprintf("%s/%s-%s.log", ctx->logdir, ctx->variant->name, what);
}

static int host_leave(struct backend_ctx *ctx)
{
	const struct variant *v = ctx->variant;
	struct host_state *st = ctx->priv;
	int ret = 0, final, handover;

	if (st->background) {
		long starts = 0;
		if (background_stop(st->background, &starts) < 0)
			ret = -1;
		st->background = NULL;
		st->bg_starts += starts;
		st->bg_entries++;
	}
	if (st->daemon) {
		if (daemon_stop(st->daemon) < 0)
			ret = -1;
		st->daemon = NULL;
	}
	if (st->perf) {
		if (perf_tracer_stop(st->perf) < 0)
			ret = -1;
		st->perf = NULL;
	}
	if (st->lttng && lttng_host_stop(st->lttng) < 0)
		ret = -1;
	st->lttng = NULL;
	if (st->bpf) {
		char *log = xasprintf("%s/%s-bpf.log", ctx->logdir, v->name);
		if (daemon_stop(st->bpf) < 0)
			ret = -1;
		st->bpf = NULL;
		/* its log is complete now; it is appended to at each entry */
		st->bpf_lost = bpf_log_lost(log);
		free(log);
	}
	if (jr()->n_sysctls && journal_restore_sysctls(jr()) < 0)
		ret = -1;
	journal_clear_procs(jr());	/* stopped: the file catches up at its next write */
	/*
	 * Teardown runs when the variant was entered, or when part of its setup
	 * ran: it undoes setup, so it runs in full either way.
	 */
	if (st->entered || st->setup_done) {
		for (size_t i = 0; i < v->n_teardown; i++)
			if (run_cmd(ctx, &v->teardown[i], "teardown") < 0)
				ret = -1;
	}
	/*
	 * Kernel state goes back to the prior one, unless the next variant is
	 * a kernel: one too: its enter() changes only what differs.
	 */
	final = !ctx->next || ret < 0;
	handover = !final && st->kernel.active && ctx->next->kernel &&
		   ctx->next->be == &backend_host;
	if (!handover && restore_prior(v->name) < 0)
		ret = -1;
	/* tracefs mounted for bpftrace only stays for a next variant that uses it */
	if (!final && v->cfg && !st->kernel.active && !jr()->has_kernel &&
	    !(ctx->next->be == &backend_host && (ctx->next->cfg || ctx->next->kernel)))
		final = 1;
	if (final && finish_journal() < 0)
		ret = -1;
	{	/* left: nothing of this entry remains; the study's tallies do */
		long bg_starts = st->bg_starts;
		int bg_entries = st->bg_entries;
		unsigned long long bpf_lost = st->bpf_lost;
		memset(st, 0, sizeof(*st));
		st->bg_starts = bg_starts;
		st->bg_entries = bg_entries;
		st->bpf_lost = bpf_lost;
	}
	return ret;
}

/* The lttng: block's session daemon (lttng.h), journaled. */
static int lttng_enter(struct backend_ctx *ctx, struct host_state *st)
{
	char *log = log_path(ctx, "lttng");
	int r = lttng_host_start(ctx->variant, ctx->envp, log, ctx->exp->timeout_s, &st->lttng);
	free(log);
	if (r == 0) {
		struct argv_list a = { .v = (char *[]){ "lttng-sessiond", NULL }, .n = 1 };
		journal_proc(ctx, lttng_host_pid(st->lttng), "lttng-sessiond", &a);
	}
	return r;
}

static int host_enter(struct backend_ctx *ctx)
{
	const struct variant *v = ctx->variant;
	struct host_state *st = ctx->priv;

	if (v->kernel) {
		char why[1024];
		if (kernel_enter(&st->kernel, v->kernel, why, sizeof(why)) < 0) {
			error("variant '%s': %s", v->name, why);
			goto fail;
		}
	}
	if (v->cfg && (is_perf(v) ? perf_enter(ctx, st) : bpf_enter(ctx, st)) < 0)
		goto fail;
	if (v->lttng && lttng_enter(ctx, st) < 0)
		goto fail;
	for (size_t i = 0; i < v->n_setup; i++) {
		if (run_cmd(ctx, &v->setup[i], "setup") < 0)
			goto fail;
		st->setup_done = i + 1;
	}
	if (v->daemon.n) {
		char *path = log_path(ctx, "daemon");
		char **argv = expand_argv(ctx, &v->daemon);
		int r = daemon_start(argv, ctx->envp, ctx->cwd, path, v->daemon_ready_s,
				     v->daemon_ready_regex ? &v->daemon_ready_re : NULL,
				     ctx->exp->timeout_s, &st->daemon);
		free(path);
		argv_free(argv);
		if (r < 0)
			goto fail;
		journal_proc(ctx, daemon_pid(st->daemon), "daemon", &v->daemon);
	}
	if (v->background.n) {
		char *path = log_path(ctx, "background");
		char **argv = expand_argv(ctx, &v->background);
		int r = background_start(argv, ctx->envp, ctx->cwd, path, &st->background);
		free(path);
		argv_free(argv);
		if (r < 0)
			goto fail;
		journal_proc(ctx, background_pid(st->background), "background load", &v->background);
	}
	st->entered = 1;
	return 0;
fail:
	host_leave(ctx);
	return -1;
}

static void add_value(struct run_result *res, const char *name, double value, const char *unit)
{
	res->values = xrealloc(res->values, (res->n_values + 1) * sizeof(*res->values));
	res->values[res->n_values++] = (struct metric_value){
		.name = xstrdup(name), .value = value, .unit = xstrdup(unit),
	};
}

/*
 * With a kernel: block, the tracer's own accounting (per_cpu/cpuN/stats,
 * read before and after the run, outside the timed part) becomes three
 * metrics: trace_events (events written during the run), trace_lost
 * (overwritten + dropped), trace_bytes (growth of the buffer's contents).
 * With a bpf: block, the kernel's statistics of bpftrace's programs, read
 * the same way: bpf_runs (times they ran), bpf_run_time (ns spent in them),
 * bpf_programs.  With a perf: block, what perf wrote during the run, found
 * at its bounds (perf_tracer.h): perf_events, perf_lost, perf_bytes.
 */
static int host_run(struct backend_ctx *ctx, const struct run_request *req,
		    struct run_result *res)
{
	struct ktrace_stats before, after;
	struct host_state *st = ctx->priv;
	struct bpf_stats bb, ba;
	struct perf_counts pc;
	struct run_request lreq;
	char why[512];
	int have = 0, have_bpf = 0, have_perf = 0, r;

	if (ctx->variant->kernel) {
		if (ktrace_read_stats(&before, why, sizeof(why)) == 0)
			have = 1;
		else
			warning("variant '%s': %s", ctx->variant->name, why);
	}
	if (st->bpf && bpf_read_stats(daemon_pid(st->bpf), &bb) == 0)
		have_bpf = 1;
	if (st->perf && perf_tracer_mark(st->perf) == 0)
		have_perf = 1;
	if (st->lttng) {	/* the workload finds the session daemon */
		lreq = *req;
		lreq.envp = lttng_host_env(st->lttng);
		req = &lreq;
	}
	r = runner_run(req, res);
	if (r == 0 && st->lttng)
		lttng_host_account(st->lttng, res);
	if (r == 0)
		runner_add_cgroup_values(res);
	if (r == 0 && have_bpf && bpf_read_stats(daemon_pid(st->bpf), &ba) == 0) {
		add_value(res, "bpf_runs", (double)(ba.run_cnt - bb.run_cnt), "events");
		add_value(res, "bpf_run_time", (double)(ba.run_time_ns - bb.run_time_ns), "ns");
		add_value(res, "bpf_programs", ba.programs, "programs");
	}
	if (r == 0 && have_perf && perf_tracer_count(st->perf, &pc) == 0) {
		add_value(res, "perf_events", pc.events, "events");
		add_value(res, "perf_lost", pc.lost, "events");
		add_value(res, "perf_bytes", pc.bytes, "B");
	}
	if (r == 0 && have && ktrace_read_stats(&after, why, sizeof(why)) == 0) {
		double events, lost, bytes;
		ktrace_stats_delta(&before, &after, &events, &lost, &bytes);
		add_value(res, "trace_events", events, "events");
		add_value(res, "trace_lost", lost, "events");
		add_value(res, "trace_bytes", bytes, "B");
	}
	return r;
}

/* Once per study: how often the background load was started in all, and
 * what bpftrace lost (it says so in its output only, not run by run). */
static void host_done(struct backend_ctx *ctx)
{
	const struct host_state *st = ctx->priv;

	if (st && st->bpf_lost)
		warning("variant '%s': bpftrace lost %llu events over the study (its perf buffer "
			"was full; see %s/%s-bpf.log)", ctx->variant->name, st->bpf_lost,
			ctx->logdir, ctx->variant->name);
	if (st && st->bg_entries)
		note("variant '%s': background load was started %ld time%s over %d entr%s of the "
		     "variant", ctx->variant->name, st->bg_starts, st->bg_starts == 1 ? "" : "s",
		     st->bg_entries, st->bg_entries == 1 ? "y" : "ies");
}

const struct backend backend_host = {
	.name = "host",
	.key = "bpf",
	.cfg_size = sizeof(struct bpf_cfg),
	.parse = bpf_parse,
	.release = bpf_release,
	.priv_size = sizeof(struct host_state),
	.check = host_check,
	.enter = host_enter,
	.leave = host_leave,
	.done = host_done,
	.run = host_run,
	.blocks = perf_tracer_blocks,
};
