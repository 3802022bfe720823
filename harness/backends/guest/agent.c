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
 * KERNEL with PERTURB-KERNEL, COUNTERS with PERTURB-COUNTERS, RUN with
 * PERTURB-RESULT, a request it cannot decode with PERTURB-ERROR; QUIT
 * syncs and reboots (QEMU runs with -no-reboot: it exits).
 *
 * KERNEL is applied with the host's code (tracefs.c): the tracer, every
 * event glob and every function glob are checked against available_tracers
 * / available_events / available_filter_functions first (the host cannot know the guest kernel's), then ktrace_apply() and
 * ktrace_verify().
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

	/* the tracer's accounting, outside the timed part */
	struct ktrace_stats before, after;
	char kwhy[256] = "";
	int have_stats = kernel_applied && ktrace_read_stats(&before, kwhy, sizeof(kwhy)) == 0;

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
	if (have_stats && ktrace_read_stats(&after, kwhy, sizeof(kwhy)) == 0) {
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
	if (ktrace_apply(&k, why, len) < 0 || ktrace_verify(&k, why, len) < 0)
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
