/* perf_tracer.c - the perf: block: perf record / perf trace as a managed
 * daemon with per-run accounting; see perf_tracer.h */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "perf_tracer.h"
#include "journal.h"
#include "core/proc.h"
#include "instrumentation/tracefs.h"
#include "lib/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#define PMU_DIR "/sys/bus/event_source/devices"
#define PARANOID "/proc/sys/kernel/perf_event_paranoid"
#define MAX_RATE "/proc/sys/kernel/perf_event_max_sample_rate"
/* trace's markers: getpriority(PRIO_PROCESS, who) of a pid that cannot
 * exist (above any pid_max), ESRCH: MARK_BASE + (sync << 12) + CPU; sync 0
 * is a readiness probe's */
#define MARK_BASE 0x40000000L
#define MARK_SYNCS 0xffff
#define MARK_CPUS 4096
#define SCAN_CHUNK (1024 * 1024)

/* perf.data (linux/perf_event.h, tools/perf's file header) */
#define PERF_MAGIC "PERFILE2"
#define REC_LOST 2
#define REC_SAMPLE 9
#define REC_LOST_SAMPLES 13

/* ---- the block ---- */

static int parse_record(struct yn_ctx *y, const struct ynode *b, struct perf_cfg *c)
{
	static const char *const keys[] = { "events", "frequency", "period", "call_graph",
					    "mmap_pages", NULL };
	static const char *const graphs[] = { "none", "fp", "dwarf", "lbr", NULL };
	const struct ynode *v;
	double d;
	int g;

	if (yn_want_map(y, b, "record") || yn_check_keys(y, b, "record", keys))
		return -1;
	if ((v = yn_get(b, "events")) && yn_want_strv(y, v, "events", 1, &c->events, &c->n_events))
		return -1;
	if ((v = yn_get(b, "frequency"))) {
		if (yn_want_range(y, v, "frequency", R_PERF_FREQUENCY, &d))
			return -1;
		c->frequency = (long)d;
	}
	if ((v = yn_get(b, "period"))) {
		if (c->frequency)
			return yn_fail(y, v, "record: has both frequency and period; perf samples "
				       "by one of them");
		if (yn_want_range(y, v, "period", R_PERF_PERIOD, &d))
			return -1;
		c->period = (long)d;
	}
	if ((v = yn_get(b, "call_graph"))) {
		if (yn_want_enum(y, v, "call_graph", graphs, &g))
			return -1;
		c->call_graph = (enum perf_call_graph)g;
	}
	return 0;
}

static int parse_trace(struct yn_ctx *y, const struct ynode *b, struct perf_cfg *c)
{
	static const char *const keys[] = { "syscalls", "events", "mmap_pages", NULL };
	const struct ynode *v;

	if (yn_want_map(y, b, "trace") || yn_check_keys(y, b, "trace", keys))
		return -1;
	c->all_syscalls = 1;
	if ((v = yn_get(b, "syscalls"))) {
		if (v->type == YN_SEQ) {
			if (yn_want_strv(y, v, "syscalls", 1, &c->syscalls, &c->n_syscalls))
				return -1;
			c->all_syscalls = 0;
		} else if (yn_get_bool(y, b, "syscalls", &c->all_syscalls)) {
			return -1;
		} else if (!c->all_syscalls) {
			/* the bounds of a run are system calls perf trace prints */
			return yn_fail(y, v, "trace: needs system calls (true or a list): perturb "
				       "finds a run's bounds in what perf trace prints by a system "
				       "call of its own; for tracepoints only, use record");
		}
	}
	if ((v = yn_get(b, "events")) && yn_want_strv(y, v, "events", 1, &c->events, &c->n_events))
		return -1;
	return 0;
}

