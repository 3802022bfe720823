/*
 * test_slurm.c - studies on Slurm (docs/distributed.md) against a real
 * cluster: tests/slurm-cluster.sh starts munged, slurmctld and two slurmd
 * (n1, n2) in a folder of the test, on free ports, and the fixture stops
 * them whatever happens.  Without slurm-wlm, munge or root the tests are
 * skipped with the reason.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "engine/slurm.h"
#include "lib/util.h"

static char *cluster;	/* the cluster's folder, NULL when none runs */
static char *work;	/* the study's folder */

/* tests/slurm-cluster.sh VERB CLUSTER [OWNER]: with an owner (start), the
 * cluster is stopped when that process ends, however it ends. */
static int helper(const char *verb, pid_t owner)
{
	const char *src = getenv("PERTURB_SRC");
	char *cmd, pid[32] = "";
	int st;

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	if (owner > 0)
		snprintf(pid, sizeof(pid), "%d", (int)owner);
	cr_assert(asprintf(&cmd, "'%s/tests/slurm-cluster.sh' %s '%s' %s >'%s/helper.out' 2>&1",
			   src, verb, cluster, pid, cluster) > 0);
	st = system(cmd);
	free(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Skip the test when start said 77 (no Slurm, munge or root here), fail
 * it on another error. */
static void started(int rc)
{
	if (rc == 77) {
		char *path, *why;
		cr_assert(asprintf(&path, "%s/helper.out", cluster) > 0);
		why = read_file(path, NULL);
		free(path);
		cr_skip_test("no Slurm cluster here: %s", why ? why : "slurm-cluster.sh said 77");
	}
	cr_assert_eq(rc, 0, "tests/slurm-cluster.sh start failed (see %s/helper.out)", cluster);
}

static void start_cluster(void)
{
	char *conf;

	cluster = tl_tmpdir();
	work = tl_tmpdir();
	/* owned by this test's process: a timeout's SIGKILL stops it too */
	started(helper("start", getpid()));
	cr_assert(asprintf(&conf, "%s/slurm.conf", cluster) > 0);
	setenv("SLURM_CONF", conf, 1);
	free(conf);
	/* perturb's journals of this test's own (the tasks inherit it) */
	cr_assert(asprintf(&conf, "%s/perturb-state", cluster) > 0);
	setenv("PERTURB_STATE_DIR", conf, 1);
	free(conf);
}

static void stop_cluster(void)
{
	if (cluster) {
		helper("stop", 0);
		tl_rmtree(cluster);
		free(cluster);
		cluster = NULL;
	}
	if (work) {
		tl_rmtree(work);
		free(work);
		work = NULL;
	}
}

TestSuite(slurm, .init = start_cluster, .fini = stop_cluster, .timeout = 300);

/* 3 variants x 2 workloads; each run of w2 adds a line to the shard's
 * count file (the workload's folder is the shard's own). */
static const char study[] =
	"name: onslurm\n"
	"repetitions: %d\n"
	"warmup: 0\n"
	"variants:\n"
	"  - name: base\n"
	"  - name: a\n"
	"    env: {X: \"1\"}\n"
	"  - name: b\n"
	"    env: {X: \"2\"}\n"
	"workloads:\n"
	"  - name: w1\n"
	"    cmd: [/bin/true]\n"
	"  - name: w2\n"
	"    shell: \"echo x >> count; sleep %s\"\n";

static void write_study(const char *name, int reps, const char *sleep_s)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), study, reps, sleep_s);
	tl_write(work, name, buf);
}

static int64_t q(const char *db, const char *sql)
{
	return cli_sql_int(db, sql);
}

