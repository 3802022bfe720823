/*
 * result.c - see result.h.
 *
 * The output is scanned in chunks of whole lines of at most SCAN_CHUNK
 * bytes, as it comes (the host runner feeds it while the run lasts, see
 * proc.h: capture), so that a workload printing gigabytes costs neither
 * heap nor page cache beyond its bound.
 */
#include "result.h"
#include "counters/counters.h"
#include "proc.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Metric regexes are matched on at most this much text at a time (whole
 * lines; a longer line is cut): bounds what regexec() allocates. */
#define SCAN_CHUNK CAPTURE_CHUNK

static void set_reason(struct run_result *res, const char *fmt, ...) PRINTF(2, 3);
static void set_reason(struct run_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

static void classify(const struct run_request *req, const struct run_outcome *o,
		     struct run_result *res)
{
	switch (o->end) {
	case RUN_END_EXIT:
		res->exit_code = o->code;
		res->status = o->code ? RUN_FAILED : RUN_OK;
		if (o->code)
			set_reason(res, "exited with status %d", o->code);
		break;
	case RUN_END_SIGNAL:
		res->status = RUN_CRASHED;
		res->signal = o->code;
		set_reason(res, "killed by signal %d (%s)", o->code, strsignal(o->code));
		break;
	case RUN_END_TIMEOUT:
		res->status = RUN_TIMEOUT;
		set_reason(res, "timed out after %g s", req->timeout_s);
		break;
	case RUN_END_STOP:
		res->status = RUN_INTERRUPTED;
		set_reason(res, "interrupted by signal %d (%s)", o->code, strsignal(o->code));
		break;
	case RUN_END_ERROR:
		res->status = RUN_ERROR;
		set_reason(res, "%s", o->why ? o->why : "not started");
		break;
	}
}

int metric_parse(const char *text, double *v, const char **why)
{
	const char *p = text;
	char *end;

	*why = NULL;
	*v = NAN;
	while (*p == ' ' || *p == '\t')
		p++;
	/* strtod() takes these; a metric's value is a finite number */
	if (!strncasecmp(p + (*p == '+' || *p == '-'), "inf", 3) ||
	    !strncasecmp(p + (*p == '+' || *p == '-'), "nan", 3)) {
		*why = "not a finite number";
		return -1;
	}
	errno = 0;
	*v = strtod(text, &end);
	if (end == text) {
		*why = "not a number";
		return -1;
	}
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (*end) {
		*why = "not a number: text after it";
		return -1;
	}
	if (errno == ERANGE && isinf(*v)) {
		*why = "too large for a double (more than 1.8e308)";
		return -1;
	}
	if (errno == ERANGE && *v == 0) {
		*why = "too small for a double (below 4.9e-324): it would be stored as 0";
		return -1;
	}
	/* ERANGE with a subnormal value: a number, kept as it is */
	if (!isfinite(*v)) {
		*why = "not a finite number";
		return -1;
	}
	return 0;
}

struct scan_metric {
	regex_t re;
	int compiled;
	int found[2];		/* in stdout, in stderr */
	char *num[2];		/* the matched text, whole (at most a chunk) */
};

struct metric_scan {
	const struct run_request *req;
	struct scan_metric *m;
	struct metric_stream {
		struct metric_scan *scan;
		int k;
	} stream[2];
};

/*
 * The config compiles the regexes POSIX extended; here they are recompiled
 * with REG_NEWLINE so that one regexec() over a chunk of lines finds the
 * first line-wise match ('^' and '$' at line boundaries, '.' never crossing
 * a line).
 */
struct metric_scan *metric_scan_new(const struct run_request *req)
{
	struct metric_scan *s = xcalloc(1, sizeof(*s));

	s->req = req;
	s->m = xcalloc(req->n_metrics ? req->n_metrics : 1, sizeof(*s->m));
	for (size_t i = 0; i < req->n_metrics; i++)
		s->m[i].compiled = req->metrics[i].regex_src &&
			!regcomp(&s->m[i].re, req->metrics[i].regex_src,
				 REG_EXTENDED | REG_NEWLINE);
	for (int k = 0; k < 2; k++)
		s->stream[k] = (struct metric_stream){ .scan = s, .k = k };
	return s;
}

void *metric_scan_stream(struct metric_scan *s, int k)
{
	return &s->stream[k];
}

void metric_scan_free(struct metric_scan *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->req->n_metrics; i++) {
		if (s->m[i].compiled)
			regfree(&s->m[i].re);
		free(s->m[i].num[0]);
		free(s->m[i].num[1]);
	}
	free(s->m);
	free(s);
}

