/*
 * backend.h - variant backends: the ways of putting the system into a
 * variant.  Each is one row of the table in backend.c (or registered with
 * backend_register()); docs/architecture.md walks through adding one.
 *
 * Choosing.  A backend may claim a variant key (key: qemu claims `boot:`);
 * a variant holding that key is served by it, a variant holding no
 * backend's key by the default backend, the table's first row (host, which
 * claims `bpf:`; its variants without one have cfg NULL).  Two backends' keys in one variant is an error.  The common
 * keys (name, description, env, wrap, setup, teardown, daemon,
 * daemon_ready, background, kernel:, lttng:) are read by the loader for every
 * variant; a backend refuses in check() those it cannot honour.
 *
 * The block.  The loader (engine/config.c) allocates cfg_size zeroed bytes
 * as v->cfg and calls parse() on the key's value: it validates the block
 * with the yamlnode.h functions (their messages carry its positions) and
 * fills cfg; release() frees what parse() put in cfg (also after a failed
 * parse), never cfg itself.  finish() (optional) runs once the whole file
 * is read, for experiment-wide defaults (qemu: the top-level
 * deterministic:).  A backend without a key has no block: cfg is NULL.
 *
 * A study calls, in this order:
 *   check()  for every selected variant before anything runs or is written:
 *            0 = this machine can set it up, -1 with `why` filled otherwise
 *            (the study stops with exit 2, or skips it with
 *            --skip-unavailable); *at is the part of v refused, for the
 *            message: the engine presets v->cfg_pos;
 *   build()  (optional) for every variant that will run, before the study's
 *            first run: long preparation outside the measured time (qemu
 *            builds config: kernels); -1 (printed) stops the study;
 *   enter()  when the plan switches to the variant: make the system be it;
 *   run()    for each of its runs (runner.h's contract: 0 with the result,
 *            whatever its status, or -1 on an internal error, printed);
 *   leave()  when the plan switches away, at the end, and on every error or
 *            stop path; it must undo a partial enter() and be idempotent.
 *            ctx->next is the variant entered right after (set only when
 *            the plan switches, NULL otherwise): a backend may then leave
 *            part of its state for that variant's enter() to change,
 *            instead of undoing it (the host backend does so for kernel
 *            tracing state shared by two kernel: variants); when next is
 *            NULL, or leave() fails, everything must be undone.
 *   done()   (optional) once per variant after the study's last leave(),
 *            on every path, before the engine frees priv: what the backend
 *            has to say about the whole study (host: how often the
 *            background load was started, once, not at every switch).
 * Only run is required; a NULL check, enter, leave or done does nothing.
 *
 * State.  ctx->priv is the backend's state for one variant: when priv_size
 * > 0 the engine allocates it zeroed before the study's first enter() and
 * frees it after the last leave(); with priv_size 0 ctx->priv starts NULL
 * and the backend sets and frees it itself (qemu keeps its guest there).
 *
 * Plan and store.  boots() (optional, default 1) is how many blocks the
 * plan splits the variant's runs into (plan.h: qemu's boots:, one boot
 * each); virtual_time() (optional, default 0) is 1 when the variant's
 * times count executed instructions (qemu's deterministic:), stored as the
 * variant's timebase.
 *
 * Adding a backend: one file backends/NAME.c ending in `const struct
 * backend backend_NAME = { ... }`, and one row in backends[] (backend.c);
 * or, outside the tree (tests/backend_nice.c), backend_register().
 */
#ifndef PERTURB_BACKEND_H
#define PERTURB_BACKEND_H

#include <stddef.h>
#include "core/experiment.h"
#include "core/proc.h"
#include "core/runner.h"
#include "core/yamlnode.h"

/* What every backend gets, one per variant for a whole study. */
struct backend_ctx {
	const struct experiment *exp;
	const struct variant *variant;
	char **envp;		/* environment of this variant's processes */
	const char *logdir;	/* where daemon/background/console logs go */
	const char *cwd;	/* working directory for setup/teardown */
	const struct variant *next;	/* see leave() above */
	void *priv;		/* see State above */
};

/* A further key a backend claims, with a block type of its own (host's
 * `perf:`): the same contract as the backend's own key, parse and release. */
struct backend_block {
	const char *key;
	size_t cfg_size;
	int (*parse)(struct yn_ctx *y, const struct ynode *block, void *cfg);
	void (*release)(void *cfg);
};

struct backend {
	const char *name;
	const char *key;	/* the variant key it claims; NULL: none */
	size_t cfg_size;	/* bytes of v->cfg */
	size_t priv_size;	/* bytes of ctx->priv; 0: the backend's own */
	int (*parse)(struct yn_ctx *y, const struct ynode *block, void *cfg);
	void (*release)(void *cfg);
	void (*finish)(struct variant *v, const struct experiment *exp);
	int (*check)(const struct variant *v, struct pos *at, char *why, size_t len);
	int (*build)(const struct variant *v);
	int (*enter)(struct backend_ctx *ctx);
	int (*run)(struct backend_ctx *ctx, const struct run_request *req,
		   struct run_result *res);
	int (*leave)(struct backend_ctx *ctx);
	void (*done)(struct backend_ctx *ctx);
	int (*boots)(const struct variant *v);
	int (*virtual_time)(const struct variant *v);
	const struct backend_block *blocks;	/* further keys; ends at a NULL key */
};

/*
 * --dry-run: set by the study before the checks.  check() must then change
 * nothing on the machine (no lock, mount, journal or trial application),
 * check what it can by reading, and say (note()) what it did not check.
 */
extern int backend_dry_run;

extern const struct backend backend_host;
extern const struct backend backend_qemu;

/*
 * Add a backend to the table (for backends outside it: a test's).  Call it
 * before loading an experiment.  Returns 0, or -1 (printed) when its name
 * or key is taken, it has no run, or the table is full.
 */
int backend_register(const struct backend *be);
/* The backends, in table order (the default one first), then registered
 * ones; NULL after the last.  i from 0. */
const struct backend *backend_at(size_t i);
/* The backend that claims key (its key or a block's), or NULL. */
const struct backend *backend_for_key(const char *key);
/* The i-th key be claims (i from 0: its key, then its blocks'), as a block
 * (the key's parse, release and size); 0, or -1 past the last. */
int backend_block_at(const struct backend *be, size_t i, struct backend_block *out);
/* The backend of variants without a backend key: host. */
const struct backend *backend_default(void);

/* v's boots() (1 when it has none) and virtual_time() (0). */
int backend_boots(const struct variant *v);
int backend_virtual_time(const struct variant *v);

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
