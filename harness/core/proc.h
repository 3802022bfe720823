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
	 * When non-NULL (cgroup.h) the child moves itself into this cgroup
	 * before its exec, so that everything it starts stays in it.  The
	 * child is then created as with attach (which may be NULL), so that
	 * the move happens before *started is taken, outside the timed
	 * window.  A failed move is a set-up failure ("cannot move into
	 * cgroup ...").
	 */
	struct cgroup *cgroup;
};

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
 * A daemon: started before a variant's runs, stopped after, in folder cwd
 * (NULL = perturb's).  Its stdout and
 * stderr go to log_path (appended).  Readiness: ready_re (regex on its output,
 * waited for at most timeout_s) or ready_delay_s (slept).  A daemon that
 * exits before it is ready is an error.  With ready_re the output goes
 * through a logger process (a fork of perturb) that appends it to the log
 * and matches ready_re on each line (cut at 16 KiB) and on the incomplete
 * last line; it drains until EOF so that the daemon never blocks on output.
 * Errors print the tail of what the daemon wrote to the log.
 */
struct daemon;
int daemon_start(char *const *argv, char *const *envp, const char *cwd,
		 const char *log_path, double ready_delay_s, const regex_t *ready_re,
		 double timeout_s, struct daemon **out);
/* SIGTERM to its group, SIGKILL after a grace period; reaps it.  Returns 0,
 * or -1 when it had died on its own before (printed). Frees d. */
int daemon_stop(struct daemon *d);
pid_t daemon_pid(const struct daemon *d);

/*
 * Background load: a supervisor process restarts argv each time it ends,
 * until background_stop(), in folder cwd (NULL = perturb's).  Output to log_path.  Returns -1 (printed) when
 * the command cannot be started at all.  A load that ends within 50 ms of
 * its start 5 times in a row is restarted once a second only (warning in the
 * log).  The supervisor gets SIGTERM when the thread that started it ends
 * (PR_SET_PDEATHSIG): call this from perturb's main thread.
 */
struct background;
int background_start(char *const *argv, char *const *envp, const char *cwd,
		     const char *log_path, struct background **out);
/* Stops the supervisor and the load's process group; frees b.  Returns the
 * number of times the load was started through *starts when non-NULL. */
int background_stop(struct background *b, long *starts);
pid_t background_pid(const struct background *b);

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

/* SIGTERM (and SIGCONT) to process group pgid, wait up to grace_s for the
 * leader's pidfd to report its exit, then SIGKILL the group.  Does not reap. */
void proc_kill_group(pid_t pgid, int pidfd, double grace_s);

/* "exited with status 3" / "killed by signal 11 (Segmentation fault)". */
void proc_describe_status(int status, char *buf, size_t len);

/* cgroup_destroy(cg) (NULL: nothing) and a warning naming what (of command
 * cmd) when processes were still in it: they had left its process group. */
void proc_end_cgroup(struct cgroup *cg, const char *what, const char *cmd);

/* argv joined by spaces, for messages (malloc'd). */
char *proc_argv_string(char *const *argv);

#endif
