/*
 * test_lttng.c - the lttng: block on the host (backends/lttng.c): real
 * LTTng session daemons, started and stopped by the perturb these tests
 * run, and what they must leave behind: nothing (no daemon, no folder in
 * /tmp, no /run/lttng, no liblttng-ust wait file in /dev/shm that was not
 * there before).  Whatever a test leaves is killed and removed by the
 * suite's fini.  The tests that look at /dev/shm hold the lock perturb
 * takes for an LTTng session, so that two of them never see each other's
 * files.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/lttng.h"
#include "lib/util.h"
#include "testlib.h"

/* perturb's LTTng session daemons (their application socket is in a
 * folder of perturb's) */
#define SESSIONDS ((const char *const[]){ "lttng-sessiond ", "--apps-sock=/tmp/perturb-lttng-", NULL })

#define LTTNG_LOCK "/run/perturb-lttng.lock"

static char *dir, *db;

static void setup(void)
{
	dir = tl_tmpdir();
	db = xasprintf("%s/r.db", dir);
}

static size_t count_glob(const char *pat)
{
	glob_t g;
	size_t n = glob(pat, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
	globfree(&g);
	return n;
}

static void lttng_lock(void);
static void lttng_unlock(void);

/* Under the lock no session is running (each holds it): a daemon of
 * perturb's found then was left behind, and is killed. */
static void teardown(void)
{
	lttng_lock();
	tl_procs_with(SESSIONDS, SIGKILL, NULL, 0);
	lttng_unlock();
	tl_rmtree(dir);
	free(dir);
	free(db);
}

TestSuite(lttng, .init = setup, .fini = teardown, .timeout = 300);

static void skip_unless_lttng(void)
{
	if (geteuid() != 0)
		cr_skip_test("the lttng: block needs root");
	if (!program_exists("lttng-sessiond") || !program_exists("lttng"))
		cr_skip_test("lttng-tools is not installed (make deps)");
}

/* A session daemon can run here: its private mount namespace too. */
static void skip_unless_session(void)
{
	char why[512];

	skip_unless_lttng();
	if (lttng_private_mounts_unavailable(why, sizeof(why)))
		cr_skip_test("%s", why);
}

/* The lock perturb takes for an LTTng session, waited for (once: a test
 * that failed holding it still holds it in its fini). */
static int lock_fd = -1;

static void lttng_lock(void)
{
	if (lock_fd >= 0)
		return;
	lock_fd = open(LTTNG_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock_fd >= 0)
		flock(lock_fd, LOCK_EX);
}

static void lttng_unlock(void)
{
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
}

/* Variant k's lttng: block (after "    lttng: ") is refused before anything
 * runs, with the reason after "variant 'k': lttng: "; with
 * --skip-unavailable the study runs without it. */
static void expect_refused(const char *block, const char *reason)
{
	char *path = xasprintf("%s/e.yaml", dir), *yaml, *want;
	struct cli_result r;

	yaml = xasprintf("name: k\nrepetitions: 1\nwarmup: 0\n"
			 "variants:\n  - name: base\n  - name: k\n    lttng: %s\n"
			 "workloads:\n  - {name: w, cmd: [\"true\"]}\n", block);
	tl_write(dir, "e.yaml", yaml);
	cli_run(dir, &r, "run", path, "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	want = xasprintf("e.yaml:6:5: variant 'k': lttng: %s", reason);
	cr_assert(strstr(r.err, want), "want '%s' in: %s", want, r.err);
	cr_assert_not(tl_exists(db), "nothing is written");
	cli_result_release(&r);
	cli_run(dir, &r, "run", path, "--db", db, "-q", "--skip-unavailable", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM plan WHERE variant = 'k'"), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results WHERE status = 'ok'"), 1);
	cli_result_release(&r);
	free(want);
	free(yaml);
	free(path);
}

Test(lttng, kernel_events_are_refused_on_this_host_with_the_reason)
{
	char why[512], *reason;

	skip_unless_lttng();
	if (!lttng_kernel_unavailable(why, sizeof(why)))
		cr_skip_test("this host's kernel can load lttng-modules: nothing refused");
	reason = xasprintf("kernel events are unavailable on this host: %s", why);
	expect_refused("{kernel: [sched_switch, 'syscall:getppid']}", reason);
	free(reason);
}

/*
 * A minbase chroot (debootstrap) has no mount point at "/" or /run: the
 * session daemon's namespace cannot be made there ("mount: /run: not mount
 * point"), and lttng_private_mounts_unavailable() says so.  Tried in a
 * child chrooted into a folder (not a mount point) with a plain /run.
 */
Test(lttng, no_private_mount_namespace_in_a_chroot_without_mount_points)
{
	char *root = xasprintf("%s/root/run", dir), why[512];
	int st;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("a chroot needs root");
	cr_assert_eq(mkdir_p(root, 0755), 0);
	root[strlen(root) - 4] = '\0';
	pid = fork();
	cr_assert(pid >= 0);
	if (!pid) {
		/* the chroot in a namespace of the test's own, nothing shared back;
		 * where the tests themselves run in a chroot whose / is no mount
		 * point (EINVAL), there is nothing to make private: the checks
		 * below mount nothing, they try in namespaces of their own */
		if (unshare(CLONE_NEWNS) < 0 ||
		    (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 && errno != EINVAL) ||
		    chroot(root) < 0 || chdir("/") < 0)
			_exit(3);
		/* the class: every caller of unshare_mounts_private() with /run */
		if (!lttng_private_mounts_unavailable(why, sizeof(why)))
			_exit(4);
		if (!strstr(why, "no private mount namespace here: '/' and '/run' are no mount "
			    "points (mount: /run: not mount point"))
			_exit(5);
		if (!private_mounts_unavailable((const char *const[]){ "/run", "/sys", "/tmp", NULL },
						why, sizeof(why)))
			_exit(4);
		_exit(strstr(why, "'/' and '/run' are no mount points") ? 0 : 5);
	}
	while (waitpid(pid, &st, 0) < 0)
		;
	cr_assert(WIFEXITED(st), "the child was killed");
	cr_assert_neq(WEXITSTATUS(st), 3, "cannot make the chroot");
	cr_assert_neq(WEXITSTATUS(st), 4, "a chroot without mount points was taken for one "
		      "that gives a private mount namespace");
	cr_assert_eq(WEXITSTATUS(st), 0, "the reason does not name /run");
	free(root);
}

/* Where there is no private mount namespace (a minbase chroot), an lttng:
 * variant is refused before anything runs, with that reason; two of these
 * tests failed there with "mount: /run: not mount point" instead. */
Test(lttng, a_variant_is_refused_where_no_private_mount_namespace)
{
	char why[512], *reason;

	skip_unless_lttng();
	if (!lttng_private_mounts_unavailable(why, sizeof(why)))
		cr_skip_test("this machine gives the session daemon its private mount namespace: "
			     "nothing refused");
	reason = xasprintf("its session daemon runs in a mount namespace of its own, with its "
			   "own /run and /dev/shm: %s", why);
	expect_refused("{preload: [libc]}", reason);
	free(reason);
}

Test(lttng, a_dry_run_starts_no_session_daemon)
{
	char *path = xasprintf("%s/e.yaml", dir);
	struct cli_result r;
	size_t before;

	skip_unless_session();
	lttng_lock();	/* no other test's session folder comes or goes */
	before = count_glob("/tmp/perturb-lttng-*");
	tl_write(dir, "e.yaml",
		 "name: d\nrepetitions: 1\n"
		 "variants:\n  - name: base\n  - name: u\n"
		 "    lttng: {userspace: ['perturb_micro:*'], preload: [libc]}\n"
		 "workloads:\n  - {name: w, cmd: [\"true\"]}\n");
	cli_run(dir, &r, "run", path, "--db", db, "--dry-run", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "variant 'u': dry run: the lttng: block's programs were checked; "
			  "its session daemon was not started"), "%s", r.err);
	cr_assert_eq(count_glob("/tmp/perturb-lttng-*"), before, "a dry run made a session folder");
	lttng_unlock();
	cr_assert_not(tl_exists(db), "a dry run wrote the database");
	cli_result_release(&r);
	free(path);
}

