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

/* The image for b (b->config set): from the cache, or built now (minutes;
 * progress on stderr, the build's output in KEY/build.log).  Malloc'd
 * path, or NULL with the error printed. */
char *kbuild_image(const struct boot_cfg *b);

/* kernels/NAME (build.sh, lttng-modules.sh), found as above: malloc'd
 * path, or NULL. */
char *kbuild_script(const char *name);

/* The last lines of a log on stderr, for an error message. */
void kbuild_print_tail(const char *log, int lines);

#endif
