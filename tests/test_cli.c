/*
 * End-to-end tests of `perturb run` and `perturb report`: the real binary on
 * small experiments whose workloads are shell one-liners and system tools.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "engine/config.h"
#include "lib/util.h"

TL_FIXTURE_DB("results/perturb.db")

TestSuite(cli, .init = tl_setup, .fini = tl_teardown, .timeout = 60);

/* Write the experiment file e.yaml, run it into db and check the exit
 * status and, unless want_err is NULL, that stderr contains want_err. */
static char last_err[4096];	/* the end of run_study()'s stderr */

static void run_study(const char *yaml, int want_status, const char *want_err)
{
	struct cli_result r;
	size_t n;
	tl_write(dir, "e.yaml", yaml);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, want_status, "exit %d: %s", r.status, r.err);
	if (want_err)
		cr_assert(strstr(r.err, want_err), "%s", r.err);
	n = strlen(r.err);
	snprintf(last_err, sizeof(last_err), "%s",
		 r.err + (n >= sizeof(last_err) ? n - sizeof(last_err) + 1 : 0));
	cli_result_release(&r);
}

/* The number of rows of `from` (an aliased table: "results r" or
 * "metric_values m") whose plan entry (p) matches the SQL condition where. */
static int64_t count_with_plan(const char *from, const char *where)
{
	char *sql = xasprintf("SELECT count(*) FROM %s JOIN plan p USING (run_id, seq) WHERE %s",
			      from, where);
	int64_t n = cli_sql_int(db, sql);
	free(sql);
	return n;
}

/* The status of the (only) study in db is want. */
static void assert_study_status(const char *want)
{
	char *st = cli_sql_text(db, "SELECT status FROM runs");
	cr_assert(st, "no study in %s", db);
	cr_assert_str_eq(st, want);
	free(st);
}

/* The path of a file in the work folder of the workloads (malloc'd). */
static char *work_file(const char *name)
{
	return xasprintf("%s/results/work/%s", dir, name);
}

/* The pid a workload wrote in the work file name. */
static long read_pid(const char *name)
{
	char *path = work_file(name);
	FILE *f = fopen(path, "r");
	long pid = 0;
	cr_assert(f && fscanf(f, "%ld", &pid) == 1, "no pid in %s", path);
	fclose(f);
	free(path);
	return pid;
}

static const char *two_variants =
	"name: envtest\n"
	"repetitions: 3\n"
	"warmup: 1\n"
	"seed: 5\n"
	"variants:\n"
	"  - name: one\n"
	"    env: {PERTURB_T: 1}\n"
	"  - name: two\n"
	"    env: {PERTURB_T: 2}\n"
	"    wrap: [/bin/sh, -c, 'echo wrapped=7; exec \"$@\"', wrapper]\n"
	"workloads:\n"
	"  - name: echo\n"
	"    shell: 'echo value=$PERTURB_T; echo wrapped=0'\n"
	"    metrics:\n"
	"      - {name: v, regex: 'value=([0-9]+)', unit: x}\n"
	"      - {name: w, regex: 'wrapped=([0-9]+)'}\n";

Test(cli, run_stores_every_run_with_env_wrap_and_metrics)
{
	struct cli_result r;
	run_study(two_variants, 0, NULL);

	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM plan"), 2 * 4);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 8);
	/* env reached the workload: variant one measured 1, two measured 2 */
	cr_assert_eq(count_with_plan("metric_values m",
				     "m.metric = 'v' AND ((p.variant = 'one' AND m.value = 1) OR "
				     "(p.variant = 'two' AND m.value = 2))"), 8);
	/* wrap ran around the workload of variant two only */
	cr_assert_eq(count_with_plan("metric_values m", "m.metric = 'w' AND p.variant = 'two' AND m.value = 7"), 4);
	cr_assert_eq(count_with_plan("metric_values m", "m.metric = 'w' AND p.variant = 'one' AND m.value = 0"), 4);
	assert_study_status("completed");
	/* provenance */
	char *kr = cli_sql_text(db, "SELECT kernel_release FROM runs");
	cr_assert(kr && *kr);
	free(kr);
	cr_assert_eq(cli_sql_int(db, "SELECT seed FROM runs"), 5);

	cli_run(dir, &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "echo: v (x)"), "%s", r.out);
	cr_assert(strstr(r.out, "baseline"), "%s", r.out);
	/* median 2 vs 1: +100 % */
	cr_assert(strstr(r.out, "+100.00 %"), "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "report", "--db", db, "--format", "csv", "--metric", "v", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(!strncmp(r.out, "run_id,variant,workload,repetition,metric,value,unit", 52),
		  "%s", r.out);
	cr_assert_eq(tl_count_lines(r.out), 1 + 6, "header + 3 measured runs x 2 variants:\n%s", r.out);
	cr_assert(strstr(r.out, ",two,echo,3,v,2,x,"), "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "report", "--db", db, "--format", "csv", "--metric", "v",
		"--include-warmup", NULL);
	cr_assert_eq(tl_count_lines(r.out), 1 + 8);
	cli_result_release(&r);
}

Test(cli, dry_run_prints_plan_and_writes_nothing)
{
	struct cli_result r;
	tl_write(dir, "e.yaml", two_variants);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--dry-run", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "8 runs"), "%s", r.out);
	cr_assert(strstr(r.out, "seed 5"), "%s", r.out);
	cr_assert(!tl_exists(db));
	char *res = xasprintf("%s/results", dir);
	cr_assert(!tl_exists(res), "dry run created %s", res);
	free(res);
	cli_result_release(&r);
}

Test(cli, config_error_exits_2_with_position_and_creates_no_database)
{
	struct cli_result r;
	tl_write(dir, "bad.yaml",
		  "name: x\n"
		  "repetitons: 3\n"
		  "variants: [{name: a}]\n"
		  "workloads: [{name: t, cmd: [true]}]\n");
	cli_run(dir, &r, "run", "bad.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "bad.yaml:2:1:"), "%s", r.err);
	cr_assert(strstr(r.err, "did you mean 'repetitions'"), "%s", r.err);
	cr_assert(!tl_exists(db));
	cli_result_release(&r);

	cli_run(dir, &r, "run", "missing.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "missing.yaml"), "%s", r.err);
	cr_assert(!tl_exists(db));
	cli_result_release(&r);
}

Test(cli, usage_errors_exit_2)
{
	struct cli_result r;
	tl_write(dir, "e.yaml", two_variants);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--only-variant", "nope", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "no variant named 'nope'"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--repetitions", "0", NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "e.yaml", "--bogus", NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	cli_run(dir, &r, "frobnicate", NULL);
	cr_assert_eq(r.status, 2);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "no results database"), "%s", r.err);
	cli_result_release(&r);
	cr_assert(!tl_exists(db));
}

Test(cli, only_variant_keeps_baseline_and_repetitions_override)
{
	struct cli_result r;
	tl_write(dir, "e.yaml",
		  "name: x\nwarmup: 0\n"
		  "variants: [{name: a}, {name: b}, {name: c}]\n"
		  "workloads: [{name: t, cmd: [true]}, {name: u, cmd: [true]}]\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--only-variant", "c",
		"--only-workload", "u", "--repetitions", "2", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 4);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM plan WHERE variant = 'b'"), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM plan WHERE workload = 't'"), 0);
	cli_result_release(&r);
}

