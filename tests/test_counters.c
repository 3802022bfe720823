/*
 * test_counters.c - event counters: names, the software events counted
 * over a known workload (tests/progs/touch), inheritance across forks,
 * hardware events reported unavailable where there is no PMU (or counting
 * where there is one), PAPI failing, read-outs and failures that come from
 * elsewhere (a QEMU guest: the qemu backend's path), and `perturb run`
 * storing it all.  The guest's own counting is tested in test_qemu.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/config.h"
#include "counters/counters.h"
#include "engine/plan.h"
#include "core/runner.h"
#include "engine/store.h"
#include "testlib.h"
#include "lib/util.h"

/* ---- helpers ---- */

/* Can this machine count hardware cycles?  Asked of the kernel directly,
 * not through perturb. */
static int machine_has_pmu(void)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

static char *prog(const char *name)
{
	return xasprintf("%s/%s", tl_progs(), name);
}

static struct counter_set *open_set(char **names, size_t n)
{
	struct counter_set *s = NULL;
	cr_assert_eq(counters_open(names, n, &s), 0);
	cr_assert_eq(counters_count(s), n);
	return s;
}

static size_t find(const struct counter_set *s, const char *name)
{
	for (size_t i = 0; i < counters_count(s); i++)
		if (!strcmp(counters_name(s, i), name))
			return i;
	cr_assert_fail("no counter '%s'", name);
	return 0;
}

/* Run argv with the counters; no fd or child left behind. */
static void run_counted(struct counter_set *s, char **argv, struct run_result *res)
{
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 20, .counters = s,
	};
	int fds = tl_count_fds();

	cr_assert_eq(runner_run(&req, res), 0);
	cr_assert_eq(tl_count_fds(), fds, "fds leaked");
	tl_assert_no_children();
}

/* The value of metric name in res, or -1 when it has none. */
static double value_of(const struct run_result *res, const char *name)
{
	for (size_t i = 0; i < res->n_values; i++)
		if (!strcmp(res->values[i].name, name))
			return res->values[i].value;
	return -1;
}

static const struct metric_value *mv(const struct run_result *res, const char *name)
{
	for (size_t i = 0; i < res->n_values; i++)
		if (!strcmp(res->values[i].name, name))
			return &res->values[i];
	return NULL;
}

TestSuite(counters, .timeout = 60, .fini = (void (*)(void))stop_clear);

/* ---- names ---- */

static void parses(const char *name, enum counter_kind kind, enum counter_mode mode,
		   const char *unit)
{
	struct counter_spec sp;
	char why[512] = "";

	cr_assert_eq(counter_parse(name, &sp, why, sizeof(why)), 0, "%s: %s", name, why);
	cr_expect_eq(sp.kind, kind, "%s", name);
	cr_expect_eq(sp.mode, mode, "%s", name);
	cr_expect_str_eq(counter_unit(&sp), unit, "%s", name);
}

static void refused(const char *name, const char *want)
{
	char why[512] = "";

	cr_assert_eq(counter_parse(name, NULL, why, sizeof(why)), -1, "%s accepted", name);
	cr_expect(strstr(why, want), "%s: got '%s', want '%s'", name, why, want);
}

Test(counters, portable_names_and_suffixes)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-misses", "cache-references",
		"branches", "branch-misses",
	};
	static const char *const sw[] = {
		"context-switches", "cpu-migrations", "page-faults", "major-faults",
		"minor-faults",
	};

	for (size_t i = 0; i < ARRAY_SIZE(hw); i++)
		parses(hw[i], COUNTER_HARDWARE, COUNTER_MODE_ALL, "count");
	for (size_t i = 0; i < ARRAY_SIZE(sw); i++)
		parses(sw[i], COUNTER_SOFTWARE, COUNTER_MODE_ALL, "count");
	parses("task-clock", COUNTER_SOFTWARE, COUNTER_MODE_ALL, "ns");
	parses("cycles:u", COUNTER_HARDWARE, COUNTER_MODE_USER, "count");
	parses("cycles:k", COUNTER_HARDWARE, COUNTER_MODE_KERNEL, "count");
	parses("page-faults:u", COUNTER_SOFTWARE, COUNTER_MODE_USER, "count");
	parses("task-clock:k", COUNTER_SOFTWARE, COUNTER_MODE_KERNEL, "ns");
}

