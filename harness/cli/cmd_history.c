/*
 * cmd_history.c - `perturb history`: a study's dilation across its stored
 * runs in revision order, with change points (reports/history.h does the
 * work; docs/history.md).
 */
#include "commands.h"
#include "options.h"
#include "pick.h"
#include "engine/config.h"
#include "engine/store.h"
#include "reports/history.h"
#include "lib/output.h"
#include "lib/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A study named by its file: the file's study name; the file and every
 * file it includes are inputs that --output must not replace (added to
 * in).  0, or -1 (printed). */
static int study_of_file(const char *path, char **name, struct output_inputs *in)
{
	struct experiment exp = { 0 };
	char err[1024];

	if (config_load(path, &exp, err, sizeof(err)) < 0) {
		error("%s", err);
		experiment_release(&exp);
		return -1;
	}
	*name = xstrdup(exp.name);
	output_inputs_add(in, path);
	for (size_t i = 0; i < exp.n_files; i++)
		output_inputs_add(in, exp.files[i]);
	experiment_release(&exp);
	return 0;
}

static int is_file_arg(const char *s)
{
	size_t n = strlen(s);

	return (n > 5 && !strcmp(s + n - 5, ".yaml")) || (n > 4 && !strcmp(s + n - 4, ".yml")) ||
	       strchr(s, '/');
}

/* --workload, --variant and --metric name something of the study's runs,
 * or are a typo (pick.h): 0 or an exit status (printed). */
static int check_names(struct store *st, const struct history_opts *o, const struct history *h)
{
	int64_t *ids = xcalloc(h->n_runs ? h->n_runs : 1, sizeof(*ids));
	char *where = xasprintf("the %zu run%s of study '%s'", h->n_runs, h->n_runs == 1 ? "" : "s",
				h->study);
	char *w = (char *)o->workload, *v = (char *)o->variant, *m = (char *)o->metric;
	int rc;

	for (size_t i = 0; i < h->n_runs; i++)
		ids[i] = h->runs[i].id;
	(void)((rc = pick_names_in_runs(st, ids, h->n_runs, PICK_WORKLOAD, "--workload", &w,
					!!w, 0, where)) ||
	       (rc = pick_names_in_runs(st, ids, h->n_runs, PICK_VARIANT, "--variant", &v, !!v, 0,
					where)) ||
	       (rc = pick_names_in_runs(st, ids, h->n_runs, PICK_METRIC, "--metric", &m, !!m, 0,
					where)));
	free(ids);
	free(where);
	return rc;
}

int cmd_history(int argc, char **argv)
{
	struct history_opts o = { 0 };
	struct history h = { 0 };
	struct store *st = NULL;
	struct output dest = { 0 };
	struct output_inputs in = { 0 };
	const char *db = "results/perturb.db", *study = NULL, *format = "text", *output = NULL;
	double min_change = 0;
	char *name = NULL;
	FILE *out = stdout;
	int ret = EXIT_USAGE, rc, usage_error = 0;
	struct opt opts[] = {
		OPT_ARG("STUDY", &study,
			"the study: its experiment file, its name, or a prefix of its\n"
			"experiment's hash (6 hex digits or more: perturb runs' JSON\n"
			"experiment_sha256)"),
		OPT_STRING(0, "db", &db, "PATH", "results database (default results/perturb.db)"),
		OPT_STRING(0, "workload", &o.workload, "W", "only this workload"),
		OPT_STRING(0, "variant", &o.variant, "V", "only this variant"),
		OPT_STRING(0, "metric", &o.metric, "M", "the metric (default wall)"),
		OPT_INTEGER(0, "last", &o.last, 1, 100000000, "N", "only the last N runs"),
		OPT_LEVEL(0, "confidence", &o.ro.confidence, "C",
			  "level of the intervals (default 0.95; also 95%)"),
		OPT_PERCENT(0, "min-change", &min_change, 0, INFINITY, 0, "X",
			    "report only change points of at least X (2% or 0.02;\n"
			    "default: every significant one)"),
		OPT_INTEGER(0, "window", &o.cp.window, 4, 100000000, "N",
			    "search windows of N revisions, overlapping by half\n"
			    "(default: the whole series)"),
		OPT_STRING(0, "format", &format, "F", "text (default), markdown, csv, json or html"),
		OPT_STRING(0, "output", &output, "FILE", "write to FILE instead of standard output"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "no notes"),
		OPT_END(),
	};

	if ((rc = parse_options(argc, argv, opts, "history"))) {
		ret = rc < 0 ? EXIT_USAGE : EXIT_OK;
		goto out;
	}
	if (!study) {
		error("history needs a study: its experiment file, its name or its hash");
		goto out;
	}
	if (strcmp(format, "text") && strcmp(format, "markdown") && strcmp(format, "csv") &&
	    strcmp(format, "json") && strcmp(format, "html")) {
		error("unknown format '%s' (known: " HISTORY_FORMATS ")", format);
		goto out;
	}
	if (is_file_arg(study)) {
		if (study_of_file(study, &name, &in) < 0)
			goto out;
	}
	o.study = name ? name : study;
	o.cp.min_magnitude = 100 * min_change;
	if (o.ro.confidence) {	/* the change points' level and intervals follow it */
		o.cp.sig = 1 - o.ro.confidence;
		o.cp.conf = o.ro.confidence;
		/* a p as small as the level needs R + 1 >= 1 / level; 10 / level
		 * gives it room (199 at 0.05) */
		o.cp.permutations = o.cp.sig < 0.05 ? (unsigned)ceil(10 / o.cp.sig) - 1 : 0;
	}
	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		goto out;
	}
	output_inputs_add_db(&in, db);
	if (output && output_check(output, "--output", &in) < 0)
		goto out;
	if (store_open(db, STORE_READ, &st) < 0) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (history_pick(st, &o, &h, &usage_error) < 0) {
		ret = usage_error ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if ((rc = check_names(st, &o, &h))) {
		ret = rc;
		goto out;
	}
	if (history_measure(st, &o, &h, &usage_error) < 0) {
		ret = usage_error ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	ret = EXIT_RUNTIME;
	if (output) {
		if (output_open(&dest, output) < 0)
			goto out;
		out = dest.f;
	}
	if (history_write(&h, format, out) < 0)
		goto out;
	if (output && output_close(&dest) < 0)
		goto out;
	ret = EXIT_OK;
out:
	output_abort(&dest);
	output_inputs_release(&in);
	history_release(&h);
	if (st)
		store_close(st);
	free(name);
	return ret;
}
