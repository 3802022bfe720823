/*
 * store.h - the results database (SQLite).
 *
 * Schema version 11 (PRAGMA user_version; store_open migrates older
 * databases forward, refuses newer ones; v2 added plan.block and
 * variants.timebase, v3 the table matrix, v4 results.output_dropped, v5 shards,
 * v6 calibration and tracer_variants, v7 results.cpu and start_mono,
 * v8 block_entries and results.cost_s, v9 calibration.ops_metric, v10
 * runs.label, repo, revision and commit_id, v11 workloads.primary_metric):
 *   experiments(id, name, path, text, sha256)
 *   runs(id, experiment_id, name, baseline, seed, "order", argv, started,
 *        ended, status, perturb_version, machine_json,
 *        kernel_release, kernel_cmdline, cpu_model, cores, governor, smt,
 *        aslr, loadavg, label, repo, revision, commit_id)
 *                                          one row per `perturb run`; v10:
 *                                          label (perturb run --label), the
 *                                          revision: work tree's top folder,
 *                                          git describe --always --dirty and
 *                                          full commit id (NULL: none)
 *   variants(run_id, idx, name, description, timebase)
 *                                          timebase: "virtual" when the variant's
 *                                          times count executed instructions
 *                                          (its backend's, backend.h), else "real"
 *   workloads(run_id, idx, name, kind, description, primary_metric)
 *                                          primary_metric: the workload's
 *                                          primary: (its answer; NULL: wall)
 *   plan(run_id, seq, variant, workload, variant_idx, workload_idx,
 *        repetition, warmup, round, block) variant/workload by name and idx;
 *                                          block: the unit entered at once
 *                                          (plan.h; 0 in plans stored by v1)
 *   results(run_id, seq, status, exit_code, signal, reason, started,
 *           wall_s, user_s, sys_s, maxrss_kb, output_tail, output_dropped,
 *           cpu, start_mono, cost_s)
 *                                          one row per finished run; output_dropped:
 *                                          bytes of its output not kept (runner.h);
 *                                          v7: cpu, the CPU a run was pinned to
 *                                          when one, start_mono the CLOCK_MONOTONIC
 *                                          second its timed window opened (NULL:
 *                                          not known; order: duet's pairs);
 *                                          v8: cost_s the seconds the engine spent
 *                                          on the run: its workload's prepare
 *                                          commands, the backend's run and its
 *                                          result (NULL: not measured, order:
 *                                          duet's pairs and stores before v8)
 *   block_entries(run_id, first_seq, enter_s, leave_s)
 *                                          v8: one row per entry of a variant's
 *                                          block (plan.h: a boot of a boot:
 *                                          variant), made for plan entry
 *                                          first_seq (its variant and block are
 *                                          that plan row's): the seconds its
 *                                          backend's enter() took, and leave()
 *                                          (NULL until left); a block entered
 *                                          again by --resume at the same seq
 *                                          keeps the last entry
 *   metric_values(run_id, seq, metric, value, unit, scaled,
 *                 time_enabled_ns, time_running_ns)
 *                                          regex metrics and counters (counters.h:
 *                                          metric = the counter name as written,
 *                                          unit "count" or "ns"); scaled = 1 when a
 *                                          multiplexed counter's value was scaled
 *                                          (raw * enabled / running); the times are
 *                                          NULL but for perf_event counters
 *   matrix(run_id, kind, name, base, param, value, x, is_list)
 *                                          the parameters of each instance of a
 *                                          matrix (engine/matrix.h): kind "variant"
 *                                          or "workload", name the instance's, base
 *                                          the name as written; x the value on a
 *                                          numeric axis (NULL: not a number)
 *   shards(run_id, shard, n_shards, seq_lo, seq_hi, db, job, node,
 *          plan_sha256)
 *                                          v5: a study split for a cluster
 *                                          (engine/shard.h): shard K holds the
 *                                          plan's seqs [seq_lo, seq_hi), its
 *                                          results in database db (until merged),
 *                                          run by Slurm task job on node;
 *                                          plan_sha256: the whole plan's hash
 *                                          (engine/shard.h), so that a merge
 *                                          compares plans without reading them
 *   calibration(run_id, workload, hits, hits_metric, metric, ops_metric)
 *                                          v6: a workload's calibration: block
 *                                          (reports/calib.h); v9: ops_metric
 *   tracer_variants(run_id, variant, tracer, attach)
 *                                          v6: each traced variant's tracer and
 *                                          attach type (backends/tracers.h)
 *   unavailable(run_id, metric, reason)     counters/metrics that could not be measured
 *                                          (a counter this machine cannot count has a
 *                                          row here and no metric_values rows)
 * "status" of a run row: running | completed | interrupted | failed.
 * "status" of a result: ok | failed | crashed | timeout | error.
 *
 * Every store_* function returns 0 on success or -1 after printing an
 * error() naming the database.  The results go in batches of at most
 * STORE_BATCH_S (below), every other write in a transaction of its own.
 * The database uses WAL (synchronous=NORMAL) and prepared statements only:
 * a committed result survives a SIGKILL or crash of perturb, and the file
 * is never left half-written; a power loss or kernel crash can lose the
 * last commits, not corrupt the file (commits are not fsync'd one by one:
 * store_schema.c says what that would cost).  A failed write is rolled
 * back whole (a failed result: itself, not its batch).
 *
 * Reserved metric names (core/result.h, result_reserved_metrics[]): "wall",
 * "user", "sys" and "maxrss" are columns of results; store_put_result()
 * refuses a run_result value with one of those names, or with a name twice.
 */
