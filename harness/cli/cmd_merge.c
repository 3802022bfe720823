/*
 * cmd_merge.c - `perturb merge`: fold the databases of a study's shards
 * into its main database (engine/merge.h, docs/distributed.md).  A shard
 * of another experiment or plan is refused; a result is never stored
 * twice, so merging again is harmless.  Exit status 0 when every shard
 * database found was merged, 2 when the database holds no such study, 3
 * when a shard database was refused or unreadable, or a database error.
 */
#include "commands.h"
#include "options.h"
#include "engine/merge.h"
#include "lib/output.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int cmd_merge(int argc, char **argv)
{
	const char *db = "results/perturb.db";
	int64_t run_id = 0, run = 0;
	char **files = NULL;
	size_t n_files = 0;
	struct opt opts[] = {
		OPT_ARGS("SHARD.db", &files, &n_files,
			 "shard databases (default: every shard of the run, where its task wrote it)"),
		OPT_STRING(0, "db", &db, "PATH", "results database (default results/perturb.db)"),
		OPT_INTEGER(0, "run", &run_id, 1, INT64_MAX, "ID",
			    "a stored run (default: the newest split into shards)"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "print only errors"),
		OPT_END(),
	};
	struct merge_totals t;
	struct store *st = NULL;
	int rc, ret = EXIT_RUNTIME;

	if ((rc = parse_options(argc, argv, opts, "merge")))
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	/* the database written is none of the shards read (lib/output.h) */
	struct output_inputs in = { 0 };
	for (size_t i = 0; i < n_files; i++)
		output_inputs_add_db(&in, files[i]);
	rc = output_check(db, "--db", &in);
	output_inputs_release(&in);
	if (rc < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if ((rc = merge_open(db, STORE_WRITE, run_id, &st, &run)) < 0) {
		ret = rc == -2 ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (merge_run(st, run, files, n_files, &t) < 0)
		goto out;
	note("run %" PRId64 ": %zu results added from %zu shard database%s (%zu missing, %zu "
	     "refused); %zu/%zu runs have results", run, t.added, t.merged,
	     t.merged == 1 ? "" : "s", t.missing, t.refused, t.done, t.total);
	ret = t.refused ? EXIT_RUNTIME : EXIT_OK;
out:
	free(files);
	store_close(st);
	return ret;
}