/* A session daemon that ends before it is ready in the trial: said once,
 * in the variant's one line, how it ended and what its log ends with (not
 * also as an error of its own, nor as a daemon's error naming its whole
 * command, with that end twice). */
Test(lttng, a_session_daemon_that_does_not_start_is_said_once)
{
	char *path = xasprintf("%s/e.yaml", dir), *yaml;
	struct cli_result r;
	const char *said = "fake sessiond refuses to start";

	skip_unless_session();
	tl_write(dir, "lttng-sessiond", "#!/bin/sh\necho 'Error: fake sessiond refuses to start' >&2\n"
		 "exit 1\n");
	char *fake = xasprintf("%s/lttng-sessiond", dir);
	cr_assert_eq(chmod(fake, 0755), 0);
	free(fake);
	yaml = xasprintf("name: k\nrepetitions: 1\nwarmup: 0\n"
			 "variants:\n  - name: base\n  - name: k\n"
			 "    env: {PATH: '%s:/usr/sbin:/usr/bin:/sbin:/bin'}\n"
			 "    lttng: {userspace: ['x:*']}\n"
			 "workloads:\n  - {name: w, cmd: [\"true\"]}\n", dir);
	tl_write(dir, "e.yaml", yaml);
	cli_run(dir, &r, "run", path, "--db", db, NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "e.yaml:6:5: variant 'k': lttng: its trial session failed: lttng: "
			 "the session daemon did not start: it ended before it was ready: exited "
			 "with status 1; its log ends: fake sessiond refuses to start\n"),
		  "%s", r.err);
	cr_assert_null(strstr(r.err, "perturb: error: lttng:"), "%s", r.err);
	cr_assert_null(strstr(r.err, "daemon '"), "%s", r.err);
	cr_assert_null(strstr(strstr(r.err, said) + 1, said), "said twice: %s", r.err);
	cli_result_release(&r);
	free(yaml);
	free(path);
}

