/*
 * submit.h - a study on a Slurm cluster (perturb run --slurm; perturb
 * status; docs/distributed.md).
 *
 * submit_run() checks and prepares the study on this machine (study_run()
 * with submit: everything is validated, kernels built, the run, its plan
 * and its shards stored in the main database), checks that the folder of
 * the main database is shared with the nodes (a marker file each task
 * reads before it starts: a node that does not see it fails with "not
 * shared"), and submits one job array, one task per shard: `perturb run
 * FILE --shard K/N --seed SEED --db DIR/shards/run-ID/shard-K.db`.  With
 * resume it finds this experiment's unfinished split run instead, merges
 * what its shards hold, and resubmits only the shards with runs still
 * missing whose tasks are neither pending nor running.  With wait it then
 * waits (squeue every poll_s, longer as the wait goes on, up to 10 s) until
 * none of the run's tasks is queued or running, and merges (merge.h).
 */
#ifndef PERTURB_SUBMIT_H
#define PERTURB_SUBMIT_H

#include <stddef.h>
#include <stdint.h>
#include "plan.h"
#include "study.h"

struct submit_opts {
	const char *file, *db;
	const struct plan_filter *filter;	/* passed on to every task */
	int has_seed;
	uint64_t seed;
	int self_check;
	int shards;		/* > 0 overrides engine: slurm: shards: */
	int resume, wait;
	double poll_s;		/* first interval of the wait; 0 = 1 s */
	const char *cmdline;
};

/* STUDY_DONE (submitted; with wait: every run merged), STUDY_REFUSED
 * (nothing submitted), STUDY_FAILED (a Slurm or database failure, or,
 * with wait, shards that ended with runs missing: said). */
enum study_result submit_run(const struct submit_opts *o);

/* One shard as perturb status shows it. */
struct shard_status {
	int shard;
	const char *state;	/* "not submitted", "pending", "running", "done",
				 * "failed" */
	char node[64];		/* where it runs or ran, "" when unknown */
	char reason[192];	/* for failed: Slurm's state and reason, or the
				 * shard database's */
	int merged;		/* results in the main database */
	int in_shard;		/* results in its own database */
	int total;		/* plan entries */
};

/* The state of each shard of run_id (merge_find_run() picks it): Slurm's
 * word (scontrol) when it still knows the task, else the shard's
 * database.  *st malloc'd, *n of them. */
int submit_status(struct store *s, int64_t run_id, struct shard_status **st, size_t *n);

#endif
