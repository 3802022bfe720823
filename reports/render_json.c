/*
 * render_json.c - the report as one JSON object, schema "perturb-report/2":
 * every field is described in docs/report-json.md and checked by the JSON
 * Schema docs/report-schema.json (the tests validate every JSON report
 * they render against it).  A change of a field is a change of those two
 * files, and of the golden files tests/golden/STUDY.json.
 *
 * Numbers that do not exist (NaN) are null.  Strings are encoded by jansson
 * (RFC 8259 escapes, UTF-8 checked: invalid bytes and C1 controls become
 * U+FFFD, lib/json.h); the
 * numbers and the layout (one result a line) are written here, where
 * jansson would print 17 digits and no line breaks.
 */
#include "report.h"
#include "lib/util.h"

#include "lib/json.h"
#include <math.h>
#include <string.h>

/*
 * s as a JSON string.  jansson encodes it (RFC 8259 escapes: quote,
 * backslash, every control byte); json_text() (lib/json.h) decides what
 * text that is not UTF-8 (a foreign database) becomes.
 */
static void jstr(FILE *out, const char *s)
{
	json_t *v = json_text(s ? s : "");

	if (json_dumpf(v, out, JSON_ENCODE_ANY) < 0)
		fputs("\"\"", out);	/* a write error: the caller's ferror() sees it */
	json_decref(v);
}

/* The stored machine description (machine_probe()'s JSON object) as
 * jansson reads it back, or null when it is not a JSON object: a foreign
 * database's text is never copied raw.  Written with jansson's default
 * separators (", " and ": "), in the stored order. */
static void jmachine(FILE *out, const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	if (!json_is_object(v) || json_dumpf(v, out, JSON_PRESERVE_ORDER) < 0)
		fputs("null", out);
	json_decref(v);
}

static void jnum(FILE *out, double v)
{
	if (!isfinite(v))
		fputs("null", out);
	else
		fprintf(out, "%.15g", v);
}

static void jkey(FILE *out, const char *k)
{
	jstr(out, k);
	fputc(':', out);
}

static void jkv_num(FILE *out, const char *k, double v)
{
	jkey(out, k);
	jnum(out, v);
	fputc(',', out);
}

static void jkv_str(FILE *out, const char *k, const char *v)
{
	jkey(out, k);
	if (v)
		jstr(out, v);
	else
		fputs("null", out);
	fputc(',', out);
}

/* "ci": [lo, hi] (or null), "level", "method" / "reason"; no trailing comma
 * handling: ends with a comma. */
/* jarray()'s layout: inline, each element on a line, and the ] too. */
enum { JA_INLINE, JA_LINES, JA_LINES_END };

/* "key":[e0,e1,...]: item(out, ctx, i) writes element i of n. */
static void jarray(FILE *out, const char *key, size_t n, int layout,
		   void (*item)(FILE *out, const void *ctx, size_t i), const void *ctx)
{
	jkey(out, key);
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? "," : "", out);
		fputs(layout != JA_INLINE ? "\n" : "", out);
		item(out, ctx, i);
	}
	fputs(layout == JA_LINES_END ? "\n]" : "]", out);
}

static void jarray_num(FILE *out, const void *ctx, size_t i)
{
	jnum(out, ((const double *)ctx)[i]);
}

/* A setting as the user wrote it (%g: 99.9, not 99.900000000000006). */
static void jarray_g(FILE *out, const void *ctx, size_t i)
{
	fprintf(out, "%g", ((const double *)ctx)[i]);
}

static void jarray_int(FILE *out, const void *ctx, size_t i)
{
	fprintf(out, "%d", ((const int *)ctx)[i]);
}

static void jinterval(FILE *out, const char *key, const struct interval *iv, int with_meta)
{
	jkey(out, key);
	if (iv->has_ci) {
		fputc('[', out);
		jnum(out, iv->lo);
		fputc(',', out);
		jnum(out, iv->hi);
		fputs("],", out);
	} else {
		fputs("null,", out);
	}
	if (!with_meta)
		return;
	if (iv->has_ci) {
		jkv_num(out, "level", iv->level);
		jkv_str(out, "method", iv->method);
	} else {
		jkv_str(out, "reason", iv->reason ? iv->reason : "no interval");
	}
}

