/*
 * kbuild.c - guest kernels built from a Kconfig fragment; see kbuild.h.
 */
#include "kbuild.h"
#include "core/packages.h"
#include "core/proc.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PERTURB_SHARE_DIR
#define PERTURB_SHARE_DIR "/usr/local/share/perturb"
#endif

#define BUILD_TIMEOUT_S 7200.0
#define UNPACK_TIMEOUT_S 1800.0

/* What building needs besides the source: programs, and headers (paths). */
static const char *const build_tools[] = {
	"make", "gcc", "flex", "bison", "bc", "tar", "xz", "/usr/include/libelf.h",
};

char *kbuild_script(const char *name)
{
	const char *env = getenv("PERTURB_KERNELS");
	char *bindir = dir_name(perturb_self_exe()), *p;

	p = env && *env ? xasprintf("%s/%s", env, name) :
		xasprintf("%s/../kernels/%s", bindir, name);
	free(bindir);
	if (env && *env)
		return p;	/* as asked, even when missing: the check says so */
	if (file_exists(p))
		return p;
	free(p);
	p = xasprintf(PERTURB_SHARE_DIR "/kernels/%s", name);
	if (file_exists(p))
		return p;
	free(p);
	return NULL;
}

static char *script_path(void)
{
	return kbuild_script("build.sh");
}

static const char *source_of(const struct boot_cfg *b)
{
	return b->source ? b->source : KBUILD_DEFAULT_SOURCE;
}

/* A Kconfig fragment is a few lines; this bounds what is read of one. */
#define KCONFIG_FRAGMENT_MAX (1024 * 1024)

static int is_tarball(const char *path, const struct stat *st)
{
	return S_ISREG(st->st_mode) && strstr(path, ".tar");
}

/* Append a file's bytes to sb: its content, not its path, is the key. */
static void add_file(struct strbuf *sb, const char *what, const char *path)
{
	size_t len = 0;
	char *data = read_file(path, &len);

	strbuf_addf(sb, "%s %zu\n", what, data ? len : 0);
	if (data)
		strbuf_add(sb, data, len);
	free(data);
}

/*
 * The cache key of b's image: SHA-256 over build.sh, base.config, the
 * fragment and the source's identity.  -1 with why when a part is missing.
 */
static int image_key(const struct boot_cfg *b, const char *script, char key[65], char *why,
		     size_t len)
{
	const char *src = source_of(b);
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	char *dir, *base, *frag, fwhy[128];
	size_t frag_len;

	/* the user's file: a regular one, and not without end */
	if (!(frag = read_user_file(b->config, KCONFIG_FRAGMENT_MAX, &frag_len, fwhy,
				    sizeof(fwhy))))
		return why_error(why, len, "config: cannot read the Kconfig fragment '%s': %s",
				 b->config, fwhy);
	if (stat(src, &st) < 0) {
		free(frag);
		return why_error(why, len, "source: '%s': %s%s", src, strerror(errno),
				 b->source ? "" : " (Debian package: linux-source-6.1)");
	}
	dir = dir_name(script);
	base = xasprintf("%s/configs/base.config", dir);
	free(dir);
	strbuf_addstr(&sb, "perturb kernel image 1\n");
	add_file(&sb, "script", script);
	add_file(&sb, "base", base);
	strbuf_addf(&sb, "fragment %zu\n", frag_len);
	strbuf_add(&sb, frag, frag_len);
	free(frag);
	free(base);
	if (is_tarball(src, &st)) {
		strbuf_addf(&sb, "tarball %s %lld %lld\n", src, (long long)st.st_size,
			    (long long)st.st_mtime);
	} else if (S_ISDIR(st.st_mode)) {
		char *mk = xasprintf("%s/Makefile", src);
		if (!file_exists(mk)) {
			free(mk);
			strbuf_release(&sb);
			return why_error(why, len, "source: '%s' is not a kernel source tree "
					 "(no Makefile)", src);
		}
		strbuf_addf(&sb, "tree %s %lld\n", src, (long long)st.st_mtime);
		add_file(&sb, "makefile", mk);
		free(mk);
	} else {
		strbuf_release(&sb);
		return why_error(why, len, "source: '%s' is neither a kernel source tree nor a "
				 "tarball of one", src);
	}
	sha256_hex(sb.buf, sb.len, key);
	strbuf_release(&sb);
	return 0;
}

static char *image_dir(const char key[65])
{
	return xasprintf("%s/kernels/%.16s", perturb_cache_dir(), key);
}

