/*
 * micro.h - the contract between perturb-micro's framework and its
 * micro-benchmarks.
 *
 * Adding a micro-benchmark:
 *   1. write a function doing ONE operation per call (and, when it needs
 *      state, a setup and a teardown) in one of the files of this folder or
 *      a new one (a new file is picked up by the Makefile's wildcard);
 *   2. end it with `const struct micro_info micro_NAME = { ... };`;
 *   3. add one row X(NAME, "name") to MICRO_LIST in micros.h;
 *   4. write workloads/name.yaml (kind: micro, cmd: ["{micro}", name]).
 * The framework does everything else: option parsing, the iteration count,
 * the timing loop, subtracting the loop's own cost, repetitions, output.
 *
 * Rules for a micro:
 *  - op() does one operation and returns 0, or -1 after micro_error() (the
 *    run stops and perturb-micro exits 1); it never prints on success;
 *  - op() must not be elided by the compiler: results that nothing reads go
 *    through micro_consume() or an asm volatile barrier;
 *  - setup() runs once before any timing and may fork helper processes
 *    (which it must end in teardown(), also after a failure);
 *  - state lives in m->priv (setup allocates it, teardown frees it).
 */
#ifndef PERTURB_MICRO_H
#define PERTURB_MICRO_H

#include <stdint.h>

struct micro_ctx {
	void *priv;		/* the micro's own state */
	const char *self_exe;	/* absolute path of perturb-micro */
	const char *path;	/* --path: the file stat and open-close use (NULL: a temp file) */
};

struct micro_info {
	const char *name;
	const char *help;	/* one line: what one operation is */
	int (*setup)(struct micro_ctx *m);		/* optional; 0 or -1 */
	int (*op)(struct micro_ctx *m);			/* one operation; 0 or -1 */
	void (*teardown)(struct micro_ctx *m);		/* optional */
	/*
	 * Optional: the part of op() that is not what the micro measures,
	 * timed by the framework like op() and subtracted from it instead of
	 * the empty loop (LMbench lat_ctx subtracts the cost of passing the
	 * token through a pipe within one process from the ring's time).
	 */
	int (*baseline)(struct micro_ctx *m);
	/* Events per op() call the result is given per (ctxsw: one round
	 * trip is 2 context switches); 0 means 1. */
	unsigned events_per_op;
};

/* Print "perturb-micro: error: NAME: ..." on stderr; returns -1. */
int micro_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Make the compiler believe p's memory is read and written. */
static inline void micro_consume(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

#endif
