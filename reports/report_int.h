/*
 * report_int.h - what the files of the report model share privately:
 * report.c builds the model (the walk of the store) and calls these, which
 * call only the model's lookups (model.c) and each other's below them:
 * series.c computes (report_compute, report_release_group), accounting.c
 * derives from the computed groups (report_tracer, report_quieter),
 * order.c orders (report_order_groups, report_order_rows).  Only reports'
 * model files include it; report.h stays the public header.
 */
#ifndef PERTURB_REPORTS_REPORT_INT_H
#define PERTURB_REPORTS_REPORT_INT_H

#include "report.h"

/* Every group's statistics, comparisons, noise and Holm families; drops
 * the groups --metric and --workload hide. */
void report_compute(struct report_model *m);
void report_release_group(struct report_group *g);
/* After report_compute(): m->tracer, m->quiet. */
void report_tracer(struct report_model *m);
void report_quieter(struct report_model *m);
/* Groups by workload (workloads: the stored order, n of them), then
 * metric rank; rows likewise, then by plan order. */
void report_order_groups(struct report_model *m, char **workloads, size_t n);
void report_order_rows(struct report_model *m);
/* w's index in workloads (n of them), n when absent. */
size_t report_workload_rank(char **workloads, size_t n, const char *w);

#endif
