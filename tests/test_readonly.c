/*
 * test_readonly.c - the read commands (report, compare, gate, runs,
 * status) never write the database (engine/store.h, STORE_READ), work for
 * a user who can read the results but not write them (docs/ci.md: sudo
 * perturb run, then perturb gate as the CI's user), and refuse a file
 * they cannot trust: an empty file, another program's SQLite file, a
 * damaged file (with the commands that save what still reads).  Each
 * runs the real perturb on a copy of a real stored study
 * (tests/golden/multi.sql).
 */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/store.h"
#include "lib/util.h"
#include "testlib.h"

TL_FIXTURE_DIR()

TestSuite(readonly, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

/* The class: the read commands, on db; args[0] is the command.  A
 * verdict is an exit status of reads_ok[i]: the gate's 1 (over the
 * threshold), status's 2 (no study split into shards in it). */
static const char *const reads[][6] = {
	{ "report", "--run", "1", "--format", "csv" },
	/* run 2 may be one shard's, half its plan (pick.h) */
	{ "compare", "1", "2", "--allow-incomplete" },
	{ "gate", "--run", "2", "--max-dilation", "1.5%", "--allow-incomplete" },
	{ "runs", "--json" },
	{ "status" },
};
static const char *const reads_ok[] = { "0", "0", "01", "0", "02" };

static void run_read(size_t i, const char *db, struct cli_result *r)
{
	const char *const *a = reads[i];
	cli_run(dir, r, a[0], "--db", db, a[1], a[2], a[3], a[4], a[5], NULL);
}

/* Did read i give a verdict (an exit status of reads_ok[i])? */
static int read_ok(size_t i, int status)
{
	return status >= 0 && status <= 9 && strchr(reads_ok[i], '0' + status);
}

static char *sha_of(const char *path)
{
	size_t len;
	char *text = read_file(path, &len), sha[65];
	cr_assert(text, "cannot read '%s'", path);
	sha256_hex(text, len, sha);
	free(text);
	return xstrdup(sha);
}

/* A perturb database in rollback-journal mode (as another tool may leave
 * it): every read command works and leaves every byte as it was, the
 * journal mode included (they turned WAL on before). */
Test(readonly, read_commands_leave_the_file_as_it_was)
{
	char *db = cli_load_golden(dir, "multi"), *before, *after;
	struct cli_result r;

	cli_sql_exec(db, "PRAGMA journal_mode = DELETE");
	before = sha_of(db);
	for (size_t i = 0; i < ARRAY_SIZE(reads); i++) {
		run_read(i, db, &r);
		cr_assert(read_ok(i, r.status), "%s: exit %d: %s", reads[i][0], r.status, r.err);
		cli_result_release(&r);
		after = sha_of(db);
		cr_assert_str_eq(before, after, "%s wrote the database", reads[i][0]);
		free(after);
		char *mode = cli_sql_text(db, "PRAGMA journal_mode");
		cr_assert_str_eq(mode, "delete", "%s changed the journal mode", reads[i][0]);
		free(mode);
		char *wal = xasprintf("%s-wal", db);
		cr_assert(!tl_exists(wal), "%s made a WAL file", reads[i][0]);
		free(wal);
	}
	free(before);
	free(db);
}

/* An empty file and another program's SQLite file: refused, saying what
 * they are, and left alone (an empty file got perturb's schema before). */
Test(readonly, an_empty_or_foreign_file_is_refused_and_left_alone)
{
	char *empty = xasprintf("%s/empty.db", dir), *other = xasprintf("%s/other.db", dir);
	struct cli_result r;
	struct stat st;

	tl_write(dir, "empty.db", "");
	tl_write(dir, "other.db", "");
	cli_sql_exec(other, "CREATE TABLE t (x); PRAGMA journal_mode = DELETE");
	char *before = sha_of(other);
	for (size_t i = 0; i < ARRAY_SIZE(reads); i++) {
		run_read(i, empty, &r);
		cr_assert_eq(r.status, 3, "%s: exit %d", reads[i][0], r.status);
		cr_assert(strstr(r.err, "is empty: not a perturb results database"), "%s", r.err);
		cli_result_release(&r);
		cr_assert_eq(stat(empty, &st), 0);
		cr_assert_eq(st.st_size, 0, "%s wrote the empty file", reads[i][0]);

		run_read(i, other, &r);
		cr_assert_eq(r.status, 3, "%s: exit %d", reads[i][0], r.status);
		cr_assert(strstr(r.err, "not a perturb results database"), "%s", r.err);
		cli_result_release(&r);
		char *after = sha_of(other);
		cr_assert_str_eq(before, after, "%s wrote the foreign file", reads[i][0]);
		free(after);
	}
	free(before);
	free(empty);
	free(other);
}

/* An older schema is read through a migrated copy in memory: the report
 * works and the file keeps its version. */
Test(readonly, an_older_schema_is_read_without_migrating_the_file)
{
	char *db = cli_load_golden(dir, "multi");
	struct cli_result r;

	/* schema 1: before plan.block and variants.timebase */
	cli_sql_exec(db, "ALTER TABLE plan DROP COLUMN block; "
		     "ALTER TABLE variants DROP COLUMN timebase; PRAGMA user_version = 1");
	cli_run(dir, &r, "report", "--db", db, "--run", "1", "--format", "csv", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_gt(tl_count_lines(r.out), 100, "%s", r.out);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "PRAGMA user_version"), 1);
	free(db);
}