/* "verdict": the decisive dilation's interval at its Holm level (report.h,
 * struct report_verdict). */
static void jverdict(const struct report_model *m, FILE *out, const struct report_series *s)
{
	static const char *const names[] = {
		[DECIDE_UNDECIDED] = "undecided", [DECIDE_ABOVE] = "above",
		[DECIDE_BELOW] = "below",
	};
	const struct report_verdict *v = &s->verdict;
	char stat[32];

	report_stat_name(m, stat, sizeof(stat));
	jkey(out, "verdict");
	fputc('{', out);
	jkv_str(out, "statistic", stat);
	fprintf(out, "\"tested\":%s,", v->tested ? "true" : "false");
	if (v->tested) {
		jkv_str(out, "decision", names[v->v]);
		jinterval(out, "ci", &v->ci, 1);
	} else {
		jkv_str(out, "reason", v->reason ? v->reason : "no interval of the dilation");
	}
	jkv_num(out, "alpha", m->alpha);
	fprintf(out, "\"significant\":%s},", s->significant ? "true" : "false");
}

static void jdilation(FILE *out, const char *key, const struct report_dilation *d)
{
	jkey(out, key);
	fputc('{', out);
	if (!d->ok) {
		jkv_str(out, "reason", d->reason);
		fputs("\"abs\":null,\"pct\":null,\"ci\":null}", out);
		return;
	}
	jkv_num(out, "abs", d->d.abs);
	jkv_num(out, "pct", d->d.pct);
	fprintf(out, "\"no_pct\":%s,", d->no_pct ? "true" : "false");
	jkv_num(out, "base_lo", d->base_lo);
	jkv_num(out, "base_hi", d->base_hi);
	jkv_num(out, "base", d->d.base);
	jkv_num(out, "value", d->d.var);
	jinterval(out, "ci_abs", &d->d.ci_abs, 0);
	jinterval(out, "ci", &d->d.ci_pct, 1);
	if (d->paired) {
		const struct interval *u = &d->unpaired_ci_pct, *p = &d->d.ci_pct;
		fprintf(out, "\"paired\":{\"pairs\":%zu,", d->pairs);
		jinterval(out, "unpaired_ci", u, 0);
		jkv_num(out, "width_ratio", p->has_ci && u->has_ci && u->hi > u->lo ?
			(p->hi - p->lo) / (u->hi - u->lo) : NAN);
		fprintf(out, "\"analysis\":\"%s\"},", d->duet ? "duet" : "paired");
	}
	fputs("\"unit_ci\":\"%\"}", out);
}

/* The A/A resolution of every primary group (report.h, struct report_noise). */
static void jnoise(const struct report_model *m, FILE *out)
{
	char buf[1024];
	int first = 1;

	fputs("\"noise\":[", out);
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (!report_primary_metric(g->metric))
			continue;
		fputs(first ? "\n{" : ",\n{", out);
		first = 0;
		jkv_str(out, "workload", g->workload);
		jkv_str(out, "metric", g->metric);
		jkv_num(out, "resolution_pct", g->noise.resolution_pct);
		if (!g->noise.ok)
			jkv_str(out, "reason", g->noise.reason);
		fprintf(out, "\"half\":%zu,\"paired\":%s,", g->noise.half,
			g->noise.paired ? "true" : "false");
		report_noise_verdict(m, g, buf, sizeof(buf));
		jkey(out, "verdict");
		jstr(out, buf);
		fputc('}', out);
	}
	fputs("\n],", out);
}