Test(slurm, four_shards_submitted_run_merged_reported)
{
	struct cli_result r;
	char db[512];

	write_study("e.yaml", 8, "0.01");
	snprintf(db, sizeof(db), "%s/r/p.db", work);
	cli_run(work, &r, "run", "e.yaml", "--db", "r/p.db", "--slurm", "--shards", "4",
		"--wait", NULL);
	cr_assert_eq(r.status, 0, "run --slurm --wait: %s", r.err);
	cli_result_release(&r);
	cr_expect_eq(q(db, "SELECT count(*) FROM plan"), 48);
	cr_expect_eq(q(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 48);
	cr_expect_eq(q(db, "SELECT count(*) FROM shards WHERE node IS NOT NULL"), 4);
	cr_expect_eq(q(db, "SELECT count(DISTINCT node) FROM shards"), 2, "both nodes ran shards");
	cr_expect_eq(q(db, "SELECT min(c) FROM (SELECT count(*) c FROM plan GROUP BY variant, workload)"),
		     8, "every (variant, workload) has its 8 runs");
	/* every shard is a replicate: every variant and workload in each */
	cr_expect_eq(q(db, "SELECT min(c) FROM (SELECT s.shard, count(DISTINCT p.variant || p.workload) c"
		       " FROM shards s JOIN plan p ON p.seq >= s.seq_lo AND p.seq < s.seq_hi"
		       " GROUP BY s.shard)"), 6);
	cr_expect_eq(q(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 1);

	/* merging again adds nothing */
	cli_run(work, &r, "merge", "--db", "r/p.db", NULL);
	cr_expect_eq(r.status, 0, "merge: %s", r.err);
	cr_expect(strstr(r.err, "0 results added"), "%s", r.err);
	cli_result_release(&r);
	cr_expect_eq(q(db, "SELECT count(*) FROM results"), 48);

	cli_run(work, &r, "status", "--db", "r/p.db", NULL);
	cr_expect_eq(r.status, 0);
	cr_expect_eq(tl_count_lines(r.out), 6, "%s", r.out);
	cr_expect(strstr(r.out, "48/48 runs done in 4 shards"), "%s", r.out);
	cli_result_release(&r);

	cli_run(work, &r, "report", "--db", "r/p.db", NULL);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "w2: wall"), "%s", r.out);
	cr_expect(strstr(r.out, "Runs on several nodes"), "the node table: %s", r.out);
	cr_expect(strstr(r.out, "n1 ") && strstr(r.out, "n2 "), "dilation per node: %s", r.out);
	cr_expect(strstr(r.out, "resample nodes"), "%s", r.out);
	cli_result_release(&r);
	cli_run(work, &r, "report", "--db", "r/p.db", "--format", "json", NULL);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"nodes\":{\"n\":2"), "%s", r.out);
	tl_check_report_schema(r.out);
	cli_result_release(&r);
}

/* The number of lines of the count file of shard k's workload w2. */
static int executions(int k)
{
	char path[512];
	char *text;
	int n;

	snprintf(path, sizeof(path), "%s/r/shards/run-1/work-%d/w2/count", work, k);
	text = read_file(path, NULL);
	n = tl_count_lines(text);
	free(text);
	return n;
}

/* scancel the task of shard k of db's run, and wait (bounded: 60 s)
 * until Slurm has ended it. */
static void cancel_shard(const char *db, int k)
{
	char sql[128], cmd[256], *j;

	snprintf(sql, sizeof(sql), "SELECT job FROM shards WHERE shard = %d", k);
	j = cli_sql_text(db, sql);
	cr_assert(j, "shard %d has no job", k);
	j[strcspn(j, " ")] = '\0';
	snprintf(cmd, sizeof(cmd), "scancel '%s'", j);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "squeue -h -r -o %%i | grep -qx '%s'", j);
	for (int i = 0; i < 6000 && system(cmd) == 0; i++)
		tl_nap();
	free(j);
}

