/*
 * cmd_restore.c - `perturb restore`: undo what an interrupted perturb left.
 *
 * A perturb killed by SIGKILL (or a crash, or a power loss) cannot restore
 * the kernel tracing state it changed nor stop the daemons and loads it
 * started; its journal (journal.h) says what they were.  This finds the
 * journals of perturb processes that are gone, stops their leftover
 * processes (checking by start time that each pid is still the process that
 * was started) and everything left in its cgroup (core/cgroup.h: the
 * workload that was running, whatever it started), removes that cgroup,
 * removes its tracing instance and puts the top level's tracing state
 * back, unmounts tracefs if that
 * perturb had mounted it, removes the journal, and says what it did.
 * Exit status 0 also when there is nothing to do; 3 when a journal is
 * corrupt or a restore failed.
 */
#include "commands.h"
#include "options.h"
#include "backends/journal.h"
#include "lib/util.h"

#include <stdio.h>

int cmd_restore(int argc, char **argv)
{
	int found = 0, rc;
	struct opt opts[] = {
		OPT_FLAG('q', "quiet", &perturb_quiet, "print only errors"),
		OPT_END(),
	};

	if ((rc = parse_options(argc, argv, opts, "restore")))
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (journal_recover(stdout, 1, &found) < 0)
		return EXIT_RUNTIME;
	if (!found && !perturb_quiet)
		printf("perturb: nothing to restore (no journal of an interrupted perturb in %s)\n",
		       journal_dir());
	return EXIT_OK;
}
