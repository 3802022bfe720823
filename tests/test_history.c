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
#include "reports/bisect_out.h"
#include "stats/stats.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

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
	/* shown by perturb runs and history: printable text */
	cli_run(dir, &r, "run", "s.yaml", "--db", db, "-q", "--label", "x\033[2Jy", NULL);
	cr_assert_eq(r.status, 2, "%d", r.status);
	cr_assert(strstr(r.err, "--label 'x\\x1b[2Jy': a label is printable text"), "%s", r.err);
	cr_assert_null(strchr(r.err, '\033'), "%s", r.err);
	cli_result_release(&r);
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

/* t.yaml: study t, variant traced prints value=V from dir/value (base
 * 100), each run with 0.5 % of noise; revision: repo when rev. */
static void write_step_study(int rev)
{
	char *yaml = xasprintf(
		"name: t\n"
		"repetitions: 4\n"
		"warmup: 0\n"
		"%s"
		"variants:\n"
		"  - {name: base}\n"
		"  - {name: traced, env: {T: '1'}}\n"
		"workloads:\n"
		"  - name: w\n"
		"    shell: >-\n"
		"      awk -v s=$$ -v t=\"$T\" -v v=$(cat %s/value)\n"
		"      'BEGIN{srand(s); b=100; if (t != \"\") b=v; print \"value=\" b*(1+0.005*rand())}'\n"
		"    metrics:\n"
		"      - {name: value, regex: 'value=([0-9.]+)', unit: x}\n",
		rev ? "revision: repo\n" : "", dir);
	tl_write(dir, "t.yaml", yaml);
	free(yaml);
}

static void run_t(const char *label, int value)
{
	struct cli_result r;
	char v[32];

	snprintf(v, sizeof(v), "%d\n", value);
	tl_write(dir, "value", v);
	cli_run(dir, &r, "run", "t.yaml", "--db", db, "-q", "--label", label, NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
}

/* The run ids of a history's CSV, in its order. */
static char *csv_runs(const char *csv)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = strchr(csv, '\n');

	while (p && p[1]) {
		const char *f = p + 1;
		for (int i = 0; i < 5; i++)
			f = strchr(f, ',') + 1;
		strbuf_addf(&sb, "%s%d", sb.len ? " " : "", atoi(f));
		p = strchr(f, '\n');
	}
	return sb.buf ? strbuf_detach(&sb) : xstrdup("");
}

