/*
 * test_kbuild.c - what perturb's cache builds once (backends/kbuild.c):
 * kbuild_once() on tiny scripts, and guest kernels built once per cache key.
 *
 * The stand-in scripts count their runs in a file.  Those that must be
 * held block reading a FIFO that the test holds open for reading and
 * writing (so that neither side's open blocks) until the test writes to
 * it.  Two perturb processes asking for the same product at once must
 * build it once: the second waits on the cache lock (and says so), then
 * takes what the first built.
 */
#include <criterion/criterion.h>

#include "backends/kbuild.h"
#include "lib/util.h"
#include "testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char build_sh[] =
	"#!/bin/sh\n"
	"# build.sh TREE FRAGMENT OUT: a stand-in that counts and waits\n"
	"echo built >> \"$KB_DIR/count\"\n"
	"read line < \"$KB_DIR/gate\"\n"
	"echo image > \"$3\"\n"
	"echo config > \"$3.config\"\n";

static char *slurp(const char *path)
{
	size_t len;
	return read_file(path, &len);
}

/* Wait (bounded, 60 s) until path exists and holds needle (NULL: exists). */
static int wait_for(const char *path, const char *needle)
{
	for (int i = 0; i < 6000; i++) {
		char *s = slurp(path);
		int ok = s && (!needle || strstr(s, needle));
		free(s);
		if (ok)
			return 1;
		tl_nap();
	}
	return 0;
}

/* A FIFO at dir/gate that a stand-in script blocks on ("read line <
 * gate"): held open here for reading and writing, so that the script's
 * open never blocks and what is written waits in it.  Returns the fd. */
static int make_gate(const char *dir)
{
	char *gate = xasprintf("%s/gate", dir);
	int fd;

	cr_assert(mkfifo(gate, 0600) == 0, "mkfifo %s", gate);
	fd = open(gate, O_RDWR | O_CLOEXEC);
	cr_assert(fd >= 0, "open %s", gate);
	free(gate);
	return fd;
}

/* Let the blocked scripts go: one line each, for two at most. */
static void open_gate(int fd)
{
	cr_assert(write(fd, "go\ngo\n", 6) == 6);
}

/* fn(arg) in a child process of its own group (so that a failing test can
 * stop its script too), its stderr into errpath; its exit status is fn's
 * return value. */
static pid_t in_child(int (*fn)(void *), void *arg, const char *errpath)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		_exit(fn(arg));
	}
	return pid;
}

/*
 * Start a in a child, wait until its script has run (count exists), start
 * b, wait until b says it waits for the lock, then let the script finish;
 * the exit statuses into st_a and st_b.  Fails the test, both children
 * stopped, when b did not wait.
 */
static void race(int (*fn)(void *), void *arg_a, void *arg_b, const char *dir, int gate,
		 int *st_a, int *st_b)
{
	char *count = xasprintf("%s/count", dir), *err_a = xasprintf("%s/a.err", dir);
	char *err_b = xasprintf("%s/b.err", dir);
	pid_t a, b;
	int waited;

	a = in_child(fn, arg_a, err_a);
	if (!wait_for(count, NULL)) {
		kill(-a, SIGKILL);
		waitpid(a, st_a, 0);
		cr_assert_fail("the first build never started: %s", slurp(err_a));
	}
	b = in_child(fn, arg_b, err_b);
	waited = wait_for(err_b, "waiting for it");
	open_gate(gate);	/* lets the first build finish */
	if (!waited) {		/* two builds at once: stop both, then fail */
		kill(-a, SIGKILL);
		kill(-b, SIGKILL);
	}
	cr_assert(waitpid(a, st_a, 0) == a && waitpid(b, st_b, 0) == b);
	cr_assert(waited, "the second perturb did not wait for the first: %s", slurp(err_b));
	cr_expect(WIFEXITED(*st_a), "first: %s", slurp(err_a));
	cr_expect(WIFEXITED(*st_b), "second: %s", slurp(err_b));
	free(count);
	free(err_a);
	free(err_b);
}

/* ---- kbuild_once() ---- */

/* make.sh DIR OUT: counts its runs in DIR/count, says so, writes OUT. */
static const char make_sh[] =
	"echo run >> \"$1/count\"\n"
	"echo \"making $2\"\n"
	"echo made > \"$2\"\n";

