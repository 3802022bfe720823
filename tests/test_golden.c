/*
 * test_golden.c - every output format of fixed stored studies, byte for
 * byte: any change of a report's output is a reviewed diff of a file under
 * tests/golden/.
 *
 * A study is an SQL dump, tests/golden/STUDY.sql (made by
 * tests/golden/make-fixtures.sh from real runs, every measured value and
 * every provenance field fixed), loaded into a temporary database; the real
 * perturb binary renders it and the output is compared with
 * tests/golden/STUDY.EXT.  On a difference the test prints `diff -u` of the
 * two.  After a deliberate change of output, rewrite the golden files with
 * `make golden` (the same as PERTURB_GOLDEN_UPDATE=1 in the environment of
 * these tests) and review the diff.
 */
#include <criterion/criterion.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/util.h"
#include "testlib.h"

TL_FIXTURE_DIR()

TestSuite(golden, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

/*
 * One output: `perturb ARGS` on the study's database (DB in args; DBNAME:
 * its name, relative to the folder the command runs in), its
 * stdout (or the file it writes, out, in the temporary folder) compared
 * with tests/golden/STUDY.EXT; status is the expected exit status.
 */
struct golden_case {
	const char *ext;
	int status;
	const char *out;
	const char *args[12];
};

#define REPORT(fmt, ...) { "report", "--db", "DB", "--format", fmt, __VA_ARGS__ }

static const char *src_dir(void)
{
	const char *s = getenv("PERTURB_SRC");
	cr_assert(s, "PERTURB_SRC is not set (run the tests with make test)");
	return s;
}

/* Load tests/golden/STUDY.sql into dir/STUDY.db; returns its path. */
static char *load_study(const char *study)
{
	return cli_load_golden(dir, study);
}

/* Is text the content of golden?  Else print diff -u (or rewrite golden when
 * PERTURB_GOLDEN_UPDATE=1) and return 0. */
static int same_as_golden(const char *golden, const char *text)
{
	char *want = read_file(golden, NULL);
	const char *upd = getenv("PERTURB_GOLDEN_UPDATE");
	char *actual, *cmd;
	int same = want && !strcmp(want, text);

	free(want);
	if (same)
		return 1;
	if (upd && !strcmp(upd, "1")) {
		FILE *f = fopen(golden, "w");
		cr_assert(f, "cannot write '%s'", golden);
		fputs(text, f);
		cr_assert_eq(fclose(f), 0, "cannot write '%s'", golden);
		fprintf(stderr, "golden: rewrote %s\n", golden);
		return 1;
	}
	actual = xasprintf("%s/actual", dir);
	tl_write(dir, "actual", text);
	cmd = xasprintf("diff -u '%s' '%s' >&2", golden, actual);
	fprintf(stderr, "golden: %s differs (- golden, + now):\n", golden);
	fflush(stderr);
	if (system(cmd) < 0)
		fprintf(stderr, "golden: cannot run diff\n");
	free(cmd);
	free(actual);
	return 0;
}

static void check_study(const char *study, const struct golden_case *cases, size_t n)
{
	char *db = load_study(study);
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		const struct golden_case *c = &cases[i];
		const char *a[12];
		struct cli_result r;
		char *golden = xasprintf("%s/tests/golden/%s.%s", src_dir(), study, c->ext);

		for (size_t k = 0; k < ARRAY_SIZE(a); k++)
			a[k] = c->args[k] && !strcmp(c->args[k], "DB") ? db :
			       c->args[k] && !strcmp(c->args[k], "DBNAME") ? strrchr(db, '/') + 1 :
			       c->args[k];
		cli_run_env(dir, "NO_COLOR=1", &r, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
			    a[7], a[8], a[9], a[10], a[11], NULL);
		cr_assert_eq(r.status, c->status, "%s.%s: exit %d: %s", study, c->ext, r.status,
			     r.err);
		if (c->out) {
			char *path = xasprintf("%s/%s", dir, c->out);
			char *text = read_file(path, NULL);
			cr_assert(text, "%s.%s: no file %s", study, c->ext, c->out);
			bad += !same_as_golden(golden, text);
			free(text);
			free(path);
		} else {
			bad += !same_as_golden(golden, r.out);
		}
		if (!strcmp(c->ext, "json"))
			tl_check_report_schema(r.out);
		cli_result_release(&r);
		free(golden);
	}
	free(db);
	cr_assert_eq(bad, 0, "%zu output(s) of %s differ from tests/golden/ (diff above); if the "
		     "change is deliberate, run `make golden` and review the diff", bad, study);
}

/* The report formats of a study's latest run. */
static const struct golden_case formats[] = {
	{ "txt", 0, NULL, REPORT("text", NULL) },
	{ "md", 0, NULL, REPORT("markdown", NULL) },
	{ "csv", 0, NULL, REPORT("csv", NULL) },
	{ "json", 0, NULL, REPORT("json", NULL) },
	{ "html", 0, NULL, REPORT("html", NULL) },
	{ "summary.txt", 0, NULL, { "report", "--db", "DBNAME", "--format", "summary" } },
};

