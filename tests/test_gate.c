/*
 * test_gate.c - `perturb gate`, `perturb compare` and `perturb doctor`,
 * through the real binary.
 *
 * The study's workload prints a value that is fixed per variant (so that
 * the dilation intervals are degenerate and the verdicts certain), or, for
 * the "noisy" variant, alternates between two values (an interval that
 * straddles a threshold between them).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "lib/util.h"
#include "lib/machine.h"
#include "reports/gate_out.h"

TL_FIXTURE_DB("r.db")

TestSuite(gate, .init = tl_setup, .fini = tl_teardown, .timeout = 90);

/* Write NAME.yaml (yaml is freed) and run it into db. */
static void run_yaml(const char *name, char *yaml)
{
	struct cli_result r;
	char *file = xasprintf("%s.yaml", name);

	tl_write(dir, file, yaml);
	free(yaml);
	cli_run(dir, &r, "run", file, "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	free(file);
}

/* The head of the gate tests' experiments, up to variants:, with the name
 * (%s) */
#define STUDY_HEAD "name: %s\nbaseline: base\nrepetitions: 6\nwarmup: 0\nseed: 5\nvariants:\n"

/* base = 100, slow = 110, same = 100, noisy = 100/110 alternating; the
 * values scaled by scale %.  gate_yaml: the experiment's gate: section. */
static void run_study(const char *name, int scale, const char *gate_yaml)
{
	char *yaml = xasprintf(
		STUDY_HEAD
		"  - {name: base, env: {A: '100', B: '100', CNT: %s/c.base}}\n"
		"  - {name: slow, env: {A: '110', B: '110', CNT: %s/c.slow}}\n"
		"  - {name: same, env: {A: '100', B: '100', CNT: %s/c.same}}\n"
		"  - {name: noisy, env: {A: '100', B: '110', CNT: %s/c.noisy}}\n"
		"workloads:\n"
		"  - name: w1\n"
		"    shell: 'c=$(cat \"$CNT.1\" 2>/dev/null || echo 0); c=$((c + 1)); "
		"echo $c > \"$CNT.1\"; if [ $((c %% 2)) = 1 ]; then v=$A; else v=$B; fi; "
		"echo value=$((v * %d))'\n"
		"    metrics: &m\n"
		"      - {name: value, regex: 'value=([0-9]+)', unit: x}\n"
		"  - name: w2\n"
		"    shell: 'c=$(cat \"$CNT.2\" 2>/dev/null || echo 0); c=$((c + 1)); "
		"echo $c > \"$CNT.2\"; if [ $((c %% 2)) = 1 ]; then v=$A; else v=$B; fi; "
		"echo value=$((v * %d))'\n"
		"    metrics: *m\n"
		"%s",
		name, dir, dir, dir, dir, scale, scale, gate_yaml ? gate_yaml : "");
	run_yaml(name, yaml);
}


/* The lines of gate's table: those before the first empty line (the
 * footnote). */
static int table_lines(const char *out)
{
	const char *end = strstr(out, "\n\n");
	char *t = end ? xstrndup(out, (size_t)(end - out + 1)) : xstrdup(out);
	int n = tl_count_lines(t);
	free(t);
	return n;
}

/* The line of the output about variant on workload. */
static int has_line(const char *out, const char *variant, const char *workload,
		    const char *verdict)
{
	char *line = xasprintf("\n%s ", variant);
	const char *p = out;
	int found = 0;
	while ((p = strstr(p, line))) {
		const char *end = strchr(p + 1, '\n');
		char *l = xstrndup(p + 1, end ? (size_t)(end - p - 1) : strlen(p + 1));
		if (strstr(l, workload) && strstr(l, verdict))
			found = 1;
		free(l);
		p++;
	}
	free(line);
	return found;
}

static char *slurp(const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	size_t len;
	char *t = read_file(path, &len);
	cr_assert(t, "no file %s", path);
	free(path);
	return t;
}

Test(gate, rules_from_the_stored_experiment_pass_and_fail)
{
	struct cli_result r;

	run_study("e", 1, "gate:\n"
		  "  - {variant: slow, workload: w1, metric: value, max_dilation: 5%}\n"
		  "  - {variant: same, metric: value, max_dilation: 0.05}\n");
	/* The stored text is used, also when the file is gone. */
	char *path = xasprintf("%s/e.yaml", dir);
	unlink(path);
	free(path);
	cli_run(dir, &r, "gate", "--db", db, NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(has_line(r.out, "slow", "w1", "FAIL"), "%s", r.out);
	cr_assert(has_line(r.out, "same", "w1", "PASS"), "%s", r.out);
	cr_assert(has_line(r.out, "same", "w2", "PASS"), "%s", r.out);
	cr_assert(!has_line(r.out, "slow", "w2", ""), "%s", r.out);
	cr_assert(strstr(r.out, "+10.00%"), "%s", r.out);
	cr_assert_eq(table_lines(r.out), 4, "%s", r.out);
	cli_result_release(&r);
}

Test(gate, rule_from_options_and_globs)
{
	struct cli_result r;

	run_study("e", 1, NULL);
	cli_run(dir, &r, "gate", "--db", db, "--variant", "same", "--metric", "value",
		"--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(has_line(r.out, "same", "w1", "PASS") && has_line(r.out, "same", "w2", "PASS"));
	cli_result_release(&r);

	/* s* matches slow and same, never the baseline; w? both workloads. */
	cli_run(dir, &r, "gate", "--db", db, "--variant", "s*", "--workload", "w?",
		"--metric", "value", "--statistic", "mean", "--max-dilation", "0.05", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_eq(table_lines(r.out), 5, "%s", r.out);
	cr_assert(has_line(r.out, "slow", "w2", "FAIL"));
	cr_assert(has_line(r.out, "same", "w2", "PASS"));
	cr_assert(!strstr(r.out, "\nbase "));
	cr_assert(strstr(r.out, " mean "));
	cli_result_release(&r);

	/* A rule that matches nothing is a usage error. */
	cli_run(dir, &r, "gate", "--db", db, "--variant", "nope*", "--max-dilation", "1%", NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
}

Test(gate, inconclusive_warns_and_strict_fails)
{
	struct cli_result r;

	run_study("e", 1, NULL);
	cli_run(dir, &r, "gate", "--db", db, "--variant", "noisy", "--workload", "w1",
		"--metric", "value", "--max-dilation", "3%", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(has_line(r.out, "noisy", "w1", "INCONCLUSIVE"), "%s", r.out);
	cr_assert(strstr(r.err, "inconclusive") && strstr(r.err, "more runs a side") &&
		  strstr(r.err, "if the dilation and its spread stay as measured"), "%s", r.err);
	cli_result_release(&r);

	cli_run(dir, &r, "gate", "--db", db, "--variant", "noisy", "--workload", "w1",
		"--metric", "value", "--max-dilation", "3%", "--strict", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cli_result_release(&r);
}

/* gate_runs_needed() on cases worked out by hand. */
Test(gate, runs_needed_known_answers)
{
	/* power 0.5: the n at which the interval just reaches the threshold,
	 * n (h / d)^2: h = 10, d = 5 -> 10 * 4 */
	cr_expect_eq(gate_runs_needed(10, 0, -10, 10, 5, 0.95, 0.5), 40);
	/* power 0.8: times ((1.959964 + 0.841621) / 1.959964)^2 = 2.043202 -> 81.7 */
	cr_expect_eq(gate_runs_needed(10, 0, -10, 10, 5, 0.95, 0.8), 82);
	/* the case: [-37 %, +20 %] at n = 10 against 5 %, the estimate
	 * at -25 % (a skewed bootstrap interval): the upper side, h = 45, is
	 * what has to shrink below d = 30: 10 * 1.5^2 * 2.043202 = 45.97, never
	 * "about 1 more" */
	cr_expect_eq(gate_runs_needed(10, -25, -37, 20, 5, 0.95, 0.8), 46);
	/* the threshold below the estimate: the lower side, h = 8, d = 2 */
	cr_expect_eq(gate_runs_needed(20, 3, -5, 4, 1, 0.95, 0.5), 320);
	/* the same interval at a Holm level (97.5 %): z(0.9875) = 2.241403,
	 * ((2.241403 + 0.841621) / 2.241403)^2 = 1.891968 -> 75.7 */
	cr_expect_eq(gate_runs_needed(10, 0, -10, 10, 5, 0.975, 0.8), 76);
	/* the estimate on the threshold: no number of runs decides it */
	cr_expect(isinf(gate_runs_needed(10, 5, 0, 10, 5, 0.95, 0.8)));
	/* nothing to estimate from */
	cr_expect(isnan(gate_runs_needed(0, 0, -10, 10, 5, 0.95, 0.8)));
	cr_expect(isnan(gate_runs_needed(10, 0, NAN, 10, 5, 0.95, 0.8)));
	cr_expect(isnan(gate_runs_needed(10, 0, 0, 0, 0, 0.95, 0.8)));
}

/* The words of gate_more_runs(): an estimate, "fewer than" past the cap. */
Test(gate, more_runs_wording_is_capped)
{
	struct gate_rule rule = { .metric = "wall", .confidence = 0.95, .max_dilation = 0.05 };
	struct gate_judgement j = { .rule = &rule, .variant = "v", .workload = "w", .thr = 5,
				    .has_ci = 1, .est = -25, .lo = -37, .hi = 20, .level = 0.95,
				    .n = 10, .verdict = GATE_INCONCLUSIVE };
	char *t;

	j.runs_needed = gate_runs_needed(j.n, j.est, j.lo, j.hi, j.thr, j.level, GATE_POWER);
	t = gate_more_runs(&j);
	cr_expect(strstr(t, "about 36 more runs a side (46 in all, now 10)"), "%s", t);
	free(t);
	j.est = 4.99;	/* a hair from the threshold */
	j.runs_needed = gate_runs_needed(j.n, j.est, j.lo, j.hi, j.thr, j.level, GATE_POWER);
	t = gate_more_runs(&j);
	cr_expect(strstr(t, "cannot be decided with fewer than 1000 runs a side (now 10)"), "%s", t);
	free(t);
	j.est = 5;
	j.runs_needed = gate_runs_needed(j.n, j.est, j.lo, j.hi, j.thr, j.level, GATE_POWER);
	t = gate_more_runs(&j);
	cr_expect(strstr(t, "cannot be decided"), "%s", t);
	free(t);
	j.runs_needed = NAN;
	t = gate_more_runs(&j);
	cr_expect(strstr(t, "no interval"), "%s", t);
	free(t);
}

/* Several judgements: their intervals are at Holm levels, and the output
 * says why, once. */
Test(gate, holm_levels_are_explained)
{
	struct cli_result r;

	run_study("e", 1, NULL);
	cli_run(dir, &r, "gate", "--db", db, "--metric", "value", "--max-dilation", "3%", NULL);
	cr_assert_gt(tl_count_str(r.out, "% Holm "), 0, "%s", r.out);
	cr_assert_eq(tl_count_str(r.out, "\nHolm: "), 1, "%s", r.out);
	cr_assert(strstr(r.out, "1979") && strstr(r.out, "above the rule's 95 %"), "%s", r.out);
	cli_result_release(&r);
	/* one judgement: the rule's own level, no footnote */
	cli_run(dir, &r, "gate", "--db", db, "--variant", "slow", "--workload", "w1",
		"--metric", "value", "--max-dilation", "3%", NULL);
	cr_assert(strstr(r.out, "@95%") && !strstr(r.out, "Holm"), "%s", r.out);
	cli_result_release(&r);
}

Test(gate, junit_and_markdown_files)
{
	struct cli_result r;
	char *x, *md;

	run_study("e", 1, NULL);
	cli_run(dir, &r, "gate", "--db", db, "--metric", "value", "--max-dilation", "3%",
		"--junit", "out.xml", "--markdown", "out.md", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cli_result_release(&r);

	x = slurp("out.xml");
	cr_assert(!strncmp(x, "<?xml version=\"1.0\"", 19));
	/* 3 variants x 2 workloads; slow fails on both. */
	cr_assert_eq(tl_count_str(x, "<testcase "), 6, "%s", x);
	cr_assert_eq(tl_count_str(x, "</testcase>"), 6, "%s", x);
	cr_assert_eq(tl_count_str(x, "<failure "), 2, "%s", x);
	cr_assert(strstr(x, "failures=\"2\""), "%s", x);
	/* an INCONCLUSIVE judgement is a skipped testcase, never a passing one */
	cr_assert_gt(tl_count_str(x, ">INCONCLUSIVE: "), 0, "%s", x);
	cr_assert_eq(tl_count_str(x, "<skipped message=\"the interval contains the threshold: "),
		     tl_count_str(x, ">INCONCLUSIVE: "), "%s", x);
	cr_assert_eq(tl_count_str(x, "<testsuite "), 1);
	cr_assert_eq(tl_count_str(x, "</testsuite>"), 1);
	cr_assert(strstr(x, "</testsuites>\n"));
	free(x);

	md = slurp("out.md");
	cr_assert(strstr(md, "| Variant | Workload |"), "%s", md);
	cr_assert(strstr(md, "**FAIL**") && strstr(md, "**PASS**") &&
		  strstr(md, "**INCONCLUSIVE**"), "%s", md);
	free(md);
}

Test(gate, usage_errors_exit_2)
{
	struct cli_result r;
	static const char *const bad[][2] = {
		{ "--statistic", "p42" },
		{ "--max-dilation", "lots" },
		{ "--confidence", "2" },
		{ "--run", "x" },
	};

	cli_run(dir, &r, "gate", "--db", db, "--max-dilation", "1%", NULL);
	cr_assert_eq(r.status, 2, "no database: exit %d", r.status);
	cli_result_release(&r);
	run_study("e", 1, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cli_run(dir, &r, "gate", "--db", db, bad[i][0], bad[i][1], NULL);
		cr_assert_eq(r.status, 2, "%s %s: exit %d", bad[i][0], bad[i][1], r.status);
		cli_result_release(&r);
	}
	/* A rule option without a threshold; an experiment without gate: */
	cli_run(dir, &r, "gate", "--db", db, "--variant", "slow", NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	cli_run(dir, &r, "gate", "--db", db, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "gate"), "%s", r.err);
	cli_result_release(&r);
}

/* ---- compare ---- */

static void sql_exec(const char *path, const char *sql)
{
	sqlite3 *h;
	char *msg = NULL;
	cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg);
	sqlite3_close(h);
}

Test(gate, compare_marks_insignificant_changes_and_fails_on_regression)
{
	struct cli_result r;

	run_study("e", 1, NULL);	/* run 1 */
	run_study("e2", 1, NULL);	/* run 2: the same values */
	run_study("f", 2, NULL);	/* run 3: every value doubled */
	cli_run(dir, &r, "compare", "1", "2", "--db", db, "--metric", "value", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	/* 4 variants x 2 workloads, no change: all "~" (and the 6 dilations) */
	cr_assert_eq(tl_count_str(r.out, " ~ ["), 8 + 6, "%s", r.out);
	cr_assert(!strstr(r.out, "provenance differs"), "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "compare", "1", "3", "--db", db, "--metric", "value", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_eq(tl_count_str(r.out, "  +100.00% ["), 8, "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "compare", "1", "3", "--db", db, "--metric", "value",
		"--fail-on-regression", "50%", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.err, "regression"), "%s", r.err);
	cli_result_release(&r);

	/* B faster than A is no regression. */
	cli_run(dir, &r, "compare", "3", "1", "--db", db, "--metric", "value",
		"--fail-on-regression", "5%", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.out, "-50.00%"), "%s", r.out);
	cli_result_release(&r);
}

/* One workload whose k-th run prints the k-th of values (cycling). */
static void run_list_study(const char *name, const char *values)
{
	char *yaml = xasprintf(
		"name: %s\n"
		"baseline: base\n"
		"repetitions: 6\n"
		"warmup: 0\n"
		"variants:\n"
		"  - {name: base, env: {CNT: %s/%s.cnt}}\n"
		"workloads:\n"
		"  - name: w\n"
		"    shell: 'set -- %s; c=$(cat \"$CNT\" 2>/dev/null || echo 0); "
		"echo $((c + 1)) > \"$CNT\"; shift $((c %% $#)); echo value=$1'\n"
		"    metrics:\n"
		"      - {name: value, regex: 'value=([0-9]+)', unit: x}\n",
		name, dir, name, values);
	run_yaml(name, yaml);
}

/*
 * compare decides from the interval, as gate: B's median is 5.5 % above
 * A's, over the 5 % threshold, but the interval of the change reaches
 * below 5 %: no regression (the U test, p = 0.003, called it significant and
 * compare exited 1 on the point estimate).  The change itself is read
 * against 0 from the same interval.  Runs and names only on one side are
 * said.
 */
Test(gate, compare_decides_regressions_from_the_interval_as_gate)
{
	struct cli_result r;

	run_list_study("a", "100 100 100 100 100 100");	/* run 1 */
	run_list_study("b", "101 103 105 106 110 115");	/* run 2 */
	/* the listed metric only: the runs' own wall and CPU times are real,
	 * and on a loaded machine they differ by more than 5 % */
	cli_run(dir, &r, "compare", "1", "2", "--db", db, "--metric", "value",
		"--fail-on-regression", "5%", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_expect(!strstr(r.err, "regression"), "%s", r.err);
	cr_expect(strstr(r.out, "+5.50% ["), "above 0: %s", r.out);
	cr_expect(strstr(r.out, "as perturb gate decides"), "%s", r.out);
	cr_expect(strstr(r.out, "the experiments differ"), "%s", r.out);
	cli_result_release(&r);
	/* a third run, a workload of its own: one more column, said */
	run_study("e", 1, NULL);	/* run 3: workloads w1, w2, variants of their own */
	cli_run(dir, &r, "compare", "1", "2", "3", "--db", db, "--metric", "value", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_expect(strstr(r.out, "C vs A"), "%s", r.out);
	cr_expect(strstr(r.out, "workload 'w1': only in C"), "%s", r.out);
	cr_expect(strstr(r.out, "variant 'slow': only in C"), "%s", r.out);
	cr_expect(strstr(r.out, "value (x)"), "units in the header: %s", r.out);
	cr_expect(strstr(r.out, "geomean"), "%s", r.out);
	cli_result_release(&r);
}

/*
 * Each variant's dilation against its own run's baseline: run 3 doubles
 * every value, so the raw medians change by +100 % while the dilations
 * (slow: +10 %) do not change.
 */
Test(gate, compare_shows_each_runs_dilation)
{
	struct cli_result r;

	run_study("e", 1, NULL);
	run_study("f", 2, NULL);
	cli_run(dir, &r, "compare", "1", "2", "--db", db, "--metric", "value", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_expect(strstr(r.out, "dilation against each run's own baseline"), "%s", r.out);
	char *slow = strstr(r.out, "dilation against");
	slow = slow ? strstr(slow, "slow") : NULL;
	cr_assert(slow, "%s", r.out);
	slow[strcspn(slow, "\n")] = 0;
	cr_expect_eq(tl_count_str(slow, "+10.00"), 2, "%s", slow);
	cr_expect(strstr(slow, " ~ ["), "%s", slow);
	cli_result_release(&r);
}

Test(gate, compare_shows_provenance_differences_and_takes_db_b)
{
	struct cli_result r;
	char *db2 = xasprintf("%s/r2.db", dir), *save = db;

	run_study("e", 1, NULL);
	db = db2;
	run_study("f", 2, NULL);
	db = save;
	sql_exec(db2, "UPDATE runs SET kernel_release = '0.0-test', governor = 'turbo-test'");
	cli_run(dir, &r, "compare", "1", "1", "--db", db, "--db-b", db2, "--metric", "value", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.out, "provenance differs"), "%s", r.out);
	cr_assert(strstr(r.out, "kernel_release") && strstr(r.out, "0.0-test"), "%s", r.out);
	cr_assert(strstr(r.out, "governor") && strstr(r.out, "turbo-test"), "%s", r.out);
	cr_assert(strstr(r.out, "+100.00%"), "%s", r.out);
	/* provenance comes above the table */
	cr_assert(strstr(r.out, "provenance") < strstr(r.out, "WORKLOAD"));
	cli_result_release(&r);

	cli_run(dir, &r, "compare", "1", "--db", db, NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	cli_run(dir, &r, "compare", "1", "9", "--db", db, NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	free(db2);
}

/* ---- doctor ---- */

Test(gate, doctor_prints_every_section_and_valid_json)
{
	struct cli_result r;
	static const char *const sections[] = {
		" root: ", " tracefs: ", " papi: ", " perf: ", " qemu: ", " kvm: ", " cpu: ",
		" governor: ", " boost: ", " aslr: ", " load: ", " isolcpus: ", " kernels: ",
	};

	cli_run(dir, &r, "doctor", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		cr_assert(strstr(r.out, sections[i]), "no%s in\n%s", sections[i], r.out);
	for (const char *p = r.out; *p; p = strchr(p, '\n') + 1) {
		cr_assert(!strncmp(p, "ok ", 3) || !strncmp(p, "warn ", 5) || !strncmp(p, "info ", 5) ||
			  !strncmp(p, "      fix: ", 11) || *p == '\n' || strstr(p, "warning") == p + 2 ||
			  strchr("0123456789", *p), "odd line: %s", p);
		if (!strchr(p, '\n'))
			break;
	}
	cli_result_release(&r);
	cli_run(dir, &r, "doctor", "--json", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(r.out[0] == '[' && strstr(r.out, "\"section\": \"papi\""), "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "doctor", "--bogus", NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	/* no build tools on PATH: config: kernels cannot be built, and why */
	cli_run_env(dir, "PATH=/nonexistent", &r, "doctor", NULL);
	cr_assert(strstr(r.out, "kernels: config: building the kernel needs 'make', not found on "
			 "PATH (Debian package: make)"), "%s", r.out);
	cli_result_release(&r);
}

/* machine_isolation_cpus(): online CPUs minus those kept, as a cpulist. */
Test(gate, doctor_isolation_cpus_known_answers)
{
	static const char *const cases[][3] = {
		{ "0-1", "0", "1" },		/* this kind of machine: 2 CPUs */
		{ "0-3", "0", "1-3" },
		{ "0-7", "0,4", "1-3,5-7" },	/* CPU 0's SMT sibling stays too */
		{ "0-3,8-11", "0", "1-3,8-11" },
		{ "0,2,4", "0", "2,4" },
		{ "0", "0", NULL },		/* one CPU: nothing to isolate */
		{ "0-1", "0-1", NULL },		/* one core with two threads */
		{ "0-3", "x", NULL },		/* unreadable lists */
		{ "0-", "0", NULL },
		{ "3-1", "0", NULL },
		{ "0-5000", "0", NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = machine_isolation_cpus(cases[i][0], cases[i][1]);
		if (cases[i][2])
			cr_expect(got && !strcmp(got, cases[i][2]), "%s minus %s: %s, want %s",
				  cases[i][0], cases[i][1], got ? got : "NULL", cases[i][2]);
		else
			cr_expect_null(got, "%s minus %s: %s, want NULL", cases[i][0], cases[i][1], got);
		free(got);
	}
}

/* Is cpu in the cpulist list? */
static int in_cpulist(const char *list, long cpu)
{
	char *end;
	for (const char *p = list; *p; p = *end ? end + 1 : end) {
		long a = strtol(p, &end, 10), b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (cpu >= a && cpu <= b)
			return 1;
	}
	return 0;
}

/* Every fix doctor prints fits this machine: the CPUs it would isolate are
 * online and not CPU 0; no perf_event_paranoid advice without hardware
 * counters; the KVM module of the CPU's own virtualisation. */
Test(gate, doctor_fixes_fit_the_machine)
{
	struct cli_result r;
	char *online = read_line_file("/sys/devices/system/cpu/online");
	char *cpuinfo = read_file("/proc/cpuinfo", NULL);
	const char *p;

	cr_assert(online && cpuinfo);
	cli_run(dir, &r, "doctor", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	if ((p = strstr(r.out, "fix: add isolcpus="))) {
		char *end;
		p += strlen("fix: add isolcpus=");
		for (;;) {
			long a = strtol(p, &end, 10), b = a;
			if (*end == '-')
				b = strtol(end + 1, &end, 10);
			for (long c = a; c <= b; c++)
				cr_assert(c != 0 && in_cpulist(online, c),
					  "isolcpus names CPU %ld; online: %s\n%s", c, online, r.out);
			if (*end != ',')
				break;
			p = end + 1;
		}
		cr_assert(!strncmp(end, " nohz_full=", 11), "%s", r.out);
	} else {
		cr_assert(strstr(r.out, "isolcpus: no isolated CPUs, and none to isolate") ||
			  strstr(r.out, "ok    isolcpus: "), "%s", r.out);
	}
	if (strstr(r.out, "no hardware counters"))
		cr_assert(!strstr(r.out, "perf_event_paranoid=1"), "%s", r.out);
	if (strstr(r.out, "modprobe kvm_intel"))
		cr_assert(strstr(cpuinfo, " vmx"), "%s", r.out);
	if (strstr(r.out, "modprobe kvm_amd"))
		cr_assert(strstr(cpuinfo, " svm"), "%s", r.out);
	cli_result_release(&r);
	free(online);
	free(cpuinfo);
}

/* ---- progress of perturb run ---- */

Test(gate, run_progress_only_on_a_terminal)
{
	struct cli_result r;
	char *cmd, *out;

	tl_write(dir, "p.yaml", "name: p\nrepetitions: 2\nwarmup: 0\n"
		 "variants: [{name: a}, {name: b}]\n"
		 "workloads: [{name: w, shell: 'true'}]\n");
	cli_run(dir, &r, "run", "p.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(!strchr(r.err, '\r') && !strstr(r.err, "ETA"), "%s", r.err);
	cli_result_release(&r);
	if (access("/usr/bin/script", X_OK))
		return;
	/* A pseudo-terminal: the line is there, bold unless NO_COLOR (TERM
	 * set: a dumb terminal, as the caller's may be, has no line). */
	cmd = xasprintf("cd %s && NO_COLOR=1 TERM=xterm /usr/bin/script -qc '%s run p.yaml --db p2.db' "
			"/dev/null > tty.out 2>&1 </dev/null", dir, getenv("PERTURB_BIN"));
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	out = slurp("tty.out");
	cr_assert(strstr(out, "[0/4]") && strstr(out, "ETA") && strstr(out, "\r\033[K"), "%s", out);
	cr_assert(!strstr(out, "\033[1m"), "%s", out);
	free(out);
}

/* Two variants whose runs print A then B alternating (per variant), the
 * metric "value" in ns: values may be negative (a loop-subtracted
 * ns_per_op). */
static void run_signed_study(const char *name, const char *ba, const char *bb, const char *va,
			     const char *vb)
{
	char *yaml = xasprintf(
		STUDY_HEAD
		"  - {name: base, env: {A: '%s', B: '%s', CNT: %s/%s.base}}\n"
		"  - {name: slow, env: {A: '%s', B: '%s', CNT: %s/%s.slow}}\n"
		"workloads:\n"
		"  - name: w1\n"
		"    shell: 'c=$(cat \"$CNT\" 2>/dev/null || echo 0); c=$((c + 1)); "
		"echo $c > \"$CNT\"; if [ $((c %% 2)) = 1 ]; then v=$A; else v=$B; fi; "
		"echo value=$v'\n"
		"    metrics:\n"
		"      - {name: value, regex: 'value=(-?[0-9]+)', unit: ns}\n",
		name, ba, bb, dir, name, va, vb, dir, name);
	run_yaml(name, yaml);
}

/* The class "a ratio to a baseline whose interval is not on one side of 0
 * read as a percentage": a baseline of -3/1 ns (its median interval holds
 * 0) and a variant +1 ns slower was -100 % and passed a 5 % gate; now
 * every place that shows a percentage of it (gate's table, JUnit,
 * Markdown, the report's text, JSON and its warning, compare) gives the
 * difference in ns, the gate is INCONCLUSIVE and exits 1, and compare
 * --fail-on-regression exits 1. */
Test(gate, no_percent_of_a_baseline_interval_that_holds_0)
{
	struct cli_result r;
	char *md, *xml;

	run_signed_study("z", "-3", "1", "-2", "2");
	cli_run(dir, &r, "gate", "--db", db, "--metric", "value", "--max-dilation", "5%",
		"--junit", "g.xml", "--markdown", "g.md", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(has_line(r.out, "slow", "w1", "INCONCLUSIVE"), "%s", r.out);
	cr_assert(strstr(r.out, "+1 (no %)"), "%s", r.out);
	cr_assert(strstr(r.err, "no-percent") && !strstr(r.err, "more runs"), "%s", r.err);
	md = slurp("g.md");
	xml = slurp("g.xml");
	cr_assert(strstr(md, "failed") && strstr(md, "(no %)"), "%s", md);
	cr_assert(strstr(xml, "failures=\"1\"") && strstr(xml, "no-percent"), "%s", xml);
	free(md);
	free(xml);
	cli_result_release(&r);

	cli_run(dir, &r, "report", "--db", db, "--metric", "value", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "(no %)") && strstr(r.out, "no-percent"), "%s", r.out);
	cr_assert(!strstr(r.out, "-100.00 %"), "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, "--metric", "value", "--format", "json", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "\"no_pct\":true") && !strstr(r.out, "\"pct\":-100"), "%s",
		  r.out);
	cli_result_release(&r);

	run_signed_study("z2", "-3", "1", "-2", "2");
	cli_run(dir, &r, "compare", "1", "2", "--db", db, "--fail-on-regression", "5%", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.out, "(no %)") && strstr(r.err, "no-percent"), "%s%s", r.out, r.err);
	cli_result_release(&r);
}

/* A baseline below 0 on one side of it: the % is of its magnitude, so
 * that -10 ns -> -5 ns is +50 %, not -50 % (which passed a 5 % gate). */
Test(gate, negative_baseline_percent_has_the_right_sign)
{
	struct cli_result r;

	run_signed_study("n", "-10", "-10", "-5", "-5");
	cli_run(dir, &r, "gate", "--db", db, "--metric", "value", "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(has_line(r.out, "slow", "w1", "FAIL") && strstr(r.out, "+50.00%"), "%s", r.out);
	cli_result_release(&r);
}

/* The class "a default run that is not the one asked for": gate FILE
 * judges the latest run of FILE's experiment (its stored hash), not the
 * latest run of the database (another study, where slow is not slower,
 * which passed); with no run of it, exit 2 naming the runs there are. */
Test(gate, an_experiment_file_judges_its_own_latest_run)
{
	struct cli_result r;

	run_study("e", 1, "gate:\n  - {variant: slow, workload: w1, metric: value, "
		  "max_dilation: 5%}\n");	/* run 1: slow is +10 % */
	run_signed_study("o", "100", "100", "100", "100");	/* run 2: another study */
	cli_run(dir, &r, "gate", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(has_line(r.out, "slow", "w1", "FAIL") && strstr(r.out, "+10.00%"), "%s", r.out);
	cli_result_release(&r);

	/* --run still names a run */
	cli_run(dir, &r, "gate", "e.yaml", "--db", db, "--run", "1", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
	cli_result_release(&r);

	/* no run of this experiment: refused, with the runs there are */
	tl_write(dir, "x.yaml", "name: x\nvariants: [{name: base}]\n"
		 "workloads: [{name: w, cmd: ['true']}]\n"
		 "gate:\n  - {variant: '*', metric: wall, max_dilation: 5%}\n");
	cli_run(dir, &r, "gate", "x.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.err, "no run of 'x.yaml'") && strstr(r.err, "run 2 (experiment 'o'") &&
		  strstr(r.err, "run 1 (experiment 'e'"), "%s", r.err);
	cr_assert_str_eq(r.out, "");
	cli_result_release(&r);
}

/* The class "a verdict on a run that did not finish": a run killed with a
 * third of its plan stored is refused by gate and compare (exit 2, with how
 * much is stored) unless --allow-incomplete, and then the verdict says how
 * much is missing (the table's note, Markdown, JUnit; compare's header). */
Test(gate, an_incomplete_run_is_refused_unless_allowed)
{
	struct cli_result r;
	char *md, *xml;

	run_study("e", 1, NULL);	/* run 1: 48 plan entries */
	run_study("e2", 1, NULL);	/* run 2: complete */
	cli_sql_exec(db, "DELETE FROM metric_values WHERE run_id = 1 AND seq >= 16;"
		     "DELETE FROM results WHERE run_id = 1 AND seq >= 16;"
		     "UPDATE runs SET status = 'interrupted', ended = NULL WHERE id = 1");
	cli_run(dir, &r, "gate", "--db", db, "--run", "1", "--variant", "slow", "--metric",
		"value", "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.err, "run 1 is incomplete (interrupted): 16 of 48 runs of its plan "
			 "are stored, 32 missing") && strstr(r.err, "--allow-incomplete"), "%s",
		  r.err);
	cr_assert_str_eq(r.out, "");
	cli_result_release(&r);

	cli_run(dir, &r, "gate", "--db", db, "--run", "1", "--variant", "slow", "--metric",
		"value", "--max-dilation", "5%", "--allow-incomplete", "--junit", "g.xml",
		"--markdown", "g.md", NULL);
	/* 2 runs a side: inconclusive, and why the runs are so few */
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.out, "16 of 48 runs of its plan are stored, 32 missing"), "%s", r.out);
	md = slurp("g.md");
	xml = slurp("g.xml");
	cr_assert(strstr(md, "32 missing"), "%s", md);
	cr_assert(strstr(xml, "name=\"incomplete\"") && strstr(xml, "32 missing"), "%s", xml);
	free(md);
	free(xml);
	cli_result_release(&r);

	cli_run(dir, &r, "compare", "2", "1", "--db", db, NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.err, "run 1 is incomplete"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "compare", "2", "1", "--db", db, "--allow-incomplete", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.out, "16 of 48 runs of its plan are stored, 32 missing"), "%s", r.out);
	cli_result_release(&r);

	/* the report shows what there is */
	cli_run(dir, &r, "report", "--db", db, "--run", "1", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
}

/* The class "a typo that passes": every name given on the command line
 * that matches nothing (gate's --variant, --workload, --metric; report's
 * --metric, --workload; compare's --metric) is exit 2 with a did-you-mean,
 * not an inconclusive gate or an empty report with exit 0. */
Test(gate, a_name_that_matches_nothing_is_refused_with_did_you_mean)
{
	static const struct { const char *args[8]; const char *want; } typos[] = {
		{ { "gate", "--metric", "wal", "--max-dilation", "5%" }, "did you mean 'wall'?" },
		{ { "gate", "--metric", "valeu", "--max-dilation", "5%" }, "did you mean 'value'?" },
		{ { "gate", "--variant", "slwo", "--max-dilation", "5%" }, "did you mean 'slow'?" },
		{ { "gate", "--workload", "w3", "--max-dilation", "5%" }, "no workload of run 2" },
		{ { "report", "--metric", "valeu" }, "did you mean 'value'?" },
		{ { "report", "--workload", "w11" }, "did you mean 'w1'?" },
		{ { "compare", "1", "2", "--metric", "wal" }, "did you mean 'wall'?" },
	};
	struct cli_result r;

	run_study("e", 1, NULL);
	run_study("e2", 1, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(typos); i++) {
		const char *const *a = typos[i].args;
		cli_run(dir, &r, a[0], "--db", db, a[1], a[2], a[3], a[4], a[5], NULL);
		cr_assert_eq(r.status, 2, "%s %s %s: exit %d: %s%s", a[0], a[1], a[2], r.status,
			     r.out, r.err);
		cr_assert(strstr(r.err, typos[i].want), "%s %s %s: %s", a[0], a[1], a[2], r.err);
		cr_assert_str_eq(r.out, "");
		cli_result_release(&r);
	}
	/* a glob that matches is no typo */
	cli_run(dir, &r, "gate", "--db", db, "--variant", "s*", "--metric", "value",
		"--max-dilation", "50%", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cli_result_release(&r);
}