Test(counters, raw_papi_names_pass_through)
{
	parses("PAPI_TOT_CYC", COUNTER_RAW_PAPI, COUNTER_MODE_ALL, "count");
	parses("PAPI_L1_DCM", COUNTER_RAW_PAPI, COUNTER_MODE_ALL, "count");
	parses("perf::CYCLES", COUNTER_RAW_PAPI, COUNTER_MODE_ALL, "count");
	parses("perf::PERF_COUNT_SW_PAGE_FAULTS", COUNTER_RAW_PAPI, COUNTER_MODE_ALL, "count");
	parses("amd64_fam17h::RETIRED_INSTRUCTIONS:u=1", COUNTER_RAW_PAPI,
	       COUNTER_MODE_ALL, "count");
}

Test(counters, bad_names_are_refused_with_a_hint)
{
	refused("cycels", "unknown counter 'cycels'; did you mean 'cycles'?");
	refused("page-fault", "did you mean 'page-faults'?");
	refused("frobnications", "unknown counter 'frobnications' (portable names:");
	refused("cycles:x", "the suffix must be :u (user mode only) or :k");
	refused("cycles:", "the suffix must be :u");
	refused("cycles:uk", "the suffix must be :u");
	refused("PAPI_TOT_CYC:u", ":u and :k apply to portable names");
	refused("papi_tot_cyc", "unknown counter");
	refused("PAPI_", "unknown counter");
	refused("::CYCLES", "unknown counter");
	refused("perf:: CYCLES", "unknown counter");
	refused("", "must not be empty");
}

Test(counters, multiplexed_counts_are_scaled_and_flagged)
{
	double v = -1;

	cr_expect_eq(counter_scale(1000, 500, 500, &v), 0);
	cr_expect_eq(v, 1000);
	/* counted half the time: twice the count, flagged */
	cr_expect_eq(counter_scale(1000, 800, 400, &v), 1);
	cr_expect_eq(v, 2000);
	cr_expect_eq(counter_scale(3, 3000000000ULL, 1000000000ULL, &v), 1);
	cr_expect_eq(v, 9);
	/* never scheduled: no value, not 0 */
	v = -1;
	cr_expect_eq(counter_scale(0, 800, 0, &v), -1);
	cr_expect_eq(v, -1);
}

/* What the qemu backend makes of a guest's read-out: the host's rules. */
Test(counters, a_read_out_from_elsewhere_becomes_a_reading_or_a_failure)
{
	struct counter_reading rd = { 0 };
	char why[256] = "";

	/* the workload never exec'd: no value, and no failure */
	cr_expect_eq(counter_reading_fill(&rd, 0, 0, 0, why, sizeof(why)), 0);
	cr_expect_eq(rd.value, 0);
	cr_expect_str_empty(why);
	/* never scheduled: no value, a reason */
	cr_expect_eq(counter_reading_fill(&rd, 0, 800, 0, why, sizeof(why)), -1);
	cr_expect(strstr(why, "never scheduled"), "%s", why);
	/* counted all along, then half the time: scaled and flagged */
	cr_assert_eq(counter_reading_fill(&rd, 1000, 800, 800, why, sizeof(why)), 1);
	cr_expect(rd.value == 1000 && rd.raw == 1000 && !rd.scaled);
	cr_expect(rd.time_enabled_ns == 800 && rd.time_running_ns == 800);
	cr_assert_eq(counter_reading_fill(&rd, 1000, 800, 400, why, sizeof(why)), 1);
	cr_expect(rd.value == 2000 && rd.raw == 1000 && rd.scaled);
}

