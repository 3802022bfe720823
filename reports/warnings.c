/* warnings.c - the report's warnings; see warnings.h */
#include "warnings.h"
#include "fmt.h"
#include "counters/counters.h"
#include "stats/trend.h"
#include "lib/json.h"
#include "lib/util.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP_RATIO 1.2
#define SPREAD_RATIO 2.0
#define MAX_SEQS 5

const char *const report_warning_kinds[RW_N_KINDS] = {
	[RW_MACHINE] = "machine",
	[RW_WARMUP] = "warm-up",
	[RW_OUTLIERS] = "outliers",
	[RW_DRIFT] = "drift",
	[RW_SPREAD] = "spread",
	[RW_FEW_RUNS] = "runs",
	[RW_NO_PCT] = DECIDE_NO_PCT_KIND,
};

int report_metric_matters(const char *metric)
{
	static const char *const not[] = { "user", "sys", "maxrss", REPORT_TRACE_EVENTS,
					   REPORT_TRACE_LOST, REPORT_TRACE_BYTES, "leftover_procs" };
	/* what perturb measures around the run (core/cgroup.h, backends/bpf.h,
	 * backends/perf_tracer.h), not the workload's own answer */
	static const char *const not_prefix[] = { "cgroup_", "bpf_", "perf_" };
	struct counter_spec spec;
	char why[128];

	for (size_t i = 0; i < ARRAY_SIZE(not); i++)
		if (!strcmp(metric, not[i]))
			return 0;
	for (size_t i = 0; i < ARRAY_SIZE(not_prefix); i++)
		if (!strncmp(metric, not_prefix[i], strlen(not_prefix[i])))
			return 0;
	return !strcmp(metric, "wall") || counter_parse(metric, &spec, why, sizeof(why)) < 0;
}

/* Add a warning, kept in kind order after those of its kind; a text held
 * already is dropped (with its seqs).  advice (what to do; NULL: none) is
 * said after the finding once per kind: the first warning of the kind
 * that needs it carries it, the others only their finding. */
PRINTF(7, 8)
static struct report_warning *add(struct report_model *m, enum report_warning_kind kind,
				  const struct report_group *g, const char *variant,
				  int *seqs_owned, const char *advice, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	struct report_warning *w;
	const char *text;
	size_t at;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	for (size_t i = 0; advice && i < m->n_warnings; i++)
		if (m->warnings[i].kind == kind && strstr(m->warnings[i].text, advice))
			advice = NULL;	/* said already */
	if (advice)
		strbuf_addf(&sb, ": %s", advice);
	text = report_intern(m, sb.buf ? sb.buf : "");
	strbuf_release(&sb);
	for (size_t i = 0; i < m->n_warnings; i++)
		if (m->warnings[i].text == text) {
			free(seqs_owned);
			return NULL;
		}
	ALLOC_GROW(m->warnings, m->n_warnings + 1, m->alloc_warnings);
	for (at = m->n_warnings; at > 0 && m->warnings[at - 1].kind > kind; at--)
		;
	memmove(&m->warnings[at + 1], &m->warnings[at],
		(m->n_warnings - at) * sizeof(*m->warnings));
	m->n_warnings++;
	w = &m->warnings[at];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->workload = g ? g->workload : NULL;
	w->metric = g ? g->metric : NULL;
	w->variant = variant;
	w->text = text;
	w->seqs = seqs_owned;
	return w;
}

/* "ls wall of strace": what a warning is about. */
static void about(struct strbuf *sb, const struct report_group *g, const struct report_series *s)
{
	strbuf_addf(sb, "%s %s of %s", g->workload, g->metric, s->variant);
}