Test(cli, timeout_kills_the_workload_and_records_it)
{
	struct cli_result r;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* every run of one pair failed: exit 3, but the study completed */
	run_study("name: x\nwarmup: 0\nrepetitions: 2\n"
		  "variants: [{name: a}]\n"
		  "workloads:\n"
		  "  - name: slow\n"
		  "    shell: 'echo $$ >> pids; sleep 60 & echo $! >> pids; wait'\n"
		  "    timeout: 300ms\n"
		  "  - name: fast\n"
		  "    cmd: [true]\n", 3, "every run of workload 'slow'");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_lt((t1.tv_sec - t0.tv_sec), 20, "time-out not enforced");
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'timeout'"), 2);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 2);
	char *reason = cli_sql_text(db, "SELECT reason FROM results WHERE status = 'timeout'");
	cr_assert(reason && strstr(reason, "timed out"), "%s", reason);
	free(reason);
	/* the shell and its sleeping child are gone */
	char *pids_path = work_file("slow/pids");
	FILE *f = fopen(pids_path, "r");
	cr_assert(f);
	long pid;
	int n = 0;
	while (fscanf(f, "%ld", &pid) == 1) {
		cr_assert(tl_process_gone((pid_t)pid), "process %ld survived the time-out", pid);
		n++;
	}
	fclose(f);
	cr_assert_eq(n, 4);
	free(pids_path);
	/* report: the failed runs are counted, not used */
	cli_run(dir, &r, "report", "--db", db, "--workload", "slow", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, "--format", "csv", "--include-failed", NULL);
	cr_assert(strstr(r.out, ",status\n"), "%s", r.out);
	cr_assert(strstr(r.out, ",timeout\n"), "%s", r.out);
	cli_result_release(&r);
}

Test(cli, crash_and_failure_are_kept_with_their_status)
{
	run_study("name: x\nwarmup: 0\nrepetitions: 1\n"
		  "variants: [{name: a}]\n"
		  "workloads:\n"
		  "  - {name: segv, shell: 'kill -SEGV $$'}\n"
		  "  - {name: exit3, shell: 'exit 3'}\n"
		  "  - {name: nometric, cmd: [true], metrics: [{name: m, regex: 'x=([0-9]+)'}]}\n"
		  "  - {name: noexec, cmd: [/nonexistent/prog]}\n"
		  "  - {name: ok, cmd: [true]}\n", 3, NULL);
	cr_assert_eq(count_with_plan("results r", "p.workload = 'segv' AND r.status = 'crashed' AND r.signal = 11"), 1);
	cr_assert_eq(count_with_plan("results r", "p.workload = 'exit3' AND r.status = 'failed' AND r.exit_code = 3"), 1);
	cr_assert_eq(count_with_plan("results r", "p.workload = 'nometric' AND r.status = 'failed'"), 1);
	cr_assert_eq(count_with_plan("results r", "p.workload = 'noexec' AND r.status = 'error'"), 1);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 1);
}

/* perturb run --resume of the killed study e.yaml: exit 0, the one run
 * complete with n results, one for each entry of its plan. */
static void resume_completes(int64_t n)
{
	struct cli_result r;

	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM runs"), 1);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), n);
	cr_assert_eq(cli_sql_int(db, "SELECT count(DISTINCT seq) FROM results"), n);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM plan p WHERE NOT EXISTS "
				     "(SELECT 1 FROM results r WHERE r.run_id = p.run_id AND r.seq = p.seq)"), 0);
	assert_study_status("completed");
}

/*
 * The third run SIGKILLs perturb itself; --resume completes the plan.  It
 * kills once a reader (perturb runs) sees the first two results: they are
 * in a batch (engine/store.h) that perturb commits from the third run's
 * wait, within 2 * STORE_BATCH_S, and what a reader has seen survives.
 */
Test(cli, sigkill_then_resume_completes_exactly_the_missing_runs)
{
	struct cli_result r;
	char *yaml = xasprintf(
		"name: x\nwarmup: 1\nrepetitions: 3\nseed: 9\n"
		"variants: [{name: a}, {name: b}]\n"
		"workloads:\n"
		"  - name: k\n"
		"    shell: 'echo x >> ../count; if [ $(wc -l < ../count) -eq 3 ]; then"
		" i=0; until \"$PERTURB_BIN\" runs --db %s | grep -q \" 2/8 \"; do"
		" i=$((i + 1)); [ $i -lt 400 ] || break; sleep 0.05; done;"
		" kill -KILL $PPID; sleep 5; fi; echo ok'\n", db);
	run_study(yaml, 128 + 9, NULL);
	free(yaml);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 2);
	assert_study_status("running");

	resume_completes(8);

	/* nothing left to resume */
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cli_result_release(&r);
}

/*
 * A SIGKILL amid fast runs, whose results wait in a batch: those of the
 * last STORE_BATCH_S are lost, never half a result, and --resume runs
 * exactly the missing ones.
 */
Test(cli, sigkill_amid_a_batch_of_fast_runs_then_resume_completes_the_plan)
{
	run_study("name: x\nwarmup: 0\nrepetitions: 200\norder: sequential\n"
		  "variants: [{name: a}]\n"
		  "workloads:\n"
		  "  - name: k\n"
		  "    shell: 'echo x >> ../count; if [ $(wc -l < ../count) -eq 150 ]; then kill -KILL $PPID; sleep 5; fi; echo v=1'\n"
		  "    metrics: [{name: v, regex: 'v=([0-9]+)'}]\n",
		  128 + 9, NULL);
	cr_assert_leq(cli_sql_int(db, "SELECT count(*) FROM results"), 149);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results r WHERE NOT EXISTS "
				     "(SELECT 1 FROM metric_values m WHERE m.run_id = r.run_id"
				     " AND m.seq = r.seq AND m.metric = 'v')"), 0);
	assert_study_status("running");

	resume_completes(200);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values WHERE metric = 'v'"), 200);
}

/* A SIGTERM amid fast runs: every run that ended is stored (the batch is
 * committed on the way out), the one it interrupted is not. */
Test(cli, sigterm_amid_a_batch_stores_every_run_that_ended)
{
	struct cli_result r;
	run_study("name: x\nwarmup: 0\nrepetitions: 100\norder: sequential\n"
		  "variants: [{name: a}]\n"
		  "workloads:\n"
		  "  - name: t\n"
		  "    shell: 'echo x >> ../count; if [ $(wc -l < ../count) -eq 60 ]; then kill -TERM $PPID; exec sleep 60; fi; echo ok'\n",
		  3, NULL);
	assert_study_status("interrupted");
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 59);
	cr_assert_eq(cli_sql_int(db, "SELECT max(seq) FROM results"), 58);

	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 100);
}

/* A SIGTERM during a run: the run is not stored, its process group is
 * killed, the study is marked interrupted and can be resumed. */
Test(cli, sigterm_stops_cleanly_and_resume_finishes)
{
	struct cli_result r;
	char *hint;
	run_study("name: x\nwarmup: 0\nrepetitions: 2\n"
		  "variants: [{name: a}]\n"
		  "workloads:\n"
		  "  - name: t\n"
		  "    shell: 'if [ ! -e ../once ]; then touch ../once; sleep 60 & echo $! > ../sleeper; kill -TERM $PPID; wait; fi; echo done'\n",
		  3, NULL);
	assert_study_status("interrupted");
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 0);
	/* the hint is the command that resumes it, --db included */
	hint = xasprintf("'perturb run e.yaml --db %s --resume' completes", db);
	cr_assert(strstr(last_err, hint), "%s", last_err);
	free(hint);
	cr_assert(tl_process_gone((pid_t)read_pid("sleeper")),
		  "the workload's child survived the stop");

	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 2);
}

Test(cli, failing_setup_exits_3_after_teardown)
{
	run_study("name: x\nwarmup: 0\nrepetitions: 1\n"
		  "variants:\n"
		  "  - name: a\n"
		  "  - name: b\n"
		  "    setup: [[touch, setup1], [sh, -c, 'echo broken setup; exit 4']]\n"
		  "    teardown: [[touch, torn-down]]\n"
		  "workloads: [{name: t, cmd: [true]}]\n", 3, "broken setup");
	char *p = work_file("torn-down");
	cr_assert(tl_exists(p), "teardown did not run");
	free(p);
	assert_study_status("failed");
}

