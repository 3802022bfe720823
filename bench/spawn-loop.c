/*
 * spawn-loop.c - the least a tool can do to run a program N times: a bare
 * posix_spawn + wait4 loop, for bench/spawn-peers.sh.
 *
 *   spawn-loop [-f | -c CGROUP] N PROGRAM [ARG...]
 *
 * -f: each run made with clone3(2) as fork(2) makes it (no CLONE_VM), then
 * execve; -c CGROUP: the same, the child created in the cgroup v2 folder
 * CGROUP (CLONE_INTO_CGROUP, Linux 5.7), as perturb starts its runs.  The
 * two side by side give the kernel's own cost of a process in a cgroup.
 * Prints the elapsed CLOCK_MONOTONIC seconds of the N runs; exit 1 when a
 * run could not be started or did not exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

extern char **environ;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* clone3 as fork, into the cgroup open at cgfd (-1: the loop's own),
 * then execve; the child's pid, or -1 (errno) */
static pid_t clone3_exec(int cgfd, char **argv)
{
	struct clone_args ca;
	long pid;

	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	if (cgfd >= 0) {
		ca.flags = CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)cgfd;
	}
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		execve(argv[0], argv, environ);
		_exit(127);
	}
	return (pid_t)pid;
}

int main(int argc, char **argv)
{
	int fork_like = 0, cgfd = -1, a = 1;
	long n;
	double t0;

	if (a < argc && !strcmp(argv[a], "-f")) {
		fork_like = 1;
		a++;
	} else if (a + 1 < argc && !strcmp(argv[a], "-c")) {
		fork_like = 1;
		cgfd = open(argv[a + 1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0) {
			fprintf(stderr, "spawn-loop: %s: %s\n", argv[a + 1], strerror(errno));
			return 1;
		}
		a += 2;
	}
	n = argc > a + 1 ? strtol(argv[a], NULL, 10) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: spawn-loop [-f | -c CGROUP] N PROGRAM [ARG...]\n");
		return 2;
	}
	argv += a + 1;
	t0 = now();
	for (long i = 0; i < n; i++) {
		struct rusage ru;
		pid_t pid;
		int st, e = 0;

		if (fork_like) {
			if ((pid = clone3_exec(cgfd, argv)) < 0)
				e = errno;
		} else {
			e = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
		}
		if (e) {
			fprintf(stderr, "spawn-loop: %s: %s\n", argv[0], strerror(e));
			return 1;
		}
		if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "spawn-loop: run %ld of %s failed\n", i + 1, argv[0]);
			return 1;
		}
	}
	printf("%.6f\n", now() - t0);
	return 0;
}
