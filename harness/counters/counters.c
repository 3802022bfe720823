/*
 * counters.c - the counters interface: the choice of a backend per
 * counter, and one run's attach / collect.  The name table is
 * counters_names.c.  See counters.h.
 */
#include "counters.h"
#include "counters_backend.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a study's counters ---- */

enum backend_id { BK_NONE, BK_PERF, BK_PAPI };

struct counter {
	char *name;
	struct counter_spec spec;
	enum backend_id backend;
	struct perf_spec perf;
	size_t papi_idx;	/* index in the PAPI event set */
	char *papi_why;		/* why PAPI did not take it (NULL when not tried) */
	char *short_reason, *reason;	/* when BK_NONE */
	int fd;			/* perf: this run's event, -1 when none */
	char *run_failure;	/* first failure in a run, until reported */
	int failure_reported;
};

struct counter_set {
	struct counter *c;
	size_t n;
	struct papi_events *papi;
	int papi_attached;
	long long *papi_values;
};

static int wants_papi(const struct counter *c)
{
	return c->spec.kind == COUNTER_RAW_PAPI ||
	       (c->spec.kind == COUNTER_HARDWARE && c->spec.mode == COUNTER_MODE_ALL);
}

/* Give every counter that wants PAPI to PAPI when PAPI can count it. */
static void choose_papi(struct counter_set *s)
{
	char why[512];
	size_t want = 0, added = 0;

	for (size_t i = 0; i < s->n; i++)
		want += wants_papi(&s->c[i]);
	if (!want)
		return;
	if (papi_backend_init(why, sizeof(why)) < 0 ||
	    !(s->papi = papi_events_new(why, sizeof(why)))) {
		for (size_t i = 0; i < s->n; i++)
			if (wants_papi(&s->c[i]))
				s->c[i].papi_why = xstrdup(why);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct counter *c = &s->c[i];
		const char *pname = c->spec.def ? counter_papi_preset(&c->spec) : c->name;

		if (!wants_papi(c))
			continue;
		if (papi_events_add(s->papi, pname, why, sizeof(why)) < 0) {
			c->papi_why = xstrdup(why);
			continue;
		}
		c->backend = BK_PAPI;
		c->papi_idx = added++;
	}
	if (added && papi_events_probe(s->papi, why, sizeof(why)) < 0) {
		for (size_t i = 0; i < s->n; i++) {
			if (s->c[i].backend != BK_PAPI)
				continue;
			s->c[i].backend = BK_NONE;
			s->c[i].papi_why = xstrdup(why);
		}
		added = 0;
	}
	if (!added) {
		papi_events_free(s->papi);
		s->papi = NULL;
		return;
	}
	s->papi_values = xcalloc(added, sizeof(*s->papi_values));
}

static void choose_perf(struct counter *c)
{
	char shortr[128], detail[512];

	if (c->spec.kind == COUNTER_RAW_PAPI) {
		c->short_reason = xstrdup("PAPI cannot count it");
		c->reason = xasprintf("PAPI cannot count it (%s)",
				      c->papi_why ? c->papi_why : "PAPI not tried");
		return;
	}
	counter_perf_spec(&c->spec, &c->perf);
	if (perf_counter_probe(&c->perf, shortr, sizeof(shortr), detail, sizeof(detail)) == 0) {
		c->backend = BK_PERF;
		return;
	}
	c->short_reason = xstrdup(shortr);
	if (c->papi_why)
		c->reason = xasprintf("%s (%s; PAPI: %s)", shortr, detail, c->papi_why);
	else
		c->reason = xasprintf("%s (%s)", shortr, detail);
}

int counters_open(char *const *names, size_t n, struct counter_set **out)
{
	struct counter_set *s = xcalloc(1, sizeof(*s));
	char why[512];

	*out = NULL;
	s->c = xcalloc(n ? n : 1, sizeof(*s->c));
	for (size_t i = 0; i < n; i++) {
		struct counter *c = &s->c[s->n];
		if (counter_parse(names[i], &c->spec, why, sizeof(why)) < 0) {
			error("%s", why);
			counters_close(s);
			return -1;
		}
		c->name = xstrdup(names[i]);
		c->fd = -1;
		s->n++;
	}
	choose_papi(s);
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].backend == BK_NONE)
			choose_perf(&s->c[i]);
	*out = s;
	return 0;
}

void counters_close(struct counter_set *s)
{
	if (!s)
		return;
	counters_detach(s);
	for (size_t i = 0; i < s->n; i++) {
		free(s->c[i].name);
		free(s->c[i].papi_why);
		free(s->c[i].short_reason);
		free(s->c[i].reason);
		free(s->c[i].run_failure);
	}
	papi_events_free(s->papi);
	free(s->papi_values);
	free(s->c);
	free(s);
}

