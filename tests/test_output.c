/*
 * test_output.c - writing a file the user named (lib/output.h) and every
 * command that does: report --output, gate --junit and --markdown, gen
 * FILE.  Each kind of target - a missing file, a regular file, a symbolic
 * link (dangling too), a character device (null, full), a FIFO, a folder,
 * /dev/fd/N - is tried.
 *
 * Device nodes and FIFOs are made inside a private mount namespace: a
 * forked child unshares its mounts, mounts a tmpfs and mknods there, so
 * that the machine's /dev is never at risk (the bug this guards against
 * replaced /dev/full with a regular file).  The child reports each
 * failed check on stderr and by its exit status; the test fails on it.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/output.h"
#include "lib/util.h"
#include "testlib.h"

TL_FIXTURE_DIR()

TestSuite(output, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

/* ---- checks inside the child: no Criterion there ---- */

static int failures;

PRINTF(2, 3) static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	va_start(ap, fmt);
	fputs("check failed: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static mode_t kind(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0 ? 0 : st.st_mode & S_IFMT;
}

static char *content(const char *path)
{
	char *s = read_file(path, NULL);
	return s ? s : xstrdup("(unreadable)");
}

/* output_open + text + output_close: 0 or -1 */
static int put(const char *path, const char *text)
{
	struct output o;

	if (output_open(&o, path) < 0)
		return -1;
	fputs(text, o.f);
	return output_close(&o);
}

/* No "NAME.tmpPID" left in folder d. */
static int no_temporaries(const char *d)
{
	char *cmd = xasprintf("ls -a '%s' | grep -q '\\.tmp[0-9]'", d);
	int found = system(cmd) == 0;
	free(cmd);
	return !found;
}

/* A reader of the FIFO at path: a child that copies it to path.out. */
static pid_t fifo_reader(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		/* bounded: a replaced FIFO never gets a writer */
		char *cmd = xasprintf("timeout 20 cat '%s' > '%s.out'", path, path);
		_exit(system(cmd) == 0 ? 0 : 1);
	}
	return pid;
}

