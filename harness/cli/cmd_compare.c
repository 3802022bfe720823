/*
 * cmd_compare.c - `perturb compare A B`: two stored runs side by side, in
 * the spirit of benchstat.
 *
 * For every (workload, variant, metric) that both runs measured (measured,
 * successful runs only): the median of A and of B, the change of the
 * median of B over A in % with its confidence interval (stats_dilation:
 * percentile bootstrap of the two independent samples, quantile 0.5,
 * seeded by the names, so the same databases print the same numbers), and
 * the two-sided Mann-Whitney U p-value (stats_mann_whitney).  The change
 * is printed as "~" when p >= alpha = 1 - confidence (no Holm correction:
 * as benchstat, each row is read on its own).
 *
 * A regression is a significant change whose estimate is above the
 * --fail-on-regression threshold: every metric is taken as lower-is-better
 * (times, counters, sizes).
 *
 * The provenance columns of the two runs (perturb version, kernel release,
 * kernel command line, CPU model, cores, governor, SMT, ASLR) are compared
 * first and every difference is printed above the table: a change of the
 * machine is a change of the result.
 */
#include "commands.h"
#include "options.h"
#include "stats/stats.h"
#include "engine/store.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cell {
	char *workload, *variant, *metric, *unit;
	double *v[2];
	size_t n[2], alloc[2];
};

struct table {
	struct cell *c;
	size_t n, alloc;
	size_t last;		/* the last cell hit: values come in runs of a seq */
	int side;
	char **metrics;		/* filter; NULL/0 = all */
	size_t n_metrics;
};

static struct cell *find_cell(struct table *t, const struct stored_value *v, int create)
{
	struct cell *c;

	if (t->last < t->n) {
		c = &t->c[t->last];
		if (!strcmp(c->metric, v->metric) && !strcmp(c->variant, v->variant) &&
		    !strcmp(c->workload, v->workload))
			return c;
	}
	for (size_t i = 0; i < t->n; i++) {
		c = &t->c[i];
		if (!strcmp(c->metric, v->metric) && !strcmp(c->variant, v->variant) &&
		    !strcmp(c->workload, v->workload)) {
			t->last = i;
			return c;
		}
	}
	if (!create)
		return NULL;
	ALLOC_GROW(t->c, t->n + 1, t->alloc);
	c = &t->c[t->n];
	memset(c, 0, sizeof(*c));
	c->workload = xstrdup(v->workload);
	c->variant = xstrdup(v->variant);
	c->metric = xstrdup(v->metric);
	c->unit = xstrdup(v->unit ? v->unit : "");
	t->last = t->n++;
	return c;
}

static int collect(const struct stored_value *v, void *ctx)
{
	struct table *t = ctx;
	struct cell *c = NULL;
	int s = t->side;

	if (t->n_metrics) {
		size_t k;
		for (k = 0; k < t->n_metrics && strcmp(t->metrics[k], v->metric); k++)
			;
		if (k == t->n_metrics)
			return 0;
	}
	c = find_cell(t, v, s == 0);
	if (!c || !isfinite(v->value))
		return 0;
	ALLOC_GROW(c->v[s], c->n[s] + 1, c->alloc[s]);
	c->v[s][c->n[s]++] = v->value;
	return 0;
}

/* Rows in the order workload, variant, metric (by name): stable output. */
static int cmp_cell(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	int c = strcmp(x->workload, y->workload);
	if (!c)
		c = strcmp(x->variant, y->variant);
	return c ? c : strcmp(x->metric, y->metric);
}

/* FNV-1a of the cell's names: the bootstrap seed. */
static uint64_t cell_seed(const struct cell *c)
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

/* Open db, resolve the id; an exit status (printed) or 0. */
static int open_run(const char *db, int64_t id, struct store **st)
{
	struct run_header h;

	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		return EXIT_USAGE;
	}
	if (store_open(db, 0, st) < 0)
		return EXIT_RUNTIME;
	if (store_run_header(*st, id, &h) < 0)
		return EXIT_USAGE;
	run_header_release(&h);
	return 0;
}

static void print_provenance(char *a[STORE_N_PROVENANCE], char *b[STORE_N_PROVENANCE],
			     int64_t ida, int64_t idb)
{
	int any = 0;

	for (size_t i = 0; i < STORE_N_PROVENANCE; i++) {
		const char *x = a[i] ? a[i] : "(unknown)", *y = b[i] ? b[i] : "(unknown)";
		if (!strcmp(x, y))
			continue;
		if (!any)
			printf("provenance differs between run %" PRId64 " (A) and run %" PRId64
			       " (B):\n", ida, idb);
		any = 1;
		printf("  %-16s A: %s\n  %-16s B: %s\n", store_provenance_keys[i], x, "", y);
	}
	if (any)
		printf("\n");
}

