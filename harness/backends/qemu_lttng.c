/*
 * qemu_lttng.c - an lttng: block's kernel events inside the qemu backend's
 * guest (qemu.h; docs/experiment.md, "lttng").
 *
 * Kernel tracing with LTTng needs its modules, built for the guest's
 * kernel: kernels/lttng-modules.sh builds Debian's lttng-modules source
 * (/usr/src/lttng-modules-VERSION, package lttng-modules-dkms) against the
 * headers of the `kernel: debian` image (its release read from the
 * bzImage's header), fetched with apt-get download like the image, once:
 * the modules are cached next to the kernel, in
 * kernel-debian/lttng-modules-VERSION-RELEASE[+PROBE...]/lib/modules/RELEASE,
 * keyed by the lttng-modules version, the kernel release and the probe
 * modules built, once on the machine (kbuild_once(), kbuild.h).  Only what
 * the variant's events load is built: the core (syscall events are the
 * tracer's own) and the probe modules whose event headers name one of its
 * tracepoints (lttng_guest_probes()); an event no probe names is built
 * nothing for, and the guest refuses it by name.  A build that fails is said once
 * ("unavailable: ..." and the log's end), not tried again by this perturb,
 * and the variant's runs are errors naming it; the study goes on.  A kernel that cannot take
 * the modules is refused up front by check(): `config:` kernels (built
 * without modules, CONFIG_MODULES=n in kernels/configs/base.config, and
 * without the tree a module build needs) and a `kernel: PATH` (no headers
 * to build against).
 *
 * The initramfs then holds the modules (with depmod's files, loaded by
 * name by lttng-sessiond) and lttng, lttng-sessiond and lttng-consumerd
 * with their shared libraries and the dynamic loader; LTTNG (proto.h)
 * asks the guest agent to start the session daemon and check the
 * channel and every event against the guest kernel.  Each run's result
 * carries LTTng's own accounting, added as the metrics lttng_events,
 * lttng_discarded, lttng_lost (unit "events") and lttng_bytes ("bytes").
 */
#include "qemu.h"
#include "initramfs.h"
#include "kbuild.h"
#include "core/result.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LTTNG_SOURCE_DIR "/usr/src"
#define LTTNG_BUILD_TIMEOUT_S 3600.0
#define LTTNG_CONSUMERD "/usr/lib/x86_64-linux-gnu/lttng/libexec/lttng-consumerd"
#define LTTNG_SCHEMA "/usr/share/xml/lttng/session.xsd"

static const char *const lttng_programs[] = { "lttng", "lttng-sessiond", LTTNG_CONSUMERD };

int lttng_guest_wanted(const struct variant *v)
{
	return v->lttng && v->lttng->n_kernel;
}

/* The newest /usr/src/lttng-modules-VERSION: malloc'd VERSION, or NULL. */
static char *lttng_source_version(void)
{
	DIR *d = opendir(LTTNG_SOURCE_DIR);
	char *best = NULL;

	for (struct dirent *e; d && (e = readdir(d));) {
		const char *ver = e->d_name + strlen("lttng-modules-");
		if (strncmp(e->d_name, "lttng-modules-", strlen("lttng-modules-")) || !*ver)
			continue;
		if (!best || strverscmp(ver, best) > 0) {
			free(best);
			best = xstrdup(ver);
		}
	}
	if (d)
		closedir(d);
	return best;
}

/* Does the Kconfig fragment at path turn CONFIG_MODULES on? */
static int fragment_has_modules(const char *path)
{
	size_t len;
	char *data = read_file(path, &len), *line, *save = NULL;
	int yes = 0;

	if (!data)
		return 0;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		yes = !strcmp(line, "CONFIG_MODULES=y") ? 1 :
			!strncmp(line, "CONFIG_MODULES=", 15) ||
			!strcmp(line, "# CONFIG_MODULES is not set") ? 0 : yes;
	free(data);
	return yes;
}

