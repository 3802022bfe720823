/*
 * cmd_report.c - `perturb report`: tables and plots from a stored run.
 * Option values are checked here (a bad one exits 2 before the database is
 * opened); reports/report.c computes, reports/render_*.c format.
 */
#include "commands.h"
#include "reports/report.h"
#include "engine/store.h"
#include "lib/util.h"
#include "stats/stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void push(char ***list, size_t *n, const char *s)
{
	*list = xrealloc(*list, (*n + 1) * sizeof(char *));
	(*list)[(*n)++] = (char *)s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* "0,50,80,99" into o->percentiles, ascending; -1 (printed) on bad input. */
static int parse_percentiles(const char *val, struct report_opts *o)
{
	char *copy = xstrdup(val), *save = NULL, *tok;
	int ret = -1;

	o->n_percentiles = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double p;
		while (*tok == ' ')
			tok++;
		if (parse_double(tok, &p) || p < 0 || p > 100) {
			error("--percentiles takes numbers from 0 to 100 separated by commas, got '%s'",
			      tok);
			goto out;
		}
		if (o->n_percentiles == REPORT_MAX_PERCENTILES) {
			error("--percentiles takes at most %d percentiles", REPORT_MAX_PERCENTILES);
			goto out;
		}
		for (size_t i = 0; i < o->n_percentiles; i++)
			if (o->percentiles[i] == p) {
				error("--percentiles: %g is given twice", p);
				goto out;
			}
		o->percentiles[o->n_percentiles++] = p;
	}
	if (!o->n_percentiles) {
		error("--percentiles takes at least one percentile, e.g. 0,50,80,99");
		goto out;
	}
	qsort(o->percentiles, o->n_percentiles, sizeof(double), cmp_double);
	ret = 0;
out:
	free(copy);
	return ret;
}

/* median | mean | pN (stats_statistic_parse; N one of the percentiles,
 * checked later). */
static int parse_statistic(const char *val, struct report_opts *o)
{
	struct stats_statistic st;

	if (stats_statistic_parse(val, &st))
		return error("--statistic takes median, mean or pN (a percentile, e.g. p99), got '%s'",
			     val);
	o->statistic = st.is_mean ? REPORT_STAT_MEAN
		     : st.p == 50 ? REPORT_STAT_MEDIAN : REPORT_STAT_PERCENTILE;
	o->statistic_p = st.p;
	return 0;
}

/* Colour: the text report on a terminal, unless NO_COLOR (no-color.org) or
 * TERM=dumb says otherwise. */
static int want_color(const char *format, const char *output)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	if (strcmp(format, "text") || output || (nc && *nc) || (term && !strcmp(term, "dumb")))
		return 0;
	return isatty(STDOUT_FILENO);
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
			if (rc < 0 || opt_run_id(val, &id) < 0)
				goto out;
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
		} else if ((rc = opt_value(argc, argv, &i, "--percentiles", &val))) {
			if (rc < 0 || parse_percentiles(val, &o) < 0)
				goto out;
		} else if ((rc = opt_value(argc, argv, &i, "--confidence", &val))) {
			double c;
			if (rc < 0 || opt_confidence(val, &c) < 0)
				goto out;
			o.confidence = c;
		} else if ((rc = opt_value(argc, argv, &i, "--bootstrap", &val))) {
			long b;
			if (rc < 0)
				goto out;
			if (parse_long(val, 100, 10000000, &b)) {
				error("--bootstrap takes a number of resamples from 100 to 10000000, "
				      "got '%s'", val);
				goto out;
			}
			o.bootstrap = (unsigned)b;
		} else if ((rc = opt_value(argc, argv, &i, "--max-bootstrap-n", &val))) {
			long b;
			if (rc < 0)
				goto out;
			if (parse_long(val, 2, 100000000, &b)) {
				error("--max-bootstrap-n takes a sample size from 2 to 100000000, got '%s'",
				      val);
				goto out;
			}
			o.max_boot_n = (size_t)b;
		} else if ((rc = opt_value(argc, argv, &i, "--statistic", &val))) {
			if (rc < 0 || parse_statistic(val, &o) < 0)
				goto out;
		} else if ((rc = opt_value(argc, argv, &i, "--config-metric", &val))) {
			if (rc < 0)
				goto out;
			o.config_metric = val;
		} else if (!strcmp(a, "--bca")) {
			o.bca = 1;
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
	if (o.statistic == REPORT_STAT_PERCENTILE) {
		static const double def_pct[] = { 0, 50, 80, 99 };
		const double *ps = o.n_percentiles ? o.percentiles : def_pct;
		size_t n = o.n_percentiles ? o.n_percentiles : ARRAY_SIZE(def_pct), k;
		for (k = 0; k < n && ps[k] != o.statistic_p; k++)
			;
		if (k == n) {
			error("--statistic p%g: %g is not one of the report's percentiles "
			      "(add it to --percentiles)", o.statistic_p, o.statistic_p);
			goto out;
		}
	}
	o.want_rows = r->tidy;
	o.color = want_color(format, output);
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
