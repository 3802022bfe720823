/*
 * proc.h - processes perturb starts around the measured runs: setup,
 * teardown and prepare commands, daemons and background loads.
 *
 * All children run in their own process group with stdin from /dev/null,
 * without a shell; runs, daemons, background loads and commands each also
 * in a cgroup of their own where the machine allows it (cgroup.h): when
 * they end, whatever they left behind in it is killed, even what left
 * their process group.  A failure to exec is reported by the parent (through a
 * close-on-exec pipe), never as a mysterious exit status 127.
 */
#ifndef PERTURB_PROC_H
#define PERTURB_PROC_H

#include <sys/types.h>
#include <poll.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

struct cgroup;

struct spawn_opts {
	char *const *argv;
	char *const *envp;	/* NULL = environ */
	const int *cpus;	/* NULL = no pinning */
	size_t n_cpus;
	const char *cwd;	/* NULL = inherit */
	int out_fd;		/* child's stdout; -1 = /dev/null */
	int err_fd;		/* child's stderr; -1 = same as out_fd */
	double *started;	/* when non-NULL: now_mono() just before the child is
				 * created (vfork), or, with attach, just before it is
				 * released */
	/*
	 * When non-NULL the child is created with clone(CLONE_VM) on a stack
	 * of its own instead of vfork() (it still shares perturb's memory, so
	 * its exec stays cheap) and, once its fds, affinity and folder are set
	 * up, waits on a pipe before resetting its signals and calling
	 * execve(); the parent calls attach(pid, attach_arg) (to open event
	 * counters on the child, which vfork's suspended parent could not
	 * do), takes *started, and releases it.  The child blocks every
	 * signal while it waits and exits without exec'ing when perturb dies.
	 * A set-up failure of the child is reported as usual, and attach is
	 * then not called.
	 */
	void (*attach)(pid_t pid, void *arg);
	void *attach_arg;
	/*
	 * When non-NULL (cgroup.h) the child starts in this cgroup, so that
	 * everything it starts stays in it.  Where clone3's CLONE_INTO_CGROUP
	 * works (proc_containment: "clone-into-cgroup") it is created there,
	 * by the vfork path (or, with attach, as with attach); elsewhere
	 * ("cgroup-procs-write") it moves itself in with a write to
	 * cgroup.procs before its exec, created as with attach (which may be
	 * NULL) so that the move happens before *started is taken, outside
	 * the timed window.  A failed move is a set-up failure ("cannot move
	 * into cgroup ...").
	 */
	struct cgroup *cgroup;
	/* When non-NULL: a pidfd of the child (close-on-exec) where its clone
	 * made one (clone3 into its cgroup: CLONE_PIDFD, no pidfd_open() to
	 * make), else -1.  The caller closes it. */
	int *pidfd;
};

/*
 * How perturb's children are contained here, decided once per process:
 * "clone-into-cgroup" (each starts in its cgroup: clone3 with
 * CLONE_INTO_CGROUP, Linux 5.7, on x86-64), "cgroup-procs-write" (each
 * moves itself in between its creation and its exec; why says why not the
 * first: the kernel, a seccomp filter, or PERTURB_NO_CLONE_INTO_CGROUP=1,
 * which tests use to force this path) or "process-group" (no cgroup v2:
 * cgroup.h).  Makes perturb's base cgroup when it is not made yet.  why
 * (may be NULL) is "" for the first.
 */
const char *proc_containment(char *why, size_t len);

/* 1 when children can start in their cgroup (CLONE_INTO_CGROUP), else 0
 * with why; makes no cgroup (perturb doctor). */
int proc_clone_into_cgroup(char *why, size_t len);

/* fork + exec in a new process group.  Returns the pid, or -1 with errno set
 * to the exec (or fork) error. */
pid_t proc_spawn(const struct spawn_opts *o);

/*
 * Run a command to completion (setup, teardown, prepare).  Returns 0 when it
 * exits with status 0 within timeout_s; otherwise -1 after printing an
 * error() that names the command, the exit status / signal / time-out, and
 * the last lines of its output.  A stop request (stop_requested) kills
 * it and returns -1.
 */
