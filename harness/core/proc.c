/*
 * proc.c - see proc.h: what is common to the processes perturb starts
 * (their command line, wait status and cgroup), waiting on them, their
 * captured output, and setup, teardown and prepare commands.  Starting a
 * child is proc_spawn.c, daemons and background loads proc_daemon.c.
 *
 * Waiting is always ppoll() on a pidfd (or pipe), never a sleep loop.
 */
#include "proc.h"
#include "proc_int.h"
#include "cgroup.h"
#include "stop.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TAIL_LINES 10
/* what a setup, teardown or prepare command's output may hold (proc.h: capture) */
#define COMMAND_OUTPUT_MAX (1024 * 1024)

static struct timespec to_timespec(double s)
{
	struct timespec ts;
	if (s < 0)
		s = 0;
	if (s > 1e9)	/* ~31 years: a time_t, and a time-out ppoll() takes */
		s = 1e9;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	return ts;
}

char *proc_argv_string(char *const *argv)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; argv && argv[i]; i++) {
		if (i)
			strbuf_addstr(&sb, " ");
		strbuf_addstr(&sb, argv[i]);
	}
	return strbuf_detach(&sb);
}

void proc_describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended with wait status 0x%x", status);
}

/* A process group stopped a moment ago may still be ending: it gets this
 * long before what is left in its cgroup counts as escaped. */
#define SETTLE_S 1.0

void proc_end_cgroup(struct cgroup *cg, const char *what, const char *cmd)
{
	static int warned;
	int n;

	if (!cg)
		return;
	cgroup_settle(cg, SETTLE_S);
	n = cgroup_destroy(cg);
	if (n > 0 && !warned++)
		warning("%s '%s' left %d process%s outside its process group; killed with its "
			"cgroup (said once)", what, cmd, n, n == 1 ? "" : "es");
}

/* ---- escapees (proc.h: struct escape_watch) ---- */

static struct {
	pthread_mutex_t mu;
	int watching;		/* runs watched now: subreaper while > 0 */
} esc = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* The main thread's children (where orphans go), malloc'd; -1 when the
 * kernel does not list them. */
static ssize_t main_children(pid_t **out)
{
	static int fd = -1;	/* kept open: one pread a call; under esc.mu */
	static pid_t fd_of;
	char p[64], *text, *s;
	pid_t *v = NULL;
	size_t n = 0, alloc = 0, len = 0, cap = 4096;
	ssize_t got;

	pthread_mutex_lock(&esc.mu);
	if (fd >= 0 && fd_of != self_pid()) {	/* a fork's copy: not ours */
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(p, sizeof(p), "/proc/self/task/%d/children", (int)self_pid());
		fd = open(p, O_RDONLY | O_CLOEXEC);
		fd_of = self_pid();
	}
	text = xmalloc(cap);
	while (fd >= 0 && (got = pread(fd, text + len, cap - len - 1, (off_t)len)) > 0) {
		len += (size_t)got;
		if (len + 1 == cap)
			text = xrealloc(text, cap *= 2);
	}
	pthread_mutex_unlock(&esc.mu);
	if (fd < 0) {
		free(text);
		return -1;
	}
	text[len] = '\0';
	for (s = text; *s; ) {
		char *end;
		long pid = strtol(s, &end, 10);
		if (end == s)
			break;
		ALLOC_GROW(v, n + 1, alloc);
		v[n++] = (pid_t)pid;
		s = end + (*end == ' ');
	}
	free(text);
	*out = v;
	return (ssize_t)n;
}

static int has_pid(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return 1;
	return 0;
}

void proc_escape_watch_begin(struct escape_watch *w, const struct cgroup *cg)
{
	ssize_t n;

	memset(w, 0, sizeof(*w));
	if (!cg)
		return;
	pthread_mutex_lock(&esc.mu);
	if (!esc.watching && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		pthread_mutex_unlock(&esc.mu);
		return;
	}
	esc.watching++;
	pthread_mutex_unlock(&esc.mu);
	w->active = 1;
	if ((n = main_children(&w->before)) < 0) {
		w->before = NULL;
		proc_escape_watch_end(w, cg);
		return;
	}
	w->n_before = (size_t)n;
}

/* Has child pid ended (a zombie)?  Not reaped. */
static int ended(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return !waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid;
}

