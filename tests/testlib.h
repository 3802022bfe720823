/*
 * testlib.h - helpers shared by the test files.
 *
 * tl_*: temporary folders, the helper programs of tests/progs
 * ($PERTURB_PROGS), file descriptors and child processes.
 * cli_*: integration tests that run the real perturb binary (PERTURB_BIN,
 * set by `make test`) and read the database it writes.
 *
 * The functions fail the current test (cr_assert) on a broken set-up.
 */
#ifndef PERTURB_TESTS_TESTLIB_H
#define PERTURB_TESTS_TESTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- files ---- */

/*
 * mkdtemp under /tmp (/tmp/perturb-test-XXXXXX); returns the malloc'd path.
 * The test removes it (tl_rmtree, a fixture's tl_teardown); if it does not
 * (a skip, a failed assertion), the process that made it does when it
 * exits.  A folder still there after the whole run (a crash, a time-out)
 * is reported with its test, removed, and fails the run.
 */
char *tl_tmpdir(void);
/* rm -rf; nothing for NULL. */
void tl_rmtree(const char *dir);
/*
 * A suite's per-test folder: a file says TL_FIXTURE_DIR() (a static char
 * *dir), TL_FIXTURE_DB(NAME) (dir and db = DIR/NAME, not created) or
 * TL_FIXTURE_WORK() (dir, db = DIR/results/perturb.db and work =
 * DIR/results/work, created), then TestSuite(..., .init = tl_setup, .fini =
 * tl_teardown) (or its own .init calling tl_setup() first).  tl_teardown
 * removes the folder whatever the test left in it.
 */
void tl_fixture_open(char **dir, char **db, const char *db_name, char **work);
void tl_fixture_close(char **dir, char **db, char **work);
#define TL_FIXTURE_DIR()						\
	static char *dir;						\
	static void tl_setup(void) { tl_fixture_open(&dir, NULL, NULL, NULL); } \
	static void tl_teardown(void) { tl_fixture_close(&dir, NULL, NULL); }
#define TL_FIXTURE_DB(db_name)						\
	static char *dir, *db;						\
	static void tl_setup(void) { tl_fixture_open(&dir, &db, db_name, NULL); } \
	static void tl_teardown(void) { tl_fixture_close(&dir, &db, NULL); }
#define TL_FIXTURE_WORK()						\
	static char *dir, *db, *work;					\
	static void tl_setup(void)					\
	{ tl_fixture_open(&dir, &db, "results/perturb.db", &work); }	\
	static void tl_teardown(void) { tl_fixture_close(&dir, &db, &work); }

/* Write text to dir/name. */
void tl_write(const char *dir, const char *name, const char *text);
int tl_exists(const char *path);
/* The names in folder path but . and .., sorted, each followed by '\n'
 * (malloc'd); NULL when path is no folder that can be read. */
char *tl_dir_names(const char *path);
/* The number of '\n' in s (0 for NULL). */
int tl_count_lines(const char *s);
/* Occurrences of needle in s (not overlapping). */
int tl_count_str(const char *s, const char *needle);

/* What this process writes on fd (1 or 2, its stdio stream flushed)
 * between tl_capture_start() and tl_capture_end(), which returns it
 * (malloc'd) and restores fd. */
struct tl_capture {
	int target, saved, fd;
};
void tl_capture_start(struct tl_capture *c, int fd);
char *tl_capture_end(struct tl_capture *c);

/* ---- helper programs and processes ---- */

/* $PERTURB_PROGS: the folder of the helper programs of tests/progs. */
const char *tl_progs(void);
/* An environment for workloads: PATH finds the helper programs first,
 * LC_ALL=C.  Static storage, valid until the next call. */
char **tl_test_env(void);
/* The number of file descriptors open in this process. */
int tl_count_fds(void);
/* The fds perturb keeps open on purpose (core/proc.h: proc_kept_fd) whose
 * /proc/self/fd link begins with prefix; *last_fd (when not NULL) the last
 * of them. */
int tl_kept_fds_at(const char *prefix, int *last_fd);
#define tl_kept_fds(prefix) tl_kept_fds_at(prefix, NULL)
/* Lower this process's RLIMIT_NOFILE so that exactly n more fds can be
 * opened (the lowest free numbers below the limit). */