int proc_run_command(char *const *argv, char *const *envp, const char *cwd,
		     double timeout_s, const char *what);

/*
 * A log that perturb keeps bounded, as it bounds captured output: a log
 * file of a daemon or a background load holds at most PROC_LOG_MAX bytes
 * (plus one read).  Past that its last half is kept, after a first line
 * "perturb: N bytes of this log were dropped here (a log keeps at most
 * M)" that counts every byte dropped from the file; the command that
 * stops its writer warns with the number.  So no log fills the disk the
 * results database is on.  What is read back from a log survives the cut
 * through a tally: a daemon's tally_re (REG_EXTENDED, one group) sums the
 * number its first group matches in each line the log drops, and the
 * marker then ends in "; the lines dropped tallied T" (bpftrace's "Lost N
 * events": bpf.c adds proc_log_tally() to what the log still holds).  Only
 * perf trace's log, which perturb reads as it grows, run by run, by offset,
 * passes log_max 0: perf_tracer.c bounds it on disk instead, giving back
 * (a punched hole) what it has read beyond the last half of PROC_LOG_MAX.
 */
#define PROC_LOG_MAX (16 * 1024 * 1024)
/* The tally of the log at path (0: none, or no log). */
unsigned long long proc_log_tally(const char *path);

/*
 * A daemon: started before a variant's runs, stopped after, in folder cwd
 * (NULL = perturb's).  Its stdout and stderr go to log_path (appended),
 * bounded to log_max bytes (PROC_LOG_MAX; 0: not bounded), its dropped lines
 * tallied by tally_re (NULL: none; above).  Readiness:
 * ready_re (regex on its output, waited for at most timeout_s) or
 * ready_delay_s (slept).  A daemon that exits before it is ready is an
 * error.  With ready_re or log_max the output goes through a logger
 * process (a fork of perturb) that appends it to the log and matches
 * ready_re on each line (cut at 16 KiB) and on the incomplete last line;
 * it drains until EOF so that the daemon never blocks on output.  Errors
 * print the tail of what the daemon wrote to the log.
 */
struct daemon;
int daemon_start(char *const *argv, char *const *envp, const char *cwd,
		 const char *log_path, size_t log_max, double ready_delay_s,
		 const regex_t *ready_re, const regex_t *tally_re, double timeout_s,
		 struct daemon **out);
/* daemon_start() for a caller that says its failure itself (a trial whose
 * failure is a reason, as --skip-unavailable's): nothing is printed, not
 * the tail of the log either (the caller reads the log); what happened is
 * in why[len], to follow the daemon's name, such as "ended before it was
 * ready: exited with status 1" or "not ready after 60 s: its output did
 * not match the readiness pattern".  why NULL: daemon_start(). */
int daemon_start_reason(char *const *argv, char *const *envp, const char *cwd,
			const char *log_path, size_t log_max, double ready_delay_s,
			const regex_t *ready_re, const regex_t *tally_re, double timeout_s,
			char *why, size_t why_len, struct daemon **out);
/* SIGTERM to its group, SIGKILL after a grace period; reaps it.  Returns 0,
 * or -1 when it had died on its own before (printed). Frees d. */
int daemon_stop(struct daemon *d);
/* daemon_stop() that says how it had died in why[len] ("exited with status
 * 1"), nothing printed; why NULL: daemon_stop(). */
int daemon_stop_reason(struct daemon *d, char *why, size_t len);
pid_t daemon_pid(const struct daemon *d);
/* Is it running still (not ended on its own)?  Its log's path. */
int daemon_alive(const struct daemon *d);
const char *daemon_log(const struct daemon *d);

/*
 * Background load: a supervisor process restarts argv each time it ends,
 * until background_stop(), in folder cwd (NULL = perturb's).  Output to
 * log_path, bounded to log_max bytes as a daemon's (through a logger;
 * 0: not bounded).  Returns -1 (printed) when
 * the command cannot be started at all.  A load that ends within 50 ms of
 * its start 5 times in a row is restarted once a second only (warning in the
 * log).  The supervisor gets SIGTERM when the thread that started it ends
 * (PR_SET_PDEATHSIG): call this from perturb's main thread.  prior_failures:
 * the failed starts of the same load before this one (its variant's earlier
 * entries; background_failures() of each): a load that ever failed is not
 * trusted before its new start has run a second (background_sample()).
 */