Test(history, the_series_has_the_reports_dilations_and_a_change_point_at_the_step)
{
	struct cli_result r, rep;
	char name[16], *line;

	write_step_study(0);
	for (int i = 1; i <= 10; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		run_t(name, i <= 5 ? 110 : 130);
	}
	/* a further change of less than 5 % in a flat stretch (a false alarm
	 * the search makes now and then) is not reported */
	cli_run(dir, &r, "history", "t.yaml", "--db", db, "--metric", "value", "--min-change", "5%",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "10 runs of study 't', 10 revisions in time order"), "%s", r.out);
	cr_assert(strstr(r.out, "change point between r5 and r6: dilation +"), "%s", r.out);
	cr_assert(strstr(r.out, "-> +29.") || strstr(r.out, "-> +30."), "%s", r.out);
	cr_assert_eq(tl_count_str(r.out, "change point between"), 1, "%s", r.out);
	cli_result_release(&r);

	/* the step is about +18 %: below a minimum of 50 % it is not reported */
	cli_run(dir, &r, "history", "t", "--db", db, "--metric", "value", "--min-change", "50%",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "  no change point (E-divisive, level 0.05; ") &&
		  strstr(r.out, " below --min-change dropped)") &&
		  !strstr(r.out, "change point between"), "%s", r.out);
	cli_result_release(&r);

	/* each point is perturb report's: its dilation and interval */
	cli_run(dir, &r, "history", "t", "--db", db, "--metric", "value", "--min-change", "5%", "--format", "csv", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_run(dir, &rep, "report", "--db", db, "--run", "r7", "--metric", "value", "--format",
		"json", NULL);
	cr_assert_eq(rep.status, 0, "%s", rep.err);
	line = strstr(r.out, "\nt,w,traced,value,x,7,r7,r7,,4,median,");
	cr_assert(line, "%s", r.out);
	{
		double pct, lo, hi;
		char *d = strchr(line + 1, '\n'), *f = line + 1;
		*d = '\0';
		for (int i = 0; i < 12; i++)
			f = strchr(f, ',') + 1;
		cr_assert_eq(sscanf(f, "%lf,%lf,%lf", &pct, &lo, &hi), 3, "%s", line + 1);
		{
			/* the report's p50 dilation of the traced series: "pct" and "ci" */
			const char *q = strstr(rep.out, "\"dilation\":");
			double rp, rlo, rhi;
			cr_assert(q, "%s", rep.out);
			q = strstr(q, "\"p50\":{");
			cr_assert(q);
			cr_assert_eq(sscanf(strstr(q, "\"pct\":") + 6, "%lf", &rp), 1);
			cr_assert_eq(sscanf(strstr(q, "\"ci\":[") + 6, "%lf,%lf", &rlo, &rhi), 2);
			cr_assert_float_eq(pct, rp, 1e-9 * fabs(rp), "%g vs the report's %g", pct, rp);
			cr_assert_float_eq(lo, rlo, 1e-9 * fabs(rlo), "%g vs %g", lo, rlo);
			cr_assert_float_eq(hi, rhi, 1e-9 * fabs(rhi), "%g vs %g", hi, rhi);
		}
		*d = '\n';
	}
	cli_result_release(&rep);
	cr_assert(strstr(r.out, ",above,0.0"), "the change point's p on r6's row:\n%s", r.out);
	cli_result_release(&r);

	/* by a prefix of the experiment's hash (perturb runs --json), the last 3 */
	cli_run(dir, &r, "runs", "--db", db, "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	line = strstr(r.out, "\"experiment_sha256\": \"");
	cr_assert(line, "%s", r.out);
	{
		char *prefix = xstrndup(line + strlen("\"experiment_sha256\": \""), 8);
		struct cli_result h;
		cli_run(dir, &h, "history", prefix, "--db", db, "--metric", "value", "--last", "3",
			NULL);
		cr_assert_eq(h.status, 0, "%s", h.err);
		cr_assert(strstr(h.out, "3 runs of study 't'") && strstr(h.out, " r8 ") &&
			  !strstr(h.out, " r7 "), "%s", h.out);
		cli_result_release(&h);
		free(prefix);
	}
	cli_result_release(&r);

	/* html: one plot, a band, 10 points and the change point */
	cli_run(dir, &r, "history", "t", "--db", db, "--metric", "value", "--min-change", "5%", "--format", "html",
		"--output", "h.html", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	{ char *hp = xasprintf("%s/h.html", dir); line = read_file(hp, NULL); free(hp); }
	cr_assert(line);
	cr_assert_eq(tl_count_str(line, "<svg class=history"), 1);
	cr_assert_eq(tl_count_str(line, "<circle class=run"), 10);
	cr_assert_eq(tl_count_str(line, "<line class=changepoint"), 1);
	cr_assert(strstr(line, "<path class=band"));
	free(line);
	cli_run(dir, &r, "history", "t", "--db", db, "--metric", "value", "--min-change", "5%", "--format", "json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"before\": \"r5\"") && strstr(r.out, "\"at\": \"r6\""), "%s", r.out);
	cli_result_release(&r);
}

