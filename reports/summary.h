/*
 * summary.h - the one screen at the end of `perturb run`, also
 * `perturb report --format summary`: made from the report model
 * (report.h), nothing computed again.
 *
 *   run 12 'ls': 2 variants x 1 workload, 20 measured runs each, completed; baseline base
 *
 *   ls: wall (s)
 *     variant     median  dilation  95 % CI           p (Holm)
 *     base      1.23 ms   baseline
 *     strace    2.35 ms   +90.0 %   [+85.1, +95.0] %  <0.0001 *
 *
 *   warnings (2):
 *     outliers: ls wall: 1 run far from the median ...: base seq 7; ...
 *     runs: 20 runs in the smallest series, too few for a 95 % CI of p99 ...
 *
 *   full report: perturb report --run 12 --db x.db
 *
 * The tables are tw_summary()'s, one per workload and metric, through the
 * text writer (table.h), their notes after them; a warning is one line
 * (never wrapped, never twice: the model holds each text once), grouped by
 * kind.  The report command names
 * report_opts.db when it is set (the caller sets it when the database is
 * not the default one), quoted for the shell.
 */
#ifndef PERTURB_REPORTS_SUMMARY_H
#define PERTURB_REPORTS_SUMMARY_H

#include <stdio.h>
#include "report.h"

/* 0; the stream's errors are the caller's to check. */
int report_summary(const struct report_model *m, FILE *out);

#endif