static int perf_parse(struct yn_ctx *y, const struct ynode *block, void *cfg)
{
	static const char *const keys[] = { "record", "trace", NULL };
	struct perf_cfg *c = cfg;
	const struct ynode *rec, *tr, *b, *v;
	double d;

	if (yn_want_map(y, block, "perf") || yn_check_keys(y, block, "perf", keys))
		return -1;
	rec = yn_get(block, "record");
	tr = yn_get(block, "trace");
	if (!!rec + !!tr != 1)
		return yn_fail(y, block, "perf: needs exactly one of record or trace, got %d",
			       !!rec + !!tr);
	c->mode = rec ? PERF_RECORD : PERF_TRACE;
	b = rec ? rec : tr;
	if (rec ? parse_record(y, b, c) : parse_trace(y, b, c))
		return -1;
	if ((v = yn_get(b, "mmap_pages"))) {
		if (yn_want_range(y, v, "mmap_pages", R_PERF_MMAP_PAGES, &d))
			return -1;
		c->mmap_pages = (long)d;
		if (c->mmap_pages & (c->mmap_pages - 1))
			return yn_fail(y, v, "'mmap_pages' must be a power of 2 (perf's ring "
				       "buffer), got %ld", c->mmap_pages);
	}
	return 0;
}

static void perf_release(void *cfg)
{
	struct perf_cfg *c = cfg;
	yn_strv_free(c->events, c->n_events);
	yn_strv_free(c->syscalls, c->n_syscalls);
	memset(c, 0, sizeof(*c));
}

const struct backend_block perf_tracer_blocks[] = {
	{ .key = PERF_TRACER_KEY, .cfg_size = sizeof(struct perf_cfg), .parse = perf_parse,
	  .release = perf_release },
	{ 0 },
};

/* ---- what the machine forbids ---- */

/* An event that needs the CPU's PMU: perf's hardware and cache events, raw
 * rNNN codes, the cpu PMU's own terms. */
static int is_hardware(const char *ev)
{
	static const char *const hw[] = {
		"cycles", "cpu-cycles", "instructions", "cache-references", "cache-misses",
		"branch-instructions", "branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "idle-cycles-frontend", "stalled-cycles-backend",
		"idle-cycles-backend", "ref-cycles",
	};
	static const char *const prefixes[] = {
		"L1-dcache-", "L1-icache-", "LLC-", "dTLB-", "iTLB-", "branch-load", "node-",
		"cpu/", "cpu_core/", "cpu_atom/", "intel_pt", "intel_bts",
	};
	size_t n = strcspn(ev, ":{");

	for (size_t i = 0; i < ARRAY_SIZE(hw); i++)
		if (strlen(hw[i]) == n && !strncmp(ev, hw[i], n))
			return 1;
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(ev, prefixes[i], strlen(prefixes[i])))
			return 1;
	if (ev[0] == 'r' && n > 1) {
		size_t i = 1;
		while (i < n && isxdigit((unsigned char)ev[i]))
			i++;
		return i == n;
	}
	return 0;
}

/* CAT:NAME a tracepoint (not EVENT:MODIFIERS such as cycles:u); 0 otherwise. */
static int tracepoint_path(const char *ev, const char *tracefs, char **path)
{
	const char *colon = strchr(ev, ':');

	*path = NULL;
	if (!colon || strchr(colon + 1, ':') || strpbrk(ev, "/*?[{") || !colon[1] ||
	    strspn(colon + 1, "ukhpPGHISDWe") == strlen(colon + 1))
		return 0;
	*path = xasprintf("%s/events/%.*s/%s", tracefs, (int)(colon - ev), ev, colon + 1);
	return 1;
}

