/*
 * test_proto.c - the agent protocol (harness/backends/proto.h): every
 * message survives a round trip and encodes canonically; a frame cut at
 * any byte, with a wrong checksum, with fields over the limits or made of
 * garbage is refused with a reason and never read past its end (run it
 * under SANITIZE=1 to check the last).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "backends/proto.h"
#include "lib/util.h"

static char *names[] = { "task-clock", "page-faults", "", NULL };
static char *reasons[] = { "", "no hardware PMU (perf_event_open: ENOENT)", NULL };
static char *events[] = { "raw_syscalls:*", "sched:sched_switch", NULL };
static char *options[] = { "nooverwrite", NULL };
static char *lttng_events[] = { "syscall:getppid", "sched_switch", "syscalls", NULL };
static char *argv_[] = { "/usr/bin/perturb-micro", "null-syscall", "--samples", "3", "", NULL };
static char *env[] = { "PATH=/bin", "HOME=/root", "X=a b\tc=d", NULL };
static char out_bytes[] = "ns_per_op: 12.5\n\0binary\xff\x01";
static struct proto_count counts[] = {
	{ .index = 0, .raw = 123456789012345ULL, .enabled_ns = 1000, .running_ns = 999 },
	{ .index = 2, .why = "perf_event_open: EACCES" },
	{ .index = 3, .raw = UINT64_MAX, .enabled_ns = UINT64_MAX, .running_ns = 0 },
};

#define LIST(a_, n_) ((struct proto_list){ .v = (a_), .n = (n_) })
#define SLIST(a_, n_) { .v = (a_), .n = (n_) }

/* One of every message (and of every variant of the result's fields). */
static struct proto_msg samples[] = {
	{ .type = PROTO_READY, .release = "6.1.0-28-amd64" },
	{ .type = PROTO_KERNEL, .kernel = {
		.tracing_on = 1, .buffer_size_kb = 4096, .tracer = "function",
		.events = SLIST(events, 2), .functions = SLIST(NULL, 0),
		.options = SLIST(options, 1) } },
	/* left out vs empty */
	{ .type = PROTO_KERNEL, .kernel = {
		.tracing_on = -1, .buffer_size_kb = -1, .tracer = NULL,
		.events = SLIST(events, 0), .functions = SLIST(NULL, 0),
		.options = SLIST(NULL, 0) } },
	{ .type = PROTO_KERNEL_DONE, .done = { .ok = 1, .reason = "" } },
	{ .type = PROTO_KERNEL_DONE, .done = { .ok = 0, .reason = "kernel: event 'x:y' "
					       "matches no event of the guest kernel" } },
	{ .type = PROTO_COUNTERS, .counters = SLIST(names, 3) },
	{ .type = PROTO_COUNTERS, .counters = SLIST(names, 0) },
	{ .type = PROTO_COUNTERS_DONE, .counters = SLIST(reasons, 2) },
	{ .type = PROTO_RUN, .seq = 7, .run = {
		.timeout_ms = 60000, .cwd = "/tmp/work dir", .env = SLIST(env, 3),
		.argv = SLIST(argv_, 5) } },
	{ .type = PROTO_RESULT, .seq = 7, .result = {
		.end = PROTO_END_EXIT, .code = 0, .wall_ns = 1234567890, .user_us = 1000,
		.sys_us = 2000, .maxrss_kb = 4096, .out = out_bytes,
		.out_len = sizeof(out_bytes) - 1, .err = "warn\n", .err_len = 5,
		.trace = PROTO_TRACE_STATS, .trace_events = 42, .trace_lost = 0,
		.trace_bytes = UINT64_MAX, .counts = counts, .n_counts = 3 } },
	{ .type = PROTO_RESULT, .seq = ULONG_MAX, .result = {
		.end = PROTO_END_SIGNAL, .code = 9, .trace = PROTO_TRACE_ERROR,
		.trace_error = "cannot read per_cpu/cpu0/stats" } },
	{ .type = PROTO_RESULT, .seq = 1, .result = {
		.end = PROTO_END_ERROR, .code = -2147483647 - 1,
		.err = "cannot run 'x': No such file or directory", .err_len = 41 } },
	{ .type = PROTO_RESULT, .seq = 2, .result = { .end = PROTO_END_TIMEOUT } },
	{ .type = PROTO_LTTNG, .lttng = {
		.events = SLIST(lttng_events, 3), .subbuf_size = 262144, .subbuf_count = 4,
		.overwrite = 1 } },
	{ .type = PROTO_LTTNG, .lttng = { .events = SLIST(lttng_events, 1) } },
	{ .type = PROTO_LTTNG_DONE, .done = { .ok = 1, .reason = "" } },
	{ .type = PROTO_LTTNG_DONE, .done = { .ok = 0, .reason = "'lttng list' failed: Error: "
					      "Unable to list kernel events" } },
	{ .type = PROTO_RESULT, .seq = 8, .result = {
		.end = PROTO_END_EXIT, .counts = counts, .n_counts = 1,
		.lttng = PROTO_TRACE_STATS, .lttng_events = 30001, .lttng_discarded = 2,
		.lttng_lost = 0, .lttng_bytes = UINT64_MAX } },
	{ .type = PROTO_RESULT, .seq = 9, .result = {
		.end = PROTO_END_EXIT, .trace = PROTO_TRACE_STATS, .lttng = PROTO_TRACE_ERROR,
		.lttng_error = "'lttng stop' failed: Error: Session not found" } },
	{ .type = PROTO_ERROR, .seq = 3, .error = "run request frame fails its checksum" },
	{ .type = PROTO_QUIT },
};

