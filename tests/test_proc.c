/*
 * test_proc.c - commands, daemons and background loads (proc.h).  The
 * programs run are the helpers of tests/progs, found through
 * $PERTURB_PROGS.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/proc.h"
#include "core/runner.h"
#include "backends/bpf.h"
#include "testlib.h"
#include "lib/util.h"

static char *tmpdir;

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

/* Bounded wait (5 s) until file holds at least `lines` lines, or
 * contains `text` when not NULL.  Returns the file's content. */
static char *wait_file(const char *path, int lines, const char *text)
{
	for (int i = 0; i < 500; i++) {
		char *s = read_file(path, NULL);
		if (s && (text ? strstr(s, text) != NULL : tl_count_lines(s) >= lines))
			return s;
		free(s);
		tl_nap();
	}
	cr_assert_fail("'%s' never got %d lines / '%s'", path, lines,
		       text ? text : "");
	return NULL;
}

/* proc_run_command() without a folder, which must return want; returns
 * what it wrote on stderr. */
static char *command_stderr(char **argv, double timeout_s, const char *what, int want)
{
	struct tl_capture c;

	tl_capture_start(&c, 2);
	cr_assert_eq(proc_run_command(argv, tl_test_env(), NULL, timeout_s, what), want);
	return tl_capture_end(&c);
}

/* daemon_start() with the readiness regex "ready", which must fail and
 * leave no daemon; returns what it wrote on stderr. */
static char *daemon_start_error(char **argv, double ready_timeout_s)
{
	char *log = tmp_path("daemon.log"), *err;
	struct daemon *d = (struct daemon *)1;
	struct tl_capture c;
	regex_t re;

	cr_assert_eq(regcomp(&re, "ready", REG_EXTENDED), 0);
	tl_capture_start(&c, 2);
	cr_assert_eq(daemon_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &re, NULL,
				  ready_timeout_s, &d), -1);
	err = tl_capture_end(&c);
	cr_assert_null(d);
	regfree(&re);
	free(log);
	return err;
}

static void setup(void)
{
	tmpdir = tl_tmpdir();
}

static void teardown(void)
{
	tl_rmtree(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
}

TestSuite(proc, .init = setup, .fini = teardown);

/* ---- proc_spawn ---- */

Test(proc, spawn_exec_failure)
{
	char *argv[] = { "no-such-program-xyz", NULL };
	struct spawn_opts o = { .argv = argv, .envp = tl_test_env(), .out_fd = -1, .err_fd = -1 };
	int fds = tl_count_fds();

	errno = 0;
	cr_assert_eq(proc_spawn(&o), -1);
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(tl_count_fds(), fds);
	tl_assert_no_children();
}

/*
 * A spawn whose parent sleeps until the child has exec'd (vfork) takes no
 * pipe: the child reports a failure in the memory it shares.  With room for
 * four more fds, /dev/null and the child's three copies of it, a spawn
 * runs, and a failed one still says why (a pipe's two fds left the child
 * one short: it could not set up its standard fds).
 */
Test(proc, a_spawn_needs_no_pipe_where_the_parent_waits_for_the_exec)
{
	char *argv[] = { "true", NULL }, *bad[] = { "no-such-program-xyz", NULL };
	struct spawn_opts o = { .argv = argv, .envp = tl_test_env(), .out_fd = -1, .err_fd = -1 };
	char why[256];
	int status;
	pid_t pid;

	tl_limit_fds(4);
	pid = proc_spawn_reason(&o, why, sizeof(why));
	cr_assert_gt(pid, 0, "%s", why);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status));
	o.argv = bad;
	cr_assert_eq(proc_spawn_reason(&o, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "cannot run 'no-such-program-xyz': No such file or directory");
	tl_assert_no_children();
}

/* Every child's stdin is one /dev/null, opened once and kept: no open and
 * close a spawn. */