#ifndef PERTURB_STORE_H
#define PERTURB_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "plan.h"
#include "core/runner.h"

struct store;

#define STORE_SCHEMA_VERSION 11

/*
 * Open a results database.
 *   STORE_WRITE (0)   an existing file, read and written (perturb run
 *                     --resume): WAL is turned on, an older schema migrated
 *                     in the file;
 *   STORE_CREATE (1)  the same, made (with its folder) when missing;
 *   STORE_READ        read only (report, compare, gate, runs, status):
 *                     nothing is ever written, the journal mode is left as
 *                     it is, a read-only file, folder or medium is fine (a
 *                     database in WAL mode whose -shm this user cannot
 *                     make is read as immutable, unless its -wal holds
 *                     changes: refused, saying so).  The file must be a
 *                     perturb database (an empty file or another program's
 *                     SQLite file is refused, saying which) and pass
 *                     SQLite's quick_check: a damaged file is refused with
 *                     the command that saves what can be read (a report of
 *                     the rows that still read would be silently partial).
 *                     An older schema is migrated in a copy in memory.
 * Without STORE_CREATE a missing file is the error "no results database at
 * 'PATH'" and nothing is created.  A file that is not SQLite, an SQLite
 * file of some other program, or a database of a newer schema version than
 * STORE_SCHEMA_VERSION is refused.  Close with store_close() (NULL is
 * fine).
 */
enum store_mode { STORE_WRITE = 0, STORE_CREATE = 1, STORE_READ = 2 };
int store_open(const char *path, enum store_mode mode, struct store **out);
/* Tests only: on (1), a new database is made by every migration in turn
 * instead of at once (store_schema.c: schema_new), to compare the two. */
void store_new_by_migrations(int on);
void store_close(struct store *s);

/* Machine provenance, gathered by machine_probe() (machine.h). */
struct machine_info;

struct run_header {
	int64_t id;
	char *experiment;	/* name */
	char *path;
	char *baseline;
	uint64_t seed;
	char *order;
	char *started, *ended;	/* ISO 8601 UTC; ended NULL while running */
	char *status;
	char *machine_json;
	char *sha256;
};
void run_header_release(struct run_header *h);

/* Start a run: stores the experiment (deduplicated by hash), the run row with
 * status "running", its variants, workloads and the whole plan, in one
 * transaction.  argv is the command line, joined.  The experiment's sha256 is
 * sha256_hex() of exp->text (text_len bytes); the first path a text was seen
 * under is kept.  m may be NULL (machine columns left NULL).  plan entries
 * must have seq == their index and valid variant/workload indices. */
