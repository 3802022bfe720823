/*
 * touch - a workload with known software-event counts, for the counter
 * tests.
 *
 *   touch [-p PAGES] [-s SLEEPS] [-c CHILDREN] [-x CODE]
 *
 * Forks CHILDREN children first; then every process (the children and the
 * parent) maps PAGES fresh anonymous pages (transparent huge pages off)
 * and writes one byte to each (>= PAGES page faults), and sleeps 1 ms
 * SLEEPS times (>= SLEEPS context switches).  The parent waits for its
 * children, then exits with CODE (default 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void work(long pages, long sleeps)
{
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *p;

	if (pages > 0) {
		p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("touch: mmap");
			exit(2);
		}
		madvise((void *)p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
		for (long i = 0; i < pages; i++)
			p[i * psz] = 1;
	}
	for (long i = 0; i < sleeps; i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	long pages = 0, sleeps = 0, children = 0, code = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		long v = atol(argv[i + 1]);
		if (!strcmp(argv[i], "-p"))
			pages = v;
		else if (!strcmp(argv[i], "-s"))
			sleeps = v;
		else if (!strcmp(argv[i], "-c"))
			children = v;
		else if (!strcmp(argv[i], "-x"))
			code = v;
		else {
			fprintf(stderr, "touch: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	for (long i = 0; i < children; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("touch: fork");
			return 2;
		}
		if (!pid) {
			work(pages, sleeps);
			_exit(0);
		}
	}
	work(pages, sleeps);
	while (wait(NULL) > 0)
		;
	return (int)code;
}
