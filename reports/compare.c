/* compare.c - two stored runs side by side; see compare.h */
#include "compare.h"
#include "fmt.h"
#include "lib/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct compare_row *find_row(struct compare *t, const struct stored_value *v, int create)
{
	struct compare_row *c;

	if (t->last < t->n_rows) {
		c = &t->rows[t->last];
		if (!strcmp(c->metric, v->metric) && !strcmp(c->variant, v->variant) &&
		    !strcmp(c->workload, v->workload))
			return c;
	}
	for (size_t i = 0; i < t->n_rows; i++) {
		c = &t->rows[i];
		if (!strcmp(c->metric, v->metric) && !strcmp(c->variant, v->variant) &&
		    !strcmp(c->workload, v->workload)) {
			t->last = i;
			return c;
		}
	}
	if (!create)
		return NULL;
	ALLOC_GROW(t->rows, t->n_rows + 1, t->alloc_rows);
	c = &t->rows[t->n_rows];
	memset(c, 0, sizeof(*c));
	c->workload = xstrdup(v->workload);
	c->variant = xstrdup(v->variant);
	c->metric = xstrdup(v->metric);
	c->unit = xstrdup(v->unit ? v->unit : "");
	t->last = t->n_rows++;
	return c;
}

static int collect(const struct stored_value *v, void *ctx)
{
	struct compare *t = ctx;
	struct compare_row *c = NULL;
	int s = t->side;

	if (t->n_metrics) {
		size_t k;
		for (k = 0; k < t->n_metrics && strcmp(t->metrics[k], v->metric); k++)
			;
		if (k == t->n_metrics)
			return 0;
	}
	c = find_row(t, v, s == 0);
	if (!c || !isfinite(v->value))
		return 0;
	ALLOC_GROW(c->v[s], c->n[s] + 1, c->alloc[s]);
	c->v[s][c->n[s]++] = v->value;
	return 0;
}

/* Rows in the order workload, variant, metric (by name): stable output. */
static int cmp_row(const void *a, const void *b)
{
	const struct compare_row *x = a, *y = b;
	int c = strcmp(x->workload, y->workload);
	if (!c)
		c = strcmp(x->variant, y->variant);
	return c ? c : strcmp(x->metric, y->metric);
}

/* FNV-1a of the row's names: the bootstrap seed. */
static uint64_t row_seed(const struct compare_row *c)
{
	const char *parts[] = { c->workload, c->variant, c->metric };
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		for (const char *p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL;
	}
	return h;
}

static void compute(struct compare_row *c, double conf)
{
	struct boot_opts bo = { .conf = conf, .seed = row_seed(c) };
	double *sa = stats_sorted_copy(c->v[0], c->n[0]);
	double *sb = stats_sorted_copy(c->v[1], c->n[1]);

	c->median[0] = stats_quantile_sorted(sa, c->n[0], 0.5);
	c->median[1] = stats_quantile_sorted(sb, c->n[1], 0.5);
	free(sa);
	free(sb);
	if (stats_dilation(c->v[0], c->n[0], c->v[1], c->n[1], STATK_QUANTILE, 0.5, &bo,
			   &c->d) < 0)
		c->d.pct = NAN;	/* d is zeroed: no interval */
	if (stats_mann_whitney(c->v[0], c->n[0], c->v[1], c->n[1], &c->mw) < 0)
		c->mw.valid = 0;
	c->significant = c->mw.valid && c->mw.p < 1 - conf;
}

