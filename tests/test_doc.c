/*
 * test_doc.c - the report's document (reports/doc.h): built once from the
 * model, answer first, the same order in every format; and perturb run's
 * closing screen (reports/summary.h), one screen for any study.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "engine/store.h"
#include "reports/doc.h"
#include "reports/report.h"
#include "reports/summary.h"
#include "testlib.h"

TL_FIXTURE_DIR()

TestSuite(doc, .init = tl_setup, .fini = tl_teardown, .timeout = 90);

/* The model of a golden study (tests/golden/STUDY.sql), loaded once. */
static void model_of(const char *study, struct report_opts *o, struct report_model *m)
{
	char *path = xasprintf("%s/%s.db", dir, study);
	char *db = tl_exists(path) ? path : cli_load_golden(dir, study);
	struct store *st;
	int usage = 0;

	cr_assert_eq(store_open(db, STORE_READ, &st), 0);
	cr_assert_eq(report_build(st, o, m, &usage), 0);
	store_close(st);
	if (db != path)
		free(db);
	free(path);
}

/* Where section id is in d (its index), -1 when absent. */
static long where(const struct doc *d, const char *id)
{
	const struct doc_section *s = doc_find(d, id);
	return s ? (long)(s - d->sections) : -1;
}

/* The level-2 sections under "detail" and "other": their titles joined. */
static char *groups_of(const struct doc *d, const char *id)
{
	struct strbuf sb = STRBUF_INIT;
	long i = where(d, id);

	cr_assert_geq(i, 0, "no section %s", id);
	for (size_t k = (size_t)i + 1; k < d->n_sections && d->sections[k].level > 1; k++)
		if (d->sections[k].level == 2)
			strbuf_addf(&sb, "%s;", d->sections[k].title);
	return sb.buf ? strbuf_detach(&sb) : xstrdup("");
}

Test(doc, answer_first_then_costs_then_detail_notes_last)
{
	struct report_opts o = { 0 };
	struct report_model m;
	struct doc d;
	char *detail;

	model_of("calib", &o, &m);
	doc_build(&m, &d);
	cr_assert_eq(where(&d, "run"), 0, "what was run first");
	cr_assert_eq(where(&d, "answer"), 1, "the answer second");
	cr_assert_lt(where(&d, "answer"), where(&d, "calibration"));
	cr_assert_lt(where(&d, "calibration"), where(&d, "compensation"));
	cr_assert_lt(where(&d, "compensation"), where(&d, "detail"));
	cr_assert_lt(where(&d, "detail"), where(&d, "other"));
	cr_assert_eq(where(&d, "notes"), (long)d.n_sections - 1 -
		     /* notes' own subsections, none */ 0, "notes last");
	/* the detail holds the primary metrics only: wall of each workload */
	detail = groups_of(&d, "detail");
	cr_assert_str_eq(detail, "null-syscall: wall (s);gzip: wall (s);");
	free(detail);
	doc_release(&d);
	report_release(&m);
}

Test(doc, all_metrics_puts_every_metric_in_the_detail)
{
	struct report_opts o = { .all_metrics = 1 };
	struct report_model m;
	struct doc d;
	char *other;

	model_of("tracer", &o, &m);
	doc_build(&m, &d);
	other = groups_of(&d, "other");
	cr_assert(strstr(other, "traced-work: trace_lost (events);"), "%s", other);
	cr_assert(strstr(other, "traced-work: user (s);"), "%s", other);
	cr_assert(strstr(other, "Tracer accounting;"), "%s", other);
	free(other);
	doc_release(&d);
	report_release(&m);
	memset(&o, 0, sizeof(o));
	model_of("tracer", &o, &m);
	doc_build(&m, &d);
	other = groups_of(&d, "other");
	cr_assert_str_eq(other, "Tracer accounting;", "without --all-metrics: %s", other);
	free(other);
	doc_release(&d);
	report_release(&m);
}

