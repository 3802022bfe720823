/* submit.c - see submit.h */
#include "submit.h"
#include "config.h"
#include "merge.h"
#include "shard.h"
#include "slurm.h"
#include "core/stop.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SHARDS 4
#define MAX_POLL_S 10.0

/* The array job of a shard row's job ("ARRAY_K" or "ARRAY_K (job N)"),
 * malloc'd, or NULL. */
static char *array_job(const char *job)
{
	return job ? xstrndup(job, strcspn(job, "_ ")) : NULL;
}

/* The task's command line, {K} for the array index (slurm_write_script()). */
static char **task_argv(const struct submit_opts *o, const char *file, int n_shards,
			uint64_t seed, const char *dir)
{
	const struct plan_filter *f = o->filter;
	size_t n = 0, cap = 16 + (f ? 2 * (f->n_variants + f->n_workloads) : 0);
	char **v = xcalloc(cap, sizeof(char *)), *e;

	/* every path and name escaped: "{K}" in them is no array index */
	v[n++] = slurm_escape_k(perturb_self_exe());
	v[n++] = xstrdup("run");
	v[n++] = slurm_escape_k(file);
	v[n++] = xasprintf("--shard={K}/%d", n_shards);
	v[n++] = xasprintf("--seed=%" PRIu64, seed);
	e = slurm_escape_k(dir);
	v[n++] = xasprintf("--db=%s/shard-{K}.db", e);
	free(e);
	if (f && f->repetitions > 0)
		v[n++] = xasprintf("--repetitions=%d", f->repetitions);
	for (size_t i = 0; f && i < f->n_variants; i++) {
		e = slurm_escape_k(f->variants[i]);
		v[n++] = xasprintf("--only-variant=%s", e);
		free(e);
	}
	for (size_t i = 0; f && i < f->n_workloads; i++) {
		e = slurm_escape_k(f->workloads[i]);
		v[n++] = xasprintf("--only-workload=%s", e);
		free(e);
	}
	if (o->self_check)
		v[n++] = xstrdup("--self-check");
	return v;
}

/* Submit the shards listed in array ("0-3", "1,3") of run_id: the marker,
 * the script, sbatch; the rows get the job "ARRAY_K". */
static int submit_shards(const struct submit_opts *o, const struct experiment *exp,
			 struct store *st, int64_t run_id, struct store_shard *rows, size_t n,
			 const unsigned char *which)
{
	struct run_header h = { 0 };
	struct strbuf array = STRBUF_INIT;
	char *dir = shard_dir(o->db, run_id), *marker = NULL, *token = NULL, *script = NULL;
	char *file = realpath(o->file, NULL), *job = NULL, *name = NULL, **argv = NULL;
	int e, ret = -1;

	if (!file) {
		error("cannot resolve '%s': %s", o->file, strerror(errno));
		goto out;
	}
	if ((e = mkdir_p(dir, 0755)) < 0) {
		error("cannot create '%s': %s", dir, strerror(-e));
		goto out;
	}
	if (store_run_header(st, run_id, &h) < 0 || slurm_write_marker(dir, &marker, &token) < 0)
		goto out;
	argv = task_argv(o, file, (int)n, h.seed, dir);
	script = xasprintf("%s/task.sh", dir);
	if (slurm_write_script(script, marker, token, argv) < 0)
		goto out;
	for (size_t k = 0; k < n; k++)
		if (which[k])
			strbuf_addf(&array, "%s%zu", array.len ? "," : "", k);
	name = xasprintf("perturb-%s", exp->name);
	if (slurm_submit(&exp->slurm, script, array.buf, name, dir, &job) < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		if (!which[k])
			continue;
		free(rows[k].job);
		rows[k].job = xasprintf("%s_%zu", job, k);
		if (store_put_shards(st, run_id, &rows[k], 1) < 0)
			goto out;
	}
	note("run %" PRId64 " of '%s': shards %s of %zu submitted as Slurm job array %s; "
	     "'perturb status --db %s' follows it", run_id, exp->name, array.buf, n, job, o->db);
	ret = 0;
out:
	run_header_release(&h);
	strbuf_release(&array);
	argv_free(argv);
	free(dir);
	free(marker);
	free(token);
	free(script);
	free(file);
	free(job);
	free(name);
	return ret;
}

