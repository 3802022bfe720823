/*
 * User-space markers (instrumentation/markers.c): every flavour switches on
 * and off, patching code while other threads run it never crashes, and the
 * per-thread ring buffer loses nothing below its capacity and counts every
 * event it drops above.  The sites are tests/markers_site.c, one per
 * flavour.  Criterion runs each test in its own process, so patches and
 * buffers do not leak from one test into the next.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "instrumentation/markers.h"

void markers_site_none(long i);
void markers_site_nop(long i);
void markers_site_jump_generic(long i);
void markers_site_jump_optimized(long i);
void markers_site_static_key(long i);

static const struct {
	const char *name;	/* the site's name */
	void (*site)(long i);
	int can_record;		/* NONE and NOP never do */
} flavours[] = {
	{ "site_none", markers_site_none, 0 },
	{ "site_nop", markers_site_nop, 0 },
	{ "site_jump_generic", markers_site_jump_generic, 1 },
	{ "site_jump_optimized", markers_site_jump_optimized, 1 },
	{ "site_static_key", markers_site_static_key, 1 },
};
#define N_FLAVOURS (sizeof(flavours) / sizeof(flavours[0]))

struct tally {
	const char *name;	/* count events of this site only; NULL: all */
	int64_t n;
	int64_t bad;		/* events whose arguments are not (i, 2 i) */
	long next;		/* expected i of the next event, -1: any */
};

static int count_event(const struct marker_event *e, void *arg)
{
	struct tally *t = arg;
	const char *name = markers_site_name(e->site);
	if (t->name && (!name || strcmp(name, t->name)))
		return 0;
	t->n++;
	if (e->nargs != 2 || e->args[1] != 2 * e->args[0] ||
	    (t->next >= 0 && e->args[0] != t->next))
		t->bad++;
	if (t->next >= 0)
		t->next++;
	return 0;
}

static int64_t drained(const char *name, long first)
{
	struct tally t = { name, 0, 0, first };
	cr_assert_geq(markers_drain(count_event, &t), 0);
	cr_assert_eq(t.bad, 0, "%lld events of %s have wrong arguments",
		     (long long)t.bad, name ? name : "all");
	return t.n;
}

Test(markers, enable_and_disable_flip_every_flavour)
{
	markers_set_capacity(4096);
	for (size_t f = 0; f < N_FLAVOURS; f++) {
		const char *name = flavours[f].name;
		int want = flavours[f].can_record ? 100 : 0;
		long i;

		for (i = 0; i < 100; i++)
			flavours[f].site(i);
		cr_assert_eq(drained(NULL, -1), 0, "%s recorded while disabled", name);

		cr_assert_eq(markers_enable(name), flavours[f].can_record ? 1 : 0, "%s", name);
		for (i = 0; i < 100; i++)
			flavours[f].site(i);
		cr_assert_eq(drained(name, 0), want, "%s enabled", name);
		/* the other flavours' sites stay off */
		for (size_t g = 0; g < N_FLAVOURS; g++)
			if (g != f)
				flavours[g].site(1);
		cr_assert_eq(drained(NULL, -1), 0, "enabling %s switched another site on", name);

		cr_assert_geq(markers_disable(name), 0);
		for (i = 0; i < 100; i++)
			flavours[f].site(i);
		cr_assert_eq(drained(NULL, -1), 0, "%s recorded after being disabled", name);
	}
	cr_assert_eq(markers_drops(), 0);

	/* "all" switches every site that can record */
	cr_assert_eq(markers_enable("all"), 3);
	for (size_t f = 0; f < N_FLAVOURS; f++)
		flavours[f].site(7);
	cr_assert_eq(drained(NULL, -1), 3);
	cr_assert_eq(markers_disable(NULL), 3);
	for (size_t f = 0; f < N_FLAVOURS; f++)
		flavours[f].site(7);
	cr_assert_eq(drained(NULL, -1), 0);
	cr_assert_eq(markers_enable("no_such_site"), 0);
	markers_release();
}

struct runner {
	void (*site)(long i);
	volatile int *stop;
	long calls;
};

static void *run_site(void *arg)
{
	struct runner *r = arg;
	long i = 0;
	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
		r->site(i++);
		__atomic_store_n(&r->calls, i, __ATOMIC_RELAXED);
	}
	return NULL;
}

static long calls(const struct runner *r)
{
	return __atomic_load_n(&r[0].calls, __ATOMIC_RELAXED) +
	       __atomic_load_n(&r[1].calls, __ATOMIC_RELAXED);
}

