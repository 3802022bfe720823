/*
 * counters.c - the counters interface: the name table, the choice of a
 * backend per counter, and one run's attach / collect.  See counters.h.
 */
#include "counters.h"
#include "counters_backend.h"
#include "util.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct counter_def {
	const char *name;
	enum counter_kind kind;
	uint32_t perf_type;
	uint64_t perf_config;
	const char *papi;	/* preset, NULL for software events */
	const char *unit;
};

#define HW(n, cfg, papi) { n, COUNTER_HARDWARE, PERF_TYPE_HARDWARE, cfg, papi, "count" }
#define SW(n, cfg, unit) { n, COUNTER_SOFTWARE, PERF_TYPE_SOFTWARE, cfg, NULL, unit }

static const struct counter_def defs[] = {
	HW("cycles", PERF_COUNT_HW_CPU_CYCLES, "PAPI_TOT_CYC"),
	HW("instructions", PERF_COUNT_HW_INSTRUCTIONS, "PAPI_TOT_INS"),
	HW("cache-references", PERF_COUNT_HW_CACHE_REFERENCES, "PAPI_L3_TCA"),
	HW("cache-misses", PERF_COUNT_HW_CACHE_MISSES, "PAPI_L3_TCM"),
	HW("branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "PAPI_BR_INS"),
	HW("branch-misses", PERF_COUNT_HW_BRANCH_MISSES, "PAPI_BR_MSP"),
	SW("task-clock", PERF_COUNT_SW_TASK_CLOCK, "ns"),
	SW("context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, "count"),
	SW("cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "count"),
	SW("page-faults", PERF_COUNT_SW_PAGE_FAULTS, "count"),
	SW("major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, "count"),
	SW("minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, "count"),
};

/* ---- names ---- */

static const struct counter_def *find_def(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
		if (strlen(defs[i].name) == len && !strncmp(defs[i].name, name, len))
			return &defs[i];
	return NULL;
}

/* The portable name closest to s, when close enough to be a typo. */
static const char *suggest(const char *s)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, len = strlen(s);

	for (size_t i = 0; i < ARRAY_SIZE(defs); i++) {
		size_t d = edit_distance(s, defs[i].name);
		if (d < best_d) {
			best_d = d;
			best = defs[i].name;
		}
	}
	return best_d <= 2 || best_d <= len / 3 ? best : NULL;
}

static int is_papi_preset(const char *s)
{
	if (strncmp(s, "PAPI_", 5) || !s[5])
		return 0;
	for (s += 5; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* "pmu::EVENT...", both parts non-empty, printable, no blanks. */
static int is_papi_native(const char *s)
{
	const char *sep = strstr(s, "::");

	if (!sep || sep == s || !sep[2])
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

int counter_parse(const char *name, struct counter_spec *spec, char *why, size_t len)
{
	struct counter_spec dummy;
	const struct counter_def *d;
	const char *colon;
	size_t base;

	if (!spec)
		spec = &dummy;
	memset(spec, 0, sizeof(*spec));
	if (!*name) {
		snprintf(why, len, "a counter name must not be empty");
		return -1;
	}
	if (is_papi_native(name)) {
		spec->kind = COUNTER_RAW_PAPI;
		return 0;
	}
	colon = strchr(name, ':');
	base = colon ? (size_t)(colon - name) : strlen(name);
	d = find_def(name, base);
	if (!d) {
		char *b = xstrndup(name, base);
		int preset = is_papi_preset(b);
		const char *sug = preset ? NULL : suggest(b);

		if (preset && !colon) {
			free(b);
			spec->kind = COUNTER_RAW_PAPI;
			return 0;
		}
		if (preset)
			snprintf(why, len, "counter '%s': :u and :k apply to portable names "
				 "(cycles:u); a PAPI preset counts user and kernel mode", name);
		else if (sug)
			snprintf(why, len, "unknown counter '%s'; did you mean '%s'?", name, sug);
		else
			snprintf(why, len, "unknown counter '%s' (portable names: cycles, "
				 "instructions, cache-references, cache-misses, branches, "
				 "branch-misses, task-clock, context-switches, cpu-migrations, "
				 "page-faults, major-faults, minor-faults; or a PAPI preset "
				 "like PAPI_TOT_CYC, or a native event with its PMU, like "
				 "perf::CYCLES)", name);
		free(b);
		return -1;
	}
	spec->kind = d->kind;
	spec->def = d;
	spec->mode = COUNTER_MODE_ALL;
	if (colon) {
		if (!strcmp(colon, ":u")) {
			spec->mode = COUNTER_MODE_USER;
		} else if (!strcmp(colon, ":k")) {
			spec->mode = COUNTER_MODE_KERNEL;
		} else {
			snprintf(why, len, "counter '%s': the suffix must be :u (user mode "
				 "only) or :k (kernel mode only)", name);
			return -1;
		}
	}
	return 0;
}

const char *counter_unit(const struct counter_spec *spec)
{
	return spec->def ? spec->def->unit : "count";
}

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
		const char *pname = c->spec.def ? c->spec.def->papi : c->name;

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
	c->perf.type = c->spec.def->perf_type;
	c->perf.config = c->spec.def->perf_config;
	c->perf.mode = c->spec.mode;
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

int counter_scale(uint64_t raw, uint64_t enabled, uint64_t running, double *value)
{
	if (!running)
		return -1;
	if (running >= enabled) {
		*value = (double)raw;
		return 0;
	}
	*value = (double)raw * ((double)enabled / (double)running);
	return 1;
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
		if (!en)
			continue;	/* never enabled: the workload did not exec */
		e = counter_scale(v, en, run, &r->value);
		if (e < 0) {
			run_failed(c, "not counted: the PMU never scheduled it "
				   "(more events than counter registers?)");
			continue;
		}
		r->raw = v;
		r->time_enabled_ns = en;
		r->time_running_ns = run;
		r->scaled = e;
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

void counters_papi_simulate(enum counters_papi_sim sim)
{
	papi_backend_simulate(sim);
}
