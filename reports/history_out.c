/*
 * history_out.c - the writers of a study's history (history.h): text,
 * Markdown, CSV, JSON and HTML (one inline SVG plot per series).  They
 * format the history; every number is history_build()'s.
 */
#include "history.h"
#include "fmt.h"
#include "lib/json.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *verdict_word(const struct history_point *p)
{
	if (!p->ok || !p->tested)
		return "untested";
	return p->verdict == DECIDE_ABOVE ? "above" : p->verdict == DECIDE_BELOW ? "below" : "~";
}

static const char *run_label(const struct history_run *r)
{
	return r->label ? r->label : "";
}

/* The label for a table: a commit's id as a label (perturb bisect's) cut
 * to 12 digits, as git abbreviates it. */
static char *table_label(const struct history_run *r)
{
	if (r->label && r->commit && !strcmp(r->label, r->commit))
		return xstrndup(r->label, 12);
	return fmt_text_dup(run_label(r));
}

/* The change point of s whose revision is where run k's is, or NULL. */
static const struct changepoint *cp_at_run(const struct history *h,
					   const struct history_series *s, size_t k)
{
	for (size_t i = 0; i < s->cps.n; i++)
		if (s->cp_rev[s->cps.cp[i].index] == h->runs[k].rev)
			return &s->cps.cp[i];
	return NULL;
}

/* "+12.34 % [+10.00, +14.50]": a change point's change, its interval. */
static void cp_change(char *buf, size_t len, const struct changepoint *c)
{
	char a[24], lo[24], hi[24];

	fmt_pct(a, sizeof(a), c->pct);
	if (!c->ci.has_ci) {
		snprintf(buf, len, "%s %%", a);
		return;
	}
	fmt_pct(lo, sizeof(lo), c->ci.lo);
	fmt_pct(hi, sizeof(hi), c->ci.hi);
	snprintf(buf, len, "%s %% [%s, %s]", a, lo, hi);
}

/* The dilation a ratio of medians is, in %. */
static double ratio_pct(double r)
{
	return 100.0 * (r - 1.0);
}

static void head_line(const struct history *h, char *buf, size_t len)
{
	char lvl[16];

	fmt_level(lvl, sizeof(lvl), h->confidence);
	snprintf(buf, len, "%zu runs of study '%s', %zu revisions in %s order%s%s; dilation of "
		 "the %s against the baseline with its %s %% interval (perturb report's)",
		 h->n_runs, h->study, h->n_revs, h->order, h->repo ? " of " : "",
		 h->repo ? h->repo : "", h->statistic, lvl);
}

void history_cp_sentence(const struct history *h, const struct history_series *s,
			 const struct changepoint *c, char *buf, size_t len)
{
	char ch[128], p[16], b[32], a[32];

	cp_change(ch, sizeof(ch), c);
	fmt_p(p, sizeof(p), c->p);
	fmt_pct(b, sizeof(b), ratio_pct(c->median_before));
	fmt_pct(a, sizeof(a), ratio_pct(c->median_after));
	snprintf(buf, len, "between %s and %s: dilation %s %% -> %s %% (medians of the runs' "
		 "ratios to their baseline), change %s, p %s", history_cp_before(h, s, c),
		 history_cp_at(h, s, c), b, a, ch, p);
}

static void cp_none(const struct history_series *s, char *buf, size_t len)
{
	if (s->cps.reason)
		snprintf(buf, len, "no change point searched: %s", s->cps.reason);
	else if (s->cps.dropped_small)
		snprintf(buf, len, "no change point (E-divisive, level %g; %zu significant change%s "
			 "below --min-change dropped)", s->cps.sig_each, s->cps.dropped_small,
			 s->cps.dropped_small == 1 ? "" : "s");
	else
		snprintf(buf, len, "no change point (E-divisive, level %g)", s->cps.sig_each);
}

