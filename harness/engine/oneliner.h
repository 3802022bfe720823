/*
 * oneliner.h - a study from a command line: `perturb run -- CMD ARGS` and
 * `perturb run 'CMD ARGS' 'CMD ARGS' ...` (docs/perturb.1), written as an
 * experiment file (docs/experiment.md) by libyaml's emitter, so that the
 * run is stored, reported, compared and gated like any other study.
 *
 * The shape of the study (what the report compares is variants on one
 * workload, against the baseline):
 *  - no --variant: the commands are the variants of one workload,
 *    "commands" (each variant's cmd: runs in place of the workload's); the
 *    first command is the baseline, so the report's dilation of variant k
 *    is "command k against command 1", as hyperfine compares its commands
 *    with the first.  One command alone is a study of one variant, "base".
 *  - --variant NAME=CMD: the commands are workloads, each run bare (the
 *    baseline variant, "base") and under every named variant.  CMD is
 *    split like a command: leading NAME=VALUE words are the variant's env,
 *    the rest (may be empty) its wrap: `--variant strace='strace -f -o
 *    /dev/null'`, `--variant bind='LD_BIND_NOW=1'`.
 * --env NAME=VALUE goes on every variant.  Workloads run in the folder
 * perturb was started in (dir:), and require (requires:) the programs of
 * their commands named bare or by an absolute path.  A command (a variant,
 * or a workload with --variant) is named by its text, as hyperfine names
 * its commands: `gzip -6 -c in`, escaped, shortened where long (an
 * ellipsis), " (2)" after a name already taken; --name NAME names the
 * commands in order instead.  The study's name is the programs' names,
 * "gzip vs zstd".
 */
#ifndef PERTURB_ONELINER_H
#define PERTURB_ONELINER_H

#include <stddef.h>
#include "core/experiment.h"

struct oneliner {
	char **commands;	/* each a command line, split by oneliner_split() */
	size_t n_commands;
	char **argv;		/* or one command given as its argv (after --) */
	size_t argc;
	int shell;		/* run each command line by /bin/sh -c */
	char **variants;	/* "NAME=CMD", as given */
	size_t n_variants;
	char **env;		/* "NAME=VALUE", as given */
	size_t n_env;
	char **names;		/* --name: the first commands' names, in order */
	size_t n_names;
	int repetitions;	/* > 0: repetitions: */
	int warmup;		/* >= 0: warmup: ; -1: the default */
	const char *order;	/* order: (one of order_names); NULL: the default */
	const char *dir;	/* the workloads' dir: (absolute) */
	const char *cmdline;	/* the description: */
};

/*
 * Split s into words as a POSIX shell would without expanding anything:
 * blanks separate words; 'single quotes' keep everything; "double
 * quotes" keep everything but \\ \" \$ \` and backslash-newline; a
 * backslash outside quotes keeps the next character.  Unquoted | & ; < >
 * ( ) $ ` * ? are refused (they need a shell: --shell says so), as are an
 * unclosed quote and a line with no word.  0 and out filled (free with
 * oneliner_argv_free), or -1 with the reason in err.
 */
int oneliner_split(const char *s, struct argv_list *out, char *err, size_t len);
void oneliner_argv_free(struct argv_list *a);

/* The experiment file's text (malloc'd) in *yaml, or -1 with the reason in
 * err (a command or a --variant / --env that does not parse, or a study
 * the loader would refuse as too large: more than YN_MAX_NODES words and
 * names, or over CONFIG_FILE_MAX bytes; refused here, before any file is
 * written). */
int oneliner_yaml(const struct oneliner *o, char **yaml, char *err, size_t len);

#endif
