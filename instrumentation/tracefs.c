/*
 * tracefs.c - the running kernel's tracing state through libtracefs; see
 * tracefs.h.
 */
#include "tracefs.h"
#include "lib/util.h"

#include <tracefs/tracefs.h>	/* libtracefs (not this folder's tracefs.h) */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <dirent.h>
#include <mntent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRACEFS_DEFAULT "/sys/kernel/tracing"

static char mount_path[4096];

/* ---- lists of strings ---- */

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void strv_push(char ***v, size_t *n, const char *s, size_t len)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrndup(s, len);
	(*v)[*n] = NULL;
}

/* The non-empty lines of text, without leading/trailing blanks. */
static void split_lines(const char *text, char ***v, size_t *n)
{
	*v = NULL;
	*n = 0;
	while (text && *text) {
		const char *e = strchrnul(text, '\n');
		const char *b = text, *t = e;
		while (b < t && (*b == ' ' || *b == '\t'))
			b++;
		while (t > b && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
			t--;
		if (t > b)
			strv_push(v, n, b, (size_t)(t - b));
		text = *e ? e + 1 : e;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* Same strings, in any order. */
static int strv_same_set(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (!strv_has(b, nb, a[i]))
			return 0;
	return 1;
}

/* ---- files of an instance (NULL: the top level) ---- */

/*
 * Read a tracefs file: 0 and a malloc'd string ("" for an empty file), or
 * -1 with errno.  libtracefs returns NULL for an empty file too, so an
 * open() tells the two apart.
 */
static int kread(struct tracefs_instance *in, const char *name, char **out)
{
	char *path;
	int fd;

	*out = tracefs_instance_file_read(in, name, NULL);
	if (*out)
		return 0;
	path = tracefs_instance_get_file(in, name);
	if (!path) {
		errno = ENOMEM;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	if (fd < 0)
		return -1;
	close(fd);
	*out = xstrdup("");
	return 0;
}

static int kwrite(struct tracefs_instance *in, const char *name, const char *value, char *why,
		  size_t len)
{
	if (tracefs_instance_file_write(in, name, value) < 0) {
		int e = errno;
		return why_error(why, len, "cannot write '%s' to %s: %s%s", value, name, strerror(e),
				 e == EPERM && geteuid() == 0 ? " (the kernel refuses it: locked down?)" : "");
	}
	return 0;
}

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
}

/* ---- mount ---- */

const char *ktrace_find_mount(void)
{
	FILE *f = setmntent("/proc/mounts", "re");
	struct mntent *m;
	const char *found = NULL;

	if (!f)
		return NULL;
	while ((m = getmntent(f))) {
		if (strcmp(m->mnt_type, "tracefs"))
			continue;
		/* prefer the standard place when tracefs is mounted twice */
		if (!found || !strcmp(m->mnt_dir, TRACEFS_DEFAULT)) {
			snprintf(mount_path, sizeof(mount_path), "%s", m->mnt_dir);
			found = mount_path;
		}
	}
	endmntent(f);
	return found;
}

/* Where the tools perturb starts (bpftrace, perf, trace-cmd) look for tracefs. */
static int standard_place(const char *dir)
{
	return !strcmp(dir, TRACEFS_DEFAULT) || !strcmp(dir, "/sys/kernel/debug/tracing");
}

const char *ktrace_mount(int *mounted, char *why, size_t len)
{
	const char *p;

	*mounted = 0;
	/* Found or mounted here, never by libtracefs: it would mount tracefs
	 * (or debugfs) on its own and perturb could not unmount it after.
	 * A tracefs mounted only elsewhere (a chroot's /sys, seen in
	 * /proc/mounts) is the same kernel state, but bpftrace and perf do
	 * not look there: it is mounted at the standard place too. */
	if (!(p = ktrace_find_mount()) || !standard_place(p)) {
		if (mount("nodev", TRACEFS_DEFAULT, "tracefs", 0, NULL) < 0) {
			why_error(why, len, "tracefs is not mounted and cannot be mounted at %s: %s",
				  TRACEFS_DEFAULT, strerror(errno));
			return NULL;
		}
		*mounted = 1;
		snprintf(mount_path, sizeof(mount_path), "%s", TRACEFS_DEFAULT);
		p = mount_path;
	}
	if (tracefs_set_tracing_dir((char *)p) < 0) {
		why_error(why, len, "libtracefs does not accept '%s': %s", p, strerror(errno));
		return NULL;
	}
	return p;
}

int ktrace_umount(const char *path, char *why, size_t len)
{
	/* busy: another process has a file of it open (perturb doctor
	 * reading the tracers, a tool), which it may well have found only
	 * because perturb mounted it; detached now (MNT_DETACH), gone from
	 * the mount table at once and freed by the kernel with its last
	 * reader, so the machine is as it was either way */
	if (umount2(path, 0) < 0 && (errno != EBUSY || umount2(path, MNT_DETACH) < 0))
		return why_error(why, len, "cannot unmount tracefs at %s: %s", path, strerror(errno));
	return 0;
}

/* ---- the lock ---- */

int ktrace_root_fd(char *why, size_t len)
{
	const char *p = ktrace_find_mount();
	int fs, mnt, fd;

	if (p) {
		if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return why_error(why, len, "cannot open tracefs at %s: %s", p, strerror(errno));
		return fd;
	}
	/* a mount of its own, attached nowhere: gone with the descriptor */
	if ((fs = fsopen("tracefs", FSOPEN_CLOEXEC)) < 0)
		return why_error(why, len, "tracefs is not mounted and cannot be opened: %s",
				 strerror(errno));
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0) {
		int e = errno;
		close(fs);
		return why_error(why, len, "tracefs is not mounted and cannot be opened: %s",
				 strerror(e));
	}
	close(fs);
	fd = openat(mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		why_error(why, len, "cannot open tracefs: %s", strerror(errno));
	close(mnt);
	return fd;
}

/* The pid holding an flock on the file of fd, from /proc/locks ("1: FLOCK
 * ADVISORY WRITE 1234 00:0d:1 0 EOF"); 0 when unknown (another pid
 * namespace's). */
static long lock_holder(int fd)
{
	struct stat st;
	char *text, *line, *save = NULL, dev[64];
	long pid = 0;

	if (fstat(fd, &st) < 0 || !(text = read_file("/proc/locks", NULL)))
		return 0;
	snprintf(dev, sizeof(dev), "%02x:%02x:%lu", major(st.st_dev), minor(st.st_dev),
		 (unsigned long)st.st_ino);
	for (line = strtok_r(text, "\n", &save); line && !pid; line = strtok_r(NULL, "\n", &save)) {
		char kind[16], at[64];
		long p;
		if (sscanf(line, "%*s %15s %*s %*s %ld %63s", kind, &p, at) == 3 &&
		    !strcmp(kind, "FLOCK") && !strcmp(at, dev) && p > 0)
			pid = p;
	}
	free(text);
	return pid;
}

int ktrace_lock(int wait, char *why, size_t len)
{
	int fd = ktrace_root_fd(why, len);

	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int e = errno;
		long pid;
		if (e == EINTR)
			continue;
		pid = e == EWOULDBLOCK ? lock_holder(fd) : 0;
		close(fd);
		if (e != EWOULDBLOCK)
			return why_error(why, len, "cannot lock tracefs: %s", strerror(e));
		if (pid)
			why_error(why, len, "another perturb (pid %ld) is changing the kernel "
				  "tracing state (it holds the lock on tracefs); wait for it to end",
				  pid);
		else
			why_error(why, len, "another perturb, in another container or pid "
				  "namespace, is changing the kernel tracing state (it holds the "
				  "lock on tracefs); wait for it to end");
		errno = EWOULDBLOCK;	/* held: worth waiting for (journal_lock_kernel) */
		return -1;
	}
	return fd;
}

/* ---- state ---- */

void ktrace_state_release(struct ktrace_state *st)
{
	free(st->tracer);
	free(st->cpu_buffer_kb);
	strv_free(st->events, st->n_events);
	strv_free(st->options, st->n_options);
	strv_free(st->functions, st->n_functions);
	memset(st, 0, sizeof(*st));
}

void ktrace_spec_release(struct ktrace_spec *k)
{
	free(k->tracer);
	strv_free(k->events, k->n_events);
	strv_free(k->functions, k->n_functions);
	strv_free(k->options, k->n_options);
	*k = (struct ktrace_spec)KTRACE_SPEC_INIT;
}

int ktrace_parse_buffer_size(const char *text, long *kb, int *expanded, int *differs)
{
	char *end;
	const char *ex;

	*kb = -1;
	*expanded = 1;
	*differs = 0;
	while (*text == ' ')
		text++;
	if (*text == 'X') {
		*differs = 1;
		return 0;
	}
	errno = 0;
	*kb = strtol(text, &end, 10);
	if (errno || end == text || *kb < 0)
		return -1;
	/* "7 (expanded: 1408)": the buffer is not allocated yet; 1408 is the
	 * size it takes on first use. */
	if ((ex = strstr(end, "(expanded:"))) {
		long n = strtol(ex + 10, &end, 10);
		if (n <= 0)
			return -1;
		*kb = n;
		*expanded = 0;
	}
	return 0;
}

/*
 * The kernel rounds a buffer size up to whole sub-buffers (4 KiB pages less
 * their header): 2048 written reads back 2051.  Two sizes are the same
 * when they differ by less than a sub-buffer.
 */
static int buffer_same(long a, long b)
{
	static long sub = -1;
	if (sub < 0) {
		char *t = NULL;
		sub = 4;
		if (tracefs_file_exists(NULL, "buffer_subbuf_size_kb") &&
		    kread(NULL, "buffer_subbuf_size_kb", &t) == 0 && atol(t) > 0)
			sub = atol(t);
		free(t);
	}
	return labs(a - b) < sub;
}

static int ncpus_with_buffer(void)
{
	static int n = -1;
	if (n < 0) {
		long conf = sysconf(_SC_NPROCESSORS_CONF);
		n = 0;
		for (long c = 0; c < (conf > 0 ? conf : 1024); c++) {
			char name[64];
			snprintf(name, sizeof(name), "per_cpu/cpu%ld", c);
			if (tracefs_dir_exists(NULL, name))
				n = (int)c + 1;
			else if (conf <= 0)
				break;
		}
	}
	return n;
}

static int read_buffer(struct tracefs_instance *in, struct ktrace_state *st, char *why,
		       size_t len)
{
	char *text = NULL;
	int differs, ret = -1;

	if (kread(in, "buffer_size_kb", &text) < 0)
		return why_error(why, len, "cannot read buffer_size_kb: %s", strerror(errno));
	if (ktrace_parse_buffer_size(text, &st->buffer_kb, &st->buffer_expanded, &differs) < 0) {
		why_error(why, len, "unexpected buffer_size_kb '%s'", text);
		goto out;
	}
	if (differs) {
		int n = ncpus_with_buffer();
		st->cpu_buffer_kb = xcalloc(n ? n : 1, sizeof(long));
		st->n_cpu_buffer = n;
		for (int c = 0; c < n; c++) {
			ssize_t kb = tracefs_instance_get_buffer_size(in, c);
			if (kb < 0) {
				why_error(why, len, "cannot read the buffer size of CPU %d: %s", c, strerror(errno));
				goto out;
			}
			st->cpu_buffer_kb[c] = kb;
		}
	}
	ret = 0;
out:
	free(text);
	return ret;
}

int ktrace_read_state(struct tracefs_instance *in, struct ktrace_state *st, char *why,
		      size_t len)
{
	char *text = NULL;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (kread(in, "current_tracer", &st->tracer) < 0) {
		why_error(why, len, "cannot read current_tracer: %s", strerror(errno));
		goto out;
	}
	chomp(st->tracer);
	st->tracing_on = tracefs_trace_is_on(in);
	if (st->tracing_on < 0) {
		why_error(why, len, "cannot read tracing_on: %s", strerror(errno));
		goto out;
	}
	if (read_buffer(in, st, why, len) < 0)
		goto out;
	if (kread(in, "set_event", &text) < 0) {
		why_error(why, len, "cannot read set_event: %s", strerror(errno));
		goto out;
	}
	split_lines(text, &st->events, &st->n_events);
	free(text);
	if (kread(in, "trace_options", &text) < 0) {
		why_error(why, len, "cannot read trace_options: %s", strerror(errno));
		goto out;
	}
	split_lines(text, &st->options, &st->n_options);
	free(text);
	text = NULL;
	/* A locked-down kernel refuses even to show the filter (EPERM). */
	if (kread(in, "set_ftrace_filter", &text) == 0) {
		st->functions_readable = 1;
		if (!strstr(text, "all functions enabled"))
			split_lines(text, &st->functions, &st->n_functions);
	}
	ret = 0;
out:
	free(text);
	if (ret < 0)
		ktrace_state_release(st);
	return ret;
}

static int functions_equal(const struct ktrace_state *a, const struct ktrace_state *b);

static void list_diff(struct strbuf *sb, const char *what, char *const *a, size_t na,
		      char *const *b, size_t nb)
{
	size_t extra = 0, missing = 0;
	const char *ex = NULL, *mi = NULL;
	for (size_t i = 0; i < nb; i++)
		if (!strv_has(a, na, b[i]) && !extra++)
			ex = b[i];
	for (size_t i = 0; i < na; i++)
		if (!strv_has(b, nb, a[i]) && !missing++)
			mi = a[i];
	if (extra)
		strbuf_addf(sb, "%s%s: %zu more (e.g. '%s')", sb->len ? "; " : "", what, extra, ex);
	if (missing)
		strbuf_addf(sb, "%s%s: %zu fewer (e.g. '%s')", sb->len ? "; " : "", what, missing, mi);
}

int ktrace_state_equal(const struct ktrace_state *a, const struct ktrace_state *b,
		       char *diff, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	int eq;

	if (strcmp(a->tracer ? a->tracer : "", b->tracer ? b->tracer : ""))
		strbuf_addf(&sb, "current_tracer '%s', not '%s'", b->tracer, a->tracer);
	if (a->tracing_on != b->tracing_on)
		strbuf_addf(&sb, "%stracing_on %d, not %d", sb.len ? "; " : "", b->tracing_on,
			    a->tracing_on);
	int cpu_differ = a->n_cpu_buffer != b->n_cpu_buffer;
	for (size_t c = 0; !cpu_differ && c < a->n_cpu_buffer; c++)
		cpu_differ = !buffer_same(a->cpu_buffer_kb[c], b->cpu_buffer_kb[c]);
	if (!buffer_same(a->buffer_kb, b->buffer_kb) || cpu_differ)
		strbuf_addf(&sb, "%sbuffer_size_kb %ld%s, not %ld%s", sb.len ? "; " : "",
			    b->buffer_kb, b->n_cpu_buffer ? " (per CPU)" : "",
			    a->buffer_kb, a->n_cpu_buffer ? " (per CPU)" : "");
	if (!strv_same_set(a->events, a->n_events, b->events, b->n_events))
		list_diff(&sb, "enabled events", a->events, a->n_events, b->events, b->n_events);
	if (!strv_same_set(a->options, a->n_options, b->options, b->n_options))
		list_diff(&sb, "trace_options", a->options, a->n_options, b->options, b->n_options);
	if (!functions_equal(a, b))
		list_diff(&sb, "set_ftrace_filter", a->functions, a->n_functions,
			  b->functions, b->n_functions);
	eq = !sb.len;
	if (diff && len)
		snprintf(diff, len, "%s", sb.len ? sb.buf : "");
	strbuf_release(&sb);
	return eq;
}

/* ---- applying ---- */

/* Split "system:event" into malloc'd halves ("*" for a missing system). */
static void split_event(const char *glob, char **sys, char **ev)
{
	const char *c = strchr(glob, ':');
	if (!c) {
		*sys = xstrdup("*");
		*ev = xstrdup(glob);
		return;
	}
	*sys = xstrndup(glob, (size_t)(c - glob));
	*ev = xstrdup(c + 1);
}

static int set_tracing_on(struct tracefs_instance *in, int on, char *why, size_t len)
{
	if ((on ? tracefs_trace_on(in) : tracefs_trace_off(in)) < 0)
		return why_error(why, len, "cannot set tracing_on to %d: %s", on, strerror(errno));
	return 0;
}

static int set_tracer(struct tracefs_instance *in, const char *tracer, char *why, size_t len)
{
	if (tracefs_tracer_set(in, TRACEFS_TRACER_CUSTOM, tracer) < 0) {
		int e = errno;
		return why_error(why, len, "cannot set current_tracer to '%s': %s%s", tracer,
				 strerror(e), e == EPERM && geteuid() == 0 ?
				 " (the kernel refuses it: locked down? function tracers need the qemu backend)" : "");
	}
	return 0;
}

static int set_functions(struct tracefs_instance *in, char *const *f, size_t n, char *why,
			 size_t len)
{
	if (!n) {
		if (tracefs_instance_file_clear(in, "set_ftrace_filter") < 0)
			return why_error(why, len, "cannot clear set_ftrace_filter: %s", strerror(errno));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned flags = (i == 0 ? TRACEFS_FL_RESET : 0) | (i + 1 < n ? TRACEFS_FL_CONTINUE : 0);
		if (tracefs_function_filter(in, f[i], NULL, flags) < 0)
			return why_error(why, len, "cannot set set_ftrace_filter to '%s': %s", f[i],
					 strerror(errno));
	}
	return 0;
}

static int set_buffer_kb(struct tracefs_instance *in, long kb, int cpu, char *why, size_t len)
{
	if (tracefs_instance_set_buffer_size(in, (size_t)kb, cpu) < 0)
		return why_error(why, len, "cannot set buffer_size_kb to %ld: %s", kb, strerror(errno));
	return 0;
}

/* Does "system:event" match the glob? */
static int event_matches(const char *glob, const char *event)
{
	char *gs, *ge, *es, *ee;
	int m;
	split_event(glob, &gs, &ge);
	split_event(event, &es, &ee);
	m = !fnmatch(gs, es, FNM_CASEFOLD) && !fnmatch(ge, ee, FNM_CASEFOLD);
	free(gs);
	free(ge);
	free(es);
	free(ee);
	return m;
}

/* available_events, read once per process (it changes only when modules
 * come and go). */
static char **avail;
static size_t n_avail;

static int load_available(char *why, size_t len)
{
	char *text;
	if (avail)
		return 0;
	if (kread(NULL, "available_events", &text) < 0)
		return why_error(why, len, "cannot read available_events: %s", strerror(errno));
	split_lines(text, &avail, &n_avail);
	free(text);
	if (!avail)
		avail = xcalloc(1, sizeof(char *));
	return 0;
}

int ktrace_event_glob_matches(const char *glob)
{
	char why[256];
	if (load_available(why, sizeof(why)) < 0)
		return 0;
	for (size_t i = 0; i < n_avail; i++)
		if (event_matches(glob, avail[i]))
			return 1;
	return 0;
}

int ktrace_function_glob_matches(const char *glob)
{
	char *text, *line, *save = NULL;
	int found = 0;

	if (kread(NULL, "available_filter_functions", &text) < 0)
		return -1;
	if (!*text) {
		free(text);
		errno = ENOENT;
		return -1;
	}
	/* "name" or "name [module]" a line */
	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " \t")] = '\0';
		found = !fnmatch(glob, line, 0);
	}
	free(text);
	return found;
}