static void count_failure(const char *name, const char *reason, void *ctx)
{
	cr_expect_str_eq(name, "page-faults");
	cr_expect_str_eq(reason, "in the guest: no such thing");
	(*(int *)ctx)++;
}

Test(counters, failures_from_elsewhere_are_reported_once)
{
	char *names[] = { "task-clock", "page-faults" };
	struct counter_set *s = open_set(names, 2);
	int n = 0;

	cr_expect_str_eq(counters_unit(s, 0), "ns");
	cr_expect_str_eq(counters_unit(s, 1), "count");
	counters_fail(s, 1, "in the guest: no such thing");
	counters_fail(s, 1, "in the guest: said once");
	counters_run_failures(s, count_failure, &n);
	cr_expect_eq(n, 1);
	counters_fail(s, 1, "in the guest: not again");
	counters_run_failures(s, count_failure, &n);
	cr_expect_eq(n, 1);
	counters_close(s);
}

/* ---- software events over a known workload ---- */

Test(counters, software_counters_count_a_known_workload)
{
	char *names[] = { "page-faults", "minor-faults", "major-faults",
			  "context-switches", "task-clock", "cpu-migrations",
			  "page-faults:u" };
	struct counter_set *s = open_set(names, ARRAY_SIZE(names));
	char *touch = prog("touch");
	char *argv[] = { touch, "-p", "2000", "-s", "5", NULL };
	struct run_result res;

	cr_assert_eq(counters_n_available(s), ARRAY_SIZE(names));
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		cr_expect_str_eq(counters_backend(s, i), "perf_event");
		cr_expect_null(counters_reason(s, i));
	}
	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_eq(res.n_values, ARRAY_SIZE(names));
	cr_expect_geq(value_of(&res, "page-faults"), 2000);
	cr_expect_geq(value_of(&res, "minor-faults"), 2000);
	cr_expect_geq(value_of(&res, "page-faults:u"), 2000);
	cr_expect_geq(value_of(&res, "major-faults"), 0);
	cr_expect_geq(value_of(&res, "context-switches"), 5);
	cr_expect_geq(value_of(&res, "cpu-migrations"), 0);
	/* one process: its CPU time is at most the wall time */
	cr_expect_gt(value_of(&res, "task-clock"), 0);
	cr_expect_leq(value_of(&res, "task-clock") / 1e9, res.wall_s * 1.05 + 1e-3,
		      "task-clock %g ns, wall %g s", value_of(&res, "task-clock"), res.wall_s);
	/* software events are never multiplexed; times are recorded */
	const struct metric_value *v = mv(&res, "page-faults");
	cr_assert_not_null(v);
	cr_expect_str_eq(v->unit, "count");
	cr_expect_eq(v->scaled, 0);
	cr_expect_gt(v->time_enabled_ns, 0);
	cr_expect_eq(v->time_running_ns, v->time_enabled_ns);
	cr_expect_str_eq(mv(&res, "task-clock")->unit, "ns");
	run_result_release(&res);

	/* the set is reusable run after run */
	char *argv2[] = { touch, "-p", "100", NULL };
	run_counted(s, argv2, &res);
	cr_expect_geq(value_of(&res, "page-faults"), 100);
	cr_expect_lt(value_of(&res, "page-faults"), 2000);
	run_result_release(&res);
	counters_close(s);
	free(touch);
}

Test(counters, the_harness_work_before_exec_is_not_counted)
{
	/* /bin/true: a few dozen faults of its own; the harness's fork copies
	 * perturb's (the test program's) pages, which would add hundreds. */
	char *names[] = { "page-faults", "context-switches" };
	struct counter_set *s = open_set(names, 2);
	char *argv[] = { "/bin/true", NULL };
	struct run_result res;
	double faults;

	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	faults = value_of(&res, "page-faults");
	cr_expect_gt(faults, 0);
	cr_expect_lt(faults, 200, "page-faults of /bin/true: %g", faults);
	run_result_release(&res);
	counters_close(s);
}

