/*
 * cgroup.h - a cgroup v2 around each tree of processes perturb starts:
 * every measured run, daemon, background load and command (proc.h,
 * runner.h), so that nothing they start can outlive them, not even a
 * process that left its process group (setsid).
 *
 * Where.  The first use finds the cgroup2 hierarchy (/proc/self/mounts)
 * and perturb's own cgroup (the "0::" line of /proc/self/cgroup) and makes
 * perturb's base cgroup below its own: OWN/perturb-PID; each tree gets a
 * cgroup below the base (run-N, daemon-N, background-N, command-N).
 * Nothing outside the base is changed: perturb itself stays where it is,
 * and of the controllers the base's parent already hands down
 * (cgroup.controllers) memory, io and pids are enabled for the cgroups
 * below the base, so that they have memory.peak and io.stat where the
 * machine delegates those; cpu.stat (usage, user, system) is there always.
 *
 * Fallback.  Without a cgroup2 hierarchy, or where the base cannot be made
 * (no right to write to perturb's own cgroup), cgroup_create() returns NULL
 * and callers keep to process groups; one warning says why, once per
 * process.  PERTURB_NO_CGROUP=1 in the environment asks for the fallback.
 *
 * Runs.  A run's cgroup comes from a pool (cgroup_take): a few are made
 * ahead of the timed loop (cgroup_prepare), and cgroup_destroy() gives one
 * back instead of removing it once it is empty (cgroup.events "populated
 * 0") and was not killed, with no cgroup below it and, where memory.peak exists, a peak that
 * can be reset (Linux 6.12: a write to the open file); its cumulative
 * counters (cpu.stat, io.stat) are read at each reuse so that
 * cgroup_read_usage() gives what this run added.  The pool's cgroups are
 * removed with the base.  A run starts directly in its cgroup where the
 * kernel has clone3(CLONE_INTO_CGROUP) (proc.h: proc_containment), so a
 * run costs no mkdir, rmdir nor migration; the files it reads are open.
 * A workload (root) that changes its own cgroup's settings (cpu.max, say)
 * hands them to a later run of the pool: perturb does not reset them.
 *
 * End.  cgroup_destroy() kills what is left in a cgroup (cgroup.kill,
 * else freezing it and SIGKILLing each process), waits until it is empty
 * and removes it; cgroup_base_remove() removes the base at the end (also
 * at exit), and the next cgroup_base() makes a new one (the studies of
 * perturb bisect, one per commit, in one process).  A perturb killed by
 * SIGKILL leaves its base: it is journaled when it is made, before anything
 * goes in (cgroup_journal_with(): the check's trial daemons too), and
 * cgroup_purge() stops what is in it and removes it (`perturb restore`,
 * and any later `perturb run`).  The base is perturb-PID; where a dead
 * process of that pid left one, perturb-PID-2 (and so on): pids are reused.
 */
#ifndef PERTURB_CGROUP_H
#define PERTURB_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

struct cgroup;

/* The base cgroup's path, made at the first call (static storage), or NULL
 * when cgroups are not available here (the warning is said once). */
const char *cgroup_base(void);
/* The folder of perturb's own cgroup v2, where it makes its base
 * (malloc'd), or NULL with why. */
char *cgroup_own_dir(char *why, size_t len);
/* fn(path) is called when the base is made, before anything is put in it,
 * and fn(NULL) when cgroup_base_remove() has removed it: the journal's
 * record (main.c); -1 from fn is warned about. */
void cgroup_journal_with(int (*fn)(const char *base));

/* Could the base be made here (read-only: makes nothing)?  0, or -1 with
 * why (perturb doctor). */
int cgroup_usable(char *why, size_t len);

/* A new, empty cgroup below the base, "KIND-N".  NULL when cgroups are not
 * available, or (warning) when it cannot be made. */
struct cgroup *cgroup_create(const char *kind);

/* An empty cgroup for one run: from the pool, else a new one (pooled when
 * it ends).  NULL as cgroup_create(). */
struct cgroup *cgroup_take(void);

/* Fill the pool up to n (at most 8) run cgroups, before the timed loop.
 * Returns how many were made. */
int cgroup_prepare(int n);

/* cg is removed at its end, not reused: its run was SIGKILLed (by
 * cgroup.kill, perhaps: cgroup.c, give_back()). */
void cgroup_no_reuse(struct cgroup *cg);

/* How many run cgroups wait in the pool (for tests). */
int cgroup_pool_size(void);

/* The cgroup's directory, open (O_RDONLY | O_DIRECTORY): clone3's
 * CLONE_INTO_CGROUP takes it.  -1 when none. */
int cgroup_dir_fd(const struct cgroup *cg);

/* The cgroup's cgroup.procs, open for writing: a process that writes "0"
 * to it moves itself in; a pid moves that process. */
int cgroup_procs_fd(const struct cgroup *cg);
const char *cgroup_path(const struct cgroup *cg);

/* Where process pid is: in cg (or a cgroup below it), in another cgroup
 * of perturb's base, outside them (it left: a root process can write its
 * pid to any cgroup.procs), or gone. */
enum { CGROUP_GONE = -1, CGROUP_OUTSIDE, CGROUP_IN, CGROUP_OURS };
int cgroup_where(const struct cgroup *cg, pid_t pid);

/* How many processes are in cg now, after its run's main process ended
 * (-1 when it cannot be read).  Found empty, it is known empty from then
 * on: nothing is left to fork into it, so cgroup_kill() and its reuse
 * read cgroup.events no more. */
int cgroup_count(struct cgroup *cg);

/* Wait, at most seconds, until cg is empty (cgroup.events "populated 0"):
 * processes already signalled get the time to end before what is left is
 * counted as escaped.  0 when it is empty, -1 when not. */
int cgroup_settle(const struct cgroup *cg, double seconds);

/* Kill every process in cg (and below) and wait, at most a few seconds,
 * until it is empty.  Returns the number of processes that were in it, or
 * -1 (printed) when it could not be emptied. */
int cgroup_kill(struct cgroup *cg);

/* What the whole tree used, read from the cgroup's files; has_* say which
 * parts this machine provides. */
struct cgroup_usage {
	int has_cpu, has_memory, has_io;
	double cpu_s, user_s, sys_s;		/* cpu.stat usage/user/system_usec */
	double memory_peak_b;			/* memory.peak */
	double io_read_b, io_write_b;		/* io.stat rbytes/wbytes, all devices */
};
void cgroup_read_usage(const struct cgroup *cg, struct cgroup_usage *u);

/* cgroup_kill(), then give a run's cgroup back to the pool when it can be
 * reused, else remove it; free cg (NULL: nothing).  Returns cgroup_kill()'s
 * count, or -1. */
int cgroup_destroy(struct cgroup *cg);

/* Remove the (empty) base at the end of the study; nothing when there is
 * none or another process made it.  Also registered with atexit(). */
void cgroup_base_remove(void);

/*
 * After a perturb died: kill everything in the cgroup tree at path and
 * remove it, deepest first.  path must be a cgroup below a cgroup2 mount
 * whose last part is "perturb-OWNER" or "perturb-OWNER-N" (so that a
 * journal can never name another tree).  Returns the number of processes
 * killed (>= 0; 0 also when path no longer exists) or -1 with why.
 */
int cgroup_purge(const char *path, pid_t owner, char *why, size_t len);

#endif
