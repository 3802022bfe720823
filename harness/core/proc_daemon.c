/*
 * proc_daemon.c - daemons and background loads (proc.h).
 *
 * Two helper processes are forks of perturb without an exec:
 *  - the daemon logger copies a daemon's output to its log and tells the
 *    parent, through a pipe, when the readiness regex first matched;
 *  - the background supervisor restarts the load each time it ends.
 */
#include "proc.h"
#include "proc_int.h"
#include "cgroup.h"
#include "stop.h"
#include "lib/util.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOGGER_LINE_MAX (16 * 1024)
#define QUICK_EXIT_S 0.05
#define QUICK_EXIT_RUNS 5
#define BACKOFF_S 1.0

/* ---- forks of perturb: fd hygiene ---- */

/*
 * In a fork of perturb that does not exec: move fds[0..n) (n <= 8) to
 * 3..3+n (close-on-exec), close every other fd above 2 and point stdin and
 * stdout at /dev/null (stderr stays, for messages), so that the helper holds
 * no end of a pipe it does not own: a logger keeping its own input's write
 * end open would never see EOF, and one holding perturb's stdout would keep
 * a pager waiting.
 */
static void keep_only_fds(int *fds, int n)
{
	int tmp[8], null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		close(null);
	}

	for (int i = 0; i < n; i++)
		tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3 + n);
	for (int i = 0; i < n; i++) {
		dup3(tmp[i], 3 + i, O_CLOEXEC);
		fds[i] = 3 + i;
	}
	close_range(3 + n, ~0U, 0);
}

/* ---- daemons ---- */

struct daemon {
	struct cgroup *cg;	/* NULL: process group only */
	pid_t pid;		/* -1 when not started */
	int pidfd;
	pid_t logger;		/* -1 when none */
	int log_fd;		/* for the tail in messages */
	off_t log_start;	/* size of the log before this daemon */
	unsigned long long log_dropped;	/* its marker's count before this daemon */
	char *cmd, *log_path;
	char *why;		/* daemon_start_reason()'s: its failure said here, not
				 * printed; NULL: printed, with the log's tail */
	size_t why_len;
};

/*
 * A bounded log (proc.h, PROC_LOG_MAX): written at its end; once it holds
 * more than max bytes, its last max / 2 (from a line's start) are moved to
 * its beginning after one marker line that counts every byte dropped so
 * far, and it is cut there.  Moving max / 2 bytes per max / 2 written
 * keeps the cost linear.  With a tally (proc.h), the dropped lines that
 * match it are read first and their numbers added to the marker's sum.
 */
struct blog {
	int fd;			/* not O_APPEND: rewritten in place */
	size_t max;		/* 0: unbounded */
	off_t size;
	size_t marker_len;	/* of the marker at offset 0; 0 when none */
	unsigned long long dropped;
	const regex_t *tally_re;	/* NULL: none */
	unsigned long long tally;
};

#define LOG_MARKER "perturb: %llu bytes of this log were dropped here (a log keeps at most %zu)"
#define LOG_TALLY "; the lines dropped tallied %llu"

/* The bytes of fd's log dropped so far, as its marker says (0: none);
 * *len the marker's length, *tally (may be NULL) its tally (0: none). */
static unsigned long long log_marker(int fd, size_t *len, unsigned long long *tally)
{
	char head[200];
	unsigned long long n = 0, t = 0;
	size_t max;
	int used = 0, more = 0;
	ssize_t k = pread(fd, head, sizeof(head) - 1, 0);

	*len = 0;
	if (tally)
		*tally = 0;
	if (k <= 0)
		return 0;
	head[k] = '\0';
	if (sscanf(head, "perturb: %llu bytes of this log were dropped here (a log keeps at "
		   "most %zu)%n", &n, &max, &used) < 2 || !used)
		return 0;
	if (sscanf(head + used, "; the lines dropped tallied %llu%n", &t, &more) == 1 && more)
		used += more;
	if (head[used] != '\n')
		return 0;
	*len = (size_t)used + 1;
	if (tally)
		*tally = t;
	return n;
}

unsigned long long proc_log_tally(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned long long t = 0;
	size_t len;

	if (fd >= 0) {
		log_marker(fd, &len, &t);
		close(fd);
	}
	return t;
}

/* The tally of one dropped line (its first group's number, when it
 * matches). */