Test(cli, daemon_runs_during_the_variant_and_is_stopped)
{
	run_study("name: x\nwarmup: 0\nrepetitions: 2\n"
		  "variants:\n"
		  "  - name: a\n"
		  "  - name: d\n"
		  "    daemon: [sh, -c, 'echo $$ > daemon.pid; echo starting; echo ready now; exec sleep 600']\n"
		  "    daemon_ready: 'ready [a-z]+'\n"
		  "workloads:\n"
		  "  - name: t\n"
		  "    shell: 'if [ -s ../daemon.pid ] && kill -0 $(cat ../daemon.pid) 2>/dev/null; then echo up=1; else echo up=0; fi'\n"
		  "    metrics: [{name: up, regex: 'up=([01])'}]\n", 0, NULL);
	/* every run of d saw the daemon alive */
	cr_assert_eq(count_with_plan("metric_values m", "p.variant = 'd' AND m.metric = 'up' AND m.value = 1"), 2);
	long pid = read_pid("daemon.pid");
	cr_assert(tl_process_gone((pid_t)pid), "daemon %ld outlived perturb", pid);
}

Test(cli, background_load_is_restarted_while_the_variant_runs)
{
	/* The load ends at once; from its third start on, each start also
	 * opens the FIFO go for writing, which blocks until the workload
	 * opens it for reading: the workload of bg waits for the third start,
	 * not for a time (bounded: 20 s, for a load that is never restarted),
	 * and that of a does not wait (it polled for seconds before, longer
	 * than the suite's timeout on a busy machine). */
	char *fifo = xasprintf("%s/go", dir), *starts = xasprintf("%s/bg.starts", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	char *yaml = xasprintf(
		"name: x\nwarmup: 0\nrepetitions: 2\norder: interleaved\n"
		"variants:\n"
		"  - name: a\n"
		"  - name: bg\n"
		"    env: {WAIT: '1'}\n"
		"    background: [sh, -c, 'echo $$ >> %s; [ $(wc -l < %s) -lt 3 ] || echo > %s']\n"
		"workloads:\n"
		"  - name: t\n"
		"    shell: '[ -z \"$WAIT\" ] || timeout 20 sh -c \"read x < %s\"; echo starts=$(wc -l < %s)'\n"
		"    metrics: [{name: starts, regex: 'starts=([0-9]+)'}]\n",
		starts, starts, fifo, fifo, starts);
	run_study(yaml, 0, NULL);
	free(yaml);
	free(fifo);
	free(starts);
	cr_assert_geq(cli_sql_int(db, "SELECT min(m.value) FROM metric_values m JOIN plan p USING (run_id, seq) "
				      "WHERE p.variant = 'bg' AND m.metric = 'starts'"), 3);
	/* entered twice (two rounds), said once, for the whole study */
	cr_assert(strstr(last_err, "background load was started"), "%s", last_err);
	cr_assert_eq(strstr(strstr(last_err, "background load was started") + 1,
			    "background load was started"), NULL, "said more than once: %s", last_err);
	cr_assert(strstr(last_err, "over 2 entries of the variant"), "%s", last_err);
}

Test(cli, unsupported_and_unavailable_variants_stop_before_running)
{
	struct cli_result r;
	tl_write(dir, "e.yaml",
		  "name: x\nwarmup: 0\nrepetitions: 1\n"
		  "variants:\n"
		  "  - name: a\n"
		  "  - name: k\n"
		  "    boot: {qemu: {kernel: debian, boots: 3}}\n"
		  "    setup: [[\"true\"]]\n"
		  "  - name: w\n"
		  "    wrap: [no-such-tracer-xyz]\n"
		  "workloads:\n"
		  "  - {name: t, cmd: [true]}\n"
		  "  - {name: u, cmd: [true], requires: [no-such-program-xyz]}\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "e.yaml:7:"), "position of kernel: %s", r.err);
	cr_assert(strstr(r.err, "not supported yet"), "%s", r.err);
	cr_assert(strstr(r.err, "no-such-tracer-xyz"), "%s", r.err);
	cr_assert(strstr(r.err, "no-such-program-xyz"), "%s", r.err);
	cr_assert(!tl_exists(db));
	cli_result_release(&r);

	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--skip-unavailable", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "skipped"), "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 1);
}

Test(cli, workload_by_name_from_workloads_folder)
{
	struct cli_result r;
	char *wd = xasprintf("%s/workloads", dir);
	cr_assert_eq(mkdir(wd, 0755), 0);
	tl_write(wd, "hello.yaml",
		  "name: hello\ndescription: prints a number\n"
		  "setup: [[sh, -c, 'echo 41 > {workdir}/in']]\n"
		  "cmd: [sh, -c, 'echo n=$(($(cat in) + 1))']\n"
		  "metrics: [{name: n, regex: 'n=([0-9]+)'}]\n");
	/* a description is free text: the list shows it, never obeys it */
	tl_write(wd, "esc.yaml", "name: esc\ndescription: \"a\\e[2Jb\"\ncmd: [true]\n");
	free(wd);
	run_study("name: x\nwarmup: 0\nrepetitions: 2\n"
		  "variants: [{name: a}]\n"
		  "workloads: [hello]\n", 0, NULL);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values WHERE metric = 'n' AND value = 42"), 2);
	cli_run(dir, &r, "workloads", "list", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "hello"), "%s", r.out);
	cr_assert(strstr(r.out, "prints a number"), "%s", r.out);
	cr_assert(strstr(r.out, "a\\x1b[2Jb") && !strchr(r.out, '\033'), "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "workloads", "validate", "workloads/hello.yaml", "e.yaml", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
}

/*
 * A study written outside the checkout names a shipped workload: perturb
 * finds it beside its own binary (the build tree's workloads/), with no
 * PERTURB_WORKLOADS and no make install; a name it cannot find lists every
 * place it looked.
 */
Test(cli, shipped_workloads_are_found_from_the_binary)
{
	const char *src = getenv("PERTURB_SRC");
	struct cli_result r;
	char *shipped;

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	unsetenv("PERTURB_WORKLOADS");
	tl_write(dir, "e.yaml", "name: x\nvariants: [{name: a}]\nworkloads: [null-syscall]\n");
	cli_run(dir, &r, "run", "e.yaml", "--dry-run", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "null-syscall"), "%s", r.out);
	cli_result_release(&r);

	tl_write(dir, "e.yaml", "name: x\nvariants: [{name: a}]\nworkloads: [no-such-one]\n");
	cli_run(dir, &r, "run", "e.yaml", "--dry-run", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	shipped = realpath(src, NULL);
	cr_assert(shipped);
	cr_expect(strstr(r.err, "workloads/no-such-one.yaml, no-such-one.yaml, "), "%s", r.err);
	cr_expect(strstr(r.err, shipped), "the checkout's workloads/ is not named: %s", r.err);
	cr_expect(strstr(r.err, "/share/perturb/workloads/no-such-one.yaml"), "%s", r.err);
	free(shipped);
	cli_result_release(&r);
}

Test(cli, version_and_help)
{
	struct cli_result r;
	cli_run(dir, &r, "--version", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(!strncmp(r.out, "perturb ", 8));
	cli_result_release(&r);
	cli_run(dir, &r, "help", "run", NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "--resume"));
	cli_result_release(&r);
}

/* Every report format works on a stored run and writes what it says. */
Test(cli, report_every_format)
{
	static const char *const formats[][2] = {
		{ "text", "echo: v (x)" }, { "markdown", "| echo: v (x) |" },
		{ "csv", "run_id,variant,workload,repetition,metric,value,unit" },
		{ "json", "\"schema\":\"perturb-report/2\"" }, { "html", "<svg" },
	};
	struct cli_result r;

	run_study(two_variants, 0, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		cli_run(dir, &r, "report", "--db", db, "--format", formats[i][0], "--bootstrap",
			"200", NULL);
		cr_assert_eq(r.status, 0, "%s: %s", formats[i][0], r.err);
		cr_assert(strstr(r.out, formats[i][1]), "%s:\n%s", formats[i][0], r.out);
		cli_result_release(&r);
	}
}

/* ---- percentages: one grammar, a bare 5 refused everywhere ---- */

/* "--a, --b" of the help's "Percentages (--a, --b): ..." footnote, the
 * options of command cmd whose table types them as percentages. */
static size_t percent_options(const char *cmd, char opts[][64], size_t max)
{
	struct cli_result r;
	const char *p, *end;
	size_t n = 0;

	cli_run(dir, &r, "help", cmd, NULL);
	cr_assert_eq(r.status, 0, "help %s: %s", cmd, r.err);
	if ((p = strstr(r.out, "\nPercentages ("))) {
		end = strchr(p, ')');
		cr_assert(end && strstr(end, "5% or the fraction 0.05") &&
			  strstr(end, "refused as ambiguous"), "help %s: %s", cmd, p);
		for (p += strlen("\nPercentages ("); p < end && n < max; n++) {
			size_t len = strcspn(p, ",)");
			snprintf(opts[n], 64, "%.*s", (int)len, p);
			p += len + (p[len] == ',' ? 2 : 0);
		}
	}
	cli_result_release(&r);
	return n;
}

Test(cli, every_percentage_option_refuses_a_bare_number_of_1_or_more)
{
	struct cli_result r;
	char *path = xasprintf("%s/docs/perturb.1", getenv("PERTURB_SRC"));
	char *man = read_file(path, NULL), cmds[16][32], opts[8][64];
	size_t n_cmds = 0, seen = 0;

	cr_assert(man, "cannot read %s", path);
	cr_assert(strstr(man, "a bare number of 1 or more is refused"),
		  "docs/perturb.1 does not state the rule");
	cli_run(dir, &r, "--help", NULL);
	for (const char *p = r.out; (p = strstr(p, "\n  perturb ")) && n_cmds < 16; p++) {
		const char *name = p + 11;
		size_t len = strcspn(name, " \n");
		if (name[0] != '-' && strncmp(name, "help ", 5))
			snprintf(cmds[n_cmds++], 32, "%.*s", (int)len, name);
	}
	cli_result_release(&r);
	for (size_t c = 0; c < n_cmds; c++) {
		size_t n = percent_options(cmds[c], opts, 8);
		for (size_t i = 0; i < n; i++, seen++) {
			/* the value is refused before anything is read or run */
			cli_run(dir, &r, cmds[c], opts[i], "5", "--db", "none.db", NULL);
			cr_expect_eq(r.status, 2, "%s %s 5: exit %d", cmds[c], opts[i], r.status);
			cr_expect(strstr(r.err, opts[i]) && strstr(r.err, "ambiguous") &&
				  strstr(r.err, "5%") && strstr(r.err, "0.05"),
				  "%s %s 5: %s", cmds[c], opts[i], r.err);
			cli_result_release(&r);
			cli_run(dir, &r, cmds[c], opts[i], "1", "--db", "none.db", NULL);
			cr_expect(strstr(r.err, "ambiguous") && strstr(r.err, "1%") &&
				  strstr(r.err, "0.01"), "%s %s 1: %s", cmds[c], opts[i], r.err);
			cli_result_release(&r);
		}
	}
	/* gate --max-dilation, --confidence; run --target-ci; report and
	 * compare --confidence; compare --fail-on-regression */
	cr_assert_geq(seen, 6, "only %zu percentage options found", seen);
	free(man);
	free(path);
}

/* Every key docs/experiment.md types as a percentage, set to a bare 5 in
 * the full example (tests/config/001-full.yaml): refused at its position,
 * both spellings shown. */
Test(cli, every_percentage_key_refuses_a_bare_number_of_1_or_more)
{
	const char *src = getenv("PERTURB_SRC");
	char *doc_path = xasprintf("%s/docs/experiment.md", src);
	char *full_path = xasprintf("%s/tests/config/001-full.yaml", src);
	char *inc_path = xasprintf("%s/tests/config/001-full.inc.yaml", src);
	char *doc = read_file(doc_path, NULL), *full = read_file(full_path, NULL);
	char *inc = read_file(inc_path, NULL), *share = xasprintf("%s/tests/config/share", src);
	char *wl_path = xasprintf("%s/tests/config/workloads/wl-by-name.yaml", src);
	char *wl = read_file(wl_path, NULL);
	size_t seen = 0;

	cr_assert(doc && full && inc && wl);
	cr_assert(strstr(doc, "a bare number of 1 or more is refused"),
		  "docs/experiment.md does not state the rule");
	tl_write(dir, "001-full.inc.yaml", inc);
	{
		char *wdir = xasprintf("%s/workloads", dir);
		cr_assert_eq(mkdir_p(wdir, 0755), 0);
		free(wdir);
	}
	tl_write(dir, "workloads/wl-by-name.yaml", wl);
	setenv("PERTURB_WORKLOADS", share, 1);
	/* table rows "| `key` | percentage ..." or "| `key` | number or percentage ..." */
	for (const char *p = doc; (p = strstr(p, "\n| `")); p++) {
		const char *key = p + 4, *type = strstr(key, "` | ");
		size_t klen = (size_t)(type - key);
		char line[96], *yaml, *at, *err_path;
		struct experiment exp;
		char err[1024];
		if (!type || (strncmp(type + 4, "percentage", 10) &&
			     strncmp(type + 4, "number or percentage", 20)))
			continue;
		snprintf(line, sizeof(line), "    %.*s: ", (int)klen, key);
		at = strstr(full, line);
		cr_assert(at, "key %s not in 001-full.yaml", line);
		/* the key's line, its value replaced by 5 */
		yaml = xasprintf("%.*s%s5%s", (int)(at - full), full, line, strchr(at, '\n'));
		tl_write(dir, "pct.yaml", yaml);
		err_path = xasprintf("%s/pct.yaml", dir);
		cr_expect_neq(config_load(err_path, &exp, err, sizeof(err)), 0, "%s 5 accepted", line);
		cr_expect(strstr(err, "ambiguous") && strstr(err, "5%") && strstr(err, "0.05"),
			  "%s5: %s", line, err);
		free(err_path);
		free(yaml);
		seen++;
	}
	cr_assert_geq(seen, 2, "percentage keys found in docs/experiment.md: %zu", seen);
	unsetenv("PERTURB_WORKLOADS");
	free(doc);
	free(full);
	free(inc);
	free(wl);
	free(wl_path);
	free(share);
	free(doc_path);
	free(full_path);
	free(inc_path);
}

/* ---- perturb runs, and --run latest / -N ---- */


Test(cli, runs_lists_every_run_and_run_takes_latest_and_offsets)
{
	struct cli_result r;
	static const char *const picks[][2] = {
		{ "latest", "Run 2 " }, { "-1", "Run 2 " }, { "-2", "Run 1 " }, { "1", "Run 1 " },
	};

	run_study(two_variants, 0, NULL);
	run_study(two_variants, 0, NULL);
	cli_run(dir, &r, "runs", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(tl_count_lines(r.out), 3, "%s", r.out);
	cr_assert(strstr(r.out, "ID") && strstr(r.out, "STATUS") && strstr(r.out, "MACHINE"),
		  "%s", r.out);
	/* 2 variants x (1 warm-up + 3 runs), all done */
	cr_assert(strstr(r.out, "\n    1  envtest ") && strstr(r.out, "\n    2  envtest "), "%s",
		  r.out);
	cr_assert_eq(tl_count_str(r.out, " completed "), 2, "%s", r.out);
	cr_assert_eq(tl_count_str(r.out, " 8/8 "), 2, "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "runs", "--db", db, "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(r.out[0] == '[' && strstr(r.out, "{\"id\": 2, \"name\": \"envtest\"") &&
		  strstr(r.out, "\"done\": 8, \"total\": 8, \"failed\": 0"), "%s", r.out);
	cli_result_release(&r);

	for (size_t i = 0; i < ARRAY_SIZE(picks); i++) {
		cli_run(dir, &r, "report", "--db", db, "--run", picks[i][0], "--bootstrap", "200",
			NULL);
		cr_assert_eq(r.status, 0, "--run %s: %s", picks[i][0], r.err);
		/* what was run, first */
		cr_assert(strstr(r.out, "\nWhat was run\n============\n ") ==
			  strstr(r.out, picks[i][1]) - strlen("\nWhat was run\n============\n "),
			  "--run %s: %s", picks[i][0], r.out);
		cli_result_release(&r);
	}
	/* a run that is not there: what is there, and how to list it */
	static const char *const missing[] = { "99", "-3", "0", "first" };
	for (size_t i = 0; i < ARRAY_SIZE(missing); i++) {
		cli_run(dir, &r, "report", "--db", db, "--run", missing[i], NULL);
		cr_assert_eq(r.status, 2, "--run %s: exit %d", missing[i], r.status);
		if (strcmp(missing[i], "first") && strcmp(missing[i], "0"))
			cr_assert(strstr(r.err, "it holds runs 1-2") && strstr(r.err, "perturb runs --db "),
				  "--run %s: %s", missing[i], r.err);
		cli_result_release(&r);
	}
	/* gate and compare resolve the same way */
	cli_run(dir, &r, "gate", "--db", db, "--run", "-2", "--max-dilation", "50%", NULL);
	cr_assert(r.status == 0 || r.status == 1, "exit %d: %s", r.status, r.err);
	cr_assert(!strstr(r.err, "error"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "gate", "--db", db, "--run", "7", "--max-dilation", "50%", NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.err, "no run 7") && strstr(r.err, "1-2"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "compare", "--db", db, "--", "-2", "latest", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "envtest") || strstr(r.out, "echo"), "%s", r.out);
	cli_result_release(&r);
}

/* ---- a failed run says why: its last lines of output ---- */

Test(cli, failed_runs_show_their_last_lines_in_the_run_and_every_report_format)
{
	static const char *const formats[][2] = {
		{ "text", "    | error: cannot open /nonexistent/input.dat\n" },
		{ "markdown", "    error: cannot open /nonexistent/input.dat\n" },
		{ "html", "<pre>" },
		{ "json", "\"output_tail\":[\"line 3\",\"line 4\",\"line 5\",\"line 6\","
			  "\"error: cannot open /nonexistent/input.dat\"]" },
	};
	struct cli_result r;

	/* seven lines: the report keeps the last five */
	run_study("name: x\nwarmup: 0\nrepetitions: 2\n"
		  "variants: [{name: a}, {name: b}]\n"
		  "workloads:\n"
		  "  - {name: ok, cmd: [true]}\n"
		  "  - name: bad\n"
		  "    shell: 'for i in 1 2 3 4 5 6; do echo line $i; done; "
		  "echo \"error: cannot open /nonexistent/input.dat\" >&2; exit 2'\n", 3,
		  "  the first, run 1: failed, exited with status 2; its last lines of output:\n"
		  "    | line 3\n    | line 4\n    | line 5\n    | line 6\n"
		  "    | error: cannot open /nonexistent/input.dat\n");
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		cli_run(dir, &r, "report", "--db", db, "--format", formats[i][0], "--bootstrap",
			"200", NULL);
		cr_assert_eq(r.status, 0, "%s: %s", formats[i][0], r.err);
		cr_assert(strstr(r.out, formats[i][1]), "%s:\n%s", formats[i][0], r.out);
		cr_assert(strstr(r.out, "exited with status 2"), "%s:\n%s", formats[i][0], r.out);
		cr_assert(!strstr(r.out, "line 2"), "%s keeps more than 5 lines:\n%s", formats[i][0],
			  r.out);
		if (!strcmp(formats[i][0], "text"))
			cr_assert(strstr(r.out, "\nFailed runs\n bad under ") &&
				  strstr(r.out, ": 2 failed runs; the first, run 1 (plan entry "), "%s",
				  r.out);
		if (!strcmp(formats[i][0], "html"))
			cr_assert(strstr(r.out, "<pre>line 3\nline 4\n") &&
				  strstr(r.out, "error: cannot open /nonexistent/input.dat</pre>"),
				  "%s", r.out);
		if (!strcmp(formats[i][0], "json"))
			tl_check_report_schema(r.out);
		cli_result_release(&r);
	}
}

/* The report reads the failures' details only when its walk met a result
 * that is not ok (issue 25: that query reads every result): a failed
 * warm-up alone, which no series counts, is met too and listed. */
Test(cli, a_failed_warm_up_alone_is_listed_in_the_report)
{
	struct cli_result r;
	char *yaml = xasprintf("name: x\nwarmup: 1\nrepetitions: 2\nvariants: [{name: a}]\n"
			       "workloads:\n  - name: once\n"
			       "    shell: 'test -e %s/flag || { touch %s/flag; "
			       "echo the first fails >&2; exit 3; }'\n", dir, dir);

	run_study(yaml, 0, NULL);
	free(yaml);
	cli_run(dir, &r, "report", "--db", db, "--bootstrap", "200", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nFailed runs\n once under a: 1 failed run; the first, warm-up 1 "
			 "(plan entry 0): failed, exited with status 3") &&
		  strstr(r.out, "| the first fails"), "%s", r.out);
	cli_result_release(&r);
}

/* ---- tables titled by what they show, units on every number ---- */

Test(cli, report_tables_are_titled_by_what_they_show_with_units_at_any_width)
{
	static const char *const formats[] = { "text", "markdown", "html" };
	struct cli_result r;
	const char *p, *end;
	int rows = 0;

	run_study(two_variants, 0, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		cli_run(dir, &r, "report", "--db", db, "--format", formats[i], "--bootstrap", "200",
			NULL);
		cr_assert_eq(r.status, 0, "%s: %s", formats[i], r.err);
		cr_assert(strstr(r.out, "Dilation at percentiles") && strstr(r.out, "Moments") &&
			  strstr(r.out, "The answer"), "%s:\n%s", formats[i], r.out);
		cr_assert(!strstr(r.out, "KTAU Table") && !strstr(r.out, "(LTT)") &&
			  !strstr(r.out, "T/M"), "%s: a title needs a paper:\n%s", formats[i], r.out);
		/* the papers are named once, in the notes */
		p = strstr(r.out, "Notes");
		cr_assert(p && strstr(p, "KTAU") && strstr(p, "Yaghmour") &&
			  strstr(r.out, "KTAU") > p, "%s:\n%s", formats[i], r.out);
		cli_result_release(&r);
	}

	/* seven percentiles: the table is split, every value keeps its unit */
	cli_run(dir, &r, "report", "--db", db, "--metric", "wall", "--bootstrap", "200",
		"--percentiles", "0,10,25,50,75,90,99", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	p = strstr(r.out, "Dilation at percentiles");
	end = p ? strstr(p, " Moments") : NULL;
	cr_assert(p && end, "%s", r.out);
	for (const char *l = p; l && l < end; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char *line, *save = NULL;
		if (strncmp(l, "  one ", 6))	/* the baseline's rows: one value a cell */
			continue;
		line = xstrndup(l + 6, strcspn(l + 6, "\n"));
		for (char *c = strtok_r(line, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
			char *unit = strtok_r(NULL, " ", &save);
			cr_assert(unit && !strcmp(unit, "s"), "a value without its unit: %s\n%s", c,
				  r.out);
		}
		free(line);
		rows++;
	}
	cr_assert_geq(rows, 2, "the table was not split:\n%s", r.out);
	cli_result_release(&r);
}

/* ---- one-liners (engine/oneliner.h) and the closing summary ---- */


/* The path of the one-liner's study written next to db (malloc'd), or
 * NULL when there is none. */
static char *oneliner_file(void)
{
	char *pat = xasprintf("%s/results/oneliner-*.yaml", dir), *path = NULL;
	glob_t g;

	if (glob(pat, 0, NULL, &g) == 0) {
		cr_assert_eq(g.gl_pathc, 1, "one generated study, not %zu", g.gl_pathc);
		path = xstrdup(g.gl_pathv[0]);
		globfree(&g);
	}
	free(pat);
	return path;
}

Test(cli, one_liner_after_dashdash_is_a_stored_study_with_a_summary)
{
	struct cli_result r;
	char *path, *text, *stored;

	cli_run(dir, &r, "run", "-n", "3", "--warmup", "0", "--db", db, "--seed", "9", "--",
		"sh", "-c", "exit 0", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "run 1 'sh': 1 variant x 1 workload, 3 measured runs each, "
			 "completed; baseline base"), "%s", r.out);
	cr_assert(strstr(r.out, "\nThe answer\n") && strstr(r.out, "sh -c 'exit 0'"), "%s", r.out);
	/* the database is not the default one: the command says which */
	cr_assert(strstr(r.out, "full report: perturb report --run 1 --db "), "%s", r.out);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 3);
	cr_assert_eq(cli_sql_int(db, "SELECT seed FROM runs"), 9);
	/* its YAML next to the database, and stored as a file study's */
	path = oneliner_file();
	cr_assert(path, "no oneliner-*.yaml next to the database");
	text = read_file(path, NULL);
	stored = cli_sql_text(db, "SELECT text FROM experiments");
	cr_assert(text && stored);
	cr_assert_str_eq(stored, text);
	cr_assert(strstr(text, "repetitions: 3\n") && strstr(text, "warmup: 0\n"), "%s", text);
	cr_assert(strstr(text, "cmd: [sh, -c, exit 0]"), "%s", text);
	free(stored);
	free(text);
	/* report and compare work on it like on any study */
	cli_run(dir, &r, "report", "--db", db, "--format", "json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"experiment\":\"sh\""), "%.300s", r.out);
	cli_result_release(&r);
	/* the same command line is the same study file: --resume finds it */
	cli_run(dir, &r, "run", path, "--db", db, "--resume", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "holds no unfinished run"), "%s", r.err);
	cli_result_release(&r);
	free(path);
}

