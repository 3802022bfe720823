/*
 * backend_host.c - variants of the running system: env, wrap, setup and
 * teardown commands, a daemon, a background load.
 *
 * The `kernel:` block (tracefs state of the running kernel) belongs to this
 * backend too; until it is implemented such variants are refused by check().
 */
#include "backend.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int host_check(const struct variant *v, char *why, size_t len)
{
	if (v->kernel.present) {
		snprintf(why, len, "variant '%s': kernel: (tracefs state) is not supported yet "
			 "by perturb %s", v->name, PERTURB_VERSION);
		return -1;
	}
	const char *progs[3] = {
		v->wrap.n ? v->wrap.v[0] : NULL,
		v->daemon.n ? v->daemon.v[0] : NULL,
		v->background.n ? v->background.v[0] : NULL,
	};
	const char *what[3] = { "wrap", "daemon", "background" };
	for (int i = 0; i < 3; i++) {
		if (progs[i] && !program_exists(progs[i])) {
			snprintf(why, len, "variant '%s': %s program '%s' not found", v->name,
				 what[i], progs[i]);
			return -1;
		}
	}
	return 0;
}

static char *log_path(struct backend_ctx *ctx, const char *what)
{
	return xasprintf("%s/%s-%s.log", ctx->logdir, ctx->variant->name, what);
}

static int host_leave(struct backend_ctx *ctx)
{
	const struct variant *v = ctx->variant;
	int ret = 0;

	if (ctx->background) {
		long starts = 0;
		if (background_stop(ctx->background, &starts) < 0)
			ret = -1;
		ctx->background = NULL;
		note("variant '%s': background load was started %ld time%s", v->name,
		     starts, starts == 1 ? "" : "s");
	}
	if (ctx->daemon) {
		if (daemon_stop(ctx->daemon) < 0)
			ret = -1;
		ctx->daemon = NULL;
	}
	/*
	 * Teardown runs when the variant was entered, or when part of its setup
	 * ran: it undoes setup, so it runs in full either way.
	 */
	if (ctx->entered || ctx->setup_done) {
		for (size_t i = 0; i < v->n_teardown; i++) {
			char *what = xasprintf("variant '%s' teardown", v->name);
			if (proc_run_command(v->teardown[i].v, ctx->envp, ctx->cwd,
					     ctx->exp->timeout_s, what) < 0)
				ret = -1;
			free(what);
		}
	}
	ctx->entered = 0;
	ctx->setup_done = 0;
	return ret;
}

static int host_enter(struct backend_ctx *ctx)
{
	const struct variant *v = ctx->variant;
	char *path = NULL;

	for (size_t i = 0; i < v->n_setup; i++) {
		char *what = xasprintf("variant '%s' setup", v->name);
		int r = proc_run_command(v->setup[i].v, ctx->envp, ctx->cwd,
					 ctx->exp->timeout_s, what);
		free(what);
		if (r < 0)
			goto fail;
		ctx->setup_done = i + 1;
	}
	if (v->daemon.n) {
		path = log_path(ctx, "daemon");
		if (daemon_start(v->daemon.v, ctx->envp, ctx->cwd, path, v->daemon_ready_s,
				 v->daemon_ready_regex ? &v->daemon_ready_re : NULL,
				 ctx->exp->timeout_s, &ctx->daemon) < 0)
			goto fail;
		free(path);
		path = NULL;
	}
	if (v->background.n) {
		path = log_path(ctx, "background");
		if (background_start(v->background.v, ctx->envp, ctx->cwd, path, &ctx->background) < 0)
			goto fail;
		free(path);
		path = NULL;
	}
	ctx->entered = 1;
	return 0;
fail:
	free(path);
	host_leave(ctx);
	return -1;
}

static int host_run(struct backend_ctx *ctx, const struct run_request *req,
		    struct run_result *res)
{
	return runner_run(req, res);
}

const struct backend backend_host = {
	.name = "host",
	.check = host_check,
	.enter = host_enter,
	.leave = host_leave,
	.run = host_run,
};
