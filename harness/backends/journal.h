/*
 * journal.h - what perturb changed, on disk, so that it can be undone after
 * perturb itself died (SIGKILL, a crash).  A reboot undoes it all itself.
 *
 * One journal per perturb process: STATE_DIR/journal-PID, where STATE_DIR
 * is $PERTURB_STATE_DIR, else /var/lib/perturb for root, else
 * $XDG_STATE_HOME/perturb (~/.local/state/perturb).  It holds the name of
 * the study's tracing instance (written before the instance is made, so
 * that one left by a killed perturb is always found and removed), the
 * complete prior state of the top level of tracefs (when a `kernel:`
 * variant that needs the top level is entered), where tracefs is mounted
 * and whether perturb mounted it, and the processes
 * perturb started that outlive it if it dies (daemons, background-load
 * supervisors), each with its start time so that a recycled pid is never
 * killed, perturb's base cgroup, in which every run, daemon and
 * background load runs (the recovery kills what is left in it and removes
 * it, core/cgroup.h: cgroup_purge), and the /proc/sys values it changed
 * (kernel.bpf_stats_enabled for a bpf: variant) with their prior values.
 * Only a folder of the user's alone holds journals
 * (journal_dir_trusted).  It is written atomically (a temporary file renamed
 * over it; not fsync'd: what it records does not outlive a reboot,
 * journal_write()) before the first change, and removed after a successful
 * restore.
 *
 * The format is text, one "key value" a line, "perturb-journal 1" first and
 * "end SHA256" last (the hash of every line before it): a truncated or
 * altered journal is refused as corrupt, never half-applied.
 *
 * Only one perturb at a time may change the kernel's tracing state: the
 * kernel lock (journal_lock_kernel) is ktrace_lock()'s flock on tracefs
 * itself, which every mount namespace shares (a perturb in a container or
 * a chroot, whose /run is another, sees it too), held until the process
 * ends; the kernel drops it when the process dies.
 */
#ifndef PERTURB_JOURNAL_H
#define PERTURB_JOURNAL_H

#include <stdio.h>
#include <sys/types.h>
#include "instrumentation/tracefs.h"
#include "lib/util.h"

struct journal_proc {
	pid_t pid;			/* also its process group */
	unsigned long long start;	/* /proc/PID/stat starttime (clock ticks after boot) */
	char *what;			/* "daemon 'cmd' of variant 'v'", one line */
};

/* A /proc/sys file perturb changed, and the value it had before. */
struct journal_sysctl {
	char *path;			/* /proc/sys/..., no spaces */
	char *value;			/* one line */
};

struct journal {
	char *path;			/* the file (NULL until journal_init) */
	pid_t owner;			/* the perturb that wrote it */
	unsigned long long owner_start;
	char boot_id[64];		/* /proc/sys/kernel/random/boot_id */
	char *instance;			/* the study's tracing instance (NULL: none) */
	int has_kernel;			/* prior (the top level's) is journaled: the
					 * top level is perturb's, to be put back */
	struct ktrace_state prior;
	char *tracefs;			/* where tracefs is mounted (NULL: not used) */
	int mounted;			/* perturb mounted it there */
	struct journal_proc *procs;
	size_t n_procs;
	char *cgroup;			/* perturb's base cgroup (core/cgroup.h); NULL: none */
	struct journal_sysctl *sysctls;
	size_t n_sysctls;
};

/* This process's journal (journal_init'd at the first call): the one the
 * host backend and the study share, so that one file says everything. */
struct journal *journal_self(void);

/* Record perturb's base cgroup (path), or forget it (NULL), and rewrite the
 * journal, or remove it when nothing else is left in it.  -1 printed. */
int journal_set_cgroup(struct journal *j, const char *path);
/* journal_set_cgroup(journal_self(), path): the hook cgroup_journal_with()
 * takes (main.c), so that a base is journaled where it is made. */
