/*
 * qemu.c - the qemu backend: `boot:` variants boot a kernel image in QEMU
 * and their runs happen inside it.  Its other files (qemu.h): the images
 * it boots (qemu_images.c) and the serial console (qemu_console.c); the
 * wire to the guest agent (harness/backends/guest/agent.c) is proto.h's,
 * every message encoded and decoded there.
 *
 * enter() resolves the kernel and builds the initramfs (qemu_images.c),
 * then boots QEMU with the serial console on a pair of pipes and waits for
 * the agent's PERTURB-READY.  A variant's kernel: block is then sent as
 * KERNEL and applied inside the guest by the agent, with the host
 * backend's code (tracefs.c: ktrace_apply, ktrace_verify), after checking
 * the tracer and every event glob against the guest kernel's
 * available_tracers / available_events (which check() cannot see); the
 * agent answers PERTURB-KERNEL, applied or the reason.  The guest's
 * tracing state is never restored: the guest ends with the variant.
 *
 * A variant's lttng: block with kernel events (qemu_lttng.c) has its
 * modules built for the guest kernel before the study (build()), packed
 * with LTTng's tools into the initramfs, and is sent as LTTNG after
 * KERNEL: the agent starts lttng-sessiond and checks the channel and the
 * events (PERTURB-LTTNG, ready or the reason, which kills the boot like a
 * refused kernel: block).  Each result then carries LTTng's accounting of
 * the run: lttng_events, lttng_discarded, lttng_lost ("events") and
 * lttng_bytes ("bytes").
 *
 * run() sends one RUN and waits for the matching PERTURB-RESULT; the
 * result is built from it by the host runner's own builder
 * (core/result.h: the same output gives the same status, metrics and
 * tail on the host and in the guest).  With a kernel: block the result
 * also carries the tracer's accounting during the run, added as the host
 * backend does: trace_events, trace_lost (unit "events") and trace_bytes
 * ("B").  The guest's environment is PATH, HOME and the variant's env:
 * entries (not perturb's own environment); wrap: is packed and applies as
 * on the host.  CPU pinning is not applied inside the guest.
 *
 * Counters: before the first run of a request with counters (after
 * KERNEL), every counter of the set is sent by name (COUNTERS) whatever
 * the host can count, and the guest answers for each whether it can count
 * it (the host's own probe, run inside: a TCG guest has no PMU).  The
 * agent counts them on the workload as the host runner does
 * (perf_event_open, inherit, enable_on_exec; read once after the exit) and
 * the result carries each count with its times; they become metrics named
 * and with units as the host runner's (counter_reading_fill(): the same
 * scaling and flag), after the regex metrics, whatever the run's status,
 * so the store and the report treat them alike.  A counter the guest
 * cannot count, or that has no value in a run, is never stored as 0: it
 * is a run failure of the set (counters_fail(), "in the guest: " and the
 * guest's reason), which perturb run reports once per counter.
 *
 * leave() sends QUIT and reaps QEMU (SIGKILL after a grace period).  QEMU
 * gets SIGKILL when perturb dies (PR_SET_PDEATHSIG).
 *
 * A boot that fails (no PERTURB-READY in time, QEMU exits), a kernel:
 * block the guest refuses, a guest that does not answer COUNTERS, hangs,
 * refuses a request (PERTURB-ERROR) or sends a frame that proto_decode()
 * rejects ("garbage from the guest": malformed, truncated, checksum): the
 * console log is kept in logdir (qemu-VARIANT-N.log), QEMU is killed, and
 * this run and the variant's remaining runs are recorded as RUN_ERROR
 * naming the reason and the log; the study goes on with the next variant.
 * A run too large for a frame (proto.h's limits) is a RUN_ERROR of its
 * own; the boot goes on.
 */
#include "qemu.h"
#include "qemu_config.h"
#include "kbuild.h"
#include "core/proc.h"
#include "core/result.h"
#include "counters/counters.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BOOT_TIMEOUT_TCG_S 120.0
#define BOOT_TIMEOUT_KVM_S 30.0
#define QUIT_GRACE_S 10.0

