/* cgroup.c - a cgroup v2 around each tree of processes; see cgroup.h. */
#include "cgroup.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a killed tree may take to be gone. */
#define EMPTY_WAIT_S 5.0

/* What a cgroup's counters held when it was (re)used: cgroup_read_usage()
 * gives what a run added to them. */
struct usage_raw {
	double cpu_us, user_us, sys_us, io_r, io_w;
	int has_cpu, has_io;
};

struct cgroup {
	char *path;
	int procs_fd;
	int dir_fd;		/* the directory, for clone3(CLONE_INTO_CGROUP) */
	int events_fd;		/* cgroup.events: "populated 0|1" */
	/* A run's cgroup (cgroup_take) goes back to the pool when it ends
	 * empty, with no cgroups below it: */
	int pooled;		/* 0 once killed: see give_back() */
	int stat_fd;		/* cgroup.stat: nr_descendants */
	int peak_fd;		/* memory.peak, reset per run (-1: none) */
	int cpu_fd, io_fd;	/* cpu.stat, io.stat (-1: none) */
	struct usage_raw at_start, last;
	int last_fresh;		/* last read after the run's end */
	int seen_empty;		/* found empty since it was taken: its run is over */
};

/*
 * The pool of run cgroups: made ahead of the timed loop (cgroup_prepare),
 * taken by cgroup_take(), given back by cgroup_destroy() once empty.
 */
#define POOL_MAX 8
static struct {
	pthread_mutex_t mu;
	struct cgroup *free[POOL_MAX];
	int n;
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

static char *base;		/* OWN/perturb-PID, NULL when none */
static pid_t base_owner;	/* the process that made it */
static int base_tried;
static int (*base_journal)(const char *base);	/* cgroup_journal_with() */
static unsigned long seq;

/* perturb-PID-2 ... perturb-PID-BASE_NAME_TRIES */
#define BASE_NAME_TRIES 64

void cgroup_journal_with(int (*fn)(const char *base))
{
	base_journal = fn;
}

/* The mount point of the cgroup2 hierarchy (static), or NULL. */
static const char *cgroup2_mount(void)
{
	static char dir[PATH_MAX];
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	const char *found = NULL;

	if (!f)
		return NULL;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(dir, sizeof(dir), "%s", m->mnt_dir);
			found = dir;
			break;
		}
	endmntent(f);
	return found;
}

/* This process's cgroup v2 path ("/" for the root; malloc'd) or NULL. */
static char *own_cgroup(void)
{
	char *text = read_file("/proc/self/cgroup", NULL), *line, *save = NULL, *own = NULL;

	if (!text)
		return NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "0::", 3)) {
			own = xstrdup(line + 3);
			break;
		}
	free(text);
	return own;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -1;
	close(fd);
	return ret;
}

char *cgroup_own_dir(char *why, size_t len)
{
	const char *mnt, *e = getenv("PERTURB_NO_CGROUP");
	char *own, *d;

	if (e && *e && strcmp(e, "0")) {
		snprintf(why, len, "PERTURB_NO_CGROUP is set");
		return NULL;
	}
	if (!(mnt = cgroup2_mount())) {
		snprintf(why, len, "no cgroup2 hierarchy is mounted");
		return NULL;
	}
	if (!(own = own_cgroup())) {
		snprintf(why, len, "perturb's cgroup v2 is not in /proc/self/cgroup");
		return NULL;
	}
	d = xasprintf("%s%s", mnt, strcmp(own, "/") ? own : "");
	free(own);
	return d;
}

int cgroup_usable(char *why, size_t len)
{
	char *d = cgroup_own_dir(why, len);
	int ok = d && !access(d, W_OK);

	if (d && !ok)
		snprintf(why, len, "cannot create a cgroup in '%s': %s", d, strerror(errno));
	free(d);
	return ok ? 0 : -1;
}

