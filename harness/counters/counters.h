/*
 * counters.h - event counters of a workload run: one interface, two
 * backends chosen per counter at run time.
 *
 *  - PAPI (counters_papi.c): a portable hardware name without a suffix
 *    whose PAPI preset this machine can count, and every raw PAPI name.
 *  - perf_event_open (counters_perf.c): the software events, always; a
 *    portable hardware name that PAPI cannot count here (PAPI failing to
 *    initialise, no perf_event component, no such preset, or the preset
 *    cannot be attached to another process); a portable hardware name with
 *    a :u or :k suffix (PAPI sets its counting domain per event set, not
 *    per event).
 *
 * Names (what an experiment's `counters:` list holds, checked by
 * counter_parse()):
 *
 *   portable     perf_event_open                 PAPI preset   unit
 *   cycles       HW CPU_CYCLES                   PAPI_TOT_CYC  count
 *   instructions HW INSTRUCTIONS                 PAPI_TOT_INS  count
 *   cache-references HW CACHE_REFERENCES (LLC)   PAPI_L3_TCA   count
 *   cache-misses HW CACHE_MISSES (LLC)           PAPI_L3_TCM   count
 *   branches     HW BRANCH_INSTRUCTIONS          PAPI_BR_INS   count
 *   branch-misses HW BRANCH_MISSES               PAPI_BR_MSP   count
 *   task-clock   SW TASK_CLOCK                   -             ns
 *   context-switches SW CONTEXT_SWITCHES         -             count
 *   cpu-migrations SW CPU_MIGRATIONS             -             count
 *   page-faults  SW PAGE_FAULTS                  -             count
 *   major-faults SW PAGE_FAULTS_MAJ              -             count
 *   minor-faults SW PAGE_FAULTS_MIN              -             count
 *
 * A portable name may end in ":u" (user mode only) or ":k" (kernel mode
 * only); without a suffix both modes are counted.  Raw PAPI names pass
 * through to PAPI verbatim: presets "PAPI_" + [A-Z0-9_], and native events
 * with their PMU prefix, "pmu::EVENT[:modifiers]" (libpfm4 syntax, whose
 * own ":u=1"-style modifiers choose the mode).  A counter's metric name is
 * the name as written ("cycles:k"); its unit is "count" ("ns" for
 * task-clock; a raw PAPI name: "count").
 *
 * Scope: each counter counts the whole process tree of the workload
 * (inherit: children, forked or cloned after the counter is attached, are
 * added in as they exit), from the workload's execve() on, and is read
 * once after the workload's main process has ended: nothing runs in
 * perturb, and nothing is added to the workload, while it runs.
 *   - perf_event_open: events opened disabled on the child's pid with
 *     enable_on_exec, so that the harness's own work between fork and exec
 *     is not counted.
 *   - PAPI (which has no enable_on_exec): the event set is attached and
 *     started on the child just before it is released, so its counts also
 *     hold the child's return from the blocking read and its execve()
 *     (some microseconds).
 * Descendants still running when the main process ends are killed by the
 * runner; what they counted after that point is not included.
 *
 * Multiplexing: perf_event counters read time_enabled and time_running;
 * when running < enabled (the PMU had more events than registers), the
 * count is scaled, value = raw * enabled / running, and flagged scaled.  A
 * counter that never ran (running == 0) gives no value for that run: it is
 * not stored as 0.  PAPI counters are never multiplexed (an event PAPI
 * cannot schedule together with the others goes to perf_event_open
 * instead), and report no times.
 *
 * Unavailable counters: counters_open() decides once per study, by trying
 * each counter for real (perf: opened on perturb itself; PAPI: the event
 * set attached to a waiting helper child, started and stopped), which
 * backend counts it or why none can.  An unavailable counter is never
 * attached, never read and never stored as 0.
 *
 * Errors: only programming errors are fatal; everything a machine may lack
 * becomes a per-counter reason.  Not thread-safe; one set is attached to at
 * most one run at a time.
 *
 * Files: counters_names.c (the name table, counter_parse(), the perf_event
 * attributes of a name) and counters_perf.c (perf_event_open, reading and
 * scaling) need no PAPI: the guest agent (harness/backends/guest/agent.c) links
 * them as they are and counts inside a QEMU guest with the same names,
 * attributes and probe as the host.  counters.c (the set, the choice of a
 * backend) and counters_papi.c are perturb's only.
 *
 * Counting in a guest (harness/backends/qemu.c): a run request's set is
 * sent by name to the guest, which decides for itself what it can count
 * (a TCG guest has no PMU, whatever the host has) and counts each counter
 * as above, the time of the read-out included; the backend turns the
 * guest's read-outs into readings with counter_reading_fill(), and what
 * the guest could not count into run failures (counters_fail()).
 */
#ifndef PERTURB_COUNTERS_H
#define PERTURB_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- names ---- */

enum counter_mode {
	COUNTER_MODE_ALL,	/* user and kernel */
	COUNTER_MODE_USER,	/* ":u" */
	COUNTER_MODE_KERNEL,	/* ":k" */
};

enum counter_kind {
	COUNTER_HARDWARE,	/* portable, PMU event */
	COUNTER_SOFTWARE,	/* portable, kernel software event */
	COUNTER_RAW_PAPI,	/* PAPI preset or native name, verbatim */
};

struct counter_def;	/* a row of the portable name table (counters.c) */

struct counter_spec {
	enum counter_kind kind;
	enum counter_mode mode;
	const struct counter_def *def;	/* NULL for COUNTER_RAW_PAPI */
};