int ktrace_check_names(const struct ktrace_spec *k, const char *path, const char *kernel,
		       char *why, size_t len)
{
	if (k->tracer && !ktrace_tracer_available(NULL, k->tracer))
		return why_error(why, len, "tracer '%s' is not in %s/available_tracers of %s "
				 "(a kernel built without it?)", k->tracer, path, kernel);
	for (size_t i = 0; i < k->n_events; i++)
		if (!ktrace_event_glob_matches(k->events[i]))
			return why_error(why, len, "event '%s' matches no event of %s "
					 "(%s/available_events)", k->events[i], kernel, path);
	for (size_t i = 0; i < k->n_functions; i++)
		if (ktrace_function_glob_matches(k->functions[i]) == 0)
			return why_error(why, len, "function '%s' matches no function of %s "
					 "(%s/available_filter_functions)", k->functions[i],
					 kernel, path);
	return 0;
}

int ktrace_tracer_available(struct tracefs_instance *in, const char *tracer)
{
	char *text, **v = NULL;
	size_t n = 0;
	int found;
	if (kread(in, "available_tracers", &text) < 0)
		return 0;
	for (char *p = text; *p; p++)
		if (*p == ' ')
			*p = '\n';
	split_lines(text, &v, &n);
	found = strv_has(v, n, tracer);
	strv_free(v, n);
	free(text);
	return found;
}