const char *report_few_runs(struct report_model *m, double p, size_t n)
{
	size_t need;
	char lbl[32], lvl[16], *s;
	const char *where = "", *ret;
	double q = p / 100;

	if (!(q > 0 && q < 1) || !n)
		return NULL;
	need = stats_quantile_ci_min_n(q, m->confidence);
	if (!need || n >= need)
		return NULL;
	report_pct_label(lbl, sizeof(lbl), p);
	fmt_level(lvl, sizeof(lvl), m->confidence);
	if (report_pct_extreme(p, n))
		where = n == 2 ? " lies between its two runs" : q > 0.5 ?
			" lies between the two largest" : " lies between the two smallest";
	s = xasprintf("%s of %zu run%s%s: a %s %% CI of it needs >= %zu runs", lbl, n,
		      n == 1 ? "" : "s", where, lvl, need);
	ret = report_intern(m, s);
	free(s);
	return ret;
}

/* The seqs of the flagged runs but skip_seq (malloc'd, *n of them). */
static int *flagged_seqs(const struct report_series *s, const unsigned char *flag, int skip_seq,
			 size_t *n)
{
	int *seqs = xcalloc(s->n + 1, sizeof(int));
	*n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (flag[i] && s->seqs[i] != skip_seq)
			seqs[(*n)++] = s->seqs[i];
	return seqs;
}

/* "3, 17, ... and 2 more" */
static void list_seqs(struct strbuf *sb, const int *seqs, size_t n)
{
	for (size_t i = 0; i < n && i < MAX_SEQS; i++)
		strbuf_addf(sb, "%s%d", i ? ", " : "", seqs[i]);
	if (n > MAX_SEQS)
		strbuf_addf(sb, " and %zu more", n - MAX_SEQS);
}

static double x_max(const struct report_series *s)
{
	return s->has_summary ? s->sum.max : NAN;
}

/* The first measured run much slower than the others: the seq, or -1;
 * *ratio its time over the median of the others. */
static int cold_start(const struct report_group *g, const struct report_series *s,
		      double *ratio)
{
	struct summary rest;
	double x0, z;

	if (strcmp(g->metric, "wall") || s->n < 6 || x_max(s) != s->values[0] ||
	    stats_summary(s->values + 1, s->n - 1, &rest) < 0 || !(rest.median > 0))
		return -1;
	x0 = s->values[0];
	z = rest.mad > 0 ? 0.6745 * (x0 - rest.median) / rest.mad : x0 > rest.median ? INFINITY : 0;
	if (!(x0 > WARMUP_RATIO * rest.median) || !(z > REPORT_MADZ))
		return -1;
	*ratio = x0 / rest.median;
	return s->seqs[0];
}

/* The warning of a cold start (s->cold_seq). */
static void warmup(struct report_model *m, const struct report_group *g,
		   const struct report_series *s)
{
	struct strbuf sb = STRBUF_INIT;
	struct report_warning *w;
	int *seq;

	about(&sb, g, s);
	seq = xmalloc(sizeof(int));
	*seq = s->cold_seq;
	w = add(m, RW_WARMUP, g, s->variant, seq, "raise warmup: in the file (or --warmup N) so "
		"that a cold start is not counted", "%s: the first measured run (seq %d) took "
		"%.1fx the median of the others, a cold start", sb.buf, s->cold_seq,
		s->cold_ratio);
	if (w)
		w->n_seqs = 1;
	strbuf_release(&sb);
}

/* The runs of a group's series far from their medians, in one warning;
 * cold[i] is series i's seq said as a cold start (-1: none), not said again. */
static void outliers(struct report_model *m, const struct report_group *g, const int *cold)
{
	struct strbuf sb = STRBUF_INIT;
	const char *variant = NULL;
	int *all = NULL;
	size_t n_all = 0, n_series = 0;

	for (size_t i = 0; i < g->n_series; i++) {
		const struct report_series *s = &g->series[i];
		unsigned char *flag;
		size_t n;
		int *seqs;

		if (!s->has_summary || s->n < 3)
			continue;
		flag = xcalloc(s->n, 1);
		if (stats_outliers_mad_summary(s->values, s->n, &s->sum, REPORT_MADZ, flag) ==
		    (size_t)-1) {
			free(flag);
			continue;
		}
		seqs = flagged_seqs(s, flag, cold[i], &n);
		free(flag);
		if (n) {
			strbuf_addf(&sb, "%s%s seq ", n_series++ ? ", " : "", s->variant);
			list_seqs(&sb, seqs, n);
			all = xrealloc(all, (n_all + n) * sizeof(int));
			memcpy(all + n_all, seqs, n * sizeof(int));
			n_all += n;
			variant = s->variant;
		}
		free(seqs);
	}
	if (n_all) {
		struct report_warning *w = add(m, RW_OUTLIERS, g, n_series == 1 ? variant : NULL,
					       all, "labelled, not dropped: look at what else ran "
					       "then, or add runs (-n)", "%s %s: %zu run%s far from "
					       "the median (modified z-score > %g): %s",
					       g->workload, g->metric, n_all, n_all == 1 ? "" : "s",
					       REPORT_MADZ, sb.buf);
		if (w)
			w->n_seqs = n_all;
	}
	strbuf_release(&sb);
}