/* Overwrite len bytes at off with a fixed pattern (not random: the test
 * must fail or pass the same way every time). */
static void damage(const char *path, off_t off, size_t len)
{
	int fd = open(path, O_WRONLY);
	char *junk = xmalloc(len);

	cr_assert_geq(fd, 0);
	for (size_t i = 0; i < len; i++)
		junk[i] = (char)(0xa5 ^ (i * 131));
	cr_assert_eq(pwrite(fd, junk, len, off), (ssize_t)len);
	close(fd);
	free(junk);
}

/*
 * A damaged file (b-tree pages of the plan, the results, the metric
 * values overwritten): every read command refuses it with exit 3 and
 * prints nothing on stdout - before, report printed 325 of 901 CSV rows
 * and exited 0.  The commands it suggests copy what still reads into a
 * database that perturb opens.
 */
Test(readonly, a_damaged_file_is_refused_with_what_to_run)
{
	static const off_t offsets[] = { 20000, 40000, 60000 };
	char *good = cli_load_golden(dir, "multi");
	struct cli_result r;

	for (size_t k = 0; k < ARRAY_SIZE(offsets); k++) {
		char *db = xasprintf("%s/damaged%zu.db", dir, k);
		char *cp = xasprintf("cp '%s' '%s'", good, db);
		cr_assert_eq(system(cp), 0);
		free(cp);
		damage(db, offsets[k], 2000);
		for (size_t i = 0; i < ARRAY_SIZE(reads); i++) {
			run_read(i, db, &r);
			cr_assert_eq(r.status, 3, "offset %lld, %s: exit %d: %s",
				     (long long)offsets[k], reads[i][0], r.status, r.err);
			cr_assert_str_eq(r.out, "", "%s printed a partial result", reads[i][0]);
			cr_assert(strstr(r.err, "is damaged (SQLite's quick_check: "), "%s", r.err);
			cli_result_release(&r);
		}
		/* the last line of the message: the commands to run */
		run_read(0, db, &r);
		char *cmd = strrchr(r.err, '\n');
		cr_assert(cmd && cmd > r.err, "%s", r.err);
		while (cmd > r.err && cmd[-1] != '\n')
			cmd--;
		cr_assert(!strncmp(cmd, "  sqlite3 ", 10), "%s", r.err);
		if (program_exists("sqlite3")) {
			char *line = xasprintf("cd '%s' && %s", dir, cmd);
			cr_assert_eq(system(line), 0, "%s", line);
			free(line);
			char *saved = xasprintf("%s.recovered", db);
			cli_result_release(&r);
			cli_run(dir, &r, "report", "--db", saved, "--run", "1", NULL);
			cr_assert(!strstr(r.err, "damaged") && !strstr(r.err, "not a perturb"),
				  "the copy: %s", r.err);
			free(saved);
		}
		cli_result_release(&r);
		free(db);
	}
	free(good);
}

/* perturb ARGS (NULL-terminated; a[0] the command, --db db added) run in
 * dir as uid and gid 65534 (nobody), who may read but not write; its exit
 * status, its stderr in *err (malloc'd). */