Test(counters, inherit_counts_the_whole_process_tree)
{
	char *names[] = { "page-faults", "context-switches" };
	struct counter_set *s = open_set(names, 2);
	char *touch = prog("touch");
	char *argv[] = { touch, "-p", "1000", "-s", "3", "-c", "3", NULL };
	struct run_result res;

	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_expect_geq(value_of(&res, "page-faults"), 4 * 1000);
	cr_expect_geq(value_of(&res, "context-switches"), 4 * 3);
	run_result_release(&res);
	counters_close(s);
	free(touch);
}

Test(counters, failed_runs_keep_their_counters)
{
	char *names[] = { "page-faults" };
	struct counter_set *s = open_set(names, 1);
	char *touch = prog("touch");
	char *argv[] = { touch, "-p", "300", "-x", "3", NULL };
	struct run_result res;

	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_FAILED);
	cr_expect_geq(value_of(&res, "page-faults"), 300);
	run_result_release(&res);
	counters_close(s);
	free(touch);
}

Test(counters, a_run_that_cannot_start_gives_no_counters)
{
	char *names[] = { "page-faults" };
	struct counter_set *s = open_set(names, 1);
	char *argv[] = { "/no/such/program-xyz", NULL };
	struct run_result res;

	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_ERROR);
	cr_expect(strstr(res.reason, "cannot run"), "%s", res.reason);
	cr_expect_eq(res.n_values, 0);
	run_result_release(&res);
	counters_close(s);
}

Test(counters, set_up_failures_of_the_waiting_child_are_reported)
{
	char *names[] = { "page-faults" };
	struct counter_set *s = open_set(names, 1);
	char *argv[] = { "/bin/true", NULL };
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 20, .counters = s,
		.cwd = "/no/such/folder-xyz",
	};
	struct run_result res;
	int fds = tl_count_fds();

	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_ERROR);
	cr_expect(strstr(res.reason, "cannot change to directory '/no/such/folder-xyz'"),
		  "%s", res.reason);
	cr_expect_eq(res.n_values, 0);
	cr_assert_eq(tl_count_fds(), fds, "fds leaked");
	tl_assert_no_children();
	run_result_release(&res);

	/* and the next run is counted as usual */
	req.cwd = "/";
	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_expect_gt(value_of(&res, "page-faults"), 0);
	run_result_release(&res);
	counters_close(s);
}

Test(counters, metrics_come_first_then_counters)
{
	char *names[] = { "context-switches" };
	struct counter_set *s = open_set(names, 1);
	struct metric_def m;
	char *argv[] = { "/bin/sh", "-c", "echo 'v = 42'", NULL };
	struct run_request req = {
		.argv = argv, .envp = tl_test_env(), .timeout_s = 20,
		.metrics = &m, .n_metrics = 1, .counters = s,
	};
	struct run_result res;

	memset(&m, 0, sizeof(m));
	m.name = "v";
	m.regex_src = "v = ([0-9]+)";
	m.unit = "";
	cr_assert_eq(regcomp(&m.re, m.regex_src, REG_EXTENDED), 0);
	m.has_group = 1;
	cr_assert_eq(runner_run(&req, &res), 0);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_assert_eq(res.n_values, 2);
	cr_expect_str_eq(res.values[0].name, "v");
	cr_expect_eq(res.values[0].value, 42);
	cr_expect_str_eq(res.values[1].name, "context-switches");
	run_result_release(&res);
	regfree(&m.re);
	counters_close(s);
}

/* ---- hardware events, PAPI ---- */