/* A channel LTTng refuses in the trial (buffers larger than the memory):
 * the variant's one line says which command failed and LTTng's own error,
 * once, with its exit status 2 and nothing run; with --skip-unavailable
 * the same reason in the warning, and the other variant runs. */
Test(lttng, a_channel_lttng_refuses_is_said_once_in_the_variants_line)
{
	char *path = xasprintf("%s/e.yaml", dir);
	struct cli_result r;
	const char *said = "Channel perturb: Not enough memory";

	skip_unless_session();
	tl_write(dir, "e.yaml", "name: c\nrepetitions: 1\nwarmup: 0\n"
		 "variants:\n  - name: base\n  - name: u\n"
		 "    lttng: {userspace: ['x:*'], channel: {subbuf_size: 1G, subbuf_count: 64}}\n"
		 "workloads:\n  - {name: w, cmd: [\"true\"]}\n");
	for (int skip = 0; skip < 2; skip++) {
		cli_run(dir, &r, "run", path, "--db", db, skip ? "--skip-unavailable" : NULL, NULL);
		cr_assert_eq(r.status, skip ? 0 : 2, "%s", r.err);
		cr_assert(strstr(r.err, "e.yaml:6:5: variant 'u': lttng: its trial session failed: "
				 "lttng: 'lttng enable-channel -u "), "%s", r.err);
		cr_assert(strstr(r.err, said), "%s", r.err);
		cr_assert_null(strstr(strstr(r.err, said) + 1, said), "said twice: %s", r.err);
		cr_assert_null(strstr(r.err, "see above"), "%s", r.err);
		cr_assert_null(strstr(r.err, "perturb: error: lttng:"), "%s", r.err);
		cr_assert_eq(tl_exists(db), skip, "%s", r.err);
		cli_result_release(&r);
	}
	free(path);
}