static void encode(const struct proto_msg *m, struct strbuf *sb)
{
	char why[256] = "";

	strbuf_reset(sb);
	cr_assert_eq(proto_encode(m, sb, why, sizeof(why)), 0, "%s: %s", proto_tag(m->type),
		     why);
	cr_assert(sb->len && sb->buf[sb->len - 1] == '\n');
	cr_assert_eq(memchr(sb->buf, '\n', sb->len), sb->buf + sb->len - 1, "one line");
}

static void assert_list_eq(const struct proto_list *a, const struct proto_list *b)
{
	cr_assert_eq(a->v == NULL, b->v == NULL, "left out vs present");
	cr_assert_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		cr_assert_str_eq(a->v[i], b->v[i]);
	if (a->v)
		cr_assert_null(b->v[b->n], "NULL-terminated");
}

static void assert_bytes_eq(const char *a, size_t an, const char *b, size_t bn)
{
	cr_assert_eq(an, bn);
	cr_assert(!an || !memcmp(a, b, an));
	cr_assert_eq(b[bn], '\0', "a NUL follows");
}

static const char *str(const char *s)
{
	return s ? s : "";
}

static void assert_msg_eq(const struct proto_msg *a, const struct proto_msg *b)
{
	cr_assert_eq(a->type, b->type);
	cr_assert_eq(a->seq, b->seq);
	switch (a->type) {
	case PROTO_READY:
		cr_assert_str_eq(a->release, b->release);
		break;
	case PROTO_KERNEL:
		cr_assert_eq(a->kernel.tracing_on, b->kernel.tracing_on);
		cr_assert_eq(a->kernel.buffer_size_kb, b->kernel.buffer_size_kb);
		cr_assert_eq(a->kernel.tracer == NULL, b->kernel.tracer == NULL);
		if (a->kernel.tracer)
			cr_assert_str_eq(a->kernel.tracer, b->kernel.tracer);
		assert_list_eq(&a->kernel.events, &b->kernel.events);
		assert_list_eq(&a->kernel.functions, &b->kernel.functions);
		assert_list_eq(&a->kernel.options, &b->kernel.options);
		break;
	case PROTO_LTTNG:
		assert_list_eq(&a->lttng.events, &b->lttng.events);
		cr_assert_eq(a->lttng.subbuf_size, b->lttng.subbuf_size);
		cr_assert_eq(a->lttng.subbuf_count, b->lttng.subbuf_count);
		cr_assert_eq(a->lttng.overwrite, b->lttng.overwrite);
		break;
	case PROTO_KERNEL_DONE:
	case PROTO_LTTNG_DONE:
		cr_assert_eq(a->done.ok, b->done.ok);
		cr_assert_str_eq(a->done.reason, b->done.reason);
		break;
	case PROTO_COUNTERS:
	case PROTO_COUNTERS_DONE:
		/* never left out: an absent list is an empty one */
		cr_assert_eq(a->counters.n, b->counters.n);
		for (size_t i = 0; i < a->counters.n; i++)
			cr_assert_str_eq(a->counters.v[i], b->counters.v[i]);
		break;
	case PROTO_RUN:
		cr_assert_eq(a->run.timeout_ms, b->run.timeout_ms);
		cr_assert_str_eq(a->run.cwd, b->run.cwd);
		assert_list_eq(&a->run.env, &b->run.env);
		assert_list_eq(&a->run.argv, &b->run.argv);
		break;
	case PROTO_RESULT: {
		const struct proto_result *x = &a->result, *y = &b->result;
		cr_assert_eq(x->end, y->end);
		cr_assert_eq(x->code, y->code);
		cr_assert_eq(x->wall_ns, y->wall_ns);
		cr_assert_eq(x->user_us, y->user_us);
		cr_assert_eq(x->sys_us, y->sys_us);
		cr_assert_eq(x->maxrss_kb, y->maxrss_kb);
		assert_bytes_eq(x->out ? x->out : "", x->out_len, y->out, y->out_len);
		assert_bytes_eq(x->err ? x->err : "", x->err_len, y->err, y->err_len);
		cr_assert_eq(x->trace, y->trace);
		if (x->trace == PROTO_TRACE_STATS) {
			cr_assert_eq(x->trace_events, y->trace_events);
			cr_assert_eq(x->trace_lost, y->trace_lost);
			cr_assert_eq(x->trace_bytes, y->trace_bytes);
		}
		if (x->trace == PROTO_TRACE_ERROR)
			cr_assert_str_eq(x->trace_error, y->trace_error);
		cr_assert_eq(x->n_counts, y->n_counts);
		for (size_t i = 0; i < x->n_counts; i++) {
			const struct proto_count *c = &x->counts[i], *d = &y->counts[i];
			cr_assert_eq(c->index, d->index);
			cr_assert_eq(c->why == NULL, d->why == NULL);
			if (c->why) {
				cr_assert_str_eq(c->why, d->why);
				continue;
			}
			cr_assert_eq(c->raw, d->raw);
			cr_assert_eq(c->enabled_ns, d->enabled_ns);
			cr_assert_eq(c->running_ns, d->running_ns);
		}
		cr_assert_eq(x->lttng, y->lttng);
		if (x->lttng == PROTO_TRACE_STATS) {
			cr_assert_eq(x->lttng_events, y->lttng_events);
			cr_assert_eq(x->lttng_discarded, y->lttng_discarded);
			cr_assert_eq(x->lttng_lost, y->lttng_lost);
			cr_assert_eq(x->lttng_bytes, y->lttng_bytes);
		}
		if (x->lttng == PROTO_TRACE_ERROR)
			cr_assert_str_eq(x->lttng_error, y->lttng_error);
		break;
	}
	case PROTO_ERROR:
		cr_assert_str_eq(str(a->error), b->error);
		break;
	case PROTO_QUIT:
		break;
	}
}

