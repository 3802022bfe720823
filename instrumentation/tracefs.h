/*
 * tracefs.h - the running kernel's tracing state, through libtracefs.
 *
 * perturb changes only what a request (struct ktrace_spec, a `kernel:`
 * block) names: current_tracer, the enabled events (set_event),
 * tracing_on, buffer_size_kb, set_ftrace_filter and trace_options, in one
 * tracing instance: a study's own (instances/perturb-PID-XXXXXXXX,
 * ktrace_instance_create(), isolated from every other session and removed
 * whole), or the top level when the kernel has no instances or k names
 * what only the top level has (ktrace_instance_lacks()); there a session
 * of someone else's (trace-cmd, perf ftrace, ...) is never taken over
 * (ktrace_top_in_use()).  Every function that reads or writes an
 * instance's files takes it as `in`: NULL is the top level.
 * ktrace_read_state() reads all of these; ktrace_restore() puts a state read
 * earlier back, writing only what differs, and checks the result by reading
 * it again.  The `trace` file is never read (with a full buffer, reading it
 * can stall the machine for minutes); the tracer's own accounting comes
 * from per_cpu/cpuN/stats.
 *
 * One process at a time changes the tracing state: ktrace_lock() is an
 * flock(2) on tracefs's root folder itself, which every mount of tracefs
 * in every mount namespace shares (tracefs has one superblock), so that a
 * perturb in a container or a chroot and one on the host see one lock.
 *
 * Errors: functions return 0, or -1 with a message for the user in
 * why[len] ("cannot set current_tracer to 'function': Operation not
 * permitted ..."); they print nothing.  They must run as root (or with
 * CAP_SYS_ADMIN over tracefs) and after ktrace_mount().
 *
 * The prefix is ktrace_ because libtracefs owns tracefs_*.
 */
#ifndef PERTURB_TRACEFS_H
#define PERTURB_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

struct tracefs_instance;	/* libtracefs's; NULL: the top level */

/*
 * A request: what a `kernel:` block asks for.  Each part may be left out,
 * and then keeps the kernel's current value: tracer NULL, tracing_on -1,
 * buffer_size_kb -1, events / functions NULL (given, even empty, they are
 * exactly what is enabled / filtered), options none.  Events are
 * "system:event" globs, functions set_ftrace_filter globs, options
 * trace_options words ("nooverwrite").  Every array is NULL-terminated
 * (n excludes the terminator); ktrace_spec_release() frees what it holds.
 */
struct ktrace_spec {
	char *tracer;
	char **events;
	size_t n_events;
	int tracing_on;		/* -1 unset, 0, 1 */
	long buffer_size_kb;	/* -1 unset */
	char **functions;
	size_t n_functions;
	char **options;
	size_t n_options;
};
#define KTRACE_SPEC_INIT { .tracing_on = -1, .buffer_size_kb = -1 }

void ktrace_spec_release(struct ktrace_spec *k);

/* The state perturb may change, as the kernel reports it. */
struct ktrace_state {
	char *tracer;		/* current_tracer, e.g. "nop" */
	int tracing_on;		/* 0 or 1 */
	long buffer_kb;		/* per-CPU ring buffer size in KiB (the size it
				 * takes once allocated, when not yet expanded) */
	int buffer_expanded;	/* 0: buffer_size_kb read "7 (expanded: 1408)" */
	long *cpu_buffer_kb;	/* per CPU, only when the sizes differ (read "X") */
	size_t n_cpu_buffer;
	char **events;		/* "system:event", as set_event lists them */
	size_t n_events;
	char **options;		/* trace_options lines: "overwrite", "noblock", ... */
	size_t n_options;
	int functions_readable;	/* set_ftrace_filter could be read */
	char **functions;	/* its lines; none = every function */
	size_t n_functions;
	int functions_globs;	/* a target: functions are globs (a kernel: block's) */
};

void ktrace_state_release(struct ktrace_state *st);

/*
 * Where tracefs is.  ktrace_mount() finds it in /proc/mounts at a standard
 * place (/sys/kernel/tracing, /sys/kernel/debug/tracing: where bpftrace and
 * perf look) or mounts it at /sys/kernel/tracing; *mounted is set to 1 only when this call mounted it
 * (the caller unmounts it with ktrace_umount() when it is done).  Returns
 * the tracefs path (static storage) or NULL with why filled.
 */