Test(slurm, cancelled_task_resumed_runs_exactly_the_missing)
{
	struct cli_result r;
	char db[512], shard0[512];
	int64_t n0;

	/* shard 0 of 2: 3 x 2 x 3 = 18 runs, 9 of them of 0.3 s */
	write_study("e.yaml", 6, "0.3");
	snprintf(db, sizeof(db), "%s/r/p.db", work);
	snprintf(shard0, sizeof(shard0), "%s/r/shards/run-1/shard-0.db", work);
	cli_run(work, &r, "run", "e.yaml", "--db", "r/p.db", "--slurm", "--shards", "2", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	/* once shard 0 has run w2 three times, cancel its task (bounded: 60 s) */
	for (int i = 0; i < 6000 && executions(0) < 3; i++)
		tl_nap();
	cr_assert_geq(executions(0), 3, "shard 0 did not start");
	cancel_shard(db, 0);
	cli_run(work, &r, "merge", "--db", "r/p.db", NULL);
	cli_result_release(&r);
	n0 = cli_sql_int(db, "SELECT count(*) FROM results r JOIN shards s ON s.shard = 0"
			 " AND r.seq >= s.seq_lo AND r.seq < s.seq_hi");
	cr_assert_lt(n0, 18, "shard 0 was cancelled before its end (%lld runs)", (long long)n0);
	cli_run(work, &r, "status", "--db", "r/p.db", NULL);
	cr_expect(strstr(r.out, "CANCELLED"), "%s", r.out);
	cli_result_release(&r);

	cli_run(work, &r, "run", "e.yaml", "--db", "r/p.db", "--slurm", "--resume", "--wait", NULL);
	cr_assert_eq(r.status, 0, "resume: %s", r.err);
	cli_result_release(&r);
	cr_expect_eq(q(db, "SELECT count(*) FROM results"), 36);
	cr_expect_eq(cli_sql_int(shard0, "SELECT count(*) FROM results"), 18);
	/* shard 1 ran once; shard 0's w2 ran its 9 runs, plus at most the one
	 * the cancel cut short */
	cr_expect_eq(executions(1), 9, "shard 1's w2 ran %d times", executions(1));
	cr_expect(executions(0) >= 9 && executions(0) <= 10, "shard 0's w2 ran %d times",
		  executions(0));
}

Test(slurm, shard_of_another_experiment_refused)
{
	struct cli_result r;
	char db[512], other[512], cmd[1200];

	write_study("e.yaml", 4, "0.01");
	snprintf(db, sizeof(db), "%s/r/p.db", work);
	cli_run(work, &r, "run", "e.yaml", "--db", "r/p.db", "--slurm", "--shards", "2",
		"--wait", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	/* a shard of the same study with another text: refused */
	tl_write(work, "f.yaml", "# another experiment\n");
	snprintf(cmd, sizeof(cmd), "cat '%s/e.yaml' >> '%s/f.yaml'", work, work);
	cr_assert_eq(system(cmd), 0);
	cli_run(work, &r, "run", "f.yaml", "--db", "o/shard.db", "--shard", "1/2", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	snprintf(other, sizeof(other), "%s/o/shard.db", work);
	cli_run(work, &r, "merge", "--db", "r/p.db", other, NULL);
	cr_expect_eq(r.status, 3);
	cr_expect(strstr(r.err, "a shard of another experiment"), "%s", r.err);
	cli_result_release(&r);
	/* the same experiment, another seed: another plan */
	cli_run(work, &r, "run", "e.yaml", "--db", "o/seed.db", "--shard", "1/2", "--seed", "1",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	snprintf(other, sizeof(other), "%s/o/seed.db", work);
	cli_run(work, &r, "merge", "--db", "r/p.db", other, NULL);
	cr_expect_eq(r.status, 3);
	cr_expect(strstr(r.err, "a shard of another plan"), "%s", r.err);
	cli_result_release(&r);
	cr_expect_eq(q(db, "SELECT count(*) FROM results"), 24, "nothing merged twice or from others");
}

/* ---- a tracefs variant on a node, cancelled ---- */

#define TRACEFS "/sys/kernel/tracing"

/* The tracing state as text: mounted or not, the files a kernel: variant
 * changes and the instances (mounting to read them when it is not). */
static char *tracing_state(void)
{
	static const char *const files[] = {
		"current_tracer", "tracing_on", "buffer_size_kb", "set_event", "instances", NULL
	};
	struct strbuf sb = STRBUF_INIT;
	int mounted = access(TRACEFS "/tracing_on", F_OK) == 0;

	strbuf_addstr(&sb, mounted ? "mounted\n" : "not mounted\n");
	if (!mounted && mount("nodev", TRACEFS, "tracefs", 0, NULL) < 0)
		cr_skip_test("no tracefs: cannot mount %s: %s", TRACEFS, strerror(errno));
	for (size_t i = 0; files[i]; i++) {
		char *path = xasprintf("%s/%s", TRACEFS, files[i]);
		char *text = tl_dir_names(path);
		if (!text)
			text = read_file(path, NULL);
		strbuf_addf(&sb, "== %s\n%s", files[i], text ? text : "(unreadable)\n");
		free(text);
		free(path);
	}
	if (!mounted)
		tl_umount_tracefs(TRACEFS);
	return strbuf_detach(&sb);
}

Test(slurm, tracefs_variant_restored_after_scancel)
{
	struct cli_result r;
	char yaml[2048], seen[512], db[512], *before, *after;
	int lock;

	if (geteuid() != 0)
		cr_skip_test("needs root (changes the kernel's tracing state)");
	/* one kernel test at a time on this machine; a perturb outside the
	 * tests waited for (test_tracefs.c's ksetup()) */
	lock = tl_tracing_lock();
	setenv("PERTURB_LOCK_WAIT", "30s", 1);
	before = tracing_state();
	snprintf(seen, sizeof(seen), "%s/tracing-seen", work);
	snprintf(yaml, sizeof(yaml),
		 "name: traced\nrepetitions: 20\nwarmup: 0\norder: sequential\n"
		 "variants:\n  - name: base\n  - name: traced\n"
		 "    kernel: {events: ['sched:sched_switch'], tracing_on: true}\n"
		 "workloads:\n  - name: w\n"
		 "    shell: \"for d in " TRACEFS "/instances/perturb-*; do "
		 "if [ \\\"$(cat $d/tracing_on 2>/dev/null)\\\" = 1 ]; then touch %s; fi; done; "
		 "sleep 0.2\"\n", seen);
	tl_write(work, "t.yaml", yaml);
	cli_run(work, &r, "run", "t.yaml", "--db", "r/p.db", "--slurm", "--shards", "1", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	/* once a run has seen the traced variant active (bounded: 60 s) */
	for (int i = 0; i < 6000 && !tl_exists(seen); i++)
		tl_nap();
	cr_assert(tl_exists(seen), "the traced variant never ran");
	snprintf(db, sizeof(db), "%s/r/p.db", work);
	cancel_shard(db, 0);
	after = tracing_state();
	cr_expect_str_eq(after, before, "the tracing state after scancel");
	cli_run(work, &r, "restore", NULL);
	cr_expect(strstr(r.out, "nothing to restore"), "no journal left: %s%s", r.out, r.err);
	cli_result_release(&r);
	cli_run(work, &r, "status", "--db", "r/p.db", NULL);
	cr_expect(strstr(r.out, "CANCELLED"), "%s", r.out);
	cli_result_release(&r);
	free(before);
	free(after);
	if (lock >= 0)
		close(lock);
}

/* ---- the daemons do not outlive their test ---- */

static void cluster_dir(void)
{
	cluster = tl_tmpdir();
}

TestSuite(slurm_watchdog, .init = cluster_dir, .fini = stop_cluster, .timeout = 300);

/* The pid in the cluster's file name, or 0. */
static pid_t pid_in(const char *name)
{
	char *path = xasprintf("%s/%s", cluster, name), *text = read_file(path, NULL);
	pid_t pid = text ? (pid_t)atoi(text) : 0;

	free(text);
	free(path);
	return pid;
}

/*
 * A test killed (a Criterion timeout, a crash) never runs its .fini: the
 * process that started the cluster is killed with SIGKILL here, and every
 * daemon of the cluster, and its watchdog, must end on their own.
 */
Test(slurm_watchdog, the_daemons_end_with_the_process_that_started_them)
{
	static const char *const files[] = {
		"watchdog.pid", "munged.pid", "slurmctld.pid", "slurmd-n1.pid", "slurmd-n2.pid",
	};
	struct pollfd fds[ARRAY_SIZE(files)];
	int ready[2], hold[2], rc = -1, st;
	char left[512];
	pid_t owner;
	int64_t deadline;

	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(hold), 0);
	owner = fork();
	cr_assert_geq(owner, 0);
	if (owner == 0) {
		char c;
		close(ready[0]);
		close(hold[1]);
		rc = helper("start", getpid());
		if (write(ready[1], &rc, sizeof(rc)) != sizeof(rc))
			_exit(1);
		/* until killed: the test holds the other end open */
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	if (read(ready[0], &rc, sizeof(rc)) != sizeof(rc))
		rc = -1;
	close(ready[0]);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		pid_t pid = rc == 0 ? pid_in(files[i]) : 0;
		fds[i] = (struct pollfd){ .fd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1,
					  .events = POLLIN };
	}
	kill(owner, SIGKILL);
	close(hold[1]);
	cr_assert_eq(waitpid(owner, &st, 0), owner);
	started(rc);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		cr_assert_geq(fds[i].fd, 0, "no live process in %s/%s", cluster, files[i]);

	/* each ends within the stop's own bounds: 15 s a daemon, one after
	 * the other */
	deadline = now_mono_ns() + 90 * (int64_t)1000000000;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		int64_t ms;
		while ((ms = (deadline - now_mono_ns()) / 1000000) > 0 &&
		       poll(&fds[i], 1, (int)ms) < 0 && errno == EINTR)
			;
		cr_expect(poll(&fds[i], 1, 0) == 1, "%s: the process did not end (see %s/log/watchdog.log)",
			  files[i], cluster);
		close(fds[i].fd);
	}
	cr_expect(!tl_procs_with((const char *const[]){ cluster, NULL }, 0, left, sizeof(left)), "left running: %s", left);
}

/*
 * The class "a generated script holds a name or a path": the task script
 * (engine/slurm.h) of a results folder whose name holds $(...), `...`,
 * quotes, ; and {K} runs nothing of it, on the path where the folder is
 * shared (exec) and on the one where it is not (the error message), and
 * gives the words back exactly.  No cluster needed.
 */
TL_FIXTURE_DIR()
TestSuite(slurm_script, .init = tl_setup, .fini = tl_teardown, .timeout = 60);

/* sh SCRIPT with the task's environment: its exit status, stdout+stderr in *out. */
static int run_task(const char *script, char **out)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	FILE *f;

	strbuf_addstr(&sb, "SLURM_ARRAY_TASK_ID=3 SLURMD_NODENAME=n1 sh ");
	strbuf_add_shell_word(&sb, script);
	strbuf_addstr(&sb, " 2>&1");
	f = popen(sb.buf, "r");
	cr_assert(f);
	strbuf_reset(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	int st = pclose(f);
	*out = strbuf_detach(&sb);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

Test(slurm_script, hostile_folder_names_run_nothing)
{
	char *hostile = xasprintf("%s/r $(touch %s/P1) `touch %s/P2` \"q\" 'q' {K} ; x", dir, dir, dir);
	char *marker, *token, *out, *e, *want;

	cr_assert_eq(mkdir_p(hostile, 0755), 0);
	cr_assert_eq(slurm_write_marker(hostile, &marker, &token), 0);
	char *script = xasprintf("%s/task.sh", hostile);
	e = slurm_escape_k(hostile);
	char *db = xasprintf("--db=%s/shard-{K}.db", e);
	char *argv[] = { "printf", "%s\\n", db, "{K}", "a{{K}b", "", NULL };
	cr_assert_eq(slurm_write_script(script, marker, token, argv), 0);

	/* shared: exec'd with each word exactly, {K} the index */
	cr_assert_eq(run_task(script, &out), 0, "%s", out);
	want = xasprintf("--db=%s/shard-3.db\n3\na{K}b\n\n", hostile);
	cr_assert_str_eq(out, want);
	free(want);
	free(out);

	/* not shared: the message names the marker as it is */
	tl_write(hostile, ".perturb-shared", "another token\n");
	cr_assert_eq(run_task(script, &out), 2, "%s", out);
	want = xasprintf("perturb: error: %s is not seen from node n1:", marker);
	cr_assert(strstr(out, want), "%s", out);
	free(want);
	free(out);

	char *names = tl_dir_names(dir);
	cr_assert_null(strstr(names, "P1"), "$(...) ran: %s", names);
	cr_assert_null(strstr(names, "P2"), "`...` ran: %s", names);
	free(names);
	free(db);
	free(e);
	free(script);
	free(marker);
	free(token);
	free(hostile);
}