struct background;
int background_start(char *const *argv, char *const *envp, const char *cwd,
		     const char *log_path, size_t log_max, long prior_failures,
		     struct background **out);
/* Stops the supervisor and the load's process group; frees b.  Returns the
 * number of times the load was started through *starts when non-NULL. */
int background_stop(struct background *b, long *starts);
pid_t background_pid(const struct background *b);
/* The starts of b that failed so far. */
long background_failures(const struct background *b);
/*
 * Did the load hold for a run?  background_sample() before the run, then
 * background_held() after it: 1 when its last start had not failed when
 * the run began and none failed during it (a failure: it could not be
 * started, or it ended with a non-zero status or by a signal; a load
 * ending with status 0 and started again holds); else 0 with why[len]
 * saying what happened, its starts and its log.
 */
struct background_sample {
	long starts, failures;
	int failing;		/* its last start failed, and none runs; or one runs
				 * that began less than a second ago and a start of
				 * the load failed before (in this entry or an
				 * earlier one) */
};
void background_sample(const struct background *b, struct background_sample *s);
int background_held(const struct background *b, const struct background_sample *before,
		    char *why, size_t len);

/*
 * Building blocks, shared with runner.c.
 */

/* proc_spawn(), and on failure a message for the user in why[len] such as
 * "cannot run 'prog': No such file or directory" or "cannot change to
 * directory 'd': ..." (why may be NULL).  The child has the default signal
 * dispositions and an empty signal mask, and only fds 0-2 open (every other
 * fd is made close-on-exec before the exec). */
pid_t proc_spawn_reason(const struct spawn_opts *o, char *why, size_t len);

/* ppoll() on fds until one is ready (returns > 0, revents set), the
 * CLOCK_MONOTONIC deadline passes (returns 0; deadline 0 = none) or, when
 * honour_stop, a stop signal was received (returns PROC_STOP).  The stop
 * signals are unblocked only inside ppoll().  -1 on error (errno). */
#define PROC_STOP (-2)
int proc_poll(struct pollfd *fds, nfds_t n, double deadline, int honour_stop);
/* fn(arg) once, from this thread's next proc_poll() that is still waiting
 * at CLOCK_MONOTONIC time due (at its start when due is past): a higher
 * layer's work that must not wait for a long wait's end (the store's
 * batch of results, engine/store.h).  A later call replaces it; fn NULL
 * or due 0 cancels it.  Other threads' waits never call it, nor do the
 * waits of a process forked from this one. */
void proc_call_at(double due, void (*fn)(void *), void *arg);

/*
 * Captured output: a memfd that a child writes (it never blocks on it) and
 * that perturb keeps bounded.  capture_drain() hands what is new, in whole
 * lines, to feed (when set); once more than max bytes are held it punches
 * all but the last max / 2 of them out of the file (their pages are freed;
 * the file's size and the writer's offset stay) and counts them in
 * dropped.  proc_poll_capture() drains every CAPTURE_CHECK_S while it
 * waits, so that what a capture holds is at most max plus what the child
 * writes in CAPTURE_CHECK_S; call capture_drain(c, 1) once the child has
 * ended.  feed(arg, text, len, final) returns how much of text it took:
 * whole lines, or all of text when final (the output ended) or when text is
 * CAPTURE_CHUNK bytes without a newline (a longer line is cut there); text
 * is NUL-terminated after len.
 */
#define CAPTURE_CHECK_S 0.1
#define CAPTURE_CHUNK (256 * 1024)
#define CAPTURE_MIN_MAX (64 * 1024)	/* the smallest max: keeps any tail */

typedef size_t (*capture_feed)(void *arg, const char *text, size_t len, int final);

struct capture {
	int fd;			/* the memfd, -1 when not open */
	size_t max;		/* >= CAPTURE_MIN_MAX */
	capture_feed feed;	/* NULL: nothing reads the text as it comes */
	void *arg;
	uint64_t fed;		/* bytes handed to feed */
	uint64_t dropped;	/* bytes punched out: [0, dropped) */
	uint64_t size;		/* bytes written, as last seen */
};