/* multi: run 1 (a failed run) in every format; compare run 1 with run 2
 * (slower, another kernel); gate run 2 (a pass, a fail, an inconclusive). */
Test(golden, multi)
{
	static const struct golden_case cases[] = {
		{ "txt", 0, NULL, REPORT("text", "--run", "1") },
		{ "md", 0, NULL, REPORT("markdown", "--run", "1") },
		{ "csv", 0, NULL, REPORT("csv", "--run", "1") },
		{ "tidy.csv", 0, NULL, REPORT("csv", "--run", "1", "--include-failed",
					      "--include-warmup") },
		{ "json", 0, NULL, REPORT("json", "--run", "1") },
		{ "html", 0, NULL, REPORT("html", "--run", "1") },
		{ "summary.txt", 0, NULL, { "report", "--db", "DBNAME", "--format", "summary",
					    "--run", "1" } },
		{ "compare.txt", 0, NULL, { "compare", "1", "2", "--db", "DB" } },
		{ "gate.txt", 1, NULL, { "gate", "--db", "DB", "--max-dilation", "1.5%" } },
		{ "gate.xml", 1, "junit.xml", { "gate", "--db", "DB", "--max-dilation", "1.5%",
						"--junit", "junit.xml" } },
		{ "gate.md", 1, "gate.md", { "gate", "--db", "DB", "--max-dilation", "1.5%",
					     "--markdown", "gate.md" } },
	};
	check_study("multi", cases, ARRAY_SIZE(cases));
}

Test(golden, tracer)
{
	check_study("tracer", formats, ARRAY_SIZE(formats));
}

/* calib: the calibrated cost per event (an ftrace and a bpf variant, the
 * published figure beside the bpf tracepoint) and the overhead
 * compensation, one that fits and one that does not (reports/calib.h). */
Test(golden, calib)
{
	check_study("calib", formats, ARRAY_SIZE(formats));
}

Test(golden, blocks)
{
	check_study("blocks", formats, ARRAY_SIZE(formats));
}

/* matrix: the overhead curves - a log axis (a variant's sizes over more
 * than a decade), an axis of item counts (a variant's lists), a
 * categorical axis (a workload's words) - in every format. */
Test(golden, matrix)
{
	static const struct golden_case cases[] = {
		{ "txt", 0, NULL, REPORT("text", NULL) },
		{ "md", 0, NULL, REPORT("markdown", NULL) },
		{ "csv", 0, NULL, REPORT("csv", NULL) },
		{ "curves.csv", 0, NULL, REPORT("csv-curves", NULL) },
		{ "json", 0, NULL, REPORT("json", NULL) },
		{ "html", 0, NULL, REPORT("html", NULL) },
	};
	check_study("matrix", cases, ARRAY_SIZE(cases));
}

/* Text from a foreign database that is not UTF-8, or holds control bytes,
 * is escaped in the JSON report, never copied raw: each invalid byte is
 * U+FFFD, a control byte \uXXXX; a machine description that is not a JSON
 * object is null. */
Test(golden, json_escapes_what_a_foreign_database_holds)
{
	char *db = load_study("tracer");
	struct cli_result r;
	char *sql = xasprintf("UPDATE runs SET name = 'a' || CAST(X'ff' AS TEXT) || 'b' ||"
			      " char(1) || CAST(X'c328' AS TEXT) || '\"', machine_json ="
			      " '{\"cores\": 2} and more';"
			      "UPDATE experiments SET name = (SELECT name FROM runs)");

	cli_sql_exec(db, sql);
	cli_run(dir, &r, "report", "--db", db, "--format", "json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"experiment\":\"a\xef\xbf\xbd" "b\\u0001\xef\xbf\xbd(\\\"\","),
		  "%.400s", r.out);
	cr_assert(strstr(r.out, "\"machine\":null}"), "%.600s", r.out);
	cli_result_release(&r);
	free(sql);
	free(db);
}

/* The schema check itself: docs/report-schema.json accepts the golden
 * reports (above) and rejects a report missing a required field. */
Test(golden, the_schema_rejects_a_report_without_its_results)
{
	char *path = xasprintf("%s/tests/golden/multi.json", src_dir());
	char *json = read_file(path, NULL), *cut;

	cr_assert(json, "cannot read '%s'", path);
	if (!tl_check_report_schema(json))
		cr_skip_test("python3 with jsonschema is missing (python3-jsonschema)");
	cut = strstr(json, "\"results\":");
	cr_assert(cut);
	memcpy(cut, "\"resultz\":", 10);
	cr_assert_eq(tl_report_schema_valid(json), 0, "a report without results passed");
	free(path);
	free(json);
}