static void tally_line(struct blog *b, const char *line, size_t len)
{
	regmatch_t m[2];

	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)len;
	if (!regexec(b->tally_re, line, 2, m, REG_STARTEND) && m[1].rm_so >= 0)
		b->tally += strtoull(line + m[1].rm_so, NULL, 10);
}

/* Tally the lines of the log's bytes [from, to) (whole lines: to is a
 * line's start), cut at LOGGER_LINE_MAX as the logger reads them. */
static void tally_dropped(struct blog *b, off_t from, off_t to)
{
	static char buf[65536];
	char *line = xmalloc(LOGGER_LINE_MAX + 1);
	size_t llen = 0;

	while (from < to) {
		size_t want = (size_t)(to - from) < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t k = pread(b->fd, buf, want, from);
		if (k <= 0)
			break;
		from += k;
		for (char *p = buf, *end = buf + k; p < end;) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t take = (size_t)((nl ? nl : end) - p);
			if (take > LOGGER_LINE_MAX - llen)
				take = LOGGER_LINE_MAX - llen;
			memcpy(line + llen, p, take);
			llen += take;
			if (nl) {
				line[llen] = '\0';
				tally_line(b, line, llen);
				llen = 0;
			}
			p = nl ? nl + 1 : end;
		}
	}
	if (llen) {
		line[llen] = '\0';
		tally_line(b, line, llen);
	}
	free(line);
}

static void blog_rotate(struct blog *b)
{
	size_t keep = b->max / 2;
	char *tail = xmalloc(keep), marker[200], *nl;
	ssize_t k = pread(b->fd, tail, keep, b->size - (off_t)keep);
	size_t skip;
	int m;

	if (k <= 0) {
		free(tail);
		return;
	}
	nl = memchr(tail, '\n', (size_t)k);
	skip = nl && nl + 1 < tail + k ? (size_t)(nl + 1 - tail) : 0;
	if (b->tally_re)
		tally_dropped(b, (off_t)b->marker_len, b->size - k + (off_t)skip);
	b->dropped += (unsigned long long)(b->size - k - (off_t)b->marker_len) + skip;
	m = snprintf(marker, sizeof(marker), LOG_MARKER, b->dropped, b->max);
	if (b->tally_re)
		m += snprintf(marker + m, sizeof(marker) - (size_t)m, LOG_TALLY, b->tally);
	m += snprintf(marker + m, sizeof(marker) - (size_t)m, "\n");
	if (pwrite(b->fd, marker, (size_t)m, 0) == m &&
	    pwrite(b->fd, tail + skip, (size_t)k - skip, m) == k - (ssize_t)skip) {
		b->size = m + k - (off_t)skip;
		b->marker_len = (size_t)m;
		if (ftruncate(b->fd, b->size) < 0) {
			/* nothing better to do in a logger */
		}
	}
	lseek(b->fd, b->size, SEEK_SET);
	free(tail);
}

static void blog_open(struct blog *b, int fd, size_t max, const regex_t *tally_re)
{
	b->fd = fd;
	b->max = max;
	b->tally_re = tally_re;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_APPEND);
	b->size = lseek(fd, 0, SEEK_END);
	b->dropped = log_marker(fd, &b->marker_len, &b->tally);
}

static void blog_write(struct blog *b, const char *p, size_t n)
{
	write_full(b->fd, p, n);
	b->size += (off_t)n;
	if (b->max && b->size > (off_t)b->max)
		blog_rotate(b);
}

static int logger_match(const regex_t *re, const char *line, size_t len)
{
	regmatch_t m[1];
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)len;
	return !regexec(re, line, 1, m, REG_STARTEND);
}

/*
 * The logger: copy in to log until EOF, bounded to max bytes (0: not;
 * struct blog); with a regex (re, ready >= 0), until it has matched, match
 * it on each line (and on the incomplete last line, so that a prompt
 * without a newline counts), lines cut at LOGGER_LINE_MAX; at the first
 * match write one byte to ready and close it.
 */
