/*
 * backend.h - variant backends: the ways of putting the system into a
 * variant.
 *
 * Every variant is served by exactly one backend, chosen by backend_for():
 * `boot:` variants by "qemu", all others by "host".  The executor calls, in
 * this order:
 *   check()  for every selected variant before anything runs or is written:
 *            0 = this machine can set it up, -1 with `why` filled otherwise
 *            (the study stops with exit 2, or skips it with --skip-unavailable);
 *   enter()  when the plan switches to the variant: make the system be it;
 *   run()    for each of its runs;
 *   leave()  when the plan switches away, at the end, and on every error or
 *            stop path; it must undo a partial enter() and be idempotent.
 *            ctx->next is the variant entered right after (set only when
 *            the plan switches, NULL otherwise): a backend may then leave
 *            part of its state for that variant's enter() to change,
 *            instead of undoing it (the host backend does so for kernel
 *            tracing state shared by two kernel: variants); when next is
 *            NULL, or leave() fails, everything must be undone.
 *
 * Adding a backend: one file backend_NAME.c defining `const struct backend
 * backend_NAME`, one row in backends[] (backend.c), and a case in
 * backend_for().
 */
#ifndef PERTURB_BACKEND_H
#define PERTURB_BACKEND_H

#include <stddef.h>
#include "engine/config.h"
#include "core/proc.h"
#include "core/runner.h"

struct backend_ctx {
	const struct experiment *exp;
	const struct variant *variant;
	char **envp;		/* environment of this variant's processes */
	const char *logdir;	/* where daemon/background logs go */
	const char *cwd;	/* working directory for setup/teardown */
	const struct variant *next;	/* see leave() above */
	/* host backend state */
	int entered;
	size_t setup_done;	/* setup commands that succeeded */
	struct daemon *daemon;
	struct background *background;
	void *priv;		/* backend state (host: the kernel: block's) */
};

struct backend {
	const char *name;
	int (*check)(const struct variant *v, char *why, size_t len);
	int (*enter)(struct backend_ctx *ctx);
	int (*leave)(struct backend_ctx *ctx);
	int (*run)(struct backend_ctx *ctx, const struct run_request *req,
		   struct run_result *res);
};

extern const struct backend backend_host;
extern const struct backend backend_qemu;

const struct backend *backend_for(const struct variant *v);
/* Position of the part of v that its backend refuses (for messages). */
const struct pos *backend_pos(const struct variant *v);

/*
 * The environment of a variant: perturb's own environment with the variant's
 * env: entries added or replaced.  Nothing else is added, so that the
 * environment's size (which shifts the workload's stack, see Mytkowicz et
 * al., "Producing wrong data without doing anything obviously wrong!",
 * ASPLOS 2009) differs between variants only by what the user asked for.
 * Returns a NULL-terminated, malloc'd array; free with argv_free().
 */
char **env_build(const struct variant *v);

#endif
