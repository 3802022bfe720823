/*
 * test_selfcheck.c - the noise floor and perturb's own perturbation, through
 * the real binary: `perturb run --target-ci` stops at the target or when
 * --max-time is spent and says which, `--self-check` adds its A/A pair, and
 * the man page names every command.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "lib/util.h"

TL_FIXTURE_DB("r.db")

TestSuite(selfcheck, .init = tl_setup, .fini = tl_teardown, .timeout = 60);

/* Two variants of one shell workload, 3 measured runs each. */
static void write_study(const char *shell)
{
	char *yaml = xasprintf(
		"name: tci\n"
		"baseline: base\n"
		"repetitions: 3\n"
		"warmup: 0\n"
		"seed: 7\n"
		"variants:\n"
		"  - {name: base}\n"
		"  - {name: other}\n"
		"workloads:\n"
		"  - name: w\n"
		"    shell: '%s'\n"
		"    metrics:\n"
		"      - {name: v, regex: 'v= *([0-9]+)'}\n", shell);
	tl_write(dir, "e.yaml", yaml);
	free(yaml);
}

Test(selfcheck, target_ci_stops_at_the_target)
{
	struct cli_result r;

	/* 50 ms sleeps: the wall dilation's intervals are far inside 50 % */
	write_study("sleep 0.05; echo v=1");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--target-ci", "50%", "--max-time", "30s",
		NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.err, "target reached: widest half-width "), "%s", r.err);
	cr_assert(strstr(r.err, "% <= 50 %"), "%s", r.err);
	cr_assert(!strstr(r.err, "time spent"), "%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results"),
		     cli_sql_int(db, "SELECT COUNT(*) FROM plan"));
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM runs WHERE status = 'completed'"), 1);
	cli_result_release(&r);
}

Test(selfcheck, target_ci_stops_when_max_time_is_spent)
{
	struct cli_result r;
	int64_t n;

	/* a noisy metric next to a wall time no target of 0.001 % is met by */
	write_study("echo v=$(od -An -N2 -tu2 /dev/urandom)");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--target-ci", "0.001%", "--max-time",
		"1s", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.err, "time spent: widest half-width "), "%s", r.err);
	cr_assert(strstr(r.err, "> 0.001 %"), "%s", r.err);
	n = cli_sql_int(db, "SELECT COUNT(*) FROM plan");
	cr_assert_gt(n, 6, "no round was added: %lld entries", (long long)n);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results"), n);
	/* added rounds are interleaved rounds: each pair once a round */
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM (SELECT round FROM plan GROUP BY round"
				 " HAVING COUNT(*) != 2)"), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(DISTINCT variant || repetition) FROM plan"), n);
	cli_result_release(&r);
}

Test(selfcheck, target_ci_options_are_checked)
{
	struct cli_result r;

	write_study("echo v=1");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--max-time", "1s", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--max-time bounds --target-ci"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--target-ci", "-1%", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--target-ci", "1%", "--max-time", "x",
		NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cli_result_release(&r);
}

Test(selfcheck, self_check_adds_the_aa_pair_and_its_runs)
{
	struct cli_result r;

	write_study("echo v=1");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--self-check", "--dry-run", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "12 runs"), "%s", r.out);
	cr_assert(strstr(r.out, "base~aa"), "%s", r.out);
	cr_assert(strstr(r.out, "base~nocounters"), "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--self-check", "-q", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results r JOIN plan p"
				 " ON p.run_id = r.run_id AND p.seq = r.seq"
				 " WHERE p.variant IN ('base~aa', 'base~nocounters')"
				 " AND r.status = 'ok'"), 6);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM variants"), 4);

	cli_run_env(dir, "NO_COLOR=1", &r, "report", "--db", db, "--bootstrap", "200", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "base~aa"), "%s", r.out);
	cr_assert(strstr(r.out, "base~nocounters"), "%s", r.out);
	cli_result_release(&r);

	/* the names cannot collide with a variant of the file: '~' is not
	 * allowed there */
	tl_write(dir, "c.yaml", "name: c\nbaseline: base\nvariants:\n  - {name: base}\n"
		 "  - {name: base~aa}\nworkloads:\n  - {name: w, cmd: ['true']}\n");
	cli_run(dir, &r, "run", "c.yaml", "--db", db, "--self-check", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "invalid variant name 'base~aa'"), "%s", r.err);
	cli_result_release(&r);
}

/* docs/perturb.1: one section per command, every option of run. */
Test(selfcheck, man_page_has_every_command)
{
	static const char *const want[] = {
		".SS run", ".SS report", ".SS gate", ".SS compare", ".SS doctor",
		".SS workloads", ".SS restore", ".SS gen", ".SS help",
		"target\\-ci", "max\\-time", "self\\-check", "skip\\-unavailable",
		"fail\\-on\\-regression", ".SH EXIT STATUS",
	};
	const char *src = getenv("PERTURB_SRC");
	char *path, *text;

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	path = xasprintf("%s/docs/perturb.1", src);
	text = read_file(path, NULL);
	cr_assert(text, "cannot read %s", path);
	cr_assert(!strncmp(text, ".TH PERTURB 1", 13));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert(strstr(text, want[i]), "%s lacks '%s'", path, want[i]);
	free(text);
	free(path);
}
