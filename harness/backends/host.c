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
 * Kernel state.  A kernel: block traces in the study's own tracing
 * instance (instances/perturb-PID-XXXXXXXX: its own buffer, events and
 * tracing_on, isolated from every other session), its name journaled
 * before it is made; a block that asks for what only the top level has
 * (ktrace_instance_lacks(): a tracer instances cannot have, a top-level
 * trace option), or a kernel without instances, uses the top level, which
 * perturb takes only when no session of someone else's uses it
 * (ktrace_top_in_use(): it is refused, with what was seen, never
 * overwritten and "restored").  check() finds out before the study starts
 * whether this machine can put itself in the variant: root, tracefs
 * mountable, the tracer listed, every event glob matching, and a trial
 * application (journal, apply, verify, restore) so that refusals such as
 * EPERM for `function` on a locked-down kernel, or a top level in use, are
 * reported by variant and never halfway through; the trial decides where
 * the block traces.  A dry run (backend_dry_run) changes nothing: it checks
 * what can be read (ktrace_check_readonly) and says that the trial was not
 * made.  enter() applies the block in its instance (made then), or
 * journals the top level's complete prior state before its first change
 * and applies it there, and reads it back: a difference is an error (the
 * study stops, exit 3, after leave()).  leave() stops the processes,
 * removes the instance or restores the prior state and checks it,
 * unmounts tracefs if perturb mounted it and removes the journal.  Between
 * variants the machine is exactly as it was before perturb started; see
 * journal.h for what happens when perturb dies.
 *
 * Processes.  The pids (with start times) of daemons and background-load
 * supervisors are journaled too, so that `perturb restore` can stop them
 * after a SIGKILL of perturb.  Variant commands (setup, teardown, daemon,
 * background) expand {logdir} (the run's log folder, absolute), {variant},
 * {perturb} and, in a kernel: variant, {tracefs}: the folder of the
 * tracing state it set, its instance's or the top level's (a daemon that
 * drains the trace reads {tracefs}/trace_pipe).  The workload is not told:
 * its environment and arguments stay those of every other variant.
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
 * study (one variant is active at a time).  kernel_dirty: the top level's
 * tracing state may differ from its prior state (a kernel: variant is in
 * place there, or its restore failed).  inst: the study's instance while
 * it exists (its name, jr()->instance, is the study's from the first one
 * made to the end); inst_left: its removal failed, it may still be there.
 */
static struct journal *jr(void)
{
	return journal_self();
}
static int kernel_dirty;
static struct tracefs_instance *inst;
static int inst_left;
static int journal_broken;	/* journal of processes could not be written: said once */

struct host_kernel {
	int active;		/* this variant's kernel state was (partly) applied */
	int top;		/* ... at the top level, not in the instance */
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
	long bg_failures;	/* those that failed */
	unsigned long long bpf_lost;	/* events bpftrace lost, over the whole study */
	int bg_entries;		/* times the variant was entered with its load */
	struct host_kernel kernel;
};

/*
 * Where each kernel: block traces, decided at its first enter (its check's
 * trial) and kept for the study, and its target state there: on top of a
 * new instance's state (inst_base) or of the journal's prior state of the
 * top level, computed at its first enter (expanding event globs takes
 * milliseconds) and dropped with the state it was computed on.
 */
static struct place {
	const struct ktrace_spec *k;
	int top;		/* -1 not decided yet, 1 the top level, 0 the instance */
	char why_top[256];	/* why the top level */
	int have_target;
	struct ktrace_state t;
} *places;
static size_t n_places;
static struct ktrace_state inst_base;	/* a new instance's state, read at the first */
static int have_inst_base;

/* Forget the targets computed (top_only: those on the top level's prior state). */
static void drop_targets(int top_only)
{
	for (size_t i = 0; i < n_places; i++)
		if (places[i].have_target && (!top_only || places[i].top == 1)) {
			ktrace_state_release(&places[i].t);
			places[i].have_target = 0;
		}
}

/* ---- {logdir}, {variant}, {perturb}, {tracefs} ---- */

static char **expand_argv(struct backend_ctx *ctx, const struct argv_list *a)
{
	const struct host_state *st = ctx->priv;
	char abs[PATH_MAX], **argv;
	char *tracefs = !ctx->variant->kernel ? NULL :
			st->kernel.top || !inst ? xstrdup(ktrace_find_mount()) :
			ktrace_instance_dir(inst);
	const char *logdir = ctx->logdir && realpath(ctx->logdir, abs) ? abs :
			     ctx->logdir ? ctx->logdir : ".";
	const struct placeholder ph[] = {
		{ "{logdir}", logdir },
		{ "{variant}", ctx->variant->name },
		{ "{perturb}", perturb_self_exe() },
		{ "{tracefs}", tracefs },
	};
	/* a shell's script so that no value is read as shell code; none
	 * with placeholders: false */
	argv = expand_placeholders_argv(a->v, a->n, ph, ctx->exp->verbatim ? 0 :
					ARRAY_SIZE(ph) - !tracefs);
	free(tracefs);
	return argv;
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

/*
 * Put the journaled prior state of the top level back, and take it out of
 * the journal: given back, the top level is no longer perturb's to restore
 * (a session that starts there meanwhile is not overwritten by a `perturb
 * restore`).  jr()->prior stays in memory, the base of the cached targets.
 * On failure the journal keeps it (for `perturb restore`) and kernel_dirty
 * stays set.
 */
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
	jr()->has_kernel = 0;
	return journal_write(jr());
}

/*
 * Make the study's instance: its name is journaled before the first is
 * made (a SIGKILL then leaves a name `perturb restore` removes), and kept
 * for every one made after.
 */
static int instance_make(char *why, size_t len)
{
	if (inst)
		return 0;
	if (!jr()->instance) {
		jr()->instance = ktrace_instance_name();
		if (journal_write(jr()) < 0) {
			free(jr()->instance);
			jr()->instance = NULL;
			return why_error(why, len, "cannot write the journal '%s'", jr()->path);
		}
	}
	if (!(inst = ktrace_instance_create(jr()->instance, why, len)))
		return -1;
	if (!have_inst_base && ktrace_read_state(inst, &inst_base, why, len) == 0)
		have_inst_base = 1;
	return have_inst_base ? 0 : -1;
}

/* Remove the study's instance.  On failure its name stays journaled. */
static int instance_remove(const char *variant)
{
	char why[1024];

	if (!inst)
		return 0;
	if (ktrace_instance_destroy(inst, why, sizeof(why)) < 0) {
		inst = NULL;
		inst_left = 1;
		return error("variant '%s': %s; the journal '%s' keeps its name for 'perturb "
			     "restore'", variant, why, jr()->path);
	}
	inst = NULL;
	return 0;
}

/* The end: unmount tracefs when perturb mounted it, remove the journal. */
static int finish_journal(void)
{
	char why[512];

	if (kernel_dirty || inst || inst_left || jr()->n_sysctls)
		return 0;
	drop_targets(0);
	if (jr()->mounted && jr()->tracefs &&
	    ktrace_umount(jr()->tracefs, why, sizeof(why)) < 0)
		warning("%s", why);
	return journal_remove(jr());
}

/* Where k traces (decided once: a new instance is asked what it lacks). */
static struct place *place_of(const struct ktrace_spec *k, char *why, size_t len)
{
	struct place *p = NULL;

	for (size_t i = 0; i < n_places && !p; i++)
		if (places[i].k == k)
			p = &places[i];
	if (!p) {
		places = xrealloc(places, (n_places + 1) * sizeof(*places));
		p = &places[n_places++];
		*p = (struct place){ .k = k, .top = -1 };
	}
	if (p->top >= 0)
		return p;
	if (!ktrace_instances_supported()) {
		snprintf(p->why_top, sizeof(p->why_top), "this kernel has no tracing instances");
		p->top = 1;
	} else if (instance_make(why, len) < 0) {
		return NULL;
	} else {
		p->top = ktrace_instance_lacks(inst, k, p->why_top, sizeof(p->why_top));
	}
	return p;
}

/*
 * Take the top level for p: refused while a session of someone else's uses
 * it (nothing is changed then).  Its state is read each time perturb takes
 * it (it may have changed while perturb did not hold it) and journaled
 * before the first change; the targets computed on the state read the
 * time before stay when it has not changed.
 */
static int top_take(const struct place *p, char *why, size_t len)
{
	struct ktrace_state prior;
	char what[1024];
	int r = ktrace_top_in_use(what, sizeof(what));

	if (r < 0)
		return why_error(why, len, "%s", what);
	if (r)
		return why_error(why, len, "it needs the top level of tracefs (%s), and a "
				 "session of someone else's uses it: %s; perturb does not take it "
				 "over (end that session, e.g. trace-cmd reset, then run again)",
				 p->why_top, what);
	if (ktrace_read_state(NULL, &prior, why, len) < 0)
		return -1;
	if (jr()->prior.tracer && ktrace_state_equal(&jr()->prior, &prior, NULL, 0)) {
		ktrace_state_release(&prior);
	} else {
		ktrace_state_release(&jr()->prior);
		drop_targets(1);
		jr()->prior = prior;
	}
	jr()->has_kernel = 1;
	if (journal_write(jr()) < 0) {
		jr()->has_kernel = 0;
		return why_error(why, len, "cannot write the journal '%s'", jr()->path);
	}
	return 0;
}

/*
 * Make the kernel be k in its place, from whatever state is in place there
 * (a new instance's, the prior one, or the previous kernel variant's,
 * handed over by leave()), and read it back.  A variant in the other place
 * handed over is undone first.
 */
static int kernel_enter(struct host_kernel *hk, const struct ktrace_spec *k, const char *variant,
			char *why, size_t len)
{
	struct place *p;
	struct tracefs_instance *in = NULL;

	if (!journal_tracefs(why, len) || !(p = place_of(k, why, len)))
		return -1;
	if (p->top) {
		if (instance_remove(variant) < 0)
			return why_error(why, len, "the previous variant's instance remains");
		if (!kernel_dirty && top_take(p, why, len) < 0)
			return -1;
		kernel_dirty = 1;
	} else {
		if (restore_prior(variant) < 0)
			return why_error(why, len, "the previous variant's state remains");
		if (instance_make(why, len) < 0)
			return -1;
		in = inst;
	}
	hk->active = 1;
	hk->top = p->top;
	if (!p->have_target) {
		if (ktrace_target(p->top ? &jr()->prior : &inst_base, k, &p->t, why, len) < 0)
			return -1;
		p->have_target = 1;
	}
	return ktrace_set_state(in, &p->t, NULL, 0, why, len);
}

/* Undo what kernel_enter() did: remove the instance, restore the top level. */
static int kernel_leave(const char *variant)
{
	int r = instance_remove(variant);

	return restore_prior(variant) < 0 ? -1 : r;
}

static int kernel_check(const struct variant *v, char *why, size_t len)
{
	const struct ktrace_spec *k = v->kernel;
	struct host_kernel hk = { 0 };
	char msg[1024];
	int ret = -1;
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
		     "permissions were checked; whether it traces in an instance of its own and "
		     "whether the kernel accepts its values was not tried (nothing was changed)",
		     v->name);
		return 0;
	}
	/* tracefs, a mount journaled first: finish_journal() unmounts it */
	if (!(path = journal_tracefs(msg, sizeof(msg)))) {
		snprintf(why, len, "variant '%s': %s", v->name, msg);
		return -1;
	}
	if (ktrace_check_names(k, path, "this kernel", msg, sizeof(msg)) < 0) {
		snprintf(why, len, "variant '%s': %s", v->name, msg);
		goto out;
	}
	/* a dry application: where it traces, and what the kernel refuses, show now */
	if (kernel_enter(&hk, k, v->name, msg, sizeof(msg)) < 0) {
		snprintf(why, len, "variant '%s': %s", v->name, msg);
	} else {
		ret = 0;
		if (hk.top)
			note("variant '%s': traces at the top level of tracefs: %s", v->name,
			     place_of(k, msg, sizeof(msg))->why_top);
		else if (ktrace_top_in_use(msg, sizeof(msg)) > 0)
			warning("variant '%s': a session of someone else's uses the top level of "
				"tracefs (%s): this variant traces apart from it, in an instance of "
				"its own, but that session's cost is in every run, the baseline's "
				"too", v->name, msg);
	}
	if (kernel_leave(v->name) < 0) {
		snprintf(why, len, "variant '%s': the kernel tracing state could not be "
			 "restored after a trial", v->name);
		ret = -1;
	}