/* The number of available events of system sys (slen bytes). */
static size_t system_size(const char *sys, size_t slen)
{
	size_t n = 0;
	for (size_t i = 0; i < n_avail; i++)
		n += !strncmp(avail[i], sys, slen) && avail[i][slen] == ':';
	return n;
}

static void strv_copy(char ***dst, size_t *nd, char *const *src, size_t n)
{
	*dst = NULL;
	*nd = 0;
	for (size_t i = 0; i < n; i++)
		strv_push(dst, nd, src[i], strlen(src[i]));
}

static void strv_remove(char **v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp(v[i], s))
			continue;
		free(v[i]);
		memmove(&v[i], &v[i + 1], (*n - i) * sizeof(char *));
		(*n)--;
		return;
	}
}

int ktrace_target(const struct ktrace_state *base, const struct ktrace_spec *k,
		  struct ktrace_state *t, char *why, size_t len)
{
	memset(t, 0, sizeof(*t));
	t->tracer = xstrdup(k->tracer ? k->tracer : base->tracer);
	t->tracing_on = k->tracing_on >= 0 ? k->tracing_on : base->tracing_on;
	if (k->buffer_size_kb > 0) {
		t->buffer_kb = k->buffer_size_kb;
		t->buffer_expanded = 1;
	} else {
		t->buffer_kb = base->buffer_kb;
		t->buffer_expanded = base->buffer_expanded;
		if (base->n_cpu_buffer) {
			t->cpu_buffer_kb = xcalloc(base->n_cpu_buffer, sizeof(long));
			memcpy(t->cpu_buffer_kb, base->cpu_buffer_kb, base->n_cpu_buffer * sizeof(long));
			t->n_cpu_buffer = base->n_cpu_buffer;
		}
	}
	strv_copy(&t->options, &t->n_options, base->options, base->n_options);
	for (size_t i = 0; i < k->n_options; i++) {
		const char *o = k->options[i];
		const char *name = strncmp(o, "no", 2) ? o : o + 2;
		char *neg = xasprintf("no%s", name);
		int known = strv_has(t->options, t->n_options, name) ||
			    strv_has(t->options, t->n_options, neg);
		if (!known && !k->tracer) {
			free(neg);
			ktrace_state_release(t);
			return why_error(why, len, "trace option '%s' is not in trace_options", o);
		}
		strv_remove(t->options, &t->n_options, name);
		strv_remove(t->options, &t->n_options, neg);
		strv_push(&t->options, &t->n_options, o, strlen(o));
		free(neg);
	}
	if (k->events) {
		if (load_available(why, len) < 0) {
			ktrace_state_release(t);
			return -1;
		}
		for (size_t i = 0; i < n_avail; i++)
			for (size_t j = 0; j < k->n_events; j++)
				if (event_matches(k->events[j], avail[i])) {
					strv_push(&t->events, &t->n_events, avail[i], strlen(avail[i]));
					break;
				}
	} else {
		strv_copy(&t->events, &t->n_events, base->events, base->n_events);
	}
	t->functions_readable = base->functions_readable;
	if (k->functions) {
		strv_copy(&t->functions, &t->n_functions, k->functions, k->n_functions);
		t->functions_globs = 1;
		t->functions_readable = 1;
	} else {
		strv_copy(&t->functions, &t->n_functions, base->functions, base->n_functions);
	}
	return 0;
}

