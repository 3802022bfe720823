/*
 * watchdog - run a command when a process ends: the test daemons of
 * tests/slurm-cluster.sh are stopped by it when their test is killed (a
 * Criterion timeout, a crash) before its .fini could stop them.
 *
 *   watchdog PID CMD [ARG]...
 *
 * Leaves the caller's session first (a ^C or a hang-up meant for the tests
 * does not end it), then blocks until process PID has ended - PID need not
 * be its parent: a pidfd becomes readable when it ends - and execs CMD.  A
 * PID already gone runs CMD at once.  SIGTERM ends it without running CMD
 * (the cluster's own stop ends its watchdog first).  Exit status 2 on a
 * usage error, 127 when CMD cannot be run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Until pid has ended. */
static void wait_end(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (fd >= 0) {
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		close(fd);
		return;
	}
	if (errno == ESRCH)
		return;
	/* no pidfd (a kernel before 5.3): ask every 100 ms */
	while (kill(pid, 0) == 0 || errno == EPERM) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	char *end;
	long pid;

	if (argc < 3) {
		fprintf(stderr, "usage: watchdog PID CMD [ARG]...\n");
		return 2;
	}
	errno = 0;
	pid = strtol(argv[1], &end, 10);
	if (errno || *end || pid <= 0) {
		fprintf(stderr, "watchdog: not a pid: %s\n", argv[1]);
		return 2;
	}
	signal(SIGTERM, SIG_DFL);
	setsid();
	wait_end((pid_t)pid);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "watchdog: cannot run %s: %s\n", argv[2], strerror(errno));
	return 127;
}
