/* merge.c - see merge.h */
#include "merge.h"
#include "shard.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int merge_find_run(struct store *st, int64_t run_id, int64_t *out)
{
	struct store_shard *sh = NULL;
	size_t n = 0;

	if (run_id <= 0) {
		if (store_latest_sharded_run(st, out) < 0)
			return -1;
		if (!*out)
			return error("the database holds no study split into shards "
				     "(perturb run --slurm)");
		return 0;
	}
	if (store_load_shards(st, run_id, &sh, &n) < 0)
		return -1;
	store_shards_free(sh, n);
	if (!n)
		return error("run %" PRId64 " is not split into shards", run_id);
	*out = run_id;
	return 0;
}

int merge_open(const char *db, enum store_mode mode, int64_t run_id, struct store **st,
	       int64_t *out)
{
	if (store_open(db, mode, st) < 0)
		return -1;
	return merge_find_run(*st, run_id, out) < 0 ? -2 : 0;
}

/* The plan hash and experiment hash of a run: the plan's as its shard rows
 * recorded it, else computed from the stored plan. */
static int run_hashes(struct store *st, int64_t run_id, const struct store_shard *rows,
		      size_t n, char plan_sha[65], char **exp_sha)
{
	struct run_header h = { 0 };
	struct plan p = { 0 };
	unsigned char *done = NULL;

	if (store_run_header(st, run_id, &h) < 0)
		return -1;
	*exp_sha = h.sha256;
	h.sha256 = NULL;
	run_header_release(&h);
	for (size_t i = 0; i < n; i++)
		if (rows[i].plan_sha && strlen(rows[i].plan_sha) == 64) {
			memcpy(plan_sha, rows[i].plan_sha, 65);
			return 0;
		}
	if (store_load_plan(st, run_id, &p, &done) < 0)
		return -1;
	shard_plan_hash(&p, plan_sha);
	plan_release(&p);
	free(done);
	return 0;
}

/* The shard row a task recorded in its own database: the one with a node.
 * Its index, or -1. */
static int own_row(const struct store_shard *sh, size_t n, int want)
{
	for (size_t i = 0; i < n; i++)
		if (sh[i].node && (want < 0 || sh[i].shard == want))
			return (int)i;
	return -1;
}

/* Merge one shard database; 1 when refused or unreadable (said). */
static int merge_one(struct store *st, int64_t run_id, const char *exp_sha,
		     const char *plan_sha, struct store_shard *rows, size_t n_rows,
		     const char *file, int want, struct merge_totals *t)
{
	struct store *sh = NULL;
	struct store_shard *srows = NULL;
	size_t n_srows = 0, added = 0;
	int64_t src = 0;
	char psha[65], *esha = NULL;
	int k, r, ret = 1;

	if (store_open(file, STORE_READ, &sh) < 0)
		goto out;
	if (store_latest_sharded_run(sh, &src) < 0)
		goto out;
	if (!src) {
		error("'%s' is not the database of a shard (no shard was run in it)", file);
		goto out;
	}
	if (store_load_shards(sh, src, &srows, &n_srows) < 0 ||
	    run_hashes(sh, src, srows, n_srows, psha, &esha) < 0)
		goto out;
	if (strcmp(esha, exp_sha)) {
		error("refused '%s': a shard of another experiment (its text has SHA-256 %.12s, "
		      "run %" PRId64 "'s %.12s)", file, esha, run_id, exp_sha);
		goto out;
	}
	if (strcmp(psha, plan_sha)) {
		error("refused '%s': a shard of another plan of this experiment (plan %.12s, "
		      "run %" PRId64 "'s %.12s: another seed, filter or number of shards)",
		      file, psha, run_id, plan_sha);
		goto out;
	}
	if ((r = own_row(srows, n_srows, want)) < 0) {
		error("refused '%s': no task recorded %s in it", file,
		      want >= 0 ? "this shard" : "a shard");
		goto out;
	}
	k = srows[r].shard;
	if (k < 0 || (size_t)k >= n_rows) {
		error("refused '%s': shard %d is not one of run %" PRId64 "'s", file, k, run_id);
		goto out;
	}
	if (store_merge_results(st, run_id, file, src, rows[k].seq_lo, rows[k].seq_hi,
				&added) < 0)
		goto out;
	free(rows[k].job);
	free(rows[k].node);
	rows[k].job = srows[r].job ? xstrdup(srows[r].job) : NULL;
	rows[k].node = xstrdup(srows[r].node);
	if (store_put_shards(st, run_id, &rows[k], 1) < 0)
		goto out;
	t->added += added;
	t->merged++;
	ret = 0;
out:
	t->refused += ret;
	free(esha);
	store_shards_free(srows, n_srows);
	store_close(sh);
	return ret;
}

int merge_run(struct store *st, int64_t run_id, char *const *files, size_t n_files,
	      struct merge_totals *t)
{
	struct store_shard *rows = NULL;
	size_t n = 0;
	char plan_sha[65], *exp_sha = NULL;
	int ret = -1;

	memset(t, 0, sizeof(*t));
	if (store_load_shards(st, run_id, &rows, &n) < 0 ||
	    run_hashes(st, run_id, rows, n, plan_sha, &exp_sha) < 0)
		goto out;
	if (n_files) {
		for (size_t i = 0; i < n_files; i++)
			merge_one(st, run_id, exp_sha, plan_sha, rows, n, files[i], -1, t);
	} else {
		for (size_t k = 0; k < n; k++) {
			if (!rows[k].db || access(rows[k].db, F_OK) < 0) {
				t->missing++;
				continue;
			}
			char *db = xstrdup(rows[k].db);
			merge_one(st, run_id, exp_sha, plan_sha, rows, n, db, (int)k, t);
			free(db);
		}
	}
	store_shards_free(rows, n);
	rows = NULL;
	if (store_load_shards(st, run_id, &rows, &n) < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		t->done += (size_t)rows[k].n_results;
		t->total += (size_t)(rows[k].seq_hi - rows[k].seq_lo);
	}
	if (t->total && t->done == t->total && store_end_run(st, run_id, "completed") < 0)
		goto out;
	ret = 0;
out:
	free(exp_sha);
	store_shards_free(rows, n);
	return ret;
}

int merge_peek_shard(const char *db, int shard, int *n_results, char **status, char **job,
		     char **node)
{
	struct store *sh = NULL;
	struct store_shard *rows = NULL;
	struct run_header h = { 0 };
	size_t n = 0;
	int64_t run = 0;
	int r, ret = -1;

	*n_results = 0;
	*status = *job = *node = NULL;
	if (store_open(db, STORE_READ, &sh) < 0 || store_latest_sharded_run(sh, &run) < 0 ||
	    !run)
		goto out;
	if (store_load_shards(sh, run, &rows, &n) < 0 || store_run_header(sh, run, &h) < 0)
		goto out;
	if ((r = own_row(rows, n, shard)) >= 0) {
		*n_results = rows[r].n_results;
		*job = rows[r].job ? xstrdup(rows[r].job) : NULL;
		*node = xstrdup(rows[r].node);
	}
	*status = h.status;
	h.status = NULL;
	ret = 0;
out:
	run_header_release(&h);
	store_shards_free(rows, n);
	store_close(sh);
	return ret;
}
