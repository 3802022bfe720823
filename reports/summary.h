/*
 * summary.h - the one screen at the end of `perturb run`, also
 * `perturb report --format summary`: made from the report model
 * (report.h) and its document (doc.h), nothing computed again; at most
 * SUMMARY_LINES lines for any study, the blank line perturb run prints
 * before it included.
 *
 *   run 12 'ls': 2 variants x 1 workload, 20 measured runs each, completed; baseline base
 *
 *   The answer
 *   ==========
 *    Each workload's primary metric: the median of base, then each ...
 *     variant  ls
 *              wall
 *     base     1.23 ms
 *     strace   +90.0 % [+85.1, +95.0] *
 *
 *   warnings (5):
 *     outliers: ls wall: 1 run far from the median ...: base seq 7; ...
 *     ...
 *     ... and 2 more in the full report
 *
 *   full report: perturb report --run 12 --db x.db
 *
 * The answer is the document's "answer" section through the text writer
 * (tw_text), its notes after it; when it would make the screen longer
 * than SUMMARY_LINES it shows fewer workloads (as many as fit with
 * SUMMARY_FEW_ROWS variants), then fewer variants, and says how many of
 * each it shows.  One line on the failed runs, when there are: how many
 * and the first one's reason.  SUMMARY_WARNINGS warnings (the model
 * holds them in kind order: the machine's first): the first about the
 * answer (the machine, the run, a workload's primary metric), others only
 * when there are fewer, then how many more.  The first line (the study's
 * name is any length), the failed runs' line and the warnings are wrapped
 * at SUMMARY_WIDTH columns, and the 40 lines count the rows they take: a
 * 200-column line (a word too long to wrap, a wide table row) is two rows
 * of a terminal.  The report command names report_opts.db when it is set (the
 * caller sets it when the database is not the default one), quoted for
 * the shell.
 */
#ifndef PERTURB_REPORTS_SUMMARY_H
#define PERTURB_REPORTS_SUMMARY_H

#include <stdio.h>
#include "report.h"

#define SUMMARY_LINES 40
#define SUMMARY_WARNINGS 3
#define SUMMARY_WIDTH 100	/* the text report's width */
/* the variants the answer keeps while it drops workloads to fit */
#define SUMMARY_FEW_ROWS 5

/* 0; the stream's errors are the caller's to check. */
int report_summary(const struct report_model *m, FILE *out);

#endif
