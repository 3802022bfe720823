/* doc.c - the report as one document, its sections and prose; see doc.h */
#include "doc.h"
#include "fmt.h"
#include "table.h"
#include "lib/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ---- */

static char *vdup(const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	return sb.buf ? strbuf_detach(&sb) : xstrdup("");
}

PRINTF(4, 5)
static struct doc_section *section(struct doc *d, int level, const char *id, const char *fmt, ...)
{
	struct doc_section *s;
	va_list ap;

	ALLOC_GROW(d->sections, d->n_sections + 1, d->alloc_sections);
	s = &d->sections[d->n_sections++];
	memset(s, 0, sizeof(*s));
	s->level = level;
	s->id = id;
	va_start(ap, fmt);
	s->title = vdup(fmt, ap);
	va_end(ap);
	return s;
}

PRINTF(2, 3)
static void purpose(struct doc_section *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	s->purpose = vdup(fmt, ap);
	va_end(ap);
}

static struct doc_block *block(struct doc_section *s, enum doc_kind kind)
{
	struct doc_block *b;

	ALLOC_GROW(s->blocks, s->n_blocks + 1, s->alloc_blocks);
	b = &s->blocks[s->n_blocks++];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	return b;
}

PRINTF(2, 3)
static struct doc_block *para(struct doc_section *s, const char *fmt, ...)
{
	struct doc_block *b = block(s, DOC_PARA);
	va_list ap;

	va_start(ap, fmt);
	b->text = vdup(fmt, ap);
	va_end(ap);
	return b;
}

/* An item of the section's last block when it is a list, else of a new
 * list. */
PRINTF(2, 3)
static void item(struct doc_section *s, const char *fmt, ...)
{
	struct doc_block *b = s->n_blocks && s->blocks[s->n_blocks - 1].kind == DOC_LIST ?
		&s->blocks[s->n_blocks - 1] : block(s, DOC_LIST);
	va_list ap;

	ALLOC_GROW(b->items, b->n_items + 1, b->alloc_items);
	va_start(ap, fmt);
	b->items[b->n_items++] = vdup(fmt, ap);
	va_end(ap);
}

static void table(struct doc_section *s, enum doc_table which, const struct report_group *g,
		  const struct report_curve *c)
{
	struct doc_block *b = block(s, DOC_TABLE);
	b->table = which;
	b->g = g;
	b->c = c;
}

static void figure(struct doc_section *s, enum doc_figure which, const struct report_group *g,
		   const struct report_curve *c)
{
	struct doc_block *b = block(s, DOC_FIGURE);
	b->figure = which;
	b->g = g;
	b->c = c;
}

/* A title written by one of table.h's title functions, as plain text. */
static char *group_title(const struct report_group *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fmt_memstream(&buf, &len);

	tw_title(f, fmt_text, g);
	fclose(f);
	return buf;
}

static char *curve_title(const struct report_model *m, const struct report_curve *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fmt_memstream(&buf, &len);

	tw_curve_title(f, fmt_text, m, c);
	fclose(f);
	return buf;
}

