/*
 * cmd_workloads.c - `perturb workloads [list|show NAME|validate FILE...]`.
 *
 * The search path is the one experiments use for workloads given by name:
 * ./workloads/, then the installed share folder (config_share_workloads_dir).
 */
#include "commands.h"
#include "config.h"
#include "util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *search_dirs[2];

static void init_dirs(void)
{
	search_dirs[0] = "workloads";
	search_dirs[1] = config_share_workloads_dir();
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A top-level `variants:` key marks an experiment file. */
static int is_experiment(const char *text)
{
	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, "variants:", 9))
			return 1;
	}
	return 0;
}

static int list(void)
{
	int shown = 0;
	printf("%-16s %-6s %-12s %s\n", "name", "kind", "available", "description");
	for (size_t d = 0; d < ARRAY_SIZE(search_dirs); d++) {
		DIR *dir = opendir(search_dirs[d]);
		struct dirent *de;
		char **names = NULL;
		size_t n = 0;
		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			size_t len = strlen(de->d_name);
			if (len > 5 && !strcmp(de->d_name + len - 5, ".yaml")) {
				names = xrealloc(names, (n + 1) * sizeof(char *));
				names[n++] = xstrdup(de->d_name);
			}
		}
		closedir(dir);
		qsort(names, n, sizeof(char *), cmp_str);
		for (size_t i = 0; i < n; i++) {
			struct experiment holder = { 0 };
			struct workload w = { 0 };
			char err[1024], *path = xasprintf("%s/%s", search_dirs[d], names[i]);
			if (config_load_workload(path, &holder, &w, err, sizeof(err)) < 0) {
				printf("%-16.*s %-6s %-12s %s\n", (int)(strlen(names[i]) - 5), names[i],
				       "?", "invalid", err);
			} else {
				const char *missing = NULL;
				for (size_t r = 0; r < w.n_requires && !missing; r++)
					if (!program_exists(w.requires[r]))
						missing = w.requires[r];
				char avail[64];
				if (missing)
					snprintf(avail, sizeof(avail), "no: %s", missing);
				else
					snprintf(avail, sizeof(avail), "yes");
				printf("%-16s %-6s %-12s %s\n", w.name,
				       w.kind == WORKLOAD_MICRO ? "micro" : "real", avail,
				       w.description ? w.description : "");
				shown++;
				holder.workloads = xmalloc(sizeof(w));
				holder.workloads[0] = w;
				holder.n_workloads = 1;
			}
			experiment_release(&holder);
			free(path);
			free(names[i]);
		}
		free(names);
	}
	if (!shown)
		note("no workload files found in %s or %s", search_dirs[0], search_dirs[1]);
	return EXIT_OK;
}

static int show(const char *name)
{
	for (size_t d = 0; d < ARRAY_SIZE(search_dirs); d++) {
		char *path = xasprintf("%s/%s.yaml", search_dirs[d], name);
		char *text = read_file(path, NULL);
		if (text) {
			printf("# %s\n%s", path, text);
			free(text);
			free(path);
			return EXIT_OK;
		}
		free(path);
	}
	error("no workload named '%s' in %s or %s", name, search_dirs[0], search_dirs[1]);
	return EXIT_USAGE;
}

static int validate(int argc, char **argv)
{
	int bad = 0;
	if (!argc) {
		error("validate needs at least one FILE");
		return EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++) {
		struct experiment exp = { 0 };
		struct workload w = { 0 };
		char err[1024];
		char *text = read_file(argv[i], NULL);
		int r;
		if (text && is_experiment(text)) {
			r = config_load(argv[i], &exp, err, sizeof(err));
		} else {
			r = config_load_workload(argv[i], &exp, &w, err, sizeof(err));
			if (r == 0) {
				/* released through a one-element array */
				exp.workloads = xmalloc(sizeof(w));
				exp.workloads[0] = w;
				exp.n_workloads = 1;
			}
		}
		free(text);
		if (r < 0) {
			error("%s", err);
			bad = 1;
		} else {
			printf("%s: ok\n", argv[i]);
		}
		experiment_release(&exp);
	}
	return bad ? EXIT_USAGE : EXIT_OK;
}

int cmd_workloads(int argc, char **argv)
{
	init_dirs();
	if (argc < 2 || !strcmp(argv[1], "list"))
		return list();
	if (!strcmp(argv[1], "show")) {
		if (argc != 3) {
			error("usage: perturb workloads show NAME");
			return EXIT_USAGE;
		}
		return show(argv[2]);
	}
	if (!strcmp(argv[1], "validate"))
		return validate(argc - 2, argv + 2);
	error("unknown workloads action '%s' (list, show, validate)", argv[1]);
	return EXIT_USAGE;
}
