/*
 * syscalls.c - micro-benchmarks of single system calls (LMbench
 * lat_syscall): null-syscall, read, write, stat, open-close.
 */
#include "micro.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- null-syscall: the cheapest round trip into the kernel ---- */

/* getppid through syscall(): glibc can neither cache it nor answer it in
 * user space (the vDSO has no getppid). */
static int null_syscall_op(struct micro_ctx *m)
{
	(void)m;
	syscall(SYS_getppid);
	return 0;
}

const struct micro_info micro_null_syscall = {
	.name = "null-syscall",
	.help = "getppid() through syscall(2): entry into and exit from the kernel",
	.op = null_syscall_op,
};

/* ---- read / write: one byte from /dev/zero, to /dev/null ---- */

struct fd_state {
	int fd;
	char byte;
};

static int open_dev(struct micro_ctx *m, const char *path, int flags)
{
	struct fd_state *s = calloc(1, sizeof(*s));
	if (!s)
		return micro_error("out of memory");
	m->priv = s;
	s->fd = open(path, flags | O_CLOEXEC);
	if (s->fd < 0)
		return micro_error("cannot open '%s': %s", path, strerror(errno));
	return 0;
}

static void close_dev(struct micro_ctx *m)
{
	struct fd_state *s = m->priv;
	if (s && s->fd >= 0)
		close(s->fd);
	free(s);
	m->priv = NULL;
}

static int read_setup(struct micro_ctx *m)
{
	return open_dev(m, "/dev/zero", O_RDONLY);
}

static int read_op(struct micro_ctx *m)
{
	struct fd_state *s = m->priv;
	if (read(s->fd, &s->byte, 1) != 1)
		return micro_error("read: %s", strerror(errno));
	return 0;
}

const struct micro_info micro_read = {
	.name = "read",
	.help = "read(2) of 1 byte from /dev/zero",
	.setup = read_setup,
	.op = read_op,
	.teardown = close_dev,
};

static int write_setup(struct micro_ctx *m)
{
	return open_dev(m, "/dev/null", O_WRONLY);
}

static int write_op(struct micro_ctx *m)
{
	struct fd_state *s = m->priv;
	if (write(s->fd, &s->byte, 1) != 1)
		return micro_error("write: %s", strerror(errno));
	return 0;
}

const struct micro_info micro_write = {
	.name = "write",
	.help = "write(2) of 1 byte to /dev/null",
	.setup = write_setup,
	.op = write_op,
	.teardown = close_dev,
};

/* ---- stat / open-close: path lookup on a regular file ---- */

struct file_state {
	char *path;
	int temporary;		/* created here, removed by teardown */
};

/* The file: --path, or a new empty file in $TMPDIR (default /tmp). */
static int file_setup(struct micro_ctx *m)
{
	struct file_state *s = calloc(1, sizeof(*s));
	const char *dir = getenv("TMPDIR");
	if (!s)
		return micro_error("out of memory");
	m->priv = s;
	if (m->path) {
		struct stat st;
		s->path = strdup(m->path);
		if (!s->path)
			return micro_error("out of memory");
		if (stat(s->path, &st) < 0)
			return micro_error("cannot stat '%s': %s", s->path, strerror(errno));
		return 0;
	}
	if (!dir || !*dir)
		dir = "/tmp";
	size_t len = strlen(dir) + sizeof("/perturb-micro-XXXXXX");
	s->path = malloc(len);
	if (!s->path)
		return micro_error("out of memory");
	strcpy(s->path, dir);
	strcat(s->path, "/perturb-micro-XXXXXX");
	int fd = mkstemp(s->path);
	if (fd < 0)
		return micro_error("cannot create a file in '%s': %s", dir, strerror(errno));
	close(fd);
	s->temporary = 1;
	return 0;
}

static void file_teardown(struct micro_ctx *m)
{
	struct file_state *s = m->priv;
	if (!s)
		return;
	if (s->temporary)
		unlink(s->path);
	free(s->path);
	free(s);
	m->priv = NULL;
}

static int stat_op(struct micro_ctx *m)
{
	struct file_state *s = m->priv;
	struct stat st;
	if (stat(s->path, &st) < 0)
		return micro_error("stat '%s': %s", s->path, strerror(errno));
	return 0;
}

const struct micro_info micro_stat = {
	.name = "stat",
	.help = "stat(2) of a regular file (--path, default a temporary file)",
	.setup = file_setup,
	.op = stat_op,
	.teardown = file_teardown,
};

static int open_close_op(struct micro_ctx *m)
{
	struct file_state *s = m->priv;
	int fd = open(s->path, O_RDONLY);
	if (fd < 0)
		return micro_error("open '%s': %s", s->path, strerror(errno));
	close(fd);
	return 0;
}

const struct micro_info micro_open_close = {
	.name = "open-close",
	.help = "open(2) read-only and close(2) of a regular file (--path, default a temporary file)",
	.setup = file_setup,
	.op = open_close_op,
	.teardown = file_teardown,
};