/* Holm across a family of n p-values (NaN: not tested), each adjusted p
 * written through out[i]. */
static void holm_family(const double *p, double *const *out, size_t n)
{
	double *adj = xcalloc(n + 1, sizeof(double));

	stats_holm(p, n, adj);
	for (size_t i = 0; i < n; i++)
		*out[i] = adj[i];
	free(adj);
}

void report_warning_tests(struct report_model *m)
{
	double *pd = NULL, *ps = NULL, **od = NULL, **os = NULL;
	size_t nd = 0, ns = 0, ad = 0, as = 0, ad2 = 0, as2 = 0;

	for (size_t gi = 0; gi < m->n_groups; gi++) {
		struct report_group *g = &m->groups[gi];
		const struct report_series *base = report_baseline(g);
		for (size_t i = 0; i < g->n_series; i++) {
			struct report_series *s = &g->series[i];
			struct test_result t;
			int skip;

			s->cold_seq = -1;
			s->drift_p = s->spread_p = s->spread_ratio = NAN;
			stats_test_result_init(&s->drift);
			if (!report_metric_matters(g->metric) || !s->n)
				continue;
			skip = (s->cold_seq = cold_start(g, s, &s->cold_ratio)) >= 0;
			/* a cold start is left out of the trend */
			if (stats_trend(s->values + skip, s->n - (size_t)skip, &s->drift) == 0 &&
			    s->drift.valid) {
				ALLOC_GROW(pd, nd + 1, ad);
				ALLOC_GROW(od, nd + 1, ad2);
				pd[nd] = s->drift.p;
				od[nd++] = &s->drift_p;
			}
			if (!s->compared || !base || !base->has_summary || !s->has_summary)
				continue;
			const double *x[2] = { base->values, s->values };
			size_t n[2] = { base->n, s->n };
			if (stats_brown_forsythe(x, n, 2, &t) == 0 && t.valid) {
				s->spread_ratio = base->sum.mad > 0 ? s->sum.mad / base->sum.mad
					: s->sum.mad > 0 ? INFINITY : 1;
				ALLOC_GROW(ps, ns + 1, as);
				ALLOC_GROW(os, ns + 1, as2);
				ps[ns] = t.p;
				os[ns++] = &s->spread_p;
			}
		}
	}
	holm_family(pd, od, nd);
	holm_family(ps, os, ns);
	free(pd);
	free(ps);
	free(od);
	free(os);
}

/* The drift and spread warnings of s (report_warning_tests()'s p). */
static void drift_spread(struct report_model *m, const struct report_group *g,
			 const struct report_series *s)
{
	struct strbuf sb = STRBUF_INIT;
	char ps[32];

	about(&sb, g, s);
	if (s->drift_p < m->alpha) {
		fmt_p(ps, sizeof(ps), s->drift_p);
		add(m, RW_DRIFT, g, s->variant, NULL, "the machine changed "
		    "during the study; look for heat, frequency or background work, keep "
		    "order: interleaved so that every variant shares it, and rerun",
		    "%s %s over the runs (Spearman's rho %+.2f against run order, p %s "
		    "Holm-adjusted)", sb.buf,
		    s->drift.statistic > 0 ? "grows" : "shrinks", s->drift.statistic, ps);
	}
	if (s->spread_p < m->alpha &&
	    (s->spread_ratio >= SPREAD_RATIO || s->spread_ratio <= 1 / SPREAD_RATIO)) {
		fmt_p(ps, sizeof(ps), s->spread_p);
		add(m, RW_SPREAD, g, s->variant, NULL, "judge such a variant "
		    "by its percentiles and their CIs, not by the mean alone", "%s: its "
		    "spread (MAD) is %.1fx the baseline's (Brown-Forsythe p %s "
		    "Holm-adjusted): it makes runs %s predictable", sb.buf, s->spread_ratio, ps,
		    s->spread_ratio > 1 ? "less" : "more");
	}
	strbuf_release(&sb);
}

