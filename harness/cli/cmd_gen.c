/*
 * cmd_gen.c - `perturb gen KIND SIZE FILE [--seed N]`: write SIZE bytes of
 * deterministic input data of KIND (see gen.h) to FILE, or to standard
 * output when FILE is "-".  FILE is written as lib/output.h says: a file
 * through a temporary one renamed over it, so that FILE is either absent,
 * its old self, or complete; a device or a FIFO in place.
 */
#include "commands.h"
#include "options.h"
#include "lib/gen.h"
#include "lib/output.h"
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

/* FILE as lib/output.h says: renamed into place, or written in place when
 * it is a device or a FIFO. */
static int write_file(const char *kind, uint64_t size, uint64_t seed, const char *path)
{
	struct output o;

	if (output_open(&o, path) < 0)
		return EXIT_RUNTIME;
	if (write_fd(kind, size, seed, fileno(o.f), path) != EXIT_OK) {
		output_abort(&o);
		return EXIT_RUNTIME;
	}
	return output_close(&o) < 0 ? EXIT_RUNTIME : EXIT_OK;
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
	return write_file(pos[0], size, seed, pos[2]);
}
