/*
 * cmd_gate.c - `perturb gate`: judge a stored run against dilation
 * thresholds, for CI.
 *
 * Rules come from the experiment's `gate:` section (the file given, else
 * the experiment text stored with the run) or, when any rule option is
 * given, one rule from the options.  Each rule is expanded over the run's
 * variants (not the baseline) and workloads its names or globs (fnmatch)
 * match: one judgement per (rule, variant, workload).
 *
 * A judgement compares the confidence interval of the dilation in % of the
 * rule's statistic (report_build: reports/report.h; the intervals are the
 * report's, nothing is recomputed here) with the threshold t:
 *   FAIL          lower bound > t
 *   PASS          upper bound < t
 *   INCONCLUSIVE  the interval contains t, or there is no interval.
 *
 * Multiple judgements: Holm's step-down procedure (Holm, "A simple
 * sequentially rejective multiple test procedure", Scand. J. Statist. 6,
 * 1979) applied to the tests obtained by inverting the intervals.  Each
 * judgement is one hypothesis, "the dilation equals the threshold"; it is
 * rejected at level a (and the judgement decided: PASS or FAIL) when the
 * threshold lies outside the 1 - a interval.  With m judgements of which k
 * are decided so far, every undecided judgement is tested with the
 * interval at level 1 - alpha / (m - k) (alpha = 1 - the rule's
 * confidence); the newly decided ones raise k and the step repeats until a
 * step decides nothing.  Because the intervals of one comparison are
 * nested in the level (the bootstrap resamples are seeded by the run and
 * the comparison's names, so every level reads the same replicates), this
 * is exactly Holm's procedure on the inverted-test p-values, and it keeps
 * the family-wise error rate at alpha.  The first step is Bonferroni
 * (1 - alpha / m); with one judgement the interval is the rule's own.
 * The interval printed is the one of the step that decided the judgement
 * (or of the last step for undecided ones), with its level.
 *
 * More runs for an inconclusive judgement: gate_runs_needed()
 * (reports/gate_out.h), from the half-width on the threshold's side of the
 * estimate and the distance to the threshold, at the judgement's (Holm)
 * level and power GATE_POWER; worded by gate_more_runs().
 *
 * The judgements and their outputs (text, JUnit, Markdown):
 * reports/gate_out.h.
 */
#include "commands.h"
#include "options.h"
#include "engine/config.h"
#include "reports/report.h"
#include "reports/gate_out.h"
#include "reports/decide.h"
#include "engine/store.h"
#include "lib/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct model_cache {
	double level;
	struct report_model m;
};

struct gate {
	struct store *st;
	int64_t run_id;
	struct report_opts o;
	struct model_cache *cache;
	size_t n_cache, alloc_cache;
	struct gate_judgement *j;
	size_t n_j, alloc_j;
};

static void push_unique(char ***list, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*list)[i], s))
			return;
	*list = xrealloc(*list, (*n + 1) * sizeof(char *));
	(*list)[(*n)++] = (char *)s;
}

static int statistic_percentile(enum statistic s, double *p)
{
	switch (s) {
	case STAT_P0: *p = 0; return 1;
	case STAT_P50: *p = 50; return 1;
	case STAT_P80: *p = 80; return 1;
	case STAT_P99: *p = 99; return 1;
	case STAT_MEAN: break;
	}
	return 0;
}

/* The model at this level, built once; NULL (printed) on error. */
static const struct report_model *model_at(struct gate *g, double level, int *usage_error)
{
	for (size_t i = 0; i < g->n_cache; i++)
		if (g->cache[i].level == level)
			return &g->cache[i].m;
	ALLOC_GROW(g->cache, g->n_cache + 1, g->alloc_cache);
	struct model_cache *c = &g->cache[g->n_cache];
	memset(c, 0, sizeof(*c));
	c->level = level;
	g->o.confidence = level;
	if (report_build(g->st, &g->o, &c->m, usage_error) < 0) {
		report_release(&c->m);
		return NULL;
	}
	g->n_cache++;
	return &c->m;
}

