/*
 * proc_spawn.c - starting a child (proc.h: proc_spawn).
 *
 * Every child is started the same way (proc_spawn_reason): fork, a new
 * process group, stdio redirected, signals reset, every other fd made
 * close-on-exec, then execve() of argv[0] looked up on the PATH of the
 * environment it is given.  What went wrong in the child before or at the
 * exec comes back as a struct spawn_report: where the parent sleeps until
 * the child has exec'd or ended (vfork, spawn_into) the child writes it
 * into the parent's memory, which it shares; where both run at once
 * (spawn_clone) it travels through a close-on-exec pipe, and the parent
 * reads either EOF (the exec succeeded) or the report.
 *
 * Into a cgroup (o->cgroup): where the kernel has clone3's
 * CLONE_INTO_CGROUP (Linux 5.7; proc_containment) the child is created in
 * it, as vfork would create it (CLONE_VM | CLONE_VFORK, on a stack of its
 * own), or for o->attach as spawn_clone() does; elsewhere it moves itself
 * in with a write to cgroup.procs before its exec (spawn_clone).
 */
#include "proc.h"
#include "proc_int.h"
#include "cgroup.h"
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
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* clone3's arguments (linux/sched.h, struct clone_args, up to VER2): glibc
 * 2.36 has neither a wrapper nor the struct. */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
		 set_tid, set_tid_size, cgroup;
};
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

enum spawn_stage { STAGE_FD, STAGE_AFFINITY, STAGE_CHDIR, STAGE_CGROUP, STAGE_EXEC,
		   STAGE_READY };

/* The stack of a CLONE_VM child (spawn_clone): one at a time, reused. */
#define CLONE_STACK_SIZE (256 * 1024)

struct spawn_report {
	int stage;
	int err;
};

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

/* In the child: the report of a failure at stage, in the parent's memory
 * (shared; the parent sleeps until this child execs or ends) or on the
 * pipe rep, then the end. */
CHILD_SIDE static _Noreturn void child_fail(int rep, volatile struct spawn_report *shared,
					    int stage)
{
	struct spawn_report r = { stage, errno };

	if (shared) {
		shared->err = r.err;
		shared->stage = stage;
	} else {
		write_full(rep, &r, sizeof(r));
	}
	_exit(127);
}

/*
 * In the child: only async-signal-safe calls from here to the exec.  go is
 * the read end of the release pipe (-1 = no wait: the vfork paths).  A
 * failure is reported in *shared where the parent sleeps until the exec
 * (vfork, spawn_into: no pipe to make, and no wait for the exec's closing
 * of close-on-exec fds), else on the pipe rep.
 */
CHILD_SIDE static _Noreturn void spawn_child(const struct spawn_opts *o, char **cand,
				  int devnull, const cpu_set_t *cpus,
				  const sigset_t *ignored, int rep,
				  volatile struct spawn_report *shared, int go, int cgfd)
{
	int src[3], tmp[3], saved = ENOENT, seen_eacces = 0;
	char *const *envp = o->envp ? o->envp : environ;

	setpgid(0, 0);
	src[0] = devnull;
	src[1] = o->out_fd >= 0 ? o->out_fd : devnull;
	src[2] = o->err_fd >= 0 ? o->err_fd : src[1];
	/* a source below 3 goes via a copy at 3 or above, so that no target
	 * clobbers a later source; the usual sources (the kept /dev/null, the
	 * captures) are there already, and cost no system call */
	for (int i = 0; i < 3; i++)
		if ((tmp[i] = src[i] >= 3 ? src[i] : fcntl(src[i], F_DUPFD_CLOEXEC, 3)) < 0)
			child_fail(rep, shared, STAGE_FD);
	for (int i = 0; i < 3; i++)
		if (dup2(tmp[i], i) < 0)
			child_fail(rep, shared, STAGE_FD);
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);

	if (cpus && sched_setaffinity(0, sizeof(*cpus), cpus) < 0)
		child_fail(rep, shared, STAGE_AFFINITY);
	if (o->cwd && chdir(o->cwd) < 0)
		child_fail(rep, shared, STAGE_CHDIR);
	if (cgfd >= 0 && write(cgfd, "0", 1) != 1)
		child_fail(rep, shared, STAGE_CGROUP);
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
			child_fail(rep, shared, STAGE_EXEC);
		}
	}
	errno = seen_eacces ? EACCES : saved;
	child_fail(rep, shared, STAGE_EXEC);
}

/*
 * clone3() whose child starts on the stack ca->stack (stack_size bytes)
 * and calls fn(arg), then _exits with its return: what glibc's clone()
 * does for clone(2), which clone3 cannot do from C (the child has no
 * frame to return to).  Returns the child's pid, or -errno; -ENOSYS where
 * it is not written (every architecture but x86-64: the cgroup.procs path
 * is used there).
 */
