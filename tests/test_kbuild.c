/*
 * test_kbuild.c - guest kernels built once per cache key (backends/kbuild.c).
 *
 * A fake kernels/build.sh stands in for the kernel's build: it counts its
 * runs, then blocks on a FIFO until the test lets it finish.  Two perturb
 * processes asking for the same image at once must build it once: the
 * second waits on the cache lock (and says so), then takes the image that
 * the first built.
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

/* Let every build.sh blocked on the gate go (none may be blocked yet). */
static void open_gate(const char *gate)
{
	int fd = open(gate, O_WRONLY | O_NONBLOCK);

	if (fd < 0)
		return;
	if (write(fd, "go\ngo\n", 6) < 0)
		perror("gate");
	close(fd);
}

static pid_t build_in_child(struct boot_cfg *b, const char *errpath)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);	/* so that a failing test can stop its build.sh too */
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		char *img = kbuild_image(b);
		_exit(img && !strcmp(img + strlen(img) - 8, "/bzImage") ? 0 : 1);
	}
	return pid;
}

Test(kbuild, the_same_image_asked_twice_at_once_is_built_once, .timeout = 120)
{
	char *dir = tl_tmpdir(), *p, *count, *gate, *err_a, *err_b;
	struct boot_cfg b = { .kvm = -1, .deterministic = -1 };
	int st_a, st_b, waited;
	pid_t a, b_pid;

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
	gate = xasprintf("%s/gate", dir);
	cr_assert(mkfifo(gate, 0600) == 0);
	count = xasprintf("%s/count", dir);
	err_a = xasprintf("%s/a.err", dir);
	err_b = xasprintf("%s/b.err", dir);

	p = xasprintf("%s/kernels", dir);
	setenv("PERTURB_KERNELS", p, 1);
	free(p);
	p = xasprintf("%s/cache", dir);
	setenv("PERTURB_CACHE", p, 1);
	free(p);
	setenv("KB_DIR", dir, 1);
	b.config = xasprintf("%s/frag.config", dir);
	b.source = xasprintf("%s/src", dir);

	a = build_in_child(&b, err_a);
	cr_assert(wait_for(count, NULL), "the first build never started");
	b_pid = build_in_child(&b, err_b);
	waited = wait_for(err_b, "waiting for it");
	open_gate(gate);	/* lets the first build finish */
	if (!waited) {		/* two builds at once: stop both, then fail */
		kill(-a, SIGKILL);
		kill(-b_pid, SIGKILL);
	}
	cr_assert(waitpid(a, &st_a, 0) == a && waitpid(b_pid, &st_b, 0) == b_pid);
	cr_expect(waited, "the second perturb did not wait for the first: %s", slurp(err_b));
	cr_expect(WIFEXITED(st_a) && WEXITSTATUS(st_a) == 0, "first: %s", slurp(err_a));
	cr_expect(WIFEXITED(st_b) && WEXITSTATUS(st_b) == 0, "second: %s", slurp(err_b));
	p = slurp(count);
	cr_expect_str_eq(p, "built\n", "build.sh ran more than once");
	free(p);

	free(b.config);
	free(b.source);
	free(gate);
	free(count);
	free(err_a);
	free(err_b);
	tl_rmtree(dir);
	free(dir);
}