Test(proc, children_share_one_dev_null_kept_open)
{
	char *argv[] = { "true", NULL };
	struct spawn_opts o = { .argv = argv, .envp = tl_test_env(), .out_fd = -1, .err_fd = -1 };
	int status, first = -1, again = -1;
	pid_t pid;

	for (int i = 0; i < 2; i++) {
		pid = proc_spawn(&o);
		cr_assert_gt(pid, 0);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert_eq(tl_kept_fds_at("/dev/null", i ? &again : &first), 1,
			     "no /dev/null kept after spawn %d", i);
	}
	cr_assert_eq(first, again);
	cr_assert(fcntl(first, F_GETFD) & FD_CLOEXEC);
}

Test(proc, spawn_new_group_and_output)
{
	char *argv[] = { "printer", "out", "-E", "err", NULL };
	char *path = tmp_path("out"), *s;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), status;
	struct spawn_opts o = { .argv = argv, .envp = tl_test_env(), .out_fd = fd, .err_fd = -1 };
	pid_t pid = proc_spawn(&o);

	cr_assert(pid > 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status));
	close(fd);
	s = read_file(path, NULL);
	cr_assert_str_eq(s, "out\nerr\n");
	free(s);
	free(path);

	{
		char *sl[] = { "sleeper", NULL };
		o.argv = sl;
		o.out_fd = -1;
		pid = proc_spawn(&o);
		cr_assert(pid > 0);
		cr_assert_eq(getpgid(pid), pid);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* A source below fd 3 (perturb's own stdout given as a run's stderr, say)
 * goes via a copy, so that no target clobbers a later source; the usual
 * sources, at 3 or above, are taken as they are. */
Test(proc, spawn_sources_below_3_are_not_clobbered)
{
	char *argv[] = { "printer", "out", "-E", "err", NULL };
	char *pa = tmp_path("a"), *pb = tmp_path("b"), *s;
	int a = open(pa, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	int b = open(pb, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	int save1 = dup(1), save2 = dup(2), status;
	struct spawn_opts o = { .argv = argv, .envp = tl_test_env(), .out_fd = 2, .err_fd = 1 };
	pid_t pid;

	cr_assert(a >= 3 && b >= 3 && save1 >= 3 && save2 >= 3);
	fflush(NULL);
	dup2(a, 2);	/* the child's stdout (from our 2) goes to a */
	dup2(b, 1);	/* its stderr (from our 1) to b */
	pid = proc_spawn(&o);
	dup2(save1, 1);
	dup2(save2, 2);
	cr_assert(pid > 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status));
	s = read_file(pa, NULL);
	cr_assert_str_eq(s, "out\n");
	free(s);
	s = read_file(pb, NULL);
	cr_assert_str_eq(s, "err\n");
	free(s);
	close(a);
	close(b);
	close(save1);
	close(save2);
	free(pa);
	free(pb);
}

Test(proc, spawn_inherits_environ_when_envp_null)
{
	char *argv[] = { NULL, "PERTURB_TEST_VAR", NULL };
	char *path = tmp_path("out"), *s;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	struct spawn_opts o = { .argv = argv, .out_fd = fd, .err_fd = -1 };
	pid_t pid;

	argv[0] = xasprintf("%s/envecho", tl_progs());
	setenv("PERTURB_TEST_VAR", "inherited", 1);
	pid = proc_spawn(&o);
	cr_assert(pid > 0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	close(fd);
	s = read_file(path, NULL);
	cr_assert_str_eq(s, "PERTURB_TEST_VAR=inherited\n");
	free(s);
	free(path);
	free(argv[0]);
}

/* ---- proc_run_command ---- */

Test(proc, command_ok)
{
	char *argv[] = { "printer", "fine", NULL };
	int fds = tl_count_fds();
	char *err = command_stderr(argv, 10, "setup", 0);

	cr_assert_str_eq(err, "");
	free(err);
	cr_assert_eq(tl_count_fds(), fds);
	tl_assert_no_children();
}

Test(proc, command_failure_message)
{
	char *argv[] = { "printer", "line one", "-E", "line two", "-x", "1", NULL };
	char *err = command_stderr(argv, 10, "setup", -1);

	cr_assert_str_eq(err,
		"perturb: error: setup command 'printer line one -E line two -x 1' failed: exited with status 1\n"
		"    line one\n"
		"    line two\n");
	free(err);
	tl_assert_no_children();
}

Test(proc, command_exec_failure)
{
	char *argv[] = { "no-such-program-xyz", "a", NULL };
	char *err = command_stderr(argv, 10, "teardown", -1);

	cr_assert_str_eq(err,
		"perturb: error: teardown command 'no-such-program-xyz a' failed: cannot run 'no-such-program-xyz': No such file or directory\n");
	free(err);
	tl_assert_no_children();
}

Test(proc, command_timeout)
{
	char *argv[] = { "sleeper", "-p", "waiting", "-c", "1", NULL };
	char *err = command_stderr(argv, 0.2, "prepare", -1);
	pid_t child;

	cr_assert(strstr(err, "perturb: error: prepare command 'sleeper -p waiting -c 1' failed: timed out after 0.2 s\n"
			 "    waiting\n    child "), "%s", err);
	cr_assert_eq(tl_child_pids(err, &child, 1), 1);
	cr_assert(tl_process_gone(child));
	free(err);
	tl_assert_no_children();
}

Test(proc, command_cwd)
{
	char *argv[] = { "sh", "-c", "test \"$(pwd)\" = /proc", NULL };
	cr_assert_eq(proc_run_command(argv, tl_test_env(), "/proc", 10, "setup"), 0);
}

/* ---- daemons ---- */

Test(proc, daemon_ready_by_regex)
{
	char *argv[] = { "sleeper", "-p", "starting", "-p", "listening on port 5",
			 "-c", "1", NULL };
	char *log = tmp_path("daemon.log"), *s;
	struct daemon *d;
	regex_t re;
	pid_t pid, child;
	int fds = tl_count_fds();

	cr_assert_eq(regcomp(&re, "listening on port [0-9]+", REG_EXTENDED), 0);
	cr_assert_eq(daemon_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &re, NULL, 10, &d), 0);
	pid = daemon_pid(d);
	cr_assert(pid > 0);
	cr_assert_eq(kill(pid, 0), 0);
	s = wait_file(log, 3, NULL);
	cr_assert(!strncmp(s, "starting\nlistening on port 5\nchild ", 35), "%s", s);
	child = atoi(s + 35);
	free(s);
	cr_assert_eq(daemon_stop(d), 0);
	cr_assert_eq(kill(pid, 0), -1);
	cr_assert_eq(errno, ESRCH);
	cr_assert(tl_process_gone(child));
	cr_assert_eq(tl_count_fds(), fds);
	tl_assert_no_children();
	regfree(&re);
	free(log);
}

Test(proc, daemon_ready_without_newline)
{
	char *argv[] = { "sh", "-c", "printf 'prompt> '; exec sleeper", NULL };
	char *log = tmp_path("daemon.log");
	struct daemon *d;
	regex_t re;

	cr_assert_eq(regcomp(&re, "> $", REG_EXTENDED), 0);
	cr_assert_eq(daemon_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &re, NULL, 10, &d), 0);
	cr_assert_eq(daemon_stop(d), 0);
	tl_assert_no_children();
	regfree(&re);
	free(log);
}

Test(proc, daemon_exits_before_ready)
{
	char *argv[] = { "printer", "boom", "-x", "3", NULL };
	int fds = tl_count_fds();
	char *err = daemon_start_error(argv, 10);

	cr_assert_str_eq(err,
		"perturb: error: daemon 'printer boom -x 3' ended before it was ready: exited with status 3\n"
		"    boom\n");
	cr_assert_eq(tl_count_fds(), fds);
	tl_assert_no_children();
	free(err);
}

Test(proc, daemon_ready_timeout)
{
	char *argv[] = { "sleeper", "-p", "starting", NULL };
	char *err = daemon_start_error(argv, 0.2);

	cr_assert(strstr(err, "perturb: error: daemon 'sleeper -p starting' not ready after 0.2 s"), "%s", err);
	cr_assert(strstr(err, "\n    starting\n"), "%s", err);
	tl_assert_no_children();
	free(err);
}

/* daemon_start_reason(): a caller that says the failure itself (bpf:'s
 * trial, whose failure is --skip-unavailable's reason) gets how in why,
 * and nothing is printed, not the tail of the log either */
Test(proc, a_daemon_started_for_its_reason_fails_silently_and_says_how)
{
	char *exits[] = { "printer", "boom", "-x", "3", NULL };
	char *slow[] = { "sleeper", "-p", "starting", NULL };
	char *log = tmp_path("daemon.log"), *err, why[256];
	struct daemon *d = (struct daemon *)1;
	struct tl_capture c;
	regex_t re;

	cr_assert_eq(regcomp(&re, "ready", REG_EXTENDED), 0);
	tl_capture_start(&c, 2);
	cr_assert_eq(daemon_start_reason(exits, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &re,
					 NULL, 10, why, sizeof(why), &d), -1);
	err = tl_capture_end(&c);
	cr_assert_str_eq(err, "");
	cr_assert_null(d);
	cr_assert_str_eq(why, "ended before it was ready: exited with status 3");
	free(err);
	tl_capture_start(&c, 2);
	cr_assert_eq(daemon_start_reason(slow, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &re,
					 NULL, 0.2, why, sizeof(why), &d), -1);
	err = tl_capture_end(&c);
	cr_assert_str_eq(err, "");
	cr_assert_str_eq(why, "not ready after 0.2 s: its output did not match the readiness "
			 "pattern");
	/* what it wrote stays in its log, for the caller to read */
	char *text = read_file(log, NULL);
	cr_assert(text && strstr(text, "boom\n") && strstr(text, "starting\n"), "%s", text);
	free(text);
	tl_assert_no_children();
	regfree(&re);
	free(err);
	free(log);
}

Test(proc, daemon_ready_by_delay)
{
	char *argv[] = { "sleeper", NULL };
	char *log = tmp_path("daemon.log");
	struct daemon *d;
	double t0 = now_mono();

	cr_assert_eq(daemon_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0.1, NULL, NULL, 10, &d), 0);
	cr_assert(now_mono() - t0 >= 0.1);
	cr_assert_eq(daemon_stop(d), 0);
	tl_assert_no_children();
	free(log);
}

