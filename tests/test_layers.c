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
 *
 * Within a folder, no circle of calls either: a file calls a function
 * another defines (a function of the same folder), never back, directly
 * or through others.  The calls are read from the objects the build made
 * (build/FOLDER/FILE.o): nm's undefined symbols of one against the
 * functions (T) another defines.  A table of rows (a backend's or a
 * renderer's struct) is data, not a call, and does not count.
 */
#include <criterion/criterion.h>

#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
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

/* The two graphs searched for circles. */
enum edge_kind { INCLUDES, CALLS, N_EDGE_KINDS };

struct file {
	char *path;		/* relative to the top */
	int layer;
	int edge[N_EDGE_KINDS][64];	/* indices of the included / called files */
	const char *why[N_EDGE_KINDS][64];	/* CALLS: a function called */
	int n_edge[N_EDGE_KINDS];
	char **defs, **undefs;	/* CALLS: nm's T and U symbols of its object */
	size_t n_defs, n_undefs;
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

/* The edge of kind from a to b, or -1. */
static int edge_to(int kind, int a, int b)
{
	for (int k = 0; k < files[a].n_edge[kind]; k++)
		if (files[a].edge[kind][k] == b)
			return k;
	return -1;
}

/* Depth-first from i over the edges of kind; on reaching a file of the
 * current path, the circle (that file ... back to it, each call with the
 * function it calls) goes into out and 1 is returned. */
static int circle_from(int kind, int i, struct strbuf *out)
{
	files[i].state = 1;
	stack[depth++] = i;
	for (int k = 0; k < files[i].n_edge[kind]; k++) {
		int j = files[i].edge[kind][k];
		if (files[j].state == 1) {
			int from = depth - 1;
			while (stack[from] != j)
				from--;
			strbuf_addstr(out, files[j].path);
			for (int d = from; d < depth; d++) {
				int to = d + 1 < depth ? stack[d + 1] : j;
				strbuf_addf(out, " -> %s", files[to].path);
				if (kind == CALLS)
					strbuf_addf(out, " (%s())",
						    files[stack[d]].why[kind][edge_to(kind, stack[d], to)]);
			}
			return 1;
		}
		if (files[j].state == 0 && circle_from(kind, j, out))
			return 1;
	}
	files[i].state = 2;
	depth--;
	return 0;
}

/* The first circle of edges of kind, said into bad. */
static void find_circle(int kind, const char *what, struct strbuf *bad)
{
	for (int i = 0; i < n_files; i++)
		files[i].state = 0;
	depth = 0;
	for (int i = 0; i < n_files; i++) {
		struct strbuf path = STRBUF_INIT;
		int found = files[i].state == 0 && circle_from(kind, i, &path);
		if (found)
			strbuf_addf(bad, "%s: %s\n", what, path.buf);
		strbuf_release(&path);
		if (found)
			break;	/* the first one; the search state is spent */
	}
}

static void collect_all(const char *top)
{
	static const char *const tops[] = { "stats", "instrumentation", "harness", "reports" };

	cr_assert(top, "PERTURB_SRC is not set (run the tests with make test)");
	for (size_t t = 0; t < ARRAY_SIZE(tops); t++)
		collect(top, tops[t]);
	cr_assert_gt(n_files, 50, "too few sources found under %s", top);
}

Test(layers, no_file_includes_a_higher_layer_and_no_circle)
{
	const char *top = getenv("PERTURB_SRC");
	struct strbuf bad = STRBUF_INIT;

	collect_all(top);
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
			cr_assert(files[i].n_edge[INCLUDES] < (int)ARRAY_SIZE(files[i].edge[INCLUDES]));
			files[i].edge[INCLUDES][files[i].n_edge[INCLUDES]++] = j;
		}
		fclose(fp);
		free(full);
	}
	find_circle(INCLUDES, "an include circle", &bad);
	cr_expect(!bad.len, "%s(docs/architecture.md: a file includes only its layer or lower ones)",
		  bad.buf ? bad.buf : "");
	strbuf_release(&bad);
}