/* One of the quieter metrics (report.h, struct report_quiet). */
static void jquiet(FILE *out, const void *ctx, size_t i)
{
	const struct report_quiet *q = (const struct report_quiet *)ctx + i;
	char buf[512];

	fputc('{', out);
	jkv_str(out, "workload", q->workload);
	jkv_str(out, "variant", q->variant);
	jkv_num(out, "wall_half_width_pct", q->wall_hw);
	jkv_str(out, "metric", q->alt);
	jkv_num(out, "half_width_pct", q->alt_hw);
	fprintf(out, "\"candidates\":%zu,", q->candidates);
	report_quiet_line(q, buf, sizeof(buf));
	jkey(out, "line");
	jstr(out, buf);
	fputc('}', out);
}

static void jtest(FILE *out, const char *name, const struct test_result *t)
{
	jkv_str(out, "name", name);
	jkv_num(out, "statistic", t->valid ? t->statistic : NAN);
	jkv_num(out, "p", t->valid ? t->p : NAN);
	fprintf(out, "\"exact\":%s,", t->valid && t->exact ? "true" : "false");
	if (!t->valid)
		jkv_str(out, "reason", t->reason ? t->reason : "not computed");
	jkey(out, "method");
	jstr(out, t->method ? t->method : name);
}

/* "percentiles" (ci = 0: the values) or "percentile_ci" (ci = 1: the
 * order-statistic CIs): an object keyed by each percentile, with a comma. */
static void jpercentiles(FILE *out, const struct report_model *m, const struct report_series *s,
			 int ci)
{
	char k[32];

	jkey(out, ci ? "percentile_ci" : "percentiles");
	fputc('{', out);
	for (size_t i = 0; i < m->n_percentiles; i++) {
		snprintf(k, sizeof(k), "%g", m->percentiles[i]);
		if (i)
			fputc(',', out);
		jkey(out, k);
		if (!ci) {
			jnum(out, s->pct[i]);
			continue;
		}
		fputc('{', out);
		jinterval(out, "ci", &s->pct_ci[i], 1);
		fprintf(out, "\"p\":%g}", m->percentiles[i]);
	}
	fputs("},", out);
}