int compare_build(struct compare *c, struct store *a, int64_t ida, struct store *b, int64_t idb)
{
	if (!c->confidence)
		c->confidence = 0.95;
	c->id[0] = ida;
	c->id[1] = idb;
	if (store_run_provenance(a, ida, c->prov[0]) < 0 ||
	    store_run_provenance(b, idb, c->prov[1]) < 0)
		return -1;
	c->side = 0;
	c->last = 0;
	if (store_each_value(a, ida, 0, 0, collect, c) < 0)
		return -1;
	c->side = 1;
	c->last = 0;
	if (store_each_value(b, idb, 0, 0, collect, c) < 0)
		return -1;
	if (c->n_rows)
		qsort(c->rows, c->n_rows, sizeof(*c->rows), cmp_row);
	for (size_t i = 0; i < c->n_rows; i++) {
		if (!c->rows[i].n[0] || !c->rows[i].n[1])
			continue;
		compute(&c->rows[i], c->confidence);
		c->n_common++;
	}
	return 0;
}

static void print_provenance(const struct compare *c, FILE *out)
{
	int any = 0;

	for (size_t i = 0; i < STORE_N_PROVENANCE; i++) {
		const char *x = c->prov[0][i] ? c->prov[0][i] : "(unknown)";
		const char *y = c->prov[1][i] ? c->prov[1][i] : "(unknown)";
		if (!strcmp(x, y))
			continue;
		if (!any)
			fprintf(out, "provenance differs between run %" PRId64 " (A) and run %" PRId64
				" (B):\n", c->id[0], c->id[1]);
		any = 1;
		char *xs = fmt_text_dup(x), *ys = fmt_text_dup(y);
		fprintf(out, "  %-16s A: %s\n  %-16s B: %s\n", store_provenance_keys[i], xs, "", ys);
		free(xs);
		free(ys);
	}
	if (any)
		fprintf(out, "\n");
}

void compare_print(const struct compare *c, FILE *out)
{
	double conf = c->confidence;

	print_provenance(c, out);
	fprintf(out, "%-16s %-16s %-12s %12s %12s %9s  %-22s %7s\n", "WORKLOAD", "VARIANT",
		"METRIC", "MEDIAN A", "MEDIAN B", "CHANGE", "INTERVAL", "P");
	for (size_t i = 0; i < c->n_rows; i++) {
		const struct compare_row *r = &c->rows[i];
		char change[32], iv[64], p[16];

		if (!r->n[0] || !r->n[1])
			continue;
		if (!isfinite(r->d.pct))
			snprintf(change, sizeof(change), "n/a");
		else if (!r->significant)
			snprintf(change, sizeof(change), "~");
		else
			snprintf(change, sizeof(change), "%+.2f%%", r->d.pct);
		if (r->d.ci_pct.has_ci)
			snprintf(iv, sizeof(iv), "[%+.2f%%, %+.2f%%]", r->d.ci_pct.lo, r->d.ci_pct.hi);
		else
			snprintf(iv, sizeof(iv), "(no interval)");
		if (r->mw.valid)
			snprintf(p, sizeof(p), "p=%.3f", r->mw.p);
		else
			snprintf(p, sizeof(p), "n/a");
		char *w = fmt_text_dup(r->workload), *v = fmt_text_dup(r->variant);
		char *m = fmt_text_dup(r->metric);
		fprintf(out, "%-16s %-16s %-12s %12.6g %12.6g %9s  %-22s %7s  (n=%zu+%zu)\n",
			w, v, m, r->median[0], r->median[1], change, iv, p, r->n[0], r->n[1]);
		free(w);
		free(v);
		free(m);
	}
	fprintf(out, "\n~: the change is not significant (Mann-Whitney U, p >= %.3g); intervals: "
		"%g%% bootstrap CI of the change of the median\n", 1 - conf, 100 * conf);
}

void compare_release(struct compare *c)
{
	for (size_t i = 0; i < c->n_rows; i++) {
		free(c->rows[i].workload);
		free(c->rows[i].variant);
		free(c->rows[i].metric);
		free(c->rows[i].unit);
		free(c->rows[i].v[0]);
		free(c->rows[i].v[1]);
	}
	free(c->rows);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < STORE_N_PROVENANCE; i++)
			free(c->prov[k][i]);
}