static _Noreturn void logger_main(int in, int log, int ready, const regex_t *re, size_t max,
				  const regex_t *tally_re)
{
	static char buf[65536];
	char *line = xmalloc(LOGGER_LINE_MAX);
	size_t llen = 0;
	struct blog b;
	ssize_t n;

	blog_open(&b, log, max, tally_re);

	for (;;) {
		const char *p, *end;

		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		blog_write(&b, buf, (size_t)n);
		if (ready < 0)
			continue;
		for (p = buf, end = buf + n; p < end && ready >= 0; ) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *e = nl ? nl : end;
			size_t take = (size_t)(e - p);

			if (take > LOGGER_LINE_MAX - llen)
				take = LOGGER_LINE_MAX - llen;
			memcpy(line + llen, p, take);
			llen += take;
			if (nl || llen == LOGGER_LINE_MAX) {
				if (logger_match(re, line, llen)) {
					write_full(ready, "r", 1);
					close_fd(&ready);
				}
				llen = 0;
			}
			p = nl ? nl + 1 : end;
		}
		if (ready >= 0 && llen && logger_match(re, line, llen)) {
			write_full(ready, "r", 1);
			close_fd(&ready);
		}
	}
	_exit(0);
}

/* Reap a logger: it ends at EOF on its input; give it the grace period. */
static void reap_logger_pid(pid_t *logger)
{
	int fd;

	if (*logger < 0)
		return;
	fd = pidfd_open(*logger, 0);
	if (fd >= 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (proc_poll(&p, 1, now_mono() + STOP_KILL_GRACE_S, 0) <= 0)
			kill(*logger, SIGKILL);
		close(fd);
	} else {
		kill(*logger, SIGKILL);
	}
	reap(*logger, NULL);
	*logger = -1;
}

static void reap_logger(struct daemon *d)
{
	reap_logger_pid(&d->logger);
}

/*
 * A logger for log (a fork of perturb: logger_main), reading the pipe
 * whose write end is *in (to be given to the writers); with re, ready_rd
 * gets the read end of its ready pipe.  The logger's pid, or -1 (printed).
 */