out:
	finish_journal();
	return ret;
}

/* ---- bpf: block (bpf.h) ---- */

/*
 * Start the block's bpftrace, logging to log, and wait until it is ready
 * (every probe attached).  RLIMIT_MEMLOCK is raised for it (inherited) and
 * put back.  Its log is bounded as a daemon's (PROC_LOG_MAX), its "Lost N
 * events" lines tallied where it drops them (bpf_log_lost()).  why: its
 * failure to start is said there, not printed (daemon_start_reason); NULL:
 * printed with the end of its output.
 */
static int bpf_start(const struct variant *v, const char *prog_path, const char *log,
		     char **envp, double timeout_s, char *why, size_t len, struct daemon **out)
{
	const struct bpf_cfg *c = v->cfg;
	regex_t re, lost;
	struct rlimit old;
	char **argv;
	int r;

	if (why && len)	/* what failed before bpftrace ran is printed: said so */
		snprintf(why, len, "could not be started (said above)");
	if (!(argv = bpf_argv(c, prog_path)))
		return error("variant '%s': cannot write the bpftrace program '%s': %s", v->name,
			     prog_path, strerror(errno));
	if (regcomp(&re, bpf_ready_regex(c), REG_EXTENDED | REG_NOSUB | REG_NEWLINE)) {
		argv_free(argv);
		return error("variant '%s': bad readiness pattern", v->name);
	}
	if (regcomp(&lost, BPF_LOST_REGEX, REG_EXTENDED | REG_NEWLINE)) {
		argv_free(argv);
		regfree(&re);
		return error("variant '%s': bad pattern of lost events", v->name);
	}
	bpf_memlock_raise(&old);
	r = daemon_start_reason(argv, envp, NULL, log, PROC_LOG_MAX, 0, &re, &lost, timeout_s,
				why, len, out);
	bpf_memlock_restore(&old);
	regfree(&re);
	regfree(&lost);
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
	int ret = -1, r;

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
	/* tracefs, a mount journaled first: host_check()'s finish_journal()
	 * unmounts it */
	if (!(path = journal_tracefs(msg, sizeof(msg))))
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
	/* its failure is this check's reason, said once by the caller */
	r = bpf_start(v, prog, log, env, 60, msg, sizeof(msg), &d);
	argv_free(env);
	if (r < 0) {
		char *said = bpf_log_error(log);
		why_error(why, len, "variant '%s': bpf: bpftrace did not attach its probes "
			  "(it %s)%s%s", v->name, msg, said ? ": " : "", said ? said : "");
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
	return ret;
}

/* logdir/VARIANT-WHAT.EXT, the variant's name as one component. */
static char *log_path(struct backend_ctx *ctx, const char *what, const char *ext)
{
	char *c = path_component(ctx->variant->name);
	char *p = xasprintf("%s/%s-%s.%s", ctx->logdir, c, what, ext);

	free(c);
	return p;
}

/* Mount tracefs (journaled) for bpftrace, switch the BPF statistics on
 * (journaled), start bpftrace. */
static int bpf_enter(struct backend_ctx *ctx, struct host_state *st)
{
	const struct variant *v = ctx->variant;
	char *prog, *log, why[1024];
	int r;

	if (!journal_tracefs(why, sizeof(why)))
		return error("variant '%s': bpf: %s", v->name, why);
	if (journal_set_sysctl(jr(), BPF_STATS_SYSCTL, "1") < 0)
		return -1;
	prog = log_path(ctx, "bpf", "bt");
	log = log_path(ctx, "bpf", "log");
	r = bpf_start(v, prog, log, ctx->envp, ctx->exp->timeout_s, NULL, 0, &st->bpf);
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
	char why[1024], *comp;
	int r;

	if (!journal_tracefs(why, sizeof(why)))
		return error("variant '%s': perf: %s", ctx->variant->name, why);
	comp = path_component(ctx->variant->name);
	r = perf_tracer_start(ctx->variant->cfg, ctx->logdir, comp, ctx->envp,
			      ctx->exp->timeout_s, NULL, 0, &st->perf);
	free(comp);
	if (r < 0)
		return -1;
	for (a.v = perf_tracer_argv(st->perf); a.v[a.n]; a.n++)
		;
	journal_proc(ctx, perf_tracer_pid(st->perf), "perf", &a);
	return 0;
}

/* ---- the backend ---- */

/* The first word of a's that names placeholder ph, or NULL. */
static const char *word_with(const struct argv_list *a, const char *ph)
{
	for (size_t i = 0; i < a->n; i++)
		if (strstr(a->v[i], ph))
			return a->v[i];
	return NULL;
}

/* A variant command (setup, teardown, daemon, background) naming ph. */
static const char *command_with(const struct variant *v, const char *ph)
{
	const char *w = word_with(&v->daemon, ph);

	if (!w)
		w = word_with(&v->background, ph);
	for (size_t i = 0; i < v->n_setup && !w; i++)
		w = word_with(&v->setup[i], ph);
	for (size_t i = 0; i < v->n_teardown && !w; i++)
		w = word_with(&v->teardown[i], ph);
	return w;
}

static int host_check(const struct variant *v, struct pos *at, char *why, size_t len)
{
	const char *progs[3] = {
		v->wrap.n ? v->wrap.v[0] : NULL,
		v->daemon.n ? v->daemon.v[0] : NULL,
		v->background.n ? v->background.v[0] : NULL,
	};
	const char *what[3] = { "wrap", "daemon", "background" };
	const char *w;

	/* a kernel: variant's refusals are shown at its kernel: block */
	if (v->kernel)
		*at = v->kernel_pos;
	else if ((w = command_with(v, "{tracefs}")))
		return why_error(why, len, "variant '%s': '%s': {tracefs} is the tracing folder of "
				 "a kernel: block, and this variant has none", v->name, w);
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
		int r;

		*at = v->cfg_pos;
		r = is_perf(v) ? perf_tracer_check_variant(v, why, len) : bpf_check(v, why, len);
		/* the trial's journaled tracefs (journal_tracefs()) unmounted */
		if (!backend_dry_run)
			finish_journal();
		return r;
	}
	return 0;
}


