/* calib.c - cost per event and overhead compensation; see calib.h */
#include "report.h"
#include "backends/tracers.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Published costs per event.  Only figures the source prints: the kernel's
 * BPF trigger benchmarks give throughputs (hits per second with a program
 * attached, and without), from which the cost per hit is derived; the
 * survey's per-tracer latencies are "not given" here (NaN) until their
 * exact figures are entered.
 */
#define NAKRYIKO "A. Nakryiko, \"selftest/bpf: add BPF triggering benchmark\", bpf-next " \
	"patch 3/3, 2020-05-08 (tools/testing/selftests/bpf/benchs/bench_trigger.c)"
#define OLSA "J. Olsa, \"uprobes: Add support to optimize usdt probes on x86_64\", PATCHv6 " \
	"perf/core 00/22, 2025-07-20 (tools/testing/selftests/bpf/benchs/run_bench_uprobes.sh)"
#define GEBAI "M. Gebai, M. R. Dagenais, \"Survey and Analysis of Kernel and Userspace " \
	"Tracers on Linux: Design, Implementation, and Overhead\", ACM Computing Surveys 51(2), " \
	"2018, doi:10.1145/3158644"

const struct report_published report_published[] = {
	{ "bpf", "tracepoint", 6.690e6, 9.200e6, "6.690 M/s, 9.200 M/s untraced (getpgid)",
	  "Nakryiko 2020", NAKRYIKO ": trig-tp against trig-base" },
	{ "bpf", "rawtracepoint", 8.571e6, 9.200e6, "8.571 M/s, 9.200 M/s untraced (getpgid)",
	  "Nakryiko 2020", NAKRYIKO ": trig-rawtp against trig-base" },
	{ "bpf", "kprobe", 6.431e6, 9.200e6, "6.431 M/s, 9.200 M/s untraced (getpgid)",
	  "Nakryiko 2020", NAKRYIKO ": trig-kprobe against trig-base" },
	{ "bpf", "fentry", 8.955e6, 9.200e6, "8.955 M/s, 9.200 M/s untraced (getpgid)",
	  "Nakryiko 2020", NAKRYIKO ": trig-fentry against trig-base" },
	{ "bpf", "uprobe", 3.160e6, 152.501e6, "3.160 M/s, 152.501 M/s untraced (nop)",
	  "Olsa 2025", OLSA ": uprobe-nop against usermode-count, before the change" },
	{ "ftrace", "tracepoint", NAN, NAN, "not given", "Gebai & Dagenais 2018",
	  GEBAI ": kernel tracepoint cost per tracer" },
	{ "bpf", "tracepoint", NAN, NAN, "not given", "Gebai & Dagenais 2018",
	  GEBAI ": kernel tracepoint cost per tracer" },
	{ "perf", "tracepoint", NAN, NAN, "not given", "Gebai & Dagenais 2018",
	  GEBAI ": kernel tracepoint cost per tracer" },
	{ "lttng", "tracepoint", NAN, NAN, "not given", "Gebai & Dagenais 2018",
	  GEBAI ": kernel tracepoint cost per tracer" },
	{ "lttng", "ust", NAN, NAN, "not given", "Gebai & Dagenais 2018",
	  GEBAI ": user-space tracepoint cost per tracer" },
};
const size_t report_n_published = ARRAY_SIZE(report_published);

double report_published_ns(const struct report_published *p)
{
	if (!(p->hits_per_s > 0) || !(p->base_per_s > 0))
		return NAN;
	return 1e9 / p->hits_per_s - 1e9 / p->base_per_s;
}

/* The published row for tracer and an attach type that attach starts
 * with ("tracepoint (syscalls:...)" is a tracepoint): the first with a
 * figure, else the first without one (its source says "not given"). */
static const struct report_published *published_for(const char *tracer, const char *attach)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; attach && i < report_n_published; i++) {
			const struct report_published *p = &report_published[i];
			size_t n = strlen(p->attach);
			if (!strcmp(p->tracer, tracer) && !strncmp(attach, p->attach, n) &&
			    (!attach[n] || attach[n] == ' ' || attach[n] == ',') &&
			    (pass || !isnan(report_published_ns(p))))
				return p;
		}
	return NULL;
}

