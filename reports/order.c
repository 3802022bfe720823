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

static int cmp_row(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
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
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Two rows by index (qsort_r's context: the rows), by cmp_row() or by seq. */
static int cmp_index(const void *a, const void *b, void *ctx)
{
	const struct report_row *rows = ctx;

	return cmp_row(&rows[*(const size_t *)a], &rows[*(const size_t *)b]);
}

static int cmp_index_seq(const void *a, const void *b, void *ctx)
{
	const struct report_row *rows = ctx;
	int x = rows[*(const size_t *)a].seq, y = rows[*(const size_t *)b].seq;

	return x < y ? -1 : x > y;
}

/* Rows (tidy formats) by workload (experiment order), metric (as groups),
 * variant (experiment order), seq, as an index: m->row_order.  A study has
 * few (workload, metric, variant) buckets and millions of rows: the buckets
 * (numbered by the walk, report_row's bucket) are sorted, the rows placed
 * by a counting sort (stable, O(n)), and a
 * bucket sorted by seq only where the walk did not give it in seq order
 * (issue 25: a full qsort of 4·10^6 rows was most of `report --format
 * csv`'s time; then moving the rows, 320 MB, was a tenth of it). */
void report_order_rows(struct report_model *m)
{
	size_t n = m->n_rows, nb = 0, *out;
	size_t *rep, *order, *start, *next;
	unsigned max = 0;

	m->row_order = out = xmalloc((n ? n : 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		max = m->rows[i].bucket > max ? m->rows[i].bucket : max;
	if (n < 2 || max >= 2 * n) {	/* one row, or buckets sparser than rows */
		for (size_t i = 0; i < n; i++)
			out[i] = i;
		if (n > 1)
			qsort_r(out, n, sizeof(*out), cmp_index, m->rows);
		return;
	}
	/* rep[k]: the first row of bucket k; start[k]: how many rows before it
	 * in report order (first its own count) */
	rep = xmalloc(((size_t)max + 1) * sizeof(*rep));
	memset(rep, 0xff, ((size_t)max + 1) * sizeof(*rep));
	start = xcalloc((size_t)max + 1, sizeof(*start));
	for (size_t i = 0; i < n; i++) {
		unsigned k = m->rows[i].bucket;

		if (rep[k] == SIZE_MAX)
			rep[k] = i;
		start[k]++;
	}
	order = xmalloc(((size_t)max + 1) * sizeof(*order));
	for (size_t k = 0; k <= max; k++)
		if (rep[k] != SIZE_MAX)
			order[nb++] = rep[k];
	qsort_r(order, nb, sizeof(*order), cmp_index, m->rows);
	next = xmalloc(((size_t)max + 1) * sizeof(*next));
	for (size_t j = 0, sum = 0; j < nb; j++) {
		unsigned k = m->rows[order[j]].bucket;

		next[k] = sum;
		sum += start[k];
	}
	for (size_t i = 0; i < n; i++)
		out[next[m->rows[i].bucket]++] = i;
	/* next[k] is now the end of bucket k */
	for (size_t j = 0; j < nb; j++) {
		unsigned k = m->rows[order[j]].bucket;
		size_t *b = out + next[k] - start[k], len = start[k];

		for (size_t i = 1; i < len; i++)
			if (m->rows[b[i - 1]].seq > m->rows[b[i]].seq) {
				qsort_r(b, len, sizeof(*b), cmp_index_seq, m->rows);
				break;
			}
	}
	free(rep), free(order), free(start), free(next);
}