int perf_tracer_check(const struct perf_cfg *c, const char *tracefs, char *why, size_t len)
{
	int has_pmu = file_exists(PMU_DIR "/cpu") || file_exists(PMU_DIR "/cpu_core");

	if (!program_exists("perf"))
		return why_error(why, len, "perf: needs the program 'perf' (Debian package: "
				 "linux-perf)");
	if (geteuid() != 0) {
		char *par = read_line_file(PARANOID);
		why_error(why, len, "perf: watching every CPU and tracepoints needs root (or "
			  "kernel.perf_event_paranoid <= -1, it is %s)", par ? par : "unknown");
		free(par);
		return -1;
	}
	for (size_t i = 0; i < c->n_events; i++) {
		char *path;
		if (is_hardware(c->events[i]) && !has_pmu)
			return why_error(why, len, "perf: '%s' is a hardware event and this machine "
					 "has no CPU PMU (no %s/cpu: a virtual machine without "
					 "one); software events and tracepoints work", c->events[i],
					 PMU_DIR);
		if (tracefs && tracepoint_path(c->events[i], tracefs, &path)) {
			int ok = file_exists(path);
			free(path);
			if (!ok)
				return why_error(why, len, "perf: no tracepoint '%s' in %s/events",
						 c->events[i], tracefs);
		}
	}
	if (c->call_graph == PERF_CG_LBR && !has_pmu)
		return why_error(why, len, "perf: call_graph lbr needs the CPU's last branch "
				 "records and this machine has no CPU PMU (no %s/cpu)", PMU_DIR);
	if (c->frequency) {
		char *max = read_line_file(MAX_RATE);
		long m = max ? atol(max) : 0;
		free(max);
		if (m > 0 && c->frequency > m)
			return why_error(why, len, "perf: frequency %ld is above "
					 "kernel.perf_event_max_sample_rate (%ld)", c->frequency, m);
	}
	return 0;
}

/* ---- the daemon ---- */

struct perf_tracer {
	enum perf_mode mode;
	struct daemon *d;
	int pidfd;
	char **argv;
	char *ctl_path, *ack_path, *data_path, *log_path;
	int ctl, ack;		/* record: the fifos, open both ways */
	int data;		/* record: perf.data, read */
	int log;		/* trace: its output, read */
	int inotify;		/* trace: changes of the log */
	off_t cursor;		/* where the next whole record (line) starts */
	off_t freed;		/* trace: the log's bytes below this are read and
				 * their blocks given back (free_read_log) */
	struct strbuf line;	/* trace: the incomplete last line */
	struct perf_counts acc;	/* since the last mark */
	unsigned sync;		/* trace: the current sync's number (1..MARK_SYNCS) */
	cpu_set_t seen;		/* trace: CPUs whose marker of it was printed */
	int probed;		/* trace: a readiness probe was printed */
	double timeout_s;
	char *why;		/* perf_tracer_start()'s why while it starts: its
				 * first failure said there, not printed */
	size_t why_len;
};

/* A failure of t, after "perf: ": printed or, while a start of a caller
 * that says it (perf_tracer_start's why), kept there (the first: the
 * others follow from it).  Returns -1. */
static int PRINTF(2, 3) perf_err(struct perf_tracer *t, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!t->why)
		return error("perf: %s", msg);
	if (!*t->why)
		snprintf(t->why, t->why_len, "%s", msg);
	return -1;
}

/* flag and x in one word: -F999 */
static void addf(char ***v, size_t *n, const char *flag, long x)
{
	char *s = xasprintf("%s%ld", flag, x);
	argv_push(v, n, s);
	free(s);
}

static char **build_argv(const struct perf_cfg *c, const struct perf_tracer *t)
{
	static const char *const graphs[] = { NULL, "fp", "dwarf", "lbr" };
	char **v = NULL, *s;
	size_t n = 0;

	argv_push(&v, &n, "perf");
	if (c->mode == PERF_RECORD) {
		argv_push(&v, &n, "record");
		argv_push(&v, &n, "-a");
		/* no post-processing pass when it stops, nothing in ~/.debug */
		argv_push(&v, &n, "--no-buildid");
		argv_push(&v, &n, "--no-buildid-cache");
		argv_push(&v, &n, "-D");
		argv_push(&v, &n, "-1");
		s = xasprintf("--control=fifo:%s,%s", t->ctl_path, t->ack_path);
		argv_push(&v, &n, s);
		free(s);
		argv_push(&v, &n, "-o");
		argv_push(&v, &n, t->data_path);
		for (size_t i = 0; i < c->n_events; i++) {
			argv_push(&v, &n, "-e");
			argv_push(&v, &n, c->events[i]);
		}
		if (c->frequency)
			addf(&v, &n, "-F", c->frequency);
		if (c->period)
			addf(&v, &n, "-c", c->period);
		if (c->call_graph) {
			argv_push(&v, &n, "--call-graph");
			argv_push(&v, &n, graphs[c->call_graph]);
		}
	} else {
		argv_push(&v, &n, "trace");
		argv_push(&v, &n, "-a");
		if (c->all_syscalls) {
			argv_push(&v, &n, "--syscalls");
		} else {
			struct strbuf sb = STRBUF_INIT;
			for (size_t i = 0; i < c->n_syscalls; i++)
				strbuf_addf(&sb, "%s,", c->syscalls[i]);
			strbuf_addstr(&sb, "getpriority");	/* the markers */
			argv_push(&v, &n, "-e");
			argv_push(&v, &n, sb.buf);
			strbuf_release(&sb);
		}
		for (size_t i = 0; i < c->n_events; i++) {
			argv_push(&v, &n, "-e");
			argv_push(&v, &n, c->events[i]);
		}
	}
	if (c->mmap_pages)
		addf(&v, &n, "-m", c->mmap_pages);
	return v;
}

