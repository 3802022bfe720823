/*
 * proto.c - see proto.h.
 *
 * Encoding goes through a writer that checks every limit as it goes (a
 * request it cannot carry whole is refused), decoding through a reader
 * over the payload that checks every length against what is left before
 * it looks: a reader that failed stays failed, so a decoder reads its
 * fields in order and checks once at the end.
 */
#include "proto.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const struct {
	const char *tag, *what;
} types[] = {
	[PROTO_READY] = { "PERTURB-READY", "ready" },
	[PROTO_KERNEL] = { "KERNEL", "kernel request" },
	[PROTO_KERNEL_DONE] = { "PERTURB-KERNEL", "kernel" },
	[PROTO_COUNTERS] = { "COUNTERS", "counters request" },
	[PROTO_COUNTERS_DONE] = { "PERTURB-COUNTERS", "counters" },
	[PROTO_RUN] = { "RUN", "run request" },
	[PROTO_RESULT] = { "PERTURB-RESULT", "result" },
	[PROTO_ERROR] = { "PERTURB-ERROR", "error" },
	[PROTO_QUIT] = { "QUIT", "quit" },
	[PROTO_LTTNG] = { "LTTNG", "lttng request" },
	[PROTO_LTTNG_DONE] = { "PERTURB-LTTNG", "lttng" },
};

const char *proto_tag(enum proto_type t)
{
	return (size_t)t < ARRAY_SIZE(types) ? types[t].tag : "?";
}

/* ---- the writer ---- */

struct writer {
	struct strbuf sb;
	int failed;
	char why[160];
};

static void put_bytes(struct writer *w, const char *field, const void *s, size_t n, size_t max)
{
	if (w->failed)
		return;
	if (n > max) {
		snprintf(w->why, sizeof(w->why), "%s: %zu bytes, more than %zu", field, n, max);
		w->failed = 1;
		return;
	}
	strbuf_addf(&w->sb, "%zu:", n);
	strbuf_add(&w->sb, s, n);
	strbuf_add(&w->sb, ",", 1);
}

static void put_str(struct writer *w, const char *field, const char *s)
{
	put_bytes(w, field, s ? s : "", s ? strlen(s) : 0, PROTO_FIELD_MAX);
}

static void put_num(struct writer *w, long long v)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%lld", v);
	put_bytes(w, "number", b, (size_t)n, sizeof(b));
}

static void put_u64(struct writer *w, uint64_t v)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	put_bytes(w, "number", b, (size_t)n, sizeof(b));
}

/* A list; v NULL: -1 when it may be left out, else an empty list. */
static void put_list(struct writer *w, const char *field, const struct proto_list *l,
		     int may_leave_out)
{
	if (w->failed)
		return;
	if (!l->v) {
		put_num(w, may_leave_out ? -1 : 0);
		return;
	}
	if (l->n > PROTO_LIST_MAX) {
		snprintf(w->why, sizeof(w->why), "%s: %zu items, more than %d", field, l->n,
			 PROTO_LIST_MAX);
		w->failed = 1;
		return;
	}
	put_num(w, (long long)l->n);
	for (size_t i = 0; i < l->n; i++)
		put_str(w, field, l->v[i]);
}

static void put_kernel(struct writer *w, const struct proto_kernel *k)
{
	put_num(w, k->tracing_on);
	put_num(w, k->buffer_size_kb);
	put_num(w, k->tracer != NULL);
	if (k->tracer)
		put_str(w, "tracer", k->tracer);
	put_list(w, "events", &k->events, 1);
	put_list(w, "functions", &k->functions, 1);
	put_list(w, "options", &k->options, 1);
}

static void put_lttng(struct writer *w, const struct proto_lttng *l)
{
	if (l->events.n < 1 && !w->failed) {
		snprintf(w->why, sizeof(w->why), "events: empty");
		w->failed = 1;
	}
	put_list(w, "events", &l->events, 0);
	put_u64(w, l->subbuf_size);
	put_num(w, l->subbuf_count);
	put_num(w, l->overwrite != 0);
}

