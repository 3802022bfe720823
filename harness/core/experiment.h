/*
 * experiment.h - the experiment, as the loader (engine/config.h) makes it
 * from an experiment file and everything else reads it: variants,
 * workloads, metrics, gate rules.  See docs/architecture.md for who owns
 * what: a variant's backend block (v->cfg) is the backend's, everything
 * else is filled by the loader and freed by experiment_release().
 *
 * Positions (struct pos) are 1-based; they name the node a message is
 * about, in the file it was read from.
 */
#ifndef PERTURB_EXPERIMENT_H
#define PERTURB_EXPERIMENT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include "instrumentation/tracefs.h"

struct backend;

struct pos {
	const char *file;	/* owned by experiment->files[] */
	int line, col;		/* 1-based; 0 when unknown */
};

/* A NULL-terminated argv; n excludes the terminator. */
struct argv_list {
	char **v;
	size_t n;
};

struct env_var {
	char *key, *value;
};

struct metric_def {
	char *name;
	char *regex_src;
	regex_t re;
	int has_group;		/* re has >= 1 capture group */
	char *unit;		/* "" when not given */
	struct pos pos;
};

/*
 * One parameter of a matrix instance (engine/matrix.h): the parameter's
 * name, its value as the instance's name shows it (a list's items joined
 * by '+'), and the value on a numeric axis: the number (a size like 8M in
 * bytes), a list's length; NaN when the value is not a number.
 */
struct matrix_value {
	char *param;
	char *value;
	double x;
	int is_list;
};

/* A variant's lttng: block (docs/experiment.md, "lttng"): NULL without one. */
struct lttng_spec {
	char **kernel;		/* kernel events: a tracepoint, "syscall:NAME" or "syscalls" */
	size_t n_kernel;
	char **user;		/* user-space event patterns */
	size_t n_user;
	char **preload;		/* libc, pthread, dl: liblttng-ust-NAME-wrapper.so */
	size_t n_preload;
	unsigned long subbuf_size;	/* bytes; 0: LTTng's default */
	unsigned subbuf_count;		/* 0: LTTng's default */
	int overwrite;			/* channel mode overwrite (else discard) */
};

struct variant {
	char *name;
	/* an instance of a matrix: the name as written (name is
	 * "base[p=v,...]") and its parameters by name; NULL / 0 otherwise */
	char *base;
	struct matrix_value *matrix;
	size_t n_matrix;
	char *description;
	struct pos pos;
	struct env_var *env;
	size_t n_env;
	struct argv_list wrap;		/* n == 0: none */
	struct argv_list cmd;		/* n == 0: none; else run in place of
					 * every workload's cmd or shell (the
					 * commands of `perturb run CMD CMD`) */
	struct argv_list *setup;	/* commands, each an argv */
	size_t n_setup;
	struct argv_list *teardown;
	size_t n_teardown;
	struct argv_list daemon;	/* n == 0: none */
	double daemon_ready_s;		/* delay; 0 when a regex or unset */
	char *daemon_ready_regex;	/* NULL when a delay or unset */
	regex_t daemon_ready_re;
	struct argv_list background;	/* n == 0: none */
	/* kernel: block, the tracing state of the kernel the runs see (set by
	 * the host backend here, inside the guest with boot:); NULL when absent */
	struct ktrace_spec *kernel;
	struct pos kernel_pos;
	struct lttng_spec *lttng;
	/*
	 * The backend that puts the system into this variant (backends/backend.h),
	 * chosen by its key (boot: -> qemu; none -> host), and its block
	 * as its parse() read it (NULL for a backend without a block).  cfg_pos
	 * is the block's position, the variant's when there is none; cfg_key
	 * the key it came from (static; a backend may claim several).
	 */
	const struct backend *be;
	void *cfg;
	const char *cfg_key;
	struct pos cfg_pos;
	/* The first key that changes the whole system rather than the
	 * variant's own process (kernel, daemon, background, setup, teardown,
	 * a backend's block), for order: duet's refusal; NULL when none. */
	const char *system_key;
	struct pos system_pos;
};

enum workload_kind { WORKLOAD_REAL, WORKLOAD_MICRO };

