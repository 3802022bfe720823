/*
 * proc.c - see proc.h.
 *
 * Every child is started the same way (proc_spawn_reason): fork, a new
 * process group, stdio redirected, signals reset, every other fd made
 * close-on-exec, then execve() of argv[0] looked up on the PATH of the
 * environment it is given.  What went wrong in the child before or at the
 * exec travels back through a close-on-exec pipe: the parent reads either
 * EOF (the exec succeeded) or a struct spawn_report.
 *
 * Waiting is always ppoll() on a pidfd (or pipe), never a sleep loop.
 * Two helper processes are forks of perturb without an exec:
 *  - the daemon logger copies a daemon's output to its log and tells the
 *    parent, through a pipe, when the readiness regex first matched;
 *  - the background supervisor restarts the load each time it ends.
 */
#include "proc.h"
#include "cgroup.h"
#include "stop.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
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

extern char **environ;

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define TAIL_LINES 10
/* what a setup, teardown or prepare command's output may hold (proc.h: capture) */
#define COMMAND_OUTPUT_MAX (1024 * 1024)
#define LOGGER_LINE_MAX (16 * 1024)
#define QUICK_EXIT_S 0.05
#define QUICK_EXIT_RUNS 5
#define BACKOFF_S 1.0

enum spawn_stage { STAGE_FD, STAGE_AFFINITY, STAGE_CHDIR, STAGE_CGROUP, STAGE_EXEC,
		   STAGE_READY };

/* The stack of a CLONE_VM child (spawn_clone): one at a time, reused. */
#define CLONE_STACK_SIZE (256 * 1024)

/*
 * AddressSanitizer and a child on a stack of its own: ASan does not know
 * that stack, so the child-side functions are not instrumented (no
 * redzones left poisoned by frames that never return, no
 * __asan_handle_no_return on an unknown stack), and the stack's shadow is
 * cleared before each use all the same.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CHILD_SIDE __attribute__((no_sanitize_address))
#define UNPOISON_STACK(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CHILD_SIDE
#define UNPOISON_STACK(p, n) ((void)(p), (void)(n))
#endif

struct spawn_report {
	int stage;
	int err;
};

/* ---- small helpers ---- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

CHILD_SIDE static void write_full(int fd, const void *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf = (const char *)buf + n;
		len -= (size_t)n;
	}
}

static pid_t reap(pid_t pid, int *status)
{
	pid_t r;
	int st = 0;
	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (status)
		*status = st;
	return r;
}

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

/*
 * Print the last TAIL_LINES lines of fd from offset `from` on (at most the
 * last 4 KiB), indented, on stderr.
 */
static void print_tail(int fd, off_t from)
{
	struct stat st;
	char buf[4096];
	off_t start;
	ssize_t n;
	int lines = 0;
	char *p, *end;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= from)
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
		char *e = nl ? nl : end;
		fprintf(stderr, "    %.*s\n", (int)(e - p), p);
		p = e + 1;
	}
}

/* ---- spawning ---- */

static const char *env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/*
 * The paths execve() should try for prog, in order, NULL-terminated: prog
 * itself when it holds a slash, else each PATH entry of envp ("" = ".").
 */
static char **exec_candidates(const char *prog, char *const *envp)
{
	char **v = NULL;
	size_t n = 0, alloc = 0;
	const char *path, *p;

	if (!*prog) {
		ALLOC_GROW(v, 1, alloc);
		v[0] = NULL;
		return v;
	}
	if (strchr(prog, '/')) {
		ALLOC_GROW(v, 2, alloc);
		v[n++] = xstrdup(prog);
		v[n] = NULL;
		return v;
	}
	path = env_get(envp, "PATH");
	if (!path)
		path = DEFAULT_PATH;
	for (p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		ALLOC_GROW(v, n + 2, alloc);
		if (len)
			v[n++] = xasprintf("%.*s/%s", (int)len, p, prog);
		else
			v[n++] = xasprintf("./%s", prog);
		if (!colon)
			break;
		p = colon + 1;
	}
	v[n] = NULL;
	return v;
}