static unsigned boot_count;
static int kvm_failed;	/* a KVM boot failed: kvm: auto uses TCG from then on */

static int kvm_usable(const struct boot_cfg *b)
{
	/* -icount (deterministic: true) is TCG's: KVM runs the real CPU */
	if (b->kvm == 0 || (b->kvm < 0 && kvm_failed) || b->deterministic == 1)
		return 0;
	return access("/dev/kvm", R_OK | W_OK) == 0;
}

static int qemu_check(const struct variant *v, struct pos *at, char *why, size_t len)
{
	const struct boot_cfg *b = v->cfg;

	/* what this backend cannot do yet, then what this machine lacks */
	if (v->daemon.n || v->background.n || v->n_setup || v->n_teardown)
		return why_error(why, len, "variant '%s': daemon:, background:, setup: and "
				 "teardown: are not supported yet with boot: (give boot-time "
				 "tracing on the kernel command line)", v->name);
	if (b->initrd && strcmp(b->initrd, "auto"))
		return why_error(why, len, "variant '%s': boot: only initrd: auto is "
				 "supported (the guest agent must be its /init)", v->name);
	if (!program_exists(QEMU_BIN))
		return why_error(why, len, "variant '%s': boot: needs %s (Debian package: "
				 "qemu-system-x86)", v->name, QEMU_BIN);
	if (access(BUSYBOX, X_OK) < 0)
		return why_error(why, len, "variant '%s': boot: needs %s (Debian package: "
				 "busybox-static)", v->name, BUSYBOX);
	if (access(agent_exe(), X_OK) < 0)
		return why_error(why, len, "variant '%s': boot: needs the guest agent '%s' "
				 "(built by make with a static C library)", v->name, agent_exe());
	if (b->kvm == 1 && b->deterministic == 1)
		return why_error(why, len, "variant '%s': boot: deterministic: true needs TCG "
				 "(QEMU's -icount counts emulated instructions); give kvm: auto "
				 "or false", v->name);
	if (b->kvm == 1 && access("/dev/kvm", R_OK | W_OK) < 0)
		return why_error(why, len, "variant '%s': boot: kvm: true but /dev/kvm is "
				 "not usable", v->name);
	if (lttng_guest_check(v, why, len) < 0)
		return -1;
	if (b->config)
		return kbuild_check(b, why, len);
	if (!strcmp(b->kernel, "debian")) {
		char *k = xasprintf("%s/kernel-debian/vmlinuz", perturb_cache_dir());
		int have = access(k, R_OK) == 0;
		free(k);
		if (!have && (!program_exists("apt-get") || !program_exists("dpkg-deb")))
			return why_error(why, len, "variant '%s': kernel: debian needs apt-get "
					 "and dpkg-deb to fetch the kernel", v->name);
		return 0;
	}
	if (access(b->kernel, R_OK) < 0)
		return why_error(why, len, "variant '%s': boot: kernel '%s': %s", v->name,
				 b->kernel, strerror(errno));
	return 0;
}