Test(proto, every_message_round_trips_and_encodes_canonically)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	char why[256];

	for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
		struct proto_msg m;
		encode(&samples[i], &a);
		cr_assert(!strncmp(a.buf, proto_tag(samples[i].type), strlen(proto_tag(samples[i].type))));
		cr_assert_eq(proto_decode(a.buf, a.len - 1, &m, why, sizeof(why)), 0,
			     "sample %zu: %s", i, why);
		assert_msg_eq(&samples[i], &m);
		encode(&m, &b);
		cr_assert_str_eq(a.buf, b.buf, "sample %zu encodes one way only", i);
		proto_msg_release(&m);
	}
	strbuf_release(&a);
	strbuf_release(&b);
}

/* A result without LTTng's accounting is the frame of an agent that
 * predates it: not one byte more; a result with it carries it last. */
Test(proto, lttng_accounting_is_a_trailing_field_of_the_result)
{
	struct strbuf plain = STRBUF_INIT, traced = STRBUF_INIT;
	struct proto_msg a = { .type = PROTO_RESULT, .seq = 1, .result = { .code = 3 } }, m;
	char why[256];

	encode(&a, &plain);
	/* how, code, wall, user, sys, maxrss, stdout, stderr, trace, counters */
	cr_assert_str_eq(strrchr(plain.buf, ' ') + 1,
			 "313a302c313a332c313a302c313a302c313a302c313a302c303a2c303a2c313a302c313a302c\n");
	a.result.lttng = PROTO_TRACE_STATS;
	a.result.lttng_events = 5;
	encode(&a, &traced);
	cr_assert(traced.len > plain.len);
	cr_assert_eq(proto_decode(traced.buf, traced.len - 1, &m, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(m.result.lttng, PROTO_TRACE_STATS);
	cr_assert_eq(m.result.lttng_events, 5);
	proto_msg_release(&m);
	/* an LTTNG without events is refused both ways */
	struct proto_msg e = { .type = PROTO_LTTNG };
	strbuf_reset(&traced);
	cr_assert_eq(proto_encode(&e, &traced, why, sizeof(why)), -1);
	cr_assert(strstr(why, "events: empty"), "%s", why);
	strbuf_release(&plain);
	strbuf_release(&traced);
}

Test(proto, the_frame_is_tag_seq_length_crc32_and_hex)
{
	struct strbuf sb = STRBUF_INIT;
	struct proto_msg m = { .type = PROTO_ERROR, .seq = 5, .error = "x" };

	/* the payload is one field "1:x,": 4 bytes; zlib's CRC-32 of them */
	encode(&m, &sb);
	char want[128];
	snprintf(want, sizeof(want), "PERTURB-ERROR 5 4 %08lx 313a782c\n",
		 (unsigned long)crc32(0, (const unsigned char *)"1:x,", 4));
	cr_assert_str_eq(sb.buf, want);
	strbuf_release(&sb);
}

Test(proto, a_frame_cut_at_any_byte_is_refused_with_a_reason)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
		encode(&samples[i], &sb);
		size_t len = sb.len - 1;
		for (size_t k = 0; k < len; k++) {
			/* a copy of exactly k bytes: ASan sees a read past the cut */
			char *cut = xmalloc(k ? k : 1), why[256] = "";
			struct proto_msg m;
			memcpy(cut, sb.buf, k);
			cr_assert_eq(proto_decode(cut, k, &m, why, sizeof(why)), -1,
				     "sample %zu cut at %zu decoded", i, k);
			cr_assert(*why, "no reason for sample %zu cut at %zu", i, k);
			cr_assert_eq(m.type, 0);
			free(cut);
		}
	}
	strbuf_release(&sb);
}

