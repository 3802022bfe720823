/*
 * order: duet (docs/experiment.md): the plan's pairs and CPU swaps, the
 * refusals of what changes the whole system (FILE:LINE:COL), two real
 * runs that overlap in time (each workload waits for the other's file:
 * had they not run together, the first would time out), --resume of a
 * half-stored pair, shards of whole rounds, and the report's "duet".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "engine/config.h"
#include "engine/plan.h"
#include "engine/shard.h"
#include "lib/util.h"

static char *dir, *db;

static void setup(void)
{
	dir = tl_tmpdir();
	db = xasprintf("%s/results/perturb.db", dir);
}

static void teardown(void)
{
	tl_rmtree(dir);
	free(dir);
	free(db);
}

TestSuite(duet, .init = setup, .fini = teardown, .timeout = 120);

static void load(const char *text, struct experiment *exp)
{
	char err[1024], *path = xasprintf("%s/e.yaml", dir);

	tl_write(dir, "e.yaml", text);
	cr_assert_eq(config_load(path, exp, err, sizeof(err)), 0, "%s", err);
	free(path);
}

static const char three[] =
	"name: d\norder: duet\nrepetitions: 4\nwarmup: 1\n"
	"variants: [{name: base}, {name: a, env: {X: 1}}, {name: b, wrap: [env]}]\n"
	"workloads: [{name: w1, cmd: [true]}, {name: w2, cmd: [true], repetitions: 3}]\n";

Test(duet, plan_pairs_the_baseline_with_each_variant_in_turn_and_swaps_cpus)
{
	struct experiment exp;
	struct plan p;
	char err[256];
	int pairs[3][2] = { { 0 } }, last_slot[3][2], base_runs[2] = { 0, 0 };

	load(three, &exp);
	cr_assert_eq(plan_build(&exp, NULL, 7, &p, err, sizeof(err)), 0, "%s", err);
	/* (1 + 4) pairs of w1 and (1 + 3) of w2 for each of a and b */
	cr_assert_eq(p.n, 2 * (2 * 5 + 2 * 4), "%zu", p.n);
	memset(last_slot, -1, sizeof(last_slot));
	for (size_t i = 0; i < p.n; i += 2) {
		const struct plan_entry *b = &p.e[i], *v = &p.e[i + 1];
		cr_assert_eq(b->variant, 0, "entry %zu: the baseline comes first", i);
		cr_assert_neq(v->variant, 0);
		cr_assert_eq(b->workload, v->workload);
		cr_assert_eq(b->round, v->round);
		cr_assert_eq(b->block, b->round, "the round is the block: the report's pairs");
		cr_assert_eq(v->block, b->block);
		cr_assert_eq(b->warmup, v->warmup);
		/* the variants take the rounds in turn: a on even rounds, b on odd */
		cr_assert_eq(v->variant, 1 + v->round % 2, "round %d", v->round);
		pairs[v->variant][v->workload]++;
		base_runs[b->workload]++;
		/* a variant's CPUs swap from one of its pairs to its next */
		int slot = plan_duet_slot(v), *last = &last_slot[v->variant][v->workload];
		if (*last >= 0 && !v->warmup && v->repetition > 0)
			cr_assert_neq(slot, *last, "entry %zu: the CPUs did not swap", i + 1);
		*last = slot;
	}
	cr_assert_eq(pairs[1][0], 5);
	cr_assert_eq(pairs[2][0], 5);
	cr_assert_eq(pairs[1][1], 4);
	cr_assert_eq(pairs[2][1], 4);
	cr_assert_eq(base_runs[0], 10, "the baseline runs once in every pair");
	plan_release(&p);
	experiment_release(&exp);
}