static char **qemu_argv(const struct boot_cfg *b, const char *kernel, const char *initrd)
{
	char **v = xcalloc(40, sizeof(*v));
	size_t n = 0;
	unsigned long long mem_mb = b->memory_bytes ? b->memory_bytes >> 20 : 1024;

	v[n++] = xstrdup(QEMU_BIN);
	v[n++] = xstrdup("-nodefaults");
	v[n++] = xstrdup("-no-reboot");
	v[n++] = xstrdup("-display");
	v[n++] = xstrdup("none");
	v[n++] = xstrdup("-nic");
	v[n++] = xstrdup("none");
	v[n++] = xstrdup("-serial");
	v[n++] = xstrdup("stdio");
	v[n++] = xstrdup("-m");
	v[n++] = xasprintf("%llu", mem_mb < 128 ? 128 : mem_mb);
	v[n++] = xstrdup("-smp");
	v[n++] = xasprintf("%d", b->cpus > 0 ? b->cpus : 1);
	v[n++] = xstrdup("-accel");
	v[n++] = xstrdup(kvm_usable(b) ? "kvm" : "tcg");
	/* TCG's default CPU model lacks instructions programs use (rdtscp) */
	v[n++] = xstrdup("-cpu");
	v[n++] = xstrdup(kvm_usable(b) ? "host" : "max");
	if (b->deterministic == 1) {
		v[n++] = xstrdup("-icount");
		v[n++] = xstrdup("shift=0");
	}
	v[n++] = xstrdup("-kernel");
	v[n++] = xstrdup(kernel);
	v[n++] = xstrdup("-initrd");
	v[n++] = xstrdup(initrd);
	v[n++] = xstrdup("-append");
	v[n++] = xasprintf("console=ttyS0 panic=-1 loglevel=1%s%s",
			   b->cmdline && *b->cmdline ? " " : "", b->cmdline ? b->cmdline : "");
	v[n] = NULL;
	return v;
}

/*
 * Start QEMU for ctx (q->log open) and wait for PERTURB-READY.  Returns 1
 * when booted, 0 when the boot failed (QEMU killed, why filled), PROC_STOP,
 * or -1 on an internal error (printed).
 */
static int boot(struct backend_ctx *ctx, struct qemu *q, const char *kernel,
		const char *initrd, char *why, size_t wlen)
{
	const struct boot_cfg *b = ctx->variant->cfg;
	char **argv = qemu_argv(b, kernel, initrd), *line = NULL;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, ret = -1;
	int kvm = kvm_usable(b);

	q->tcg = !kvm;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		error("pipe: %s", strerror(errno));
		goto out;
	}
	pid_t parent = getpid();
	q->pid = fork();
	if (q->pid < 0) {
		error("fork: %s", strerror(errno));
		q->pid = 0;
		goto out;
	}
	if (!q->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		setpgid(0, 0);
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (q->log >= 0)
			dup2(q->log, 2);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(argv[0], argv);
		_exit(127);
	}
	q->to_guest = in[1];
	q->from_guest = out[0];
	in[1] = out[0] = -1;
	signal(SIGPIPE, SIG_IGN);

	double t0 = now_mono();
	int r = read_line(q, "PERTURB-READY ", NULL,
			  t0 + (kvm ? BOOT_TIMEOUT_KVM_S : BOOT_TIMEOUT_TCG_S), &line);
	struct proto_msg ready = { .type = PROTO_READY };
	char fwhy[160];
	if (r == 1 && proto_decode(line, strlen(line), &ready, fwhy, sizeof(fwhy)) < 0) {
		snprintf(why, wlen, "the guest did not boot (garbage from the guest: %s)", fwhy);
		qemu_kill(q);
		ret = 0;
	} else if (r == PROC_STOP) {
		qemu_kill(q);
		ret = PROC_STOP;
	} else if (r <= 0) {
		snprintf(why, wlen, "the guest did not boot (%s, %s)",
			 r == 0 ? "time-out" : q->panicked ? "kernel panic" : "QEMU exited",
			 kvm ? "KVM" : "TCG");
		qemu_kill(q);
		ret = 0;
	} else {
		note("variant '%s': booted %s in %.1f s (%s)", ctx->variant->name, ready.release,
		     now_mono() - t0, kvm ? "KVM" : "TCG");
		ret = 1;
	}
	proto_msg_release(&ready);
out:
	argv_free(argv);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	free(line);
	return ret;
}

static void close_pipes(struct qemu *q)
{
	if (q->to_guest >= 0)
		close(q->to_guest);
	if (q->from_guest >= 0)
		close(q->from_guest);
	q->to_guest = q->from_guest = -1;
	strbuf_reset(&q->in);
}

/* A list of the protocol over v[0..n) (v NULL: left out), borrowed. */
static struct proto_list list_of(char **v, size_t n)
{
	return (struct proto_list){ .v = v, .n = v ? n : 0 };
}

