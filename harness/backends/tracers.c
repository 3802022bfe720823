/* tracers.c - the tracers' table; see tracers.h */
#include "tracers.h"
#include "backend.h"
#include "bpf.h"
#include "perf_tracer.h"
#include "instrumentation/tracefs.h"
#include "lib/util.h"

#include <stdio.h>
#include <string.h>

/* kernel: (tracefs): its events, or its tracer when it names no event. */
static int ftrace_attach(const struct variant *v, char *buf, size_t len)
{
	const struct ktrace_spec *k = v->kernel;
	size_t at;

	if (!k || (!k->n_events && (!k->tracer || !strcmp(k->tracer, "nop"))))
		return 0;
	if (!k->n_events) {
		snprintf(buf, len, "%s tracer", k->tracer);
		return 1;
	}
	at = (size_t)snprintf(buf, len, "tracepoint (");
	for (size_t i = 0; i < k->n_events && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", k->events[i]);
	if (at < len)
		snprintf(buf + at, len - at, ")");
	return 1;
}

/* v holds the host backend's block key (the host claims several). */
static int host_block(const struct variant *v, const char *key)
{
	return v->be == &backend_host && v->cfg && v->cfg_key && !strcmp(v->cfg_key, key);
}

/* bpf: the attach types of its program. */
static int bpf_attach(const struct variant *v, char *buf, size_t len)
{
	if (!host_block(v, "bpf"))
		return 0;
	bpf_attach_types(v->cfg, buf, len);
	return 1;
}

/* perf: record or trace, and what it records. */
static int perf_attach(const struct variant *v, char *buf, size_t len)
{
	const struct perf_cfg *c;
	size_t at;

	if (!host_block(v, PERF_TRACER_KEY))
		return 0;
	c = v->cfg;
	if (c->mode == PERF_TRACE) {
		at = (size_t)snprintf(buf, len, "perf trace (%s", c->all_syscalls ? "syscalls" : "");
		for (size_t i = 0; i < c->n_syscalls && at < len; i++)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", c->syscalls[i]);
	} else {
		at = (size_t)snprintf(buf, len, "perf record (");
	}
	for (size_t i = 0; i < c->n_events && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i || c->all_syscalls || c->n_syscalls ? ", " : "", c->events[i]);
	if (at < len)
		snprintf(buf + at, len - at, ")");
	return 1;
}

/* lttng: its kernel events, else its user-space events and preloads. */
static int lttng_attach(const struct variant *v, char *buf, size_t len)
{
	const struct lttng_spec *l = v->lttng;
	char *const *names;
	size_t n, at;

	if (!l)
		return 0;
	if (l->n_kernel) {
		names = l->kernel, n = l->n_kernel;
		at = (size_t)snprintf(buf, len, "kernel (");
	} else {
		names = l->user, n = l->n_user;
		at = (size_t)snprintf(buf, len, "user space (");
	}
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", names[i]);
	for (size_t i = 0; !l->n_kernel && i < l->n_preload && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s wrapper", i || n ? ", " : "",
				       l->preload[i]);
	if (at < len)
		snprintf(buf + at, len - at, ")");
	return 1;
}

const struct tracer_kind tracers[] = {
	{ "ftrace", "trace_events", ftrace_attach },
	{ "bpf", "bpf_runs", bpf_attach },
	{ "perf", "perf_events", perf_attach },
	{ "lttng", "lttng_events", lttng_attach },
};
const size_t n_tracers = ARRAY_SIZE(tracers);

const struct tracer_kind *tracer_by_metric(const char *metric)
{
	for (size_t i = 0; i < n_tracers; i++)
		if (!strcmp(tracers[i].event_metric, metric))
			return &tracers[i];
	return NULL;
}

const struct tracer_kind *tracer_of_variant(const struct variant *v, char *buf, size_t len)
{
	buf[0] = 0;
	for (size_t i = 0; i < n_tracers; i++)
		if (tracers[i].attach && tracers[i].attach(v, buf, len)) {
			size_t at = strlen(buf);
			/* where it ran: the report's tables say it (issue 16) */
			if (v->be && v->be != &backend_host && at < len)
				snprintf(buf + at, len - at, ", in a %s guest", v->be->name);
			return &tracers[i];
		}
	buf[0] = 0;
	return NULL;
}