#if defined(__x86_64__)
CHILD_SIDE static __attribute__((noinline)) long clone3_fn(struct clone3_args *ca,
							   int (*fn)(void *), void *arg)
{
	long ret;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 /* the child, on its new stack (16-byte aligned) */
			 "xor %%ebp, %%ebp\n\t"
			 "mov %[arg], %%rdi\n\t"
			 "call *%[fn]\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[exit], %%eax\n\t"
			 "syscall\n\t"
			 "hlt\n"
			 "1:"
			 : "=a"(ret)
			 : "a"((long)SYS_clone3), "D"(ca), "S"(sizeof(*ca)), [fn] "r"(fn),
			   [arg] "r"(arg), [exit] "i"(SYS_exit)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
static long clone3_fn(struct clone3_args *ca, int (*fn)(void *), void *arg)
{
	(void)ca;
	(void)fn;
	(void)arg;
	return -ENOSYS;
}
#endif

/*
 * Whether children go into their cgroup with CLONE_INTO_CGROUP: probed
 * once (a clone3 naming /dev/null as the cgroup: EBADF from a kernel that
 * knows the flag, EINVAL, E2BIG or ENOSYS from one that does not, or from
 * a seccomp filter), turned off for good when a real spawn meets one of
 * those, or asked off with PERTURB_NO_CLONE_INTO_CGROUP=1 (for tests).
 */
static struct {
	pthread_once_t once;
	int ok;				/* read with __atomic: runners in threads */
	char why[128];			/* why not */
} into = { .once = PTHREAD_ONCE_INIT };

CHILD_SIDE static int probe_child(void *arg)
{
	(void)arg;
	return 0;	/* never reached on a kernel that checks the fd */
}

static void into_probe(void)
{
	const char *e = getenv("PERTURB_NO_CLONE_INTO_CGROUP");
	struct clone3_args ca = { .flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP,
				  .exit_signal = SIGCHLD, .stack_size = CLONE_STACK_SIZE };
	char *stack;
	long r;
	int fd;

	if (e && *e && strcmp(e, "0")) {
		snprintf(into.why, sizeof(into.why), "PERTURB_NO_CLONE_INTO_CGROUP is set");
		return;
	}
#if !defined(__x86_64__)
	snprintf(into.why, sizeof(into.why), "perturb calls clone3 on x86-64 only");
	return;
#endif
	stack = mmap(NULL, CLONE_STACK_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (stack == MAP_FAILED || fd < 0) {
		snprintf(into.why, sizeof(into.why), "cannot probe clone3: %s", strerror(errno));
	} else {
		ca.stack = (uintptr_t)stack;
		ca.cgroup = (uint64_t)fd;
		r = clone3_fn(&ca, probe_child, NULL);
		if (r > 0)
			reap((pid_t)r, NULL);
		if (r == -EBADF)
			into.ok = 1;
		else
			snprintf(into.why, sizeof(into.why), "clone3(CLONE_INTO_CGROUP): %s",
				 r > 0 ? "the kernel ignored the cgroup" : strerror((int)-r));
	}
	if (stack != MAP_FAILED)
		munmap(stack, CLONE_STACK_SIZE);
	if (fd >= 0)
		close(fd);
}

static int into_ok(void)
{
	pthread_once(&into.once, into_probe);
	return __atomic_load_n(&into.ok, __ATOMIC_RELAXED);
}

/* A spawn's clone3 failed with err: the kernel (or a filter) lacks it. */
static void into_off(int err)
{
	static int warned;

	if (!__atomic_exchange_n(&into.ok, 0, __ATOMIC_RELAXED))
		return;
	snprintf(into.why, sizeof(into.why), "clone3(CLONE_INTO_CGROUP): %s", strerror(err));
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		warning("%s: children now move into their cgroup with a write to cgroup.procs",
			into.why);
}

int proc_clone_into_cgroup(char *why, size_t len)
{
	int ok = into_ok();

	if (why && len)
		snprintf(why, len, "%s", ok ? "" : into.why);
	return ok;
}

const char *proc_containment(char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	if (!cgroup_base()) {
		if (why && len)
			snprintf(why, len, "no cgroup v2 (see the warning)");
		return "process-group";
	}
	return proc_clone_into_cgroup(why, len) ? "clone-into-cgroup" : "cgroup-procs-write";
}

/* vfork in a frame of its own: nothing the parent uses afterwards lives in
 * it, so the child cannot clobber it. */
static __attribute__((noinline)) pid_t spawn_vfork(const struct spawn_opts *o,
						   char **cand, int devnull,
						   const cpu_set_t *cpus,
						   const sigset_t *ignored,
						   struct spawn_report *shared)
{
	if (o->started)
		*o->started = now_mono();
	pid_t pid = vfork();
	if (!pid)
		spawn_child(o, cand, devnull, cpus, ignored, -1, shared, -1, -1);
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
	struct spawn_report *shared;	/* spawn_into's, else NULL */
};

CHILD_SIDE static int clone_child_main(void *arg)
{
	struct clone_child *c = arg;

	if (c->go_w >= 0)
		close(c->go_w);
	spawn_child(c->o, c->cand, c->devnull, c->cpus, c->ignored, c->rep, c->shared, c->go_r,
		    c->cgfd);
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
 * Returns the pid, or -1 (errno; rep[1] then stays open and *slot free, so
 * that the caller can try another way).  Closes rep[1].  *early is the
 * child's first report: STAGE_READY when it was released, else its
 * failure.  with_clone3: created in o->cgroup by CLONE_INTO_CGROUP, else it
 * writes to the cgroup's cgroup.procs (when o->cgroup).
 */
static pid_t spawn_clone(const struct spawn_opts *o, char **cand, int devnull,
			 const cpu_set_t *cpus, const sigset_t *ignored, int *rep,
			 struct spawn_report *early, int *slot, int with_clone3)
{
	struct clone_child c = { o, cand, devnull, cpus, ignored, rep[1], -1, -1,
				 with_clone3 ? -1 : cgroup_procs_fd(o->cgroup), NULL };
	char *stack = clone_stack(slot);
	int go[2], err;
	pid_t pid;
	ssize_t n;

	if (!stack)
		return -1;
	if (pipe2(go, O_CLOEXEC) < 0) {
		err = errno;
		clone_stack_put(*slot);
		*slot = -1;
		errno = err;
		return -1;
	}
	c.go_r = go[0];
	c.go_w = go[1];
	UNPOISON_STACK(stack, CLONE_STACK_SIZE);
	if (with_clone3) {
		struct clone3_args ca = {
			.flags = CLONE_VM | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
			.stack = (uintptr_t)stack, .stack_size = CLONE_STACK_SIZE,
			.cgroup = (uint64_t)cgroup_dir_fd(o->cgroup),
		};
		long r = clone3_fn(&ca, clone_child_main, &c);
		pid = r < 0 ? -1 : (pid_t)r;
		err = r < 0 ? (int)-r : 0;
	} else {
		pid = clone(clone_child_main, stack + CLONE_STACK_SIZE, CLONE_VM | SIGCHLD, &c);
		err = errno;
	}
	if (pid > 0) {
		close_fd(&rep[1]);
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
	} else {
		clone_stack_put(*slot);
		*slot = -1;
	}
	close(go[0]);
	close(go[1]);
	if (pid < 0)
		errno = err;
	return pid;
}

/*
 * The child created in o->cgroup as vfork creates one (CLONE_VM |
 * CLONE_VFORK: perturb waits until it has exec'd or failed, and a failure
 * is in *shared), on a stack of its own.  Returns the pid, or -1 (errno;
 * *slot then free).
 */
static pid_t spawn_into(const struct spawn_opts *o, char **cand, int devnull,
			const cpu_set_t *cpus, const sigset_t *ignored,
			struct spawn_report *shared, int *slot)
{
	struct clone_child c = { o, cand, devnull, cpus, ignored, -1, -1, -1, -1, shared };
	char *stack = clone_stack(slot);
	struct clone3_args ca = {
		.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
		.stack_size = CLONE_STACK_SIZE, .cgroup = (uint64_t)cgroup_dir_fd(o->cgroup),
	};
	long r;

	if (!stack)
		return -1;
	if (o->pidfd) {	/* Linux 5.3, before CLONE_INTO_CGROUP */
		ca.flags |= CLONE_PIDFD;
		ca.pidfd = (uintptr_t)o->pidfd;
	}
	UNPOISON_STACK(stack, CLONE_STACK_SIZE);
	ca.stack = (uintptr_t)stack;
	if (o->started)
		*o->started = now_mono();
	r = clone3_fn(&ca, clone_child_main, &c);
	if (r < 0) {
		clone_stack_put(*slot);
		*slot = -1;
		errno = (int)-r;
		return -1;
	}
	return (pid_t)r;
}

/* /dev/null, every child's stdin: opened once (an open and a close a run
 * of /bin/true cost 6 us), under a lock (runners in threads), and kept; by
 * the process that opened it (a forked helper, proc_daemon.c, closes
 * what it inherits and opens its own). */
static struct {
	pthread_mutex_t mu;
	int fd;
	pid_t owner;
} null_dev = { PTHREAD_MUTEX_INITIALIZER, -1, 0 };

static int devnull_fd(void)
{
	pid_t self = self_pid();
	int fd, err = 0;

	pthread_mutex_lock(&null_dev.mu);
	if (null_dev.fd < 0 || null_dev.owner != self) {
		null_dev.fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		null_dev.owner = self;
		err = errno;
	}
	fd = null_dev.fd;
	pthread_mutex_unlock(&null_dev.mu);
	errno = err;
	return fd;
}

int proc_spawn_kept_fd(int fd)
{
	int kept;

	pthread_mutex_lock(&null_dev.mu);
	kept = fd >= 0 && fd == null_dev.fd && null_dev.owner == self_pid();
	pthread_mutex_unlock(&null_dev.mu);
	return kept;
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
	int slot = -1;	/* spawn_clone()'s or spawn_into()'s stack */
	int with_clone3, two_phase;

	if (!why) {
		why = dummy;
		len = sizeof(dummy);
	}
	why[0] = '\0';
	if (o->pidfd)
		*o->pidfd = -1;
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
	devnull = devnull_fd();
	if (devnull < 0) {
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
	with_clone3 = o->cgroup && cgroup_dir_fd(o->cgroup) >= 0 && into_ok();
	for (;;) {
		const cpu_set_t *pin = o->cpus && o->n_cpus ? &cpus : NULL;

		two_phase = o->attach || (o->cgroup && !with_clone3);
		r = (struct spawn_report){ STAGE_READY, 0 };	/* no failure (yet) */
		if (two_phase && rep[0] < 0 && pipe2(rep, O_CLOEXEC) < 0) {
			pid = -1;
			break;
		}
		if (with_clone3 && !o->attach)
			pid = spawn_into(o, cand, devnull, pin, ignored_signals(), &r, &slot);
		else if (two_phase || with_clone3)
			pid = spawn_clone(o, cand, devnull, pin, ignored_signals(), rep, &r, &slot,
					  with_clone3);
		else
			pid = spawn_vfork(o, cand, devnull, pin, ignored_signals(), &r);
		if (pid >= 0 || !with_clone3 ||
		    (errno != ENOSYS && errno != EINVAL && errno != E2BIG))
			break;
		into_off(errno);	/* and again, writing to cgroup.procs */
		with_clone3 = 0;
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (pid < 0) {
		err = errno;
		snprintf(why, len, two_phase && rep[0] < 0 ? "cannot set up a child process: %s"
			 : "cannot fork: %s", strerror(err));
		goto out;
	}
	/* The vfork paths: the child has exec'd, or failed and said so in r.
	 * It made itself a process group; once it has exec'd a setpgid() of
	 * the parent's would only fail (EACCES). */
	if (!two_phase && r.stage == STAGE_READY)
		goto out;
	/* spawn_clone(): it made the group before the release; from then
	 * on the parent makes no call that can fail (set errno, shared with
	 * the child) until the exec, whose closing of rep[1] is the EOF. */
	close_fd(&rep[1]);
	if (two_phase && r.stage == STAGE_READY) {
		n = read_full(rep[0], &r, sizeof(r));
		if (n == 0)
			goto out;	/* exec succeeded */
		if (n != (ssize_t)sizeof(r)) {
			r.stage = STAGE_FD;
			r.err = n < 0 ? errno : EIO;
		}
	}
	if (o->pidfd)
		close_fd(o->pidfd);
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

/* proc.h */
int proc_capture(char *const *argv, const char *cwd, char **out)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status, ret = -1;
	struct strbuf so = STRBUF_INIT, se = STRBUF_INIT;
	char buf[4096];
	pid_t pid;
	ssize_t k;

	*out = NULL;
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		error("cannot run %s: %s", argv[0], strerror(errno));
		goto out;
	}
	if ((pid = fork()) < 0) {
		error("cannot run %s: %s", argv[0], strerror(errno));
		goto out;
	}
	if (!pid) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (cwd && chdir(cwd) < 0) {
			fprintf(stderr, "cannot enter '%s': %s\n", cwd, strerror(errno));
			_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	/* for commands that print little (Slurm's, git's): stdout first,
	   then stderr */
	while ((k = read(po[0], buf, sizeof(buf))) > 0 || (k < 0 && errno == EINTR))
		if (k > 0)
			strbuf_add(&so, buf, (size_t)k);
	while ((k = read(pe[0], buf, sizeof(buf))) > 0 || (k < 0 && errno == EINTR))
		if (k > 0)
			strbuf_add(&se, buf, (size_t)k);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char *cmd = xstrdup(argv[0]);
		while (se.len && (se.buf[se.len - 1] == '\n'))
			se.buf[--se.len] = '\0';
		error("%s failed (%s %d): %s", cmd, WIFEXITED(status) ? "exit status" : "signal",
		      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		      se.len ? se.buf : "no message");
		free(cmd);
		goto out;
	}
	*out = strbuf_detach(&so);
	if (!*out)
		*out = xstrdup("");
	ret = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	strbuf_release(&so);
	strbuf_release(&se);
	return ret;
}