/* Until the runners made `more` calls (bounded: a loaded machine may not
 * schedule them). */
static void wait_calls(const struct runner *r, long more)
{
	long c0 = calls(r);
	for (int k = 0; k < 100000 && calls(r) < c0 + more; k++)
		sched_yield();
}

/* Until each runner has run at least once (bounded at 10 s: under the
 * sanitizers on 2 busy cores a thread may wait long for its first slice). */
static void wait_both_ran(const struct runner *r)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (__atomic_load_n(&r[0].calls, __ATOMIC_RELAXED) > 0 &&
		    __atomic_load_n(&r[1].calls, __ATOMIC_RELAXED) > 0)
			return;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
}

/* 200 enable/disable cycles of one site while 2 threads run it; the main
 * thread drains meanwhile.  Any torn instruction would crash (SIGILL,
 * SIGSEGV) or record garbage arguments. */
static void patch_under_load(const char *name, void (*site)(long i))
{
	volatile int stop = 0;
	struct runner r[2] = { { site, &stop, 0 }, { site, &stop, 0 } };
	pthread_t th[2];
	struct tally t = { name, 0, 0, -1 };

	markers_set_capacity(1024);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, run_site, &r[k]), 0);
	wait_both_ran(r);
	wait_calls(r, 1000);
	for (int c = 0; c < 200; c++) {
		cr_assert_eq(markers_enable(name), 1);
		wait_calls(r, 100);
		cr_assert_eq(markers_disable(name), 1);
		cr_assert_geq(markers_drain(count_event, &t), 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	cr_assert_geq(markers_drain(count_event, &t), 0);
	cr_assert_eq(t.bad, 0, "%lld events with wrong arguments", (long long)t.bad);
	cr_assert(r[0].calls > 0 && r[1].calls > 0, "a runner never ran");
	cr_assert_leq((uint64_t)t.n + markers_drops(), (uint64_t)(r[0].calls + r[1].calls),
		      "more events than calls");
	cr_assert_gt((uint64_t)t.n + markers_drops(), 0, "the site never recorded while enabled");
	/* off again: the site's code is back to its disabled form */
	site(1);
	cr_assert_eq(drained(NULL, -1), 0);
	markers_release();
}

Test(markers, patching_static_key_while_two_threads_run_it, .timeout = 20)
{
	patch_under_load("site_static_key", markers_site_static_key);
}

Test(markers, patching_jump_optimized_while_two_threads_run_it, .timeout = 20)
{
	patch_under_load("site_jump_optimized", markers_site_jump_optimized);
}

Test(markers, flipping_jump_generic_while_two_threads_run_it, .timeout = 20)
{
	patch_under_load("site_jump_generic", markers_site_jump_generic);
}

Test(markers, ring_buffer_loses_nothing_below_capacity_and_counts_drops_above)
{
	markers_set_capacity(1000);	/* rounded up to 1024 */
	cr_assert_eq(markers_enable("site_static_key"), 1);
	for (long i = 0; i < 1024; i++)
		markers_site_static_key(i);
	cr_assert_eq(markers_drops(), 0);
	cr_assert_eq(drained("site_static_key", 0), 1024);

	for (long i = 0; i < 1500; i++)
		markers_site_static_key(i);
	cr_assert_eq(markers_drops(), 1500 - 1024);
	cr_assert_eq(drained("site_static_key", 0), 1024, "the oldest events are kept");

	/* drained, the buffer takes events again */
	markers_site_static_key(0);
	cr_assert_eq(drained(NULL, 0), 1);
	cr_assert_eq(markers_drops(), 1500 - 1024);
	markers_release();
}

Test(markers, events_drain_into_a_text_file)
{
	char path[] = "/tmp/perturb-markers-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	char line[256];
	int n = 0;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w+");
	cr_assert(f);
	cr_assert_eq(markers_enable("site_jump_optimized"), 1);
	for (long i = 0; i < 5; i++)
		markers_site_jump_optimized(i);
	cr_assert_eq(markers_write(f, MARKERS_TEXT), 5);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ts;
		int tid;
		char name[64];
		long a, b;
		cr_assert_eq(sscanf(line, "%llu %d %63s %ld %ld", &ts, &tid, name, &a, &b), 5, "%s", line);
		cr_assert_str_eq(name, "site_jump_optimized");
		cr_assert_eq(a, n);
		cr_assert_eq(b, 2 * n);
		n++;
	}
	cr_assert_eq(n, 5);
	fclose(f);
	unlink(path);
	markers_release();
}
