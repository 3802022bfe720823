/*
 * framework.c - perturb-micro: the timing framework of the micro-benchmarks
 * and its main().
 *
 *   perturb-micro NAME [--samples N] [--min-time D] [--iterations N]
 *                      [--path FILE] [--json]
 *   perturb-micro --list | --help | NAME --help
 *
 * The framework owns timing; a micro only does one operation per call
 * (micro.h).  For one run it:
 *
 *  1. measures the clock's resolution as nanobench does: the smallest
 *     non-zero step between two successive CLOCK_MONOTONIC readings;
 *  2. sets the length of one sample to max(--min-time, 1000 x resolution):
 *     nanobench's rule (a sample >= 1000 clock ticks bounds the timer's own
 *     error to 0.1 %) is the floor, --min-time (default 10 ms) is what
 *     usually decides, as LMbench's "enough";
 *  3. finds the iteration count n by running the operation n = 1, then
 *     more times (x2 to x10, aimed at 1.1 x the target) until one loop of n
 *     lasts at least a sample's length (--iterations N fixes n instead);
 *     the reference loop (below) gets its own count the same way;
 *  4. takes --samples samples (default 10), each one loop of n calls of the
 *     operation timed by CLOCK_MONOTONIC and by the TSC, interleaved with a
 *     sample of the reference loop: the same loop calling an empty
 *     operation (or the micro's own .baseline, see micro.h), so that drift
 *     of the machine falls on both alike;
 *  5. per sample, cost per operation = (loop time / n) - median reference
 *     cost per call, divided by the micro's events per call.
 *
 * Output, one "key: value" a line (or one JSON object with --json):
 *   ns_per_op          the MEDIAN over the samples of the net cost per
 *                      operation, in ns (the median, not the minimum: an
 *                      instrumentation that is only sometimes slow must
 *                      show; the minimum is printed as ns_per_op_min)
 *   tsc_cycles_per_op  the same in TSC cycles: ticks of the time-stamp
 *                      counter (lfence;rdtsc before, rdtscp;lfence after),
 *                      which runs at a constant rate - not core cycles
 *   tsc_mhz            the TSC's rate, calibrated against CLOCK_MONOTONIC
 *                      over the whole measurement
 *   loop_ns_per_call   the reference loop's cost per call (subtracted);
 *                      for empty-loop this is the classic "cycles per loop"
 *   iterations, samples, minor_faults_per_op, ctxsw_per_op (this process)
 *   ops                every operation the run performed, in the unit of
 *                      ns_per_op (calls of op() x the micro's events per
 *                      call): the calls of steps 3 and 4 (the iteration
 *                      search, which is the warm-up, and every sample),
 *                      i.e. every call that can fire a point instrumented
 *                      in the operation; not the reference loop's calls
 *                      (the empty operation, or the micro's .baseline) nor
 *                      what setup() does.  A calibration workload names it
 *                      (docs/experiment.md, "calibration": ops_metric), so
 *                      that the report can measure a tracer's events per
 *                      hit: its events per run / (hits per op x ops).
 * The TSC lines are absent where there is no TSC (not x86).
 *
 * Exit status: 0 measured, 1 an operation failed, 2 usage error.
 */
#include "micro.h"
#include "micros.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define MICRO_DECL(ident, name) extern const struct micro_info micro_##ident;
MICRO_LIST(MICRO_DECL)
#undef MICRO_DECL

#define MICRO_ROW(ident, name) [MICRO_##ident] = &micro_##ident,
static const struct micro_info *const micros[MICRO_COUNT] = {
	MICRO_LIST(MICRO_ROW)
};
#undef MICRO_ROW

#define MICRO_NAME(ident, name) [MICRO_##ident] = name,
static const char *const micro_names[MICRO_COUNT] = {
	MICRO_LIST(MICRO_NAME)
};
#undef MICRO_NAME

#define DEFAULT_SAMPLES 10
#define DEFAULT_MIN_TIME_NS 10000000LL		/* 10 ms */
#define MAX_ITERATIONS (1ULL << 40)

typedef int (*op_fn)(struct micro_ctx *m);

struct opts {
	const struct micro_info *mi;
	int samples;
	int64_t min_time_ns;
	uint64_t iterations;	/* 0: automatic */
	const char *path;
	int json;
};

/* One series of samples: cost per call of a loop, in ns and TSC cycles. */
struct series {
	uint64_t n;		/* iterations per sample */
	double *ns, *cyc;
};

static const char *current = "perturb-micro";

int micro_error(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "perturb-micro: error: %s: ", current);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "perturb-micro: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