static int reaped_ok(pid_t pid)
{
	int st;
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

/*
 * Run fn(m) in a forked child with a private mount namespace and a tmpfs
 * mounted on m (a folder of the test's temporary folder); the test fails
 * when fn counted failures, is skipped when this machine cannot give a
 * private namespace (not root, no CAP_SYS_ADMIN: the reason is said).
 */
static void in_private_mount(void (*fn)(const char *m))
{
	char *m = xasprintf("%s/m", dir);
	int pipefd[2], st;
	char why[256] = "";
	pid_t pid;

	cr_assert_eq(mkdir(m, 0700), 0);
	cr_assert_eq(pipe(pipefd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pipefd[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("perturb-test", m, "tmpfs", 0, "size=16m,mode=0755") < 0) {
			dprintf(pipefd[1], "no private mount namespace here: %s", strerror(errno));
			_exit(77);
		}
		fn(m);
		umount2(m, MNT_DETACH);
		_exit(failures ? 1 : 0);
	}
	close(pipefd[1]);
	ssize_t n = read(pipefd[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	rmdir(m);
	free(m);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		cr_skip_test("%s", why);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "checks failed in the private namespace (see stderr)");
}

/* ---- the function ---- */

static void api_targets(const char *m)
{
	char *p, *q;
	struct stat st;

	/* a missing file: created whole */
	p = xasprintf("%s/new.txt", m);
	check(put(p, "one\n") == 0 && kind(p) == S_IFREG, "new file");
	check(!strcmp(content(p), "one\n"), "new file's text");
	/* a regular file: replaced, its permission bits kept */
	chmod(p, 0640);
	check(put(p, "two\n") == 0 && !strcmp(content(p), "two\n"), "regular file");
	check(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640, "mode kept: %o",
	      st.st_mode & 07777);
	/* a symbolic link: followed; the link stays a link */
	q = xasprintf("%s/link.txt", m);
	check(symlink("new.txt", q) == 0, "symlink");
	check(put(q, "three\n") == 0, "write through a link");
	check(kind(q) == S_IFLNK, "the link is still a link");
	check(!strcmp(content(p), "three\n"), "the link's target written");
	free(q);
	/* a dangling link: its target is created */
	q = xasprintf("%s/dangling", m);
	check(symlink("made.txt", q) == 0, "dangling symlink");
	check(put(q, "four\n") == 0 && kind(q) == S_IFLNK, "dangling link stays");
	free(q);
	q = xasprintf("%s/made.txt", m);
	check(!strcmp(content(q), "four\n"), "dangling link's target made");
	free(q);
	free(p);
	/* character devices: written in place, never replaced */
	p = xasprintf("%s/null", m);
	check(mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0, "mknod null");
	check(put(p, "x\n") == 0, "/dev/null-like device written");
	check(kind(p) == S_IFCHR, "null is still a device");
	free(p);
	p = xasprintf("%s/full", m);
	check(mknod(p, S_IFCHR | 0666, makedev(1, 7)) == 0, "mknod full");
	check(put(p, "x\n") == -1, "a full device is a write error");
	check(kind(p) == S_IFCHR, "full is still a device");
	free(p);
	/* a FIFO: written to its reader, stays a FIFO */
	p = xasprintf("%s/fifo", m);
	check(mkfifo(p, 0600) == 0, "mkfifo");
	pid_t r = fifo_reader(p);
	check(put(p, "five\n") == 0, "FIFO written");
	check(reaped_ok(r), "FIFO reader");
	q = xasprintf("%s.out", p);
	check(!strcmp(content(q), "five\n"), "FIFO's reader got the text");
	check(kind(p) == S_IFIFO, "the FIFO is still a FIFO");
	free(q);
	free(p);
	/* a folder: refused */
	check(put(m, "x") == -1, "a folder is refused");
	/* /dev/fd/N: the descriptor itself */
	int fds[2];
	check(pipe(fds) == 0, "pipe");
	p = xasprintf("/dev/fd/%d", fds[1]);
	check(put(p, "six\n") == 0, "/dev/fd/N written");
	close(fds[1]);
	char buf[16] = "";
	check(read(fds[0], buf, sizeof(buf) - 1) == 4 && !strcmp(buf, "six\n"),
	      "/dev/fd/N got the text: '%s'", buf);
	close(fds[0]);
	free(p);
	check(no_temporaries(m), "no temporary file left");
}

Test(output, every_kind_of_target_in_a_private_mount)
{
	in_private_mount(api_targets);
}

/* ---- the commands ---- */

static char *db;

/* `perturb ARGS...` (NULL-terminated), stdout and stderr to /dev/null of
 * the child's own; its exit status, or -1. */
static int perturb(const char *arg, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int st;

	strbuf_add_shell_word(&sb, getenv("PERTURB_BIN"));
	va_start(ap, arg);
	for (const char *a = arg; a; a = va_arg(ap, const char *)) {
		strbuf_addstr(&sb, " ");
		strbuf_add_shell_word(&sb, a);
	}
	va_end(ap);
	strbuf_addstr(&sb, " >/dev/null 2>&1");
	st = system(sb.buf);
	strbuf_release(&sb);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every command that writes a named file, on each kind of node: its usual
 * exit status on null and a FIFO, a failure on full, the nodes intact. */
static void commands_on_nodes(const char *m)
{
	static const struct {
		const char *name;
		int status;		/* on a working target */
		const char *args[10];	/* FILE where the target goes */
	} cmds[] = {
		{ "report --output", 0, { "report", "--db", "DB", "--run", "1", "--output", "FILE" } },
		{ "gate --junit", 1, { "gate", "--db", "DB", "--max-dilation", "1.5%", "--junit",
				       "FILE" } },
		{ "gate --markdown", 1, { "gate", "--db", "DB", "--max-dilation", "1.5%",
					  "--markdown", "FILE" } },
		{ "gen", 0, { "gen", "text", "64K", "FILE" } },
	};
	char *null = xasprintf("%s/null", m), *full = xasprintf("%s/full", m);
	char *fifo = xasprintf("%s/fifo", m);

	check(mknod(null, S_IFCHR | 0666, makedev(1, 3)) == 0, "mknod null");
	check(mknod(full, S_IFCHR | 0666, makedev(1, 7)) == 0, "mknod full");
	check(mkfifo(fifo, 0600) == 0, "mkfifo");
	for (size_t c = 0; c < ARRAY_SIZE(cmds); c++) {
		const char *targets[] = { null, full, fifo };
		for (size_t t = 0; t < ARRAY_SIZE(targets); t++) {
			const char *a[10] = { NULL };
			for (size_t i = 0; i < ARRAY_SIZE(cmds[c].args) && cmds[c].args[i]; i++)
				a[i] = !strcmp(cmds[c].args[i], "DB") ? db :
				       !strcmp(cmds[c].args[i], "FILE") ? targets[t] :
				       cmds[c].args[i];
			pid_t r = targets[t] == fifo ? fifo_reader(fifo) : 0;
			int st = perturb(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
			if (targets[t] == full)
				check(st != 0 && st != cmds[c].status,
				      "%s on a full device: exit %d, want an error", cmds[c].name, st);
			else
				check(st == cmds[c].status, "%s on %s: exit %d, want %d", cmds[c].name,
				      targets[t], st, cmds[c].status);
			if (r) {
				check(reaped_ok(r), "%s: the FIFO's reader", cmds[c].name);
				struct stat sb;
				char *out = xasprintf("%s.out", fifo);
				check(stat(out, &sb) == 0 && sb.st_size > 0,
				      "%s: the FIFO's reader got the output", cmds[c].name);
				free(out);
			}
			check(kind(null) == S_IFCHR && kind(full) == S_IFCHR,
			      "%s: a device replaced", cmds[c].name);
			check(kind(fifo) == S_IFIFO, "%s: the FIFO replaced", cmds[c].name);
		}
	}
	check(no_temporaries(m), "no temporary file left");
	free(null);
	free(full);
	free(fifo);
}

Test(output, commands_never_replace_a_device_or_a_fifo)
{
	db = cli_load_golden(dir, "multi");
	in_private_mount(commands_on_nodes);
	free(db);
}

/* A symbolic link named as gen's FILE stays a link; its target gets the bytes. */
Test(output, gen_follows_a_symbolic_link)
{
	struct cli_result r;
	char *link = xasprintf("%s/link.txt", dir), *target = xasprintf("%s/real.txt", dir);

	tl_write(dir, "real.txt", "old\n");
	cr_assert_eq(symlink("real.txt", link), 0);
	cli_run(dir, &r, "gen", "text", "1K", "link.txt", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(kind(link), S_IFLNK, "the link was replaced");
	struct stat st;
	cr_assert_eq(stat(target, &st), 0);
	cr_assert_eq(st.st_size, 1024);
	free(link);
	free(target);
}

/* ---- reading from a read-only medium ---- */

/* The read commands on a database on a read-only mount, in rollback
 * journal mode and in WAL mode: read, nothing written (they opened the
 * file read-write and failed with "attempt to write a readonly database";
 * in WAL mode SQLite cannot make the -shm file there). */
static void report_on_readonly_mount(const char *m)
{
	char *copy = xasprintf("cp '%s' '%s/ro.db' && cp '%s-wal.db' '%s/wal.db'", db, m, db, m);

	check(system(copy) == 0, "copy the database");
	check(mount(NULL, m, NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0, "remount read-only: %s",
	      strerror(errno));
	for (int i = 0; i < 6; i++) {
		const char *cmd[] = { "report", "compare", "gate" };
		char *ro = xasprintf("%s/%s.db", m, i < 3 ? "ro" : "wal");
		int st = i % 3 == 0 ? perturb("report", "--db", ro, "--run", "1", NULL) :
			 i % 3 == 1 ? perturb("compare", "--db", ro, "1", "2", NULL) :
			 perturb("gate", "--db", ro, "--max-dilation", "1.5%", NULL);
		check(st == 0 || (i % 3 == 2 && st == 1), "%s on a read-only mount (%s): exit %d",
		      cmd[i % 3], ro, st);
		free(ro);
	}
	free(copy);
}

Test(output, read_commands_work_on_a_readonly_mount)
{
	db = cli_load_golden(dir, "multi");
	char *wal = xasprintf("%s-wal.db", db), *cp = xasprintf("cp '%s' '%s'", db, wal);
	cr_assert_eq(system(cp), 0);
	cli_sql_exec(wal, "PRAGMA journal_mode = WAL");
	cli_sql_exec(db, "PRAGMA journal_mode = DELETE");
	in_private_mount(report_on_readonly_mount);
	free(wal);
	free(cp);
	free(db);
}

/* ---- no output replaces an input of its command ---- */

/* Every file under dir (links as links) with its bytes' SHA-256, sorted:
 * what a refused command must leave as it was (but the bytes of a -shm
 * file, SQLite's index of its WAL, which any reader may rewrite).
 * malloc'd. */
static char *tree_state(const char *d)
{
	char *cmd = xasprintf("cd '%s' && find . \\( -type f -o -type l \\) -printf '%%p %%y %%l\\n' "
			      "| sort && find . -type f ! -name '*-shm' | sort | xargs -r -d '\\n' sha256sum", d);
	FILE *p = popen(cmd, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	cr_assert(p, "popen: %s", strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		strbuf_add(&sb, buf, n);
	cr_assert_eq(pclose(p), 0, "%s", cmd);
	free(cmd);
	return strbuf_detach(&sb);
}

/* The commands' output options (the class), each with the inputs of its
 * command that it must not replace.  `perturb gen FILE` reads no file:
 * it has nothing to refuse. */
enum writer { REPORT_OUTPUT, GATE_JUNIT, GATE_MARKDOWN, RUN_DB, MERGE_DB, HISTORY_OUTPUT };
static const char *const writer_names[] = {
	"report --output", "gate --junit", "gate --markdown", "run --db", "merge --db",
	"history --output",
};

static void write_to(enum writer w, const char *target, struct cli_result *r)
{
	char *o;

	switch (w) {
	case REPORT_OUTPUT:
		o = xasprintf("--output=%s", target);
		cli_run(dir, r, "report", "--db", "results/perturb.db", o, NULL);
		break;
	case GATE_JUNIT:
	case GATE_MARKDOWN:
		o = xasprintf("--%s=%s", w == GATE_JUNIT ? "junit" : "markdown", target);
		cli_run(dir, r, "gate", "e.yaml", "--db", "results/perturb.db", o, NULL);
		break;
	case RUN_DB:
		o = xasprintf("--db=%s", target);
		cli_run(dir, r, "run", "-q", "e.yaml", o, NULL);
		break;
	case HISTORY_OUTPUT:
		o = xasprintf("--output=%s", target);
		cli_run(dir, r, "history", "e.yaml", "--db", "results/perturb.db", o, NULL);
		break;
	default:
		o = xasprintf("--db=%s", target);
		cli_run(dir, r, "merge", o, "results/perturb.db", NULL);
		break;
	}
	free(o);
}

/*
 * The class: a file a command writes by a name the user gave, pointed at
 * a file the same command reads - the database and the files beside it
 * (-wal, -shm, .lock), the experiment file, its include: - by its name,
 * by a symbolic link, by a hard link.  Each is exit 2, and nothing in the
 * folder changes.  Every option of every command whose help says FILE is
 * one of the writers walked (a new one fails this test until it is).
 */
Test(output, no_output_replaces_an_input_of_its_command)
{
	static const struct {
		enum writer w;
		const char *target;
	} cases[] = {
		{ REPORT_OUTPUT, "results/perturb.db" }, { REPORT_OUTPUT, "db-link" },
		{ REPORT_OUTPUT, "db-hard" }, { REPORT_OUTPUT, "results/perturb.db-wal" },
		{ REPORT_OUTPUT, "results/../results/perturb.db-shm" },
		{ REPORT_OUTPUT, "results/perturb.db.lock" },
		{ GATE_JUNIT, "results/perturb.db" }, { GATE_JUNIT, "db-link" },
		{ GATE_JUNIT, "e.yaml" }, { GATE_JUNIT, "inc-link" }, { GATE_JUNIT, "inc-hard" },
		{ GATE_MARKDOWN, "db-hard" }, { GATE_MARKDOWN, "./e.yaml" },
		{ GATE_MARKDOWN, "inc.yaml" },
		{ RUN_DB, "e.yaml" }, { RUN_DB, "inc-link" }, { RUN_DB, "inc-hard" },
		{ MERGE_DB, "db-link" }, { MERGE_DB, "db-hard" },
		{ HISTORY_OUTPUT, "results/perturb.db-wal" }, { HISTORY_OUTPUT, "db-hard" },
		{ HISTORY_OUTPUT, "e.yaml" }, { HISTORY_OUTPUT, "inc-link" },
	};
	static const char *const commands[] = {
		"run", "report", "runs", "workloads", "restore", "gate", "compare", "doctor",
		"status", "merge", "gen", "history", "bisect",
	};
	struct cli_result r;
	char *before;

	/* every FILE option of every command is walked here */
	for (size_t c = 0; c < ARRAY_SIZE(commands); c++) {
		cli_run(dir, &r, commands[c], "--help", NULL);
		for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
			char opt[64], meta[16], *name;
			if (sscanf(line, " --%63s %15s", opt, meta) != 2 || strcmp(meta, "FILE"))
				continue;
			name = xasprintf("%s --%s", commands[c], opt);
			int known = 0;
			for (size_t w = 0; w < ARRAY_SIZE(writer_names); w++)
				known |= !strcmp(writer_names[w], name);
			cr_expect(known, "'%s' writes a FILE this test does not walk", name);
			free(name);
		}
		cli_result_release(&r);
	}

	tl_write(dir, "inc.yaml", "workloads:\n  - name: t\n    cmd: [/bin/true]\n");
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 3\n"
		 "variants: [{name: a}, {name: b, env: {X: '1'}}]\n"
		 "include: [inc.yaml]\n"
		 "gate: [{variant: b, max_dilation: 50%}]\n");
	cli_run(dir, &r, "run", "-q", "e.yaml", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	char *p = xasprintf("%s/db-link", dir), *h = xasprintf("%s/db-hard", dir);
	char *d = xasprintf("%s/results/perturb.db", dir);
	cr_assert_eq(symlink("results/perturb.db", p), 0);
	cr_assert_eq(link(d, h), 0);
	free(p);
	free(h);
	free(d);
	p = xasprintf("%s/inc-link", dir);
	h = xasprintf("%s/inc-hard", dir);
	d = xasprintf("%s/inc.yaml", dir);
	cr_assert_eq(symlink("inc.yaml", p), 0);
	cr_assert_eq(link(d, h), 0);
	free(p);
	free(h);
	free(d);

	/* a reader of a database in WAL mode leaves its -wal and -shm files */
	cli_run(dir, &r, "report", "--db", "results/perturb.db", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	before = tree_state(dir);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *what = writer_names[cases[i].w];
		write_to(cases[i].w, cases[i].target, &r);
		cr_expect_eq(r.status, 2, "%s %s: exit %d: %s", what, cases[i].target, r.status,
			     r.err);
		cr_expect(strstr(r.err, "which this command reads"), "%s %s: %s", what,
			  cases[i].target, r.err);
		cli_result_release(&r);
		char *after = tree_state(dir);
		cr_expect_str_eq(after, before, "%s %s changed the folder", what,
				 cases[i].target);
		free(after);
	}
	free(before);
	/* and an output elsewhere is written */
	write_to(GATE_MARKDOWN, "gate.md", &r);
	cr_expect(r.status == 0 || r.status == 1, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	p = xasprintf("%s/gate.md", dir);
	cr_expect(tl_exists(p), "gate --markdown gate.md wrote nothing");
	free(p);
}
