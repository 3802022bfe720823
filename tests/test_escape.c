/*
 * test_escape.c - names from a foreign database never reach a terminal or
 * a viewer as commands (lib/util.h, escape_bytes()): a stored study whose
 * metric names hold ESC, BEL, CR, a C1 control and bytes that are not
 * UTF-8 is rendered in every format, with compare and gate; no output
 * holds a control byte (but tab and line breaks of the format itself), a
 * C1 control or invalid UTF-8.  The same holds for a workload's output
 * wherever perturb run shows it on stderr.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "testlib.h"

TL_FIXTURE_DIR()

TestSuite(escape, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

/* The first byte of s that a terminal would obey or that is not UTF-8
 * (strict: no overlong form, no surrogate), or NULL. */
static const char *hostile_byte(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		if (*p < 0x20 && *p != '\n' && *p != '\t')	/* DEL: ignored by terminals */
			return (const char *)p;
		if (*p < 0x80) {
			p++;
			continue;
		}
		size_t n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
		if (*p < 0xc2 || *p > 0xf4 || (*p == 0xc2 && p[1] < 0xa0))
			return (const char *)p;	/* not a start byte, or a C1 control */
		for (size_t i = 1; i < n; i++)
			if (p[i] < 0x80 || p[i] > 0xbf)
				return (const char *)p;
		p += n;
	}
	return NULL;
}

Test(escape, hostile_names_in_every_writer)
{
	char *db = cli_load_golden(dir, "multi");
	/* ESC [31m, BEL, CR, ESC ] title, a C1 CSI (U+009B), a lone 0xff, a
	 * cut sequence (0xe2 0x82), DEL */
	static const char hostile[] = "X'1b5b33316d07" "0d1b5d303b7469746c6507" "c29b" "ff" "e282" "7f'";
	/* a metric, the kernel, and the names every screen heads with: the
	 * study's, a variant's, the workload's */
	char *sql = xasprintf("UPDATE metric_values SET metric = CAST(%s AS TEXT) || 'ns' "
			      "WHERE metric = 'loop_ns'; "
			      "UPDATE runs SET kernel_release = CAST(%s AS TEXT) WHERE id = 2; "
			      "UPDATE runs SET name = 'st' || CAST(%s AS TEXT); "
			      "UPDATE variants SET name = 'p5' || CAST(%s AS TEXT) WHERE name = 'plus5'; "
			      "UPDATE plan SET variant = 'p5' || CAST(%s AS TEXT) WHERE variant = 'plus5'; "
			      "UPDATE workloads SET name = 'sp' || CAST(%s AS TEXT) WHERE name = 'spin'; "
			      "UPDATE plan SET workload = 'sp' || CAST(%s AS TEXT) WHERE workload = 'spin'",
			      hostile, hostile, hostile, hostile, hostile, hostile, hostile);
	static const char *const cmds[][8] = {
		{ "report", "--run", "1", "--format", "text" },
		{ "report", "--run", "1", "--format", "markdown" },
		{ "report", "--run", "1", "--format", "csv" },
		{ "report", "--run", "1", "--format", "csv", "--include-failed" },
		{ "report", "--run", "1", "--format", "json" },
		{ "report", "--run", "1", "--format", "html" },
		{ "report", "--run", "1", "--format", "summary" },
		{ "report", "--run", "1", "--format", "text", "--all-metrics" },
		{ "runs" },
		{ "compare", "1", "2" },
		{ "gate", "--run", "1", "--max-dilation", "1.5%", "--junit", "g.xml" },
		{ "gate", "--run", "1", "--max-dilation", "1.5%", "--markdown", "g.md" },
	};
	struct cli_result r;

	cli_sql_exec(db, sql);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		const char *const *a = cmds[i];
		cli_run(dir, &r, a[0], "--db", db, a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL);
		cr_assert(r.status == 0 || r.status == 1, "%s %s: exit %d: %s", a[0], a[4] ? a[4] : "",
			  r.status, r.err);
		const char *bad = hostile_byte(r.out), *bad_err = hostile_byte(r.err);
		cr_assert_null(bad, "%s %s: byte 0x%02x on stdout at %zu", a[0], a[4] ? a[4] : "",
			       bad ? (unsigned char)*bad : 0, bad ? (size_t)(bad - r.out) : 0);
		cr_assert_null(bad_err, "%s: byte 0x%02x on stderr: %s", a[0],
			       bad_err ? (unsigned char)*bad_err : 0, r.err);
		cli_result_release(&r);
	}
	static const char *const files[] = { "g.xml", "g.md" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *p = xasprintf("%s/%s", dir, files[i]), *text = read_file(p, NULL);
		cr_assert(text, "%s", p);
		const char *bad = hostile_byte(text);
		cr_assert_null(bad, "%s: byte 0x%02x", files[i], bad ? (unsigned char)*bad : 0);
		free(text);
		free(p);
	}
	free(sql);
	free(db);
}

/*
 * A variant's name may hold < > & | * (docs/experiment.md): every table
 * head names it in the format's escaping, as its rows do (the head cells
 * were written as they were: '<th>x<i>y|z*</th>' in HTML, a column too
 * many in Markdown).
 */
