/*
 * test_runner.c - runner_run(): statuses, metrics, environment, pinning,
 * large output, time-outs and stop requests.  The workloads are the helper
 * programs of tests/progs, found through $PERTURB_PROGS.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/runner.h"
#include "testlib.h"
#include "lib/util.h"

static void run(struct run_result *res, double timeout, const struct metric_def *m,
		size_t n_metrics, char **argv)
{
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = timeout,
		.metrics = m, .n_metrics = n_metrics,
	};
	int fds = tl_count_fds();
	cr_assert_eq(runner_run(&req, res), 0);
	cr_assert_eq(tl_count_fds(), fds, "fds leaked");
	tl_assert_no_children();
}

/* run() with the one metric name, matched by the regex re. */
static void run_metric(struct run_result *res, double timeout, const char *name,
		       const char *re, char **argv)
{
	struct metric_def m;

	tl_metric_init(&m, name, re);
	run(res, timeout, &m, 1, argv);
	regfree(&m.re);
}

/* The n processes the workload printed as "child PID" lines are gone. */
static void assert_children_gone(const struct run_result *res, size_t n)
{
	pid_t pids[4];

	cr_assert(n <= 4);
	cr_assert_eq(tl_child_pids(res->out_tail, pids, n), n, "%s", res->out_tail);
	for (size_t i = 0; i < n; i++)
		cr_assert(tl_process_gone(pids[i]), "child %d survived", (int)pids[i]);
}

Test(runner, ok_with_metrics)
{
	struct metric_def m[2];
	struct run_result res;
	char *argv[] = { "printer", "hello", "Time in seconds =   1.25",
			 "-E", "42", NULL };

	tl_metric_init(&m[0], "exec_time", "Time in seconds = +([0-9.]+)");
	tl_metric_init(&m[1], "ops", "^[0-9]+$");
	run(&res, 10, m, 2, argv);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.reason, "");
	cr_assert_eq(res.exit_code, 0);
	cr_assert_eq(res.n_values, 2);
	cr_assert_str_eq(res.values[0].name, "exec_time");
	cr_assert_float_eq(res.values[0].value, 1.25, 1e-12);
	cr_assert_str_eq(res.values[0].unit, "s");
	cr_assert_float_eq(res.values[1].value, 42, 1e-12);
	cr_assert_str_eq(res.out_tail, "hello\nTime in seconds =   1.25\n42\n");
	cr_assert(res.wall_s > 0 && res.wall_s < 10);
	cr_assert(res.maxrss_kb > 0);
	cr_assert_eq(strlen(res.started), 20, "%s", res.started);
	cr_assert_str_eq(run_status_name(res.status), "ok");
	run_result_release(&res);
	regfree(&m[0].re);
	regfree(&m[1].re);
}

Test(runner, stdout_before_stderr)
{
	struct run_result res;
	char *argv[] = { "printer", "-E", "v 2", "-O", "v 1", NULL };

	run_metric(&res, 10, "v", "v ([0-9])", argv);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_float_eq(res.values[0].value, 1, 1e-12);
	run_result_release(&res);
}

Test(runner, missing_metric)
{
	struct run_result res;
	char *argv[] = { "printer", "nothing here", NULL };

	run_metric(&res, 10, "exec_time", "Time = ([0-9.]+)", argv);
	cr_assert_eq(res.status, RUN_FAILED);
	cr_assert_str_eq(res.reason, "metric 'exec_time' not found in output");
	cr_assert_eq(res.n_values, 0);
	run_result_release(&res);
}

Test(runner, unparsable_metric)
{
	struct run_result res;
	char *argv[] = { "printer", "value = abc", NULL };

	run_metric(&res, 10, "v", "value = ([a-z]+)", argv);
	cr_assert_eq(res.status, RUN_FAILED);
	cr_assert_str_eq(res.reason, "metric 'v': cannot parse 'abc' as a number: not a number");
	run_result_release(&res);
}

Test(runner, nonzero_exit)
{
	struct run_result res;
	char *argv[] = { "printer", "-x", "3", "oops", NULL };

	run(&res, 10, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_FAILED);
	cr_assert_eq(res.exit_code, 3);
	cr_assert_str_eq(res.reason, "exited with status 3");
	cr_assert_str_eq(res.out_tail, "oops\n");
	run_result_release(&res);
}

Test(runner, crash)
{
	struct run_result res;
	char *argv[] = { "crasher", "segv", NULL };

	run(&res, 10, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_CRASHED);
	cr_assert_eq(res.signal, SIGSEGV);
	cr_assert_str_eq(res.reason, "killed by signal 11 (Segmentation fault)");
	run_result_release(&res);
}

