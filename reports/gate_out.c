/* gate_out.c - the outputs of `perturb gate`; see gate_out.h */
#include "gate_out.h"
#include "fmt.h"
#include "lib/output.h"
#include "lib/util.h"
#include "stats/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const gate_verdict_names[] = { "PASS", "FAIL", "INCONCLUSIVE" };

static void gate_pct(char *buf, size_t len, double x)
{
	if (isfinite(x))
		snprintf(buf, len, "%+.2f%%", x);
	else
		snprintf(buf, len, "n/a");
}

int gate_fails(const struct gate_judgement *j, int strict)
{
	return j->verdict == GATE_FAIL ||
	       (j->verdict == GATE_INCONCLUSIVE && (strict || j->no_pct));
}

/* The DILATION column: "+1.23%", or without a percentage the difference
 * in the metric's unit, "+5 (no %)". */
static void gate_est(char *buf, size_t len, const struct gate_judgement *j, int shown)
{
	if (j->no_pct && isfinite(j->abs))
		snprintf(buf, len, "%+.4g (no %%)", j->abs);
	else
		gate_pct(buf, len, shown ? j->est : NAN);
}

/* Is j's interval at a level Holm's procedure raised above the rule's? */
static int holm_widened(const struct gate_judgement *j)
{
	return j->has_ci && fabs(j->level - j->rule->confidence) > 1e-9;
}

static void gate_interval(char *buf, size_t len, const struct gate_judgement *j)
{
	if (j->has_ci)
		snprintf(buf, len, "[%+.2f%%, %+.2f%%] @%.4g%%%s", j->lo, j->hi, 100 * j->level,
			 holm_widened(j) ? " Holm" : "");
	else
		snprintf(buf, len, "no interval");
}

/* The footnote of the " Holm" intervals, or NULL when there is none
 * (malloc'd). */
static char *holm_note(const struct gate_outcome *g)
{
	const struct gate_judgement *w = NULL;

	for (size_t i = 0; i < g->n && !w; i++)
		if (holm_widened(&g->j[i]))
			w = &g->j[i];
	if (!w)
		return NULL;
	return xasprintf("Holm: %zu judgements are made at once, so each interval is at a level "
			 "above the rule's %.4g %% (Holm, \"A simple sequentially rejective "
			 "multiple test procedure\", Scand. J. Statist. 6, 1979): wider than the "
			 "report's %.4g %% interval of the same dilation, so that the chance of any "
			 "wrong PASS or FAIL among them stays at %.4g %%.",
			 g->n, 100 * w->rule->confidence, 100 * w->rule->confidence,
			 100 * (1 - w->rule->confidence));
}

void gate_print(FILE *f, const struct gate_outcome *g)
{
	char est[32], iv[80], thr[32], *note;

	fprintf(f, "%-16s %-16s %-10s %-5s %9s  %-34s %8s  %s\n", "VARIANT", "WORKLOAD",
		"METRIC", "STAT", "DILATION", "INTERVAL", "MAX", "VERDICT");
	for (size_t i = 0; i < g->n; i++) {
		const struct gate_judgement *j = &g->j[i];
		gate_est(est, sizeof(est), j, j->has_ci || j->reason == NULL);
		gate_interval(iv, sizeof(iv), j);
		gate_pct(thr, sizeof(thr), j->thr);
		char *v = fmt_text_dup(j->variant), *w = fmt_text_dup(j->workload);
		char *m = fmt_text_dup(j->rule->metric);
		fprintf(f, "%-16s %-16s %-10s %-5s %9s  %-34s %8s  %s\n", v, w, m,
			statistic_name(j->rule->statistic), est, iv, thr,
			gate_verdict_names[j->verdict]);
		free(v);
		free(w);
		free(m);
	}
	if ((note = holm_note(g))) {
		fprintf(f, "\n");
		fmt_wrap(f, "", note, 100);
		free(note);
	}
	if (g->incomplete) {
		fprintf(f, "\n");
		fmt_wrap(f, "", g->incomplete, 100);
	}
}