static void write_text(const struct history *h, FILE *out, int md)
{
	char line[1024], pct[32], lo[32], hi[32];

	head_line(h, line, sizeof(line));
	if (md) {
		fputs("# History of ", out);
		fmt_markdown(out, h->study);
		fputs("\n\n", out);
		fmt_markdown(out, line);
		fputs(".\n", out);
	} else {
		fmt_text(out, line);
		fputs("\n", out);
	}
	for (size_t i = 0; i < h->n_series; i++) {
		const struct history_series *s = &h->series[i];
		char *title = xasprintf("%s, %s, %s%s%s%s", s->workload, s->variant, s->metric,
					*s->unit ? " (" : "", s->unit, *s->unit ? ")" : "");
		if (md) {
			fputs("\n## ", out);
			fmt_markdown(out, title);
			fputs("\n\n| run | revision | label | n | value | dilation % | interval | verdict |"
			      "\n|---:|---|---|---:|---:|---:|---|---|\n", out);
		} else {
			fputs("\n", out);
			fmt_text(out, title);
			fprintf(out, "\n  %6s  %-20s  %-12s  %4s  %12s  %9s  %-20s  %s\n", "run",
				"revision", "label", "n", "value", "dilation%", "interval", "verdict");
		}
		free(title);
		for (size_t k = 0; k < s->n_pts; k++) {
			const struct history_point *p = &s->pts[k];
			const struct history_run *r = &h->runs[p->run];
			char val[48], ci[80];
			fmt_value(val, sizeof(val), p->value);
			fmt_pct(pct, sizeof(pct), p->pct);
			if (p->ok && p->ci.has_ci) {
				fmt_pct(lo, sizeof(lo), p->ci.lo);
				fmt_pct(hi, sizeof(hi), p->ci.hi);
				snprintf(ci, sizeof(ci), "[%s, %s]", lo, hi);
			} else {
				snprintf(ci, sizeof(ci), "-");
			}
			if (md) {
				fprintf(out, "| %lld | ", (long long)r->id);
				fmt_markdown(out, h->revs[r->rev]);
				fputs(" | ", out);
				{
					char *lab = table_label(r);
					fmt_markdown(out, lab);
					free(lab);
				}
				fprintf(out, " | %zu | %s | %s | %s | %s%s |\n", p->n, val, pct, ci,
					verdict_word(p), cp_at_run(h, s, p->run) &&
					(!k || h->runs[s->pts[k - 1].run].rev != r->rev) ?
					" (change point)" : "");
			} else {
				char *rev = fmt_text_dup(h->revs[r->rev]), *lab = table_label(r);
				fprintf(out, "  %6lld  %-20s  %-12s  %4zu  %12s  %9s  %-20s  %s%s\n",
					(long long)r->id, rev, lab, p->n, val, pct, ci, verdict_word(p),
					cp_at_run(h, s, p->run) &&
					(!k || h->runs[s->pts[k - 1].run].rev != r->rev) ?
					"  <- change point" : "");
				free(rev);
				free(lab);
			}
		}
		if (md)
			fputs("\n", out);
		if (!s->cps.n) {
			cp_none(s, line, sizeof(line));
			fputs(md ? "" : "  ", out);
			md ? fmt_markdown(out, line) : fmt_text(out, line);
			fputs("\n", out);
		}
		for (size_t c = 0; c < s->cps.n; c++) {
			history_cp_sentence(h, s, &s->cps.cp[c], line, sizeof(line));
			fputs(md ? "- change point " : "  change point ", out);
			md ? fmt_markdown(out, line) : fmt_text(out, line);
			fputs("\n", out);
		}
	}
	if (h->n_series && h->series[0].cps.method) {
		fputs(md ? "\n" : "\n", out);
		snprintf(line, sizeof(line), "Change points: %s.", h->series[0].cps.method);
		md ? fmt_markdown(out, line) : fmt_text(out, line);
		fputs("\n", out);
	}
}

/* ",NUMBER", or "," when v is not finite */
static void csv_num(FILE *out, double v)
{
	fputc(',', out);
	fmt_csv_num(out, v);
}

