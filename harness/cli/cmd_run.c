/*
 * cmd_run.c - `perturb run`: its options, and the study (engine/study.h)
 * run with them.  Exit status: 0 done, 2 nothing run (a usage or
 * configuration error, something unavailable), 3 a failure while running
 * or a stop (SIGINT/SIGTERM/SIGHUP: the run is marked "interrupted" and
 * `--resume` finishes exactly the runs still missing).
 *
 * Without a file, the arguments are commands: a one-liner (--variant,
 * --env, --shell), whose study engine/oneliner.h writes next to the
 * database and runs like a file's.  After the study, one screen on stdout
 * (reports/summary.h) with the warnings of the report model and of the
 * machine seen before and after (reports/warnings.h); -q prints none.
 *
 * --target-ci's intervals are the report's (reports/report.h): the widest
 * half-width is read from the report model built with the report's own
 * settings, so that the run stops when `perturb report` would show every
 * interval within the target.
 */
#include "commands.h"
#include "options.h"
#include "engine/config.h"
#include "engine/oneliner.h"
#include "engine/study.h"
#include "engine/shard.h"
#include "engine/submit.h"
#include "reports/report.h"
#include "reports/summary.h"
#include "reports/warnings.h"
#include "lib/machine.h"
#include "lib/output.h"
#include "lib/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --variant and --env: repeatable, each value whole (commas and all). */
struct str_list {
	char **v;
	size_t n;
};

#define DEFAULT_DB "results/perturb.db"

struct run_opts {
	const char *file;
	char **args;		/* the positional arguments: a file or commands */
	size_t n_args;
	int dashdash;		/* how many of args came after "--" */
	int shell;
	struct str_list variants, env, names;
	char *yaml_path;	/* a one-liner's generated file (malloc'd) */
	int temp_yaml;		/* ... to be removed (--dry-run) */
	const char *db;
	struct plan_filter filter;
	int has_seed;
	uint64_t seed;
	int dry_run, resume, skip_unavailable;
	double target_ci;	/* --target-ci in %; 0 = off */
	double max_time;	/* --max-time in s; 0 = TARGET_DEFAULT_MAX_TIME */
	int self_check;
	const char *shard;	/* --shard K/N */
	int slurm, wait;	/* --slurm, --wait */
	int shards;		/* --shards N */
	const char *order;	/* --order (a one-liner's) */
	const char *label;	/* --label */
};

static int add_str(const struct opt *opt, const char *arg)
{
	struct str_list *l = opt->value;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(char *));
	l->v[l->n++] = (char *)arg;
	return 0;
}

/* --label: what --run can name (store_resolve_run(): not a number, not
 * latest or -N).  0 or -1 (printed: exit 2). */
static int check_label(const char *label)
{
	long n;

	if (!label)
		return 0;
	if (!*label || !parse_long(label, 1, LONG_MAX, &n) || label[0] == '-' ||
	    !strcmp(label, "latest"))
		return error("--label takes a text that is not a run id, latest or -N "
			     "(--run names runs by those), got '%s'", label);
	if (!config_valid_text(label))	/* message() shows it escaped */
		return error("--label '%s': a label is %s", label, CONFIG_TEXT_RULE);
	return 0;
}

/* --shard, --slurm, --wait, --shards (docs/distributed.md): 0 or -1
 * (printed: exit 2). */
static int check_slurm_args(const struct run_opts *o, int *k, int *n)
{
	*k = -1;
	*n = 0;
	if (o->shard && shard_parse(o->shard, k, n) < 0)
		return error("--shard takes K/N with 0 <= K < N, got '%s'", o->shard);
	if (o->shard && o->slurm)
		return error("--shard is what --slurm's tasks run; give one or the other");
	if ((o->wait || o->shards) && !o->slurm)
		return error("--%s goes with --slurm", o->wait ? "wait" : "shards");
	if ((o->shard || o->slurm) && (o->target_ci || o->skip_unavailable))
		return error("a study in shards takes no %s: every shard runs the same design",
			     o->target_ci ? "--target-ci" : "--skip-unavailable");
	if (o->label && (o->shard || o->slurm || o->resume))
		return error("--label names a new run of this machine; a run %s keeps what it was "
			     "started with", o->resume ? "resumed" : "in shards");
	if (o->shard && o->resume)
		return error("--shard resumes its database's unfinished run by itself; "
			     "it takes no --resume");
	return 0;
}

