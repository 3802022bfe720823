/* compare.c - stored runs side by side; see compare.h */
#include "compare.h"
#include "fmt.h"
#include "report.h"
#include "lib/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* s (NULL: "?") as text, escaped (fmt.h), padded to width (negative: on the
 * left): names come from a database, which may hold anything. */
static void put(FILE *out, int width, const char *s)
{
	char *e = fmt_text_dup(s ? s : "?");
	fprintf(out, "%*s", width, e);
	free(e);
}

static int same_row(const struct compare_row *c, const struct stored_value *v)
{
	return !strcmp(c->metric, v->metric) && !strcmp(c->variant, v->variant) &&
	       !strcmp(c->workload, v->workload);
}

static struct compare_row *find_row(struct compare *t, const struct stored_value *v)
{
	struct compare_row *c;

	if (t->last < t->n_rows && same_row(&t->rows[t->last], v))
		return &t->rows[t->last];
	for (size_t i = 0; i < t->n_rows; i++)
		if (same_row(&t->rows[i], v)) {
			t->last = i;
			return &t->rows[i];
		}
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
	struct compare_row *c;
	int s = t->side;

	if (t->n_metrics) {
		size_t k;
		for (k = 0; k < t->n_metrics && strcmp(t->metrics[k], v->metric); k++)
			;
		if (k == t->n_metrics)
			return 0;
	}
	if (!isfinite(v->value))
		return 0;
	c = find_row(t, v);
	ALLOC_GROW(c->v[s], c->n[s] + 1, c->alloc[s]);
	c->v[s][c->n[s]++] = v->value;
	return 0;
}

/* Rows by metric (wall, user, sys, maxrss, then by name), workload,
 * variant: stable output, one table per metric. */
static int cmp_row(const void *a, const void *b)
{
	const struct compare_row *x = a, *y = b;
	int c = report_metric_rank(x->metric) - report_metric_rank(y->metric);
	if (!c)
		c = strcmp(x->metric, y->metric);
	if (!c)
		c = strcmp(x->workload, y->workload);
	return c ? c : strcmp(x->variant, y->variant);
}

/* FNV-1a of the row's names and the run: the bootstrap seed. */
static uint64_t row_seed(const struct compare_row *c, size_t k, int dil)
{
	const char *parts[] = { c->workload, c->variant, c->metric };
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		for (const char *p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL;
	}
	return h ^ ((uint64_t)k << 1 | (uint64_t)dil);
}

static const struct compare_row *find_base(const struct compare *c, const struct compare_row *r,
					   size_t k)
{
	const char *b = c->runs[k].h.baseline;

	if (!b || !strcmp(r->variant, b))
		return NULL;
	for (size_t i = 0; i < c->n_rows; i++) {
		const struct compare_row *x = &c->rows[i];
		if (x->n[k] && !strcmp(x->variant, b) && !strcmp(x->workload, r->workload) &&
		    !strcmp(x->metric, r->metric))
			return x;
	}
	return NULL;
}

static void describe(struct compare *c, struct compare_row *r)
{
	for (size_t k = 0; k < c->n_runs; k++) {
		double *s;
		struct interval iv;

		r->median[k] = r->spread[k] = r->dil[k] = NAN;
		r->change[k] = r->dil_change[k] = NAN;
		if (!r->n[k])
			continue;
		s = xmalloc(r->n[k] * sizeof(*s));
		memcpy(s, r->v[k], r->n[k] * sizeof(*s));
		stats_sort(s, r->n[k]);
		r->median[k] = stats_quantile_sorted(s, r->n[k], 0.5);
		r->sign[k] = stats_one_signed(s, r->n[k], STATK_QUANTILE, 0.5, c->confidence,
					      &iv.lo, &iv.hi);
		if (stats_quantile_ci(s, r->n[k], 0.5, c->confidence, &iv) == 0 && iv.has_ci &&
		    r->sign[k])
			r->spread[k] = 100 * (iv.hi - iv.lo) / 2 / fabs(r->median[k]);
		free(s);
	}
}

