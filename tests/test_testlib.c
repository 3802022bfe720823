/*
 * test_testlib.c - the test library's promise about folders (testlib.h,
 * tl_tmpdir): a test's folder is removed whatever ends the test, and a
 * folder left behind is reported and fails the run.
 *
 * Each case runs this very program again (perturb-tests --filter) on one
 * of the probes below: the probes act only in such a nested run, where
 * PERTURB_TEST_PROBE names a file into which each writes the folder it
 * made; in the ordinary run they return at once.
 */
#include <criterion/criterion.h>

#include "lib/util.h"
#include "testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_ENV "PERTURB_TEST_PROBE"

/* A folder of tl_tmpdir(), its path written into the probe's file. */
static void probe_dir(void)
{
	char *dir = tl_tmpdir();
	FILE *f = fopen(getenv(PROBE_ENV), "w");

	cr_assert(f, "%s", getenv(PROBE_ENV));
	fputs(dir, f);
	fclose(f);
	free(dir);
}

Test(testlib_probe, skips)
{
	if (!getenv(PROBE_ENV))
		return;
	probe_dir();
	cr_skip_test("a probe of test_testlib.c");
}

Test(testlib_probe, fails)
{
	if (!getenv(PROBE_ENV))
		return;
	probe_dir();
	cr_assert_fail("a probe of test_testlib.c");
}

/* A process of the test makes a folder and is killed: the test passes. */
Test(testlib_probe, leaves_a_folder)
{
	pid_t pid;
	int st;

	if (!getenv(PROBE_ENV))
		return;
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		probe_dir();
		raise(SIGKILL);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
}

struct nested {
	int status;	/* exit status, or 128 + signal */
	char *out;	/* stdout and stderr */
	char *dir;	/* the folder the probe made */
};

/* perturb-tests --filter testlib_probe/PROBE, in a process of its own. */
static void run_probe(const char *dir, const char *probe, struct nested *n)
{
	char *file = xasprintf("%s/probe", dir), *outp = xasprintf("%s/out", dir);
	char *filter = xasprintf("--filter=testlib_probe/%s", probe);
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		/* a runner of its own, not a worker of this one */
		unsetenv("BXFI_MAP");
		setenv(PROBE_ENV, file, 1);
		execl(perturb_self_exe(), "perturb-tests", filter, "--jobs=1", (char *)NULL);
		_exit(127);
	}
	n->status = cli_wait(pid);
	n->out = read_file(outp, NULL);
	n->dir = read_file(file, NULL);
	cr_assert(n->out && n->dir, "the probe %s did not run: %s", probe,
		  n->out ? n->out : "");
	free(file);
	free(outp);
	free(filter);
}

static void nested_release(struct nested *n)
{
	free(n->out);
	free(n->dir);
}

/* The probe's folder is gone when the nested run ends, not reported; the
 * run passes when the probe does. */
static void expect_clean(const char *probe, int passes)
{
	char *dir = tl_tmpdir();
	struct nested n;

	run_probe(dir, probe, &n);
	cr_expect_eq(n.status == 0, passes, "the probe %s: status %d: %s", probe, n.status, n.out);
	cr_expect(!tl_exists(n.dir), "the probe %s left %s", probe, n.dir);
	cr_expect(!strstr(n.out, "left its folder"), "%s", n.out);
	nested_release(&n);
	tl_rmtree(dir);
	free(dir);
}

Test(testlib, a_skipped_test_leaves_no_folder)
{
	expect_clean("skips", 1);
}

Test(testlib, a_failed_test_leaves_no_folder)
{
	expect_clean("fails", 0);
}

/* tests/skips.c: a failed test is named again after the last test, with its
 * first failed assertion, as a skipped one is with its reason: a CI log's
 * tail is all a reader may get. */
Test(testlib, the_failed_and_the_skipped_tests_are_listed_at_the_end)
{
	char *dir = tl_tmpdir(), *sum;
	struct nested n;

	run_probe(dir, "fails", &n);
	sum = strstr(n.out, "perturb-tests: 1 failed:\n  testlib_probe/fails: ");
	cr_assert(sum && strstr(sum, "test_testlib.c:") &&
		  strstr(sum, ": a probe of test_testlib.c\n0 passed, 1 failed, 0 skipped\n"),
		  "%s", n.out);
	nested_release(&n);
	run_probe(dir, "skips", &n);
	cr_assert(strstr(n.out, "perturb-tests: 1 skipped:\n  testlib_probe/skips: a probe of "
			 "test_testlib.c\n0 passed, 0 failed, 1 skipped\n"), "%s", n.out);
	nested_release(&n);
	tl_rmtree(dir);
	free(dir);
}

Test(testlib, a_folder_left_behind_fails_the_run)
{
	char *dir = tl_tmpdir(), *want;
	struct nested n;

	run_probe(dir, "leaves_a_folder", &n);
	want = xasprintf("testlib_probe/leaves_a_folder left its folder %s (removed)", n.dir);
	cr_expect(strstr(n.out, want), "no '%s' in:\n%s", want, n.out);
	cr_expect_neq(n.status, 0, "a folder was left and the run passed: %s", n.out);
	cr_expect(!tl_exists(n.dir), "the check did not remove %s", n.dir);
	free(want);
	nested_release(&n);
	tl_rmtree(dir);
	free(dir);
}