Test(history, commit_order_follows_the_repository_not_the_clock)
{
	struct cli_result r;
	char *ids;

	free(sh("mkdir repo && cd repo && " GIT "init -q . && for i in 1 2 3; do echo $i > f && "
		GIT "add f && " GIT "commit -qm c$i && " GIT "tag -a -m c$i c$i; done"));
	write_step_study(1);
	/* run at c3, then c1, then c2: ids 1, 2, 3 */
	free(sh("git -C repo checkout -q c3"));
	run_t("three", 100);
	free(sh("git -C repo checkout -q c1"));
	run_t("one", 100);
	free(sh("git -C repo checkout -q c2"));
	run_t("two", 100);
	cli_run(dir, &r, "history", "t.yaml", "--db", db, "--metric", "value", "--format", "csv",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	ids = csv_runs(r.out);
	cr_assert_str_eq(ids, "2 3 1", "%s", r.out);
	cr_assert(strstr(r.out, ",2,c1,one,"), "the revision is git describe's:\n%s", r.out);
	free(ids);
	cli_result_release(&r);
	cli_run(dir, &r, "history", "t", "--db", db, "--metric", "value", NULL);
	cr_assert(strstr(r.out, "in commit order of "), "%s", r.out);
	cli_result_release(&r);
}

Test(history, bad_input_exits_2_writing_nothing)
{
	struct cli_result r;

	write_step_study(0);
	run_t("a", 100);
	cli_run(dir, &r, "history", "nope", "--db", db, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "no study 'nope'"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "history", "t", "--db", db, "--output", db, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "which this command reads"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "history", "t", "--db", db, "--format", "xml", "--output", "o", NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	/* a name that matches nothing of the study's runs is a typo, with a
	 * did-you-mean, as in report, compare, gate and bisect (issue 22) */
	static const struct { const char *opt, *name, *want; } typos[] = {
		{ "--metric", "valeu", "--metric 'valeu' matches no metric of the 1 run of study "
				       "'t'; did you mean 'value'?" },
		{ "--variant", "tracde", "did you mean 'traced'?" },
		{ "--workload", "ww", "did you mean 'w'?" },
	};
	for (size_t i = 0; i < sizeof(typos) / sizeof(typos[0]); i++) {
		cli_run(dir, &r, "history", "t", "--db", db, typos[i].opt, typos[i].name,
			"--output", "o", NULL);
		cr_assert_eq(r.status, 2, "%s: exit %d: %s", typos[i].opt, r.status, r.err);
		cr_assert(strstr(r.err, typos[i].want), "%s", r.err);
		cli_result_release(&r);
	}
	/* a name the runs have, with nothing compared: said so, exit 2 */
	cli_run(dir, &r, "history", "t", "--db", db, "--variant", "base", "--output", "o", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "compared with its baseline"), "%s", r.err);
	cli_result_release(&r);
	{ char *o = xasprintf("%s/o", dir); cr_assert_not(tl_exists(o), "nothing written"); free(o); }
}

Test(history, gate_history_fails_on_a_change_at_the_newest_run_only)
{
	struct cli_result r;
	char name[16];

	write_step_study(0);
	for (int i = 1; i <= 20; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		run_t(name, 110);
	}
	/* the same overhead again: pass */
	cli_run(dir, &r, "gate", "--db", db, "--history", "19", "--metric", "value", "--min-change", "5%", NULL);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "PASS  w, traced, value: no change at the newest run (change "),
		  "%s", r.out);
	cli_result_release(&r);
	/* too few runs to reach the level: said, and passed */
	cli_run(dir, &r, "gate", "--db", db, "--history", "5", "--metric", "value", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.err, "at least 1/6"), "%s", r.err);
	cli_result_release(&r);

	run_t("c21", 130);
	cli_run(dir, &r, "gate", "--db", db, "--history", "19", "--metric", "value", "--min-change", "5%", NULL);
	cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "FAIL  w, traced, value: change at the newest run between c20 and "
			 "c21: dilation +"), "%s", r.out);
	cr_assert(strstr(r.out, "p 0.0500"), "%s", r.out);
	cli_result_release(&r);
	/* the run before it, judged against its own 19 */
	cli_run(dir, &r, "gate", "--db", db, "--history", "19", "--metric", "value", "--min-change", "5%", "--run", "c20",
		NULL);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cli_result_release(&r);
	/* faster is no failure */
	run_t("c22", 100);
	run_t("c23", 100);
	cli_run(dir, &r, "gate", "--db", db, "--history", "20", "--metric", "value", "--min-change", "5%", "--run", "c22",
		NULL);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "gate", "--db", db, "--history", "19", "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "not --max-dilation"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "gate", "--db", db, "--min-change", "5%", "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "--min-change is --history's"), "%s", r.err);
	cli_result_release(&r);
}