/* Each metric not yet found in stream k, on a chunk of whole lines of at
 * most SCAN_CHUNK bytes.  Offsets stay within the chunk (regoff_t is an
 * int: never an offset into the whole output). */
static void scan_chunk(struct metric_scan *s, int k, const char *text, size_t n)
{
	for (size_t i = 0; i < s->req->n_metrics; i++) {
		const struct metric_def *md = &s->req->metrics[i];
		struct scan_metric *sm = &s->m[i];
		const regex_t *re = sm->compiled ? &sm->re : &md->re;
		regmatch_t m[2];
		size_t so, eo;
		int g;

		if (sm->found[k] || sm->found[0])
			continue;
		m[0].rm_so = 0;
		m[0].rm_eo = (regoff_t)n;
		if (regexec(re, text, 2, m, REG_STARTEND))
			continue;
		g = md->has_group && m[1].rm_so >= 0;
		so = (size_t)m[g].rm_so;
		eo = (size_t)m[g].rm_eo;
		sm->num[k] = xstrndup(text + so, eo - so);	/* the whole token */
		sm->found[k] = 1;
	}
}

size_t metric_scan_feed(void *arg, const char *text, size_t len, int final)
{
	struct metric_stream *st = arg;
	size_t off = 0;

	while (off < len) {
		size_t n = len - off;
		if (n > SCAN_CHUNK || !final) {
			const char *nl;
			if (n > SCAN_CHUNK)
				n = SCAN_CHUNK;
			nl = memrchr(text + off, '\n', n);
			if (nl)
				n = (size_t)(nl - (text + off)) + 1;
			else if (n < SCAN_CHUNK)
				break;	/* an incomplete line: more may come */
		}
		scan_chunk(st->scan, st->k, text + off, n);
		off += n;
	}
	return off;
}

/* The metrics' values from the scan (see result.h). */
static void extract_metrics(const struct run_request *req, const struct metric_scan *s,
			    struct run_result *res)
{
	res->values = xcalloc(req->n_metrics ? req->n_metrics : 1, sizeof(*res->values));
	for (size_t i = 0; i < req->n_metrics; i++) {
		const struct metric_def *md = &req->metrics[i];
		const struct scan_metric *sm = &s->m[i];
		struct metric_value *v = &res->values[res->n_values];
		const char *num = sm->found[0] ? sm->num[0] : sm->found[1] ? sm->num[1] : NULL;
		const char *why;

		if (!num) {
			if (res->status == RUN_OK) {
				res->status = RUN_FAILED;
				set_reason(res, "metric '%s' not found in output", md->name);
			}
			continue;
		}
		if (metric_parse(num, &v->value, &why) < 0) {
			if (res->status == RUN_OK) {
				res->status = RUN_FAILED;
				set_reason(res, "metric '%s': cannot parse '%.200s%s' as a number: %s",
					   md->name, num, strlen(num) > 200 ? "..." : "", why);
			}
			continue;
		}
		v->name = xstrdup(md->name);
		v->unit = xstrdup(md->unit ? md->unit : "");
		res->n_values++;
	}
}

