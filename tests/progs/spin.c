/*
 * spin - known work for the reporter's known-truth tests: a busy loop of
 * N = BASE * (1 + PERTURB_SCALE) iterations (BASE from argv[1], default
 * 2000000; PERTURB_SCALE from the environment, default 0, e.g. 0.05 for
 * +5 %).  Prints "iterations=N" (exact: a deterministic metric) and
 * "elapsed_ns=T", the loop's own CLOCK_MONOTONIC time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double base = argc > 1 ? strtod(argv[1], NULL) : 2e6;
	const char *sc = getenv("PERTURB_SCALE");
	double scale = sc ? strtod(sc, NULL) : 0;
	unsigned long long n = (unsigned long long)(base * (1 + scale) + 0.5);
	volatile unsigned long long sink = 0;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long long i = 0; i < n; i++)
		sink += i;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("iterations=%llu\nelapsed_ns=%lld\n", n,
	       (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	return sink == 1;	/* 0: sink is a large sum */
}