static void series(const struct report_model *m, const struct report_group *g,
		   const struct report_series *s, FILE *out)
{
	char k[32];

	fputc('{', out);
	jkv_str(out, "workload", g->workload);
	jkv_str(out, "metric", g->metric);
	jkv_str(out, "unit", g->unit);
	jkv_str(out, "variant", s->variant);
	jkv_str(out, "timebase", s->virtual_time ? "virtual" : "real");
	fprintf(out, "\"baseline\":%s,\"micro\":%s,\"primary\":%s,",
		s->is_baseline ? "true" : "false", g->micro ? "true" : "false",
		g->primary ? "true" : "false");
	fprintf(out, "\"n\":%zu,\"failed\":%d,", s->n, s->failed);
	if (s->has_summary) {
		jkv_num(out, "mean", s->sum.mean);
		jkv_num(out, "variance", s->sum.var);
		jkv_num(out, "sd", s->sum.sd);
		jkv_num(out, "cv", s->sum.cv);
		jkv_num(out, "min", s->sum.min);
		jkv_num(out, "max", s->sum.max);
		jkv_num(out, "median", s->sum.median);
		jkv_num(out, "mad", s->sum.mad);
		jkv_num(out, "iqr", s->sum.iqr);
	} else {
		fputs("\"mean\":null,\"variance\":null,\"sd\":null,\"min\":null,\"max\":null,", out);
	}
	jpercentiles(out, m, s, 0);
	jpercentiles(out, m, s, 1);
	fprintf(out, "\"outliers\":{\"tukey\":%zu,\"mad\":%zu,\"dropped\":0},",
		s->outliers_tukey, s->outliers_mad);
	if (s->has_blocks) {
		const struct nested_result *r = &s->nested;
		jkey(out, "blocks");
		fprintf(out, "{\"n\":%zu,\"runs\":%zu,", r->n_groups, r->n);
		jkv_num(out, "mean_of_means", r->mean_of_means);
		jinterval(out, "mean_ci", &r->mean_ci, 0);
		if (r->mean_ci.has_ci)
			jkv_num(out, "level", r->mean_ci.level);
		else
			jkv_str(out, "mean_ci_reason", r->mean_ci.reason ? r->mean_ci.reason : "none");
		jkv_num(out, "var_within", r->var_within);
		jkv_num(out, "var_between", r->var_between);
		jkv_num(out, "between_share", r->icc);
		jkv_num(out, "f", r->f);
		jkv_num(out, "p", r->p_value);
		/* runs per boot, sized from this study (report.h) */
		jkey(out, "runs_per_boot");
		fputc('{', out);
		jkv_num(out, "used", s->rpb.used);
		if (s->rpb.optimal)
			fprintf(out, "\"optimal\":%u,", s->rpb.optimal);
		else
			fputs("\"optimal\":null,", out);
		jkv_num(out, "boot_cost_s", s->rpb.boot_cost_s);
		jkv_num(out, "run_cost_s", s->rpb.run_cost_s);
		fprintf(out, "\"no_boot_effect\":%s,", s->rpb.no_boot_effect ? "true" : "false");
		jkv_str(out, "reason", s->rpb.optimal ? NULL : s->rpb.reason);
		fputs("\"method\":\"r = ceil(sqrt(c_boot var_within / (c_run var_between))) "
		      "(Kalibera & Jones 2013)\"},", out);
		fputs("\"method\":\"one-way random-effects ANOVA (Kalibera & Jones 2013)\"},", out);
	}
	if (s->has_nodes) {
		const struct nested3_result *r = &s->nested3;
		jkey(out, "nodes");
		fprintf(out, "{\"n\":%zu,\"boots\":%zu,\"runs\":%zu,", r->n_nodes,
			isnan(r->var_boot) ? r->n_nodes : r->n_boots, r->n);
		jkv_num(out, "var_node", r->var_node);
		jkv_num(out, "var_boot", r->var_boot);
		jkv_num(out, "var_within", r->var_within);
		jkv_num(out, "share_node", r->share_node);
		jkv_num(out, "share_boot", r->share_boot);
		jkv_num(out, "share_within", r->share_within);
		if (s->node_dil_pct) {
			jkey(out, "mean_dilation_pct");
			fputc('{', out);
			for (size_t j = 0, first = 1; j < m->n_nodes; j++) {
				if (isnan(s->node_dil_pct[j]))
					continue;
				fputs(first ? "" : ",", out);
				first = 0;
				jkey(out, m->node_names[j]);
				jnum(out, s->node_dil_pct[j]);
			}
			fputs("},", out);
			jkv_num(out, "spread_sd_pct", s->node_dil_sd);
		}
		fputs("\"method\":\"nested random-effects ANOVA, nodes > boots > runs "
		      "(Sokal & Rohlf 1995)\"},", out);
	}
	if (s->compared) {
		jkey(out, "dilation");
		fputc('{', out);
		jdilation(out, "mean", &s->mean_dil);
		for (size_t i = 0; i < m->n_percentiles; i++) {
			fputc(',', out);
			report_pct_label(k, sizeof(k), m->percentiles[i]);
			jdilation(out, k, &s->pct_dil[i]);
		}
		fputs("},", out);
		/* the noise floor (report.h): mean MDE at power mde_power, p50 resolution */
		jkv_num(out, "mde_pct", s->has_mde ? s->mde_pct : NAN);
		jkv_num(out, "mde_power", REPORT_MDE_POWER);
		if (!s->has_mde)
			jkv_str(out, "mde_reason", s->mde_reason);
		jkv_num(out, "p50_resolution_pct", s->p50_resolution_pct);
		jkey(out, "test");
		fputc('{', out);
		jtest(out, s->rank_test, &s->mw);
		fputs("},", out);
		jverdict(m, out, s);
		jkey(out, "tests");
		fputc('{', out);
		jkey(out, "kolmogorov-smirnov");
		fputc('{', out);
		jtest(out, "kolmogorov-smirnov", &s->ks);
		fputs("},", out);
		jkey(out, "hodges-lehmann");
		fputc('{', out);
		if (s->has_hl) {
			jkv_num(out, "ratio", s->hl.ratio);
			jinterval(out, "ci", &s->hl.ci, 1);
			fputs("\"of\":\"variant/baseline\"", out);
		} else {
			fputs("\"ratio\":null,\"ci\":null,", out);
			jkey(out, "reason");
			jstr(out, s->hl_reason);
		}
		fputs("}},", out);
	} else if (!s->is_baseline) {
		jkv_str(out, "no_comparison_reason", s->no_compare_reason);
	}
	jkey(out, "ecdf");
	fprintf(out, "{\"exact\":%s,", s->ecdf_exact ? "true" : "false");
	jarray(out, "x", s->n_ecdf, JA_INLINE, jarray_num, s->ecdf_x);
	fputc(',', out);
	jarray(out, "p", s->n_ecdf, JA_INLINE, jarray_num, s->ecdf_p);
	fputs("}}", out);
}

