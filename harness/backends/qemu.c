/*
 * backend_qemu.c - the qemu backend: `boot:` variants boot a kernel image in
 * QEMU and their runs happen inside it.
 *
 * enter() resolves the kernel (`kernel: debian` fetches Debian's 6.1 kernel
 * package into the cache: $PERTURB_CACHE, else $XDG_CACHE_HOME/perturb,
 * else ~/.cache/perturb), builds the initramfs (cached by content hash):
 * the guest agent as /init (perturb-guest-agent, next to perturb), busybox
 * (/bin/busybox, Debian's busybox-static) and every program the
 * experiment's workloads and the variant's wrap: start, with their shared
 * libraries, at their host paths.  A program that cannot be packed is
 * reported before QEMU starts.  Then it boots QEMU with the serial console
 * on a pair of pipes and waits for the agent's PERTURB-READY line.  A
 * variant's kernel: block is then sent as a KERNEL line and applied inside
 * the guest by the agent, with the host backend's code (tracefs.c:
 * ktrace_apply, ktrace_verify), after checking the tracer and every event
 * glob against the guest kernel's available_tracers / available_events
 * (which check() cannot see); the agent answers with a framed
 * PERTURB-KERNEL "ok" or the reason.  The guest's tracing state is never
 * restored: the guest ends with the variant.
 *
 * run() sends one RUN line and waits for the matching framed result (see
 * harness/backends/guest/agent.c for the protocol); the metrics are extracted
 * here from the output the agent sends back.  With a kernel: block the
 * result header also carries the tracer's accounting during the run, added
 * as the host backend does: trace_events, trace_lost (unit "events") and
 * trace_bytes ("B").  The guest's environment is PATH, HOME and the
 * variant's env: entries (not perturb's own environment); wrap: is packed
 * and applies as on the host.  CPU pinning is not applied inside the guest.
 *
 * Counters: before the first run of a request with counters (after
 * KERNEL), every counter of the set is sent by name (COUNTERS, hex tokens)
 * whatever the host can count, and the guest answers for each whether it
 * can count it (the host's own probe, run inside: a TCG guest has no PMU).
 * The agent counts them on the workload as the host runner does
 * (perf_event_open, inherit, enable_on_exec; read once after the exit) and
 * the result header carries each count with its times; they become metrics
 * named and with units as the host runner's (counter_reading_fill(): the
 * same scaling and flag), after the regex metrics, whatever the run's
 * status, so the store and the report treat them alike.  A counter the
 * guest cannot count, or that has no value in a run, is never stored as 0:
 * it is a run failure of the set (counters_fail(), "in the guest: " and
 * the guest's reason), which perturb run reports once per counter.
 *
 * leave() sends QUIT and reaps QEMU (SIGKILL after a grace period).  QEMU
 * gets SIGKILL when perturb dies (PR_SET_PDEATHSIG).
 *
 * A boot that fails (no PERTURB-READY in time, QEMU exits), a kernel:
 * block the guest refuses, a guest that does not answer COUNTERS, hangs
 * or sends a frame that is malformed or whose checksum does not match ("garbage from the guest"):
 * the console log is kept in logdir (qemu-VARIANT-N.log), QEMU is killed,
 * and this run and the variant's remaining runs are recorded as RUN_ERROR
 * naming the reason and the log; the study goes on with the next variant.
 */
#include "backend.h"
#include "qemu_config.h"
#include "counters/counters.h"
#include "frame.h"
#include "initramfs.h"
#include "kbuild.h"
#include "core/packages.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QEMU_BIN "qemu-system-x86_64"
#define BUSYBOX "/bin/busybox"
#define BOOT_TIMEOUT_TCG_S 120.0
#define BOOT_TIMEOUT_KVM_S 30.0
#define RESULT_MARGIN_S 30.0
#define QUIT_GRACE_S 10.0

struct qemu {
	pid_t pid;
	int to_guest, from_guest;	/* QEMU's stdin / stdout */
	int log;			/* console log, -1 when none */
	char *log_path;
	struct strbuf in;		/* bytes read, not yet a complete line */
	int panicked;			/* the console showed a kernel panic */
	int dead;			/* the boot failed: runs are errors */
	char dead_why[256];		/* the size of run_result.reason */
	unsigned long seq;
	/* counters: the set last sent to the guest (COUNTERS) and, for each
	 * of its counters, why the guest cannot count it (NULL: it can) */
	int counters_sent;
	struct counter_set *counting;
	char **guest_no;
	size_t n_counting;
};

static unsigned boot_count;
static int kvm_failed;	/* a KVM boot failed: kvm: auto uses TCG from then on */

static const char *agent_exe(void)
{
	static char *path;
	if (!path) {
		char *dir = dir_name(perturb_self_exe());
		path = xasprintf("%s/perturb-guest-agent", dir);
		free(dir);
	}
	return path;
}

static int kvm_usable(const struct boot_cfg *b)
{
	/* -icount (deterministic: true) is TCG's: KVM runs the real CPU */
	if (b->kvm == 0 || (b->kvm < 0 && kvm_failed) || b->deterministic == 1)
		return 0;
	return access("/dev/kvm", R_OK | W_OK) == 0;
}

