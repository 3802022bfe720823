/*
 * config.h - the experiment file, parsed (libyaml) and validated.
 *
 * config_load() turns an experiment YAML file into a struct experiment, or
 * fails with one message of the form "FILE:LINE:COL: message" (1-based
 * positions).  Nothing downstream re-parses YAML.  Everything reachable from
 * a struct experiment is owned by it and freed by experiment_release().
 *
 * Validation guarantees (after a 0 return):
 *  - names of variants and workloads are unique, non-empty, [A-Za-z0-9_.+-]
 *  - baseline names a variant (default: the first one)
 *  - every workload has exactly one of cmd (non-empty argv) or shell
 *  - every metric regex compiled (POSIX extended); its value is capture
 *    group 1 if the regex has one, else the whole match
 *  - durations > 0 where a time-out is meant; repetitions >= 1; warmup >= 0
 *  - gate rules name existing variants/workloads (or a glob), a known
 *    statistic, 0 < confidence < 1
 *  - include files and workloads given by name have been loaded and merged
 *  - kernel:/boot: blocks are validated but not acted on here
 */
#ifndef PERTURB_CONFIG_H
#define PERTURB_CONFIG_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

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

/* kernel: block - the running kernel's tracing state (host backend). */
struct kernel_cfg {
	int present;
	char *tracer;		/* NULL = leave as is */
	char **events;		/* "system:event" globs */
	size_t n_events;
	int tracing_on;		/* -1 unset, 0, 1 */
	long buffer_size_kb;	/* -1 unset */
	char **functions;	/* set_ftrace_filter */
	size_t n_functions;
	char **options;		/* trace_options, e.g. "nooverwrite" */
	size_t n_options;
	struct pos pos;
};

/* boot: {qemu: {...}} block (qemu backend). */
struct boot_cfg {
	int present;
	char *kernel;		/* PATH or "debian" */
	char *initrd;		/* PATH or "auto" */
	char *cmdline;
	uint64_t memory_bytes;	/* 0 = default */
	int cpus;		/* 0 = default */
	int kvm;		/* -1 auto, 0 no, 1 yes */
	char *config;		/* Kconfig fragment */
	char *source;		/* kernel source tree */
	int boots;		/* 0 = default */
	int deterministic;	/* -1 unset, 0, 1 */
	struct pos pos;
};

struct variant {
	char *name;
	char *description;
	struct pos pos;
	struct env_var *env;
	size_t n_env;
	struct argv_list wrap;		/* n == 0: none */
	struct argv_list *setup;	/* commands, each an argv */
	size_t n_setup;
	struct argv_list *teardown;
	size_t n_teardown;
	struct argv_list daemon;	/* n == 0: none */
	double daemon_ready_s;		/* delay; 0 when a regex or unset */
	char *daemon_ready_regex;	/* NULL when a delay or unset */
	regex_t daemon_ready_re;
	struct argv_list background;	/* n == 0: none */
	struct kernel_cfg kernel;
	struct boot_cfg boot;
};

enum workload_kind { WORKLOAD_REAL, WORKLOAD_MICRO };

struct workload {
	char *name;
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
	struct metric_def *metrics;
	size_t n_metrics;
	double timeout_s;		/* 0 = the experiment's */
	int repetitions;		/* 0 = the experiment's */
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

enum run_order { ORDER_INTERLEAVED, ORDER_SEQUENTIAL, ORDER_RANDOM };

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
	char **files;		/* every file read (main first), owns pos.file */
	size_t n_files;
};

/* Where workloads given by name are looked for, after the experiment's own
 * folder (DIR/workloads/NAME.yaml, then DIR/NAME.yaml): this folder.  Set at
 * build time (PERTURB_SHARE_DIR) and overridable with PERTURB_WORKLOADS. */
const char *config_share_workloads_dir(void);

/*
 * Load and validate PATH.  On success returns 0.  On failure returns -1 and
 * writes "FILE:LINE:COL: message" (or "FILE: message" when no position is
 * known) into err (always NUL-terminated, truncated to errlen).
 * Defences: files over 16 MiB, more than 10000 YAML nodes produced by
 * aliases, nesting deeper than 64 and invalid UTF-8 are errors.
 */
int config_load(const char *path, struct experiment *exp, char *err, size_t errlen);

/* Load a single workload file (workloads/NAME.yaml) on its own, same rules. */
int config_load_workload(const char *path, struct experiment *holder,
			 struct workload *out, char *err, size_t errlen);

void experiment_release(struct experiment *exp);
/* Free what config_load_workload() put in a workload (not needed for the
 * workloads of an experiment: experiment_release() frees those). */
void workload_release(struct workload *w);

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