/* Every format writes the same sections in the same order. */
Test(doc, every_format_has_the_same_order)
{
	static const char *const fmts[] = { "text", "markdown", "html" };
	static const char *const titles[] = {
		"What was run", "The answer", "Cost per event, calibrated", "Overhead compensation",
		"Markers: cost per operation", "Detail", "Other metrics", "Warnings", "Notes",
	};
	char *db = cli_load_golden(dir, "calib");

	for (size_t f = 0; f < ARRAY_SIZE(fmts); f++) {
		struct cli_result r;
		const char *at = NULL;
		cli_run(dir, &r, "report", "--db", db, "--format", fmts[f], NULL);
		cr_assert_eq(r.status, 0, "%s", r.err);
		at = r.out;
		for (size_t i = 0; i < ARRAY_SIZE(titles); i++) {
			const char *p = strstr(at, titles[i]);
			cr_assert(p, "%s: '%s' missing or out of order", fmts[f], titles[i]);
			at = p + strlen(titles[i]);
		}
		cli_result_release(&r);
	}
	free(db);
}

/* A model of nv variants x nw workloads x nm metrics and nwarn warnings,
 * made by hand: more than any screen holds. */
static void big_model(struct report_model *m, struct report_opts *o, size_t nv, size_t nw,
		      size_t nm, size_t nwarn)
{
	memset(m, 0, sizeof(*m));
	m->opts = o;
	m->run.id = 7;
	m->run.experiment = xstrdup("big");
	m->run.status = xstrdup("completed");
	m->run.started = xstrdup("2026-01-01T10:00:00Z");
	m->run.order = xstrdup("interleaved");
	m->baseline = "v0";
	m->percentiles[0] = 50;
	m->n_percentiles = 1;
	m->confidence = 0.95;
	m->alpha = 0.05;
	m->config_metric = "wall";
	m->n_groups = nw * nm;
	m->groups = xcalloc(m->n_groups, sizeof(*m->groups));
	for (size_t g = 0; g < m->n_groups; g++) {
		struct report_group *gr = &m->groups[g];
		/* one string a workload, as the model interns them */
		gr->workload = g % nm ? m->groups[g - 1].workload : xasprintf("workload-%zu", g / nm);
		gr->metric = g % nm ? xasprintf("metric-%zu", g % nm) : "wall";
		gr->unit = "s";
		gr->primary = g % nm == 0;
		gr->lo = gr->hi = NAN;
		gr->noise.reason = "too few runs";
		gr->n_series = nv;
		gr->series = xcalloc(nv, sizeof(*gr->series));
		for (size_t i = 0; i < nv; i++) {
			struct report_series *s = &gr->series[i];
			s->variant = s->label = xasprintf("variant-%zu", i);
			s->n = 10;
			s->pct[0] = 1.0 + 0.01 * (double)i;
			s->is_baseline = !i;
			s->compared = i > 0;
			s->significant = i % 2;
			s->pct_dil[0].ok = 1;
			s->pct_dil[0].d.pct = (double)i;
			s->pct_dil[0].d.ci_pct = (struct interval){ .has_ci = 1, .lo = i - 0.5,
								    .hi = i + 0.5 };
		}
	}
	m->n_warnings = nwarn;
	m->warnings = xcalloc(nwarn, sizeof(*m->warnings));
	for (size_t i = 0; i < nwarn; i++) {
		m->warnings[i].kind = RW_OUTLIERS;
		m->warnings[i].text = "a run far from the median";
	}
}

/* big_model()'s model of nm metrics a workload: freed here, not by
 * report_release() (its strings are its own). */
static void big_model_free(struct report_model *m, size_t nm)
{
	for (size_t g = 0; g < m->n_groups; g++) {
		for (size_t i = 0; i < m->groups[g].n_series; i++)
			free((char *)m->groups[g].series[i].variant);
		free(m->groups[g].series);
		if (g % nm == 0)
			free((char *)m->groups[g].workload);
		if (strcmp(m->groups[g].metric, "wall"))
			free((char *)m->groups[g].metric);
	}
	free(m->groups);
	free(m->warnings);
	free((char *)m->run.experiment);
	free((char *)m->run.status);
	free((char *)m->run.started);
	free((char *)m->run.order);
}