static int qemu_check(const struct variant *v, struct pos *at, char *why, size_t len)
{
	const struct boot_cfg *b = v->cfg;

	/* what this backend cannot do yet, then what this machine lacks */
	if (v->daemon.n || v->background.n || v->n_setup || v->n_teardown)
		return why_error(why, len, "variant '%s': daemon:, background:, setup: and "
				 "teardown: are not supported yet with boot: (give boot-time "
				 "tracing on the kernel command line)", v->name);
	if (b->initrd && strcmp(b->initrd, "auto"))
		return why_error(why, len, "variant '%s': boot: only initrd: auto is "
				 "supported (the guest agent must be its /init)", v->name);
	if (!program_exists(QEMU_BIN))
		return why_error(why, len, "variant '%s': boot: needs %s (Debian package: "
				 "qemu-system-x86)", v->name, QEMU_BIN);
	if (access(BUSYBOX, X_OK) < 0)
		return why_error(why, len, "variant '%s': boot: needs %s (Debian package: "
				 "busybox-static)", v->name, BUSYBOX);
	if (access(agent_exe(), X_OK) < 0)
		return why_error(why, len, "variant '%s': boot: needs the guest agent '%s' "
				 "(built by make with a static C library)", v->name, agent_exe());
	if (b->kvm == 1 && b->deterministic == 1)
		return why_error(why, len, "variant '%s': boot: deterministic: true needs TCG "
				 "(QEMU's -icount counts emulated instructions); give kvm: auto "
				 "or false", v->name);
	if (b->kvm == 1 && access("/dev/kvm", R_OK | W_OK) < 0)
		return why_error(why, len, "variant '%s': boot: kvm: true but /dev/kvm is "
				 "not usable", v->name);
	if (b->config)
		return kbuild_check(b, why, len);
	if (!strcmp(b->kernel, "debian")) {
		char *k = xasprintf("%s/kernel-debian/vmlinuz", perturb_cache_dir());
		int have = access(k, R_OK) == 0;
		free(k);
		if (!have && (!program_exists("apt-get") || !program_exists("dpkg-deb")))
			return why_error(why, len, "variant '%s': kernel: debian needs apt-get "
					 "and dpkg-deb to fetch the kernel", v->name);
		return 0;
	}
	if (access(b->kernel, R_OK) < 0)
		return why_error(why, len, "variant '%s': boot: kernel '%s': %s", v->name,
				 b->kernel, strerror(errno));
	return 0;
}

/* ---- the kernel ---- */

/* Newest linux-image-6.1.0-N-amd64 known to apt; malloc'd or NULL. */
static char *debian_kernel_package(void)
{
	FILE *f = popen("apt-cache search --names-only '^linux-image-6.1.0-[0-9]+-amd64$' "
			"2>/dev/null", "r");
	char *line = NULL, *best = NULL;
	size_t cap = 0;
	long best_n = -1;

	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		long n;
		char name[128];
		if (sscanf(line, "linux-image-6.1.0-%ld-amd64", &n) != 1 || n <= best_n)
			continue;
		snprintf(name, sizeof(name), "linux-image-6.1.0-%ld-amd64", n);
		free(best);
		best = xstrdup(name);
		best_n = n;
	}
	free(line);
	pclose(f);
	return best;
}

/* The path of Debian's kernel in the cache, fetched when missing. */
static char *debian_kernel(void)
{
	char *dir = xasprintf("%s/kernel-debian", perturb_cache_dir());
	char *vmlinuz = xasprintf("%s/vmlinuz", dir), *tmp = NULL, *pkg = NULL, *found = NULL;
	char *ret = NULL;
	int e;

	if (access(vmlinuz, R_OK) == 0) {
		ret = vmlinuz;
		vmlinuz = NULL;
		goto out;
	}
	if ((e = mkdir_p(dir, 0755)) < 0) {
		error("cannot create '%s': %s", dir, strerror(-e));
		goto out;
	}
	if (!(pkg = debian_kernel_package())) {
		error("kernel: debian: apt-cache knows no linux-image-6.1.0-*-amd64 package");
		goto out;
	}
	tmp = xasprintf("%s/fetch.%ld", dir, (long)getpid());
	if ((e = mkdir_p(tmp, 0755)) < 0) {
		error("cannot create '%s': %s", tmp, strerror(-e));
		goto out;
	}
	note("fetching Debian's kernel (%s) into %s", pkg, dir);
	char *dl[] = { "apt-get", "download", pkg, NULL };
	if (proc_run_command(dl, NULL, tmp, 600, "apt-get download") < 0)
		goto out;
	char *x[] = { "sh", "-c", "dpkg-deb -x linux-image-*.deb x", NULL };
	if (proc_run_command(x, NULL, tmp, 600, "dpkg-deb -x") < 0)
		goto out;
	char *find = xasprintf("ls %s/x/boot/vmlinuz-* 2>/dev/null", tmp);
	FILE *f = popen(find, "r");
	free(find);
	if (f) {
		char *line = NULL;
		size_t cap = 0;
		if (getline(&line, &cap, f) > 0) {
			line[strcspn(line, "\n")] = '\0';
			found = xstrdup(line);
		}
		free(line);
		pclose(f);
	}
	if (!found) {
		error("kernel: debian: no boot/vmlinuz-* in %s", pkg);
		goto out;
	}
	if (rename(found, vmlinuz) < 0) {
		error("cannot move '%s' to '%s': %s", found, vmlinuz, strerror(errno));
		goto out;
	}
	ret = vmlinuz;
	vmlinuz = NULL;
out:
	if (tmp) {
		char *rm[] = { "rm", "-rf", tmp, NULL };
		proc_run_command(rm, NULL, NULL, 60, "rm");
	}
	free(found);
	free(tmp);
	free(pkg);
	free(vmlinuz);
	free(dir);
	return ret;
}

/* ---- the initramfs ---- */

static const char *const applets[] = { "sh", "mount", "reboot", "cat", "ls", "mkdir" };

/* nftw() has no argument for its callback */
static struct cpio *walk_cpio;
static int walk_failed;

static int pack_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	char why[512];

	if (type == FTW_D)
		cpio_add_dir(walk_cpio, path);
	else if (type == FTW_F && cpio_add_file(walk_cpio, path, NULL, why, sizeof(why)) < 0) {
		error("%s", why);
		walk_failed = 1;
		return 1;
	}
	return 0;
}

