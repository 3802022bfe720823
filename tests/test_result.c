/*
 * test_result.c - the one result builder (harness/core/result.h): its rule
 * for numbers, and the same output giving the same result on the host
 * (runner_run(), tests/progs/printer) and in a guest (the qemu backend's
 * qemu_guest_result() fed the agent's RESULT message after a trip through
 * the wire, harness/backends/proto.h) - no QEMU needed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/proto.h"
#include "backends/qemu.h"
#include "core/result.h"
#include "core/runner.h"
#include "testlib.h"
#include "lib/util.h"

/* result_build() of a run that exited 0 having printed out. */
static void build(const char *out, struct run_result *res)
{
	struct metric_def md;
	struct run_request req = { .timeout_s = 1, .metrics = &md, .n_metrics = 1 };
	struct run_outcome o = { .end = RUN_END_EXIT, .out = out, .out_len = strlen(out) };

	tl_metric_init(&md, "v", "^v: (.*)$");
	memset(res, 0, sizeof(*res));
	result_build(&req, &o, res);
	regfree(&md.re);
}

/*
 * A metric past 2 GiB of output: regexec()'s offsets are ints, so the scan
 * must never hold an offset into the whole output (it did, and crashed).
 * The 2 GiB are zero pages of an anonymous mapping: no memory is used.
 */
Test(result, a_metric_after_2_gib_of_output_is_found, .timeout = 300)
{
	size_t len = ((size_t)1 << 31) + ((size_t)2 << 20);
	size_t at = ((size_t)1 << 31) + ((size_t)1 << 20);
	char *out = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct metric_def md;
	struct run_request req = { .timeout_s = 1, .metrics = &md, .n_metrics = 1 };
	struct run_outcome o = { .end = RUN_END_EXIT, .out = out, .out_len = len };
	struct run_result res = { 0 };

	cr_assert_neq(out, MAP_FAILED, "mmap: %s", strerror(errno));
	madvise(out, len, MADV_HUGEPAGE);	/* read faults: the huge zero page, when there is one */
	memcpy(out + at, "\nv: 5\n", 7);
	tl_metric_init(&md, "v", "^v: ([0-9]+)$");
	result_build(&req, &o, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_float_eq(res.values[0].value, 5, 1e-12);
	run_result_release(&res);
	regfree(&md.re);
	munmap(out, len);
}

Test(result, a_metric_is_a_finite_number_and_nothing_more)
{
	static const struct { const char *out; double v; } good[] = {
		{ "v: 12\n", 12 }, { "v: -1.5e3\n", -1500 }, { "v: 0x10\n", 16 },
		{ "v:  7 \t\r\n", 7 }, { "x\nv: .25\ny\n", 0.25 },
	};
	static const char *const bad[] = {
		"v: 12abc\n", "v: inf\n", "v: -inf\n", "v: nan\n", "v: infinity\n",
		"v: 1e999\n", "v: \n", "v: 1 2\n",
	};
	struct run_result res;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		build(good[i].out, &res);
		cr_assert_eq(res.status, RUN_OK, "'%s': %s", good[i].out, res.reason);
		cr_assert_eq(res.n_values, 1);
		cr_assert_float_eq(res.values[0].value, good[i].v, 1e-12);
		cr_assert_str_eq(res.values[0].unit, "s");
		run_result_release(&res);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		build(bad[i], &res);
		cr_assert_eq(res.status, RUN_FAILED, "'%s' was taken", bad[i]);
		cr_assert(strstr(res.reason, "metric 'v': cannot parse '"), "%s", res.reason);
		cr_assert_eq(res.n_values, 0);
		run_result_release(&res);
	}
}

