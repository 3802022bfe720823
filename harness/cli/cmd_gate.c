/*
 * cmd_gate.c - `perturb gate`: judge a stored run against dilation
 * thresholds, for CI.
 *
 * Rules come from the experiment's `gate:` section (the file given, else
 * the experiment text stored with the run) or, when any rule option is
 * given, one rule from the options.  Each rule is expanded over the run's
 * variants and workloads and judged (reports/gate.h: Holm's step-down over
 * the judgements' intervals); the judgements are printed as a table, and
 * written as JUnit XML or Markdown when asked (reports/gate_out.h).  Exit
 * status: 0 when the gate passes, EXIT_OVERHEAD when a judgement fails
 * (or, with --strict, is inconclusive).
 */
#include "commands.h"
#include "options.h"
#include "pick.h"
#include "engine/config.h"
#include "reports/gate.h"
#include "engine/store.h"
#include "lib/output.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The run's experiment: the file given, else the stored path when its
 * bytes are still the stored ones (so that messages name the real file and
 * includes resolve), else the stored text written to a temporary file
 * beside the stored path (or in $TMPDIR when that folder is gone).
 * Returns 0, or an exit status (printed).
 */
static int load_experiment(struct store *st, const struct run_header *h, const char *path,
			   struct experiment *exp)
{
	char err[1024], sha[65], *text = NULL, *tmp = NULL, *dir = NULL, *cur;
	size_t len, cur_len;
	int ret = EXIT_USAGE, fd = -1;

