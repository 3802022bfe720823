/*
 * lttng.h - the `lttng:` block of a host variant (docs/experiment.md,
 * "lttng"): an LTTng session daemon of perturb's own, a recording session
 * with one channel per domain, and the accounting of each run.
 *
 * The daemon.  lttng-sessiond runs as perturb's daemon (core/proc.h) in a
 * private mount namespace whose /run is a folder of perturb's
 * (/tmp/perturb-lttng-PID-XXXXXX/run) and whose /dev/shm is a tmpfs of its
 * own: as root it puts its sockets, lock and pid files in /run/lttng,
 * which is then never the system's, so it neither meets a system session
 * daemon nor leaves anything there.  Its application socket is
 * DIR/home/.lttng/lttng-ust-sock-8, where liblttng-ust looks when the
 * workload's LTTNG_HOME is DIR/home.  Readiness is its --sig-parent signal.
 * Each lttng command enters a namespace with the same /run.  One LTTng
 * session at a time on a machine (a lock, /run/perturb-lttng.lock; the
 * others wait): liblttng-ust's wait files in /dev/shm
 * (lttng-ust-wait-8, lttng-ust-wait-8-UID), which a root workload creates
 * when it finds no system session daemon, are shared, and the session
 * removes those that were not there when it started.
 *
 * Accounting.  After each run, outside its timed part, the session is
 * rotated (`lttng rotate`: the run's trace becomes a chunk of its own,
 * flushed), and the chunk gives lttng_events (babeltrace2's counter sink;
 * without babeltrace2 the metric is left out), lttng_bytes (the chunk's
 * files); `lttng list` gives lttng_discarded and lttng_lost (each
 * channel's counters, as differences since the last run).  The chunk is
 * removed then.
 */
#ifndef PERTURB_LTTNG_H
#define PERTURB_LTTNG_H

#include <stddef.h>
#include <sys/types.h>
#include "core/experiment.h"
#include "core/runner.h"

/*
 * What this host refuses before anything runs: root, lttng-tools, kernel
 * events where lttng-modules cannot load (lttng_kernel_unavailable()), a
 * machine without the daemon's private mount namespace
 * (lttng_private_mounts_unavailable()) and each preload's wrapper
 * library.  Unless dry, a trial: the daemon
 * started, the session set up and destroyed, the daemon stopped, so that
 * what LTTng refuses shows now.  -1 with why.
 */
int lttng_host_check(const struct variant *v, int dry, char *why, size_t len);

/*
 * Why this host's kernel cannot take lttng-modules (why filled, 1), or 0
 * when it can: no loadable modules (/proc/modules), module loading
 * disabled (kernel.modules_disabled), lockdown, or no lttng-tracer module
 * for the running kernel under /lib/modules.
 */
int lttng_kernel_unavailable(char *why, size_t len);

/*
 * Why the session daemon cannot have the mount namespace it runs in here
 * (why filled, 1), or 0 when it can: tried in a child process, whose
 * namespace goes with it.  Its mounts must not reach the machine, so "/"
 * is made private, or where "/" is no mount point (a chroot), /run and
 * /dev/shm (or /dev); a minbase chroot whose /run is a plain folder
 * cannot ("mount: /run: not mount point").
 */
int lttng_private_mounts_unavailable(char *why, size_t len);

/* The path of liblttng-ust-NAME-wrapper.so.1 (malloc'd), or NULL. */
char *lttng_wrapper_path(const char *name);

struct lttng_host;

/*
 * Start the daemon (its output appended to log; NULL: to sessiond.log in
 * the session's own folder, made under the machine-wide lock and removed
 * with it, a trial's), create the session with
 * its channels and events and start it.  envp is the variant's
 * environment: lttng_host_env() is it with LTTNG_HOME,
 * LTTNG_UST_REGISTER_TIMEOUT and the preloads added.  -1 printed, nothing
 * left running or on disk; with why (a trial's), -1 and the first failure
 * in why as one line (lttng's own "Error: " line, the daemon's log's
 * end), nothing printed (but the machine-wide lock's wait).
 */
int lttng_host_start(const struct variant *v, char *const *envp, const char *log,
		     double timeout_s, char *why, size_t why_len, struct lttng_host **out);
/* The daemon's pid (for the journal: its process group holds the daemon). */
pid_t lttng_host_pid(const struct lttng_host *h);
char *const *lttng_host_env(const struct lttng_host *h);
/* After a run: rotate and add the four metrics to res.  -1 printed (the
 * run's result stands without them). */
int lttng_host_account(struct lttng_host *h, struct run_result *res);
/* Destroy the session, stop the daemon, remove the folder and the wait
 * files this session created; frees h.  -1 printed when something failed
 * (everything is still tried).  NULL does nothing. */
int lttng_host_stop(struct lttng_host *h);

#endif