int lttng_guest_check(const struct variant *v, char *why, size_t len)
{
	const struct boot_cfg *b = v->cfg;
	const struct lttng_spec *l = v->lttng;
	char *ver;

	if (!l)
		return 0;
	if (l->n_user || l->n_preload)
		return why_error(why, len, "variant '%s': lttng: userspace: and preload: trace the "
				 "host's programs (the host backend); inside the guest only "
				 "kernel: events are traced", v->name);
	if (!l->n_kernel)
		return 0;
	if (b->config)
		return why_error(why, len, "variant '%s': lttng: kernel events need a kernel that "
				 "takes lttng-modules; this config: kernel %s", v->name,
				 fragment_has_modules(b->config) ?
				 "has CONFIG_MODULES=y, but kernels/build.sh keeps no built tree to "
				 "build the modules against (use kernel: debian)" :
				 "has no loadable module support (CONFIG_MODULES is not set: "
				 "kernels/configs/base.config turns it off)");
	if (strcmp(b->kernel, "debian"))
		return why_error(why, len, "variant '%s': lttng: kernel events need kernel: debian "
				 "(lttng-modules are built against its headers, fetched with "
				 "apt-get); '%s' comes with no headers", v->name, b->kernel);
	if (!(ver = lttng_source_version()))
		return why_error(why, len, "variant '%s': lttng: kernel events need the "
				 "lttng-modules source in %s (Debian package: lttng-modules-dkms)",
				 v->name, LTTNG_SOURCE_DIR);
	free(ver);
	for (size_t i = 0; i < ARRAY_SIZE(lttng_programs); i++)
		if (!program_exists(lttng_programs[i]))
			return why_error(why, len, "variant '%s': lttng: kernel events need %s "
					 "(Debian package: lttng-tools)", v->name,
					 lttng_programs[i]);
	if (!program_exists("depmod"))
		return why_error(why, len, "variant '%s': lttng: kernel events need depmod "
				 "(Debian package: kmod)", v->name);
	if (!program_exists("make") || !program_exists("gcc") || !program_exists("apt-get") ||
	    !program_exists("dpkg-deb"))
		return why_error(why, len, "variant '%s': lttng: building lttng-modules needs "
				 "make, gcc, apt-get and dpkg-deb", v->name);
	if (!kbuild_script("lttng-modules.sh"))
		return why_error(why, len, "variant '%s': lttng: needs kernels/lttng-modules.sh "
				 "(next to perturb's folder or in $PERTURB_KERNELS)", v->name);
	return 0;
}

/*
 * The release of the bzImage at path, from its setup header (the
 * kernel_version field, Documentation/x86/boot.rst): malloc'd, or NULL.
 */
char *bzimage_release(const char *path)
{
	size_t len;
	char *data = read_file(path, &len), *ret = NULL;

	if (!data || len < 0x210 || memcmp(data + 0x202, "HdrS", 4))
		goto out;
	size_t at = 0x200 + ((unsigned char)data[0x20e] | (unsigned char)data[0x20f] << 8);
	if (at >= len)
		goto out;
	size_t n = strcspn(data + at, " \n");
	if (at + n >= len || !n || n > 200)
		goto out;
	ret = xstrndup(data + at, n);
out:
	free(data);
	return ret;
}

/* Does a C identifier of text match the event pattern (fnmatch: an
 * event may end in '*')? */
static int names_event(const char *text, const char *event)
{
	for (const char *p = text; *p;) {
		if (!isalpha((unsigned char)*p) && *p != '_') {
			p++;
			continue;
		}
		const char *q = p;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		char *word = xstrndup(p, (size_t)(q - p));
		int hit = !fnmatch(event, word, 0);
		free(word);
		if (hit)
			return 1;
		p = q;
	}
	return 0;
}

/* The lines of text but the preprocessor's (an #include names files, not
 * events), added to sb. */