Test(counters, hardware_counters_count_or_say_why_not)
{
	char *names[] = { "cycles", "instructions:u", "branch-misses", "page-faults" };
	struct counter_set *s = open_set(names, ARRAY_SIZE(names));
	char *touch = prog("touch");
	char *argv[] = { touch, "-p", "100", NULL };
	struct run_result res;
	int pmu = machine_has_pmu();

	cr_expect(counters_available(s, find(s, "page-faults")));
	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	for (size_t i = 0; i < 3; i++) {
		if (pmu && counters_available(s, i)) {
			cr_expect_gt(value_of(&res, names[i]), 0, "%s", names[i]);
			continue;
		}
		/* Without a PMU: unavailable, with a reason, and no value at all
		 * (never 0).  With one, only branch-misses may be missing. */
		cr_expect(!pmu || !strcmp(names[i], "branch-misses"),
			  "%s unavailable with a PMU: %s", names[i], counters_reason(s, i));
		cr_expect(!counters_available(s, i), "%s", names[i]);
		cr_expect_null(counters_backend(s, i));
		cr_assert_not_null(counters_reason(s, i));
		cr_assert_not_null(counters_short_reason(s, i));
		if (!pmu) {
			cr_expect_str_eq(counters_short_reason(s, i), "no hardware PMU");
			cr_expect(strstr(counters_reason(s, i), "perf_event_open: ENOENT") ||
				  strstr(counters_reason(s, i), "perf_event_open: EOPNOTSUPP"),
				  "%s", counters_reason(s, i));
		}
		cr_expect_eq(value_of(&res, names[i]), -1, "%s has a value", names[i]);
	}
	/* the suffixed one never goes through PAPI */
	if (!pmu)
		cr_expect_null(strstr(counters_reason(s, 1), "PAPI"), "%s",
			       counters_reason(s, 1));
	run_result_release(&res);
	counters_close(s);
	free(touch);
}

Test(counters, raw_papi_names_count_or_say_why_not)
{
	char *names[] = { "PAPI_TOT_CYC", "perf::PERF_COUNT_SW_PAGE_FAULTS",
			  "nosuchpmu::NO_SUCH_EVENT" };
	struct counter_set *s = open_set(names, 3);
	char *touch = prog("touch");
	char *argv[] = { touch, "-p", "500", NULL };
	struct run_result res;

	cr_expect(!counters_available(s, 2));
	cr_expect(strstr(counters_reason(s, 2), "PAPI"), "%s", counters_reason(s, 2));
	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	for (size_t i = 0; i < 3; i++) {
		if (counters_available(s, i)) {
			cr_expect_str_eq(counters_backend(s, i), "PAPI");
			cr_expect_gt(value_of(&res, names[i]), 0, "%s", names[i]);
		} else {
			cr_expect(strstr(counters_reason(s, i), "PAPI"), "%s",
				  counters_reason(s, i));
			cr_expect_eq(value_of(&res, names[i]), -1);
		}
	}
	if (counters_available(s, 1))
		cr_expect_geq(value_of(&res, names[1]), 500);
	run_result_release(&res);
	counters_close(s);
	free(touch);
}

static void papi_degrades(enum counters_papi_sim sim, const char *want)
{
	char *names[] = { "cycles", "PAPI_TOT_CYC", "page-faults" };
	struct counter_set *s;
	char *touch = prog("touch");
	char *argv[] = { touch, "-p", "200", NULL };
	struct run_result res;

	counters_papi_simulate(sim);
	s = open_set(names, 3);
	counters_papi_simulate(COUNTERS_PAPI_SIM_NONE);

	/* raw PAPI names: unavailable, saying why */
	cr_expect(!counters_available(s, 1));
	cr_expect(strstr(counters_reason(s, 1), want), "%s", counters_reason(s, 1));
	/* portable hardware names: perf_event_open, or both reasons */
	if (machine_has_pmu()) {
		cr_expect_str_eq(counters_backend(s, 0), "perf_event");
	} else {
		cr_expect(!counters_available(s, 0));
		cr_expect(strstr(counters_reason(s, 0), "perf_event_open"), "%s",
			  counters_reason(s, 0));
		cr_expect(strstr(counters_reason(s, 0), want), "%s", counters_reason(s, 0));
	}
	/* software events are not PAPI's business */
	cr_expect_str_eq(counters_backend(s, 2), "perf_event");
	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_expect_geq(value_of(&res, "page-faults"), 200);
	run_result_release(&res);
	counters_close(s);
	free(touch);
}

