/*
 * test_layers.c - the layers of docs/architecture.md, checked on the code.
 *
 * Every #include "..." of the program's sources (harness/, reports/,
 * stats/, instrumentation/) is resolved as the compiler does (the
 * including file's folder, then harness/, then the top of the tree) and
 * must name a file of the same layer or of a lower one; and no file may
 * reach itself through its includes.  The layers, bottom to top:
 *
 *   0  stats/  instrumentation/  harness/lib/
 *   1  harness/counters/
 *   2  harness/core/
 *   3  harness/backends/ (and backends/guest/)
 *   4  harness/engine/
 *   5  reports/
 *   6  harness/cli/
 */
#include <criterion/criterion.h>

#include "lib/util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *dir;
	int layer;
} layers[] = {
	{ "stats", 0 }, { "instrumentation", 0 }, { "harness/lib", 0 },
	{ "harness/counters", 1 }, { "harness/core", 2 }, { "harness/backends", 3 },
	{ "harness/backends/guest", 3 }, { "harness/engine", 4 }, { "reports", 5 },
	{ "harness/cli", 6 },
};

#define MAX_FILES 512

struct file {
	char *path;		/* relative to the top */
	int layer;
	int inc[64];		/* indices of the included files */
	int n_inc;
	int state;		/* cycle search: 0 new, 1 on the path, 2 done */
};

static struct file files[MAX_FILES];
static int n_files;

static int layer_of_dir(const char *dir)
{
	for (size_t i = 0; i < ARRAY_SIZE(layers); i++)
		if (!strcmp(layers[i].dir, dir))
			return layers[i].layer;
	return -1;
}

static void collect(const char *top, const char *dir)
{
	char *full = xasprintf("%s/%s", top, dir);
	DIR *d = opendir(full);
	struct dirent *e;

	cr_assert(d, "cannot open %s", full);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *rel = xasprintf("%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			if (layer_of_dir(rel) >= 0)
				collect(top, rel);
		} else if (n > 2 && (!strcmp(e->d_name + n - 2, ".c") ||
				     !strcmp(e->d_name + n - 2, ".h"))) {
			cr_assert(n_files < MAX_FILES);
			files[n_files].path = rel;
			files[n_files].layer = layer_of_dir(dir);
			n_files++;
			continue;
		}
		free(rel);
	}
	closedir(d);
	free(full);
}

static int find(const char *rel)
{
	for (int i = 0; i < n_files; i++)
		if (!strcmp(files[i].path, rel))
			return i;
	return -1;
}

/* "a/b/../c" -> "a/c", in place. */
static void normalise(char *p)
{
	char *s;
	while ((s = strstr(p, "/../"))) {
		char *prev = s;
		while (prev > p && prev[-1] != '/')
			prev--;
		memmove(prev, s + 4, strlen(s + 4) + 1);
	}
}

/* The file an include names, as the compiler finds it (-Iharness -I.). */
static int resolve(const struct file *f, const char *name)
{
	char *dir = dir_name(f->path), *cand[3];
	int hit = -1;

	cand[0] = xasprintf("%s/%s", dir, name);
	cand[1] = xasprintf("harness/%s", name);
	cand[2] = xstrdup(name);
	for (int k = 0; k < 3; k++) {
		normalise(cand[k]);
		if (hit < 0)
			hit = find(cand[k]);
		free(cand[k]);
	}
	free(dir);
	return hit;
}

static int stack[MAX_FILES], depth;

/* Depth-first from i; on reaching a file of the current path, the circle
 * (that file ... back to it) goes into out and 1 is returned. */
static int circle_from(int i, struct strbuf *out)
{
	files[i].state = 1;
	stack[depth++] = i;
	for (int k = 0; k < files[i].n_inc; k++) {
		int j = files[i].inc[k];
		if (files[j].state == 1) {
			int from = depth - 1;
			while (stack[from] != j)
				from--;
			for (int d = from; d < depth; d++)
				strbuf_addf(out, "%s -> ", files[stack[d]].path);
			strbuf_addstr(out, files[j].path);
			return 1;
		}
		if (files[j].state == 0 && circle_from(j, out))
			return 1;
	}
	files[i].state = 2;
	depth--;
	return 0;
}

Test(layers, no_file_includes_a_higher_layer_and_no_circle)
{
	const char *top = getenv("PERTURB_SRC");
	static const char *const tops[] = { "stats", "instrumentation", "harness", "reports" };
	struct strbuf bad = STRBUF_INIT;

	cr_assert(top, "PERTURB_SRC is not set (run the tests with make test)");
	for (size_t t = 0; t < ARRAY_SIZE(tops); t++)
		collect(top, tops[t]);
	cr_assert_gt(n_files, 50, "too few sources found under %s", top);
	for (int i = 0; i < n_files; i++) {
		char *full = xasprintf("%s/%s", top, files[i].path), line[512];
		FILE *fp = fopen(full, "r");
		int no = 0;

		cr_assert(fp, "cannot read %s", full);
		while (fgets(line, sizeof(line), fp)) {
			char name[256];
			no++;
			if (sscanf(line, "#include \"%255[^\"]\"", name) != 1)
				continue;
			int j = resolve(&files[i], name);
			if (j < 0)
				continue;	/* workloads/, tests/: outside the layers */
			if (files[j].layer > files[i].layer)
				strbuf_addf(&bad, "%s:%d: includes %s, a higher layer\n",
					    files[i].path, no, files[j].path);
			cr_assert(files[i].n_inc < (int)ARRAY_SIZE(files[i].inc));
			files[i].inc[files[i].n_inc++] = j;
		}
		fclose(fp);
		free(full);
	}
	for (int i = 0; i < n_files; i++) {
		struct strbuf path = STRBUF_INIT;
		int found = files[i].state == 0 && circle_from(i, &path);
		if (found)
			strbuf_addf(&bad, "an include circle: %s\n", path.buf);
		strbuf_release(&path);
		if (found)
			break;	/* the first one; the search state is spent */
	}
	cr_expect(!bad.len, "%s(docs/architecture.md: a file includes only its layer or lower ones)",
		  bad.buf ? bad.buf : "");
	strbuf_release(&bad);
}
