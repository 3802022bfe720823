/* experiment.c - lookups in the experiment model (see experiment.h) */
#include "experiment.h"
#include "lib/util.h"
#include "stats/stats.h"

#include <string.h>

const char *const statistic_names[] = { "p0", "p50", "p80", "p99", "mean", NULL };
const char *const order_names[] = { "interleaved", "sequential", "random", "duet", NULL };

const char *statistic_name(enum statistic s)
{
	return (unsigned)s <= STAT_MEAN ? statistic_names[s] : "?";
}

int statistic_parse(const char *name, enum statistic *out)
{
	static const double pct[] = { [STAT_P0] = 0, [STAT_P50] = 50, [STAT_P80] = 80,
				      [STAT_P99] = 99 };
	struct stats_statistic st;

	if (stats_statistic_parse(name, &st))
		return -1;
	if (st.is_mean) {
		*out = STAT_MEAN;
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(pct); k++) {
		if (pct[k] == st.p) {
			*out = (enum statistic)k;
			return 0;
		}
	}
	return -1;
}

const char *order_name(enum run_order o)
{
	return (unsigned)o <= ORDER_DUET ? order_names[o] : "?";
}

int experiment_find_variant(const struct experiment *exp, const char *name)
{
	for (size_t i = 0; i < exp->n_variants; i++)
		if (!strcmp(exp->variants[i].name, name))
			return (int)i;
	return -1;
}

int experiment_find_workload(const struct experiment *exp, const char *name)
{
	for (size_t i = 0; i < exp->n_workloads; i++)
		if (!strcmp(exp->workloads[i].name, name))
			return (int)i;
	return -1;
}

int workload_repetitions(const struct experiment *exp, const struct workload *w)
{
	return w->repetitions > 0 ? w->repetitions : exp->repetitions;
}

double workload_timeout(const struct experiment *exp, const struct workload *w)
{
	return w->timeout_s > 0 ? w->timeout_s : exp->timeout_s;
}
