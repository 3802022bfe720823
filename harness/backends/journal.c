/* journal.c - undo records of what perturb changed; see journal.h */
#include "journal.h"
#include "core/cgroup.h"
#include "core/proc.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOURNAL_MAGIC "perturb-journal 1"
#define KILL_GRACE_S 2.0

static const char *home_dir(void);

const char *journal_dir(void)
{
	static char *dir;
	const char *e;

	if (dir)
		return dir;
	if ((e = getenv("PERTURB_STATE_DIR")) && *e)
		dir = xstrdup(e);
	else if (geteuid() == 0)
		dir = xstrdup("/var/lib/perturb");
	else if ((e = getenv("XDG_STATE_HOME")) && *e)
		dir = xasprintf("%s/perturb", e);
	else
		dir = xasprintf("%s/.local/state/perturb", home_dir());
	return dir;
}

/* $HOME, else the password database's home of the effective user, else
 * "/tmp" (where journal_dir_trusted() refuses what another user made). */
static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && *h)
		return h;
	if ((pw = getpwuid(geteuid())) && pw->pw_dir && *pw->pw_dir)
		return pw->pw_dir;
	return "/tmp";
}

int journal_dir_trusted(const char *dir, char *why, size_t len)
{
	uid_t me = geteuid();
	struct stat st;
	char *p = xstrdup(dir), *slash;
	int ret = -1;

	if (lstat(dir, &st) < 0) {
		why_error(why, len, "cannot use the journal folder '%s': %s", dir, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		why_error(why, len, "refusing the journal folder '%s': it is not a folder "
			  "(a symbolic link or another kind of file)", dir);
		goto out;
	}
	if (st.st_uid != me) {
		why_error(why, len, "refusing the journal folder '%s': it is owned by uid %u, not "
			  "by you (uid %u); a journal names processes to kill, so its folder must be "
			  "yours alone (set PERTURB_STATE_DIR to another one)", dir,
			  (unsigned)st.st_uid, (unsigned)me);
		goto out;
	}
	if (st.st_mode & 077) {
		why_error(why, len, "refusing the journal folder '%s': its mode is %04o, it must be "
			  "0700 (others could plant or read journals): chmod 700 '%s'", dir,
			  (unsigned)(st.st_mode & 07777), dir);
		goto out;
	}
	/* every folder above: root's or yours, and only sticky when others may write */
	while ((slash = strrchr(p, '/'))) {
		*(slash == p ? slash + 1 : slash) = '\0';
		if (stat(p, &st) < 0) {
			why_error(why, len, "cannot use the journal folder '%s': '%s': %s", dir, p,
				  strerror(errno));
			goto out;
		}
		if ((st.st_uid != 0 && st.st_uid != me) ||
		    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
			why_error(why, len, "refusing the journal folder '%s': '%s' above it (uid %u, "
				  "mode %04o) can be changed by another user", dir, p,
				  (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
			goto out;
		}
		if (slash == p)
			break;
	}
	ret = 0;
out:
	free(p);
	return ret;
}

/* A journal file is trusted when it is a regular file of this user that
 * others cannot write.  0, or -1 with why. */
static int journal_file_trusted(const char *path, char *why, size_t len)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return why_error(why, len, "cannot read '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return why_error(why, len, "'%s' is not a regular file", path);
	if (st.st_uid != geteuid())
		return why_error(why, len, "'%s' is owned by uid %u, not by you (uid %u)", path,
				 (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 022)
		return why_error(why, len, "'%s' can be written by others (mode %04o)", path,
				 (unsigned)(st.st_mode & 07777));
	return 0;
}

static void read_boot_id(char *buf, size_t len)
{
	char *s = read_line_file("/proc/sys/kernel/random/boot_id");
	snprintf(buf, len, "%s", s ? s : "unknown");
	free(s);
}

unsigned long long proc_start_time(pid_t pid)
{
	char path[64], *text, *p;
	unsigned long long start = 0;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(text = read_file(path, NULL)))
		return 0;
	/* "pid (comm) S ppid ...": comm may hold spaces and ')' */
	if ((p = strrchr(text, ')')) && p[1] == ' ' && p[2] && p[2] != 'Z' && p[2] != 'X') {
		p += 2;
		/* field 3 is the state; starttime is field 22 */
		for (int f = 3; f < 22 && p; f++) {
			p = strchr(p, ' ');
			if (p)
				p++;
		}
		if (p)
			start = strtoull(p, NULL, 10);
	}
	free(text);
	return start;
}

void journal_init(struct journal *j)
{
	memset(j, 0, sizeof(*j));
	j->owner = self_pid();
	j->owner_start = proc_start_time(j->owner);
	read_boot_id(j->boot_id, sizeof(j->boot_id));
	j->path = xasprintf("%s/journal-%d", journal_dir(), (int)j->owner);
}

static void release_procs(struct journal *j)
{
	for (size_t i = 0; i < j->n_procs; i++)
		free(j->procs[i].what);
	free(j->procs);
	j->procs = NULL;
	j->n_procs = 0;
}

static void release_sysctls(struct journal *j)
{
	for (size_t i = 0; i < j->n_sysctls; i++) {
		free(j->sysctls[i].path);
		free(j->sysctls[i].value);
	}
	free(j->sysctls);
	j->sysctls = NULL;
	j->n_sysctls = 0;
}

void journal_clear_procs(struct journal *j)
{
	release_procs(j);
}

struct journal *journal_self(void)
{
	static struct journal self;

	if (!self.path)
		journal_init(&self);
	return &self;
}

void journal_release(struct journal *j)
{
	free(j->cgroup);
	free(j->path);
	free(j->tracefs);
	free(j->instance);
	ktrace_state_release(&j->prior);
	release_procs(j);
	release_sysctls(j);
	memset(j, 0, sizeof(*j));
}

/* ---- text form ---- */

static void add_list(struct strbuf *sb, const char *key, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s %s\n", key, v[i]);
}

void journal_format(const struct journal *j, struct strbuf *sb)
{
	char sha[65];
	size_t start = sb->len;

	strbuf_addstr(sb, JOURNAL_MAGIC "\n");
	strbuf_addf(sb, "owner %d %llu\n", (int)j->owner, j->owner_start);
	strbuf_addf(sb, "boot_id %s\n", j->boot_id);
	if (j->tracefs)
		strbuf_addf(sb, "tracefs %d %s\n", j->mounted, j->tracefs);
	if (j->instance)
		strbuf_addf(sb, "instance %s\n", j->instance);
	if (j->has_kernel) {
		const struct ktrace_state *s = &j->prior;
		strbuf_addf(sb, "kernel 1\n");
		strbuf_addf(sb, "tracer %s\n", s->tracer);
		strbuf_addf(sb, "tracing_on %d\n", s->tracing_on);
		strbuf_addf(sb, "buffer_kb %ld %d\n", s->buffer_kb, s->buffer_expanded);
		for (size_t i = 0; i < s->n_cpu_buffer; i++)
			strbuf_addf(sb, "cpu_buffer_kb %ld\n", s->cpu_buffer_kb[i]);
		add_list(sb, "event", s->events, s->n_events);
		add_list(sb, "option", s->options, s->n_options);
		strbuf_addf(sb, "functions_readable %d\n", s->functions_readable);
		add_list(sb, "function", s->functions, s->n_functions);
	}
	if (j->cgroup)
		strbuf_addf(sb, "cgroup %s\n", j->cgroup);
	for (size_t i = 0; i < j->n_procs; i++)
		strbuf_addf(sb, "proc %d %llu %s\n", (int)j->procs[i].pid, j->procs[i].start,
			    j->procs[i].what);
	for (size_t i = 0; i < j->n_sysctls; i++)
		strbuf_addf(sb, "sysctl %s %s\n", j->sysctls[i].path, j->sysctls[i].value);
	sha256_hex(sb->buf + start, sb->len - start, sha);
	strbuf_addf(sb, "end %s\n", sha);
}

static int parse_line(struct journal *j, const char *key, const char *val)
{
	struct ktrace_state *s = &j->prior;
	int a;
	long l;
	unsigned long long u;
	char *end;

	if (!strcmp(key, "owner")) {
		if (sscanf(val, "%d %llu", &a, &u) != 2 || a <= 0)
			return -1;
		j->owner = a;
		j->owner_start = u;
	} else if (!strcmp(key, "boot_id")) {
		snprintf(j->boot_id, sizeof(j->boot_id), "%s", val);
	} else if (!strcmp(key, "tracefs")) {
		if (sscanf(val, "%d", &a) != 1 || !strchr(val, ' '))
			return -1;
		j->mounted = a;
		free(j->tracefs);
		j->tracefs = xstrdup(strchr(val, ' ') + 1);
	} else if (!strcmp(key, "instance")) {
		if (!ktrace_instance_name_valid(val))
			return -1;
		free(j->instance);
		j->instance = xstrdup(val);
	} else if (!strcmp(key, "kernel")) {
		j->has_kernel = 1;
	} else if (!strcmp(key, "tracer")) {
		free(s->tracer);
		s->tracer = xstrdup(val);
	} else if (!strcmp(key, "tracing_on")) {
		if (sscanf(val, "%d", &s->tracing_on) != 1)
			return -1;
	} else if (!strcmp(key, "buffer_kb")) {
		if (sscanf(val, "%ld %d", &s->buffer_kb, &s->buffer_expanded) != 2)
			return -1;
	} else if (!strcmp(key, "cpu_buffer_kb")) {
		l = strtol(val, &end, 10);
		if (end == val || *end)
			return -1;
		s->cpu_buffer_kb = xrealloc(s->cpu_buffer_kb, (s->n_cpu_buffer + 1) * sizeof(long));
		s->cpu_buffer_kb[s->n_cpu_buffer++] = l;
	} else if (!strcmp(key, "event")) {
		argv_push(&s->events, &s->n_events, val);
	} else if (!strcmp(key, "option")) {
		argv_push(&s->options, &s->n_options, val);
	} else if (!strcmp(key, "functions_readable")) {
		if (sscanf(val, "%d", &s->functions_readable) != 1)
			return -1;
	} else if (!strcmp(key, "function")) {
		argv_push(&s->functions, &s->n_functions, val);
	} else if (!strcmp(key, "cgroup")) {
		if (*val != '/')
			return -1;
		free(j->cgroup);
		j->cgroup = xstrdup(val);
	} else if (!strcmp(key, "proc")) {
		struct journal_proc p = { 0 };
		int n = 0;
		if (sscanf(val, "%d %llu %n", &a, &u, &n) != 2 || a <= 0 || !n)
			return -1;
		p.pid = a;
		p.start = u;
		p.what = xstrdup(val + n);
		j->procs = xrealloc(j->procs, (j->n_procs + 1) * sizeof(*j->procs));
		j->procs[j->n_procs++] = p;
	} else if (!strcmp(key, "sysctl")) {
		const char *sp = strchr(val, ' ');
		if (!sp || strncmp(val, "/proc/sys/", 10))
			return -1;
		j->sysctls = xrealloc(j->sysctls, (j->n_sysctls + 1) * sizeof(*j->sysctls));
		j->sysctls[j->n_sysctls].path = xstrndup(val, (size_t)(sp - val));
		j->sysctls[j->n_sysctls++].value = xstrdup(sp + 1);
	} else {
		return -1;
	}
	return 0;
}

int journal_parse(const char *text, struct journal *j, char *why, size_t len)
{
	const char *endl, *p;
	char sha[65];
	int ret = -1, lineno = 1;

	memset(j, 0, sizeof(*j));
	if (strncmp(text, JOURNAL_MAGIC "\n", sizeof(JOURNAL_MAGIC)))
		return why_error(why, len, "not a perturb journal (no '%s' first line)", JOURNAL_MAGIC);
	/* the last line: "end SHA256" */
	endl = NULL;
	for (p = text; (p = strstr(p, "\nend ")); p++)
		endl = p + 1;
	if (!endl || strlen(endl) != 4 + 64 + 1 || endl[4 + 64] != '\n')
		return why_error(why, len, "truncated: no 'end' line with a checksum");
	sha256_hex(text, (size_t)(endl - text), sha);
	if (strncmp(endl + 4, sha, 64))
		return why_error(why, len, "checksum mismatch: the file was altered or partly written");
	p = text + sizeof(JOURNAL_MAGIC);
	while (p < endl) {
		const char *e = strchr(p, '\n');
		char *line = xstrndup(p, (size_t)(e - p));
		char *sp = strchr(line, ' ');
		lineno++;
		if (!sp) {
			why_error(why, len, "line %d: '%s' has no value", lineno, line);
			free(line);
			goto out;
		}
		*sp = 0;
		if (parse_line(j, line, sp + 1) < 0) {
			why_error(why, len, "line %d: bad '%s' line", lineno, line);
			free(line);
			goto out;
		}
		free(line);
		p = e + 1;
	}
	if (!j->owner) {
		why_error(why, len, "no owner line");
		goto out;
	}
	if (j->has_kernel && !j->prior.tracer) {
		why_error(why, len, "kernel state without a tracer line");
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		journal_release(j);
	return ret;
}

int journal_load(const char *path, struct journal *j, char *why, size_t len)
{
	size_t n;
	char *text = NULL;
	int ret;

	memset(j, 0, sizeof(*j));
	if (journal_file_trusted(path, why, len) < 0)
		return -1;
	if (!(text = read_file(path, &n)))
		return why_error(why, len, "cannot read '%s': %s", path, strerror(errno));
	if (strlen(text) != n)
		ret = why_error(why, len, "'%s' holds a NUL byte", path);
	else
		ret = journal_parse(text, j, why, len);
	free(text);
	if (!ret)
		j->path = xstrdup(path);
	return ret;
}

/* ---- writing ---- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Written to a temporary file, then renamed over the journal: another
 * process reads the old journal or the new one, never a part.  Not
 * fsync'd: everything a journal records (tracefs, the processes, the
 * cgroup, the /proc/sys values) is kernel state, gone at a reboot, so the
 * file has to outlive perturb's process, not the machine, and the page
 * cache does that.  A journal of an earlier boot is removed unread
 * (recover_one()), one cut short by that boot's crash too.  The five
 * fsyncs of a study's journal were 1 to 5 ms of every `perturb run` on
 * the development VM (issue 25).
 */
int journal_write(struct journal *j)
{
	struct strbuf sb = STRBUF_INIT;
	char *tmp = NULL, why[768];
	int fd = -1, ret = -1, e;

	if ((e = mkdir_p(journal_dir(), 0700)) < 0) {
		error("cannot create the journal folder '%s': %s", journal_dir(), strerror(-e));
		goto out;
	}
	if (journal_dir_trusted(journal_dir(), why, sizeof(why)) < 0) {
		error("%s", why);
		goto out;
	}
	journal_format(j, &sb);
	tmp = xasprintf("%s.tmp", j->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		error("cannot write the journal '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (write_all(fd, sb.buf, sb.len) < 0) {
		error("cannot write the journal '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		error("cannot write the journal '%s': %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, j->path) < 0) {
		error("cannot rename '%s' to '%s': %s", tmp, j->path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret < 0 && tmp)
		unlink(tmp);
	free(tmp);
	strbuf_release(&sb);
	return ret;
}

int journal_add_proc(struct journal *j, pid_t pid, const char *what)
{
	struct journal_proc p = { .pid = pid, .start = proc_start_time(pid) };
	/* one line: no newline in a command */
	p.what = xstrdup(what);
	for (char *c = p.what; *c; c++)
		if (*c == '\n')
			*c = ' ';
	j->procs = xrealloc(j->procs, (j->n_procs + 1) * sizeof(*j->procs));
	j->procs[j->n_procs++] = p;
	return journal_write(j);
}

int journal_set_cgroup(struct journal *j, const char *path)
{
	if (!path && !j->cgroup)
		return 0;
	free(j->cgroup);
	j->cgroup = path ? xstrdup(path) : NULL;
	if (path || j->has_kernel || j->instance || j->n_procs || j->tracefs || j->n_sysctls)
		return journal_write(j);
	return journal_remove(j);
}

int journal_cgroup(const char *path)
{
	return journal_set_cgroup(journal_self(), path);
}

static int write_value(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return error("cannot open %s: %s", path, strerror(errno));
	ok = fprintf(f, "%s\n", value) >= 0;
	if (fclose(f) != 0 || !ok)
		return error("cannot write '%s' to %s: %s", value, path, strerror(errno));
	return 0;
}

int journal_set_sysctl(struct journal *j, const char *path, const char *value)
{
	size_t i;

	for (i = 0; i < j->n_sysctls; i++)
		if (!strcmp(j->sysctls[i].path, path))
			break;
	if (i == j->n_sysctls) {
		char *prior = read_line_file(path);
		if (!prior)
			return error("cannot read %s: %s", path, strerror(errno));
		j->sysctls = xrealloc(j->sysctls, (j->n_sysctls + 1) * sizeof(*j->sysctls));
		j->sysctls[j->n_sysctls].path = xstrdup(path);
		j->sysctls[j->n_sysctls++].value = prior;
		if (journal_write(j) < 0) {
			j->n_sysctls--;
			free(j->sysctls[j->n_sysctls].path);
			free(j->sysctls[j->n_sysctls].value);
			return -1;
		}
	}
	return write_value(path, value);
}

int journal_restore_sysctls(struct journal *j)
{
	int ret = 0;

	for (size_t i = 0; i < j->n_sysctls; i++)
		if (write_value(j->sysctls[i].path, j->sysctls[i].value) < 0)
			ret = -1;
	if (ret == 0)
		release_sysctls(j);
	return ret;
}

int journal_remove(struct journal *j)
{
	release_procs(j);
	ktrace_state_release(&j->prior);
	j->has_kernel = 0;
	free(j->instance);
	j->instance = NULL;
	free(j->tracefs);
	j->tracefs = NULL;
	j->mounted = 0;
	if (j->cgroup)	/* still to be undone after a SIGKILL */
		return journal_write(j);
	if (j->path && unlink(j->path) < 0 && errno != ENOENT)
		return error("cannot remove the journal '%s': %s", j->path, strerror(errno));
	return 0;
}

/* ---- the kernel lock ---- */

/* PERTURB_LOCK_WAIT: how long to wait for another perturb's lock (perturb.1
 * ENVIRONMENT); 0 when unset: refused at once. */
static int lock_wait_s(double *s, char *why, size_t len)
{
	const char *e = getenv("PERTURB_LOCK_WAIT");

	*s = 0;
	if (e && *e && parse_duration(e, s) < 0)
		return why_error(why, len, "PERTURB_LOCK_WAIT='%s' is not a duration (30, 30s, "
				 "2m)", e);
	return 0;
}

/* the kernel lock's descriptor, kept until exit once taken, or until the
 * end of journal_recover() that took it */
static int kernel_lock_fd = -1;

int journal_lock_kernel(char *why, size_t len)
{
	static int waited;
	int fd = kernel_lock_fd;
	double wait_s, deadline;
	int said = 0;

	if (fd >= 0)
		return 0;
	if (lock_wait_s(&wait_s, why, len) < 0)
		return -1;
	if (waited)	/* once: each variant's check asks again */
		wait_s = 0;
	deadline = now_mono() + wait_s;
	/* flock(2) has no time-out: tried again every 20 ms, a stop signal
	 * ending the wait */
	while ((fd = ktrace_lock(0, why, len)) < 0 && errno == EWOULDBLOCK &&
	       now_mono() < deadline) {
		if (!said++)
			note("waiting up to %gs (PERTURB_LOCK_WAIT): %s", wait_s, why);
		if (proc_poll(NULL, 0, fmin(deadline, now_mono() + 0.02), 1) == PROC_STOP)
			return why_error(why, len, "stopped while waiting for the lock on tracefs");
	}
	waited |= said;
	if (fd < 0 && said)
		snprintf(why + strlen(why), len - strlen(why), " (waited %gs)", wait_s);
	kernel_lock_fd = fd;
	return fd < 0 ? -1 : 0;
}

const char *journal_tracefs(char *why, size_t len)
{
	struct journal *j = journal_self();
	const char *path;
	int mounted = 0;

	if (journal_lock_kernel(why, len) < 0 || !(path = ktrace_mount(&mounted, why, len)))
		return NULL;
	if (mounted) {
		free(j->tracefs);
		j->tracefs = xstrdup(path);
		j->mounted = 1;
		if (journal_write(j) < 0) {
			ktrace_umount(path, why, len);
			j->mounted = 0;
			why_error(why, len, "cannot write the journal '%s'", j->path);
			return NULL;
		}
	}
	return path;
}

/* ---- recovery ---- */

static int is_journal_name(const char *name)
{
	size_t n = strlen(name);
	return !strncmp(name, "journal-", 8) && n > 8 && strcmp(name + n - 4, ".tmp");
}

/* Is the journal's owner alive (and so the journal not stale)? */
static int owner_alive(const struct journal *j, const char *boot_id)
{
	if (strcmp(j->boot_id, boot_id))
		return 0;
	if (j->owner == self_pid())
		return 1;
	return proc_start_time(j->owner) == j->owner_start && j->owner_start;
}

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

/* SIGTERM to the group, SIGKILL after a grace period; only while pid is
 * still the process that was recorded. */
static int stop_proc(const struct journal_proc *p)
{
	double deadline = now_mono() + KILL_GRACE_S;

	if (!p->start || proc_start_time(p->pid) != p->start)
		return 0;
	kill(-p->pid, SIGTERM);
	kill(p->pid, SIGTERM);
	kill(-p->pid, SIGCONT);
	while (now_mono() < deadline) {
		if (proc_start_time(p->pid) != p->start)
			return 1;
		nap(0.01);
	}
	if (proc_start_time(p->pid) == p->start) {
		kill(-p->pid, SIGKILL);
		kill(p->pid, SIGKILL);
	}
	return 1;
}

/* Remove the journal's instance and put the top level's prior state back. */
static int restore_kernel(FILE *out, const struct journal *j)
{
	char why[1024], did[1024];
	const char *path;
	int mounted_now = 0, ret = -1, r;

	if (journal_lock_kernel(why, sizeof(why)) < 0) {
		error("cannot restore the kernel tracing state of '%s': %s", j->path, why);
		return -1;
	}
	if (!(path = ktrace_mount(&mounted_now, why, sizeof(why)))) {
		error("cannot restore the kernel tracing state of '%s': %s", j->path, why);
		return -1;
	}
	if (j->instance) {
		if ((r = ktrace_instance_remove(j->instance, why, sizeof(why))) < 0) {
			error("cannot restore the kernel tracing state of '%s': %s", j->path, why);
			goto out;
		}
		fprintf(out, r ? "perturb: removed the tracing instance %s\n" :
			"perturb: the tracing instance %s was already gone\n", j->instance);
	}
	if (j->has_kernel) {
		if (ktrace_restore(&j->prior, did, sizeof(did), why, sizeof(why)) < 0) {
			error("cannot restore the kernel tracing state of '%s': %s", j->path, why);
			goto out;
		}
		fprintf(out, "perturb: restored the kernel tracing state: %s\n",
			*did ? did : "it was already as before");
	}
	ret = 0;
out:
	/* unmount what that perturb (or this call) mounted */
	if ((mounted_now || (j->mounted && j->tracefs && !strcmp(j->tracefs, path)))) {
		if (ktrace_umount(path, why, sizeof(why)) < 0)
			warning("%s", why);
		else
			fprintf(out, "perturb: unmounted tracefs from %s\n", path);
	}
	return ret;
}

/* The journal at path is gone since the folder was read: a perturb that
 * was running then removed it at its end (two perturbs at once share the
 * folder), nothing to recover. */
static int vanished(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 && errno == ENOENT;
}

/* This boot's start (/proc/stat's btime, seconds since the epoch); 0 when
 * unknown. */
static long long boot_time(void)
{
	size_t n;
	char *text = read_file("/proc/stat", &n), *p;
	long long t = 0;

	if (text && (p = strstr(text, "\nbtime ")))
		t = strtoll(p + 7, NULL, 10);
	free(text);
	return t > 0 ? t : 0;
}

/* Was the journal at path last written before this boot began?  Then what
 * it recorded is gone, even where the crash that ended that boot left it
 * unreadable (journal_write() does not fsync). */
static int written_before_boot(const char *path)
{
	long long boot = boot_time();
	struct stat st;

	return boot > 0 && lstat(path, &st) == 0 && (long long)st.st_mtime < boot;
}

static int recover_one(FILE *out, const char *path, const char *boot_id, int report_live,
		       int *found)
{
	struct journal j;
	char why[512];
	int ret = 0;

	if (journal_file_trusted(path, why, sizeof(why)) < 0) {
		if (vanished(path))
			return 0;
		(*found)++;
		return error("refusing the journal %s: perturb trusts only journals of yours that "
			     "no one else can write; nothing it names was touched", why);
	}
	if (journal_load(path, &j, why, sizeof(why)) < 0) {
		if (vanished(path))
			return 0;
		(*found)++;
		if (written_before_boot(path)) {
			fprintf(out, "perturb: the journal '%s' is from an earlier boot and cannot "
				"be read (%s): the kernel state it recorded did not survive the "
				"reboot; removed it\n", path, why);
			goto remove;
		}
		return error("the journal '%s' is corrupt: %s; the state it recorded is unknown: "
			     "check the tracing state (%s) by hand, then remove the file",
			     path, why, "/sys/kernel/tracing");
	}
	if (owner_alive(&j, boot_id)) {
		if (report_live && j.owner != self_pid())
			fprintf(out, "perturb: perturb pid %d is running (journal '%s'): it restores "
				"its own changes when it ends\n", (int)j.owner, path);
		goto out;
	}
	(*found)++;
	if (strcmp(j.boot_id, boot_id)) {
		fprintf(out, "perturb: the journal '%s' is from an earlier boot: the kernel state "
			"it recorded did not survive the reboot; removed it\n", path);
		goto remove;
	}
	fprintf(out, "perturb: found the journal of perturb pid %d, which is gone: %s\n",
		(int)j.owner, path);
	for (size_t i = 0; i < j.n_procs; i++) {
		if (stop_proc(&j.procs[i]))
			fprintf(out, "perturb: stopped %s (pid %d)\n", j.procs[i].what, (int)j.procs[i].pid);
		else
			fprintf(out, "perturb: %s (pid %d) had already ended\n", j.procs[i].what,
				(int)j.procs[i].pid);
	}
	if (j.cgroup) {
		int n = cgroup_purge(j.cgroup, j.owner, why, sizeof(why));
		if (n < 0) {
			ret = error("cannot stop what perturb pid %d left: %s", (int)j.owner, why);
			goto out;
		}
		if (n)
			fprintf(out, "perturb: stopped %d process%s left in cgroup %s\n", n,
				n == 1 ? "" : "es", j.cgroup);
		fprintf(out, "perturb: removed cgroup %s\n", j.cgroup);
	}
	for (size_t i = 0; i < j.n_sysctls; i++) {
		if (write_value(j.sysctls[i].path, j.sysctls[i].value) < 0) {
			ret = -1;
			goto out;
		}
		fprintf(out, "perturb: put %s back to %s\n", j.sysctls[i].path, j.sysctls[i].value);
	}
	if ((j.has_kernel || j.instance) && restore_kernel(out, &j) < 0) {
		ret = -1;
		goto out;
	}
	if (!j.has_kernel && !j.instance && j.mounted && j.tracefs && ktrace_find_mount() &&
	    !strcmp(ktrace_find_mount(), j.tracefs)) {
		if (ktrace_umount(j.tracefs, why, sizeof(why)) < 0)
			warning("%s", why);
		else
			fprintf(out, "perturb: unmounted tracefs from %s\n", j.tracefs);
	}
remove:
	if (unlink(path) < 0 && errno != ENOENT)
		ret = error("cannot remove the journal '%s': %s", path, strerror(errno));
out:
	journal_release(&j);
	return ret;
}

static int scan(FILE *out, int *found, int dry, int report_live)
{
	const char *dir = journal_dir();
	DIR *d;
	struct dirent *de;
	char boot_id[64], why[768];
	struct stat st;
	int ret = 0;

	*found = 0;
	if (lstat(dir, &st) < 0 && errno == ENOENT)
		return 0;
	if (journal_dir_trusted(dir, why, sizeof(why)) < 0) {
		(*found)++;
		if (!dry)
			error("%s", why);
		return -1;
	}
	if (!(d = opendir(dir)))
		return 0;
	read_boot_id(boot_id, sizeof(boot_id));
	while ((de = readdir(d))) {
		if (!is_journal_name(de->d_name))
			continue;
		char *path = xasprintf("%s/%s", dir, de->d_name);
		if (dry) {
			struct journal j;
			char why[256];
			if (journal_load(path, &j, why, sizeof(why)) < 0 ? !vanished(path) :
			    !owner_alive(&j, boot_id))
				(*found)++;
			journal_release(&j);
		} else if (recover_one(out, path, boot_id, report_live, found) < 0) {
			ret = -1;
		}
		free(path);
	}
	closedir(d);
	return ret;
}

int journal_recover(FILE *out, int report_live, int *found)
{
	int had_lock = kernel_lock_fd >= 0;
	int n = 0, ret = scan(out, &n, 0, report_live);

	/* the lock a restore took goes with it: a study of no kernel
	 * variant that recovered a killed perturb's state held it to its
	 * end, and kept another perturb's kernel variants out */
	if (!had_lock && kernel_lock_fd >= 0) {
		close(kernel_lock_fd);
		kernel_lock_fd = -1;
	}
	if (found)
		*found = n;
	fflush(out);
	return ret;
}

int journal_recover_file(FILE *out, const char *path, int *found)
{
	char boot_id[64];

	*found = 0;
	read_boot_id(boot_id, sizeof(boot_id));
	return recover_one(out, path, boot_id, 0, found);
}

int journal_stale_exists(void)
{
	int n = 0;
	scan(stderr, &n, 1, 0);
	return n > 0;
}