int kbuild_check(const struct boot_cfg *b, char *why, size_t len)
{
	char key[65], *script = script_path(), *img;
	int have;

	if (!script)
		return why_error(why, len, "config: needs kernels/build.sh (next to perturb's "
				 "folder, in %s/kernels, or in $PERTURB_KERNELS)", PERTURB_SHARE_DIR);
	if (!file_exists(script)) {
		why_error(why, len, "config: no '%s' ($PERTURB_KERNELS)", script);
		free(script);
		return -1;
	}
	if (image_key(b, script, key, why, len) < 0) {
		free(script);
		return -1;
	}
	free(script);
	char *dir = image_dir(key);
	img = xasprintf("%s/bzImage", dir);
	free(dir);
	have = file_exists(img);
	free(img);
	return have || kbuild_tools(why, len) ? 0 : -1;
}

int kbuild_tools(char *why, size_t len)
{
	for (size_t i = 0; i < sizeof(build_tools) / sizeof(*build_tools); i++) {
		char need[256];
		if (requirement_met(build_tools[i], need, sizeof(need)))
			continue;
		snprintf(why, len, "config: building the kernel needs %s", need);
		return 0;
	}
	return 1;
}

/* The tree to build from: src itself, or the tarball unpacked (once) into
 * the cache.  Malloc'd, or NULL (printed). */
static char *source_tree(const char *src)
{
	struct stat st;
	char key[65], *id, *dir, *tmp, *found = NULL, *lock;
	DIR *d;
	int e, lk;

	if (stat(src, &st) < 0) {
		error("source: '%s': %s", src, strerror(errno));
		return NULL;
	}
	if (!is_tarball(src, &st))
		return xstrdup(src);
	id = xasprintf("%s %lld %lld", src, (long long)st.st_size, (long long)st.st_mtime);
	sha256_hex(id, strlen(id), key);
	free(id);
	dir = xasprintf("%s/src/%.16s", perturb_cache_dir(), key);
	lock = xasprintf("%s/src", perturb_cache_dir());
	if ((e = mkdir_p(lock, 0755)) < 0) {
		error("cannot create '%s': %s", lock, strerror(-e));
		free(lock);
		free(dir);
		return NULL;
	}
	free(lock);
	lock = xasprintf("%s.lock", dir);
	lk = perturb_cache_lock(lock, "unpacking this kernel source");
	free(lock);
	if (lk < 0) {
		free(dir);
		return NULL;
	}
	char *stamp = xasprintf("%s/.perturb-unpacked", dir);
	if (file_exists(stamp))
		goto find;
	tmp = xasprintf("%s.%ld", dir, (long)getpid());
	if ((e = mkdir_p(tmp, 0755)) < 0) {
		error("cannot create '%s': %s", tmp, strerror(-e));
		free(tmp);
		goto out;
	}
	note("unpacking %s into %s (once)", src, dir);
	char *tar[] = { "tar", "-xf", (char *)src, "-C", tmp, NULL };
	char *rm[] = { "rm", "-rf", tmp, NULL };
	if (proc_run_command(tar, NULL, NULL, UNPACK_TIMEOUT_S, "tar -xf") < 0) {
		proc_run_command(rm, NULL, NULL, 600, "rm -rf");
		free(tmp);
		goto out;
	}
	char *t = xasprintf("%s/.perturb-unpacked", tmp);
	FILE *f = fopen(t, "w");
	if (f)
		fclose(f);
	free(t);
	char *old[] = { "rm", "-rf", dir, NULL };
	proc_run_command(old, NULL, NULL, 600, "rm -rf");
	if (rename(tmp, dir) < 0) {
		error("cannot rename '%s' to '%s': %s", tmp, dir, strerror(errno));
		proc_run_command(rm, NULL, NULL, 600, "rm -rf");
		free(tmp);
		goto out;
	}
	free(tmp);
find:
	/* the tarball holds one top folder: linux-source-6.1/ */
	d = opendir(dir);
	for (struct dirent *e; d && !found && (e = readdir(d));) {
		char *mk = xasprintf("%s/%s/Makefile", dir, e->d_name);
		if (e->d_name[0] != '.' && file_exists(mk))
			found = xasprintf("%s/%s", dir, e->d_name);
		free(mk);
	}
	if (d)
		closedir(d);
	if (!found)
		error("source: '%s' holds no kernel source tree (no */Makefile)", src);
out:
	close(lk);
	free(stamp);
	free(dir);
	return found;
}

/* The failed builds of kbuild_jobs with once set: not tried again. */
static struct failed_build {
	char *product, *why;
} *failed_builds;
static size_t n_failed_builds, alloc_failed_builds;

static const struct failed_build *failed_build(const char *product)
{
	for (size_t i = 0; i < n_failed_builds; i++)
		if (!strcmp(failed_builds[i].product, product))
			return &failed_builds[i];
	return NULL;
}

/* Undo the moves of a failed build: remove what the script wrote aside. */
static void unlink_staged(const char *const *moves)
{
	for (size_t i = 0; moves && moves[i] && moves[i + 1]; i += 2)
		unlink(moves[i]);
}

