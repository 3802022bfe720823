/*
 * kbuild.h - guest kernels built from a Kconfig fragment (the qemu
 * backend's `config:` / `source:`).
 *
 * kernels/build.sh builds a bzImage from a kernel source tree with
 * tinyconfig + kernels/configs/base.config + the fragment.  perturb runs it
 * once per distinct (script, base config, fragment, source) and keeps the
 * image in its cache: PERTURB_CACHE/kernels/KEY/bzImage, where KEY is the
 * SHA-256 of the script, base.config and the fragment's bytes, and of the
 * source's identity (a tarball's path, size and mtime; a tree's path, its
 * top Makefile and its mtime).  The default source is Debian's
 * linux-source-6.1 tarball, unpacked once into PERTURB_CACHE/src/.
 *
 * build.sh is found in $PERTURB_KERNELS (a folder), next to the perturb
 * executable's folder (the repository: build/perturb, kernels/build.sh), or
 * in PREFIX/share/perturb/kernels.
 */
#ifndef PERTURB_KBUILD_H
#define PERTURB_KBUILD_H

#include <stddef.h>
#include "qemu_config.h"

#define KBUILD_DEFAULT_SOURCE "/usr/src/linux-source-6.1.tar.xz"

/* Are the tools to build a kernel (and the default source) here?  1, or 0
 * with why naming what is missing and its Debian package. */
int kbuild_tools(char *why, size_t len);

/* Can b's kernel be had: already built, or the fragment, the source and
 * the build tools are there?  0, or -1 with why (naming the Debian
 * package of a missing tool). */
int kbuild_check(const struct boot_cfg *b, char *why, size_t len);

/* The image for b (b->config set): from the cache, or built now
 * (kbuild_once(): minutes; progress on stderr, the build's output in
 * KEY/build.log).  Malloc'd path, or NULL with the error printed. */
char *kbuild_image(const struct boot_cfg *b);

/* kernels/NAME (build.sh, lttng-modules.sh), found as above: malloc'd
 * path, or NULL. */
char *kbuild_script(const char *name);

/*
 * A product of perturb's cache made once on this machine by a script:
 * a kernel image (kbuild_image(), kernels/build.sh), lttng-modules for
 * one (qemu_lttng.c, kernels/lttng-modules.sh).
 */
struct kbuild_job {
	const char *what;	/* what is built, for messages: "lttng-modules 2.13.9
				 * for 6.1.0-28-amd64" */
	const char *product;	/* the file whose presence means built */
	const char *lock;	/* the lock file (perturb_cache_lock()); its
				 * folder is created */
	const char *log;	/* the script's stdout and stderr (rewritten) */
	char *const *argv;	/* the script (run with sh) and its arguments */
	double timeout_s;
	/* NULL, or NULL-ended pairs FROM, TO: files the script wrote aside,
	 * renamed in order onto TO after it succeeded (the product last, so
	 * that a half-made one is never taken), removed after a failure */
	const char *const *moves;
	/* A failure makes the product unavailable to this process, it does not
	 * stop it: said as a warning instead of an error, and remembered (by
	 * product): later calls fail at once with the same why, nothing run
	 * and nothing said. */
	int once;
};

/*
 * Make job->product unless it is there:
 *   - there: 1, nothing run or said;
 *   - a failure remembered (once): -1 with its why;
 *   - otherwise take the lock (another perturb building it: "another
 *     perturb is building WHAT; waiting for it"), and look again: built
 *     while we waited, 1;
 *   - otherwise say "building WHAT (minutes; log: LOG)", run the script
 *     under the time-out (sh, its output to the log), do the moves: when
 *     the script succeeded and the product is there, "built WHAT in N s"
 *     and 0;
 *   - otherwise -1 with why ("WHAT did not build (log: LOG)", after
 *     "unavailable: " when once), said with the log's last lines.
 * The lock is released before returning.
 */
int kbuild_once(const struct kbuild_job *job, char *why, size_t len);

#endif