size_t counters_count(const struct counter_set *s)
{
	return s ? s->n : 0;
}

size_t counters_n_available(const struct counter_set *s)
{
	size_t k = 0;
	for (size_t i = 0; s && i < s->n; i++)
		k += s->c[i].backend != BK_NONE;
	return k;
}

const char *counters_name(const struct counter_set *s, size_t i)
{
	return s->c[i].name;
}

const char *counters_unit(const struct counter_set *s, size_t i)
{
	return counter_unit(&s->c[i].spec);
}

int counters_available(const struct counter_set *s, size_t i)
{
	return s->c[i].backend != BK_NONE;
}

const char *counters_backend(const struct counter_set *s, size_t i)
{
	switch (s->c[i].backend) {
	case BK_PERF: return "perf_event";
	case BK_PAPI: return "PAPI";
	case BK_NONE: break;
	}
	return NULL;
}

const char *counters_short_reason(const struct counter_set *s, size_t i)
{
	return s->c[i].short_reason;
}

const char *counters_reason(const struct counter_set *s, size_t i)
{
	return s->c[i].reason;
}

/* ---- one run ---- */

static void run_failed(struct counter *c, const char *fmt, ...) PRINTF(2, 3);
static void run_failed(struct counter *c, const char *fmt, ...)
{
	va_list ap;
	struct strbuf sb = STRBUF_INIT;

	if (c->run_failure || c->failure_reported)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	c->run_failure = strbuf_detach(&sb);
}

void counters_attach(struct counter_set *s, pid_t pid)
{
	char why[512];

	counters_detach(s);
	for (size_t i = 0; i < s->n; i++) {
		struct counter *c = &s->c[i];
		if (c->backend != BK_PERF)
			continue;
		c->fd = perf_counter_open(&c->perf, pid);
		if (c->fd < 0) {
			run_failed(c, "perf_event_open: %s", strerror(-c->fd));
			c->fd = -1;
		}
	}
	if (s->papi) {
		if (papi_events_attach(s->papi, pid, why, sizeof(why)) == 0) {
			s->papi_attached = 1;
		} else {
			for (size_t i = 0; i < s->n; i++)
				if (s->c[i].backend == BK_PAPI)
					run_failed(&s->c[i], "PAPI: %s", why);
		}
	}
}

void counters_collect(struct counter_set *s, struct counter_reading *out, size_t *n)
{
	char why[512];
	int papi_ok = 0;

	*n = 0;
	if (s->papi_attached) {
		papi_ok = papi_events_collect(s->papi, s->papi_values, why, sizeof(why)) == 0;
		s->papi_attached = 0;
		if (!papi_ok)
			for (size_t i = 0; i < s->n; i++)
				if (s->c[i].backend == BK_PAPI)
					run_failed(&s->c[i], "PAPI: %s", why);
	}
	for (size_t i = 0; i < s->n; i++) {
		struct counter *c = &s->c[i];
		struct counter_reading *r = &out[*n];
		uint64_t v, en, run;
		int e;

		memset(r, 0, sizeof(*r));
		r->name = c->name;
		r->unit = counter_unit(&c->spec);
		if (c->backend == BK_PAPI) {
			if (!papi_ok)
				continue;
			r->raw = (uint64_t)s->papi_values[c->papi_idx];
			r->value = (double)s->papi_values[c->papi_idx];
			(*n)++;
			continue;
		}
		if (c->fd < 0)
			continue;
		e = perf_counter_read(c->fd, &v, &en, &run);
		close(c->fd);
		c->fd = -1;
		if (e < 0) {
			run_failed(c, "cannot read: %s", strerror(-e));
			continue;
		}
		e = counter_reading_fill(r, v, en, run, why, sizeof(why));
		if (e < 0)
			run_failed(c, "%s", why);
		if (e > 0)
			(*n)++;
	}
}

void counters_detach(struct counter_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (s->c[i].fd >= 0)
			close(s->c[i].fd);
		s->c[i].fd = -1;
	}
	if (s->papi_attached)
		papi_events_detach(s->papi);
	s->papi_attached = 0;
}

void counters_run_failures(struct counter_set *s, counters_failure_fn fn, void *ctx)
{
	for (size_t i = 0; i < s->n; i++) {
		struct counter *c = &s->c[i];
		if (!c->run_failure)
			continue;
		fn(c->name, c->run_failure, ctx);
		free(c->run_failure);
		c->run_failure = NULL;
		c->failure_reported = 1;
	}
}

void counters_fail(struct counter_set *s, size_t i, const char *reason)
{
	run_failed(&s->c[i], "%s", reason);
}

void counters_papi_simulate(enum counters_papi_sim sim)
{
	papi_backend_simulate(sim);
}
