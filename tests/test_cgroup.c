/*
 * cgroups around runs, daemons and background loads (core/cgroup.h): what
 * leaves its process group (setsid) is killed with the run and counted
 * (leftover_procs, a warning), the run's tree's CPU time is stored, and
 * after a SIGKILL of perturb `perturb restore` and `perturb run --resume`
 * stop the workload that was running.  No cgroup is ever left behind.
 *
 * These tests make cgroups below the test process's own cgroup (named by
 * pid, so that parallel test runs do not collide); without a writable
 * cgroup2 hierarchy they are skipped with the reason, and the fallback
 * (process groups, one warning) is tested with PERTURB_NO_CGROUP=1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/journal.h"
#include "core/cgroup.h"
#include "core/proc.h"
#include "core/runner.h"
#include "testlib.h"
#include "lib/util.h"

TL_FIXTURE_WORK()

static void setup(void)
{
	tl_setup();
	char *state = xasprintf("%s/state", dir);
	setenv("PERTURB_STATE_DIR", state, 1);
	free(state);
}

TestSuite(cgroup, .init = setup, .fini = tl_teardown, .timeout = 60);

static void need_cgroups(void)
{
	struct tl_capture c;
	const char *b;
	char *err;

	tl_capture_start(&c, 2);
	b = cgroup_base();
	err = tl_capture_end(&c);
	if (!b)
		cr_skip_test("no cgroup v2 here: %s", err);
	free(err);
}

/* The base cgroup perturb pid would make: a sibling of this process's. */
static char *base_of(pid_t pid)
{
	char *d = dir_name(cgroup_base());
	char *p = xasprintf("%s/perturb-%d", d, (int)pid);
	free(d);
	return p;
}

static double value_of(const struct run_result *res, const char *name)
{
	for (size_t i = 0; i < res->n_values; i++)
		if (!strcmp(res->values[i].name, name))
			return res->values[i].value;
	return -1;
}

Test(cgroup, a_run_kills_what_left_its_process_group_and_counts_it)
{
	char *argv[] = { "sh", "-c", "setsid sleep 100 & echo pid=$!; spin 0.02 >/dev/null", NULL };
	struct metric_def md;
	struct run_result res;
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 30,
		.n_metrics = 1, .metrics = &md,
	};
	struct tl_capture c;
	char *err;
	pid_t escaped;

	need_cgroups();
	tl_metric_init(&md, "pid", "pid=([0-9]+)");
	tl_capture_start(&c, 2);
	cr_assert_eq(runner_run(&req, &res), 0);
	err = tl_capture_end(&c);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	escaped = (pid_t)value_of(&res, "pid");
	cr_assert_gt(escaped, 0);
	cr_expect(tl_process_gone(escaped), "the setsid child %d outlived its run", (int)escaped);
	cr_expect_eq(res.leftover_procs, 1);
	runner_add_cgroup_values(&res);
	cr_expect_eq(value_of(&res, "leftover_procs"), 1);
	cr_expect(strstr(err, "left 1 process running when it ended"), "%s", err);
	/* the whole tree's CPU time: at least what wait4() saw of the shell and
	 * the spin it reaped (a 5 ms allowance for the two clocks' accounting) */
	cr_expect_gt(value_of(&res, "cgroup_cpu_s"), 0);
	cr_expect_geq(value_of(&res, "cgroup_cpu_s"), res.user_s + res.sys_s - 0.005,
		      "cgroup %g s, rusage %g s", value_of(&res, "cgroup_cpu_s"),
		      res.user_s + res.sys_s);
	cr_expect_geq(value_of(&res, "cgroup_user_s"), 0);
	cr_expect_geq(value_of(&res, "cgroup_sys_s"), 0);
	free(err);
	run_result_release(&res);
	regfree(&md.re);

	/* a run that leaves nothing has no leftover_procs */
	char *quiet[] = { "true", NULL };
	req.argv = quiet;
	req.n_metrics = 0;
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_expect_eq(res.leftover_procs, 0);
	runner_add_cgroup_values(&res);
	cr_expect_eq(value_of(&res, "leftover_procs"), -1);
	cr_expect_geq(value_of(&res, "cgroup_cpu_s"), 0);
	run_result_release(&res);
}