/* The rows text takes on a terminal of width columns. */
static size_t terminal_rows(const char *text, size_t width)
{
	size_t rows = 0;
	for (const char *p = text, *e; *p; p = *e ? e + 1 : e) {
		size_t n = (size_t)((e = strchrnul(p, '\n')) - p);
		rows += n ? (n + width - 1) / width : 1;
	}
	return rows;
}

Test(doc, closing_screen_is_at_most_40_lines)
{
	static const size_t shapes[][4] = {
		{ 2, 1, 1, 0 }, { 12, 5, 20, 18 }, { 60, 9, 30, 200 }, { 3, 40, 2, 5 },
		{ 12, 5, 20, 18 },	/* again, under a long study name */
	};

	for (size_t k = 0; k < ARRAY_SIZE(shapes); k++) {
		struct report_opts o = { .db = "x.db" };
		struct report_model m;
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		big_model(&m, &o, shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3]);
		if (k == 4) {	/* words to wrap, one longer than a line, a raw byte */
			free((char *)m.run.experiment);
			m.run.experiment = xasprintf("a study of the cost of tracing every system call "
						     "of the build of a kernel on a loaded machine %0130d "
						     "\033[2J", 7);
		}
		cr_assert_eq(report_summary(&m, f), 0);
		fclose(f);
		/* 40 with the blank line perturb run puts before it, a line
		 * wider than the report's 100 columns counted as the rows it
		 * takes */
		cr_assert_leq(terminal_rows(out, 100), 39, "%zu variants x %zu workloads: %zu rows:\n%s",
			      shapes[k][0], shapes[k][1], terminal_rows(out, 100), out);
		cr_assert_null(strchr(out, '\033'), "a raw escape on the screen:\n%s", out);
		/* each line at most 100 columns, but a word longer than that
		 * and the command (whole, to be copied) */
		for (const char *p = out, *e; *p; p = *e ? e + 1 : e) {
			int n = (int)((e = strchrnul(p, '\n')) - p);
			cr_assert(n <= 100 || !memchr(p, ' ', (size_t)n) ||
				  !strncmp(p, "full report: ", 13), "%d columns: %.*s", n, n, p);
		}
		cr_assert(strstr(out, "The answer"), "%s", out);
		cr_assert(strstr(out, "full report: perturb report --run 7 --db x.db"), "%s", out);
		if (shapes[k][3] > 3)
			cr_assert(strstr(out, "more in the full report"), "%s", out);
		/* never the other metrics */
		cr_assert_null(strstr(out, "metric-1"), "%s", out);
		free(out);
		big_model_free(&m, shapes[k][2]);
	}
}

/* The answer's colours (a terminal's) are not columns: the screen shows
 * as much of the answer with them as without. */
Test(doc, colours_do_not_shrink_the_closing_screen)
{
	char *out[2] = { NULL, NULL };

	for (int colour = 0; colour < 2; colour++) {
		struct report_opts o = { .db = "x.db", .color = colour };
		struct report_model m;
		size_t len = 0;
		FILE *f = open_memstream(&out[colour], &len);

		big_model(&m, &o, 12, 5, 1, 3);
		cr_assert_eq(report_summary(&m, f), 0);
		fclose(f);
		big_model_free(&m, 1);
	}
	cr_assert(strstr(out[1], "\033["), "no colour:\n%s", out[1]);
	const char *a = strstr(out[0], "  ... "), *b = strstr(out[1], "  ... ");
	cr_assert(a && b, "%s\n%s", out[0], out[1]);
	cr_assert(!strncmp(a, b, (size_t)(strchr(a, '\n') - a)), "without colour: %.60s\nwith: %.60s",
		  a, b);
	free(out[0]);
	free(out[1]);
}