/* Make the base; NULL with why. */
static char *make_base(char *why, size_t len)
{
	static const char *const wanted[] = { "memory", "io", "pids" };
	char *own = cgroup_own_dir(why, len), *b = NULL, *p, *ctl;

	if (!own)
		return NULL;
	/* perturb-PID, else perturb-PID-N: a dead process of this pid (pids
	 * are reused) may have left its base, journaled for `perturb restore`
	 * (the bpf tests' perturb killed in its trial left five in a day) */
	for (int n = 1;; n++) {
		b = n == 1 ? xasprintf("%s/perturb-%d", own, (int)self_pid()) :
			     xasprintf("%s/perturb-%d-%d", own, (int)self_pid(), n);
		if (mkdir(b, 0755) == 0)
			break;
		if (errno != EEXIST || n == BASE_NAME_TRIES) {
			snprintf(why, len, "cannot create '%s': %s", b, strerror(errno));
			free(b);
			free(own);
			return NULL;
		}
		free(b);
	}
	free(own);
	/* what the parent hands down, for the cgroups below the base */
	p = xasprintf("%s/cgroup.controllers", b);
	ctl = read_line_file(p);
	free(p);
	p = xasprintf("%s/cgroup.subtree_control", b);
	for (size_t i = 0; ctl && i < ARRAY_SIZE(wanted); i++) {
		const char *c = ctl;
		size_t n = strlen(wanted[i]);
		char plus[16];
		while ((c = strstr(c, wanted[i])) && ((c != ctl && c[-1] != ' ') ||
						      (c[n] && c[n] != ' ')))
			c += n;
		if (!c)
			continue;
		snprintf(plus, sizeof(plus), "+%s", wanted[i]);
		write_str(p, plus);	/* best effort: cpu.stat is there anyway */
	}
	free(p);
	free(ctl);
	return b;
}

const char *cgroup_base(void)
{
	char why[512];

	if (base || base_tried)
		return base;
	base_tried = 1;
	if ((base = make_base(why, sizeof(why)))) {
		static int at_exit;
		base_owner = self_pid();
		if (!at_exit++)
			atexit(cgroup_base_remove);
		if (base_journal && base_journal(base) < 0)
			warning("without a journal, what a killed perturb leaves in cgroup '%s' is "
				"not stopped by 'perturb restore'", base);
	} else {
		warning("cgroups unavailable: %s; runs, daemons and background loads are "
			"stopped by process group only (a process that leaves it, with setsid, "
			"can outlive its run, and 'perturb restore' cannot stop it)", why);
	}
	return base;
}

static int open_in(const char *dir, const char *name, int flags)
{
	char *p = xasprintf("%s/%s", dir, name);
	int fd = open(p, flags | O_CLOEXEC);

	free(p);
	return fd;
}

static void close_fds(struct cgroup *cg)
{
	int *fds[] = { &cg->procs_fd, &cg->dir_fd, &cg->events_fd, &cg->stat_fd, &cg->peak_fd,
		       &cg->cpu_fd, &cg->io_fd };

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static void read_raw(const struct cgroup *cg, struct usage_raw *r);

/* A new cgroup KIND-N below the base, NULL (warning) when it cannot be
 * made.  pooled: a run's, with what reusing it needs. */
static struct cgroup *make_cgroup(const char *kind, int pooled)
{
	struct cgroup *cg;

	if (!cgroup_base())
		return NULL;
	cg = xcalloc(1, sizeof(*cg));
	cg->procs_fd = cg->dir_fd = cg->events_fd = cg->stat_fd = cg->peak_fd = -1;
	cg->cpu_fd = cg->io_fd = -1;
	cg->path = xasprintf("%s/%s-%lu", base, kind,
			     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));	/* runs in threads */
	if (mkdir(cg->path, 0755) < 0) {
		warning("cannot create the cgroup '%s': %s", cg->path, strerror(errno));
		goto fail;
	}
	if ((cg->procs_fd = open_in(cg->path, "cgroup.procs", O_WRONLY)) < 0) {
		warning("cannot open '%s/cgroup.procs': %s", cg->path, strerror(errno));
		rmdir(cg->path);
		goto fail;
	}
	cg->dir_fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cg->events_fd = open_in(cg->path, "cgroup.events", O_RDONLY);
	if (pooled) {
		cg->stat_fd = open_in(cg->path, "cgroup.stat", O_RDONLY);
		cg->cpu_fd = open_in(cg->path, "cpu.stat", O_RDONLY);
		cg->io_fd = open_in(cg->path, "io.stat", O_RDONLY);
		/* the peak since the last write to this fd (Linux 6.12); a
		 * cgroup whose peak cannot be reset is not reused */
		cg->peak_fd = open_in(cg->path, "memory.peak", O_RDWR);
		cg->pooled = cg->events_fd >= 0 && cg->stat_fd >= 0 &&
			     (cg->peak_fd < 0 ? errno == ENOENT : write(cg->peak_fd, "r", 1) == 1);
		read_raw(cg, &cg->at_start);
	}
	return cg;
fail:
	free(cg->path);
	free(cg);
	return NULL;
}