static void add_code(struct strbuf *sb, const char *text)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		if (p[strspn(p, " \t")] != '#')
			strbuf_add(sb, p, n);
		strbuf_add(sb, "\n", 1);
		p += n + (p[n] == '\n');
	}
}

/* Does the probe module's source (src/probes/lttng-probe-NAME.c) or an
 * event header it includes (include/instrumentation/events/...) name one
 * of the tracepoints of l? */
static int probe_wanted(const char *src, const char *file, const struct lttng_spec *l)
{
	char *path = xasprintf("%s/src/probes/%s", src, file), *text = read_file(path, NULL);
	char *line, *save = NULL;
	struct strbuf all = STRBUF_INIT;
	int hit = 0;

	free(path);
	if (!text)
		return 0;
	add_code(&all, text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char hdr[256], *h;
		if (sscanf(line, " #include <instrumentation/events/%255[^>]>", hdr) != 1)
			continue;
		path = xasprintf("%s/include/instrumentation/events/%s", src, hdr);
		if ((h = read_file(path, NULL)))
			add_code(&all, h);
		free(h);
		free(path);
	}
	free(text);
	for (size_t i = 0; i < l->n_kernel && !hit; i++)
		hit = strcmp(l->kernel[i], "syscalls") && strncmp(l->kernel[i], "syscall:", 8) &&
		      names_event(all.buf, l->kernel[i]);
	strbuf_release(&all);
	return hit;
}

char **lttng_guest_probes(const char *src, const struct lttng_spec *l, size_t *n)
{
	struct dirent **names;
	char **probes = NULL, *dir = xasprintf("%s/src/probes", src);
	int k = scandir(dir, &names, NULL, alphasort);

	free(dir);
	*n = 0;
	for (int i = 0; i < k; i++) {
		const char *f = names[i]->d_name;
		size_t len = strlen(f);
		if (!strncmp(f, "lttng-probe-", 12) && len > 14 && !strcmp(f + len - 2, ".c") &&
		    probe_wanted(src, f, l)) {
			char *name = xstrndup(f + 12, len - 14);
			argv_push(&probes, n, name);
			free(name);
		}
		free(names[i]);
	}
	if (k >= 0)
		free(names);
	return probes;
}

char *lttng_guest_modules(const struct variant *v, const char *kernel, char *why, size_t wlen)
{
	char *release = bzimage_release(kernel), *ver = lttng_source_version();
	char *kdir = dir_name(kernel), *dir = NULL, *ret = NULL, **probes = NULL, **argv = NULL;
	char *script = kbuild_script("lttng-modules.sh"), *src = NULL, bwhy[400];
	struct kbuild_job job = { .timeout_s = LTTNG_BUILD_TIMEOUT_S, .once = 1 };
	struct strbuf key = STRBUF_INIT, list = STRBUF_INIT;
	size_t n_probes = 0, n_argv = 0;

	if (!release) {
		why_error(why, wlen, "lttng: cannot read the kernel release of '%s'", kernel);
		goto out;
	}
	if (!ver || !script) {
		why_error(why, wlen, "lttng: %s is missing", ver ? "kernels/lttng-modules.sh" :
			  "the lttng-modules source");
		goto out;
	}
	src = xasprintf("%s/lttng-modules-%s", LTTNG_SOURCE_DIR, ver);
	probes = lttng_guest_probes(src, v->lttng, &n_probes);
	strbuf_addf(&key, "%s/lttng-modules-%s-%s", kdir, ver, release);
	for (size_t i = 0; i < n_probes; i++) {
		strbuf_addf(&key, "+%s", probes[i]);
		strbuf_addf(&list, "%s%s", i ? ", " : " and the probes ", probes[i]);
	}
	dir = strbuf_detach(&key);
	argv_push(&argv, &n_argv, script);
	argv_push(&argv, &n_argv, release);
	argv_push(&argv, &n_argv, src);
	argv_push(&argv, &n_argv, dir);
	for (size_t i = 0; i < n_probes; i++)
		argv_push(&argv, &n_argv, probes[i]);
	job.what = xasprintf("lttng-modules %s for %s (the core%s)", ver, release,
			     list.len ? list.buf : "");
	strbuf_release(&list);
	job.product = xasprintf("%s/lib/modules/%s/modules.dep", dir, release);
	job.lock = xasprintf("%s.lock", dir);
	job.log = xasprintf("%s.log", dir);
	job.argv = argv;
	/* a failure is said once, then named by the variant's runs */
	if (kbuild_once(&job, bwhy, sizeof(bwhy)) >= 0) {
		ret = dir;
		dir = NULL;
	} else {
		why_error(why, wlen, "lttng: %s", bwhy);
	}
	free((char *)job.what);
	free((char *)job.product);
	free((char *)job.lock);
	free((char *)job.log);
out:
	argv_free(probes);
	argv_free(argv);
	free(release);
	free(ver);
	free(kdir);
	free(dir);
	free(src);
	free(script);
	return ret;
}