/* fail.sh DIR OUT: counts, writes OUT aside, twenty lines, status 3. */
static const char fail_sh[] =
	"echo run >> \"$1/count\"\n"
	"echo half > \"$2\"\n"
	"i=1; while [ $i -le 20 ]; do echo \"line $i\"; i=$((i + 1)); done\n"
	"exit 3\n";

/* wait.sh DIR OUT: counts, waits at the gate, writes OUT. */
static const char wait_sh[] =
	"echo run >> \"$1/count\"\n"
	"read line < \"$1/gate\"\n"
	"echo made > \"$2\"\n";

struct once_case {
	char *script, *staged, *product, *lock, *log, *count;
	char *argv[4];
	const char *moves[3];
	struct kbuild_job job;
	char why[512];
};

/* A job running dir/NAME DIR STAGED, its STAGED renamed onto product. */
static void once_case(struct once_case *c, const char *dir, const char *name,
		      const char *text)
{
	memset(c, 0, sizeof(*c));
	tl_write(dir, name, text);
	c->script = xasprintf("%s/%s", dir, name);
	c->staged = xasprintf("%s/cache/made.tmp", dir);
	c->product = xasprintf("%s/cache/made", dir);
	c->lock = xasprintf("%s/cache/made.lock", dir);
	c->log = xasprintf("%s/cache/made.log", dir);
	c->count = xasprintf("%s/count", dir);
	c->argv[0] = c->script;
	c->argv[1] = (char *)dir;
	c->argv[2] = c->staged;
	c->moves[0] = c->staged;
	c->moves[1] = c->product;
	c->job = (struct kbuild_job){
		.what = "a test product", .product = c->product, .lock = c->lock,
		.log = c->log, .argv = c->argv, .timeout_s = 60, .moves = c->moves,
	};
}

static void once_case_release(struct once_case *c)
{
	free(c->script);
	free(c->staged);
	free(c->product);
	free(c->lock);
	free(c->log);
	free(c->count);
}

/* kbuild_once() with what is said on stderr: malloc'd into *said. */
static int once_said(struct once_case *c, char **said)
{
	struct tl_capture cap;
	int r;

	tl_capture_start(&cap, 2);
	r = kbuild_once(&c->job, c->why, sizeof(c->why));
	*said = tl_capture_end(&cap);
	return r;
}

Test(kbuild, a_product_is_built_once_then_taken_from_the_cache)
{
	char *dir = tl_tmpdir(), *said, *p;
	struct once_case c;

	once_case(&c, dir, "make.sh", make_sh);
	cr_assert_eq(once_said(&c, &said), 0, "%s / %s", c.why, said);
	cr_expect(strstr(said, "building a test product (minutes; log: ") &&
		  strstr(said, c.log) && strstr(said, "built a test product in "), "%s", said);
	free(said);
	p = slurp(c.product);
	cr_expect_str_eq(p ? p : "", "made\n", "the staged file was not moved into place");
	free(p);
	cr_expect(!tl_exists(c.staged));
	p = slurp(c.log);
	cr_expect(p && strstr(p, "making "), "the script's output is not in its log: %s", p);
	free(p);

	cr_assert_eq(once_said(&c, &said), 1, "%s / %s", c.why, said);
	cr_expect_str_eq(said, "", "a cached product is announced");
	free(said);
	p = slurp(c.count);
	cr_expect_str_eq(p, "run\n", "the script ran again for a cached product");
	free(p);
	once_case_release(&c);
	tl_rmtree(dir);
	free(dir);
}