struct run_tags {
	const char *label;	/* perturb run --label, or NULL */
	const char *repo, *revision, *commit;	/* engine/revision.h's, or NULL */
};
int store_begin_run(struct store *s, const struct experiment *exp,
		    const struct plan *plan, uint64_t seed, const char *argv,
		    const struct machine_info *m, const struct run_tags *tags,
		    int64_t *run_id);
/* Entries plan->e[from..n) of a started run's plan, added afterwards (perturb
 * run --target-ci): one transaction; their seqs must be from, from + 1, ...
 * (as plan_add_round() numbers them).  store_load_plan() returns them with
 * the others, so --resume runs the missing ones too. */
int store_append_plan(struct store *s, const struct experiment *exp,
		      const struct plan *plan, size_t from, int64_t run_id);
/* One finished run (plan entry seq) and its metric values, written in the
 * batch of results (below).  exit_code is stored for ok/failed, signal for
 * crashed (else NULL), out_tail (as results.output_tail) for every status
 * but ok.  Refused at once: RUN_INTERRUPTED, a reserved metric name, a
 * name twice, a second result for a seq of the batch.  Refused when the
 * batch is written (this call when the batch is due, else store_flush()
 * or the next statement of the store, each then -1): a seq stored
 * already or not in the plan.  A refused or failed result leaves nothing
 * of itself, and the batch stays. */
int store_put_result(struct store *s, int64_t run_id, int seq,
		     const struct run_result *r);
/*
 * The batch of results: a commit costs more than the inserts of a run
 * (bench/harness-breakdown.sh, store: 54 us a run of /bin/true committed one
 * by one), so results go into one transaction, committed by the
 * first store_put_result() at least STORE_BATCH_S after the last commit
 * (so a slow run's result is committed at once), by store_flush(), and
 * before anything else is written or the store closed (store_end_run(),
 * store_set_status(), every transaction of its own, store_close()).  A
 * SIGKILL loses at most the results that came within STORE_BATCH_S of
 * the last commit (--resume runs them again).  The batch's rows are
 * inserted when it is committed or before any other statement of the
 * store (store_int.h, struct pending), so that this connection's queries
 * see them too.  store_flush_due(): when
 * an open batch is due to be committed even though no result comes
 * (STORE_BATCH_S after it became due: a long run is on, the study
 * commits from its wait, core/proc.h proc_call_at()), so that a reader
 * sees a result at most 2 * STORE_BATCH_S after it was stored; 0 when
 * nothing waits.  store_flush(): 0 or -1 (printed).
 */
#define STORE_BATCH_S 0.05
int store_flush(struct store *s);
/* The batch's bound in seconds instead of STORE_BATCH_S (0: every result
 * committed at once; the tests hold a batch open with a long one). */
void store_set_batch(struct store *s, double seconds);
double store_flush_due(const struct store *s);
/* store_put_result() with the run's cost (results.cost_s, seconds; NaN or
 * negative: not measured, stored NULL). */
int store_put_result_cost(struct store *s, int64_t run_id, int seq,
			  const struct run_result *r, double cost_s);
/* A block entry (block_entries): leave 0 records that the block entered
 * for plan entry first_seq took secs to enter (replacing an earlier entry
 * at that seq), leave 1 that it took secs to leave.  Written in the batch
 * of results (store_flush()): a block of one run enters and leaves at
 * every run. */
int store_put_block_time(struct store *s, int64_t run_id, int first_seq, int leave,
			 double secs);
/*
 * What a run's blocks and runs cost, as the engine measured them (v8:
 * block_entries, results.cost_s): per variant idx, vc[vi]; per workload
 * and variant idx, rc[wi * n_variants + vi], the measured (not warm-up)
 * results with a cost.  Zeroed first; rows of an idx outside the bounds
 * are not counted.  A run stored before v8 has none: every count 0.
 */
struct store_block_cost {
	size_t entries;		/* block entries recorded */
	double switch_s;	/* the seconds their enter() and leave() took, summed */
	double warmup_s;	/* the costs of the variant's warm-up runs, summed */
};
struct store_run_cost {
	size_t n;		/* measured results with a cost */
	double sum_s;		/* their costs, summed */
};
int store_block_costs(struct store *s, int64_t run_id, size_t n_variants, size_t n_workloads,
		      struct store_block_cost *vc, struct store_run_cost *rc);