/*
 * The closing screen shows no A/A noise estimate (section 1 is not on it)
 * and nothing of the metrics that are neither an answer nor read by the
 * warnings: it is built without them (its renderer's skip_noise and
 * answer_only; report_opts.skip_noise, answer_only, wanted_families), and
 * the screen is the same to the byte as the one from a whole model.  The
 * golden studies, and a study of this machine with its cgroup metrics,
 * one workload's answer a metric the warnings do not read (user) and one
 * a metric of the workload's own, whole and filtered by --metric (a
 * metric the screen would not show is its answer then).  The formats that
 * show more build it.
 */
static void screen_of(struct store *st, int lean, char *metric, char **out, size_t *skipped,
		      size_t *groups)
{
	struct report_opts o = { .skip_noise = lean, .answer_only = lean, .wanted_families = lean,
				 .metrics = metric ? &metric : NULL, .n_metrics = !!metric };
	struct report_model m;
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	int usage = 0;

	cr_assert_eq(report_build(st, &o, &m, &usage), 0);
	*groups = m.n_groups;
	for (size_t g = 0; g < m.n_groups; g++)
		if (!m.groups[g].noise.ok &&
		    !strcmp(m.groups[g].noise.reason, REPORT_NOISE_SKIPPED))
			(*skipped)++;
	cr_assert_eq(report_summary(&m, f), 0);
	fclose(f);
	report_release(&m);
}

Test(doc, the_closing_screen_is_the_same_from_the_lean_model)
{
	static const char *const studies[] = { "blocks", "calib", "multi", "tracer", "matrix",
					       NULL };
	static char *filters[] = { "user", "cgroup_cpu_s", "score", "wall" };
	struct cli_result r;

	cr_expect(render_summary.skip_noise && render_summary.answer_only);
	cr_expect(!render_text.skip_noise && !render_markdown.skip_noise &&
		  !render_html.skip_noise && !render_json.skip_noise);
	cr_expect(!render_text.answer_only && !render_markdown.answer_only &&
		  !render_html.answer_only && !render_json.answer_only);
	tl_write(dir, "e.yaml", "name: lean\nwarmup: 0\nrepetitions: 6\n"
		 "variants: [{name: a}, {name: b, env: {X: 1}}]\n"
		 "workloads:\n"
		 "  - name: w\n"
		 "    shell: 'echo \"score: $((7 + ${X:-0}))\"'\n"
		 "    metrics: [{name: score, regex: '^score: ([0-9]+)', unit: pt}]\n"
		 "    primary: score\n"
		 "  - {name: u, cmd: [true], primary: user}\n"
		 "  - {name: plain, cmd: [true]}\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", "lean.db", "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	for (size_t k = 0; k < ARRAY_SIZE(studies); k++) {
		char *path = studies[k] ? cli_load_golden(dir, studies[k]) :
			xasprintf("%s/lean.db", dir);
		char *out[2] = { NULL, NULL };
		size_t skipped[2] = { 0, 0 }, groups[2];
		struct store *st;

		cr_assert_eq(store_open(path, STORE_READ, &st), 0);
		for (int lean = 0; lean < 2; lean++)
			screen_of(st, lean, NULL, &out[lean], &skipped[lean], &groups[lean]);
		/* --metric: a metric the screen would not show is its answer then */
		for (size_t f = 0; !studies[k] && f < ARRAY_SIZE(filters); f++) {
			char *one[2] = { NULL, NULL };
			size_t sk[2] = { 0, 0 }, gr[2];
			for (int lean = 0; lean < 2; lean++)
				screen_of(st, lean, filters[f], &one[lean], &sk[lean], &gr[lean]);
			cr_expect_str_eq(one[1], one[0], "--metric %s", filters[f]);
			cr_expect(strstr(one[0], filters[f]), "--metric %s: %s", filters[f], one[0]);
			free(one[0]);
			free(one[1]);
		}
		store_close(st);
		cr_expect_eq(skipped[0], 0, "%s", path);
		cr_expect_gt(skipped[1], 0, "%s: no noise estimate skipped", path);
		cr_expect_str_eq(out[1], out[0], "%s", path);
		if (!studies[k]) {	/* cgroup metrics, sys, maxrss: neither answers nor warned of */
			cr_expect_lt(groups[1] + 3, groups[0], "%zu of %zu groups computed",
				     groups[1], groups[0]);
			cr_expect(strstr(out[0], "score") && strstr(out[0], "user"), "%s", out[0]);
		}
		free(out[0]);
		free(out[1]);
		free(path);
	}
}