/* Wait until fd is readable, perf ends, or the deadline: 1, 0 (time-out,
 * or perf ended: *gone), -1 (error or a stop request). */
static int wait_fd(struct perf_tracer *t, int fd, double deadline, int *gone)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = t->pidfd, .events = POLLIN } };
	int r = proc_poll(p, 2, deadline, 1);

	*gone = 0;
	if (r <= 0)
		return r == 0 ? 0 : -1;
	if (p[0].revents & POLLIN)
		return 1;
	*gone = !!(p[1].revents & POLLIN);
	return 0;
}

/* record: send cmd, wait for "ack". */
static int command(struct perf_tracer *t, const char *cmd)
{
	char buf[16];
	size_t n = strlen(cmd), got = 0;
	double deadline = now_mono() + t->timeout_s;
	int gone, r;

	if (write(t->ctl, cmd, n) != (ssize_t)n)
		return perf_err(t, "cannot write '%s' to its control fifo: %s", cmd,
			     strerror(errno));
	while (got < 4) {
		if ((r = wait_fd(t, t->ack, deadline, &gone)) <= 0)
			return perf_err(t, "no answer to '%.*s' %s", (int)n - 1, cmd,
				     gone ? "(perf ended)" : r == 0 ? "in time" : "(stopped)");
		ssize_t k = read(t->ack, buf + got, sizeof(buf) - 1 - got);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k <= 0)
			return perf_err(t, "cannot read its control answer: %s",
				     k < 0 ? strerror(errno) : "end of file");
		got += (size_t)k;
	}
	buf[got] = '\0';
	if (strncmp(buf, "ack\n", 4))
		return perf_err(t, "answered '%s' to '%.*s'", buf, (int)n - 1, cmd);
	return 0;
}

size_t perf_data_scan(const unsigned char *buf, size_t len, struct perf_counts *out)
{
	size_t off = 0;

	while (len - off >= 8) {
		uint32_t type;
		uint16_t size;
		uint64_t lost;
		memcpy(&type, buf + off, 4);
		memcpy(&size, buf + off + 6, 2);
		if (size < 8 || size > len - off)
			break;
		if (type == REC_SAMPLE)
			out->events++;
		else if (type == REC_LOST && size >= 24) {
			memcpy(&lost, buf + off + 16, 8);	/* id, then lost */
			out->lost += (double)lost;
		} else if (type == REC_LOST_SAMPLES && size >= 16) {
			memcpy(&lost, buf + off + 8, 8);
			out->lost += (double)lost;
		}
		out->bytes += size;
		off += size;
	}
	return off;
}

/* record: the whole records written since the cursor, added to acc. */
static int scan_data(struct perf_tracer *t)
{
	unsigned char *buf = xmalloc(SCAN_CHUNK);
	size_t have = 0;
	int ret = 0;

	for (;;) {
		ssize_t k = pread(t->data, buf + have, SCAN_CHUNK - have, t->cursor + (off_t)have);
		size_t used;
		if (k < 0) {
			ret = perf_err(t, "cannot read '%s': %s", t->data_path, strerror(errno));
			break;
		}
		have += (size_t)k;
		used = perf_data_scan(buf, have, &t->acc);
		t->cursor += (off_t)used;
		memmove(buf, buf + used, have - used);
		have -= used;
		if (k == 0 || (used == 0 && have == SCAN_CHUNK))
			break;
	}
	free(buf);
	return ret;
}

