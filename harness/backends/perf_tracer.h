/*
 * perf_tracer.h - the `perf:` block of a host variant: perf as a tracer,
 * `perf record` or `perf trace` running system-wide as a managed daemon
 * for the variant's runs, with its accounting run by run
 * (docs/experiment.md, "perf").
 *
 *   perf:
 *     record: {events: ['syscalls:sys_enter_getppid'], frequency: 999, call_graph: fp}
 *   perf:
 *     trace: {syscalls: [getppid], events: ['sched:sched_switch']}
 *
 * The host backend (host.c) claims the key and calls this file: it parses,
 * checks what the machine forbids, starts, accounts and stops perf.
 *
 * Readiness and the run's bounds.  perf prints nothing when it is ready.
 * `perf record` is started with its events disabled (-D -1) and a control
 * fifo (--control fifo:CTL,ACK): it is ready when it acknowledges
 * "enable".  At each bound of a run perturb sends "ping" twice and waits
 * for both acknowledgements: perf reads every ring buffer and writes what
 * it read to its file between the first acknowledgement and the second
 * (its main loop reads the buffers at the top of each turn and answers a
 * command at the bottom), so the file then holds every record made before
 * the bound.  `perf trace` has no control fifo: perturb makes a marker
 * system call on each CPU it may run on, getpriority(PRIO_PROCESS, WHO)
 * of a pid that cannot exist (ESRCH; WHO says which bound and CPU), and
 * waits until perf trace has printed one from every CPU; each CPU's ring
 * buffer is read in order, so what a CPU recorded before its marker is
 * printed before it.  A marker lost with the events around it (perf
 * trace's buffer full) is made again after a second.  Readiness is the
 * same: probes every 200 ms until one is printed.  getpriority is added
 * to a list of system calls to trace; its markers are never counted.
 *
 * Accounting.  Between the bounds, perturb reads what perf wrote (the
 * perf.data records, or perf trace's lines), whole records only:
 * perf_events (PERF_RECORD_SAMPLE records, or event lines of perf trace,
 * markers left out), perf_lost (events the kernel dropped: the counts of
 * PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES records, or perf trace's
 * "LOST N events!" lines) and perf_bytes (bytes written).  The cost is
 * two round trips through the fifo (or one marker per CPU) at each bound
 * and one read of the bytes written, all outside the timed part.
 */
#ifndef PERTURB_PERF_TRACER_H
#define PERTURB_PERF_TRACER_H

#include <stddef.h>
#include <sys/types.h>
#include "backend.h"
#include "core/yamlnode.h"

enum perf_mode { PERF_RECORD, PERF_TRACE };
enum perf_call_graph { PERF_CG_NONE, PERF_CG_FP, PERF_CG_DWARF, PERF_CG_LBR };

struct perf_cfg {
	enum perf_mode mode;
	char **events;		/* -e each (record: any event; trace: tracepoints) */
	size_t n_events;
	long frequency;		/* record -F; 0: perf's default */
	long period;		/* record -c; 0: none */
	enum perf_call_graph call_graph;
	long mmap_pages;	/* -m; 0: perf's default */
	char **syscalls;	/* trace: these system calls; NULL with all_syscalls */
	size_t n_syscalls;
	int all_syscalls;	/* trace: every system call (--syscalls) */
};

/* The block's key and parse/release, claimed by the host backend (its
 * blocks: this one, then the end). */
#define PERF_TRACER_KEY "perf"
extern const struct backend_block perf_tracer_blocks[];

/*
 * What this machine forbids, found by reading only: perf, root (or
 * kernel.perf_event_paranoid), each tracepoint CAT:NAME among the events
 * of tracefs (the mounted one at tracefs; NULL: not checked), hardware
 * events and LBR call graphs without the CPU's PMU, a frequency above
 * kernel.perf_event_max_sample_rate.  -1 with why ("perf: ...").
 */
int perf_tracer_check(const struct perf_cfg *c, const char *tracefs, char *why, size_t len);

/*
 * A running perf: started in folder dir, its files named NAME-perf.*
 * (NAME-perf.data for record, the fifos, NAME-perf.log: its output, for
 * trace its events), with envp and PERF_CONFIG=/dev/null (no user's
 * perfconfig changes how it writes), ready within timeout_s.  -1 printed;
 * the log's last lines are in the message.  NAME is one path component
 * (path_component(): no '/', nor the ',' and ':' that perf would split).
 * why: a failure is said in why[len] instead, nothing printed (a trial's
 * reason): perf's complaint, what failed first and how perf ended
 * ("event syntax error: 'x'; no answer to 'enable' (perf ended), it exited
 * with status 129"); NULL: printed.
 */
struct perf_tracer;
int perf_tracer_start(const struct perf_cfg *c, const char *dir, const char *name,
		      char *const *envp, double timeout_s, char *why, size_t len,
		      struct perf_tracer **out);
pid_t perf_tracer_pid(const struct perf_tracer *t);
/* The argv it runs (NULL-terminated; for the journal). */
char **perf_tracer_argv(const struct perf_tracer *t);

/*
 * host's check() of a perf: variant: perf_tracer_check(), then (not in a
 * dry run, which only reads and says what it did not try) a trial start
 * in a folder of /tmp with tracefs mounted for it, so that what only perf
 * and the kernel know is refused before the study too.  -1 with why.
 */
int perf_tracer_check_variant(const struct variant *v, char *why, size_t len);

/* A run's bound: at its start, everything before it is left out. */
int perf_tracer_mark(struct perf_tracer *t);
/* At its end: what perf wrote since the mark.  -1 (printed) when perf did
 * not answer or its output cannot be read. */
struct perf_counts {
	double events, lost, bytes;
};
int perf_tracer_count(struct perf_tracer *t, struct perf_counts *out);

/* Stop perf (SIGTERM, it writes its file's header) and remove the fifos;
 * 0, or -1 when it had ended on its own (printed).  Frees t (NULL: 0). */
int perf_tracer_stop(struct perf_tracer *t);

/* perf's own error lines in its log at path (malloc'd, the last few), or
 * NULL. */
char *perf_tracer_log_error(const char *path);

/* perf.data records in buf[0..len), whole ones only: added to *out;
 * returns the bytes of the whole records (what is left starts a record).
 * For the tests. */
size_t perf_data_scan(const unsigned char *buf, size_t len, struct perf_counts *out);

#endif