static void put_run(struct writer *w, const struct proto_run *r)
{
	if (r->argv.n < 1 && !w->failed) {
		snprintf(w->why, sizeof(w->why), "argv: empty");
		w->failed = 1;
	}
	put_num(w, r->timeout_ms);
	put_str(w, "cwd", r->cwd);
	put_list(w, "env", &r->env, 0);
	put_list(w, "argv", &r->argv, 0);
}

static void put_result(struct writer *w, const struct proto_result *r)
{
	put_num(w, r->end);
	put_num(w, r->code);
	put_num(w, r->wall_ns);
	put_num(w, r->user_us);
	put_num(w, r->sys_us);
	put_num(w, r->maxrss_kb);
	put_bytes(w, "stdout", r->out ? r->out : "", r->out_len, PROTO_OUTPUT_MAX);
	put_bytes(w, "stderr", r->err ? r->err : "", r->err_len, PROTO_OUTPUT_MAX);
	put_num(w, r->trace);
	if (r->trace == PROTO_TRACE_STATS) {
		put_u64(w, r->trace_events);
		put_u64(w, r->trace_lost);
		put_u64(w, r->trace_bytes);
	} else if (r->trace == PROTO_TRACE_ERROR) {
		put_str(w, "trace_error", r->trace_error);
	}
	if (r->n_counts > PROTO_LIST_MAX && !w->failed) {
		snprintf(w->why, sizeof(w->why), "counters: %zu, more than %d", r->n_counts,
			 PROTO_LIST_MAX);
		w->failed = 1;
	}
	put_num(w, (long long)r->n_counts);
	for (size_t i = 0; i < r->n_counts; i++) {
		const struct proto_count *c = &r->counts[i];
		put_num(w, (long long)c->index);
		put_num(w, c->why == NULL);
		if (c->why) {
			put_str(w, "counter", c->why);
			continue;
		}
		put_u64(w, c->raw);
		put_u64(w, c->enabled_ns);
		put_u64(w, c->running_ns);
	}
	/* left out without LTTNG: the frame of an agent before the field */
	if (r->lttng == PROTO_TRACE_NONE)
		return;
	put_num(w, r->lttng);
	if (r->lttng == PROTO_TRACE_STATS) {
		put_u64(w, r->lttng_events);
		put_u64(w, r->lttng_discarded);
		put_u64(w, r->lttng_lost);
		put_u64(w, r->lttng_bytes);
	} else {
		put_str(w, "lttng_error", r->lttng_error);
	}
}

int proto_encode(const struct proto_msg *m, struct strbuf *line, char *why, size_t wlen)
{
	static const char digits[] = "0123456789abcdef";
	struct writer w = { .sb = STRBUF_INIT };
	const char *what = (size_t)m->type < ARRAY_SIZE(types) ? types[m->type].what : "unknown";
	int ret = -1;

	switch (m->type) {
	case PROTO_READY:
		put_str(&w, "release", m->release);
		break;
	case PROTO_KERNEL:
		put_kernel(&w, &m->kernel);
		break;
	case PROTO_LTTNG:
		put_lttng(&w, &m->lttng);
		break;
	case PROTO_KERNEL_DONE:
	case PROTO_LTTNG_DONE:
		put_num(&w, m->done.ok != 0);
		put_str(&w, "reason", m->done.reason);
		break;
	case PROTO_COUNTERS:
	case PROTO_COUNTERS_DONE:
		put_list(&w, "counters", &m->counters, 0);
		break;
	case PROTO_RUN:
		put_run(&w, &m->run);
		break;
	case PROTO_RESULT:
		put_result(&w, &m->result);
		break;
	case PROTO_ERROR:
		put_str(&w, "reason", m->error);
		break;
	case PROTO_QUIT:
		break;
	default:
		snprintf(w.why, sizeof(w.why), "no such message (%d)", (int)m->type);
		w.failed = 1;
	}
	if (!w.failed && w.sb.len > PROTO_PAYLOAD_MAX) {
		snprintf(w.why, sizeof(w.why), "%zu bytes, more than %d", w.sb.len,
			 PROTO_PAYLOAD_MAX);
		w.failed = 1;
	}
	if (w.failed) {
		snprintf(why, wlen, "%s message: %s", what, w.why);
		goto out;
	}
	const unsigned char *p = (const unsigned char *)(w.sb.buf ? w.sb.buf : "");
	uLong crc = crc32(crc32(0L, Z_NULL, 0), p, (uInt)w.sb.len);
	char *hex = xmalloc(2 * w.sb.len + 2);
	for (size_t i = 0; i < w.sb.len; i++) {
		hex[2 * i] = digits[p[i] >> 4];
		hex[2 * i + 1] = digits[p[i] & 15];
	}
	hex[2 * w.sb.len] = '\n';
	strbuf_addf(line, "%s %lu %zu %08lx ", types[m->type].tag, m->seq, w.sb.len,
		    (unsigned long)crc);
	strbuf_add(line, hex, 2 * w.sb.len + 1);
	free(hex);
	ret = 0;
out:
	strbuf_release(&w.sb);
	return ret;
}