/* perturb run --slurm: submit (or resubmit), and with --wait, merge. */
static int run_slurm(const struct run_opts *o, const char *cmdline)
{
	struct submit_opts so = {
		.file = o->file, .db = o->db, .filter = &o->filter,
		.has_seed = o->has_seed, .seed = o->seed, .self_check = o->self_check,
		.shards = o->shards, .resume = o->resume, .wait = o->wait,
		.cmdline = cmdline,
	};
	switch (submit_run(&so)) {
	case STUDY_DONE:
		return EXIT_OK;
	case STUDY_REFUSED:
		return EXIT_USAGE;
	default:
		return EXIT_RUNTIME;
	}
}

/* 0, -1 (printed: exit 2) or OPT_EXIT_DONE (help printed: exit 0). */
static int parse_args(int argc, char **argv, struct run_opts *o)
{
	struct opt opts[] = {
		OPT_ARGS("EXPERIMENT.yaml | 'CMD ARGS'... | -- CMD ARGS", &o->args, &o->n_args,
			 "an experiment file (*.yaml, *.yml; default ./experiments.yaml),\n"
			 "or commands to compare, the first the baseline (a one-liner)"),
		OPT_STRING(0, "db", &o->db, "PATH", "results database (default results/perturb.db)"),
		OPT_COUNT('n', "repetitions", &o->filter.repetitions, R_REPETITIONS, "N",
			    "measured runs per (variant, workload), overrides the file"),
		OPT_COUNT(0, "warmup", &o->filter.warmup, R_WARMUP, "N",
			    "warm-up runs (not counted) per (variant, workload),\n"
			    "overrides the file's warmup:"),
		OPT_CALLBACK(0, "variant", &o->variants, add_str, "NAME=CMD",
			     "one-liner: also run each command under CMD, a wrap\n"
			     "with leading NAME=VALUE words as its env; repeatable"),
		OPT_CALLBACK(0, "env", &o->env, add_str, "NAME=VALUE",
			     "one-liner: set NAME in every run's environment; repeatable"),
		OPT_CALLBACK('N', "name", &o->names, add_str, "NAME",
			     "one-liner: the name of the next command (default: its\n"
			     "text, as hyperfine names them); repeatable, in order"),
		OPT_FLAG(0, "shell", &o->shell, "one-liner: run each command by the shell, /bin/sh"),
		OPT_STRING(0, "order", &o->order, "ORDER",
			   "one-liner: the order of the runs: interleaved (default),\n"
			   "sequential, random, or duet (each command beside the first,\n"
			   "at the same time on two CPUs)"),
		OPT_LIST(0, "only-variant", &o->filter.variants, &o->filter.n_variants, "NAME",
			 "run this variant (and the baseline); repeatable, or NAME,NAME"),
		OPT_LIST(0, "only-workload", &o->filter.workloads, &o->filter.n_workloads, "NAME",
			 "run this workload; repeatable, or NAME,NAME"),
		OPT_UNSIGNED(0, "seed", &o->seed, "N",
			     "seed of the run order (default: the file's, or drawn)"),
		OPT_FLAG(0, "dry-run", &o->dry_run, "print the plan; run and write nothing"),
		OPT_FLAG(0, "resume", &o->resume,
			 "complete the latest interrupted run of this experiment"),
		OPT_FLAG(0, "skip-unavailable", &o->skip_unavailable,
			 "run what this machine can; report the rest as skipped"),
		OPT_PERCENT(0, "target-ci", &o->target_ci, 0, 10, OPT_ABOVE_MIN, "X%",
			    "after the plan, add interleaved rounds until every wall\n"
			    "dilation CI (p50 and mean) is at most +-X wide"),
		OPT_DURATION(0, "max-time", &o->max_time, R_MAX_TIME, "D",
			     "with --target-ci: stop adding rounds after D (default 10m)"),
		OPT_FLAG(0, "self-check", &o->self_check,
			 "add an A/A pair: the baseline again (BASELINE~aa) and\n"
			 "without counters (BASELINE~nocounters)"),
		OPT_FLAG(0, "slurm", &o->slurm,
			 "run the study as a Slurm job array of shards\n"
			 "(engine: slurm: in the file; docs/distributed.md)"),
		OPT_COUNT(0, "shards", &o->shards, R_SHARDS, "N",
			    "with --slurm: split into N shards (default the file's, or 4)"),
		OPT_FLAG(0, "wait", &o->wait,
			 "with --slurm: wait for the tasks, then merge their results"),
		OPT_STRING(0, "shard", &o->shard, "K/N",
			   "run shard K of N only (what a --slurm task runs)"),
		OPT_STRING(0, "label", &o->label, "TEXT",
			   "stored with the run: 'perturb runs' shows it; report, gate\n"
			   "and compare name the run by it"),
		OPT_FLAG('q', "quiet", &perturb_quiet, "print only errors"),
		OPT_END(),
	};
	int rc;

	o->file = "experiments.yaml";
	o->db = DEFAULT_DB;
	if ((rc = parse_options(argc, argv, opts, "run")))
		return rc;
	o->has_seed = !!opt_given(opts, &o->seed);
	o->filter.has_warmup = !!opt_given(opts, &o->filter.warmup);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			o->dashdash = argc - i - 1;
			break;
		}
	o->target_ci *= 100;	/* in % */
	if (o->max_time > 0 && !o->target_ci)
		return error("--max-time bounds --target-ci; give --target-ci too");
	if (o->resume && !o->slurm) {
		/* the options that shape a plan: a resume runs the stored one */
		const char *given = o->filter.n_variants ? "--only-variant"
				  : o->filter.n_workloads ? "--only-workload"
				  : o->filter.repetitions ? "--repetitions"
				  : o->filter.has_warmup ? "--warmup"
				  : o->has_seed ? "--seed"
				  : o->self_check ? "--self-check" : NULL;
		if (given)
			return error("--resume completes the stored plan as it was first run "
				     "(its runs, warm-ups, seed and self-check pair); it takes "
				     "no %s",
				     given);
	}
	return 0;
}