Test(counters, papi_init_failure_degrades_to_perf_event)
{
	papi_degrades(COUNTERS_PAPI_SIM_INIT_FAIL, "PAPI_library_init");
}

Test(counters, papi_without_components_degrades_to_perf_event)
{
	papi_degrades(COUNTERS_PAPI_SIM_NO_COMPONENT, "no perf_event component");
}

Test(counters, all_unavailable_still_runs)
{
	char *names[] = { "nosuchpmu::NO_SUCH_EVENT" };
	struct counter_set *s = open_set(names, 1);
	char *argv[] = { "/bin/true", NULL };
	struct run_result res;

	cr_expect_eq(counters_n_available(s), 0);
	run_counted(s, argv, &res);
	cr_assert_eq(res.status, RUN_OK, "%s", res.reason);
	cr_expect_eq(res.n_values, 0);
	run_result_release(&res);
	counters_close(s);
}

/* ---- the store ---- */

static int find_scaled(const struct stored_value *v, void *ctx)
{
	int *seen = ctx;
	if (!strcmp(v->metric, "cycles"))
		seen[0] = v->scaled ? 1 : 2;
	else if (!strcmp(v->metric, "page-faults"))
		seen[1] = v->scaled ? 1 : 2;
	else if (!strcmp(v->metric, "wall"))
		seen[2] = v->scaled ? 1 : 2;
	return 0;
}

