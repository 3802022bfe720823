/*
 * test_backends.c - the backend table: a backend outside the tree (the toy
 * of backend_nice.c) takes one file and one row, registered here; the
 * loader hands it its block, with positioned messages, and a study run
 * through the library runs its workloads through it: they really run at
 * niceness 19.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "testlib.h"
#include "backends/backend.h"
#include "backends/perf_tracer.h"
#include "reports/warnings.h"
#include "cli/commands.h"
#include "engine/config.h"
#include "engine/study.h"
#include "lib/machine.h"
#include "lib/util.h"

/* The row (backend_nice.c). */
extern const struct backend backend_nice;

TL_FIXTURE_DB("r.db")

/* `perturb run e.yaml --db DB -q` of yaml (written to dir/e.yaml) in this
 * process, where the tests' backends are registered: its exit status. */
static int run_study(const char *yaml)
{
	char *path = xasprintf("%s/e.yaml", dir);
	char *argv[] = { "run", path, "--db", db, "-q", NULL };
	int status;

	tl_write(dir, "e.yaml", yaml);
	status = cmd_run(5, argv);
	free(path);
	return status;
}

static void setup(void)
{
	tl_setup();
	cr_assert_eq(backend_register(&backend_nice), 0);
}

TestSuite(backends, .init = setup, .fini = tl_teardown, .timeout = 60);

/* Load dir/e.yaml holding text: 0 or -1 with err. */
static int load(const char *text, struct experiment *exp, char *err, size_t len)
{
	char *path = xasprintf("%s/e.yaml", dir);
	int r;

	tl_write(dir, "e.yaml", text);
	r = config_load(path, exp, err, len);
	free(path);
	return r;
}

Test(backends, the_table_has_host_first_then_qemu_then_registered_rows)
{
	cr_assert_eq(backend_at(0), &backend_host);
	cr_assert_eq(backend_default(), &backend_host);
	cr_assert_eq(backend_for_key("boot"), &backend_qemu);
	cr_assert_eq(backend_for_key("nice"), &backend_nice);
	cr_assert_null(backend_for_key("kernel"), "kernel: is every variant's, no backend's");
	/* registering again is harmless; another row with its key is refused */
	cr_assert_eq(backend_register(&backend_nice), 0);
	struct backend other = { .name = "other", .key = "nice", .run = backend_nice.run };
	cr_assert_eq(backend_register(&other), -1);
	struct backend norun = { .name = "norun" };
	cr_assert_eq(backend_register(&norun), -1);
}

