/*
 * sentences.c - the model's sentences and notes (report.h: "Helpers for
 * renderers"): what every format prints beside the tables, each written
 * once, from the model's values; they compute nothing new and call only
 * the model's lookups (model.c).
 */
#include "report.h"
#include "stats/stats.h"
#include "lib/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_noise_verdict(const struct report_model *m, const struct report_group *g,
			  char *buf, size_t len)
{
	const struct report_noise *no = &g->noise;
	int k = -1, any = 0;
	size_t at;

	if (!no->ok) {
		snprintf(buf, len, "noise on %s (%s): unknown, %s", g->workload, g->metric,
			 no->reason);
		return;
	}
	at = (size_t)snprintf(buf, len, "this machine resolves about %.2g %% on %s (%s, median "
			      "dilation; A/A: the baseline's two halves of %zu runs%s%s%s); "
			      "dilations below %.2g %% are not distinguishable", no->resolution_pct,
			      g->workload, g->metric, no->half,
			      no->paired ? ", paired by " : "", no->paired ? no->paired_by : "",
			      no->half > m->max_boot_n ? ", an asymptotic interval above "
			      "--max-bootstrap-n runs" : "", no->resolution_pct);
	for (size_t i = 0; i < m->n_percentiles; i++)
		if (m->percentiles[i] == 50)
			k = (int)i;
	for (size_t i = 0; k >= 0 && i < g->n_series && at < len; i++) {
		const struct report_series *s = &g->series[i];
		const struct report_dilation *d = &s->pct_dil[k];
		if (!s->compared || !d->ok || !(fabs(d->d.pct) < no->resolution_pct))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s %s (%+.2f %%)", any ? "," : ":",
				       s->variant, d->d.pct);
		any = 1;
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int report_paired_note(const struct report_model *m, char *buf, size_t len)
{
	double *r = NULL;
	size_t n = 0, alloc = 0, pairs = 0;
	int duet = 0;
	const char *what;

	buf[0] = 0;
	for (size_t gi = 0; gi < m->n_groups; gi++)
		for (size_t i = 0; i < m->groups[gi].n_series; i++) {
			const struct report_series *s = &m->groups[gi].series[i];
			for (size_t k = 0; s->compared && k <= m->n_percentiles; k++) {
				const struct report_dilation *d = k ? &s->pct_dil[k - 1] : &s->mean_dil;
				const struct interval *p = &d->d.ci_pct, *u = &d->unpaired_ci_pct;
				if (!d->ok || !d->paired)
					continue;
				if (d->pairs > pairs)
					pairs = d->pairs;
				duet |= d->duet;
				if (!p->has_ci || !u->has_ci || !(u->hi > u->lo))
					continue;
				ALLOC_GROW(r, n + 1, alloc);
				r[n++] = (p->hi - p->lo) / (u->hi - u->lo);
			}
		}
	if (!pairs) {
		free(r);
		return 0;
	}
	what = duet ? "duet: the dilation intervals come from the duet pairs (a variant's run "
		      "and the baseline's at the same time on two CPUs, order: duet; up to"
		    : "paired: the dilation intervals come from the blocks both sides "
		      "were measured in (rounds or boot pairs; up to";
	if (n) {
		qsort(r, n, sizeof(*r), cmp_dbl);
		snprintf(buf, len, "%s %zu), resampled as pairs; their width is %.2f times the "
			 "unpaired one's (median of %zu intervals; %.2f to %.2f)", what, pairs,
			 stats_quantile_sorted(r, n, 0.5), n, r[0], r[n - 1]);
	} else {
		snprintf(buf, len, "%s %zu), resampled as pairs", what, pairs);
	}
	free(r);
	return 1;
}

void report_holm_note(const struct report_model *m, char *buf, size_t len)
{
	char stat[32];

	report_stat_name(m, stat, sizeof(stat));
	snprintf(buf, len, "verdict (*): the interval of the %s dilation decides, as in perturb "
		 "gate and compare: significant when its interval at the Holm level excludes 0; "
		 "Holm's step-down (Holm 1979) on the tests that invert the intervals: with m "
		 "comparisons of which k are decided, the interval at level 1 - %g / (m - k), "
		 "printed with that level (Holm CI); the family, whatever this report shows: the "
		 "%zu comparisons of the primary metrics (wall and per-operation times) over "
		 "every workload and variant of the run, and apart the %zu of the other metrics; "
		 "rank p (Wilcoxon signed-rank on the block pairs where the plan pairs the runs, "
		 "Mann-Whitney U otherwise, unadjusted) is shown for information, never as the "
		 "verdict", stat, m->alpha, m->n_family[0], m->n_family[1]);
}

const char report_runs_per_boot_column[] =
	"Runs/boot (best): the runs per boot this study ran, and in parentheses the number that "
	"would give the narrowest interval of the mean for the same machine time, from its "
	"variance components and its measured costs of a boot (entering and leaving it, its "
	"warm-ups) and of a run (Kalibera & Jones 2013), \"more\" when boots differ by "
	"nothing measurable";

void report_runs_per_boot_note(const struct report_series *s, char *buf, size_t len)
{
	const struct report_runs_per_boot *p = &s->rpb;
	int k = snprintf(buf, len, "%s: this study ran %.3g runs per boot; ", s->label, p->used);

	if (k < 0 || (size_t)k >= len)
		return;
	if (p->optimal)
		snprintf(buf + k, len - (size_t)k, "from its own variance components and costs "
			 "(boot %.3g s, run %.3g s), %u runs per boot would give the narrowest "
			 "interval of the mean for the same machine time (Kalibera & Jones 2013)",
			 p->boot_cost_s, p->run_cost_s, p->optimal);
	else
		snprintf(buf + k, len - (size_t)k, "%s", p->reason ? p->reason : "no optimum");
}

const char report_boots_disagree_advice[] =
	"the runs of a boot share that boot and its moment: under QEMU without KVM (TCG) a "
	"guest runs at the speed the host gives it then, which moved a loop's boot means by "
	"tens of percent on a shared VM while its virtual time (deterministic: true) was the "
	"same in every boot (docs/experiment.md, boots:); compare such variants boot against "
	"boot (ABBA pairs) or in virtual time";

int report_boots_disagree_note(const struct report_series *s, double alpha, char *buf,
				size_t len)
{
	const struct nested_result *r = &s->nested;

	if (!s->has_blocks || !r->ok || s->virtual_time || !(r->p_value < alpha))
		return 0;
	snprintf(buf, len, "%s: its boots disagree (between-boot share %.0f %%, F p %.2g)",
		 s->label, 100 * r->icc, r->p_value);
	return 1;
}

void report_quiet_line(const struct report_quiet *q, char *buf, size_t len)
{
	if (q->alt_hw == 0 && q->wall_hw > 0)
		snprintf(buf, len, "%s, %s: %s resolves this comparison exactly (half-width 0 %% "
			 "vs %.2g %% for wall)", q->workload, q->variant, q->alt, q->wall_hw);
	else if (q->alt_hw < q->wall_hw)
		snprintf(buf, len, "%s, %s: %s resolves this comparison %.1fx more sharply than "
			 "wall (half-width %.2g %% vs %.2g %%)", q->workload, q->variant, q->alt,
			 q->wall_hw / q->alt_hw, q->alt_hw, q->wall_hw);
	else
		snprintf(buf, len, "%s, %s: wall resolves this comparison best (half-width %.2g %%; "
			 "%s %.2g %%)", q->workload, q->variant, q->wall_hw, q->alt, q->alt_hw);
}

static void add_method(const char **methods, size_t *n, size_t max, const struct interval *iv)
{
	if (!iv->has_ci || !iv->method)
		return;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(methods[i], iv->method))
			return;
	if (*n < max)
		methods[(*n)++] = iv->method;
}

