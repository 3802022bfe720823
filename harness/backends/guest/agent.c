/*
 * agent.c - perturb's guest agent: /init of the initramfs the qemu backend
 * boots (harness/backends/qemu.c).  Built static, with the wire protocol
 * (harness/backends/proto.c, zlib), instrumentation/tracefs.c (libtracefs,
 * libtraceevent), harness/lib/util.c and the counters' names and
 * perf_event code (harness/counters/counters_names.c, counters_perf.c; no
 * PAPI) linked in; needs nothing from the image but itself (busybox is for
 * shell: workloads).
 *
 * It mounts proc, sysfs, devtmpfs and tracefs (the initramfs itself is the
 * writable root, with the workloads' inputs at their host paths), puts the
 * serial console (/dev/ttyS0) in raw mode, says PERTURB-READY and answers
 * the host's requests, one frame a line, as harness/backends/proto.h
 * defines them (proto.c encodes and decodes every message on both ends):
 * KERNEL with PERTURB-KERNEL, LTTNG with PERTURB-LTTNG, COUNTERS with
 * PERTURB-COUNTERS, RUN with
 * PERTURB-RESULT, a request it cannot decode with PERTURB-ERROR; QUIT
 * syncs and reboots (QEMU runs with -no-reboot: it exits).
 *
 * KERNEL is applied with the host's code (tracefs.c): the tracer, every
 * event glob and every function glob are checked against available_tracers
 * / available_events / available_filter_functions first (the host cannot know the guest kernel's), then ktrace_apply() and
 * ktrace_verify(), at the top level: the guest is the study's alone (no
 * session of anyone else's to keep apart from, no state to give back).
 *
 * LTTNG starts LTTng's session daemon (lttng-sessiond --background, which
 * loads the lttng modules packed at /lib/modules/RELEASE by name), checks
 * that the kernel tracer answers (lttng list --kernel) and makes the
 * session once (channel, every event) to refuse up front what the guest
 * kernel lacks.  Then every RUN gets a session of its own, made and
 * started before the fork and stopped, read and destroyed after the reap
 * (outside the timed part); its result carries LTTng's accounting: the
 * channel's discarded events or lost packets (lttng list: the count of
 * its mode, discard or overwrite; the other is 0), the records
 * the ring buffer wrote (its "records written" kernel message of each
 * per-CPU buffer, said when the session is destroyed and read from
 * /dev/kmsg) and the bytes of the trace's streams, deleted afterwards.
 * A session that cannot be made fails the run (not measured untraced).
 *
 * COUNTERS is checked with the host's code too: counter_parse(), the same
 * perf_event attributes (counter_perf_spec()), and perf_counter_probe()
 * opening each on the agent itself: under TCG the guest has no PMU, so
 * hardware events are "no hardware PMU (perf_event_open: ENOENT)" whatever
 * the host has; raw PAPI names are never counted here (no PAPI).
 *
 * A RESULT carries how the run ended, its times and rusage, the last
 * AGENT_OUT_MAX bytes of its stdout and stderr (for an agent error,
 * stderr holds the reason), and after a KERNEL that succeeded the
 * tracer's own accounting (per_cpu/cpuN/stats, ktrace_stats_delta()), read
 * before the fork and after the reap, outside the timed part, as the host
 * backend does (or why it could not be read).  Each counter of the
 * COUNTERS list the guest can count comes back as read, unscaled (the
 * host scales it with counter_scale(), as its own), or with the reason it
 * has no value in this run (perf_event_open on the child or the read
 * failed).  Counters are opened (perf_counter_open(): disabled, inherit,
 * enable_on_exec, the host's attributes) on the forked child, which waits
 * on a pipe before its execve() until they are, and read once after the
 * reap and the group kill, whatever the run's status.
 *
 * A run is measured as perturb's host runner does: CLOCK_MONOTONIC from just
 * before the fork to the exit seen, rusage of the child from wait4(), its
 * process group killed at the end, SIGTERM then SIGKILL on time-out.  With
 * counters the wall time starts, as on the host, when the child, forked,
 * set up and with its counters open, is released to exec.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "counters/counters.h"
#include "counters/counters_backend.h"
#include "backends/proto.h"
#include "instrumentation/tracefs.h"
#include "lib/util.h"

#define AGENT_OUT_MAX PROTO_OUTPUT_MAX
#define AGENT_LINE_MAX PROTO_LINE_MAX
#define KILL_GRACE_S 2

static int tty = -1;
static int kernel_applied;	/* a KERNEL succeeded: runs report the tracer's accounting */
static struct proto_lttng lttng;	/* the LTTNG that succeeded (events.n 0: none) */