Test(cgroup, a_daemon_and_a_background_load_take_their_escapees_with_them)
{
	char *f1 = xasprintf("%s/d.pid", dir), *f2 = xasprintf("%s/b.pid", dir);
	char *dcmd = xasprintf("setsid sleep 100 & echo $! > %s; echo ready; exec sleep 100", f1);
	char *bcmd = xasprintf("setsid sleep 100 & echo $! >> %s; exec sleep 100", f2);
	char *dargv[] = { "sh", "-c", dcmd, NULL }, *bargv[] = { "sh", "-c", bcmd, NULL };
	char *log = xasprintf("%s/log", dir);
	struct daemon *d;
	struct background *b;
	regex_t re;
	char *s;
	pid_t p1, p2;

	need_cgroups();
	cr_assert_eq(regcomp(&re, "ready", REG_EXTENDED | REG_NOSUB), 0);
	cr_assert_eq(daemon_start(dargv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &re, NULL, 10, &d), 0);
	s = read_file(f1, NULL);
	cr_assert(s);
	p1 = atoi(s);
	free(s);
	cr_assert_eq(background_start(bargv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &b), 0);
	/* bounded: the load writes its child's pid and a newline at its start */
	for (int i = 0; i < 500 && (!(s = read_file(f2, NULL)) || !strchr(s, '\n')); i++) {
		free(s);
		s = NULL;
		tl_nap();
	}
	cr_assert(s, "the background load never started");
	p2 = atoi(s);
	free(s);
	cr_assert(!tl_process_gone_now(p1) && !tl_process_gone_now(p2));
	daemon_stop(d);
	background_stop(b, NULL);
	cr_expect(tl_process_gone(p1), "the daemon's setsid child %d survived", (int)p1);
	cr_expect(tl_process_gone(p2), "the load's setsid child %d survived", (int)p2);
	regfree(&re);
	free(f1);
	free(f2);
	free(dcmd);
	free(bcmd);
	free(log);
}

/* ---- the real binary ---- */



Test(cgroup, a_study_leaves_no_cgroup_behind_and_stores_the_tree_cpu_time)
{
	char *base;
	pid_t p;

	need_cgroups();
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 2\n"
		 "variants:\n"
		 "  - name: a\n"
		 "  - name: d\n"
		 "    daemon: [sleep, '100']\n"
		 "    background: [sh, -c, 'setsid sleep 100 & exec sleep 100']\n"
		 "workloads:\n"
		 "  - {name: t, shell: 'setsid sleep 100 & echo x'}\n");
	p = cli_start(dir, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(cli_wait(p), 0);
	base = base_of(p);
	cr_expect(!tl_exists(base), "perturb left its cgroup %s", base);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values WHERE "
				     "metric = 'cgroup_cpu_s' AND value >= 0"), 4);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values WHERE "
				     "metric = 'leftover_procs' AND value = 1"), 4);
	{
		char *err = xasprintf("%s/bg.err", dir), *text = read_file(err, NULL);
		cr_expect(text && strstr(text, "left 1 process running when it ended"), "%s", text);
		free(text);
		free(err);
	}
	free(base);

	/* nor a study stopped by a signal in the middle of a run */
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 2\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - {name: t, shell: 'setsid sleep 100 & kill -TERM $PPID; sleep 100'}\n");
	p = cli_start(dir, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(cli_wait(p), 3);
	base = base_of(p);
	cr_expect(!tl_exists(base), "a stopped perturb left its cgroup %s", base);
	free(base);
}