/*
 * Enable (on) or disable the events of list, one libtracefs call per
 * system: the system's enable file when the list holds all its events,
 * else ^\(a\|b\|c\)$ (GNU basic regex alternation).
 */
static int switch_events(struct tracefs_instance *in, char **list, size_t n, int on, char *why,
			 size_t len)
{
	int ret = 0;

	qsort(list, n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n && !ret;) {
		const char *c = strchr(list[i], ':');
		size_t slen = c ? (size_t)(c - list[i]) : 0, j = i;
		struct strbuf sre = STRBUF_INIT, ere = STRBUF_INIT;
		if (!c) {
			i++;
			continue;
		}
		strbuf_addstr(&sre, "^");
		strbuf_add(&sre, list[i], slen);
		strbuf_addstr(&sre, "$");
		strbuf_addstr(&ere, "^\\(");
		for (; j < n && !strncmp(list[j], list[i], slen + 1); j++)
			strbuf_addf(&ere, "%s%s", j > i ? "\\|" : "", list[j] + slen + 1);
		strbuf_addstr(&ere, "\\)$");
		int whole = !load_available(why, len) && j - i == system_size(list[i], slen);
		errno = 0;
		if ((on ? tracefs_event_enable : tracefs_event_disable)(in, sre.buf,
								     whole ? NULL : ere.buf) < 0)
			ret = why_error(why, len, "cannot %s event '%s': %s", on ? "enable" : "disable",
					list[i], errno ? strerror(errno) : "no such event");
		strbuf_release(&sre);
		strbuf_release(&ere);
		i = j;
	}
	return ret;
}