/* 1: what was run, and what makes the numbers untrustworthy. */
static void what_was_run(const struct report_model *m, struct doc *d, const char *lvl)
{
	const struct run_header *h = &m->run;
	struct doc_section *s = section(d, 1, "run", "What was run");
	size_t nv = 0, nw = 0, empty = 0, other = 0;
	struct strbuf dead = STRBUF_INIT;
	char note[1024];

	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (!g->primary)
			continue;
		nw++;
		if (g->n_series > nv)
			nv = g->n_series;
	}
	para(s, "Run %lld of '%s', started %s: %zu variant%s x %zu workload%s, %s order, seed "
	     "%llu, status %s. Baseline: %s; confidence %s %%; dilation = variant - baseline, in "
	     "%% of the baseline.", (long long)h->id, h->experiment, h->started, nv,
	     nv == 1 ? "" : "s", nw, nw == 1 ? "" : "s", h->order, (unsigned long long)h->seed,
	     h->status, m->baseline, lvl);
	if (m->n_virtual) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < m->n_virtual; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", m->virtual_variants[i]);
		para(s, "%s - %s", sb.buf, report_virtual_time_note);
		strbuf_release(&sb);
	}
	if (!m->n_groups)
		para(s, "No successful measured run to report.");
	/* variants without a successful run of any workload's answer, by
	 * name, then the other pairs without one */
	for (size_t i = 0; m->n_groups && i < m->groups[0].n_series; i++) {
		size_t none = 0, of = 0;
		for (size_t gi = 0; gi < m->n_groups; gi++)
			if (m->groups[gi].primary && i < m->groups[gi].n_series) {
				of++;
				none += !m->groups[gi].series[i].n;
			}
		if (of && none == of)
			strbuf_addf(&dead, "%s%s", dead.len ? ", " : "", m->groups[0].series[i].label);
		else
			empty += none;
	}
	if (dead.len)
		para(s, "No successful run (unavailable and skipped, or every run failed): %s.",
		     dead.buf)->alert = 1;
	if (empty)
		para(s, "%zu other variant x workload pair%s of the answer %s no successful run.",
		     empty, empty == 1 ? "" : "s", empty == 1 ? "has" : "have")->alert = 1;
	strbuf_release(&dead);
	/* the noise verdicts; the unknown ones in one item per reason */
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		struct strbuf sb = STRBUF_INIT;
		int seen = 0;
		if (!g->primary)
			continue;
		if (g->noise.ok) {
			report_noise_verdict(m, g, note, sizeof(note));
			item(s, "noise: %s.", note);
			continue;
		}
		for (size_t k = 0; k < gi; k++)
			seen |= m->groups[k].primary && !m->groups[k].noise.ok &&
				!strcmp(m->groups[k].noise.reason, g->noise.reason);
		if (seen)
			continue;
		for (size_t k = gi; k < m->n_groups; k++)
			if (m->groups[k].primary && !m->groups[k].noise.ok &&
			    !strcmp(m->groups[k].noise.reason, g->noise.reason))
				strbuf_addf(&sb, "%s%s (%s)", sb.len ? ", " : "", m->groups[k].workload,
					    m->groups[k].metric);
		item(s, "noise unknown on %s: %s.", sb.buf, g->noise.reason);
		strbuf_release(&sb);
	}
	/* the machine's warnings here, the others counted */
	for (size_t i = 0; i < m->n_warnings; i++)
		if (m->warnings[i].kind == RW_MACHINE)
			para(s, "%s: %s", report_warning_kinds[RW_MACHINE],
			     m->warnings[i].text)->alert = 1;
		else
			other++;
	if (other)
		para(s, "%zu warning%s about the runs: see Warnings below.", other,
		     other == 1 ? "" : "s")->alert = 1;
	if (m->n_failures) {
		s = section(d, 2, NULL, "Failed runs");
		for (size_t i = 0; i < m->n_failures; i++) {
			const struct report_failure *f = &m->failures[i];
			struct doc_block *b;
			para(s, "%s under %s: %zu failed run%s; the first, %s%d (plan entry %d): %s%s%s%s",
			     f->workload, f->variant, f->n, f->n == 1 ? "" : "s",
			     f->warmup ? "warm-up " : "run ", f->repetition + 1, f->seq, f->status,
			     *f->reason ? ", " : "", f->reason,
			     *f->tail ? ". Its last lines of output:" : ". It printed nothing.");
			if (*f->tail) {
				b = block(s, DOC_PRE);
				b->text = xstrdup(f->tail);
			}
		}
	}
}

/* 2: the answer. */
static void answer(const struct report_model *m, struct doc *d, const char *lvl,
		   const char *stat)
{
	struct doc_section *s;

	if (!m->n_groups)
		return;
	s = section(d, 1, "answer", "The answer");
	purpose(s, "Each workload's primary metric: the %s of %s, then each variant's dilation "
		"of it in %% with the interval that decides it: its CI at its Holm level (%s %% "
		"for one comparison, wider for more; the detail gives both); *: the variant "
		"differs from %s (that interval excludes 0, as perturb gate decides).", stat,
		m->baseline, lvl, m->baseline);
	table(s, DT_ANSWER, NULL, NULL);
}