/* A workload that holds until released: "up" to ready, then EOF on go. */
static void held_workload(void)
{
	char *r = xasprintf("%s/ready", work), *g = xasprintf("%s/go", work);
	cr_assert_eq(mkfifo(r, 0600), 0);
	cr_assert_eq(mkfifo(g, 0600), 0);
	free(r);
	free(g);
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 2\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - name: t\n"
		 "    shell: 'if [ ! -e ../once ]; then touch ../once; echo $$ > ../pid; "
		 "echo up > ../ready; cat ../go; fi; echo ok'\n");
}

static void wait_ready(void)
{
	char *r = xasprintf("%s/ready", work), buf[8] = "";
	int fd = open(r, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert(read(fd, buf, sizeof(buf)) > 0);
	close(fd);
	free(r);
}

/* SIGKILL perturb while its workload runs; returns the workload's pid,
 * still running (the journal names perturb's cgroup). */
static pid_t killed_during_a_run(char **base)
{
	char *pf = xasprintf("%s/pid", work), *s;
	pid_t p, w;

	held_workload();
	p = cli_start(dir, "run", "e.yaml", "--db", db, NULL);
	wait_ready();
	kill(p, SIGKILL);
	cr_assert_eq(cli_wait(p), 128 + SIGKILL);
	s = read_file(pf, NULL);
	cr_assert(s);
	w = atoi(s);
	free(s);
	free(pf);
	cr_assert(!tl_process_gone_now(w), "the workload ended with perturb");
	*base = base_of(p);
	cr_assert(tl_exists(*base));
	return w;
}

Test(cgroup, sigkill_then_restore_stops_the_running_workload)
{
	struct cli_result r;
	char *base;
	pid_t w;

	need_cgroups();
	w = killed_during_a_run(&base);
	cli_run(dir, &r, "restore", NULL);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	/* the shell, and its cat unless the kill came before the fork */
	cr_expect(strstr(r.out, "stopped 2 processes left in cgroup") ||
		  strstr(r.out, "stopped 1 process left in cgroup"), "%s", r.out);
	cr_expect(tl_process_gone(w), "the workload %d survived perturb restore", (int)w);
	cr_expect(!tl_exists(base), "%s is still there", base);
	cli_result_release(&r);
	free(base);
}

Test(cgroup, sigkill_then_resume_stops_the_running_workload_first)
{
	struct cli_result r;
	char *base;
	pid_t w;

	need_cgroups();
	w = killed_during_a_run(&base);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "stopped 2 processes left in cgroup") ||
		  strstr(r.err, "stopped 1 process left in cgroup"), "%s", r.err);
	cr_expect(tl_process_gone(w), "the workload %d overlaps the resumed runs", (int)w);
	cr_expect(!tl_exists(base));
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 2);
	cli_result_release(&r);
	free(base);
}

Test(cgroup, without_cgroups_a_warning_once_and_process_groups)
{
	struct cli_result r;

	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 3\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - {name: t, cmd: ['true']}\n");
	cli_run_env(dir, "PERTURB_NO_CGROUP=1", &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "cgroups unavailable: PERTURB_NO_CGROUP is set"), "%s", r.err);
	cr_expect(strstr(r.err, "cgroups unavailable") == strstr(r.err, "cgroups unavailable") &&
		  !strstr(strstr(r.err, "cgroups unavailable") + 1, "cgroups unavailable"),
		  "said more than once: %s", r.err);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 3);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values"), 0);
	cli_result_release(&r);
}