const char *ktrace_mount(int *mounted, char *why, size_t len);
/* The path of a mounted tracefs, or NULL: never mounts. */
const char *ktrace_find_mount(void);
/* Unmount what ktrace_mount() mounted: 0, or -1 with why filled.  A
 * tracefs that another process is reading is detached (MNT_DETACH): out
 * of the mount table at once, freed with its last reader. */
int ktrace_umount(const char *path, char *why, size_t len);

/*
 * The machine-wide tracing lock: an exclusive flock(2) on tracefs's root
 * folder, opened through the mount ktrace_find_mount() finds, else through
 * a mount of its own attached nowhere (fsmount(2)), so that taking it
 * neither needs nor leaves a mount.  wait: block until it is free; else a
 * lock held by another process is -1 with why naming its pid (from
 * /proc/locks, when that process is in this pid namespace) and errno
 * EWOULDBLOCK.  Returns the descriptor that holds the lock (closing it, or
 * the process ending, lets go), or -1 with why.
 */
int ktrace_lock(int wait, char *why, size_t len);
/* A descriptor of tracefs's root folder (the same as ktrace_lock's), for
 * locks of the tests' own on files below it; -1 with why. */
int ktrace_root_fd(char *why, size_t len);

/* Read the state of in.  Unreadable set_ftrace_filter (a locked-down
 * kernel) is not an error: functions_readable is 0. */
int ktrace_read_state(struct tracefs_instance *in, struct ktrace_state *st, char *why,
		      size_t len);

/*
 * The state a kernel: block asks for, on top of base (the prior state):
 * what k leaves out keeps base's value; events globs are expanded over
 * available_events.  -1 with why for an option trace_options does not know.
 */
int ktrace_target(const struct ktrace_state *base, const struct ktrace_spec *k,
		  struct ktrace_state *target, char *why, size_t len);

/*
 * Make the kernel's state be target, writing only what differs from the
 * current state (so that switching between two variants that share their
 * events costs no tracepoint (un)registration), tracing_on off while it
 * changes; then read the state back and compare (a difference is an error
 * naming it).  did (may be NULL) receives what was changed ("" for nothing).
 */
int ktrace_set_state(struct tracefs_instance *in, const struct ktrace_state *target,
		     char *did, size_t didlen, char *why, size_t len);

/*
 * Apply the non-default parts of k on the current state (ktrace_target +
 * ktrace_set_state): tracing_on is set off first and to its
 * value last, so that the change itself is not recorded; `events` given
 * (even empty) means exactly those events are enabled and no other.
 * A refusal by the kernel names the file, the value and errno.  Partial
 * application is possible on error: restore the prior state.
 */
int ktrace_apply(struct tracefs_instance *in, const struct ktrace_spec *k, char *why,
		 size_t len);

/* Read the state back and check it is what k asks for; why names every
 * difference. */
int ktrace_verify(struct tracefs_instance *in, const struct ktrace_spec *k, char *why,
		  size_t len);

/* ktrace_set_state(NULL, prior): put a top-level state read earlier back. */
int ktrace_restore(const struct ktrace_state *prior, char *did, size_t didlen,
		   char *why, size_t len);

/* Compare two states; 1 when equal, else 0 and diff names the first
 * differences. */
int ktrace_state_equal(const struct ktrace_state *a, const struct ktrace_state *b,
		       char *diff, size_t len);

/*
 * A study's instance.  ktrace_instance_name(): a new name, malloc'd,
 * "perturb-PID-XXXXXXXX" (8 random hex digits: unique across pid
 * namespaces too); ktrace_instance_name_valid() accepts exactly that form
 * (a name read from a journal is removed only then).
 * ktrace_instance_create() makes instances/NAME and refuses a name that
 * exists already (it is someone else's); NULL with why (a kernel without
 * instances: ktrace_instances_supported() is 0).  ktrace_instance_dir():
 * its folder, malloc'd.  ktrace_instance_destroy() removes it (the
 * kernel frees its buffer and disables its events) and frees in, also on
 * error; ktrace_instance_remove() removes one by name: 1 removed, 0 there
 * was none, -1 with why (a process still holds one of its files: EBUSY).
 */
int ktrace_instances_supported(void);
char *ktrace_instance_name(void);
int ktrace_instance_name_valid(const char *name);
struct tracefs_instance *ktrace_instance_create(const char *name, char *why, size_t len);
char *ktrace_instance_dir(struct tracefs_instance *in);
int ktrace_instance_destroy(struct tracefs_instance *in, char *why, size_t len);
int ktrace_instance_remove(const char *name, char *why, size_t len);