double gate_runs_needed(size_t n, double est, double lo, double hi, double thr, double level,
			double power)
{
	double h = thr > est ? hi - est : est - lo, d = fabs(thr - est), za, k;

	if (!n || !isfinite(est) || !isfinite(lo) || !isfinite(hi) || !(h > 0) ||
	    !(level > 0 && level < 1) || !(power > 0 && power < 1))
		return NAN;
	if (d == 0)
		return INFINITY;
	/* stats_power_z(): the half-width h is za se_n, za the power formula's
	 * k at power 0.5 (z(0.5) = 0) */
	za = stats_power_z(1 - level, 0.5);
	k = stats_power_z(1 - level, power);
	return ceil((double)n * (h / d) * (h / d) * (k / za) * (k / za) - 1e-9);
}

char *gate_more_runs(const struct gate_judgement *j)
{
	double cap = (double)j->n * GATE_RUNS_CAP_FACTOR, need = j->runs_needed;

	if (isnan(need))
		return xstrdup("more runs are needed (there is no interval to estimate how many from)");
	if (need > cap)
		return xasprintf("it cannot be decided with fewer than %.0f runs a side (now %zu): "
				 "the dilation (%+.2f %%) is too close to the threshold (%+.2f %%) "
				 "for its spread", cap, j->n, j->est, j->thr);
	if (need <= (double)j->n)	/* the interval's own level: decided soon */
		need = (double)j->n + 1;
	return xasprintf("about %.0f more runs a side (%.0f in all, now %zu) would decide it with "
			 "%.0f %% probability if the dilation and its spread stay as measured "
			 "(n (half-width / distance to threshold)^2, scaled for power)",
			 need - (double)j->n, need, j->n, 100 * GATE_POWER);
}