static void dilations(struct compare *c, struct compare_row *r)
{
	for (size_t k = 0; k < c->n_runs; k++) {
		const struct compare_row *b = r->n[k] ? find_base(c, r, k) : NULL;
		r->base[k] = b;
		if (b && b->sign[k])
			r->dil[k] = 100 * (r->median[k] - b->median[k]) / fabs(b->median[k]);
	}
	r->no_pct = r->n[0] && !r->sign[0];
	for (size_t k = 1; k < c->n_runs; k++) {
		r->has_change[k] = r->n[0] && r->n[k];
		r->diff[k] = r->has_change[k] ? r->median[k] - r->median[0] : NAN;
		if (r->has_change[k] && !r->no_pct)
			r->change[k] = 100 * (r->median[k] - r->median[0]) / fabs(r->median[0]);
		/* a ratio's change between a baseline above 0 and one below is
		 * no difference of percentages */
		r->has_dil_change[k] = isfinite(r->dil[0]) && isfinite(r->dil[k]) &&
				       r->base[0]->sign[0] == r->base[k]->sign[k];
		if (r->has_dil_change[k])
			r->dil_change[k] = r->dil[k] - r->dil[0];
	}
}

/* One hypothesis of the family: row, run, raw (0) or dilation (1) change. */
struct hyp {
	struct compare_row *r;
	size_t k;
	int dil;
};

struct fam {
	const struct compare *c;
	const struct hyp *h;
};

/* decide_holm's interval of hypothesis i at level. */
static int interval_at(void *vctx, size_t i, double level, double *lo, double *hi)
{
	const struct fam *f = vctx;
	const struct hyp *h = &f->h[i];
	const struct compare_row *r = h->r;
	struct boot_opts bo = { .conf = level, .seed = row_seed(r, h->k, h->dil) };

	if (h->dil) {
		const struct compare_row *b0 = r->base[0], *bk = r->base[h->k];
		const double *x[4] = { b0->v[0], r->v[0], bk->v[h->k], r->v[h->k] };
		const size_t n[4] = { b0->n[0], r->n[0], bk->n[h->k], r->n[h->k] };
		struct interval iv;
		double est;

		if (stats_dilation_change(x, n, STATK_QUANTILE, 0.5, &bo, &est, &iv) < 0 ||
		    !iv.has_ci)
			return 0;
		/* both baselines below 0: a ratio's sign flipped (decide.h) */
		*lo = b0->sign[0] < 0 ? -iv.hi : iv.lo;
		*hi = b0->sign[0] < 0 ? -iv.lo : iv.hi;
		return 1;
	}
	struct dilation d;
	if (stats_dilation(r->v[0], r->n[0], r->v[h->k], r->n[h->k], STATK_QUANTILE, 0.5, &bo,
			   &d) < 0 || decide_pct_guard(&d, r->sign[0]) || !d.ci_pct.has_ci)
		return 0;
	*lo = d.ci_pct.lo;
	*hi = d.ci_pct.hi;
	return 1;
}

/* The hypotheses of the family: every raw change (and, with dil, every
 * dilation change) of every row and run.  malloc'd; *n their number. */
static struct hyp *family(const struct compare *c, int dil, size_t *n)
{
	struct hyp *h = xcalloc(2 * c->n_rows * c->n_runs + 1, sizeof(*h));

	*n = 0;
	for (size_t i = 0; i < c->n_rows; i++)
		for (size_t k = 1; k < c->n_runs; k++) {
			if (c->rows[i].has_change[k])
				h[(*n)++] = (struct hyp){ &c->rows[i], k, 0 };
			if (dil && c->rows[i].has_dil_change[k])
				h[(*n)++] = (struct hyp){ &c->rows[i], k, 1 };
		}
	return h;
}

static int decide(struct compare *c)
{
	size_t n;
	struct hyp *h = family(c, 1, &n);
	struct decide_item *items = xcalloc(n + 1, sizeof(*items));
	struct fam f = { .c = c, .h = h };
	int ret;

	for (size_t i = 0; i < n; i++) {
		items[i].t = 0;
		items[i].alpha = 1 - c->confidence;
	}
	ret = decide_holm(items, n, interval_at, &f);
	for (size_t i = 0; i < n; i++)
		if (h[i].dil)
			h[i].r->dil_dec[h[i].k] = items[i];
		else
			h[i].r->dec[h[i].k] = items[i];
	c->n_family = n;
	free(items);
	free(h);
	return ret;
}