static void free_candidates(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/*
 * The signals perturb ignores (SIG_IGN survives execve; handled signals are
 * reset by execve itself).  Found in the parent so that the child, whose
 * time counts in the run's wall time, makes as few system calls as it can;
 * and found once, at the first spawn: what perturb ignores is what it
 * inherited (nohup's SIGHUP, say), and perturb itself never sets SIG_IGN.
 */
static sigset_t ignored_set;

static void find_ignored(void)
{
	struct sigaction sa;

	sigemptyset(&ignored_set);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_handler == SIG_IGN)
			sigaddset(&ignored_set, sig);
}

static const sigset_t *ignored_signals(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;	/* runners in threads */

	pthread_once(&once, find_ignored);
	return &ignored_set;
}

/* In the child: ignored signals back to SIG_DFL, then an empty mask. */
CHILD_SIDE static void reset_signals(const sigset_t *ignored)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(ignored, sig) == 1)
			sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

CHILD_SIDE static _Noreturn void child_fail(int rep, int stage)
{
	struct spawn_report r = { stage, errno };
	write_full(rep, &r, sizeof(r));
	_exit(127);
}

/*
 * In the child: only async-signal-safe calls from here to the exec.  go is
 * the read end of the release pipe (-1 = no wait: the vfork path).
 */
CHILD_SIDE static _Noreturn void spawn_child(const struct spawn_opts *o, char **cand,
				  int devnull, const cpu_set_t *cpus,
				  const sigset_t *ignored, int rep, int go, int cgfd)
{
	int src[3], tmp[3], saved = ENOENT, seen_eacces = 0;
	char *const *envp = o->envp ? o->envp : environ;

	setpgid(0, 0);
	src[0] = devnull;
	src[1] = o->out_fd >= 0 ? o->out_fd : devnull;
	src[2] = o->err_fd >= 0 ? o->err_fd : src[1];
	/* via fds >= 3 so that no target clobbers a later source */
	for (int i = 0; i < 3; i++)
		if ((tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 3)) < 0)
			child_fail(rep, STAGE_FD);
	for (int i = 0; i < 3; i++)
		if (dup2(tmp[i], i) < 0)
			child_fail(rep, STAGE_FD);
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);

	if (cpus && sched_setaffinity(0, sizeof(*cpus), cpus) < 0)
		child_fail(rep, STAGE_AFFINITY);
	if (o->cwd && chdir(o->cwd) < 0)
		child_fail(rep, STAGE_CHDIR);
	if (cgfd >= 0 && write(cgfd, "0", 1) != 1)
		child_fail(rep, STAGE_CGROUP);
	if (go >= 0) {
		struct spawn_report ready = { STAGE_READY, 0 };
		char c;
		ssize_t n;

		write_full(rep, &ready, sizeof(ready));
		do
			n = read(go, &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);	/* perturb is gone: run nothing */
		close(go);
	}
	reset_signals(ignored);

	for (char **c = cand; *c; c++) {
		execve(*c, o->argv, envp);
		switch (errno) {
		case EACCES:
			seen_eacces = 1;
			/* fallthrough */
		case ENOENT:
		case ENOTDIR:
		case ESTALE:
		case ENODEV:
		case ETIMEDOUT:
			saved = errno;
			continue;
		default:
			child_fail(rep, STAGE_EXEC);
		}
	}
	errno = seen_eacces ? EACCES : saved;
	child_fail(rep, STAGE_EXEC);
}

/* vfork in a frame of its own: nothing the parent uses afterwards lives in
 * it, so the child cannot clobber it. */
static __attribute__((noinline)) pid_t spawn_vfork(const struct spawn_opts *o,
						   char **cand, int devnull,
						   const cpu_set_t *cpus,
						   const sigset_t *ignored, int rep)
{
	if (o->started)
		*o->started = now_mono();
	pid_t pid = vfork();
	if (!pid)
		spawn_child(o, cand, devnull, cpus, ignored, rep, -1, -1);
	return pid;
}

/*
 * For o->attach: a child that shares perturb's memory, as vfork's does (no
 * page-table copy, and an exec that only drops a reference: a fork's exec
 * would tear down its copy of perturb's address space inside the measured
 * window, 2-5 ms here), but that lets the parent run while it waits.
 * clone(CLONE_VM) without CLONE_VFORK, on a stack of its own.
 *
 * The two take turns, so that they never run at the same time on the
 * shared memory (errno, for one, is shared): the parent sleeps on rep until
 * the child, set up, reports STAGE_READY (or a failure) and sleeps on go;
 * the parent then attaches, takes the start time and writes go; and sleeps
 * on rep again until the exec closes it (or a failure is reported).  The
 * parent keeps go[0] open until it has written, so that the write never
 * meets a closed pipe.
 */