/* What the store says of the run: by workload idx, by variant idx. */
struct calib_ctx {
	struct report_model *m;
	char **workloads, **hits, **hits_metric, **metric, **ops_metric;
	size_t n_workloads, n_cols[4];
	char **attach;
	size_t n_attach;
};

static const char *col(char **v, size_t n, size_t i)
{
	return i < n ? v[i] : NULL;
}

static int is_calibration(const struct calib_ctx *c, size_t wi)
{
	return col(c->hits, c->n_cols[0], wi) || col(c->hits_metric, c->n_cols[1], wi);
}

/* Does workload (interned) have a per-operation metric (a micro)? */
static int has_micro(const struct report_model *m, const char *workload)
{
	for (size_t gi = 0; gi < m->n_groups; gi++)
		if (m->groups[gi].workload == workload && m->groups[gi].micro)
			return 1;
	return 0;
}

/* The attach type stored for the variant of series index vi. */
static const char *attach_of(struct calib_ctx *c, size_t vi)
{
	const char *a = col(c->attach, c->n_attach, vi);
	return report_intern(c->m, a ? a : "not recorded");
}

static void fail(struct report_model *m, struct report_calib *r, const char *why)
{
	r->ok = 0;
	r->reason = report_intern(m, why);
}

/* The mean of workload w's metric for variant into *out: 0, or -1 when
 * it has no value. */
static int metric_mean(const struct report_model *m, const char *w, const char *metric,
		       const char *variant, double *out)
{
	const struct report_series *s = report_find_series(report_find_group(m, w, metric),
							   variant);
	if (!s || !s->n || !s->has_summary)
		return -1;
	*out = s->sum.mean;
	return 0;
}

/* r's hits per run and events per hit (calib.h), once r->hits is known:
 * the hits per run are r->hits for a per-run calibration, r->hits x the
 * mean of the ops metric om for a per-operation one. */
static void events_per_hit(struct report_model *m, const char *om, struct report_calib *r)
{
	double ops;
	char buf[256];

	r->run_hits = r->events_per_hit = NAN;
	if (r->hits_per_run) {
		r->run_hits = r->hits;
	} else if (!om) {
		r->eph_reason = report_intern(m, "events per hit not measured: taken as 1 (no "
					      "ops_metric in its calibration: block)");
		return;
	} else if (metric_mean(m, r->workload, om, r->variant, &ops) < 0 || !(ops > 0)) {
		snprintf(buf, sizeof(buf), "events per hit not measured: taken as 1 (no value "
			 "of its ops metric '%s')", om);
		r->eph_reason = report_intern(m, buf);
		return;
	} else {
		r->run_hits = r->hits * ops;
	}
	if (!(r->run_hits > 0) || !(r->events_mean > 0)) {
		r->eph_reason = report_intern(m, "events per hit not measured: taken as 1 (no "
					      "event or no hit per run)");
		return;
	}
	r->events_per_hit = r->events_mean / r->run_hits;
}

/* A row of tracer k for the variant of series index vi, nothing yet
 * measured: its names, its published figure, every number NaN. */
static void calib_row_init(struct calib_ctx *c, const struct tracer_kind *k, size_t vi,
			   const char *variant, struct report_calib *r)
{
	r->tracer = report_intern(c->m, k->name);
	r->attach = attach_of(c, vi);
	r->variant = variant;
	r->cost_ns = r->events_mean = r->ns_per_hit = r->run_hits = r->events_per_hit = NAN;
	r->ci = (struct interval){ .lo = NAN, .hi = NAN };
	r->published = published_for(r->tracer, r->attach);
}

