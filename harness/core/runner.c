/*
 * runner.c - see runner.h.
 *
 * The workload's stdout and stderr are memfds (proc.h: capture): the
 * workload never blocks on a pipe, and perturb looks at them every
 * CAPTURE_CHECK_S only to keep them bounded, feeding what it drops to the
 * metric scan (result.h) first.  After the run the rest is fed, and the
 * scan and the last bytes of each stream go to the result builder
 * (result.c: status, metrics, output tail).
 */
#include "runner.h"
#include "result.h"
#include "counters/counters.h"
#include "proc.h"
#include "cgroup.h"
#include "lib/stages.h"
#include "lib/util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


const char *run_status_name(enum run_status s)
{
	switch (s) {
	case RUN_OK: return "ok";
	case RUN_FAILED: return "failed";
	case RUN_CRASHED: return "crashed";
	case RUN_TIMEOUT: return "timeout";
	case RUN_ERROR: return "error";
	case RUN_INTERRUPTED: return "interrupted";
	}
	return "unknown";
}

/* ---- counters ---- */

struct attach_ctx {
	struct counter_set *counters;
	struct run_gate *gate;
	int passed;
};

void run_gate_init(struct run_gate *g, int n)
{
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->n = n;
	g->arrived = 0;
}

void run_gate_destroy(struct run_gate *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}

