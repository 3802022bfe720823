/* lttng.c - the lttng: block on the host: a private LTTng session daemon
 * and per-run accounting; see lttng.h */
#include "lttng.h"
#include "backend.h"
#include "core/proc.h"
#include "core/result.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCK_PATH "/run/perturb-lttng.lock"
#define READY_MARK "perturb: lttng-sessiond ready"
#define SESSION "perturb"
#define CHANNEL "perturb"
/* How long liblttng-ust's constructor may wait for the session's rules
 * (ms): it returns as soon as the daemon has sent them, so the workload's
 * first event is recorded; the bound only matters when the daemon hangs. */
#define REGISTER_TIMEOUT_MS "10000"
#define CMD_TIMEOUT_S 120.0

struct lttng_host {
	char *dir;		/* /tmp/perturb-lttng-PID-XXXXXX */
	int lock_fd;
	struct daemon *d;
	int created;		/* the session exists */
	char **tool_env;	/* lttng's and babeltrace2's: LTTNG_HOME set */
	char **env;		/* the workload's: the preloads too */
	int wait_existed[2];	/* /dev/shm wait files, before */
	char *wait_path[2];
	unsigned long long discarded, lost;	/* as last read */
	char *why;		/* a failure is said here, the first one, in one
				   line (a trial's reason), not printed; NULL:
				   printed */
	size_t why_len;
};

/* A failure of h's: printed, or h->why's first line (lttng_host_start()).
 * -1. */
static int PRINTF(2, 3) host_fail(struct lttng_host *h, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (!h->why)
		error("%s", sb.buf);
	else if (!h->why[0])
		snprintf(h->why, h->why_len, "%s", sb.buf);
	strbuf_release(&sb);
	return -1;
}

/* ---- the lttng client in the daemon's /run ---- */

/*
 * Run argv to its end, stdout and stderr in *out (malloc'd, always set),
 * in a mount namespace of its own whose /run is run (when not NULL).
 * Returns its exit status, or -1 (killed at the time-out, or not run).
 */