/* The events of a not in b (malloc'd array of borrowed strings). */
static char **minus(char *const *a, size_t na, char *const *b, size_t nb, size_t *n)
{
	char **v = xcalloc(na + 1, sizeof(char *));
	*n = 0;
	for (size_t i = 0; i < na; i++)
		if (!strv_has(b, nb, a[i]))
			v[(*n)++] = a[i];
	return v;
}

static int functions_equal(const struct ktrace_state *a, const struct ktrace_state *b)
{
	const struct ktrace_state *g = a->functions_globs ? a : b, *f = g == a ? b : a;
	if (!a->functions_readable || !b->functions_readable)
		return 1;
	if (!a->functions_globs && !b->functions_globs)
		return strv_same_set(a->functions, a->n_functions, b->functions, b->n_functions);
	if (!g->n_functions || !f->n_functions)
		return g->n_functions == f->n_functions;
	for (size_t i = 0; i < f->n_functions; i++) {
		int ok = 0;
		for (size_t j = 0; j < g->n_functions && !ok; j++)
			ok = !fnmatch(g->functions[j], f->functions[i], 0);
		if (!ok)
			return 0;
	}
	return 1;
}

/*
 * The options a target means under the tracer now current (cur, read after
 * the switch): each option cur has (as NAME or noNAME) set as the target
 * says, else as it is (the new tracer's own); the target's options that cur
 * does not know belonged to the old tracer and went with it.
 */
static void options_under(const struct ktrace_state *cur, const struct ktrace_state *t,
			  char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < cur->n_options; i++) {
		const char *o = cur->options[i];
		const char *name = strncmp(o, "no", 2) ? o : o + 2;
		char *neg = xasprintf("no%s", name);
		const char *pick = strv_has(t->options, t->n_options, name) ? name :
				   strv_has(t->options, t->n_options, neg) ? neg : o;
		strv_push(out, n, pick, strlen(pick));
		free(neg);
	}
}

int ktrace_set_state(struct tracefs_instance *in, const struct ktrace_state *target,
		     char *did, size_t didlen, char *why, size_t len)
{
	struct ktrace_state cur, after, switched;
	const struct ktrace_state *t = target;
	char **opts = NULL;
	size_t n_opts = 0;
	struct strbuf sb = STRBUF_INIT;
	char diff[1024];
	char **off = NULL, **on = NULL;
	size_t n_off = 0, n_on = 0;
	int ret = -1, have_after = 0, was_on;

	if (did && didlen)
		*did = 0;
	if (ktrace_read_state(in, &cur, why, len) < 0)
		return -1;
	was_on = cur.tracing_on;
	/* Stop recording while the state changes: the change is not traced. */
	if (cur.tracing_on && !ktrace_state_equal(t, &cur, NULL, 0)) {
		if (set_tracing_on(in, 0, why, len) < 0)
			goto out;
		cur.tracing_on = 0;
	}
	if (strcmp(cur.tracer, t->tracer)) {
		if (set_tracer(in, t->tracer, why, len) < 0)
			goto out;
		strbuf_addf(&sb, "current_tracer %s -> %s, ", cur.tracer, t->tracer);
		/* the tracer's options come and go with it */
		ktrace_state_release(&cur);
		if (ktrace_read_state(in, &cur, why, len) < 0)
			goto out;
		options_under(&cur, target, &opts, &n_opts);
		switched = *target;
		switched.options = opts;
		switched.n_options = n_opts;
		t = &switched;
		if (cur.tracing_on && set_tracing_on(in, 0, why, len) < 0)
			goto out;
		cur.tracing_on = 0;
	}
	if (t->functions_readable && cur.functions_readable && !functions_equal(t, &cur)) {
		if (set_functions(in, t->functions, t->n_functions, why, len) < 0)
			goto out;
		strbuf_addf(&sb, "set_ftrace_filter (%zu entries), ", t->n_functions);
	}
	for (size_t i = 0; i < t->n_options; i++) {
		if (strv_has(cur.options, cur.n_options, t->options[i]))
			continue;
		if (kwrite(in, "trace_options", t->options[i], why, len) < 0)
			goto out;
		strbuf_addf(&sb, "option %s, ", t->options[i]);
	}
	int cpu_differ = t->n_cpu_buffer != cur.n_cpu_buffer;
	for (size_t c = 0; !cpu_differ && c < t->n_cpu_buffer; c++)
		cpu_differ = !buffer_same(t->cpu_buffer_kb[c], cur.cpu_buffer_kb[c]);
	if (t->n_cpu_buffer && cpu_differ) {
		for (size_t c = 0; c < t->n_cpu_buffer; c++)
			if (set_buffer_kb(in, t->cpu_buffer_kb[c], (int)c, why, len) < 0)
				goto out;
		strbuf_addstr(&sb, "per-CPU buffer sizes, ");
	} else if (!t->n_cpu_buffer &&
		   (!buffer_same(cur.buffer_kb, t->buffer_kb) || cur.n_cpu_buffer)) {
		if (set_buffer_kb(in, t->buffer_kb, -1, why, len) < 0)
			goto out;
		strbuf_addf(&sb, "buffer_size_kb %ld -> %ld, ", cur.buffer_kb, t->buffer_kb);
	}
	off = minus(cur.events, cur.n_events, t->events, t->n_events, &n_off);
	on = minus(t->events, t->n_events, cur.events, cur.n_events, &n_on);
	if (n_off && switch_events(in, off, n_off, 0, why, len) < 0)
		goto out;
	if (n_on && switch_events(in, on, n_on, 1, why, len) < 0)
		goto out;
	if (n_off || n_on)
		strbuf_addf(&sb, "events %zu enabled -> %zu, ", cur.n_events, t->n_events);
	if (t->tracing_on != cur.tracing_on && set_tracing_on(in, t->tracing_on, why, len) < 0)
		goto out;
	if (was_on != t->tracing_on)
		strbuf_addf(&sb, "tracing_on %d -> %d, ", was_on, t->tracing_on);
	if (ktrace_read_state(in, &after, why, len) < 0)
		goto out;
	have_after = 1;
	if (!ktrace_state_equal(t, &after, diff, sizeof(diff))) {
		why_error(why, len, "the kernel did not take the state: %s", diff);
		goto out;
	}
	ret = 0;
out:
	if (did && didlen) {
		if (sb.len >= 2)
			sb.buf[sb.len - 2] = 0;
		snprintf(did, didlen, "%s", sb.len ? sb.buf : "");
	}
	free(off);
	free(on);
	strbuf_release(&sb);
	ktrace_state_release(&cur);
	if (have_after)
		ktrace_state_release(&after);
	strv_free(opts, n_opts);
	return ret;
}