int proc_escape_watch_end(struct escape_watch *w, const struct cgroup *cg)
{
	int killed = 0, changed;
	pid_t *now = NULL;
	ssize_t n;

	if (!w->active)
		return 0;
	/* each pass reaps what ended; the children of what ended come next */
	do {
		changed = 0;
		free(now);
		now = NULL;
		if ((n = main_children(&now)) < 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			pid_t pid = now[i];

			if (has_pid(w->before, w->n_before, pid))
				continue;
			switch (cgroup_where(cg, pid)) {
			case CGROUP_IN:		/* the run's: killed with its cgroup */
				break;
			case CGROUP_OUTSIDE:	/* it left: kill it, unless it has ended */
				if (!ended(pid))
					killed++;
				break;
			default:	/* another cgroup's (a duet's other run, a daemon's):
					 * its own end reaps it; or gone */
				continue;
			}
			/* our child, not reaped: its pid cannot be reused */
			kill(pid, SIGKILL);
			reap(pid, NULL);
			changed = 1;
		}
	} while (changed);
	free(now);
	free(w->before);
	w->before = NULL;
	w->active = 0;
	pthread_mutex_lock(&esc.mu);
	if (!--esc.watching)
		prctl(PR_SET_CHILD_SUBREAPER, 0);
	pthread_mutex_unlock(&esc.mu);
	return killed;
}

/* proc_int.h; TAIL_LINES of them. */
void proc_print_tail(int fd, off_t from)
{
	struct stat st;
	char buf[4096];
	off_t start;
	ssize_t n;
	int lines = 0;
	char *p, *end;

	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	if (st.st_size < from)	/* a bounded log, cut since (proc.h) */
		from = 0;
	if (st.st_size <= from)
		return;
	start = st.st_size - (off_t)sizeof(buf);
	if (start < from)
		start = from;
	n = pread(fd, buf, (size_t)(st.st_size - start), start);
	if (n <= 0)
		return;
	end = buf + n;
	while (end > buf && end[-1] == '\n')
		end--;
	for (p = end; p > buf; p--)
		if (p[-1] == '\n' && ++lines == TAIL_LINES)
			break;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *e = nl ? nl : end, *line = xstrndup(p, (size_t)(e - p));
		put_lines(stderr, line, "    ", NULL);	/* escaped, as in the report */
		free(line);
		p = e + 1;
	}
}

/* ---- waiting and killing ---- */

/* owner: the process that asked.  A fork of it (a background load's
 * supervisor, a logger) inherits the thread's copy, and must never call
 * it: the call is the store's commit, on an SQLite connection that is the
 * parent's (a commit from the child once failed with "disk I/O error";
 * SQLite forbids a connection's use across fork()). */
static _Thread_local struct {
	double due;
	void (*fn)(void *);
	void *arg;
	pid_t owner;
} call_at;

void proc_call_at(double due, void (*fn)(void *), void *arg)
{
	call_at.due = due;
	call_at.fn = due > 0 ? fn : NULL;
	call_at.arg = arg;
	call_at.owner = self_pid();
}

/* The wait's end: deadline, or the call due before it (0: none). */
static double wait_until(double deadline)
{
	void (*fn)(void *) = call_at.fn;

	if (fn && call_at.owner != self_pid())
		fn = call_at.fn = NULL;	/* a fork's inherited copy */
	if (fn && now_mono() >= call_at.due) {
		call_at.fn = NULL;
		fn(call_at.arg);
	}
	if (call_at.fn && (deadline <= 0 || call_at.due < deadline))
		return call_at.due;
	return deadline;
}