static int run_in(const char *run, char *const *argv, char *const *envp, char **out)
{
	struct strbuf sb = STRBUF_INIT;
	int p[2], status = 0, ret = -1;
	double deadline = now_mono() + CMD_TIMEOUT_S;
	char buf[4096];
	pid_t pid;

	*out = NULL;
	if (pipe2(p, O_CLOEXEC) < 0) {
		*out = xasprintf("cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) < 0) {
		*out = xasprintf("cannot fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		int fd = open("/dev/null", O_RDONLY);
		sigset_t none;
		/* perturb blocks its stop signals outside its waits: not the child */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (fd >= 0)
			dup2(fd, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (run && (unshare_mounts_private((const char *const[]){ "/run", NULL }) < 0 ||
			    mount(run, "/run", NULL, MS_BIND, NULL) < 0)) {
			dprintf(2, "cannot enter the session daemon's /run: %s\n", strerror(errno));
			_exit(127);
		}
		if (envp)
			environ = (char **)envp;
		execvp(argv[0], argv);
		dprintf(2, "cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		ssize_t k;
		int r = proc_poll(&pf, 1, deadline, 0);
		if (r == 0) {
			kill(pid, SIGKILL);
			strbuf_addf(&sb, "\n(killed after %.0f s)", CMD_TIMEOUT_S);
			break;
		}
		if (r < 0 && errno != EINTR)
			break;
		if (r < 0)
			continue;
		k = read(p[0], buf, sizeof(buf));
		if (k > 0)
			strbuf_add(&sb, buf, (size_t)k);
		else if (k == 0 || errno != EINTR)
			break;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
	while (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = '\0';
	*out = sb.len ? strbuf_detach(&sb) : xstrdup("");
	strbuf_release(&sb);
	return ret;
}

/* `lttng ARGS...` against h's daemon; 0, or -1 printed (what it said). */
static int lttng(struct lttng_host *h, char **out, ...)
{
	char *argv[32], *run = xasprintf("%s/run", h->dir), *said;
	size_t n = 0;
	va_list ap;
	int r;

	argv[n++] = "lttng";
	va_start(ap, out);
	while (n < ARRAY_SIZE(argv) - 1 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	r = run_in(run, argv, h->tool_env, &said);
	free(run);
	if (r != 0) {
		char *cmd = proc_argv_string(argv);
		/* one line for a reason, all of it on the terminal */
		char *line = h->why ? said_line(said, "Error: ", NULL) : NULL;
		const char *text = h->why ? line : said;
		host_fail(h, "lttng: '%s' failed: %s", cmd, text && *text ? text : "no message");
		free(line);
		free(cmd);
		free(said);
		return -1;
	}
	if (out)
		*out = said;
	else
		free(said);
	return 0;
}

/* ---- files ---- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf path (without crossing mounts); 0 or -1. */
static int remove_tree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static unsigned long long tree_bytes, tree_streams;

static int size_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	if (flag == FTW_F) {
		tree_bytes += (unsigned long long)st->st_size;
		/* a stream: a file of a channel (not metadata, not an index) */
		if (strcmp(path + f->base, "metadata") && !strstr(path, "/index/"))
			tree_streams++;
	}
	return 0;
}

char *lttng_wrapper_path(const char *name)
{
	char *pat = xasprintf("/usr/lib/*/liblttng-ust-%s-wrapper.so.1", name), *found = NULL;
	const char *more[] = { "/usr/lib", "/usr/local/lib", "/usr/lib64" };
	glob_t g;

	if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc)
		found = xstrdup(g.gl_pathv[0]);
	globfree(&g);
	free(pat);
	for (size_t i = 0; !found && i < ARRAY_SIZE(more); i++) {
		char *p = xasprintf("%s/liblttng-ust-%s-wrapper.so.1", more[i], name);
		if (file_exists(p))
			found = p;
		else
			free(p);
	}
	return found;
}

/*
 * The folders of sessions whose perturb is gone (killed: `perturb restore`
 * stops their daemon, but knows nothing of the folder), removed under the
 * lock, so that no live session's folder is touched.  The folder's name
 * holds its perturb's pid: /tmp/perturb-lttng-PID-XXXXXX.
 */
static void remove_stale(void)
{
	glob_t g;

	if (glob("/tmp/perturb-lttng-[0-9]*-*", GLOB_ONLYDIR, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		long pid = strtol(g.gl_pathv[i] + strlen("/tmp/perturb-lttng-"), NULL, 10);
		if (pid > 0 && pid != getpid() && kill((pid_t)pid, 0) < 0 && errno == ESRCH &&
		    remove_tree(g.gl_pathv[i]) == 0)
			note("removed '%s', left by a perturb that was killed", g.gl_pathv[i]);
	}
	globfree(&g);
}

/* ---- what the host can do ---- */

int lttng_kernel_unavailable(char *why, size_t len)
{
	struct utsname u;
	char *s, *pat;
	glob_t g;
	int found;

	if (!file_exists("/proc/modules")) {
		why_error(why, len, "this kernel has no loadable module support (no "
			  "/proc/modules): lttng-modules cannot load");
		return 1;
	}
	if ((s = read_line_file("/proc/sys/kernel/modules_disabled")) && atoi(s) != 0) {
		free(s);
		why_error(why, len, "module loading is disabled (kernel.modules_disabled=1): "
			  "lttng-modules cannot load");
		return 1;
	}
	free(s);
	if ((s = read_line_file("/sys/kernel/security/lockdown")) && !strstr(s, "[none]")) {
		why_error(why, len, "the kernel is locked down (%s): it refuses lttng-modules, "
			  "which are not signed with its key", s);
		free(s);
		return 1;
	}
	free(s);
	uname(&u);
	pat = xasprintf("/lib/modules/%s/*/*/lttng-tracer.ko*", u.release);
	found = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc;
	globfree(&g);
	free(pat);
	if (!found) {
		pat = xasprintf("/lib/modules/%s/*/*/*/lttng-tracer.ko*", u.release);
		found = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc;
		globfree(&g);
		free(pat);
	}
	if (!found) {
		why_error(why, len, "no lttng-modules for the running kernel %s (none under "
			  "/lib/modules/%s; lttng-modules-dkms builds them against "
			  "linux-headers-%s)", u.release, u.release, u.release);
		return 1;
	}
	return 0;
}

int lttng_private_mounts_unavailable(char *why, size_t len)
{
	char other[512];

	/* the daemon's shell makes /dev/shm private, or /dev where /dev/shm
	 * is no mount point (lttng_host_start()) */
	return private_mounts_unavailable((const char *const[]){ "/run", "/dev/shm", NULL }, why,
					  len) &&
	       private_mounts_unavailable((const char *const[]){ "/run", "/dev", NULL }, other,
					  sizeof(other));
}

int lttng_host_check(const struct variant *v, int dry, char *why, size_t len)
{
	const struct lttng_spec *l = v->lttng;
	struct lttng_host *h;
	char msg[512], **env;
	int r;

	if (geteuid() != 0)
		return why_error(why, len, "variant '%s': lttng: needs root (its session daemon "
				 "runs in a mount namespace of its own)", v->name);
	if (!program_exists("lttng") || !program_exists("lttng-sessiond"))
		return why_error(why, len, "variant '%s': lttng: needs the programs 'lttng' and "
				 "'lttng-sessiond' (Debian package: lttng-tools)", v->name);
	if (l->n_kernel && lttng_kernel_unavailable(msg, sizeof(msg)))
		return why_error(why, len, "variant '%s': lttng: kernel events are unavailable on "
				 "this host: %s (a boot: variant traces the kernel in its guest)",
				 v->name, msg);
	if (lttng_private_mounts_unavailable(msg, sizeof(msg)))
		return why_error(why, len, "variant '%s': lttng: its session daemon runs in a mount "
				 "namespace of its own, with its own /run and /dev/shm: %s",
				 v->name, msg);
	for (size_t i = 0; i < l->n_preload; i++) {
		char *p = lttng_wrapper_path(l->preload[i]);
		if (!p)
			return why_error(why, len, "variant '%s': lttng: preload %s: no "
					 "liblttng-ust-%s-wrapper.so.1 (Debian package: liblttng-ust1)",
					 v->name, l->preload[i], l->preload[i]);
		free(p);
	}
	if (!program_exists("babeltrace2"))
		warning("variant '%s': lttng: babeltrace2 is not installed: lttng_events is not "
			"counted (Debian package: babeltrace2)", v->name);
	if (dry) {
		note("variant '%s': dry run: the lttng: block's programs were checked; its session "
		     "daemon was not started (nothing was changed)", v->name);
		return 0;
	}
	/* a trial: what LTTng itself refuses (a channel's sizes, an event),
	 * said once: in this check's reason */
	env = env_build(v);
	/* its log in its own folder, which exists only under the lock */
	r = lttng_host_start(v, env, NULL, 60, msg, sizeof(msg), &h);
	if (r == 0 && lttng_host_stop(h) < 0 && !msg[0])
		snprintf(msg, sizeof(msg), "its session did not stop cleanly");
	argv_free(env);
	if (r < 0 || msg[0])
		return why_error(why, len, "variant '%s': lttng: its trial session failed: %s",
				 v->name, msg[0] ? msg : "no message");
	return 0;
}

/* ---- the session ---- */

/* The daemon: its mount namespace's /run and /dev/shm set up by a shell
 * that waits for it and says when its --sig-parent signal came. */
static char **sessiond_argv(const struct lttng_host *h, int kernel)
{
	char **argv = xcalloc(16, sizeof(*argv));
	size_t n = 0;

	argv[n++] = xstrdup("sh");
	argv[n++] = xstrdup("-c");
	argv[n++] = xstrdup(
		"trap 'echo \"" READY_MARK "\"' USR1\n"
		/* "/" private, or where it is no mount point (a chroot) the
		 * mounts at /run and at /dev/shm or /dev, those the two mounts
		 * below go on (as unshare_mounts_private() does) */
		"unshare --mount --propagation unchanged sh -c '"
		"{ mount --make-rprivate / 2>/dev/null || { mount --make-rprivate /run && "
		"{ mount --make-rprivate /dev/shm 2>/dev/null || mount --make-rprivate /dev; }; }; } && "
		"mount --bind \"$0/run\" /run && "
		"mount -t tmpfs -o mode=1777,size=50% perturb-lttng /dev/shm && exec \"$@\"' "
		"\"$0\" \"$@\" &\n"
		"pid=$!\n"
		"while :; do wait $pid; s=$?; kill -0 $pid 2>/dev/null || exit $s; done\n");
	argv[n++] = xstrdup(h->dir);
	argv[n++] = xstrdup("lttng-sessiond");
	argv[n++] = xstrdup("--sig-parent");
	if (!kernel)
		argv[n++] = xstrdup("--no-kernel");
	argv[n++] = xasprintf("--apps-sock=%s/home/.lttng/lttng-ust-sock-8", h->dir);
	argv[n++] = xasprintf("--load=%s/load", h->dir);
	argv[n] = NULL;
	return argv;
}

/* A pattern list joined by commas, the preloads' providers after user's. */
static char *user_events(const struct lttng_spec *l)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < l->n_user; i++)
		strbuf_addf(&sb, "%s%s", sb.len ? "," : "", l->user[i]);
	for (size_t i = 0; i < l->n_preload; i++)
		strbuf_addf(&sb, "%slttng_ust_%s:*", sb.len ? "," : "", l->preload[i]);
	return strbuf_detach(&sb);
}

static int enable_channel(struct lttng_host *h, const struct lttng_spec *l, const char *dom)
{
	char size[32], count[32];
	const char *mode = l->overwrite ? "--overwrite" : "--discard";

	snprintf(size, sizeof(size), "--subbuf-size=%lu", l->subbuf_size);
	snprintf(count, sizeof(count), "--num-subbuf=%u", l->subbuf_count);
	if (l->subbuf_size && l->subbuf_count)
		return lttng(h, NULL, "enable-channel", dom, mode, size, count, CHANNEL, NULL);
	if (l->subbuf_size)
		return lttng(h, NULL, "enable-channel", dom, mode, size, CHANNEL, NULL);
	if (l->subbuf_count)
		return lttng(h, NULL, "enable-channel", dom, mode, count, CHANNEL, NULL);
	return lttng(h, NULL, "enable-channel", dom, mode, CHANNEL, NULL);
}

static int enable_kernel(struct lttng_host *h, const struct lttng_spec *l)
{
	struct strbuf tp = STRBUF_INIT, sc = STRBUF_INIT;
	int all = 0, r = 0;

	for (size_t i = 0; i < l->n_kernel; i++) {
		const char *e = l->kernel[i];
		if (!strcmp(e, "syscalls"))
			all = 1;
		else if (!strncmp(e, "syscall:", 8))
			strbuf_addf(&sc, "%s%s", sc.len ? "," : "", e + 8);
		else
			strbuf_addf(&tp, "%s%s", tp.len ? "," : "", e);
	}
	if (tp.len)
		r = lttng(h, NULL, "enable-event", "-k", "-c", CHANNEL, "--tracepoint", tp.buf, NULL);
	if (!r && all)
		r = lttng(h, NULL, "enable-event", "-k", "-c", CHANNEL, "--syscall", "--all", NULL);
	else if (!r && sc.len)
		r = lttng(h, NULL, "enable-event", "-k", "-c", CHANNEL, "--syscall", sc.buf, NULL);
	strbuf_release(&tp);
	strbuf_release(&sc);
	return r;
}

int lttng_host_start(const struct variant *v, char *const *envp, const char *log,
		     double timeout_s, char *why, size_t why_len, struct lttng_host **out)
{
	const struct lttng_spec *l = v->lttng;
	struct lttng_host *h = xcalloc(1, sizeof(*h));
	char tmpl[64], how[512], *p, **argv, *own_log;
	const char *sub[] = { "run", "home", "home/.lttng", "load" };
	regex_t re;
	int r;

	*out = NULL;
	h->lock_fd = -1;
	if (why && why_len) {
		h->why = why;
		h->why_len = why_len;
		why[0] = '\0';
	}
	if ((h->lock_fd = perturb_cache_lock(LOCK_PATH, "running an LTTng session")) < 0) {
		host_fail(h, "lttng: the machine-wide LTTng lock was not had (said above)");
		goto fail;
	}
	remove_stale();
	snprintf(tmpl, sizeof(tmpl), "/tmp/perturb-lttng-%d-XXXXXX", (int)getpid());
	if (!mkdtemp(tmpl)) {
		host_fail(h, "lttng: cannot make a folder in /tmp: %s", strerror(errno));
		goto fail;
	}
	h->dir = xstrdup(tmpl);
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++) {
		p = xasprintf("%s/%s", h->dir, sub[i]);
		r = mkdir(p, 0700);
		free(p);
		if (r < 0) {
			host_fail(h, "lttng: cannot make a folder in %s: %s", h->dir,
				  strerror(errno));
			goto fail;
		}
	}
	h->wait_path[0] = xstrdup("/dev/shm/lttng-ust-wait-8");
	h->wait_path[1] = xasprintf("/dev/shm/lttng-ust-wait-8-%u", (unsigned)getuid());
	for (int i = 0; i < 2; i++)
		h->wait_existed[i] = file_exists(h->wait_path[i]);
	h->tool_env = argv_copy(envp);
	p = xasprintf("%s/home", h->dir);
	env_put(&h->tool_env, "LTTNG_HOME", p, NULL);
	free(p);

	regcomp(&re, "^" READY_MARK, REG_EXTENDED | REG_NOSUB | REG_NEWLINE);
	argv = sessiond_argv(h, l->n_kernel > 0);
	own_log = log ? NULL : xasprintf("%s/sessiond.log", h->dir);
	/* with a log of its own, its end is said here, once (not by daemon_start too) */
	r = daemon_start_reason(argv, h->tool_env, NULL, log ? log : own_log, PROC_LOG_MAX, 0, &re,
				NULL, timeout_s, log ? NULL : how, sizeof(how), &h->d);
	argv_free(argv);
	regfree(&re);
	if (r < 0) {
		if (log) {
			host_fail(h, "lttng: the session daemon did not start (its log: %s)", log);
		} else if (h->why) {	/* removed with the session's folder: its end now */
			char *text = read_file(own_log, NULL);
			char *line = said_line(text, "Error: ", NULL);
			host_fail(h, "lttng: the session daemon did not start: it %s%s%s", how,
				  line ? "; its log ends: " : "", line ? line : "");
			free(line);
			free(text);
		} else {
			error("lttng: the session daemon did not start: it %s; the end of its log:",
			      how);
			print_file_tail(own_log, 10);
		}
		free(own_log);
		goto fail;
	}
	free(own_log);
	p = xasprintf("--output=%s/trace", h->dir);
	r = lttng(h, NULL, "create", SESSION, p, NULL);
	free(p);
	if (r < 0)
		goto fail;
	h->created = 1;
	if (l->n_user || l->n_preload) {
		char *ev = user_events(l);
		r = enable_channel(h, l, "-u");
		if (!r)
			r = lttng(h, NULL, "enable-event", "-u", "-c", CHANNEL, ev, NULL);
		free(ev);
		if (r < 0)
			goto fail;
	}
	if (l->n_kernel && (enable_channel(h, l, "-k") < 0 || enable_kernel(h, l) < 0))
		goto fail;
	if (lttng(h, NULL, "start", SESSION, NULL) < 0)
		goto fail;
	/* the workload's: its preloads are not lttng's (their events would be
	 * recorded) */
	h->env = argv_copy(h->tool_env);
	env_put(&h->env, "LTTNG_UST_REGISTER_TIMEOUT", REGISTER_TIMEOUT_MS, NULL);
	for (size_t i = 0; i < l->n_preload; i++) {
		char *lib = lttng_wrapper_path(l->preload[i]);
		if (!lib) {
			host_fail(h, "lttng: no liblttng-ust-%s-wrapper.so.1", l->preload[i]);
			goto fail;
		}
		env_put(&h->env, "LD_PRELOAD", lib, ":");
		free(lib);
	}
	*out = h;
	return 0;
fail:
	lttng_host_stop(h);
	return -1;
}

pid_t lttng_host_pid(const struct lttng_host *h)
{
	return h && h->d ? daemon_pid(h->d) : 0;
}

char *const *lttng_host_env(const struct lttng_host *h)
{
	return h->env;
}

/* The sum of every "LABEL N" in text. */
static unsigned long long sum_after(const char *text, const char *label)
{
	unsigned long long n = 0;
	size_t k = strlen(label);

	for (const char *p = text; (p = strstr(p, label)); p += k)
		n += strtoull(p + k, NULL, 10);
	return n;
}

/* Events in the chunk at path, by babeltrace2's counter sink; -1 when
 * babeltrace2 is missing or fails. */
static double count_events(const char *path, char *const *envp)
{
	/* the counts every 10000 messages, then at the end: the last one */
	char *argv[] = { "babeltrace2", "-c", "sink.utils.counter", (char *)path, NULL },
	     *out, *p = NULL, *q;
	double n = -1;

	if (!program_exists("babeltrace2"))
		return -1;
	if (run_in(NULL, argv, envp, &out) == 0)
		for (q = out; (q = strstr(q, " Event messages")); q++)
			p = q;
	if (p) {
		while (p > out && p[-1] == ' ')
			p--;
		while (p > out && p[-1] >= '0' && p[-1] <= '9')
			p--;
		n = strtod(p, NULL);
	} else {
		warning("lttng: babeltrace2 could not read the run's trace '%s': %s", path, out);
	}
	free(out);
	return n;
}

int lttng_host_account(struct lttng_host *h, struct run_result *res)
{
	char *out = NULL, *path, *p;
	unsigned long long discarded, lost;
	double events = 0;

	if (lttng(h, &out, "rotate", SESSION, NULL) < 0)
		return -1;
	/* "Trace chunk archive for session perturb is now readable at PATH" */
	if (!(p = strstr(out, "readable at "))) {
		error("lttng: rotate did not say where the run's trace is: %s", out);
		free(out);
		return -1;
	}
	path = xstrdup(p + 12);
	path[strcspn(path, "\n")] = '\0';
	free(out);
	tree_bytes = tree_streams = 0;
	nftw(path, size_one, 16, FTW_PHYS);
	if (tree_streams)
		events = count_events(path, h->tool_env);
	if (remove_tree(path) < 0)
		warning("lttng: cannot remove the run's trace '%s': %s", path, strerror(errno));
	free(path);
	if (lttng(h, &out, "list", SESSION, NULL) < 0)
		return -1;
	discarded = sum_after(out, "Discarded events: ");
	lost = sum_after(out, "Lost packets: ");
	free(out);
	if (events >= 0)
		result_add_value(res, "lttng_events", events, "events");
	result_add_value(res, "lttng_discarded", (double)(discarded - h->discarded), "events");
	result_add_value(res, "lttng_lost", (double)(lost - h->lost), "events");
	result_add_value(res, "lttng_bytes", (double)tree_bytes, "bytes");
	h->discarded = discarded;
	h->lost = lost;
	return 0;
}

int lttng_host_stop(struct lttng_host *h)
{
	int ret = 0;

	if (!h)
		return 0;
	if (h->created && lttng(h, NULL, "destroy", SESSION, NULL) < 0)
		ret = -1;
	if (h->d && daemon_stop(h->d) < 0)
		ret = -1;
	if (h->dir && remove_tree(h->dir) < 0)
		ret = host_fail(h, "lttng: cannot remove '%s': %s", h->dir, strerror(errno));
	for (int i = 0; i < 2; i++)
		if (h->wait_path[i] && !h->wait_existed[i] && unlink(h->wait_path[i]) < 0 &&
		    errno != ENOENT)
			ret = -1;
	if (h->lock_fd >= 0)
		close(h->lock_fd);
	free(h->wait_path[0]);
	free(h->wait_path[1]);
	if (h->env)
		argv_free(h->env);
	if (h->tool_env)
		argv_free(h->tool_env);
	free(h->dir);
	free(h);
	return ret;
}