Test(cgroup, purge_refuses_a_path_that_is_not_a_perturb_cgroup)
{
	char why[512];

	need_cgroups();
	char *d = dir_name(cgroup_base());
	cr_expect_eq(cgroup_purge(d, getpid(), why, sizeof(why)), -1);
	cr_expect(strstr(why, "is not a cgroup of perturb pid"), "%s", why);
	char *sneaky = xasprintf("%s/../perturb-%d", cgroup_base(), (int)getpid());
	cr_expect_eq(cgroup_purge(sneaky, getpid(), why, sizeof(why)), -1);
	cr_expect_eq(cgroup_purge("/tmp/perturb-1", 1, why, sizeof(why)), -1);
	/* a gone one is nothing to do */
	char *gone = base_of(999999);
	cr_expect_eq(cgroup_purge(gone, 999999, why, sizeof(why)), 0);
	free(gone);
	free(sneaky);
	free(d);
}

/* A base left by a dead process of this pid (pids are reused: the bpf
 * tests' perturb killed in its trial left five in a day, and a later
 * perturb of the same pid ran without cgroups): the next base is
 * perturb-PID-2, and purge takes that name and no other. */
Test(cgroup, a_base_a_dead_process_of_this_pid_left_is_not_in_the_way)
{
	char why[512], *stale, *own;
	const char *b;

	need_cgroups();
	cgroup_base_remove();
	cr_assert(own = cgroup_own_dir(why, sizeof(why)), "%s", why);
	stale = xasprintf("%s/perturb-%d", own, (int)getpid());
	cr_assert_eq(mkdir(stale, 0755), 0, "%s: %s", stale, strerror(errno));
	b = cgroup_base();
	char *want = xasprintf("%s-2", stale);
	cr_expect(b && !strcmp(b, want), "the base: %s, not %s", b ? b : "(none)", want);
	cr_expect_eq(cgroup_purge(want, getpid(), why, sizeof(why)), 0, "%s", why);
	cr_expect(!tl_exists(want), "%s was not removed", want);
	cgroup_base_remove();
	static const char *const bad[] = { "-02", "-1", "-x", "-65", "-2x", "--2", "2", "-+2",
					   "- 2" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *p = xasprintf("%s%s", stale, bad[i]);
		cr_expect_eq(cgroup_purge(p, getpid(), why, sizeof(why)), -1, "%s taken", p);
		free(p);
	}
	cr_expect_eq(rmdir(stale), 0, "%s: %s", stale, strerror(errno));
	free(want);
	free(stale);
	free(own);
}

/* ---- the pool of run cgroups and clone3(CLONE_INTO_CGROUP) (issue 25) ---- */

/* The run cgroups below the base now ("run-N" folders). */
static int run_cgroups(void)
{
	char *names = tl_dir_names(cgroup_base());
	int n = 0;

	for (char *s = names; s && (s = strstr(s, "run-")); s += 4)
		n++;
	free(names);
	return n;
}

Test(cgroup, runs_reuse_the_cgroups_made_ahead_and_count_only_their_own_cpu)
{
	char *argv[] = { "sh", "-c", "cat /proc/self/cgroup; spin 0.03 >/dev/null", NULL };
	struct metric_def md;
	struct run_result res;
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 30,
		.n_metrics = 1, .metrics = &md,
	};
	char *rel, *d;
	int made;

	need_cgroups();
	/* the path of the base as the runs see it in /proc/self/cgroup */
	d = xasprintf("%s", cgroup_base());
	rel = strstr(d, "/perturb-");
	tl_metric_init(&md, "in", "0::.*/perturb-[0-9]+/run-([0-9]+)");
	made = cgroup_prepare(2);
	cr_assert_geq(cgroup_pool_size(), 2, "made %d", made);
	made = run_cgroups();
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(runner_run(&req, &res), 0);
		cr_assert_eq(res.status, RUN_OK, "%s: %s", res.reason, res.out_tail);
		/* it ran in a run cgroup of the base */
		cr_expect(strstr(res.out_tail, rel) && strstr(res.out_tail, "/run-"), "%s",
			  res.out_tail);
		/* its own CPU time, not the cgroup's total over the runs before */
		runner_add_cgroup_values(&res);
		cr_expect_leq(value_of(&res, "cgroup_cpu_s"), res.user_s + res.sys_s + 0.02,
			      "run %d: cgroup %g s, rusage %g s", i, value_of(&res, "cgroup_cpu_s"),
			      res.user_s + res.sys_s);
		cr_expect_geq(value_of(&res, "cgroup_cpu_s"), res.user_s + res.sys_s - 0.005);
		run_result_release(&res);
	}
	/* no cgroup was made for them: they took the pool's and gave them back */
	cr_expect_eq(run_cgroups(), made);
	cr_expect_geq(cgroup_pool_size(), 2);
	regfree(&md.re);
	free(d);
}