/* trace: one line of its output (without '\n'). */
static void trace_line(struct perf_tracer *t, const char *s, size_t n)
{
	const char *p = s;
	char *end;

	if ((end = memmem(s, n, " getpriority(who: ", 18))) {
		long who = strtol(end + 18, NULL, 10) - MARK_BASE;
		if (who >= 0 && who < (long)(MARK_SYNCS + 1) * MARK_CPUS) {
			/* a marker, never an event: this sync's, a probe's or an older one */
			if (who / MARK_CPUS == 0)
				t->probed = 1;
			else if ((unsigned)(who / MARK_CPUS) == t->sync)
				CPU_SET(who % MARK_CPUS, &t->seen);
			return;
		}
	}
	t->acc.bytes += (double)n + 1;
	while (p < s + n && *p == ' ')
		p++;
	if (p < s + n && !strncmp(p, "LOST ", 5)) {
		unsigned long long k = strtoull(p + 5, &end, 10);
		if (end != p + 5)
			t->acc.lost += (double)k;
		return;
	}
	/* an event: "TIME ( DURATION ms): comm/tid ...", not a call chain's line */
	if (p < s + n && isdigit((unsigned char)*p)) {
		while (p < s + n && (isdigit((unsigned char)*p) || *p == '.'))
			p++;
		if (p < s + n && *p == ' ')
			t->acc.events++;
	}
}

/* The bytes perf trace's log keeps on disk: PROC_LOG_MAX, as every log
 * (PERTURB_PERF_TRACE_LOG_MAX, bytes, for the tests). */
static off_t trace_log_max(void)
{
	const char *e = getenv("PERTURB_PERF_TRACE_LOG_MAX");
	long v;

	if (e && parse_long(e, 8192, PROC_LOG_MAX, &v) == 0)
		return (off_t)v;
	return PROC_LOG_MAX;
}

/*
 * trace: its log is read by offset as it grows, so it cannot be cut as a
 * daemon's log is (proc.h, PROC_LOG_MAX); its blocks read more than half
 * the bound ago are given back instead (a hole punched: the file keeps
 * its size and its offsets, the disk holds at most the bound), so that a
 * flood of events cannot fill the database's disk (issue 22).  Said once.
 */
static void free_read_log(struct perf_tracer *t)
{
	static int said;
	off_t max = trace_log_max(), keep = (t->cursor - max / 2) & ~(off_t)4095;
	int fd;

	if (t->cursor <= max || keep - t->freed < max / 4)
		return;
	fd = open(t->log_path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, keep) < 0) {
		if (!said++)
			warning("perf: cannot give back the read part of '%s' (%s): it grows "
				"unbounded", t->log_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		t->freed = keep;
		return;
	}
	close(fd);
	if (!t->freed && !said++)
		warning("perf: perf trace wrote more than its log keeps (%lld bytes): its first "
			"bytes, read and counted, are given back to the disk as they are read "
			"('%s' keeps the last of it)", (long long)max, t->log_path);
	t->freed = keep;
}

/* trace: the whole lines written since the cursor. */
static int scan_log(struct perf_tracer *t)
{
	char buf[65536];
	ssize_t k;

	while ((k = pread(t->log, buf, sizeof(buf), t->cursor)) > 0) {
		char *p = buf, *nl;
		t->cursor += k;
		while ((nl = memchr(p, '\n', (size_t)(buf + k - p)))) {
			strbuf_add(&t->line, p, (size_t)(nl - p));
			trace_line(t, t->line.buf, t->line.len);
			strbuf_reset(&t->line);
			p = nl + 1;
		}
		strbuf_add(&t->line, p, (size_t)(buf + k - p));
	}
	if (k < 0)
		return perf_err(t, "cannot read '%s': %s", t->log_path, strerror(errno));
	free_read_log(t);
	return 0;
}

/* trace: marker system calls of sync on each CPU perturb may run on that
 * has not printed one yet; how many CPUs it may run on. */
