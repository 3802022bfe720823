/* testlib.c - see testlib.h */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "testlib.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/proc.h"
#include "engine/config.h"
#include "instrumentation/tracefs.h"
#include "lib/util.h"

/* ---- files ---- */

/*
 * The folders tl_tmpdir() made, each with the process that made it, which
 * removes it when it exits if the test did not: cr_skip_test() exits at
 * once, without the suite's fini, and a test that failed an assertion may
 * not reach its own tl_rmtree().  A process forked by a test inherits the
 * list but removes only its own.
 */
struct made_dir {
	char *path;
	pid_t pid;
};
static struct made_dir *made;
static size_t n_made, alloc_made;

/* The run's list of folders (tl_tmpdir() appends "PATH\tSUITE/TEST"),
 * made by the runner before the first test, read after the last. */
#define TL_RUN_DIRS_ENV "PERTURB_TEST_DIRS"

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(path);
	return 0;
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_made(void)
{
	size_t kept = 0;

	for (size_t i = 0; i < n_made; i++) {
		if (made[i].pid == getpid()) {
			rm_tree(made[i].path);
			free(made[i].path);
		} else {
			made[kept++] = made[i];
		}
	}
	n_made = kept;
	if (!n_made) {
		free(made);
		made = NULL;
		alloc_made = 0;
	}
}

/* Note dir in the run's list: one write, appended whole among the
 * parallel tests' (O_APPEND). */
static void list_in_run(const char *dir)
{
	const char *list = getenv(TL_RUN_DIRS_ENV);
	const struct criterion_test *t = criterion_current_test;
	char *line;
	int fd;

	if (!list || !*list)
		return;
	line = xasprintf("%s\t%s/%s\n", dir, t ? t->category : "?", t ? t->name : "?");
	fd = open(list, O_WRONLY | O_APPEND | O_CLOEXEC);
	cr_assert(fd >= 0, "%s: %s", list, strerror(errno));
	cr_assert(write(fd, line, strlen(line)) == (ssize_t)strlen(line), "%s: %s", list,
		  strerror(errno));
	close(fd);
	free(line);
}

char *tl_tmpdir(void)
{
	char tmpl[] = "/tmp/perturb-test-XXXXXX";
	char *d = mkdtemp(tmpl);
	cr_assert(d, "mkdtemp: %s", strerror(errno));
	static int registered;	/* a fork inherits the registration too */
	if (!registered)
		registered = atexit(remove_made) == 0;
	ALLOC_GROW(made, n_made + 1, alloc_made);
	made[n_made].path = strdup(d);
	made[n_made++].pid = getpid();
	list_in_run(d);
	return strdup(d);
}

void tl_rmtree(const char *dir)
{
	if (!dir)
		return;
	rm_tree(dir);
	/* gone: its name may be another's next */
	for (size_t i = 0; i < n_made; i++)
		if (made[i].pid == getpid() && !strcmp(made[i].path, dir)) {
			free(made[i].path);
			made[i] = made[--n_made];
			break;
		}
}

/*
 * The check that no test leaves its folder (whatever ended it: a skip, a
 * failure, a crash, a time-out), in Criterion's runner process: before the
 * first test it makes the run's list and hands it to the tests (their
 * processes inherit the environment); after the last one, every folder of
 * the list still there is reported with its test, removed, and fails the
 * run.  The list is this run's alone, so other suites running at the same
 * time (other /tmp/perturb-test-* folders) do not count, and it is read
 * only when every test process has ended.
 */
ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	char list[] = "/tmp/perturb-tests-run-XXXXXX";
	int fd = mkstemp(list);

	(void)set;
	if (fd < 0) {
		fprintf(stderr, "perturb-tests: cannot make the list of test folders: %s\n",
			strerror(errno));
		return;
	}
	close(fd);
	setenv(TL_RUN_DIRS_ENV, list, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	const char *list = getenv(TL_RUN_DIRS_ENV);
	char *text, *line, *save = NULL;
	size_t left = 0;

	if (!list || !(text = read_file(list, NULL)))
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *test = strchr(line, '\t');
		struct stat st;

		if (test)
			*test++ = '\0';
		if (lstat(line, &st) < 0)
			continue;
		printf("perturb-tests: error: %s left its folder %s (removed)\n",
		       test ? test : "a test", line);
		rm_tree(line);
		left++;
	}
	free(text);
	unlink(list);
	unsetenv(TL_RUN_DIRS_ENV);
	if (left) {
		printf("perturb-tests: %zu test folder%s left behind: each test removes its "
		       "folder whatever ends it (tests/testlib.h)\n", left, left > 1 ? "s" : "");
		fflush(stdout);
		stats->errors++;	/* the run fails */
	}
}