struct clone_child {
	const struct spawn_opts *o;
	char **cand;
	int devnull;
	const cpu_set_t *cpus;
	const sigset_t *ignored;
	int rep, go_r, go_w, cgfd;
};

CHILD_SIDE static int clone_child_main(void *arg)
{
	struct clone_child *c = arg;

	close(c->go_w);
	spawn_child(c->o, c->cand, c->devnull, c->cpus, c->ignored, c->rep, c->go_r, c->cgfd);
}

/*
 * The stacks of CLONE_VM children: one per child between its clone and its
 * exec (or its end), reused after.  Runners in threads of their own
 * (runner.h: struct run_gate) spawn at once, so there are a few, each
 * taken under a lock; a thread that finds none free gets EAGAIN.
 */
#define CLONE_STACKS 4
static struct {
	pthread_mutex_t mu;
	void *stack[CLONE_STACKS];
	int busy[CLONE_STACKS];
} stacks = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* A free stack (its index in *slot), or NULL (errno). */
static void *clone_stack(int *slot)
{
	void *p = NULL;

	pthread_mutex_lock(&stacks.mu);
	for (int i = 0; i < CLONE_STACKS; i++) {
		if (stacks.busy[i])
			continue;
		if (!stacks.stack[i]) {
			p = mmap(NULL, CLONE_STACK_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
			if (p == MAP_FAILED)
				break;
			mprotect(p, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE);	/* guard */
			stacks.stack[i] = p;
		}
		stacks.busy[i] = 1;
		*slot = i;
		p = stacks.stack[i];
		break;
	}
	pthread_mutex_unlock(&stacks.mu);
	if (!p || p == MAP_FAILED) {
		errno = p ? ENOMEM : EAGAIN;
		return NULL;
	}
	return p;
}

/* The child that used stack slot has exec'd or ended. */
static void clone_stack_put(int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&stacks.mu);
	stacks.busy[slot] = 0;
	pthread_mutex_unlock(&stacks.mu);
}

/*
 * Returns the pid, or -1 (errno).  Closes rep[1].  *early is the child's
 * first report: STAGE_READY when it was released, else its failure.
 */
static pid_t spawn_clone(const struct spawn_opts *o, char **cand, int devnull,
			 const cpu_set_t *cpus, const sigset_t *ignored, int *rep,
			 struct spawn_report *early, int *slot)
{
	struct clone_child c = { o, cand, devnull, cpus, ignored, rep[1], -1, -1,
				 cgroup_procs_fd(o->cgroup) };
	char *stack = clone_stack(slot);
	int go[2];
	pid_t pid;
	ssize_t n;

	if (!stack)
		return -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	c.go_r = go[0];
	c.go_w = go[1];
	UNPOISON_STACK(stack, CLONE_STACK_SIZE);
	pid = clone(clone_child_main, stack + CLONE_STACK_SIZE, CLONE_VM | SIGCHLD, &c);
	close_fd(&rep[1]);
	if (pid > 0) {
		n = read_full(rep[0], early, sizeof(*early));
		if (n != (ssize_t)sizeof(*early)) {
			early->stage = STAGE_FD;
			early->err = n < 0 ? errno : EIO;
		}
		if (early->stage == STAGE_READY) {
			setpgid(pid, pid);
			if (o->attach)
				o->attach(pid, o->attach_arg);
			if (o->started)
				*o->started = now_mono();
			write_full(go[1], "g", 1);
		}
	}
	close(go[0]);
	close(go[1]);
	return pid;
}

static void cpu_list_string(const struct spawn_opts *o, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < o->n_cpus && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d",
					i ? "," : "", o->cpus[i]);
}