/* A metric or counter this run could not measure (stored once per name:
 * the first reason given is kept). */
int store_put_unavailable(struct store *s, int64_t run_id, const char *metric,
			  const char *reason);
/* Calls fn for every unavailable metric of a run, by name; strings are valid
 * during the call only.  fn returning non-zero stops the walk and is
 * returned. */
typedef int (*store_unavailable_fn)(const char *metric, const char *reason,
				    void *ctx);
int store_each_unavailable(struct store *s, int64_t run_id,
			   store_unavailable_fn fn, void *ctx);
/* Set the run's status (running | completed | interrupted | failed; anything
 * else is refused) and its end time (now).  Error when there is no such run. */
int store_end_run(struct store *s, int64_t run_id, const char *status);

/* The newest run not "completed" whose experiment has this sha256; 0 and
 * *run_id = 0 when there is none. */
int store_find_resumable(struct store *s, const char *sha256, int64_t *run_id);
/* Plan of a stored run, and which seqs already have a result (done[seq]=1,
 * *done malloc'd, n = plan size).  Variant/workload indices refer to the
 * stored variant/workload order (= the experiment's order).  *plan is
 * overwritten (release it with plan_release()); on error *plan is empty and
 * *done NULL.  Error when there is no such run. */
int store_load_plan(struct store *s, int64_t run_id, struct plan *plan,
		    unsigned char **done);
/* Like store_end_run() without touching the end time. */
int store_set_status(struct store *s, int64_t run_id, const char *status);

/* Latest run id (0 if the database holds none). */
int store_latest_run(struct store *s, int64_t *run_id);
/*
 * The run a command's --run names (docs/perturb.1): NULL, "" or "latest"
 * the latest run; "-N" the Nth latest ("-1" the latest, "-2" the one
 * before); "N" (a positive integer) the run of that id.  Error (printed)
 * when there is no such run, saying which runs the database holds and how
 * to list them; *usage (may be NULL) set to 1 then, 0 for a database error.
 */
int store_resolve_run(struct store *s, const char *spec, int64_t *run_id, int *usage);

/* A result that is not ok (store_each_failure()). */
struct stored_failure {
	int seq, repetition, warmup;
	const char *variant, *workload, *status, *reason;
	const char *output_tail;	/* the end of its stdout then stderr
					   (RUNNER_TAIL_BYTES at most), "" when none */
};
typedef int (*store_failure_fn)(const struct stored_failure *f, void *ctx);
/* Calls fn for every result of a run whose status is not ok, by seq;
 * strings valid during the call only.  fn returning non-zero stops the
 * walk and is returned. */
int store_each_failure(struct store *s, int64_t run_id, store_failure_fn fn, void *ctx);

/* One stored run, as `perturb runs` lists it. */
struct run_summary {
	int64_t id;
	char *name, *started, *ended, *status;	/* ended NULL while running */
	char *hostname, *cpu_model, *kernel_release;	/* NULL when not recorded */
	int64_t cores;		/* 0 when not recorded */
	int64_t done, total;	/* plan entries with a result / in the plan */
	int64_t failed;		/* results whose status is not ok */
	char *label, *revision, *commit;	/* run_tags' (NULL: none) */
	char *sha256;		/* the experiment's */
	char *repo;		/* the revision: work tree's top folder, or NULL */
};
/* Every run, by id: *runs malloc'd (free with run_summaries_release()). */
int store_list_runs(struct store *s, struct run_summary **runs, size_t *n);
/* As store_list_runs() without the counts (done, total and failed are 0),
 * which read every plan entry and result of every run (at 10^6 runs, a
 * tenth of `perturb report`): to find a run by id or experiment, then
 * store_run_counts() for the one found. */