static void tracer(FILE *out, const void *ctx, size_t i)
{
	const struct report_tracer *t = (const struct report_tracer *)ctx + i;

	fputc('{', out);
	jkv_str(out, "workload", t->workload);
	jkv_str(out, "variant", t->variant);
	fprintf(out, "\"baseline\":%s,\"n\":%zu,", t->is_baseline ? "true" : "false", t->n);
	jkey(out, "events");
	fputc('{', out);
	jkv_num(out, "median", t->events_median);
	jkey(out, "mean");
	jnum(out, t->events_mean);
	fprintf(out, "},\"lost\":{\"n\":%zu,\"runs\":%zu,", t->lost_n, t->lost_runs);
	jkey(out, "median");
	jnum(out, t->lost_median);
	fprintf(out, "},\"lost_events\":%s,", t->lost_runs ? "true" : "false");
	fprintf(out, "\"bytes\":{\"n\":%zu,", t->bytes_n);
	jkey(out, "median");
	jnum(out, t->bytes_median);
	fputs("}}", out);
}

/* ---- cost per event and overhead compensation (reports/calib.h) ---- */

static void jcalib(FILE *out, const void *ctx, size_t i)
{
	const struct report_calib *r = (const struct report_calib *)ctx + i;

	fputc('{', out);
	jkv_str(out, "tracer", r->tracer);
	jkv_str(out, "attach", r->attach);
	jkv_str(out, "variant", r->variant);
	jkv_str(out, "workload", r->workload);
	jkv_str(out, "metric", r->metric);
	jkv_num(out, "hits", r->workload ? r->hits : NAN);
	jkv_str(out, "hits_per", r->workload ? (r->hits_per_run ? "run" : "op") : NULL);
	jkv_num(out, "events_per_run", r->events_mean);
	jkv_num(out, "hits_per_run", r->run_hits);
	jkv_num(out, "events_per_hit", r->events_per_hit);
	if (r->eph_reason)
		jkv_str(out, "events_per_hit_reason", r->eph_reason);
	if (!r->ok) {
		fputs("\"ns\":null,\"ci\":null,", out);
		jkv_str(out, "reason", r->reason);
	} else {
		jkv_num(out, "ns_per_hit", r->ns_per_hit);
		jkv_num(out, "ns", r->cost_ns);
		jinterval(out, "ci", &r->ci, 1);
		fprintf(out, "\"paired\":%s,", r->paired ? "true" : "false");
	}
	jkey(out, "published");
	if (r->published) {
		fputc('{', out);
		jkv_str(out, "source", r->published->source);
		jkv_str(out, "figure", r->published->figure);
		jkv_str(out, "citation", r->published->citation);
		jkey(out, "ns");
		jnum(out, report_published_ns(r->published));
		fputs("}}", out);
	} else {
		fputs("null}", out);
	}
}

