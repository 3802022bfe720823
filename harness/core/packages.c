/*
 * packages.c - requirements of workloads and the Debian packages that
 * provide them (see packages.h).
 */
#include "packages.h"
#include "experiment.h"
#include "lib/util.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Program (or requires: path pattern) → Debian 12 package.  Sorted by
 * program, for the reader: lookups are linear. */
static const struct {
	const char *program;
	const char *package;
} packages[] = {
	{ "/usr/include/libelf.h", "libelf-dev" },
	{ "/usr/src/linux-source-*.tar.xz", "linux-source" },
	{ "bash", "bash" },
	{ "bc", "bc" },
	{ "bison", "bison" },
	{ "bpftrace", "bpftrace" },
	{ "bunzip2", "bzip2" },
	{ "bzip2", "bzip2" },
	{ "cc", "gcc" },
	{ "cyclictest", "rt-tests" },
	{ "dd", "coreutils" },
	{ "fio", "fio" },
	{ "flex", "flex" },
	{ "g++", "g++" },
	{ "gcc", "gcc" },
	{ "gfortran", "gfortran" },
	{ "gzip", "gzip" },
	{ "hackbench", "rt-tests" },
	{ "hyperfine", "hyperfine" },
	{ "ld", "binutils" },
	{ "ltrace", "ltrace" },
	{ "lttng", "lttng-tools" },
	{ "make", "make" },
	{ "mpirun", "openmpi-bin" },
	{ "perf", "linux-perf" },
	{ "pigz", "pigz" },
	{ "python3", "python3" },
	{ "qemu-system-x86_64", "qemu-system-x86" },
	{ "stress-ng", "stress-ng" },
	{ "strace", "strace" },
	{ "sysbench", "sysbench" },
	{ "tar", "tar" },
	{ "taskset", "util-linux" },
	{ "trace-cmd", "trace-cmd" },
	{ "valgrind", "valgrind" },
	{ "xz", "xz-utils" },
	{ "zstd", "zstd" },
};

const char *package_for(const char *program)
{
	for (size_t i = 0; i < ARRAY_SIZE(packages); i++)
		if (!strcmp(packages[i].program, program))
			return packages[i].package;
	return NULL;
}

/* Does some existing file match the pattern? */
static int path_exists(const char *pattern)
{
	glob_t g;
	int found = 0;
	if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !found; i++)
			found = access(g.gl_pathv[i], F_OK) == 0;
	}
	globfree(&g);
	return found;
}

int requirement_met(const char *req, char *why, size_t len)
{
	int is_path = strchr(req, '/') != NULL;
	const char *pkg;
	char hint[128] = "";

	if (is_path ? path_exists(req) : program_exists(req))
		return 1;
	if ((pkg = package_for(req)))
		snprintf(hint, sizeof(hint), " (Debian package: %s)", pkg);
	/* shown escaped: a program's name may hold any byte (lib/util.h) */
	char *shown = escape_bytes_str(req);
	snprintf(why, len, "'%s', %s%s", shown, is_path ? "no such file" : "not found on PATH", hint);
	free(shown);
	return 0;
}

const char *perturb_micro_exe(void)
{
	static char *path;
	if (!path) {
		char *dir = dir_name(perturb_self_exe());
		path = xasprintf("%s/perturb-micro", dir);
		free(dir);
	}
	return path;
}

int workload_uses_micro(const struct workload *w)
{
	if (w->shell)
		return strstr(w->shell, "{micro}") != NULL;
	for (size_t i = 0; i < w->cmd.n; i++)
		if (strstr(w->cmd.v[i], "{micro}"))
			return 1;
	return 0;
}

int micro_available(const struct workload *w, char *why, size_t len)
{
	if (!workload_uses_micro(w) || access(perturb_micro_exe(), X_OK) == 0)
		return 1;
	snprintf(why, len, "perturb-micro, not found at '%s' (make builds it next to perturb)",
		 perturb_micro_exe());
	return 0;
}

int workload_available(const struct workload *w, char *why, size_t len)
{
	for (size_t i = 0; i < w->n_requires; i++)
		if (!requirement_met(w->requires[i], why, len))
			return 0;
	return micro_available(w, why, len);
}