static int64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The TSC at the start of a timed region: lfence keeps earlier
 * instructions from drifting into it. */
static inline uint64_t tsc_begin(void)
{
#if HAVE_TSC
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/* The TSC at the end: rdtscp waits for the region's instructions, lfence
 * keeps later ones from starting before the read. */
static inline uint64_t tsc_end(void)
{
#if HAVE_TSC
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/* The reference operation: nothing.  Same shape as empty-loop's op. */
static int op_empty(struct micro_ctx *m)
{
	(void)m;
	__asm__ __volatile__("" : : : "memory");
	return 0;
}

/*
 * The one timing loop every measurement goes through.  noinline and the
 * asm hiding op's value keep the compiler from specialising it for a
 * known op (inlining op_empty would make the reference loop cheaper than
 * the loop it is subtracted from).
 */
static __attribute__((noinline)) int run_loop(op_fn op, struct micro_ctx *m, uint64_t n)
{
	__asm__ __volatile__("" : "+r"(op));
	for (uint64_t i = 0; i < n; i++)
		if (op(m) < 0)
			return -1;
	return 0;
}

/* Time one loop of n calls: cost per call into *ns and *cyc. */
static int sample(op_fn op, struct micro_ctx *m, uint64_t n, double *ns, double *cyc)
{
	int64_t t0 = clock_ns();
	uint64_t c0 = tsc_begin();
	int r = run_loop(op, m, n);
	uint64_t c1 = tsc_end();
	int64_t t1 = clock_ns();
	*ns = (double)(t1 - t0) / (double)n;
	*cyc = (double)(c1 - c0) / (double)n;
	return r;
}

/* nanobench's clock resolution: the smallest non-zero difference between
 * two successive readings of the clock. */
static int64_t clock_resolution(void)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 200; i++) {
		int64_t a = clock_ns(), b;
		while ((b = clock_ns()) == a)
			;
		if (b - a < best)
			best = b - a;
	}
	return best;
}

/* The smallest n (from the doubling-or-more search) whose loop lasts at
 * least target_ns.  The calls made here double as the warm-up; their
 * number is added to *calls. */
static int calibrate(op_fn op, struct micro_ctx *m, int64_t target_ns, uint64_t *out,
		     double *calls)
{
	uint64_t n = 1;
	for (;;) {
		int64_t t0 = clock_ns();
		if (run_loop(op, m, n) < 0)
			return -1;
		*calls += (double)n;
		int64_t t = clock_ns() - t0;
		if (t >= target_ns || n >= MAX_ITERATIONS)
			break;
		double mult = t > 0 ? 1.1 * (double)target_ns / (double)t : 10.0;
		if (mult < 2.0)
			mult = 2.0;
		if (mult > 10.0)
			mult = 10.0;
		n = (uint64_t)((double)n * mult + 0.5);
		if (n > MAX_ITERATIONS)
			n = MAX_ITERATIONS;
	}
	*out = n;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts a copy): mean of the two middle values for
 * even n. */
static double median(const double *v, int n)
{
	double *s = malloc((size_t)n * sizeof(*s)), r;
	if (!s)
		return v[0];
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	r = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return r;
}

static double min_of(const double *v, int n)
{
	double r = v[0];
	for (int i = 1; i < n; i++)
		if (v[i] < r)
			r = v[i];
	return r;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "5ms", "1s", "250us", "100000ns"; a bare number is seconds. */
static int parse_duration_ns(const char *s, int64_t *out)
{
	static const struct { const char *suffix; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
	};
	char *end;
	double v;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			double ns = v * units[i].ns;
			if (ns < 1 || ns > 3600e9)
				return -1;
			*out = (int64_t)ns;
			return 0;
		}
	}
	return -1;
}

static const struct micro_info *find_micro(const char *name)
{
	for (int i = 0; i < MICRO_COUNT; i++)
		if (!strcmp(micros[i]->name, name))
			return micros[i];
	return NULL;
}