Test(runner, exec_failure)
{
	struct run_result res;
	char *argv[] = { "no-such-program-xyz", "arg", NULL };

	run(&res, 10, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_ERROR);
	cr_assert_str_eq(res.reason,
			 "cannot run 'no-such-program-xyz': No such file or directory");
	cr_assert_str_eq(res.out_tail, "");
	run_result_release(&res);
}

Test(runner, bad_cwd)
{
	struct run_result res;
	char *argv[] = { "printer", "x", NULL };
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 10,
		.cwd = "/nonexistent-dir",
	};

	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_ERROR);
	cr_assert_str_eq(res.reason, "cannot change to directory '/nonexistent-dir': No such file or directory");
	run_result_release(&res);
	tl_assert_no_children();
}

Test(runner, cwd)
{
	struct run_result res;
	char *argv[] = { "/bin/pwd", NULL };
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 10, .cwd = "/proc",
	};

	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.out_tail, "/proc\n");
	run_result_release(&res);
}

Test(runner, env_exact_and_path_from_envp)
{
	struct run_result res;
	char *argv[] = { "envecho", NULL };
	char *env[] = { NULL, "FOO=bar baz", "EMPTY=", NULL };
	struct run_request req = { .argv = argv, .envp = env, .timeout_s = 10 };
	char *want;

	env[0] = xasprintf("PATH=%s", tl_progs());
	want = xasprintf("%s\nFOO=bar baz\nEMPTY=\n", env[0]);
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.out_tail, want);
	run_result_release(&res);
	free(want);
	free(env[0]);
}

Test(runner, argv_exact)
{
	struct run_result res;
	char *argv[] = { "argecho", "a b", "", "-x", "$HOME", NULL };

	run(&res, 10, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.out_tail, "[a b]\n[]\n[-x]\n[$HOME]\n");
	run_result_release(&res);
}

Test(runner, stdin_is_dev_null_and_only_stdio_open)
{
	struct run_result res;
	char *cat[] = { "cat", NULL };
	char *ls[] = { "ls", "/proc/self/fd", NULL };

	run(&res, 10, NULL, 0, cat);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.out_tail, "");
	run_result_release(&res);

	/* 0-2, and 3: the directory ls is reading */
	run(&res, 10, NULL, 0, ls);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.out_tail, "0\n1\n2\n3\n");
	run_result_release(&res);
}

Test(runner, cpu_pinning)
{
	cpu_set_t set;
	int cpu = -1;
	char want[32];
	struct run_result res;
	char *argv[] = { "affinity", NULL };
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 10,
		.cpus = &cpu, .n_cpus = 1,
	};

	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			cpu = i;	/* the last CPU we may use */
	snprintf(want, sizeof(want), "cpus: %d\n", cpu);
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_str_eq(res.out_tail, want);
	run_result_release(&res);
}

Test(runner, large_output)
{
	struct run_result res;
	char *argv[] = { "flood", "100", NULL };
	size_t len;

	run_metric(&res, 60, "mb", "^flood done ([0-9]+)$", argv);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_float_eq(res.values[0].value, 100, 1e-12);
	len = strlen(res.out_tail);
	cr_assert_eq(len, RUNNER_TAIL_BYTES);
	cr_assert_str_eq(res.out_tail + len - 15, "flood done 100\n");
	cr_assert_eq(res.out_tail[len - 16], '\n');
	cr_assert_eq(res.out_tail[len - 17], 'x');
	run_result_release(&res);
}

/*
 * Output beyond req->output_max is scanned, then dropped while the run
 * lasts: a metric in the dropped part is still found, the memory file the
 * workload writes holds no more than the bound once perturb has looked at
 * it, and the result says how much was dropped.
 */
Test(runner, output_is_bounded_and_scanned_as_it_comes)
{
	struct metric_def m[3];
	struct run_result res;
	char *argv[] = { "flood", "8", "256", NULL };
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 60,
		.metrics = m, .n_metrics = 3, .output_max = 256 * 1024,
	};
	uint64_t total = 8 * 1024 * 1024 + strlen("flood begins 8\n") +
			 strlen("flood done 8\n");

	tl_metric_init(&m[0], "begins", "^flood begins ([0-9]+)$");
	tl_metric_init(&m[1], "held", "^flood held ([0-9]+)$");
	tl_metric_init(&m[2], "done", "^flood done ([0-9]+)$");
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_float_eq(res.values[0].value, 8, 1e-12);
	cr_assert_leq(res.values[1].value, 256, "the workload's output held %g KiB",
		      res.values[1].value);
	cr_assert_float_eq(res.values[2].value, 8, 1e-12);
	/* all but the last half of the bound (rounded down to pages) */
	cr_assert_geq(res.output_dropped, total - 128 * 1024 - 4096 - 32,
		      "dropped %llu", (unsigned long long)res.output_dropped);
	cr_assert_leq(res.output_dropped, total - 128 * 1024);
	cr_assert_eq(strlen(res.out_tail), RUNNER_TAIL_BYTES);
	cr_assert(strstr(res.out_tail, "flood done 8\n"));
	run_result_release(&res);
	for (int i = 0; i < 3; i++)
		regfree(&m[i].re);
}

