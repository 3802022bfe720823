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

static int cmp_seq(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The bucket of a row: its (workload, metric, variant), the metric interned. */
static uint64_t row_hash(const struct report_row *r)
{
	uint64_t h = (uint64_t)(uintptr_t)r->metric * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)(uint32_t)r->workload_idx << 32 | (uint32_t)r->variant_idx) *
	     0xc2b2ae3d27d4eb4fULL;
	return h ^ h >> 29;
}

static int same_bucket(const struct report_row *x, const struct report_row *y)
{
	return x->workload_idx == y->workload_idx && x->metric == y->metric &&
	       x->variant_idx == y->variant_idx;
}

static int cmp_rep(const void *a, const void *b, void *ctx)
{
	const struct report_row *rows = ctx;

	return cmp_row(&rows[*(const size_t *)a], &rows[*(const size_t *)b]);
}

/* Rows (tidy formats) by workload (experiment order), metric (as groups),
 * variant (experiment order), seq.  A study has few (workload, metric,
 * variant) buckets and millions of rows: the buckets are sorted, the rows
 * placed by a counting sort (stable, O(n)), and a bucket sorted by seq only
 * where the walk did not give it in seq order (issue 25: a full qsort of
 * 4·10^6 rows was most of `report --format csv`'s time). */
void report_order_rows(struct report_model *m)
{
	size_t n = m->n_rows, cap = 64, nb = 0;
	size_t *slot, *rep, *bucket, *start, *rank;
	struct report_row *out;

	if (n < 2)
		return;
	while (cap < 2 * n && cap < 2 * 65536)
		cap <<= 1;
	slot = xmalloc(cap * sizeof(*slot));
	memset(slot, 0xff, cap * sizeof(*slot));
	rep = xmalloc(cap * sizeof(*rep));
	bucket = xmalloc(n * sizeof(*bucket));
	for (size_t i = 0; i < n; i++) {
		size_t h = row_hash(&m->rows[i]) & (cap - 1);

		while (slot[h] != SIZE_MAX && !same_bucket(&m->rows[rep[slot[h]]], &m->rows[i]))
			h = (h + 1) & (cap - 1);
		if (slot[h] == SIZE_MAX) {
			if (nb + 1 >= cap / 2) {	/* more buckets than the table holds */
				free(slot), free(rep), free(bucket);
				qsort(m->rows, n, sizeof(*m->rows), cmp_row);
				return;
			}
			rep[nb] = i;
			slot[h] = nb++;
		}
		bucket[i] = slot[h];
	}
	/* rep[k] the first row of bucket k; the buckets in report order */
	size_t *order = xmalloc(nb * sizeof(*order));
	for (size_t k = 0; k < nb; k++)
		order[k] = rep[k];
	qsort_r(order, nb, sizeof(*order), cmp_rep, m->rows);
	rank = xcalloc(nb + 1, sizeof(*rank));
	start = xcalloc(nb + 1, sizeof(*start));
	for (size_t k = 0; k < nb; k++)
		rank[bucket[order[k]]] = k;
	for (size_t i = 0; i < n; i++)
		start[rank[bucket[i]] + 1]++;
	for (size_t k = 0; k < nb; k++)
		start[k + 1] += start[k];
	out = xmalloc(n * sizeof(*out));
	{
		size_t *next = xmalloc(nb * sizeof(*next));
		memcpy(next, start, nb * sizeof(*next));
		for (size_t i = 0; i < n; i++)
			out[next[rank[bucket[i]]]++] = m->rows[i];
		free(next);
	}
	for (size_t k = 0; k < nb; k++) {
		struct report_row *b = out + start[k];
		size_t len = start[k + 1] - start[k];

		for (size_t i = 1; i < len; i++)
			if (b[i - 1].seq > b[i].seq) {
				qsort(b, len, sizeof(*b), cmp_seq);
				break;
			}
	}
	free(m->rows);
	m->rows = out;
	m->alloc_rows = n;
	free(slot), free(rep), free(bucket), free(order), free(rank), free(start);
}