static void machine_start(struct report_model *m)
{
	json_t *j = m->run.machine_json ? json_loads(m->run.machine_json, 0, NULL) : NULL;
	const char *load = j ? json_string_value(json_object_get(j, "loadavg")) : NULL;
	int cores = j ? (int)json_integer_value(json_object_get(j, "cores")) : 0;
	double l1;

	if (load && sscanf(load, "%lf", &l1) == 1 && machine_overloaded(l1, cores, 1, 0))
		add(m, RW_MACHINE, NULL, NULL, NULL, "rerun on a quiet machine (perturb doctor "
		    "lists what to check)", "load average %.2f on %d CPU%s when the run started: "
		    "other work shared the CPUs", l1, cores, cores == 1 ? "" : "s");
	json_decref(j);
}

/* One line for every percentile whose CI needs more runs than the
 * smallest series (fewest) has. */
static void few_runs(struct report_model *m, size_t fewest)
{
	struct strbuf need = STRBUF_INIT, ext = STRBUF_INIT;
	size_t most = 0, n_need = 0, n_ext = 0;
	double ext_lbl[REPORT_MAX_PERCENTILES];
	char lbl[32], lvl[16];

	for (size_t k = 0; k < m->n_percentiles && fewest; k++) {
		double p = m->percentiles[k];
		size_t n = stats_quantile_ci_min_n(p / 100, m->confidence);
		if (!report_few_runs(m, p, fewest))
			continue;
		report_pct_label(lbl, sizeof(lbl), p);
		strbuf_addf(&need, "%s%s (%s%zu)", n_need ? ", " : "", lbl,
			    n_need ? ">= " : "needs >= ", n);
		n_need++;
		if (n > most)
			most = n;
		if (report_pct_extreme(p, fewest))
			ext_lbl[n_ext++] = m->percentiles[k];
	}
	for (size_t k = 0; k < n_ext; k++) {	/* "p80, p90 and p99" */
		report_pct_label(lbl, sizeof(lbl), ext_lbl[k]);
		strbuf_addf(&ext, "%s%s", !k ? "" : k + 1 < n_ext ? ", " : " and ", lbl);
	}
	fmt_level(lvl, sizeof(lvl), m->confidence);
	if (n_need)
		add(m, RW_FEW_RUNS, NULL, NULL, NULL, NULL, "%zu run%s in the smallest series, too few "
		    "for a %s %% CI of %s%s%s%s; give -n %zu for %s", fewest,
		    fewest == 1 ? "" : "s", lvl, need.buf, n_ext ? "; " : "", n_ext ? ext.buf : "",
		    !n_ext ? "" : n_ext == 1 ? " lies between extreme runs: read it as one run's "
		    "value, not a percentile" : " lie between extreme runs: read them as one run's "
		    "value, not a percentile", most, n_need == 1 ? "it" : "all");
	strbuf_release(&need);
	strbuf_release(&ext);
}

/* The statistics of s without a percentage (report.h, no_pct): one line,
 * with the baseline's interval of the first. */
