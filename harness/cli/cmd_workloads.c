/*
 * cmd_workloads.c - `perturb workloads [list|show NAME|validate FILE...]`.
 *
 * The search path is the one experiments use for workloads given by name:
 * ./workloads/, then the installed share folder (config_share_workloads_dir).
 * Availability is what `perturb run` checks before running (packages.h):
 * the requires: list, with the Debian package of what is missing, and
 * perturb-micro for micro-benchmarks.
 */
#include "commands.h"
#include "options.h"
#include "engine/config.h"
#include "core/packages.h"
#include "lib/util.h"
#include "workloads/micro/micros.h"

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

/* Load one workload file into holder's one workload; 0 or -1 with err
 * filled.  Release with experiment_release(holder). */
static int load_one(const char *path, struct experiment *holder, char *err, size_t len)
{
	struct workload w = { 0 };
	if (config_load_workload(path, holder, &w, err, len) < 0)
		return -1;
	/* released through a one-element array */
	holder->workloads = xmalloc(sizeof(w));
	holder->workloads[0] = w;
	holder->n_workloads = 1;
	return 0;
}

/* Was name already listed from an earlier folder (which shadows it)? */
static int seen(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

/*
 * One line per workload: name, kind, available here (yes / no), the
 * description; under an unavailable one, what is missing and the Debian
 * package that provides it.  A file of the same name in a later folder of
 * the search path is shadowed and not listed.
 */
static int list(void)
{
	char **shown = NULL;
	size_t n_shown = 0;
	printf("%-18s %-6s %-9s %s\n", "name", "kind", "available", "description");
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
				names[n++] = xstrndup(de->d_name, len - 5);
			}
		}
		closedir(dir);
		qsort(names, n, sizeof(char *), cmp_str);
		for (size_t i = 0; i < n; i++) {
			struct experiment holder = { 0 };
			char err[1024], why[512];
			char *path = xasprintf("%s/%s.yaml", search_dirs[d], names[i]);
			if (seen(shown, n_shown, names[i])) {
				free(names[i]);
			} else if (load_one(path, &holder, err, sizeof(err)) < 0) {
				printf("%-18s %-6s %-9s %s\n", names[i], "?", "invalid", err);
				shown = xrealloc(shown, (n_shown + 1) * sizeof(char *));
				shown[n_shown++] = names[i];
			} else {
				const struct workload *w = &holder.workloads[0];
				int ok = workload_available(w, why, sizeof(why));
				/* a description is free text: shown, not obeyed */
				printf_shown(stdout, "%-18s %-6s %-9s %s", w->name,
					     w->kind == WORKLOAD_MICRO ? "micro" : "real",
					     ok ? "yes" : "no", w->description ? w->description : "");
				putchar('\n');
				if (!ok)
					printf("%-18s %-6s %-9s needs %s\n", "", "", "", why);
				shown = xrealloc(shown, (n_shown + 1) * sizeof(char *));
				shown[n_shown++] = names[i];
			}
			experiment_release(&holder);
			free(path);
		}
		free(names);
	}
	if (!n_shown)
		note("no workload files found in %s or %s", search_dirs[0], search_dirs[1]);
	for (size_t i = 0; i < n_shown; i++)
		free(shown[i]);
	free(shown);
	return EXIT_OK;
}

/* The file of workload NAME, then whether it can run here. */
static int show(const char *name)
{
	for (size_t d = 0; d < ARRAY_SIZE(search_dirs); d++) {
		char *path = xasprintf("%s/%s.yaml", search_dirs[d], name);
		char *text = read_user_file(path, CONFIG_FILE_MAX, NULL, NULL, 0);
		if (text) {
			struct experiment holder = { 0 };
			char err[1024], why[512];
			size_t len = strlen(text);
			printf("# %s\n%s%s", path, text, len && text[len - 1] != '\n' ? "\n" : "");
			if (load_one(path, &holder, err, sizeof(err)) < 0)
				printf("# invalid: %s\n", err);
			else if (workload_available(&holder.workloads[0], why, sizeof(why)))
				printf("# available here: yes\n");
			else
				printf("# available here: no, needs %s\n", why);
			experiment_release(&holder);
			free(text);
			free(path);
			return EXIT_OK;
		}
		free(path);
	}
	error("no workload named '%s' in %s or %s", name, search_dirs[0], search_dirs[1]);
	return EXIT_USAGE;
}

/* A micro workload that runs {micro} NAME must name a micro-benchmark
 * perturb-micro has (its registry, workloads/micro/micros.h). */
static int check_micro_name(const char *file, const struct workload *w)
{
#define MICRO_NAME(ident, name) name,
	static const char *const names[] = { MICRO_LIST(MICRO_NAME) };
#undef MICRO_NAME
	if (w->cmd.n < 2 || strcmp(w->cmd.v[0], "{micro}"))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(names[i], w->cmd.v[1]))
			return 0;
	return error("%s:%d:%d: workload '%s': perturb-micro has no micro-benchmark '%s' "
		     "(perturb-micro --list)", file, w->pos.line, w->pos.col, w->name, w->cmd.v[1]);
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
		char err[1024], why[128];
		/* a FIFO or a device is refused here, before the loader opens it */
		char *text = read_user_file(argv[i], CONFIG_FILE_MAX, NULL, why, sizeof(why));
		int r;
		if (!text) {
			error("%s: cannot read: %s", argv[i], why);
			bad = 1;
			continue;
		}
		if (is_experiment(text)) {
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
			for (size_t k = 0; k < exp.n_workloads; k++)
				if (check_micro_name(argv[i], &exp.workloads[k]) < 0)
					r = -1;
			if (r < 0)
				bad = 1;
			else
				printf("%s: ok\n", argv[i]);
		}
		experiment_release(&exp);
	}
	return bad ? EXIT_USAGE : EXIT_OK;
}

int cmd_workloads(int argc, char **argv)
{
	const char *action = "list";
	char **args = NULL;
	size_t n_args = 0;
	struct opt opts[] = {
		OPT_ARG("ACTION", &action,
			"list (the default): the workloads found in the search path,\n"
			"whether each can run here (else what is missing, with its\n"
			"Debian package); show NAME: print a workload's file and\n"
			"whether it can run here; validate FILE...: check workload\n"
			"or experiment files"),
		OPT_ARGS("ARG...", &args, &n_args, "show: the workload's NAME; validate: the FILEs"),
		OPT_END(),
	};
	int ret;

	if ((ret = parse_options(argc, argv, opts, "workloads")))
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	init_dirs();
	if (!strcmp(action, "list") && !n_args) {
		ret = list();
	} else if (!strcmp(action, "show") && n_args == 1) {
		ret = show(args[0]);
	} else if (!strcmp(action, "validate")) {
		ret = validate((int)n_args, args);
	} else if (!strcmp(action, "list") || !strcmp(action, "show")) {
		error("usage: perturb workloads %s", strcmp(action, "list") ? "show NAME" : "list");
		ret = EXIT_USAGE;
	} else {
		error("unknown workloads action '%s' (list, show, validate)", action);
		ret = EXIT_USAGE;
	}
	free(args);
	return ret;
}