Test(backends, the_loader_hands_the_block_to_its_backend)
{
	struct experiment exp;
	char err[1024];

	cr_assert_eq(load("name: n\nvariants:\n  - {name: base}\n  - name: low\n"
			  "    nice: {level: 7}\nworkloads:\n  - {name: w, cmd: [\"true\"]}\n",
			  &exp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(exp.variants[0].be, &backend_host);
	cr_assert_null(exp.variants[0].cfg);
	cr_assert_eq(exp.variants[1].be, &backend_nice);
	cr_assert_eq(*(int *)exp.variants[1].cfg, 7);
	cr_assert_eq(exp.variants[1].cfg_pos.line, 5);
	cr_assert_eq(exp.variants[1].cfg_pos.col, 11);
	experiment_release(&exp);
}

Test(backends, a_bad_block_is_reported_where_it_is)
{
	struct experiment exp;
	char err[1024];

	cr_assert_eq(load("name: n\nvariants:\n  - name: low\n    nice: {levle: 3}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "e.yaml:4:12: unknown key 'levle' in nice; did you mean 'level'?"),
		  "%s", err);
	cr_assert_eq(load("name: n\nvariants:\n  - name: low\n    nice: {level: 20}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "e.yaml:4:19: 'level' must be an integer between 1 and 19, got '20'"),
		  "%s", err);
	/* a typo of the backend's key is a typo of a variant key */
	cr_assert_eq(load("name: n\nvariants:\n  - name: low\n    nise: {}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "e.yaml:4:5: unknown key 'nise' in variant; did you mean 'nice'?"),
		  "%s", err);
	/* one backend a variant */
	cr_assert_eq(load("name: n\nvariants:\n  - name: low\n    nice: {}\n"
			  "    boot: {qemu: {kernel: debian}}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "e.yaml:5:5: variant 'low' has both 'nice' and 'boot'; one backend "
			  "block serves a variant"), "%s", err);
}

Test(backends, a_study_runs_its_workloads_through_it)
{
	int base = getpriority(PRIO_PROCESS, 0);

	cr_assert_lt(base, 19, "the tests run at niceness 19 already: nothing to see");
	cr_assert_eq(run_study(
		 "name: nice\n"
		 "repetitions: 2\n"
		 "warmup: 0\n"
		 "variants:\n"
		 "  - {name: base}\n"
		 "  - {name: low, nice: {}}\n"
		 "workloads:\n"
		 "  - name: w\n"
		 "    shell: 'echo niceness=$(nice)'\n"
		 "    metrics:\n"
		 "      - {name: niceness, regex: 'niceness=(-?[0-9]+)'}\n"), EXIT_OK);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results WHERE status = 'ok'"), 4);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM metric_values m JOIN plan p"
				 " USING (run_id, seq) WHERE m.metric = 'niceness' AND"
				 " p.variant = 'low' AND m.value = 19"), 2);
	char *sql = xasprintf("SELECT COUNT(*) FROM metric_values m JOIN plan p USING (run_id, seq)"
			      " WHERE m.metric = 'niceness' AND p.variant = 'base' AND m.value = %d",
			      base);
	cr_assert_eq(cli_sql_int(db, sql), 2, "the baseline runs at the tests' niceness, %d", base);
	free(sql);
}

/*
 * A backend whose run ends as interrupted although perturb was not asked
 * to stop (the host runner did so when its wait failed): the study stops
 * there, and such a run is never stored as completed nor ends in exit 0.
 */
static int cut_parse(struct yn_ctx *y, const struct ynode *block, void *cfg)
{
	return yn_want_map(y, block, "cut") || yn_check_keys(y, block, "cut", NULL);
}

static int cut_run(struct backend_ctx *ctx, const struct run_request *req,
		   struct run_result *res)
{
	int r = runner_run(req, res);
	res->status = RUN_INTERRUPTED;
	return r;
}

static const struct backend backend_cut = {
	.name = "cut", .key = "cut", .cfg_size = 1, .parse = cut_parse, .run = cut_run,
};

Test(backends, a_study_that_stops_early_is_never_completed)
{
	cr_assert_eq(backend_register(&backend_cut), 0);
	cr_assert_eq(run_study("name: cut\nrepetitions: 3\nwarmup: 0\norder: sequential\n"
			       "variants:\n  - {name: base}\n  - {name: cut, cut: {}}\n"
			       "workloads:\n  - {name: w, cmd: [\"true\"]}\n"), EXIT_RUNTIME);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM runs WHERE status = 'completed'"), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM runs WHERE status = 'failed'"), 1);
	cr_assert_eq(cli_sql_int(db, "SELECT COUNT(*) FROM results"), 3, "the base runs only");
}

/*
 * A backend whose runs are nested in blocks (boots() = 3) and whose blocks
 * take a known time to enter (60 ms) and to leave (30 ms), slept: the
 * cost of a boot, not a synchronisation.  The engine, not the backend,
 * times every block entry and every run (store.h: block_entries,
 * results.cost_s), so this toy's costs are stored as a boot's are.
 */
#define SLOW_ENTER_NS 60000000L
#define SLOW_LEAVE_NS 30000000L

static int slow_parse(struct yn_ctx *y, const struct ynode *block, void *cfg)
{
	return yn_want_map(y, block, "slow") || yn_check_keys(y, block, "slow", NULL);
}

static int slow_nap(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static int slow_enter(struct backend_ctx *ctx)
{
	(void)ctx;
	return slow_nap(SLOW_ENTER_NS);
}

static int slow_leave(struct backend_ctx *ctx)
{
	(void)ctx;
	return slow_nap(SLOW_LEAVE_NS);
}

static int slow_boots(const struct variant *v)
{
	(void)v;
	return 3;
}

static int slow_run(struct backend_ctx *ctx, const struct run_request *req,
		    struct run_result *res)
{
	(void)ctx;
	return runner_run(req, res);
}

static const struct backend backend_slow = {
	.name = "slow", .key = "slow", .cfg_size = 1, .parse = slow_parse,
	.enter = slow_enter, .leave = slow_leave, .boots = slow_boots, .run = slow_run,
};

Test(backends, the_cost_of_entering_a_block_and_of_a_run_is_stored)
{
	cr_assert_eq(backend_register(&backend_slow), 0);
	cr_assert_eq(run_study("name: slow\nrepetitions: 6\nwarmup: 1\norder: sequential\n"
			       "variants:\n  - {name: base}\n  - {name: slow, slow: {}}\n"
			       "workloads:\n  - {name: w, cmd: [\"true\"]}\n"), EXIT_OK);
	/* 3 blocks a variant, each of 1 warm-up and 2 runs, entered once */
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 18);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM block_entries e JOIN plan p"
				 " ON p.run_id = e.run_id AND p.seq = e.first_seq"
				 " WHERE p.variant = 'slow' AND p.warmup = 1"), 3,
		     "one entry per block, made for its first run");
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM block_entries"), 6);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM block_entries e JOIN plan p"
				 " ON p.run_id = e.run_id AND p.seq = e.first_seq"
				 " WHERE p.variant = 'slow' AND e.enter_s >= 0.06 AND e.leave_s >= 0.03"),
		     3, "the slow blocks' entry and leave are timed");
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM block_entries e JOIN plan p"
				 " ON p.run_id = e.run_id AND p.seq = e.first_seq"
				 " WHERE p.variant = 'base' AND e.enter_s >= 0"
				 " AND e.leave_s >= 0"), 3, "the host's blocks, timed alike");
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE cost_s >= wall_s"),
		     18, "every run's cost, at least its wall time");
}