Test(proc, daemon_exits_during_delay)
{
	char *argv[] = { "printer", "bye", NULL };
	char *log = tmp_path("daemon.log"), *err;
	struct daemon *d;
	struct tl_capture c;
	double t0 = now_mono();

	tl_capture_start(&c, 2);
	cr_assert_eq(daemon_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 5, NULL, NULL, 10, &d), -1);
	err = tl_capture_end(&c);
	cr_assert(now_mono() - t0 < 4);
	cr_assert_str_eq(err,
		"perturb: error: daemon 'printer bye' ended during its start-up delay: exited with status 0\n"
		"    bye\n");
	tl_assert_no_children();
	free(err);
	free(log);
}

Test(proc, daemon_died_on_its_own)
{
	char *argv[] = { "printer", "-x", "2", "short-lived", NULL };
	char *log = tmp_path("daemon.log"), *err;
	struct daemon *d;
	struct tl_capture c;
	struct pollfd p;

	/* appended to what is there */
	cr_assert_eq(daemon_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, NULL, NULL, 10, &d), 0);
	p.fd = pidfd_open(daemon_pid(d), 0);
	p.events = POLLIN;
	cr_assert(p.fd >= 0);
	cr_assert_eq(poll(&p, 1, 5000), 1);
	close(p.fd);
	tl_capture_start(&c, 2);
	cr_assert_eq(daemon_stop(d), -1);
	err = tl_capture_end(&c);
	cr_assert_str_eq(err,
		"perturb: error: daemon 'printer -x 2 short-lived' had ended on its own: exited with status 2\n"
		"    short-lived\n");
	tl_assert_no_children();
	free(err);
	free(log);
}

