/*
 * study.h - running a study: the executor behind `perturb run`.
 *
 * study_run() loads the experiment file, checks everything that can be
 * checked (every selected variant through its backend's check(), every
 * workload's requires:), builds the plan (or, with resume, loads the
 * stored one), and only then writes: the run, the workloads' setup, and
 * the walk of the plan: switch variants through their backends
 * (backend.h), prepare, run, store each result as soon as it exists
 * (committed in batches of at most 50 ms: store.h, STORE_BATCH_S).  Progress goes to stderr (note(), warning(), the
 * progress line on a terminal); dry_run prints the plan on stdout.
 *
 * Stop paths: SIGINT/SIGTERM/SIGHUP (core/stop.h) end the current run (it
 * is not stored), leave the active variant, mark the run "interrupted";
 * the stored plan lets resume finish exactly the runs still missing.
 *
 * target_ci: after the plan's last run, the study asks widest() for the
 * widest interval so far (the caller decides how intervals are computed:
 * perturb run asks the report model) and adds interleaved rounds
 * (plan_add_round) until it is at most target_ci or max_time is spent.
 */
#ifndef PERTURB_STUDY_H
#define PERTURB_STUDY_H

#include <stddef.h>
#include <stdint.h>
#include "plan.h"
#include "store.h"

/* --self-check's variants: the baseline's name and these suffixes. */
#define STUDY_SELF_CHECK_AA "~aa"
#define STUDY_SELF_CHECK_NOCOUNTERS "~nocounters"
/* target_ci without max_time: ten minutes in all. */
#define STUDY_DEFAULT_MAX_TIME 600.0
/* Variants' builds (kernels) that took at least this many seconds leave a
 * load average of perturb's own: the run stores the one from before them
 * (runs.loadavg).  2 s of one busy CPU raise the 1-minute average by at
 * most 0.07. */
#define STUDY_BUILD_LOAD_S 2.0

enum study_result {
	STUDY_DONE,	/* every run stored (some may have failed: said) */
	STUDY_REFUSED,	/* a usage or configuration error: nothing run, nothing written */
	STUDY_FAILED,	/* a failure while running, a stop, or a (variant, workload)
			 * whose every run failed; what is stored stays */
};

/*
 * The widest half-width, in % of the baseline, of the intervals of the
 * wall-time dilation of every compared (variant, workload) of run_id, on
 * the runs stored so far: *widest, and in what names it (or the comparison
 * that has no interval yet: then *widest is INFINITY).  0, or -1 (printed).
 */
typedef int study_widest_fn(struct store *st, int64_t run_id, double *widest,
			    char *what, size_t len, void *arg);

/*
 * After the plan's last run and each round added after it (perturb
 * bisect): 1 to add another interleaved round, 0 to end the run; rounds
 * is the number added so far.  -1 on an error (printed).
 */
typedef int study_more_fn(struct store *st, int64_t run_id, int rounds, void *arg);

struct study_opts {
	const char *file;	/* the experiment file */
	const char *db;		/* the results database */
	const struct plan_filter *filter;	/* NULL: everything; not changed */
	int has_seed;
	uint64_t seed;
	int dry_run;		/* print the plan; run and write nothing */
	int resume;		/* finish the stored plan of this file's latest
				 * unfinished run (no filter, no seed) */
	int skip_unavailable;	/* skip what this machine cannot run */
	int self_check;		/* add BASELINE~aa and BASELINE~nocounters */
	double target_ci;	/* in %; 0 = no rounds added */
	double max_time;	/* bound of target_ci in s; 0 = STUDY_DEFAULT_MAX_TIME */
	study_widest_fn *widest;	/* required with target_ci */
	void *widest_arg;
	study_more_fn *more;	/* without target_ci: rounds added while it
				   says 1 (NULL: none) */
	void *more_arg;
	const char *cmdline;	/* stored with the run, e.g. "perturb run e.yaml" */
	const char *label;	/* stored with the run (perturb run --label), or NULL */
	const char *revision;	/* a git work tree whose revision the run stores
				 * (engine/revision.h; perturb bisect's), NULL:
				 * the experiment's revision: key, if any */
	/* A study split into shards (engine/shard.h, docs/distributed.md):
	 * n_shards > 0 builds the sharded plan.  shard >= 0 (a task, perturb
	 * run --shard K/N) runs only shard K's entries, recording this task's
	 * Slurm job and node with the shard; when db holds an unfinished run
	 * of this experiment it is resumed (a task run again finishes what
	 * its last attempt left).  shard < 0 with submit (perturb run
	 * --slurm) prepares instead: checks, builds what backends build, and
	 * stores the run, its plan and its shards, each shard's database
	 * path beside db (shard_db_path()), and runs nothing; *run_id_out
	 * is the stored run (and, without submit, the run begun). */
	int n_shards, shard;
	int submit;
	int64_t *run_id_out;
};

enum study_result study_run(const struct study_opts *o);

/*
 * While a run is executed (or resumed) its process holds the run's lock
 * (study.c, run_lock(): byte 2N of the database file, an open file
 * description lock, which the kernel drops when the process ends however
 * it ends).  study_run_held(): 1 when a process holds run_id's lock in
 * database db, 0 when none does, -1 when it cannot be told.
 * study_listed_status(): the status a run is listed with (perturb runs,
 * the report's header and JSON, gate and compare): its stored one, but
 * "interrupted" for a run stored "running" whose lock no process holds -
 * its process was killed (SIGKILL, a power cut) before it could say so -
 * unless the run is a study split in shards (docs/distributed.md: its
 * tasks run in databases of their own).  A static string or stored.
 */
int study_run_held(const char *db, int64_t run_id);
const char *study_listed_status(struct store *st, const char *db, int64_t run_id,
				const char *stored);

#endif