/* A memfd named name; returns 0, or -1 (printed). */
int capture_open(struct capture *c, const char *name, size_t max, capture_feed feed, void *arg);
/* Feed and bound what is new; final: the writer is gone.  0, or -1 (printed). */
int capture_drain(struct capture *c, int final);
/* The last at most n bytes kept (malloc'd, NUL-terminated; *len without the
 * NUL); NULL with *len 0 when nothing is kept. */
char *capture_tail(const struct capture *c, size_t n, size_t *len);
void capture_close(struct capture *c);
/* capture_close(), but its memfd is kept, emptied, for the next
 * capture_open() (of any thread; a few are kept, the rest closed): only
 * when no process but perturb can hold it any more (runner.c: the run's
 * cgroup was empty at its end and nothing left it), else a straggler's
 * output would land in a later run's, and after a final capture_drain().  A run of /bin/true spent 10 us
 * making and closing two memfds. */
void capture_keep(struct capture *c);
/* fd is one perturb keeps open on purpose (for the tests' count of open
 * fds): a memfd capture_keep() keeps, or /dev/null for children's stdin. */
int proc_kept_fd(int fd);

/* proc_poll(), and capture_drain(caps[i], 0) every CAPTURE_CHECK_S. */
int proc_poll_capture(struct pollfd *fds, nfds_t n, double deadline, int honour_stop,
		      struct capture *caps, size_t n_caps);

/* SIGTERM (and SIGCONT) to process group pgid, wait up to grace_s for the
 * leader's pidfd to report its exit, then SIGKILL the group.  Does not reap. */
void proc_kill_group(pid_t pgid, int pidfd, double grace_s);

/* "exited with status 3" / "killed by signal 11 (Segmentation fault)". */
void proc_describe_status(int status, char *buf, size_t len);

/* cgroup_destroy(cg) (NULL: nothing), after giving what was just stopped a
 * moment to end (cgroup_settle), and a warning, once per perturb, naming
 * what (of command cmd) when processes were still in it: they had left its
 * process group. */
void proc_end_cgroup(struct cgroup *cg, const char *what, const char *cmd);

/*
 * Run argv (found on PATH) in folder cwd (NULL: perturb's) to its end, for
 * a command that prints little (sbatch, git): its stdout in *out
 * (malloc'd, "" when none).  -1 after an error() naming argv[0] and its
 * exit status or signal with its stderr when it cannot run or does not
 * exit 0; *out NULL then.
 */
int proc_capture(char *const *argv, const char *cwd, char **out);

/*
 * A run's escapees.  A root workload can leave its run's cgroup (it may
 * write its pid to any cgroup.procs; a cgroup namespace would not stop
 * it: without the hierarchy's nsdelegate option the kernel lets root move
 * a process into any cgroup it can name, and root can name them all).  So
 * while a run is watched, perturb is a child subreaper
 * (PR_SET_CHILD_SUBREAPER, counted: runs in threads): every process the
 * run starts whose parent ends comes to perturb instead of init, and at
 * the end of the run (its main process reaped, its cgroup killed) each
 * child that perturb's main thread did not have at the start is either
 * one of the run's, killed with its cgroup (reaped), one of another of
 * perturb's cgroups (a duet's other run, a daemon's orphan: left alone),
 * or outside them all: an escapee, killed and counted (reaped, not
 * counted, when it had ended by itself); its own children come to perturb
 * when it ends and are judged the same way, until none is left.
 * Needs /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN); without it,
 * or without a cgroup, nothing is watched.  In a duet, an escapee is
 * counted by the run that ends first.
 */
struct escape_watch {
	int active;
	pid_t *before;		/* the main thread's children at the start */
	size_t n_before;
};
void proc_escape_watch_begin(struct escape_watch *w, const struct cgroup *cg);
/* After cgroup_kill(cg): the escapees killed (>= 0); ends the watch. */
int proc_escape_watch_end(struct escape_watch *w, const struct cgroup *cg);

/* argv joined by spaces, for messages (malloc'd). */
char *proc_argv_string(char *const *argv);

#endif