Test(proc, daemon_exec_failure)
{
	char *argv[] = { "no-such-daemon", NULL };
	char *err = daemon_start_error(argv, 10);

	cr_assert_str_eq(err, "perturb: error: daemon 'no-such-daemon' failed: cannot run 'no-such-daemon': No such file or directory\n");
	tl_assert_no_children();
	free(err);
}

/* ---- background loads ---- */

static pid_t asker_pid;

/* proc_call_at(): the call comes from the asking process's next wait, and
 * never from a fork's (the call is the store's commit on the parent's
 * SQLite connection: a background load's supervisor, forked while a batch
 * was open, committed it from its own wait once, "disk I/O error"). */
static void note_call(void *arg)
{
	int fd = *(int *)arg;
	char c = getpid() == asker_pid ? 'p' : 'c';

	cr_assert_eq(write(fd, &c, 1), 1);
}

Test(proc, a_call_at_is_made_by_the_process_that_asked_never_by_its_fork)
{
	int fds[2];
	char got[8];
	ssize_t n;
	pid_t pid;

	asker_pid = getpid();
	cr_assert_eq(pipe(fds), 0);
	proc_call_at(now_mono() - 1, note_call, &fds[1]);	/* due already */
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		proc_poll(NULL, 0, now_mono() + 0.01, 0);	/* a wait of the fork's */
		_exit(0);
	}
	cr_assert_eq(cli_wait(pid), 0);
	proc_poll(NULL, 0, now_mono() + 0.01, 0);		/* the parent's */
	close(fds[1]);
	n = read(fds[0], got, sizeof(got));
	close(fds[0]);
	cr_assert_eq(n, 1, "the call was made %zd times", n);
	cr_assert_eq(got[0], 'p', "the fork made the call");
}