Test(cgroup, a_cgroup_emptied_by_a_kill_is_not_reused)
{
	char *leaky[] = { "sh", "-c", "setsid sleep 100 & echo started", NULL };
	char *quiet[] = { "true", NULL };
	struct run_result res;
	struct run_request req = { .argv = leaky, .envp = tl_test_env(), .timeout_s = 30 };
	struct tl_capture c;

	need_cgroups();
	cgroup_prepare(1);
	tl_capture_start(&c, 2);
	cr_assert_eq(runner_run(&req, &res), 0);
	free(tl_capture_end(&c));
	cr_expect_eq(res.leftover_procs, 1);
	run_result_release(&res);
	/* cloned into a cgroup once killed, a child dies at birth (cgroup.c:
	 * give_back): every later run must still be ok */
	req.argv = quiet;
	for (int i = 0; i < 2 * 8 + 1; i++) {
		cr_assert_eq(runner_run(&req, &res), 0);
		cr_expect_eq(res.status, RUN_OK, "run %d after the kill: %s", i, res.reason);
		run_result_release(&res);
	}
}

/* The containment a study of `true` states in its header and stores. */
static void study_containment(const char *env, const char *want)
{
	struct cli_result r;
	char *stored;

	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 3\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - {name: t, shell: 'setsid sleep 100 & echo x'}\n");
	cli_run_env(dir, env, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, want), "no '%s' in: %s", want, r.err);
	stored = cli_sql_text(db, "SELECT json_extract(machine_json, '$.containment') FROM runs "
				  "ORDER BY id DESC LIMIT 1");
	cr_expect(stored && strstr(want, stored), "stored '%s', said '%s'", stored, want);
	/* contained all the same: each run's escapee killed and counted */
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values WHERE "
				     "metric = 'leftover_procs' AND value = 1"), 3);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 3);
	free(stored);
	cli_result_release(&r);
}

Test(cgroup, the_fallback_writes_cgroup_procs_and_says_so)
{
	need_cgroups();
	study_containment("PERTURB_NO_CLONE_INTO_CGROUP=1", "containment cgroup-procs-write");
}

Test(cgroup, runs_start_in_their_cgroup_where_the_kernel_can_and_say_so)
{
	char why[256];

	need_cgroups();
	if (!proc_clone_into_cgroup(why, sizeof(why)))
		cr_skip_test("no clone3(CLONE_INTO_CGROUP) here: %s", why);
	cr_expect_str_eq(proc_containment(NULL, 0), "clone-into-cgroup");
	study_containment("PERTURB_NO_CLONE_INTO_CGROUP=0", "containment clone-into-cgroup");
}

/* A cgroup of the pool, where children start in it (clone3); else the
 * test is skipped. */
static struct cgroup *cgroup_to_clone_into(void)
{
	struct cgroup *cg;
	char why[256];

	need_cgroups();
	if (!proc_clone_into_cgroup(why, sizeof(why)))
		cr_skip_test("no clone3(CLONE_INTO_CGROUP) here: %s", why);
	cgroup_prepare(1);
	cg = cgroup_take();
	cr_assert_not_null(cg);
	return cg;
}

/* Started in its cgroup (clone3, CLONE_VFORK), a child needs no pipe
 * either (test proc/a_spawn_needs_no_pipe_where_the_parent_waits_for_the_exec):
 * with room for four more fds it runs there, and a failure says why. */
