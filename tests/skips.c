/*
 * skips.c - make every skipped and every failed test visible at the end.
 *
 * Criterion's closing "Synthesis" line counts only the tests that ran, so a
 * test skipped for want of a tool (qemu, a static C library, root) vanishes
 * from it; and a failure is said where it happened, hundreds of lines above
 * the end, where a CI log's tail does not reach.  These report hooks, run by
 * Criterion's runner process, collect each skipped test with its reason and
 * each failed one with its first failed assertion (or how it crashed), and
 * print, after the last test:
 *
 *   perturb-tests: 2 skipped:
 *     qemu/boots_are_abba: qemu-system-x86_64 is missing (Debian package ...)
 *     ...
 *   perturb-tests: 1 failed:
 *     gate/x: tests/test_gate.c:120: the gate said PASS
 *   229 passed, 1 failed, 2 skipped
 *
 * The last line is the plain "N passed, N failed, N skipped" summary (failed
 * counts crashed tests too).
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct skipped {
	char *name, *why;
};

struct list {
	struct skipped *v;
	size_t n, alloc;
};

static struct list skips, fails;

/* Keeps NAME and WHY (both allocated), or frees them. */
static void list_add(struct list *l, char *name, char *why)
{
	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 16;
		struct skipped *p = realloc(l->v, na * sizeof(*p));
		if (!p) {
			free(name);
			free(why);
			return;
		}
		l->v = p;
		l->alloc = na;
	}
	l->v[l->n].name = name;
	l->v[l->n].why = why;
	l->n++;
}

/* The first line of a failed test's first failed assertion, or how it ended. */
static char *why_failed(const struct criterion_test_stats *stats)
{
	char *why = NULL;

	for (const struct criterion_assert_stats *a = stats->asserts; a; a = a->next) {
		if (a->passed)
			continue;
		const char *m = a->message && *a->message ? a->message : "(an assertion)";
		int len = (int)strcspn(m, "\n");
		if (asprintf(&why, "%s:%u: %.*s%s", a->file ? a->file : "?", a->line,
			     len > 300 ? 300 : len, m, m[len] || len > 300 ? " ..." : "") < 0)
			why = NULL;
		return why;
	}
	if (stats->timed_out)
		return strdup("timed out");
	if (stats->crashed || stats->signal) {
		if (asprintf(&why, "crashed (signal %d)", stats->signal) < 0)
			why = NULL;
		return why;
	}
	if (asprintf(&why, "exit status %d", stats->exit_code) < 0)
		why = NULL;
	return why;
}

ReportHook(POST_TEST)(struct criterion_test_stats *stats)
{
	const struct criterion_test *t = stats->test;
	char *name;
	bool skipped = stats->test_status == CR_STATUS_SKIPPED;

	if (!skipped && stats->test_status != CR_STATUS_FAILED)
		return;
	if (asprintf(&name, "%s/%s", t->category, t->name) < 0)
		return;
	if (skipped)
		list_add(&skips, name,
			 strdup(stats->message && *stats->message ? stats->message
								  : "(no reason given)"));
	else
		list_add(&fails, name, why_failed(stats));
}

/* Prints "perturb-tests: N WHAT:" and each entry, then empties the list. */
static void list_print(struct list *l, const char *what)
{
	if (l->n) {
		printf("perturb-tests: %zu %s:\n", l->n, what);
		for (size_t i = 0; i < l->n; i++)
			printf("  %s: %s\n", l->v[i].name, l->v[i].why ? l->v[i].why : "");
	}
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].why);
	}
	free(l->v);
	*l = (struct list){ 0 };
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	size_t failed = stats->tests_failed + stats->tests_crashed;
	size_t n_skips = skips.n;

	list_print(&skips, "skipped");
	list_print(&fails, "failed");
	/* Not stats->tests_skipped: that counts the tests a --filter left out. */
	printf("%zu passed, %zu failed, %zu skipped\n", stats->tests_passed, failed, n_skips);
	fflush(stdout);
}