Test(escape, a_variant_name_is_escaped_in_every_table_head)
{
	static const char *const fmts[] = { "markdown", "html" };
	char *db = xasprintf("%s/h.db", dir);
	struct cli_result r;

	tl_write(dir, "e.yaml", "name: h\nwarmup: 0\nrepetitions: 2\n"
		 "variants: [{name: base}, {name: 'x<i>y|z*'}]\n"
		 "workloads: [{name: w, cmd: [true]}]\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		cli_run(dir, &r, "report", "--db", db, "--format", fmts[i], NULL);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert_null(strstr(r.out, "x<i>"), "%s: the name raw:\n%s", fmts[i], r.out);
		if (!i)
			cr_assert(strstr(r.out, "| metric | base | x&lt;i&gt;y\\|z\\* |"), "%s", r.out);
		else
			cr_assert(strstr(r.out, "<th>x&lt;i&gt;y|z*</th>"), "%s", r.out);
		cli_result_release(&r);
	}
	free(db);
}

/* perturb status: a shard's node is the database's (a node's name as
 * Slurm or the shard gave it): shown escaped, as perturb runs shows a
 * run's name. */
Test(escape, a_shards_node_is_shown_escaped_by_status)
{
	char *db = xasprintf("%s/s.db", dir);
	struct cli_result r;

	tl_write(dir, "s.yaml", "name: s\nwarmup: 0\nrepetitions: 2\n"
		 "variants: [{name: base}]\nworkloads: [{name: w, cmd: [true]}]\n");
	cli_run(dir, &r, "run", "s.yaml", "--db", db, "--shard", "0/2", "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cli_sql_exec(db, "UPDATE shards SET node = 'n' || char(27) || '[2J' WHERE shard = 0");
	cli_run(dir, &r, "status", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_null(hostile_byte(r.out), "%s", r.out);
	cr_assert(strstr(r.out, "n\\x1b[2J"), "%s", r.out);
	cli_result_release(&r);
	free(db);
}

/*
 * The class "perturb shows a program's output": when every run fails,
 * perturb run shows the first failure's last lines, and when a setup
 * fails, its output's last lines; both escaped as in the report.
 */
Test(escape, workload_output_on_stderr)
{
	/* ESC [31m, BEL, CR, ESC ] title, a C1 CSI, a lone 0xff, a cut sequence */
	static const char bytes[] = "\\033[31m\\007\\r\\033]0;title\\007\\302\\233\\377\\342\\202";
	char *yaml[2] = {
		/* every run fails: the first failure's last lines */
		xasprintf("name: x\nwarmup: 0\nrepetitions: 1\nvariants: [{name: a}]\n"
			  "workloads:\n  - name: w\n"
			  "    cmd: [sh, -c, 'printf \"%s\\\\n\"; exit 1']\n", bytes),
		/* a setup fails: its output's last lines */
		xasprintf("name: x\nwarmup: 0\nrepetitions: 1\n"
			  "variants:\n  - name: s\n    setup: [[sh, -c, 'printf \"%s\\\\n\"; exit 3']]\n"
			  "workloads: [{name: w, cmd: [true]}]\n", bytes),
	};
	struct cli_result r;

	for (size_t i = 0; i < 2; i++) {
		char *db = xasprintf("%s/results-%zu/perturb.db", dir, i);
		tl_write(dir, "e.yaml", yaml[i]);
		cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
		cr_assert_neq(r.status, 0, "%s", r.err);
		cr_assert(strstr(r.err, "\\x1b[31m\\x07\\x0d\\x1b]0;title\\x07\\xc2\\x9b\\xff\\xe2\\x82"),
			  "study %zu: the output not shown escaped: %s", i, r.err);
		const char *bad = hostile_byte(r.err);
		cr_assert_null(bad, "study %zu: byte 0x%02x on stderr at %zu: %s", i,
			       bad ? (unsigned char)*bad : 0, bad ? (size_t)(bad - r.err) : 0, r.err);
		cli_result_release(&r);
		free(db);
		free(yaml[i]);
	}
}

/* The class "a message quotes what it was given": every error, warning and
 * note escapes the text it quotes (lib/util.c message()), wherever it comes
 * from: a one-liner's command, an --env, a --name, a study file's value. */
Test(escape, every_message_shows_what_it_quotes_escaped)
{
	static const char bytes[] = "\033[31m\007\r\302\233\377";
	/* the file's value is YAML's escapes of the same: its 0xff is U+00FF */
	static const char shown[] = "\\x1b[31m\\x07\\x0d\\xc2\\x9b";
	char *quote = xasprintf("echo \"%s", bytes), *env = xasprintf("X%s", bytes);
	char *name = xasprintf("n%s", bytes);
	char *yaml = xasprintf("name: x\nrepetitions: 1\nvariants: [{name: a}]\n"
			       "workloads: [{name: w, cmd: [true]}]\norder: \"\\e[31m\\a\\r\\x9b\"\n");
	const char *const cases[][9] = {
		{ "run", "-n", "1", quote },			/* the splitter */
		{ "run", "-n", "1", "--env", env, "true" },	/* --env */
		{ "run", "-n", "1", "--name", name, "--name", name, "true", "false" },
		{ "run", "e.yaml" },				/* a file's value */
		{ "report", "--db", name },			/* a path */
	};
	struct cli_result r;

	tl_write(dir, "e.yaml", yaml);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i];
		cli_run(dir, &r, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], NULL);
		cr_assert_eq(r.status, 2, "case %zu: exit %d: %s", i, r.status, r.err);
		cr_assert(strstr(r.err, shown), "case %zu: not shown escaped: %s", i, r.err);
		const char *bad = hostile_byte(r.err);
		cr_assert_null(bad, "case %zu: byte 0x%02x on stderr at %zu: %s", i,
			       bad ? (unsigned char)*bad : 0, bad ? (size_t)(bad - r.err) : 0, r.err);
		cli_result_release(&r);
	}
	free(quote);
	free(env);
	free(name);
	free(yaml);
}