static void write_csv(const struct history *h, FILE *out)
{
	fputs("study,workload,variant,metric,unit,run_id,revision,label,commit,n,statistic,value,"
	      "dilation_pct,ci_lo,ci_hi,level,verdict,changepoint_p\n", out);
	for (size_t i = 0; i < h->n_series; i++) {
		const struct history_series *s = &h->series[i];
		for (size_t k = 0; k < s->n_pts; k++) {
			const struct history_point *p = &s->pts[k];
			const struct history_run *r = &h->runs[p->run];
			const struct changepoint *c = cp_at_run(h, s, p->run);
			const char *f[] = { h->study, s->workload, s->variant, s->metric, s->unit };
			for (size_t j = 0; j < ARRAY_SIZE(f); j++) {
				if (j)
					fputc(',', out);
				fmt_csv(out, f[j]);
			}
			fprintf(out, ",%lld,", (long long)r->id);
			fmt_csv(out, h->revs[r->rev]);
			fputc(',', out);
			fmt_csv(out, run_label(r));
			fprintf(out, ",%s,%zu,%s", r->commit ? r->commit : "", p->n, h->statistic);
			csv_num(out, p->value);
			csv_num(out, p->pct);
			csv_num(out, p->ok && p->ci.has_ci ? p->ci.lo : NAN);
			csv_num(out, p->ok && p->ci.has_ci ? p->ci.hi : NAN);
			csv_num(out, p->ok && p->ci.has_ci ? p->ci.level : NAN);
			fprintf(out, ",%s", verdict_word(p));
			csv_num(out, c ? c->p : NAN);
			fputc('\n', out);
		}
	}
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *json_of(const struct history *h)
{
	json_t *root = json_object(), *runs = json_array(), *series = json_array();

	json_object_set_new(root, "study", json_text(h->study));
	json_object_set_new(root, "order", json_text(h->order));
	json_object_set_new(root, "repository", json_text(h->repo));
	json_object_set_new(root, "statistic", json_text(h->statistic));
	json_object_set_new(root, "confidence", json_real(h->confidence));
	for (size_t k = 0; k < h->n_runs; k++) {
		const struct history_run *r = &h->runs[k];
		json_t *o = json_object();
		json_object_set_new(o, "run_id", json_integer(r->id));
		json_object_set_new(o, "revision", json_text(h->revs[r->rev]));
		json_object_set_new(o, "label", json_text(r->label));
		json_object_set_new(o, "commit", json_text(r->commit));
		json_object_set_new(o, "started", json_text(r->started));
		json_array_append_new(runs, o);
	}
	json_object_set_new(root, "runs", runs);
	for (size_t i = 0; i < h->n_series; i++) {
		const struct history_series *s = &h->series[i];
		json_t *o = json_object(), *pts = json_array(), *cps = json_array();
		json_object_set_new(o, "workload", json_text(s->workload));
		json_object_set_new(o, "variant", json_text(s->variant));
		json_object_set_new(o, "metric", json_text(s->metric));
		json_object_set_new(o, "unit", json_text(s->unit));
		for (size_t k = 0; k < s->n_pts; k++) {
			const struct history_point *p = &s->pts[k];
			json_t *q = json_object();
			json_object_set_new(q, "run_id", json_integer(h->runs[p->run].id));
			json_object_set_new(q, "n", json_integer((json_int_t)p->n));
			json_object_set_new(q, "value", num(p->value));
			json_object_set_new(q, "dilation_pct", num(p->pct));
			json_object_set_new(q, "ci_lo", num(p->ok && p->ci.has_ci ? p->ci.lo : NAN));
			json_object_set_new(q, "ci_hi", num(p->ok && p->ci.has_ci ? p->ci.hi : NAN));
			json_object_set_new(q, "level", num(p->ok && p->ci.has_ci ? p->ci.level : NAN));
			json_object_set_new(q, "verdict", json_text(verdict_word(p)));
			json_object_set_new(q, "reason", json_text(p->ok ? NULL : p->reason));
			json_array_append_new(pts, q);
		}
		json_object_set_new(o, "points", pts);
		for (size_t c = 0; c < s->cps.n; c++) {
			const struct changepoint *cp = &s->cps.cp[c];
			json_t *q = json_object();
			json_object_set_new(q, "before", json_text(history_cp_before(h, s, cp)));
			json_object_set_new(q, "at", json_text(history_cp_at(h, s, cp)));
			json_object_set_new(q, "dilation_before_pct", num(ratio_pct(cp->median_before)));
			json_object_set_new(q, "dilation_after_pct", num(ratio_pct(cp->median_after)));
			json_object_set_new(q, "change_pct", num(cp->pct));
			json_object_set_new(q, "change_ci_lo", num(cp->ci.has_ci ? cp->ci.lo : NAN));
			json_object_set_new(q, "change_ci_hi", num(cp->ci.has_ci ? cp->ci.hi : NAN));
			json_object_set_new(q, "p", num(cp->p));
			json_array_append_new(cps, q);
		}
		json_object_set_new(o, "changepoints", cps);
		json_object_set_new(o, "changepoint_reason", json_text(s->cps.reason));
		json_array_append_new(series, o);
	}
	json_object_set_new(root, "series", series);
	json_object_set_new(root, "changepoint_method",
			    json_text(h->n_series ? h->series[0].cps.method : NULL));
	return root;
}

static int write_json(const struct history *h, FILE *out)
{
	json_t *root = json_of(h);
	int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

	json_decref(root);
	fputc('\n', out);
	return rc;
}

/* ---- HTML: one SVG plot per series ---- */

#define HW 720
#define HH 300
#define HL 64
#define HR 20
#define HT 20
#define HB 40

static void esc(FILE *out, const char *s)
{
	fmt_html(out, s);
}

static void svg_series(const struct history *h, const struct history_series *s, FILE *out)
{
	double lo = INFINITY, hi = -INFINITY, pw = HW - HL - HR, ph = HH - HT - HB;
	size_t n = s->n_pts;
	int first = 1;

	for (size_t k = 0; k < n; k++) {
		const struct history_point *p = &s->pts[k];
		double v[3] = { p->pct, p->ci.has_ci ? p->ci.lo : NAN, p->ci.has_ci ? p->ci.hi : NAN };
		for (int j = 0; j < 3; j++)
			if (isfinite(v[j])) {
				lo = fmin(lo, v[j]);
				hi = fmax(hi, v[j]);
			}
	}
	if (!isfinite(lo)) {
		fputs("<p>no dilation to plot</p>\n", out);
		return;
	}
	lo = fmin(lo, 0);
	hi = fmax(hi, 0);
	if (hi - lo < 1e-9)
		hi = lo + 1;
#define X(k) (HL + (n > 1 ? pw * (double)(k) / (double)(n - 1) : pw / 2))
#define Y(v) (HT + ph * (hi - (v)) / (hi - lo))
	fprintf(out, "<svg class=history viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"role=img>\n", HW, HH, HW, HH);
	fprintf(out, "<rect x=%d y=%d width=%.0f height=%.0f fill=none stroke=#999/>\n", HL, HT,
		pw, ph);
	fprintf(out, "<line x1=%d x2=%d y1=%.1f y2=%.1f stroke=#999 stroke-dasharray=\"2 2\"/>\n",
		HL, HW - HR, Y(0), Y(0));
	/* the band: upper bounds left to right, lower bounds back */
	fputs("<path class=band fill=#0072b2 fill-opacity=0.2 stroke=none d=\"", out);
	for (size_t k = 0; k < n; k++)
		if (s->pts[k].ok && s->pts[k].ci.has_ci) {
			fprintf(out, "%s%.1f %.1f ", first ? "M" : "L", X(k), Y(s->pts[k].ci.hi));
			first = 0;
		}
	for (size_t k = n; k-- > 0;)
		if (s->pts[k].ok && s->pts[k].ci.has_ci)
			fprintf(out, "L%.1f %.1f ", X(k), Y(s->pts[k].ci.lo));
	fputs(first ? "\"/>\n" : "Z\"/>\n", out);
	for (size_t c = 0; c < s->cps.n; c++) {
		const struct changepoint *cp = &s->cps.cp[c];
		size_t at = 0;
		char line[512];
		while (at < n && h->runs[s->pts[at].run].rev != s->cp_rev[cp->index])
			at++;
		history_cp_sentence(h, s, cp, line, sizeof(line));
		fprintf(out, "<line class=changepoint x1=%.1f x2=%.1f y1=%d y2=%.0f stroke=#d55e00 "
			"stroke-width=2 stroke-dasharray=\"6 3\"><title>change point ", X(at - 0.5),
			X(at - 0.5), HT, HT + ph);
		esc(out, line);
		fputs("</title></line>\n", out);
	}
	for (size_t k = 0; k < n; k++) {
		const struct history_point *p = &s->pts[k];
		const struct history_run *r = &h->runs[p->run];
		char pct[32];
		if (!p->ok)
			continue;
		fmt_pct(pct, sizeof(pct), p->pct);
		fprintf(out, "<circle class=run cx=%.1f cy=%.1f r=3 fill=#000><title>run %lld, ",
			X(k), Y(p->pct), (long long)r->id);
		esc(out, h->revs[r->rev]);
		fprintf(out, ": %s %%</title></circle>\n", pct);
	}
	fprintf(out, "<text x=%d y=%.1f text-anchor=end class=tick>%.3g</text>\n"
		"<text x=%d y=%.1f text-anchor=end class=tick>%.3g</text>\n", HL - 4, Y(hi) + 4, hi,
		HL - 4, Y(lo) + 4, lo);
	fprintf(out, "<text x=%.0f y=%d text-anchor=middle class=axis>runs in %s order</text>\n"
		"<text x=14 y=%.0f transform=\"rotate(-90 14 %.0f)\" text-anchor=middle class=axis>"
		"dilation (%%)</text>\n</svg>\n", HL + pw / 2, HH - 8, h->order, HT + ph / 2,
		HT + ph / 2);
#undef X
#undef Y
}

static void write_html(const struct history *h, FILE *out)
{
	char line[1024];

	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>History of ", out);
	esc(out, h->study);
	fputs("</title><style>body{font-family:sans-serif;max-width:60em;margin:1em auto}"
	      "svg .tick{font-size:12px}svg .axis{font-size:14px}"
	      "table{border-collapse:collapse}td,th{padding:0 .6em;text-align:right}"
	      "</style></head><body>\n<h1>History of ", out);
	esc(out, h->study);
	head_line(h, line, sizeof(line));
	fputs("</h1>\n<p>", out);
	esc(out, line);
	fputs(". The band is the interval of each run's dilation, the points the runs, the "
	      "dashed red lines the change points.</p>\n", out);
	for (size_t i = 0; i < h->n_series; i++) {
		const struct history_series *s = &h->series[i];
		fputs("<h2>", out);
		esc(out, s->workload);
		fputs(", ", out);
		esc(out, s->variant);
		fputs(", ", out);
		esc(out, s->metric);
		fputs("</h2>\n", out);
		svg_series(h, s, out);
		fputs("<ul>\n", out);
		if (!s->cps.n) {
			cp_none(s, line, sizeof(line));
			fputs("<li>", out);
			esc(out, line);
			fputs("</li>\n", out);
		}
		for (size_t c = 0; c < s->cps.n; c++) {
			history_cp_sentence(h, s, &s->cps.cp[c], line, sizeof(line));
			fputs("<li>change point ", out);
			esc(out, line);
			fputs("</li>\n", out);
		}
		fputs("</ul>\n", out);
	}
	if (h->n_series && h->series[0].cps.method) {
		fputs("<p>Change points: ", out);
		esc(out, h->series[0].cps.method);
		fputs(".</p>\n", out);
	}
	fputs("</body></html>\n", out);
}

int history_write(const struct history *h, const char *format, FILE *out)
{
	if (!strcmp(format, "text"))
		write_text(h, out, 0);
	else if (!strcmp(format, "markdown"))
		write_text(h, out, 1);
	else if (!strcmp(format, "csv"))
		write_csv(h, out);
	else if (!strcmp(format, "json"))
		return write_json(h, out) < 0 ? -1 : 0;
	else if (!strcmp(format, "html"))
		write_html(h, out);
	else
		return -1;
	return 0;
}

size_t history_gate_write(const struct history *h, FILE *out)
{
	const struct history_run *newest = &h->runs[h->n_runs - 1];
	size_t fails = 0;
	char line[1024], pct[32], lo[32], hi[32];

	fprintf(out, "gate --history: run %lld against the %zu runs of study '", (long long)newest->id,
		h->n_runs - 1);
	fmt_text(out, h->study);
	fputs("' before it (time order): FAIL when it differs from them, more\n",
	      out);
	for (size_t i = 0; i < h->n_series; i++) {
		const struct history_series *s = &h->series[i];
		const struct changepoint *c = history_newest_change(h, s);
		const struct history_point *p = history_newest_point(h, s);
		int fail = c && isfinite(c->pct) && c->pct > 0;
		char *title = xasprintf("%s, %s, %s", s->workload, s->variant, s->metric);

		fails += fail;
		fputs(fail ? "FAIL  " : "PASS  ", out);
		fmt_text(out, title);
		free(title);
		if (c) {
			history_cp_sentence(h, s, c, line, sizeof(line));
			fprintf(out, ": change at the newest run %s", fail ? "" : "(a decrease) ");
			fmt_text(out, line);
			fputc('\n', out);
			continue;
		}
		if (!p || !p->ok) {
			fputs(": the newest run has no dilation of this series\n", out);
			continue;
		}
		fmt_pct(pct, sizeof(pct), p->pct);
		fmt_pct(lo, sizeof(lo), p->ci.lo);
		fmt_pct(hi, sizeof(hi), p->ci.hi);
		if (s->has_newest) {
			char pv[16], ch[32];
			fmt_p(pv, sizeof(pv), s->newest.p);
			fmt_pct(ch, sizeof(ch), s->newest.pct);
			snprintf(line, sizeof(line), "change %s %%, p %s over %zu revisions, level %g%s",
				 ch, pv, s->n_cp_rev, h->sig, s->newest.p <= h->sig ?
				 ", below --min-change" : "");
		} else {
			snprintf(line, sizeof(line), "%s", s->cps.reason ? s->cps.reason : "not tested");
		}
		fprintf(out, ": no change at the newest run (%s); its dilation %s %% [%s, %s]\n",
			line, pct, p->ci.has_ci ? lo : "-", p->ci.has_ci ? hi : "-");
	}
	return fails;
}