pid_t proc_spawn_reason(const struct spawn_opts *o, char *why, size_t len)
{
	char **cand = NULL;
	int devnull = -1, rep[2] = { -1, -1 }, err = 0;
	cpu_set_t cpus;
	sigset_t all, old_mask;
	pid_t pid = -1;
	struct spawn_report r;
	ssize_t n;
	char dummy[8], cpulist[128];
	int slot = -1;	/* spawn_clone()'s stack */

	if (!why) {
		why = dummy;
		len = sizeof(dummy);
	}
	why[0] = '\0';
	if (!o->argv || !o->argv[0]) {
		snprintf(why, len, "empty command");
		err = EINVAL;
		goto out;
	}
	if (o->cpus && o->n_cpus) {
		CPU_ZERO(&cpus);
		for (size_t i = 0; i < o->n_cpus; i++) {
			if (o->cpus[i] < 0 || o->cpus[i] >= CPU_SETSIZE) {
				snprintf(why, len, "invalid CPU number %d", o->cpus[i]);
				err = EINVAL;
				goto out;
			}
			CPU_SET(o->cpus[i], &cpus);
		}
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		err = errno;
		snprintf(why, len, "cannot set up a child process: %s", strerror(err));
		goto out;
	}
	cand = exec_candidates(o->argv[0], o->envp ? o->envp : environ);

	/*
	 * vfork: the child borrows perturb's memory until it execs, so starting
	 * a workload costs no page-table copy (fork of perturb cost about
	 * 0.3 ms more per run here; see bench/harness-overhead.sh).  The child
	 * only makes system calls on its own stack and never returns; every
	 * signal stays blocked until it has reset all handlers to SIG_DFL, so
	 * no handler of perturb's can run on the shared memory.  With
	 * o->attach (event counters) the parent must run while the child
	 * waits before its exec: spawn_clone().
	 */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old_mask);
	if (o->attach || o->cgroup)
		pid = spawn_clone(o, cand, devnull, o->cpus && o->n_cpus ? &cpus : NULL,
				  ignored_signals(), rep, &r, &slot);
	else
		pid = spawn_vfork(o, cand, devnull, o->cpus && o->n_cpus ? &cpus : NULL,
				  ignored_signals(), rep[1]);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (pid < 0) {
		err = errno;
		snprintf(why, len, "cannot fork: %s", strerror(err));
		goto out;
	}
	/* Also done by the child; EACCES after exec.  spawn_clone() did it
	 * before the release: from then on the parent makes no call that can
	 * fail (set errno, shared with the child) until the exec. */
	if (!o->attach && !o->cgroup)
		setpgid(pid, pid);
	close_fd(&rep[1]);
	if ((!o->attach && !o->cgroup) || r.stage == STAGE_READY) {
		n = read_full(rep[0], &r, sizeof(r));
		if (n == 0)
			goto out;	/* exec succeeded */
		if (n != (ssize_t)sizeof(r)) {
			r.stage = STAGE_FD;
			r.err = n < 0 ? errno : EIO;
		}
	}
	reap(pid, NULL);
	pid = -1;
	err = r.err;
	switch (r.stage) {
	case STAGE_EXEC:
		snprintf(why, len, "cannot run '%s': %s", o->argv[0], strerror(err));
		break;
	case STAGE_CHDIR:
		snprintf(why, len, "cannot change to directory '%s': %s",
			 o->cwd, strerror(err));
		break;
	case STAGE_CGROUP:
		snprintf(why, len, "cannot move into cgroup '%s': %s",
			 cgroup_path(o->cgroup), strerror(err));
		break;
	case STAGE_AFFINITY:
		cpu_list_string(o, cpulist, sizeof(cpulist));
		snprintf(why, len, "cannot pin '%s' to CPUs %s: %s",
			 o->argv[0], cpulist, strerror(err));
		break;
	default:
		snprintf(why, len, "cannot set up the standard fds of '%s': %s",
			 o->argv[0], strerror(err));
		break;
	}
out:
	clone_stack_put(slot);	/* its child has exec'd (EOF above) or is reaped */
	close_fd(&devnull);
	close_fd(&rep[0]);
	close_fd(&rep[1]);
	free_candidates(cand);
	if (pid < 0)
		errno = err ? err : EIO;
	return pid;
}

pid_t proc_spawn(const struct spawn_opts *o)
{
	return proc_spawn_reason(o, NULL, 0);
}

/* ---- waiting and killing ---- */

