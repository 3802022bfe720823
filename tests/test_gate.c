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
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "lib/util.h"

static char *dir, *db;

static void setup(void)
{
	dir = tl_tmpdir();
	db = xasprintf("%s/r.db", dir);
}

static void teardown(void)
{
	tl_rmtree(dir);
	free(dir);
	free(db);
}

TestSuite(gate, .init = setup, .fini = teardown, .timeout = 90);

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

/* base = 100, slow = 110, same = 100, noisy = 100/110 alternating; the
 * values scaled by scale %.  gate_yaml: the experiment's gate: section. */
static void run_study(const char *name, int scale, const char *gate_yaml)
{
	char *yaml = xasprintf(
		"name: %s\n"
		"baseline: base\n"
		"repetitions: 6\n"
		"warmup: 0\n"
		"seed: 5\n"
		"variants:\n"
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

static int count_str(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
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
	cr_assert_eq(tl_count_lines(r.out), 4, "%s", r.out);
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
	cr_assert_eq(tl_count_lines(r.out), 5, "%s", r.out);
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
	cr_assert(strstr(r.err, "inconclusive") && strstr(r.err, "more runs") &&
		  strstr(r.err, "estimate"), "%s", r.err);
	cli_result_release(&r);

	cli_run(dir, &r, "gate", "--db", db, "--variant", "noisy", "--workload", "w1",
		"--metric", "value", "--max-dilation", "3%", "--strict", NULL);
	cr_assert_eq(r.status, 1, "exit %d: %s%s", r.status, r.out, r.err);
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
	cr_assert_eq(count_str(x, "<testcase "), 6, "%s", x);
	cr_assert_eq(count_str(x, "</testcase>"), 6, "%s", x);
	cr_assert_eq(count_str(x, "<failure "), 2, "%s", x);
	cr_assert(strstr(x, "failures=\"2\""), "%s", x);
	/* an INCONCLUSIVE judgement is a skipped testcase, never a passing one */
	cr_assert_gt(count_str(x, ">INCONCLUSIVE: "), 0, "%s", x);
	cr_assert_eq(count_str(x, "<skipped message=\"the interval contains the threshold: "),
		     count_str(x, ">INCONCLUSIVE: "), "%s", x);
	cr_assert_eq(count_str(x, "<testsuite "), 1);
	cr_assert_eq(count_str(x, "</testsuite>"), 1);
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
	cr_assert_eq(count_str(r.out, " ~ ["), 8 + 6, "%s", r.out);
	cr_assert(!strstr(r.out, "provenance differs"), "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "compare", "1", "3", "--db", db, "--metric", "value", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s%s", r.status, r.out, r.err);
	cr_assert_eq(count_str(r.out, "  +100.00% ["), 8, "%s", r.out);
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
	cli_run(dir, &r, "compare", "1", "2", "--db", db, "--fail-on-regression", "5%", NULL);
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
	cr_expect_eq(count_str(slow, "+10.00"), 2, "%s", slow);
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
	/* A pseudo-terminal: the line is there, bold unless NO_COLOR. */
	cmd = xasprintf("cd %s && NO_COLOR=1 /usr/bin/script -qc '%s run p.yaml --db p2.db' "
			"/dev/null > tty.out 2>&1 </dev/null", dir, getenv("PERTURB_BIN"));
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	out = slurp("tty.out");
	cr_assert(strstr(out, "[0/4]") && strstr(out, "ETA") && strstr(out, "\r\033[K"), "%s", out);
	cr_assert(!strstr(out, "\033[1m"), "%s", out);
	free(out);
}