static char *join_argv(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "perturb");
	for (int i = 0; i < argc; i++)
		strbuf_addf(&sb, " %s", argv[i]);
	return strbuf_detach(&sb);
}

/*
 * study_widest_fn for --target-ci: the widest half-width of the CIs of the
 * wall-time dilation (in %) of the median and of the mean, over every
 * variant compared with the baseline on every workload, as the report
 * computes them with its default settings (confidence, bootstrap, nested
 * blocks; reports/report.h).  A comparison without an interval (fewer
 * than two runs a side, ...) makes it INFINITY.
 */
static int report_widest(struct store *st, int64_t run_id, double *widest, char *what,
			 size_t len, void *arg)
{
	char *wall = "wall";
	struct report_opts ro = {
		.run_id = run_id, .metrics = &wall, .n_metrics = 1,
		.percentiles = { 50 }, .n_percentiles = 1, .skip_noise = 1, .no_verdicts = 1,
	};
	struct report_model m;
	int usage = 0;

	*widest = 0;
	snprintf(what, len, "no comparison");
	if (report_build(st, &ro, &m, &usage) < 0)
		return -1;
	for (size_t g = 0; g < m.n_groups; g++) {
		const struct report_group *gr = &m.groups[g];
		for (size_t i = 0; i < gr->n_series; i++) {
			const struct report_series *se = &gr->series[i];
			if (se->is_baseline)
				continue;
			for (int mean = 0; mean <= 1; mean++) {
				const struct report_dilation *d = mean ? &se->mean_dil : &se->pct_dil[0];
				const char *stat = mean ? "mean" : "p50";
				double hw;

				if (!se->compared || !d->ok || !d->d.ci_pct.has_ci) {
					*widest = INFINITY;
					snprintf(what, len, "%s / %s %s: no interval yet",
						 se->variant, gr->workload, stat);
					goto out;
				}
				hw = (d->d.ci_pct.hi - d->d.ci_pct.lo) / 2;
				if (hw >= *widest) {
					*widest = hw;
					snprintf(what, len, "%s / %s %s", se->variant,
						 gr->workload, stat);
				}
			}
		}
	}
out:
	report_release(&m);
	return 0;
}

/* ---- a one-liner (engine/oneliner.h) ---- */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* An existing path that is not a program (a file, a folder, a device, a
 * FIFO): meant as the experiment, whatever its name; the loader then says
 * what is wrong with it rather than a one-liner trying to run it. */
static int is_file_not_program(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	return !S_ISREG(st.st_mode) || access(path, X_OK) < 0;
}

/* Commands, not a file: after "--", several arguments, or one that does
 * not end in .yaml or .yml and is not an existing file but a program. */
static int is_oneliner(const struct run_opts *o)
{
	return o->dashdash || o->n_args > 1 ||
	       (o->n_args == 1 && !ends_with(o->args[0], ".yaml") &&
		!ends_with(o->args[0], ".yml") && !is_file_not_program(o->args[0]));
}