Test(result, the_tail_starts_on_a_character_and_shows_nuls_as_blanks)
{
	struct run_request req = { .timeout_s = 1 };
	char *out = xmalloc(RUNNER_TAIL_BYTES + 2);
	struct run_result res = { 0 };

	/* "é" (2 bytes) cut in the middle by the tail's start */
	memset(out, 'a', RUNNER_TAIL_BYTES + 1);
	memcpy(out, "\xc3\xa9", 2);
	out[100] = '\0';
	struct run_outcome o = { .end = RUN_END_EXIT, .out = out, .out_len = RUNNER_TAIL_BYTES + 1 };
	result_build(&req, &o, &res);
	cr_assert_eq(strlen(res.out_tail), RUNNER_TAIL_BYTES - 1);
	cr_assert_eq(res.out_tail[100 - 2], ' ');
	cr_assert_eq(res.out_tail[0], 'a');
	run_result_release(&res);
	free(out);
}

/* ---- the host and the guest agree ---- */

struct printed {
	const char *out, *err;	/* as the printer's arguments print them */
	int status;
};

/* The printer's argv for p: [-x STATUS] [-E ERR] [-O OUT]. */
static void printer_argv(const struct printed *p, char **argv, char *code)
{
	size_t n = 0;

	argv[n++] = "printer";
	if (p->status) {
		snprintf(code, 16, "%d", p->status);
		argv[n++] = "-x";
		argv[n++] = code;
	}
	if (p->err) {
		argv[n++] = "-E";
		argv[n++] = (char *)p->err;
	}
	if (p->out) {
		argv[n++] = "-O";
		argv[n++] = (char *)p->out;
	}
	argv[n] = NULL;
}

/* What the agent would send for p, decoded from the wire. */
static void guest_message(const struct printed *p, struct proto_msg *m)
{
	char *out = p->out ? xasprintf("%s\n", p->out) : xstrdup("");
	char *err = p->err ? xasprintf("%s\n", p->err) : xstrdup("");
	struct proto_msg sent = { .type = PROTO_RESULT, .seq = 1, .result = {
		.end = PROTO_END_EXIT, .code = p->status, .wall_ns = 1000,
		.out = out, .out_len = strlen(out), .err = err, .err_len = strlen(err) } };
	struct strbuf line = STRBUF_INIT;
	char why[256];

	cr_assert_eq(proto_encode(&sent, &line, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(proto_decode(line.buf, line.len - 1, m, why, sizeof(why)), 0, "%s", why);
	strbuf_release(&line);
	free(out);
	free(err);
}

Test(result, the_same_output_gives_the_same_result_on_the_host_and_in_the_guest)
{
	static const struct printed cases[] = {
		{ .out = "v: 3.25" },
		{ .out = "v: 12abc" },
		{ .out = "v: inf" },
		{ .out = "v: nan" },
		{ .out = "v:  42  " },
		{ .out = "nothing" },
		{ .err = "v: 7" },
		{ .out = "w", .err = "v: 0x1p3" },
		{ .out = "v: 5", .status = 3 },
	};
	struct metric_def md;
	struct variant v = { .name = "guest" };
	struct qemu q = { .log = -1 };

	tl_metric_init(&md, "v", "^v: (.*)$");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct run_request req = {
			.envp = tl_test_env(), .timeout_s = 10, .metrics = &md, .n_metrics = 1,
		};
		struct run_result host, guest = { 0 };
		struct proto_msg m;
		char *argv[10], code[16], why[256];

		printer_argv(&cases[i], argv, code);
		req.argv = argv;
		cr_assert_eq(runner_run(&req, &host), 0);
		guest_message(&cases[i], &m);
		cr_assert_eq(qemu_guest_result(&q, &v, &req, &m.result, &guest, why, sizeof(why)),
			     0, "%s", why);
		proto_msg_release(&m);

		cr_assert_eq(guest.status, host.status, "case %zu: %s / %s", i, guest.reason,
			     host.reason);
		cr_assert_str_eq(guest.reason, host.reason, "case %zu", i);
		cr_assert_eq(guest.exit_code, host.exit_code);
		cr_assert_eq(guest.n_values, host.n_values, "case %zu", i);
		for (size_t k = 0; k < host.n_values; k++) {
			cr_assert_str_eq(guest.values[k].name, host.values[k].name);
			cr_assert_str_eq(guest.values[k].unit, host.values[k].unit);
			cr_assert_eq(guest.values[k].value, host.values[k].value);
		}
		cr_assert_str_eq(guest.out_tail, host.out_tail, "case %zu", i);
		run_result_release(&host);
		run_result_release(&guest);
	}
	regfree(&md.re);
}

/* The guest's ends map to the host's statuses and reasons. */
Test(result, a_guest_signal_time_out_and_error_read_as_the_host_s)
{
	static const struct {
		enum proto_end end;
		int code;
		const char *err;
		enum run_status status;
		const char *reason;
	} cases[] = {
		{ PROTO_END_SIGNAL, SIGSEGV, "", RUN_CRASHED, "killed by signal 11 (Segmentation fault)" },
		{ PROTO_END_TIMEOUT, 0, "", RUN_TIMEOUT, "timed out after 2.5 s" },
		{ PROTO_END_ERROR, 0, "cannot run 'x': No such file or directory", RUN_ERROR,
		  "cannot run 'x': No such file or directory" },
	};
	struct metric_def md;
	struct variant v = { .name = "guest" };
	struct qemu q = { .log = -1 };

	tl_metric_init(&md, "v", "^v: (.*)$");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct run_request req = { .timeout_s = 2.5, .metrics = &md, .n_metrics = 1 };
		struct proto_result pr = {
			.end = cases[i].end, .code = cases[i].code, .out = "v: 1\n", .out_len = 5,
			.err = (char *)cases[i].err, .err_len = strlen(cases[i].err),
		};
		struct run_result res = { 0 };
		char why[256];

		cr_assert_eq(qemu_guest_result(&q, &v, &req, &pr, &res, why, sizeof(why)), 0);
		cr_assert_eq(res.status, cases[i].status);
		cr_assert_str_eq(res.reason, cases[i].reason);
		cr_assert_eq(res.n_values, 0, "a run that failed has no metrics");
		run_result_release(&res);
	}
	regfree(&md.re);
}

