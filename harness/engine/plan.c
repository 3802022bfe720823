/* plan.c - see plan.h */
#include "plan.h"
#include "backends/backend.h"
#include "lib/util.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* v = 0, 1, ..., n - 1 in an order drawn from rng (nothing drawn when n
 * is 0: gsl_ran_shuffle() wants n > 0): the positions of a round's
 * workloads. */
static void shuffled_positions(gsl_rng *rng, int *v, size_t n)
{
	for (size_t j = 0; j < n; j++)
		v[j] = (int)j;
	if (n)
		gsl_ran_shuffle(rng, v, n, sizeof(int));
}

static int in_list(char **list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return 1;
	return 0;
}

static void push_block(struct plan *p, int v, int w, int rep, int warm, int round, int block)
{
	ALLOC_GROW(p->e, p->n + 1, p->alloc);
	struct plan_entry *e = &p->e[p->n];
	e->seq = (int)p->n;
	e->variant = v;
	e->workload = w;
	e->repetition = rep;
	e->warmup = warm;
	e->round = round;
	e->block = block;
	p->n++;
}

static void push(struct plan *p, int v, int w, int rep, int warm, int round)
{
	push_block(p, v, w, rep, warm, round, round < 0 ? 0 : round);
}

/* Unknown names in a filter are errors, with the list of known ones. */
static int check_filter(char **names, size_t n, const char *what,
			const struct experiment *exp, int variants,
			char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		int idx = variants ? experiment_find_variant(exp, names[i])
				   : experiment_find_workload(exp, names[i]);
		if (idx >= 0)
			continue;
		struct strbuf known = STRBUF_INIT;
		size_t cnt = variants ? exp->n_variants : exp->n_workloads;
		for (size_t j = 0; j < cnt; j++)
			strbuf_addf(&known, "%s%s", j ? ", " : "",
				    variants ? exp->variants[j].name : exp->workloads[j].name);
		snprintf(err, errlen, "%s: no %s named '%s' (known: %s)",
			 exp->path, what, names[i], known.buf ? known.buf : "");
		strbuf_release(&known);
		return -1;
	}
	return 0;
}

/* The boots: N of the variants in vsel (their backend's, backend.h; 1 when none says), or -1 with err
 * set when two variants ask for different counts. */
static int plan_boots(const struct experiment *exp, const int *vsel, size_t nvs, char *err,
		      size_t errlen)
{
	const struct variant *by = NULL;

	for (size_t i = 0; i < nvs; i++) {
		const struct variant *v = &exp->variants[vsel[i]];
		int nb = backend_boots(v);
		if (nb <= 1)
			continue;
		if (by && nb != backend_boots(by)) {
			snprintf(err, errlen, "%s:%d:%d: variant '%s' asks for boots: %d and "
				 "variant '%s' for boots: %d; ABBA ordering boots every variant "
				 "as often", v->cfg_pos.file, v->cfg_pos.line, v->cfg_pos.col,
				 v->name, nb, by->name, backend_boots(by));
			return -1;
		}
		by = v;
	}
	return by ? backend_boots(by) : 1;
}

/*
 * boots: nb - nb blocks, ABBA (see plan.h).  reps[j] measured runs of
 * workload wsel[j] are spread over the blocks; each block has its warm-ups.
 */
static void build_blocks(const struct experiment *exp, const int *vsel, size_t nvs,
			 const int *wsel, const int *reps, size_t nws, int nb, gsl_rng *rng,
			 struct plan *out)
{
	int warm = exp->warmup, interleaved = exp->order == ORDER_INTERLEAVED;
	int *order = xcalloc(nvs, sizeof(int)), *worder = xcalloc(nws + 1, sizeof(int));
	int *lo = xcalloc(nws + 1, sizeof(int)), *hi = xcalloc(nws + 1, sizeof(int));