/* ---- perturb bisect ---- */

/*
 * dir/repo: n commits of prog.c, which spins 20 ms of CPU time (plus up to
 * jitter ms, by the microseconds of the clock at its start: noise of its
 * own in each run; by its pid, it followed the plan's interleaving, so
 * one variant's runs were systematically longer and a bisect below the
 * noise judged a commit "good" at 99.9 %), and under variant traced (env
 * T) EXTRA ms more:
 * 0 before commit k (1-based), extra from k on.  b.yaml runs it under base
 * and traced; the bisect judges cgroup_cpu_s, the CPU time of the run's
 * processes, which a machine shared with other work blurs far less than
 * wall time.
 */
static void make_bisect_repo(int n, int k, const char *extra, int jitter, int reps)
{
	free(sh("mkdir repo && cd repo && " GIT "init -q . && echo prog > .gitignore && "
		"echo %d > jitter && "
		"printf '%%s\\n' '#include <stdlib.h>' '#include <time.h>' '#include <unistd.h>' "
		"'static void spin(double ms) { struct timespec a, b; "
		"clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a); "
		"do clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b); "
		"while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms); }' "
		"'int main(void) { struct timespec t; clock_gettime(CLOCK_REALTIME, &t); "
		"spin(20 + JITTER * (t.tv_nsec / 1000 %% 97) / 97.0); "
		"if (getenv(\"T\")) spin(EXTRA); return 0; }' > prog.c && "
		"for i in $(seq 1 %d); do if [ $i -ge %d ]; then echo %s; else echo 0; fi > extra; "
		"echo $i > n; " GIT "add -A && " GIT "commit -qm c$i && " GIT "tag -a -m c$i c$i; "
		"done", jitter, n, k, extra));
	char *yaml = xasprintf("name: b\n"
			       "repetitions: %d\n"
			       "warmup: 1\n"
			       "variants:\n"
			       "  - {name: base}\n"
			       "  - {name: traced, env: {T: '1'}}\n"
			       "workloads:\n"
			       "  - {name: w, cmd: ['%s/repo/prog']}\n", reps, dir);
	tl_write(dir, "b.yaml", yaml);
	free(yaml);
}

#define BUILD "cc -O1 -DEXTRA=$(cat extra) -DJITTER=$(cat jitter) -o prog prog.c"

static void bisect(struct cli_result *r, const char *build, const char *max, const char *rounds)
{
	cli_run(dir, r, "bisect", "b.yaml", "--repo", "repo", "--good", "c1", "--bad", "c30",
		"--build", build, "--db", db, "--variant", "traced", "--metric", "cgroup_cpu_s",
		"--max-dilation", max,
		"--max-rounds", rounds, NULL);
}

/* The repository as it was: on main at c30, no bisect under way. */
static void repo_restored(void)
{
	char *b = sh("git -C repo rev-parse --abbrev-ref HEAD"), *t = sh("git -C repo describe");

	cr_expect_str_eq(b, "main");
	cr_expect_str_eq(t, "c30");
	free(b);
	free(t);
	free(sh("test ! -e repo/.git/BISECT_LOG && test ! -e repo/.git/BISECT_START"));
}

/*
 * A commit is judged after each round until an interval leaves the
 * threshold: with the true dilation at the threshold, every decision is
 * one the level should bound.  2,000 simulated commits, 4 looks of 50 more
 * runs a side each (normal, sd 10 %, the variant exactly +10 % over the
 * baseline, threshold 10 %), the asymptotic interval of the mean's
 * dilation: at 95 % a look about 12 % of them are decided (Pocock 1977's
 * 0.126 for 4 looks); at bisect_look_confidence()'s level at most the 5 %
 * that 95 % promises (3 standard errors allowed for the simulation).
 */