static int run_as_nobody(const char *const *a, const char *db, char **err)
{
	const char *bin = getenv("PERTURB_BIN");
	char *errf = xasprintf("%s/nobody.err", dir);
	const char *argv[10] = { bin, a[0], "--db", db };
	size_t n = 4;
	int st;

	cr_assert(bin, "PERTURB_BIN is not set (run the tests with make test)");
	/* a copy in dir (0755): the build may be where nobody cannot go (a
	 * clone in /root, mode 0700, as in a fresh chroot: exit 127) */
	char *copy = xasprintf("%s/perturb-nobody", dir);
	if (!tl_exists(copy)) {
		char *cmd = xasprintf("cp '%s' '%s' && chmod 755 '%s'", bin, copy, copy);
		cr_assert_eq(system(cmd), 0, "%s", cmd);
		free(cmd);
	}
	argv[0] = bin = copy;
	for (size_t i = 1; i < 6 && a[i]; i++)
		argv[n++] = a[i];
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int out = open("/dev/null", O_WRONLY), e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0 || e < 0 || dup2(out, 1) < 0 || dup2(e, 2) < 0 || chdir(dir) < 0 ||
		    setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(126);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	*err = read_file(errf, NULL);
	unlink(errf);
	free(errf);
	free(copy);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The class: every read command, run by a user who can read the results
 * but not write them or their folder (root ran the study; its database in
 * WAL mode, without -wal and -shm once it ended).  Each gives its verdict
 * - every one was exit 3, "attempt to write a readonly database" - and
 * nothing in the folder changes.  An empty file is not given a schema by
 * runs or status (they opened it read-write).
 */
Test(readonly, a_user_who_cannot_write_the_results_reads_them)
{
	struct cli_result r;
	char *db = xasprintf("%s/results/perturb.db", dir), *before, *names, *err;


	if (geteuid() != 0)
		cr_skip_test("needs root: the study is run as root and read as uid 65534");
	cr_assert_eq(chmod(dir, 0755), 0);
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 3\n"
		 "variants: [{name: a}, {name: b, env: {X: '1'}}]\n"
		 "workloads: [{name: t, cmd: [/bin/true]}]\n");
	/* two runs, the second split into shards (of which status tells) */
	cli_run(dir, &r, "run", "-q", "e.yaml", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "run", "-q", "e.yaml", "--db", db, "--shard", "0/2", "--seed", "1",
		NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	char *mode = cli_sql_text(db, "PRAGMA journal_mode");
	cr_assert_str_eq(mode, "wal");
	free(mode);
	char *res = xasprintf("%s/results", dir), *wal = xasprintf("%s-wal", db);
	char *shm = xasprintf("%s-shm", db);
	struct stat wst;
	/* the study's -wal is empty (checkpointed); then without -wal and -shm */
	for (int gone = 0; gone <= 1; gone++) {
		if (gone) {
			cr_assert(stat(wal, &wst) < 0 || wst.st_size == 0);
			unlink(wal);
			unlink(shm);
		}
		before = sha_of(db);
		names = tl_dir_names(res);
		for (size_t i = 0; i < ARRAY_SIZE(reads); i++) {
			int status = run_as_nobody(reads[i], "results/perturb.db", &err);
			cr_expect(read_ok(i, status) && (i != 4 || status == 0),
				  "%s (-wal %s): exit %d: %s", reads[i][0],
				  gone ? "gone" : "empty", status, err);
			free(err);
			char *after = sha_of(db), *now = tl_dir_names(res);
			cr_expect_str_eq(after, before, "%s wrote the database", reads[i][0]);
			cr_expect_str_eq(now, names, "%s left files beside the database",
					 reads[i][0]);
			free(after);
			free(now);
		}
		free(before);
		free(names);
	}
	free(wal);
	free(shm);
	/* an empty file in a folder of its own: refused, still empty */
	tl_write(dir, "empty.db", "");
	for (size_t i = 0; i < ARRAY_SIZE(reads); i++) {
		struct stat st;
		run_read(i, "empty.db", &r);
		cr_expect_eq(r.status, 3, "%s: exit %d: %s", reads[i][0], r.status, r.err);
		cli_result_release(&r);
		char *empty = xasprintf("%s/empty.db", dir);
		cr_assert_eq(stat(empty, &st), 0);
		free(empty);
		cr_expect_eq(st.st_size, 0, "%s wrote a schema into the empty file", reads[i][0]);
	}
	free(res);
	free(db);
}