/* nftw() has no argument for its callback */
static struct cpio *walk_cpio;
static size_t walk_skip;
static char walk_why[512];

static int pack_module_file(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	if (type != FTW_F || strlen(path) <= walk_skip)
		return 0;
	/* at its path inside the folder: /lib/modules/RELEASE/... */
	return cpio_add_file(walk_cpio, path, path + walk_skip, walk_why, sizeof(walk_why)) < 0;
}

int lttng_guest_pack(struct cpio *c, const struct variant *v, const char *kernel, char *why,
		     size_t wlen)
{
	char *dir = lttng_guest_modules(v, kernel, why, wlen);
	int r;

	if (!dir)
		return -1;
	walk_cpio = c;
	walk_skip = strlen(dir);
	*walk_why = '\0';
	r = nftw(dir, pack_module_file, 16, FTW_PHYS);
	free(dir);
	if (r) {
		snprintf(why, wlen, "lttng: %s", *walk_why ? walk_why : strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(lttng_programs); i++)
		if (cpio_add_program(c, lttng_programs[i], why, wlen) < 0)
			return -1;
	/* the schema lttng-sessiond checks session files against at its start */
	if (cpio_add_file(c, LTTNG_SCHEMA, NULL, why, wlen) < 0)
		return -1;
	/* the session daemon's run folder and shared memory */
	cpio_add_dir(c, "/var/run");
	cpio_add_dir(c, "/dev/shm");
	return 0;
}

int guest_lttng(struct backend_ctx *ctx, struct qemu *q, char *why, size_t wlen)
{
	const struct lttng_spec *l = ctx->variant->lttng;
	struct proto_msg req = {
		.type = PROTO_LTTNG,
		.lttng = {
			.events = { .v = l->kernel, .n = l->n_kernel },
			.subbuf_size = l->subbuf_size,
			.subbuf_count = (long)l->subbuf_count,
			.overwrite = l->overwrite,
		},
	};

	/* the session daemon loads the modules: slow under TCG */
	return ask_guest_done(q, &req, PROTO_LTTNG_DONE, "lttng",
			      now_mono() + 10 * RESULT_MARGIN_S, why, wlen);
}

void lttng_guest_result(const struct variant *v, const struct proto_result *pr,
			struct run_result *res)
{
	if (pr->lttng == PROTO_TRACE_STATS) {
		result_add_value(res, "lttng_events", (double)pr->lttng_events, "events");
		result_add_value(res, "lttng_discarded", (double)pr->lttng_discarded, "events");
		result_add_value(res, "lttng_lost", (double)pr->lttng_lost, "events");
		result_add_value(res, "lttng_bytes", (double)pr->lttng_bytes, "bytes");
	} else if (pr->lttng == PROTO_TRACE_ERROR) {
		warning("variant '%s': in the guest: lttng: %s", v->name, pr->lttng_error);
	}
}