	memcpy(order, vsel, nvs * sizeof(int));
	if (interleaved && nvs)
		gsl_ran_shuffle(rng, order, nvs, sizeof(int));
	for (int b = 0; b < nb; b++) {
		int most = 0;
		/* repetition r goes to block floor(r * nb / reps): [lo, hi) */
		for (size_t j = 0; j < nws; j++) {
			lo[j] = (int)(((long)b * reps[j] + nb - 1) / nb);
			hi[j] = (int)(((long)(b + 1) * reps[j] + nb - 1) / nb);
			if (hi[j] - lo[j] > most)
				most = hi[j] - lo[j];
		}
		for (size_t i = 0; i < nvs; i++) {
			int v = b % 2 ? order[nvs - 1 - i] : order[i];
			if (!interleaved) {
				for (size_t j = 0; j < nws; j++) {
					for (int r = 0; r < warm; r++)
						push_block(out, v, wsel[j], b * warm + r, 1, b, b);
					for (int r = lo[j]; r < hi[j]; r++)
						push_block(out, v, wsel[j], r, 0, b, b);
				}
				continue;
			}
			for (int t = 0; t < warm + most; t++) {
				shuffled_positions(rng, worder, nws);
				for (size_t j = 0; j < nws; j++) {
					int k = worder[j];
					if (t < warm)
						push_block(out, v, wsel[k], b * warm + t, 1, b, b);
					else if (lo[k] + t - warm < hi[k])
						push_block(out, v, wsel[k], lo[k] + t - warm, 0, b, b);
				}
			}
		}
	}
	free(order);
	free(worder);
	free(lo);
	free(hi);
}

/*
 * order: duet (see plan.h): rounds, each one pair (baseline, variant) per
 * workload, the variants other than the baseline in turn (file order),
 * the workloads shuffled within the round.  -1 with err set when there is
 * no variant besides the baseline.
 */
static int build_duet(const struct experiment *exp, const int *vsel, size_t nvs,
		      const int *wsel, const int *reps, size_t nws, gsl_rng *rng,
		      struct plan *out, char *err, size_t errlen)
{
	int base = experiment_find_variant(exp, exp->baseline), warm = exp->warmup, maxrep = 0;
	int *others = xcalloc(nvs + 1, sizeof(int)), *worder = xcalloc(nws + 1, sizeof(int));
	int *bwarm = xcalloc(nws + 1, sizeof(int)), *brep = xcalloc(nws + 1, sizeof(int));
	int nv = 0;

	for (size_t i = 0; i < nvs; i++)
		if (vsel[i] != base)
			others[nv++] = vsel[i];
	for (size_t j = 0; j < nws; j++)
		if (reps[j] > maxrep)
			maxrep = reps[j];
	if (!nv) {
		snprintf(err, errlen, "%s: order: duet runs a variant beside the baseline '%s', "
			 "and there is no other variant", exp->path, exp->baseline);
		goto out;
	}
	for (int r = 0; r < (warm + maxrep) * nv; r++) {
		int t = r / nv, v = others[r % nv], is_warm = t < warm, rep = is_warm ? t : t - warm;

		shuffled_positions(rng, worder, nws);
		for (size_t j = 0; j < nws; j++) {
			int k = worder[j];
			if (!is_warm && rep >= reps[k])
				continue;
			push(out, base, wsel[k], is_warm ? bwarm[k]++ : brep[k]++, is_warm, r);
			push(out, v, wsel[k], rep, is_warm, r);
		}
	}
out:
	free(others);
	free(worder);
	free(bwarm);
	free(brep);
	return nv ? 0 : -1;
}