/* The work folder of each workload (its setup's generated inputs), at its
 * host path: ctx->cwd/NAME, resolved. */
static int pack_workdirs(struct backend_ctx *ctx, struct cpio *c)
{
	for (size_t w = 0; ctx->cwd && w < ctx->exp->n_workloads; w++) {
		char *rel = xasprintf("%s/%s", ctx->cwd, ctx->exp->workloads[w].name);
		char *abs = realpath(rel, NULL);
		free(rel);
		if (!abs)
			continue;
		walk_cpio = c;
		walk_failed = 0;
		nftw(abs, pack_one, 16, FTW_PHYS);
		free(abs);
		if (walk_failed)
			return -1;
	}
	return 0;
}

/* Build (or find in the cache) the initramfs for ctx; malloc'd path. */
static char *make_initramfs(struct backend_ctx *ctx)
{
	const struct experiment *exp = ctx->exp;
	const struct variant *v = ctx->variant;
	struct cpio c;
	char why[512], sha[65];
	char *path = NULL, *tmp = NULL, *ret = NULL;
	int e;

	cpio_init(&c);
	cpio_add_dir(&c, "/dev");
	cpio_add_chardev(&c, "/dev/console", 5, 1);
	cpio_add_dir(&c, "/proc");
	cpio_add_dir(&c, "/sys");
	cpio_add_dir(&c, "/tmp");
	cpio_add_dir(&c, "/root");
	if (cpio_add_file(&c, agent_exe(), "/init", why, sizeof(why)) < 0 ||
	    cpio_add_file(&c, BUSYBOX, BUSYBOX, why, sizeof(why)) < 0) {
		error("variant '%s': %s", v->name, why);
		goto out;
	}
	for (size_t i = 0; i < sizeof(applets) / sizeof(*applets); i++) {
		char *p = xasprintf("/bin/%s", applets[i]);
		cpio_add_symlink(&c, p, "busybox");
		free(p);
	}
	if (v->wrap.n && cpio_add_program(&c, v->wrap.v[0], why, sizeof(why)) < 0) {
		error("variant '%s': wrap: %s", v->name, why);
		goto out;
	}
	for (size_t w = 0; w < exp->n_workloads; w++) {
		const struct workload *wl = &exp->workloads[w];
		const char *prog;
		if (!wl->cmd.n)
			continue;	/* shell: busybox sh */
		prog = wl->cmd.v[0];
		if (!strcmp(prog, "{micro}"))
			prog = perturb_micro_exe();
		if (strchr(prog, '{'))
			continue;	/* {workdir}/...: made by the setup, not packed */
		if (cpio_add_program(&c, prog, why, sizeof(why)) < 0) {
			error("%s:%d:%d: workload '%s' cannot run inside variant '%s': %s",
			      wl->pos.file, wl->pos.line, wl->pos.col, wl->name, v->name, why);
			goto out;
		}
	}
	if (pack_workdirs(ctx, &c) < 0)
		goto out;
	cpio_finish(&c);
	sha256_hex(c.buf.buf, c.buf.len, sha);
	char *dir = xasprintf("%s/initramfs", perturb_cache_dir());
	if ((e = mkdir_p(dir, 0755)) < 0) {
		error("cannot create '%s': %s", dir, strerror(-e));
		free(dir);
		goto out;
	}
	path = xasprintf("%s/%.16s.cpio", dir, sha);
	free(dir);
	if (access(path, R_OK) == 0) {
		ret = path;
		path = NULL;
		goto out;
	}
	tmp = xasprintf("%s.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, c.buf.buf, c.buf.len) != (ssize_t)c.buf.len) {
		error("cannot write '%s': %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		error("cannot rename '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	ret = path;
	path = NULL;
out:
	free(tmp);
	free(path);
	cpio_release(&c);
	return ret;
}

/* ---- the frames ---- */

static void add_hex(struct strbuf *sb, const char *s)
{
	static const char digits[] = "0123456789abcdef";
	strbuf_add(sb, " ", 1);
	if (!*s)
		strbuf_add(sb, "-", 1);	/* an empty token: "" */
	for (; *s; s++) {
		char h[2] = { digits[(unsigned char)*s >> 4], digits[*s & 15] };
		strbuf_add(sb, h, 2);
	}
}

static int unhex(const char *s, size_t n, unsigned char *out)
{
	for (size_t i = 0; i < n; i++) {
		int v = 0;
		for (int k = 0; k < 2; k++) {
			char ch = s[2 * i + k];
			v <<= 4;
			if (ch >= '0' && ch <= '9')
				v |= ch - '0';
			else if (ch >= 'a' && ch <= 'f')
				v |= ch - 'a' + 10;
			else
				return -1;
		}
		out[i] = (unsigned char)v;
	}
	return 0;
}

/*
 * Check a framed line "TAG SEQ LEN CRC32 HEX" (what is the frame of: what,
 * for messages) and decode its payload: *payload (malloc'd, NUL added) and
 * *plen.  0, or -1 with why.
 */
static int parse_frame(const char *line, const char *tag, const char *what, unsigned long seq,
		       unsigned char **payload, size_t *plen, char *why, size_t wlen)
{
	size_t tl = strlen(tag), len;
	unsigned long s;
	unsigned crc;
	int off = 0;
	unsigned char *p;

	*payload = NULL;
	if (strncmp(line, tag, tl) || line[tl] != ' ' ||
	    sscanf(line + tl, " %lu %zu %x %n", &s, &len, &crc, &off) < 3 || !off) {
		snprintf(why, wlen, "malformed %s frame", what);
		return -1;
	}
	if (s != seq) {
		snprintf(why, wlen, "%s for run %lu while waiting for %lu", what, s, seq);
		return -1;
	}
	off += (int)tl;
	if (strlen(line + off) != 2 * len) {
		snprintf(why, wlen, "truncated %s frame (%zu of %zu bytes)", what,
			 strlen(line + off) / 2, len);
		return -1;
	}
	p = xmalloc(len + 1);
	if (unhex(line + off, len, p) < 0 || frame_crc32(p, len) != crc) {
		snprintf(why, wlen, "%s frame fails its checksum", what);
		free(p);
		return -1;
	}
	p[len] = '\0';
	*payload = p;
	*plen = len;
	return 0;
}

/* ---- QEMU and the console ---- */

static void qemu_kill(struct qemu *q)
{
	if (q->pid > 0) {
		kill(q->pid, SIGKILL);
		waitpid(q->pid, NULL, 0);
		q->pid = 0;
	}
}

static void mark_dead(struct qemu *q, const char *fmt, ...) PRINTF(2, 3);
static void mark_dead(struct qemu *q, const char *fmt, ...)
{
	va_list ap;
	char msg[224];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(q->dead_why, sizeof(q->dead_why), "%s (console log: %s)", msg,
		 q->log_path ? q->log_path : "none");
	q->dead = 1;
	warning("%s", q->dead_why);
	qemu_kill(q);
}

/*
 * Read the console until a complete line containing marker arrives (returns
 * 1, the line from the marker on in *line, malloc'd), the deadline passes
 * (0), QEMU's output ends or the kernel panics (-1, q->panicked set), or a
 * stop is requested (PROC_STOP).
 */
static int read_line(struct qemu *q, const char *marker, double deadline, char **line)
{
	for (;;) {
		char *nl;
		while (q->in.len && (nl = memchr(q->in.buf, '\n', q->in.len))) {
			size_t n = (size_t)(nl - q->in.buf);
			char *l = xstrndup(q->in.buf, n), *m;
			memmove(q->in.buf, nl + 1, q->in.len - n - 1);
			q->in.len -= n + 1;
			q->in.buf[q->in.len] = '\0';
			if (strstr(l, "Kernel panic - not syncing")) {
				q->panicked = 1;
				free(l);
				return -1;
			}
			if ((m = strstr(l, marker))) {
				*line = xstrdup(m);
				free(l);
				return 1;
			}
			free(l);
		}
		struct pollfd p = { .fd = q->from_guest, .events = POLLIN };
		int r = proc_poll(&p, 1, deadline, 1);
		if (r == PROC_STOP)
			return PROC_STOP;
		if (r == 0)
			return 0;
		if (r < 0)
			return -1;
		char buf[65536];
		ssize_t got = read(q->from_guest, buf, sizeof(buf));
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			return -1;
		if (q->log >= 0 && write(q->log, buf, (size_t)got) < 0)
			q->log = -1;
		strbuf_add(&q->in, buf, (size_t)got);
	}
}

static int send_line(struct qemu *q, const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(q->to_guest, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

static char **qemu_argv(const struct boot_cfg *b, const char *kernel, const char *initrd)
{
	char **v = xcalloc(40, sizeof(*v));
	size_t n = 0;
	unsigned long long mem_mb = b->memory_bytes ? b->memory_bytes >> 20 : 1024;

	v[n++] = xstrdup(QEMU_BIN);
	v[n++] = xstrdup("-nodefaults");
	v[n++] = xstrdup("-no-reboot");
	v[n++] = xstrdup("-display");
	v[n++] = xstrdup("none");
	v[n++] = xstrdup("-nic");
	v[n++] = xstrdup("none");
	v[n++] = xstrdup("-serial");
	v[n++] = xstrdup("stdio");
	v[n++] = xstrdup("-m");
	v[n++] = xasprintf("%llu", mem_mb < 128 ? 128 : mem_mb);
	v[n++] = xstrdup("-smp");
	v[n++] = xasprintf("%d", b->cpus > 0 ? b->cpus : 1);
	v[n++] = xstrdup("-accel");
	v[n++] = xstrdup(kvm_usable(b) ? "kvm" : "tcg");
	/* TCG's default CPU model lacks instructions programs use (rdtscp) */
	v[n++] = xstrdup("-cpu");
	v[n++] = xstrdup(kvm_usable(b) ? "host" : "max");
	if (b->deterministic == 1) {
		v[n++] = xstrdup("-icount");
		v[n++] = xstrdup("shift=0");
	}
	v[n++] = xstrdup("-kernel");
	v[n++] = xstrdup(kernel);
	v[n++] = xstrdup("-initrd");
	v[n++] = xstrdup(initrd);
	v[n++] = xstrdup("-append");
	v[n++] = xasprintf("console=ttyS0 panic=-1 loglevel=1%s%s",
			   b->cmdline && *b->cmdline ? " " : "", b->cmdline ? b->cmdline : "");
	v[n] = NULL;
	return v;
}

/*
 * Start QEMU for ctx (q->log open) and wait for PERTURB-READY.  Returns 1
 * when booted, 0 when the boot failed (QEMU killed, why filled), PROC_STOP,
 * or -1 on an internal error (printed).
 */
static int boot(struct backend_ctx *ctx, struct qemu *q, const char *kernel,
		const char *initrd, char *why, size_t wlen)
{
	const struct boot_cfg *b = ctx->variant->cfg;
	char **argv = qemu_argv(b, kernel, initrd), *line = NULL;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, ret = -1;
	int kvm = kvm_usable(b);

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		error("pipe: %s", strerror(errno));
		goto out;
	}
	pid_t parent = getpid();
	q->pid = fork();
	if (q->pid < 0) {
		error("fork: %s", strerror(errno));
		q->pid = 0;
		goto out;
	}
	if (!q->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		setpgid(0, 0);
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (q->log >= 0)
			dup2(q->log, 2);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(argv[0], argv);
		_exit(127);
	}
	q->to_guest = in[1];
	q->from_guest = out[0];
	in[1] = out[0] = -1;
	signal(SIGPIPE, SIG_IGN);

	double t0 = now_mono();
	int r = read_line(q, "PERTURB-READY", t0 + (kvm ? BOOT_TIMEOUT_KVM_S : BOOT_TIMEOUT_TCG_S),
			  &line);
	if (r == PROC_STOP) {
		qemu_kill(q);
		ret = PROC_STOP;
	} else if (r <= 0) {
		snprintf(why, wlen, "the guest did not boot (%s, %s)",
			 r == 0 ? "time-out" : q->panicked ? "kernel panic" : "QEMU exited",
			 kvm ? "KVM" : "TCG");
		qemu_kill(q);
		ret = 0;
	} else {
		note("variant '%s': booted %s in %.1f s (%s)", ctx->variant->name, line + 14,
		     now_mono() - t0, kvm ? "KVM" : "TCG");
		ret = 1;
	}
out:
	argv_free(argv);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	free(line);
	return ret;
}

static void close_pipes(struct qemu *q)
{
	if (q->to_guest >= 0)
		close(q->to_guest);
	if (q->from_guest >= 0)
		close(q->from_guest);
	q->to_guest = q->from_guest = -1;
	strbuf_reset(&q->in);
}

static void add_list(struct strbuf *sb, char *const *v, size_t n)
{
	if (!v) {
		strbuf_add(sb, " -1", 3);
		return;
	}
	strbuf_addf(sb, " %zu", n);
	for (size_t i = 0; i < n; i++)
		add_hex(sb, v[i]);
}

/*
 * One request line to the agent and its framed answer, tag ("PERTURB-KERNEL")
 * with sequence 0: *p (malloc'd, NUL-terminated) and *len.  Returns 1, 0
 * when the guest did not answer or answered garbage (why filled, starting
 * with what), PROC_STOP.
 */
static int ask_guest(struct qemu *q, const struct strbuf *cmd, const char *tag, const char *what,
		     unsigned char **p, size_t *len, char *why, size_t wlen)
{
	char *marker = xasprintf("%s ", tag), *line = NULL, fwhy[128];
	int r, ret = 0;

	*p = NULL;
	if (send_line(q, cmd->buf, cmd->len) < 0) {
		snprintf(why, wlen, "%s: cannot write to QEMU: %s", what, strerror(errno));
		goto out;
	}
	r = read_line(q, marker, now_mono() + RESULT_MARGIN_S, &line);
	if (r == PROC_STOP)
		ret = PROC_STOP;
	else if (r <= 0)
		snprintf(why, wlen, "%s: the guest %s", what, r == 0 ?
			 "stopped answering (time-out)" : q->panicked ? "died (kernel panic)" :
			 "died (QEMU exited)");
	else if (parse_frame(line, tag, what, 0, p, len, fwhy, sizeof(fwhy)) < 0)
		snprintf(why, wlen, "garbage from the guest: %s", fwhy);
	else
		ret = 1;
out:
	free(marker);
	free(line);
	return ret;
}

/*
 * Apply the variant's kernel: block inside the booted guest (KERNEL, see
 * harness/backends/guest/agent.c).  Returns 1 when applied, 0 when the guest
 * refused it or did not answer (why filled), PROC_STOP.
 */
static int guest_kernel(struct backend_ctx *ctx, struct qemu *q, char *why, size_t wlen)
{
	const struct ktrace_spec *k = ctx->variant->kernel;
	struct strbuf cmd = STRBUF_INIT;
	unsigned char *p = NULL;
	size_t len;
	int ret;

	strbuf_addf(&cmd, "KERNEL %d %ld", k->tracing_on, k->buffer_size_kb > 0 ?
		    k->buffer_size_kb : -1);
	add_list(&cmd, k->tracer ? &k->tracer : NULL, 1);
	add_list(&cmd, k->events, k->n_events);
	add_list(&cmd, k->functions, k->n_functions);
	add_list(&cmd, k->options, k->n_options);
	strbuf_add(&cmd, "\n", 1);
	ret = ask_guest(q, &cmd, "PERTURB-KERNEL", "kernel", &p, &len, why, wlen);
	if (ret == 1 && strcmp((char *)p, "ok")) {
		snprintf(why, wlen, "kernel: %s", strncmp((char *)p, "error ", 6) ?
			 (char *)p : (char *)p + 6);
		ret = 0;
	}
	free(p);
	strbuf_release(&cmd);
	return ret;
}

static void forget_counters(struct qemu *q)
{
	for (size_t i = 0; i < q->n_counting; i++)
		free(q->guest_no[i]);
	free(q->guest_no);
	q->guest_no = NULL;
	q->n_counting = 0;
	q->counting = NULL;
	q->counters_sent = 0;
}

/*
 * Send the counters of a run request to the guest (COUNTERS, see
 * harness/backends/guest/agent.c; none: cs NULL) and keep what the guest cannot
 * count, with its reason.  Returns 1, 0 when the guest did not answer or
 * answered garbage (why filled: the boot is dead), PROC_STOP.
 */
static int guest_counters(struct qemu *q, struct counter_set *cs, char *why, size_t wlen)
{
	struct strbuf cmd = STRBUF_INIT;
	unsigned char *p = NULL;
	size_t n = counters_count(cs), len;
	int ret;

	forget_counters(q);
	strbuf_addf(&cmd, "COUNTERS %zu", n);
	for (size_t i = 0; i < n; i++)
		add_hex(&cmd, counters_name(cs, i));
	strbuf_add(&cmd, "\n", 1);
	ret = ask_guest(q, &cmd, "PERTURB-COUNTERS", "counters", &p, &len, why, wlen);
	if (ret != 1)
		goto out;	/* 0 or PROC_STOP */
	/* one line per counter: "ok", or "no " and why not; nothing more */
	q->guest_no = xcalloc(n ? n : 1, sizeof(*q->guest_no));
	q->n_counting = n;
	char *l = (char *)p;
	size_t i;
	for (i = 0; i < n; i++) {
		char *nl = strchr(l, '\n');
		if (!nl || (strncmp(l, "ok\n", 3) && strncmp(l, "no ", 3)))
			break;
		*nl = '\0';
		if (l[0] == 'n')
			q->guest_no[i] = xasprintf("in the guest: %s", l + 3);
		l = nl + 1;
	}
	if (i < n || *l) {
		ret = 0;
		forget_counters(q);
		snprintf(why, wlen, "garbage from the guest: counters: %.80s", (char *)p);
		goto out;
	}
	q->counting = cs;
	q->counters_sent = 1;
out:
	free(p);
	strbuf_release(&cmd);
	return ret;
}

static int qemu_enter(struct backend_ctx *ctx)
{
	const struct boot_cfg *b = ctx->variant->cfg;
	struct qemu *q;
	char *kernel = NULL, *initrd = NULL, why[400];
	int ret = -1, r;

	if (ctx->priv)
		return 0;
	if (b->config)
		kernel = kbuild_image(b);
	else if (!strcmp(b->kernel, "debian"))
		kernel = debian_kernel();
	else
		kernel = xstrdup(b->kernel);
	if (!kernel)
		return -1;
	if (!(initrd = make_initramfs(ctx)))
		goto out;

	q = xcalloc(1, sizeof(*q));
	q->log = -1;
	q->to_guest = q->from_guest = -1;
	ctx->priv = q;
	q->log_path = xasprintf("%s/qemu-%s-%u.log", ctx->logdir ? ctx->logdir : ".",
				ctx->variant->name, ++boot_count);
	q->log = open(q->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int kvm = kvm_usable(b);
	r = boot(ctx, q, kernel, initrd, why, sizeof(why));
	if (r == 0 && kvm && b->kvm < 0 && !q->panicked) {
		warning("variant '%s': %s; KVM does not work here, booting with TCG",
			ctx->variant->name, why);
		kvm_failed = 1;
		close_pipes(q);
		r = boot(ctx, q, kernel, initrd, why, sizeof(why));
	}
	if (r == 1 && ctx->variant->kernel)
		r = guest_kernel(ctx, q, why, sizeof(why));
	if (r == PROC_STOP)
		qemu_kill(q);
	if (r < 0 || r == PROC_STOP)
		goto out;
	if (r == 0)
		mark_dead(q, "variant '%s': %s", ctx->variant->name, why);
	ret = 0;
out:
	free(kernel);
	free(initrd);
	return ret;
}

/* A config: kernel is built (or found in the cache) before the study. */
static int qemu_build(const struct variant *v)
{
	const struct boot_cfg *b = v->cfg;
	char *img;

	if (!b->config)
		return 0;
	if (!(img = kbuild_image(b)))
		return -1;
	free(img);
	return 0;
}

static int qemu_leave(struct backend_ctx *ctx)
{
	struct qemu *q = ctx->priv;

	if (!q)
		return 0;
	if (q->pid > 0) {
		double deadline = now_mono() + QUIT_GRACE_S;
		send_line(q, "QUIT\n", 5);
		char *line = NULL;
		while (read_line(q, "\n-never-", deadline, &line) == 1)
			free(line);
		qemu_kill(q);
	}
	if (q->to_guest >= 0)
		close(q->to_guest);
	if (q->from_guest >= 0)
		close(q->from_guest);
	if (q->log >= 0)
		close(q->log);
	strbuf_release(&q->in);
	forget_counters(q);
	free(q->log_path);
	free(q);
	ctx->priv = NULL;
	return 0;
}

/* ---- runs ---- */

static void extract(const struct run_request *req, const char *out, size_t out_len,
		    const char *err, size_t err_len, struct run_result *res)
{
	const char *text[2] = { out, err };
	size_t len[2] = { out_len, err_len };

	res->values = xcalloc(req->n_metrics ? req->n_metrics : 1, sizeof(*res->values));
	for (size_t i = 0; i < req->n_metrics; i++) {
		const struct metric_def *md = &req->metrics[i];
		regex_t re;
		regmatch_t m[2];
		int found = 0;
		char num[128], *end;

		if (regcomp(&re, md->regex_src, REG_EXTENDED | REG_NEWLINE))
			continue;
		for (int k = 0; k < 2 && !found; k++) {
			if (!len[k])
				continue;
			m[0].rm_so = 0;
			m[0].rm_eo = (regoff_t)len[k];
			if (regexec(&re, text[k], 2, m, REG_STARTEND))
				continue;
			int g = md->has_group && m[1].rm_so >= 0;
			size_t so = (size_t)m[g].rm_so, eo = (size_t)m[g].rm_eo;
			if (eo - so >= sizeof(num))
				eo = so + sizeof(num) - 1;
			memcpy(num, text[k] + so, eo - so);
			num[eo - so] = '\0';
			found = 1;
		}
		regfree(&re);
		double val = found ? strtod(num, &end) : 0;
		if (!found || end == num) {
			if (res->status == RUN_OK) {
				res->status = RUN_FAILED;
				snprintf(res->reason, sizeof(res->reason), found ?
					 "metric '%s': cannot parse '%s' as a number" :
					 "metric '%s' not found in output", md->name, found ? num : "");
			}
			continue;
		}
		struct metric_value *v = &res->values[res->n_values++];
		v->name = xstrdup(md->name);
		v->value = val;
		v->unit = xstrdup(md->unit ? md->unit : "");
	}
	size_t tl = out_len + err_len > RUNNER_TAIL_BYTES ? RUNNER_TAIL_BYTES : out_len + err_len;
	size_t from_err = err_len < tl ? err_len : tl, from_out = tl - from_err;
	res->out_tail = xmalloc(tl + 1);
	memcpy(res->out_tail, out + out_len - from_out, from_out);
	memcpy(res->out_tail + from_out, err + err_len - from_err, from_err);
	res->out_tail[tl] = '\0';
	for (size_t i = 0; i < tl; i++)
		if (!res->out_tail[i])
			res->out_tail[i] = ' ';
}

static void add_value(struct run_result *res, const char *name, double value, const char *unit)
{
	res->values = xrealloc(res->values, (res->n_values + 1) * sizeof(*res->values));
	res->values[res->n_values++] = (struct metric_value){
		.name = xstrdup(name), .value = value, .unit = xstrdup(unit),
	};
}

/*
 * The optional tail of a result header: the tracer's accounting during the
 * run (a variant with a kernel: block), as metrics named and with units as
 * the host backend's (trace_events, trace_lost, trace_bytes).
 */
static void trace_values(const struct variant *v, const char *tail, struct run_result *res)
{
	double events, lost, bytes;
	const char *e;

	if (sscanf(tail, " trace_events=%lf trace_lost=%lf trace_bytes=%lf", &events, &lost,
		   &bytes) == 3) {
		add_value(res, "trace_events", events, "events");
		add_value(res, "trace_lost", lost, "events");
		add_value(res, "trace_bytes", bytes, "B");
	} else if ((e = strstr(tail, "trace_error="))) {
		size_t n = strcspn(e + 12, " \n") / 2;
		unsigned char msg[256];
		if (n >= sizeof(msg))
			n = sizeof(msg) - 1;
		if (unhex(e + 12, n, msg) < 0)
			n = 0;
		msg[n] = '\0';
		warning("variant '%s': in the guest: %s", v->name, (char *)msg);
	}
}

/*
 * The counter fields of a result header (" cI=RAW,ENABLED,RUNNING", or
 * " cI=!HEX": the guest's reason for no value in this run) as metrics
 * named and with units as the host runner's, scaled by the same function;
 * a counter without a value is a run failure of the set, never 0.  The
 * counters the guest cannot count at all are failures of every run.
 * 0, or -1 when a field is malformed.
 */
static int counter_values(struct qemu *q, const char *tail, struct run_result *res)
{
	struct counter_set *cs = q->counting;
	char key[32], msg[256];

	for (size_t i = 0; i < q->n_counting; i++) {
		struct counter_reading rd = { 0 };
		uint64_t raw, en, run;
		const char *f;
		int n = 0;

		if (q->guest_no[i]) {
			counters_fail(cs, i, q->guest_no[i]);
			continue;
		}
		snprintf(key, sizeof(key), " c%zu=", i);
		if (!(f = strstr(tail, key)))
			continue;	/* the run did not start */
		f += strlen(key);
		if (*f == '!') {
			size_t hl = strcspn(f + 1, " \n") / 2, pre;
			pre = (size_t)snprintf(msg, sizeof(msg), "in the guest: ");
			if (hl >= sizeof(msg) - pre)
				hl = sizeof(msg) - pre - 1;
			if (unhex(f + 1, hl, (unsigned char *)msg + pre) < 0)
				return -1;
			msg[pre + hl] = '\0';
			counters_fail(cs, i, msg);
			continue;
		}
		if (sscanf(f, "%" SCNu64 ",%" SCNu64 ",%" SCNu64 "%n", &raw, &en, &run, &n) < 3 ||
		    (f[n] && f[n] != ' '))
			return -1;
		int e = counter_reading_fill(&rd, raw, en, run, msg, sizeof(msg));
		if (e < 0) {
			char *m = xasprintf("in the guest: %s", msg);
			counters_fail(cs, i, m);
			free(m);
		}
		if (e <= 0)
			continue;
		res->values = xrealloc(res->values, (res->n_values + 1) * sizeof(*res->values));
		res->values[res->n_values++] = (struct metric_value){
			.name = xstrdup(counters_name(cs, i)),
			.unit = xstrdup(counters_unit(cs, i)),
			.value = rd.value,
			.scaled = rd.scaled,
			.time_enabled_ns = rd.time_enabled_ns,
			.time_running_ns = rd.time_running_ns,
		};
	}
	return 0;
}

/* Parse a PERTURB-RESULT line for seq; 0, or -1 with why. */
static int parse_result(struct qemu *q, const char *line, const struct variant *v,
			const struct run_request *req, struct run_result *res, char *why,
			size_t wlen)
{
	unsigned long seq = q->seq;
	size_t len;
	unsigned char *p = NULL;
	int ret = -1;

	if (parse_frame(line, "PERTURB-RESULT", "result", seq, &p, &len, why, wlen) < 0)
		return -1;
	/* the header is the payload's first line (the output may begin with
	 * blanks: no sscanf over the line's end) */
	char how[16], *nl = memchr(p, '\n', len), *head;
	int code, tail = 0;
	long long wall, user, sys;
	long rss;
	size_t out_len, err_len, hl = nl ? (size_t)(nl - (char *)p) + 1 : 0;
	head = nl ? xstrndup((char *)p, hl - 1) : NULL;
	if (!head || sscanf(head, "how=%15s code=%d wall_ns=%lld user_us=%lld sys_us=%lld "
			    "maxrss_kb=%ld out=%zu err=%zu%n", how, &code, &wall, &user, &sys,
			    &rss, &out_len, &err_len, &tail) < 8 || !tail ||
	    hl + out_len + err_len != len) {
		snprintf(why, wlen, "malformed result header");
		free(head);
		goto out;
	}
	res->wall_s = wall / 1e9;
	res->user_s = user / 1e6;
	res->sys_s = sys / 1e6;
	res->maxrss_kb = rss;
	const char *o = (char *)p + hl, *e = o + out_len;
	if (!strcmp(how, "exit")) {
		res->exit_code = code;
		res->status = code ? RUN_FAILED : RUN_OK;
		if (code)
			snprintf(res->reason, sizeof(res->reason), "exit status %d", code);
	} else if (!strcmp(how, "signal")) {
		res->signal = code;
		res->status = RUN_CRASHED;
		snprintf(res->reason, sizeof(res->reason), "killed by signal %d (%s)", code,
			 strsignal(code));
	} else if (!strcmp(how, "timeout")) {
		res->status = RUN_TIMEOUT;
		snprintf(res->reason, sizeof(res->reason), "timed out after %.0f s (in the guest)",
			 req->timeout_s);
	} else {
		res->status = RUN_ERROR;
		snprintf(res->reason, sizeof(res->reason), "%.*s", (int)err_len, e);
	}
	extract(req, o, out_len, e, err_len, res);
	if (res->status == RUN_ERROR || res->status == RUN_TIMEOUT) {
		/* metrics of a run that did not finish are not measurements */
		for (size_t i = 0; i < res->n_values; i++) {
			free(res->values[i].name);
			free(res->values[i].unit);
		}
		res->n_values = 0;
	}
	/* like the host runner and backend: whatever the run's status */
	if (counter_values(q, head + tail, res) < 0) {
		snprintf(why, wlen, "malformed counter in the result header");
		free(head);
		goto out;
	}
	trace_values(v, head + tail, res);
	free(head);
	ret = 0;
out:
	free(p);
	return ret;
}

static int qemu_run(struct backend_ctx *ctx, const struct run_request *req,
		    struct run_result *res)
{
	struct qemu *q = ctx->priv;
	struct strbuf cmd = STRBUF_INIT;
	char *line = NULL, why[200];
	size_t n;

	memset(res, 0, sizeof(*res));
	now_iso8601(res->started, sizeof(res->started));
	if (!q || q->dead) {
		res->status = RUN_ERROR;
		snprintf(res->reason, sizeof(res->reason), "%s",
			 q ? q->dead_why : "the guest is not running");
		res->out_tail = xstrdup("");
		return 0;
	}
	/* the counters go to the guest once, before its first run with them */
	if (req->counters ? !q->counters_sent || q->counting != req->counters :
	    q->counters_sent) {
		char cwhy[200];
		int c = guest_counters(q, req->counters, cwhy, sizeof(cwhy));
		if (c == PROC_STOP) {
			res->status = RUN_INTERRUPTED;
			snprintf(res->reason, sizeof(res->reason), "interrupted");
			res->out_tail = xstrdup("");
			qemu_kill(q);
			q->dead = 1;
			snprintf(q->dead_why, sizeof(q->dead_why), "interrupted");
			goto out;
		}
		if (c == 0) {
			mark_dead(q, "variant '%s': %s", ctx->variant->name, cwhy);
			goto dead;
		}
		if (!req->counters)
			forget_counters(q);
	}
	strbuf_addf(&cmd, "RUN %lu %lld", ++q->seq, (long long)(req->timeout_s * 1000));
	add_hex(&cmd, req->cwd && *req->cwd ? req->cwd : "/");
	/* the guest's environment: PATH and the variant's env: entries */
	const struct variant *v = ctx->variant;
	strbuf_addf(&cmd, " %zu", v->n_env + 2);
	add_hex(&cmd, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	add_hex(&cmd, "HOME=/root");
	for (size_t i = 0; i < v->n_env; i++) {
		char *kv = xasprintf("%s=%s", v->env[i].key, v->env[i].value);
		add_hex(&cmd, kv);
		free(kv);
	}
	for (n = 0; req->argv[n]; n++)
		;
	strbuf_addf(&cmd, " %zu", n);
	for (size_t i = 0; i < n; i++)
		add_hex(&cmd, req->argv[i]);
	strbuf_add(&cmd, "\n", 1);
	if (send_line(q, cmd.buf, cmd.len) < 0) {
		mark_dead(q, "variant '%s': cannot write to QEMU: %s", v->name, strerror(errno));
		goto dead;
	}
	double deadline = now_mono() + req->timeout_s + STOP_KILL_GRACE_S + RESULT_MARGIN_S;
	int r = read_line(q, "PERTURB-RESULT ", deadline, &line);
	if (r == PROC_STOP) {
		res->status = RUN_INTERRUPTED;
		snprintf(res->reason, sizeof(res->reason), "interrupted");
		res->out_tail = xstrdup("");
		qemu_kill(q);
		q->dead = 1;
		snprintf(q->dead_why, sizeof(q->dead_why), "interrupted");
		goto out;
	}
	if (r <= 0) {
		mark_dead(q, "variant '%s': the guest %s", v->name,
			  r == 0 ? "stopped answering (time-out)" :
			  q->panicked ? "died (kernel panic)" : "died (QEMU exited)");
		goto dead;
	}
	if (parse_result(q, line, v, req, res, why, sizeof(why)) < 0) {
		mark_dead(q, "variant '%s': garbage from the guest: %s", v->name, why);
		goto dead;
	}
	goto out;
dead:
	run_result_release(res);
	memset(res, 0, sizeof(*res));
	now_iso8601(res->started, sizeof(res->started));
	res->status = RUN_ERROR;
	snprintf(res->reason, sizeof(res->reason), "%s", q->dead_why);
	res->out_tail = xstrdup("");
out:
	free(line);
	strbuf_release(&cmd);
	return 0;
}

const struct backend backend_qemu = {
	.name = "qemu",
	.key = "boot",
	.cfg_size = sizeof(struct boot_cfg),
	.parse = qemu_config_parse,
	.release = qemu_config_release,
	.finish = qemu_config_finish,
	.build = qemu_build,
	.boots = qemu_config_boots,
	.virtual_time = qemu_config_virtual_time,
	.check = qemu_check,
	.enter = qemu_enter,
	.leave = qemu_leave,
	.run = qemu_run,
};