/* What an LTTng session could leave behind; counted under the lock (no
 * other test's session is running then). */
struct leftovers {
	size_t tmp;	/* /tmp/perturb-lttng-* folders */
	int run;	/* /run/lttng exists */
	int shm;	/* liblttng-ust wait files in /dev/shm */
};

static struct leftovers count_leftovers(void)
{
	return (struct leftovers){
		.tmp = count_glob("/tmp/perturb-lttng-*"),
		.run = tl_exists("/run/lttng"),
		.shm = (int)count_glob("/dev/shm/lttng-ust-wait-*"),
	};
}

/* A UST study can run here: the session daemon and babeltrace2 (which
 * counts lttng_events); the leftovers before it, to compare after. */
static struct leftovers begin_ust_study(void)
{
	skip_unless_session();
	if (!program_exists("babeltrace2"))
		cr_skip_test("babeltrace2 is not installed (make deps): lttng_events is not counted");
	lttng_lock();
	struct leftovers l = count_leftovers();
	lttng_unlock();
	return l;
}

/* Nothing of a session is left (under the lock): no daemon, and no
 * folder, /run/lttng or wait file that was not there before. */
static void expect_nothing_left(struct leftovers before)
{
	struct leftovers now;

	lttng_lock();
	now = count_leftovers();
	cr_assert_eq(tl_procs_with(SESSIONDS, 0, NULL, 0), 0, "a session daemon outlived perturb");
	cr_assert_eq(now.tmp, before.tmp, "a session folder is left");
	cr_assert_eq(now.run, before.run, "/run/lttng was made");
	cr_assert_eq(now.shm, before.shm, "a liblttng-ust wait file is left in /dev/shm");
	lttng_unlock();
}

/*
 * marker-empty-loop with --samples 2 --iterations 10 hits its tracepoint
 * 2 x 10 x 1024 times a run: every run (the warm-up too) must record
 * exactly that many, none discarded.
 */
Test(lttng, a_ust_study_records_each_runs_events_and_leaves_nothing)
{
	const char *micro = getenv("PERTURB_MICRO");
	char *path = xasprintf("%s/e.yaml", dir), *mdir = dir_name(micro ? micro : "./x");
	char *ust = xasprintf("%s/perturb-micro-ust.so", mdir);
	struct leftovers before;
	struct cli_result r;

	if (!tl_exists(ust))
		cr_skip_test("%s was not built (liblttng-ust-dev missing)", ust);
	before = begin_ust_study();
	tl_write(dir, "e.yaml",
		 "name: u\nrepetitions: 2\nwarmup: 1\n"
		 "variants:\n"
		 "  - name: base\n"
		 "  - name: ust\n"
		 "    env: {PERTURB_MARKER: lttng-ust}\n"
		 "    lttng:\n"
		 "      userspace: ['perturb_micro:*']\n"
		 "      channel: {subbuf_size: 1M, subbuf_count: 8}\n"
		 "workloads:\n"
		 "  - name: m\n"
		 "    kind: micro\n"
		 "    cmd: [\"{micro}\", marker-empty-loop, --samples, \"2\", --iterations, \"10\"]\n");
	cli_run(dir, &r, "run", path, "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results WHERE status = 'ok'"), 6);
