/*
 * qemu_images.c - what the qemu backend boots (qemu.h): the kernel
 * (`kernel: debian` fetches Debian's 6.1 kernel package into the cache:
 * $PERTURB_CACHE, else $XDG_CACHE_HOME/perturb, else ~/.cache/perturb)
 * and the initramfs, cached by content hash: the guest agent as /init
 * (perturb-guest-agent, next to perturb), busybox (/bin/busybox, Debian's
 * busybox-static) and every program the experiment's workloads and the
 * variant's wrap: start, with their shared libraries, at their host paths
 * (initramfs.c writes the cpio archive).  A program that cannot be packed
 * is reported before QEMU starts.
 */
#include "qemu.h"
#include "initramfs.h"
#include "core/packages.h"
#include "core/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *agent_exe(void)
{
	static char *path;
	if (!path) {
		char *dir = dir_name(perturb_self_exe());
		path = xasprintf("%s/perturb-guest-agent", dir);
		free(dir);
	}
	return path;
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

char *debian_kernel(void)
{
	char *dir = xasprintf("%s/kernel-debian", perturb_cache_dir());
	char *vmlinuz = xasprintf("%s/vmlinuz", dir), *tmp = NULL, *pkg = NULL, *found = NULL;
	char *ret = NULL, *lock;
	int e, lk = -1;

	if (access(vmlinuz, R_OK) == 0) {
		ret = vmlinuz;
		vmlinuz = NULL;
		goto out;
	}
	if ((e = mkdir_p(dir, 0755)) < 0) {
		error("cannot create '%s': %s", dir, strerror(-e));
		goto out;
	}
	lock = xasprintf("%s/.lock", dir);
	lk = perturb_cache_lock(lock, "fetching Debian's kernel");
	free(lock);
	if (lk < 0)
		goto out;
	if (access(vmlinuz, R_OK) == 0) {	/* fetched while we waited */
		ret = vmlinuz;
		vmlinuz = NULL;
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
	/* a folder read, no shell nor glob: the cache's path may hold anything */
	char *boot = xasprintf("%s/x/boot", tmp);
	DIR *d = opendir(boot);
	for (struct dirent *de; d && !found && (de = readdir(d)); )
		if (!strncmp(de->d_name, "vmlinuz-", 8))
			found = xasprintf("%s/%s", boot, de->d_name);
	if (d)
		closedir(d);
	free(boot);
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
	if (lk >= 0)
		close(lk);
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
 * host path: ctx->cwd/NAME (path_component()), resolved. */
static int pack_workdirs(struct backend_ctx *ctx, struct cpio *c)
{
	for (size_t w = 0; ctx->cwd && w < ctx->exp->n_workloads; w++) {
		char *comp = path_component(ctx->exp->workloads[w].name);
		char *rel = xasprintf("%s/%s", ctx->cwd, comp);
		char *abs = realpath(rel, NULL);
		free(rel);
		free(comp);
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

char *make_initramfs(struct backend_ctx *ctx, const char *kernel, char *lwhy, size_t lwlen)
{
	const struct experiment *exp = ctx->exp;
	const struct variant *v = ctx->variant;
	struct cpio c;
	char why[512], sha[65];
	char *path = NULL, *tmp = NULL, *ret = NULL;
	int e;

	*lwhy = '\0';
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
	/* the variant's own failure: its runs say why, the study goes on */
	if (lttng_guest_wanted(v) && lttng_guest_pack(&c, v, kernel, lwhy, lwlen) < 0)
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