/* 3: what the study has beyond the answer. */
static void costs(const struct report_model *m, struct doc *d, const char *lvl, const char *stat)
{
	struct doc_section *s;
	int cited[64] = { 0 }, micro = 0;

	if (m->n_calib) {
		s = section(d, 1, "calibration", "Cost per event, calibrated");
		purpose(s, "What each tracer costs per event, by attach type.");
		para(s, "A calibration workload hits the instrumented point a known number of "
		     "times: ns/event = (mean variant - mean baseline) of its time metric / hits / "
		     "events/hit, with the dilation's %s %% CI divided the same way; events/hit = the "
		     "variant's events per run / its hits per run, measured in the same runs (a "
		     "tracer may record more than one event a hit: raw_syscalls:* records entry and "
		     "exit; events are counted system-wide, so other processes add a few) "
		     "(docs/report-json.md, \"calibration\"). Published figures beside them, derived "
		     "from the published throughputs as 1e9/traced - 1e9/untraced (sources below).",
		     lvl);
		/* the paragraphs go before the tables: Markdown would take a
		 * line right after a table for one of its rows */
		for (size_t i = 0; i < m->n_calib; i++) {
			const struct report_published *p = m->calib[i].published;
			size_t k = p ? (size_t)(p - report_published) : 0;
			if (!p || k >= ARRAY_SIZE(cited) || cited[k]++)
				continue;
			para(s, "%s: %s; %s.", p->source, p->figure, p->citation);
		}
		table(s, DT_CALIB, NULL, NULL);
	}
	if (m->n_comp) {
		s = section(d, 1, "compensation", "Overhead compensation");
		purpose(s, "Whether the cost per event explains the real workloads' slowdown.");
		para(s, "Per real workload under a calibrated tracer (Malony & Shende, Euro-Par "
		     "2004): measured = mean wall dilation with its %s %% CI; predicted = events per "
		     "run x ns/event; explained = predicted / measured; compensated = mean wall - "
		     "predicted, its interval the measured one minus the predicted one (interval "
		     "arithmetic, at least %g %% coverage); it must hold the baseline's mean.",
		     lvl, 100 * (1 - 2 * m->alpha));
		for (size_t i = 0; i < m->n_comp; i++) {
			const struct report_comp *r = &m->comp[i];
			if (!r->ok || !r->compensated_ci.has_ci || r->fits)
				continue;
			para(s, "Does not fit: %s on %s: the compensated time's interval excludes the "
			     "baseline's mean; a cost per event does not explain this dilation (cache "
			     "and buffer effects, the tracer's own threads: Malony & Shende 2004; or "
			     "the workload's events are not the calibration's: another attach point, "
			     "dearer or cheaper than the one calibrated).", r->variant,
			     r->workload)->alert = 1;
		}
		table(s, DT_COMP, NULL, NULL);
	}
	for (size_t gi = 0; gi < m->n_groups; gi++)
		micro |= m->groups[gi].micro;
	if (micro) {
		s = section(d, 1, "markers", "Markers: cost per operation");
		purpose(s, "The %s over runs; added = variant - %s, with its %s %% CI.", stat,
			m->baseline, lvl);
		table(s, DT_MARKERS, NULL, NULL);
	}
	if (m->n_curves) {
		s = section(d, 1, "curves", "Overhead curves");
		purpose(s, "The dilation of each instance of a matrix (docs/experiment.md, "
			"\"Matrices\") against its parameter, the others fixed; %s %% CI; *: "
			"significant (its interval at the Holm level excludes 0); a numeric axis is "
			"logarithmic when its values span more than a decade.", lvl);
		for (size_t i = 0; i < m->n_curves; i++) {
			char *t = curve_title(m, &m->curves[i]);
			s = section(d, 2, NULL, "%s", t);
			free(t);
			figure(s, DF_CURVE, NULL, &m->curves[i]);
			table(s, DT_CURVE, NULL, &m->curves[i]);
		}
	}
}

/* 4: the detail of one group. */
static void detail(const struct report_model *m, struct doc *d, const struct report_group *g,
		   const char *lvl)
{
	char *t = group_title(g);
	struct doc_section *s = section(d, 2, NULL, "%s", t);

	free(t);
	figure(s, DF_CDF, g, NULL);
	s = section(d, 3, NULL, "Dilation at percentiles");
	purpose(s, "Against %s; [lo, hi]: %s %% CI of the %% dilation.", m->baseline, lvl);
	table(s, DT_PERCENTILES, g, NULL);
	s = section(d, 3, NULL, "Moments");
	purpose(s, "var: sample variance (n - 1); mean dilation in %% with its %s %% CI; "
		"detectable: the smallest mean dilation these runs could detect (power %.0f %%, "
		"alpha %g).", lvl, 100 * REPORT_MDE_POWER, m->alpha);
	table(s, DT_MOMENTS, g, NULL);
	s = section(d, 3, NULL, "Shift and shape");
	purpose(s, "HL: Hodges-Lehmann ratio variant/%s with its %s %% CI; KS: two-sample "
		"Kolmogorov-Smirnov.", m->baseline, lvl);
	table(s, DT_SHAPE, g, NULL);
	if (g->nested) {
		s = section(d, 3, NULL, "Runs nested in blocks");
		purpose(s, "A block is one boot of a boot: variant; variance split by one-way "
			"random-effects ANOVA (Kalibera & Jones 2013); [CI]: %s %% Student t interval "
			"over the block means; F p: is there a block effect? %s", lvl,
			report_runs_per_boot_column);
		table(s, DT_NESTED, g, NULL);
	}
	if (g->nodes) {
		s = section(d, 3, NULL, "Runs on several nodes");
		purpose(s, "%s", report_nodes_note);
		table(s, DT_NODES, g, NULL);
	}
}