int store_list_runs_brief(struct store *s, struct run_summary **runs, size_t *n);
/* A run's plan entries (total) and those with a result (done). */
int store_run_counts(struct store *s, int64_t run_id, int64_t *done, int64_t *total);
void run_summaries_release(struct run_summary *runs, size_t n);
/* Fills *h (release with run_header_release()); error when there is no such
 * run.  experiment is the experiment's name, path the path it was first
 * stored from. */
int store_run_header(struct store *s, int64_t run_id, struct run_header *h);

/* One stored measurement value, for reports. */
struct stored_value {
	int seq;
	const char *variant, *workload, *metric, *unit, *status;
	int repetition, warmup;
	double value;
	/* Added for counters (keep new fields at the end): 1 when the value
	 * is a multiplexed counter's scaled estimate, which a report should
	 * flag; 0 for every other value. */
	int scaled;
	/* The names as numbers, for callers that group without comparing
	 * strings: variant and workload by stored index (store_variant_names()
	 * and store_workload_names() order); metric_idx 0-3 for wall, user,
	 * sys, maxrss, then 4, 5, ... for the other names in the order this
	 * walk first met them (the same name, the same number, within one
	 * walk only). */
	int variant_idx, workload_idx, metric_idx;
	/* The plan's block (plan.h): a boot of a boot: variant. */
	int block;
};
/* Calls fn for every metric value of a run.  Wall/user/sys time and max RSS
 * come as metrics "wall", "user", "sys" (s) and "maxrss" (KiB).  Warm-ups
 * are passed when include_warmup, failed runs when include_failed.  fn
 * returning non-zero stops the walk and is returned.
 * Order: by seq (the plan's order); within a seq wall, user, sys, maxrss,
 * then the others by name (byte order).  Callers that want values by
 * workload, metric or variant group them (the *_idx fields make that
 * cheap).  A result that is not ok may lack some metric_values rows: only
 * its built-in metrics are then passed; a NULL built-in is not passed.
 * Strings in *v are valid during the call only.  Cost: one scan in primary
 * key order of the run's plan, results and metric_values rows each, merged
 * by seq; no sort, no per-row queries (bench/report-1e6.sh). */
typedef int (*store_value_fn)(const struct stored_value *v, void *ctx);
int store_each_value(struct store *s, int64_t run_id, int include_warmup,
		     int include_failed, store_value_fn fn, void *ctx);

/* store_each_value() with more to ask for. */
struct store_walk {
	int include_warmup, include_failed;
	store_value_fn fn;	/* NULL: only count (total/failed below) */
	void *ctx;
	/* Optional (NULL: not wanted), counted on the same scan: for every
	 * measured (non-warm-up) result, whatever include_* say,
	 * total[wi * n_variants + vi] += 1 and failed[...] += 1 when its status
	 * is not ok (wi, vi: workload and variant idx; outside n_workloads x
	 * n_variants: not counted).  Added to, so zero them first.  As
	 * store_count_failed() for every pair at once. */
	int *total, *failed;
	size_t n_workloads, n_variants;
	/* Optional: += 1 for every result whose status is not ok, warm-ups
	 * included (0: store_each_failure() would find none) */
	size_t *not_ok;
};
int store_walk_values(struct store *s, int64_t run_id, const struct store_walk *w);

/* Names in stored order: *names is a malloc'd array of n malloc'd strings
 * (NULL and 0 for an unknown run). */
int store_variant_names(struct store *s, int64_t run_id, char ***names, size_t *n);
int store_workload_names(struct store *s, int64_t run_id, char ***names, size_t *n);
/* Each workload's primary metric (its primary:), by idx; NULL entries for
 * a workload that names none (wall then) and for runs stored before v11. */
int store_workload_primaries(struct store *s, int64_t run_id, char ***names, size_t *n);
/* The metrics a run has values of: wall, user, sys, maxrss (when it has a
 * result) and every stored metric_values name, sorted. */
int store_metric_names(struct store *s, int64_t run_id, char ***names, size_t *n);
/* Each variant's time base, by idx: "virtual" for a deterministic boot:
 * variant (QEMU -icount shift=0: its clock advances 1 ns per executed
 * instruction, so its times are instruction counts, not wall time), else
 * "real".  Free as store_variant_names(). */
