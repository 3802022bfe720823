/*
 * slurm.h - Slurm's commands as perturb uses them (docs/distributed.md):
 * sbatch to submit a study's shards as one job array, squeue to wait for
 * it, scontrol to say what became of each task.  The commands are found
 * on PATH and read SLURM_CONF like any Slurm client; perturb keeps no
 * state of its own about the cluster (the job ids are in the shard rows
 * of the main database, store.h).
 *
 * Every function returns 0, or -1 after an error() naming the command and
 * what it printed.
 */
#ifndef PERTURB_SLURM_H
#define PERTURB_SLURM_H

#include <stddef.h>
#include "core/experiment.h"

/* 1 when sbatch is on PATH, else 0 with why set. */
int slurm_available(char *why, size_t len);

/*
 * Write the task script at path: it checks that marker (a file the
 * submitter wrote in the shared folder, holding token) is seen from the
 * node with the same content, else exits 2 with "the folder is not
 * shared"; then execs argv with every "{K}" replaced by the array task
 * index ($SLURM_ARRAY_TASK_ID) and "{{" by "{" (slurm_escape_k() writes a
 * path or a name so).  Every word, the marker's path in the message
 * included, is quoted for where it stands: no name or path runs anything.
 */
int slurm_write_script(const char *path, const char *marker, const char *token,
		       char *const *argv);
/* s with every "{" doubled, for a word of slurm_write_script()'s argv
 * (a path or a name that may hold "{K}"): malloc'd. */
char *slurm_escape_k(const char *s);

/* The marker of the shared-folder check: dir/.perturb-shared with a fresh
 * random token (*token malloc'd). */
int slurm_write_marker(const char *dir, char **marker, char **token);

/*
 * sbatch --parsable --exclusive --array=ARRAY[%max_parallel]
 * --job-name=NAME --output=OUTDIR/slurm-%A_%a.out [--partition, --account,
 * --time from cfg] [cfg's sbatch_args] SCRIPT.  *job_id: the array job's
 * id (malloc'd).
 */
int slurm_submit(const struct slurm_settings *cfg, const char *script, const char *array,
		 const char *name, const char *outdir, char **job_id);

/* What Slurm says of one array task. */
struct slurm_task {
	int index;		/* the array index */
	char state[32];		/* PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT,
				 * FAILED, NODE_FAIL, ... */
	char node[64];		/* "" while pending */
	char reason[128];	/* Slurm's Reason=, "" when None */
};

/* The tasks of array job job_id that the controller still knows (scontrol
 * show job; a finished job is forgotten after MinJobAge): *tasks
 * malloc'd, *n of them (0 when it knows none, which is no error). */
int slurm_tasks(const char *job_id, struct slurm_task **tasks, size_t *n);

/* How many tasks of the jobs are pending or running (squeue); a job is an
 * array job ("123": all its tasks) or one task ("123_4"). */
int slurm_active(char *const *job_ids, size_t n_jobs, size_t *active);

#endif