int plan_build(const struct experiment *exp, const struct plan_filter *f,
	       uint64_t seed, struct plan *out, char *err, size_t errlen)
{
	static const struct plan_filter none;
	struct experiment with_warmup;
	size_t nv = exp->n_variants, nw = exp->n_workloads;
	int *vsel = NULL, *wsel = NULL, *reps = NULL;
	size_t nvs = 0, nws = 0;
	int ret = -1;
	gsl_rng *rng = NULL;

	if (f && f->has_warmup) {	/* --warmup: the experiment as if it said so */
		with_warmup = *exp;
		with_warmup.warmup = f->warmup;
		exp = &with_warmup;
	}

	if (!f)
		f = &none;
	memset(out, 0, sizeof(*out));
	if (check_filter(f->variants, f->n_variants, "variant", exp, 1, err, errlen) ||
	    check_filter(f->workloads, f->n_workloads, "workload", exp, 0, err, errlen))
		goto out;

	vsel = xcalloc(nv, sizeof(*vsel));
	wsel = xcalloc(nw, sizeof(*wsel));
	reps = xcalloc(nw, sizeof(*reps));
	for (size_t v = 0; v < nv; v++)
		if (!f->n_variants || in_list(f->variants, f->n_variants, exp->variants[v].name) ||
		    !strcmp(exp->variants[v].name, exp->baseline))
			vsel[nvs++] = (int)v;
	for (size_t w = 0; w < nw; w++) {
		if (f->n_workloads && !in_list(f->workloads, f->n_workloads, exp->workloads[w].name))
			continue;
		reps[nws] = f->repetitions > 0 ? f->repetitions
				: workload_repetitions(exp, &exp->workloads[w]);
		wsel[nws++] = (int)w;
	}

	int nb = plan_boots(exp, vsel, nvs, err, errlen);
	if (nb < 0)
		goto out;
	if (nb > 1 && exp->order == ORDER_RANDOM) {
		snprintf(err, errlen, "%s: boots: %d needs order: interleaved or sequential "
			 "(blocks of runs, one boot each), not random", exp->path, nb);
		goto out;
	}

	/* the size first, in 64 bits: counts are bounded (lib/range.h), their
	 * products are not */
	uint64_t total = 0;
	for (size_t j = 0; j < nws; j++)
		total += (uint64_t)nb * (uint64_t)(exp->warmup > 0 ? exp->warmup : 0) +
			 (uint64_t)(reps[j] > 0 ? reps[j] : 0);
	total *= exp->order == ORDER_DUET ? 2 * (nvs ? nvs - 1 : 0) : nvs;
	if (total > PLAN_MAX_RUNS) {
		snprintf(err, errlen, "%s: the plan has %llu runs (variants x workloads x "
			 "(warmup + repetitions)), more than %d: run fewer, or in several studies",
			 exp->path, (unsigned long long)total, PLAN_MAX_RUNS);
		goto out;
	}

	rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, (unsigned long)seed);
	int warm = exp->warmup;

	if (nb > 1) {
		build_blocks(exp, vsel, nvs, wsel, reps, nws, nb, rng, out);
		ret = 0;
		goto out;
	}

	switch (exp->order) {
	case ORDER_SEQUENTIAL:
		for (size_t i = 0; i < nvs; i++)
			for (size_t j = 0; j < nws; j++) {
				for (int r = 0; r < warm; r++)
					push(out, vsel[i], wsel[j], r, 1, -1);
				for (int r = 0; r < reps[j]; r++)
					push(out, vsel[i], wsel[j], r, 0, -1);
			}
		break;
	case ORDER_INTERLEAVED: {
		int maxrep = 0;
		for (size_t j = 0; j < nws; j++)
			if (reps[j] > maxrep)
				maxrep = reps[j];
		int *vorder = xcalloc(nvs, sizeof(int));
		int *worder = xcalloc(nws, sizeof(int));
		for (int round = 0; round < warm + maxrep; round++) {
			int is_warm = round < warm;
			int rep = is_warm ? round : round - warm;
			memcpy(vorder, vsel, nvs * sizeof(int));
			gsl_ran_shuffle(rng, vorder, nvs, sizeof(int));
			for (size_t i = 0; i < nvs; i++) {
				/* worder holds positions into wsel/reps. */
				shuffled_positions(rng, worder, nws);
				for (size_t j = 0; j < nws; j++) {
					int k = worder[j];
					if (!is_warm && rep >= reps[k])
						continue;
					push(out, vorder[i], wsel[k], rep, is_warm, round);
				}
			}
		}
		free(vorder);
		free(worder);
		break;
	}
	case ORDER_DUET:
		if (build_duet(exp, vsel, nvs, wsel, reps, nws, rng, out, err, errlen) < 0)
			goto out;
		break;
	case ORDER_RANDOM: {
		for (size_t i = 0; i < nvs; i++)
			for (size_t j = 0; j < nws; j++)
				for (int r = 0; r < warm + reps[j]; r++)
					push(out, vsel[i], wsel[j], 0, 0, -1);
		gsl_ran_shuffle(rng, out->e, out->n, sizeof(*out->e));
		/* Number each pair's runs in plan order: the first `warm` are warm-ups. */
		int *count = xcalloc(nv * (nw ? nw : 1), sizeof(int));
		for (size_t k = 0; k < out->n; k++) {
			struct plan_entry *e = &out->e[k];
			int c = count[(size_t)e->variant * nw + (size_t)e->workload]++;
			e->seq = (int)k;
			e->warmup = c < warm;
			e->repetition = c < warm ? c : c - warm;
		}
		free(count);
		break;
	}
	}
	ret = 0;