Test(cli, several_commands_are_compared_with_the_first)
{
	struct cli_result r;
	char *base;

	cli_run(dir, &r, "run", "-n", "4", "--warmup", "0", "--db", db, "/bin/true",
		"sh -c 'exit 0'", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "run 1 'true vs sh': 2 variants x 1 workload"), "%s", r.out);
	cr_assert(strstr(r.out, "\nThe answer\n") && strstr(r.out, "commands\n"), "%s", r.out);
	/* the variants are named by their commands' text, as hyperfine does */
	cr_assert(strstr(r.out, "baseline /bin/true"), "%s", r.out);
	cli_result_release(&r);
	base = cli_sql_text(db, "SELECT baseline FROM runs");
	cr_assert_str_eq(base, "/bin/true");
	free(base);
	cr_assert_eq(count_with_plan("results r", "p.variant = 'sh -c ''exit 0''' AND "
				     "r.status = 'ok'"), 4);
	cr_assert_eq(count_with_plan("results r", "p.variant = '/bin/true' AND r.status = 'ok'"),
		     4);
	cli_run(dir, &r, "report", "--db", db, "--format", "summary", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* sh against true: a dilation in % on the sh row */
	cr_assert(strstr(r.out, "  sh -c 'exit 0' "), "%s", r.out);
	cr_assert(strstr(r.out, " % ["), "%s", r.out);
	cli_result_release(&r);

	/* -N / --name name them instead, in order; a bad one is refused */
	cli_run(dir, &r, "run", "-q", "-n", "1", "--warmup", "0", "--db", db, "-N", "bare",
		"--name", "by sh", "/bin/true", "sh -c 'exit 0'", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	base = cli_sql_text(db, "SELECT baseline FROM runs WHERE id = 2");
	cr_assert_str_eq(base, "bare");
	free(base);
	cr_assert_eq(count_with_plan("results r", "p.variant = 'by sh' AND r.status = 'ok'"), 1);
	cli_run(dir, &r, "run", "--db", db, "-N", "a,b", "/bin/true", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--name 'a,b': a name is printable text"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "x.yaml", "--db", db, "-N", "a", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--name, --shell and --order are for a one-liner"), "%s", r.err);
	cli_result_release(&r);
}

