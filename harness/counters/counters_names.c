/*
 * counters_names.c - the portable counter names (counter_parse()) and
 * their perf_event_open and PAPI events.  No backend, no PAPI: linked into
 * perturb and, with counters_perf.c, into the guest agent
 * (harness/backends/guest/agent.c), which counts inside a QEMU guest with the
 * host's own table and attributes.  See counters.h.
 */
#include "counters.h"
#include "counters_backend.h"
#include "lib/util.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *counter_papi_preset(const struct counter_spec *spec)
{
	return spec->def ? spec->def->papi : NULL;
}

int counter_perf_spec(const struct counter_spec *spec, struct perf_spec *ps)
{
	if (!spec->def)
		return -1;
	ps->type = spec->def->perf_type;
	ps->config = spec->def->perf_config;
	ps->mode = spec->mode;
	return 0;
}