Test(proto, a_bad_checksum_is_refused)
{
	struct strbuf sb = STRBUF_INIT;
	struct proto_msg m;
	char why[256];

	for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
		encode(&samples[i], &sb);
		char *crc = strchr(strchr(strchr(sb.buf, ' ') + 1, ' ') + 1, ' ') + 1;
		/* the checksum itself */
		crc[0] = crc[0] == '0' ? '1' : '0';
		cr_assert_eq(proto_decode(sb.buf, sb.len - 1, &m, why, sizeof(why)), -1);
		cr_assert(strstr(why, "frame fails its checksum"), "%s", why);
		crc[0] = crc[0] == '0' ? '1' : '0';
		/* a payload byte (not QUIT's: it has none) */
		if (sb.len - 1 > (size_t)(crc + 9 - sb.buf)) {
			char *p = crc + 9;
			*p = *p == '3' ? '2' : '3';
			cr_assert_eq(proto_decode(sb.buf, sb.len - 1, &m, why, sizeof(why)), -1);
			cr_assert(strstr(why, "frame fails its checksum"), "%s", why);
		}
	}
	/* what a workload wrote on the console (tests/test_qemu.c) */
	const char *fake = "PERTURB-RESULT 1 5 deadbeef 0011223344";
	cr_assert_eq(proto_decode(fake, strlen(fake), &m, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "result frame fails its checksum");
	strbuf_release(&sb);
}

