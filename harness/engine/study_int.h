/*
 * study_int.h - what the files of the executor share (study.h is its
 * interface): study.c loads, checks and begins a study and ends it;
 * study_walk.c walks its plan.  Private to study*.c.
 */
#ifndef PERTURB_STUDY_INT_H
#define PERTURB_STUDY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "study.h"
#include "revision.h"
#include "plan.h"
#include "store.h"
#include "backends/backend.h"
#include "core/experiment.h"
#include "lib/machine.h"

struct study {
	const struct study_opts *o;
	struct experiment exp;
	struct plan_filter filter;	/* o's, and --self-check's variants */
	struct plan plan;
	uint64_t seed;
	struct store *st;
	int64_t run_id;
	struct machine_info mi;
	struct revision rev;	/* what the run measured (revision.h), zeroed: none */
	unsigned char *done;	/* resume: entries stored already */
	unsigned char *skip_v, *skip_w;	/* skipped as unavailable */
	char *dbdir, *workroot, *logdir;
	char **workdirs;	/* per workload, absolute; NULL when not used */
	char **base_env;
	struct backend_ctx *ctx;	/* per variant */
	struct counter_set *counters;
	struct store_shard *shards;	/* n_shards rows, or NULL */
	int resuming;		/* the plan is a stored run's */
	int nocounters;		/* --self-check's variant without counters, or -1 */
	size_t n_real_variants;	/* before --self-check's */
	int active, active_block;	/* the variant entered and its block (plan.h) */
	int entry_seq;		/* the plan entry the active block was entered for */
	int duet_cpus[2];	/* order: duet's two CPUs (study_duet_cpus()) */
	int stopped;		/* the stop signal, 0 when none */
	int walked;		/* the walk reached the end of the plan (and its rounds) */
	int rounds;		/* added by target_ci */
	int lock_fd;		/* DB.lock (run_lock), -1 when not open */
	int db_lock_fd;		/* the database file (run_lock), -1 when not open */
	int began;		/* begin() made perturb's cgroup (when it could) */
	size_t n_ok, n_bad;
	double t0;
};

/* Run each of cmds[0..n) (its words' placeholders expanded, unless
 * verbatim: placeholders: false) in workdir with envp, each within timeout
 * seconds (0: none); what names them in messages.  0, or -1 (printed) at
 * the first that fails. */
int study_run_commands(const struct argv_list *cmds, size_t n, char **envp,
		       const char *workdir, double timeout, const char *what, int verbatim);

/*
 * The two CPUs of a duet: the first two of the experiment's cpus:, else
 * the first two CPUs perturb may run on (its affinity: the online CPUs its
 * cpuset allows).  0, or -1 with the reason in why.
 */
int study_duet_cpus(const struct experiment *exp, int cpus[2], char *why, size_t len);

/* Walk the plan (and target_ci's rounds); then leave the active variant.
 * 0 when done or stopped (s->stopped), -1 (printed). */
int study_walk(struct study *s);

/* Leave the active variant (next: the variant entered right after, or
 * NULL), and store how long that took; -1 when its backend failed to, or
 * the store. */
int study_leave_active(struct study *s, const struct variant *next);

#endif