/*
 * Does k need the top level, being asked of instance in: a tracer the
 * instance does not list (`blk`: tracers that allow instances are fewer),
 * a trace option it has no options/ file for while the top level has one
 * (record-cmd, trace_printk, ...), set_ftrace_filter where the instance
 * has none?  1 with why naming the first, else 0.
 */
int ktrace_instance_lacks(struct tracefs_instance *in, const struct ktrace_spec *k,
			  char *why, size_t len);

/*
 * Is the top level in use by a session of someone else's, which taking it
 * over would overwrite and a "restore" would not give back (its buffer, its
 * readers)?  Signs: a current_tracer other than nop, enabled events,
 * set_event_pid or set_ftrace_pid set, and a process other than this one
 * holding trace, trace_pipe, tracing_on or a CPU's trace_pipe(_raw) of the
 * top level open (trace-cmd record keeps tracing_on and trace_pipe_raw
 * open; perf ftrace reads trace_pipe).  1 with what naming every sign
 * ("current_tracer is 'function_graph'; pid 42 (trace-cmd) has
 * per_cpu/cpu0/trace_pipe_raw open"), 0 when free, -1 with what when it
 * cannot be read.  tracing_on alone is no sign: it is 1 from boot on, and
 * 0 with nothing enabled records nothing.
 */
int ktrace_top_in_use(char *what, size_t len);

/*
 * Does the kernel have what k names: its tracer in available_tracers, each
 * events glob in available_events, each functions glob in
 * available_filter_functions (not checked where that list cannot be read)?
 * 0, or -1 with why naming the first one missing; kernel says whose ("this
 * kernel", "the guest kernel"), path is tracefs's mount point.
 */
int ktrace_check_names(const struct ktrace_spec *k, const char *path, const char *kernel,
		       char *why, size_t len);

/*
 * Check k without changing anything on the machine (a dry run): no lock,
 * no mount seen by others (where tracefs is mounted nowhere, a child
 * process mounts it in a mount namespace of its own), no write.  Checked:
 * the names (ktrace_check_names), the trace options (ktrace_target over
 * the current state) and that what applying k writes is writable by its
 * permission bits: the instances/ folder (a study's instance is made
 * there) or, on a kernel without instances, the top level's files.  Not
 * checked: whether k needs the top level (ktrace_instance_lacks() asks an
 * instance) and whether the kernel accepts the values (a locked-down
 * kernel refuses `function` with EPERM; a buffer size it cannot
 * allocate).  0, or -1 with why.
 */
int ktrace_check_readonly(const struct ktrace_spec *k, char *why, size_t len);

/* Is tracer listed in in's available_tracers? */
int ktrace_tracer_available(struct tracefs_instance *in, const char *tracer);

/* Does at least one event of available_events match the "system:event" glob? */
int ktrace_event_glob_matches(const char *glob);

/* Does at least one function of available_filter_functions match the glob
 * (set_ftrace_filter's)?  1 or 0; -1 with errno when that list cannot be
 * read (or is empty: a kernel without dynamic ftrace). */
int ktrace_function_glob_matches(const char *glob);

/* per_cpu/cpuN/stats, summed over CPUs. */
struct ktrace_stats {
	uint64_t entries;	/* events in the buffer now */
	uint64_t overrun;	/* events overwritten (overwrite mode) */
	uint64_t commit_overrun;
	uint64_t bytes;		/* bytes in the buffer now */
	uint64_t dropped;	/* events dropped (buffer full, nooverwrite) */
	uint64_t read;		/* events consumed by readers (trace_pipe) */
};
int ktrace_read_stats(struct tracefs_instance *in, struct ktrace_stats *s, char *why,
		      size_t len);
/* Parse the text of one stats file and add it to s; -1 when a field is
 * missing. */
int ktrace_parse_stats(const char *text, struct ktrace_stats *s);
/*
 * Events written between two readings: the kernel counts every committed
 * event in entries + overrun + read.  Lost: overrun + dropped.  Bytes: the
 * growth of the bytes held in the buffer (the bytes written when nothing was
 * read or overwritten).  Differences that would be negative (a buffer reset
 * in between) count as 0.
 */
void ktrace_stats_delta(const struct ktrace_stats *before, const struct ktrace_stats *after,
			double *events, double *lost, double *bytes);

/* Parse buffer_size_kb's text ("1408", "7 (expanded: 1408)", "X"). */
int ktrace_parse_buffer_size(const char *text, long *kb, int *expanded, int *differs);

#endif
