/*
 * range.c - see range.h.
 */
#include "range.h"
#include "util.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#define DAY (24.0 * 3600)
#define KIB 1024.0
#define MIB (1024.0 * 1024)
#define GIB (1024.0 * MIB)
#define TIB (1024.0 * GIB)

/*
 * The bounds: a week for any duration (a run, a time-out, a study's
 * --max-time); a million runs per (variant, workload), which already
 * takes days at a millisecond a run and keeps a plan within memory; CPU
 * numbers within glibc's cpu_set_t; what QEMU, the tracefs and an LTTng
 * channel (a sub-buffer of a page at least) take.
 */
const struct range ranges[R_N_RANGES] = {
	[R_REPETITIONS] = { "repetitions", RANGE_COUNT, 1, 1000000, 0, "30" },
	[R_WARMUP] = { "warmup", RANGE_COUNT, 0, 1000000, 0, "2" },
	[R_TIMEOUT] = { "timeout", RANGE_DURATION, 0, 7 * DAY, 1, "2m" },
	[R_DAEMON_READY] = { "daemon_ready", RANGE_DURATION, 0, 7 * DAY, 0, "500ms" },
	[R_CPU] = { "cpus", RANGE_COUNT, 0, 1023, 0, "2" },
	[R_BUFFER_SIZE_KB] = { "buffer_size_kb", RANGE_COUNT, 1, 16 * MIB, 0, "4096" },
	[R_BOOT_CPUS] = { "cpus", RANGE_COUNT, 1, 1024, 0, "2" },
	[R_BOOTS] = { "boots", RANGE_COUNT, 1, 10000, 0, "4" },
	[R_BOOT_MEMORY] = { "memory", RANGE_SIZE, 128 * MIB, 16 * TIB, 0, "512M" },
	[R_MAX_TIME] = { "run --max-time", RANGE_DURATION, 0, 7 * DAY, 1, "10m" },
	[R_BOOTSTRAP] = { "report --bootstrap", RANGE_COUNT, 100, 10000000, 0, "2000" },
	[R_MAX_BOOTSTRAP_N] = { "report --max-bootstrap-n", RANGE_COUNT, 2, 100000000, 0, "1000" },
	[R_GEN_SIZE] = { "gen SIZE", RANGE_SIZE, 0, 1 * TIB, 0, "64M" },
	[R_SLURM_TIME] = { "time", RANGE_DURATION, 0, 7 * DAY, 1, "1h" },
	[R_SHARDS] = { "shards", RANGE_COUNT, 1, 4096, 0, "4" },
	[R_MAX_PARALLEL] = { "max_parallel", RANGE_COUNT, 1, 4096, 0, "16" },
	[R_CALIB_HITS] = { "hits", RANGE_COUNT, 1, 1e9, 0, "1" },
	/* perf's own limits: kernel.perf_event_max_sample_rate is checked
	 * against the machine's value when the variant is checked */
	[R_PERF_FREQUENCY] = { "frequency", RANGE_COUNT, 1, 1000000, 0, "999" },
	[R_PERF_PERIOD] = { "period", RANGE_COUNT, 1, 1e9, 0, "10000" },
	[R_PERF_MMAP_PAGES] = { "mmap_pages", RANGE_COUNT, 1, 1048576, 0, "128" },
	[R_LTTNG_SUBBUF_SIZE] = { "subbuf_size", RANGE_SIZE, 4 * KIB, 1 * GIB, 0, "256K" },
	[R_LTTNG_SUBBUF_COUNT] = { "subbuf_count", RANGE_COUNT, 1, 1 * MIB, 0, "4" },
};

int range_parse(const struct range *r, const char *text, double *out)
{
	double v;
	uint64_t u;
	long l;

	switch (r->kind) {
	case RANGE_DURATION:
		if (parse_duration(text, &v))
			return -1;
		break;
	case RANGE_COUNT:
		if (parse_long(text, LONG_MIN, LONG_MAX, &l))
			return -1;
		v = (double)l;
		break;
	case RANGE_SIZE:
		if (parse_size(text, &u))
			return -1;
		v = (double)u;
		break;
	default:
		return -1;
	}
	if (v < r->min || v > r->max || (r->above_min && v == r->min))
		return -1;
	*out = v;
	return 0;
}

/* 604800 -> "168h", 90 -> "90s", 1.5 -> "1.5s"; sizes: 16777216 -> "16M". */
static void fmt_value(const struct range *r, double v, char *buf, size_t len)
{
	static const struct { double scale; const char *unit; } sizes[] = {
		{ TIB, "T" }, { GIB, "G" }, { MIB, "M" }, { KIB, "K" },
	};

	if (r->kind == RANGE_COUNT) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	if (r->kind == RANGE_SIZE) {
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
			if (v >= sizes[i].scale && (uint64_t)v % (uint64_t)sizes[i].scale == 0) {
				snprintf(buf, len, "%.0f%s", v / sizes[i].scale, sizes[i].unit);
				return;
			}
		snprintf(buf, len, "%.0f", v);
		return;
	}
	if (v >= 3600 && (uint64_t)v % 3600 == 0)
		snprintf(buf, len, "%.0fh", v / 3600);
	else
		snprintf(buf, len, "%gs", v);
}

const char *range_describe(const struct range *r, char *buf, size_t len)
{
	static const char *const what[] = {
		[RANGE_DURATION] = "a duration like", [RANGE_COUNT] = "an integer",
		[RANGE_SIZE] = "a size like",
	};
	char lo[32], hi[32];

	fmt_value(r, r->min, lo, sizeof(lo));
	fmt_value(r, r->max, hi, sizeof(hi));
	if (r->kind == RANGE_COUNT)
		snprintf(buf, len, "an integer from %s to %s", lo, hi);
	else
		snprintf(buf, len, "%s %s, %s %s %s %s", what[r->kind], r->example,
			 r->above_min ? "above" : "from", lo,
			 r->above_min ? "and at most" : "to", hi);
	return buf;
}
