/*
 * skips.c - make every skipped test visible.
 *
 * Criterion's closing "Synthesis" line counts only the tests that ran, so a
 * test skipped for want of a tool (qemu, a static C library, root) vanishes
 * from it.  These report hooks, run by Criterion's runner process, collect
 * each skipped test with its reason and print, after the last test:
 *
 *   perturb-tests: 2 skipped:
 *     qemu/boots_are_abba: qemu-system-x86_64 is missing (Debian package ...)
 *     ...
 *   229 passed, 0 failed, 2 skipped
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

static struct skipped *skips;
static size_t n_skips, alloc_skips;

ReportHook(POST_TEST)(struct criterion_test_stats *stats)
{
	const struct criterion_test *t = stats->test;
	char *name;

	if (stats->test_status != CR_STATUS_SKIPPED)
		return;
	if (n_skips == alloc_skips) {
		size_t na = alloc_skips ? 2 * alloc_skips : 16;
		struct skipped *p = realloc(skips, na * sizeof(*p));
		if (!p)
			return;
		skips = p;
		alloc_skips = na;
	}
	if (asprintf(&name, "%s/%s", t->category, t->name) < 0)
		return;
	skips[n_skips].name = name;
	skips[n_skips].why = strdup(stats->message && *stats->message ? stats->message
								  : "(no reason given)");
	n_skips++;
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	size_t failed = stats->tests_failed + stats->tests_crashed;

	if (n_skips) {
		printf("perturb-tests: %zu skipped:\n", n_skips);
		for (size_t i = 0; i < n_skips; i++)
			printf("  %s: %s\n", skips[i].name, skips[i].why ? skips[i].why : "");
	}
	/* Not stats->tests_skipped: that counts the tests a --filter left out. */
	printf("%zu passed, %zu failed, %zu skipped\n", stats->tests_passed, failed, n_skips);
	fflush(stdout);
	for (size_t i = 0; i < n_skips; i++) {
		free(skips[i].name);
		free(skips[i].why);
	}
	free(skips);
	skips = NULL;
	n_skips = alloc_skips = 0;
}