int journal_cgroup(const char *path);

/* The folder of journals (static storage).  Without $HOME, the home of the
 * effective user in the password database. */
const char *journal_dir(void);

/*
 * Journals name processes to kill and kernel state to write back, so only
 * a folder of this user's alone is used: dir must be a real folder (not a
 * symbolic link) owned by the effective user with mode 0700, and every
 * folder above it root's or the user's and not writable by others unless
 * sticky.  journal_write() and the recovery refuse any other (0, or -1
 * with why saying what is wrong and how to fix it).  A journal file is
 * trusted only when it is a regular file owned by the user that others
 * cannot write; another is refused, and nothing it names is touched.
 */
int journal_dir_trusted(const char *dir, char *why, size_t len);

/* An empty journal of this process (nothing written yet). */
void journal_init(struct journal *j);
void journal_release(struct journal *j);

/* Write j atomically to j->path (creating the folder).  -1 printed. */
int journal_write(struct journal *j);
/* Record a process and rewrite the journal. */
int journal_add_proc(struct journal *j, pid_t pid, const char *what);
/*
 * Journal path's current value (once per path: the first value is the
 * prior one) and rewrite the journal, then write value to path.  -1
 * (printed) when either fails; nothing is changed when the journal cannot
 * be written.
 */
int journal_set_sysctl(struct journal *j, const char *path, const char *value);
/* Write every journaled value back and forget them; -1 (printed) when one
 * cannot be written (it stays journaled). */
int journal_restore_sysctls(struct journal *j);
/* Forget the processes (in memory; the file changes at the next write). */
void journal_clear_procs(struct journal *j);
/* Forget the processes, the instance and the kernel state, and remove the
 * file (no error when it does not exist), or rewrite it when a cgroup is
 * still recorded. */
int journal_remove(struct journal *j);

/* Text form and its parser (exposed for tests).  journal_parse returns -1
 * with why filled ("truncated: no end line", "checksum mismatch", ...). */
void journal_format(const struct journal *j, struct strbuf *sb);
int journal_parse(const char *text, struct journal *j, char *why, size_t len);
int journal_load(const char *path, struct journal *j, char *why, size_t len);

/* /proc/PID/stat start time, 0 when there is no such (non-zombie) process. */
unsigned long long proc_start_time(pid_t pid);

/* Take the machine-wide kernel tracing lock (once; kept until exit).  -1
 * with why naming the holder when another perturb has it. */
int journal_lock_kernel(char *why, size_t len);
/* journal_lock_kernel(), then tracefs found or mounted (ktrace_mount()),
 * a mount journaled first: a perturb that dies after leaves nothing
 * that `perturb restore` (or the next perturb) does not unmount.  Its
 * path, or NULL with why filled.  The backend unmounts it at its end
 * (host.c finish_journal()). */
const char *journal_tracefs(char *why, size_t len);

/*
 * Find the journals of perturb processes that are gone, and undo what they
 * recorded: stop their leftover processes (only when the pid's start time
 * still matches), remove their tracing instance, restore the top level's
 * tracing state (and unmount tracefs if that perturb had mounted it),
 * remove the journal.  Says what it did on
 * out, one line per action.  *found (may be NULL) is the number of stale
 * journals.  Returns 0, or -1 when a journal is corrupt or a restore
 * failed (printed; that journal is kept).  report_live: also say which
 * journals belong to a perturb that is still running (and are left alone).
 * The kernel lock a restore took is let go at its end.
 */
int journal_recover(FILE *out, int report_live, int *found);

/* journal_recover() of the one journal at path (exposed for tests): a
 * journal gone since its folder was read (its perturb ended meanwhile) is
 * nothing to do, 0, and not counted in *found. */
int journal_recover_file(FILE *out, const char *path, int *found);

/* Is there a journal of a process that is gone?  (No side effects.) */
int journal_stale_exists(void);

#endif