int proc_poll(struct pollfd *fds, nfds_t n, double deadline, int honour_stop)
{
	sigset_t mask;

	stop_sleep_sigmask(&mask, honour_stop);
	for (;;) {
		struct timespec ts, *tsp = NULL;
		double until = wait_until(deadline);
		int r;

		if (honour_stop && stop_requested())
			return PROC_STOP;
		if (until > 0) {
			ts = to_timespec(until - now_mono());
			tsp = &ts;
		}
		r = ppoll(fds, n, tsp, &mask);
		if (r > 0)
			return r;
		if (!r && deadline > 0 && now_mono() >= deadline)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* ---- captured output ---- */

/* capture_keep()'s memfds (-1: none), under a lock: runners in threads;
 * of the process that kept them (a forked helper, proc_daemon.c, closes
 * what it inherits). */
#define CAPTURE_SPARES 4
static struct {
	pthread_mutex_t mu;
	int fd[CAPTURE_SPARES];
	pid_t owner;
} spares = { PTHREAD_MUTEX_INITIALIZER, { -1, -1, -1, -1 }, 0 };

/* A kept memfd taken (-1: none). */
static int spare_take(void)
{
	int fd = -1;

	pthread_mutex_lock(&spares.mu);
	for (int i = 0; i < CAPTURE_SPARES && fd < 0 && spares.owner == self_pid(); i++) {
		fd = spares.fd[i];
		spares.fd[i] = -1;
	}
	pthread_mutex_unlock(&spares.mu);
	return fd;
}

int capture_open(struct capture *c, const char *name, size_t max, capture_feed feed, void *arg)
{
	*c = (struct capture){ .max = max < CAPTURE_MIN_MAX ? CAPTURE_MIN_MAX : max,
			       .feed = feed, .arg = arg };
	if ((c->fd = spare_take()) >= 0)
		return 0;
	c->fd = memfd_create(name, MFD_CLOEXEC);
	if (c->fd < 0)
		return error("cannot create a memory file: %s", strerror(errno));
	return 0;
}

/* Hand [c->fed, c->size) to c->feed in chunks; stops at an incomplete last
 * line unless final. */
static int capture_feed_new(struct capture *c, int final)
{
	char *buf = NULL;
	int ret = 0;

	while (c->fed < c->size) {
		size_t want = c->size - c->fed < CAPTURE_CHUNK ? (size_t)(c->size - c->fed) : CAPTURE_CHUNK;
		ssize_t got;
		size_t took;

		if (!buf)
			buf = xmalloc(CAPTURE_CHUNK + 1);
		got = pread(c->fd, buf, want, (off_t)c->fed);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			ret = got < 0 ? error("cannot read the captured output: %s", strerror(errno)) : 0;
			break;
		}
		buf[got] = '\0';	/* a C string too (regexec() interceptors read one) */
		took = c->feed(c->arg, buf, (size_t)got,
			       final && c->fed + (uint64_t)got == c->size);
		if (!took)
			break;	/* an incomplete line: wait for the rest */
		c->fed += took;
	}
	free(buf);
	return ret;
}

int capture_drain(struct capture *c, int final)
{
	struct stat st;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t keep_from;

	if (c->fd < 0)
		return 0;
	if (fstat(c->fd, &st) < 0)
		return error("cannot stat the captured output: %s", strerror(errno));
	c->size = (uint64_t)st.st_size;
	if (!final && c->size - c->dropped <= c->max)
		return 0;	/* the usual case while a run lasts: nothing to do */
	if (!c->feed)
		c->fed = c->size;
	else if (capture_feed_new(c, final) < 0)
		return -1;
	if (c->size - c->dropped <= c->max)
		return 0;
	/* keep the last max / 2 bytes, and what feed has not taken yet */
	keep_from = c->size - c->max / 2;
	if (keep_from > c->fed)
		keep_from = c->fed;
	keep_from -= keep_from % (uint64_t)page;
	if (keep_from <= c->dropped)
		return 0;
	if (fallocate(c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)c->dropped,
		      (off_t)(keep_from - c->dropped)) < 0)
		return error("cannot drop captured output: %s", strerror(errno));
	c->dropped = keep_from;
	return 0;
}

char *capture_tail(const struct capture *c, size_t n, size_t *len)
{
	uint64_t from = c->size > n ? c->size - n : 0;
	char *buf;
	ssize_t got;

	*len = 0;
	if (from < c->dropped)
		from = c->dropped;
	if (c->fd < 0 || from >= c->size)
		return NULL;
	buf = xmalloc((size_t)(c->size - from) + 1);
	do
		got = pread(c->fd, buf, (size_t)(c->size - from), (off_t)from);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		free(buf);
		return NULL;
	}
	buf[got] = '\0';
	*len = (size_t)got;
	return buf;
}

void capture_close(struct capture *c)
{
	close_fd(&c->fd);
}