/*
 * A backend whose build (a kernel's, as qemu's) keeps a CPU busy until the
 * load average has changed and STUDY_BUILD_LOAD_S have passed: the run
 * stores the load average from before the build, not the one the build
 * left (the report warns of a load "when the run started" as other work).
 */
static char *built_load[2];	/* the load averages at the build's start and end */

static int build_parse(struct yn_ctx *y, const struct ynode *block, void *cfg)
{
	return yn_want_map(y, block, "builder") || yn_check_keys(y, block, "builder", NULL);
}

static int build_busy(const struct variant *v)
{
	double t0 = now_mono();
	volatile unsigned long spin = 0;

	(void)v;
	built_load[0] = machine_loadavg();
	for (;;) {
		char *now = machine_loadavg();
		int changed = strcmp(now, built_load[0]) != 0;
		free(now);
		/* /proc/loadavg changes every 5 s; 30 s: the test fails below */
		if ((changed && now_mono() - t0 >= STUDY_BUILD_LOAD_S) || now_mono() - t0 > 30)
			break;
		for (int i = 0; i < 1000000; i++)
			spin++;
	}
	built_load[1] = machine_loadavg();
	return 0;
}

static const struct backend backend_builder = {
	.name = "builder", .key = "builder", .cfg_size = 1, .parse = build_parse,
	.build = build_busy, .run = slow_run,	/* the host's run */
};

Test(backends, the_load_a_build_leaves_is_not_the_runs)
{
	char *stored;

	cr_assert_eq(backend_register(&backend_builder), 0);
	cr_assert_eq(run_study("name: b\nrepetitions: 1\nwarmup: 0\n"
			       "variants:\n  - {name: base}\n  - {name: k, builder: {}}\n"
			       "workloads:\n  - {name: w, cmd: [\"true\"]}\n"), EXIT_OK);
	cr_assert(built_load[0] && built_load[1]);
	cr_assert_str_neq(built_load[1], built_load[0], "the load average did not change");
	stored = cli_sql_text(db, "SELECT loadavg FROM runs");
	cr_expect_str_eq(stored, built_load[0], "stored %s; before the build %s, after it %s",
			 stored, built_load[0], built_load[1]);
	free(stored);
	free(built_load[0]);
	free(built_load[1]);
}