int proc_poll(struct pollfd *fds, nfds_t n, double deadline, int honour_stop)
{
	sigset_t mask;

	stop_sleep_sigmask(&mask, honour_stop);
	for (;;) {
		struct timespec ts, *tsp = NULL;
		int r;

		if (honour_stop && stop_requested())
			return PROC_STOP;
		if (deadline > 0) {
			ts = to_timespec(deadline - now_mono());
			tsp = &ts;
		}
		r = ppoll(fds, n, tsp, &mask);
		if (r > 0)
			return r;
		if (!r && now_mono() >= deadline)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* ---- captured output ---- */

int capture_open(struct capture *c, const char *name, size_t max, capture_feed feed, void *arg)
{
	*c = (struct capture){ .max = max < CAPTURE_MIN_MAX ? CAPTURE_MIN_MAX : max,
			       .feed = feed, .arg = arg };
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
	print_tail(out.fd, (off_t)out.dropped);
out:
	close_fd(&pidfd);
	capture_close(&out);
	free(cmd);
	return ret;
}

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
	char *cmd;
};

static int logger_match(const regex_t *re, const char *line, size_t len)
{
	regmatch_t m[1];
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)len;
	return !regexec(re, line, 1, m, REG_STARTEND);
}

/*
 * The logger: copy in to log until EOF; until the regex has matched, match
 * it on each line (and on the incomplete last line, so that a prompt
 * without a newline counts), lines cut at LOGGER_LINE_MAX; at the first
 * match write one byte to ready and close it.
 */