Test(duet, a_shard_is_whole_rounds)
{
	struct experiment exp;
	struct plan p;
	struct store_shard *rows = NULL;
	char err[256];

	load(three, &exp);
	cr_assert_eq(shard_plan_build(&exp, NULL, 7, 2, &p, &rows, err, sizeof(err)), 0, "%s", err);
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(rows[k].seq_lo % 2, 0, "shard %d begins inside a pair", k);
		cr_assert_eq(rows[k].seq_hi % 2, 0, "shard %d ends inside a pair", k);
		if (k)
			cr_assert_neq(p.e[rows[k].seq_lo].round, p.e[rows[k].seq_lo - 1].round,
				      "a round split between shards");
	}
	for (size_t i = 0; i < p.n; i += 2)
		cr_assert(p.e[i].variant == 0 && p.e[i + 1].variant != 0 &&
			  p.e[i].round == p.e[i + 1].round, "entry %zu", i);
	store_shards_free(rows, 2);
	plan_release(&p);
	experiment_release(&exp);
}

/* Each refused key, and where: the key's line and column. */
Test(duet, what_changes_the_system_is_refused_at_its_key)
{
	static const struct {
		const char *variant;	/* the second variant's keys */
		const char *want;
	} cases[] = {
		{ "{name: v, env: {A: 1}, daemon: [sleep, '9']}", "e.yaml:4:28: variant 'v': order: duet" },
		{ "{name: v, background: [yes]}", "e.yaml:4:15: variant 'v'" },
		{ "{name: v, setup: [[true]]}", "e.yaml:4:15: variant 'v'" },
		{ "{name: v, teardown: [[true]]}", "e.yaml:4:15: variant 'v'" },
		{ "{name: v, kernel: {tracer: nop}}", "e.yaml:4:15: variant 'v'" },
		{ "{name: v, bpf: {probes: ['tracepoint:syscalls:sys_enter_getppid']}}",
		  "e.yaml:4:15: variant 'v'" },
		{ "{name: v, boot: {qemu: {kernel: debian}}}", "e.yaml:4:15: variant 'v'" },
	};
	static const char *const keys[] = { "'daemon:'", "'background:'", "'setup:'",
					    "'teardown:'", "'kernel:'", "'bpf:'", "'boot:'" };

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct experiment exp;
		char err[1024], *path = xasprintf("%s/e.yaml", dir);
		char *text = xasprintf("name: d\norder: duet\nvariants:\n  - %s\n  - {name: base}\n"
				       "baseline: base\nworkloads: [{name: w, cmd: [true]}]\n",
				       cases[i].variant);
		tl_write(dir, "e.yaml", text);
		cr_assert_eq(config_load(path, &exp, err, sizeof(err)), -1, "case %zu loaded", i);
		cr_expect(strstr(err, cases[i].want), "case %zu: want '%s' in: %s", i,
			  cases[i].want, err);
		cr_expect(strstr(err, keys[i]), "case %zu: want %s in: %s", i, keys[i], err);
		free(text);
		free(path);
	}
}

Test(duet, counters_and_one_cpu_are_refused_and_the_cli_exits_2)
{
	struct cli_result r;

	tl_write(dir, "e.yaml", "name: d\norder: duet\ncounters: [task-clock]\n"
		 "variants: [{name: base}, {name: v, env: {A: 1}}]\n"
		 "workloads: [{name: w, cmd: [true]}]\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--skip-unavailable", NULL);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "e.yaml:3:1: order: duet runs two processes"), "%s", r.err);
	cli_result_release(&r);

	tl_write(dir, "e.yaml", "name: d\norder: duet\ncpus: [0]\n"
		 "variants: [{name: base}, {name: v, env: {A: 1}}]\n"
		 "workloads: [{name: w, cmd: [true]}]\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "e.yaml:3:7: order: duet runs on two CPUs"), "%s", r.err);
	cli_result_release(&r);
	cr_expect(!tl_exists(db), "a refused study wrote its database");
}