Test(proc, background_restarts_counted)
{
	char *out = tmp_path("starts"), *log = tmp_path("bg.log"), *s;
	/* lives 60 ms (no crash-loop back-off), records each start */
	char *argv[] = { "sh", "-c", "appender \"$0\"; exec sleeper -t 0.06", out, NULL };
	struct background *b;
	long starts = 0, lines;
	pid_t sup;
	int fds = tl_count_fds();

	cr_assert_eq(background_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &b), 0);
	sup = background_pid(b);
	free(wait_file(out, 3, NULL));
	cr_assert_eq(background_stop(b, &starts), 0);
	s = read_file(out, NULL);
	lines = tl_count_lines(s);
	cr_assert(starts >= 3, "%ld", starts);
	/* a start whose appender had not run yet is counted too */
	cr_assert(starts == lines || starts == lines + 1, "%ld vs %ld", starts, lines);
	free(s);
	cr_assert_eq(kill(sup, 0), -1);
	cr_assert_eq(tl_count_fds(), fds);
	tl_assert_no_children();
	free(out);
	free(log);
}

Test(proc, background_crash_loop_backs_off)
{
	char *out = tmp_path("starts"), *log = tmp_path("bg.log"), *s;
	char *argv[] = { "appender", out, "1", NULL };
	struct background *b;
	long starts = 0;

	cr_assert_eq(background_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &b), 0);
	s = wait_file(log, 0, "ended at once 5 times in a row");
	free(s);
	cr_assert_eq(background_stop(b, &starts), 0);
	/* stopped during (or just after) the 1 s back-off */
	cr_assert(starts >= 5, "%ld", starts);
	tl_assert_no_children();
	free(out);
	free(log);
}