/*
 * tests/run.sh, `make test`'s runner: the tests that build guest kernels
 * and lttng-modules run in the background of the others, said up front
 * with their expected time, and the two runs add up to one summary, every
 * test counted and every skip listed.  TESTS here is a script that plays
 * perturb-tests: its --filter says which run it is.
 */
static const char fake_tests[] =
	"#!/bin/sh\n"
	"echo \"$*\" >>\"$0.args\"\n"
	"case $1 in\n"
	"--filter=@*|--filter) case $2 in\n"
	"  @*) [ -n \"${CRASH_SLOW:-}\" ] && exit 134\n"
	"      printf 'perturb-tests: 1 skipped:\\n  kernels/k: no tools\\n'\n"
	"      echo '1 passed, 0 failed, 1 skipped'; exit 0 ;;\n"
	"  '!'*) echo fast-output\n"
	"      [ -n \"${FAST_FAILS:-}\" ] && printf 'perturb-tests: 2 failed:\\n  a/x: t.c:7: boom\\n"
	"  a/y: timed out\\n'\n"
	"      echo \"3 passed, ${FAST_FAILS:-0} failed, 0 skipped\"\n"
	"      exit ${FAST_FAILS:-0} ;;\n"
	"  *) echo '1 passed, 0 failed, 0 skipped'; exit 0 ;;\n"
	"  esac ;;\n"
	"esac\n"
	"exit 9\n";

/* run.sh on the fake with env (a shell assignment or ""); its output. */
static char *run_sh(const char *tdir, const char *env, const char *args, int *status)
{
	const char *src = getenv("PERTURB_SRC");
	char *cmd, *out, *path;

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	cmd = xasprintf("cd %s && %s PERTURB_CACHE=%s/cache sh %s/tests/run.sh %s/tests %s "
			">%s/out 2>&1", tdir, env, tdir, src, tdir, args, tdir);
	*status = system(cmd);
	free(cmd);
	path = xasprintf("%s/out", tdir);
	out = read_file(path, NULL);
	free(path);
	cr_assert(out);
	return out;
}

Test(testlib_run, the_slow_tests_run_beside_the_others_and_one_summary_counts_all)
{
	char *tdir = tl_tmpdir(), *out, *args;
	int st;

	tl_write(tdir, "tests", fake_tests);
	args = xasprintf("%s/tests", tdir);
	cr_assert_eq(chmod(args, 0755), 0);
	free(args);
	out = run_sh(tdir, "", "--verbose", &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
	/* said up front, before any test ran: what is slow, how long, where */
	char *said = strstr(out, "make test: slow: kernels/*|qemu/lttng_kernel_events_are_traced_"
			    "inside_the_guest build two guest kernels and lttng-modules once into ");
	cr_assert(said && strstr(out, " min on ") && said < strstr(out, "fast-output"), "%s", out);
	cr_assert(strstr(out, "perturb-tests: 1 skipped:\n  kernels/k: no tools\n"), "%s", out);
	cr_assert(strstr(out, "make test: 4 passed, 0 failed, 1 skipped (both runs)\n"), "%s", out);
	/* each run with the caller's arguments */
	args = xasprintf("%s/tests.args", tdir);
	free(out);
	out = read_file(args, NULL);
	cr_assert(strstr(out, "--filter @(kernels/*|qemu/lttng_kernel_events_are_traced_inside_"
			 "the_guest) --verbose\n") &&
		  strstr(out, "--filter !(kernels/*|qemu/lttng_kernel_events_are_traced_inside_"
			  "the_guest) --verbose\n") && tl_count_lines(out) == 2, "%s", out);
	free(out);

	/* a failure in either run fails make test; a run that crashed before
	 * its summary is said */
	out = run_sh(tdir, "FAST_FAILS=2", "", &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s", out);
	cr_assert(strstr(out, "make test: 4 passed, 2 failed, 1 skipped (both runs)"), "%s", out);
	/* the failed tests named again in the last lines, where a CI log's
	 * tail reaches, after the slow run's output */
	char *last = strstr(out, "make test: failed: a/x: t.c:7: boom\n"
				 "make test: failed: a/y: timed out\n"
				 "make test: 4 passed, 2 failed");
	cr_assert(last && last > strstr(out, "kernels/k: no tools"), "%s", out);
	free(out);
	out = run_sh(tdir, "CRASH_SLOW=1", "", &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s", out);
	cr_assert(strstr(out, "make test: 1 of the two runs ended without its summary"), "%s", out);
	free(out);

	/* built already: said so */
	for (int i = 0; i < 2; i++) {
		char *d = xasprintf("%s/cache/kernels/k%d", tdir, i);
		cr_assert_eq(mkdir_p(d, 0755), 0);
		tl_write(d, "bzImage", "");
		free(d);
	}
	char *m = xasprintf("%s/cache/kernel-debian/lttng-modules-2-6.1/lib/modules/6.1", tdir);
	cr_assert_eq(mkdir_p(m, 0755), 0);
	tl_write(m, "modules.dep", "");
	free(m);
	out = run_sh(tdir, "", "", &st);
	cr_assert(strstr(out, "make test: the guest kernels and lttng-modules are in "), "%s", out);
	free(out);

	/* tests chosen by the caller: one run, as asked */
	unlink(args);
	out = run_sh(tdir, "", "--filter 'util/*'", &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
	cr_assert_not(strstr(out, "make test:"), "%s", out);
	free(out);
	out = read_file(args, NULL);
	cr_assert_str_eq(out, "--filter util/*\n");
	free(out);
	free(args);
	tl_rmtree(tdir);
	free(tdir);
}