Test(history, bisect_looks_together_keep_the_level)
{
	enum { SIMS = 2000, LOOKS = 4, STEP = 50 };
	double lv[2] = { 0.95, bisect_look_confidence(0.95, LOOKS - 1) }, rate[2];
	double *b = malloc(LOOKS * STEP * sizeof(double)), *v = malloc(LOOKS * STEP * sizeof(double));
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);

	cr_assert_float_eq(lv[1], 0.9875, 1e-12);
	cr_assert_float_eq(bisect_look_confidence(0.95, 0), 0.95, 1e-12, "one look: the level");
	for (int a = 0; a < 2; a++) {
		int decided = 0;
		gsl_rng_set(rng, 20);
		for (int sim = 0; sim < SIMS; sim++) {
			for (int i = 0; i < LOOKS * STEP; i++) {
				b[i] = 1.0 + gsl_ran_gaussian(rng, 0.1);
				v[i] = 1.1 + gsl_ran_gaussian(rng, 0.11);
			}
			for (int k = 1; k <= LOOKS; k++) {
				struct boot_opts o = { .conf = lv[a], .max_boot_n = 1 };
				struct dilation d;
				cr_assert_eq(stats_dilation(b, (size_t)k * STEP, v, (size_t)k * STEP,
							    STATK_MEAN, 0, &o, &d), 0);
				cr_assert(d.ci_pct.has_ci);
				if (d.ci_pct.lo > 10 || d.ci_pct.hi < 10) {
					decided++;
					break;
				}
			}
		}
		rate[a] = (double)decided / SIMS;
	}
	cr_expect_gt(rate[0], 0.08, "4 looks at 95 %% each: %.3f decided (optional stopping "
		     "should show)", rate[0]);
	cr_expect_leq(rate[1], 0.05 + 3 * sqrt(0.05 * 0.95 / SIMS),
		      "4 looks at %.4g %% each: %.3f decided, over the 5 %% of 95 %%", 100 * lv[1],
		      rate[1]);
	gsl_rng_free(rng);
	free(b);
	free(v);
}

Test(history, bisect_finds_the_commit_of_a_slowdown_and_resumes, .timeout = 600)
{
	struct cli_result r;
	char *c17 = NULL, *line;

	make_bisect_repo(30, 17, "40", 0, 4);
	c17 = sh("git -C repo rev-parse c17^{commit}");
	/* a stop in the fourth build: exit 3, the repository as it was */
	cli_run(dir, &r, "bisect", "b.yaml", "--repo", "repo", "--good", "c1", "--bad", "c30",
		"--build", "n=$(cat ../count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > ../count; "
		"if [ $n -eq 4 ]; then kill -TERM $PPID; sleep 5; fi; " BUILD,
		"--db", db, "--variant", "traced", "--metric", "cgroup_cpu_s", "--max-dilation", "60%",
		"--max-rounds", "4", NULL);
	cr_assert_eq(r.status, 3, "exit %d\n%s%s", r.status, r.out, r.err);
	cli_result_release(&r);
	repo_restored();
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 3);

	/* again: the three stored runs are judged, not run again */
	bisect(&r, BUILD, "60%", "4");
	cr_assert_eq(r.status, 0, "exit %d\n%s%s", r.status, r.out, r.err);
	line = xasprintf("first bad commit: %s (c17)", c17);
	cr_assert(strstr(r.out, line), "%s\n%s", r.out, r.err);
	free(line);
	cr_assert(strstr(r.out, "(3 stored before)"), "%s", r.out);
	cr_assert(strstr(r.out, "w, traced, cgroup_cpu_s: the dilation at it is +"), "%s", r.out);
	cr_assert(strstr(r.out, " points from the last good c16's, 95 % interval ["), "%s", r.out);
	cr_assert(strstr(r.out, "(each commit judged at 99 % a look, so that its up to 5 looks "
			 "keep 95 %: Bonferroni)"), "%s", r.out);
	cli_result_release(&r);
	repo_restored();
	/* every commit's run is in the history, by commit */
	cli_run(dir, &r, "history", "b.yaml", "--db", db, "--variant", "traced", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "in commit order of "), "%s", r.out);
	cr_assert(strstr(r.out, " c17 "), "%s", r.out);
	cli_result_release(&r);
	free(c17);
}