/* 4 and 5: the detail of the answers, the other metrics. */
static void details(const struct report_model *m, struct doc *d, const char *lvl,
		    const char *stat)
{
	struct doc_section *s;
	int other = 0;

	if (m->n_groups) {
		s = section(d, 1, "detail", "Detail");
		purpose(s, "Per workload, its primary metric: percentiles, moments, shift and "
			"shape, the distribution%s.", m->opts->all_metrics ? "" :
			"; every metric's with --all-metrics");
		for (size_t gi = 0; gi < m->n_groups; gi++)
			if (m->groups[gi].primary)
				detail(m, d, &m->groups[gi], lvl);
	}
	for (size_t gi = 0; gi < m->n_groups; gi++)
		other |= !m->groups[gi].primary;
	if (!other && !m->n_tracer)
		return;
	s = section(d, 1, "other", "Other metrics");
	purpose(s, "What perturb measured around each run - CPU times, memory, counters, the "
		"cgroup's, the tracer's own accounting, bookkeeping counts - not a workload's "
		"answer: the %s of each and its dilation in %% (*: significant).", stat);
	if (other)
		table(s, DT_OTHER, NULL, NULL);
	if (m->n_tracer) {
		s = section(d, 2, NULL, "Tracer accounting");
		purpose(s, "The tracer's own counts per run (per_cpu stats, read before and after "
			"each run, system-wide: events of other processes count too), medians over "
			"runs; lost runs: runs whose trace_lost (overwritten + dropped events) > 0; a "
			"cost per event needs a calibration workload (docs/experiment.md, "
			"\"calibration\").");
		table(s, DT_TRACER, NULL, NULL);
		if (m->n_tracer_lossy)
			para(s, "Runs that lost events: the tracer could not keep up; their "
			     "dilation understates a lossless trace.")->alert = 1;
	}
	if (m->opts->all_metrics)
		for (size_t gi = 0; gi < m->n_groups; gi++)
			if (!m->groups[gi].primary)
				detail(m, d, &m->groups[gi], lvl);
}

/* 6: warnings, notes and references. */
static void notes(const struct report_model *m, struct doc *d, const char *lvl)
{
	const char *dm[8], *pm[8], *hm[8];
	size_t ndm = report_methods(m, 1, dm, ARRAY_SIZE(dm));
	size_t npm = report_methods(m, 2, pm, ARRAY_SIZE(pm));
	size_t nhm = report_methods(m, 4, hm, ARRAY_SIZE(hm));
	struct doc_section *s;
	char note[1024];

	if (m->n_warnings) {
		s = section(d, 1, "warnings", "Warnings");
		purpose(s, "What a careful reader should know before trusting the numbers, and what "
			"to do.");
		for (size_t i = 0; i < m->n_warnings; i++)
			item(s, "%s: %s", report_warning_kinds[m->warnings[i].kind],
			     m->warnings[i].text);
	}
	s = section(d, 1, "notes", "Notes");
	item(s, "Percentiles are type 7 (linear interpolation between order statistics, as R's "
	     "default and GSL's gsl_stats_quantile_from_sorted_data).");
	if (!ndm)
		item(s, "[lo, hi]: %s %% confidence interval of the dilation (none could be "
		     "computed).", lvl);
	for (size_t i = 0; i < ndm; i++) {
		if (strstr(dm[i], "bootstrap"))
			item(s, "[lo, hi]: %s %% confidence interval of the dilation by %s (B = %u "
			     "resamples, seeds derived from the run's seed %llu: the same database "
			     "gives the same intervals)%s", lvl, dm[i], m->bootstrap,
			     (unsigned long long)m->run.seed, ndm > 1 ?
			     "; the JSON report gives the method of each interval." : ".");
		else
			item(s, "[lo, hi]: %s %% confidence interval of the dilation by %s%s", lvl,
			     dm[i], ndm > 1 ? "; the JSON report gives the method of each interval." :
			     ".");
	}
	report_holm_note(m, note, sizeof(note));
	item(s, "%s (*).", note);
	for (size_t i = 0; i < nhm; i++)
		item(s, "HL ratio: median of the pairwise ratios variant/baseline; its %s %% CI by "
		     "%s.", lvl, hm[i]);
	for (size_t i = 0; i < npm; i++)
		item(s, "Percentile CIs (JSON, HTML) by %s.", pm[i]);
	if (report_paired_note(m, note, sizeof(note)))
		item(s, "%s.", note);
	for (size_t i = 0; i < m->n_quiet; i++) {
		report_quiet_line(&m->quiet[i], note, sizeof(note));
		item(s, "quieter metric: %s.", note);
	}
	item(s, "Outliers IQR/MAD: runs more than %g interquartile ranges beyond the quartiles "
	     "(Tukey's fences) / with a modified z-score, from the median absolute deviation, "
	     "above %g; labelled, not dropped.", REPORT_TUKEY_K, REPORT_MADZ);
	item(s, "failed: measured runs that failed, timed out or crashed; not in the "
	     "statistics. CDFs: --format html (plot) or json/csv (data).");
	item(s, "%s", report_papers_note);
	figure(s, DF_PROVENANCE, NULL, NULL);
}