static int host_leave(struct backend_ctx *ctx)
{
	const struct variant *v = ctx->variant;
	struct host_state *st = ctx->priv;
	int ret = 0, final, handover;

	if (st->background) {
		long starts = 0;
		st->bg_failures += background_failures(st->background);
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
		char *log = log_path(ctx, "bpf", "log");
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
	 * The instance goes and the top level goes back to its prior state,
	 * unless the next variant is a kernel: one too: its enter() changes
	 * only what differs.
	 */
	final = !ctx->next || ret < 0;
	handover = !final && st->kernel.active && ctx->next->kernel &&
		   ctx->next->be == &backend_host;
	if (!handover && kernel_leave(v->name) < 0)
		ret = -1;
	/* tracefs mounted for bpftrace only stays for a next variant that uses it */
	if (!final && v->cfg && !st->kernel.active && !jr()->has_kernel &&
	    !(ctx->next->be == &backend_host && (ctx->next->cfg || ctx->next->kernel)))
		final = 1;
	if (final && finish_journal() < 0)
		ret = -1;
	{	/* left: nothing of this entry remains; the study's tallies do */
		long bg_starts = st->bg_starts, bg_failures = st->bg_failures;
		int bg_entries = st->bg_entries;
		unsigned long long bpf_lost = st->bpf_lost;
		memset(st, 0, sizeof(*st));
		st->bg_starts = bg_starts;
		st->bg_failures = bg_failures;
		st->bg_entries = bg_entries;
		st->bpf_lost = bpf_lost;
	}
	return ret;
}

/* The lttng: block's session daemon (lttng.h), journaled. */
static int lttng_enter(struct backend_ctx *ctx, struct host_state *st)
{
	char *log = log_path(ctx, "lttng", "log");
	int r = lttng_host_start(ctx->variant, ctx->envp, log, ctx->exp->timeout_s, NULL, 0,
				 &st->lttng);
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
		if (kernel_enter(&st->kernel, v->kernel, v->name, why, sizeof(why)) < 0) {
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
		char *path = log_path(ctx, "daemon", "log");
		char **argv = expand_argv(ctx, &v->daemon);
		int r = daemon_start(argv, ctx->envp, ctx->cwd, path, PROC_LOG_MAX,
				     v->daemon_ready_s,
				     v->daemon_ready_regex ? &v->daemon_ready_re : NULL, NULL,
				     ctx->exp->timeout_s, &st->daemon);
		free(path);
		argv_free(argv);
		if (r < 0)
			goto fail;
		journal_proc(ctx, daemon_pid(st->daemon), "daemon", &v->daemon);
	}
	if (v->background.n) {
		char *path = log_path(ctx, "background", "log");
		char **argv = expand_argv(ctx, &v->background);
		int r = background_start(argv, ctx->envp, ctx->cwd, path, PROC_LOG_MAX,
					 st->bg_failures, &st->background);
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
 * With a kernel: block, the tracer's own accounting (per_cpu/cpuN/stats of
 * its instance, or of the top level, read before and after the run,
 * outside the timed part) becomes three
 * metrics: trace_events (events written during the run), trace_lost
 * (overwritten + dropped), trace_bytes (growth of the buffer's contents).
 * With a bpf: block, the kernel's statistics of bpftrace's programs, read
 * the same way: bpf_runs (times they ran), bpf_run_time (ns spent in them),
 * bpf_programs.  With a perf: block, what perf wrote during the run, found
 * at its bounds (perf_tracer.h): perf_events, perf_lost, perf_bytes.
 */
/*
 * A run of a variant whose daemon or background load did not hold for it
 * (the daemon not running at its start or end, the load not running at
 * its start or failing during it) measured another system than the
 * variant: it is failed with the reason, whatever the workload did, so
 * that its time is never reported as the variant's cost.
 */
static void variant_held(struct backend_ctx *ctx, int daemon_up,
			 const struct background_sample *bg, struct run_result *res)
{
	const struct host_state *st = ctx->priv;
	char why[sizeof(res->reason)];

	if (st->daemon && (!daemon_up || !daemon_alive(st->daemon)))
		snprintf(why, sizeof(why), "the variant's daemon was not running throughout "
			 "the run (its log: %s)", daemon_log(st->daemon));
	else if (st->background && !background_held(st->background, bg, why, sizeof(why)))
		;
	else
		return;
	if (res->status == RUN_OK || res->status == RUN_FAILED) {
		res->status = RUN_FAILED;
		snprintf(res->reason, sizeof(res->reason), "%s", why);
	}
}

static int host_run(struct backend_ctx *ctx, const struct run_request *req,
		    struct run_result *res)
{
	struct ktrace_stats before, after;
	struct host_state *st = ctx->priv;
	struct tracefs_instance *kin = st->kernel.top ? NULL : inst;
	struct bpf_stats bb, ba;
	struct perf_counts pc;
	struct run_request lreq;
	struct background_sample bg;
	char why[512];
	int have = 0, have_bpf = 0, have_perf = 0, daemon_up, r;

	if (ctx->variant->kernel) {
		if (ktrace_read_stats(kin, &before, why, sizeof(why)) == 0)
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
	background_sample(st->background, &bg);
	daemon_up = daemon_alive(st->daemon);
	r = runner_run(req, res);
	if (r == 0)
		variant_held(ctx, daemon_up, &bg, res);
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
	if (r == 0 && have && ktrace_read_stats(kin, &after, why, sizeof(why)) == 0) {
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
