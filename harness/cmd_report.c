/* cmd_report.c - `perturb report`: tables from a stored run. */
#include "commands.h"
#include "report.h"
#include "store.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void push(char ***list, size_t *n, const char *s)
{
	*list = xrealloc(*list, (*n + 1) * sizeof(char *));
	(*list)[(*n)++] = (char *)s;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { 0 };
	struct report_model m = { 0 };
	struct store *st = NULL;
	const char *db = "results/perturb.db", *format = "text", *output = NULL, *val;
	const struct renderer *r;
	char *tmp = NULL;
	FILE *out = stdout;
	int ret = EXIT_USAGE, rc, usage_error;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((rc = opt_value(argc, argv, &i, "--db", &val))) {
			if (rc < 0)
				goto out;
			db = val;
		} else if ((rc = opt_value(argc, argv, &i, "--run", &val))) {
			long id;
			if (rc < 0)
				goto out;
			if (parse_long(val, 1, INT64_MAX, &id)) {
				error("--run takes a run id (a positive integer), got '%s'", val);
				goto out;
			}
			o.run_id = id;
		} else if ((rc = opt_value(argc, argv, &i, "--baseline", &val))) {
			if (rc < 0)
				goto out;
			o.baseline = val;
		} else if ((rc = opt_value(argc, argv, &i, "--metric", &val))) {
			if (rc < 0)
				goto out;
			push(&o.metrics, &o.n_metrics, val);
		} else if ((rc = opt_value(argc, argv, &i, "--workload", &val))) {
			if (rc < 0)
				goto out;
			push(&o.workloads, &o.n_workloads, val);
		} else if ((rc = opt_value(argc, argv, &i, "--format", &val))) {
			if (rc < 0)
				goto out;
			format = val;
		} else if ((rc = opt_value(argc, argv, &i, "--output", &val))) {
			if (rc < 0)
				goto out;
			output = val;
		} else if (!strcmp(a, "--include-warmup")) {
			o.include_warmup = 1;
		} else if (!strcmp(a, "--include-failed")) {
			o.include_failed = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			perturb_quiet = 1;
		} else {
			error("unknown option '%s' (see 'perturb help report')", a);
			goto out;
		}
	}
	if (!(r = renderer_find(format))) {
		error("unknown format '%s' (known: %s)", format, renderer_names());
		goto out;
	}
	o.want_rows = r->tidy;
	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		goto out;
	}
	if (store_open(db, 0, &st) < 0) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (report_build(st, &o, &m, &usage_error) < 0) {
		ret = usage_error ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	ret = EXIT_RUNTIME;
	if (output) {
		/* Written beside the target and renamed: never a half-written report. */
		tmp = xasprintf("%s.tmp%d", output, (int)getpid());
		if (!(out = fopen(tmp, "w"))) {
			error("cannot write '%s': %s", tmp, strerror(errno));
			out = stdout;
			goto out;
		}
	}
	if (r->render(&m, out) < 0)
		goto out;
	if (output) {
		int bad = ferror(out);
		if (fclose(out) || bad) {
			out = stdout;
			error("cannot write '%s': %s", tmp, strerror(errno));
			goto out;
		}
		out = stdout;
		if (rename(tmp, output) < 0) {
			error("cannot rename '%s' to '%s': %s", tmp, output, strerror(errno));
			goto out;
		}
	}
	ret = EXIT_OK;
out:
	if (out != stdout)
		fclose(out);
	if (tmp && ret != EXIT_OK)
		unlink(tmp);
	free(tmp);
	report_release(&m);
	if (st)
		store_close(st);
	free(o.metrics);
	free(o.workloads);
	return ret;
}