	if (path) {
		if (config_load(path, exp, err, sizeof(err)) < 0) {
			error("%s", err);
			goto out;
		}
		return 0;
	}
	if (h->path && (cur = read_user_file(h->path, CONFIG_FILE_MAX, &cur_len, NULL, 0))) {
		sha256_hex(cur, cur_len, sha);
		free(cur);
		if (h->sha256 && !strcmp(sha, h->sha256)) {
			if (config_load(h->path, exp, err, sizeof(err)) < 0) {
				error("%s", err);
				goto out;
			}
			return 0;
		}
	}
	if (store_experiment_text(st, h->id, &text, &len) < 0) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	dir = h->path ? dir_name(h->path) : NULL;
	tmp = xasprintf("%s/.perturb-gate-XXXXXX", dir && access(dir, W_OK) == 0 ? dir :
			getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(tmp)) < 0 ||
	    write(fd, text, len) != (ssize_t)len || close(fd) < 0) {
		error("cannot write a temporary copy of the stored experiment '%s': %s", tmp,
		      strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (config_load(tmp, exp, err, sizeof(err)) < 0) {
		error("the experiment stored with run %lld: %s", (long long)h->id, err);
		unlink(tmp);
		goto out;
	}
	unlink(tmp);
	ret = 0;
out:
	free(text);
	free(tmp);
	free(dir);
	return ret;
}

/* --junit and --markdown replace none of what the gate reads (the
 * database, the experiment file given, every file the experiment read:
 * lib/output.h).  0, or -1 (printed). */
static int check_outputs(const char *db, const char *file, const struct experiment *exp,
			 const char *junit, const char *markdown)
{
	struct output_inputs in = { 0 };
	int ret = 0;

	output_inputs_add_db(&in, db);
	if (file)
		output_inputs_add(&in, file);
	for (size_t i = 0; i < exp->n_files; i++)
		output_inputs_add(&in, exp->files[i]);
	if ((junit && output_check(junit, "--junit", &in) < 0) ||
	    (markdown && output_check(markdown, "--markdown", &in) < 0))
		ret = -1;
	output_inputs_release(&in);
	return ret;
}

/* --statistic: p0, p50 (also median), p80, p99 or mean. */
static int parse_statistic(const struct opt *o, const char *val)
{
	if (statistic_parse(val, o->value))
		return error("--statistic takes one of " STATISTIC_NAMES ", got '%s'", val);
	return 0;
}

int cmd_gate(int argc, char **argv)
{
	struct gate g = { 0 };
	struct gate_outcome outcome;
	struct experiment exp = { 0 };
	struct run_header h = { 0 };
	struct gate_rule opt_rule = { 0 };
	const struct gate_rule *rules;
	size_t n_rules;
	const char *db = "results/perturb.db", *junit = NULL, *markdown = NULL, *file = NULL;
	char **variants = NULL, **workloads = NULL;
	size_t nv = 0, nw = 0, n_fail = 0, n_inc = 0, n_nopct = 0;
	int ret = EXIT_USAGE, rc, strict = 0, allow_incomplete = 0, have_rule = 0, have_max = 0, usage_error = 0;
	const char *run = NULL;
	struct pick pk = { 0 };
	char sha[65], *incomplete = NULL;
	struct opt opts[] = {
		OPT_ARG("EXPERIMENT.yaml", &file,
			"the rules of its gate: section (default: the one stored\nwith the run)"),
		OPT_STRING(0, "db", &db, "PATH", "results database (default results/perturb.db)"),
		OPT_STRING(0, "run", &run, "ID",
			   "a stored run: its id, label, latest, or a negative\noffset: -1 the latest, -2 the one before (default:\nthe latest run of EXPERIMENT.yaml when given, else\nthe latest)"),
		OPT_STRING(0, "variant", (const char **)&opt_rule.variant, "V",
			   "rule: variant name or glob (default *)"),
		OPT_STRING(0, "workload", (const char **)&opt_rule.workload, "W",
			   "rule: workload name or glob (default *)"),
		OPT_STRING(0, "metric", (const char **)&opt_rule.metric, "M",
			   "rule: metric (default wall)"),
		OPT_CALLBACK(0, "statistic", &opt_rule.statistic, parse_statistic, "S",
			     "rule: p0, p50 (default), p80, p99 or mean"),
		OPT_PERCENT(0, "max-dilation", &opt_rule.max_dilation, 0, INFINITY, 0, "X",
			    "rule: threshold, 2% or 0.02; a bare 5 is refused\n(5 % or 500 %?) (required for a rule)"),
		OPT_LEVEL(0, "confidence", &opt_rule.confidence, "C", "rule: level (default 0.95)"),
		OPT_FLAG(0, "strict", &strict, "inconclusive judgements fail the gate"),
		OPT_FLAG(0, "allow-incomplete", &allow_incomplete,
			 "judge a run whose plan is not all stored (killed,\ninterrupted); the verdict says how much is missing"),
		OPT_STRING(0, "junit", &junit, "FILE", "write JUnit XML: a testcase per judgement"),
		OPT_STRING(0, "markdown", &markdown, "FILE", "write a Markdown summary"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "no warnings"),
		OPT_END(),
	};

	opt_rule.variant = "*";
	opt_rule.workload = "*";
	opt_rule.metric = "wall";
	opt_rule.statistic = STAT_P50;
	opt_rule.confidence = 0.95;
	if ((rc = parse_options(argc, argv, opts, "gate"))) {
		ret = rc < 0 ? EXIT_USAGE : EXIT_OK;
		goto out;
	}
	have_max = !!opt_given(opts, &opt_rule.max_dilation);
	have_rule = have_max || opt_given(opts, &opt_rule.variant) ||
		    opt_given(opts, &opt_rule.workload) || opt_given(opts, &opt_rule.metric) ||
		    opt_given(opts, &opt_rule.statistic) || opt_given(opts, &opt_rule.confidence);
	if (have_rule && !have_max) {
		error("a gate rule from options needs --max-dilation (e.g. --max-dilation 2%%)");
		goto out;
	}
	if (have_rule && file) {
		error("give either rule options or an experiment file, not both");
		goto out;
	}
	if (access(db, F_OK) < 0) {
		error("no results database at '%s' (run 'perturb run' first, or give --db)", db);
		goto out;
	}
	if (check_outputs(db, file, &exp, junit, markdown) < 0)
		goto out;	/* before the database is opened; its files later */
	/* the file given: its rules, and the default run is its latest */
	if (file && !have_rule && (rc = load_experiment(NULL, NULL, file, &exp))) {
		ret = rc;
		goto out;
	}
	if (file && !have_rule) {
		sha256_hex(exp.text, exp.text_len, sha);
		pk.sha256 = sha;
		pk.file = file;
	}
	ret = EXIT_RUNTIME;
	if (store_open(db, STORE_READ, &g.st) < 0)
		goto out;
	pk.db = db;
	pk.spec = run;
	pk.refuse_incomplete = 1;
	pk.allow_incomplete = allow_incomplete;
	if ((rc = pick_run(g.st, &pk))) {
		ret = rc;
		goto out;
	}
	g.run_id = pk.id;
	/* a rule's name given on the command line that matches nothing is a
	 * typo, not an inconclusive gate (pick.h) */
	if (have_rule &&
	    ((opt_given(opts, &opt_rule.variant) &&
	      (rc = pick_names_in(g.st, g.run_id, PICK_VARIANT, "--variant",
				  (char *const *)&opt_rule.variant, 1, 1))) ||
	     (opt_given(opts, &opt_rule.workload) &&
	      (rc = pick_names_in(g.st, g.run_id, PICK_WORKLOAD, "--workload",
				  (char *const *)&opt_rule.workload, 1, 1))) ||
	     (opt_given(opts, &opt_rule.metric) &&
	      (rc = pick_names_in(g.st, g.run_id, PICK_METRIC, "--metric",
				  (char *const *)&opt_rule.metric, 1, 0))))) {
		ret = rc;
		goto out;
	}
	if (store_run_header(g.st, g.run_id, &h) < 0)
		goto out;
	if (have_rule) {
		rules = &opt_rule;
		n_rules = 1;
	} else {
		if (!file && (rc = load_experiment(g.st, &h, NULL, &exp))) {
			ret = rc;
			goto out;
		}
		if (!exp.n_gate) {
			error("experiment '%s' has no gate: rules (add a gate: section, or give one "
			      "rule with --max-dilation)", exp.name);
			ret = EXIT_USAGE;
			goto out;
		}
		rules = exp.gate;
		n_rules = exp.n_gate;
	}
	if (check_outputs(db, file, &exp, junit, markdown) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (store_variant_names(g.st, g.run_id, &variants, &nv) < 0 ||
	    store_workload_names(g.st, g.run_id, &workloads, &nw) < 0)
		goto out;
	g.o.run_id = g.run_id;
	gate_expand(&g, rules, n_rules, variants, nv, workloads, nw, h.baseline);
	if (!g.n_j) {
		error("no gate rule matches a variant and workload of run %lld", (long long)g.run_id);
		ret = EXIT_USAGE;
		goto out;
	}
	if (gate_judge(&g, &usage_error) < 0) {
		ret = usage_error ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}

	incomplete = pick_incomplete_note(&pk);
	if (incomplete) {	/* the verdict says so: under the table, in each file */
		char *full = xasprintf("%s; judged as asked (--allow-incomplete)", incomplete);
		free(incomplete);
		incomplete = full;
		warning("%s", incomplete);
	}
	outcome = (struct gate_outcome){ .run_id = g.run_id, .j = g.j, .n = g.n_j,
					 .strict = strict, .incomplete = incomplete };
	gate_print(stdout, &outcome);
	for (size_t i = 0; i < g.n_j; i++) {
		const struct gate_judgement *j = &g.j[i];
		char *what, *more;
		if (j->verdict == GATE_FAIL)
			n_fail++;
		if (j->verdict != GATE_INCONCLUSIVE)
			continue;
		n_inc++;
		n_nopct += j->no_pct;
		what = gate_describe(j);
		if (j->no_pct) {	/* no number of runs makes a percentage of it */
			warning("inconclusive (%s): %s", DECIDE_NO_PCT_KIND, what);
			free(what);
			continue;
		}
		more = gate_more_runs(j);
		warning("inconclusive: %s; %s", what, more);
		free(more);
		free(what);
	}
	if (junit && gate_write_junit(junit, &outcome) < 0)
		goto out;
	if (markdown && gate_write_markdown(markdown, &outcome) < 0)
		goto out;
	if (n_fail || (strict && n_inc) || n_nopct) {
		note("gate failed: %zu of %zu judgements over the threshold%s%s", n_fail, g.n_j,
		     strict && n_inc ? ", inconclusive ones count as failed (--strict)" : "",
		     n_nopct && !strict ? ", and a percentage threshold cannot judge a metric "
		     "whose baseline's interval holds 0 (" DECIDE_NO_PCT_KIND ")" : "");
		ret = EXIT_OVERHEAD;
	} else {
		ret = EXIT_OK;
	}
out:
	gate_release(&g);
	for (size_t i = 0; i < nv; i++)
		free(variants[i]);
	free(variants);
	for (size_t i = 0; i < nw; i++)
		free(workloads[i]);
	free(workloads);
	run_header_release(&h);
	pick_release(&pk);
	free(incomplete);
	experiment_release(&exp);
	if (g.st)
		store_close(g.st);
	return ret;
}