static pid_t start_logger(int log, size_t max, const regex_t *re, const regex_t *tally_re,
			  int *in, int *ready_rd)
{
	int data[2] = { -1, -1 }, ready[2] = { -1, -1 };
	pid_t pid = -1;

	*in = *ready_rd = -1;
	if (pipe2(data, O_CLOEXEC) < 0 || (re && pipe2(ready, O_CLOEXEC) < 0)) {
		error("cannot create a pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (!pid) {
		int fds[3] = { data[0], log, ready[1] };
		setpgid(0, 0);
		keep_only_fds(fds, re ? 3 : 2);
		logger_main(fds[0], fds[1], re ? fds[2] : -1, re, max, tally_re);
	}
	if (pid < 0) {
		error("cannot fork: %s", strerror(errno));
		goto out;
	}
	setpgid(pid, pid);
	*in = data[1];
	data[1] = -1;
	*ready_rd = ready[0];
	ready[0] = -1;
out:
	close_fd(&data[0]);
	close_fd(&data[1]);
	close_fd(&ready[0]);
	close_fd(&ready[1]);
	return pid;
}

/* After the writers and the logger of log_path ended: warn when the
 * logger dropped bytes since the log's marker said before (dropped at its
 * start); what was dropped stays counted in the log's first line. */
static void say_dropped(int log_fd, unsigned long long before, const char *what,
			const char *cmd, const char *log_path)
{
	size_t len;
	unsigned long long now = log_fd >= 0 ? log_marker(log_fd, &len, NULL) : 0;

	if (now > before)
		warning("%s '%s' wrote more than its log keeps (%d MiB): %llu bytes dropped, "
			"counted in the first line of '%s', which keeps the last of it",
			what, cmd, PROC_LOG_MAX >> 20, now - before, log_path);
}

/* Kill (when still running) and reap the daemon and its logger, free d. */
static void daemon_free(struct daemon *d, int *status)
{
	int st = 0;

	if (d->pid > 0) {
		proc_kill_group(d->pid, d->pidfd, STOP_KILL_GRACE_S);
		reap(d->pid, &st);
	}
	/* before the logger: what is left may hold its pipe open */
	proc_end_cgroup(d->cg, "daemon", d->cmd);
	d->cg = NULL;
	reap_logger(d);
	say_dropped(d->log_fd, d->log_dropped, "daemon", d->cmd, d->log_path);
	if (status)
		*status = st;
	close_fd(&d->pidfd);
	close_fd(&d->log_fd);
	free(d->cmd);
	free(d->log_path);
	free(d);
}

/* daemon_start() failed: what happened (what follows the daemon's name),
 * printed with the tail of its log (tail) or, when its caller says it
 * (daemon_start_reason), put in its why.  Returns -1. */
static int PRINTF(3, 4) daemon_failed(struct daemon *d, int tail, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (d->why)
		return why_error(d->why, d->why_len, "%s", what);
	error("daemon '%s' %s", d->cmd, what);
	if (tail)
		proc_print_tail(d->log_fd, d->log_start);
	return -1;
}

/* The daemon ended before it was ready: say how, with its output. */
static int daemon_died(struct daemon *d, const char *when)
{
	char how[128];
	int status;

	kill(-d->pid, SIGKILL);
	reap(d->pid, &status);
	d->pid = -1;
	reap_logger(d);
	proc_describe_status(status, how, sizeof(how));
	return daemon_failed(d, 1, "%s: %s", when, how);
}

static int daemon_wait_ready(struct daemon *d, int ready_fd, double ready_delay_s,
			     double timeout_s, const regex_t *ready_re)
{
	struct pollfd p[2] = {
		{ .fd = d->pidfd, .events = POLLIN },
		{ .fd = ready_fd, .events = POLLIN },
	};
	double deadline;
	int r;

	if (!ready_re) {
		if (ready_delay_s <= 0)
			return 0;
		r = proc_poll(p, 1, now_mono() + ready_delay_s, 1);
		if (r == 0)
			return 0;
		if (r == PROC_STOP)
			return -1;
		if (r < 0)
			return daemon_failed(d, 0, "could not be waited for: %s", strerror(errno));
		return daemon_died(d, "ended during its start-up delay");
	}

	deadline = timeout_s > 0 ? now_mono() + timeout_s : 0;
	for (;;) {
		r = proc_poll(p, 2, deadline, 1);
		if (r == PROC_STOP)
			return -1;
		if (r < 0)
			return daemon_failed(d, 0, "could not be waited for: %s", strerror(errno));
		if (r == 0) {
			proc_kill_group(d->pid, d->pidfd, STOP_KILL_GRACE_S);
			reap(d->pid, NULL);
			d->pid = -1;
			reap_logger(d);
			return daemon_failed(d, 1, "not ready after %g s: its output did not match "
					     "the readiness pattern", timeout_s);
		}
		if (p[1].revents) {
			char c;
			if (read(ready_fd, &c, 1) == 1)
				return 0;
			p[1].fd = -1;	/* logger done without a match */
			continue;
		}
		if (p[0].revents)
			return daemon_died(d, "ended before it was ready");
	}
}

int daemon_start_reason(char *const *argv, char *const *envp, const char *cwd,
			const char *log_path, size_t log_max, double ready_delay_s,
			const regex_t *ready_re, const regex_t *tally_re, double timeout_s,
			char *why, size_t why_len, struct daemon **out)
{
	struct daemon *d = xcalloc(1, sizeof(*d));
	int log = -1, data = -1, ready = -1;
	struct spawn_opts o = { .argv = argv, .envp = envp, .cwd = cwd, .err_fd = -1 };
	struct stat st;
	char msg[512];
	int ret = -1;

	*out = NULL;
	d->pid = d->logger = -1;
	d->pidfd = d->log_fd = -1;
	d->cmd = proc_argv_string(argv);
	d->log_path = xstrdup(log_path);
	d->why = why && why_len ? why : NULL;
	d->why_len = why_len;
	if (why && why_len)
		why[0] = '\0';
	if (stop_requested())
		goto out;
	/* O_RDWR: a bounded log is read back (struct blog) */
	log = open(log_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0) {
		daemon_failed(d, 0, "could not be started: cannot open '%s': %s", log_path,
			      strerror(errno));
		goto out;
	}
	d->log_fd = open(log_path, O_RDONLY | O_CLOEXEC);
	if (!fstat(log, &st))
		d->log_start = st.st_size;
	d->log_dropped = log_marker(log, &(size_t){ 0 }, NULL);
	o.out_fd = log;
	o.cgroup = d->cg = cgroup_create("daemon");

	if (ready_re || log_max) {
		if ((d->logger = start_logger(log, log_max, ready_re, tally_re, &data, &ready)) < 0) {
			if (d->why)	/* start_logger() said why */
				why_error(d->why, d->why_len, "could not be started: no logger "
					  "for its output (said above)");
			goto out;
		}
		o.out_fd = data;
	}

	d->pid = proc_spawn_reason(&o, msg, sizeof(msg));
	close_fd(&data);	/* the daemon holds the only write end */
	if (d->pid < 0) {
		daemon_failed(d, 0, "failed: %s", msg);
		goto out;
	}
	d->pidfd = pidfd_open(d->pid, 0);
	if (d->pidfd < 0) {
		daemon_failed(d, 0, "could not be watched: %s", strerror(errno));
		goto out;
	}
	ret = daemon_wait_ready(d, ready, ready_delay_s, timeout_s, ready_re);
out:
	close_fd(&log);
	close_fd(&data);
	close_fd(&ready);
	if (ret < 0)
		daemon_free(d, NULL);
	else
		*out = d;
	return ret;
}

int daemon_start(char *const *argv, char *const *envp, const char *cwd,
		 const char *log_path, size_t log_max, double ready_delay_s,
		 const regex_t *ready_re, const regex_t *tally_re, double timeout_s,
		 struct daemon **out)
{
	return daemon_start_reason(argv, envp, cwd, log_path, log_max, ready_delay_s, ready_re,
				   tally_re, timeout_s, NULL, 0, out);
}

int daemon_stop_reason(struct daemon *d, char *why, size_t len)
{
	struct pollfd p;
	char how[128];
	int status, ret = 0;

	if (why && len)
		why[0] = '\0';
	if (!d)
		return 0;
	p.fd = d->pidfd;
	p.events = POLLIN;
	if (poll(&p, 1, 0) > 0) {
		kill(-d->pid, SIGKILL);
		reap(d->pid, &status);
		d->pid = -1;
		reap_logger(d);
		proc_describe_status(status, how, sizeof(how));
		if (why) {
			ret = why_error(why, len, "%s", how);
		} else {
			ret = error("daemon '%s' had ended on its own: %s", d->cmd, how);
			proc_print_tail(d->log_fd, d->log_start);
		}
	}
	daemon_free(d, NULL);
	return ret;
}

int daemon_stop(struct daemon *d)
{
	return daemon_stop_reason(d, NULL, 0);
}

pid_t daemon_pid(const struct daemon *d)
{
	return d ? d->pid : -1;
}

int daemon_alive(const struct daemon *d)
{
	struct pollfd p = { .fd = d ? d->pidfd : -1, .events = POLLIN };

	return d && d->pid > 0 && d->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

const char *daemon_log(const struct daemon *d)
{
	return d ? d->log_path : NULL;
}

/* ---- background loads ---- */

/* What the supervisor tells as it goes (a shared page): read by
 * background_sample(). */
struct bg_shared {
	long starts;		/* the load's starts */
	long failures;		/* starts that failed: could not run, ended non-zero
				 * or by a signal (not the supervisor's stop) */
	int running;		/* a start of it is running now */
	int failing;		/* the last start failed (none runs now) */
	long long started_ns;	/* now_mono() in ns when the running start began */
	long prior_failures;	/* failed starts of the same load in the variant's
				 * earlier entries (background_start()) */
};

/* A load that has failed before, in this entry of its variant or in an
 * earlier one, is trusted again once its new start has run this long: a
 * start younger than this may be failing too (a run that began while a
 * crash-looping load was, for a moment, running was counted as holding it;
 * so was a short run at the variant's next entry, before the fresh start
 * had had the time to fail). */
#define BG_PROVEN_S 1.0

/* A start of the load ended (status: its wait status, or -1 when it
 * could not be started). */
static void bg_ended(struct bg_shared *sh, int status)
{
	int failed = status < 0 || !WIFEXITED(status) || WEXITSTATUS(status);

	if (failed)
		__atomic_add_fetch(&sh->failures, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->failing, failed, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->running, 0, __ATOMIC_RELEASE);
}

struct background {
	struct cgroup *cg;	/* the supervisor's and the load's; NULL: none */
	struct bg_shared *sh;	/* MAP_SHARED with the supervisor */
	pid_t pid;		/* the supervisor */
	pid_t logger;		/* -1 when none */
	int info;		/* read end: first the start errno, at the end the count */
	int log_fd;		/* to read the log's marker */
	unsigned long long log_dropped;	/* its count before this load */
	char *cmd, *log_path;
};

/*
 * The supervisor: a fork of perturb in its own process group.  It blocks
 * the stop signals and reads them from a signalfd, so that a SIGTERM is
 * never lost between a check and a wait.  Protocol on info: one int (0 =
 * the first start succeeded, else its errno), then, after the SIGTERM, one
 * long: the number of starts.
 */
static _Noreturn void supervisor_main(char *const *argv, char *const *envp,
				      const char *cwd, int log, int info, pid_t parent,
				      struct bg_shared *sh)
{
	char *cmd = proc_argv_string(argv);
	sigset_t set;
	int sfd, fds[3];
	long starts = 0;
	int quick = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent || sfd < 0) {
		int e = sfd < 0 ? errno : ESRCH;
		write_full(info, &e, sizeof(e));
		_exit(1);
	}
	fds[0] = log;
	fds[1] = info;
	fds[2] = sfd;
	keep_only_fds(fds, 3);
	log = fds[0];
	info = fds[1];
	sfd = fds[2];

	for (;;) {
		struct spawn_opts o = {
			.argv = argv, .envp = envp, .cwd = cwd, .out_fd = log, .err_fd = -1,
		};
		struct pollfd p[2];
		double t0 = now_mono();
		char why[512];
		pid_t pid = proc_spawn_reason(&o, why, sizeof(why));
		int pidfd;

		if (pid < 0) {
			if (!starts) {
				int e = errno;
				write_full(info, &e, sizeof(e));
				_exit(1);
			}
			dprintf(log, "perturb: background: %s\n", why);
			bg_ended(sh, -1);
		} else {
			__atomic_store_n(&sh->started_ns, (long long)(t0 * 1e9), __ATOMIC_RELEASE);
			__atomic_store_n(&sh->running, 1, __ATOMIC_RELEASE);
			__atomic_add_fetch(&sh->starts, 1, __ATOMIC_RELEASE);
			if (!starts++) {
				int zero = 0;
				write_full(info, &zero, sizeof(zero));
			}
			pidfd = pidfd_open(pid, 0);
			p[0].fd = sfd;
			p[0].events = POLLIN;
			p[1].fd = pidfd;
			p[1].events = POLLIN;
			if (pidfd >= 0)
				proc_poll(p, 2, 0, 0);
			if (pidfd < 0 || p[0].revents) {
				proc_kill_group(pid, pidfd, STOP_KILL_GRACE_S);
				reap(pid, NULL);
				break;
			}
			int status = 0;
			kill(-pid, SIGKILL);	/* what it left behind (it has ended) */
			reap(pid, &status);
			close(pidfd);
			bg_ended(sh, status);
		}
		if (now_mono() - t0 < QUICK_EXIT_S)
			quick++;
		else
			quick = 0;
		if (quick >= QUICK_EXIT_RUNS) {
			if (quick == QUICK_EXIT_RUNS)
				dprintf(log, "perturb: warning: background load '%s' ended at once %d times in a row; restarting it every %g s\n",
					cmd, quick, BACKOFF_S);
			p[0].fd = sfd;
			p[0].events = POLLIN;
			if (proc_poll(p, 1, now_mono() + BACKOFF_S, 0) > 0)
				break;
		}
	}
	write_full(info, &starts, sizeof(starts));
	_exit(0);
}

int background_start(char *const *argv, char *const *envp, const char *cwd,
		     const char *log_path, size_t log_max, long prior_failures,
		     struct background **out)
{
	struct background *b;
	int log, info[2], e, unused;
	pid_t parent = getpid();
	ssize_t n;

	*out = NULL;
	if (!argv || !argv[0])
		return error("empty background command");
	if (stop_requested())
		return -1;
	/* O_RDWR: a bounded log is read back (struct blog) */
	log = open(log_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0)
		return error("cannot open '%s': %s", log_path, strerror(errno));
	if (pipe2(info, O_CLOEXEC) < 0) {
		close(log);
		return error("cannot create a pipe: %s", strerror(errno));
	}
	b = xcalloc(1, sizeof(*b));
	b->sh = mmap(NULL, sizeof(*b->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (b->sh == MAP_FAILED) {
		free(b);
		close(log);
		close(info[0]);
		close(info[1]);
		return error("cannot map a shared page: %s", strerror(errno));
	}
	b->sh->prior_failures = prior_failures;
	b->cmd = proc_argv_string(argv);
	b->log_path = xstrdup(log_path);
	b->info = info[0];
	b->logger = -1;
	b->log_fd = open(log_path, O_RDONLY | O_CLOEXEC);
	b->log_dropped = log_marker(log, &(size_t){ 0 }, NULL);
	if (log_max) {
		int in;
		if ((b->logger = start_logger(log, log_max, NULL, NULL, &in, &unused)) < 0) {
			close(log);
			close(info[1]);
			goto fail;
		}
		close(log);
		log = in;	/* the supervisor and its loads write to the logger */
	}
	b->cg = cgroup_create("background");
	b->pid = fork();
	if (!b->pid) {
		setpgid(0, 0);
		/* the loads it starts stay in the cgroup */
		if (b->cg && write(cgroup_procs_fd(b->cg), "0", 1) != 1)
			dprintf(log, "perturb: warning: cannot move into cgroup '%s': %s\n",
				cgroup_path(b->cg), strerror(errno));
		close(info[0]);
		supervisor_main(argv, envp, cwd, log, info[1], parent, b->sh);
	}
	close(log);
	close(info[1]);
	if (b->pid < 0) {
		error("cannot fork: %s", strerror(errno));
		goto fail;
	}
	setpgid(b->pid, b->pid);
	n = read_full(b->info, &e, sizeof(e));
	if (n != (ssize_t)sizeof(e) || e) {
		reap(b->pid, NULL);
		if (n != (ssize_t)sizeof(e))
			error("background load '%s': its supervisor failed", b->cmd);
		else
			error("background load '%s' failed: cannot run '%s': %s",
			      b->cmd, argv[0], strerror(e));
		goto fail;
	}
	*out = b;
	return 0;
fail:
	reap_logger_pid(&b->logger);
	cgroup_destroy(b->cg);
	close(b->info);
	close_fd(&b->log_fd);
	munmap(b->sh, sizeof(*b->sh));
	free(b->cmd);
	free(b->log_path);
	free(b);
	return -1;
}

int background_stop(struct background *b, long *starts)
{
	long n = 0;
	int status, ret = 0;
	char how[128];

	if (starts)
		*starts = 0;
	if (!b)
		return 0;
	kill(b->pid, SIGTERM);
	if (read_full(b->info, &n, sizeof(n)) != (ssize_t)sizeof(n)) {
		n = 0;
		ret = -1;
	}
	reap(b->pid, &status);
	if (ret < 0) {
		proc_describe_status(status, how, sizeof(how));
		error("the supervisor of background load '%s' ended on its own: %s",
		      b->cmd, how);
	}
	if (starts)
		*starts = n;
	proc_end_cgroup(b->cg, "background load", b->cmd);
	/* the supervisor and what the cgroup held are gone: the logger's EOF */
	reap_logger_pid(&b->logger);
	say_dropped(b->log_fd, b->log_dropped, "background load", b->cmd, b->log_path);
	close(b->info);
	close_fd(&b->log_fd);
	munmap(b->sh, sizeof(*b->sh));
	free(b->cmd);
	free(b->log_path);
	free(b);
	return ret;
}

pid_t background_pid(const struct background *b)
{
	return b ? b->pid : -1;
}

long background_failures(const struct background *b)
{
	return b ? __atomic_load_n(&b->sh->failures, __ATOMIC_ACQUIRE) : 0;
}

void background_sample(const struct background *b, struct background_sample *s)
{
	memset(s, 0, sizeof(*s));
	if (!b)
		return;
	s->starts = __atomic_load_n(&b->sh->starts, __ATOMIC_ACQUIRE);
	s->failures = __atomic_load_n(&b->sh->failures, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&b->sh->running, __ATOMIC_ACQUIRE))
		s->failing = s->failures + b->sh->prior_failures > 0 &&
			     now_mono() - __atomic_load_n(&b->sh->started_ns, __ATOMIC_ACQUIRE) / 1e9 <
				     BG_PROVEN_S;
	else
		s->failing = __atomic_load_n(&b->sh->failing, __ATOMIC_ACQUIRE);
}

int background_held(const struct background *b, const struct background_sample *before,
		    char *why, size_t len)
{
	struct background_sample after;

	background_sample(b, &after);
	if (before->failing) {
		snprintf(why, len, "background load '%s' was not running when the run started, "
			 "or had just been started again: its last start had failed (%ld of %ld "
			 "starts failed; its log: %s)",
			 b->cmd, after.failures, after.starts, b->log_path);
		return 0;
	}
	if (after.failures != before->failures) {
		snprintf(why, len, "background load '%s' failed %ld time%s during the run (%ld "
			 "of %ld starts failed; its log: %s)", b->cmd,
			 after.failures - before->failures,
			 after.failures - before->failures == 1 ? "" : "s", after.failures,
			 after.starts, b->log_path);
		return 0;
	}
	return 1;
}