static const char *const xml_subst[256] = {
	['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['"'] = "&quot;", ['\''] = "&apos;",
	['\n'] = "&#10;", ['\t'] = "&#9;",
};

/* XML 1.0 text: control bytes (not allowed in XML) shown by escape_bytes(). */
static void xml_escape(FILE *f, const char *s)
{
	escape_bytes(f, s, xml_subst);
}

char *gate_describe(const struct gate_judgement *j)
{
	char est[32], iv[80], thr[32];

	gate_est(est, sizeof(est), j, j->has_ci);
	gate_interval(iv, sizeof(iv), j);
	gate_pct(thr, sizeof(thr), j->thr);
	/* names from the database: shown, never obeyed by a terminal */
	char *v = fmt_text_dup(j->variant), *w = fmt_text_dup(j->workload);
	char *m = fmt_text_dup(j->rule->metric), *ret;
	if (j->no_pct)
		ret = xasprintf("%s on %s, %s %s: difference %s in the metric's unit; %s; a "
				"percentage threshold (%s) cannot judge it", v, w, m,
				statistic_name(j->rule->statistic), est, j->reason, thr);
	else if (!j->has_ci)
		ret = xasprintf("%s on %s, %s %s: no interval (%s); threshold %s", v, w, m,
				statistic_name(j->rule->statistic), j->reason, thr);
	else
		ret = xasprintf("%s on %s, %s %s: dilation %s, interval %s, threshold %s", v, w, m,
				statistic_name(j->rule->statistic), est, iv, thr);
	free(v);
	free(w);
	free(m);
	return ret;
}

static int write_junit(FILE *f, const void *ctx)
{
	const struct gate_outcome *g = ctx;
	size_t failures = 0, skipped = 0;

	/* INCONCLUSIVE is a failure with --strict, else skipped with its reason:
	 * never a passing testcase, so that a dashboard does not show it green. */
	for (size_t i = 0; i < g->n; i++) {
		if (gate_fails(&g->j[i], g->strict))
			failures++;
		else if (g->j[i].verdict == GATE_INCONCLUSIVE)
			skipped++;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"perturb gate\" tests=\"%zu\" failures=\"%zu\" "
		"skipped=\"%zu\">\n", g->n, failures, skipped);
	fprintf(f, "  <testsuite name=\"perturb gate run %lld\" tests=\"%zu\" failures=\"%zu\" "
		"errors=\"0\" skipped=\"%zu\">\n", (long long)g->run_id, g->n, failures, skipped);
	if (g->incomplete) {
		fputs("    <properties><property name=\"incomplete\" value=\"", f);
		xml_escape(f, g->incomplete);
		fputs("\"/></properties>\n", f);
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct gate_judgement *j = &g->j[i];
		char *what = gate_describe(j);
		fputs("    <testcase classname=\"perturb.gate.", f);
		xml_escape(f, j->workload);
		fputs("\" name=\"", f);
		xml_escape(f, j->variant);
		fputc(' ', f);
		xml_escape(f, j->rule->metric);
		fprintf(f, " %s\">\n", statistic_name(j->rule->statistic));
		if (gate_fails(j, g->strict)) {
			fprintf(f, "      <failure type=\"%s\" message=\"", gate_verdict_names[j->verdict]);
			xml_escape(f, what);
			fputs("\"/>\n", f);
		} else if (j->verdict == GATE_INCONCLUSIVE) {
			fputs("      <skipped message=\"the interval contains the threshold: ", f);
			xml_escape(f, what);
			fputs("\"/>\n", f);
		}
		fprintf(f, "      <system-out>%s: ", gate_verdict_names[j->verdict]);
		xml_escape(f, what);
		fputs("</system-out>\n    </testcase>\n", f);
		free(what);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return 0;
}

static int write_markdown(FILE *f, const void *ctx)
{
	const struct gate_outcome *g = ctx;
	size_t count[3] = { 0 }, failed = 0;
	char est[32], iv[80], thr[32], *note;

	for (size_t i = 0; i < g->n; i++) {
		count[g->j[i].verdict]++;
		failed += gate_fails(&g->j[i], g->strict);
	}
	fprintf(f, "## perturb gate: %s\n\n", failed ? "failed" : "passed");
	fprintf(f, "Run %lld: %zu passed, %zu failed, %zu inconclusive.\n\n",
		(long long)g->run_id, count[GATE_PASS], count[GATE_FAIL], count[GATE_INCONCLUSIVE]);
	if (g->incomplete) {
		fputs("**", f);
		fmt_markdown(f, g->incomplete);
		fputs(".**\n\n", f);
	}
	fprintf(f, "| Variant | Workload | Metric | Statistic | Dilation | Interval | Max | Verdict |\n");
	fprintf(f, "|---|---|---|---|--:|---|--:|---|\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct gate_judgement *j = &g->j[i];
		gate_est(est, sizeof(est), j, j->has_ci);
		gate_interval(iv, sizeof(iv), j);
		gate_pct(thr, sizeof(thr), j->thr);
		fputs("| ", f);
		fmt_markdown(f, j->variant);
		fputs(" | ", f);
		fmt_markdown(f, j->workload);
		fputs(" | ", f);
		fmt_markdown(f, j->rule->metric);
		fprintf(f, " | %s | %s | %s | %s | **%s** |\n", statistic_name(j->rule->statistic),
			est, iv, thr, gate_verdict_names[j->verdict]);
	}
	fprintf(f, "\nIntervals are confidence intervals of the dilation in %%, at the level "
		"shown.\n");
	if ((note = holm_note(g))) {
		fprintf(f, "\n%s\n", note);
		free(note);
	}
	return 0;
}

/* Write path as lib/output.h says.  -1 (printed) on error. */
static int write_output(const char *path, int (*fn)(FILE *, const void *), const void *ctx)
{
	struct output o;

	if (output_open(&o, path) < 0)
		return -1;
	fn(o.f, ctx);
	return output_close(&o);
}

int gate_write_junit(const char *path, const struct gate_outcome *o)
{
	return write_output(path, write_junit, o);
}

int gate_write_markdown(const char *path, const struct gate_outcome *o)
{
	return write_output(path, write_markdown, o);
}