/* A frame of tag around an arbitrary payload, its checksum right. */
static char *frame(const char *tag, const void *payload, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p = payload;

	strbuf_addf(&sb, "%s 0 %zu %08lx ", tag, len, (unsigned long)crc32(0, p, (uInt)len));
	for (size_t i = 0; i < len; i++)
		strbuf_addf(&sb, "%02x", p[i]);
	return strbuf_detach(&sb);
}

/* Decoding tag + payload fails, the reason holding says. */
static void refused(const char *tag, const void *payload, size_t len, const char *says)
{
	char *f = frame(tag, payload, len), why[256] = "";
	struct proto_msg m;

	cr_assert_eq(proto_decode(f, strlen(f), &m, why, sizeof(why)), -1, "%s decoded", f);
	cr_assert(strstr(why, says), "'%s': '%s' does not say '%s'", f, why, says);
	free(f);
}

Test(proto, fields_over_the_limits_are_refused_both_ways)
{
	struct strbuf sb = STRBUF_INIT;
	char why[256], *big = xmalloc(PROTO_FIELD_MAX + 2);
	char **many = xcalloc(PROTO_LIST_MAX + 2, sizeof(char *));

	memset(big, 'a', PROTO_FIELD_MAX + 1);
	big[PROTO_FIELD_MAX + 1] = '\0';
	/* encoding: refused, nothing appended */
	struct proto_msg m = { .type = PROTO_RUN, .run = { .timeout_ms = 1, .cwd = "/",
						    .argv = LIST(argv_, 1) } };
	char *arg2[] = { "x", big, NULL };
	m.run.argv = LIST(arg2, 2);
	cr_assert_eq(proto_encode(&m, &sb, why, sizeof(why)), -1);
	cr_assert_str_eq(why, "run request message: argv: 65537 bytes, more than 65536");
	cr_assert_eq(sb.len, 0);
	for (size_t i = 0; i <= PROTO_LIST_MAX; i++)
		many[i] = "x";
	m.run.argv = LIST(many, PROTO_LIST_MAX + 1);
	cr_assert_eq(proto_encode(&m, &sb, why, sizeof(why)), -1);
	cr_assert(strstr(why, "argv: 4097 items, more than 4096"), "%s", why);
	m.run.argv = LIST(NULL, 0);
	cr_assert_eq(proto_encode(&m, &sb, why, sizeof(why)), -1);
	cr_assert(strstr(why, "argv: empty"), "%s", why);
	struct proto_msg r = { .type = PROTO_RESULT, .result = {
		.out = big, .out_len = PROTO_OUTPUT_MAX + 1 } };
	cr_assert_eq(proto_encode(&r, &sb, why, sizeof(why)), -1);
	cr_assert(strstr(why, "stdout: 65537 bytes"), "%s", why);
	/* the whole payload: 8 fields of 64 KiB fit one by one, not together */
	char *arg9[10];
	for (int i = 0; i < 9; i++)
		arg9[i] = big + 1;	/* 65536 bytes each */
	arg9[9] = NULL;
	m.run.argv = LIST(arg9, 9);
	cr_assert_eq(proto_encode(&m, &sb, why, sizeof(why)), -1);
	cr_assert(strstr(why, "more than 524288"), "%s", why);
	cr_assert_eq(sb.len, 0);

	/* decoding: lengths that claim more than a field may hold */
	refused("PERTURB-READY", "65537:", 6, "release: 65537 bytes, more than 65536");
	refused("PERTURB-ERROR", "99999999999:x,", 14, "reason: not a length-prefixed field");
	refused("COUNTERS", "4:4097,", 7, "counters: 4097 is out of range");
	refused("PERTURB-RESULT", "1:0,1:0,1:0,1:0,1:0,1:0,65537:", 30, "stdout: 65537 bytes");
	refused("RUN", "1:0,", 4, "timeout_ms: 0 is out of range");
	char huge[64];
	snprintf(huge, sizeof(huge), "KERNEL 0 %d 00000000 ", PROTO_PAYLOAD_MAX + 1);
	struct proto_msg d;
	cr_assert_eq(proto_decode(huge, strlen(huge), &d, why, sizeof(why)), -1);
	cr_assert(strstr(why, "kernel request frame too large"), "%s", why);
	free(many);
	free(big);
	strbuf_release(&sb);
}