struct cgroup *cgroup_create(const char *kind)
{
	return make_cgroup(kind, 0);
}

struct cgroup *cgroup_take(void)
{
	struct cgroup *cg = NULL;

	pthread_mutex_lock(&pool.mu);
	if (pool.n)
		cg = pool.free[--pool.n];
	pthread_mutex_unlock(&pool.mu);
	if (cg)
		cg->seen_empty = 0;
	return cg ? cg : make_cgroup("run", 1);
}

int cgroup_prepare(int n)
{
	struct cgroup *made[POOL_MAX];
	int k = 0;

	if (n > POOL_MAX)
		n = POOL_MAX;
	pthread_mutex_lock(&pool.mu);
	n -= pool.n;
	pthread_mutex_unlock(&pool.mu);
	while (k < n && (made[k] = make_cgroup("run", 1)))
		k++;
	for (int i = 0; i < k; i++)
		cgroup_destroy(made[i]);	/* into the pool: they are empty */
	return k;
}

int cgroup_pool_size(void)
{
	int n;

	pthread_mutex_lock(&pool.mu);
	n = pool.n;
	pthread_mutex_unlock(&pool.mu);
	return n;
}

void cgroup_no_reuse(struct cgroup *cg)
{
	if (cg)
		cg->pooled = 0;
}

int cgroup_dir_fd(const struct cgroup *cg)
{
	return cg ? cg->dir_fd : -1;
}

/* pid's cgroup v2 path as /proc shows it ("/a/b"), malloc'd, or NULL. */
static char *cgroup_of(pid_t pid)
{
	char p[64], *text, *line, *save = NULL, *in = NULL;

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	if (!(text = read_file(p, NULL)))
		return NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "0::", 3)) {
			in = xstrdup(line + 3);
			break;
		}
	free(text);
	return in;
}

/* Is path (as /proc shows it) dir (a cgroup's folder) or below it? */
static int below(const char *path, const char *dir)
{
	const char *mnt = cgroup2_mount(), *rel;
	size_t n;

	if (!mnt || strncmp(dir, mnt, strlen(mnt)))
		return 0;
	rel = dir + strlen(mnt);
	n = strlen(rel);
	return !strncmp(path, rel, n) && (path[n] == '\0' || path[n] == '/');
}

int cgroup_where(const struct cgroup *cg, pid_t pid)
{
	char *in = cgroup_of(pid);
	int w;

	if (!in)
		return CGROUP_GONE;
	w = cg && below(in, cg->path) ? CGROUP_IN : base && below(in, base) ? CGROUP_OURS
									   : CGROUP_OUTSIDE;
	free(in);
	return w;
}

int cgroup_procs_fd(const struct cgroup *cg)
{
	return cg ? cg->procs_fd : -1;
}

const char *cgroup_path(const struct cgroup *cg)
{
	return cg ? cg->path : NULL;
}

/* The pids in dir/cgroup.procs: their number, and up to max of them. */
static int list_procs(const char *dir, pid_t *pids, int max)
{
	char *p = xasprintf("%s/cgroup.procs", dir), *text = read_file(p, NULL), *s;
	int n = 0;

	free(p);
	if (!text)
		return -1;
	for (s = text; *s; ) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (n < max)
			pids[n] = (pid_t)v;
		n++;
		s = end + (*end == '\n');
	}
	free(text);
	return n;
}