/*
 * Parse a counter name as written in an experiment.  Returns 0 and fills
 * *spec (may be NULL), or -1 with a message for the user in why[len]
 * (without the name's position), such as "unknown counter 'cycels'; did
 * you mean 'cycles'?".  No backend is consulted: this is syntax only.
 */
int counter_parse(const char *name, struct counter_spec *spec, char *why, size_t len);

/* The unit of a parsed counter: "ns" for task-clock, else "count". */
const char *counter_unit(const struct counter_spec *spec);

/* The PAPI preset of a portable hardware name ("PAPI_TOT_CYC"); NULL for
 * software events and raw PAPI names. */
const char *counter_papi_preset(const struct counter_spec *spec);

/*
 * The perf_event of a parsed portable name, filled into *ps (struct
 * perf_spec, and the perf_counter_open() / perf_counter_read() /
 * perf_counter_probe() of counters_perf.c, are declared in
 * counters_backend.h, which the guest agent includes too): 0, or -1 for a
 * raw PAPI name, which only PAPI can count.
 */
struct perf_spec;
int counter_perf_spec(const struct counter_spec *spec, struct perf_spec *ps);

/* ---- a study's counters ---- */

struct counter_set;

/*
 * Decide, for each of names[0..n) (each must pass counter_parse()), its
 * backend or why it cannot be counted here.  Initialises PAPI (once per
 * process) only when some name may need it.  Returns 0 and *out, or -1
 * (printed) when a name does not parse.  names are copied.
 */
int counters_open(char *const *names, size_t n, struct counter_set **out);
void counters_close(struct counter_set *s);	/* NULL is fine */

size_t counters_count(const struct counter_set *s);
/* How many of them can be counted here. */
size_t counters_n_available(const struct counter_set *s);
const char *counters_name(const struct counter_set *s, size_t i);
/* Its unit, as counter_unit(). */
const char *counters_unit(const struct counter_set *s, size_t i);
int counters_available(const struct counter_set *s, size_t i);
/* "perf_event" or "PAPI" when available; NULL when not. */
const char *counters_backend(const struct counter_set *s, size_t i);
/* When unavailable: a short reason for one line ("no hardware PMU") and
 * the whole story for the database ("no hardware PMU (perf_event_open:
 * ENOENT; PAPI: ...)"); NULL when available. */
const char *counters_short_reason(const struct counter_set *s, size_t i);
const char *counters_reason(const struct counter_set *s, size_t i);

/* ---- one run ---- */

/*
 * Attach every available counter to pid, a child that has not called
 * execve() yet and is waiting to be released (proc.h: spawn_opts.attach).
 * A counter that cannot be attached gives no value for this run; its
 * reason is kept (counters_run_failures()).  Never fails as a whole.
 */
void counters_attach(struct counter_set *s, pid_t pid);

/* One counter's reading of one run. */
struct counter_reading {
	const char *name;	/* the set's copy */
	const char *unit;
	double value;		/* scaled when scaled */
	uint64_t raw;		/* the count as read */
	uint64_t time_enabled_ns, time_running_ns;	/* 0 when not known (PAPI) */
	int scaled;		/* running < enabled: value = raw * enabled / running */
};

/*
 * A perf_event count and its times as a value: *value = raw when running
 * == enabled (returns 0), raw * enabled / running when multiplexed
 * (returns 1: scaled), nothing when it never ran, running == 0 (returns
 * -1: no value; never 0).
 */
int counter_scale(uint64_t raw, uint64_t enabled, uint64_t running, double *value);

/*
 * A perf_event count and its times as r's value (r->name and r->unit are
 * left alone): returns 1 with value, raw, times and scaled filled; 0 when
 * the counter was never enabled (enabled 0: the workload did not exec; no
 * value, and no failure either); -1 when it was enabled but never ran (no
 * value, never 0; the reason in why).
 */
int counter_reading_fill(struct counter_reading *r, uint64_t raw, uint64_t enabled,
			 uint64_t running, char *why, size_t len);

/*
 * After the workload's main process has been reaped: read the attached
 * counters once and detach them.  Fills out[0..*n) (out must have room for
 * counters_count() readings) with the counters that counted; those that
 * did not (not attached, never scheduled, read error) are left out.  Safe
 * to call when counters_attach() was not (gives nothing).
 */
void counters_collect(struct counter_set *s, struct counter_reading *out, size_t *n);

/* Detach without reading (a run that could not be started).  Idempotent. */
void counters_detach(struct counter_set *s);

/*
 * Counters that failed in a run although available at counters_open():
 * calls fn once per counter, the first time it fails, with its reason;
 * later failures of the same counter are not reported again.
 */
typedef void (*counters_failure_fn)(const char *name, const char *reason, void *ctx);
void counters_run_failures(struct counter_set *s, counters_failure_fn fn, void *ctx);

/*
 * Counter i gave no value in a run that was counted elsewhere (inside a
 * QEMU guest, which decides for itself what it can count): reason is kept
 * as that run's failure of it, and reported by counters_run_failures()
 * like one of this process's own (the first time only).
 */
void counters_fail(struct counter_set *s, size_t i, const char *reason);

/* ---- tests ---- */

/* Make the PAPI backend behave, from the next counters_open() on, as if
 * PAPI failed to initialise (COUNTERS_PAPI_SIM_INIT_FAIL) or had no
 * perf_event component (COUNTERS_PAPI_SIM_NO_COMPONENT); NONE restores the
 * real behaviour. */
enum counters_papi_sim {
	COUNTERS_PAPI_SIM_NONE,
	COUNTERS_PAPI_SIM_INIT_FAIL,
	COUNTERS_PAPI_SIM_NO_COMPONENT,
};
void counters_papi_simulate(enum counters_papi_sim sim);

#endif