int kbuild_once(const struct kbuild_job *job, char *why, size_t len)
{
	const struct failed_build *f;
	const char *script = strrchr(job->argv[0], '/');
	char *lockdir, *lockwhat, **argv;
	size_t argc = 0;
	double t0;
	int e, lk, r, ret = -1;

	if (file_exists(job->product))
		return 1;
	if (job->once && (f = failed_build(job->product))) {
		snprintf(why, len, "%s", f->why);
		return -1;
	}
	lockdir = dir_name(job->lock);
	if ((e = mkdir_p(lockdir, 0755)) < 0) {
		why_error(why, len, "cannot create '%s': %s", lockdir, strerror(-e));
		error("%s", why);
		free(lockdir);
		return -1;
	}
	free(lockdir);
	lockwhat = xasprintf("building %s", job->what);
	lk = perturb_cache_lock(job->lock, lockwhat);
	free(lockwhat);
	if (lk < 0)
		return why_error(why, len, "cannot lock '%s' to build %s", job->lock, job->what);
	if (file_exists(job->product)) {	/* built while we waited */
		ret = 1;
		goto out;
	}

	/* sh -c 'log=$1; shift; exec sh "$@" >"$log" 2>&1' sh LOG SCRIPT ARGS... */
	while (job->argv[argc])
		argc++;
	argv = xmalloc((argc + 6) * sizeof(*argv));
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = "log=$1; shift; exec sh \"$@\" >\"$log\" 2>&1";
	argv[3] = "sh";
	argv[4] = (char *)job->log;
	memcpy(argv + 5, job->argv, (argc + 1) * sizeof(*argv));
	note("building %s (minutes; log: %s)", job->what, job->log);
	t0 = now_mono();
	r = proc_run_command(argv, NULL, NULL, job->timeout_s, script ? script + 1 : job->argv[0]);
	free(argv);
	for (size_t i = 0; r == 0 && job->moves && job->moves[i] && job->moves[i + 1]; i += 2)
		if (rename(job->moves[i], job->moves[i + 1]) < 0) {
			error("cannot move '%s' to '%s': %s", job->moves[i], job->moves[i + 1],
			      strerror(errno));
			r = -1;
		}
	if (r == 0 && file_exists(job->product)) {
		note("built %s in %.0f s", job->what, now_mono() - t0);
		ret = 0;
		goto out;
	}
	unlink_staged(job->moves);
	why_error(why, len, "%s%s did not build (log: %s)", job->once ? "unavailable: " : "",
		  job->what, job->log);
	if (job->once) {
		warning("%s; its end:", why);
		ALLOC_GROW(failed_builds, n_failed_builds + 1, alloc_failed_builds);
		failed_builds[n_failed_builds].product = xstrdup(job->product);
		failed_builds[n_failed_builds++].why = xstrdup(why);
	} else {
		error("%s; its end:", why);
	}
	print_file_tail(job->log, 15);
out:
	close(lk);
	return ret;
}

char *kbuild_image(const struct boot_cfg *b)
{
	char key[65], why[512], *script = script_path(), *dir = NULL, *img = NULL;
	char *tree = NULL, *tmp = NULL, *tcfg = NULL, *cfg = NULL, *what = NULL, *ret = NULL;
	struct kbuild_job job = { .timeout_s = BUILD_TIMEOUT_S };

	if (!script) {
		error("config: cannot find kernels/build.sh");
		return NULL;
	}
	if (image_key(b, script, key, why, sizeof(why)) < 0) {
		error("%s", why);
		goto out;
	}
	dir = image_dir(key);
	img = xasprintf("%s/bzImage", dir);
	if (file_exists(img)) {		/* cached: no source needed */
		ret = img;
		img = NULL;
		goto out;
	}
	if (!(tree = source_tree(source_of(b))))
		goto out;
	tmp = xasprintf("%s/bzImage.%ld", dir, (long)getpid());
	tcfg = xasprintf("%s.config", tmp);
	cfg = xasprintf("%s.config", img);
	what = xasprintf("a kernel from %s with %s into %s", tree, b->config, img);
	char *argv[] = { script, tree, b->config, tmp, NULL };
	const char *moves[] = { tcfg, cfg, tmp, img, NULL };
	job.what = what;
	job.product = img;
	job.lock = xasprintf("%s/.lock", dir);
	job.log = xasprintf("%s/build.log", dir);
	job.argv = argv;
	job.moves = moves;
	if (kbuild_once(&job, why, sizeof(why)) >= 0) {
		ret = img;
		img = NULL;
	}
	free((char *)job.lock);
	free((char *)job.log);
out:
	free(script);
	free(dir);
	free(img);
	free(tree);
	free(tmp);
	free(tcfg);
	free(cfg);
	free(what);
	return ret;
}