struct workload {
	char *name;
	char *base;			/* as struct variant's */
	struct matrix_value *matrix;
	size_t n_matrix;
	char *description;
	enum workload_kind kind;
	struct pos pos;
	char **requires;
	size_t n_requires;
	struct argv_list *setup;	/* once, not timed */
	size_t n_setup;
	struct argv_list *prepare;	/* before each run, not timed */
	size_t n_prepare;
	struct argv_list cmd;		/* n == 0 when shell is used */
	char *shell;			/* NULL when cmd is used */
	char *dir;			/* absolute: where setup, prepare and the
					 * runs run ({workdir}); NULL: the work
					 * folder results/work/NAME */
	struct metric_def *metrics;
	size_t n_metrics;
	double timeout_s;		/* 0 = the experiment's */
	int repetitions;		/* 0 = the experiment's */
	char *primary;			/* primary: the metric that is the
					 * workload's answer in the report (a
					 * calibration micro's ns_per_op); NULL:
					 * wall */
	/*
	 * calibration: the workload hits a tracer's instrumented point a known
	 * number of times (docs/experiment.md, "calibration"; the report's
	 * cost per event, reports/calib.h).  calib_hits: hits per value of
	 * calib_metric (per operation of a micro's ns_per_op, per run of
	 * wall); calib_hits_metric instead: a metric of the workload giving
	 * the hits per run.  calib_hits 0 and calib_hits_metric NULL when the
	 * workload is not a calibration workload; calib_metric NULL: ns_per_op
	 * for a micro, wall for a real one.  calib_ops_metric (with calib_hits
	 * only; NULL: none): a metric of the workload giving the operations
	 * per run, so that hits per run = calib_hits x its value and the
	 * report measures a tracer's events per hit (perturb-micro's ops).
	 */
	double calib_hits;
	char *calib_hits_metric;
	char *calib_metric;
	char *calib_ops_metric;
};

enum statistic { STAT_P0, STAT_P50, STAT_P80, STAT_P99, STAT_MEAN };

struct gate_rule {
	char *variant;		/* name or glob */
	char *workload;		/* name or glob */
	char *metric;		/* default "wall" */
	enum statistic statistic;	/* default p50 */
	double max_dilation;	/* fraction: 2% -> 0.02 */
	double confidence;	/* default 0.95 */
	struct pos pos;
};

/* ORDER_DUET: the baseline and one variant at the same time, each on a CPU of
 * its own (engine/plan.h, docs/experiment.md "order: duet"). */
enum run_order { ORDER_INTERLEAVED, ORDER_SEQUENTIAL, ORDER_RANDOM, ORDER_DUET };

/* engine: {slurm: {...}}: how `perturb run --slurm` submits the study
 * (docs/experiment.md, docs/distributed.md).  Strings NULL and numbers 0
 * when not given. */
struct slurm_settings {
	char *partition, *account;
	double time_s;		/* time limit of one task; 0 = the partition's */
	int shards;		/* tasks of the job array; 0 = 4 */
	int max_parallel;	/* tasks running at once; 0 = no limit */
	struct argv_list sbatch_args;	/* more sbatch arguments, as written */
};

struct experiment {
	char *path;		/* as given */
	char *text;		/* the main file's bytes, as stored in results */
	size_t text_len;
	char *name;
	char *description;
	char *baseline;		/* always set after load */
	int repetitions;	/* default 10 */
	int warmup;		/* default 1 */
	enum run_order order;	/* default interleaved */
	int has_seed;
	uint64_t seed;
	double timeout_s;	/* default 300 */
	int *cpus;
	size_t n_cpus;
	char **counters;	/* as written; each passes counter_parse() (counters.h),
				 * no two alike, none the name of a workload metric */
	size_t n_counters;
	struct variant *variants;
	size_t n_variants;
	struct workload *workloads;
	size_t n_workloads;
	struct gate_rule *gate;
	size_t n_gate;
	int deterministic;	/* -1 unset; the default of every variant whose
				 * backend keeps virtual time (qemu's boot:) */
	int verbatim;		/* placeholders: false: every command runs as
				 * written, no {workdir}, {micro}, ... filled */
	char **files;		/* every file read (main first), owns pos.file */
	size_t n_files;
	struct slurm_settings slurm;	/* engine: slurm: */
	char *revision;		/* revision: a git work tree, absolute (resolved
				 * against the file's folder), or NULL: its commit
				 * is stored with every run (engine/revision.h) */
};

extern const char *const statistic_names[];	/* by enum statistic, NULL-terminated */
extern const char *const order_names[];		/* by enum run_order, NULL-terminated */
const char *statistic_name(enum statistic s);	/* "p50", "mean", ... */
/*
 * The gate statistic of a name: stats_statistic_parse()'s grammar
 * (stats/stats.h), limited to the statistics a gate can judge.  0, or -1
 * (nothing printed) for any other name.
 */
#define STATISTIC_NAMES "p0, p50 (median), p80, p99, mean"
int statistic_parse(const char *name, enum statistic *out);
const char *order_name(enum run_order o);
int experiment_find_variant(const struct experiment *exp, const char *name);	/* index or -1 */
int experiment_find_workload(const struct experiment *exp, const char *name);

/* Effective per-workload values. */
int workload_repetitions(const struct experiment *exp, const struct workload *w);
double workload_timeout(const struct experiment *exp, const struct workload *w);

#endif
