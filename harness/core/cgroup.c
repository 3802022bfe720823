/* cgroup.c - a cgroup v2 around each tree of processes; see cgroup.h. */
#include "cgroup.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long a killed tree may take to be gone. */
#define EMPTY_WAIT_S 5.0

struct cgroup {
	char *path;
	int procs_fd;
};

static char *base;		/* OWN/perturb-PID, NULL when none */
static pid_t base_owner;	/* the process that made it */
static int base_tried;
static unsigned long seq;

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

/* Make the base; NULL with why. */
static char *make_base(char *why, size_t len)
{
	static const char *const wanted[] = { "memory", "io", "pids" };
	const char *mnt, *e = getenv("PERTURB_NO_CGROUP");
	char *own = NULL, *b = NULL, *p, *ctl;

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
	b = xasprintf("%s%s/perturb-%d", mnt, strcmp(own, "/") ? own : "", (int)getpid());
	free(own);
	if (mkdir(b, 0755) < 0) {
		snprintf(why, len, "cannot create '%s': %s", b, strerror(errno));
		free(b);
		return NULL;
	}
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
		base_owner = getpid();
		atexit(cgroup_base_remove);
	} else {
		warning("cgroups unavailable: %s; runs, daemons and background loads are "
			"stopped by process group only (a process that leaves it, with setsid, "
			"can outlive its run, and 'perturb restore' cannot stop it)", why);
	}
	return base;
}

struct cgroup *cgroup_create(const char *kind)
{
	struct cgroup *cg;
	char *p;

	if (!cgroup_base())
		return NULL;
	cg = xcalloc(1, sizeof(*cg));
	cg->path = xasprintf("%s/%s-%lu", base, kind,
			     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));	/* runs in threads */
	if (mkdir(cg->path, 0755) < 0) {
		warning("cannot create the cgroup '%s': %s", cg->path, strerror(errno));
		goto fail;
	}
	p = xasprintf("%s/cgroup.procs", cg->path);
	cg->procs_fd = open(p, O_WRONLY | O_CLOEXEC);
	free(p);
	if (cg->procs_fd < 0) {
		warning("cannot open '%s/cgroup.procs': %s", cg->path, strerror(errno));
		rmdir(cg->path);
		goto fail;
	}
	return cg;
fail:
	free(cg->path);
	free(cg);
	return NULL;
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

int cgroup_count(const struct cgroup *cg)
{
	return cg ? list_procs(cg->path, NULL, 0) : -1;
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
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		struct pollfd pf = { .fd = fd, .events = POLLPRI };
		double left = deadline - now_mono();

		if (n < 0)
			break;
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

	if (!cg)
		return 0;
	if ((n = kill_tree(cg->path)) < 0)
		return error("cannot empty the cgroup '%s': processes are still in it after %g s",
			     cg->path, EMPTY_WAIT_S);
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

void cgroup_read_usage(const struct cgroup *cg, struct cgroup_usage *u)
{
	char *p, *text;

	memset(u, 0, sizeof(*u));
	if (!cg)
		return;
	p = xasprintf("%s/cpu.stat", cg->path);
	if ((text = read_file(p, NULL))) {
		double use = stat_field(text, "usage_usec"), us = stat_field(text, "user_usec"),
		       sy = stat_field(text, "system_usec");
		if (use >= 0 && us >= 0 && sy >= 0) {
			u->has_cpu = 1;
			u->cpu_s = use / 1e6;
			u->user_s = us / 1e6;
			u->sys_s = sy / 1e6;
		}
		free(text);
	}
	free(p);
	p = xasprintf("%s/memory.peak", cg->path);
	if ((text = read_line_file(p))) {
		char *end;
		double v = strtod(text, &end);
		if (end != text) {
			u->has_memory = 1;
			u->memory_peak_b = v;
		}
		free(text);
	}
	free(p);
	p = xasprintf("%s/io.stat", cg->path);
	if ((text = read_file(p, NULL))) {
		/* "MAJ:MIN rbytes=N wbytes=N rios=N ..." a device */
		u->has_io = 1;
		for (const char *s = text; (s = strstr(s, "bytes=")); s += 6) {
			double v = strtod(s + 6, NULL);
			if (s > text && s[-1] == 'r')
				u->io_read_b += v;
			else if (s > text && s[-1] == 'w')
				u->io_write_b += v;
		}
		free(text);
	}
	free(p);
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

int cgroup_destroy(struct cgroup *cg)
{
	int n;

	if (!cg)
		return 0;
	n = cgroup_kill(cg);
	close(cg->procs_fd);
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
	if (!base || base_owner != getpid())
		return;
	kill_tree(base);
	if (remove_tree(base) < 0)
		warning("cannot remove the cgroup '%s': %s", base, strerror(errno));
	free(base);
	base = NULL;
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
	    !last || strcmp(last + 1, name))
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