/* A load that failed in an earlier entry of its variant (prior_failures) is
 * not trusted before its new start has run a second: a short run at the
 * next entry, before the fresh start had had the time to fail, was counted
 * as holding it (cli/a_run_whose_daemon_or_background_load_did_not_hold_is_failed
 * failed so, once in seven full runs).  A load that never failed is. */
Test(proc, a_load_that_failed_before_is_not_trusted_at_its_next_start)
{
	char *log = tmp_path("bg.log");
	char *argv[] = { "sleeper", "-t", "100", NULL };
	struct background_sample smp;
	struct background *b;

	for (long prior = 0; prior <= 1; prior++) {
		double t0 = now_mono();
		cr_assert_eq(background_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, prior,
					      &b), 0);
		background_sample(b, &smp);
		/* the load runs: not failing, unless it failed before and its
		 * start is younger than a second (asserted only while it
		 * surely is) */
		if (!prior)
			cr_assert_eq(smp.failing, 0);
		else if (now_mono() - t0 < 0.9)
			cr_assert_eq(smp.failing, 1, "a start after a failure was trusted at once");
		cr_assert_eq(background_failures(b), 0);
		cr_assert_eq(background_stop(b, NULL), 0);
	}
	tl_assert_no_children();
	free(log);
}

Test(proc, background_stop_kills_load_group)
{
	char *log = tmp_path("bg.log"), *s;
	char *argv[] = { "sleeper", "-c", "2", NULL };
	struct background *b;
	long starts = 0;
	pid_t kids[2];

	cr_assert_eq(background_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &b), 0);
	s = wait_file(log, 2, NULL);
	cr_assert_eq(tl_child_pids(s, kids, 2), 2, "%s", s);
	free(s);
	cr_assert_eq(background_stop(b, &starts), 0);
	cr_assert_eq(starts, 1);
	cr_assert(tl_process_gone(kids[0]));
	cr_assert(tl_process_gone(kids[1]));
	tl_assert_no_children();
	free(log);
}

Test(proc, background_exec_failure)
{
	char *log = tmp_path("bg.log"), *err;
	char *argv[] = { "no-such-load", NULL };
	struct background *b = (struct background *)1;
	struct tl_capture c;
	int fds = tl_count_fds();

	tl_capture_start(&c, 2);
	cr_assert_eq(background_start(argv, tl_test_env(), NULL, log, PROC_LOG_MAX, 0, &b), -1);
	err = tl_capture_end(&c);
	cr_assert_null(b);
	cr_assert_str_eq(err, "perturb: error: background load 'no-such-load' failed: cannot run 'no-such-load': No such file or directory\n");
	cr_assert_eq(tl_count_fds(), fds);
	tl_assert_no_children();
	free(err);
	free(log);
}

/* ---- bounded logs ---- */

/* The log at path holds at most max bytes (plus one read of the logger),
 * starts with the marker, and its count plus what it keeps is what was
 * written: total bytes. */
static void assert_bounded(const char *path, size_t max, size_t total)
{
	size_t len, used = 0;
	unsigned long long dropped = 0;
	char *text = read_file(path, &len);
	int n = 0;

	cr_assert(text, "cannot read '%s'", path);
	cr_expect_leq(len, max + 65536, "'%s' holds %zu bytes", path, len);
	n = sscanf(text, "perturb: %llu bytes of this log were dropped here (a log keeps at most "
		   "%zu)\n%zn", &dropped, &used, (ssize_t *)&used);
	cr_assert(n >= 2 && used, "no marker at the start of '%s': %.100s", path, text);
	cr_expect_eq(dropped + (len - used), total, "dropped %llu + kept %zu != written %zu",
		     dropped, len - used, total);
	cr_expect(strstr(text, "flood done"), "the last of the output is kept");
	free(text);
}

