/*
 * sleeper - a process that waits forever (or a while), for process-group,
 * time-out and stop tests.
 *
 *   sleeper [-i] [-c N] [-k] [-t SECONDS] [-p TEXT]...
 *
 * Then, in this order: -i ignore SIGTERM (children too); print each -p TEXT
 * as a line on stdout; fork N children that wait forever, printing "child
 * PID" for each (before any of the following); -k send SIGTERM to the parent; then pause, or exit 0 after
 * SECONDS with -t.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int ignore = 0, children = 0, killparent = 0;
	double secs = -1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-i"))
			ignore = 1;
		else if (!strcmp(argv[i], "-k"))
			killparent = 1;
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			children = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			i++;
		else {
			fprintf(stderr, "sleeper: bad argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (ignore)
		signal(SIGTERM, SIG_IGN);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-p"))
			printf("%s\n", argv[++i]);
		else if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-t"))
			i++;
	fflush(stdout);
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			for (;;)
				pause();
		printf("child %d\n", (int)pid);
	}
	fflush(stdout);
	if (killparent)
		kill(getppid(), SIGTERM);
	if (secs >= 0) {
		struct timespec ts = { (time_t)secs,
				       (long)((secs - (time_t)secs) * 1e9) };
		while (nanosleep(&ts, &ts))
			;
		return 0;
	}
	for (;;)
		pause();
}
