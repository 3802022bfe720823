/*
 * output.c - writing a file the user named; see output.h.
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The descriptor that /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N names, else -1. */
static int named_fd(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };
	long n;

	if (!strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])) &&
		    !parse_long(path + strlen(dirs[i]), 0, INT_MAX, &n))
			return (int)n;
	return -1;
}

void output_inputs_add(struct output_inputs *in, const char *path)
{
	in->paths = xrealloc(in->paths, (in->n + 1) * sizeof(char *));
	in->paths[in->n++] = xstrdup(path);
}

void output_inputs_add_db(struct output_inputs *in, const char *db)
{
	static const char *const beside[] = { "", "-wal", "-shm", "-journal", ".lock" };
	char *end = path_canonical(db);

	for (size_t i = 0; i < ARRAY_SIZE(beside); i++) {
		char *a = xasprintf("%s%s", db, beside[i]), *b = xasprintf("%s%s", end, beside[i]);
		output_inputs_add(in, a);
		if (strcmp(a, b))
			output_inputs_add(in, b);
		free(a);
		free(b);
	}
	free(end);
}

void output_inputs_release(struct output_inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	memset(in, 0, sizeof(*in));
}

int output_check(const char *out, const char *option, const struct output_inputs *in)
{
	struct stat so, si;
	int fd = named_fd(out), have = fd >= 0 ? fstat(fd, &so) == 0 : stat(out, &so) == 0;
	char *name = fd >= 0 ? NULL : path_canonical(out);
	int ret = 0;

	for (size_t i = 0; i < in->n && !ret; i++) {
		int same = have && stat(in->paths[i], &si) == 0 && S_ISREG(si.st_mode) &&
			   si.st_dev == so.st_dev && si.st_ino == so.st_ino;
		if (!same && name) {
			char *other = path_canonical(in->paths[i]);
			same = !strcmp(name, other);
			free(other);
		}
		if (same)
			ret = error("%s '%s' is '%s', which this command reads: refused, "
				    "nothing written", option, out, in->paths[i]);
	}
	free(name);
	return ret;
}

int output_open(struct output *o, const char *path)
{
	struct stat st;
	int fd = named_fd(path);

	memset(o, 0, sizeof(*o));
	o->path = xstrdup(path);
	if (fd >= 0) {
		if ((fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
			error("cannot write '%s': %s", path, strerror(errno));
			goto fail;
		}
	} else if (!(o->target = path_follow(path, &st))) {
		error("cannot write '%s': %s", path, strerror(errno));
		goto fail;
	} else if (S_ISDIR(st.st_mode)) {
		error("cannot write '%s': Is a directory", path);
		goto fail;
	} else if (st.st_mode && !S_ISREG(st.st_mode)) {
		/* a device, a FIFO: written where it is, never replaced */
		free(o->target);
		o->target = NULL;
		if ((fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0) {
			error("cannot write '%s': %s", path, strerror(errno));
			goto fail;
		}
	} else {
		o->tmp = xasprintf("%s.tmp%d", o->target, (int)getpid());
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
		if (fd < 0) {
			error("cannot write '%s': %s", o->tmp, strerror(errno));
			goto fail;
		}
		if (st.st_mode)
			(void)fchmod(fd, st.st_mode & 07777);
	}
	if (!(o->f = fdopen(fd, "w"))) {
		error("cannot write '%s': %s", path, strerror(errno));
		close(fd);
		goto fail;
	}
	return 0;
fail:
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->target);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return -1;
}

static void release(struct output *o)
{
	free(o->tmp);
	free(o->target);
	free(o->path);
	memset(o, 0, sizeof(*o));
}

int output_close(struct output *o)
{
	int err = 0;

	errno = 0;
	if (fflush(o->f) || ferror(o->f))
		err = errno ? errno : EIO;
	if (fclose(o->f) && !err)
		err = errno;
	o->f = NULL;
	if (!err && o->tmp && rename(o->tmp, o->target) < 0)
		err = errno;
	if (err) {
		error("cannot write '%s': %s", o->path, strerror(err));
		if (o->tmp)
			unlink(o->tmp);
		release(o);
		return -1;
	}
	release(o);
	return 0;
}

void output_abort(struct output *o)
{
	if (!o->f)
		return;
	fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	release(o);
}