/*
 * The class: the logs of the processes perturb runs beside the runs (a
 * daemon, a background load).  Each is bounded as captured output is: a
 * process that floods its log leaves at most log_max bytes of it, the
 * last ones, after a line that counts the bytes dropped, and the stop
 * says how many (a daemon printing trace_pipe filled the disk, and the
 * database with it).
 */
Test(proc, every_daemon_and_background_log_is_bounded)
{
	const size_t max = 1 << 20, mb = 6;
	char *log = tmp_path("daemon.log"), *bglog = tmp_path("bg.log"), *said, *s;
	char *dargv[] = { "sh", "-c", "flood 6; echo ready; exec sleep 60", NULL };
	char *bargv[] = { "sh", "-c", "flood 6; exec sleep 60", NULL };
	/* flood's first and last lines, and the daemon's "ready" */
	size_t written = strlen("flood begins 6\n") + (mb << 20) + strlen("flood done 6\n");
	struct tl_capture c;
	struct daemon *d;
	struct background *b;
	regex_t re;

	cr_assert_eq(regcomp(&re, "^ready", REG_EXTENDED | REG_NOSUB), 0);
	tl_capture_start(&c, 2);
	cr_assert_eq(daemon_start(dargv, tl_test_env(), NULL, log, max, 0, &re, NULL, 30, &d), 0);
	cr_assert_eq(daemon_stop(d), 0);
	said = tl_capture_end(&c);
	regfree(&re);
	assert_bounded(log, max, written + strlen("ready\n"));
	cr_expect(strstr(said, "wrote more than its log keeps") && strstr(said, "bytes dropped"),
		  "%s", said);
	free(said);

	tl_capture_start(&c, 2);
	cr_assert_eq(background_start(bargv, tl_test_env(), NULL, bglog, max, 0, &b), 0);
	s = wait_file(bglog, 0, "flood done");
	free(s);
	cr_assert_eq(background_stop(b, NULL), 0);
	said = tl_capture_end(&c);
	assert_bounded(bglog, max, written);
	cr_expect(strstr(said, "background load") && strstr(said, "bytes dropped"), "%s", said);
	free(said);
	tl_assert_no_children();
	free(log);
	free(bglog);
}

/*
 * A tracer's log is bounded as a daemon's, and what perturb reads back
 * from it survives the cut: bpftrace's log (host.c) holds at most its
 * bound, and the "Lost N events" lines it dropped are tallied in its first
 * line, so that bpf_log_lost() counts every event lost, dropped or kept.
 */
Test(proc, a_tracer_log_is_bounded_and_its_lost_events_still_counted)
{
	const size_t max = 1 << 20;
	char *log = tmp_path("bpf.log"), *text;
	char *dargv[] = { "sh", "-c", "awk 'BEGIN { for (i = 0; i < 100000; i++) { "
			  "print \"Lost 3 events\"; print \"@x[\" i \"]: 12345678901234567890\" } "
			  "print \"done\" }'; exec sleep 60", NULL };
	struct daemon *d;
	regex_t re, lost;
	size_t len;

	cr_assert_eq(regcomp(&re, "^done", REG_EXTENDED | REG_NOSUB), 0);
	cr_assert_eq(regcomp(&lost, BPF_LOST_REGEX, REG_EXTENDED | REG_NEWLINE), 0);
	cr_assert_eq(daemon_start(dargv, tl_test_env(), NULL, log, max, 0, &re, &lost, 30, &d), 0);
	cr_assert_eq(daemon_stop(d), 0);
	regfree(&re);
	regfree(&lost);
	text = read_file(log, &len);
	cr_assert(text);
	cr_expect_leq(len, max + 65536, "the log holds %zu bytes", len);
	cr_assert(!strncmp(text, "perturb: ", 9) && strstr(text, "; the lines dropped tallied "),
		  "%.200s", text);
	cr_expect_gt(proc_log_tally(log), 0);
	cr_expect_eq(bpf_log_lost(log), 300000ULL, "lost %llu", bpf_log_lost(log));
	free(text);
	free(log);
	tl_assert_no_children();
}