static _Noreturn void logger_main(int in, int log, int ready, const regex_t *re)
{
	static char buf[65536];
	char *line = xmalloc(LOGGER_LINE_MAX);
	size_t llen = 0;
	ssize_t n;

	for (;;) {
		const char *p, *end;

		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		write_full(log, buf, (size_t)n);
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

/* Reap the logger: it ends at EOF on its input; give it the grace period. */
static void reap_logger(struct daemon *d)
{
	int fd;

	if (d->logger < 0)
		return;
	fd = pidfd_open(d->logger, 0);
	if (fd >= 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (proc_poll(&p, 1, now_mono() + STOP_KILL_GRACE_S, 0) <= 0)
			kill(d->logger, SIGKILL);
		close(fd);
	} else {
		kill(d->logger, SIGKILL);
	}
	reap(d->logger, NULL);
	d->logger = -1;
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
	if (status)
		*status = st;
	close_fd(&d->pidfd);
	close_fd(&d->log_fd);
	free(d->cmd);
	free(d);
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
	error("daemon '%s' %s: %s", d->cmd, when, how);
	print_tail(d->log_fd, d->log_start);
	return -1;
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
			return error("cannot wait for daemon '%s': %s", d->cmd,
				     strerror(errno));
		return daemon_died(d, "ended during its start-up delay");
	}

	deadline = timeout_s > 0 ? now_mono() + timeout_s : 0;
	for (;;) {
		r = proc_poll(p, 2, deadline, 1);
		if (r == PROC_STOP)
			return -1;
		if (r < 0)
			return error("cannot wait for daemon '%s': %s", d->cmd,
				     strerror(errno));
		if (r == 0) {
			error("daemon '%s' not ready after %g s: its output did not match the readiness pattern",
			      d->cmd, timeout_s);
			proc_kill_group(d->pid, d->pidfd, STOP_KILL_GRACE_S);
			reap(d->pid, NULL);
			d->pid = -1;
			reap_logger(d);
			print_tail(d->log_fd, d->log_start);
			return -1;
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

int daemon_start(char *const *argv, char *const *envp, const char *cwd,
		 const char *log_path, double ready_delay_s, const regex_t *ready_re,
		 double timeout_s, struct daemon **out)
{
	struct daemon *d = xcalloc(1, sizeof(*d));
	int log = -1, data[2] = { -1, -1 }, ready[2] = { -1, -1 };
	struct spawn_opts o = { .argv = argv, .envp = envp, .cwd = cwd, .err_fd = -1 };
	struct stat st;
	char why[512];
	int ret = -1;

	*out = NULL;
	d->pid = d->logger = -1;
	d->pidfd = d->log_fd = -1;
	d->cmd = proc_argv_string(argv);
	if (stop_requested())
		goto out;
	log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0) {
		error("cannot open '%s': %s", log_path, strerror(errno));
		goto out;
	}
	d->log_fd = open(log_path, O_RDONLY | O_CLOEXEC);
	if (!fstat(log, &st))
		d->log_start = st.st_size;
	o.out_fd = log;
	o.cgroup = d->cg = cgroup_create("daemon");

	if (ready_re) {
		if (pipe2(data, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
			error("cannot create a pipe: %s", strerror(errno));
			goto out;
		}
		d->logger = fork();
		if (!d->logger) {
			int fds[3] = { data[0], log, ready[1] };
			setpgid(0, 0);
			keep_only_fds(fds, 3);
			logger_main(fds[0], fds[1], fds[2], ready_re);
		}
		if (d->logger < 0) {
			error("cannot fork: %s", strerror(errno));
			goto out;
		}
		setpgid(d->logger, d->logger);
		close_fd(&data[0]);
		close_fd(&ready[1]);
		o.out_fd = data[1];
	}

	d->pid = proc_spawn_reason(&o, why, sizeof(why));
	close_fd(&data[1]);	/* the daemon holds the only write end */
	if (d->pid < 0) {
		error("daemon '%s' failed: %s", d->cmd, why);
		goto out;
	}
	d->pidfd = pidfd_open(d->pid, 0);
	if (d->pidfd < 0) {
		error("cannot watch daemon '%s': %s", d->cmd, strerror(errno));
		goto out;
	}
	ret = daemon_wait_ready(d, ready[0], ready_delay_s, timeout_s, ready_re);
out:
	close_fd(&log);
	close_fd(&data[0]);
	close_fd(&data[1]);
	close_fd(&ready[0]);
	close_fd(&ready[1]);
	if (ret < 0)
		daemon_free(d, NULL);
	else
		*out = d;
	return ret;
}

int daemon_stop(struct daemon *d)
{
	struct pollfd p;
	char how[128];
	int status, ret = 0;

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
		ret = error("daemon '%s' had ended on its own: %s", d->cmd, how);
		print_tail(d->log_fd, d->log_start);
	}
	daemon_free(d, NULL);
	return ret;
}

pid_t daemon_pid(const struct daemon *d)
{
	return d ? d->pid : -1;
}

/* ---- background loads ---- */

struct background {
	struct cgroup *cg;	/* the supervisor's and the load's; NULL: none */
	pid_t pid;		/* the supervisor */
	int info;		/* read end: first the start errno, at the end the count */
	char *cmd;
};

/*
 * The supervisor: a fork of perturb in its own process group.  It blocks
 * the stop signals and reads them from a signalfd, so that a SIGTERM is
 * never lost between a check and a wait.  Protocol on info: one int (0 =
 * the first start succeeded, else its errno), then, after the SIGTERM, one
 * long: the number of starts.
 */
static _Noreturn void supervisor_main(char *const *argv, char *const *envp,
				      const char *cwd, int log, int info, pid_t parent)
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
		} else {
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
			kill(-pid, SIGKILL);	/* what it left behind */
			reap(pid, NULL);
			close(pidfd);
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
		     const char *log_path, struct background **out)
{
	struct background *b;
	int log, info[2], e;
	pid_t parent = getpid();
	ssize_t n;

	*out = NULL;
	if (!argv || !argv[0])
		return error("empty background command");
	if (stop_requested())
		return -1;
	log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0)
		return error("cannot open '%s': %s", log_path, strerror(errno));
	if (pipe2(info, O_CLOEXEC) < 0) {
		close(log);
		return error("cannot create a pipe: %s", strerror(errno));
	}
	b = xcalloc(1, sizeof(*b));
	b->cmd = proc_argv_string(argv);
	b->info = info[0];
	b->cg = cgroup_create("background");
	b->pid = fork();
	if (!b->pid) {
		setpgid(0, 0);
		/* the loads it starts stay in the cgroup */
		if (b->cg && write(cgroup_procs_fd(b->cg), "0", 1) != 1)
			dprintf(log, "perturb: warning: cannot move into cgroup '%s': %s\n",
				cgroup_path(b->cg), strerror(errno));
		close(info[0]);
		supervisor_main(argv, envp, cwd, log, info[1], parent);
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
	cgroup_destroy(b->cg);
	close(b->info);
	free(b->cmd);
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
	close(b->info);
	free(b->cmd);
	free(b);
	return ret;
}

pid_t background_pid(const struct background *b)
{
	return b ? b->pid : -1;
}