void tl_fixture_open(char **dir, char **db, const char *db_name, char **work)
{
	*dir = tl_tmpdir();
	if (db)
		*db = xasprintf("%s/%s", *dir, db_name);
	if (work) {
		*work = xasprintf("%s/results/work", *dir);
		cr_assert_eq(mkdir_p(*work, 0755), 0, "%s: %s", *work, strerror(errno));
	}
}

void tl_fixture_close(char **dir, char **db, char **work)
{
	tl_rmtree(*dir);
	free(*dir);
	*dir = NULL;
	if (db) {
		free(*db);
		*db = NULL;
	}
	if (work) {
		free(*work);
		*work = NULL;
	}
}

void tl_write(const char *dir, const char *name, const char *text)
{
	char *path;
	cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	FILE *f = fopen(path, "w");
	cr_assert(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
	free(path);
}

int tl_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int tl_count_lines(const char *s)
{
	int n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

int tl_count_str(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- helper programs and processes ---- */

const char *tl_progs(void)
{
	const char *d = getenv("PERTURB_PROGS");
	cr_assert(d, "PERTURB_PROGS is not set (run the tests with make test)");
	return d;
}

char **tl_test_env(void)
{
	static char *path_env;
	static char *env[3];
	free(path_env);
	path_env = xasprintf("PATH=%s:/usr/bin:/bin", tl_progs());
	env[0] = path_env;
	env[1] = "LC_ALL=C";
	env[2] = NULL;
	return env;
}

int tl_kept_fds_at(const char *prefix, int *last_fd)
{
	char path[64], link[4096];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;
		if (!proc_kept_fd(fd))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		link[len > 0 ? len : 0] = '\0';
		if (!strncmp(link, prefix, strlen(prefix))) {
			n++;
			if (last_fd)
				*last_fd = fd;
		}
	}
	return n;
}

void tl_limit_fds(int n)
{
	struct rlimit rl;
	int fd = 0;

	for (int free_fds = 0; free_fds < n; fd++)
		free_fds += fcntl(fd, F_GETFD) < 0 && errno == EBADF;
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = (rlim_t)fd;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

/* The fds open now, but for those perturb keeps open on purpose: the files
 * of the pool of run cgroups (core/cgroup.h: "Runs"), "/perturb-PID/run-N",
 * the list of its children (core/proc.c: main_children), and the others it
 * keeps (core/proc.h: proc_kept_fd: /dev/null, the spare capture memfds). */
int tl_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char pool[64], kids[64], link[4096];
	int n = 0;

	cr_assert(d);
	snprintf(pool, sizeof(pool), "/perturb-%d/run-", (int)getpid());
	snprintf(kids, sizeof(kids), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
	while ((e = readdir(d))) {
		char *p;
		ssize_t len;
		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("/proc/self/fd/%s", e->d_name);
		len = readlink(p, link, sizeof(link) - 1);
		free(p);
		link[len > 0 ? len : 0] = '\0';
		n += !strstr(link, pool) && strcmp(link, kids) && !proc_kept_fd(atoi(e->d_name));
	}
	closedir(d);
	return n - 1;	/* the DIR's own fd */
}

void tl_assert_no_children(void)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	cr_assert_eq(waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT), -1,
		     "a child process is left (pid %d)", (int)si.si_pid);
	cr_assert_eq(errno, ECHILD);
}

void tl_nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

int tl_process_gone_now(pid_t pid)
{
	char path[64], *stat, *p;
	int gone;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = read_file(path, NULL);
	if (!stat)
		return 1;
	p = strrchr(stat, ')');
	gone = p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
	free(stat);
	return gone;
}

size_t tl_procs_with(const char *const *words, int sig, char *which, size_t len)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t found = 0;

	cr_assert(d, "/proc: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], *text;
		size_t n, w;
		pid_t pid = (pid_t)atoi(e->d_name);

		if (pid <= 0 || pid == getpid() || tl_process_gone_now(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		if (!(text = read_file(path, &n)))
			continue;	/* gone meanwhile */
		for (size_t i = 0; i + 1 < n; i++)
			if (!text[i])
				text[i] = ' ';
		for (w = 0; words[w] && strstr(text, words[w]); w++)
			;
		if (!words[w]) {
			if (!found++ && which)
				snprintf(which, len, "%d: %s", (int)pid, text);
			if (sig)
				kill(pid, sig);
		}
		free(text);
	}
	closedir(d);
	return found;
}

int tl_process_gone(pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		if (tl_process_gone_now(pid))
			return 1;
		tl_nap();
	}
	return 0;
}

size_t tl_child_pids(const char *text, pid_t *pids, size_t max)
{
	size_t n = 0;
	const char *p = text;
	while (n < max && (p = strstr(p, "child "))) {
		pids[n++] = (pid_t)atoi(p + 6);
		p += 6;
	}
	return n;
}

void tl_capture_start(struct tl_capture *c, int fd)
{
	fflush(fd == 1 ? stdout : stderr);
	c->target = fd;
	c->fd = memfd_create("capture", 0);
	c->saved = dup(fd);
	cr_assert(c->fd >= 0 && c->saved >= 0);
	dup2(c->fd, fd);
}

char *tl_capture_end(struct tl_capture *c)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;

	fflush(c->target == 1 ? stdout : stderr);
	dup2(c->saved, c->target);
	close(c->saved);
	lseek(c->fd, 0, SEEK_SET);
	while ((n = read(c->fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(c->fd);
	return strbuf_detach(&sb);
}

/* ---- the perturb binary ---- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	size_t got = fread(s, 1, (size_t)n, f);
	s[got] = '\0';
	fclose(f);
	return s;
}

char *tl_dir_names(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct dirent **names;
	int n = scandir(path, &names, NULL, alphasort);

	if (n < 0)
		return NULL;
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			strbuf_addf(&sb, "%s\n", names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return strbuf_detach(&sb);
}

int tl_tracing_lock(void)
{
	char why[256];
	int root = ktrace_root_fd(why, sizeof(why)), fd;

	if (root < 0)
		return -1;
	fd = openat(root, "README", O_RDONLY | O_CLOEXEC);
	close(root);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	return fd;
}

int tl_umount_tracefs(const char *path)
{
	char why[256];

	return ktrace_umount(path, why, sizeof(why));
}

/* perturb ARGS (from ap) with cwd dir, stdout/stderr to outp/errp. */
static pid_t spawn_va(const char *dir, const char *env, const char *outp, const char *errp,
		      va_list ap)
{
	const char *bin = getenv("PERTURB_BIN");
	char *argv[64];
	int n = 0;

	cr_assert(bin, "PERTURB_BIN is not set (run the tests with make test)");
	argv[n++] = (char *)bin;
	for (const char *a; (a = va_arg(ap, const char *)) && n < 63;)
		argv[n++] = (char *)a;
	argv[n] = NULL;
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int in = open("/dev/null", O_RDONLY);
		if (o < 0 || e < 0 || in < 0 || chdir(dir) < 0)
			_exit(126);
		dup2(in, 0);
		dup2(o, 1);
		dup2(e, 2);
		if (env)
			putenv((char *)env);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(bin, argv);
		_exit(127);
	}
	return pid;
}

int cli_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t cli_start(const char *dir, ...)
{
	char *outp = xasprintf("%s/bg.out", dir), *errp = xasprintf("%s/bg.err", dir);
	va_list ap;
	pid_t pid;

	va_start(ap, dir);
	pid = spawn_va(dir, NULL, outp, errp, ap);
	va_end(ap);
	free(outp);
	free(errp);
	return pid;
}

static void run_va(const char *dir, const char *env, struct cli_result *r, va_list ap)
{
	char *outp, *errp;

	cr_assert(asprintf(&outp, "%s/.stdout", dir) > 0);
	cr_assert(asprintf(&errp, "%s/.stderr", dir) > 0);
	r->status = cli_wait(spawn_va(dir, env, outp, errp, ap));
	r->out = slurp(outp);
	r->err = slurp(errp);
	unlink(outp);
	unlink(errp);
	free(outp);
	free(errp);
}

void cli_run(const char *dir, struct cli_result *r, ...)
{
	va_list ap;
	va_start(ap, r);
	run_va(dir, NULL, r, ap);
	va_end(ap);
}

void cli_run_env(const char *dir, const char *env, struct cli_result *r, ...)
{
	va_list ap;
	va_start(ap, r);
	run_va(dir, env, r, ap);
	va_end(ap);
}

void cli_result_release(struct cli_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

int64_t cli_sql_int(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int64_t v = -1;
	cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "open %s", db);
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

void tl_skip_unless_qemu(void)
{
	const char *bin = getenv("PERTURB_BIN");
	char *agent, *bindir;
	int have_agent;

	if (!program_exists("qemu-system-x86_64"))
		cr_skip_test("qemu-system-x86_64 is missing (Debian package qemu-system-x86)");
	if (access("/bin/busybox", X_OK) < 0)
		cr_skip_test("/bin/busybox is missing (Debian package busybox-static)");
	cr_assert(bin, "PERTURB_BIN is not set (run the tests with make test)");
	bindir = dir_name(bin);
	agent = xasprintf("%s/perturb-guest-agent", bindir);
	have_agent = access(agent, X_OK) == 0;
	free(agent);
	free(bindir);
	if (!have_agent)
		cr_skip_test("build/perturb-guest-agent was not built (no static C library)");
}

void tl_skip_unless_private_mounts(const char *const *paths)
{
	char why[512];

	if (private_mounts_unavailable(paths, why, sizeof(why)))
		cr_skip_test("%s", why);
}

void cli_sql_exec(const char *db, const char *sql)
{
	sqlite3 *h;
	char *msg = NULL;
	cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK, "open %s", db);
	cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql,
		     msg ? msg : "");
	sqlite3_close(h);
}

char *cli_sql_text(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char *v = NULL;
	cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

void tl_metric_init(struct metric_def *md, const char *name, const char *re)
{
	memset(md, 0, sizeof(*md));
	md->name = (char *)name;
	md->regex_src = (char *)re;
	md->unit = "s";
	cr_assert_eq(regcomp(&md->re, re, REG_EXTENDED), 0);
	md->has_group = md->re.re_nsub >= 1;
}

int tl_report_schema_valid(const char *json)
{
	static const char validate[] =
		"import json, jsonschema, sys\n"
		"schema = json.load(open(sys.argv[1]))\n"
		"v = jsonschema.Draft202012Validator(schema)\n"
		"errors = list(v.iter_errors(json.load(open(sys.argv[2]))))\n"
		"for e in errors[:10]:\n"
		"    print('schema: %s: %s' % ('/'.join(map(str, e.absolute_path)), e.message[:300]),"
		" file=sys.stderr)\n"
		"sys.exit(1 if errors else 0)\n";
	const char *src = getenv("PERTURB_SRC"), *ci = getenv("CI");
	char *dir, *cmd;
	int st;

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	if (system("python3 -c 'import jsonschema' >/dev/null 2>&1") != 0) {
		if (ci && !strcmp(ci, "true"))
			cr_assert_fail("python3 with jsonschema is needed to check the JSON report "
				       "(Debian package python3-jsonschema)");
		fprintf(stderr, "schema check skipped: python3 with jsonschema is missing "
			"(Debian package python3-jsonschema)\n");
		return -1;
	}
	dir = tl_tmpdir();
	tl_write(dir, "report.json", json);
	tl_write(dir, "validate.py", validate);
	cmd = xasprintf("python3 '%s/validate.py' '%s/docs/report-schema.json' '%s/report.json'",
			dir, src, dir);
	st = system(cmd);
	free(cmd);
	tl_rmtree(dir);
	free(dir);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "cannot run python3");
	return WEXITSTATUS(st) == 0;
}

int tl_check_report_schema(const char *json)
{
	int v = tl_report_schema_valid(json);

	cr_assert_neq(v, 0, "the JSON report does not match docs/report-schema.json "
		      "(errors above)");
	return v == 1;
}

char *cli_load_golden(const char *dir, const char *study)
{
	const char *src = getenv("PERTURB_SRC");
	char *sqlpath, *sql, *msg = NULL, *db = xasprintf("%s/%s.db", dir, study);
	sqlite3 *h;

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	sqlpath = xasprintf("%s/tests/golden/%s.sql", src, study);
	cr_assert((sql = read_file(sqlpath, NULL)), "cannot read '%s'", sqlpath);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK, "open %s", db);
	cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sqlpath,
		     msg ? msg : "");
	sqlite3_close(h);
	free(sql);
	free(sqlpath);
	return db;
}
