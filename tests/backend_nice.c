/*
 * backend_nice.c - a toy variant backend, outside the tree: a variant with
 * a `nice:` block runs each of its runs under `nice -n LEVEL` (LEVEL from
 * 1 to 19, 19 when left out).  It shows what a backend is - one file
 * ending in its row, registered with backend_register() (test_backends.c)
 * - and docs/architecture.md walks through it.
 *
 *   variants:
 *     - name: low
 *       nice: {level: 19}
 */
#include "backends/backend.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>

struct nice_cfg {
	int level;
};

static int nice_parse(struct yn_ctx *y, const struct ynode *block, void *cfg)
{
	static const char *const keys[] = { "level", NULL };
	struct nice_cfg *c = cfg;
	const struct ynode *v;
	long level = 19;

	if (yn_want_map(y, block, "nice") || yn_check_keys(y, block, "nice", keys))
		return -1;
	if ((v = yn_get(block, "level")) && yn_want_long(y, v, "level", 1, 19, &level))
		return -1;
	c->level = (int)level;
	return 0;
}

/* Only runs go under nice: what else a variant can ask for is refused. */
static int nice_check(const struct variant *v, struct pos *at, char *why, size_t len)
{
	if (v->daemon.n || v->background.n || v->n_setup || v->n_teardown || v->kernel)
		return why_error(why, len, "variant '%s': nice: runs workloads only (no daemon:, "
				 "background:, setup:, teardown: or kernel:)", v->name);
	if (!program_exists("nice"))
		return why_error(why, len, "variant '%s': nice: needs the program 'nice' "
				 "(Debian package: coreutils)", v->name);
	return 0;
}

/* The run as the host runs it, its command prefixed with nice -n LEVEL. */
static int nice_run(struct backend_ctx *ctx, const struct run_request *req,
		    struct run_result *res)
{
	const struct nice_cfg *c = ctx->variant->cfg;
	struct run_request r = *req;
	size_t n = 0;
	char level[16], **argv;
	int ret;

	while (req->argv[n])
		n++;
	snprintf(level, sizeof(level), "%d", c->level);
	argv = xcalloc(n + 4, sizeof(*argv));
	argv[0] = "nice";
	argv[1] = "-n";
	argv[2] = level;
	for (size_t i = 0; i < n; i++)
		argv[3 + i] = req->argv[i];
	r.argv = argv;
	ret = runner_run(&r, res);
	free(argv);
	return ret;
}

const struct backend backend_nice = {
	.name = "nice",
	.key = "nice",
	.cfg_size = sizeof(struct nice_cfg),
	.parse = nice_parse,
	.check = nice_check,
	.run = nice_run,
};
