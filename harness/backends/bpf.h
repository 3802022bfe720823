/*
 * bpf.h - the `bpf:` block of a host variant: a bpftrace program that runs
 * as a managed daemon for the variant's runs (docs/experiment.md, "bpf").
 *
 *   bpf:
 *     program: 'tracepoint:syscalls:sys_enter_getppid { @n = count(); }'
 *   bpf: {file: trace.bt}
 *   bpf: {probes: [tracepoint:syscalls:sys_enter_getppid, uprobe:/bin/x:f]}
 *
 * Exactly one of program (inline), file (read when the experiment is
 * loaded, relative to perturb's working directory) and probes (each probe
 * counts its hits in a map).  The host backend (host.c) parses, checks,
 * starts and stops it; this file knows bpftrace and the kernel's BPF side.
 */
#ifndef PERTURB_BPF_H
#define PERTURB_BPF_H

#include <stddef.h>
#include <sys/types.h>
#include "core/yamlnode.h"

struct bpf_cfg {
	char *text;		/* the bpftrace program, as run */
	int has_begin;		/* the user's program has its own BEGIN probe */
};

/* The block (host's parse() for the `bpf` key); release frees text. */
int bpf_parse(struct yn_ctx *y, const struct ynode *block, void *cfg);
void bpf_release(void *cfg);

/*
 * What this machine refuses, before anything runs (root is the caller's
 * check): bpftrace, and
 * each attach type the program names: kprobe/kretprobe need kprobe_events
 * in tracefs (absent under lockdown), uprobe/uretprobe uprobe_events,
 * kfunc/kretfunc/fentry/fexit the kernel's BTF (/sys/kernel/btf/vmlinux),
 * tracepoint:CAT:NAME the event in tracefs.  tracefs is the mounted one
 * (path).  -1 with why ("kprobe: ...").
 */
int bpf_check_attach(const struct bpf_cfg *c, const char *tracefs, char *why, size_t len);

/* The attach types the program names, in the order of the table of
 * bpf_check_attach() then tracepoint ("tracepoint, kprobe"), into buf;
 * "program" when it names none of them. */
void bpf_attach_types(const struct bpf_cfg *c, char *buf, size_t len);

/* The readiness line: BEGIN's marker (printed once every probe is
 * attached), or "Attaching N probes" when the program has its own BEGIN. */
const char *bpf_ready_regex(const struct bpf_cfg *c);

/* bpftrace's last "ERROR: ..." in its log at path (malloc'd, without the
 * position before it nor a full stop after it), else its last line that
 * is not a mark under a program's text (said otherwise), or NULL. */
char *bpf_log_error(const char *path);

/* The events bpftrace said it lost ("Lost N events": its perf buffer was
 * full, printf() and the like) in its log at path, with those of the lines
 * its bounded log dropped (tallied by BPF_LOST_REGEX: core/proc.h); 0
 * without a log. */
#define BPF_LOST_REGEX "^Lost ([0-9]+) events"
unsigned long long bpf_log_lost(const char *path);

/* Write the program to path, {micro} and {perturb} expanded (the
 * perturb-micro and perturb executables: uprobes on their functions), and
 * return bpftrace's argv (argv_free()). */
char **bpf_argv(const struct bpf_cfg *c, const char *path);

/*
 * The kernel's statistics of the BPF programs that process pid holds
 * (/proc/PID/fdinfo: run_cnt, run_time_ns; counted while
 * kernel.bpf_stats_enabled is 1).  -1 when pid is gone.
 */
struct bpf_stats {
	int programs;
	unsigned long long run_cnt, run_time_ns;
};
int bpf_read_stats(pid_t pid, struct bpf_stats *st);

/* Where the statistics are switched on (journaled by host.c). */
#define BPF_STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

/* Raise this process's RLIMIT_MEMLOCK soft limit to what bpftrace asks
 * for (8 MiB, within the hard limit), for the daemon it starts; *old gets
 * the limit to put back with bpf_memlock_restore(). */
struct rlimit;
void bpf_memlock_raise(struct rlimit *old);
void bpf_memlock_restore(const struct rlimit *old);

#endif