/* ---- the reader ---- */

struct reader {
	const unsigned char *p;
	size_t len, off;
	int failed;
	char why[160];
};

static int bad(struct reader *r, const char *fmt, ...) PRINTF(2, 3);
static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->failed) {
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof(r->why), fmt, ap);
		va_end(ap);
	}
	r->failed = 1;
	return -1;
}

/* A decimal without sign or leading zero, of at most max_digits, in
 * s[0..n); -1 when it is not one. */
static int parse_digits(const unsigned char *s, size_t n, size_t max_digits,
			unsigned long long *v)
{
	*v = 0;
	if (!n || n > max_digits || (s[0] == '0' && n > 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)s[i] - '0';
		if (d > 9 || *v > (ULLONG_MAX - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return 0;
}

static int get_bytes(struct reader *r, const char *field, size_t max,
		     const unsigned char **s, size_t *n)
{
	size_t i = r->off;
	unsigned long long v;

	if (r->failed)
		return -1;
	while (i < r->len && i - r->off < 12 && r->p[i] >= '0' && r->p[i] <= '9')
		i++;
	if (i == r->len)
		return bad(r, "%s: truncated", field);
	if (r->p[i] != ':' || parse_digits(r->p + r->off, i - r->off, 10, &v) < 0)
		return bad(r, "%s: not a length-prefixed field", field);
	if (v > max)
		return bad(r, "%s: %llu bytes, more than %zu", field, v, max);
	i++;
	if (r->len - i < v + 1)
		return bad(r, "%s: truncated", field);
	if (r->p[i + v] != ',')
		return bad(r, "%s: not a length-prefixed field", field);
	*s = r->p + i;
	*n = (size_t)v;
	r->off = i + (size_t)v + 1;
	return 0;
}

static int get_num(struct reader *r, const char *field, long long min, long long max,
		   long long *v)
{
	const unsigned char *s;
	size_t n;
	unsigned long long mag;
	int neg;

	*v = 0;
	if (get_bytes(r, field, 24, &s, &n) < 0)
		return -1;
	neg = n && s[0] == '-';
	if (parse_digits(s + neg, n - neg, 20, &mag) < 0 || (neg && !mag))
		return bad(r, "%s: not a number", field);
	if (neg ? mag - 1 > (unsigned long long)LLONG_MAX : mag > (unsigned long long)LLONG_MAX)
		return bad(r, "%s: out of range", field);
	*v = neg ? -(long long)(mag - 1) - 1 : (long long)mag;
	if (*v < min || *v > max)
		return bad(r, "%s: %lld is out of range [%lld, %lld]", field, *v, min, max);
	return 0;
}

static int get_u64(struct reader *r, const char *field, uint64_t *v)
{
	const unsigned char *s;
	size_t n;
	unsigned long long mag;

	*v = 0;
	if (get_bytes(r, field, 24, &s, &n) < 0)
		return -1;
	if (parse_digits(s, n, 20, &mag) < 0)
		return bad(r, "%s: not a number", field);
	*v = mag;
	return 0;
}

/* A string without NUL (malloc'd; "" on failure, so that *out is never NULL). */
static int get_str(struct reader *r, const char *field, char **out)
{
	const unsigned char *s;
	size_t n;

	if (get_bytes(r, field, PROTO_FIELD_MAX, &s, &n) < 0) {
		*out = xstrdup("");
		return -1;
	}
	if (memchr(s, '\0', n)) {
		*out = xstrdup("");
		return bad(r, "%s: holds a NUL byte", field);
	}
	*out = xstrndup((const char *)s, n);
	return 0;
}

/* Bytes of at most max (malloc'd, NUL added; never NULL). */
static int get_blob(struct reader *r, const char *field, size_t max, char **out, size_t *len)
{
	const unsigned char *s = NULL;
	size_t n = 0;
	int e = get_bytes(r, field, max, &s, &n);

	*len = e < 0 ? 0 : n;
	*out = xmalloc(*len + 1);
	if (*len)
		memcpy(*out, s, *len);
	(*out)[*len] = '\0';
	return e;
}

static int get_list(struct reader *r, const char *field, int may_leave_out,
		    struct proto_list *l)
{
	long long n;

	l->v = NULL;
	l->n = 0;
	if (get_num(r, field, may_leave_out ? -1 : 0, PROTO_LIST_MAX, &n) < 0 || n < 0)
		return r->failed ? -1 : 0;
	l->v = xcalloc((size_t)n + 1, sizeof(*l->v));
	for (long long i = 0; i < n; i++) {
		if (get_str(r, field, &l->v[l->n++]) < 0)
			return -1;
	}
	return 0;
}

static void list_release(struct proto_list *l)
{
	for (size_t i = 0; l->v && i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void get_kernel(struct reader *r, struct proto_kernel *k)
{
	long long v;

	get_num(r, "tracing_on", -1, 1, &v);
	k->tracing_on = (int)v;
	get_num(r, "buffer_size_kb", -1, LONG_MAX, &v);
	if (!r->failed && v == 0)
		bad(r, "buffer_size_kb: 0");
	k->buffer_size_kb = (long)v;
	get_num(r, "tracer", 0, 1, &v);
	if (v && !r->failed)
		get_str(r, "tracer", &k->tracer);
	get_list(r, "events", 1, &k->events);
	get_list(r, "functions", 1, &k->functions);
	get_list(r, "options", 1, &k->options);
}

static void get_lttng(struct reader *r, struct proto_lttng *l)
{
	long long v;

	get_list(r, "events", 0, &l->events);
	if (!r->failed && l->events.n < 1)
		bad(r, "events: empty");
	get_u64(r, "subbuf_size", &l->subbuf_size);
	get_num(r, "subbuf_count", 0, LONG_MAX, &v);
	l->subbuf_count = (long)v;
	get_num(r, "overwrite", 0, 1, &v);
	l->overwrite = (int)v;
}

static void get_run(struct reader *r, struct proto_run *run)
{
	get_num(r, "timeout_ms", 1, LLONG_MAX, &run->timeout_ms);
	get_str(r, "cwd", &run->cwd);
	get_list(r, "env", 0, &run->env);
	get_list(r, "argv", 0, &run->argv);
	if (!r->failed && run->argv.n < 1)
		bad(r, "argv: empty");
}

static void get_result(struct reader *r, struct proto_result *res)
{
	long long v, n;

	get_num(r, "how", PROTO_END_EXIT, PROTO_END_ERROR, &v);
	res->end = (enum proto_end)v;
	get_num(r, "code", INT_MIN, INT_MAX, &v);
	res->code = (int)v;
	get_num(r, "wall_ns", 0, LLONG_MAX, &v);
	res->wall_ns = v;
	get_num(r, "user_us", 0, LLONG_MAX, &v);
	res->user_us = v;
	get_num(r, "sys_us", 0, LLONG_MAX, &v);
	res->sys_us = v;
	get_num(r, "maxrss_kb", 0, LONG_MAX, &v);
	res->maxrss_kb = (long)v;
	get_blob(r, "stdout", PROTO_OUTPUT_MAX, &res->out, &res->out_len);
	get_blob(r, "stderr", PROTO_OUTPUT_MAX, &res->err, &res->err_len);
	get_num(r, "trace", PROTO_TRACE_NONE, PROTO_TRACE_ERROR, &v);
	res->trace = (enum proto_trace)v;
	if (res->trace == PROTO_TRACE_STATS) {
		get_u64(r, "trace_events", &res->trace_events);
		get_u64(r, "trace_lost", &res->trace_lost);
		get_u64(r, "trace_bytes", &res->trace_bytes);
	} else if (res->trace == PROTO_TRACE_ERROR && !r->failed) {
		get_str(r, "trace_error", &res->trace_error);
	}
	if (get_num(r, "counters", 0, PROTO_LIST_MAX, &n) < 0)
		return;
	res->counts = xcalloc((size_t)n + 1, sizeof(*res->counts));
	for (long long i = 0; i < n && !r->failed; i++) {
		struct proto_count *c = &res->counts[res->n_counts++];
		get_num(r, "counter", 0, PROTO_LIST_MAX - 1, &v);
		c->index = (size_t)v;
		get_num(r, "counter", 0, 1, &v);
		if (r->failed)
			break;
		if (!v) {
			get_str(r, "counter", &c->why);
			continue;
		}
		get_u64(r, "counter", &c->raw);
		get_u64(r, "counter", &c->enabled_ns);
		get_u64(r, "counter", &c->running_ns);
	}
	if (r->failed || r->off == r->len)
		return;		/* no LTTng accounting */
	get_num(r, "lttng", PROTO_TRACE_STATS, PROTO_TRACE_ERROR, &v);
	res->lttng = (enum proto_trace)v;
	if (res->lttng == PROTO_TRACE_STATS) {
		get_u64(r, "lttng_events", &res->lttng_events);
		get_u64(r, "lttng_discarded", &res->lttng_discarded);
		get_u64(r, "lttng_lost", &res->lttng_lost);
		get_u64(r, "lttng_bytes", &res->lttng_bytes);
	} else if (!r->failed) {
		get_str(r, "lttng_error", &res->lttng_error);
	}
}

/* The payload of m->type from r; 0, or -1 with r->why. */
static int get_payload(struct reader *r, struct proto_msg *m)
{
	long long v;

	switch (m->type) {
	case PROTO_READY:
		get_str(r, "release", &m->release);
		break;
	case PROTO_KERNEL:
		get_kernel(r, &m->kernel);
		break;
	case PROTO_LTTNG:
		get_lttng(r, &m->lttng);
		break;
	case PROTO_KERNEL_DONE:
	case PROTO_LTTNG_DONE:
		get_num(r, "ok", 0, 1, &v);
		m->done.ok = (int)v;
		if (!r->failed)
			get_str(r, "reason", &m->done.reason);
		break;
	case PROTO_COUNTERS:
	case PROTO_COUNTERS_DONE:
		get_list(r, "counters", 0, &m->counters);
		break;
	case PROTO_RUN:
		get_run(r, &m->run);
		break;
	case PROTO_RESULT:
		get_result(r, &m->result);
		break;
	case PROTO_ERROR:
		get_str(r, "reason", &m->error);
		break;
	case PROTO_QUIT:
		break;
	}
	if (!r->failed && r->off != r->len)
		bad(r, "%zu bytes after the last field", r->len - r->off);
	return r->failed ? -1 : 0;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The next blank-ended decimal of at most max in s[*i..n); -1 when none. */
static int frame_number(const char *s, size_t n, size_t *i, unsigned long long max,
			unsigned long long *v)
{
	size_t from = *i;

	while (*i < n && s[*i] != ' ')
		(*i)++;
	if (*i == n || parse_digits((const unsigned char *)s + from, *i - from, 20, v) < 0 ||
	    *v > max)
		return -1;
	(*i)++;
	return 0;
}

int proto_decode(const void *buf, size_t len, struct proto_msg *m, char *why, size_t wlen)
{
	const char *s = buf, *what;
	size_t i, t;
	unsigned long long seq, plen, crc = 0;
	unsigned char *p = NULL;
	struct reader r = { 0 };
	int ret = -1;

	memset(m, 0, sizeof(*m));
	for (t = 0; t < ARRAY_SIZE(types); t++) {
		size_t tl = strlen(types[t].tag);
		if (len > tl && !memcmp(s, types[t].tag, tl) && s[tl] == ' ')
			break;
	}
	if (t == ARRAY_SIZE(types)) {
		snprintf(why, wlen, "not a frame");
		return -1;
	}
	m->type = (enum proto_type)t;
	what = types[t].what;
	i = strlen(types[t].tag) + 1;
	if (frame_number(s, len, &i, ULONG_MAX, &seq) < 0 ||
	    frame_number(s, len, &i, ULLONG_MAX, &plen) < 0 || len - i < 9 || s[i + 8] != ' ') {
		snprintf(why, wlen, "malformed %s frame", what);
		goto out;
	}
	for (size_t k = 0; k < 8; k++) {
		int d = hexval((unsigned char)s[i + k]);
		if (d < 0) {
			snprintf(why, wlen, "malformed %s frame", what);
			goto out;
		}
		crc = crc << 4 | (unsigned)d;
	}
	i += 9;
	if (plen > PROTO_PAYLOAD_MAX) {
		snprintf(why, wlen, "%s frame too large (%llu bytes, at most %d)", what, plen,
			 PROTO_PAYLOAD_MAX);
		goto out;
	}
	if (len - i != 2 * plen) {
		snprintf(why, wlen, len - i < 2 * plen ? "truncated %s frame (%zu of %llu bytes)" :
			 "%s frame longer than its length (%zu bytes, not %llu)", what,
			 (len - i) / 2, plen);
		goto out;
	}
	p = xmalloc(plen + 1);
	for (size_t k = 0; k < plen; k++) {
		int a = hexval((unsigned char)s[i + 2 * k]), b = hexval((unsigned char)s[i + 2 * k + 1]);
		if (a < 0 || b < 0) {
			snprintf(why, wlen, "malformed %s frame (not hex)", what);
			goto out;
		}
		p[k] = (unsigned char)(a << 4 | b);
	}
	if (crc32(crc32(0L, Z_NULL, 0), p, (uInt)plen) != crc) {
		snprintf(why, wlen, "%s frame fails its checksum", what);
		goto out;
	}
	m->seq = (unsigned long)seq;
	r.p = p;
	r.len = (size_t)plen;
	if (get_payload(&r, m) < 0) {
		snprintf(why, wlen, "malformed %s message: %s", what, r.why);
		goto out;
	}
	ret = 0;
out:
	free(p);
	if (ret < 0)
		proto_msg_release(m);
	return ret;
}

void proto_msg_release(struct proto_msg *m)
{
	switch (m->type) {
	case PROTO_READY:
		free(m->release);
		break;
	case PROTO_KERNEL:
		free(m->kernel.tracer);
		list_release(&m->kernel.events);
		list_release(&m->kernel.functions);
		list_release(&m->kernel.options);
		break;
	case PROTO_LTTNG:
		list_release(&m->lttng.events);
		break;
	case PROTO_KERNEL_DONE:
	case PROTO_LTTNG_DONE:
		free(m->done.reason);
		break;
	case PROTO_COUNTERS:
	case PROTO_COUNTERS_DONE:
		list_release(&m->counters);
		break;
	case PROTO_RUN:
		free(m->run.cwd);
		list_release(&m->run.env);
		list_release(&m->run.argv);
		break;
	case PROTO_RESULT:
		free(m->result.out);
		free(m->result.err);
		free(m->result.trace_error);
		free(m->result.lttng_error);
		for (size_t i = 0; i < m->result.n_counts; i++)
			free(m->result.counts[i].why);
		free(m->result.counts);
		break;
	case PROTO_ERROR:
		free(m->error);
		break;
	case PROTO_QUIT:
		break;
	}
	memset(m, 0, sizeof(*m));
}