Test(cgroup, a_child_started_in_its_cgroup_needs_no_pipe)
{
	char *argv[] = { "sh", "-c", "grep -q perturb- /proc/self/cgroup", NULL };
	char *bad[] = { "no-such-program-xyz", NULL };
	struct spawn_opts o = { .argv = argv, .envp = tl_test_env(), .out_fd = -1, .err_fd = -1 };
	char why[256];
	int status;
	pid_t pid;

	o.cgroup = cgroup_to_clone_into();
	tl_limit_fds(4);
	pid = proc_spawn_reason(&o, why, sizeof(why));
	cr_assert_gt(pid, 0, "%s", why);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status), "not in its cgroup");
	o.argv = bad;
	cr_assert_eq(proc_spawn_reason(&o, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "cannot run 'no-such-program-xyz': No such file or directory");
	cgroup_destroy(o.cgroup);
}

/* The clone into its cgroup hands back the child's pidfd (CLONE_PIDFD): no
 * pidfd_open() a run; it reads ready when the child ends, and a child that
 * failed before its exec leaves none open. */
Test(cgroup, a_child_started_in_its_cgroup_comes_with_its_pidfd)
{
	char *argv[] = { "true", NULL }, *bad[] = { "no-such-program-xyz", NULL };
	int pidfd = 7, fds, status;
	struct spawn_opts o = { .argv = argv, .envp = tl_test_env(), .out_fd = -1, .err_fd = -1,
				.pidfd = &pidfd };
	struct pollfd p;
	char why[256];
	pid_t pid;

	o.cgroup = cgroup_to_clone_into();
	fds = tl_count_fds();
	pid = proc_spawn_reason(&o, why, sizeof(why));
	cr_assert_gt(pid, 0, "%s", why);
	cr_assert_geq(pidfd, 0, "no pidfd from the clone");
	cr_assert(fcntl(pidfd, F_GETFD) & FD_CLOEXEC);
	p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 30000), 1, "the pidfd never said the child ended");
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	close(pidfd);
	o.argv = bad;
	cr_assert_eq(proc_spawn_reason(&o, why, sizeof(why)), -1);
	cr_assert_eq(pidfd, -1);
	cr_assert_eq(tl_count_fds(), fds);
	cgroup_destroy(o.cgroup);
	/* without a cgroup (vfork) there is none */
	o.cgroup = NULL;
	o.argv = argv;
	pid = proc_spawn_reason(&o, why, sizeof(why));
	cr_assert_gt(pid, 0, "%s", why);
	cr_assert_eq(pidfd, -1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
}

/* The memfds capture_keep() keeps open. */
static int spares_open(void)
{
	return tl_kept_fds("/memfd:");
}

/*
 * A run whose cgroup was empty at its end leaves its two capture memfds,
 * emptied, to the next run (no memfd made and closed a run): that run
 * reads only its own output.  A run that left a process behind, which
 * may still write to them, leaves none.
 */
Test(cgroup, a_contained_run_leaves_its_capture_files_to_the_next_and_a_leaky_one_does_not)
{
	char *longer[] = { "sh", "-c", "yes abcdefgh | head -n 10000", NULL };
	char *shorter[] = { "sh", "-c", "echo short", NULL };
	char *silent[] = { "true", NULL };
	char *again[] = { "sh", "-c", "echo again", NULL };
	char *leaky[] = { "sh", "-c", "setsid sleep 100 & echo leaky", NULL };
	struct run_request req = { .argv = longer, .envp = tl_test_env(), .timeout_s = 30 };
	struct run_result res;
	struct tl_capture c;

	need_cgroups();
	cgroup_prepare(1);
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	run_result_release(&res);
	cr_assert_eq(spares_open(), 2, "a contained run's memfds were not kept");
	req.argv = shorter;
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.out_tail, "short\n");
	cr_assert_eq(res.output_dropped, 0);
	run_result_release(&res);
	cr_assert_eq(spares_open(), 2);
	req.argv = silent;	/* nothing written: nothing to empty */
	cr_assert_eq(runner_run(&req, &res), 0);
	run_result_release(&res);
	req.argv = again;
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_str_eq(res.out_tail, "again\n");
	run_result_release(&res);
	req.argv = leaky;
	tl_capture_start(&c, 2);
	cr_assert_eq(runner_run(&req, &res), 0);
	free(tl_capture_end(&c));
	cr_assert_eq(res.leftover_procs, 1);
	run_result_release(&res);
	cr_assert_eq(spares_open(), 0, "a leaky run's memfds were kept");
}

