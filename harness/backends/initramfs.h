/*
 * initramfs.h - newc cpio archives for the qemu backend's guests.
 *
 * An archive is built in memory: directories are added as needed (mode
 * 0755), every entry has uid/gid 0 and mtime 0, so the same inputs give the
 * same bytes (the archive is cached by its content hash).  The kernel
 * accepts it uncompressed.
 */
#ifndef PERTURB_INITRAMFS_H
#define PERTURB_INITRAMFS_H

#include <stddef.h>
#include "lib/util.h"

struct cpio {
	struct strbuf buf;
	char **paths;		/* every path added, to skip duplicates */
	size_t n_paths, alloc_paths;
	unsigned ino;
};

void cpio_init(struct cpio *c);
void cpio_release(struct cpio *c);
/* path is absolute inside the archive; parents are created. */
void cpio_add_dir(struct cpio *c, const char *path);
void cpio_add_data(struct cpio *c, const char *path, const void *data, size_t len,
		   unsigned mode);
void cpio_add_symlink(struct cpio *c, const char *path, const char *target);
void cpio_add_chardev(struct cpio *c, const char *path, unsigned major, unsigned minor);
/* A host file at the same path (or at as, when non-NULL); -1 with why. */
int cpio_add_file(struct cpio *c, const char *host, const char *as, char *why, size_t len);
/* A program (absolute path, or a name looked up on PATH) with the shared
 * libraries ldd lists for it, each at its host path; -1 with why. */
int cpio_add_program(struct cpio *c, const char *prog, char *why, size_t len);
/* Appends the trailer; the archive is c->buf. */
void cpio_finish(struct cpio *c);

#endif