/* Fill j's interval from model m. */
static void judge_with(struct gate_judgement *j, const struct report_model *m)
{
	const struct report_series *s = NULL, *b = NULL;
	const struct report_dilation *d = NULL;
	double p;

	j->has_ci = 0;
	j->reason = "the run has no values of this metric";
	for (size_t gi = 0; gi < m->n_groups && !s; gi++) {
		const struct report_group *grp = &m->groups[gi];
		if (strcmp(grp->workload, j->workload) || strcmp(grp->metric, j->rule->metric))
			continue;
		b = report_baseline(grp);
		for (size_t si = 0; si < grp->n_series; si++)
			if (!strcmp(grp->series[si].variant, j->variant))
				s = &grp->series[si];
	}
	if (!s)
		return;
	j->n = s->n;
	if (b && b->n < j->n)
		j->n = b->n;
	if (!s->compared) {
		j->reason = s->no_compare_reason ? s->no_compare_reason : "not compared";
		return;
	}
	if (statistic_percentile(j->rule->statistic, &p)) {
		for (size_t k = 0; k < m->n_percentiles; k++)
			if (m->percentiles[k] == p)
				d = &s->pct_dil[k];
	} else {
		d = &s->mean_dil;
	}
	if (!d) {
		j->reason = "the statistic is not in the report";
		return;
	}
	if (!d->ok) {
		j->reason = d->reason ? d->reason : "no dilation";
		return;
	}
	j->est = d->d.pct;
	if (!d->d.ci_pct.has_ci || !isfinite(d->d.ci_pct.lo) || !isfinite(d->d.ci_pct.hi)) {
		j->reason = d->d.ci_pct.reason ? d->d.ci_pct.reason : "no interval";
		return;
	}
	j->has_ci = 1;
	j->reason = NULL;
	j->lo = d->d.ci_pct.lo;
	j->hi = d->d.ci_pct.hi;
	j->level = m->confidence;
}

struct judge_ctx {
	struct gate *g;
	int *usage_error;
};

/* decide_holm's interval: judgement i's from the model at level. */
static int judge_at(void *vctx, size_t i, double level, double *lo, double *hi)
{
	struct judge_ctx *c = vctx;
	struct gate_judgement *j = &c->g->j[i];
	const struct report_model *model = model_at(c->g, level, c->usage_error);

	if (!model)
		return -1;
	judge_with(j, model);
	*lo = j->lo;
	*hi = j->hi;
	return j->has_ci;
}

/* Holm's step-down (see the top of the file; reports/decide.h, shared with
 * compare).  -1 (printed) on error. */
static int judge_all(struct gate *g, int *usage_error)
{
	struct judge_ctx c = { .g = g, .usage_error = usage_error };
	struct decide_item *items = xcalloc(g->n_j ? g->n_j : 1, sizeof(*items));
	size_t m = g->n_j;

	for (size_t i = 0; i < m; i++) {
		items[i].t = g->j[i].thr;
		items[i].alpha = g->j[i].alpha;
	}
	if (decide_holm(items, m, judge_at, &c) < 0) {
		free(items);
		return -1;
	}
	for (size_t i = 0; i < m; i++) {
		struct gate_judgement *j = &g->j[i];
		j->decided = items[i].verdict != DECIDE_UNDECIDED;
		if (j->decided)
			j->verdict = items[i].verdict == DECIDE_ABOVE ? GATE_FAIL : GATE_PASS;
	}
	free(items);
	for (size_t i = 0; i < m; i++) {
		struct gate_judgement *j = &g->j[i];
		if (j->decided)
			continue;
		j->verdict = GATE_INCONCLUSIVE;
		j->runs_needed = j->has_ci ? gate_runs_needed(j->n, j->est, j->lo, j->hi, j->thr,
							      j->level, GATE_POWER) : NAN;
	}
	return 0;
}

/* Expand the rules over the run's names. */
static void expand(struct gate *g, const struct gate_rule *rules, size_t n_rules,
		   char **variants, size_t nv, char **workloads, size_t nw,
		   const char *baseline)
{
	for (size_t r = 0; r < n_rules; r++) {
		const struct gate_rule *rule = &rules[r];
		size_t before = g->n_j;
		for (size_t v = 0; v < nv; v++) {
			if (baseline && !strcmp(variants[v], baseline))
				continue;
			/* literally first: an instance's name, "x[p=v]", is
			 * also a glob that does not match itself */
			if (strcmp(rule->variant, variants[v]) && fnmatch(rule->variant, variants[v], 0))
				continue;
			for (size_t w = 0; w < nw; w++) {
				struct gate_judgement *j;
				if (strcmp(rule->workload, workloads[w]) &&
				    fnmatch(rule->workload, workloads[w], 0))
					continue;
				ALLOC_GROW(g->j, g->n_j + 1, g->alloc_j);
				j = &g->j[g->n_j++];
				memset(j, 0, sizeof(*j));
				j->rule = rule;
				j->variant = variants[v];
				j->workload = workloads[w];
				j->thr = 100 * rule->max_dilation;
				j->alpha = 1 - rule->confidence;
				push_unique(&g->o.metrics, &g->o.n_metrics, rule->metric);
				push_unique(&g->o.workloads, &g->o.n_workloads, workloads[w]);
			}
		}
		if (g->n_j == before)
			warning("gate rule %zu (variant '%s', workload '%s') matches nothing in run %lld",
				r + 1, rule->variant, rule->workload, (long long)g->run_id);
	}
}