Test(proto, garbage_is_refused_with_a_reason)
{
	static const struct { const char *line, *says; } lines[] = {
		{ "", "not a frame" },
		{ "RUN", "not a frame" },
		{ "HELLO 0 0 00000000 ", "not a frame" },
		{ "run 0 0 00000000 ", "not a frame" },
		{ "QUIT ", "malformed quit frame" },
		{ "QUIT x 0 00000000 ", "malformed quit frame" },
		{ "QUIT 0 0 0000000 ", "malformed quit frame" },
		{ "QUIT 0 0 0000000g ", "malformed quit frame" },
		{ "QUIT 00 0 00000000 ", "malformed quit frame" },
		{ "QUIT -1 0 00000000 ", "malformed quit frame" },
		{ "QUIT 0 0 00000000", "malformed quit frame" },
		{ "QUIT 99999999999999999999999 0 00000000 ", "malformed quit frame" },
		{ "QUIT 0 1 00000000 ", "truncated quit frame (0 of 1 bytes)" },
		{ "QUIT 0 0 00000000 00", "quit frame longer than its length" },
		{ "QUIT 0 1 00000000 zz", "malformed quit frame (not hex)" },
		{ "QUIT 0 1 00000000 AB", "malformed quit frame (not hex)" },
	};
	char why[256];
	struct proto_msg m;

	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		strcpy(why, "");
		cr_assert_eq(proto_decode(lines[i].line, strlen(lines[i].line), &m, why,
					  sizeof(why)), -1, "'%s' decoded", lines[i].line);
		cr_assert(strstr(why, lines[i].says), "'%s': '%s'", lines[i].line, why);
	}
	/* well-framed payloads that are not the message */
	refused("QUIT", "x", 1, "1 bytes after the last field");
	refused("PERTURB-READY", "", 0, "release: truncated");
	refused("PERTURB-READY", "1:a", 3, "release: truncated");
	refused("PERTURB-READY", "1:ab", 4, "release: not a length-prefixed field");
	refused("PERTURB-READY", "01:a,", 5, "release: not a length-prefixed field");
	refused("PERTURB-READY", "1:a,1:b,", 8, "bytes after the last field");
	refused("PERTURB-READY", "1:\0,", 4, "release: holds a NUL byte");
	refused("PERTURB-KERNEL", "1:2,0:,", 7, "ok: 2 is out of range");
	refused("PERTURB-KERNEL", "2:-0,0:,", 8, "ok: not a number");
	refused("PERTURB-KERNEL", "2:01,0:,", 8, "ok: not a number");
	refused("PERTURB-KERNEL", "2:+1,0:,", 8, "ok: not a number");
	refused("PERTURB-KERNEL", "0:,0:,", 6, "ok: not a number");
	refused("KERNEL", "1:0,1:0,1:0,1:0,1:0,1:0,", 24, "buffer_size_kb: 0");
	refused("KERNEL", "1:2,", 4, "tracing_on: 2 is out of range");
	refused("COUNTERS", "2:-1,", 5, "counters: -1 is out of range");
	refused("COUNTERS", "1:2,1:a,", 8, "counters: truncated");
	refused("RUN", "1:1,1:/,1:0,1:0,", 16, "argv: empty");
	refused("PERTURB-RESULT", "1:4,", 4, "how: 4 is out of range");
	refused("PERTURB-RESULT", "1:0,11:99999999999,", 19, "code: 99999999999 is out of range");
	refused("PERTURB-RESULT", "1:0,1:0,2:-1,", 13, "wall_ns: -1 is out of range");
	refused("PERTURB-RESULT", "1:0,1:0,1:0,1:0,1:0,1:0,0:,0:,1:1,20:18446744073709551616,",
		58, "trace_events: not a number");
	refused("PERTURB-RESULT", "1:0,1:0,1:0,1:0,1:0,1:0,0:,0:,1:0,1:1,4:4096,", 45,
		"counter: 4096 is out of range");
	refused("PERTURB-RESULT", "1:0,1:0,1:0,1:0,1:0,1:0,0:,0:,1:0,1:2,", 38, "counter: truncated");
}

