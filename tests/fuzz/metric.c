/*
 * fuzz/metric.c - libFuzzer target: the metric scanner and its rule for
 * numbers (harness/core/result.h: metric_parse(), metric_scan_feed(),
 * result_build()).
 *
 * Each input is a run's stdout.  Its first byte splits the rest in two
 * feeds (as output arrives in pieces); two metrics are scanned: "v", the
 * rest of a line after "v: ", and "w", a whole-match regex.  The build
 * must never crash, leak or read past the input, and a value it keeps
 * must be finite and what strtod() reads of the whole token (never cut);
 * metric_parse() on the whole input (NUL-terminated) must agree with
 * strtod() whenever it accepts.  The seed corpus is tests/fuzz/metric/.
 * Built and run by `make fuzz`.
 */
#include "core/result.h"

#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct metric_def md[2];
static int ready;

static void init(void)
{
	static const char *const names[] = { "v", "w" };
	static const char *const res[] = { "^v: (.*)$", "[-+]?[0-9][0-9.eE+-]*" };

	for (int i = 0; i < 2; i++) {
		md[i].name = (char *)names[i];
		md[i].regex_src = (char *)res[i];
		md[i].unit = "";
		if (regcomp(&md[i].re, res[i], REG_EXTENDED))
			abort();
		md[i].has_group = md[i].re.re_nsub >= 1;
	}
	ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_request req = { .timeout_s = 1, .metrics = md, .n_metrics = 2 };
	struct run_outcome o = { .end = RUN_END_EXIT };
	struct run_result res = { 0 };
	struct metric_scan *scan;
	char *text;
	size_t cut, done;
	const char *why;
	double v;

	if (!ready)
		init();
	if (!size)
		return 0;
	cut = data[0] % size;
	text = malloc(size);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	/* the scanner, fed in two pieces */
	scan = metric_scan_new(&req);
	done = metric_scan_feed(metric_scan_stream(scan, 0), text, cut, 0);
	metric_scan_feed(metric_scan_stream(scan, 0), text + done, size - 1 - done, 1);
	o.out = text;
	o.out_len = size - 1;
	o.scan = scan;
	result_build(&req, &o, &res);
	for (size_t i = 0; i < res.n_values; i++)
		if (!isfinite(res.values[i].value))
			abort();
	run_result_release(&res);
	metric_scan_free(scan);
	/* the rule, on the whole input as one token */
	if (metric_parse(text, &v, &why) == 0) {
		if (!isfinite(v) || v != strtod(text, NULL))
			abort();
	} else if (!why) {
		abort();
	}
	free(text);
	return 0;
}