long compare_regressions(const struct compare *c, double t, struct decide_item *dec)
{
	size_t n;
	struct hyp *h = family(c, 0, &n);
	struct decide_item *items = xcalloc(n + 1, sizeof(*items));
	struct fam f = { .c = c, .h = h };
	long count = 0;

	for (size_t i = 0; i < c->n_rows * c->n_runs; i++)
		dec[i] = (struct decide_item){ .verdict = DECIDE_UNDECIDED, .lo = NAN, .hi = NAN };
	for (size_t i = 0; i < n; i++) {
		items[i].t = t;
		items[i].alpha = 1 - c->confidence;
	}
	if (decide_holm(items, n, interval_at, &f) < 0) {
		count = -1;
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t row = (size_t)(h[i].r - c->rows);
			dec[row * c->n_runs + h[i].k] = items[i];
			count += items[i].verdict == DECIDE_ABOVE;
		}
	}
	free(items);
	free(h);
	return count;
}

int compare_build(struct compare *c)
{
	if (!c->confidence)
		c->confidence = 0.95;
	for (size_t k = 0; k < c->n_runs; k++) {
		struct compare_run *r = &c->runs[k];
		if (store_run_header(r->st, r->id, &r->h) < 0 ||
		    store_run_provenance(r->st, r->id, r->prov) < 0)
			return -1;
		c->side = (int)k;
		c->last = 0;
		if (store_each_value(r->st, r->id, 0, 0, collect, c) < 0)
			return -1;
	}
	if (c->n_rows)
		qsort(c->rows, c->n_rows, sizeof(*c->rows), cmp_row);
	for (size_t i = 0; i < c->n_rows; i++) {
		size_t have = 0;
		describe(c, &c->rows[i]);
		for (size_t k = 0; k < c->n_runs; k++)
			have += c->rows[i].n[k] > 0;
		c->n_common += have == c->n_runs;
	}
	for (size_t i = 0; i < c->n_rows; i++)
		dilations(c, &c->rows[i]);
	return decide(c);
}

/* ---- output ---- */

static char run_letter(size_t k)
{
	return (char)('A' + k);
}

static void print_provenance(const struct compare *c, FILE *out)
{
	int any = 0;

	for (size_t i = 0; i < STORE_N_PROVENANCE; i++) {
		const char *x = c->runs[0].prov[i] ? c->runs[0].prov[i] : "(unknown)";
		int differs = 0;
		for (size_t k = 1; k < c->n_runs; k++) {
			const char *y = c->runs[k].prov[i] ? c->runs[k].prov[i] : "(unknown)";
			differs |= strcmp(x, y) != 0;
		}
		if (!differs)
			continue;
		if (!any)
			fprintf(out, "provenance differs between the runs:\n");
		any = 1;
		for (size_t k = 0; k < c->n_runs; k++) {
			char *v = fmt_text_dup(c->runs[k].prov[i] ? c->runs[k].prov[i] : "(unknown)");
			fprintf(out, "  %-16s %c: %s\n", k ? "" : store_provenance_keys[i],
				run_letter(k), v);
			free(v);
		}
	}
	if (any)
		fprintf(out, "\n");
}

static void print_experiments(const struct compare *c, FILE *out)
{
	const char *x = c->runs[0].h.sha256 ? c->runs[0].h.sha256 : "";
	int differs = 0;

	for (size_t k = 1; k < c->n_runs; k++)
		differs |= strcmp(x, c->runs[k].h.sha256 ? c->runs[k].h.sha256 : "") != 0;
	if (!differs)
		return;
	fprintf(out, "the experiments differ (their texts' sha256):\n");
	for (size_t k = 0; k < c->n_runs; k++) {
		const struct run_header *h = &c->runs[k].h;
		fprintf(out, "  %c: run %" PRId64 ", ", run_letter(k), h->id);
		fputc('\'', out);
		put(out, 0, h->experiment);
		fputs("' (", out);
		put(out, 0, h->path);
		fprintf(out, "), sha256 %.12s, baseline ", h->sha256 ? h->sha256 : "?");
		put(out, 0, h->baseline);
		fputc('\n', out);
	}
	fprintf(out, "\n");
}

/* Every name (what: 0 workload, 1 variant, 2 metric) that only some runs
 * have. */
