/*
 * packages.h - what a workload needs from the machine: the programs (and
 * files) of its `requires:` list, the Debian package that provides each,
 * and perturb-micro for micro-benchmarks.
 *
 * A requirement is either a program name (no slash), met when it is found
 * on PATH, or a path (with a slash, glob patterns allowed), met when some
 * existing file matches it - `/usr/src/linux-source-*.tar.xz`.
 *
 * Adding a package hint: one row of the table in packages.c.
 */
#ifndef PERTURB_PACKAGES_H
#define PERTURB_PACKAGES_H

#include <stddef.h>

struct workload;

/* The Debian package that provides program (or the path pattern as written
 * in a requires: list), or NULL when perturb does not know it. */
const char *package_for(const char *program);

/*
 * Is the requirement met on this machine?  Returns 1 when it is.  Returns
 * 0 when it is not, with why (always NUL-terminated) saying so in words
 * that complete "workload 'x' requires ...":
 *   'hackbench', not found on PATH (Debian package: rt-tests)
 *   '/usr/src/linux-source-*.tar.xz', no such file (Debian package: linux-source)
 * Unknown programs get no package hint.
 */
int requirement_met(const char *req, char *why, size_t len);

/* The perturb-micro executable that {micro} expands to: perturb-micro in
 * the folder of the running perturb executable (static storage). */
const char *perturb_micro_exe(void);

/* Does the workload's cmd or shell use {micro}? */
int workload_uses_micro(const struct workload *w);

/* 1 when w does not use {micro} or perturb-micro is executable; else 0
 * with why = "perturb-micro, not found at 'PATH' (make builds it next to
 * perturb)". */
int micro_available(const struct workload *w, char *why, size_t len);

/*
 * Everything w needs, checked: every requires: entry and, when it uses
 * {micro}, an executable perturb-micro.  Returns 1 when all is there, else
 * 0 with the first missing thing in why (the words above).
 */
int workload_available(const struct workload *w, char *why, size_t len);

#endif
