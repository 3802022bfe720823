/*
 * commands.h - the subcommand table.
 *
 * Adding a subcommand:
 *   1. write harness/cli/cmd_NAME.c with `int cmd_NAME(int argc, char **argv)`;
 *      argv[0] is the subcommand name; return the exit status (EXIT_* below);
 *   2. declare its options as a table (options.h) and parse them first with
 *      parse_options(): `perturb help NAME` prints the options from it;
 *   3. declare it here and add one row to commands[] in main.c, with the
 *      CMD_* flags it needs, its usage line and its description;
 *   4. document every option in docs/perturb.1 (tests/test_options.c checks
 *      the table, the help and the man page against each other) and test it.
 *
 * Adding a workload: write workloads/NAME.yaml (docs/workloads.md); for a
 * micro-benchmark also one C function ending in a struct micro_info
 * (workloads/micro/micro.h) and one row of MICRO_LIST (micros.h).
 *
 * Adding a variant backend: write harness/backends/NAME.c implementing
 * struct backend (backends/backend.h) and add one row to backends[] in
 * backends/backend.c.
 *
 * Adding a report format: write reports/render_NAME.c implementing struct
 * renderer (reports/report.h) and add one row to renderers[] in report.c.
 */
#ifndef PERTURB_COMMANDS_H
#define PERTURB_COMMANDS_H

/* Exit statuses (docs/perturb.1, EXIT STATUS). */
enum exit_status {
	EXIT_OK = 0,		/* success */
	EXIT_OVERHEAD = 1,	/* gate / compare found overhead over the threshold */
	EXIT_USAGE = 2,		/* usage or configuration error: nothing run, nothing written */
	EXIT_RUNTIME = 3,	/* failure while running: setup, database, ... */
};

enum cmd_flags {
	CMD_NEEDS_ROOT = 1 << 0,	/* refuses to run unless root */
	CMD_TOUCHES_KERNEL = 1 << 1,	/* checks for a stale tracing journal first */
};

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const char *usage;	/* one line: "run [EXPERIMENT.yaml] [options]" */
	const char *help;	/* what it does, for `perturb help NAME`; the options
				 * part comes from the command's table (options.h) */
};

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_workloads(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_bisect(int argc, char **argv);

#endif