void capture_keep(struct capture *c)
{
	/* emptied (nothing to empty where the final capture_drain() found
	 * nothing written), and the offset its writers shared back at 0 */
	if (c->fd >= 0 && ((!c->size && !c->dropped) || !ftruncate(c->fd, 0)) &&
	    !lseek(c->fd, 0, SEEK_SET)) {
		pthread_mutex_lock(&spares.mu);
		if (spares.owner != self_pid()) {	/* inherited numbers: not ours */
			for (int i = 0; i < CAPTURE_SPARES; i++)
				spares.fd[i] = -1;
			spares.owner = self_pid();
		}
		for (int i = 0; i < CAPTURE_SPARES && c->fd >= 0; i++)
			if (spares.fd[i] < 0) {
				spares.fd[i] = c->fd;
				c->fd = -1;
			}
		pthread_mutex_unlock(&spares.mu);
	}
	capture_close(c);
}

int proc_kept_fd(int fd)
{
	int found = proc_spawn_kept_fd(fd);

	pthread_mutex_lock(&spares.mu);
	for (int i = 0; i < CAPTURE_SPARES && spares.owner == self_pid(); i++)
		found |= fd >= 0 && spares.fd[i] == fd;
	pthread_mutex_unlock(&spares.mu);
	return found;
}

int proc_poll_capture(struct pollfd *fds, nfds_t n, double deadline, int honour_stop,
		      struct capture *caps, size_t n_caps)
{
	for (;;) {
		double next = now_mono() + CAPTURE_CHECK_S;
		int r;

		if (!n_caps)
			return proc_poll(fds, n, deadline, honour_stop);
		r = proc_poll(fds, n, deadline > 0 && deadline < next ? deadline : next,
			      honour_stop);
		if (r != 0 || (deadline > 0 && now_mono() >= deadline))
			return r;
		for (size_t i = 0; i < n_caps; i++)
			if (capture_drain(&caps[i], 0) < 0)
				return -1;
	}
}

void proc_kill_group(pid_t pgid, int pidfd, double grace_s)
{
	if (kill(-pgid, SIGTERM) < 0 && errno == ESRCH)
		return;
	kill(-pgid, SIGCONT);
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		proc_poll(&p, 1, now_mono() + grace_s, 0);
	}
	kill(-pgid, SIGKILL);
}

/* ---- commands ---- */

int proc_run_command(char *const *argv, char *const *envp, const char *cwd,
		     double timeout_s, const char *what)
{
	char *cmd = proc_argv_string(argv);
	char why[512], how[128];
	struct capture out = { .fd = -1 };
	int pidfd = -1, ret = -1, r, status = 0;
	struct spawn_opts o = {
		.argv = argv, .envp = envp, .cwd = cwd, .err_fd = -1,
	};
	pid_t pid;

	if (!what)
		what = "command";
	if (stop_requested())
		goto out;
	if (capture_open(&out, "perturb-command", COMMAND_OUTPUT_MAX, NULL, NULL) < 0)
		goto out;
	o.out_fd = out.fd;
	pid = proc_spawn_reason(&o, why, sizeof(why));
	if (pid < 0) {
		error("%s command '%s' failed: %s", what, cmd, why);
		goto out;
	}
	pidfd = pidfd_open(pid, 0);
	if (pidfd < 0) {
		error("cannot watch %s command '%s': %s", what, cmd, strerror(errno));
		kill(-pid, SIGKILL);
		reap(pid, NULL);
		goto out;
	}
	{
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		r = proc_poll_capture(&p, 1, timeout_s > 0 ? now_mono() + timeout_s : 0, 1,
				      &out, 1);
	}
	if (r != 1)
		proc_kill_group(pid, pidfd, STOP_KILL_GRACE_S);
	kill(-pid, SIGKILL);	/* what it left behind */
	reap(pid, &status);

	if (r == PROC_STOP)
		goto out;
	if (r == 0) {
		error("%s command '%s' failed: timed out after %g s",
		      what, cmd, timeout_s);
	} else if (r < 0) {
		error("cannot wait for %s command '%s': %s", what, cmd,
		      strerror(errno));
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		proc_describe_status(status, how, sizeof(how));
		error("%s command '%s' failed: %s", what, cmd, how);
	} else {
		ret = 0;
		goto out;
	}
	capture_drain(&out, 1);
	proc_print_tail(out.fd, (off_t)out.dropped);
out:
	close_fd(&pidfd);
	capture_close(&out);
	free(cmd);
	return ret;
}