int cmd_compare(int argc, char **argv)
{
	struct store *sa = NULL, *sb = NULL;
	struct table t = { 0 };
	char *prov[2][STORE_N_PROVENANCE] = { { 0 } };
	const char *db = "results/perturb.db", *db_b = NULL, *ids[2] = { 0 };
	int64_t id[2];
	double conf = 0.95, max_reg = NAN;
	size_t n_reg = 0, shown = 0;
	int ret = EXIT_USAGE, rc;
	struct opt opts[] = {
		OPT_ARG("RUN_A", &ids[0], "the run compared against"),
		OPT_ARG("RUN_B", &ids[1], "the run compared"),
		OPT_STRING(0, "db", &db, "PATH",
			   "results database of A (and B; default results/perturb.db)"),
		OPT_STRING(0, "db-b", &db_b, "PATH", "results database of B"),
		OPT_LIST(0, "metric", &t.metrics, &t.n_metrics, "M",
			 "only this metric (repeatable, or M,M)"),
		OPT_LEVEL(0, "confidence", &conf, "C",
			  "level of the intervals and the tests (default 0.95)"),
		OPT_PERCENT(0, "fail-on-regression", &max_reg, 0, INFINITY, 0, "X",
			    "exit 1 when a significant change is above X (5% or\n"
			    "0.05); every metric is taken as lower-is-better"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "no warnings"),
		OPT_END(),
	};

	if ((rc = parse_options(argc, argv, opts, "compare"))) {
		ret = rc < 0 ? EXIT_USAGE : EXIT_OK;
		goto out;
	}
	if (!isnan(max_reg))
		max_reg *= 100;	/* in % */
	if (!ids[1]) {
		error("compare takes two run ids: perturb compare A B");
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		long l;
		if (parse_long(ids[k], 1, INT64_MAX, &l)) {
			error("a run id is a positive integer, got '%s'", ids[k]);
			goto out;
		}
		id[k] = l;
	}
	if ((rc = open_run(db, id[0], &sa))) {
		ret = rc;
		goto out;
	}
	if ((rc = open_run(db_b ? db_b : db, id[1], &sb))) {
		ret = rc;
		goto out;
	}
	ret = EXIT_RUNTIME;
	if (store_run_provenance(sa, id[0], prov[0]) < 0 ||
	    store_run_provenance(sb, id[1], prov[1]) < 0)
		goto out;
	t.side = 0;
	if (store_each_value(sa, id[0], 0, 0, collect, &t) < 0)
		goto out;
	t.side = 1;
	t.last = 0;
	if (store_each_value(sb, id[1], 0, 0, collect, &t) < 0)
		goto out;

	if (t.n)
		qsort(t.c, t.n, sizeof(*t.c), cmp_cell);
	print_provenance(prov[0], prov[1], id[0], id[1]);
	printf("%-16s %-16s %-12s %12s %12s %9s  %-22s %7s\n", "WORKLOAD", "VARIANT", "METRIC",
	       "MEDIAN A", "MEDIAN B", "CHANGE", "INTERVAL", "P");
	for (size_t i = 0; i < t.n; i++) {
		struct cell *c = &t.c[i];
		struct boot_opts bo = { .conf = conf, .seed = cell_seed(c) };
		struct dilation d;
		struct test_result mw;
		char change[32], iv[64], p[16];
		double *sa_, *sb_, ma, mb;
		int sig;

		if (!c->n[0] || !c->n[1])
			continue;
		sa_ = stats_sorted_copy(c->v[0], c->n[0]);
		sb_ = stats_sorted_copy(c->v[1], c->n[1]);
		ma = stats_quantile_sorted(sa_, c->n[0], 0.5);
		mb = stats_quantile_sorted(sb_, c->n[1], 0.5);
		free(sa_);
		free(sb_);
		if (stats_dilation(c->v[0], c->n[0], c->v[1], c->n[1], STATK_QUANTILE, 0.5, &bo,
				   &d) < 0)
			d.pct = NAN;	/* d is zeroed: no interval */
		if (stats_mann_whitney(c->v[0], c->n[0], c->v[1], c->n[1], &mw) < 0)
			mw.valid = 0;
		sig = mw.valid && mw.p < 1 - conf;
		if (!isfinite(d.pct))
			snprintf(change, sizeof(change), "n/a");
		else if (!sig)
			snprintf(change, sizeof(change), "~");
		else
			snprintf(change, sizeof(change), "%+.2f%%", d.pct);
		if (d.ci_pct.has_ci)
			snprintf(iv, sizeof(iv), "[%+.2f%%, %+.2f%%]", d.ci_pct.lo, d.ci_pct.hi);
		else
			snprintf(iv, sizeof(iv), "(no interval)");
		if (mw.valid)
			snprintf(p, sizeof(p), "p=%.3f", mw.p);
		else
			snprintf(p, sizeof(p), "n/a");
		printf("%-16s %-16s %-12s %12.6g %12.6g %9s  %-22s %7s  (n=%zu+%zu)\n", c->workload,
		       c->variant, c->metric, ma, mb, change, iv, p, c->n[0], c->n[1]);
		shown++;
		if (sig && isfinite(max_reg) && isfinite(d.pct) && d.pct > max_reg) {
			n_reg++;
			warning("regression: %s on %s, %s: %+.2f%% (over %.2f%%, p=%.3g)",
				c->variant, c->workload, c->metric, d.pct, max_reg, mw.p);
		}
	}
	if (!shown)
		warning("runs %" PRId64 " and %" PRId64 " have no (workload, variant, metric) in common",
			id[0], id[1]);
	printf("\n~: the change is not significant (Mann-Whitney U, p >= %.3g); intervals: "
	       "%g%% bootstrap CI of the change of the median\n", 1 - conf, 100 * conf);
	ret = n_reg ? EXIT_OVERHEAD : EXIT_OK;
out:
	for (size_t i = 0; i < t.n; i++) {
		free(t.c[i].workload);
		free(t.c[i].variant);
		free(t.c[i].metric);
		free(t.c[i].unit);
		free(t.c[i].v[0]);
		free(t.c[i].v[1]);
	}
	free(t.c);
	free(t.metrics);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < STORE_N_PROVENANCE; i++)
			free(prov[k][i]);
	store_close(sa);
	store_close(sb);
	return ret;
}