/* ---- a root workload that leaves its cgroup (issue 22) ---- */

Test(cgroup, a_root_workload_that_moves_itself_to_another_cgroup_is_killed_and_counted)
{
	char *other, *cmd, *procs, *left;
	struct metric_def md;
	struct run_result res;
	struct run_request req = { .envp = tl_test_env(), .timeout_s = 30, .n_metrics = 1,
				   .metrics = &md };
	struct tl_capture c;
	char *err;
	pid_t escaped;

	need_cgroups();
	if (geteuid())
		cr_skip_test("only root can move a process into a cgroup of its choosing");
	char *ch = xasprintf("/proc/self/task/%d/children", (int)getpid());
	int listed = !access(ch, R_OK);
	free(ch);
	if (!listed)
		cr_skip_test("no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)");
	/* another cgroup, outside perturb's: a sibling of its base */
	char *up = dir_name(cgroup_base());
	other = xasprintf("%s/perturb-test-escape-%d", up, (int)getpid());
	free(up);
	cr_assert_eq(mkdir(other, 0755), 0, "%s: %s", other, strerror(errno));
	procs = xasprintf("%s/cgroup.procs", other);
	/* the escapee moves, then starts a child there (outside too); the main
	 * process also leaves one behind in its own cgroup; it ends once both
	 * escapees are in the other cgroup (a loop on a condition, no sleep) */
	cmd = xasprintf("setsid sleep 100 & "
			"setsid sh -c 'echo $$ > %s; sleep 100 & exec sleep 100' & "
			"while [ $(wc -l < %s) -lt 2 ]; do :; done; echo pid=$!", procs, procs);
	char *argv[] = { "sh", "-c", cmd, NULL };
	req.argv = argv;
	tl_metric_init(&md, "pid", "pid=([0-9]+)");
	tl_capture_start(&c, 2);
	cr_assert_eq(runner_run(&req, &res), 0);
	err = tl_capture_end(&c);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	escaped = (pid_t)value_of(&res, "pid");
	cr_assert_gt(escaped, 0);
	cr_expect(tl_process_gone(escaped), "the escapee %d outlived its run", (int)escaped);
	left = read_file(procs, NULL);
	cr_expect(left && !*left, "still in the other cgroup: %s", left);
	/* 1 left in the run's cgroup + 2 that left it */
	cr_expect_eq(res.leftover_procs, 3);
	cr_expect(strstr(err, "started 2 processes that left the run's cgroup"), "%s", err);
	/* nothing of the run is left as perturb's child, not even a zombie */
	tl_assert_no_children();
	free(left);
	free(err);
	run_result_release(&res);
	regfree(&md.re);
	/* what was not killed, killed now, so that nothing leaks */
	char *k = xasprintf("%s/cgroup.kill", other);
	int fd = open(k, O_WRONLY | O_CLOEXEC);
	cr_expect(fd >= 0 && write(fd, "1", 1) == 1);
	if (fd >= 0)
		close(fd);
	free(k);
	for (int i = 0; i < 500 && rmdir(other) < 0 && errno == EBUSY; i++)
		tl_nap();	/* bounded: the kernel tears the killed down */
	free(procs);
	free(other);
	free(cmd);
}