/*
 * o->file for the arguments: the file given, or a one-liner's study,
 * generated (engine/oneliner.h) and written next to the database as
 * DBDIR/oneliner-HASH.yaml (HASH: 12 hex digits of its SHA-256: the same
 * commands and options, the same file, so that --resume finds its run);
 * with --dry-run printed and written to a temporary file instead.  0, or
 * -1 (printed: exit 2).
 */
static int resolve_study(struct run_opts *o)
{
	struct oneliner ol = { .warmup = -1 };
	char err[512], hash[65], cwd[4096], *yaml = NULL, *dir = NULL;
	int ret = -1, e;

	if (!is_oneliner(o)) {
		if (o->variants.n || o->env.n || o->shell || o->order || o->names.n)
			return error("--variant, --env, --name, --shell and --order are for a one-liner "
				     "(perturb run -- CMD); an experiment file says it all");
		if (o->n_args)
			o->file = o->args[0];
		return 0;
	}
	for (size_t i = 0; !o->dashdash && o->n_args > 1 && i < o->n_args; i++)
		if (ends_with(o->args[i], ".yaml") || ends_with(o->args[i], ".yml"))
			return error("'%s': one experiment file at a time (or, for a command "
				     "of that name, put it after --)", o->args[i]);
	if (o->dashdash && o->n_args > (size_t)o->dashdash)
		return error("give the commands either as strings ('CMD ARGS' ...) or as one "
			     "command after --, not both");
	if (o->resume && o->dry_run)
		return error("--resume with --dry-run: nothing to resume");
	if (!getcwd(cwd, sizeof(cwd)))
		return error("cannot read the current folder: %s", strerror(errno));
	if (o->dashdash) {
		ol.argv = o->args;
		ol.argc = o->n_args;
	} else {
		ol.commands = o->args;
		ol.n_commands = o->n_args;
	}
	ol.shell = o->shell;
	if (o->order) {
		int known = 0;
		for (size_t i = 0; order_names[i]; i++)
			known |= !strcmp(order_names[i], o->order);
		if (!known)
			return error("--order '%s': the orders are interleaved, sequential, random "
				     "and duet", o->order);
		ol.order = o->order;
	}
	ol.variants = o->variants.v;
	ol.n_variants = o->variants.n;
	ol.env = o->env.v;
	ol.n_env = o->env.n;
	ol.names = o->names.v;
	ol.n_names = o->names.n;
	ol.repetitions = o->filter.repetitions;
	ol.warmup = o->filter.has_warmup ? o->filter.warmup : -1;
	ol.dir = cwd;
	if (oneliner_yaml(&ol, &yaml, err, sizeof(err)) < 0)
		return error("%s", err);
	if (o->dry_run) {
		char tmpl[] = "/tmp/perturb-oneliner-XXXXXX.yaml";
		int fd = mkstemps(tmpl, 5);
		fputs(yaml, stdout);
		fputc('\n', stdout);
		fflush(stdout);	/* before the study's messages on stderr */
		if (fd < 0) {
			error("cannot create a temporary file: %s", strerror(errno));
			goto out;
		}
		close(fd);
		o->yaml_path = xstrdup(tmpl);
		o->temp_yaml = 1;
	} else {
		sha256_hex(yaml, strlen(yaml), hash);
		dir = dir_name(o->db);
		if ((e = mkdir_p(dir, 0755)) < 0) {
			error("cannot create '%s': %s", dir, strerror(-e));
			goto out;
		}
		o->yaml_path = xasprintf("%s/oneliner-%.12s.yaml", dir, hash);
		struct output_inputs in = { 0 };
		output_inputs_add_db(&in, o->db);
		e = output_check(o->yaml_path, "a one-liner's study", &in);
		output_inputs_release(&in);
		if (e < 0)
			goto out;
	}
	FILE *f = fopen(o->yaml_path, "w");
	int bad = !f || fputs(yaml, f) < 0;
	if ((f && fclose(f) != 0) || bad) {
		error("cannot write '%s': %s", o->yaml_path, strerror(errno));
		goto out;
	}
	o->file = o->yaml_path;
	ret = 0;
out:
	free(dir);
	free(yaml);
	return ret;
}

/* ---- the closing summary (reports/summary.h) ---- */