#define COUNT_OF(variant, cond) \
	"SELECT COUNT(*) FROM metric_values m JOIN plan p USING (run_id, seq)" \
	" WHERE p.variant = '" variant "' AND " cond
	cr_assert_eq(cli_sql_int(db, COUNT_OF("ust", "m.metric = 'lttng_events' AND m.value = 20480")),
		     3, "every run records 20480 events: %s",
		     cli_sql_text(db, "SELECT group_concat(m.value) FROM metric_values m JOIN plan p"
				  " USING (run_id, seq) WHERE p.variant = 'ust' AND"
				  " m.metric = 'lttng_events'"));
	cr_assert_eq(cli_sql_int(db, COUNT_OF("ust", "m.metric = 'lttng_discarded' AND m.value = 0")), 3);
	cr_assert_eq(cli_sql_int(db, COUNT_OF("ust", "m.metric = 'lttng_lost' AND m.value = 0")), 3);
	cr_assert_eq(cli_sql_int(db, COUNT_OF("ust", "m.metric = 'lttng_bytes' AND m.value > 20480 * 8"
					      " AND m.unit = 'bytes'")), 3);
	cr_assert_eq(cli_sql_int(db, COUNT_OF("base", "m.metric LIKE 'lttng_%'")), 0);
	expect_nothing_left(before);
	cli_result_release(&r);
	free(ust);
	free(mdir);
	free(path);
}

/*
 * preload: [libc] records a real program's allocations.  The program is
 * ls, never built with a sanitizer: the wrapper's malloc cannot come
 * before an instrumented program's ASan runtime.
 */
Test(lttng, the_libc_wrapper_records_a_programs_allocations)
{
	char *path = xasprintf("%s/e.yaml", dir);
	struct leftovers before = begin_ust_study();
	struct cli_result r;

	tl_write(dir, "e.yaml",
		 "name: u\nrepetitions: 2\nwarmup: 1\n"
		 "variants:\n"
		 "  - name: base\n"
		 "  - name: libc\n"
		 "    lttng: {preload: [libc]}\n"
		 "workloads:\n"
		 "  - {name: ls, cmd: [ls, -l, /]}\n");
	cli_run(dir, &r, "run", path, "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results WHERE status = 'ok'"), 6);
	cr_assert_eq(cli_sql_int(db, COUNT_OF("libc", "m.metric = 'lttng_events' AND m.value > 0")), 3,
		     "the libc wrapper records the workload's allocations");
	cr_assert_eq(cli_sql_int(db, COUNT_OF("base", "m.metric LIKE 'lttng_%'")), 0);
	expect_nothing_left(before);
	cli_result_release(&r);
	free(path);
}

/* Without a session daemon the lttng-ust flavour runs, its sites off. */
Test(lttng, the_lttng_ust_flavour_runs_without_a_session_daemon)
{
	const char *micro = getenv("PERTURB_MICRO");
	char *ust, *out, *cmd, *mdir, *wait[2];
	int existed[2], status;

	if (!micro)
		cr_skip_test("PERTURB_MICRO is not set (make test sets it)");
	mdir = dir_name(micro);
	ust = xasprintf("%s/perturb-micro-ust.so", mdir);
	free(mdir);
	if (!tl_exists(ust))
		cr_skip_test("%s was not built (liblttng-ust-dev missing)", ust);
	wait[0] = xstrdup("/dev/shm/lttng-ust-wait-8");
	wait[1] = xasprintf("/dev/shm/lttng-ust-wait-8-%u", (unsigned)getuid());
	lttng_lock();
	for (int i = 0; i < 2; i++)
		existed[i] = tl_exists(wait[i]);
	cmd = xasprintf("PERTURB_MARKER=lttng-ust LTTNG_HOME=%s '%s' marker-empty-loop "
			"--samples 2 --iterations 10 > %s/out 2>&1", dir, micro, dir);
	status = system(cmd);
	/* liblttng-ust creates its wait files when no daemon answers: remove
	 * those that were not there */
	for (int i = 0; i < 2; i++) {
		if (!existed[i])
			unlink(wait[i]);
		free(wait[i]);
	}
	lttng_unlock();
	out = xasprintf("%s/out", dir);
	free(cmd);
	cmd = read_file(out, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", cmd);
	cr_assert(strstr(cmd, "ns_per_op: "), "%s", cmd);
	free(cmd);
	free(out);
	free(ust);
}
