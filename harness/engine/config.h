/*
 * config.h - the experiment file, parsed (libyaml) and validated.
 *
 * config_load() turns an experiment YAML file into a struct experiment, or
 * fails with one message of the form "FILE:LINE:COL: message" (1-based
 * positions).  Nothing downstream re-parses YAML.  Everything reachable from
 * a struct experiment is owned by it and freed by experiment_release().
 *
 * Validation guarantees (after a 0 return):
 *  - names of variants and workloads are unique, non-empty, [A-Za-z0-9_.+-]
 *  - baseline names a variant (default: the first one)
 *  - every workload has exactly one of cmd (non-empty argv) or shell
 *  - every metric regex compiled (POSIX extended); its value is capture
 *    group 1 if the regex has one, else the whole match
 *  - durations > 0 where a time-out is meant; repetitions >= 1; warmup >= 0
 *  - gate rules name existing variants/workloads (or a glob), a known
 *    statistic, 0 < confidence < 1
 *  - include files and workloads given by name have been loaded and merged
 *  - every variant has its backend (v->be): the one whose key it holds
 *    (backends/backend.h; at most one), else the default one, host; the
 *    backend's parse() read and validated the block into v->cfg
 *  - kernel: and backend blocks are validated but not acted on here
 */
#ifndef PERTURB_CONFIG_H
#define PERTURB_CONFIG_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "core/experiment.h"
#include "lib/util.h"

/*
 * Where the shipped workloads are looked for, after the experiment's own
 * folder (DIR/workloads/NAME.yaml, then DIR/NAME.yaml), in this order:
 * $PERTURB_WORKLOADS alone when it is set; else the workloads/ of the tree
 * the perturb binary was built in (BINDIR/../workloads: build/perturb in a
 * checkout), the install prefix's (BINDIR/../share/perturb/workloads) and
 * the one set at build time (PERTURB_SHARE_DIR/workloads).  Fills dirs
 * (malloc'd, at most 3) and returns how many.
 */
size_t config_workload_dirs(char *dirs[3]);
/* The first of config_workload_dirs() that is a folder, else the last one
 * (static storage, valid until the next call). */
const char *config_share_workloads_dir(void);

/* A study's name or a run's label: printable text (no control byte, valid
 * UTF-8: what escape_bytes() leaves as it is), not blank at either end.
 * They are shown on every screen and report, so a terminal's escape
 * sequence in one would be obeyed there. */
static inline int config_valid_text(const char *text)
{
	size_t n = strlen(text);
	char *shown;
	int same;

	if (!n || text[0] == ' ' || text[n - 1] == ' ')
		return 0;
	shown = escape_bytes_str(text);
	same = !strcmp(shown, text);
	free(shown);
	return same;
}
#define CONFIG_TEXT_RULE "printable text, not blank at either end"

/*
 * A variant's or a workload's name (docs/experiment.md): text as it is
 * shown - valid UTF-8 without a control byte, what escape_bytes() leaves
 * as it is - not empty, no blank at either end, and none of , (lists of
 * names: --only-variant a,b), [ ] (a matrix instance: w[p=1]) and ~ (the
 * self-check's BASELINE~aa).  A one-liner names its commands by their text
 * (`gzip -6 -c in`).  Where a name becomes part of a path it is encoded by
 * path_component() (lib/util.h).  Metric names and a workload named in a
 * list (a file name) stay [A-Za-z0-9_.+-]+.  Inline: the loader's files
 * and the one-liner call it, and within engine/ no file calls back into
 * one that calls it (docs/architecture.md).
 */
static inline int config_valid_name(const char *name)
{
	return config_valid_text(name) && !strpbrk(name, ",[]~");
}
/* Why config_valid_name() refuses a name: "use printable text without ..." */
#define CONFIG_NAME_RULE "printable text, not blank at either end, without , [ ] ~"

/* The largest experiment, include or workload file (16 MiB). */
#define CONFIG_FILE_MAX (16u << 20)

/*
 * Load and validate PATH.  On success returns 0.  On failure returns -1 and
 * writes "FILE:LINE:COL: message" (or "FILE: message" when no position is
 * known) into err (always NUL-terminated, truncated to errlen).
 * Defences: a file that is not a regular file (a FIFO, a device: never
 * waited for, lib/util.h read_user_file()), files over CONFIG_FILE_MAX
 * (never read further), more than YN_MAX_NODES (1000000) YAML nodes
 * written out or YN_MAX_ALIASED (10000) produced by aliases, nesting
 * deeper than 64 and invalid UTF-8 are errors; the same for every
 * file the experiment includes or names as a workload.
 */
int config_load(const char *path, struct experiment *exp, char *err, size_t errlen);

/* Load a single workload file (workloads/NAME.yaml) on its own, same rules. */
int config_load_workload(const char *path, struct experiment *holder,
			 struct workload *out, char *err, size_t errlen);

void experiment_release(struct experiment *exp);
/* Free what config_load_workload() put in a workload (not needed for the
 * workloads of an experiment: experiment_release() frees those). */
void workload_release(struct workload *w);

#endif