out:
	if (rng)
		gsl_rng_free(rng);
	free(vsel);
	free(wsel);
	free(reps);
	if (ret)
		plan_release(out);
	return ret;
}

void plan_release(struct plan *p)
{
	free(p->e);
	memset(p, 0, sizeof(*p));
}

size_t plan_add_round(struct plan *p, size_t n_variants, size_t n_workloads, uint64_t seed)
{
	size_t nv = n_variants, nw = n_workloads, before = p->n;
	int *next = xcalloc(nv * nw + 1, sizeof(int));	/* repetition + 1; 0 = unused */
	int *vorder = xcalloc(nv + 1, sizeof(int)), *worder = xcalloc(nw + 1, sizeof(int));
	int round = -1;
	size_t nvs = 0;
	gsl_rng *rng;

	int block = -1;
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->e[i];
		size_t k = (size_t)e->variant * nw + (size_t)e->workload;
		if (e->round > round)
			round = e->round;
		if (e->block > block)
			block = e->block;
		if (!e->warmup && e->repetition + 2 > next[k])
			next[k] = e->repetition + 2;
	}
	round++;
	for (size_t v = 0; v < nv; v++)
		for (size_t w = 0; w < nw; w++)
			if (next[v * nw + w]) {
				vorder[nvs++] = (int)v;
				break;
			}
	if (!nvs || !nw)	/* gsl_ran_shuffle() wants n > 0 */
		goto out;
	if (p->n + nvs * nw > PLAN_MAX_RUNS)	/* full: seqs stay ints */
		goto out;
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, (unsigned long)(seed + (uint64_t)round));
	gsl_ran_shuffle(rng, vorder, nvs, sizeof(int));
	for (size_t i = 0; i < nvs; i++) {
		shuffled_positions(rng, worder, nw);
		for (size_t j = 0; j < nw; j++) {
			int r = next[(size_t)vorder[i] * nw + (size_t)worder[j]];
			if (r)
				push_block(p, vorder[i], worder[j], r - 1, 0, round, block + 1);
		}
	}
	gsl_rng_free(rng);
out:
	free(next);
	free(vorder);
	free(worder);
	return p->n - before;
}

int plan_duet_slot(const struct plan_entry *e)
{
	return e->repetition & 1;
}

uint64_t plan_draw_seed(void)
{
	uint64_t s = 0;
	while (!s) {
		if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s))
			s = (uint64_t)now_mono_ns() ^ ((uint64_t)getpid() << 32);
	}
	/* Keep drawn seeds below 2^53 so that JSON readers see them exactly. */
	s &= (1ULL << 53) - 1;
	return s ? s : 1;
}