/* A user's command is measured as given: the placeholders of a study file
 * ({workdir}, {micro}, {perturb}) are not filled in a one-liner's words,
 * neither in an argument nor in the script of sh -c, nor in a wrap. */
Test(cli, one_liner_words_are_not_expanded)
{
	struct cli_result r;
	char *seen, *path = xasprintf("%s/seen", dir);

	cli_run(dir, &r, "run", "-n", "1", "--warmup", "0", "--db", db, "--variant",
		"w=sh -c 'echo \"{perturb}\" >> seen; exec \"$@\"' {micro}", "--",
		"sh", "-c", "echo \"$1\" >> seen; echo '{workdir}' >> seen", "x",
		"{workdir}{micro}{perturb}{logdir}", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	seen = read_file(path, NULL);
	cr_assert(seen, "the command did not run");
	cr_assert_eq(tl_count_str(seen, "{workdir}{micro}{perturb}{logdir}\n"), 2, "%s", seen);
	cr_assert_eq(tl_count_str(seen, "{workdir}\n"), 2, "%s", seen);
	cr_assert_eq(tl_count_str(seen, "{perturb}\n"), 1, "%s", seen);
	cr_assert_eq(tl_count_lines(seen), 5, "%s", seen);
	free(seen);
	free(path);
}

/* A command of 12,000 words (more than a study file once held) is
 * measured: every word reaches it. */
Test(cli, one_liner_of_many_words_runs)
{
	char *sh = xasprintf("cd '%s' && \"$PERTURB_BIN\" run -q -n 1 --warmup 0 --db '%s' -- "
			     "sh -c 'echo $# \"$12000\" > count' x $(seq 1 12000) 2> err", dir, db);
	char *path = xasprintf("%s/count", dir), *seen;

	cr_assert_eq(system(sh), 0, "perturb failed");
	seen = read_file(path, NULL);
	cr_assert(seen, "the command did not run");
	cr_assert_str_eq(seen, "12000 12000\n");
	free(seen);
	free(path);
	free(sh);
}

/* A command with a non-UTF-8 argument (a Latin-1 file name) is measured:
 * the bytes reach it as given; where perturb shows them they are escaped. */
Test(cli, one_liner_of_latin1_bytes_runs_and_is_shown_escaped)
{
	struct cli_result r;
	char *path = xasprintf("%s/out", dir), *seen;
	size_t len = 0;

	cli_run(dir, &r, "run", "-q", "-n", "1", "--warmup", "0", "--db", db, "--", "sh", "-c",
		"printf %s \"$1\" > out", "x", "caf\xe9\x1b[31m", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	seen = read_file(path, &len);
	cr_assert(seen && len == 9 && !memcmp(seen, "caf\xe9\x1b[31m", 9), "%s", seen);
	free(seen);
	cli_run(dir, &r, "run", "-n", "1", "--db", db, "--", "/nonexistent/caf\xe9\x1b[31m", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "'/nonexistent/caf\\xe9\\x1b[31m', no such file"), "%s", r.err);
	cr_assert_null(strchr(r.err, '\x1b'), "%s", r.err);
	cli_result_release(&r);
	free(path);
}

/* "How much does a wrap cost this command?" with no file: --variant NAME=
 * with env words and a wrap, --env on every variant. */
Test(cli, variant_and_env_need_no_file)
{
	struct cli_result r;
	char *seen, *path = xasprintf("%s/seen", dir);

	cli_run(dir, &r, "run", "-n", "2", "--warmup", "0", "--seed", "1", "--db", db,
		"--env", "PERTURB_Y=3", "--variant", "seven=PERTURB_X=7", "--variant",
		"wrapped=sh -c 'echo w >> wraps; exec \"$@\"' wrapper", "--",
		"sh", "-c", "echo \"$PERTURB_X$PERTURB_Y\" >> seen", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.out, "baseline base"), "%s", r.out);
	cli_result_release(&r);
	/* base and wrapped saw 3, seven saw 73; the order is shuffled */
	seen = read_file(path, NULL);
	cr_assert(seen, "the command did not run in the current folder");
	cr_assert_eq(tl_count_lines(seen), 6, "%s", seen);
	{
		int n73 = 0, n3 = 0;
		for (char *l = seen; *l; l = strchr(l, '\n') + 1) {
			n73 += !strncmp(l, "73\n", 3);
			n3 += !strncmp(l, "3\n", 2);
		}
		cr_assert(n73 == 2 && n3 == 4, "%s", seen);
	}
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM variants"), 3);
	free(seen);
	free(path);
	path = xasprintf("%s/wraps", dir);
	seen = read_file(path, NULL);
	cr_assert(seen && tl_count_lines(seen) == 2, "the wrap ran %d times",
		  seen ? tl_count_lines(seen) : 0);
	free(seen);
	free(path);
}