/* Add nm's global symbols of each object obj[k] to files[fi[k]]: its
 * functions (T) and what it refers to elsewhere (U).  One nm for all. */
static void read_symbols(char **obj, const int *fi, int n)
{
	struct strbuf cmd = STRBUF_INIT;
	size_t alloc_defs[MAX_FILES] = { 0 }, alloc_undefs[MAX_FILES] = { 0 };
	char line[1024], name[256], type;
	FILE *p;
	int k = 0;

	strbuf_addstr(&cmd, "nm -P -g -A");
	for (int i = 0; i < n; i++) {
		strbuf_addstr(&cmd, " ");
		strbuf_add_shell_word(&cmd, obj[i]);
	}
	p = popen(cmd.buf, "r");
	cr_assert(p, "cannot run nm: %s", strerror(errno));
	/* "OBJ: NAME TYPE ...", the objects in the order given */
	while (fgets(line, sizeof(line), p)) {
		size_t len = 0;
		struct file *f;

		for (; k < n; k++) {
			len = strlen(obj[k]);
			if (!strncmp(line, obj[k], len) && !strncmp(line + len, ": ", 2))
				break;
		}
		cr_assert(k < n, "nm printed a line of no object given: %s", line);
		if (sscanf(line + len + 2, "%255s %c", name, &type) != 2)
			continue;
		f = &files[fi[k]];
		if (type == 'T') {
			ALLOC_GROW(f->defs, f->n_defs + 1, alloc_defs[fi[k]]);
			f->defs[f->n_defs++] = xstrdup(name);
		} else if (type == 'U') {
			ALLOC_GROW(f->undefs, f->n_undefs + 1, alloc_undefs[fi[k]]);
			f->undefs[f->n_undefs++] = xstrdup(name);
		}
	}
	cr_assert_eq(pclose(p), 0, "nm failed (binutils): %s", cmd.buf);
	strbuf_release(&cmd);
}

static int defines(const struct file *f, const char *name)
{
	for (size_t i = 0; i < f->n_defs; i++)
		if (!strcmp(f->defs[i], name))
			return 1;
	return 0;
}

Test(layers, no_circle_of_calls_within_a_folder)
{
	const char *top = getenv("PERTURB_SRC");
	struct strbuf bad = STRBUF_INIT;
	int n_objs = 0;
	static char *obj[MAX_FILES];
	static int fi[MAX_FILES];

	collect_all(top);
	for (int i = 0; i < n_files; i++) {
		size_t n = strlen(files[i].path);

		if (strcmp(files[i].path + n - 2, ".c"))
			continue;
		obj[n_objs] = xasprintf("%s/build/%.*s.o", top, (int)n - 2, files[i].path);
		fi[n_objs] = i;
		/* the guest agent is built without objects of its own */
		if (access(obj[n_objs], R_OK) == 0)
			n_objs++;
		else
			free(obj[n_objs]);
	}
	cr_assert_gt(n_objs, 50, "too few objects under %s/build (make builds them)", top);
	read_symbols(obj, fi, n_objs);
	for (int a = 0; a < n_files; a++) {
		char *dir = dir_name(files[a].path);
		for (int b = 0; b < n_files; b++) {
			char *bdir = dir_name(files[b].path);
			int same = a != b && !strcmp(dir, bdir);
			free(bdir);
			for (size_t u = 0; same && u < files[a].n_undefs; u++) {
				if (!defines(&files[b], files[a].undefs[u]))
					continue;
				cr_assert(files[a].n_edge[CALLS] < (int)ARRAY_SIZE(files[a].edge[CALLS]));
				files[a].why[CALLS][files[a].n_edge[CALLS]] = files[a].undefs[u];
				files[a].edge[CALLS][files[a].n_edge[CALLS]++] = b;
				break;
			}
		}
		free(dir);
	}
	find_circle(CALLS, "a circle of calls", &bad);
	cr_expect(!bad.len, "%s(docs/architecture.md: within a folder, no file calls back into "
		  "one that calls it)", bad.buf ? bad.buf : "");
	strbuf_release(&bad);
}