static void no_pct(struct report_model *m, const struct report_group *g,
		   const struct report_series *s)
{
	struct strbuf sb = STRBUF_INIT, which = STRBUF_INIT;
	const struct report_dilation *first = NULL;
	char lbl[32], lo[48], hi[48];
	size_t n = 0;

	if (!s->compared)
		return;
	for (size_t k = 0; k <= m->n_percentiles; k++) {
		const struct report_dilation *d = k ? &s->pct_dil[k - 1] : &s->mean_dil;
		if (!d->ok || !d->no_pct)
			continue;
		if (k)
			report_pct_label(lbl, sizeof(lbl), m->percentiles[k - 1]);
		strbuf_addf(&which, "%s%s", n++ ? ", " : "", k ? lbl : "mean");
		if (!first)
			first = d;
	}
	if (!n) {
		strbuf_release(&which);
		return;
	}
	about(&sb, g, s);
	fmt_value(lo, sizeof(lo), first->base_lo);
	fmt_value(hi, sizeof(hi), first->base_hi);
	add(m, RW_NO_PCT, g, s->variant, NULL, "a ratio to such a baseline is no percentage: "
	    "read the difference in the metric's unit, and judge it with an absolute "
	    "threshold, not a percentage (perturb gate calls one inconclusive)",
	    "%s: the baseline's interval of %s ([%s, %s]%s%s for the first) holds 0, so "
	    "%s given as a difference in %s, not in %%", sb.buf, which.buf, lo, hi,
	    *g->unit ? " " : "", g->unit, n == 1 ? "its change is" : "their changes are",
	    *g->unit ? g->unit : "the metric's unit");
	strbuf_release(&sb);
	strbuf_release(&which);
}

void report_warnings(struct report_model *m)
{
	size_t fewest = 0;

	machine_start(m);
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (!report_metric_matters(g->metric))
			continue;
		int *cold = xcalloc(g->n_series + 1, sizeof(int));
		for (size_t i = 0; i < g->n_series; i++) {
			const struct report_series *s = &g->series[i];
			cold[i] = -1;
			if (!s->n)
				continue;
			if (!fewest || s->n < fewest)
				fewest = s->n;
			if ((cold[i] = s->cold_seq) >= 0)
				warmup(m, g, s);
		}
		/* in kind order (add()): the order of the groups within a kind */
		for (size_t i = 0; i < g->n_series; i++)
			if (g->series[i].n)
				drift_spread(m, g, &g->series[i]);
		for (size_t i = 0; i < g->n_series; i++)
			no_pct(m, g, &g->series[i]);
		outliers(m, g, cold);
		free(cold);
	}
	few_runs(m, fewest);
}

void report_warn_machine(struct report_model *m, const struct machine_load *start,
			 const struct machine_load *end, int cpus_used)
{
	const struct machine_load *at[2] = { start, end };
	static const char *const when[2] = { "before the first run", "after the last run" };
	double lo = INFINITY, hi = -INFINITY;

	if (cpus_used < 1)
		cpus_used = 1;
	for (int i = 0; i < 2; i++) {
		const struct machine_load *l = at[i];
		int spare;
		if (!l)
			continue;
		spare = l->cores > cpus_used ? l->cores - cpus_used : 0;
		/* the load at the start is the stored one's (machine_start) */
		if (i == 1 && machine_overloaded(l->load1, l->cores, cpus_used, 1))
			add(m, RW_MACHINE, NULL, NULL, NULL, "rerun on a quiet machine (perturb "
			    "doctor lists what to check)", "load average %.2f %s on %d CPU%s, the "
			    "study using %d: other work shared the CPUs", l->load1, when[i], l->cores,
			    l->cores == 1 ? "" : "s", cpus_used);
		if (i == 0 && l->running > spare)
			add(m, RW_MACHINE, NULL, NULL, NULL, "stop what runs beside the study (top "
			    "shows it)", "%d other task%s runnable %s, %d CPU%s free for them",
			    l->running, l->running == 1 ? " was" : "s were", when[i], spare,
			    spare == 1 ? "" : "s");
		if (l->has_freq) {
			lo = fmin(lo, l->freq_min_mhz);
			hi = fmax(hi, l->freq_max_mhz);
		}
	}
	if (lo > 0 && hi > 1.1 * lo)
		add(m, RW_MACHINE, NULL, NULL, NULL, "fix it (the performance governor, boost "
		    "off: perturb doctor says how)", "CPU frequency between %.0f and %.0f MHz "
		    "over the study: times depend on it", lo, hi);
}