static void jcomp(FILE *out, const void *ctx, size_t i)
{
	const struct report_comp *r = (const struct report_comp *)ctx + i;

	fputc('{', out);
	jkv_str(out, "workload", r->workload);
	jkv_str(out, "variant", r->variant);
	jkv_str(out, "tracer", r->tracer);
	jkv_str(out, "calibration", r->calib_workload);
	jkv_num(out, "events_per_run", r->events_mean);
	if (!r->ok) {
		jkey(out, "reason");
		jstr(out, r->reason);
		fputc('}', out);
		return;
	}
	jkv_num(out, "ns_per_event", r->cost_ns);
	jkv_num(out, "measured_ns", r->measured_ns);
	jinterval(out, "measured_ci", &r->measured_ci, 0);
	jkv_num(out, "predicted_ns", r->predicted_ns);
	jinterval(out, "predicted_ci", &r->predicted_ci, 0);
	jkv_num(out, "explained_pct", r->share_pct);
	jinterval(out, "explained_ci", &r->share_ci, 0);
	jkv_num(out, "baseline_ns", r->base_ns);
	jkv_num(out, "compensated_ns", r->compensated_ns);
	jinterval(out, "compensated_ci", &r->compensated_ci, 0);
	fprintf(out, "\"fits\":%s}", !r->compensated_ci.has_ci ? "null" :
		r->fits ? "true" : "false");
}

static void point(FILE *out, const void *ctx, size_t i)
{
	const struct report_curve_point *p = (const struct report_curve_point *)ctx + i;

	fputc('{', out);
	jkv_str(out, "label", p->label);
	jkv_num(out, "x", p->x);
	jkv_str(out, "variant", p->variant);
	jkv_str(out, "workload", p->workload);
	jkv_num(out, "value", p->value);
	fprintf(out, "\"significant\":%s,", p->significant ? "true" : "false");
	if (p->ok) {
		jkv_num(out, "pct", p->pct);
		jinterval(out, "ci", &p->ci, 1);
	} else {
		fputs("\"pct\":null,\"ci\":null,", out);
		jkv_str(out, "reason", p->reason);
	}
	fputs("\"unit_ci\":\"%\"}", out);
}

static void curve(FILE *out, const void *ctx, size_t i)
{
	const struct report_model *m = ctx;
	const struct report_curve *c = &m->curves[i];
	char stat[32];

	report_stat_name(m, stat, sizeof(stat));
	fputc('{', out);
	jkv_str(out, "of", c->of_variant ? "variant" : "workload");
	jkv_str(out, "base", c->base);
	jkv_str(out, "param", c->param);
	jkv_str(out, "fixed", c->fixed);
	jkv_str(out, "workload", c->workload);
	jkv_str(out, "variant", c->variant);
	jkv_str(out, "metric", c->metric);
	jkv_str(out, "unit", c->unit);
	jkv_str(out, "statistic", stat);
	fprintf(out, "\"axis\":{\"numeric\":%s,\"log\":%s,\"items\":%s},",
		c->numeric ? "true" : "false", c->log_x ? "true" : "false",
		c->is_list ? "true" : "false");
	jarray(out, "points", c->n, JA_LINES, point, c->pts);
	fputc('}', out);
}

static void failure(FILE *out, const void *ctx, size_t i)
{
	const struct report_failure *f = (const struct report_failure *)ctx + i;

	fputc('{', out);
	jkv_str(out, "workload", f->workload);
	jkv_str(out, "variant", f->variant);
	fprintf(out, "\"n\":%zu,\"first\":{\"seq\":%d,\"repetition\":%d,\"warmup\":%s,", f->n,
		f->seq, f->repetition + 1, f->warmup ? "true" : "false");
	jkv_str(out, "status", f->status);
	jkv_str(out, "reason", f->reason);
	jkey(out, "output_tail");
	fputc('[', out);
	for (const char *p = f->tail; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		if (p != f->tail)
			fputc(',', out);
		jstr(out, line);
		free(line);
		p += len + (p[len] == '\n');
	}
	fputs("]}}", out);
}