/* Arrive at the gate and wait for the others (once per run). */
static void gate_pass(struct attach_ctx *a)
{
	struct run_gate *g = a->gate;

	if (!g || a->passed)
		return;
	a->passed = 1;
	pthread_mutex_lock(&g->mu);
	g->arrived++;
	pthread_cond_broadcast(&g->cv);
	while (g->arrived < g->n)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

/* The child is set up and waits before its exec (proc.h: attach). */
static void attach_child(pid_t pid, void *arg)
{
	struct attach_ctx *a = arg;

	if (a->counters)
		counters_attach(a->counters, pid);
	gate_pass(a);
}

/* Append the counters' readings to res->values. */
static void add_counters(struct counter_set *set, struct run_result *res)
{
	size_t n = counters_count(set), got = 0;
	struct counter_reading *rd = xcalloc(n ? n : 1, sizeof(*rd));

	counters_collect(set, rd, &got);
	for (size_t i = 0; i < got; i++)
		result_add_reading(res, &rd[i]);
	free(rd);
}

/* ---- the run's cgroup ---- */

/*
 * The run's cgroup after its main process ended: what was still in it
 * (res->leftover_procs, with a warning the first time), killed; then what
 * the whole tree used (res->cgroup).  Removes the cgroup.
 */
static void end_cgroup(struct cgroup *cg, struct escape_watch *w,
		       const struct run_request *req, int left, struct run_result *res)
{
	static int warned, warned_out;
	int out;

	if (!cg)
		return;
	if (res->status == RUN_CRASHED && res->signal == SIGKILL)
		cgroup_no_reuse(cg);	/* perhaps by cgroup.kill: cgroup.h */
	cgroup_kill(cg);
	out = proc_escape_watch_end(w, cg);
	cgroup_read_usage(cg, &res->cgroup);
	cgroup_destroy(cg);
	if (left < 0)
		left = 0;
	res->leftover_procs = left + out;
	if (res->status == RUN_INTERRUPTED)
		return;
	if (left > 0 && !warned++)
		warning("'%s' left %d process%s running when it ended (killed with the run's "
			"cgroup; each run's count is stored as leftover_procs)", req->argv[0], left,
			left == 1 ? "" : "es");
	if (out > 0 && !warned_out++)
		warning("'%s' started %d process%s that left the run's cgroup (killed; counted "
			"in leftover_procs)", req->argv[0], out, out == 1 ? "" : "es");
}

void runner_add_cgroup_values(struct run_result *res)
{
	const struct cgroup_usage *u = &res->cgroup;

	if (u->has_cpu) {
		result_add_value(res, "cgroup_cpu_s", u->cpu_s, "s");
		result_add_value(res, "cgroup_user_s", u->user_s, "s");
		result_add_value(res, "cgroup_sys_s", u->sys_s, "s");
	}
	if (u->has_memory)
		result_add_value(res, "cgroup_memory_peak", u->memory_peak_b, "B");
	if (u->has_io) {
		result_add_value(res, "cgroup_io_read", u->io_read_b, "B");
		result_add_value(res, "cgroup_io_write", u->io_write_b, "B");
	}
	if (res->leftover_procs > 0)
		result_add_value(res, "leftover_procs", res->leftover_procs, "procs");
}

/* ---- the run ---- */

/* How the run ended, from wait4()'s status and proc_poll()'s answer. */
static void outcome(int status, int how, struct run_outcome *o)
{
	if (how == 0) {
		o->end = RUN_END_TIMEOUT;
	} else if (how == PROC_STOP) {
		o->end = RUN_END_STOP;
		o->code = stop_requested();
	} else if (WIFSIGNALED(status)) {
		o->end = RUN_END_SIGNAL;
		o->code = WTERMSIG(status);
	} else {
		/* wait4() without WUNTRACED: exited */
		o->end = RUN_END_EXIT;
		o->code = WEXITSTATUS(status);
	}
}

int runner_run(const struct run_request *req, struct run_result *res)
{
	struct capture out[2] = { { .fd = -1 }, { .fd = -1 } };
	struct metric_scan *scan = NULL;
	char *tail[2] = { NULL, NULL };
	size_t max = req->output_max ? req->output_max : RUNNER_OUTPUT_MAX;
	struct spawn_opts o = {
		.argv = req->argv, .envp = req->envp,
		.cpus = req->cpus, .n_cpus = req->cpus ? req->n_cpus : 0,
		.cwd = req->cwd,
	};
	struct counter_set *counters = NULL;
	struct attach_ctx actx = { .gate = req->gate };
	struct cgroup *cg = NULL;
	struct escape_watch esc = { 0 };
	struct rusage ru;
	double t0, t1;
	int pidfd = -1, ret = -1, how, status = 0, wait_failed = 0, left = 0, keep = 0;
	pid_t pid, r;

	memset(res, 0, sizeof(*res));
	now_iso8601(res->started, sizeof(res->started));
	if (req->cpus && req->n_cpus == 1) {
		res->has_cpu = 1;
		res->cpu = req->cpus[0];
	}

	if (stop_requested()) {
		res->status = RUN_INTERRUPTED;
		snprintf(res->reason, sizeof(res->reason), "not started: perturb is stopping");
		ret = 0;
		goto out;
	}
	if (req->n_metrics)
		scan = metric_scan_new(req);
	if (capture_open(&out[0], "perturb-stdout", max, scan ? metric_scan_feed : NULL,
			 scan ? metric_scan_stream(scan, 0) : NULL) < 0 ||
	    capture_open(&out[1], "perturb-stderr", max, scan ? metric_scan_feed : NULL,
			 scan ? metric_scan_stream(scan, 1) : NULL) < 0)
		goto out;
	o.out_fd = out[0].fd;
	o.err_fd = out[1].fd;
	if (counters_n_available(req->counters))
		actx.counters = counters = req->counters;
	if (counters || req->gate) {
		o.attach = attach_child;
		o.attach_arg = &actx;
	}

	stage_enter(STAGE_CGROUP);
	o.cgroup = cg = cgroup_take();
	proc_escape_watch_begin(&esc, cg);
	o.started = &t0;
	o.pidfd = &pidfd;
	t0 = now_mono();
	stage_enter(STAGE_SPAWN);
	pid = proc_spawn_reason(&o, res->reason, sizeof(res->reason));
	stage_enter(STAGE_WAIT);
	gate_pass(&actx);	/* not started: the others need not wait */
	res->start_mono = t0;
	if (pid < 0) {
		res->status = RUN_ERROR;
		ret = 0;
		goto out;
	}
	if (pidfd < 0)	/* not made by the clone */
		pidfd = pidfd_open(pid, 0);
	if (pidfd < 0) {
		error("cannot watch process %d: %s", (int)pid, strerror(errno));
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out;
	}

	{
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		how = proc_poll_capture(&p, 1, req->timeout_s > 0 ? t0 + req->timeout_s : 0, 1,
					out, 2);
	}
	stage_enter(STAGE_REAP);
	if (how < 0 && how != PROC_STOP)	/* perturb's failure, not the run's */
		wait_failed = error("cannot wait for process %d: %s", (int)pid, strerror(errno));
	if (how != 1)
		proc_kill_group(pid, pidfd, STOP_KILL_GRACE_S);
	t1 = now_mono();
	/* still there when the main process ended: it tried to outlive the run */
	if (how == 1 && cg)
		left = cgroup_count(cg);
	kill(-pid, SIGKILL);	/* what the workload left behind */
	do
		r = wait4(pid, &status, 0, &ru);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		error("cannot reap process %d: %s", (int)pid, strerror(errno));
		goto out;
	}
	if (wait_failed)
		goto out;

	struct run_outcome oc = {
		.wall_s = t1 - t0,
		.user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		.sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
		.maxrss_kb = ru.ru_maxrss,
	};
	outcome(status, how, &oc);
	if (capture_drain(&out[0], 1) < 0 || capture_drain(&out[1], 1) < 0)
		goto out;
	/* a few bytes more than the tail: result_build() sees that it is cut */
	tail[0] = capture_tail(&out[0], RUNNER_TAIL_BYTES + 4, &oc.out_len);
	tail[1] = capture_tail(&out[1], RUNNER_TAIL_BYTES + 4, &oc.err_len);
	oc.out = tail[0];
	oc.err = tail[1];
	oc.scan = scan;
	oc.dropped = out[0].dropped + out[1].dropped;
	result_build(req, &oc, res);
	if (counters && res->status != RUN_INTERRUPTED)
		add_counters(counters, res);
	stage_enter(STAGE_CGROUP_END);
	end_cgroup(cg, &esc, req, left, res);
	stage_enter(STAGE_RESULT);
	/* nothing but perturb holds the captures' memfds any more: the main
	 * process ended on its own and found its cgroup empty, and nothing
	 * had left it */
	keep = cg && how == 1 && left == 0 && !res->leftover_procs;
	cg = NULL;
	ret = 0;
out:
	gate_pass(&actx);
	cgroup_kill(cg);
	proc_escape_watch_end(&esc, cg);	/* nothing when it ended above */
	cgroup_destroy(cg);
	counters_detach(counters);
	for (int k = 0; k < 2; k++) {
		if (keep)
			capture_keep(&out[k]);
		else
			capture_close(&out[k]);
		free(tail[k]);
	}
	metric_scan_free(scan);
	if (pidfd >= 0)
		close(pidfd);
	if (!res->out_tail)
		res->out_tail = xstrdup("");
	return ret;
}

void run_result_release(struct run_result *r)
{
	for (size_t i = 0; i < r->n_values; i++) {
		free(r->values[i].name);
		free(r->values[i].unit);
	}
	free(r->values);
	free(r->out_tail);
	r->values = NULL;
	r->n_values = 0;
	r->out_tail = NULL;
}