/* perturb limited to one CPU (its affinity, inherited) refuses with the reason. */
Test(duet, a_machine_with_one_cpu_is_refused)
{
	struct cli_result r;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	tl_write(dir, "e.yaml", "name: d\norder: duet\n"
		 "variants: [{name: base}, {name: v, env: {A: 1}}]\n"
		 "workloads: [{name: w, cmd: [true]}]\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--dry-run", NULL);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "two CPUs, and perturb may run on 1"), "%s", r.err);
	cli_result_release(&r);
}

static void need_two_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2)
		cr_skip_test("order: duet needs two CPUs, and this test may run on fewer");
}

/*
 * The workload of run n of each side touches SIDE.n and waits (a loop,
 * bounded by the run's timeout) until the other side's n exists: the two
 * sides of a pair can only both succeed when they ran at the same time.
 */
static const char meet[] =
	"name: d\norder: duet\nwarmup: 0\nrepetitions: 4\ntimeout: 20s\n"
	"variants:\n"
	"  - {name: base, env: {ME: b, OTHER: v}}\n"
	"  - {name: v, env: {ME: v, OTHER: b}}\n"
	"workloads:\n"
	"  - name: meet\n"
	"    shell: 'n=$(($(cat $ME.n 2>/dev/null || echo 0) + 1)); echo $n > $ME.n; "
	"touch $ME.$n; while [ ! -e $OTHER.$n ]; do :; done'\n";

Test(duet, the_two_runs_of_a_pair_overlap_in_time_on_two_cpus)
{
	struct cli_result r;

	need_two_cpus();
	tl_write(dir, "e.yaml", meet);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 8);
	/* within each pair: the later start before the earlier end, two CPUs */
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results a JOIN results b"
				 " ON b.seq = a.seq + 1 WHERE a.seq % 2 = 0"
				 " AND max(a.start_mono, b.start_mono) <"
				 "     min(a.start_mono + a.wall_s, b.start_mono + b.wall_s)"
				 " AND a.cpu IS NOT NULL AND a.cpu <> b.cpu"), 4);
	/* the baseline swaps CPUs from one pair to the next */
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results a JOIN results b"
				 " ON b.seq = a.seq + 2 WHERE a.seq % 2 = 0 AND a.cpu <> b.cpu"), 3);
}

Test(duet, resume_runs_a_half_stored_pair_again_and_stores_the_missing_run)
{
	struct cli_result r;
	char *before;

	need_two_cpus();
	tl_write(dir, "e.yaml", meet);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	before = cli_sql_text(db, "SELECT start_mono FROM results WHERE seq = 4");
	cli_sql_exec(db, "DELETE FROM metric_values WHERE seq = 5; DELETE FROM results WHERE seq = 5;"
		     "UPDATE runs SET status = 'interrupted', ended = NULL");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 8);
	char *after = cli_sql_text(db, "SELECT start_mono FROM results WHERE seq = 4");
	cr_expect_str_eq(after, before, "the stored side of the pair was replaced");
	free(before);
	free(after);
}

Test(duet, the_report_names_duet_as_the_analysis_and_dry_run_prints_cpus)
{
	struct cli_result r;

	need_two_cpus();
	cli_run(dir, &r, "run", "--order", "duet", "-n", "6", "--warmup", "0", "--db", db,
		"--dry-run", "true", "env true", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "order: duet"), "%s", r.out);
	cr_expect(strstr(r.out, "order duet"), "%s", r.out);
	cr_expect_eq(tl_count_str(r.out, "  cpu "), 12, "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "run", "--order", "duet", "-n", "6", "--warmup", "0", "--db", db,
		"-q", "true", "env true", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "duet: the dilation intervals come from the duet pairs"), "%s",
		  r.out);
	cr_expect(strstr(r.out, "by duet: paired percentile bootstrap"), "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, "--format", "json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"analysis\":\"duet\""), "%s", r.out);
	cr_expect(!strstr(r.out, "\"analysis\":\"paired\""), "%s", r.out);
	tl_check_report_schema(r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "run", "--order", "abba", "true", "env true", NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--order 'abba'"), "%s", r.err);
	cli_result_release(&r);
}