/*
 * A first look at the study: *used, the CPUs it keeps busy (its cpus:,
 * else 1; 2 with order: duet, two runs at once), and the files it writes
 * by the names the user gave (the database, with the files beside it, and
 * a one-liner's study) checked against those it reads (lib/output.h): 0,
 * or -1 (printed: exit 2).  A file that does not load is the study's to
 * report.
 */
static int look_at_study(const struct run_opts *o, int *used)
{
	struct output_inputs in = { 0 }, db = { 0 };
	struct experiment exp = { 0 };
	char err[256];
	int ret = 0;

	*used = 1;
	if (config_load(o->file, &exp, err, sizeof(err)) == 0 && exp.n_cpus)
		*used = (int)exp.n_cpus;
	if (exp.order == ORDER_DUET)
		*used = 2;
	for (size_t i = 0; i < exp.n_files; i++)
		output_inputs_add(&in, exp.files[i]);
	if (!exp.n_files)
		output_inputs_add(&in, o->file);
	output_inputs_add_db(&db, o->db);
	for (size_t i = 0; i < db.n && !ret; i++)
		ret = output_check(db.paths[i], "--db", &in);
	output_inputs_release(&in);
	output_inputs_release(&db);
	experiment_release(&exp);
	return ret;
}

/* Before the first run: say now when the machine is busy. */
static void machine_before(const struct machine_load *l, int used)
{
	if (machine_overloaded(l->load1, l->cores, used, 0))
		warning("load average %.2f on %d CPUs before the study: its times will "
			"include waiting for the CPU; wait for a quiet machine, or stop what runs",
			l->load1, l->cores);
}

/*
 * One screen on stdout after the study: the latest run of the database
 * (the one just made), its report model with perturb run's sight of the
 * machine added (report_warn_machine); nothing with -q.  Errors (no run
 * stored) print nothing more than the study did.
 */
static void run_summary(const struct run_opts *o, const struct machine_load *start, int used)
{
	struct report_opts ro = { .db = strcmp(o->db, DEFAULT_DB) ? o->db : NULL };
	struct machine_load end;
	struct report_model m;
	struct store *st = NULL;
	int usage = 0;

	if (perturb_quiet || o->dry_run)
		return;
	report_opts_for(&ro, &render_summary);
	machine_load_sample(&end);
	if (store_open(o->db, 0, &st) < 0)
		return;
	if (report_build(st, &ro, &m, &usage) == 0) {
		report_warn_machine(&m, start, &end, used);
		fputc('\n', stdout);
		report_summary(&m, stdout);
		report_release(&m);
	}
	store_close(st);
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	char *cmdline = NULL;
	int ret = EXIT_USAGE;

	switch (parse_args(argc, argv, &o)) {
	case 0:
		break;
	case OPT_EXIT_DONE:
		ret = EXIT_OK;
		/* fall through */
	default:
		goto out;
	}
	int shard, n_shards;
	if (check_label(o.label) < 0 || check_slurm_args(&o, &shard, &n_shards) < 0)
		goto out;
	if (resolve_study(&o) < 0)
		goto out;
	int used;
	if (look_at_study(&o, &used) < 0)
		goto out;
	cmdline = join_argv(argc, argv);
	if (o.slurm) {
		ret = run_slurm(&o, cmdline);
		goto out;
	}
	struct machine_load start;
	machine_load_sample(&start);
	if (!o.dry_run)
		machine_before(&start, used);
	struct study_opts so = {
		.n_shards = n_shards, .shard = shard,
		.file = o.file, .db = o.db, .filter = &o.filter,
		.has_seed = o.has_seed, .seed = o.seed,
		.dry_run = o.dry_run, .resume = o.resume,
		.skip_unavailable = o.skip_unavailable, .self_check = o.self_check,
		.target_ci = o.target_ci, .max_time = o.max_time,
		.widest = report_widest, .cmdline = cmdline, .label = o.label,
	};
	switch (study_run(&so)) {
	case STUDY_DONE:
		ret = EXIT_OK;
		run_summary(&o, &start, used);
		break;
	case STUDY_REFUSED:
		ret = EXIT_USAGE;
		break;
	case STUDY_FAILED:
		ret = EXIT_RUNTIME;
		run_summary(&o, &start, used);
		break;
	}
out:
	if (o.temp_yaml)
		unlink(o.yaml_path);
	free(o.yaml_path);
	free(o.args);
	free(o.variants.v);
	free(o.env.v);
	free(o.names.v);
	free(cmdline);
	free(o.filter.variants);
	free(o.filter.workloads);
	return ret;
}