/* Two dilations the same to the bit (NaN as NaN). */
static void expect_same_dilation(const struct report_dilation *a, const struct report_dilation *b,
				 const char *what)
{
	const struct interval *x = &a->d.ci_pct, *y = &b->d.ci_pct;

	cr_expect_eq(a->ok, b->ok, "%s", what);
	cr_expect_eq(a->paired, b->paired, "%s", what);
	cr_expect_eq(x->has_ci, y->has_ci, "%s", what);
	cr_expect(!memcmp(&a->d.pct, &b->d.pct, sizeof(double)), "%s: %g, %g", what, a->d.pct,
		  b->d.pct);
	cr_expect(!memcmp(&x->lo, &y->lo, sizeof(double)) &&
		  !memcmp(&x->hi, &y->hi, sizeof(double)),
		  "%s: [%g, %g], [%g, %g]", what, x->lo, x->hi, y->lo, y->hi);
}

/*
 * report_opts.no_verdicts (the gate's models, one a level; bisect's values;
 * --target-ci): every dilation the same to the bit as in the whole model,
 * and no verdict judged (each says why); with want_pcts (the gate's) the
 * wanted ones only, the same, the others not computed.  The golden
 * studies, whole and filtered by --metric, one at a higher level.
 */
static void expect_lean_same(const char *study, double level, int filtered)
{
	char *metric = "wall";
	struct report_opts o[3] = {
		{ .confidence = level, .skip_noise = 1 },
		{ .confidence = level, .skip_noise = 1, .no_verdicts = 1 },
		/* the gate's: the dilations its rules read, p50's */
		{ .confidence = level, .skip_noise = 1, .no_verdicts = 1,
		  .want_pcts = { 50 }, .n_want_pcts = 1 },
	};
	struct report_model m[3];
	size_t judged = 0, p50 = 0;

	for (int lean = 0; lean < 3; lean++) {
		o[lean].metrics = filtered ? &metric : NULL;
		o[lean].n_metrics = filtered;
		model_of(study, &o[lean], &m[lean]);
	}
	cr_assert_eq(m[1].n_groups, m[0].n_groups, "%s", study);
	cr_assert_eq(m[2].n_groups, m[0].n_groups, "%s", study);
	cr_expect_eq(m[1].n_comparisons, 0, "%s", study);
	while (p50 < m[0].n_percentiles && m[0].percentiles[p50] != 50)
		p50++;
	cr_assert_lt(p50, m[0].n_percentiles);
	for (size_t g = 0; g < m[0].n_groups; g++) {
		const struct report_group *a = &m[0].groups[g], *b = &m[1].groups[g];
		cr_assert_str_eq(b->metric, a->metric);
		cr_assert_eq(b->n_series, a->n_series);
		for (size_t i = 0; i < a->n_series; i++) {
			const struct report_series *x = &a->series[i], *y = &b->series[i];
			const struct report_series *z = &m[2].groups[g].series[i];
			char *what = xasprintf("%s @%g%s: %s, %s, %s", study, level,
					       filtered ? " --metric wall" : "", a->workload,
					       a->metric, x->variant);
			cr_expect_eq(y->compared, x->compared, "%s", what);
			expect_same_dilation(&y->mean_dil, &x->mean_dil, what);
			for (size_t p = 0; p < m[0].n_percentiles; p++)
				expect_same_dilation(&y->pct_dil[p], &x->pct_dil[p], what);
			expect_same_dilation(&z->pct_dil[p50], &x->pct_dil[p50], what);
			for (size_t p = 0; x->compared && p < m[0].n_percentiles; p++)
				cr_expect(p == p50 || (!z->pct_dil[p].ok && !strcmp(z->pct_dil[p].reason,
							REPORT_NOT_COMPUTED)), "%s: p%g", what,
					  m[0].percentiles[p]);
			cr_expect(!x->compared || (!z->mean_dil.ok &&
				  !strcmp(z->mean_dil.reason, REPORT_NOT_COMPUTED)), "%s: mean", what);
			cr_expect_not(y->verdict.tested, "%s", what);
			cr_expect(y->verdict.reason && !strcmp(y->verdict.reason, REPORT_NOT_JUDGED),
				  "%s", what);
			judged += x->verdict.tested;
			free(what);
		}
	}
	/* the whole model judged what the lean one did not */
	cr_expect_gt(judged, 0, "%s: nothing judged in the whole model", study);
	for (int lean = 0; lean < 3; lean++)
		report_release(&m[lean]);
}

