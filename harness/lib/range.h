/*
 * range.h - the documented ranges of perturb's durations, counts and sizes:
 * one row for each YAML key and command-line option that takes one, and
 * one function that reads a value and checks it against its row.  The
 * experiment loader (engine/config.c, core/yamlnode.c, the backends'
 * blocks) and the option parser (cli/options.c) both read through
 * range_parse(), so that no such value reaches the engine unchecked: a
 * time-out of 1e300s or 100000000 repetitions is refused when the file or
 * the command line is read, with its position.  docs/experiment.md
 * ("Ranges") and docs/perturb.1 list the rows; tests/test_config.c walks
 * every row with a value outside it.
 */
#ifndef PERTURB_RANGE_H
#define PERTURB_RANGE_H

#include <stddef.h>

enum range_kind {
	RANGE_DURATION,		/* parse_duration(): 250ms, 30s, 5m; in seconds */
	RANGE_COUNT,		/* parse_long(): a plain decimal integer */
	RANGE_SIZE,		/* parse_size(): 512M, 1G; in bytes */
};

enum range_id {
	R_REPETITIONS,		/* repetitions: (study, workload), run --repetitions */
	R_WARMUP,		/* warmup: (study) */
	R_TIMEOUT,		/* timeout: (study, workload) */
	R_DAEMON_READY,		/* daemon_ready: as a duration (variant) */
	R_CPU,			/* an item of cpus: (study) */
	R_BUFFER_SIZE_KB,	/* kernel: buffer_size_kb (variant) */
	R_BOOT_CPUS,		/* boot: qemu: cpus */
	R_BOOTS,		/* boot: qemu: boots */
	R_BOOT_MEMORY,		/* boot: qemu: memory */
	R_MAX_TIME,		/* run --max-time */
	R_BOOTSTRAP,		/* report --bootstrap */
	R_MAX_BOOTSTRAP_N,	/* report --max-bootstrap-n */
	R_GEN_SIZE,		/* gen SIZE */
	R_SLURM_TIME,		/* engine: slurm: time */
	R_SHARDS,		/* engine: slurm: shards, run --shards */
	R_MAX_PARALLEL,		/* engine: slurm: max_parallel */
	R_CALIB_HITS,		/* a workload's calibration: hits */
	R_PERF_FREQUENCY,	/* perf: record: frequency */
	R_PERF_PERIOD,		/* perf: record: period */
	R_PERF_MMAP_PAGES,	/* perf: record/trace: mmap_pages */
	R_LTTNG_SUBBUF_SIZE,	/* lttng: channel: subbuf_size (variant) */
	R_LTTNG_SUBBUF_COUNT,	/* lttng: channel: subbuf_count (variant) */
	R_N_RANGES
};

struct range {
	const char *name;	/* the key, or the option with its command */
	enum range_kind kind;
	double min, max;	/* inclusive (but see above_min); seconds, or bytes */
	int above_min;		/* the minimum itself is refused */
	const char *example;	/* a value inside, for messages and the tests */
};

extern const struct range ranges[R_N_RANGES];

/*
 * Read text as r's kind and check it against r: 0 and *out, or -1 (text
 * malformed or outside).  Counts and sizes are whole numbers in *out
 * (sizes up to 2^53 are exact).
 */
int range_parse(const struct range *r, const char *text, double *out);

/* What r accepts, for "must be ...": "an integer from 1 to 1000000", "a
 * duration like 30s, above 0 and at most 168h" (buf, returned). */
const char *range_describe(const struct range *r, char *buf, size_t len);

#endif