/* The counters of the last COUNTERS line, in its order. */
struct guest_counter {
	char *name;
	struct perf_spec ps;
	int ok;			/* the probe opened it: counted in every run */
	int fd;			/* this run's event, -1 when none */
	char *why;		/* this run's failure, NULL when none */
};
static struct guest_counter *gc;
static size_t n_gc, n_gc_ok;

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void setup_system(void)
{
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	/* keep printk off the console: it would cut our frames */
	int fd = open("/proc/sys/kernel/printk", O_WRONLY);
	if (fd >= 0) {
		write_all(fd, "1\n", 2);
		close(fd);
	}
	if (access("/bin/busybox", X_OK) == 0) {
		pid_t pid = fork();
		if (!pid) {
			execl("/bin/busybox", "busybox", "--install", "-s", "/bin", (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

static int open_tty(void)
{
	struct termios t;
	int fd = open("/dev/ttyS0", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		fd = open("/dev/console", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

/* The last max bytes of a file; *len set.  malloc'd (never NULL). */
static char *read_tail(const char *path, size_t max, size_t *len)
{
	char *buf = xmalloc(max + 1);
	int fd = open(path, O_RDONLY);
	off_t size;

	*len = 0;
	if (fd < 0)
		return buf;
	size = lseek(fd, 0, SEEK_END);
	if (size > (off_t)max)
		lseek(fd, size - (off_t)max, SEEK_SET);
	else
		lseek(fd, 0, SEEK_SET);
	for (;;) {
		ssize_t r = read(fd, buf + *len, max - *len);
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	close(fd);
	return buf;
}


/* Send one message to the host; a message that cannot be encoded (it
 * breaks a limit of proto.h) goes as PERTURB-ERROR with the reason. */
static void send_msg(const struct proto_msg *m)
{
	struct strbuf line = STRBUF_INIT;
	char why[256];

	if (proto_encode(m, &line, why, sizeof(why)) < 0) {
		struct proto_msg e = { .type = PROTO_ERROR, .seq = m->seq, .error = why };
		strbuf_reset(&line);
		if (proto_encode(&e, &line, why, sizeof(why)) < 0)
			goto out;
	}
	write_all(tty, line.buf, line.len);
out:
	strbuf_release(&line);
}

/* ---- counters ---- */

static void forget_counters(void)
{
	for (size_t i = 0; i < n_gc; i++) {
		if (gc[i].fd >= 0)
			close(gc[i].fd);
		free(gc[i].name);
		free(gc[i].why);
	}
	free(gc);
	gc = NULL;
	n_gc = n_gc_ok = 0;
}

/*
 * COUNTERS: parse and probe each name as the host does (counter_parse(),
 * counter_perf_spec(), perf_counter_probe(): the same files); answer with
 * one reason per counter, "" when it can be counted.
 */
static void do_counters(const struct proto_list *names)
{
	struct proto_msg reply = { .type = PROTO_COUNTERS_DONE };

	forget_counters();
	gc = xcalloc(names->n + 1, sizeof(*gc));
	reply.counters.v = xcalloc(names->n + 1, sizeof(char *));
	reply.counters.n = names->n;
	for (size_t i = 0; i < names->n; i++) {
		struct guest_counter *c = &gc[n_gc++];
		struct counter_spec spec;
		char shortr[128], detail[512];
		char **no = &reply.counters.v[i];

		c->name = xstrdup(names->v[i]);
		c->fd = -1;
		if (counter_parse(c->name, &spec, detail, sizeof(detail)) < 0) {
			*no = xstrdup(detail);
		} else if (counter_perf_spec(&spec, &c->ps) < 0) {
			*no = xstrdup("PAPI cannot count it (the guest agent has no PAPI)");
		} else if (perf_counter_probe(&c->ps, shortr, sizeof(shortr), detail,
					      sizeof(detail)) < 0) {
			*no = xasprintf("%s (%s)", shortr, detail);
		} else {
			c->ok = 1;
			n_gc_ok++;
			*no = xstrdup("");
		}
	}
	send_msg(&reply);
	proto_msg_release(&reply);
}

/* Open every counter that can be counted on pid, waiting before its exec. */
static void attach_counters(pid_t pid)
{
	for (size_t i = 0; i < n_gc; i++) {
		struct guest_counter *c = &gc[i];
		free(c->why);
		c->why = NULL;
		if (!c->ok)
			continue;
		c->fd = perf_counter_open(&c->ps, pid);
		if (c->fd < 0) {
			c->why = xasprintf("perf_event_open: %s", strerror(-c->fd));
			c->fd = -1;
		}
	}
}

/*
 * After the reap: read and close every counter into r->counts (malloc'd:
 * the count as read, or the reason this run has none; the reasons are
 * given to r).
 */
static void collect_counters(struct proto_result *r)
{
	r->counts = xcalloc(n_gc + 1, sizeof(*r->counts));
	for (size_t i = 0; i < n_gc; i++) {
		struct guest_counter *c = &gc[i];
		struct proto_count *pc = &r->counts[r->n_counts];
		int e;

		if (!c->ok)
			continue;
		pc->index = i;
		if (c->fd >= 0) {
			e = perf_counter_read(c->fd, &pc->raw, &pc->enabled_ns, &pc->running_ns);
			close(c->fd);
			c->fd = -1;
			if (e == 0) {
				r->n_counts++;
				continue;
			}
			c->why = xasprintf("cannot read: %s", strerror(-e));
		}
		if (c->why) {
			pc->raw = pc->enabled_ns = pc->running_ns = 0;
			pc->why = c->why;
			c->why = NULL;
			r->n_counts++;
		}
	}
}

/* ---- lttng: blocks ---- */

#define LTTNG_SESSION "perturb"
#define LTTNG_CHANNEL "perturb"
#define LTTNG_TRACE "/tmp/lttng-trace"
#define LTTNG_LOG "/tmp/.perturb-lttng"
#define LTTNG_DAEMON_LOG "/tmp/.perturb-lttng-sessiond"
#define LTTNG_KMSG_WAIT_S 10

/*
 * Run an LTTng command (looked up on PATH) with its output in log; 0 when
 * it exits 0, else -1 with why: its name and the last line of its output.
 */
static int lttng_cmd(char *const argv[], const char *log, char *why, size_t len)
{
	static char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
				     "HOME=/root", NULL };
	int status = 0, fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	pid_t pid;

	if (fd < 0) {
		snprintf(why, len, "cannot open '%s': %s", log, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvpe(argv[0], argv, env);
		fprintf(stderr, "cannot run: %s\n", strerror(errno));
		_exit(127);
	}
	close(fd);
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	/* its first error line, else the last non-empty line of its output */
	size_t n;
	char *out = read_tail(log, 16384, &n), *end = out + n, *line;
	while (end > out && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	*end = '\0';
	if ((line = strstr(out, "Error")) || (line = strstr(out, "PERROR"))) {
		while (line > out && line[-1] != '\n')
			line--;
		line[strcspn(line, "\n")] = '\0';
	} else {
		line = strrchr(out, '\n');
		line = line ? line + 1 : out;
	}
	snprintf(why, len, "'%s %s' failed: %s", argv[0], argv[1] ? argv[1] : "",
		 *line ? line : WIFEXITED(status) ? "non-zero exit" : "killed");
	free(out);
	return -1;
}

/* Create the session with its channel and events; started when start. */
static int lttng_session(int start, char *why, size_t len)
{
	char size[48], count[48], *ch[12], *ev[12];
	size_t n = 0;

	char *create[] = { "lttng", "create", LTTNG_SESSION, "--output=" LTTNG_TRACE, NULL };
	if (lttng_cmd(create, LTTNG_LOG, why, len) < 0)
		return -1;
	ch[n++] = "lttng";
	ch[n++] = "enable-channel";
	ch[n++] = "--kernel";
	ch[n++] = "--session=" LTTNG_SESSION;
	if (lttng.subbuf_size) {
		snprintf(size, sizeof(size), "--subbuf-size=%llu",
			 (unsigned long long)lttng.subbuf_size);
		ch[n++] = size;
	}
	if (lttng.subbuf_count) {
		snprintf(count, sizeof(count), "--num-subbuf=%ld", lttng.subbuf_count);
		ch[n++] = count;
	}
	ch[n++] = lttng.overwrite ? "--overwrite" : "--discard";
	ch[n++] = LTTNG_CHANNEL;
	ch[n] = NULL;
	if (lttng_cmd(ch, LTTNG_LOG, why, len) < 0)
		return -1;
	for (size_t i = 0; i < lttng.events.n; i++) {
		const char *e = lttng.events.v[i];
		n = 0;
		ev[n++] = "lttng";
		ev[n++] = "enable-event";
		ev[n++] = "--kernel";
		ev[n++] = "--session=" LTTNG_SESSION;
		ev[n++] = "--channel=" LTTNG_CHANNEL;
		if (!strcmp(e, "syscalls")) {
			ev[n++] = "--syscall";
			ev[n++] = "--all";
		} else if (!strncmp(e, "syscall:", 8)) {
			ev[n++] = "--syscall";
			ev[n++] = (char *)e + 8;
		} else {
			ev[n++] = "--tracepoint";
			ev[n++] = (char *)e;
		}
		ev[n] = NULL;
		if (lttng_cmd(ev, LTTNG_LOG, why, len) < 0)
			return -1;
	}
	char *go[] = { "lttng", "start", LTTNG_SESSION, NULL };
	return start ? lttng_cmd(go, LTTNG_LOG, why, len) : 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	remove(path);
	return 0;
}

/* After a failure: the session (if any) and its trace go, whatever they hold. */
static void lttng_drop(void)
{
	char *destroy[] = { "lttng", "destroy", LTTNG_SESSION, NULL };
	char ignored[8];

	lttng_cmd(destroy, LTTNG_LOG, ignored, sizeof(ignored));
	nftw(LTTNG_TRACE, remove_one, 16, FTW_PHYS | FTW_DEPTH);
}

/* nftw() has no argument for its callback */
static uint64_t walk_bytes;

static int trace_file_bytes(const char *path, const struct stat *st, int type, struct FTW *f)
{
	/* the streams, not the metadata nor the index folder */
	if (type == FTW_F && f->level == 2 && strcmp(path + f->base, "metadata"))
		walk_bytes += (uint64_t)st->st_size;
	return 0;
}

/*
 * "LTTng: ring buffer relay-discard, cpu 0: 12 records written, 0 records
 * overrun": what the ring buffer says of each per-CPU buffer when it is
 * freed (built with LTTNG_RING_BUFFER_COUNT_EVENTS).  Adds the records
 * of one kmsg record to *events; 1 when it was such a line.
 */
static int records_line(const char *rec, uint64_t *events)
{
	const char *p = strchr(rec, ';'), *cpu;
	unsigned long long n;

	if (!p || strncmp(p + 1, "LTTng: ring buffer ", 19) || !(cpu = strstr(p, ", cpu ")) ||
	    !(p = strstr(cpu, ": ")) || sscanf(p + 2, "%llu records written", &n) != 1)
		return 0;
	*events += n;
	return 1;
}

/* A "NAME: N" of lttng list's statistics; -1 when absent. */
static int list_stat(const char *text, const char *name, uint64_t *v)
{
	const char *p = strstr(text, name);
	unsigned long long n;

	if (!p || sscanf(p + strlen(name), ": %llu", &n) != 1)
		return -1;
	*v = n;
	return 0;
}

/*
 * After a run: stop the session, read its statistics, destroy it and
 * read the records its buffers wrote (kmsg) and the bytes of its streams;
 * the trace is deleted.  res->lttng says which.
 */
static void lttng_collect(struct proto_result *res)
{
	char why[512] = "", *text = NULL;
	size_t n;
	int kmsg = -1, seen = 0;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	char *stop[] = { "lttng", "stop", LTTNG_SESSION, NULL };
	char *list[] = { "lttng", "list", LTTNG_SESSION, NULL };
	char *destroy[] = { "lttng", "destroy", LTTNG_SESSION, NULL };

	if (lttng_cmd(stop, LTTNG_LOG, why, sizeof(why)) < 0 ||
	    lttng_cmd(list, LTTNG_LOG, why, sizeof(why)) < 0)
		goto out;
	text = read_tail(LTTNG_LOG, 65536, &n);
	text[n] = '\0';
	/* lttng list says the count of the channel's mode; the other is 0 by
	 * definition: a discard channel loses no packet, an overwrite one
	 * discards no event */
	res->lttng_discarded = res->lttng_lost = 0;
	if (lttng.overwrite ? list_stat(text, "Lost packets", &res->lttng_lost) < 0 :
	    list_stat(text, "Discarded events", &res->lttng_discarded) < 0) {
		snprintf(why, sizeof(why), "'lttng list' shows no channel statistics");
		goto out;
	}
	if ((kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		snprintf(why, sizeof(why), "cannot open /dev/kmsg: %s", strerror(errno));
		goto out;
	}
	lseek(kmsg, 0, SEEK_END);
	if (lttng_cmd(destroy, LTTNG_LOG, why, sizeof(why)) < 0)
		goto out;
	/* the buffers are freed once the consumer lets go of them */
	struct timespec t0, now, nap = { 0, 20 * 1000000L };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	res->lttng_events = 0;
	for (;;) {
		char rec[8192];
		ssize_t r = read(kmsg, rec, sizeof(rec) - 1);
		if (r > 0) {
			rec[r] = '\0';
			seen += records_line(rec, &res->lttng_events);
			continue;
		}
		if (r < 0 && errno == EPIPE)
			continue;	/* overwritten records: read on */
		if (seen >= cpus)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > LTTNG_KMSG_WAIT_S) {
			snprintf(why, sizeof(why), "the ring buffer counted %d of %ld buffers "
				 "within %d s of 'lttng destroy'", seen, cpus, LTTNG_KMSG_WAIT_S);
			goto out;
		}
		nanosleep(&nap, NULL);
	}
	walk_bytes = 0;
	nftw(LTTNG_TRACE, trace_file_bytes, 16, FTW_PHYS);
	res->lttng_bytes = walk_bytes;
out:
	nftw(LTTNG_TRACE, remove_one, 16, FTW_PHYS | FTW_DEPTH);
	if (kmsg >= 0)
		close(kmsg);
	free(text);
	if (*why) {
		lttng_drop();
		res->lttng = PROTO_TRACE_ERROR;
		res->lttng_error = xstrdup(why);
	} else {
		res->lttng = PROTO_TRACE_STATS;
	}
}

/* Does a line of an 'lttng list --kernel' listing begin with a name that
 * pattern (a glob) matches? */
static int listed(const char *listing, const char *pattern)
{
	char name[256];

	for (const char *p = listing; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (sscanf(p, " %255[^ \t\n(]", name) == 1 && !fnmatch(pattern, name, 0))
			return 1;
	return 0;
}

/*
 * Every event of the block against the guest kernel's (LTTng enables a
 * name it does not know without a word: it may come with a module later):
 * tracepoints from 'lttng list --kernel', system calls from its --syscall.
 */
static int check_events(const struct proto_lttng *l, char *why, size_t len)
{
	char *tp[] = { "lttng", "list", "--kernel", NULL };
	char *sc[] = { "lttng", "list", "--kernel", "--syscall", NULL };
	char *tps = NULL, *scs = NULL;
	size_t n;
	int ret = -1;

	if (lttng_cmd(tp, LTTNG_LOG, why, len) < 0)
		goto out;
	tps = read_tail(LTTNG_LOG, 4 << 20, &n);
	tps[n] = '\0';
	if (lttng_cmd(sc, LTTNG_LOG, why, len) < 0)
		goto out;
	scs = read_tail(LTTNG_LOG, 4 << 20, &n);
	scs[n] = '\0';
	for (size_t i = 0; i < l->events.n; i++) {
		const char *e = l->events.v[i];
		int sys = !strncmp(e, "syscall:", 8);
		if (!strcmp(e, "syscalls") || listed(sys ? scs : tps, sys ? e + 8 : e))
			continue;
		snprintf(why, len, "event '%s' matches no %s of the guest kernel (lttng list "
			 "--kernel%s)", e, sys ? "system call" : "tracepoint",
			 sys ? " --syscall" : "");
		goto out;
	}
	ret = 0;
out:
	free(tps);
	free(scs);
	return ret;
}

/*
 * LTTNG: start the session daemon (it loads the modules, by name, from
 * /lib/modules), check that the kernel tracer is there, and the channel
 * and every event by creating the session once; why filled on error.
 */
static int start_lttng(const struct proto_lttng *l, char *why, size_t len)
{
	char *daemon[] = { "lttng-sessiond", "--background", NULL };
	char *destroy[] = { "lttng", "destroy", LTTNG_SESSION, NULL };

	mkdir("/dev/shm", 01777);
	mount("tmpfs", "/dev/shm", "tmpfs", 0, NULL);
	mkdir_p("/var/run", 0755);
	if (lttng_cmd(daemon, LTTNG_DAEMON_LOG, why, len) < 0)
		return -1;
	/* lttng list --kernel fails without the kernel tracer (the modules) */
	if (check_events(l, why, len) < 0)
		return -1;
	lttng.events = l->events;
	lttng.subbuf_size = l->subbuf_size;
	lttng.subbuf_count = l->subbuf_count;
	lttng.overwrite = l->overwrite;
	if (lttng_session(0, why, len) < 0) {
		lttng_drop();
		return -1;
	}
	if (lttng_cmd(destroy, LTTNG_LOG, why, len) < 0)
		return -1;
	nftw(LTTNG_TRACE, remove_one, 16, FTW_PHYS | FTW_DEPTH);
	return 0;
}

static void do_lttng(struct proto_msg *m)
{
	char why[1024] = "";
	struct proto_msg reply = { .type = PROTO_LTTNG_DONE, .done.reason = why };

	reply.done.ok = start_lttng(&m->lttng, why, sizeof(why)) == 0;
	if (reply.done.ok) {
		/* kept: the runs' sessions are made of it */
		m->lttng.events = (struct proto_list){ 0 };
		*why = '\0';
	} else {
		lttng.events = (struct proto_list){ 0 };
	}
	send_msg(&reply);
}

/* ---- runs ---- */

static void do_run(unsigned long seq, const struct proto_run *run)
{
	struct proto_msg reply = { .type = PROTO_RESULT, .seq = seq };
	struct proto_result *res = &reply.result;
	const char *cwd = run->cwd;
	long long timeout_ms = run->timeout_ms;
	char why[512] = "";
	int pfd[2] = { -1, -1 }, go[2] = { -1, -1 };
	int out = -1, err = -1, null = -1;

	if (*cwd)
		mkdir_p(cwd, 0755);
	out = open("/tmp/.perturb-out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	err = open("/tmp/.perturb-err", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (out < 0 || err < 0 || null < 0 || pipe2(pfd, O_CLOEXEC) < 0 ||
	    (n_gc_ok && pipe2(go, O_CLOEXEC) < 0)) {
		snprintf(why, sizeof(why), "agent: cannot set up the run: %s", strerror(errno));
		goto fail;
	}

	/* LTTng's session of this run, outside the timed part */
	if (lttng.events.n && lttng_session(1, why, sizeof(why)) < 0) {
		char msg[sizeof(why)];
		snprintf(msg, sizeof(msg), "agent: lttng: %s", why);
		snprintf(why, sizeof(why), "%s", msg);
		lttng_drop();
		goto fail;
	}

	/* the tracer's accounting, outside the timed part */
	struct ktrace_stats before, after;
	char kwhy[256] = "";
	int have_stats = kernel_applied && ktrace_read_stats(NULL, &before, kwhy, sizeof(kwhy)) == 0;

	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		setpgid(0, 0);
		dup2(null, 0);
		dup2(out, 1);
		dup2(err, 2);
		if (*cwd && chdir(cwd) < 0) {
			int e = errno;
			snprintf(why, sizeof(why), "cannot change to directory '%s': %s", cwd, strerror(e));
			write_all(pfd[1], why, strlen(why));
			_exit(127);
		}
		if (go[0] >= 0) {
			/* counters: wait until they are open on us */
			char b;
			close(go[1]);
			while (read(go[0], &b, 1) < 0 && errno == EINTR)
				;
		}
		execvpe(run->argv.v[0], run->argv.v, run->env.v ? run->env.v : (char *[]){ NULL });
		snprintf(why, sizeof(why), "cannot run '%s': %s", run->argv.v[0], strerror(errno));
		write_all(pfd[1], why, strlen(why));
		_exit(127);
	}
	close(pfd[1]);
	pfd[1] = -1;
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		snprintf(why, sizeof(why), "agent: fork: %s", strerror(errno));
		goto fail;
	}
	setpgid(pid, pid);
	if (go[0] >= 0) {
		/* as the host's runner: the wall time starts at the release */
		close(go[0]);
		go[0] = -1;
		attach_counters(pid);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		write_all(go[1], "g", 1);
		close(go[1]);
		go[1] = -1;
	}

	int status = 0, timed_out = 0, killed = 0;
	struct rusage ru;
	struct timespec deadline;
	deadline.tv_sec = t0.tv_sec + timeout_ms / 1000;
	deadline.tv_nsec = t0.tv_nsec + (timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	for (;;) {
		pid_t w = wait4(pid, &status, WNOHANG, &ru);
		if (w == pid) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			break;
		}
		struct timespec now, left;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = deadline.tv_sec - now.tv_sec;
		left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		if (left.tv_sec < 0) {
			if (!timed_out) {
				timed_out = 1;
				kill(-pid, SIGTERM);
				kill(-pid, SIGCONT);
				deadline = now;
				deadline.tv_sec += KILL_GRACE_S;
			} else if (!killed) {
				killed = 1;
				kill(-pid, SIGKILL);
				deadline = now;
				deadline.tv_sec += 3600;
			}
			continue;
		}
		sigtimedwait(&chld, NULL, &left);
	}
	kill(-pid, SIGKILL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (have_stats && ktrace_read_stats(NULL, &after, kwhy, sizeof(kwhy)) == 0) {
		double events, lost, bytes;
		ktrace_stats_delta(&before, &after, &events, &lost, &bytes);
		res->trace = PROTO_TRACE_STATS;
		res->trace_events = (uint64_t)events;
		res->trace_lost = (uint64_t)lost;
		res->trace_bytes = (uint64_t)bytes;
	} else if (kernel_applied) {
		res->trace = PROTO_TRACE_ERROR;
		res->trace_error = xstrdup(kwhy);
	}

	collect_counters(res);
	if (lttng.events.n)
		lttng_collect(res);

	ssize_t r = read(pfd[0], why, sizeof(why) - 1);
	why[r > 0 ? r : 0] = '\0';
	res->end = *why ? PROTO_END_ERROR : timed_out ? PROTO_END_TIMEOUT :
		WIFSIGNALED(status) ? PROTO_END_SIGNAL : PROTO_END_EXIT;
	res->code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
	res->wall_ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	res->user_us = (int64_t)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec;
	res->sys_us = (int64_t)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
	res->maxrss_kb = ru.ru_maxrss;
	res->out = read_tail("/tmp/.perturb-out", AGENT_OUT_MAX, &res->out_len);
	if (*why) {
		res->err = xstrdup(why);
		res->err_len = strlen(why);
	} else {
		res->err = read_tail("/tmp/.perturb-err", AGENT_OUT_MAX, &res->err_len);
	}
	goto send;

fail:
	res->end = PROTO_END_ERROR;
	res->err = xstrdup(why);
	res->err_len = strlen(why);
send:
	send_msg(&reply);
	proto_msg_release(&reply);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	if (null >= 0)
		close(null);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
}

/* ---- kernel: blocks ---- */

/* Apply a kernel: block (see the top); why filled on error. */
static int apply_kernel(const struct proto_kernel *pk, char *why, size_t len)
{
	struct ktrace_spec k = {
		.tracing_on = pk->tracing_on,
		.buffer_size_kb = pk->buffer_size_kb,
		.tracer = pk->tracer,
		.events = pk->events.v, .n_events = pk->events.n,
		.functions = pk->functions.v, .n_functions = pk->functions.n,
		.options = pk->options.v, .n_options = pk->options.n,
	};
	const char *path;
	int mounted;

	if (!(path = ktrace_mount(&mounted, why, len)))
		return -1;
	/* what the host cannot check: the guest kernel's tracers, events, functions */
	if (ktrace_check_names(&k, path, "the guest kernel", why, len) < 0)
		return -1;
	if (ktrace_apply(NULL, &k, why, len) < 0 || ktrace_verify(NULL, &k, why, len) < 0)
		return -1;
	return 0;
}

static void do_kernel(const struct proto_kernel *k)
{
	char why[1024] = "";
	struct proto_msg reply = { .type = PROTO_KERNEL_DONE, .done.reason = why };

	kernel_applied = apply_kernel(k, why, sizeof(why)) == 0;
	reply.done.ok = kernel_applied;
	if (kernel_applied)
		*why = '\0';
	send_msg(&reply);
}

static void power_off(void)
{
	sync();
	reboot(RB_AUTOBOOT);	/* QEMU runs with -no-reboot: this ends it */
	for (;;)
		pause();
}

/* One request line from the host (without its '\n'). */
static void serve(const char *line, size_t len)
{
	struct proto_msg m;
	char why[256];

	if (proto_decode(line, len, &m, why, sizeof(why)) < 0) {
		struct proto_msg e = { .type = PROTO_ERROR, .error = why };
		send_msg(&e);
		return;
	}
	switch (m.type) {
	case PROTO_RUN:
		do_run(m.seq, &m.run);
		break;
	case PROTO_KERNEL:
		do_kernel(&m.kernel);
		break;
	case PROTO_COUNTERS:
		do_counters(&m.counters);
		break;
	case PROTO_LTTNG:
		do_lttng(&m);
		break;
	case PROTO_QUIT:
		power_off();
		break;
	default: {
		char *msg = xasprintf("agent: %s is not a request", proto_tag(m.type));
		struct proto_msg e = { .type = PROTO_ERROR, .seq = m.seq, .error = msg };
		send_msg(&e);
		free(msg);
	}
	}
	proto_msg_release(&m);
}

int main(void)
{
	static char line[AGENT_LINE_MAX];
	size_t len = 0;
	int overflow = 0;
	struct utsname u;

	setup_system();
	if ((tty = open_tty()) < 0)
		power_off();
	uname(&u);
	/* after a line break: the frame starts a line of the console */
	write_all(tty, "\n", 1);
	send_msg(&(struct proto_msg){ .type = PROTO_READY, .release = u.release });
	for (;;) {
		char c;
		ssize_t r = read(tty, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			power_off();
		if (c == '\r')
			continue;
		if (c != '\n') {
			if (len < sizeof(line))
				line[len++] = c;
			else
				overflow = 1;
			continue;
		}
		if (overflow) {
			send_msg(&(struct proto_msg){ .type = PROTO_ERROR,
				 .error = "agent: request longer than a frame can be" });
		} else {
			serve(line, len);
		}
		len = 0;
		overflow = 0;
	}
}
