/*
 * commands.h - the subcommand table.
 *
 * Adding a subcommand:
 *   1. write harness/cmd_NAME.c with `int cmd_NAME(int argc, char **argv)`;
 *      argv[0] is the subcommand name; return the exit status (EXIT_* below);
 *   2. declare it here and add one row to commands[] in main.c, with the
 *      CMD_* flags it needs;
 *   3. add its usage to `perturb help` (the row's .usage) and tests.
 *
 * Adding a workload: write workloads/NAME.yaml (docs/workloads.md); for a
 * micro-benchmark also one C function ending in a struct micro_info
 * (workloads/micro/micro.h) and one row of MICRO_LIST (micros.h).
 *
 * Adding a variant backend: write harness/backend_NAME.c implementing
 * struct backend (backend.h) and add one row to backends[] in backend.c.
 *
 * Adding a report format: write reports/render_NAME.c implementing struct
 * renderer (reports/report.h) and add one row to renderers[] in report.c.
 */
#ifndef PERTURB_COMMANDS_H
#define PERTURB_COMMANDS_H

/* Exit statuses (SPEC "Exit status"). */
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
	const char *help;	/* full help text for `perturb help NAME` */
};

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_workloads(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* Common option parsing helper: "--db PATH" / "--db=PATH".  Returns 1 and
 * sets *value when argv[*i] is the option (advancing *i past its value), 0
 * when it is not, -1 (printed) when the value is missing. */
int opt_value(int argc, char **argv, int *i, const char *name, const char **value);

/* Values shared by several subcommands: 0, or -1 after printing what was
 * expected.  --confidence: a level in (0, 1), "0.95" or "95%".  --run: a
 * positive run id. */
int opt_confidence(const char *val, double *level);
int opt_run_id(const char *val, long *id);

#endif