static void print_one_sided(const struct compare *c, FILE *out)
{
	static const char *const what[] = { "workload", "variant", "metric" };
	int any = 0;

	for (int w = 0; w < 3; w++)
		for (size_t i = 0; i < c->n_rows; i++) {
			const struct compare_row *r = &c->rows[i];
			const char *name = w == 0 ? r->workload : w == 1 ? r->variant : r->metric;
			unsigned have = 0, seen = 0;
			for (size_t j = 0; j < c->n_rows; j++) {
				const struct compare_row *x = &c->rows[j];
				const char *xn = w == 0 ? x->workload : w == 1 ? x->variant : x->metric;
				if (strcmp(name, xn))
					continue;
				if (j < i) {
					seen = 1;	/* said at its first row */
					break;
				}
				for (size_t k = 0; k < c->n_runs; k++)
					if (x->n[k])
						have |= 1u << k;
			}
			if (seen || have == (1u << c->n_runs) - 1)
				continue;
			if (!any)
				fprintf(out, "only in some runs:\n");
			any = 1;
			fprintf(out, "  %s ", what[w]);
			fputc('\'', out);
			put(out, 0, name);
			fputs("': only in", out);
			for (size_t k = 0; k < c->n_runs; k++)
				if (have >> k & 1)
					fprintf(out, " %c", run_letter(k));
			fprintf(out, "\n");
		}
	if (any)
		fprintf(out, "\n");
}

/* "+2.03% [+1.28, +2.70]" or "~ [-0.5, +0.9]": the verdict of the interval. */
static void change_cell(char *buf, size_t len, int has, double est,
			const struct decide_item *d, const char *unit)
{
	if (!has || !isfinite(est))
		snprintf(buf, len, "n/a");
	else if (!d->has_ci)
		snprintf(buf, len, "%s (no interval)", "~");
	else if (d->verdict == DECIDE_UNDECIDED)
		snprintf(buf, len, "~ [%+.2f, %+.2f]", d->lo, d->hi);
	else
		snprintf(buf, len, "%+.2f%s [%+.2f, %+.2f]", est, unit, d->lo, d->hi);
}

static void print_table(const struct compare *c, size_t from, size_t to, FILE *out)
{
	const struct compare_row *first = &c->rows[from];
	/* geomean of column k over the rows k and A both have (all > 0) */
	double lg[COMPARE_MAX_RUNS] = { 0 }, lr[COMPARE_MAX_RUNS] = { 0 };
	size_t ng[COMPARE_MAX_RUNS] = { 0 }, any_g = 0;
	int any_dil = 0;

	put(out, 0, first->metric);
	if (*first->unit) {
		fputs(" (", out);
		put(out, 0, first->unit);
		fputc(')', out);
	}
	fputc('\n', out);
	fprintf(out, "  %-14s %-14s", "WORKLOAD", "VARIANT");
	for (size_t k = 0; k < c->n_runs; k++)
		fprintf(out, " %11s%c %5s", "median ", run_letter(k), "±");
	for (size_t k = 1; k < c->n_runs; k++)
		fprintf(out, "  %c vs A %-19s", run_letter(k), "");
	fprintf(out, " n\n");
	for (size_t i = from; i < to; i++) {
		const struct compare_row *r = &c->rows[i];

		fputs("  ", out);
		put(out, -14, r->workload);
		fputc(' ', out);
		put(out, -14, r->variant);
		for (size_t k = 0; k < c->n_runs; k++) {
			char sp[16];
			if (!r->n[k]) {
				fprintf(out, " %12s %5s", "-", "");
				continue;
			}
			if (isfinite(r->spread[k]))
				snprintf(sp, sizeof(sp), "±%.0f%%", r->spread[k]);
			else
				snprintf(sp, sizeof(sp), "±?");
			fprintf(out, " %12.6g %5s", r->median[k], sp);
		}
		for (size_t k = 1; k < c->n_runs; k++) {
			char cell[64];
			if (r->no_pct && r->has_change[k])	/* no percentage: in the unit */
				snprintf(cell, sizeof(cell), "%+.4g (no %%)", r->diff[k]);
			else
				change_cell(cell, sizeof(cell), r->has_change[k], r->change[k],
					    &r->dec[k], "%");
			fprintf(out, "  %-25s", cell);
		}
		for (size_t k = 0; k < c->n_runs; k++)
			fprintf(out, "%s%zu", k ? "+" : " ", r->n[k]);
		fprintf(out, "\n");
		for (size_t k = 0; k < c->n_runs; k++) {
			any_dil |= isfinite(r->dil[k]);
			if (!(r->n[0] && r->n[k] && r->median[0] > 0 && r->median[k] > 0))
				continue;
			lg[k] += log(r->median[k]);
			lr[k] += log(r->median[k] / r->median[0]);
			ng[k]++;
			any_g += k > 0;
		}
	}
	if (any_g) {
		char cell[64];
		fprintf(out, "  %-29s", "geomean");
		for (size_t k = 0; k < c->n_runs; k++)
			if (ng[k])
				fprintf(out, " %12.6g %5s", exp(lg[k] / (double)ng[k]), "");
			else
				fprintf(out, " %12s %5s", "", "");
		for (size_t k = 1; k < c->n_runs; k++) {
			if (ng[k])
				snprintf(cell, sizeof(cell), "%+.2f%% (%zu rows)",
					 100 * (exp(lr[k] / (double)ng[k]) - 1), ng[k]);
			else
				snprintf(cell, sizeof(cell), "-");
			fprintf(out, "  %-25s", cell);
		}
		fprintf(out, "\n");
	}
	if (!any_dil)
		return;
	fprintf(out, "  dilation against each run's own baseline (median, %%)\n");
	fprintf(out, "  %-14s %-14s", "WORKLOAD", "VARIANT");
	for (size_t k = 0; k < c->n_runs; k++)
		fprintf(out, " %9c", run_letter(k));
	for (size_t k = 1; k < c->n_runs; k++)
		fprintf(out, "  %c - A (points)%-11s", run_letter(k), "");
	fprintf(out, "\n");
	for (size_t i = from; i < to; i++) {
		const struct compare_row *r = &c->rows[i];
		int any = 0;
		for (size_t k = 0; k < c->n_runs; k++)
			any |= isfinite(r->dil[k]);
		if (!any)
			continue;
		fputs("  ", out);
		put(out, -14, r->workload);
		fputc(' ', out);
		put(out, -14, r->variant);
		for (size_t k = 0; k < c->n_runs; k++)
			if (isfinite(r->dil[k]))
				fprintf(out, " %+9.2f", r->dil[k]);
			else
				fprintf(out, " %9s", "-");
		for (size_t k = 1; k < c->n_runs; k++) {
			char cell[64];
			change_cell(cell, sizeof(cell), r->has_dil_change[k], r->dil_change[k],
				    &r->dil_dec[k], "");
			fprintf(out, "  %-25s", cell);
		}
		fprintf(out, "\n");
	}
}

