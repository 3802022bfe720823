/*
 * cmd_run.c - `perturb run`: its options, and the study (engine/study.h)
 * run with them.  Exit status: 0 done, 2 nothing run (a usage or
 * configuration error, something unavailable), 3 a failure while running
 * or a stop (SIGINT/SIGTERM/SIGHUP: the run is marked "interrupted" and
 * `--resume` finishes exactly the runs still missing).
 *
 * --target-ci's intervals are the report's (reports/report.h): the widest
 * half-width is read from the report model built with the report's own
 * settings, so that the run stops when `perturb report` would show every
 * interval within the target.
 */
#include "commands.h"
#include "engine/study.h"
#include "reports/report.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct run_opts {
	const char *file;
	const char *db;
	struct plan_filter filter;
	int has_seed;
	uint64_t seed;
	int dry_run, resume, skip_unavailable;
	double target_ci;	/* --target-ci in %; 0 = off */
	double max_time;	/* --max-time in s; 0 = TARGET_DEFAULT_MAX_TIME */
	int self_check;
};

static int parse_args(int argc, char **argv, struct run_opts *o)
{
	const char *val;
	int r, have_file = 0;

	o->file = "experiments.yaml";
	o->db = "results/perturb.db";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((r = opt_value(argc, argv, &i, "--db", &val))) {
			if (r < 0)
				return -1;
			o->db = val;
		} else if ((r = opt_value(argc, argv, &i, "--repetitions", &val))) {
			long n;
			if (r < 0)
				return -1;
			if (parse_long(val, 1, 1000000, &n))
				return error("--repetitions must be an integer from 1 to 1000000, got '%s'", val);
			o->filter.repetitions = (int)n;
		} else if ((r = opt_value(argc, argv, &i, "--only-variant", &val))) {
			if (r < 0)
				return -1;
			o->filter.variants = xrealloc(o->filter.variants,
				(o->filter.n_variants + 1) * sizeof(char *));
			o->filter.variants[o->filter.n_variants++] = (char *)val;
		} else if ((r = opt_value(argc, argv, &i, "--only-workload", &val))) {
			if (r < 0)
				return -1;
			o->filter.workloads = xrealloc(o->filter.workloads,
				(o->filter.n_workloads + 1) * sizeof(char *));
			o->filter.workloads[o->filter.n_workloads++] = (char *)val;
		} else if ((r = opt_value(argc, argv, &i, "--seed", &val))) {
			char *end;
			if (r < 0)
				return -1;
			errno = 0;
			unsigned long long s = strtoull(val, &end, 10);
			if (errno || !*val || *end || *val == '-')
				return error("--seed must be a non-negative integer, got '%s'", val);
			o->has_seed = 1;
			o->seed = s;
		} else if (!strcmp(a, "--dry-run")) {
			o->dry_run = 1;
		} else if (!strcmp(a, "--resume")) {
			o->resume = 1;
		} else if (!strcmp(a, "--skip-unavailable")) {
			o->skip_unavailable = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			perturb_quiet = 1;
		} else if ((r = opt_value(argc, argv, &i, "--target-ci", &val))) {
			double f;
			if (r < 0)
				return -1;
			if (parse_percent(val, &f) < 0 || !(f > 0) || f >= 10)
				return error("--target-ci must be a percentage above 0, e.g. '1%%', "
					     "got '%s'", val);
			o->target_ci = 100 * f;
		} else if ((r = opt_value(argc, argv, &i, "--max-time", &val))) {
			if (r < 0)
				return -1;
			if (parse_duration(val, &o->max_time) < 0 || !(o->max_time > 0))
				return error("--max-time must be a duration above 0, e.g. '10m', "
					     "got '%s'", val);
		} else if (!strcmp(a, "--self-check")) {
			o->self_check = 1;
		} else if (a[0] == '-' && a[1]) {
			return error("unknown option '%s' (see 'perturb help run')", a);
		} else if (!have_file) {
			o->file = a;
			have_file = 1;
		} else {
			return error("unexpected argument '%s' (one experiment file at a time)", a);
		}
	}
	if (o->max_time > 0 && !o->target_ci)
		return error("--max-time bounds --target-ci; give --target-ci too");
	if (o->resume && (o->filter.n_variants || o->filter.n_workloads ||
			  o->filter.repetitions || o->has_seed))
		return error("--resume completes the stored plan; it takes no --only-*, "
			     "--repetitions or --seed");
	return 0;
}

static char *join_argv(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "perturb");
	for (int i = 0; i < argc; i++)
		strbuf_addf(&sb, " %s", argv[i]);
	return strbuf_detach(&sb);
}

/*
 * study_widest_fn for --target-ci: the widest half-width of the CIs of the
 * wall-time dilation (in %) of the median and of the mean, over every
 * variant compared with the baseline on every workload, as the report
 * computes them with its default settings (confidence, bootstrap, nested
 * blocks; reports/report.h).  A comparison without an interval (fewer
 * than two runs a side, ...) makes it INFINITY.
 */
static int report_widest(struct store *st, int64_t run_id, double *widest, char *what,
			 size_t len, void *arg)
{
	char *wall = "wall";
	struct report_opts ro = {
		.run_id = run_id, .metrics = &wall, .n_metrics = 1,
		.percentiles = { 50 }, .n_percentiles = 1,
	};
	struct report_model m;
	int usage = 0;

	*widest = 0;
	snprintf(what, len, "no comparison");
	if (report_build(st, &ro, &m, &usage) < 0)
		return -1;
	for (size_t g = 0; g < m.n_groups; g++) {
		const struct report_group *gr = &m.groups[g];
		for (size_t i = 0; i < gr->n_series; i++) {
			const struct report_series *se = &gr->series[i];
			if (se->is_baseline)
				continue;
			for (int mean = 0; mean <= 1; mean++) {
				const struct report_dilation *d = mean ? &se->mean_dil : &se->pct_dil[0];
				const char *stat = mean ? "mean" : "p50";
				double hw;

				if (!se->compared || !d->ok || !d->d.ci_pct.has_ci) {
					*widest = INFINITY;
					snprintf(what, len, "%s / %s %s: no interval yet",
						 se->variant, gr->workload, stat);
					goto out;
				}
				hw = (d->d.ci_pct.hi - d->d.ci_pct.lo) / 2;
				if (hw >= *widest) {
					*widest = hw;
					snprintf(what, len, "%s / %s %s", se->variant,
						 gr->workload, stat);
				}
			}
		}
	}
out:
	report_release(&m);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	char *cmdline = NULL;
	int ret = EXIT_USAGE;

	if (parse_args(argc, argv, &o) < 0)
		goto out;
	cmdline = join_argv(argc, argv);
	struct study_opts so = {
		.file = o.file, .db = o.db, .filter = &o.filter,
		.has_seed = o.has_seed, .seed = o.seed,
		.dry_run = o.dry_run, .resume = o.resume,
		.skip_unavailable = o.skip_unavailable, .self_check = o.self_check,
		.target_ci = o.target_ci, .max_time = o.max_time,
		.widest = report_widest, .cmdline = cmdline,
	};
	switch (study_run(&so)) {
	case STUDY_DONE:
		ret = EXIT_OK;
		break;
	case STUDY_REFUSED:
		ret = EXIT_USAGE;
		break;
	case STUDY_FAILED:
		ret = EXIT_RUNTIME;
		break;
	}
out:
	free(cmdline);
	free(o.filter.variants);
	free(o.filter.workloads);
	return ret;
}
