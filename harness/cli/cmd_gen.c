/*
 * cmd_gen.c - `perturb gen KIND SIZE FILE [--seed N]`: write SIZE bytes of
 * deterministic input data of KIND (see gen.h) to FILE, or to standard
 * output when FILE is "-".  A file is written as FILE.tmp and renamed, so
 * that FILE is either absent, its old self, or complete; an existing FILE
 * that is not a regular file (/dev/null, a FIFO) is written in place.
 */
#include "commands.h"
#include "options.h"
#include "lib/gen.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write to fd, named name in messages; EXIT_OK or EXIT_RUNTIME. */
static int write_fd(const char *kind, uint64_t size, uint64_t seed, int fd, const char *name)
{
	int err = gen_write(kind, size, seed, fd);
	if (err) {
		error("cannot write '%s': %s", name, strerror(-err));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int write_in_place(const char *kind, uint64_t size, uint64_t seed, const char *path)
{
	int ret, fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		error("cannot open '%s': %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	ret = write_fd(kind, size, seed, fd, path);
	if (close(fd) && ret == EXIT_OK) {
		error("cannot write '%s': %s", path, strerror(errno));
		ret = EXIT_RUNTIME;
	}
	return ret;
}

static int write_file(const char *kind, uint64_t size, uint64_t seed, const char *path)
{
	char *tmp = xasprintf("%s.tmp", path);
	int ret = EXIT_RUNTIME;
	int fd;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		error("cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (write_fd(kind, size, seed, fd, tmp)) {
		close(fd);
		goto unlink;
	}
	if (close(fd)) {
		error("cannot write '%s': %s", tmp, strerror(errno));
		goto unlink;
	}
	if (rename(tmp, path)) {
		error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		goto unlink;
	}
	ret = EXIT_OK;
	goto out;
unlink:
	unlink(tmp);
out:
	free(tmp);
	return ret;
}

int cmd_gen(int argc, char **argv)
{
	const char *pos[3] = { NULL };
	uint64_t seed = 1, size;
	double x;
	struct opt opts[] = {
		OPT_ARG("KIND", &pos[0],
			"text (English-like prose) or binary (mixed binary segments)"),
		OPT_ARG("SIZE", &pos[1], "bytes, or with a suffix K, M, G (powers of 1024): 64M;\n"
			"at most 1T"),
		OPT_ARG("FILE", &pos[2], "output file, written atomically; - for standard output"),
		OPT_UNSIGNED(0, "seed", &seed, "N",
			     "the same seed gives the same bytes on every machine (default 1)"),
		OPT_END(),
	};
	int rc;

	if ((rc = parse_options(argc, argv, opts, "gen")))
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (!pos[2]) {
		error("gen needs KIND, SIZE and FILE (see 'perturb help gen')");
		return EXIT_USAGE;
	}
	if (!gen_kind_valid(pos[0])) {
		error("unknown kind '%s' (valid kinds: %s)", pos[0], gen_kinds());
		return EXIT_USAGE;
	}
	if (range_parse(&ranges[R_GEN_SIZE], pos[1], &x)) {
		char what[128];
		error("SIZE must be %s, got '%s'",
		      range_describe(&ranges[R_GEN_SIZE], what, sizeof(what)), pos[1]);
		return EXIT_USAGE;
	}
	size = (uint64_t)x;
	if (!*pos[2]) {
		error("empty file name");
		return EXIT_USAGE;
	}

	if (!strcmp(pos[2], "-")) {
		int err = gen_write(pos[0], size, seed, STDOUT_FILENO);
		if (err) {
			error("write failure on standard output: %s", strerror(-err));
			return EXIT_RUNTIME;
		}
		return EXIT_OK;
	}
	struct stat st;
	if (!stat(pos[2], &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			error("'%s' is a directory", pos[2]);
			return EXIT_USAGE;
		}
		return write_in_place(pos[0], size, seed, pos[2]);
	}
	return write_file(pos[0], size, seed, pos[2]);
}