void compare_print(const struct compare *c, FILE *out)
{
	double conf = c->confidence;

	for (size_t k = 0; k < c->n_runs; k++) {
		fprintf(out, "%c: run %" PRId64, run_letter(k), c->runs[k].id);
		fputs(" (", out);
		put(out, 0, c->runs[k].h.experiment);
		fputs(", baseline ", out);
		put(out, 0, c->runs[k].h.baseline);
		fputs(")\n", out);
		if (c->runs[k].incomplete)
			fprintf(out, "   %s\n", c->runs[k].incomplete);
	}
	fprintf(out, "\n");
	print_provenance(c, out);
	print_experiments(c, out);
	print_one_sided(c, out);
	for (size_t i = 0; i < c->n_rows;) {
		size_t j = i + 1;
		while (j < c->n_rows && !strcmp(c->rows[j].metric, c->rows[i].metric))
			j++;
		print_table(c, i, j, out);
		fprintf(out, "\n");
		i = j;
	}
	fprintf(out, "median ±: half-width of the %g%% order-statistic CI of the median, in %% of "
		"it.\n", 100 * conf);
	fprintf(out, "changes: the change of the median over A in %% (dilations: in percentage "
		"points) with its percentile bootstrap CI; decided from that interval alone, as "
		"perturb gate decides: \"~\" when it holds 0.  The intervals are read at the level "
		"of Holm's step-down over the %zu changes shown (family-wise %g%%), the level "
		"that decided each one.\n", c->n_family, 100 * conf);
	for (size_t i = 0; i < c->n_rows; i++)
		if (c->rows[i].no_pct) {
			fprintf(out, "(no %%): run A's median interval holds 0, so a ratio to it "
				"is no percentage (%s): the change is the difference of the medians "
				"in the metric's unit, and it is not decided.\n", DECIDE_NO_PCT_KIND);
			break;
		}
}

void compare_release(struct compare *c)
{
	for (size_t i = 0; i < c->n_rows; i++) {
		free(c->rows[i].workload);
		free(c->rows[i].variant);
		free(c->rows[i].metric);
		free(c->rows[i].unit);
		for (size_t k = 0; k < COMPARE_MAX_RUNS; k++)
			free(c->rows[i].v[k]);
	}
	free(c->rows);
	for (size_t k = 0; k < c->n_runs; k++) {
		run_header_release(&c->runs[k].h);
		for (size_t i = 0; i < STORE_N_PROVENANCE; i++)
			free(c->runs[k].prov[i]);
	}
}
