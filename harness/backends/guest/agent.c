/*
 * agent.c - perturb's guest agent: /init of the initramfs the qemu backend
 * boots (harness/backends/qemu.c).  Built static, with instrumentation/
 * tracefs.c (libtracefs, libtraceevent), harness/lib/util.c and the counters'
 * names and perf_event code (harness/counters/counters_names.c, counters_perf.c; no
 * PAPI) linked in; needs nothing from the image but itself (busybox is for
 * shell: workloads).
 *
 * It mounts proc, sysfs, devtmpfs and tracefs (the initramfs itself is the
 * writable root, with the workloads' inputs at their host paths), puts the
 * serial console (/dev/ttyS0) in raw mode and speaks a line protocol on it:
 *
 *   guest -> host   PERTURB-READY <kernel release>
 *   host -> guest   KERNEL <tracing_on> <buffer_kb> <tracer> <events> <functions> <options>
 *                   (only for a variant with a kernel: block, right after
 *                   PERTURB-READY; each of the last four is a list: <n>
 *                   then n hex tokens, n = -1 when the block leaves it out;
 *                   tracing_on and buffer_kb -1 likewise)
 *   guest -> host   PERTURB-KERNEL 0 <len> <crc32> <hex payload>
 *                   (payload "ok", or "error " and the reason)
 *   host -> guest   COUNTERS <n> <hex name>...
 *                   (before the first RUN of a request with counters, after
 *                   KERNEL; again whenever the set changes, COUNTERS 0
 *                   for none: every later RUN counts them)
 *   guest -> host   PERTURB-COUNTERS 0 <len> <crc32> <hex payload>
 *                   (payload: one line per counter, in order, "ok" or
 *                   "no " and why the guest cannot count it; or "error "
 *                   and the reason for a malformed line)
 *   host -> guest   RUN <seq> <timeout_ms> <hex cwd> <n_env> <hex env>... <n_arg> <hex arg>...
 *                   (hex: the bytes in lower-case hex; "-" for an empty string)
 *   guest -> host   PERTURB-RESULT <seq> <len> <crc32> <hex payload>
 *   host -> guest   QUIT            (the agent syncs and reboots: QEMU -no-reboot exits)
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
 * A RESULT payload is one header line
 *   how=exit|signal|timeout|error code=N wall_ns=N user_us=N sys_us=N maxrss_kb=N out=N err=N
 *   [trace_events=N trace_lost=N trace_bytes=N | trace_error=HEX] [cI=...]...
 * followed by the captured stdout (out bytes) and stderr (err bytes), each
 * cut to its last AGENT_OUT_MAX bytes; for how=error, stderr holds the reason.
 * The trace_ fields come after a KERNEL that succeeded: the tracer's own
 * accounting (per_cpu/cpuN/stats, ktrace_stats_delta()), read before the
 * fork and after the reap, outside the timed part, as the host backend does.
 * A cI field is counter I of the COUNTERS list (those the guest can
 * count; the others have none): "cI=RAW,ENABLED,RUNNING", the count and
 * its time_enabled / time_running in ns as read, unscaled (the host scales
 * it with counter_scale(), as its own), or "cI=!HEX", the reason, hex-
 * encoded, why it has no value in this run (perf_event_open on the child
 * or the read failed).  Counters are opened (perf_counter_open(): disabled,
 * inherit, enable_on_exec, the host's attributes) on the forked child,
 * which waits on a pipe before its execve() until they are, and read once
 * after the reap and the group kill, whatever the run's status.
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
#include "backends/frame.h"
#include "instrumentation/tracefs.h"
#include "lib/util.h"

#define AGENT_OUT_MAX (64 * 1024)
#define AGENT_LINE_MAX (1024 * 1024)
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

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	write_all(tty >= 0 ? tty : 1, buf, (size_t)n);
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

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode a hex token in place ("-" is the empty string); NULL when malformed. */
static char *unhex(char *s)
{
	size_t n = strlen(s);
	if (!strcmp(s, "-")) {
		*s = '\0';
		return s;
	}
	if (n % 2)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		int a = hexval(s[2 * i]), b = hexval(s[2 * i + 1]);
		if (a < 0 || b < 0)
			return NULL;
		s[i] = (char)(a * 16 + b);
	}
	s[n / 2] = '\0';
	return s;
}