static unsigned emit_markers(const struct perf_tracer *t, unsigned sync)
{
	cpu_set_t old, one;
	unsigned n = 0;

	if (sched_getaffinity(0, sizeof(old), &old) < 0)
		return 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && cpu < MARK_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		n++;
		if (sync && CPU_ISSET(cpu, &t->seen))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		/* the kernel moves this thread to cpu before the call returns */
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			getpriority(PRIO_PROCESS, (id_t)(MARK_BASE + (long)sync * MARK_CPUS + cpu));
	}
	sched_setaffinity(0, sizeof(old), &old);
	return n;
}

/* The CPUs in the set that are not in seen. */
static int all_seen(const struct perf_tracer *t)
{
	cpu_set_t mine;

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		return 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && cpu < MARK_CPUS; cpu++)
		if (CPU_ISSET(cpu, &mine) && !CPU_ISSET(cpu, &t->seen))
			return 0;
	return 1;
}

/*
 * trace: read perf trace's output until it has printed a marker made now
 * on every CPU perturb may run on or, with ready, a probe's (perf trace is
 * attached), within the time-out.  A marker can be lost with the events
 * around it (perf trace's buffer full): what has not come within a second
 * is made again.
 */
static int trace_sync(struct perf_tracer *t, int ready)
{
	double deadline = now_mono() + t->timeout_s, again = 0;
	int gone = 0;

	if (!ready)
		t->sync = t->sync % MARK_SYNCS + 1;
	CPU_ZERO(&t->seen);
	for (;;) {
		char ev[4096];
		int r;
		if (now_mono() >= again) {
			if (!emit_markers(t, ready ? 0 : t->sync))
				return perf_err(t, "cannot place its markers on this process's CPUs");
			again = now_mono() + (ready ? 0.2 : 1.0);
		}
		if (scan_log(t) < 0)
			return -1;
		if (ready ? t->probed : all_seen(t))
			return 0;
		r = wait_fd(t, t->inotify, again < deadline ? again : deadline, &gone);
		if (r < 0 || gone || now_mono() >= deadline)
			return perf_err(t, "perf trace did not print its markers %s",
				     gone ? "(it ended)" : r < 0 ? "(stopped)" : "in time");
		if (r > 0 && read(t->inotify, ev, sizeof(ev)) < 0 && errno != EAGAIN)
			return perf_err(t, "cannot watch '%s': %s", t->log_path, strerror(errno));
	}
}

