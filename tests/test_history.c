/*
 * test_history.c - overhead across revisions (issue 24): a revision and a
 * label on every run, `perturb history`, its change points, `perturb
 * gate --history` and `perturb bisect`, through the real binary, on git
 * repositories made by the tests.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "lib/util.h"

TL_FIXTURE_DB("r.db")

TestSuite(history, .init = tl_setup, .fini = tl_teardown, .timeout = 240);

#define GIT "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main "

/* Run a shell command (printf-style) in the test's folder; its output,
 * trailing newline removed (malloc'd); the command must succeed. */
static char *sh(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	va_list ap;
	char *cmd;
	FILE *f;
	size_t k;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	cmd = xasprintf("cd '%s' && { %s; }", dir, sb.buf);
	strbuf_reset(&sb);
	f = popen(cmd, "r");
	cr_assert(f, "popen %s", cmd);
	while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, k);
	cr_assert_eq(pclose(f), 0, "command failed: %s", cmd);
	free(cmd);
	while (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = '\0';
	return sb.buf ? strbuf_detach(&sb) : xstrdup("");
}

/* A repository at dir/repo with one commit, tagged v1. */
static void make_repo(void)
{
	free(sh("mkdir repo && cd repo && " GIT "init -q . && echo a > f && " GIT "add f && "
		GIT "commit -qm one && " GIT "tag -a -m v1 v1"));
}

/* s.yaml: one workload printing value=V (V from the file dir/value, 100
 * when missing) for both variants; revision: REV when rev. */
static void write_study(const char *rev)
{
	char *yaml = xasprintf(
		"name: s\n"
		"repetitions: 3\n"
		"warmup: 0\n"
		"%s%s%s"
		"variants:\n"
		"  - {name: base}\n"
		"  - {name: traced}\n"
		"workloads:\n"
		"  - name: w\n"
		"    shell: 'echo value=$(cat %s/value 2>/dev/null || echo 100)'\n"
		"    metrics:\n"
		"      - {name: value, regex: 'value=([0-9.]+)', unit: x}\n",
		rev ? "revision: " : "", rev ? rev : "", rev ? "\n" : "", dir);
	tl_write(dir, "s.yaml", yaml);
	free(yaml);
}

static void run_ok(const char *label)
{
	struct cli_result r;

	cli_run(dir, &r, "run", "s.yaml", "--db", db, "-q", "--label", label, NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
}

Test(history, labels_and_revisions_are_stored_and_named)
{
	struct cli_result r;
	char *head;

	make_repo();
	write_study("repo");
	head = sh("git -C repo rev-parse HEAD");
	run_ok("first");
	free(sh("echo b >> repo/f"));
	run_ok("second");

	cli_run(dir, &r, "runs", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "first v1\n"), "%s", r.out);
	cr_assert(strstr(r.out, "second v1-dirty\n"), "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "runs", "--db", db, "--json", NULL);
	cr_assert(strstr(r.out, head), "%s", r.out);
	cr_assert(strstr(r.out, "\"label\": \"second\""), "%s", r.out);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM runs WHERE repo IS NOT NULL"), 2);

	/* --run takes a label wherever it takes an id */
	cli_run(dir, &r, "report", "--db", db, "--run", "second", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	run_ok("first");
	cli_run(dir, &r, "report", "--db", db, "--run", "first", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "ambiguous") && strstr(r.err, "runs 1, 3"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, "--run", "secnod", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "did you mean 'second'"), "%s", r.err);
	cli_result_release(&r);
	free(head);
}

Test(history, bad_labels_and_revisions_exit_2_writing_nothing)
{
	static const char *const bad_labels[] = { "12", "latest", "-2", "" };
	struct cli_result r;

	write_study(NULL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_labels); i++) {
		cli_run(dir, &r, "run", "s.yaml", "--db", db, "-q", "--label", bad_labels[i], NULL);
		cr_assert_eq(r.status, 2, "label '%s': %d", bad_labels[i], r.status);
		cr_assert(strstr(r.err, "--label takes"), "%s", r.err);
		cli_result_release(&r);
	}
	write_study("nothere");
	cli_run(dir, &r, "run", "s.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "s.yaml:4:11") && strstr(r.err, "is not a folder"), "%s", r.err);
	cli_result_release(&r);
	free(sh("mkdir plain"));
	write_study("plain");
	cli_run(dir, &r, "run", "s.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "not a git work tree"), "%s", r.err);
	cli_result_release(&r);
	cr_assert_not(tl_exists(db), "nothing written");
}
