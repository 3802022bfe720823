/*
 * counters_backend.h - what counters.c needs of its two backends
 * (counters_perf.c, counters_papi.c).  Internal: only counters.c and the
 * backends include it.
 *
 * Messages are written into caller buffers (why[len]), never printed: the
 * counters layer decides what the user sees.
 */
#ifndef PERTURB_COUNTERS_BACKEND_H
#define PERTURB_COUNTERS_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "counters.h"

/* ---- perf_event_open ---- */

struct perf_spec {
	uint32_t type;		/* PERF_TYPE_HARDWARE | PERF_TYPE_SOFTWARE */
	uint64_t config;
	enum counter_mode mode;
};

/*
 * Open the event on pid, disabled, with inherit and enable_on_exec, reading
 * value + time_enabled + time_running; close-on-exec.  pid 0 opens it on
 * perturb itself (a probe: it never counts, perturb does not exec).
 * Returns the fd or -errno.
 */
int perf_counter_open(const struct perf_spec *ps, pid_t pid);

/* Read value, time_enabled, time_running.  0, or -errno. */
int perf_counter_read(int fd, uint64_t *value, uint64_t *enabled, uint64_t *running);

/*
 * Can this event be counted here?  0, or -1 with a short reason ("no
 * hardware PMU", "not permitted", ...) in shortr and the detail
 * ("perf_event_open: ENOENT") in detail.
 */
int perf_counter_probe(const struct perf_spec *ps, char *shortr, size_t slen,
		       char *detail, size_t dlen);

/* ---- PAPI ---- */

/*
 * One event set of the perf_event component with PAPI_INHERIT and
 * PAPI_DOM_ALL, events added one at a time, attached to one run's child at
 * a time.
 */
struct papi_events;

/* Initialise PAPI once per process (the result is remembered).  0, or -1
 * with the reason in why. */
int papi_backend_init(char *why, size_t len);
void papi_backend_simulate(enum counters_papi_sim sim);

/* NULL with why filled when the event set cannot be made. */
struct papi_events *papi_events_new(char *why, size_t len);
void papi_events_free(struct papi_events *pe);
/* Add an event by PAPI name; its index is the number of events added
 * before it.  0, or -1 with why (the set is unchanged). */
int papi_events_add(struct papi_events *pe, const char *name, char *why, size_t len);
/* Attach to a waiting helper child, start, stop, detach: can this set
 * count another process tree?  0, or -1 with why. */
int papi_events_probe(struct papi_events *pe, char *why, size_t len);
/* Attach to pid and start.  0, or -1 with why (left detached). */
int papi_events_attach(struct papi_events *pe, pid_t pid, char *why, size_t len);
/* Stop (values[0..n) filled, one per event added) and detach.  0, or -1 with why. */
int papi_events_collect(struct papi_events *pe, long long *values, char *why, size_t len);
/* Stop and detach, ignoring the values.  Idempotent. */
void papi_events_detach(struct papi_events *pe);

#endif