static int record_ready(struct perf_tracer *t)
{
	char hdr[56];
	uint64_t off;

	if (command(t, "enable\n") < 0)
		return -1;
	if ((t->data = open(t->data_path, O_RDONLY | O_CLOEXEC)) < 0)
		return perf_err(t, "cannot open '%s': %s", t->data_path, strerror(errno));
	if (pread(t->data, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    memcmp(hdr, PERF_MAGIC, 8))
		return perf_err(t, "'%s' has no perf.data header", t->data_path);
	memcpy(&off, hdr + 40, 8);	/* the data section's offset */
	t->cursor = (off_t)off;
	return 0;
}

int perf_tracer_start(const struct perf_cfg *c, const char *dir, const char *name,
		      char *const *envp, double timeout_s, char *why, size_t len,
		      struct perf_tracer **out)
{
	struct perf_tracer *t = xcalloc(1, sizeof(*t));
	char **env = NULL, how[128] = "";
	int r = -1;

	*out = NULL;
	if (why && len) {
		t->why = why;
		t->why_len = len;
		why[0] = '\0';
	}
	t->mode = c->mode;
	t->ctl = t->ack = t->data = t->log = t->inotify = t->pidfd = -1;
	t->timeout_s = timeout_s > 0 ? timeout_s : 60;
	t->line = (struct strbuf)STRBUF_INIT;
	t->log_path = xasprintf("%s/%s-perf.log", dir, name);
	if (c->mode == PERF_RECORD) {
		t->ctl_path = xasprintf("%s/%s-perf.ctl", dir, name);
		t->ack_path = xasprintf("%s/%s-perf.ack", dir, name);
		/* a file of its own at each entry (perf renames an old one) */
		for (int i = 1; !t->data_path || file_exists(t->data_path); i++) {
			free(t->data_path);
			t->data_path = xasprintf("%s/%s-perf-%d.data", dir, name, i);
		}
		unlink(t->ctl_path);
		unlink(t->ack_path);
		if (mkfifo(t->ctl_path, 0600) < 0 || mkfifo(t->ack_path, 0600) < 0) {
			perf_err(t, "cannot make its control fifos in '%s': %s", dir, strerror(errno));
			goto out;
		}
		/* open both ways: perf's own opens never wait for perturb */
		t->ctl = open(t->ctl_path, O_RDWR | O_CLOEXEC);
		t->ack = open(t->ack_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (t->ctl < 0 || t->ack < 0) {
			perf_err(t, "cannot open its control fifos: %s", strerror(errno));
			goto out;
		}
	} else {
		int fd = open(t->log_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			perf_err(t, "cannot open '%s': %s", t->log_path, strerror(errno));
			if (fd >= 0)
				close(fd);
			goto out;
		}
		close(fd);
		t->cursor = st.st_size;	/* the log is appended to at each entry */
		t->log = open(t->log_path, O_RDONLY | O_CLOEXEC);
		t->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (t->log < 0 || t->inotify < 0 ||
		    inotify_add_watch(t->inotify, t->log_path, IN_MODIFY) < 0) {
			perf_err(t, "cannot watch '%s': %s", t->log_path, strerror(errno));
			goto out;
		}
	}
	t->argv = build_argv(c, t);
	env = argv_copy(envp);		/* and no perfconfig of the user's */
	env_put(&env, "PERF_CONFIG", "/dev/null", NULL);
	/* record: its log is perf's messages, bounded as a daemon's; trace: its
	 * output, which trace_sync() reads as it grows, by offset, run by run:
	 * not cut under it (core/proc.h) */
	if (daemon_start_reason(t->argv, env, NULL, t->log_path,
				t->mode == PERF_RECORD ? PROC_LOG_MAX : 0, 0, NULL, NULL, timeout_s,
				t->why ? how : NULL, sizeof(how), &t->d) < 0) {
		perf_err(t, "it %s", how);
		how[0] = '\0';
		goto out;
	}
	if ((t->pidfd = pidfd_open(daemon_pid(t->d), 0)) < 0) {
		perf_err(t, "cannot watch it: %s", strerror(errno));
		goto out;
	}
	r = c->mode == PERF_RECORD ? record_ready(t) : trace_sync(t, 1);
	if (r == 0 && c->mode == PERF_TRACE)
		r = perf_tracer_mark(t);
out:
	argv_free(env);
	if (r < 0) {
		char *log = xstrdup(t->log_path), *failed = t->why ? xstrdup(t->why) : NULL, *said;

		if (failed && t->d && daemon_stop_reason(t->d, how, sizeof(how)) == 0)
			how[0] = '\0';
		if (failed)
			t->d = NULL;
		/* stopped, its logger reaped: the log holds all perf said (read
		 * before, its last lines could still be on their way) */
		perf_tracer_stop(t);
		said = perf_tracer_log_error(log);
		if (failed)	/* one reason: what perf said, what failed, how it ended */
			snprintf(why, len, "%s%s%s%s%s", said ? said : "",
				 said && *failed ? "; " : "", failed, *how ? ", it " : "", how);
		else if (said)
			error("perf: it said: %s", said);
		free(failed);
		free(said);
		free(log);
		return -1;
	}
	t->why = NULL;
	*out = t;
	return 0;
}

pid_t perf_tracer_pid(const struct perf_tracer *t)
{
	return t->d ? daemon_pid(t->d) : -1;
}

char **perf_tracer_argv(const struct perf_tracer *t)
{
	return t->argv;
}

int perf_tracer_check_variant(const struct variant *v, char *why, size_t len)
{
	const struct perf_cfg *c = v->cfg;
	char msg[1024], dir[] = "/tmp/perturb-perf-XXXXXX", **env;
	struct perf_tracer *t = NULL;
	const char *path;
	int ret = -1;

	if (backend_dry_run) {
		/* nothing changed: no lock, no mount, no trial start */
		path = ktrace_find_mount();
		if (perf_tracer_check(c, path, msg, sizeof(msg)) < 0)
			return why_error(why, len, "variant '%s': %s", v->name, msg);
		note("variant '%s': dry run: the perf: block's events were checked%s; whether "
		     "perf starts with them was not tried (nothing was changed)", v->name,
		     path ? " against tracefs" : " (not its tracepoints: tracefs is not mounted, "
		     "and mounting it would change the machine)");
		return 0;
	}
	if (perf_tracer_check(c, NULL, msg, sizeof(msg)) < 0)
		return why_error(why, len, "variant '%s': %s", v->name, msg);
	/* perf would mount tracefs itself, and leave it: mounted here,
	 * journaled first, and unmounted by the host backend's check */
	if (!(path = journal_tracefs(msg, sizeof(msg))))
		return why_error(why, len, "variant '%s': perf: %s", v->name, msg);
	if (perf_tracer_check(c, path, msg, sizeof(msg)) < 0) {
		why_error(why, len, "variant '%s': %s", v->name, msg);
		goto out;
	}
	if (!mkdtemp(dir)) {
		why_error(why, len, "variant '%s': perf: cannot make a folder in /tmp: %s", v->name,
			  strerror(errno));
		goto out;
	}
	env = env_build(v);
	/* its failure is this check's reason, said once by the caller */
	if (perf_tracer_start(c, dir, "trial", env, 60, msg, sizeof(msg), &t) < 0) {
		why_error(why, len, "variant '%s': perf: it did not start: %s", v->name, msg);
	} else if (perf_tracer_stop(t) < 0) {
		why_error(why, len, "variant '%s': perf: it ended on its own during its trial",
			  v->name);
	} else {
		ret = 0;
	}
	argv_free(env);
	/* what it wrote: its log and, for record, its one file */
	{
		char *f = xasprintf("%s/trial-perf.log", dir), *g = xasprintf("%s/trial-perf-1.data", dir);
		unlink(f);
		unlink(g);
		free(f);
		free(g);
		rmdir(dir);
	}
out:
	return ret;
}

/* Everything made before now is in what perf wrote, then read. */
static int sync_and_scan(struct perf_tracer *t)
{
	if (t->mode == PERF_TRACE)
		return trace_sync(t, 0);
	if (command(t, "ping\n") < 0 || command(t, "ping\n") < 0)
		return -1;
	return scan_data(t);
}

int perf_tracer_mark(struct perf_tracer *t)
{
	int r = sync_and_scan(t);
	memset(&t->acc, 0, sizeof(t->acc));
	return r;
}

int perf_tracer_count(struct perf_tracer *t, struct perf_counts *out)
{
	int r = sync_and_scan(t);
	*out = t->acc;
	memset(&t->acc, 0, sizeof(t->acc));
	return r;
}

int perf_tracer_stop(struct perf_tracer *t)
{
	int ret = 0;

	if (!t)
		return 0;
	if (t->d && daemon_stop(t->d) < 0)
		ret = -1;
	for (int *fd = &t->ctl; fd <= &t->inotify; fd++)
		if (*fd >= 0)
			close(*fd);
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->ctl_path)
		unlink(t->ctl_path);
	if (t->ack_path)
		unlink(t->ack_path);
	free(t->ctl_path);
	free(t->ack_path);
	free(t->data_path);
	free(t->log_path);
	argv_free(t->argv);
	strbuf_release(&t->line);
	free(t);
	return ret;
}

char *perf_tracer_log_error(const char *path)
{
	char *text = read_file(path, NULL), *line, *save = NULL;
	struct strbuf sb = STRBUF_INIT;
	int n = 0;

	if (!text)
		return NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* perf's complaints, not its usage text or events */
		if (!strncmp(line, "Error", 5) || !strncmp(line, "event syntax error", 18) ||
		    strstr(line, "not supported") || strstr(line, "Permission") ||
		    strstr(line, "invalid or unsupported") || !strncmp(line, "Failed", 6) ||
		    !strncmp(line, "failed", 6) || strstr(line, "No permission")) {
			if (n++ < 3)
				strbuf_addf(&sb, "%s%s", sb.len ? "; " : "", line);
		}
	}
	free(text);
	return sb.len ? strbuf_detach(&sb) : (strbuf_release(&sb), NULL);
}
