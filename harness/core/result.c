/*
 * result.c - see result.h.
 *
 * The output is scanned in chunks of whole lines, so that a workload
 * printing 100 MB (the host runner maps its output, it does not copy it)
 * costs page cache, not heap.
 */
#include "result.h"
#include "counters/counters.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Metric regexes are matched on at most this much text at a time (whole
 * lines; a longer line is cut): bounds what regexec() allocates. */
#define SCAN_CHUNK (256 * 1024)

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

/*
 * First match of re in text, line-wise: the text is cut into chunks of
 * whole lines of at most SCAN_CHUNK bytes.  Returns 1 and fills m[0..2].
 */
static int scan(const regex_t *re, const char *text, size_t len, regmatch_t *m)
{
	size_t off = 0;

	while (off < len) {
		size_t n = len - off;
		if (n > SCAN_CHUNK) {
			const char *nl = memrchr(text + off, '\n', SCAN_CHUNK);
			n = nl ? (size_t)(nl - (text + off)) + 1 : SCAN_CHUNK;
		}
		m[0].rm_so = 0;
		m[0].rm_eo = (regoff_t)n;
		if (!regexec(re, text + off, 2, m, REG_STARTEND)) {
			m[0].rm_so += (regoff_t)off;
			m[0].rm_eo += (regoff_t)off;
			if (m[1].rm_so >= 0) {
				m[1].rm_so += (regoff_t)off;
				m[1].rm_eo += (regoff_t)off;
			}
			return 1;
		}
		off += n;
	}
	return 0;
}

/* The one rule for numbers (see result.h); 0, or -1. */
static int parse_metric(const char *text, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(text, &end);
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	return end == text || *end || errno || !isfinite(*v) ? -1 : 0;
}

/*
 * Extract every metric from stdout, then stderr.  The config compiles the
 * regexes POSIX extended; here they are recompiled with REG_NEWLINE so that
 * one regexec() over a chunk of lines finds the first line-wise match
 * ('^' and '$' at line boundaries, '.' never crossing a line).
 */
static void extract_metrics(const struct run_request *req, const struct run_outcome *o,
			    struct run_result *res)
{
	const char *text[2] = { o->out, o->err };
	size_t len[2] = { o->out ? o->out_len : 0, o->err ? o->err_len : 0 };

	res->values = xcalloc(req->n_metrics ? req->n_metrics : 1, sizeof(*res->values));
	for (size_t i = 0; i < req->n_metrics; i++) {
		const struct metric_def *md = &req->metrics[i];
		struct metric_value *v = &res->values[res->n_values];
		regex_t own;
		const regex_t *re = &md->re;
		regmatch_t m[2];
		int found = 0, have_own = 0;
		char num[128];
		size_t so, eo;

		if (md->regex_src &&
		    !regcomp(&own, md->regex_src, REG_EXTENDED | REG_NEWLINE)) {
			re = &own;
			have_own = 1;
		}
		for (int k = 0; k < 2 && !found; k++) {
			if (len[k])
				found = scan(re, text[k], len[k], m);
			if (found) {
				int g = md->has_group && m[1].rm_so >= 0;
				so = (size_t)m[g].rm_so;
				eo = (size_t)m[g].rm_eo;
				if (eo - so >= sizeof(num))
					eo = so + sizeof(num) - 1;
				memcpy(num, text[k] + so, eo - so);
				num[eo - so] = '\0';
			}
		}
		if (have_own)
			regfree(&own);
		if (!found) {
			if (res->status == RUN_OK) {
				res->status = RUN_FAILED;
				set_reason(res, "metric '%s' not found in output", md->name);
			}
			continue;
		}
		if (parse_metric(num, &v->value) < 0) {
			if (res->status == RUN_OK) {
				res->status = RUN_FAILED;
				set_reason(res, "metric '%s': cannot parse '%s' as a number",
					   md->name, num);
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
	classify(req, o, res);
	if (res->status == RUN_OK && req->n_metrics)
		extract_metrics(req, o, res);
	res->out_tail = output_tail(o);
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