/* The class "a number cut short or refused without a reason": the whole
 * token is read (it was cut at 127 characters: 1e130 written out in full
 * was stored as 1e126), a subnormal is a number, and what does not fit a
 * double is refused with why. */
Test(result, a_metric_is_read_whole_and_refused_with_a_reason)
{
	char out[512], digits[256];
	struct run_result res;

	memset(digits, '0', 200);
	digits[0] = '1';
	digits[131] = '\0';	/* 1e130, 131 characters */
	snprintf(out, sizeof(out), "v: %s\n", digits);
	build(out, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_eq(res.values[0].value, 1e130, "%g", res.values[0].value);
	run_result_release(&res);

	memset(digits, '0', 200);	/* a 200-character decimal: 0.00...0123 */
	memcpy(digits, "0.", 2);
	memcpy(digits + 197, "123", 3);
	digits[200] = '\0';
	snprintf(out, sizeof(out), "v: %s\n", digits);
	build(out, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_eq(res.values[0].value, 1.23e-196, "%g", res.values[0].value);
	run_result_release(&res);

	build("v: 4.9e-324\n", &res);	/* the smallest subnormal */
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert(res.values[0].value > 0 && res.values[0].value < 1e-323);
	run_result_release(&res);

	static const struct { const char *out, *why; } bad[] = {
		{ "v: 1e400\n", "too large for a double" },
		{ "v: -1e400\n", "too large for a double" },
		{ "v: 1e-400\n", "too small for a double" },
		{ "v: inf\n", "not a finite number" },
		{ "v: NaN\n", "not a finite number" },
		{ "v: 12abc\n", "text after it" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		build(bad[i].out, &res);
		cr_assert_eq(res.status, RUN_FAILED, "'%s' was taken", bad[i].out);
		cr_assert(strstr(res.reason, bad[i].why), "%s: %s", bad[i].out, res.reason);
		run_result_release(&res);
	}
}