/*
 * The run's experiment: the file given, else the stored path when its
 * bytes are still the stored ones (so that messages name the real file and
 * includes resolve), else the stored text written to a temporary file
 * beside the stored path (or in $TMPDIR when that folder is gone).
 * Returns 0, or an exit status (printed).
 */
static int load_experiment(struct store *st, const struct run_header *h, const char *path,
			   struct experiment *exp)
{
	char err[1024], sha[65], *text = NULL, *tmp = NULL, *dir = NULL, *cur;
	size_t len, cur_len;
	int ret = EXIT_USAGE, fd = -1;

	if (path) {
		if (config_load(path, exp, err, sizeof(err)) < 0) {
			error("%s", err);
			goto out;
		}
		return 0;
	}
	if (h->path && (cur = read_user_file(h->path, CONFIG_FILE_MAX, &cur_len, NULL, 0))) {
		sha256_hex(cur, cur_len, sha);
		free(cur);
		if (h->sha256 && !strcmp(sha, h->sha256)) {
			if (config_load(h->path, exp, err, sizeof(err)) < 0) {
				error("%s", err);
				goto out;
			}
			return 0;
		}
	}
	if (store_experiment_text(st, h->id, &text, &len) < 0) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	dir = h->path ? dir_name(h->path) : NULL;
	tmp = xasprintf("%s/.perturb-gate-XXXXXX", dir && access(dir, W_OK) == 0 ? dir :
			getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(tmp)) < 0 ||
	    write(fd, text, len) != (ssize_t)len || close(fd) < 0) {
		error("cannot write a temporary copy of the stored experiment '%s': %s", tmp,
		      strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (config_load(tmp, exp, err, sizeof(err)) < 0) {
		error("the experiment stored with run %lld: %s", (long long)h->id, err);
		unlink(tmp);
		goto out;
	}
	unlink(tmp);
	ret = 0;
out:
	free(text);
	free(tmp);
	free(dir);
	return ret;
}

/* --statistic: p0, p50 (also median), p80, p99 or mean. */
static int parse_statistic(const struct opt *o, const char *val)
{
	if (statistic_parse(val, o->value))
		return error("--statistic takes one of " STATISTIC_NAMES ", got '%s'", val);
	return 0;
}

int cmd_gate(int argc, char **argv)
{
	struct gate g = { 0 };
	struct gate_outcome outcome;
	struct experiment exp = { 0 };
	struct run_header h = { 0 };
	struct gate_rule opt_rule = { 0 };
	const struct gate_rule *rules;
	size_t n_rules;
	const char *db = "results/perturb.db", *junit = NULL, *markdown = NULL, *file = NULL;
	char **variants = NULL, **workloads = NULL;
	size_t nv = 0, nw = 0, n_fail = 0, n_inc = 0;
	int ret = EXIT_USAGE, rc, strict = 0, have_rule = 0, have_max = 0, usage_error = 0;
	const char *run = NULL;
	struct opt opts[] = {
		OPT_ARG("EXPERIMENT.yaml", &file,
			"the rules of its gate: section (default: the one stored\nwith the run)"),
		OPT_STRING(0, "db", &db, "PATH", "results database (default results/perturb.db)"),
		OPT_STRING(0, "run", &run, "ID",
			   "a stored run: its id, latest (the default), or a\nnegative offset: -1 the latest, -2 the one before"),
		OPT_STRING(0, "variant", (const char **)&opt_rule.variant, "V",
			   "rule: variant name or glob (default *)"),
		OPT_STRING(0, "workload", (const char **)&opt_rule.workload, "W",
			   "rule: workload name or glob (default *)"),
		OPT_STRING(0, "metric", (const char **)&opt_rule.metric, "M",
			   "rule: metric (default wall)"),
		OPT_CALLBACK(0, "statistic", &opt_rule.statistic, parse_statistic, "S",
			     "rule: p0, p50 (default), p80, p99 or mean"),
		OPT_PERCENT(0, "max-dilation", &opt_rule.max_dilation, 0, INFINITY, 0, "X",
			    "rule: threshold, 2% or 0.02; a bare 5 is refused\n(5 % or 500 %?) (required for a rule)"),
		OPT_LEVEL(0, "confidence", &opt_rule.confidence, "C", "rule: level (default 0.95)"),
		OPT_FLAG(0, "strict", &strict, "inconclusive judgements fail the gate"),
		OPT_STRING(0, "junit", &junit, "FILE", "write JUnit XML: a testcase per judgement"),
		OPT_STRING(0, "markdown", &markdown, "FILE", "write a Markdown summary"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "no warnings"),
		OPT_END(),
	};

	opt_rule.variant = "*";
	opt_rule.workload = "*";
	opt_rule.metric = "wall";
	opt_rule.statistic = STAT_P50;
	opt_rule.confidence = 0.95;
	if ((rc = parse_options(argc, argv, opts, "gate"))) {
		ret = rc < 0 ? EXIT_USAGE : EXIT_OK;
		goto out;
	}
	have_max = !!opt_given(opts, &opt_rule.max_dilation);
	have_rule = have_max || opt_given(opts, &opt_rule.variant) ||
		    opt_given(opts, &opt_rule.workload) || opt_given(opts, &opt_rule.metric) ||
		    opt_given(opts, &opt_rule.statistic) || opt_given(opts, &opt_rule.confidence);
	if (have_rule && !have_max) {
		error("a gate rule from options needs --max-dilation (e.g. --max-dilation 2%%)");
		goto out;
	}
	if (have_rule && file) {
		error("give either rule options or an experiment file, not both");
		goto out;
	}
	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		goto out;
	}
	ret = EXIT_RUNTIME;
	if (store_open(db, STORE_READ, &g.st) < 0)
		goto out;
	if (store_resolve_run(g.st, run, &g.run_id, &usage_error) < 0) {
		ret = usage_error ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (store_run_header(g.st, g.run_id, &h) < 0)
		goto out;
	if (have_rule) {
		rules = &opt_rule;
		n_rules = 1;
	} else {
		if ((rc = load_experiment(g.st, &h, file, &exp))) {
			ret = rc;
			goto out;
		}
		if (!exp.n_gate) {
			error("experiment '%s' has no gate: rules (add a gate: section, or give one "
			      "rule with --max-dilation)", exp.name);
			ret = EXIT_USAGE;
			goto out;
		}
		rules = exp.gate;
		n_rules = exp.n_gate;
	}
	if (store_variant_names(g.st, g.run_id, &variants, &nv) < 0 ||
	    store_workload_names(g.st, g.run_id, &workloads, &nw) < 0)
		goto out;
	g.o.run_id = g.run_id;
	expand(&g, rules, n_rules, variants, nv, workloads, nw, h.baseline);
	if (!g.n_j) {
		error("no gate rule matches a variant and workload of run %lld", (long long)g.run_id);
		ret = EXIT_USAGE;
		goto out;
	}
	if (judge_all(&g, &usage_error) < 0) {
		ret = usage_error ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}

	outcome = (struct gate_outcome){ .run_id = g.run_id, .j = g.j, .n = g.n_j,
					 .strict = strict };
	gate_print(stdout, &outcome);
	for (size_t i = 0; i < g.n_j; i++) {
		const struct gate_judgement *j = &g.j[i];
		char *what, *more;
		if (j->verdict == GATE_FAIL)
			n_fail++;
		if (j->verdict != GATE_INCONCLUSIVE)
			continue;
		n_inc++;
		what = gate_describe(j);
		more = gate_more_runs(j);
		warning("inconclusive: %s; %s", what, more);
		free(more);
		free(what);
	}
	if (junit && gate_write_junit(junit, &outcome) < 0)
		goto out;
	if (markdown && gate_write_markdown(markdown, &outcome) < 0)
		goto out;
	if (n_fail || (strict && n_inc)) {
		note("gate failed: %zu of %zu judgements over the threshold%s", n_fail, g.n_j,
		     strict && n_inc ? ", inconclusive ones count as failed (--strict)" : "");
		ret = EXIT_OVERHEAD;
	} else {
		ret = EXIT_OK;
	}
out:
	for (size_t i = 0; i < g.n_cache; i++)
		report_release(&g.cache[i].m);
	free(g.cache);
	free(g.j);
	free(g.o.metrics);
	free(g.o.workloads);
	for (size_t i = 0; i < nv; i++)
		free(variants[i]);
	free(variants);
	for (size_t i = 0; i < nw; i++)
		free(workloads[i]);
	free(workloads);
	run_header_release(&h);
	experiment_release(&exp);
	if (g.st)
		store_close(g.st);
	return ret;
}
