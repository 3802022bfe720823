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