/* A small output is not dropped, whatever the bound. */
Test(runner, small_output_is_kept_whole)
{
	struct run_result res;
	char *argv[] = { "flood", "0", NULL };

	run_metric(&res, 60, "mb", "^flood begins ([0-9]+)$", argv);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_eq(res.output_dropped, 0);
	cr_assert_str_eq(res.out_tail, "flood begins 0\nflood done 0\n");
	run_result_release(&res);
}

/* A time-out too long for a timespec still waits (it failed with EINVAL,
 * and the run came back as interrupted). */
Test(runner, an_absurd_timeout_still_waits)
{
	static const double timeouts[] = { 9.3e18, 1e300 };
	struct run_result res;
	char *argv[] = { "printer", "v: 1", NULL };

	for (size_t i = 0; i < ARRAY_SIZE(timeouts); i++) {
		run_metric(&res, timeouts[i], "v", "^v: ([0-9]+)$", argv);
		cr_assert_eq(res.status, RUN_OK, "%g: %s", timeouts[i], res.reason);
		run_result_release(&res);
	}
}

Test(runner, leftovers_killed_after_exit)
{
	struct run_result res;
	char *argv[] = { "sleeper", "-c", "2", "-t", "0", NULL };

	run(&res, 10, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	assert_children_gone(&res, 2);
	run_result_release(&res);
}

Test(runner, timeout_quick_group_kill)
{
	struct run_result res;
	char *argv[] = { "sleeper", "-c", "2", NULL };

	run(&res, 0.2, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_TIMEOUT);
	cr_assert_str_eq(res.reason, "timed out after 0.2 s");
	cr_assert(res.wall_s >= 0.2);
	cr_assert(res.wall_s < 0.2 + STOP_KILL_GRACE_S, "%g", res.wall_s);
	assert_children_gone(&res, 2);
	run_result_release(&res);
}

Test(runner, timeout_ignoring_sigterm, .timeout = 30)
{
	struct run_result res;
	char *argv[] = { "sleeper", "-i", "-c", "2", NULL };
	double t0 = now_mono(), took;

	run(&res, 0.2, NULL, 0, argv);
	took = now_mono() - t0;
	cr_assert_eq(res.status, RUN_TIMEOUT);
	cr_assert(res.wall_s >= 0.2 + STOP_KILL_GRACE_S - 0.01, "%g", res.wall_s);
	cr_assert(took < 0.2 + STOP_KILL_GRACE_S + 5, "%g", took);
	assert_children_gone(&res, 2);
	run_result_release(&res);
}

static void restore_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	stop_clear();
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

Test(runner, stop_request, .fini = restore_signals)
{
	struct run_result res;
	/* the workload asks perturb (its parent) to stop, then waits */
	char *argv[] = { "sleeper", "-c", "1", "-k", NULL };

	stop_install_signals();
	run(&res, 20, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_INTERRUPTED);
	cr_assert_eq(stop_requested(), SIGTERM);
	cr_assert(res.wall_s < 10);
	assert_children_gone(&res, 1);
	run_result_release(&res);

	/* a pending request: nothing is started */
	run(&res, 20, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_INTERRUPTED);
	cr_assert_str_eq(res.out_tail, "");
	run_result_release(&res);
}

Test(runner, workload_gets_default_signals, .fini = restore_signals)
{
	struct run_result res;
	char *argv[] = { "crasher", "term", NULL };

	/* blocked and ignored in perturb, default in the workload */
	stop_install_signals();
	signal(SIGPIPE, SIG_IGN);
	run(&res, 10, NULL, 0, argv);
	cr_assert_eq(res.status, RUN_CRASHED, "%s", res.reason);
	cr_assert_eq(res.signal, SIGTERM);
	cr_assert_eq(stop_requested(), 0);
	run_result_release(&res);
	signal(SIGPIPE, SIG_DFL);
}