void doc_build(const struct report_model *m, struct doc *d)
{
	char lvl[16], stat[32];

	memset(d, 0, sizeof(*d));
	fmt_level(lvl, sizeof(lvl), m->confidence);
	report_stat_name(m, stat, sizeof(stat));
	d->title = xasprintf("perturb report: %s", m->run.experiment);
	what_was_run(m, d, lvl);
	answer(m, d, lvl, stat);
	costs(m, d, lvl, stat);
	details(m, d, lvl, stat);
	notes(m, d, lvl);
}

void doc_release(struct doc *d)
{
	for (size_t i = 0; i < d->n_sections; i++) {
		struct doc_section *s = &d->sections[i];
		for (size_t k = 0; k < s->n_blocks; k++) {
			free(s->blocks[k].text);
			for (size_t j = 0; j < s->blocks[k].n_items; j++)
				free(s->blocks[k].items[j]);
			free(s->blocks[k].items);
		}
		free(s->blocks);
		free(s->title);
		free(s->purpose);
	}
	free(d->sections);
	free(d->title);
	memset(d, 0, sizeof(*d));
}

const struct doc_section *doc_find(const struct doc *d, const char *id)
{
	for (size_t i = 0; i < d->n_sections; i++)
		if (d->sections[i].id && !strcmp(d->sections[i].id, id))
			return &d->sections[i];
	return NULL;
}

/* ---- writing ---- */

static void write_table(struct tw *t, const struct report_model *m, const struct doc_block *b)
{
	switch (b->table) {
	case DT_ANSWER: tw_answer(t, m); break;
	case DT_PERCENTILES: tw_table1(t, m, b->g); break;
	case DT_MOMENTS: tw_table2(t, m, b->g); break;
	case DT_SHAPE: tw_table3(t, b->g); break;
	case DT_NESTED: tw_nested(t, m, b->g); break;
	case DT_NODES: tw_nodes(t, m, b->g); break;
	case DT_TRACER: tw_tracer(t, m); break;
	case DT_MARKERS: tw_markers(t, m); break;
	case DT_CURVE: tw_curve(t, m, b->c); break;
	case DT_CALIB: tw_calib(t, m); break;
	case DT_COMP: tw_comp(t, m); break;
	case DT_OTHER: tw_other(t, m); break;
	}
}

static void write_para(struct tw *t, const char *text, int alert)
{
	t->alert = alert;
	t->ops->para(t);
	t->ops->esc(t->out, text);
	t->ops->para_end(t);
	t->alert = 0;
}

void doc_write_section(const struct doc_section *s, const struct report_model *m, struct tw *t)
{
	t->ops->section(t, s->level, s->id, s->title);
	if (s->purpose)
		write_para(t, s->purpose, 0);
	for (size_t k = 0; k < s->n_blocks; k++) {
		const struct doc_block *b = &s->blocks[k];
		switch (b->kind) {
		case DOC_PARA: write_para(t, b->text, b->alert); break;
		case DOC_LIST: t->ops->list(t, b->items, b->n_items); break;
		case DOC_PRE: t->ops->pre(t, b->text); break;
		case DOC_TABLE: write_table(t, m, b); break;
		case DOC_FIGURE:
			if (t->ops->figure)
				t->ops->figure(t, m, b);
			break;
		}
	}
}

void doc_write(const struct doc *d, const struct report_model *m, struct tw *t)
{
	for (size_t i = 0; i < d->n_sections; i++)
		doc_write_section(&d->sections[i], m, t);
}
