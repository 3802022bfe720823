/*
 * test_statistic.c - statistic names: the one grammar (stats/stats.h) and
 * the gate's statistics within it (engine/config.h).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/config.h"
#include "stats/stats.h"

Test(statistic, grammar)
{
	static const struct {
		const char *s;
		int mean;
		double p;
	} ok[] = {
		{ "mean", 1, 0 }, { "median", 0, 50 }, { "p50", 0, 50 }, { "p0", 0, 0 },
		{ "p80", 0, 80 }, { "p99", 0, 99 }, { "p99.9", 0, 99.9 }, { "p100", 0, 100 },
		{ "p050", 0, 50 }, { "p12.50", 0, 12.5 },
	};
	static const char *const bad[] = {
		"", "p", "Mean", "MEDIAN", "avg", "p-1", "p+5", "p100.1", "p101", "p1e1",
		"p 50", "p50 ", "p.5", "p5.", "pnan", "pinf", "p0x10", "50", "q50",
	};
	struct stats_statistic st;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		st.is_mean = -1;
		st.p = -1;
		cr_expect_eq(stats_statistic_parse(ok[i].s, &st), 0, "'%s' rejected", ok[i].s);
		cr_expect_eq(st.is_mean, ok[i].mean, "'%s'", ok[i].s);
		cr_expect_eq(st.p, ok[i].p, "'%s' gave %g", ok[i].s, st.p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		st.is_mean = -1;
		cr_expect_eq(stats_statistic_parse(bad[i], &st), -1, "'%s' accepted", bad[i]);
		cr_expect_eq(st.is_mean, -1, "'%s' touched the output", bad[i]);
	}
	cr_expect_eq(stats_statistic_parse(NULL, &st), -1);
}

Test(statistic, gate_subset)
{
	static const struct {
		const char *s;
		enum statistic st;
	} ok[] = {
		{ "p0", STAT_P0 }, { "p50", STAT_P50 }, { "median", STAT_P50 }, { "p50.0", STAT_P50 },
		{ "p80", STAT_P80 }, { "p99", STAT_P99 }, { "mean", STAT_MEAN },
	};
	static const char *const bad[] = { "p90", "p99.9", "p100", "avg", "" };
	enum statistic st;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		st = (enum statistic)-1;
		cr_expect_eq(statistic_parse(ok[i].s, &st), 0, "'%s' rejected", ok[i].s);
		cr_expect_eq(st, ok[i].st, "'%s'", ok[i].s);
		cr_expect_str_eq(statistic_name(st), strcmp(ok[i].s, "median") &&
				 strcmp(ok[i].s, "p50.0") ? ok[i].s : "p50");
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(statistic_parse(bad[i], &st), -1, "'%s' accepted", bad[i]);
}