int ktrace_restore(const struct ktrace_state *prior, char *did, size_t didlen,
		   char *why, size_t len)
{
	return ktrace_set_state(NULL, prior, did, didlen, why, len);
}

int ktrace_apply(struct tracefs_instance *in, const struct ktrace_spec *k, char *why, size_t len)
{
	struct ktrace_state cur, t;
	int ret;

	if (ktrace_read_state(in, &cur, why, len) < 0)
		return -1;
	ret = ktrace_target(&cur, k, &t, why, len);
	ktrace_state_release(&cur);
	if (ret < 0)
		return -1;
	ret = ktrace_set_state(in, &t, NULL, 0, why, len);
	ktrace_state_release(&t);
	return ret;
}

int ktrace_verify(struct tracefs_instance *in, const struct ktrace_spec *k, char *why, size_t len)
{
	struct ktrace_state st;
	struct strbuf sb = STRBUF_INIT;
	char **av = NULL, **want = NULL;
	size_t nav = 0, nwant = 0;
	int ret = -1;

	if (ktrace_read_state(in, &st, why, len) < 0)
		return -1;
	if (k->tracer && strcmp(st.tracer, k->tracer))
		strbuf_addf(&sb, "current_tracer is '%s', not '%s'", st.tracer, k->tracer);
	if (k->tracing_on >= 0 && st.tracing_on != k->tracing_on)
		strbuf_addf(&sb, "%stracing_on is %d, not %d", sb.len ? "; " : "", st.tracing_on,
			    k->tracing_on);
	if (k->buffer_size_kb > 0 && (!buffer_same(st.buffer_kb, k->buffer_size_kb) ||
				      st.n_cpu_buffer))
		strbuf_addf(&sb, "%sbuffer_size_kb is %ld, not %ld", sb.len ? "; " : "",
			    st.buffer_kb, k->buffer_size_kb);
	for (size_t i = 0; i < k->n_options; i++)
		if (!strv_has(st.options, st.n_options, k->options[i]))
			strbuf_addf(&sb, "%strace_options has no '%s'", sb.len ? "; " : "",
				    k->options[i]);
	if (k->functions && st.functions_readable) {
		for (size_t i = 0; i < st.n_functions; i++) {
			int ok = 0;
			for (size_t j = 0; j < k->n_functions && !ok; j++)
				ok = !fnmatch(k->functions[j], st.functions[i], 0);
			if (!ok) {
				strbuf_addf(&sb, "%sset_ftrace_filter has '%s'", sb.len ? "; " : "",
					    st.functions[i]);
				break;
			}
		}
		if (k->n_functions && !st.n_functions)
			strbuf_addf(&sb, "%sset_ftrace_filter is empty", sb.len ? "; " : "");
	}
	if (k->events) {
		if (load_available(why, len) < 0)
			goto out;
		av = avail;
		nav = n_avail;
		for (size_t i = 0; i < nav; i++)
			for (size_t j = 0; j < k->n_events; j++)
				if (event_matches(k->events[j], av[i])) {
					strv_push(&want, &nwant, av[i], strlen(av[i]));
					break;
				}
		if (!strv_same_set(want, nwant, st.events, st.n_events))
			list_diff(&sb, "enabled events", want, nwant, st.events, st.n_events);
	}
	if (sb.len) {
		why_error(why, len, "the kernel did not take the state: %s", sb.buf);
		goto out;
	}
	ret = 0;
out:
	strv_free(want, nwant);
	strbuf_release(&sb);
	ktrace_state_release(&st);
	return ret;
}

/* ---- instances ---- */

#define INSTANCE_PREFIX "perturb-"

int ktrace_instances_supported(void)
{
	return tracefs_dir_exists(NULL, "instances");
}

char *ktrace_instance_name(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint32_t)now_mono_ns();
	return xasprintf(INSTANCE_PREFIX "%d-%08x", (int)getpid(), (unsigned)r);
}