/* The last max bytes of a file; *len set.  malloc'd (never NULL). */
static char *read_tail(const char *path, size_t max, size_t *len)
{
	char *buf = malloc(max + 1);
	int fd = open(path, O_RDONLY);
	off_t size;

	*len = 0;
	if (!buf)
		return NULL;
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

/* One framed line: TAG SEQ LEN CRC32 HEX, the payload being head, out, err. */
static void send_frame(const char *tag, const char *seq, const char *head, const char *out,
		       size_t out_len, const char *err, size_t err_len)
{
	size_t hlen = strlen(head), len = hlen + out_len + err_len;
	unsigned char *payload = malloc(len ? len : 1);
	char *line;
	size_t pos;
	static const char digits[] = "0123456789abcdef";

	if (!payload)
		return;
	memcpy(payload, head, hlen);
	if (out_len)
		memcpy(payload + hlen, out, out_len);
	if (err_len)
		memcpy(payload + hlen + out_len, err, err_len);
	line = malloc(2 * len + 128);
	if (!line) {
		free(payload);
		return;
	}
	pos = (size_t)sprintf(line, "%s %s %zu %08x ", tag, seq, len,
			      frame_crc32(payload, len));
	for (size_t i = 0; i < len; i++) {
		line[pos++] = digits[payload[i] >> 4];
		line[pos++] = digits[payload[i] & 15];
	}
	line[pos++] = '\n';
	write_all(tty, line, pos);
	free(line);
	free(payload);
}

/* ---- counters ---- */

static void hex_append(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		strbuf_addf(sb, "%02x", (unsigned char)*s);
}

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
 * COUNTERS <n> <hex name>...: parse and probe each as the host does
 * (counter_parse(), counter_perf_spec(), perf_counter_probe(): the same
 * files); answer with one line per counter, "ok" or "no " and the reason.
 */
static void do_counters(char *args)
{
	struct strbuf reply = STRBUF_INIT;
	char *save = NULL, *tok = strtok_r(args, " ", &save);
	long n = tok ? strtol(tok, NULL, 10) : -1;

	forget_counters();
	if (n < 0 || n > 1000)
		goto bad;
	gc = xcalloc((size_t)n + 1, sizeof(*gc));
	for (long i = 0; i < n; i++) {
		if (!(tok = strtok_r(NULL, " ", &save)) || !unhex(tok))
			goto bad;
		struct guest_counter *c = &gc[n_gc++];
		struct counter_spec spec;
		char shortr[128], detail[512];

		c->name = xstrdup(tok);
		c->fd = -1;
		if (counter_parse(c->name, &spec, detail, sizeof(detail)) < 0) {
			strbuf_addf(&reply, "no %s\n", detail);
		} else if (counter_perf_spec(&spec, &c->ps) < 0) {
			strbuf_addf(&reply, "no PAPI cannot count it (the guest agent "
				    "has no PAPI)\n");
		} else if (perf_counter_probe(&c->ps, shortr, sizeof(shortr), detail,
					      sizeof(detail)) < 0) {
			strbuf_addf(&reply, "no %s (%s)\n", shortr, detail);
		} else {
			c->ok = 1;
			n_gc_ok++;
			strbuf_addstr(&reply, "ok\n");
		}
	}
	send_frame("PERTURB-COUNTERS", "0", reply.len ? reply.buf : "", "", 0, "", 0);
	strbuf_release(&reply);
	return;
bad:
	forget_counters();
	strbuf_release(&reply);
	send_frame("PERTURB-COUNTERS", "0", "error agent: malformed COUNTERS command", "", 0,
		   "", 0);
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
 * After the reap: read and close every counter; the result header's
 * counter fields (malloc'd, "" when none), " cI=RAW,ENABLED,RUNNING" or
 * " cI=!HEX" (a failure of this run, its reason hex-encoded).
 */
static char *collect_counters(void)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n_gc; i++) {
		struct guest_counter *c = &gc[i];
		uint64_t v, en, run;
		int e;

		if (!c->ok)
			continue;
		if (c->fd >= 0) {
			e = perf_counter_read(c->fd, &v, &en, &run);
			close(c->fd);
			c->fd = -1;
			if (e == 0) {
				strbuf_addf(&sb, " c%zu=%llu,%llu,%llu", i, (unsigned long long)v,
					    (unsigned long long)en, (unsigned long long)run);
				continue;
			}
			c->why = xasprintf("cannot read: %s", strerror(-e));
		}
		if (c->why) {
			strbuf_addf(&sb, " c%zu=!", i);
			hex_append(&sb, c->why);
			free(c->why);
			c->why = NULL;
		}
	}
	return strbuf_detach(&sb);
}

static void do_run(char *args)
{
	char *save = NULL, *tok;
	char *seq, *cwd;
	long timeout_ms;
	char **env = NULL, **argv = NULL;
	long n_env, n_arg;
	char head[512], why[512] = "";
	int pfd[2] = { -1, -1 }, go[2] = { -1, -1 };
	int out = -1, err = -1, null = -1;

	seq = strtok_r(args, " ", &save);
	tok = strtok_r(NULL, " ", &save);
	if (!seq || !tok)
		return;
	timeout_ms = strtol(tok, NULL, 10);
	cwd = strtok_r(NULL, " ", &save);
	if (!cwd || !unhex(cwd))
		goto bad;
	tok = strtok_r(NULL, " ", &save);
	n_env = tok ? strtol(tok, NULL, 10) : -1;
	if (n_env < 0 || n_env > 100000)
		goto bad;
	env = calloc((size_t)n_env + 1, sizeof(*env));
	for (long i = 0; i < n_env; i++)
		if (!(tok = strtok_r(NULL, " ", &save)) || !(env[i] = unhex(tok)))
			goto bad;
	tok = strtok_r(NULL, " ", &save);
	n_arg = tok ? strtol(tok, NULL, 10) : -1;
	if (n_arg < 1 || n_arg > 100000)
		goto bad;
	argv = calloc((size_t)n_arg + 1, sizeof(*argv));
	for (long i = 0; i < n_arg; i++)
		if (!(tok = strtok_r(NULL, " ", &save)) || !(argv[i] = unhex(tok)))
			goto bad;

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
	char trace[256] = "", kwhy[256] = "";
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
		execvpe(argv[0], argv, env);
		snprintf(why, sizeof(why), "cannot run '%s': %s", argv[0], strerror(errno));
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
		snprintf(trace, sizeof(trace), " trace_events=%.0f trace_lost=%.0f trace_bytes=%.0f",
			 events, lost, bytes);
	} else if (kernel_applied) {
		/* the reason, hex-encoded (a header field has no blanks) */
		size_t n = snprintf(trace, sizeof(trace), " trace_error=");
		for (const char *k = kwhy; *k && n + 3 < sizeof(trace); k++)
			n += snprintf(trace + n, sizeof(trace) - n, "%02x", (unsigned char)*k);
	}

	char *counted = collect_counters();

	ssize_t r = read(pfd[0], why, sizeof(why) - 1);
	why[r > 0 ? r : 0] = '\0';
	long long wall = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	const char *how = *why ? "error" : timed_out ? "timeout" :
		WIFSIGNALED(status) ? "signal" : "exit";
	int code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
	size_t out_len, err_len;
	char *ob = read_tail("/tmp/.perturb-out", AGENT_OUT_MAX, &out_len);
	char *eb = *why ? strdup(why) : read_tail("/tmp/.perturb-err", AGENT_OUT_MAX, &err_len);
	if (*why)
		err_len = strlen(why);
	char *rh = xasprintf("how=%s code=%d wall_ns=%lld user_us=%lld sys_us=%lld maxrss_kb=%ld "
			     "out=%zu err=%zu%s%s\n", how, code, wall,
			     (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
			     (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec,
			     ru.ru_maxrss, out_len, err_len, trace, counted);
	send_frame("PERTURB-RESULT", seq, rh, ob, out_len, eb, err_len);
	free(rh);
	free(counted);
	free(ob);
	free(eb);
	goto out;

bad:
	snprintf(why, sizeof(why), "agent: malformed RUN command");
fail:
	snprintf(head, sizeof(head),
		 "how=error code=0 wall_ns=0 user_us=0 sys_us=0 maxrss_kb=0 out=0 err=%zu\n",
		 strlen(why));
	send_frame("PERTURB-RESULT", seq, head, "", 0, why, strlen(why));
out:
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
	free(env);
	free(argv);
}

/* A KERNEL list: <n> then n hex tokens; n = -1: left out (*v NULL). */
static int parse_list(char **save, char ***v, size_t *n)
{
	char *tok = strtok_r(NULL, " ", save);
	long cnt = tok ? strtol(tok, NULL, 10) : -2;

	*v = NULL;
	*n = 0;
	if (cnt == -1)
		return 0;
	if (cnt < 0 || cnt > 100000)
		return -1;
	*v = xcalloc((size_t)cnt + 1, sizeof(**v));
	for (long i = 0; i < cnt; i++) {
		if (!(tok = strtok_r(NULL, " ", save)) || !((*v)[i] = unhex(tok)))
			return -1;
		*n = (size_t)i + 1;
	}
	return 0;
}

/* Apply a kernel: block (see the top); why filled on error. */
static int apply_kernel(char *args, char *why, size_t len)
{
	struct ktrace_spec k = KTRACE_SPEC_INIT;
	char *save = NULL, *tok, **tracer = NULL;
	size_t n_tracer = 0;
	const char *path;
	int mounted, ret = -1;

	if (!(tok = strtok_r(args, " ", &save)))
		goto bad;
	k.tracing_on = (int)strtol(tok, NULL, 10);
	if (!(tok = strtok_r(NULL, " ", &save)))
		goto bad;
	k.buffer_size_kb = strtol(tok, NULL, 10);
	if (parse_list(&save, &tracer, &n_tracer) < 0 || n_tracer > 1 ||
	    parse_list(&save, &k.events, &k.n_events) < 0 ||
	    parse_list(&save, &k.functions, &k.n_functions) < 0 ||
	    parse_list(&save, &k.options, &k.n_options) < 0)
		goto bad;
	k.tracer = n_tracer ? tracer[0] : NULL;
	if (!(path = ktrace_mount(&mounted, why, len)))
		goto out;
	/* what the host cannot check: the guest kernel's tracers, events, functions */
	if (ktrace_check_names(&k, path, "the guest kernel", why, len) < 0)
		goto out;
	if (ktrace_apply(&k, why, len) < 0 || ktrace_verify(&k, why, len) < 0)
		goto out;
	ret = 0;
	goto out;
bad:
	snprintf(why, len, "agent: malformed KERNEL command");
out:
	free(tracer);
	free(k.events);
	free(k.functions);
	free(k.options);
	return ret;
}

#define KERNEL_REFUSED "error "

static void do_kernel(char *args)
{
	char why[1024] = KERNEL_REFUSED;
	size_t pre = strlen(KERNEL_REFUSED);

	if (apply_kernel(args, why + pre, sizeof(why) - pre) < 0) {
		kernel_applied = 0;
		send_frame("PERTURB-KERNEL", "0", why, "", 0, "", 0);
		return;
	}
	kernel_applied = 1;
	send_frame("PERTURB-KERNEL", "0", "ok", "", 0, "", 0);
}

static void power_off(void)
{
	sync();
	reboot(RB_AUTOBOOT);	/* QEMU runs with -no-reboot: this ends it */
	for (;;)
		pause();
}

int main(void)
{
	static char line[AGENT_LINE_MAX];
	size_t len = 0;
	struct utsname u;

	setup_system();
	if ((tty = open_tty()) < 0)
		power_off();
	uname(&u);
	say("\nPERTURB-READY %s\n", u.release);
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
			if (len < sizeof(line) - 1)
				line[len++] = c;
			continue;
		}
		line[len] = '\0';
		len = 0;
		if (!strncmp(line, "RUN ", 4))
			do_run(line + 4);
		else if (!strncmp(line, "KERNEL ", 7))
			do_kernel(line + 7);
		else if (!strncmp(line, "COUNTERS ", 9))
			do_counters(line + 9);
		else if (!strcmp(line, "QUIT"))
			power_off();
		else if (!strcmp(line, "PING"))
			say("PERTURB-PONG\n");
	}
}