/*
 * Apply the variant's kernel: block inside the booted guest (KERNEL, see
 * proto.h).  Returns 1 when applied, 0 when the guest refused it or did
 * not answer (why filled), PROC_STOP.
 */
static int guest_kernel(struct backend_ctx *ctx, struct qemu *q, char *why, size_t wlen)
{
	const struct ktrace_spec *k = ctx->variant->kernel;
	struct proto_msg req = {
		.type = PROTO_KERNEL,
		.kernel = {
			.tracing_on = k->tracing_on,
			.buffer_size_kb = k->buffer_size_kb > 0 ? k->buffer_size_kb : -1,
			.tracer = k->tracer,
			.events = list_of(k->events, k->n_events),
			.functions = list_of(k->functions, k->n_functions),
			.options = list_of(k->options, k->n_options),
		},
	};

	/* under TCG a tracer's set-up is boot-sized work (ftrace patches the
	 * kernel's call sites in an emulated CPU): the boot's time-out, not
	 * the 30 s of a request that runs nothing (it timed out on a busy
	 * 2-CPU machine) */
	return ask_guest_done(q, &req, PROTO_KERNEL_DONE, "kernel",
			      now_mono() + (q->tcg ? BOOT_TIMEOUT_TCG_S : RESULT_MARGIN_S), why, wlen);
}

static void forget_counters(struct qemu *q)
{
	for (size_t i = 0; i < q->n_counting; i++)
		free(q->guest_no[i]);
	free(q->guest_no);
	q->guest_no = NULL;
	q->n_counting = 0;
	q->counting = NULL;
	q->counters_sent = 0;
}

/*
 * Send the counters of a run request to the guest (COUNTERS, see proto.h;
 * none: cs NULL) and keep what the guest cannot count, with its reason.
 * Returns 1, 0 when the guest did not answer or answered garbage (why
 * filled: the boot is dead), PROC_STOP.
 */
static int guest_counters(struct qemu *q, struct counter_set *cs, char *why, size_t wlen)
{
	size_t n = counters_count(cs);
	struct proto_msg req = { .type = PROTO_COUNTERS }, answer;
	struct strbuf line = STRBUF_INIT;
	int ret = 0;

	forget_counters(q);
	req.counters.v = xcalloc(n + 1, sizeof(char *));
	req.counters.n = n;
	for (size_t i = 0; i < n; i++)
		req.counters.v[i] = (char *)counters_name(cs, i);
	if (proto_encode(&req, &line, why, wlen) < 0)
		goto out;
	ret = ask_guest(q, &line, PROTO_COUNTERS_DONE, 0, "counters",
			now_mono() + RESULT_MARGIN_S, &answer, why, wlen);
	if (ret != 1)
		goto out;	/* 0 or PROC_STOP */
	/* one reason per counter ("": it can count it); nothing more */
	if (answer.counters.n != n) {
		snprintf(why, wlen, "garbage from the guest: counters: %zu answers to %zu names",
			 answer.counters.n, n);
		ret = 0;
	} else {
		q->guest_no = xcalloc(n ? n : 1, sizeof(*q->guest_no));
		q->n_counting = n;
		for (size_t i = 0; i < n; i++)
			if (*answer.counters.v[i])
				q->guest_no[i] = xasprintf("in the guest: %s", answer.counters.v[i]);
		q->counting = cs;
		q->counters_sent = 1;
	}
	proto_msg_release(&answer);
out:
	free(req.counters.v);
	strbuf_release(&line);
	return ret;
}