/* The distinct array jobs of the rows (malloc'd strings). */
static size_t row_jobs(const struct store_shard *rows, size_t n, char **jobs)
{
	size_t nj = 0;

	for (size_t k = 0; k < n; k++) {
		char *j = array_job(rows[k].job);
		size_t i;
		for (i = 0; j && i < nj && strcmp(jobs[i], j); i++)
			;
		if (j && i == nj)
			jobs[nj++] = j;
		else
			free(j);
	}
	return nj;
}

/* Until no task of the run is queued or running; then merge. */
static int wait_and_merge(const struct submit_opts *o, struct store *st, int64_t run_id,
			  struct merge_totals *t)
{
	struct store_shard *rows = NULL;
	size_t n = 0, nj = 0, active = 0;
	double poll = o->poll_s > 0 ? o->poll_s : 1.0;
	char **jobs = NULL;
	int ret = -1;

	if (store_load_shards(st, run_id, &rows, &n) < 0)
		return -1;
	jobs = xcalloc(n + 1, sizeof(char *));
	nj = row_jobs(rows, n, jobs);
	stop_install_signals();
	for (int failures = 0;;) {
		struct timespec ts;
		/* a busy controller may time out: a few tries before giving up */
		if (slurm_active(jobs, nj, &active) < 0) {
			if (++failures >= 5)
				goto out;
		} else if (!active) {
			break;
		} else {
			failures = 0;
		}
		if (stop_requested()) {
			error("stopped while waiting; the tasks go on: 'perturb merge --db %s' "
			      "collects their results", o->db);
			goto out;
		}
		ts.tv_sec = (time_t)poll;
		ts.tv_nsec = (long)((poll - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		if ((poll *= 1.5) > MAX_POLL_S)
			poll = MAX_POLL_S;
	}
	ret = merge_run(st, run_id, NULL, 0, t);
out:
	for (size_t i = 0; i < nj; i++)
		free(jobs[i]);
	free(jobs);
	store_shards_free(rows, n);
	return ret;
}

/* A shard database that cannot be read is put aside, so that its task
 * starts the shard again. */
static void set_aside(const char *db)
{
	struct store *x = NULL;
	char *to;

	if (access(db, F_OK) < 0)
		return;
	if (store_open(db, 0, &x) == 0) {
		store_close(x);
		return;
	}
	to = xasprintf("%s.damaged-%ld", db, (long)time(NULL));
	if (rename(db, to) == 0)
		warning("'%s' cannot be read: moved to '%s'; its shard is run again", db, to);
	free(to);
}

/* --resume: the unfinished split run of this experiment, merged, and its
 * shards with runs missing submitted again. */
static enum study_result resume(const struct submit_opts *o, const struct experiment *exp,
				struct store *st, int64_t *run_id)
{
	struct store_shard *rows = NULL;
	struct merge_totals t;
	unsigned char *which = NULL;
	size_t n = 0, nj, active, todo = 0;
	char sha[65], **jobs = NULL;
	enum study_result ret = STUDY_FAILED;

	sha256_hex(exp->text, exp->text_len, sha);
	if (store_find_resumable(st, sha, run_id) < 0)
		return STUDY_FAILED;
	if (!*run_id) {
		error("--resume: '%s' holds no unfinished run of this version of '%s'", o->db,
		      o->file);
		return STUDY_REFUSED;
	}
	if (merge_run(st, *run_id, NULL, 0, &t) < 0 || store_load_shards(st, *run_id, &rows, &n) < 0)
		goto out;
	if (!n) {
		error("--resume: run %" PRId64 " is not split into shards; resume it without --slurm",
		      *run_id);
		ret = STUDY_REFUSED;
		goto out;
	}
	which = xcalloc(n, 1);
	jobs = xcalloc(2, sizeof(char *));
	for (size_t k = 0; k < n; k++) {
		if (rows[k].n_results >= rows[k].seq_hi - rows[k].seq_lo)
			continue;
		/* this task: "ARRAY_K" */
		jobs[0] = rows[k].job ? xstrndup(rows[k].job, strcspn(rows[k].job, " ")) : NULL;
		nj = !!jobs[0];
		if (nj && slurm_active(jobs, nj, &active) < 0) {
			/* squeue failed (said): a task we cannot see may be alive */
			warning("shard %zu: cannot tell whether its task %s is alive; not "
				"submitted again", k, rows[k].job);
		} else if (nj && active) {
			note("shard %zu: its task %s is still queued or running", k, rows[k].job);
		} else {
			which[k] = 1;
			todo++;
			if (rows[k].db)
				set_aside(rows[k].db);
		}
		for (size_t i = 0; i < nj; i++)
			free(jobs[i]);
	}
	if (!todo) {
		note("run %" PRId64 ": no shard to submit again (%zu of %zu results merged)",
		     *run_id, t.done, t.total);
		ret = STUDY_DONE;
		goto out;
	}
	if (submit_shards(o, exp, st, *run_id, rows, n, which) < 0)
		goto out;
	ret = STUDY_DONE;
out:
	free(which);
	free(jobs);
	store_shards_free(rows, n);
	return ret;
}

/* db with an absolute folder (created): the tasks run elsewhere. */
static char *absolute_db(const char *db)
{
	char *dir = dir_name(db), *real, *base = strrchr(db, '/'), *abs = NULL;
	int e;

	if ((e = mkdir_p(dir, 0755)) < 0)
		error("cannot create '%s': %s", dir, strerror(-e));
	else if (!(real = realpath(dir, NULL)))
		error("cannot resolve '%s': %s", dir, strerror(errno));
	else {
		abs = xasprintf("%s/%s", real, base ? base + 1 : db);
		free(real);
	}
	free(dir);
	return abs;
}

enum study_result submit_run(const struct submit_opts *opts)
{
	struct submit_opts abs_opts = *opts, *o = &abs_opts;
	struct experiment exp;
	struct store *st = NULL;
	struct store_shard *rows = NULL;
	struct merge_totals t;
	unsigned char *which = NULL;
	size_t n = 0;
	int64_t run_id = 0;
	char err[1024], why[256];
	enum study_result ret = STUDY_REFUSED;

	if (config_load(o->file, &exp, err, sizeof(err)) < 0) {
		error("%s", err);
		return STUDY_REFUSED;
	}
	if (!(o->db = absolute_db(opts->db))) {
		experiment_release(&exp);
		return STUDY_FAILED;
	}
	if (!slurm_available(why, sizeof(why))) {
		error("--slurm: unavailable: %s", why);
		goto out;
	}
	if (o->resume) {
		ret = STUDY_FAILED;
		if (store_open(o->db, 0, &st) < 0)
			goto out;
		if ((ret = resume(o, &exp, st, &run_id)) != STUDY_DONE)
			goto out;
	} else {
		int shards = o->shards ? o->shards : exp.slurm.shards ? exp.slurm.shards
								      : DEFAULT_SHARDS;
		struct study_opts so = {
			.file = o->file, .db = o->db, .filter = o->filter,
			.has_seed = o->has_seed, .seed = o->seed, .self_check = o->self_check,
			.cmdline = o->cmdline, .n_shards = shards, .shard = -1, .submit = 1,
			.run_id_out = &run_id,
		};
		if ((ret = study_run(&so)) != STUDY_DONE)
			goto out;
		ret = STUDY_FAILED;
		if (store_open(o->db, 0, &st) < 0 || store_load_shards(st, run_id, &rows, &n) < 0)
			goto out;
		which = xcalloc(n, 1);
		memset(which, 1, n);
		if (submit_shards(o, &exp, st, run_id, rows, n, which) < 0) {
			store_end_run(st, run_id, "failed");
			goto out;
		}
	}
	ret = STUDY_DONE;
	if (!o->wait)
		goto out;
	ret = STUDY_FAILED;
	if (wait_and_merge(o, st, run_id, &t) < 0)
		goto out;
	if (t.done < t.total) {
		error("run %" PRId64 ": %zu of %zu runs have results; 'perturb status --db %s' says "
		      "which shards failed, 'perturb run %s --db %s --slurm --resume' runs them again",
		      run_id, t.done, t.total, o->db, o->file, o->db);
		goto out;
	}
	note("run %" PRId64 " of '%s' done on Slurm: %zu runs merged; 'perturb report --db %s' "
	     "shows it", run_id, exp.name, t.done, o->db);
	ret = STUDY_DONE;
out:
	free(which);
	store_shards_free(rows, n);
	store_close(st);
	experiment_release(&exp);
	free((char *)o->db);
	return ret;
}

int submit_status(struct store *s, int64_t run_id, struct shard_status **out, size_t *n_out)
{
	struct store_shard *rows = NULL;
	struct shard_status *ss;
	size_t n = 0, nj;
	char **jobs;

	*out = NULL;
	*n_out = 0;
	if (store_load_shards(s, run_id, &rows, &n) < 0)
		return -1;
	ss = xcalloc(n + 1, sizeof(*ss));
	jobs = xcalloc(n + 1, sizeof(char *));
	nj = row_jobs(rows, n, jobs);
	struct slurm_task **tasks = xcalloc(nj + 1, sizeof(*tasks));
	size_t *nt = xcalloc(nj + 1, sizeof(*nt));
	for (size_t j = 0; j < nj; j++)
		slurm_tasks(jobs[j], &tasks[j], &nt[j]);
	for (size_t k = 0; k < n; k++) {
		struct shard_status *x = &ss[k];
		const struct slurm_task *t = NULL;
		char *aj = array_job(rows[k].job), *status = NULL, *job = NULL, *node = NULL;

		x->shard = rows[k].shard;
		x->merged = rows[k].n_results;
		x->total = rows[k].seq_hi - rows[k].seq_lo;
		if (rows[k].node)
			snprintf(x->node, sizeof(x->node), "%s", rows[k].node);
		for (size_t j = 0; aj && j < nj; j++)
			for (size_t i = 0; !strcmp(jobs[j], aj) && i < nt[j]; i++)
				if (tasks[j][i].index == rows[k].shard)
					t = &tasks[j][i];
		if (rows[k].db && access(rows[k].db, F_OK) == 0) {
			if (merge_peek_shard(rows[k].db, rows[k].shard, &x->in_shard, &status,
					     &job, &node) < 0)
				snprintf(x->reason, sizeof(x->reason), "its database cannot be read");
			if (node)
				snprintf(x->node, sizeof(x->node), "%s", node);
		}
		if (x->in_shard < x->merged)
			x->in_shard = x->merged;
		if (!rows[k].job) {
			x->state = "not submitted";
		} else if (t && !strcmp(t->state, "PENDING")) {
			x->state = "pending";
			if (*t->reason)
				snprintf(x->reason, sizeof(x->reason), "%s", t->reason);
		} else if (t && (!strcmp(t->state, "RUNNING") || !strcmp(t->state, "COMPLETING"))) {
			x->state = "running";
			snprintf(x->node, sizeof(x->node), "%s", t->node);
		} else if (x->in_shard >= x->total) {
			x->state = "done";
		} else {
			x->state = "failed";
			if (t)
				snprintf(x->reason, sizeof(x->reason), "%s%s%s", t->state,
					 *t->reason ? ": " : "", t->reason);
			else if (!x->reason[0])
				snprintf(x->reason, sizeof(x->reason), "%s", status ?
					 (!strcmp(status, "running") ? "ended while running (killed)" :
					  status) : "no shard database");
			if (t && !x->node[0])
				snprintf(x->node, sizeof(x->node), "%s", t->node);
		}
		free(aj);
		free(status);
		free(job);
		free(node);
	}
	for (size_t j = 0; j < nj; j++) {
		free(jobs[j]);
		free(tasks[j]);
	}
	free(jobs);
	free(tasks);
	free(nt);
	store_shards_free(rows, n);
	*out = ss;
	*n_out = n;
	return 0;
}