/* A small deterministic generator (xorshift64*): the same bytes every run. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

Test(proto, random_bytes_and_mutated_payloads_never_crash)
{
	struct strbuf sb = STRBUF_INIT;
	char why[256];
	struct proto_msg m;
	size_t decoded = 0;

	/* random lines after a tag */
	for (int n = 0; n < 2000; n++) {
		char buf[96];
		size_t len = (size_t)(rnd() % sizeof(buf));
		const char *tag = proto_tag((enum proto_type)(rnd() % (PROTO_QUIT + 1)));
		size_t tl = strlen(tag);
		memcpy(buf, tag, tl);
		for (size_t i = tl; i < len; i++)
			buf[i] = (char)rnd();
		if (len > tl)
			buf[tl] = ' ';
		char *copy = xmalloc(len ? len : 1);
		memcpy(copy, buf, len);
		if (proto_decode(copy, len, &m, why, sizeof(why)) == 0)
			proto_msg_release(&m);
		free(copy);
	}
	/* every sample's payload with one byte changed, its checksum made right */
	for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
		encode(&samples[i], &sb);
		char *sp = strchr(strchr(sb.buf, ' ') + 1, ' ') + 1;
		size_t plen = strtoul(sp, NULL, 10);
		char *hex = sb.buf + sb.len - 1 - 2 * plen;
		unsigned char *p = xmalloc(plen + 1);
		for (size_t k = 0; k < plen; k++)
			sscanf(hex + 2 * k, "%2hhx", &p[k]);
		for (size_t k = 0; k < plen; k++) {
			unsigned char keep = p[k];
			p[k] = (unsigned char)(k % 3 == 0 ? keep ^ (1u << (rnd() % 8)) :
					       k % 3 == 1 ? rnd() : ',');
			char *f = frame(proto_tag(samples[i].type), p, plen);
			if (proto_decode(f, strlen(f), &m, why, sizeof(why)) == 0) {
				decoded++;
				proto_msg_release(&m);
			} else {
				cr_assert(*why);
			}
			free(f);
			p[k] = keep;
		}
		free(p);
	}
	/* some changes keep a message (a digit of a string), most do not */
	cr_assert_gt(decoded, 0);
	strbuf_release(&sb);
}