/* The cost per event of variant vi on calibration workload wi (calib.h). */
static void calibrate(struct calib_ctx *c, size_t wi, const struct tracer_kind *k,
		      const struct report_series *ev, size_t vi, struct report_calib *r)
{
	struct report_model *m = c->m;
	const char *w = report_intern(m, c->workloads[wi]);
	const char *hm = col(c->hits_metric, c->n_cols[1], wi);
	const char *metric = col(c->metric, c->n_cols[2], wi);
	const char *om = col(c->ops_metric, c->n_cols[3], wi);
	const struct report_group *g;
	const struct report_series *s;
	const struct report_dilation *d;
	double scale, per;
	char buf[256];

	if (!metric)
		metric = report_find_group(m, w, "ns_per_op") ? "ns_per_op" : "wall";
	g = report_find_group(m, w, metric);
	calib_row_init(c, k, vi, ev->variant, r);
	r->workload = w;
	r->metric = report_intern(m, metric);
	r->events_mean = ev->sum.mean;
	r->hits_per_run = hm || !(g && g->micro);
	if (hm) {
		if (metric_mean(m, w, hm, ev->variant, &r->hits) < 0) {
			snprintf(buf, sizeof(buf), "no value of its hits metric '%s'", hm);
			fail(m, r, buf);
			return;
		}
	} else {
		r->hits = strtod(col(c->hits, c->n_cols[0], wi), NULL);
	}
	if (!(r->hits > 0)) {
		fail(m, r, "no hit per run: nothing to divide the dilation by");
		return;
	}
	events_per_hit(m, om, r);
	if (!g || !(s = report_find_series(g, ev->variant))) {
		snprintf(buf, sizeof(buf), "%s is not in the report (--metric)", metric);
		fail(m, r, buf);
		return;
	}
	if (!(scale = report_ns_per_unit(g->unit))) {
		snprintf(buf, sizeof(buf), "%s is not in a unit of time", metric);
		fail(m, r, buf);
		return;
	}
	if (!s->compared || !s->mean_dil.ok) {
		snprintf(buf, sizeof(buf), "no dilation of %s: %s", metric,
			 !s->compared ? s->no_compare_reason : s->mean_dil.reason);
		fail(m, r, buf);
		return;
	}
	d = &s->mean_dil;
	r->ok = 1;
	/* ns per event = the dilation per hit / events per hit (1 when not
	 * measured) */
	per = scale / r->hits / (isnan(r->events_per_hit) ? 1 : r->events_per_hit);
	r->ns_per_hit = d->d.abs * scale / r->hits;
	r->cost_ns = d->d.abs * per;
	r->paired = d->paired;
	if (!d->d.ci_abs.has_ci) {
		r->ci.reason = d->d.ci_abs.reason ? d->d.ci_abs.reason :
			"no interval of the dilation";
		return;
	}
	r->ci = d->d.ci_abs;
	r->ci.lo = d->d.ci_abs.lo * per;
	r->ci.hi = d->d.ci_abs.hi * per;
}

/* Is the variant's point hit by the calibration workload (calib.h)? */
static int hit(const struct report_calib *r)
{
	if (r->run_hits > 0)
		return r->events_mean >= r->run_hits / 2;
	return r->events_mean >= REPORT_CALIB_MIN_EVENTS;
}

static struct report_calib *add_calib(struct report_model *m, size_t *alloc)
{
	ALLOC_GROW(m->calib, m->n_calib + 1, *alloc);
	memset(&m->calib[m->n_calib], 0, sizeof(*m->calib));
	return &m->calib[m->n_calib++];
}