void tl_limit_fds(int n);
/* Assert that no child process is left, not even a zombie. */
void tl_assert_no_children(void);
/* A metric named name (unit "s") matched by the POSIX extended regex re,
 * compiled (regfree(&md->re) after). */
struct metric_def;
void tl_metric_init(struct metric_def *md, const char *name, const char *re);
/* Sleep 10 ms: the step of the bounded waits. */
void tl_nap(void);
/* Is the process gone: no such process, or a zombie (of ours, or of
 * someone else's: pid 1 here may not reap orphans)? */
int tl_process_gone_now(pid_t pid);
/* The same, waiting up to 5 s: SIGKILL takes effect asynchronously. */
int tl_process_gone(pid_t pid);
/* Live processes (zombies left out) whose command line, its arguments
 * joined by spaces, holds each of words (NULL-ended): how many; each is
 * sent sig unless sig is 0, and the first one's "PID: command line" goes
 * into which unless which is NULL. */
size_t tl_procs_with(const char *const *words, int sig, char *which, size_t len);
/* The pids printed as "child PID" lines (by tests/progs/sleeper) in text;
 * at most max of them; returns how many. */
size_t tl_child_pids(const char *text, pid_t *pids, size_t max);

/* ---- the kernel's tracing state ---- */

/*
 * The tests' own lock on the kernel's tracing state, held for a whole test
 * (the state is one per machine): an flock on tracefs's README, which every
 * mount namespace shares, so that tests in a chroot and on the host wait
 * for each other.  perturb's lock (ktrace_lock(), on tracefs's root) is
 * another, taken by each perturb the test runs.  The descriptor (close it
 * to let go), or -1 without tracefs.
 */
int tl_tracing_lock(void);
/* Unmount the tracefs at path as perturb does (ktrace_umount(): detached
 * when another process reads it, as a test waiting for the lock does
 * through the mount it found): 0, or -1. */
int tl_umount_tracefs(const char *path);

/* ---- the perturb binary ---- */

struct cli_result {
	int status;		/* exit status, or 128 + signal */
	char *out, *err;	/* captured stdout / stderr (malloc'd) */
};

/* Run `perturb ARGS...` (NULL-terminated) with cwd = dir. */
void cli_run(const char *dir, struct cli_result *r, ...);
/* The same, with an extra environment assignment ("K=V") or NULL. */
void cli_run_env(const char *dir, const char *env, struct cli_result *r, ...);
/* `perturb ARGS...` (NULL-terminated) in the background, cwd = dir, its
 * stdout and stderr in dir/bg.out and dir/bg.err; cli_wait() reaps it and
 * returns its exit status (or 128 + signal). */
pid_t cli_start(const char *dir, ...);
int cli_wait(pid_t pid);
void cli_result_release(struct cli_result *r);
/* An integer from a SQL query on a database (first column of first row);
 * -1 when there is no row. */
int64_t cli_sql_int(const char *db, const char *sql);
/* Skip the test (cr_skip_test) unless the qemu backend can run here:
 * qemu-system-x86_64, busybox-static and the guest agent built next to
 * PERTURB_BIN. */
void tl_skip_unless_qemu(void);
/* Skip the test (cr_skip_test, with private_mounts_unavailable()'s
 * reason) unless a child can have a mount namespace of its own with
 * unshare_mounts_private(paths): not in a minbase chroot, whose "/" and
 * /run are no mount points. */
void tl_skip_unless_private_mounts(const char *const *paths);
/* Run statements that change db (a test's own edit of stored data). */
void cli_sql_exec(const char *db, const char *sql);
/* A text from a SQL query (malloc'd, NULL when no row). */
char *cli_sql_text(const char *db, const char *sql);
/* Load tests/golden/STUDY.sql (a real stored study) into dir/STUDY.db;
 * returns its path (malloc'd). */
char *cli_load_golden(const char *dir, const char *study);

/* Validate json (the output of perturb report --format json) against
 * docs/report-schema.json with python3's jsonschema; the test fails on an
 * error.  Returns 1 when validated, 0 when python3 or its jsonschema is
 * missing: then the reason is printed, and under CI=true the test fails. */
int tl_check_report_schema(const char *json);
/* The same without failing: 1 valid, 0 not (errors printed), -1 no
 * validator here. */
int tl_report_schema_valid(const char *json);

#endif