static int qemu_enter(struct backend_ctx *ctx)
{
	const struct boot_cfg *b = ctx->variant->cfg;
	struct qemu *q;
	char *kernel = NULL, *initrd = NULL, why[400];
	int ret = -1, r;

	if (ctx->priv)
		return 0;
	if (b->config)
		kernel = kbuild_image(b);
	else if (!strcmp(b->kernel, "debian"))
		kernel = debian_kernel();
	else
		kernel = xstrdup(b->kernel);
	if (!kernel)
		return -1;
	initrd = make_initramfs(ctx, kernel, why, sizeof(why));
	if (!initrd && !*why)
		goto out;

	q = xcalloc(1, sizeof(*q));
	q->log = -1;
	q->to_guest = q->from_guest = -1;
	ctx->priv = q;
	if (!initrd) {
		/* the variant's own failure (said): its runs are errors naming it */
		q->dead = 1;
		snprintf(q->dead_why, sizeof(q->dead_why), "variant '%.40s': %.200s",
			 ctx->variant->name, why);
		ret = 0;
		goto out;
	}
	char *comp = path_component(ctx->variant->name);
	q->log_path = xasprintf("%s/qemu-%s-%u.log", ctx->logdir ? ctx->logdir : ".", comp,
				++boot_count);
	free(comp);
	q->log = open(q->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int kvm = kvm_usable(b);
	r = boot(ctx, q, kernel, initrd, why, sizeof(why));
	if (r == 0 && kvm && b->kvm < 0 && !q->panicked) {
		warning("variant '%s': %s; KVM does not work here, booting with TCG",
			ctx->variant->name, why);
		kvm_failed = 1;
		close_pipes(q);
		r = boot(ctx, q, kernel, initrd, why, sizeof(why));
	}
	if (r == 1 && ctx->variant->kernel)
		r = guest_kernel(ctx, q, why, sizeof(why));
	if (r == 1 && lttng_guest_wanted(ctx->variant))
		r = guest_lttng(ctx, q, why, sizeof(why));
	if (r == PROC_STOP)
		qemu_kill(q);
	if (r < 0 || r == PROC_STOP)
		goto out;
	if (r == 0)
		mark_dead(q, "variant '%s': %s", ctx->variant->name, why);
	ret = 0;
out:
	free(kernel);
	free(initrd);
	return ret;
}

/* A config: kernel is built (or found in the cache) before the study. */
/* and the lttng modules of an lttng: block with kernel events, whose
 * failure is the variant's (said; its runs name it), not the study's. */
static int qemu_build(const struct variant *v)
{
	const struct boot_cfg *b = v->cfg;
	char *img, *mods, why[400];

	if (b->config) {
		if (!(img = kbuild_image(b)))
			return -1;
		free(img);
	}
	if (!lttng_guest_wanted(v) || b->config || strcmp(b->kernel, "debian"))
		return 0;
	if (!(img = debian_kernel()))
		return -1;
	mods = lttng_guest_modules(v, img, why, sizeof(why));
	free(mods);
	free(img);
	return 0;
}

static int qemu_leave(struct backend_ctx *ctx)
{
	struct qemu *q = ctx->priv;

	if (!q)
		return 0;
	if (q->pid > 0) {
		double deadline = now_mono() + QUIT_GRACE_S;
		char *line = NULL, why[160];
		struct proto_msg quit = { .type = PROTO_QUIT };
		send_msg(q, &quit, why, sizeof(why));
		while (read_line(q, "\n-never-", NULL, deadline, &line) == 1)
			free(line);
		qemu_kill(q);
	}
	if (q->to_guest >= 0)
		close(q->to_guest);
	if (q->from_guest >= 0)
		close(q->from_guest);
	if (q->log >= 0)
		close(q->log);
	strbuf_release(&q->in);
	forget_counters(q);
	free(q->log_path);
	free(q);
	ctx->priv = NULL;
	return 0;
}

/* ---- runs ---- */

static const enum run_end run_ends[] = {
	[PROTO_END_EXIT] = RUN_END_EXIT,
	[PROTO_END_SIGNAL] = RUN_END_SIGNAL,
	[PROTO_END_TIMEOUT] = RUN_END_TIMEOUT,
	[PROTO_END_ERROR] = RUN_END_ERROR,
};

/*
 * The counters of a guest's result as metrics named and with units as the
 * host runner's, scaled by the same function; a counter without a value
 * is a run failure of the set, never 0.  The counters the guest cannot
 * count at all are failures of every run.  0, or -1 with why when the
 * result names a counter that was not asked for.
 */
static int counter_values(struct qemu *q, const struct proto_result *pr,
			  struct run_result *res, char *why, size_t wlen)
{
	struct counter_set *cs = q->counting;
	char msg[256];

	for (size_t k = 0; k < pr->n_counts; k++) {
		size_t i = pr->counts[k].index;
		if (i >= q->n_counting || q->guest_no[i])
			return why_error(why, wlen, "a value of counter %zu, which it does not "
					 "count", i);
	}
	for (size_t i = 0; i < q->n_counting; i++) {
		const struct proto_count *c = NULL;
		struct counter_reading rd = {
			.name = counters_name(cs, i), .unit = counters_unit(cs, i),
		};

		if (q->guest_no[i]) {
			counters_fail(cs, i, q->guest_no[i]);
			continue;
		}
		for (size_t k = 0; k < pr->n_counts && !c; k++)
			if (pr->counts[k].index == i)
				c = &pr->counts[k];
		if (!c)
			continue;	/* the run did not start */
		if (c->why) {
			snprintf(msg, sizeof(msg), "in the guest: %s", c->why);
			counters_fail(cs, i, msg);
			continue;
		}
		int e = counter_reading_fill(&rd, c->raw, c->enabled_ns, c->running_ns, msg,
					     sizeof(msg));
		if (e < 0) {
			char *m = xasprintf("in the guest: %s", msg);
			counters_fail(cs, i, m);
			free(m);
		}
		if (e > 0)
			result_add_reading(res, &rd);
	}
	return 0;
}

/*
 * qemu.h: a guest's result as the host runner's (result.h: the same status,
 * metrics and tail for the same output), then its counters (whatever the
 * run's status, as the host runner's) and the tracer's accounting during
 * the run (a variant with a kernel: block) as metrics named and with
 * units as the host backend's: trace_events, trace_lost ("events") and
 * trace_bytes ("B").  0, or -1 with why.
 */
int qemu_guest_result(struct qemu *q, const struct variant *v, const struct run_request *req,
		      const struct proto_result *pr, struct run_result *res, char *why, size_t wlen)
{
	struct run_outcome o = {
		.end = run_ends[pr->end],
		.code = pr->code,
		.why = pr->err,
		.wall_s = pr->wall_ns / 1e9,
		.user_s = pr->user_us / 1e6,
		.sys_s = pr->sys_us / 1e6,
		.maxrss_kb = pr->maxrss_kb,
		.out = pr->out, .out_len = pr->out_len,
		.err = pr->err, .err_len = pr->err_len,
	};

	result_build(req, &o, res);
	if (counter_values(q, pr, res, why, wlen) < 0)
		return -1;
	if (pr->trace == PROTO_TRACE_STATS) {
		result_add_value(res, "trace_events", (double)pr->trace_events, "events");
		result_add_value(res, "trace_lost", (double)pr->trace_lost, "events");
		result_add_value(res, "trace_bytes", (double)pr->trace_bytes, "B");
	} else if (pr->trace == PROTO_TRACE_ERROR) {
		warning("variant '%s': in the guest: %s", v->name, pr->trace_error);
	}
	lttng_guest_result(v, pr, res);
	return 0;
}

/* perturb was asked to stop while the guest ran: QEMU goes, the boot is over. */
static void interrupted(struct qemu *q, struct run_result *res)
{
	res->status = RUN_INTERRUPTED;
	snprintf(res->reason, sizeof(res->reason), "interrupted");
	res->out_tail = xstrdup("");
	qemu_kill(q);
	q->dead = 1;
	snprintf(q->dead_why, sizeof(q->dead_why), "interrupted");
}

static int qemu_run(struct backend_ctx *ctx, const struct run_request *req,
		    struct run_result *res)
{
	static char path_env[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	static char home_env[] = "HOME=/root";
	const struct variant *v = ctx->variant;
	struct qemu *q = ctx->priv;
	struct proto_msg m = { .type = PROTO_RUN }, answer;
	struct strbuf line = STRBUF_INIT;
	char why[200];
	size_t n;
	int r;

	memset(res, 0, sizeof(*res));
	now_iso8601(res->started, sizeof(res->started));
	if (!q || q->dead) {
		res->status = RUN_ERROR;
		snprintf(res->reason, sizeof(res->reason), "%s",
			 q ? q->dead_why : "the guest is not running");
		res->out_tail = xstrdup("");
		return 0;
	}
	/* the counters go to the guest once, before its first run with them */
	if (req->counters ? !q->counters_sent || q->counting != req->counters :
	    q->counters_sent) {
		int c = guest_counters(q, req->counters, why, sizeof(why));
		if (c == PROC_STOP) {
			interrupted(q, res);
			return 0;
		}
		if (c == 0) {
			mark_dead(q, "variant '%s': %s", v->name, why);
			goto dead;
		}
		if (!req->counters)
			forget_counters(q);
	}
	/* the guest's environment: PATH, HOME and the variant's env: entries */
	for (n = 0; req->argv[n]; n++)
		;
	m.seq = ++q->seq;
	m.run.timeout_ms = (long long)(req->timeout_s * 1000);
	m.run.cwd = (char *)(req->cwd && *req->cwd ? req->cwd : "/");
	m.run.argv = (struct proto_list){ .v = (char **)req->argv, .n = n };
	m.run.env.v = xcalloc(v->n_env + 3, sizeof(char *));
	m.run.env.v[m.run.env.n++] = path_env;
	m.run.env.v[m.run.env.n++] = home_env;
	for (size_t i = 0; i < v->n_env; i++)
		m.run.env.v[m.run.env.n++] = xasprintf("%s=%s", v->env[i].key, v->env[i].value);
	if (proto_encode(&m, &line, why, sizeof(why)) < 0) {
		/* this run cannot be sent whole: an error of this run only */
		res->status = RUN_ERROR;
		snprintf(res->reason, sizeof(res->reason), "cannot send the run to the guest: %s",
			 why);
		res->out_tail = xstrdup("");
		goto out;
	}
	double deadline = now_mono() + req->timeout_s + STOP_KILL_GRACE_S + RESULT_MARGIN_S;
	r = ask_guest(q, &line, PROTO_RESULT, m.seq, "run", deadline, &answer, why, sizeof(why));
	if (r == PROC_STOP) {
		interrupted(q, res);
		goto out;
	}
	if (r == 0) {
		mark_dead(q, "variant '%s': %s", v->name, why);
		goto dead;
	}
	r = qemu_guest_result(q, v, req, &answer.result, res, why, sizeof(why));
	proto_msg_release(&answer);
	if (r < 0) {
		mark_dead(q, "variant '%s': garbage from the guest: %s", v->name, why);
		goto dead;
	}
	goto out;
dead:
	run_result_release(res);
	memset(res, 0, sizeof(*res));
	now_iso8601(res->started, sizeof(res->started));
	res->status = RUN_ERROR;
	snprintf(res->reason, sizeof(res->reason), "%s", q->dead_why);
	res->out_tail = xstrdup("");
out:
	for (size_t i = 2; i < m.run.env.n; i++)
		free(m.run.env.v[i]);
	free(m.run.env.v);
	strbuf_release(&line);
	return 0;
}

const struct backend backend_qemu = {
	.name = "qemu",
	.key = "boot",
	.cfg_size = sizeof(struct boot_cfg),
	.parse = qemu_config_parse,
	.release = qemu_config_release,
	.finish = qemu_config_finish,
	.build = qemu_build,
	.boots = qemu_config_boots,
	.virtual_time = qemu_config_virtual_time,
	.check = qemu_check,
	.enter = qemu_enter,
	.leave = qemu_leave,
	.run = qemu_run,
};