static void calib_rows(struct calib_ctx *c)
{
	struct report_model *m = c->m;
	size_t alloc = 0;

	for (size_t wi = 0; wi < c->n_workloads; wi++) {
		const char *w = report_intern(m, c->workloads[wi]);
		if (!is_calibration(c, wi))
			continue;
		for (size_t ki = 0; ki < n_tracers; ki++) {
			const struct report_group *ev = report_find_group(m, w,
									  tracers[ki].event_metric);
			for (size_t vi = 0; ev && vi < ev->n_series; vi++) {
				const struct report_series *s = &ev->series[vi];
				struct report_calib r = { 0 };
				if (s->is_baseline || !s->n || !s->has_summary)
					continue;
				calibrate(c, wi, &tracers[ki], s, vi, &r);
				if (hit(&r))
					*add_calib(m, &alloc) = r;
			}
		}
	}
	/* every traced variant the calibration workloads do not reach: why */
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		const struct tracer_kind *k = tracer_by_metric(g->metric);
		for (size_t vi = 0; k && vi < g->n_series; vi++) {
			const struct report_series *s = &g->series[vi];
			int seen = 0;
			if (s->is_baseline || !s->n)
				continue;
			for (size_t i = 0; i < m->n_calib && !seen; i++)
				seen = m->calib[i].variant == s->variant &&
				       !strcmp(m->calib[i].tracer, k->name);
			if (seen)
				continue;
			struct report_calib *r = add_calib(m, &alloc);
			calib_row_init(c, k, vi, s->variant, r);
			fail(m, r, "no calibration workload hits its instrumented point");
		}
	}
}

/* The calibrated cost of variant (interned) for tracer: the first row
 * that has one, else the first row (its reason), else NULL. */
static const struct report_calib *cost_of(const struct report_model *m, const char *tracer,
					  const char *variant)
{
	const struct report_calib *first = NULL;

	for (size_t i = 0; i < m->n_calib; i++) {
		const struct report_calib *r = &m->calib[i];
		if (r->variant != variant || strcmp(r->tracer, tracer))
			continue;
		if (r->ok)
			return r;
		if (!first)
			first = r;
	}
	return first;
}

/* One compensation row (calib.h): the variant of ev on its workload. */
static void compensate(struct report_model *m, const struct tracer_kind *k,
		       const struct report_series *ev, const struct report_group *wall,
		       struct report_comp *r)
{
	const struct report_calib *cal = cost_of(m, k->name, ev->variant);
	const struct report_series *s = report_find_series(wall, ev->variant);
	const struct report_series *b = wall ? report_baseline(wall) : NULL;
	const struct interval *dci;
	double scale = wall ? report_ns_per_unit(wall->unit) : 0, plo, phi;
	char buf[256];

	r->tracer = report_intern(m, k->name);
	r->variant = ev->variant;
	r->events_mean = ev->has_summary ? ev->sum.mean : NAN;
	r->cost_ns = r->measured_ns = r->predicted_ns = r->share_pct = NAN;
	r->base_ns = r->compensated_ns = NAN;
	r->measured_ci = r->predicted_ci = r->share_ci = r->compensated_ci =
		(struct interval){ .lo = NAN, .hi = NAN };
	if (!cal || !cal->ok) {
		snprintf(buf, sizeof(buf), "no calibrated cost: %s",
			 cal ? cal->reason : "no calibration row");
		r->reason = report_intern(m, buf);
		return;
	}
	r->calib_workload = cal->workload;
	r->cost_ns = cal->cost_ns;
	if (!s || !b || !scale) {
		r->reason = report_intern(m, "wall is not in the report, or not a time");
		return;
	}
	if (!s->compared || !s->mean_dil.ok) {
		snprintf(buf, sizeof(buf), "no wall dilation: %s",
			 !s->compared ? s->no_compare_reason : s->mean_dil.reason);
		r->reason = report_intern(m, buf);
		return;
	}
	if (!(r->events_mean >= 0)) {
		r->reason = report_intern(m, "events per run that are not finite numbers");
		return;
	}
	r->ok = 1;
	dci = &s->mean_dil.d.ci_abs;
	r->measured_ns = s->mean_dil.d.abs * scale;
	r->predicted_ns = r->events_mean * cal->cost_ns;
	r->base_ns = b->sum.mean * scale;
	r->compensated_ns = s->sum.mean * scale - r->predicted_ns;
	if (r->measured_ns > 0)
		r->share_pct = 100 * r->predicted_ns / r->measured_ns;
	plo = phi = r->predicted_ns;
	if (cal->ci.has_ci) {
		r->predicted_ci = cal->ci;
		r->predicted_ci.lo = plo = r->events_mean * cal->ci.lo;
		r->predicted_ci.hi = phi = r->events_mean * cal->ci.hi;
	} else {
		r->predicted_ci.reason = cal->ci.reason;
	}
	if (!dci->has_ci) {
		r->measured_ci.reason = r->share_ci.reason = r->compensated_ci.reason =
			dci->reason ? dci->reason : "no interval of the wall dilation";
		return;
	}
	r->measured_ci = *dci;
	r->measured_ci.lo = dci->lo * scale;
	r->measured_ci.hi = dci->hi * scale;
	r->compensated_ci = r->measured_ci;
	r->compensated_ci.lo = r->base_ns + r->measured_ci.lo - phi;
	r->compensated_ci.hi = r->base_ns + r->measured_ci.hi - plo;
	r->compensated_ci.method = "the wall dilation's interval minus the predicted "
		"overhead's (interval arithmetic)";
	r->fits = r->compensated_ci.lo <= r->base_ns && r->base_ns <= r->compensated_ci.hi;
	if (r->measured_ci.lo > 0) {
		r->share_ci = r->measured_ci;
		r->share_ci.lo = 100 * plo / r->measured_ci.hi;
		r->share_ci.hi = 100 * phi / r->measured_ci.lo;
		r->share_ci.method = "the predicted interval over the measured one";
	} else {
		r->share_ci.reason = "the measured dilation's interval reaches 0: the share "
			"is unbounded";
	}
}

