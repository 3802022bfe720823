/*
 * bisect_out.c - perturb bisect's judging (the gate's) and its closing
 * lines (bisect_out.h).
 */
#include "bisect_out.h"
#include "fmt.h"
#include "stats/stats.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double bisect_look_confidence(double conf, int max_rounds)
{
	return 1 - (1 - conf) / (double)((max_rounds > 0 ? max_rounds : 0) + 1);
}

int bisect_gate_verdict(struct store *st, int64_t run_id, const struct gate_rule *rule,
			enum gate_verdict *v, size_t *judged)
{
	struct gate g = { 0 };
	struct run_header h = { 0 };
	char **variants = NULL, **workloads = NULL;
	size_t nv = 0, nw = 0, pass = 0;
	int ret = -1, usage = 0;

	*v = GATE_INCONCLUSIVE;
	g.st = st;
	g.run_id = run_id;
	g.o.run_id = run_id;
	if (store_run_header(st, run_id, &h) < 0 ||
	    store_variant_names(st, run_id, &variants, &nv) < 0 ||
	    store_workload_names(st, run_id, &workloads, &nw) < 0)
		goto out;
	gate_expand(&g, rule, 1, variants, nv, workloads, nw, h.baseline);
	if (!g.n_j) {
		error("the rule (variant '%s', workload '%s') matches nothing in run %lld",
		      rule->variant, rule->workload, (long long)run_id);
		goto out;
	}
	if (gate_judge(&g, &usage) < 0)
		goto out;
	for (size_t i = 0; i < g.n_j; i++) {
		if (g.j[i].verdict == GATE_FAIL)
			*v = GATE_FAIL;
		pass += g.j[i].verdict == GATE_PASS;
	}
	if (*v != GATE_FAIL && pass == g.n_j)
		*v = GATE_PASS;
	if (judged)
		*judged = g.n_j;
	ret = 0;
out:
	gate_release(&g);
	run_header_release(&h);
	argv_free(variants);
	argv_free(workloads);
	return ret;
}

/* The values of (workload, variant) and of its baseline in run_id's model
 * of metric: copies, malloc'd.  0, or -1 when the run has none. */
static int values_of(struct store *st, int64_t run_id, const char *metric, const char *workload,
		     const char *variant, double **xb, size_t *nb, double **xv, size_t *nv)
{
	struct report_opts ro = { .run_id = run_id, .n_metrics = 1, .no_verdicts = 1,
				  .skip_noise = 1 };
	struct report_model m = { 0 };
	const struct report_group *g;
	const struct report_series *b, *s;
	char *met = (char *)metric;
	int usage = 0, ret = -1;

	ro.metrics = &met;
	if (report_build(st, &ro, &m, &usage) < 0)
		goto out;
	if (!(g = report_find_group(&m, report_intern(&m, workload), report_intern(&m, metric))) ||
	    !(b = report_baseline(g)) || !(s = report_find_series(g, report_intern(&m, variant))) ||
	    !b->n || !s->n)
		goto out;
	*xb = xmalloc(b->n * sizeof(double));
	*xv = xmalloc(s->n * sizeof(double));
	memcpy(*xb, b->values, b->n * sizeof(double));
	memcpy(*xv, s->values, s->n * sizeof(double));
	*nb = b->n;
	*nv = s->n;
	ret = 0;
out:
	report_release(&m);
	return ret;
}

