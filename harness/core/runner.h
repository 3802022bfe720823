/*
 * runner.h - one measured run of a workload.
 *
 * runner_run() starts argv without a shell, in its own process group, with
 * the given environment, pinned to cpus when given, stdin from /dev/null and
 * stdout/stderr going to anonymous memory files (memfd) so that the workload
 * never blocks on output.  While the workload runs the harness sleeps in
 * ppoll() on a pidfd: it costs the workload nothing measurable.
 *
 * Wall time is CLOCK_MONOTONIC to the moment the workload's exit is seen,
 * from:
 *   - without counters nor a gate: just before the child is created, so
 *     it includes the vfork, the child's set-up (fds, affinity, folder,
 *     signals) and the execve (tens of microseconds; see proc_spawn.c);
 *     with a cgroup where the kernel has clone3's CLONE_INTO_CGROUP (the
 *     usual case, proc.h: proc_containment) the child is created in its
 *     cgroup by the same vfork-like path, so nothing more is timed;
 *   - with counters (req->counters has an available one), a gate
 *     (req->gate, below) or a cgroup the child must move into (the
 *     "cgroup-procs-write" fallback): just before the child,
 *     already created (clone sharing perturb's memory, like vfork), set up
 *     and in its cgroup, is released to reset its signals and
 *     exec; its creation, set-up, the move and the opening of the counters
 *     on it are outside the window.
 *     (A fork would not do: its exec tears down a copy of perturb's
 *     address space inside the window, 2-5 ms here.)
 * So the two paths' wall times of the same workload differ by a few tens
 * of microseconds (the vfork path is the longer); every run of a study
 * takes the same path (the choice of cgroups and of clone3 is made once
 * per process), so dilations are unaffected.  user/sys time and max
 * RSS come from wait4()'s rusage (the child and nothing else: descendants
 * that outlive it are not reaped through it).  When the workload's main
 * process ends, what is left of its process group is killed (SIGKILL), and
 * so is everything in the run's cgroup (cgroup.h: each run has its own,
 * from a pool made before the timed loop, where the machine allows it;
 * the child starts in it, or enters it before its exec as described
 * above): even what left the process group (setsid) ends with the run,
 * and what left the cgroup itself (a root workload can) is found and
 * killed (proc.h: struct escape_watch); how many processes were still
 * there, in the cgroup or out of it, is res->leftover_procs, and what the
 * whole tree used (CPU time, memory peak, I/O) res->cgroup.
 *
 * Output is bounded (proc.h: capture): stdout and stderr each hold at most
 * req->output_max bytes (RUNNER_OUTPUT_MAX, 16 MiB, by default) plus what
 * the workload writes in CAPTURE_CHECK_S; beyond that the older part is
 * scanned for the metrics and dropped, and result->output_dropped counts
 * the bytes dropped (stored with the result, results.output_dropped).  The
 * harness wakes up every CAPTURE_CHECK_S while the workload runs for this
 * (an fstat() of each memory file when the output stays small).
 *
 * Counters (counters.h): attached to the waiting child, read once after it
 * has been reaped, whatever the run's status; they come after the regex
 * metrics in result->values, named as written in the experiment, with
 * their times and scaled flag.  A counter that did not count in this run
 * has no value (never 0).
 *
 * Time-out: the group gets SIGTERM, then SIGKILL after a grace period of
 * STOP_KILL_GRACE_S; the run is RUN_TIMEOUT.  A stop signal received by
 * perturb (stop.h) ends the run the same way with
 * RUN_INTERRUPTED; such a run is never stored.
 *
 * Status, reason, metrics and output tail: result.h, the rules every
 * backend shares (the first match of each metric's regex in stdout, then
 * stderr; a metric that does not match or is not a finite number makes
 * an otherwise successful run RUN_FAILED).
 */
#ifndef PERTURB_RUNNER_H
#define PERTURB_RUNNER_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup.h"
#include "experiment.h"
#include "stop.h"

#define RUNNER_TAIL_BYTES 2048
#define RUNNER_OUTPUT_MAX (16 * 1024 * 1024)

