/*
 * shard.h - a study split into shards for a cluster (docs/distributed.md).
 *
 * A sharded plan is N plans one after the other: shard K is the plan that
 * plan_build() makes for the experiment with every workload's repetitions
 * R cut to R / N (the first R % N shards one more) and the seed seed + K.
 * So each shard is a complete replicate of the design: every variant and
 * workload, in the study's order (interleaved rounds, or whole ABBA boot
 * cycles with their own warm-ups: a node is cold when its task starts),
 * and a node that runs a shard sees every variant.  In the whole plan the
 * seqs of shard K are [seq_lo, seq_hi); its rounds and blocks follow those
 * of shard K - 1 (a block is one boot: no two shards share one), and its
 * repetitions follow those of shard K - 1 for each (variant, workload), so
 * that a merged study numbers its runs as one study would.
 *
 * Every workload needs R >= N (a shard without a run of a workload would
 * not be a replicate): else an error.
 */
#ifndef PERTURB_SHARD_H
#define PERTURB_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include "plan.h"
#include "store.h"

/* The sharded plan (see above) and its N shard rows (*rows malloc'd, db,
 * job and node NULL).  0, or -1 with err set. */
int shard_plan_build(const struct experiment *exp, const struct plan_filter *filter,
		     uint64_t seed, int n_shards, struct plan *out,
		     struct store_shard **rows, char *err, size_t errlen);

/* SHA-256 (hex) of a plan: every entry's seq, variant, workload,
 * repetition, warm-up flag, round and block.  Two databases hold the same
 * plan when the hashes are equal. */
void shard_plan_hash(const struct plan *p, char out[65]);

/* "K/N" with 0 <= K < N <= 100000: 0, or -1 (nothing printed). */
int shard_parse(const char *s, int *k, int *n);

/* The database of shard k beside the main database main_db:
 * DIR/shards/run-ID/shard-K.db (malloc'd). */
char *shard_db_path(const char *main_db, int64_t run_id, int k);
char *shard_dir(const char *main_db, int64_t run_id);

/* Provenance of the task running this process, from Slurm's environment
 * (SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_JOB_ID, SLURMD_NODENAME):
 * row->job = "ARRAY_TASK (job JOBID)" and row->node = the node name
 * (gethostname() outside Slurm), both malloc'd (freed first). */
void shard_set_provenance(struct store_shard *row);

#endif
