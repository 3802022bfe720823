/*
 * summary.h - the one screen at the end of `perturb run`, also
 * `perturb report --format summary`: made from the report model
 * (report.h), nothing computed again.
 *
 *   run 12 'ls': 2 variants x 1 workload, 20 measured runs each, completed
 *
 *     workload: metric  variant  median    dilation  95 % CI          p (Holm)
 *     ls: wall (s)      base     1.23 ms   baseline
 *                       strace   2.35 ms   +90.0 %   [+85.1, +95.0] %  <1e-04 *
 *
 *   warnings (2):
 *     outliers: ls wall of base: 1 run far from the median ... seq 7; ...
 *     runs: p99 of 20 runs lies between the two largest: ...
 *
 *   full report: perturb report --run 12 --db x.db
 *
 * The table is tw_summary() through the text writer (table.h), its notes
 * after it; a warning is one line (never wrapped, never twice: the model
 * holds each text once), grouped by kind.  The report command names
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