Test(history, bisect_below_the_noise_ends_undecided_never_wrong, .timeout = 600)
{
	struct cli_result r;

	/* 0.02 ms (0.1 %) in runs of 20 to 30 ms (each run's pid picks its
	 * length): far below what 30 runs resolve, against 0.05 %.  An
	 * interval misses its truth at the rate its level allows, so a commit
	 * is decided wrongly now and then at 95 %; this test judges about 8
	 * commits and must not fail by chance: at 99.99 %, from 30 pairs
	 * (the paired bootstrap of 12 pairs missed 0.23 % of A/A samples at
	 * 99.9 %, 2.3 times its level; of 30, 0.06 %) and 200000 replicates
	 * (stats_boot_replicates; with 2000, a 99.99 % interval missed 0.06 %).
	 * With 12 runs a commit at 99.9 % it failed about once in 70 runs. */
	make_bisect_repo(30, 17, "0.02", 10, 30);
	free(sh("cd repo && " GIT "tag -a -m x lo c14 && " GIT "tag -a -m x hi c20"));
	cli_run(dir, &r, "bisect", "b.yaml", "--repo", "repo", "--good", "lo", "--bad", "hi",
		"--build", BUILD, "--db", db, "--variant", "traced", "--metric", "cgroup_cpu_s",
		"--max-dilation", "0.05%", "--confidence", "0.9999",
		"--max-rounds", "0", NULL);
	cr_assert_eq(r.status, 1, "exit %d\n%s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.out, "undecided: "), "%s", r.out);
	cr_assert_not(strstr(r.out, "first bad commit:"), "%s", r.out);
	for (int i = 15; i <= 20; i++) {
		char *tag = xasprintf("c%d", i), *id = sh("git -C repo rev-parse %s^{commit}", tag);
		cr_expect(strstr(r.out, id), "%s (%s) not among the candidates:\n%s", tag, id, r.out);
		free(id);
		free(tag);
	}
	cli_result_release(&r);
	repo_restored();
}

Test(history, bisect_bad_input_exits_2)
{
	struct cli_result r;

	make_bisect_repo(3, 2, "40", 0, 4);
	cli_run(dir, &r, "bisect", "b.yaml", "--repo", "repo", "--good", "c1", "--bad", "nope",
		"--build", "true", "--db", db, "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "'nope' is not a commit"), "%s", r.err);
	cli_result_release(&r);
	/* nothing builds: every commit skipped, undecided, nothing stored */
	cli_run(dir, &r, "bisect", "b.yaml", "--repo", "repo", "--good", "c1", "--bad", "c3",
		"--build", "false", "--db", db, "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 1, "exit %d\n%s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.out, "(its build failed)") && strstr(r.out, "undecided: "), "%s",
		  r.out);
	cli_result_release(&r);
	free(sh("test \"$(git -C repo rev-parse --abbrev-ref HEAD)\" = main"));
	free(sh("echo x >> repo/prog.c"));
	cli_run(dir, &r, "bisect", "b.yaml", "--repo", "repo", "--good", "c1", "--bad", "c3",
		"--build", "true", "--db", db, "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "uncommitted changes"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "bisect", "b.yaml", "--repo", "repo", "--good", "c1", NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	cr_assert_not(tl_exists(db), "nothing written");
	/* a name that matches nothing: exit 2 at the first run measured, with
	 * a did-you-mean (as perturb gate), not every commit run, undecided */
	free(sh("git -C repo checkout -q prog.c"));
	cli_run(dir, &r, "bisect", "b.yaml", "--repo", "repo", "--good", "c1", "--bad", "c3",
		"--build", BUILD, "--db", db, "--metric", "wal", "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 2, "exit %d\n%s%s", r.status, r.out, r.err);
	cr_assert(strstr(r.err, "'wal'") && strstr(r.err, "wall"), "%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM runs"), 1, "%s", r.err);
	cli_result_release(&r);
	free(sh("test \"$(git -C repo rev-parse --abbrev-ref HEAD)\" = main"));
}
