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
#include "options.h"
#include "engine/study.h"
#include "engine/shard.h"
#include "engine/submit.h"
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
	const char *shard;	/* --shard K/N */
	int slurm, wait;	/* --slurm, --wait */
	int shards;		/* --shards N */
};

/* --shard, --slurm, --wait, --shards (docs/distributed.md): 0 or -1
 * (printed: exit 2). */
static int check_slurm_args(const struct run_opts *o, int *k, int *n)
{
	*k = -1;
	*n = 0;
	if (o->shard && shard_parse(o->shard, k, n) < 0)
		return error("--shard takes K/N with 0 <= K < N, got '%s'", o->shard);
	if (o->shard && o->slurm)
		return error("--shard is what --slurm's tasks run; give one or the other");
	if ((o->wait || o->shards) && !o->slurm)
		return error("--%s goes with --slurm", o->wait ? "wait" : "shards");
	if ((o->shard || o->slurm) && (o->target_ci || o->skip_unavailable))
		return error("a study in shards takes no %s: every shard runs the same design",
			     o->target_ci ? "--target-ci" : "--skip-unavailable");
	if (o->shard && o->resume)
		return error("--shard resumes its database's unfinished run by itself; "
			     "it takes no --resume");
	return 0;
}

/* perturb run --slurm: submit (or resubmit), and with --wait, merge. */
static int run_slurm(const struct run_opts *o, const char *cmdline)
{
	struct submit_opts so = {
		.file = o->file, .db = o->db, .filter = &o->filter,
		.has_seed = o->has_seed, .seed = o->seed, .self_check = o->self_check,
		.shards = o->shards, .resume = o->resume, .wait = o->wait,
		.cmdline = cmdline,
	};
	switch (submit_run(&so)) {
	case STUDY_DONE:
		return EXIT_OK;
	case STUDY_REFUSED:
		return EXIT_USAGE;
	default:
		return EXIT_RUNTIME;
	}
}

/* 0, -1 (printed: exit 2) or OPT_EXIT_DONE (help printed: exit 0). */
static int parse_args(int argc, char **argv, struct run_opts *o)
{
	struct opt opts[] = {
		OPT_ARG("EXPERIMENT.yaml", &o->file, "default ./experiments.yaml"),
		OPT_STRING(0, "db", &o->db, "PATH", "results database (default results/perturb.db)"),
		OPT_INTEGER(0, "repetitions", &o->filter.repetitions, 1, 1000000, "N",
			    "measured runs per (variant, workload), overrides the file"),
		OPT_LIST(0, "only-variant", &o->filter.variants, &o->filter.n_variants, "NAME",
			 "run this variant (and the baseline); repeatable, or NAME,NAME"),
		OPT_LIST(0, "only-workload", &o->filter.workloads, &o->filter.n_workloads, "NAME",
			 "run this workload; repeatable, or NAME,NAME"),
		OPT_UNSIGNED(0, "seed", &o->seed, "N",
			     "seed of the run order (default: the file's, or drawn)"),
		OPT_FLAG(0, "dry-run", &o->dry_run, "print the plan; run and write nothing"),
		OPT_FLAG(0, "resume", &o->resume,
			 "complete the latest interrupted run of this experiment"),
		OPT_FLAG(0, "skip-unavailable", &o->skip_unavailable,
			 "run what this machine can; report the rest as skipped"),
		OPT_PERCENT(0, "target-ci", &o->target_ci, 0, 10, OPT_ABOVE_MIN, "X%",
			    "after the plan, add interleaved rounds until every wall\n"
			    "dilation CI (p50 and mean) is at most +-X wide"),
		OPT_DURATION(0, "max-time", &o->max_time, 0, INFINITY, OPT_ABOVE_MIN, "D",
			     "with --target-ci: stop adding rounds after D (default 10m)"),
		OPT_FLAG(0, "self-check", &o->self_check,
			 "add an A/A pair: the baseline again (BASELINE~aa) and\n"
			 "without counters (BASELINE~nocounters)"),
		OPT_FLAG(0, "slurm", &o->slurm,
			 "run the study as a Slurm job array of shards\n"
			 "(engine: slurm: in the file; docs/distributed.md)"),
		OPT_INTEGER(0, "shards", &o->shards, 1, 100000, "N",
			    "with --slurm: split into N shards (default the file's, or 4)"),
		OPT_FLAG(0, "wait", &o->wait,
			 "with --slurm: wait for the tasks, then merge their results"),
		OPT_STRING(0, "shard", &o->shard, "K/N",
			   "run shard K of N only (what a --slurm task runs)"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "print only errors"),
		OPT_END(),
	};
	int rc;

	o->file = "experiments.yaml";
	o->db = "results/perturb.db";
	if ((rc = parse_options(argc, argv, opts, "run")))
		return rc;
	o->has_seed = !!opt_given(opts, &o->seed);
	o->target_ci *= 100;	/* in % */
	if (o->max_time > 0 && !o->target_ci)
		return error("--max-time bounds --target-ci; give --target-ci too");
	if (o->resume && !o->slurm && (o->filter.n_variants || o->filter.n_workloads ||
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

	switch (parse_args(argc, argv, &o)) {
	case 0:
		break;
	case OPT_EXIT_DONE:
		ret = EXIT_OK;
		/* fall through */
	default:
		goto out;
	}
	int shard, n_shards;
	if (check_slurm_args(&o, &shard, &n_shards) < 0)
		goto out;
	cmdline = join_argv(argc, argv);
	if (o.slurm) {
		ret = run_slurm(&o, cmdline);
		goto out;
	}
	struct study_opts so = {
		.n_shards = n_shards, .shard = shard,
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
