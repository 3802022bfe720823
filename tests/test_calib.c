/*
 * test_calib.c - the calibrated cost per event and the overhead
 * compensation (reports/calib.h): known costs injected into a real study,
 * the table rows in every format, the "does not fit" case, the
 * calibration: block's mistakes, the tracers' table.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "backends/backend.h"
#include "backends/bpf.h"
#include "backends/perf_tracer.h"
#include "instrumentation/tracefs.h"
#include "backends/tracers.h"
#include "reports/calib.h"
#include "lib/util.h"

static char *dir, *db;

static void setup(void)
{
	dir = tl_tmpdir();
	db = xasprintf("%s/r.db", dir);
}

static void teardown(void)
{
	tl_rmtree(dir);
	free(dir);
	free(db);
}

TestSuite(calib, .init = setup, .fini = teardown, .timeout = 120);

/*
 * The known truth: the calibration workload's time t (ns) is 1000 + 7 r
 * (r the run's number, the same on both sides) plus 50000 under traced,
 * which counts calib_events (2000: one a hit) events there: 25 ns an
 * event exactly.  Its ns_per_op is 100 + 7 r, plus 50 under traced, over
 * ops = 1000 operations a run (a micro's, ops_metric).  The real workload
 * counts 100000 events a run under traced; its wall is set by SQL to
 * 100 ms + r us on the baseline and to that plus extra_ms under traced:
 * the predicted overhead is 100000 x 25 ns = 2.5 ms.
 */
static void run_study_events(double extra_ms, const char *calibration, int calib_events)
{
	struct cli_result r;
	char *sql, *yaml;

	yaml = xasprintf(
		 "name: cal\n"
		 "baseline: base\n"
		 "repetitions: 8\n"
		 "warmup: 0\n"
		 "order: interleaved\n"
		 "seed: 5\n"
		 "variants:\n"
		 "  - {name: base, env: {EV: '0'}}\n"
		 "  - {name: traced, env: {EV: '1'}}\n"
		 "workloads:\n"
		 "  - name: calib\n"
		 "    cmd: [sh, -c, 'echo trace_events=$((EV * %d)) t=$((1000 + EV * 50000)) "
		 "calls=2000 ns_per_op=$((100 + EV * 50)) ops=1000']\n"
		 "    calibration: %s\n"
		 "    metrics:\n"
		 "      - {name: trace_events, regex: 'trace_events=([0-9]+)', unit: events}\n"
		 "      - {name: t, regex: ' t=([0-9]+)', unit: ns}\n"
		 "      - {name: calls, regex: 'calls=([0-9]+)', unit: calls}\n"
		 "      - {name: ns_per_op, regex: 'ns_per_op=([0-9]+)', unit: ns}\n"
		 "      - {name: ops, regex: 'ops=([0-9]+)', unit: ops}\n"
		 "  - name: real\n"
		 "    cmd: [sh, -c, 'echo trace_events=$((EV * 100000))']\n"
		 "    metrics:\n"
		 "      - {name: trace_events, regex: 'trace_events=([0-9]+)', unit: events}\n",
		 calib_events, calibration);
	tl_write(dir, "e.yaml", yaml);
	free(yaml);
	cli_run_env(dir, "PERTURB_NO_CGROUP=1", &r, "run", "e.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	sql = xasprintf(
		"UPDATE metric_values SET value = value + 7 * (SELECT repetition FROM plan p"
		" WHERE p.run_id = metric_values.run_id AND p.seq = metric_values.seq)"
		" WHERE metric IN ('t', 'ns_per_op');"
		"UPDATE results SET wall_s = 0.1 + 1e-6 * (SELECT repetition FROM plan p"
		" WHERE p.run_id = results.run_id AND p.seq = results.seq)"
		" + (SELECT CASE WHEN p.variant = 'traced' THEN %.9f ELSE 0 END FROM plan p"
		" WHERE p.run_id = results.run_id AND p.seq = results.seq)"
		" WHERE seq IN (SELECT seq FROM plan WHERE workload = 'real');",
		extra_ms / 1e3);
	cli_sql_exec(db, sql);
	free(sql);
}