int ktrace_instance_name_valid(const char *name)
{
	const char *p = name + strlen(INSTANCE_PREFIX);
	size_t digits, hex;

	if (strncmp(name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
		return 0;
	digits = strspn(p, "0123456789");
	if (!digits || digits > 10 || p[digits] != '-')
		return 0;
	p += digits + 1;
	hex = strspn(p, "0123456789abcdef");
	return hex == 8 && !p[hex];
}

struct tracefs_instance *ktrace_instance_create(const char *name, char *why, size_t len)
{
	struct tracefs_instance *in;

	if (tracefs_instance_exists(name)) {
		why_error(why, len, "a tracing instance named '%s' exists already", name);
		return NULL;
	}
	errno = 0;
	if (!(in = tracefs_instance_create(name))) {
		why_error(why, len, "cannot create the tracing instance %s/instances/%s: %s",
			  tracefs_tracing_dir(), name, errno ? strerror(errno) : "libtracefs failed");
		return NULL;
	}
	if (!tracefs_instance_is_new(in)) {	/* made by someone else meanwhile */
		tracefs_instance_free(in);
		why_error(why, len, "a tracing instance named '%s' exists already", name);
		return NULL;
	}
	return in;
}

char *ktrace_instance_dir(struct tracefs_instance *in)
{
	char *p = tracefs_instance_get_dir(in);
	char *dir = p ? xstrdup(p) : xasprintf("%s/instances/%s", tracefs_tracing_dir(),
					       tracefs_instance_get_name(in));

	tracefs_put_tracing_file(p);
	return dir;
}

static int remove_dir(const char *path, char *why, size_t len)
{
	if (rmdir(path) == 0)
		return 1;
	if (errno == ENOENT)
		return 0;
	return why_error(why, len, "cannot remove the tracing instance %s: %s%s", path,
			 strerror(errno), errno == EBUSY ? " (a process still has one of its "
			 "files open)" : "");
}

int ktrace_instance_destroy(struct tracefs_instance *in, char *why, size_t len)
{
	char *path = ktrace_instance_dir(in);
	int r = remove_dir(path, why, len);

	free(path);
	tracefs_instance_free(in);
	return r < 0 ? -1 : 0;
}

int ktrace_instance_remove(const char *name, char *why, size_t len)
{
	char *path;
	int r;

	if (!ktrace_instance_name_valid(name))
		return why_error(why, len, "refusing to remove the tracing instance '%s': not a "
				 "name perturb gives", name);
	path = xasprintf("%s/instances/%s", tracefs_tracing_dir(), name);
	r = remove_dir(path, why, len);
	free(path);
	return r;
}

int ktrace_instance_lacks(struct tracefs_instance *in, const struct ktrace_spec *k,
			  char *why, size_t len)
{
	if (k->tracer && !ktrace_tracer_available(in, k->tracer)) {
		snprintf(why, len, "tracer '%s' is not one an instance can have", k->tracer);
		return 1;
	}
	for (size_t i = 0; i < k->n_options; i++) {
		const char *o = k->options[i];
		char *file = xasprintf("options/%s", strncmp(o, "no", 2) ? o : o + 2);
		int top_only = tracefs_file_exists(NULL, file) && !tracefs_file_exists(in, file);
		free(file);
		if (top_only) {
			snprintf(why, len, "trace option '%s' exists at the top level only", o);
			return 1;
		}
	}
	if (k->functions && tracefs_file_exists(NULL, "set_ftrace_filter") &&
	    !tracefs_file_exists(in, "set_ftrace_filter")) {
		snprintf(why, len, "set_ftrace_filter exists at the top level only");
		return 1;
	}
	return 0;
}

/* ---- a session of someone else's at the top level ---- */

/* The top level's files that a session reads or drives: a process holding
 * one open is using the top level. */
struct watched {
	ino_t ino;
	char name[48];
};

static const char *const top_watched[] = { "trace", "trace_pipe", "tracing_on" };
static const char *const cpu_watched[] = { "trace", "trace_pipe", "trace_pipe_raw" };

/* The watched files (malloc'd, *n of them). */
static struct watched *watched_files(int root, size_t *n)
{
	const char *const *top = top_watched, *const *cpu = cpu_watched;
	size_t max = ARRAY_SIZE(top_watched) + ARRAY_SIZE(cpu_watched) * ncpus_with_buffer();
	struct watched *w = xcalloc(max ? max : 1, sizeof(*w));
	struct stat st;

	*n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(top_watched); i++)
		if (fstatat(root, top[i], &st, 0) == 0) {
			w[*n].ino = st.st_ino;
			snprintf(w[(*n)++].name, sizeof(w->name), "%s", top[i]);
		}
	for (int c = 0; c < ncpus_with_buffer(); c++)
		for (size_t i = 0; i < ARRAY_SIZE(cpu_watched); i++) {
			char name[48];
			snprintf(name, sizeof(name), "per_cpu/cpu%d/%s", c, cpu[i]);
			if (fstatat(root, name, &st, 0) == 0) {
				w[*n].ino = st.st_ino;
				snprintf(w[(*n)++].name, sizeof(w->name), "%s", name);
			}
		}
	return w;
}

/* The first watched file pid holds open, or NULL. */
static const char *held_by(long pid, dev_t dev, const struct watched *w, size_t n)
{
	char path[64];
	struct dirent *de;
	struct stat st;
	const char *found = NULL;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	if (!(d = opendir(path)))
		return NULL;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
		    st.st_dev != dev)
			continue;
		for (size_t i = 0; i < n && !found; i++)
			if (w[i].ino == st.st_ino)
				found = w[i].name;
	}
	closedir(d);
	return found;
}

/* "pid 42 (trace-cmd) has trace_pipe open" for each other process holding
 * a watched file (the first three named). */
