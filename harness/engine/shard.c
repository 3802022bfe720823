/* shard.c - see shard.h */
#include "shard.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Shard k of n: its share of a workload's r repetitions. */
static int share(int r, int k, int n)
{
	return r / n + (k < r % n);
}

int shard_plan_build(const struct experiment *exp, const struct plan_filter *filter,
		     uint64_t seed, int n_shards, struct plan *out,
		     struct store_shard **rows, char *err, size_t errlen)
{
	struct experiment part = *exp;
	struct plan_filter f = filter ? *filter : (struct plan_filter){ 0 };
	size_t nvw = exp->n_variants * exp->n_workloads;
	int *next_rep = xcalloc(2 * nvw + 1, sizeof(int));	/* [warm][v][w] */
	int round_base = 0, block_base = 0, ret = -1;

	memset(out, 0, sizeof(*out));
	*rows = xcalloc((size_t)n_shards, sizeof(**rows));
	part.workloads = xcalloc(exp->n_workloads + 1, sizeof(*part.workloads));
	f.repetitions = 0;
	for (size_t w = 0; w < exp->n_workloads; w++) {
		int r = filter && filter->repetitions > 0 ? filter->repetitions
				: workload_repetitions(exp, &exp->workloads[w]);
		if (r < n_shards) {
			snprintf(err, errlen, "%s: workload '%s' has %d repetition%s, fewer than "
				 "the %d shards: each shard runs every workload at least once",
				 exp->path, exp->workloads[w].name, r, r == 1 ? "" : "s", n_shards);
			goto out;
		}
	}
	for (int k = 0; k < n_shards; k++) {
		struct plan p;
		int max_round = -1, max_block = -1;
		int *top = xcalloc(2 * nvw + 1, sizeof(int));

		for (size_t w = 0; w < exp->n_workloads; w++) {
			int r = filter && filter->repetitions > 0 ? filter->repetitions
					: workload_repetitions(exp, &exp->workloads[w]);
			part.workloads[w] = exp->workloads[w];
			part.workloads[w].repetitions = share(r, k, n_shards);
		}
		if (plan_build(&part, &f, seed + (uint64_t)k, &p, err, errlen) < 0) {
			free(top);
			goto out;
		}
		(*rows)[k].shard = k;
		(*rows)[k].n_shards = n_shards;
		(*rows)[k].seq_lo = (int)out->n;
		for (size_t i = 0; i < p.n; i++) {
			struct plan_entry e = p.e[i];
			size_t slot = (size_t)e.warmup * nvw + (size_t)e.variant * exp->n_workloads +
				      (size_t)e.workload;
			if (e.round > max_round)
				max_round = e.round;
			if (e.block > max_block)
				max_block = e.block;
			e.repetition += next_rep[slot];
			if (e.repetition + 1 > top[slot])
				top[slot] = e.repetition + 1;
			if (e.round >= 0)
				e.round += round_base;
			e.block += block_base;
			e.seq = (int)out->n;
			ALLOC_GROW(out->e, out->n + 1, out->alloc);
			out->e[out->n++] = e;
		}
		(*rows)[k].seq_hi = (int)out->n;
		for (size_t i = 0; i < 2 * nvw; i++)
			if (top[i] > next_rep[i])
				next_rep[i] = top[i];
		round_base += max_round + 1;
		block_base += max_block + 1;
		plan_release(&p);
		free(top);
	}
	ret = 0;
out:
	free(part.workloads);
	free(next_rep);
	if (ret < 0) {
		plan_release(out);
		store_shards_free(*rows, 0);
		*rows = NULL;
	}
	return ret;
}

void shard_plan_hash(const struct plan *p, char out[65])
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->e[i];
		strbuf_addf(&sb, "%d %d %d %d %d %d %d\n", e->seq, e->variant, e->workload,
			    e->repetition, !!e->warmup, e->round, e->block);
	}
	sha256_hex(sb.buf ? sb.buf : "", sb.len, out);
	strbuf_release(&sb);
}

int shard_parse(const char *s, int *k, int *n)
{
	const char *slash = strchr(s, '/');
	char *ks;
	long kv, nv;
	int bad;

	if (!slash)
		return -1;
	ks = xstrndup(s, (size_t)(slash - s));
	bad = parse_long(ks, 0, 99999, &kv) < 0 || parse_long(slash + 1, 1, 100000, &nv) < 0 ||
	      kv >= nv;
	free(ks);
	if (bad)
		return -1;
	*k = (int)kv;
	*n = (int)nv;
	return 0;
}

char *shard_dir(const char *main_db, int64_t run_id)
{
	char *dir = dir_name(main_db);
	char *path = xasprintf("%s/shards/run-%" PRId64, dir, run_id);
	free(dir);
	return path;
}

char *shard_db_path(const char *main_db, int64_t run_id, int k)
{
	char *dir = shard_dir(main_db, run_id);
	char *path = xasprintf("%s/shard-%d.db", dir, k);
	free(dir);
	return path;
}

void shard_set_provenance(struct store_shard *row)
{
	const char *job = getenv("SLURM_ARRAY_JOB_ID"), *task = getenv("SLURM_ARRAY_TASK_ID");
	const char *id = getenv("SLURM_JOB_ID"), *node = getenv("SLURMD_NODENAME");
	char host[256] = "";

	free(row->job);
	free(row->node);
	row->job = NULL;
	if (job && task)
		row->job = xasprintf("%s_%s (job %s)", job, task, id ? id : "?");
	else if (id)
		row->job = xstrdup(id);
	if (!node || !*node) {
		gethostname(host, sizeof(host) - 1);
		node = host;
	}
	row->node = xstrdup(node);
}