Test(counters, the_store_keeps_the_scaled_flag_and_times)
{
	char *tmp = tl_tmpdir(), *db = xasprintf("%s/s.db", tmp);
	char *path = xasprintf("%s/e.yaml", tmp), err[512];
	struct experiment exp;
	struct plan p = { 0 };
	struct store *st = NULL;
	struct metric_value vals[2] = {
		{ .name = "cycles", .value = 2000, .unit = "count", .scaled = 1,
		  .time_enabled_ns = 800, .time_running_ns = 400 },
		{ .name = "page-faults", .value = 7, .unit = "count",
		  .time_enabled_ns = 800, .time_running_ns = 800 },
	};
	struct run_result r = { .status = RUN_OK, .values = vals, .n_values = 2 };
	int seen[3] = { 0 };
	int64_t id;

	tl_write(tmp, "e.yaml", "name: s\nrepetitions: 1\nwarmup: 0\n"
		 "counters: [cycles, page-faults]\n"
		 "variants:\n  - name: a\nworkloads:\n  - {name: w, cmd: [x]}\n");
	cr_assert_eq(config_load(path, &exp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(plan_build(&exp, &(struct plan_filter){ 0 }, 1, &p, err, sizeof(err)), 0);
	cr_assert_eq(store_open(db, 1, &st), 0);
	cr_assert_eq(store_begin_run(st, &exp, &p, 1, "t", NULL, NULL, &id), 0);
	cr_assert_eq(store_put_result(st, id, 0, &r), 0);
	cr_assert_eq(store_put_unavailable(st, id, "cycles:k", "no hardware PMU (x)"), 0);
	cr_assert_eq(store_each_value(st, id, 1, 1, find_scaled, seen), 0);
	cr_expect_eq(seen[0], 1, "cycles not flagged scaled");
	cr_expect_eq(seen[1], 2, "page-faults flagged scaled");
	cr_expect_eq(seen[2], 2, "wall flagged scaled");
	store_close(st);
	cr_expect_eq(cli_sql_int(db, "SELECT time_running_ns FROM metric_values"
				 " WHERE metric = 'cycles'"), 400);
	cr_expect_eq(cli_sql_int(db, "SELECT time_enabled_ns FROM metric_values"
				 " WHERE metric = 'cycles'"), 800);
	plan_release(&p);
	experiment_release(&exp);
	tl_rmtree(tmp);
	free(tmp);
	free(db);
	free(path);
}

/* ---- perturb run ---- */

Test(counters, perturb_run_stores_counters_and_unavailable_ones)
{
	char *tmp = tl_tmpdir(), *db = xasprintf("%s/r.db", tmp);
	char *touch = prog("touch");
	char *yaml = xasprintf(
		"name: c\nrepetitions: 2\nwarmup: 0\n"
		"counters: [cycles, page-faults, context-switches]\n"
		"variants:\n  - name: base\n"
		"workloads:\n  - {name: t, cmd: [%s, -p, '1000', -s, '2', -c, '1']}\n", touch);
	struct cli_result r;
	int pmu = machine_has_pmu();

	tl_write(tmp, "e.yaml", yaml);
	cli_run(tmp, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* one warning at the start, nothing per run */
	if (!pmu) {
		cr_expect(strstr(r.err, "counters unavailable here: cycles (no hardware PMU)"),
			  "%s", r.err);
		/* (and perturb run's own word on a loaded machine, before the study) */
		cr_expect_eq(tl_count_lines(r.err) -
			     !!strstr(r.err, "perturb: warning: load average"), 3, "%s", r.err);
	}
	/* stdout: the closing summary only */
	cr_expect(!strncmp(r.out, "\nrun 1 'c': 1 variant x 1 workload", 34), "%s", r.out);
	cr_expect_null(strstr(r.out, "cycles"), "%s", r.out);

	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values"
				 " WHERE metric = 'page-faults' AND value >= 2000"
				 " AND unit = 'count' AND scaled = 0"
				 " AND time_enabled_ns > 0 AND time_running_ns > 0"), 2);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values"
				 " WHERE metric = 'context-switches' AND value >= 4"), 2);
	if (pmu) {
		cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values"
					 " WHERE metric = 'cycles' AND value > 0"), 2);
		cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM unavailable"), 0);
	} else {
		cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values"
					 " WHERE metric = 'cycles'"), 0, "cycles stored");
		char *why = cli_sql_text(db, "SELECT reason FROM unavailable"
					 " WHERE metric = 'cycles'");
		cr_assert_not_null(why);
		cr_expect(strstr(why, "no hardware PMU (perf_event_open: "), "%s", why);
		free(why);
		cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM unavailable"), 1);
	}
	cli_result_release(&r);

	/* the report's tidy CSV carries the counters like any metric */
	cli_run(tmp, &r, "report", "--db", db, "--format", "csv", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, ",page-faults,"), "%s", r.out);
	cli_result_release(&r);

	tl_rmtree(tmp);
	free(tmp);
	free(db);
	free(touch);
	free(yaml);
}

Test(counters, perturb_run_without_any_countable_counter_still_runs)
{
	char *tmp = tl_tmpdir(), *db = xasprintf("%s/r.db", tmp);
	struct cli_result r;

	tl_write(tmp, "e.yaml",
		 "name: c\nrepetitions: 1\nwarmup: 0\n"
		 "counters: [nosuchpmu::NO_SUCH_EVENT]\n"
		 "variants:\n  - name: base\n"
		 "workloads:\n  - {name: t, cmd: [/bin/true]}\n");
	cli_run(tmp, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "counters unavailable here: nosuchpmu::NO_SUCH_EVENT ("),
		  "%s", r.err);
	cr_expect(strstr(r.err, "none of the counters asked for can be counted here"),
		  "%s", r.err);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 1);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM unavailable"), 1);
	/* no counter stored (the run's cgroup metrics are not counters) */
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values"
				 " WHERE metric NOT LIKE 'cgroup\\_%' ESCAPE '\\'"), 0);
	cli_result_release(&r);
	tl_rmtree(tmp);
	free(tmp);
	free(db);
}