int store_variant_timebases(struct store *s, int64_t run_id, char ***names, size_t *n);
/*
 * Per workload (stored order): its calibration: block (struct workload's
 * calib_*, docs/experiment.md), column col: 0 the hits as decimal text, 1
 * hits_metric, 2 metric, 3 ops_metric; NULL where the workload has none.  Per variant
 * (stored order): column col of its tracer (backends/tracers.h): 0 the
 * tracer's name, 1 its attach type; NULL for a variant without a tracer
 * block.  Free as store_variant_names().
 */
int store_calibration(struct store *s, int64_t run_id, int col, char ***out, size_t *n);
int store_variant_tracers(struct store *s, int64_t run_id, int col, char ***out, size_t *n);
/* What store_variant_timebases() reports for v. */
const char *variant_timebase(const struct variant *v);
/* One parameter of one matrix instance (table matrix). */
struct store_matrix_row {
	int is_variant;		/* else a workload */
	char *name, *base, *param, *value;
	double x;		/* NaN when not a number */
	int is_list;
};
/* Every matrix parameter of the run: by kind (variants first), then in the
 * stored order of the instances, then by parameter name.  Free with
 * store_matrix_free(). */
int store_matrix(struct store *s, int64_t run_id, struct store_matrix_row **rows, size_t *n);
void store_matrix_free(struct store_matrix_row *rows, size_t n);

/* For (run, variant name, workload name): *total measured (non-warm-up)
 * results stored, *failed of those whose status is not ok.  A scan of the
 * run's plan each call: for every pair at once, store_walk_values(). */
int store_count_failed(struct store *s, int64_t run_id, const char *variant,
		       const char *workload, int *failed, int *total);

/* The experiment text stored for a run (the main file's bytes as they were
 * when the run started): *text malloc'd and NUL-terminated, *len bytes.
 * Error when there is no such run. */
int store_experiment_text(struct store *s, int64_t run_id, char **text, size_t *len);

/* A run's provenance columns, in store_provenance_keys order
 * (perturb_version, kernel_release, kernel_cmdline, cpu_model, cores,
 * governor, smt, aslr): out[i] malloc'd, NULL when not recorded.  Error
 * when there is no such run. */
#define STORE_N_PROVENANCE 8
extern const char *const store_provenance_keys[STORE_N_PROVENANCE];
int store_run_provenance(struct store *s, int64_t run_id, char *out[STORE_N_PROVENANCE]);

/* One shard of a run (engine/shard.h, docs/distributed.md). */
struct store_shard {
	int shard, n_shards;
	int seq_lo, seq_hi;	/* its plan entries: seqs [seq_lo, seq_hi) */
	char *db;		/* its database (as the task was told), or NULL */
	char *job;		/* the Slurm job of the task that ran it last, or NULL */
	char *node;		/* the node it ran on, or NULL */
	char *plan_sha;		/* shard_plan_hash() of the whole plan, or NULL */
	int n_results;		/* filled by store_load_shards(): results of
				 * [seq_lo, seq_hi) stored in this database */
};
/* Insert or replace rows (by run_id, shard): one transaction. */
int store_put_shards(struct store *s, int64_t run_id, const struct store_shard *sh, size_t n);
/* A run's shards by index (*sh malloc'd, NULL and 0 when the run has none). */
int store_load_shards(struct store *s, int64_t run_id, struct store_shard **sh, size_t *n);
void store_shards_free(struct store_shard *sh, size_t n);
/* The newest run that has shards (0 when none). */
int store_latest_sharded_run(struct store *s, int64_t *run_id);
/*
 * Copy the results of seqs [lo, hi) of run src_run in the database file
 * src_db into run run_id of s, with their metric values, the block entries
 * made for those seqs and the run's unavailable rows; a seq that has a
 * result in s already is left as it is (never stored twice), and so is a
 * block entry, so merging again adds nothing.  One transaction;
 * *added = the results copied.  The caller has checked that both runs
 * have the same experiment and plan (engine/merge.h).
 */
int store_merge_results(struct store *s, int64_t run_id, const char *src_db,
			int64_t src_run, int lo, int hi, size_t *added);

#endif