/* host claims bpf: (backends/bpf.c); its block is checked where it is */
Test(backends, a_bpf_block_is_hosts_and_its_mistakes_are_positioned)
{
	struct experiment exp;
	char err[1024];

	cr_assert_eq(backend_for_key("bpf"), &backend_host);
	cr_assert_eq(load("name: n\nvariants:\n  - {name: base}\n  - name: b\n"
			  "    bpf: {probes: ['tracepoint:syscalls:sys_enter_getppid']}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(exp.variants[1].be, &backend_host);
	cr_assert_null(exp.variants[0].cfg);
	cr_assert(strstr(*(char **)exp.variants[1].cfg, "tracepoint:syscalls:sys_enter_getppid"));
	experiment_release(&exp);
	cr_assert_eq(load("name: n\nvariants:\n  - name: b\n"
			  "    bpf: {program: 'BEGIN {}', probes: [x]}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "e.yaml:4:10: bpf: needs exactly one of program, file or probes, got 2"),
		  "%s", err);
	cr_assert_eq(load("name: n\nvariants:\n  - name: b\n"
			  "    bpf: {file: /nonexistent/x.bt}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "e.yaml:4:17: cannot read the bpftrace program '/nonexistent/x.bt'"),
		  "%s", err);
	cr_assert_eq(load("name: n\nvariants:\n  - name: b\n"
			  "    bpf: {probes: [x]}\n    boot: {qemu: {kernel: debian}}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "one backend block serves a variant"), "%s", err);
}

/* host claims perf: too (backends/perf_tracer.c), a block of its own */
Test(backends, a_perf_block_is_hosts_and_its_mistakes_are_positioned)
{
	static const struct {
		const char *block, *want;
	} bad[] = {
		{ "{}", "e.yaml:4:11: perf: needs exactly one of record or trace, got 0" },
		{ "{record: {}, trace: {}}", "e.yaml:4:11: perf: needs exactly one of record or trace, got 2" },
		{ "{record: {evnets: [x]}}", "e.yaml:4:21: unknown key 'evnets' in record; did you mean 'events'?" },
		{ "{record: {frequency: 0}}", "e.yaml:4:32: 'frequency' must be" },
		{ "{record: {frequency: 99, period: 10}}", "e.yaml:4:44: record: has both frequency and period" },
		{ "{record: {call_graph: lrb}}", "e.yaml:4:33: " },
		{ "{record: {mmap_pages: 100}}", "e.yaml:4:33: 'mmap_pages' must be a power of 2" },
		{ "{trace: {syscalls: false}}", "e.yaml:4:30: trace: needs system calls" },
		{ "{trace: {syscalls: []}}", "e.yaml:4:30: " },
	};
	struct experiment exp;
	char err[1024];

	cr_assert_eq(backend_for_key("perf"), &backend_host);
	cr_assert_eq(load("name: n\nvariants:\n  - {name: base}\n  - name: p\n"
			  "    perf: {record: {events: ['syscalls:sys_enter_getppid'], frequency: 999, "
			  "call_graph: fp, mmap_pages: 64}}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(exp.variants[1].be, &backend_host);
	cr_assert_str_eq(exp.variants[1].cfg_key, "perf");
	experiment_release(&exp);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *y = xasprintf("name: n\nvariants:\n  - name: p\n    perf: %s\n"
				    "workloads:\n  - {name: w, cmd: [\"true\"]}\n", bad[i].block);
		cr_expect_eq(load(y, &exp, err, sizeof(err)), -1, "%s was taken", bad[i].block);
		cr_expect(strstr(err, bad[i].want), "%s: want %s, got %s", bad[i].block, bad[i].want,
			  err);
		free(y);
	}
	/* one backend block a variant: not bpf: and perf: together */
	cr_assert_eq(load("name: n\nvariants:\n  - name: b\n"
			  "    bpf: {probes: [x]}\n    perf: {trace: {}}\n"
			  "workloads:\n  - {name: w, cmd: [\"true\"]}\n", &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "e.yaml:5:5: variant 'b' has both 'bpf' and 'perf'"), "%s", err);
}

/* perf.data records (linux/perf_event.h): samples counted, lost events
 * summed, an incomplete last record left for later */
Test(backends, perf_data_records_are_counted_whole)
{
	unsigned char buf[128] = { 0 };
	struct perf_counts c = { 0 };
	size_t off = 0;
#define REC(type, size) do { \
		uint32_t t_ = (type); uint16_t s_ = (size); \
		memcpy(buf + off, &t_, 4); memcpy(buf + off + 6, &s_, 2); off += (size); \
	} while (0)
	uint64_t lost = 7, lost_samples = 5;
	REC(9, 16);				/* PERF_RECORD_SAMPLE */
	REC(3, 24);				/* PERF_RECORD_COMM: bytes only */
	memcpy(buf + off + 16, &lost, 8);
	REC(2, 24);				/* PERF_RECORD_LOST: id, lost */
	memcpy(buf + off + 8, &lost_samples, 8);
	REC(13, 16);				/* PERF_RECORD_LOST_SAMPLES: lost */
	REC(9, 16);
	size_t whole = off;
	REC(9, 32);				/* only 8 of its 32 bytes written */
#undef REC
	cr_assert_eq(perf_data_scan(buf, whole + 8, &c), whole);
	cr_assert_eq(c.events, 2);
	cr_assert_eq(c.lost, 12);
	cr_assert_eq(c.bytes, (double)whole);
	/* a size below a header's is not a record: nothing past it */
	memset(&c, 0, sizeof(c));
	buf[6] = 4;
	cr_assert_eq(perf_data_scan(buf, whole, &c), 0);
	cr_assert_eq(c.events, 0);
}

/* what a perf: variant accounts is the tracer's, not the workload's: no
 * warnings or summary lines of its own (reports/warnings.c) */
Test(backends, a_perf_variants_accounting_is_not_a_workload_metric)
{
	cr_assert_eq(report_metric_matters("perf_events"), 0);
	cr_assert_eq(report_metric_matters("perf_lost"), 0);
	cr_assert_eq(report_metric_matters("perf_bytes"), 0);
	cr_assert_eq(report_metric_matters("wall"), 1);
}