Test(cli, one_liner_quiet_shell_dry_run_and_mistakes)
{
	struct cli_result r;
	char *path;

	/* -q: nothing on stdout, the run stored */
	cli_run(dir, &r, "run", "-q", "-n", "2", "--warmup", "0", "--db", db, "--", "/bin/true",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 2);

	/* --shell runs the line by /bin/sh -c */
	cli_run(dir, &r, "run", "--shell", "-n", "2", "--warmup", "0", "--db", db,
		"echo hi | cat > /dev/null", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "run 2 'echo'"), "%s", r.out);
	cli_result_release(&r);

	/* --dry-run: the YAML and the plan, nothing written */
	tl_rmtree(dir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	cli_run(dir, &r, "run", "--dry-run", "--db", db, "-n", "2", "gzip -c 'a: #b'",
		"zstd -c x", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "name: gzip vs zstd\n"), "%s", r.out);
	cr_assert(strstr(r.out, "cmd: [gzip, -c, 'a: #b']"), "%s", r.out);
	cli_result_release(&r);
	path = xasprintf("%s/results", dir);
	cr_assert(access(path, F_OK) != 0, "--dry-run created %s", path);
	free(path);

	/* mistakes: exit 2, saying what to do */
	cli_run(dir, &r, "run", "--db", db, "ls | wc -l", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "give --shell"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--variant", "s=strace", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "are for a one-liner"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "--db", db, "true", "--", "false", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "not both"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "--db", db, "-n", "2", "nosuch-perturb-prog -x", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "requires 'nosuch-perturb-prog', not found on PATH"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "--db", db, "a.yaml", "b.yaml", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "one experiment file at a time"), "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "--db", db, "--variant", "base=nice", "--", "true", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "the name is taken"), "%s", r.err);
	cli_result_release(&r);
	/* --shell with the words of one command (found by fuzz/oneliner.c: it crashed) */
	cli_run(dir, &r, "run", "--db", db, "--shell", "--", "ls", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "--shell runs command lines"), "%s", r.err);
	cli_result_release(&r);
}

