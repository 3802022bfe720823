/*
 * order.c - the order of the model's groups (report_metric_rank: wall,
 * user, sys, maxrss, then by name; workloads in stored order) and of its
 * tidy rows (report_order_groups(), report_order_rows()).
 */
#include "report_int.h"
#include "warnings.h"
#include "fmt.h"
#include "stats/stats.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int report_metric_rank(const char *metric)
{
	static const char *const builtin[] = { "wall", "user", "sys", "maxrss" };
	for (size_t i = 0; i < ARRAY_SIZE(builtin); i++)
		if (!strcmp(metric, builtin[i]))
			return (int)i;
	return (int)ARRAY_SIZE(builtin);
}

struct order_ctx {
	char **workloads;
	size_t n;
};

size_t report_workload_rank(char **workloads, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(workloads[i], w))
			return i;
	return n;
}

static int cmp_group(const void *a, const void *b, void *vctx)
{
	const struct report_group *x = a, *y = b;
	const struct order_ctx *c = vctx;
	size_t wx = report_workload_rank(c->workloads, c->n, x->workload);
	size_t wy = report_workload_rank(c->workloads, c->n, y->workload);
	int mx = report_metric_rank(x->metric), my = report_metric_rank(y->metric);

	if (wx != wy)
		return wx < wy ? -1 : 1;
	if (mx != my)
		return mx - my;
	return strcmp(x->metric, y->metric);
}

/* Groups in the order the report shows them, whatever order the values
 * came in: workloads as in the experiment, then wall, user, sys, maxrss,
 * then the other metrics by name. */
void report_order_groups(struct report_model *m, char **workloads, size_t n)
{
	struct order_ctx c = { .workloads = workloads, .n = n };

	qsort_r(m->groups, m->n_groups, sizeof(*m->groups), cmp_group, &c);
}

/* Two row sets by index (qsort_r's context: the sets): by workload
 * (stored order), metric (as groups), variant (stored order). */
static int cmp_set(const void *a, const void *b, void *ctx)
{
	const struct report_row_set *sets = ctx;
	const struct report_row_set *x = &sets[*(const size_t *)a], *y = &sets[*(const size_t *)b];
	int mx, my, c;

	if (x->workload_idx != y->workload_idx)
		return x->workload_idx < y->workload_idx ? -1 : 1;
	if (x->metric != y->metric) {	/* interned */
		mx = report_metric_rank(x->metric);
		my = report_metric_rank(y->metric);
		if (mx != my)
			return mx - my;
		if ((c = strcmp(x->metric, y->metric)))
			return c;
	}
	if (x->variant_idx != y->variant_idx)
		return x->variant_idx < y->variant_idx ? -1 : 1;
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	int x = ((const struct report_row *)a)->seq, y = ((const struct report_row *)b)->seq;

	return x < y ? -1 : x > y;
}

/* The tidy rows in the tables' order: the row sets that hold rows by
 * workload (experiment order), metric (as groups), variant (experiment
 * order), as an index (m->row_set_order: a study has few sets), and each
 * set's rows by seq, sorted only where the walk did not give them so. */
void report_order_rows(struct report_model *m)
{
	size_t n = 0;

	m->row_set_order = xmalloc((m->n_row_sets ? m->n_row_sets : 1) * sizeof(size_t));
	for (size_t k = 0; k < m->n_row_sets; k++)
		if (m->row_sets[k].n)
			m->row_set_order[n++] = k;
	m->n_row_set_order = n;
	qsort_r(m->row_set_order, n, sizeof(size_t), cmp_set, m->row_sets);
	for (size_t k = 0; k < m->n_row_sets; k++) {
		struct report_row_set *rs = &m->row_sets[k];

		for (size_t i = 1; i < rs->n; i++)
			if (rs->rows[i - 1].seq > rs->rows[i].seq) {
				qsort(rs->rows, rs->n, sizeof(*rs->rows), cmp_seq);
				break;
			}
	}
}