Test(kbuild, a_failed_build_says_its_log_end_and_once_is_not_tried_again)
{
	char *dir = tl_tmpdir(), *said, *p;
	struct once_case c;

	once_case(&c, dir, "fail.sh", fail_sh);
	c.job.once = 1;
	cr_assert_eq(once_said(&c, &said), -1, "%s", said);
	cr_expect(strstr(c.why, "unavailable: a test product did not build (log: ") &&
		  strstr(c.why, c.log), "%s", c.why);
	cr_expect(strstr(said, "warning: ") && strstr(said, c.why), "%s", said);
	/* the log's last 15 lines, not more */
	cr_expect(strstr(said, "line 6\n") && strstr(said, "line 20\n") &&
		  !strstr(said, "line 5\n"), "%s", said);
	cr_expect(!tl_exists(c.staged), "what the failed script wrote is left");
	cr_expect(!tl_exists(c.product));
	free(said);

	/* once: the same failure at once, nothing run or said */
	char first[512];
	snprintf(first, sizeof(first), "%s", c.why);
	*c.why = '\0';
	cr_assert_eq(once_said(&c, &said), -1, "%s", said);
	cr_expect_str_eq(c.why, first);
	cr_expect_str_eq(said, "");
	free(said);
	p = slurp(c.count);
	cr_expect_str_eq(p, "run\n", "a failed build was tried again");
	free(p);

	/* not once: an error, and tried again */
	c.job.once = 0;
	cr_assert_eq(once_said(&c, &said), -1, "%s", said);
	cr_expect(strstr(c.why, "a test product did not build") && !strstr(c.why, "unavailable"),
		  "%s", c.why);
	cr_expect(strstr(said, "error: a test product did not build") &&
		  strstr(said, "line 20\n"), "%s", said);
	free(said);
	p = slurp(c.count);
	cr_expect_str_eq(p, "run\nrun\n");
	free(p);
	once_case_release(&c);
	tl_rmtree(dir);
	free(dir);
}

/* 10: built now, 11: found built, 12: failed. */
static int once_in_child(void *arg)
{
	struct once_case *c = arg;
	int r = kbuild_once(&c->job, c->why, sizeof(c->why));

	return r < 0 ? 12 : 10 + r;
}

Test(kbuild, a_product_asked_twice_at_once_is_built_once, .timeout = 120)
{
	char *dir = tl_tmpdir(), *p;
	struct once_case c;
	int gate, st_a, st_b;

	gate = make_gate(dir);
	once_case(&c, dir, "wait.sh", wait_sh);
	race(once_in_child, &c, &c, dir, gate, &st_a, &st_b);
	cr_expect_eq(WEXITSTATUS(st_a), 10, "the first did not build");
	cr_expect_eq(WEXITSTATUS(st_b), 11, "the second did not take the first's product");
	p = slurp(c.count);
	cr_expect_str_eq(p, "run\n", "the script ran more than once");
	free(p);
	close(gate);
	once_case_release(&c);
	tl_rmtree(dir);
	free(dir);
}

/* ---- kbuild_image() ---- */

/* 0 when kbuild_image() gave a path to a bzImage. */
static int image_in_child(void *arg)
{
	char *img = kbuild_image(arg);
	return img && !strcmp(img + strlen(img) - 8, "/bzImage") ? 0 : 1;
}

Test(kbuild, the_same_image_asked_twice_at_once_is_built_once, .timeout = 120)
{
	char *dir = tl_tmpdir(), *p;
	struct boot_cfg b = { .kvm = -1, .deterministic = -1 };
	int gate, st_a, st_b;

	p = xasprintf("%s/kernels/configs", dir);
	cr_assert(mkdir_p(p, 0755) == 0);
	free(p);
	tl_write(dir, "kernels/build.sh", build_sh);
	tl_write(dir, "kernels/configs/base.config", "CONFIG_TTY=y\n");
	tl_write(dir, "frag.config", "CONFIG_FTRACE=y\n");
	p = xasprintf("%s/src", dir);
	cr_assert(mkdir_p(p, 0755) == 0);
	free(p);
	tl_write(dir, "src/Makefile", "# a kernel tree\n");
	gate = make_gate(dir);

	p = xasprintf("%s/kernels", dir);
	setenv("PERTURB_KERNELS", p, 1);
	free(p);
	p = xasprintf("%s/cache", dir);
	setenv("PERTURB_CACHE", p, 1);
	free(p);
	setenv("KB_DIR", dir, 1);
	b.config = xasprintf("%s/frag.config", dir);
	b.source = xasprintf("%s/src", dir);

	race(image_in_child, &b, &b, dir, gate, &st_a, &st_b);
	cr_expect_eq(WEXITSTATUS(st_a), 0, "the first gave no image");
	cr_expect_eq(WEXITSTATUS(st_b), 0, "the second gave no image");
	p = xasprintf("%s/count", dir);
	char *count = slurp(p);
	cr_expect_str_eq(count, "built\n", "build.sh ran more than once");
	free(count);
	free(p);

	close(gate);
	free(b.config);
	free(b.source);
	tl_rmtree(dir);
	free(dir);
}