static void jwarning(FILE *out, const void *ctx, size_t i)
{
	const struct report_warning *w = (const struct report_warning *)ctx + i;

	fputc('{', out);
	jkv_str(out, "kind", report_warning_kinds[w->kind]);
	jkv_str(out, "workload", w->workload);
	jkv_str(out, "metric", w->metric);
	jkv_str(out, "variant", w->variant);
	jarray(out, "seqs", w->n_seqs, JA_INLINE, jarray_int, w->seqs);
	fputc(',', out);
	jkey(out, "text");
	jstr(out, w->text);
	fputc('}', out);
}

static int json(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;
	int first = 1;
	char stat[32];

	fputs("{\"schema\":\"perturb-report/2\",", out);
	jkv_str(out, "generator", "perturb " PERTURB_VERSION);
	jkey(out, "run");
	fprintf(out, "{\"id\":%lld,", (long long)h->id);
	jkv_str(out, "experiment", h->experiment);
	jkv_str(out, "baseline", m->baseline);
	jkv_str(out, "run_baseline", h->baseline);
	jkv_str(out, "started", h->started);
	jkv_str(out, "ended", h->ended);
	jkv_str(out, "status", h->status);
	jkv_str(out, "order", h->order);
	fprintf(out, "\"seed\":%llu,", (unsigned long long)h->seed);
	jkey(out, "machine");
	jmachine(out, h->machine_json);
	fputs("},", out);

	jkey(out, "settings");
	fputc('{', out);
	jkv_num(out, "confidence", m->confidence);
	jkv_num(out, "alpha", m->alpha);
	jarray(out, "percentiles", m->n_percentiles, JA_INLINE, jarray_g, m->percentiles);
	fputs(",\"quantile_type\":7,", out);
	fprintf(out, "\"bootstrap\":{\"B\":%u,\"bca\":%s,\"max_n\":%zu,"
		"\"seed\":\"derived from the run's seed and the compared names\"},",
		m->bootstrap, m->bca ? "true" : "false", m->max_boot_n);
	report_stat_name(m, stat, sizeof(stat));
	fprintf(out, "\"multiple_comparisons\":{\"method\":\"holm\",\"decides\":\"interval\","
		"\"statistic\":\"%s\",\"comparisons\":%zu,"
		"\"primary\":%zu,\"secondary\":%zu,\"primary_metrics\":[\"wall\",\"ns_per_op\","
		"\"tsc_cycles_per_op\",\"cycles_per_op\"]},",
		stat, m->n_comparisons, m->n_family[0], m->n_family[1]);
	fprintf(out, "\"outliers\":{\"tukey_k\":%g,\"mad_z\":%g},", REPORT_TUKEY_K, REPORT_MADZ);
	jkv_str(out, "configurations_metric", m->config_metric);
	jkey(out, "ecdf_max_steps");
	fprintf(out, "%d},", REPORT_ECDF_MAX);

	jnoise(m, out);
	jarray(out, "quieter_metrics", m->n_quiet, JA_LINES_END, jquiet, m->quiet);
	fputc(',', out);
	fputs("\"results\":[", out);
	for (size_t gi = 0; gi < m->n_groups; gi++)
		for (size_t i = 0; i < m->groups[gi].n_series; i++) {
			if (!first)
				fputs(",\n", out);
			else
				fputc('\n', out);
			first = 0;
			series(m, &m->groups[gi], &m->groups[gi].series[i], out);
		}
	fputs("\n],", out);
	jarray(out, "tracer", m->n_tracer, JA_LINES_END, tracer, m->tracer);
	fputc(',', out);
	jarray(out, "calibration", m->n_calib, JA_LINES_END, jcalib, m->calib);	/* reports/calib.h */
	fputc(',', out);
	jarray(out, "compensation", m->n_comp, JA_LINES_END, jcomp, m->comp);
	fputc(',', out);
	jarray(out, "curves", m->n_curves, JA_LINES_END, curve, m);
	fputc(',', out);
	jarray(out, "failures", m->n_failures, JA_LINES_END, failure, m->failures);
	fputc(',', out);
	jarray(out, "warnings", m->n_warnings, JA_LINES_END, jwarning, m->warnings);
	fputs("}\n", out);
	return 0;
}

const struct renderer render_json = {
	.name = "json",
	.render = json,
};