enum run_status {
	RUN_OK,			/* exit status 0, all metrics found */
	RUN_FAILED,		/* non-zero exit, or a metric missing */
	RUN_CRASHED,		/* killed by a signal */
	RUN_TIMEOUT,		/* killed by perturb after the time-out */
	RUN_ERROR,		/* could not be started (exec failed, ...) */
	RUN_INTERRUPTED,	/* perturb was asked to stop; never stored */
};
const char *run_status_name(enum run_status s);

struct metric_value {
	char *name;
	double value;
	char *unit;		/* "" when none */
	/* Counters only (0 for regex metrics): */
	int scaled;		/* multiplexed: value = raw * enabled / running */
	uint64_t time_enabled_ns, time_running_ns;	/* 0 = not known */
};

struct counter_set;

/*
 * Runs started together (order: duet, docs/experiment.md): n runners that
 * share a gate each create their child, set it up (affinity, folder,
 * cgroup) and stop it just before its exec; once all n are there, each
 * takes its own start time and releases its child, so that no workload
 * begins before the others are ready.  A runner whose child could not be
 * started passes the gate all the same (nobody waits for it).  Each run's
 * wall time is its own, from its release to its own end.  The runners run
 * in threads of their own (perturb's other state is not shared between
 * them: no counters).
 */
struct run_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n, arrived;
};
void run_gate_init(struct run_gate *g, int n);
void run_gate_destroy(struct run_gate *g);

struct run_request {
	char *const *argv;	/* complete: wrap prefix + command, expanded */
	char *const *envp;	/* complete environment */
	const int *cpus;	/* pin to these CPUs; NULL/0 = no pinning */
	size_t n_cpus;
	double timeout_s;	/* > 0 */
	const struct metric_def *metrics;
	size_t n_metrics;
	const char *cwd;	/* NULL = inherit */
	struct counter_set *counters;	/* NULL = none; see counters.h */
	size_t output_max;	/* bytes kept per stream; 0 = RUNNER_OUTPUT_MAX */
	struct run_gate *gate;	/* NULL: start at once; see struct run_gate */
};

struct run_result {
	enum run_status status;
	int exit_code;		/* valid when the child exited */
	int signal;		/* valid for RUN_CRASHED */
	char reason[256];	/* human-readable; "" for RUN_OK */
	char started[32];	/* ISO 8601 UTC wall-clock start */
	double wall_s, user_s, sys_s;
	long maxrss_kb;
	struct metric_value *values;
	size_t n_values;
	char *out_tail;		/* last RUNNER_TAIL_BYTES of stdout+stderr (malloc'd, may be "") */
	uint64_t output_dropped;	/* bytes of output not kept (see the bound above) */
	/* The run's cgroup (cgroup.h), when it had one: */
	int leftover_procs;	/* processes still in it when the main process ended,
				 * and those that had left it (proc.h: escape_watch):
				 * they tried to outlive the run (killed, warned once) */
	struct cgroup_usage cgroup;	/* what the whole tree used; has_* 0 without */
	/* Where and when: the CPU the run was pinned to when it was one
	 * (has_cpu), and the CLOCK_MONOTONIC second its timed window opened
	 * (0 = not known); it closed at start_mono + wall_s. */
	int has_cpu, cpu;
	double start_mono;
};

/* Returns 0 when the run was carried out (whatever its status), -1 on an
 * internal error of perturb itself (printed).  result is always initialised
 * and must be released. */
int runner_run(const struct run_request *req, struct run_result *result);
void run_result_release(struct run_result *r);

/* res->cgroup and res->leftover_procs as metrics of the run (the host
 * backend stores them; docs/experiment.md "Metrics of every run"):
 * cgroup_cpu_s, cgroup_user_s, cgroup_sys_s (cpu.stat), cgroup_memory_peak
 * (memory.peak, B), cgroup_io_read, cgroup_io_write (io.stat, B), each
 * where the machine has it, and leftover_procs when > 0. */
void runner_add_cgroup_values(struct run_result *res);

#endif