int bisect_print(FILE *out, struct store *st, const struct bisect_result *r,
		 const struct gate_rule *rule, const char *repo)
{
	static const char *const vw[] = { "undecided", "good", "bad" };
	size_t measured = 0, reused = 0;

	fputs("\nbisect: the commits measured\n", out);
	if (r->max_rounds > 0) {
		char look[32], all[32];
		fmt_level(look, sizeof(look), bisect_look_confidence(rule->confidence, r->max_rounds));
		fmt_level(all, sizeof(all), rule->confidence);
		fprintf(out, "  (each commit judged at %s %% a look, so that its up to %d looks keep "
			"%s %%: Bonferroni)\n", look, r->max_rounds + 1, all);
	}
	for (size_t i = 0; i < r->n_steps; i++) {
		const struct bisect_step *s = &r->steps[i];
		fprintf(out, "  %-12.12s  %-24s  %-9s  ", s->commit, s->describe,
			s->build_failed ? "skipped" : vw[s->v]);
		if (s->build_failed)
			fputs("build failed\n", out);
		else
			fprintf(out, "run %lld%s, %d added round%s\n", (long long)s->run_id,
				s->reused ? " (stored before)" : "", s->rounds, s->rounds == 1 ? "" : "s");
		measured += !s->reused && !s->build_failed;
		reused += s->reused;
	}
	if (!r->found) {
		fprintf(out, "undecided: %s; the first bad commit is one of:\n", r->why ? r->why :
			"no commit was found");
		for (size_t i = 0; i < r->n_candidates; i++) {
			const struct bisect_step *s = bisect_step_of(r, r->candidates[i]);
			fprintf(out, "  %s%s\n", r->candidates[i],
				s ? s->build_failed ? " (its build failed)" : " (undecided)" : "");
		}
	} else {
		const struct bisect_step *bad = bisect_step_of(r, r->first_bad);
		const struct bisect_step *good = r->last_good ? bisect_step_of(r, r->last_good) : NULL;
		fprintf(out, "first bad commit: %s%s%s%s (in %s)\n", r->first_bad,
			bad ? " (" : "", bad ? bad->describe : "", bad ? ")" : "", repo);
		if (st && bad && good && bad->run_id && good->run_id) {
			struct gate g = { 0 };
			struct run_header h = { 0 };
			char **variants = NULL, **workloads = NULL;
			size_t nv = 0, nw = 0;

			if (store_run_header(st, bad->run_id, &h) == 0 &&
			    store_variant_names(st, bad->run_id, &variants, &nv) == 0 &&
			    store_workload_names(st, bad->run_id, &workloads, &nw) == 0)
				gate_expand(&g, rule, 1, variants, nv, workloads, nw, h.baseline);
			for (size_t i = 0; i < g.n_j; i++) {
				double *x[4] = { NULL, NULL, NULL, NULL }, est;
				size_t n[4];
				struct interval ci;
				struct boot_opts bo = { .conf = rule->confidence, .seed = 24 };
				int mean = rule->statistic == STAT_MEAN;
				double p = rule->statistic == STAT_P0 ? 0 : rule->statistic == STAT_P80 ?
					   0.8 : rule->statistic == STAT_P99 ? 0.99 : 0.5;
				char e[32], lo[32], hi[32];

				if (values_of(st, good->run_id, rule->metric, g.j[i].workload,
					      g.j[i].variant, &x[0], &n[0], &x[1], &n[1]) < 0 ||
				    values_of(st, bad->run_id, rule->metric, g.j[i].workload,
					      g.j[i].variant, &x[2], &n[2], &x[3], &n[3]) < 0 ||
				    stats_dilation_change((const double *const *)x, n,
							  mean ? STATK_MEAN : STATK_QUANTILE, p, &bo,
							  &est, &ci) < 0) {
					fprintf(out, "  %s, %s: no values to compare\n", g.j[i].workload,
						g.j[i].variant);
				} else {
					fmt_pct(e, sizeof(e), est);
					fmt_pct(lo, sizeof(lo), ci.lo);
					fmt_pct(hi, sizeof(hi), ci.hi);
					fprintf(out, "  %s, %s, %s: the dilation at it is %s points from "
						"the last good %s's, %g %% interval [%s, %s]\n",
						g.j[i].workload, g.j[i].variant, rule->metric, e,
						good->describe, 100 * rule->confidence,
						ci.has_ci ? lo : "-", ci.has_ci ? hi : "-");
				}
				for (int k = 0; k < 4; k++)
					free(x[k]);
			}
			gate_release(&g);
			run_header_release(&h);
			argv_free(variants);
			argv_free(workloads);
		}
	}
	fprintf(out, "cost: %zu commits measured (%zu stored before), %lld runs\n", measured,
		reused, (long long)r->runs);
	return 0;
}