/* Every row of MICRO_LIST names the micro its struct names. */
static int check_registry(void)
{
	for (int i = 0; i < MICRO_COUNT; i++)
		if (!micros[i]->name || !micros[i]->op || strcmp(micros[i]->name, micro_names[i])) {
			fprintf(stderr, "perturb-micro: error: registry row '%s' does not match "
				"its struct micro_info\n", micro_names[i]);
			return -1;
		}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: perturb-micro NAME [options]\n"
		"       perturb-micro --list | --help | NAME --help\n"
		"\n"
		"Time one operation NAME many times; print its cost per operation with the\n"
		"cost of the timing loop subtracted (ns_per_op, tsc_cycles_per_op).\n"
		"\n"
		"  --samples N       samples; the result is their median (default %d)\n"
		"  --min-time D      least length of one sample: 10ms, 1s, 500us (default 10ms;\n"
		"                    never below 1000 x the clock's resolution)\n"
		"  --iterations N    operations per sample, fixed (default: chosen from --min-time)\n"
		"  --path FILE       the file stat and open-close use (default: a temporary file)\n"
		"  --json            one JSON object instead of key: value lines\n"
		"\n"
		"micro-benchmarks:\n", DEFAULT_SAMPLES);
	for (int i = 0; i < MICRO_COUNT; i++)
		fprintf(f, "  %-14s %s\n", micros[i]->name, micros[i]->help);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	o->samples = DEFAULT_SAMPLES;
	o->min_time_ns = DEFAULT_MIN_TIME_NS;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const char *names[] = { "--samples", "--min-time", "--iterations", "--path" };
		size_t k;
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			size_t len = strlen(names[k]);
			if (!strncmp(a, names[k], len) && (a[len] == '=' || !a[len])) {
				if (a[len] == '=')
					val = a + len + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else
					return usage_error("option '%s' needs a value", names[k]);
				break;
			}
		}
		if (k == 0) {
			uint64_t v;
			if (parse_u64(val, 1, 100000, &v))
				return usage_error("--samples must be an integer from 1 to 100000, got '%s'", val);
			o->samples = (int)v;
		} else if (k == 1) {
			if (parse_duration_ns(val, &o->min_time_ns))
				return usage_error("--min-time must be a duration such as 10ms, got '%s'", val);
		} else if (k == 2) {
			if (parse_u64(val, 1, MAX_ITERATIONS, &o->iterations))
				return usage_error("--iterations must be a positive integer, got '%s'", val);
		} else if (k == 3) {
			o->path = val;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			if (o->mi)
				printf("%s: %s\n", o->mi->name, o->mi->help);
			else
				usage(stdout);
			return 0;
		} else if (!strcmp(a, "--list")) {
			for (int j = 0; j < MICRO_COUNT; j++)
				printf("%s\n", micros[j]->name);
			return 0;
		} else if (a[0] == '-') {
			return usage_error("unknown option '%s' (see perturb-micro --help)", a);
		} else if (!o->mi) {
			if (!(o->mi = find_micro(a)))
				return usage_error("unknown micro-benchmark '%s' (perturb-micro --list)", a);
		} else {
			return usage_error("unexpected argument '%s' (one micro-benchmark a run)", a);
		}
	}
	if (!o->mi) {
		usage(stderr);
		return 2;
	}
	return -1;	/* go on and measure */
}

struct result {
	double ns, ns_min, cyc, loop_ns, loop_cyc, tsc_mhz;
	double faults, ctxsw;
	double ops;		/* every operation of the run (the header's ops) */
	uint64_t iterations;
	int samples;
	const char *reference;
};

static void print_result(const struct opts *o, const struct result *r)
{
	if (o->json) {
		printf("{\"micro\": \"%s\", \"ns_per_op\": %.4f, \"ns_per_op_min\": %.4f",
		       o->mi->name, r->ns, r->ns_min);
		if (HAVE_TSC)
			printf(", \"tsc_cycles_per_op\": %.3f, \"tsc_mhz\": %.3f", r->cyc, r->tsc_mhz);
		printf(", \"loop_ns_per_call\": %.4f", r->loop_ns);
		if (HAVE_TSC)
			printf(", \"loop_tsc_cycles_per_call\": %.3f", r->loop_cyc);
		printf(", \"reference\": \"%s\", \"iterations\": %llu, \"samples\": %d"
		       ", \"minor_faults_per_op\": %.4f, \"ctxsw_per_op\": %.4f, \"ops\": %.0f}\n",
		       r->reference, (unsigned long long)r->iterations, r->samples,
		       r->faults, r->ctxsw, r->ops);
		return;
	}
	printf("micro: %s\n", o->mi->name);
	printf("ns_per_op: %.4f\n", r->ns);
	if (HAVE_TSC)
		printf("tsc_cycles_per_op: %.3f\n", r->cyc);
	printf("ns_per_op_min: %.4f\n", r->ns_min);
	printf("iterations: %llu\n", (unsigned long long)r->iterations);
	printf("samples: %d\n", r->samples);
	printf("loop_ns_per_call: %.4f\n", r->loop_ns);
	if (HAVE_TSC) {
		printf("loop_tsc_cycles_per_call: %.3f\n", r->loop_cyc);
		printf("tsc_mhz: %.3f\n", r->tsc_mhz);
	}
	printf("reference: %s\n", r->reference);
	printf("minor_faults_per_op: %.4f\n", r->faults);
	printf("ctxsw_per_op: %.4f\n", r->ctxsw);
	printf("ops: %.0f\n", r->ops);
}

