/*
 * cmd_status.c - `perturb status`: where a study run on Slurm stands
 * (docs/distributed.md).  One line per shard: pending, running on NODE,
 * done, failed with Slurm's reason (scontrol, while the controller still
 * knows the task) or the shard database's, not submitted; its runs done
 * out of its total; then the runs done out of the whole plan.  Reads only:
 * `perturb merge` folds the results in.  Exit status 0, 2 when the
 * database holds no such study, 3 on a database error.
 */
#include "commands.h"
#include "options.h"
#include "engine/merge.h"
#include "engine/submit.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int cmd_status(int argc, char **argv)
{
	const char *db = "results/perturb.db";
	int64_t run_id = 0, run = 0;
	struct opt opts[] = {
		OPT_STRING(0, "db", &db, "PATH", "results database (default results/perturb.db)"),
		OPT_INTEGER(0, "run", &run_id, 1, INT64_MAX, "ID",
			    "a stored run (default: the newest split into shards)"),
		OPT_END(),
	};
	struct shard_status *ss = NULL;
	struct store *st = NULL;
	size_t n = 0, done = 0, total = 0;
	int rc, ret = EXIT_RUNTIME;

	if ((rc = parse_options(argc, argv, opts, "status")))
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if ((rc = merge_open(db, STORE_READ, run_id, &st, &run)) < 0) {
		ret = rc == -2 ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (submit_status(st, run, &ss, &n) < 0)
		goto out;
	printf("%-6s  %-12s  %-10s  %9s  %9s  %s\n", "shard", "state", "node", "runs", "merged",
	       "reason");
	for (size_t k = 0; k < n; k++) {
		char runs[32], merged[32];
		snprintf(runs, sizeof(runs), "%d/%d", ss[k].in_shard, ss[k].total);
		snprintf(merged, sizeof(merged), "%d/%d", ss[k].merged, ss[k].total);
		/* node and reason: the database's and Slurm's, shown, not obeyed */
		printf_shown(stdout, "%-6d  %-12s  %-10s  %9s  %9s  %s", ss[k].shard, ss[k].state,
			     ss[k].node[0] ? ss[k].node : "-", runs, merged, ss[k].reason);
		putchar('\n');
		done += (size_t)ss[k].in_shard;
		total += (size_t)ss[k].total;
	}
	printf("run %" PRId64 ": %zu/%zu runs done in %zu shards\n", run, done, total, n);
	ret = EXIT_OK;
out:
	free(ss);
	store_close(st);
	return ret;
}