static void top_readers(struct strbuf *sb)
{
	struct watched *w;
	struct dirent *de;
	struct stat st;
	size_t n, found = 0;
	int root;
	DIR *proc;

	if ((root = open(tracefs_tracing_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	w = watched_files(root, &n);
	if (fstat(root, &st) < 0 || !(proc = opendir("/proc"))) {
		close(root);
		free(w);
		return;
	}
	close(root);
	while ((de = readdir(proc))) {
		long pid = isdigit((unsigned char)de->d_name[0]) ? atol(de->d_name) : 0;
		const char *file;
		char *comm, cpath[64];
		if (pid <= 0 || pid == (long)getpid() || !(file = held_by(pid, st.st_dev, w, n)))
			continue;
		if (found++ >= 3)
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%ld/comm", pid);
		comm = read_line_file(cpath);
		strbuf_addf(sb, "%spid %ld (%s) has %s open", sb->len ? "; " : "", pid,
			    comm ? comm : "?", file);
		free(comm);
	}
	closedir(proc);
	free(w);
	if (found > 3)
		strbuf_addf(sb, " (and %zu other process%s)", found - 3, found == 4 ? "" : "es");
}

int ktrace_top_in_use(char *what, size_t len)
{
	static const struct { const char *file, *empty; } pid_filters[] = {
		{ "set_event_pid", "" }, { "set_ftrace_pid", "no pid" },
	};
	struct strbuf sb = STRBUF_INIT;
	struct ktrace_state st;
	int ret;

	if (ktrace_read_state(NULL, &st, what, len) < 0)
		return -1;
	if (strcmp(st.tracer, "nop"))
		strbuf_addf(&sb, "current_tracer is '%s'", st.tracer);
	if (st.n_events)
		strbuf_addf(&sb, "%s%zu event%s enabled (e.g. '%s')", sb.len ? "; " : "", st.n_events,
			    st.n_events == 1 ? " is" : "s are", st.events[0]);
	for (size_t i = 0; i < ARRAY_SIZE(pid_filters); i++) {
		char *t;
		if (kread(NULL, pid_filters[i].file, &t) < 0)
			continue;	/* missing, or refused (lockdown) */
		chomp(t);
		if (*t && strcmp(t, pid_filters[i].empty))
			strbuf_addf(&sb, "%s%s is set", sb.len ? "; " : "", pid_filters[i].file);
		free(t);
	}
	top_readers(&sb);
	ktrace_state_release(&st);
	ret = sb.len > 0;
	snprintf(what, len, "%s", sb.len ? sb.buf : "");
	strbuf_release(&sb);
	return ret;
}

/* ---- stats ---- */

int ktrace_parse_stats(const char *text, struct ktrace_stats *s)
{
	static const struct { const char *key; size_t off; } fields[] = {
		{ "entries:", offsetof(struct ktrace_stats, entries) },
		{ "overrun:", offsetof(struct ktrace_stats, overrun) },
		{ "commit overrun:", offsetof(struct ktrace_stats, commit_overrun) },
		{ "bytes:", offsetof(struct ktrace_stats, bytes) },
		{ "dropped events:", offsetof(struct ktrace_stats, dropped) },
		{ "read events:", offsetof(struct ktrace_stats, read) },
	};
	unsigned seen = 0;

	while (text && *text) {
		const char *e = strchrnul(text, '\n');
		for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
			size_t kl = strlen(fields[i].key);
			if (strncmp(text, fields[i].key, kl))
				continue;
			char *end;
			unsigned long long v = strtoull(text + kl, &end, 10);
			if (end == text + kl)
				return -1;
			*(uint64_t *)((char *)s + fields[i].off) += v;
			seen |= 1u << i;
		}
		text = *e ? e + 1 : e;
	}
	/* every field but commit overrun and dropped/read (older kernels) */
	return (seen & 0xb) == 0xb ? 0 : -1;
}

int ktrace_read_stats(struct tracefs_instance *in, struct ktrace_stats *s, char *why, size_t len)
{
	int n = ncpus_with_buffer();

	memset(s, 0, sizeof(*s));
	for (int c = 0; c < n; c++) {
		char name[64], *text;
		snprintf(name, sizeof(name), "per_cpu/cpu%d/stats", c);
		if (!tracefs_file_exists(in, name))
			continue;	/* a CPU without a buffer (offline) */
		if (kread(in, name, &text) < 0)
			return why_error(why, len, "cannot read %s: %s", name, strerror(errno));
		int r = ktrace_parse_stats(text, s);
		free(text);
		if (r < 0)
			return why_error(why, len, "unexpected contents of %s", name);
	}
	return 0;
}

static double delta(uint64_t a, uint64_t b)
{
	return b >= a ? (double)(b - a) : 0.0;
}

void ktrace_stats_delta(const struct ktrace_stats *b, const struct ktrace_stats *a,
			double *events, double *lost, double *bytes)
{
	uint64_t wb = b->entries + b->overrun + b->read;
	uint64_t wa = a->entries + a->overrun + a->read;
	*events = delta(wb, wa);
	*lost = delta(b->overrun, a->overrun) + delta(b->dropped, a->dropped);
	*bytes = delta(b->bytes, a->bytes);
}

/* ---- a check that changes nothing ---- */

/* In the child of ktrace_check_readonly(): tracefs mounted (in its own
 * mount namespace when the machine has it nowhere), every check. */
static int check_readonly_here(const struct ktrace_spec *k, char *why, size_t len)
{
	/* what applying k writes (tracing_on always: it is off while the
	 * state changes); an instance is made in instances/ */
	const struct { const char *file; int used; } writes[] = {
		{ "instances", ktrace_instances_supported() },
		{ "tracing_on", 1 },
		{ "current_tracer", k->tracer != NULL },
		{ "set_event", k->events != NULL },
		{ "buffer_size_kb", k->buffer_size_kb > 0 },
		{ "set_ftrace_filter", k->functions != NULL },
		{ "trace_options", k->n_options > 0 },
	};
	struct ktrace_state cur, t;
	const char *path;
	char p[4200];
	struct stat st;
	int mounted;

	if (!(path = ktrace_mount(&mounted, why, len)))
		return -1;
	if (ktrace_check_names(k, path, "this kernel", why, len) < 0 ||
	    ktrace_read_state(NULL, &cur, why, len) < 0)
		return -1;
	if (ktrace_target(&cur, k, &t, why, len) < 0) {
		ktrace_state_release(&cur);
		return -1;
	}
	ktrace_state_release(&cur);
	ktrace_state_release(&t);
	for (size_t i = 0; i < ARRAY_SIZE(writes); i++) {
		if (!writes[i].used)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, writes[i].file);
		if (stat(p, &st) < 0)
			return why_error(why, len, "%s: %s", p, strerror(errno));
		if (!(st.st_mode & S_IWUSR))
			return why_error(why, len, "%s is not writable (mode %04o)", p,
					 (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

int ktrace_check_readonly(const struct ktrace_spec *k, char *why, size_t len)
{
	int pfd[2], st = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return why_error(why, len, "cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return why_error(why, len, "cannot fork: %s", strerror(errno));
	}
	if (!pid) {
		char w[1024] = "";
		int r = -1;

		close(pfd[0]);
		/* a mount namespace of its own, mounts not shared back: a
		 * tracefs mounted here is seen by this child alone.  In a
		 * chroot "/" may be no mount point (EINVAL): then /sys, the
		 * mount tracefs goes below, is made private instead. */
		if (!ktrace_find_mount() &&
		    unshare_mounts_private((const char *const[]){ "/sys", NULL }) < 0)
			snprintf(w, sizeof(w), "cannot read tracefs without mounting it on the "
				 "machine: %s", strerror(errno));
		else
			r = check_readonly_here(k, w, sizeof(w));
		if (r < 0 && write(pfd[1], w, strlen(w)) < 0)
			_exit(3);
		_exit(r < 0 ? 1 : 0);
	}
	close(pfd[1]);
	n = read(pfd[0], why, len ? len - 1 : 0);
	if (len)
		why[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (!n && len)
		snprintf(why, len, "the check of the kernel: block ended unexpectedly");
	return -1;
}
