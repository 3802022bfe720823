/*
 * cmd_runs.c - `perturb runs`: the runs a results database holds, one line
 * each (id, experiment name, start, status, plan entries done of the
 * plan's total, failed ones, machine, and its label and revision when it
 * has them: perturb run --label, a study's revision:), or with --json one object a line in
 * an array.  The ids are what --run takes (store_resolve_run(),
 * engine/store.h: an id, latest, or -N for the Nth latest).
 */
#include "commands.h"
#include "options.h"
#include "engine/store.h"
#include "engine/study.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "host (2 CPUs)", "unrecorded" */
static void machine_of(const struct run_summary *r, char *buf, size_t len)
{
	if (!r->hostname && !r->cores)
		snprintf(buf, len, "unrecorded");
	else if (!r->cores)
		snprintf(buf, len, "%s", r->hostname);
	else
		snprintf(buf, len, "%s (%" PRId64 " CPU%s)", r->hostname ? r->hostname : "?",
			 r->cores, r->cores == 1 ? "" : "s");
}

static void print_text(const struct run_summary *runs, size_t n)
{
	char done[48], machine[300];
	int labels = 0;

	for (size_t i = 0; i < n; i++)
		labels |= runs[i].label || runs[i].revision;
	printf("%5s  %-24s %-20s %-11s %11s %6s  %s\n", "ID", "NAME", "STARTED", "STATUS",
	       "RUNS", "FAILED", labels ? "MACHINE / LABEL REVISION" : "MACHINE");
	for (size_t i = 0; i < n; i++) {
		const struct run_summary *r = &runs[i];

		snprintf(done, sizeof(done), "%" PRId64 "/%" PRId64, r->done, r->total);
		machine_of(r, machine, sizeof(machine));
		/* names, labels and hosts are the database's: shown, not obeyed */
		printf_shown(stdout, "%5" PRId64 "  %-24s %-20s %-11s %11s %6" PRId64 "  %s", r->id,
			     r->name ? r->name : "", r->started ? r->started : "", r->status, done,
			     r->failed, machine);
		if (r->label || r->revision)
			printf_shown(stdout, " / %s%s%s", r->label ? r->label : "-",
				     r->revision ? " " : "", r->revision ? r->revision : "");
		putchar('\n');
	}
}

static void print_json(const struct run_summary *runs, size_t n)
{
	printf("[");
	for (size_t i = 0; i < n; i++) {
		const struct run_summary *r = &runs[i];
		json_t *o = json_object();
		char *line;
		json_object_set_new(o, "id", json_integer(r->id));
		json_object_set_new(o, "name", json_text(r->name));
		json_object_set_new(o, "started", json_text(r->started));
		json_object_set_new(o, "ended", json_text(r->ended));
		json_object_set_new(o, "status", json_text(r->status));
		json_object_set_new(o, "done", json_integer(r->done));
		json_object_set_new(o, "total", json_integer(r->total));
		json_object_set_new(o, "failed", json_integer(r->failed));
		json_object_set_new(o, "hostname", json_text(r->hostname));
		json_object_set_new(o, "cpu_model", json_text(r->cpu_model));
		json_object_set_new(o, "cores", r->cores ? json_integer(r->cores) : json_null());
		json_object_set_new(o, "kernel_release", json_text(r->kernel_release));
		json_object_set_new(o, "label", json_text(r->label));
		json_object_set_new(o, "revision", json_text(r->revision));
		json_object_set_new(o, "commit", json_text(r->commit));
		json_object_set_new(o, "experiment_sha256", json_text(r->sha256));
		line = json_line(o);
		printf("%s\n  %s", i ? "," : "", line);
		free(line);
	}
	printf("\n]\n");
}

int cmd_runs(int argc, char **argv)
{
	const char *db = "results/perturb.db";
	struct store *st = NULL;
	struct run_summary *runs = NULL;
	size_t n = 0;
	int json = 0, rc, ret = EXIT_USAGE;
	struct opt opts[] = {
		OPT_STRING(0, "db", &db, "PATH", "results database (default results/perturb.db)"),
		OPT_FLAG(0, "json", &json,
			 "one object per run: id, name, started, ended, status,\n"
			 "done, total, failed, hostname, cpu_model, cores, kernel_release,\n"
			 "label, revision, commit, experiment_sha256 (what perturb\n"
			 "history takes as a study's hash)"),
		OPT_END(),
	};

	if ((rc = parse_options(argc, argv, opts, "runs")))
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		goto out;
	}
	ret = EXIT_RUNTIME;
	if (store_open(db, STORE_READ, &st) < 0 || store_list_runs(st, &runs, &n) < 0)
		goto out;
	/* "running" with no process holding its lock: killed (study.h) */
	for (size_t i = 0; i < n; i++) {
		const char *listed = study_listed_status(st, db, runs[i].id, runs[i].status);
		if (listed != runs[i].status) {
			free(runs[i].status);
			runs[i].status = xstrdup(listed);
		}
	}
	if (json)
		print_json(runs, n);
	else if (!n)
		printf("results database '%s' holds no run yet\n", db);
	else
		print_text(runs, n);
	ret = EXIT_OK;
out:
	run_summaries_release(runs, n);
	store_close(st);
	return ret;
}