/* 1 when cg (or a cgroup below it) holds a process, 0 when not, -1 when
 * cgroup.events cannot be read: one pread, no directory walk. */
static int populated(const struct cgroup *cg)
{
	char buf[128];
	ssize_t n;

	if (cg->events_fd < 0 || (n = pread(cg->events_fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return -1;
	buf[n] = '\0';
	return strstr(buf, "populated 0") ? 0 : 1;
}

int cgroup_count(struct cgroup *cg)
{
	if (!cg)
		return -1;
	if (cg->seen_empty || !populated(cg)) {
		cg->seen_empty = 1;
		return 0;
	}
	return list_procs(cg->path, NULL, 0);
}

static int wait_empty(const char *dir, double seconds);

int cgroup_settle(const struct cgroup *cg, double seconds)
{
	return cg ? wait_empty(cg->path, seconds) : 0;
}

/* Wait until dir's cgroup.events says "populated 0", at most seconds; 0,
 * or -1 on time-out. */
static int wait_empty(const char *dir, double seconds)
{
	char *p = xasprintf("%s/cgroup.events", dir), buf[256];
	double deadline = now_mono() + seconds;
	int fd = open(p, O_RDONLY | O_CLOEXEC), ret = -1;

	free(p);
	/* a cgroup removed meanwhile (another perturb restoring the same
	 * journal) is empty: it was not "still full after 5 s" */
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		struct pollfd pf = { .fd = fd, .events = POLLPRI };
		double left = deadline - now_mono();

		if (n < 0) {
			if (errno == ENODEV || errno == ENOENT)
				ret = 0;
			break;
		}
		buf[n] = '\0';
		if (strstr(buf, "populated 0")) {
			ret = 0;
			break;
		}
		if (left <= 0)
			break;
		/* the file reports each change of populated; a bound in case */
		poll(&pf, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1);
	}
	close(fd);
	return ret;
}

/* The processes in the tree at dir (its cgroups and theirs), each sent
 * SIGKILL when kill_them. */
static int walk_procs(const char *dir, int kill_them)
{
	pid_t pids[1024];
	DIR *d;
	struct dirent *de;
	int n = list_procs(dir, pids, (int)ARRAY_SIZE(pids));

	if (n < 0)
		return 0;
	for (int i = 0; kill_them && i < n && i < (int)ARRAY_SIZE(pids); i++)
		kill(pids[i], SIGKILL);
	if (!(d = opendir(dir)))
		return n;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			char *sub = xasprintf("%s/%s", dir, de->d_name);
			n += walk_procs(sub, kill_them);
			free(sub);
		}
	closedir(d);
	return n;
}

/* Kill the tree at dir: cgroup.kill, else freeze it and SIGKILL each
 * process (SIGKILL ends frozen tasks).  The number of processes that were
 * in it, or -1 when it is not empty after EMPTY_WAIT_S. */
static int kill_tree(const char *dir)
{
	char *p = xasprintf("%s/cgroup.kill", dir);
	int n = walk_procs(dir, 0);

	if (n && write_str(p, "1") < 0) {
		char *fz = xasprintf("%s/cgroup.freeze", dir);
		write_str(fz, "1");
		walk_procs(dir, 1);
		write_str(fz, "0");
		free(fz);
	}
	free(p);
	if (n && wait_empty(dir, EMPTY_WAIT_S) < 0)
		return -1;
	return n;
}

int cgroup_kill(struct cgroup *cg)
{
	int n;

	if (!cg || cg->seen_empty)
		return 0;
	if (!populated(cg)) {
		cg->seen_empty = 1;
		return 0;
	}
	cg->last_fresh = 0;	/* what was killed adds to the counters */
	cg->pooled = 0;		/* see give_back() */
	if ((n = kill_tree(cg->path)) < 0)
		return error("cannot empty the cgroup '%s': processes are still in it after %g s",
			     cg->path, EMPTY_WAIT_S);
	cg->seen_empty = 1;
	return n;
}

/* "key value" lines of dir/name: the value of key, or -1. */
static double stat_field(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (!strncmp(s, key, n) && s[n] == ' ')
			return strtod(s + n + 1, NULL);
	return -1;
}

/* The text of an open cgroup file (pread from 0), or of dir/name. */
static char *read_cg_file(int fd, const char *dir, const char *name)
{
	char *p, *text;

	if (fd >= 0) {
		char buf[4096];
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			return NULL;
		buf[n] = '\0';
		return xstrdup(buf);
	}
	if (!dir)
		return NULL;	/* not open: not there */
	p = xasprintf("%s/%s", dir, name);
	text = read_file(p, NULL);
	free(p);
	return text;
}

/* The cumulative counters of cpu.stat and io.stat. */
static void read_raw(const struct cgroup *cg, struct usage_raw *r)
{
	char *text;

	memset(r, 0, sizeof(*r));
	/* a pooled cgroup's files are open: what is not open is not there */
	if ((text = cg->pooled ? read_cg_file(cg->cpu_fd, NULL, NULL)
			       : read_cg_file(-1, cg->path, "cpu.stat"))) {
		r->cpu_us = stat_field(text, "usage_usec");
		r->user_us = stat_field(text, "user_usec");
		r->sys_us = stat_field(text, "system_usec");
		r->has_cpu = r->cpu_us >= 0 && r->user_us >= 0 && r->sys_us >= 0;
		free(text);
	}
	if ((text = cg->pooled ? read_cg_file(cg->io_fd, NULL, NULL)
			       : read_cg_file(-1, cg->path, "io.stat"))) {
		/* "MAJ:MIN rbytes=N wbytes=N rios=N ..." a device */
		r->has_io = 1;
		for (const char *s = text; (s = strstr(s, "bytes=")); s += 6) {
			double v = strtod(s + 6, NULL);
			if (s > text && s[-1] == 'r')
				r->io_r += v;
			else if (s > text && s[-1] == 'w')
				r->io_w += v;
		}
		free(text);
	}
}

void cgroup_read_usage(const struct cgroup *cg, struct cgroup_usage *u)
{
	struct cgroup *w = (struct cgroup *)cg;	/* remembers what it read */
	const struct usage_raw *a;
	struct usage_raw r;
	char *text;

	memset(u, 0, sizeof(*u));
	if (!cg)
		return;
	read_raw(cg, &r);
	a = &cg->at_start;	/* zeros for a cgroup made for this tree */
	if (r.has_cpu) {
		u->has_cpu = 1;
		u->cpu_s = (r.cpu_us - a->cpu_us) / 1e6;
		u->user_s = (r.user_us - a->user_us) / 1e6;
		u->sys_s = (r.sys_us - a->sys_us) / 1e6;
	}
	if (r.has_io) {
		u->has_io = 1;
		u->io_read_b = r.io_r - a->io_r;
		u->io_write_b = r.io_w - a->io_w;
	}
	if (cg->pooled) {
		w->last = r;
		w->last_fresh = 1;
	}
	/* a pooled cgroup's peak is read through the fd that was reset */
	if ((text = cg->pooled ? read_cg_file(cg->peak_fd, NULL, NULL)
			       : read_cg_file(-1, cg->path, "memory.peak"))) {
		char *end;
		double v = strtod(text, &end);
		if (end != text) {
			u->has_memory = 1;
			u->memory_peak_b = v;
		}
		free(text);
	}
}

/* rmdir, retried a little: the kernel may still be tearing the cgroup down. */
static int remove_dir(const char *dir)
{
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		if (!rmdir(dir) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/*
 * A run's cgroup, empty, ready for the next run: the pool takes it.  0, or
 * -1 when it is not reusable (cgroups below it, a peak that cannot be
 * reset, killed) or the pool is full.
 *
 * Killed: a cgroup once emptied with cgroup.kill (or by a workload that
 * wrote it) kills every process later cloned into it with SIGKILL at its
 * birth (seen on Linux 6.18: the child's kill counter is taken from its
 * parent's cgroup, not from the one it is cloned into), so it is removed;
 * the next run gets a new one.
 */
static int give_back(struct cgroup *cg)
{
	char *text;
	int ok;

	if (!cg->pooled || (!cg->seen_empty && populated(cg) != 0) ||
	    !(text = read_cg_file(cg->stat_fd, NULL, NULL)))
		return -1;
	ok = stat_field(text, "nr_descendants") == 0;
	free(text);
	if (!ok || (cg->peak_fd >= 0 && pwrite(cg->peak_fd, "r", 1, 0) != 1))
		return -1;
	if (cg->last_fresh)
		cg->at_start = cg->last;
	else
		read_raw(cg, &cg->at_start);
	cg->last_fresh = 0;
	pthread_mutex_lock(&pool.mu);
	ok = base && pool.n < POOL_MAX;
	if (ok)
		pool.free[pool.n++] = cg;
	pthread_mutex_unlock(&pool.mu);
	return ok ? 0 : -1;
}

int cgroup_destroy(struct cgroup *cg)
{
	int n;

	if (!cg)
		return 0;
	n = cgroup_kill(cg);
	if (n >= 0 && !give_back(cg))
		return n;
	close_fds(cg);
	if (remove_dir(cg->path) < 0) {
		error("cannot remove the cgroup '%s': %s", cg->path, strerror(errno));
		n = -1;
	}
	free(cg->path);
	free(cg);
	return n;
}

static int remove_tree(const char *dir);

void cgroup_base_remove(void)
{
	if (!base || base_owner != self_pid())
		return;
	pthread_mutex_lock(&pool.mu);
	for (int i = 0; i < pool.n; i++) {
		close_fds(pool.free[i]);
		free(pool.free[i]->path);
		free(pool.free[i]);
	}
	pool.n = 0;
	pthread_mutex_unlock(&pool.mu);
	kill_tree(base);
	if (remove_tree(base) < 0)
		warning("cannot remove the cgroup '%s': %s", base, strerror(errno));
	else if (base_journal)
		base_journal(NULL);
	free(base);
	base = NULL;
	base_tried = 0;		/* a later study of this process (perturb bisect) makes one */
}

/* Remove dir's cgroups below it, deepest first, then dir. */
static int remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			char *sub = xasprintf("%s/%s", dir, de->d_name);
			if (remove_tree(sub) < 0)
				ret = -1;
			free(sub);
		}
	closedir(d);
	if (remove_dir(dir) < 0)
		ret = -1;
	return ret;
}

/* "perturb-OWNER" (name) or "perturb-OWNER-N", N 2 to BASE_NAME_TRIES */
static int is_base_name(const char *s, const char *name)
{
	size_t n = strlen(name);
	long k;

	if (strncmp(s, name, n))
		return 0;
	if (!s[n])
		return 1;
	return s[n] == '-' && s[n + 1] >= '1' && s[n + 1] <= '9' &&
	       parse_long(s + n + 1, 2, BASE_NAME_TRIES, &k) == 0;
}

int cgroup_purge(const char *path, pid_t owner, char *why, size_t len)
{
	const char *mnt = cgroup2_mount(), *last = strrchr(path, '/');
	char name[64];
	struct stat st;
	size_t ml;
	int n;

	snprintf(name, sizeof(name), "perturb-%d", (int)owner);
	if (!mnt)
		return why_error(why, len, "no cgroup2 hierarchy is mounted: cannot stop what is "
				 "in '%s'", path);
	ml = strlen(mnt);
	if (strncmp(path, mnt, ml) || path[ml] != '/' || strstr(path, "/..") ||
	    !last || !is_base_name(last + 1, name))
		return why_error(why, len, "'%s' is not a cgroup of perturb pid %d below %s",
				 path, (int)owner, mnt);
	if (lstat(path, &st) < 0 && errno == ENOENT)
		return 0;
	if ((n = kill_tree(path)) < 0)
		return why_error(why, len, "cannot empty the cgroup '%s': processes are still "
				 "in it after %g s", path, EMPTY_WAIT_S);
	if (remove_tree(path) < 0)
		return why_error(why, len, "cannot remove the cgroup '%s': %s", path,
				 strerror(errno));
	return n;
}