static void run_study_with(double extra_ms, const char *calibration)
{
	run_study_events(extra_ms, calibration, 2000);
}

static void run_study(double extra_ms)
{
	run_study_with(extra_ms, "{hits: 2000, metric: t}");
}

static json_t *json_report(void)
{
	struct cli_result r;
	json_error_t e;
	json_t *doc;

	cli_run(dir, &r, "report", "--db", db, "--format", "json", "--bootstrap", "500", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	tl_check_report_schema(r.out);
	doc = json_loads(r.out, 0, &e);
	cr_assert(doc, "%s", e.text);
	cli_result_release(&r);
	return doc;
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	cr_assert(v, "no %s", k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static double ci(json_t *o, const char *k, int hi)
{
	json_t *v = json_object_get(o, k);
	cr_assert(json_is_array(v), "no interval %s", k);
	return json_number_value(json_array_get(v, (size_t)hi));
}

Test(calib, cost_per_event_is_the_dilation_over_the_known_hits)
{
	json_t *doc, *cal, *comp, *c;

	run_study(2.5);
	doc = json_report();
	cal = json_object_get(doc, "calibration");
	cr_assert_eq(json_array_size(cal), 1, "one traced variant on one calibration workload");
	c = json_array_get(cal, 0);
	cr_expect_str_eq(json_string_value(json_object_get(c, "tracer")), "ftrace");
	cr_expect_str_eq(json_string_value(json_object_get(c, "variant")), "traced");
	cr_expect_str_eq(json_string_value(json_object_get(c, "workload")), "calib");
	cr_expect_str_eq(json_string_value(json_object_get(c, "hits_per")), "run");
	cr_expect_float_eq(num(c, "ns"), 25.0, 1e-9, "50000 ns / 2000 hits");
	/* the sides differ by exactly 50000 ns in every pair: a zero-width interval */
	cr_expect_float_eq(ci(c, "ci", 0), 25.0, 1e-9);
	cr_expect_float_eq(ci(c, "ci", 1), 25.0, 1e-9);
	cr_expect(json_is_true(json_object_get(c, "paired")), "interleaved rounds pair the runs");

	comp = json_object_get(doc, "compensation");
	cr_assert_eq(json_array_size(comp), 1, "the real workload under traced");
	c = json_array_get(comp, 0);
	cr_expect_str_eq(json_string_value(json_object_get(c, "workload")), "real");
	cr_expect_str_eq(json_string_value(json_object_get(c, "calibration")), "calib");
	cr_expect_float_eq(num(c, "predicted_ns"), 2.5e6, 1e-3, "100000 events x 25 ns");
	cr_expect_float_eq(num(c, "measured_ns"), 2.5e6, 1, "the injected 2.5 ms");
	cr_expect_float_eq(num(c, "explained_pct"), 100.0, 1e-3);
	cr_expect_float_eq(num(c, "compensated_ns"), num(c, "baseline_ns"), 1,
			   "compensation recovers the baseline");
	cr_expect(json_is_true(json_object_get(c, "fits")));
	json_decref(doc);
}

/* The hits as the program prints them (hits_metric): the same cost. */
Test(calib, hits_from_a_metric_of_the_workload)
{
	json_t *doc, *c;

	run_study_with(2.5, "{hits_metric: calls, metric: t}");
	doc = json_report();
	c = json_array_get(json_object_get(doc, "calibration"), 0);
	cr_assert(c);
	cr_expect_float_eq(num(c, "hits"), 2000, 1e-9);
	cr_expect_float_eq(num(c, "ns"), 25.0, 1e-9);
	json_decref(doc);
}

/*
 * A tracer that records 2 events a hit (raw_syscalls:* records entry and
 * exit): events per hit are measured, 4000 events over 2000 hits, and the
 * cost per event is half the cost per hit; the real workload's 100000
 * events (50000 hits) then predict its true dilation, 1.25 ms.  Taking
 * the cost per hit for a cost per event would predict 2.5 ms.
 */
Test(calib, two_events_a_hit_halve_the_cost_per_hit)
{
	json_t *doc, *c;

	run_study_events(1.25, "{hits: 2000, metric: t}", 4000);
	doc = json_report();
	c = json_array_get(json_object_get(doc, "calibration"), 0);
	cr_assert(c);
	cr_expect_float_eq(num(c, "hits_per_run"), 2000, 1e-9);
	cr_expect_float_eq(num(c, "events_per_hit"), 2.0, 1e-12, "4000 events / 2000 hits");
	cr_expect_float_eq(num(c, "ns_per_hit"), 25.0, 1e-9, "50000 ns / 2000 hits");
	cr_expect_float_eq(num(c, "ns"), 12.5, 1e-9, "25 ns a hit / 2 events a hit");
	cr_expect_float_eq(ci(c, "ci", 0), 12.5, 1e-9);
	cr_expect_float_eq(ci(c, "ci", 1), 12.5, 1e-9);
	c = json_array_get(json_object_get(doc, "compensation"), 0);
	cr_assert(c);
	cr_expect_float_eq(num(c, "ns_per_event"), 12.5, 1e-9);
	cr_expect_float_eq(num(c, "predicted_ns"), 1.25e6, 1e-3, "100000 events x 12.5 ns");
	cr_expect_float_eq(num(c, "measured_ns"), 1.25e6, 1, "the injected 1.25 ms");
	cr_expect_float_eq(num(c, "explained_pct"), 100.0, 1e-3);
	cr_expect(json_is_true(json_object_get(c, "fits")));
	json_decref(doc);
}

/*
 * Hits per operation (ns_per_op): the hits per run are hits x the ops
 * metric, 1000, so 2000 events are 2 a hit, and 50 ns an operation is
 * 25 ns an event; the text table says 2.000 in its events/hit column.
 */
Test(calib, events_per_hit_of_a_micro_from_its_ops_metric)
{
	struct cli_result r;
	json_t *doc, *c;
	const char *tab;

	run_study_with(2.5, "{hits: 1, ops_metric: ops}");
	doc = json_report();
	c = json_array_get(json_object_get(doc, "calibration"), 0);
	cr_assert(c);
	cr_expect_str_eq(json_string_value(json_object_get(c, "metric")), "ns_per_op");
	cr_expect_str_eq(json_string_value(json_object_get(c, "hits_per")), "op");
	cr_expect_float_eq(num(c, "hits_per_run"), 1000, 1e-9, "1 hit x 1000 ops");
	cr_expect_float_eq(num(c, "events_per_hit"), 2.0, 1e-12);
	cr_expect_float_eq(num(c, "ns_per_hit"), 50.0, 1e-9);
	cr_expect_float_eq(num(c, "ns"), 25.0, 1e-9);
	cr_expect_null(json_object_get(c, "events_per_hit_reason"));
	c = json_array_get(json_object_get(doc, "compensation"), 0);
	cr_assert(c);
	cr_expect_float_eq(num(c, "predicted_ns"), 2.5e6, 1e-3);
	cr_expect(json_is_true(json_object_get(c, "fits")));
	json_decref(doc);
	cli_run_env(dir, "NO_COLOR=1", &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tab = strstr(r.out, "Cost per event, calibrated");
	cr_assert(tab, "%s", r.out);
	cr_expect(strstr(tab, "events/hit") && strstr(tab, " 1/op") && strstr(tab, " 2.000") &&
		  strstr(tab, " +25.0"), "%s", tab);
	cli_result_release(&r);
}

/* Without an ops metric, hits per operation give no hits per run: events
 * per hit are not measured, taken as 1, and the row says so. */
Test(calib, events_per_hit_not_measured_is_said)
{
	static const char *const formats[] = { "text", "markdown", "html" };
	json_t *doc, *c;

	run_study_with(2.5, "{hits: 1}");
	doc = json_report();
	c = json_array_get(json_object_get(doc, "calibration"), 0);
	cr_assert(c);
	cr_expect(json_is_null(json_object_get(c, "events_per_hit")));
	cr_expect(json_is_null(json_object_get(c, "hits_per_run")));
	cr_expect(strstr(json_string_value(json_object_get(c, "events_per_hit_reason")),
			 "events per hit not measured: taken as 1"));
	cr_expect_float_eq(num(c, "ns"), 50.0, 1e-9, "the cost per hit");
	json_decref(doc);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct cli_result r;
		cli_run_env(dir, "NO_COLOR=1", &r, "report", "--db", db, "--format", formats[i],
			    NULL);
		cr_assert_eq(r.status, 0, "%s: %s", formats[i], r.err);
		cr_expect(strstr(r.out, "not measured: taken as 1"), "%s: %s", formats[i], r.out);
		cli_result_release(&r);
	}
}

/* The cost's interval is the report's interval of the dilation of the mean
 * divided by the hits and the events per hit (both fixed). */
Test(calib, the_interval_of_the_cost_is_the_dilations_over_the_hits)
{
	json_t *doc, *c, *res, *dci = NULL;
	size_t i;

	run_study_events(2.5, "{hits: 2000, metric: t}", 4000);
	/* spread under traced: each round's difference differs */
	cli_sql_exec(db, "UPDATE metric_values SET value = value + 900 * ((SELECT repetition"
		     " FROM plan p WHERE p.run_id = metric_values.run_id AND p.seq ="
		     " metric_values.seq) % 3) WHERE metric = 't' AND seq IN (SELECT seq FROM"
		     " plan WHERE variant = 'traced')");
	doc = json_report();
	c = json_array_get(json_object_get(doc, "calibration"), 0);
	cr_assert(c);
	json_array_foreach(json_object_get(doc, "results"), i, res)
		if (!strcmp(json_string_value(json_object_get(res, "workload")), "calib") &&
		    !strcmp(json_string_value(json_object_get(res, "metric")), "t") &&
		    !strcmp(json_string_value(json_object_get(res, "variant")), "traced"))
			dci = json_object_get(json_object_get(json_object_get(res, "dilation"),
							      "mean"), "ci_abs");
	cr_assert(json_is_array(dci), "no interval of t's dilation");
	cr_expect_lt(ci(c, "ci", 0), ci(c, "ci", 1), "a spread gives a width");
	cr_expect_float_eq(ci(c, "ci", 0), json_number_value(json_array_get(dci, 0)) / 2000 / 2,
			   1e-9);
	cr_expect_float_eq(ci(c, "ci", 1), json_number_value(json_array_get(dci, 1)) / 2000 / 2,
			   1e-9);
	cr_expect(ci(c, "ci", 0) <= num(c, "ns") && num(c, "ns") <= ci(c, "ci", 1));
	cr_expect(json_is_number(json_object_get(c, "level")));
	cr_expect(json_is_string(json_object_get(c, "method")));
	json_decref(doc);
}

Test(calib, a_dilation_the_cost_does_not_explain_is_said_in_every_format)
{
	static const char *const formats[] = { "text", "markdown", "html" };
	json_t *doc, *c;

	run_study(10.0);	/* 10 ms measured, 2.5 ms predicted */
	doc = json_report();
	c = json_array_get(json_object_get(doc, "compensation"), 0);
	cr_assert(c);
	cr_expect_float_eq(num(c, "explained_pct"), 25.0, 1e-3);
	cr_expect_float_eq(num(c, "compensated_ns") - num(c, "baseline_ns"), 7.5e6, 1);
	cr_expect(json_is_false(json_object_get(c, "fits")), "7.5 ms left over");
	cr_expect(ci(c, "compensated_ci", 0) > num(c, "baseline_ns"));
	json_decref(doc);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct cli_result r;
		cli_run_env(dir, "NO_COLOR=1", &r, "report", "--db", db, "--format", formats[i],
			    "--bootstrap", "500", NULL);
		cr_assert_eq(r.status, 0, "%s: %s", formats[i], r.err);
		cr_expect(strstr(r.out, "Cost per event, calibrated"), "%s", formats[i]);
		cr_expect(strstr(r.out, "Overhead compensation"), "%s", formats[i]);
		cr_expect(strstr(r.out, "Does not fit: traced on real"), "%s: %s", formats[i],
			  r.out);
		cli_result_release(&r);
	}
}

Test(calib, no_calibration_workload_no_section)
{
	struct cli_result r;
	json_t *doc;

	run_study(2.5);
	cli_sql_exec(db, "DELETE FROM calibration");
	doc = json_report();
	cr_expect_eq(json_array_size(json_object_get(doc, "calibration")), 0);
	cr_expect_eq(json_array_size(json_object_get(doc, "compensation")), 0);
	json_decref(doc);
	cli_run_env(dir, "NO_COLOR=1", &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_null(strstr(r.out, "Cost per event, calibrated"));
	cli_result_release(&r);
}

/* A variant whose events on the calibration workload are far fewer than
 * its known hits (3), or none, is not calibrated by it: the row says why,
 * and its compensation has no cost. */
Test(calib, a_workload_that_misses_the_point_does_not_calibrate)
{
	static const char *const events[] = { "3", "0" };
	json_t *doc, *c;

	run_study(2.5);
	for (size_t i = 0; i < ARRAY_SIZE(events); i++) {
		char *sql = xasprintf("UPDATE metric_values SET value = %s WHERE metric ="
				      " 'trace_events' AND value > 0 AND seq IN (SELECT seq FROM"
				      " plan WHERE workload = 'calib')", events[i]);
		cli_sql_exec(db, sql);
		free(sql);
		doc = json_report();
		c = json_array_get(json_object_get(doc, "calibration"), 0);
		cr_assert(c);
		cr_expect(json_is_null(json_object_get(c, "workload")), "%s events", events[i]);
		cr_expect(json_is_null(json_object_get(c, "ns")));
		cr_expect_str_eq(json_string_value(json_object_get(c, "reason")),
				 "no calibration workload hits its instrumented point");
		c = json_array_get(json_object_get(doc, "compensation"), 0);
		cr_assert(c);
		cr_expect(strstr(json_string_value(json_object_get(c, "reason")),
				 "no calibrated cost"));
		json_decref(doc);
	}
}

Test(calib, the_block_is_checked_where_it_is_written)
{
	static const struct {
		const char *block, *message;
	} cases[] = {
		{ "{hits: 1, hits_metric: n}", "needs exactly one of hits or hits_metric" },
		{ "{}", "needs exactly one of hits or hits_metric" },
		{ "{hits_metric: nope}", "'nope' is not a metric of workload 'w'" },
		{ "{hits: 1, metric: nope}", "'nope' is not a metric of workload 'w'" },
		{ "{hits: 1, hist: 2}", "did you mean 'hits'" },
		{ "{hits: 0}", "'hits' must be" },
		{ "{hits: 1, ops_metric: nope}", "'nope' is not a metric of workload 'w'" },
		{ "{hits_metric: n, ops_metric: n}", "ops_metric goes with hits" },
		{ "{hits: 1, metric: wall, ops_metric: n}", "not with metric: wall" },
		{ "{hits: 1, ops_metric: [a]}", "ops_metric" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cli_result r;
		char *yaml = xasprintf("name: t\nvariants:\n  - {name: base}\nworkloads:\n"
				       "  - {name: w, cmd: [\"true\"], calibration: %s}\n",
				       cases[i].block);
		tl_write(dir, "e.yaml", yaml);
		cli_run(dir, &r, "run", "--dry-run", "e.yaml", NULL);
		cr_expect_eq(r.status, 2, "%s: exit %d", cases[i].block, r.status);
		cr_expect(strstr(r.err, "e.yaml:5:"), "%s: %s", cases[i].block, r.err);
		cr_expect(strstr(r.err, cases[i].message), "%s: %s", cases[i].block, r.err);
		cli_result_release(&r);
		free(yaml);
	}
}

/* The published figures are the sources' throughputs, and the cost per
 * hit derived from them: 1e9 / traced - 1e9 / untraced. */
Test(calib, published_costs_come_from_the_published_throughputs)
{
	int tp = 0, not_given = 0;

	for (size_t i = 0; i < report_n_published; i++) {
		const struct report_published *p = &report_published[i];
		double ns = report_published_ns(p);
		cr_expect(p->source && *p->source && p->citation && *p->citation);
		if (isnan(ns)) {
			cr_expect_str_eq(p->figure, "not given");
			not_given++;
			continue;
		}
		cr_expect_float_eq(ns, 1e9 / p->hits_per_s - 1e9 / p->base_per_s, 1e-9);
		cr_expect_gt(ns, 0);
		if (!strcmp(p->tracer, "bpf") && !strcmp(p->attach, "tracepoint")) {
			cr_expect_float_eq(ns, 1e3 / 6.690 - 1e3 / 9.200, 1e-9);
			tp++;
		}
	}
	cr_expect_eq(tp, 1);
	cr_expect_gt(not_given, 0);
}

Test(calib, tracers_table_and_attach_types)
{
	struct bpf_cfg c = { .text = "kprobe:f,\nkfunc:g,\ntracepoint:a:b\n{ @n = count(); }" };
	char buf[128];

	cr_expect_str_eq(tracer_by_metric("trace_events")->name, "ftrace");
	cr_expect_str_eq(tracer_by_metric("bpf_runs")->name, "bpf");
	cr_expect_str_eq(tracer_by_metric("perf_events")->name, "perf");
	cr_expect_str_eq(tracer_by_metric("lttng_events")->name, "lttng");
	cr_expect_null(tracer_by_metric("wall"));
	bpf_attach_types(&c, buf, sizeof(buf));
	cr_expect_str_eq(buf, "tracepoint, kprobe, fentry");
	c.text = "BEGIN { printf(\"x\"); }";
	bpf_attach_types(&c, buf, sizeof(buf));
	cr_expect_str_eq(buf, "program");
}

/* Each tracer row describes its block, and says where a variant ran. */
Test(calib, attach_types_of_every_block_and_where_they_ran)
{
	char *events[] = { "syscalls:sys_enter_getppid" }, *sys[] = { "getppid" };
	char *kern[] = { "syscall:getppid" }, *user[] = { "perturb_micro:*" }, *pre[] = { "libc" };
	struct ktrace_spec k = { .events = events, .n_events = 1 };
	struct perf_cfg pc = { .mode = PERF_TRACE, .syscalls = sys, .n_syscalls = 1 };
	struct lttng_spec l = { .user = user, .n_user = 1, .preload = pre, .n_preload = 1 };
	struct variant v = { .name = "v", .be = &backend_host };
	char buf[160];

	cr_expect_null(tracer_of_variant(&v, buf, sizeof(buf)));
	cr_expect_str_eq(buf, "");
	v.kernel = &k;
	cr_expect_str_eq(tracer_of_variant(&v, buf, sizeof(buf))->name, "ftrace");
	cr_expect_str_eq(buf, "tracepoint (syscalls:sys_enter_getppid)");
	v.be = &backend_qemu;
	tracer_of_variant(&v, buf, sizeof(buf));
	cr_expect_str_eq(buf, "tracepoint (syscalls:sys_enter_getppid), in a qemu guest");
	v.kernel = NULL;
	v.lttng = &l;
	cr_expect_str_eq(tracer_of_variant(&v, buf, sizeof(buf))->name, "lttng");
	cr_expect_str_eq(buf, "user space (perturb_micro:*, libc wrapper), in a qemu guest");
	l.kernel = kern;
	l.n_kernel = 1;
	v.be = &backend_host;
	tracer_of_variant(&v, buf, sizeof(buf));
	cr_expect_str_eq(buf, "kernel (syscall:getppid)");
	v.lttng = NULL;
	v.cfg = &pc;
	v.cfg_key = PERF_TRACER_KEY;
	cr_expect_str_eq(tracer_of_variant(&v, buf, sizeof(buf))->name, "perf");
	cr_expect_str_eq(buf, "perf trace (getppid)");
}
