/*
 * spawn-loop.c - the least a tool can do to run a program N times: a bare
 * posix_spawn + wait4 loop, for bench/spawn-peers.sh.
 *
 *   spawn-loop N PROGRAM [ARG...]
 *
 * Prints the elapsed CLOCK_MONOTONIC seconds of the N runs; exit 1 when a
 * run could not be started or did not exit 0.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[1], NULL, 10) : 0;
	double t0;

	if (n <= 0) {
		fprintf(stderr, "usage: spawn-loop N PROGRAM [ARG...]\n");
		return 2;
	}
	t0 = now();
	for (long i = 0; i < n; i++) {
		struct rusage ru;
		pid_t pid;
		int st, e = posix_spawn(&pid, argv[2], NULL, NULL, argv + 2, environ);

		if (e) {
			fprintf(stderr, "spawn-loop: %s: %s\n", argv[2], strerror(e));
			return 1;
		}
		if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "spawn-loop: run %ld of %s failed\n", i + 1, argv[2]);
			return 1;
		}
	}
	printf("%.6f\n", now() - t0);
	return 0;
}