static void comp_rows(struct calib_ctx *c)
{
	struct report_model *m = c->m;
	size_t alloc = 0;

	for (size_t wi = 0; wi < c->n_workloads; wi++) {
		const char *w = report_intern(m, c->workloads[wi]);
		const struct report_group *wall = report_find_group(m, w, "wall");
		if (is_calibration(c, wi) || has_micro(m, w))
			continue;
		for (size_t ki = 0; ki < n_tracers; ki++) {
			const struct report_group *ev = report_find_group(m, w,
									  tracers[ki].event_metric);
			for (size_t vi = 0; ev && vi < ev->n_series; vi++) {
				const struct report_series *s = &ev->series[vi];
				if (s->is_baseline || !s->n)
					continue;
				ALLOC_GROW(m->comp, m->n_comp + 1, alloc);
				memset(&m->comp[m->n_comp], 0, sizeof(*m->comp));
				m->comp[m->n_comp].workload = w;
				compensate(m, &tracers[ki], s, wall, &m->comp[m->n_comp++]);
			}
		}
	}
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int report_calibration(struct store *st, int64_t run_id, struct report_model *m)
{
	struct calib_ctx c = { .m = m };
	char ***cols[4] = { &c.hits, &c.hits_metric, &c.metric, &c.ops_metric };
	int any = 0, ret = -1;

	if (store_workload_names(st, run_id, &c.workloads, &c.n_workloads) < 0)
		goto out;
	for (size_t k = 0; k < ARRAY_SIZE(cols); k++)
		if (store_calibration(st, run_id, k, cols[k], &c.n_cols[k]) < 0)
			goto out;
	for (size_t wi = 0; wi < c.n_workloads; wi++)
		any |= is_calibration(&c, wi);
	ret = 0;
	if (!any)	/* no calibration workload: no section */
		goto out;
	if (store_variant_tracers(st, run_id, 1, &c.attach, &c.n_attach) < 0) {
		ret = -1;
		goto out;
	}
	calib_rows(&c);
	comp_rows(&c);
out:
	free_strv(c.workloads, c.n_workloads);
	for (size_t k = 0; k < ARRAY_SIZE(cols); k++)
		free_strv(*cols[k], c.n_cols[k]);
	free_strv(c.attach, c.n_attach);
	return ret;
}

void report_calib_release(struct report_model *m)
{
	free(m->calib);
	free(m->comp);
	m->calib = NULL;
	m->comp = NULL;
	m->n_calib = m->n_comp = 0;
}