static char *output_tail(const struct run_outcome *o)
{
	size_t out_len = o->out ? o->out_len : 0, err_len = o->err ? o->err_len : 0;
	char *buf = xmalloc(RUNNER_TAIL_BYTES + 1), *p;
	size_t want = RUNNER_TAIL_BYTES, len = 0;
	size_t from_err = err_len < want ? err_len : want;
	size_t from_out = want - from_err;

	if (from_out > out_len)
		from_out = out_len;
	if (from_out)
		memcpy(buf, o->out + out_len - from_out, from_out);
	len = from_out;
	if (from_err)
		memcpy(buf + len, o->err + err_len - from_err, from_err);
	len += from_err;
	buf[len] = '\0';

	p = buf;
	if (out_len + err_len > len)
		while (p < buf + len && ((unsigned char)*p & 0xc0) == 0x80)
			p++;
	for (char *q = p; q < buf + len; q++)
		if (!*q)
			*q = ' ';
	if (p != buf)
		memmove(buf, p, (size_t)(buf + len - p) + 1);
	return buf;
}

void result_build(const struct run_request *req, const struct run_outcome *o,
		  struct run_result *res)
{
	res->wall_s = o->wall_s;
	res->user_s = o->user_s;
	res->sys_s = o->sys_s;
	res->maxrss_kb = o->maxrss_kb;
	res->output_dropped = o->dropped;
	classify(req, o, res);
	if (res->status == RUN_OK && req->n_metrics) {
		struct metric_scan *own = NULL;
		const struct metric_scan *s = o->scan;
		if (!s) {
			s = own = metric_scan_new(req);
			if (o->out)
				metric_scan_feed(metric_scan_stream(own, 0), o->out, o->out_len, 1);
			if (o->err)
				metric_scan_feed(metric_scan_stream(own, 1), o->err, o->err_len, 1);
		}
		extract_metrics(req, s, res);
		metric_scan_free(own);
	}
	res->out_tail = output_tail(o);
}

const struct reserved_metric result_reserved_metrics[] = {
	{ "wall", "s", 1, NULL }, { "user", "s", 1, NULL }, { "sys", "s", 1, NULL },
	{ "maxrss", "KiB", 1, NULL },
	/* core/runner.c: the run's cgroup, what it left behind */
	{ "cgroup_cpu_s", "s", 0, NULL }, { "cgroup_user_s", "s", 0, NULL },
	{ "cgroup_sys_s", "s", 0, NULL }, { "cgroup_memory_peak", "B", 0, NULL },
	{ "cgroup_io_read", "B", 0, NULL }, { "cgroup_io_write", "B", 0, NULL },
	{ "leftover_procs", "procs", 0, NULL },
	/* backends/host.c, qemu.c, lttng.c, qemu_lttng.c: tracers' accounting */
	{ "trace_events", "events", 0, "kernel" }, { "trace_lost", "events", 0, "kernel" },
	{ "trace_bytes", "B", 0, "kernel" },
	{ "bpf_runs", "events", 0, "bpf" }, { "bpf_run_time", "ns", 0, "bpf" },
	{ "bpf_programs", "programs", 0, "bpf" },
	{ "perf_events", "events", 0, "perf" }, { "perf_lost", "events", 0, "perf" },
	{ "perf_bytes", "B", 0, "perf" },
	{ "lttng_events", "events", 0, "lttng" }, { "lttng_discarded", "events", 0, "lttng" },
	{ "lttng_lost", "events", 0, "lttng" }, { "lttng_bytes", "bytes", 0, "lttng" },
	{ NULL, NULL, 0, NULL }
};

const struct reserved_metric *result_metric_reserved(const char *name)
{
	for (const struct reserved_metric *r = result_reserved_metrics; r->name; r++)
		if (!strcmp(r->name, name))
			return r;
	return NULL;
}

void result_add_value(struct run_result *res, const char *name, double value, const char *unit)
{
	res->values = xrealloc(res->values, (res->n_values + 1) * sizeof(*res->values));
	res->values[res->n_values++] = (struct metric_value){
		.name = xstrdup(name), .value = value, .unit = xstrdup(unit),
	};
}

void result_add_reading(struct run_result *res, const struct counter_reading *rd)
{
	result_add_value(res, rd->name, rd->value, rd->unit);
	struct metric_value *v = &res->values[res->n_values - 1];
	v->scaled = rd->scaled;
	v->time_enabled_ns = rd->time_enabled_ns;
	v->time_running_ns = rd->time_running_ns;
}