static int measure(const struct opts *o, struct micro_ctx *m, struct result *res)
{
	const struct micro_info *mi = o->mi;
	op_fn ref = mi->baseline ? mi->baseline : op_empty;
	double events = mi->events_per_op ? mi->events_per_op : 1;
	struct series op_s = { 0 }, ref_s = { 0 };
	struct rusage ru0, ru1;
	int64_t target = o->min_time_ns, floor_ns = 1000 * clock_resolution();
	int64_t t0, t1;
	uint64_t c0, c1;
	double ref_calls = 0, op_calls = 0;
	int ret = -1, n = o->samples;

	if (target < floor_ns)
		target = floor_ns;
	op_s.ns = calloc((size_t)n, sizeof(double));
	op_s.cyc = calloc((size_t)n, sizeof(double));
	ref_s.ns = calloc((size_t)n, sizeof(double));
	ref_s.cyc = calloc((size_t)n, sizeof(double));
	if (!op_s.ns || !op_s.cyc || !ref_s.ns || !ref_s.cyc) {
		micro_error("out of memory");
		goto out;
	}

	t0 = clock_ns();
	c0 = tsc_begin();
	if (calibrate(ref, m, target, &ref_s.n, &ref_calls) < 0)
		goto out;
	if (o->iterations)
		op_s.n = o->iterations;
	else if (calibrate(mi->op, m, target, &op_s.n, &op_calls) < 0)
		goto out;

	getrusage(RUSAGE_SELF, &ru0);
	for (int i = 0; i < n; i++) {
		if (sample(mi->op, m, op_s.n, &op_s.ns[i], &op_s.cyc[i]) < 0 ||
		    sample(ref, m, ref_s.n, &ref_s.ns[i], &ref_s.cyc[i]) < 0)
			goto out;
	}
	getrusage(RUSAGE_SELF, &ru1);
	c1 = tsc_end();
	t1 = clock_ns();

	res->loop_ns = median(ref_s.ns, n);
	res->loop_cyc = median(ref_s.cyc, n);
	for (int i = 0; i < n; i++) {
		op_s.ns[i] = (op_s.ns[i] - res->loop_ns) / events;
		op_s.cyc[i] = (op_s.cyc[i] - res->loop_cyc) / events;
	}
	res->ns = median(op_s.ns, n);
	res->ns_min = min_of(op_s.ns, n);
	res->cyc = median(op_s.cyc, n);
	res->tsc_mhz = t1 > t0 ? (double)(c1 - c0) * 1e3 / (double)(t1 - t0) : 0;
	res->iterations = op_s.n;
	res->samples = n;
	res->reference = mi->baseline ? "baseline" : "empty";
	res->ops = (op_calls + (double)op_s.n * n) * events;
	{
		double ops = (double)op_s.n * n * events;
		res->faults = (double)(ru1.ru_minflt - ru0.ru_minflt) / ops;
		res->ctxsw = (double)(ru1.ru_nvcsw - ru0.ru_nvcsw +
				      ru1.ru_nivcsw - ru0.ru_nivcsw) / ops;
	}
	ret = 0;
out:
	free(op_s.ns);
	free(op_s.cyc);
	free(ref_s.ns);
	free(ref_s.cyc);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct micro_ctx m = { 0 };
	struct result res = { 0 };
	char self[PATH_MAX];
	ssize_t len;
	int r;

	/* What fork-exec execs: start, do nothing, exit. */
	if (argc == 2 && !strcmp(argv[1], "noop"))
		return 0;
	if (check_registry() < 0)
		return 2;
	if ((r = parse_args(argc, argv, &o)) >= 0)
		return r;

	current = o.mi->name;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		micro_error("cannot read /proc/self/exe: %s", strerror(errno));
		return 1;
	}
	self[len] = '\0';
	m.self_exe = self;
	m.path = o.path;

	if (o.mi->setup && o.mi->setup(&m) < 0) {
		if (o.mi->teardown)
			o.mi->teardown(&m);
		return 1;
	}
	r = measure(&o, &m, &res);
	if (o.mi->teardown)
		o.mi->teardown(&m);
	if (r < 0)
		return 1;
	print_result(&o, &res);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "perturb-micro: error: write failure on standard output\n");
		return 1;
	}
	return 0;
}