/*
 * Warnings with known answers, from real runs whose metrics are set by a
 * counter: one variant, no warm-up, so the c-th run is seq c - 1.  The
 * first run sleeps (a cold start: warm-up, seq 0), "out" is 100..102 but
 * 1000 at the 8th run (an outlier, seq 7), "up" grows with every run (a
 * drift).  A second study: a variant whose spread is 20 times the
 * baseline's.  A load average written into the stored machine description
 * (the report reads the stored one) is a loaded machine.
 */
Test(cli, warnings_name_what_was_seen_and_what_to_do)
{
	struct cli_result r;

	run_study("name: w\nwarmup: 0\nrepetitions: 12\n"
		  "variants: [{name: base}]\n"
		  "workloads:\n"
		  "  - name: w\n"
		  "    shell: 'c=$(cat ../n 2>/dev/null || echo 0); c=$((c + 1)); echo $c > ../n; "
		  "[ $c = 1 ] && sleep 0.5; o=$((100 + c % 3)); [ $c = 8 ] && o=1000; "
		  "echo out=$o up=$((c * c))'\n"
		  "    metrics:\n"
		  "      - {name: out, regex: 'out=([0-9]+)'}\n"
		  "      - {name: up, regex: 'up=([0-9]+)'}\n", 0, NULL);
	cli_sql_exec(db, "UPDATE runs SET machine_json = '{\"loadavg\": \"9.00 8.00 7.00\", "
		     "\"cores\": 2}'");
	cli_run(dir, &r, "report", "--db", db, "--format", "json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "{\"kind\":\"warm-up\",\"workload\":\"w\",\"metric\":\"wall\","
			 "\"variant\":\"base\",\"seqs\":[0],\"text\":\"w wall of base: the first "
			 "measured run (seq 0) took"), "%s", strstr(r.out, "\"warnings\""));
	cr_assert(strstr(r.out, "{\"kind\":\"outliers\",\"workload\":\"w\",\"metric\":\"out\","
			 "\"variant\":\"base\",\"seqs\":[7],"), "%s", strstr(r.out, "\"warnings\""));
	cr_assert(strstr(r.out, "{\"kind\":\"drift\",\"workload\":\"w\",\"metric\":\"up\","
			 "\"variant\":\"base\",\"seqs\":[],\"text\":\"w up of base grows over the "
			 "runs (Spearman's rho +1.00"), "%s", strstr(r.out, "\"warnings\""));
	cr_assert(strstr(r.out, "{\"kind\":\"machine\",\"workload\":null,\"metric\":null,"
			 "\"variant\":null,\"seqs\":[],\"text\":\"load average 9.00 on 2 CPUs when "
			 "the run started"), "%s", strstr(r.out, "\"warnings\""));
	/* the slow first run is said once, as a cold start, not as an outlier
	 * too (another wall outlier may come from a busy machine: seqs are
	 * sorted, so seq 0 would come first) */
	cr_assert_null(strstr(r.out, "\"kind\":\"outliers\",\"workload\":\"w\",\"metric\":\"wall\","
			      "\"variant\":\"base\",\"seqs\":[0"),
		       "%s", strstr(r.out, "\"warnings\""));
	/* nothing about out's order: no drift there */
	cr_assert_null(strstr(r.out, "w out of base grows"), "%s", r.out);
	/* the advice goes with the first warning of its kind (a wall outlier
	 * on a busy machine may come before out's), and only once */
	const char *advice = strstr(r.out, ": labelled, not dropped: look at what else ran");
	cr_assert(advice, "%s", strstr(r.out, "\"warnings\""));
	cr_assert_null(strstr(advice + 1, ": labelled, not dropped: look at what else ran"));
	tl_check_report_schema(r.out);
	cli_result_release(&r);
	/* the text report: a section, each warning once */
	cli_run(dir, &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\nWarnings\n"), "%s", r.out);
	/* the advice follows the first outlier said, which may be one of
	 * wall's on a busy machine (CI saw seq 8): asked for apart, once */
	cr_assert(strstr(r.out, " outliers: w out: 1 run far from the median (modified z-score > "
			 "3.5): base seq 7"), "%s", r.out);
	cr_assert_null(strstr(strstr(r.out, "w out: 1 run") + 1, "w out: 1 run"));

	cli_result_release(&r);

	tl_rmtree(dir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	run_study("name: s\nwarmup: 0\nrepetitions: 12\n"
		  "variants:\n"
		  "  - {name: calm, env: {K: '1', F: calm}}\n"
		  "  - {name: wild, env: {K: '20', F: wild}}\n"
		  "workloads:\n"
		  "  - name: w\n"
		  "    shell: 'c=$(cat ../$F 2>/dev/null || echo 0); c=$((c + 1)); echo $c > ../$F; "
		  "echo s=$((1000 + K * (c % 5)))'\n"
		  "    metrics: [{name: s, regex: 's=([0-9]+)'}]\n", 0, NULL);
	/* the full report's warnings: the closing screen shows the first
	 * three, and on a busy machine its load, wall's outliers and drift
	 * may be those (a fresh chroot's make test saw it) */
	cli_run(dir, &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "spread: w s of wild: its spread (MAD) is 20.0x the baseline's "
			 "(Brown-Forsythe p "), "%s", r.out);
	cli_result_release(&r);
	/* the header counts the runs of what is shown: without wall (--metric)
	 * the other metrics' (it said "0 measured runs each") */
	cli_run(dir, &r, "report", "--db", db, "--format", "summary", "--metric", "s", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "2 variants x 1 workload, 12 measured runs each"), "%s", r.out);
	cli_result_release(&r);
}

