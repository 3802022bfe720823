/*
 * ipc.c - two-process micro-benchmarks: pipe-latency (LMbench lat_pipe,
 * perf bench sched pipe) and ctxsw (LMbench lat_ctx with two processes and
 * no working set).
 *
 * Both fork an echo process in setup: it reads one byte from one pipe and
 * writes it back on another until end of file.  One operation is one round
 * trip: parent writes, echo reads and writes back, parent reads.
 */
#include "micro.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct echo_state {
	int to[2], from[2];	/* parent -> echo, echo -> parent */
	int self[2];		/* ctxsw's baseline: a pipe to itself */
	pid_t pid;
	char byte;
	int pinned;
	cpu_set_t saved;	/* affinity before ctxsw pinned it */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void echo_loop(struct echo_state *s)
{
	char c;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(s->to[1]);
	close(s->from[0]);
	for (;;) {
		ssize_t n = read(s->to[0], &c, 1);
		if (n == 0)
			_exit(0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (write(s->from[1], &c, 1) != 1)
			_exit(1);
	}
}

static int echo_setup(struct micro_ctx *m)
{
	struct echo_state *s = calloc(1, sizeof(*s));
	if (!s)
		return micro_error("out of memory");
	s->to[0] = s->to[1] = s->from[0] = s->from[1] = s->self[0] = s->self[1] = -1;
	s->pid = -1;
	m->priv = s;
	if (pipe2(s->to, O_CLOEXEC) < 0 || pipe2(s->from, O_CLOEXEC) < 0)
		return micro_error("pipe: %s", strerror(errno));
	s->pid = fork();
	if (s->pid < 0)
		return micro_error("fork: %s", strerror(errno));
	if (s->pid == 0)
		echo_loop(s);
	close_fd(&s->to[0]);
	close_fd(&s->from[1]);
	return 0;
}

static void echo_teardown(struct micro_ctx *m)
{
	struct echo_state *s = m->priv;
	if (!s)
		return;
	close_fd(&s->to[1]);	/* the echo process reads end of file and exits */
	close_fd(&s->from[0]);
	close_fd(&s->to[0]);
	close_fd(&s->from[1]);
	close_fd(&s->self[0]);
	close_fd(&s->self[1]);
	if (s->pid > 0) {
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (s->pinned)
		sched_setaffinity(0, sizeof(s->saved), &s->saved);
	free(s);
	m->priv = NULL;
}

static int round_trip(struct micro_ctx *m)
{
	struct echo_state *s = m->priv;
	if (write(s->to[1], &s->byte, 1) != 1)
		return micro_error("write to the echo process: %s", strerror(errno));
	if (read(s->from[0], &s->byte, 1) != 1)
		return micro_error("read from the echo process: %s",
				   errno ? strerror(errno) : "it exited");
	return 0;
}

const struct micro_info micro_pipe_latency = {
	.name = "pipe-latency",
	.help = "round trip of 1 byte between two processes through two pipes (not pinned)",
	.setup = echo_setup,
	.op = round_trip,
	.teardown = echo_teardown,
};

/*
 * ctxsw: both processes pinned to the CPU this one is on, so that every
 * hop of the token is a context switch (two per round trip).  The cost of
 * the pipe operations themselves - the same writes and reads within one
 * process, no switch - is the baseline subtracted (lat_ctx's overhead).
 */
static int ctxsw_setup(struct micro_ctx *m)
{
	cpu_set_t one;
	int cpu = sched_getcpu();
	struct echo_state *s;

	if (echo_setup(m) < 0)
		return -1;
	s = m->priv;
	/* The echo process is already running: pin it too (by pid). */
	if (cpu >= 0 && sched_getaffinity(0, sizeof(s->saved), &s->saved) == 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0 ||
		    sched_setaffinity(s->pid, sizeof(one), &one) < 0)
			return micro_error("cannot pin to CPU %d: %s", cpu, strerror(errno));
		s->pinned = 1;
	}
	if (pipe2(s->self, O_CLOEXEC) < 0)
		return micro_error("pipe: %s", strerror(errno));
	return 0;
}

/* One round trip's pipe work without the switches: two hops, each a write
 * and a read, through a pipe to itself. */
static int ctxsw_baseline(struct micro_ctx *m)
{
	struct echo_state *s = m->priv;
	for (int hop = 0; hop < 2; hop++) {
		if (write(s->self[1], &s->byte, 1) != 1 || read(s->self[0], &s->byte, 1) != 1)
			return micro_error("pipe to itself: %s", strerror(errno));
	}
	return 0;
}

const struct micro_info micro_ctxsw = {
	.name = "ctxsw",
	.help = "context switch: token passing between two processes pinned to one CPU, "
		"pipe cost subtracted (lat_ctx -s 0 2)",
	.setup = ctxsw_setup,
	.op = round_trip,
	.teardown = echo_teardown,
	.baseline = ctxsw_baseline,
	.events_per_op = 2,
};