Test(doc, a_model_without_verdicts_has_the_same_dilations)
{
	static const char *const studies[] = { "blocks", "calib", "multi", "tracer", "matrix" };

	for (size_t k = 0; k < ARRAY_SIZE(studies); k++)
		for (int filtered = 0; filtered < 2; filtered++)
			expect_lean_same(studies[k], k ? 0.95 : 0.99, filtered);
}

/* A workload's primary: is stored with the run and is its answer. */
Test(doc, a_workloads_primary_metric_is_its_answer)
{
	struct report_opts o = { 0 };
	struct report_model m;
	struct cli_result r;
	struct store *st;
	char *db = xasprintf("%s/p.db", dir), *stored;
	int usage = 0;

	tl_write(dir, "e.yaml", "name: p\nwarmup: 0\nrepetitions: 3\n"
		 "variants: [{name: a}, {name: b, env: {X: 1}}]\n"
		 "workloads:\n"
		 "  - name: w\n"
		 "    shell: 'echo \"score: 7\"'\n"
		 "    metrics: [{name: score, regex: '^score: ([0-9]+)', unit: pt}]\n"
		 "    primary: score\n"
		 "  - {name: plain, cmd: [true]}\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	stored = cli_sql_text(db, "SELECT group_concat(coalesce(primary_metric, '-'), ',') "
			      "FROM workloads");
	cr_assert_str_eq(stored, "score,-");
	free(stored);
	cr_assert_eq(store_open(db, STORE_READ, &st), 0);
	cr_assert_eq(report_build(st, &o, &m, &usage), 0);
	store_close(st);
	for (size_t g = 0; g < m.n_groups; g++)
		cr_assert_eq(m.groups[g].primary,
			     !strcmp(m.groups[g].workload, "w") ? !strcmp(m.groups[g].metric, "score")
								 : !strcmp(m.groups[g].metric, "wall"),
			     "%s: %s", m.groups[g].workload, m.groups[g].metric);
	report_release(&m);
	/* --config-metric names every workload's answer */
	o.config_metric = "wall";
	cr_assert_eq(store_open(db, STORE_READ, &st), 0);
	cr_assert_eq(report_build(st, &o, &m, &usage), 0);
	store_close(st);
	for (size_t g = 0; g < m.n_groups; g++)
		cr_assert_eq(m.groups[g].primary, !strcmp(m.groups[g].metric, "wall"));
	report_release(&m);

	/* a metric the workload does not have: where, and nothing written */
	tl_write(dir, "bad.yaml", "name: p\nvariants: [{name: a}]\n"
		 "workloads:\n  - {name: w, cmd: [true], primary: ops}\n");
	cli_run(dir, &r, "run", "bad.yaml", "--db", "bad.db", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "bad.yaml:4:37: primary: 'ops' is not a metric of workload 'w'"),
		  "%s", r.err);
	cli_result_release(&r);
	free(db);
	db = xasprintf("%s/bad.db", dir);
	cr_assert(!tl_exists(db), "a bad study wrote its database");
	free(db);
}
