/*
 * merge.h - folding the databases of a study's shards into its main
 * database (perturb merge, perturb run --slurm --wait; docs/distributed.md).
 *
 * A shard's database holds one run of the same experiment (the same
 * SHA-256 of the text) and the same plan (shard_plan_hash()) as the main
 * run; anything else is refused with the reason.  Results of the shard's
 * seqs are copied in, every column the schema has (store_merge_results():
 * PRAGMA table_info, not a list of names; a result the main database
 * has already is never stored twice, so merging again is harmless), and
 * the shard's row in the main database takes the task's job and node.
 * When every entry of the plan has a result the main run is "completed".
 */
#ifndef PERTURB_MERGE_H
#define PERTURB_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

struct merge_totals {
	size_t added;		/* results copied by this merge */
	size_t merged;		/* shards whose database was read */
	size_t missing;		/* shards without a database yet */
	size_t refused;		/* shard databases refused (said) */
	size_t done, total;	/* results in the main run / plan entries */
};

/* Merge every shard of run_id whose database exists (the paths stored at
 * submission), or only the files given (n_files > 0: each file's shard is
 * the one its task recorded).  A refused or unreadable shard database is
 * an error() and counted; the others are merged anyway.  0, or -1 on an
 * error of the main database. */
int merge_run(struct store *st, int64_t run_id, char *const *files, size_t n_files,
	      struct merge_totals *t);

/* The run of the main database that merge and status are about: run_id
 * when > 0, else the newest run that has shards.  0, or -1 (printed). */
int merge_find_run(struct store *st, int64_t run_id, int64_t *out);
/* Open db (which must exist; STORE_READ for a command that only reads,
 * perturb status) and find that run: 0; -1 (printed) when db cannot be
 * opened (*st NULL); -2 (printed) when it holds no such run (*st open:
 * close it). */
int merge_open(const char *db, enum store_mode mode, int64_t run_id, struct store **st,
	       int64_t *out);

/* What a shard's own database says: *n_results of its seqs, its run's
 * status (malloc'd), the task's job and node (malloc'd, NULL when not
 * recorded).  -1 (printed) when the file is missing or not a
 * readable results database. */
int merge_peek_shard(const char *db, int shard, int *n_results, char **status,
		     char **job, char **node);

#endif
