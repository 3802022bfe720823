/*
 * main.c - perturb's entry point: the subcommand table and dispatch.
 * See commands.h for how to add a subcommand.
 */
#include "commands.h"
#include "options.h"
#include "backends/journal.h"
#include "core/cgroup.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct command commands[] = {
	{ "run", cmd_run, CMD_TOUCHES_KERNEL,
	  "run [EXPERIMENT.yaml | 'CMD ARGS'... | -- CMD ARGS] [options]",
	  "Run every workload under every variant of a study and store each run, or,\n"
	  "with no file, compare commands with the first (a one-liner).  Ends with one\n"
	  "screen: each variant's median, dilation, interval, significance, warnings.\n" },
	{ "report", cmd_report, 0, "report [options]",
	  "Print tables from a stored run.\n" },
	{ "runs", cmd_runs, 0, "runs [--db PATH] [--json]",
	  "The runs a results database holds: id, experiment, start, status, runs\n"
	  "done of the plan's total, failed runs and machine.  --run of report and\n"
	  "gate (and compare's RUN_A RUN_B) take an id, latest, or a negative offset:\n"
	  "-1 the latest, -2 the one before.\n" },
	{ "workloads", cmd_workloads, 0, "workloads [list|show NAME|validate FILE...]",
	  "List, show or validate workload files.\n" },
	{ "restore", cmd_restore, CMD_TOUCHES_KERNEL, "restore [-q]",
	  "Put back what an interrupted perturb left: the kernel tracing state it\n"
	  "changed (tracer, events, tracing_on, buffer size, filters, options), the\n"
	  "tracefs mount it made, and the daemons and background loads it started.\n"
	  "Reads the journals of perturb processes that are gone (in\n"
	  "$PERTURB_STATE_DIR, else /var/lib/perturb for root) and says what it did;\n"
	  "exit 0 also when there is nothing to do.  `perturb run` does the same\n"
	  "first when it finds such a journal.\n" },
	{ "gate", cmd_gate, 0, "gate [EXPERIMENT.yaml] [options]",
	  "Judge a stored run against dilation thresholds, for CI: for every rule and\n"
	  "every variant and workload it matches, PASS when the whole confidence\n"
	  "interval of the dilation is below the threshold, FAIL when it is above,\n"
	  "INCONCLUSIVE when it contains it (a warning estimates how many more runs\n"
	  "would decide).  Rules: the experiment's gate: section (the file given, else\n"
	  "the one stored with the run), or one rule from the options below.  Several\n"
	  "judgements are Holm-corrected (the intervals widen accordingly).\n"
	  "\n"
	  "Exit status: 0 passed (or inconclusive), 1 a judgement failed, 2 usage or\n"
	  "configuration error, 3 database error.\n" },
	{ "compare", cmd_compare, 0, "compare RUN_A RUN_B [options]",
	  "Two stored runs side by side, benchstat-style: per workload, variant and\n"
	  "metric the median of A and of B, the change of B over A in % with its\n"
	  "bootstrap CI (Holm-adjusted over the changes shown); '~' when the change is\n"
	  "not significant.  Differences of provenance (perturb version, kernel, kernel\n"
	  "command line, CPU, governor, SMT, ASLR) are printed above the table.\n" },
	{ "doctor", cmd_doctor, 0, "doctor [--json] [-q]",
	  "What this machine can do and what makes its measurements noisy: root,\n"
	  "tracefs, PAPI, perf events, QEMU and KVM, CPU model, governor, boost, SMT,\n"
	  "ASLR, load and isolated CPUs; each noise source with a fix that fits this\n"
	  "machine (its own CPUs, its own counters), or why there is none.  Changes\n"
	  "nothing.\n" },
	{ "status", cmd_status, 0, "status [--db PATH] [--run ID]",
	  "Where a study run on Slurm (perturb run --slurm) stands: each shard pending,\n"
	  "running on its node, done, or failed with its reason; the runs done out of\n"
	  "the total.\n" },
	{ "merge", cmd_merge, 0, "merge [SHARD.db...] [--db PATH] [--run ID]",
	  "Fold the databases of a study's shards into its main database: a shard of\n"
	  "another experiment or plan is refused, a run is never stored twice, and\n"
	  "merging again adds nothing.\n" },
	{ "history", cmd_history, 0, "history STUDY [options]",
	  "A study's overhead across its stored runs, in the order of their revisions\n"
	  "(commit order when the runs name a repository: the study's revision: key;\n"
	  "else the order they ran): per workload, variant and metric each run's\n"
	  "dilation with its interval, n and verdict, as perturb report computes them,\n"
	  "and the change points of the series (E-divisive means, permutation p) with\n"
	  "the revisions on either side, the dilation before and after, the change in %\n"
	  "with its interval.  docs/history.md.\n" },
	{ "bisect", cmd_bisect, CMD_TOUCHES_KERNEL,
	  "bisect STUDY.yaml --repo DIR --good REV --bad REV --build CMD --max-dilation X [options]",
	  "Find the commit that made an overhead cross a threshold: git bisect in DIR,\n"
	  "at each commit the build command, then the study (stored with the commit as\n"
	  "its label and revision), judged as perturb gate judges; rounds are added to\n"
	  "an undecided commit up to --max-rounds, then it is skipped, never guessed.\n"
	  "The good and bad commits are measured first.  Ends with the first bad\n"
	  "commit, its dilation against the last good one's with an interval, and the\n"
	  "runs it cost; run again, it reuses the runs stored.  DIR is put back on its\n"
	  "branch (git bisect reset) on every exit.  docs/history.md.\n"
	  "\n"
	  "Exit status: 0 a first bad commit named, 1 undecided, 2 usage, 3 a failure.\n" },
	{ "gen", cmd_gen, 0, "gen KIND SIZE FILE [--seed N]",
	  "Write SIZE bytes of deterministic input data of KIND (text, binary) to FILE\n"
	  "(- for standard output); the same seed gives the same bytes everywhere.\n" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: perturb COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  perturb %s\n", commands[i].usage);
	fprintf(f, "  perturb help COMMAND\n  perturb --version\n\n"
		"Exit status: 0 success, 1 overhead over a gate threshold, 2 usage or\n"
		"configuration error (nothing run or written), 3 failure while running.\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* `perturb help NAME` and `perturb NAME --help`: the command prints its
 * help, its usage line and description from its row above the options of
 * its table (options.h). */
static int help(const char *name)
{
	const struct command *c = find_command(name);
	char *argv[] = { (char *)name, "--help", NULL };

	if (!c) {
		error("no such command '%s'", name);
		usage(stderr);
		return EXIT_USAGE;
	}
	opt_set_help_intro(c->usage, c->help);
	return c->fn(2, argv);
}

/* Flush stdout and report a write failure (a full disk, a closed pipe). */
static int finish(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		error("write failure on standard output: %s", strerror(errno));
		return status ? status : EXIT_RUNTIME;
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return finish(EXIT_OK);
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("perturb %s\n", PERTURB_VERSION);
		return finish(EXIT_OK);
	}
	if (!strcmp(cmd, "help")) {
		if (argc < 3) {
			usage(stdout);
			return finish(EXIT_OK);
		}
		return finish(help(argv[2]));
	}
	const struct command *c = find_command(cmd);
	if (!c) {
		error("'%s' is not a perturb command", cmd);
		usage(stderr);
		return EXIT_USAGE;
	}
	/* Help without undoing an interrupted perturb first (below). */
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return finish(help(cmd));
		if (!strcmp(argv[i], "--"))
			break;
	}
	opt_set_help_intro(c->usage, c->help);	/* what the command's --help prints first */
	/* what a command puts in a cgroup is journaled before it goes in */
	cgroup_journal_with(journal_cgroup);
	/* A perturb that was killed left its changes: undo them first. */
	if ((c->flags & CMD_TOUCHES_KERNEL) && c->fn != cmd_restore && journal_stale_exists()) {
		if (journal_recover(stderr, 0, NULL) < 0) {
			error("the state left by an interrupted perturb could not be restored; "
			      "fix what is said above, then run 'perturb restore'");
			return finish(EXIT_RUNTIME);
		}
	}
	return finish(c->fn(argc - 1, argv + 1));
}