/*
 * The class "a name becomes a path component": a matrix value with '/' or
 * ../ in a workload's name (its work folder) and in a variant's (its daemon's
 * log) stays one component inside results/, and the study runs to its end.
 */
Test(cli, names_with_slashes_stay_inside_results)
{
	run_study("name: x\nwarmup: 0\nrepetitions: 1\n"
		  "variants:\n"
		  "  - name: a\n"
		  "  - name: d\n"
		  "    matrix: {p: ['a/b', '../../../OUTSIDE']}\n"
		  "    daemon: [sh, -c, 'echo ready {p}; exec sleep 600']\n"
		  "    daemon_ready: ready\n"
		  "workloads:\n"
		  "  - name: w\n"
		  "    matrix: {q: ['../../../OUTSIDE', 'x/y']}\n"
		  "    shell: 'echo {q}'\n", 0, NULL);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 6);
	char *top = tl_dir_names(dir);
	cr_assert_str_eq(top, "e.yaml\nresults\n", "outside results/: %s", top);
	free(top);
	char *p = xasprintf("%s/results/work", dir), *w = tl_dir_names(p);
	cr_assert_str_eq(w, "w[q=..%2F..%2F..%2FOUTSIDE]\nw[q=x%2Fy]\n", "%s", w);
	free(w);
	free(p);
	p = xasprintf("%s/results/logs/run-1", dir);
	char *logs = tl_dir_names(p);
	free(p);
	cr_assert(strstr(logs, "d[p=a%2Fb]-daemon.log\n") &&
		  strstr(logs, "d[p=..%2F..%2F..%2FOUTSIDE]-daemon.log\n"), "%s", logs);
	free(logs);
}

/*
 * The class: what a variant runs beside its runs, which must hold for a
 * run to measure the variant - its daemon and its background load.  A
 * load that fails at every start was never running, and its variant's
 * dilation was reported as its cost; a daemon killed during a run the
 * same.  Each such run is failed with the reason, in the database, on the
 * closing screen and in the report, and the study says so (exit 3: no run
 * of the variant is left).
 */
Test(cli, a_run_whose_daemon_or_background_load_did_not_hold_is_failed)
{
	struct cli_result r;

	/* the workload waits until the load has failed once, so that its
	 * first run sees a failure whatever the machine's speed: until the
	 * load's second start has written its line (the supervisor counts a
	 * failure before it starts the load again; the first line alone can
	 * be written, and the run end, before the load has exited); a later
	 * run finds the load waiting to restart, or restarted less than a
	 * second ago (a crash loop running for a moment held nothing: it
	 * passed) */
	char *yaml;

	yaml = xasprintf("name: x\nwarmup: 0\nrepetitions: 3\n"
			       "variants:\n"
			       "  - name: a\n"
			       "  - name: b\n"
			       "    background: [sh, -c, 'echo cannot start; echo >> %s/bg.starts; exit 1']\n"
			       "    env: {BG: '1'}\n"
			       "workloads:\n"
			       "  - name: t\n"
			       "    shell: '[ -z \"$BG\" ] || timeout 30 sh -c \"until [ -e %s/bg.starts ] && "
			       "[ \\$(wc -l < %s/bg.starts) -ge 2 ]; do :; done\"'\n",
			       dir, dir, dir);
	run_study(yaml, 3, "every run of workload 't' under variant 'b' failed");
	free(yaml);
	yaml = NULL;
	cr_expect_eq(count_with_plan("results r", "p.variant = 'b' AND r.status = 'failed' AND "
				     "r.reason LIKE 'background load %failed%'"), 3);
	cr_expect_eq(count_with_plan("results r", "p.variant = 'a' AND r.status = 'ok'"), 3);
	cli_run(dir, &r, "report", "--db", db, NULL);
	cr_expect(strstr(r.out, "Failed runs") && strstr(r.out, "background load 'sh -c"),
		  "%s", r.out);
	cli_result_release(&r);
	/* the closing screen */
	yaml = xasprintf("%s/bg.starts", dir);
	unlink(yaml);
	free(yaml);
	yaml = xasprintf("name: x\nwarmup: 0\nrepetitions: 2\n"
			 "variants: [{name: a}, {name: b, env: {BG: '1'}, background: [sh, -c, "
			 "'echo >> %s/bg.starts; exit 3']}]\n"
			 "workloads:\n"
			 "  - name: t\n"
			 "    shell: '[ -z \"$BG\" ] || timeout 30 sh -c \"until [ -e %s/bg.starts ] && "
			 "[ \\$(wc -l < %s/bg.starts) -ge 2 ]; do :; done\"'\n", dir, dir, dir);
	tl_write(dir, "e.yaml", yaml);
	free(yaml);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_expect_eq(r.status, 3, "%s", r.err);
	cr_expect(strstr(r.out, "Failed runs") && strstr(r.out, "background load 'sh -c"),
		  "%s", r.out);
	cli_result_release(&r);

	/* a daemon that the workload kills (and waits for: its process is a
	 * zombie of perturb's then) */
	run_study("name: y\nwarmup: 0\nrepetitions: 1\n"
		  "variants:\n"
		  "  - name: a\n"
		  "  - name: d\n"
		  "    daemon: [sh, -c, 'echo $$ > daemon.pid; exec sleep 600']\n"
		  "    daemon_ready: 10ms\n"
		  "workloads:\n"
		  "  - name: t\n"
		  "    shell: 'if [ -s ../daemon.pid ]; then p=$(cat ../daemon.pid); kill $p; "
		  "timeout 20 sh -c \"until grep -q \\\"^[0-9]* ([^)]*) Z\\\" /proc/$p/stat; do :; done\"; fi'\n",
		  3, NULL);
	cr_expect_eq(count_with_plan("results r", "p.variant = 'd' AND r.status = 'failed' AND "
				     "r.reason LIKE '%daemon was not running throughout the run%'"), 1,
		     "%s", last_err);
}

/*
 * PERTURB_TIMING (harness/lib/stages.c): one line per stage, the runs
 * counted once each, and nothing after the last run charged to a stage:
 * the closing report, built after the walk, once made "plan" look like
 * 220 us a run of a 500-run study (bench/harness-breakdown.sh).  The
 * report's bootstraps take tens of milliseconds, 40 spawns a few: charged
 * to the plan, they would put it far above the spawn.
 */
Test(cli, timing_counts_the_runs_and_not_the_report)
{
	struct cli_result r;
	char *env = xasprintf("PERTURB_TIMING=%s/timing", dir), *path, *t, *line;
	double plan = -1, spawn = -1;
	long runs = -1;

	tl_write(dir, "e.yaml", "name: t\nwarmup: 0\nrepetitions: 20\n"
		 "variants: [{name: a}, {name: b}]\n"
		 "workloads: [{name: w, cmd: [/bin/true]}]\n");
	cli_run_env(dir, env, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	path = xasprintf("%s/timing", dir);
	t = read_file(path, NULL);
	cr_assert(t, "no timing file");
	cr_assert_eq(sscanf(t, "# perturb timing: %ld runs", &runs), 1, "%s", t);
	cr_assert_eq(runs, 40, "%s", t);
	for (line = t; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (!strncmp(line, "plan ", 5))
			sscanf(line + 5, "%lf", &plan);
		if (!strncmp(line, "spawn (clone, exec) ", 20))
			sscanf(line + 20, "%lf", &spawn);
	}
	cr_assert(plan >= 0 && spawn > 0, "%s", t);
	cr_assert_lt(plan, spawn, "the report was charged to the plan:\n%s", t);
	free(t);
	free(path);
	free(env);
}