size_t report_methods(const struct report_model *m, unsigned what,
		      const char **methods, size_t max)
{
	size_t n = 0;

	for (size_t gi = 0; gi < m->n_groups; gi++)
		for (size_t i = 0; i < m->groups[gi].n_series; i++) {
			const struct report_series *s = &m->groups[gi].series[i];
			if (what & 1 && s->compared) {
				if (s->mean_dil.ok)
					add_method(methods, &n, max, &s->mean_dil.d.ci_pct);
				for (size_t k = 0; k < m->n_percentiles; k++)
					if (s->pct_dil[k].ok)
						add_method(methods, &n, max, &s->pct_dil[k].d.ci_pct);
			}
			if (what & 2)
				for (size_t k = 0; k < m->n_percentiles; k++)
					add_method(methods, &n, max, &s->pct_ci[k]);
			if (what & 4 && s->has_hl)
				add_method(methods, &n, max, &s->hl.ci);
		}
	return n;
}

const char report_papers_note[] =
	"The tables follow published overhead studies: dilation at percentiles and moments "
	"are Tables 1 and 2 of the KTAU perturbation study (2005; examples/ktau.yaml), the "
	"answer table follows the LTT overhead table (Yaghmour, LKML 2002; "
	"examples/ltt.yaml): every configuration against every workload.";

const char report_virtual_time_note[] =
	"virtual time: these variants ran under QEMU with -icount shift=0 (deterministic: "
	"true), whose clock advances 1 ns per executed guest instruction; their times "
	"(wall, user, sys, ns_per_op, cycles) count instructions, the kernel's included, "
	"not seconds: repeatable to about 0.01 %, blind to cache misses and stalls, and "
	"compared only with a baseline in virtual time.";

const char report_nodes_note[] =
	"Runs on several nodes (a study run in shards, docs/distributed.md): the variance "
	"split into between-node, between-boot and within-boot parts by nested random-effects "
	"ANOVA (Sokal & Rohlf 1995, sec. 10.3); the dilation CIs above resample nodes, then "
	"boots, then runs; the mean dilation on each node alone, and its spread: sd over the "
	"nodes [min, max].";

