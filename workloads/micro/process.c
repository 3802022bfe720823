/*
 * process.c - process creation micro-benchmarks (LMbench lat_proc):
 * fork-exit and fork-exec.
 */
#include "micro.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Wait for pid; 0 when it exited with status 0. */
static int reap(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return micro_error("waitpid: %s", strerror(errno));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return micro_error("child process %d ended with status 0x%x", (int)pid, status);
	return 0;
}

static int fork_exit_op(struct micro_ctx *m)
{
	(void)m;
	pid_t pid = fork();
	if (pid < 0)
		return micro_error("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(0);
	return reap(pid);
}

const struct micro_info micro_fork_exit = {
	.name = "fork-exit",
	.help = "fork(2) a child that exits at once, wait for it",
	.op = fork_exit_op,
};

/* The child execs perturb-micro itself with `noop`, which exits at once:
 * no dependency on another program, and the same environment (so a
 * variant's LD_PRELOAD applies to the new image too). */
static int fork_exec_op(struct micro_ctx *m)
{
	pid_t pid = fork();
	if (pid < 0)
		return micro_error("fork: %s", strerror(errno));
	if (pid == 0) {
		char *argv[] = { "perturb-micro", "noop", NULL };
		execve(m->self_exe, argv, environ);
		_exit(127);
	}
	return reap(pid);
}

const struct micro_info micro_fork_exec = {
	.name = "fork-exec",
	.help = "fork(2) a child that execs perturb-micro noop (exits at once), wait for it",
	.op = fork_exec_op,
};
