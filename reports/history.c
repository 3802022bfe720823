/* history.c - a study's overhead across revisions; see history.h */
#include "history.h"
#include "engine/revision.h"
#include "stats/stats.h"
#include "lib/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* o->study names a run's study: its name, or a prefix (>= 6 hex digits) of
 * its experiment's hash. */
static int is_study(const struct run_summary *r, const char *study)
{
	size_t len = strlen(study), i;

	if (r->name && !strcmp(r->name, study))
		return 1;
	if (len < 6 || !r->sha256)
		return 0;
	for (i = 0; i < len; i++)
		if (!isxdigit((unsigned char)study[i]))
			return 0;
	return !strncasecmp(r->sha256, study, len);
}

/* Sort key of a run: its commit's place, then its start, then its id. */
struct run_key {
	size_t pos;
	const struct run_summary *r;
};

static int cmp_key(const void *a, const void *b)
{
	const struct run_key *x = a, *y = b;
	int c;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	c = strcmp(x->r->started ? x->r->started : "", y->r->started ? y->r->started : "");
	if (c)
		return c;
	return x->r->id < y->r->id ? -1 : x->r->id > y->r->id;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The commit order: every run's commit's place in the repository's
 * rev-list (keys[i].pos); 0 when not every run has a known commit (then
 * the order is the time's).  -1 only on out-of-memory (aborts) - a
 * repository git cannot read is a note, and time order.
 */
static int commit_order(struct run_key *keys, size_t n, char **repo)
{
	char **ids = NULL, **sorted;
	size_t n_ids = 0, i;
	const char *dir = NULL;

	for (i = 0; i < n; i++) {
		if (!keys[i].r->commit || !keys[i].r->repo)
			return 0;
		if (!dir)
			dir = keys[i].r->repo;
	}
	if (!dir || revision_list(dir, &ids, &n_ids) < 0)
		return 0;
	/* commit -> place: a sorted copy of (id "\n" place) strings */
	sorted = xcalloc(n_ids ? n_ids : 1, sizeof(*sorted));
	for (i = 0; i < n_ids; i++)
		sorted[i] = xasprintf("%s %zu", ids[i], i);
	qsort(sorted, n_ids, sizeof(*sorted), cmp_str);
	for (i = 0; i < n; i++) {
		size_t lo = 0, hi = n_ids, len = strlen(keys[i].r->commit);
		keys[i].pos = SIZE_MAX;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			int c = strncmp(sorted[mid], keys[i].r->commit, len);
			if (!c && sorted[mid][len] == ' ') {
				keys[i].pos = strtoull(sorted[mid] + len + 1, NULL, 10);
				break;
			}
			if (c < 0 || (!c && sorted[mid][len] < ' '))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (keys[i].pos == SIZE_MAX)
			break;
	}
	for (size_t k = 0; k < n_ids; k++)
		free(sorted[k]);
	free(sorted);
	argv_free(ids);
	if (i < n) {
		note("run %lld's commit %.12s is not in %s: the history is in time order",
		     (long long)keys[i].r->id, keys[i].r->commit, dir);
		for (i = 0; i < n; i++)
			keys[i].pos = 0;
		return 0;
	}
	*repo = xstrdup(dir);
	return 1;
}

/* What names a run's revision: its commit, else its label, else the run. */
static char *rev_key(const struct run_summary *r)
{
	if (r->commit)
		return xasprintf("c:%s", r->commit);
	if (r->label)
		return xasprintf("l:%s", r->label);
	return xasprintf("r:%lld", (long long)r->id);
}

static char *rev_name(const struct run_summary *r)
{
	if (r->revision)
		return xstrdup(r->revision);
	if (r->label)
		return xstrdup(r->label);
	return xasprintf("run %lld", (long long)r->id);
}

/* Pick and order the study's runs into h->runs and h->revs. */
static int pick_runs(struct store *st, const struct history_opts *o, struct history *h,
		     int *usage_error)
{
	struct run_summary *all = NULL;
	struct run_key *keys;
	size_t n_all = 0, n = 0, first = 0;
	char *prev = NULL;

	if (store_list_runs_brief(st, &all, &n_all) < 0)
		return -1;
	keys = xcalloc(n_all ? n_all : 1, sizeof(*keys));
	for (size_t i = 0; i < n_all; i++) {
		if (!is_study(&all[i], o->study) || !all[i].status ||
		    strcmp(all[i].status, "completed") || (o->upto && all[i].id > o->upto))
			continue;
		keys[n++].r = &all[i];
	}
	if (!n) {
		int any = 0;
		for (size_t i = 0; i < n_all; i++)
			any |= is_study(&all[i], o->study);
		error("%s '%s' in the database", any ? "no completed run of study" : "no study",
		      o->study);
		if (!any && n_all)
			note("its studies are named in 'perturb runs'; a hash is a prefix of "
			     "6 hex digits or more");
		*usage_error = 1;
		free(keys);
		run_summaries_release(all, n_all);
		return -1;
	}
	h->study = xstrdup(keys[0].r->name ? keys[0].r->name : o->study);
	h->order = !o->time_order && commit_order(keys, n, &h->repo) ? "commit" : "time";
	qsort(keys, n, sizeof(*keys), cmp_key);
	if (o->last && n > o->last)
		first = n - o->last;
	h->runs = xcalloc(n - first, sizeof(*h->runs));
	h->revs = xcalloc(n - first, sizeof(*h->revs));
	for (size_t i = first; i < n; i++) {
		const struct run_summary *r = keys[i].r;
		struct history_run *hr = &h->runs[h->n_runs++];
		char *key = rev_key(r);

		hr->id = r->id;
		hr->label = r->label ? xstrdup(r->label) : NULL;
		hr->revision = r->revision ? xstrdup(r->revision) : NULL;
		hr->commit = r->commit ? xstrdup(r->commit) : NULL;
		hr->started = r->started ? xstrdup(r->started) : NULL;
		if (!prev || strcmp(prev, key))
			h->revs[h->n_revs++] = rev_name(r);
		hr->rev = h->n_revs - 1;
		free(prev);
		prev = key;
	}
	free(prev);
	free(keys);
	run_summaries_release(all, n_all);
	return 0;
}

static struct history_series *find_series(struct history *h, const char *w, const char *v,
					  const char *metric, const char *unit)
{
	struct history_series *s;

	for (size_t i = 0; i < h->n_series; i++) {
		s = &h->series[i];
		if (!strcmp(s->workload, w) && !strcmp(s->variant, v) && !strcmp(s->metric, metric))
			return s;
	}
	ALLOC_GROW(h->series, h->n_series + 1, h->alloc_series);
	s = &h->series[h->n_series++];
	memset(s, 0, sizeof(*s));
	s->workload = xstrdup(w);
	s->variant = xstrdup(v);
	s->metric = xstrdup(metric);
	s->unit = xstrdup(unit ? unit : "");
	return s;
}

/* Run k's points: one per compared series of the model m. */
static void add_points(struct history *h, size_t k, const struct history_opts *o,
		       const struct report_model *m)
{
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		const struct report_series *base = report_baseline(g);

		if (g->hidden)
			continue;
		for (size_t si = 0; si < g->n_series; si++) {
			const struct report_series *s = &g->series[si];
			const struct report_dilation *d;
			struct history_series *hs;
			struct history_point *p;

			if (s->is_baseline || (o->variant && strcmp(o->variant, s->variant)))
				continue;
			hs = find_series(h, g->workload, s->variant, g->metric, g->unit);
			ALLOC_GROW(hs->pts, hs->n_pts + 1, hs->alloc_pts);
			p = &hs->pts[hs->n_pts++];
			memset(p, 0, sizeof(*p));
			p->run = k;
			p->n = s->n;
			p->value = report_stat_value(m, s);
			d = report_stat_dilation(m, s);
			p->pct = NAN;
			p->ci.lo = p->ci.hi = NAN;
			if (!d) {
				p->reason = s->compared ? "no dilation of the statistic" :
					    s->no_compare_reason ? s->no_compare_reason : "not compared";
				continue;
			}
			p->ok = 1;
			p->pct = d->d.pct;
			p->ci = d->d.ci_pct;
			p->ci.method = NULL;	/* the model's strings die with it */
			p->ci.reason = NULL;
			p->verdict = s->verdict.v;
			p->tested = s->verdict.tested;
			if (base && base->n && isfinite(base->median) && base->median != 0) {
				p->ratios = xcalloc(s->n ? s->n : 1, sizeof(double));
				for (size_t i = 0; i < s->n; i++)
					p->ratios[i] = s->values[i] / base->median;
				p->n_ratios = s->n;
			}
		}
	}
}

/* The change points of one series over its revisions (history.h). */
static int series_changepoints(const struct history *h, const struct history_opts *o,
			       struct history_series *s)
{
	double *x = NULL;
	size_t *len = NULL, n_x = 0, n_g = 0;
	int rc;

	s->cp_rev = xcalloc(s->n_pts ? s->n_pts : 1, sizeof(*s->cp_rev));
	len = xcalloc(s->n_pts ? s->n_pts : 1, sizeof(*len));
	for (size_t i = 0; i < s->n_pts; i++)
		n_x += s->pts[i].n_ratios;
	x = xcalloc(n_x ? n_x : 1, sizeof(*x));
	n_x = 0;
	for (size_t i = 0; i < s->n_pts; i++) {
		const struct history_point *p = &s->pts[i];
		size_t rev = h->runs[p->run].rev;
		if (!p->n_ratios)
			continue;
		if (!n_g || s->cp_rev[n_g - 1] != rev) {
			s->cp_rev[n_g] = rev;
			len[n_g++] = 0;
		}
		memcpy(x + n_x, p->ratios, p->n_ratios * sizeof(*x));
		n_x += p->n_ratios;
		len[n_g - 1] += p->n_ratios;
	}
	s->n_cp_rev = n_g;
	if (!n_g) {
		s->cps.reason = "no run has this series compared";
		rc = 0;
	} else if (o->newest) {
		if (n_g < 2 || s->cp_rev[n_g - 1] != h->runs[h->n_runs - 1].rev) {
			s->cps.reason = n_g < 2 ? "one revision only" :
					"the newest run has no value of this series";
			rc = 0;
		} else if ((rc = stats_newest_change(x, len, n_g, &o->cp, &s->newest)) == 0) {
			s->has_newest = 1;
			s->cps.method = "the newest revision against the others pooled: energy "
				"distance Q (Matteson & James 2014), exact permutation p over the "
				"revisions held out";
		}
	} else if ((rc = stats_changepoints(x, len, n_g, &o->cp, &s->cps)) < 0) {
		error("the change points of %s, %s, %s: %s", s->workload, s->variant, s->metric,
		      strerror(-rc));
	}
	if (rc < 0 && o->newest)
		error("the change at the newest run of %s, %s, %s: %s", s->workload, s->variant,
		      s->metric, strerror(-rc));
	free(x);
	free(len);
	return rc < 0 ? -1 : 0;
}

int history_pick(struct store *st, const struct history_opts *o, struct history *h,
		 int *usage_error)
{
	memset(h, 0, sizeof(*h));
	*usage_error = 0;
	h->sig = o->cp.sig ? o->cp.sig : 0.05;
	h->min_change = o->cp.min_magnitude;
	return pick_runs(st, o, h, usage_error);
}

int history_build(struct store *st, const struct history_opts *o, struct history *h,
		  int *usage_error)
{
	return history_pick(st, o, h, usage_error) < 0 ? -1 :
	       history_measure(st, o, h, usage_error);
}

int history_measure(struct store *st, const struct history_opts *o, struct history *h,
		    int *usage_error)
{
	struct report_opts ro = o->ro;
	char *metric = (char *)(o->metric ? o->metric : "wall");
	char *workload = (char *)o->workload;
	char stat[32];

	*usage_error = 0;
	ro.metrics = &metric;
	ro.n_metrics = 1;
	ro.workloads = workload ? &workload : NULL;
	ro.n_workloads = workload ? 1 : 0;
	ro.want_rows = 0;
	ro.wanted_families = 1;
	ro.skip_noise = 1;
	/* only the median's dilation is read: the report's percentiles up to
	 * 50, so that its interval's seed (by the percentile's place in the
	 * list) is perturb report's */
	if (!ro.n_percentiles) {
		ro.percentiles[0] = 0;
		ro.percentiles[1] = 50;
		ro.n_percentiles = 2;
	}
	for (size_t k = 0; k < h->n_runs; k++) {
		struct report_model m = { 0 };
		int ue = 0;

		ro.run_id = h->runs[k].id;
		if (report_build(st, &ro, &m, &ue) < 0) {
			*usage_error = ue;
			report_release(&m);
			return -1;
		}
		if (!k) {
			report_stat_name(&m, stat, sizeof(stat));
			h->statistic = !strcmp(stat, "median") ? "median" : !strcmp(stat, "mean") ?
				       "mean" : "percentile";
			h->confidence = m.confidence;
		}
		add_points(h, k, o, &m);
		report_release(&m);
	}
	if (!h->n_series) {
		error("no run of study '%s' has %s%s%s%s%s compared with its baseline", h->study,
		      metric, workload ? " on " : "", workload ? workload : "",
		      o->variant ? " for variant " : "", o->variant ? o->variant : "");
		*usage_error = 1;
		return -1;
	}
	if (!o->no_changepoints)
		for (size_t i = 0; i < h->n_series; i++)
			if (series_changepoints(h, o, &h->series[i]) < 0)
				return -1;
	return 0;
}

void history_release(struct history *h)
{
	for (size_t i = 0; i < h->n_runs; i++) {
		free(h->runs[i].label);
		free(h->runs[i].revision);
		free(h->runs[i].commit);
		free(h->runs[i].started);
	}
	free(h->runs);
	for (size_t i = 0; i < h->n_revs; i++)
		free(h->revs[i]);
	free(h->revs);
	for (size_t i = 0; i < h->n_series; i++) {
		struct history_series *s = &h->series[i];
		for (size_t k = 0; k < s->n_pts; k++)
			free(s->pts[k].ratios);
		free(s->pts);
		free(s->cp_rev);
		stats_changepoints_release(&s->cps);
		free(s->workload);
		free(s->variant);
		free(s->metric);
		free(s->unit);
	}
	free(h->series);
	free(h->study);
	free(h->repo);
	memset(h, 0, sizeof(*h));
}

const char *history_cp_before(const struct history *h, const struct history_series *s,
			      const struct changepoint *c)
{
	return h->revs[s->cp_rev[c->index - 1]];
}

const char *history_cp_at(const struct history *h, const struct history_series *s,
			  const struct changepoint *c)
{
	return h->revs[s->cp_rev[c->index]];
}

const struct changepoint *history_newest_change(const struct history *h,
						const struct history_series *s)
{
	double sig = h->sig;

	if (!s->has_newest || !(s->newest.p <= sig) ||
	    (isfinite(s->newest.pct) && fabs(s->newest.pct) < h->min_change))
		return NULL;
	return &s->newest;
}

const struct history_point *history_newest_point(const struct history *h,
						 const struct history_series *s)
{
	if (s->n_pts && s->pts[s->n_pts - 1].run == h->n_runs - 1)
		return &s->pts[s->n_pts - 1];
	return NULL;
}
