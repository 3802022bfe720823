/*
 * study.c - the executor (see study.h).
 *
 * experiment -> checks (variants, requires) -> plan -> database -> workload
 * setup -> walk the plan (study_walk.c): switch variants through their
 * backend, prepare, run, store each result in its own transaction as soon
 * as it exists.  struct study (study_int.h) holds what the phases share;
 * each phase returns 0 or -1.
 */
#include "study_int.h"
#include "config.h"
#include "shard.h"
#include "backends/backend.h"
#include "backends/journal.h"
#include "core/cgroup.h"
#include "core/packages.h"
#include "core/proc.h"
#include "counters/counters.h"
#include "lib/machine.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Decide once which counters this machine can count: one warning line
 * naming those it cannot (short reasons), and one "unavailable" row each,
 * with the whole reason, for the report.  The study runs either way.
 */
static int report_unavailable(struct store *st, int64_t run_id,
			      const struct counter_set *cs)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = counters_count(cs);
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		if (counters_available(cs, i))
			continue;
		strbuf_addf(&sb, "%s%s (%s)", sb.len ? ", " : "", counters_name(cs, i),
			    counters_short_reason(cs, i));
		if (store_put_unavailable(st, run_id, counters_name(cs, i),
					  counters_reason(cs, i)) < 0)
			ret = -1;
	}
	if (sb.len)
		warning("counters unavailable here: %s", sb.buf);
	if (n && !counters_n_available(cs))
		warning("none of the counters asked for can be counted here; "
			"the runs record times and metrics only");
	strbuf_release(&sb);
	return ret;
}

static void print_plan(const struct experiment *exp, const struct plan *p,
		       uint64_t seed, const unsigned char *done, const int duet_cpus[2])
{
	size_t left = 0;
	for (size_t i = 0; i < p->n; i++)
		left += !(done && done[i]);
	printf("# plan of '%s': %zu runs (%zu to do), order %s, seed %llu\n",
	       exp->name, p->n, left, order_name(exp->order), (unsigned long long)seed);
	printf("%5s  %-6s  %-6s  %-20s  %-20s  %s\n", "seq", "round", "block", "variant",
	       "workload", "run");
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_entry *e = &p->e[i];
		char round[16] = "-";
		if (e->round >= 0)
			snprintf(round, sizeof(round), "%d", e->round);
		char cpu[32] = "";
		/* duet: entries 2k (the baseline) and 2k + 1 are a pair (plan.h) */
		if (exp->order == ORDER_DUET && (i | 1) < p->n)
			snprintf(cpu, sizeof(cpu), "  cpu %d",
				 duet_cpus[plan_duet_slot(&p->e[i | 1]) ^ (int)(i & 1)]);
		printf("%5d  %-6s  %-6d  %-20s  %-20s  %s%d%s%s\n", e->seq, round, e->block,
		       exp->variants[e->variant].name, exp->workloads[e->workload].name,
		       e->warmup ? "warmup " : "", e->repetition + 1, cpu,
		       done && done[i] ? "  (done)" : "");
	}
}

/* Is w needed by the (filtered) plan? */
static int plan_uses_workload(const struct plan *p, const unsigned char *done, int w)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].workload == w && !(done && done[i]))
			return 1;
	return 0;
}

static int plan_uses_variant(const struct plan *p, int v)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].variant == v)
			return 1;
	return 0;
}

/* Remove the entries of skipped variants/workloads, renumbering seq. */
static void plan_drop(struct plan *p, const unsigned char *skip_v, const unsigned char *skip_w)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (skip_v[p->e[i].variant] || skip_w[p->e[i].workload])
			continue;
		p->e[k] = p->e[i];
		p->e[k].seq = (int)k;
		k++;
	}
	p->n = k;
}

/*
 * --self-check: the baseline twice more, BASELINE~aa as it is (an A/A pair:
 * the noise and bookkeeping floor) and BASELINE~nocounters without the
 * experiment's counters (its dilation is minus the cost of counting).  The
 * two are shallow copies of the baseline appended to exp->variants (their
 * names their own): drop them with self_check_release() before
 * experiment_release().  With --only-variant they are added to the filter.
 * Returns the index of the no-counters variant, or -1 (printed) when a
 * variant of the experiment has one of the names.
 */
static int self_check_add(struct experiment *exp, struct plan_filter *f)
{
	int b = experiment_find_variant(exp, exp->baseline);
	const char *suffix[] = { STUDY_SELF_CHECK_AA, STUDY_SELF_CHECK_NOCOUNTERS };

	if (b < 0)
		return error("%s: no baseline variant '%s'", exp->path, exp->baseline);
	for (size_t i = 0; i < ARRAY_SIZE(suffix); i++) {
		char *name = xasprintf("%s%s", exp->baseline, suffix[i]);
		if (experiment_find_variant(exp, name) >= 0) {
			error("%s: --self-check adds a variant '%s', and the experiment "
			      "has one of that name already", exp->path, name);
			free(name);
			return -1;
		}
		exp->variants = xrealloc(exp->variants, (exp->n_variants + 1) * sizeof(*exp->variants));
		exp->variants[exp->n_variants] = exp->variants[b];
		exp->variants[exp->n_variants].name = name;
		exp->n_variants++;
		if (f->n_variants) {
			f->variants = xrealloc(f->variants, (f->n_variants + 1) * sizeof(char *));
			f->variants[f->n_variants++] = name;
		}
	}
	return (int)exp->n_variants - 1;
}

static void self_check_release(struct experiment *exp, size_t n_real)
{
	while (exp->n_variants > n_real)
		free(exp->variants[--exp->n_variants].name);
}

/* Does the stored run have --self-check's variants? */
static int stored_self_check(struct store *st, int64_t run_id, const char *baseline)
{
	char **names = NULL, *aa = xasprintf("%s%s", baseline, STUDY_SELF_CHECK_AA);
	size_t n = 0;
	int found = 0;

	if (store_variant_names(st, run_id, &names, &n) < 0)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		found |= !strcmp(names[i], aa);
		free(names[i]);
	}
	free(names);
	free(aa);
	return found;
}

#define ERRLEN 1024

/*
 * One perturb at a time per stored run: while run N is executed its
 * process holds a write lock on byte 2N of DB.lock (the database's file
 * with ".lock" added: the name its symbolic links end in, its folder
 * canonical, so that every name of the database meets the same lock, as
 * SQLite's -wal beside it does), and a resumer holds byte 2N+1 too, so that a
 * refusal can say which it is.  fcntl(2) record locks: the kernel drops
 * them when the process ends however it ends, and F_GETLK names the
 * holder's pid.  The file is opened once and kept open until the study
 * ends (closing any descriptor of it would drop the locks).  A hard link
 * is another name of the same file in a folder of its own: so byte 2N of
 * the database file itself is locked too, with an open file description
 * lock (F_OFD_SETLK: far below SQLite's lock bytes at 1 GiB, and never
 * dropped by SQLite closing its descriptors); its descriptor is closed
 * only after the database (study_release), as closing one would drop
 * SQLite's own locks of this process.  0, or -1 (printed): "run N is being
 * resumed by pid P" (docs/perturb.1, EXIT STATUS 3) or an error of the
 * lock file.
 */
/* run_lock()'s lock of byte 2N of the database file (every name of it,
 * hard links included).  0, or -1 (printed). */
static int db_file_lock(struct study *s, int64_t run_id)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2 * run_id,
			    .l_len = 1 };

	if (s->db_lock_fd < 0 && (s->db_lock_fd = open(s->o->db, O_RDWR | O_CLOEXEC)) < 0)
		return error("cannot lock run %lld in '%s': %s", (long long)run_id, s->o->db,
			     strerror(errno));
	if (fcntl(s->db_lock_fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno != EACCES && errno != EAGAIN)
		return error("cannot lock run %lld in '%s': %s", (long long)run_id, s->o->db,
			     strerror(errno));
	return error("run %lld is being run or resumed by another perturb, through another "
		     "name of '%s' (a hard link); wait for it to end", (long long)run_id,
		     s->o->db);
}

static int run_lock(struct study *s, int64_t run_id, int resuming)
{
	char *db = path_canonical(s->o->db), *path = xasprintf("%s.lock", db);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2 * run_id,
			    .l_len = resuming ? 2 : 1 };
	int ret = -1;

	if (s->lock_fd < 0 &&
	    (s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0) {
		error("cannot open the lock file '%s': %s", path, strerror(errno));
		goto out;
	}
	if (fcntl(s->lock_fd, F_SETLK, &fl) == 0) {
		ret = db_file_lock(s, run_id);
		goto out;
	}
	if (errno != EACCES && errno != EAGAIN) {
		error("cannot lock run %lld in '%s': %s", (long long)run_id, path, strerror(errno));
		goto out;
	}
	{
		struct flock held = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				      .l_start = 2 * run_id, .l_len = 1 };
		struct flock res = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				     .l_start = 2 * run_id + 1, .l_len = 1 };
		if (fcntl(s->lock_fd, F_GETLK, &held) < 0)
			held.l_type = F_UNLCK;
		if (fcntl(s->lock_fd, F_GETLK, &res) < 0)
			res.l_type = F_UNLCK;
		error("run %lld is being %s by pid %d; wait for it to end (or stop it: it "
		      "keeps what it finished, and '--resume' completes the rest)",
		      (long long)run_id, res.l_type != F_UNLCK ? "resumed" : "run",
		      held.l_type != F_UNLCK ? (int)held.l_pid : (int)res.l_pid);
	}
out:
	free(path);
	free(db);
	return ret;
}

/*
 * Is run_id's lock (run_lock(): byte 2N of the database file, an OFD lock)
 * held by a process?  The test opens the file read-only and keeps the
 * descriptor for the life of the process: closing a descriptor of the
 * database would drop SQLite's own (POSIX) locks of this process on it.
 */
int study_run_held(const char *db, int64_t run_id)
{
	static char *path;
	static int fd = -1;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2 * run_id,
			    .l_len = 1 };

	if (!path || strcmp(path, db)) {
		int nfd = open(db, O_RDONLY | O_CLOEXEC);
		if (nfd < 0)
			return -1;
		fd = nfd;	/* the previous one stays open (see above) */
		free(path);
		path = xstrdup(db);
	}
	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return -1;
	return fl.l_type != F_UNLCK;
}

const char *study_listed_status(struct store *st, const char *db, int64_t run_id,
				const char *stored)
{
	struct store_shard *sh = NULL;
	size_t n = 0;

	if (!stored || strcmp(stored, "running") || study_run_held(db, run_id) != 0)
		return stored;
	/* a study split in shards runs in its tasks' databases, not here */
	if (store_load_shards(st, run_id, &sh, &n) < 0 || n) {
		store_shards_free(sh, n);
		return stored;
	}
	return "interrupted";
}

/* A task (o->shard >= 0): every entry outside its shard counts as done. */
static int shard_only(struct study *s)
{
	const struct study_opts *o = s->o;
	const struct store_shard *row;

	if (!o->n_shards || o->shard < 0)
		return 0;
	if (o->shard >= o->n_shards)
		return error("--shard %d/%d: no such shard", o->shard, o->n_shards);
	row = &s->shards[o->shard];
	if (!s->done)
		s->done = xcalloc(s->plan.n ? s->plan.n : 1, 1);
	for (size_t i = 0; i < s->plan.n; i++)
		if ((int)i < row->seq_lo || (int)i >= row->seq_hi)
			s->done[i] = 1;
	return 0;
}

/* A resumed run's shards: a task resumes its own shard (its database holds
 * the whole plan), the main database of a split study is resumed through
 * perturb run --slurm --resume. */
static int load_shards(struct study *s, enum study_result *res)
{
	const struct study_opts *o = s->o;
	size_t n;

	*res = STUDY_FAILED;
	if (store_load_shards(s->st, s->run_id, &s->shards, &n) < 0)
		return -1;
	*res = STUDY_REFUSED;
	if (!n && !o->n_shards)
		return 0;
	if (!n || o->shard < 0 || (int)n != o->n_shards || s->shards[0].n_shards != o->n_shards)
		return error("--resume: run %lld in '%s' is %s; %s", (long long)s->run_id, o->db,
			     n ? "split into shards" : "not split into shards",
			     n ? "'perturb run --slurm --resume' resubmits its missing shards"
			       : "resume it without --shard");
	return shard_only(s);
}

/* The experiment and its plan: built, or loaded to be resumed.  -1 with
 * *res set: STUDY_REFUSED, or STUDY_FAILED for a database error. */
static int load(struct study *s, enum study_result *res)
{
	const struct study_opts *o = s->o;
	struct experiment *exp = &s->exp;
	char err[ERRLEN];

	*res = STUDY_REFUSED;
	if (config_load(o->file, exp, err, sizeof(err)) < 0)
		return error("%s", err);
	s->n_real_variants = exp->n_variants;
	s->skip_v = xcalloc(exp->n_variants + 2, 1);	/* + --self-check's */
	s->skip_w = xcalloc(exp->n_workloads, 1);
	if (o->n_shards && o->shard >= 0 && !o->resume && access(o->db, F_OK) == 0) {
		/* a task started again: it finishes its last attempt's run */
		char sha[65];

		sha256_hex(exp->text, exp->text_len, sha);
		if (store_open(o->db, 0, &s->st) < 0 ||
		    store_find_resumable(s->st, sha, &s->run_id) < 0) {
			*res = STUDY_FAILED;
			return -1;
		}
	}
	if (o->resume || s->run_id) {
		s->resuming = 1;
		struct run_header h = { 0 };
		char sha[65];

		sha256_hex(exp->text, exp->text_len, sha);
		if (!s->st && access(o->db, F_OK) < 0)
			return error("--resume: no results database at '%s'", o->db);
		if (!s->st && store_open(o->db, STORE_WRITE, &s->st) < 0)
			return -1;
		*res = STUDY_FAILED;
		if (store_find_resumable(s->st, sha, &s->run_id) < 0)
			return -1;
		*res = STUDY_REFUSED;
		if (!s->run_id)
			return error("--resume: '%s' holds no unfinished run of this version of '%s'",
				     o->db, exp->path);
		/* a dry run writes nothing, not even the lock file */
		*res = STUDY_FAILED;
		if (!o->dry_run && run_lock(s, s->run_id, 1) < 0)
			return -1;
		*res = STUDY_REFUSED;
		if (stored_self_check(s->st, s->run_id, exp->baseline) &&
		    (s->nocounters = self_check_add(exp, &s->filter)) < 0)
			return -1;
		*res = STUDY_FAILED;
		if (store_load_plan(s->st, s->run_id, &s->plan, &s->done) < 0 ||
		    store_run_header(s->st, s->run_id, &h) < 0)
			return -1;
		s->seed = h.seed;
		run_header_release(&h);
		return load_shards(s, res);
	}
	s->seed = o->has_seed ? o->seed : exp->has_seed ? exp->seed : plan_draw_seed();
	if (o->self_check && (s->nocounters = self_check_add(exp, &s->filter)) < 0)
		return -1;
	if (o->n_shards) {
		if (shard_plan_build(exp, &s->filter, s->seed, o->n_shards, &s->plan,
				     &s->shards, err, sizeof(err)) < 0)
			return error("%s", err);
		return shard_only(s);
	}
	if (plan_build(exp, &s->filter, s->seed, &s->plan, err, sizeof(err)) < 0)
		return error("%s", err);
	return 0;
}

/*
 * Every selected variant through its backend's check(), every used
 * workload's requires: (and perturb-micro for {micro}): what this machine
 * cannot run is an error, or skipped with skip_unavailable (never the
 * baseline).  -1 when something is missing (said).
 */
static int check_available(struct study *s)
{
	const struct experiment *exp = &s->exp;
	const struct study_opts *o = s->o;
	int unavailable = 0;

	for (size_t v = 0; v < exp->n_variants; v++) {
		const struct variant *var = &exp->variants[v];
		struct pos at = var->cfg_pos;
		char why[512];

		if (!plan_uses_variant(&s->plan, (int)v) || !var->be->check ||
		    var->be->check(var, &at, why, sizeof(why)) == 0)
			continue;
		if (!strcmp(var->name, exp->baseline) || !o->skip_unavailable) {
			error("%s:%d:%d: %s", at.file, at.line, at.col, why);
			unavailable = 1;
		} else {
			warning("%s:%d:%d: %s; skipped", at.file, at.line, at.col, why);
			s->skip_v[v] = 1;
		}
	}
	for (size_t w = 0; w < exp->n_workloads; w++) {
		const struct workload *wl = &exp->workloads[w];
		if (!plan_uses_workload(&s->plan, o->target_ci || o->more ? NULL : s->done, (int)w))
			continue;
		for (size_t r = 0; r <= wl->n_requires; r++) {
			char why[512];
			/* every requires: entry, then perturb-micro for {micro} */
			if (r < wl->n_requires ? requirement_met(wl->requires[r], why, sizeof(why))
					       : micro_available(wl, why, sizeof(why)))
				continue;
			if (o->skip_unavailable) {
				warning("%s:%d:%d: workload '%s' requires %s; skipped",
					wl->pos.file, wl->pos.line, wl->pos.col, wl->name, why);
				s->skip_w[w] = 1;
			} else {
				error("%s:%d:%d: workload '%s' requires %s",
				      wl->pos.file, wl->pos.line, wl->pos.col, wl->name, why);
				unavailable = 1;
			}
		}
	}
	if (unavailable) {
		if (!o->skip_unavailable)
			note("nothing was run; --skip-unavailable runs what this machine can");
		return -1;
	}
	return 0;
}

/* The shard rows: a submission's (each shard's database beside o->db),
 * or a task's (its own row: this task's Slurm job and node). */
static int put_shards(struct study *s)
{
	const struct study_opts *o = s->o;
	char sha[65];

	shard_plan_hash(&s->plan, sha);
	for (int k = 0; k < o->n_shards; k++) {
		free(s->shards[k].plan_sha);
		s->shards[k].plan_sha = xstrdup(sha);
	}

	if (o->shard >= 0) {
		struct store_shard *row = &s->shards[o->shard];
		free(row->db);
		row->db = xstrdup(o->db);
		shard_set_provenance(row);
		note("shard %d/%d on node %s%s%s", o->shard, o->n_shards, row->node,
		     row->job ? ", Slurm task " : "", row->job ? row->job : "");
		/* a new run stores every row (the plan's split); a resumed
		 * one updates its own */
		if (s->resuming)
			return store_put_shards(s->st, s->run_id, row, 1);
		return store_put_shards(s->st, s->run_id, s->shards, (size_t)o->n_shards);
	}
	for (int k = 0; k < o->n_shards; k++) {
		free(s->shards[k].db);
		s->shards[k].db = shard_db_path(o->db, s->run_id, k);
	}
	return store_put_shards(s->st, s->run_id, s->shards, (size_t)o->n_shards);
}

/* The run in the database, its folders, the workloads' setup, the
 * variants' contexts: everything before the first run.  -1 (printed);
 * s->run_id is set once the run is stored. */
/* The revision the run measured (o->revision, else the experiment's
 * revision: key): probed once, before anything runs. */
static int probe_revision(struct study *s)
{
	const char *dir = s->o->revision ? s->o->revision : s->exp.revision;

	if (!dir)
		return 0;
	if (revision_probe(dir, &s->rev) < 0)
		return -1;
	note("revision %s (%s) of %s", s->rev.describe, s->rev.commit, s->rev.repo);
	return 0;
}

static int begin(struct study *s)
{
	const struct study_opts *o = s->o;
	const struct experiment *exp = &s->exp;
	size_t todo = 0;
	int e;

	stop_install_signals();
	/* long preparations (kernels to build) happen before the study; the
	 * load average they leave is perturb's own, so after
	 * STUDY_BUILD_LOAD_S of them the run stores the one from before (the
	 * report warns of a load "when the run started" as other work's) */
	char *load_before = machine_loadavg();
	double t0 = now_mono();
	for (size_t v = 0; v < exp->n_variants; v++) {
		const struct variant *var = &exp->variants[v];
		if (!s->skip_v[v] && var->be->build && plan_uses_variant(&s->plan, (int)v) &&
		    var->be->build(var) < 0) {
			free(load_before);
			return -1;
		}
	}
	machine_probe(&s->mi);
	if (load_before && now_mono() - t0 >= STUDY_BUILD_LOAD_S) {
		free(s->mi.loadavg);
		s->mi.loadavg = load_before;
		load_before = NULL;
	}
	free(load_before);
	s->began = 1;
	/* every process of the study goes into perturb's cgroup, journaled
	 * when it is made (main.c: cgroup_journal_with()), so that a killed
	 * perturb's are stopped by the next one */
	cgroup_base();
	/* the runs' cgroups, made before the timed loop (a duet runs two at once) */
	cgroup_prepare(2);
	s->mi.containment = xstrdup(proc_containment(NULL, 0));
	if (exp->n_counters && counters_open(exp->counters, exp->n_counters, &s->counters) < 0)
		return -1;
	if (!s->st && store_open(o->db, STORE_CREATE, &s->st) < 0)
		return -1;
	if (s->resuming) {
		if (store_set_status(s->st, s->run_id, "running") < 0)
			return -1;
		note("resuming run %lld of '%s'", (long long)s->run_id, exp->name);
	} else if (store_begin_run(s->st, exp, &s->plan, s->seed, o->cmdline, &s->mi,
				   &(struct run_tags){ .label = o->label, .repo = s->rev.repo,
						       .revision = s->rev.describe,
						       .commit = s->rev.commit },
				   &s->run_id) < 0) {
		return -1;
	} else if (run_lock(s, s->run_id, 0) < 0) {
		s->run_id = 0;	/* a resumer took it first: its status is the resumer's */
		return -1;
	}
	if (s->shards && put_shards(s) < 0)
		return -1;
	if (o->submit)
		return 0;
	for (size_t i = 0; i < s->plan.n; i++)
		todo += !(s->done && s->done[i]);
	note("run %lld of '%s': %zu runs to do (order %s, seed %llu, containment %s), "
	     "results in %s", (long long)s->run_id, exp->name, todo, order_name(exp->order),
	     (unsigned long long)s->seed, s->mi.containment, o->db);
	if (s->counters && report_unavailable(s->st, s->run_id, s->counters) < 0)
		return -1;
	s->dbdir = dir_name(o->db);
	if (o->n_shards && o->shard >= 0) {
		/* tasks share the folder: each has its own work and logs */
		s->workroot = xasprintf("%s/work-%d", s->dbdir, o->shard);
		s->logdir = xasprintf("%s/logs/shard-%d/run-%lld", s->dbdir, o->shard,
				      (long long)s->run_id);
	} else {
		s->workroot = xasprintf("%s/work", s->dbdir);
		s->logdir = xasprintf("%s/logs/run-%lld", s->dbdir, (long long)s->run_id);
	}
	if ((e = mkdir_p(s->logdir, 0755)) < 0)
		return error("cannot create '%s': %s", s->logdir, strerror(-e));
	s->base_env = env_build(&(struct variant){ 0 });
	s->workdirs = xcalloc(exp->n_workloads, sizeof(char *));
	for (size_t w = 0; w < exp->n_workloads; w++) {
		const struct workload *wl = &exp->workloads[w];
		char *rel, *what;
		int r;

		if (s->skip_w[w] ||
		    !plan_uses_workload(&s->plan, o->target_ci || o->more ? NULL : s->done, (int)w))
			continue;
		if (wl->dir) {
			rel = xstrdup(wl->dir);
		} else {	/* the name as one component: it may hold '/' */
			char *c = path_component(wl->name);
			rel = xasprintf("%s/%s", s->workroot, c);
			free(c);
		}
		if (!wl->dir && (e = mkdir_p(rel, 0755)) < 0) {
			error("cannot create '%s': %s", rel, strerror(-e));
			free(rel);
			return -1;
		}
		s->workdirs[w] = realpath(rel, NULL);
		free(rel);
		if (!s->workdirs[w])
			return error("cannot resolve work folder of '%s': %s", wl->name,
				     strerror(errno));
		what = xasprintf("workload '%s' setup", wl->name);
		r = study_run_commands(wl->setup, wl->n_setup, s->base_env, s->workdirs[w],
				       workload_timeout(exp, wl), what, exp->verbatim);
		free(what);
		if (r < 0)
			return -1;
	}
	s->ctx = xcalloc(exp->n_variants, sizeof(*s->ctx));
	for (size_t v = 0; v < exp->n_variants; v++) {
		const struct backend *be = exp->variants[v].be;
		s->ctx[v].exp = exp;
		s->ctx[v].variant = &exp->variants[v];
		s->ctx[v].envp = env_build(&exp->variants[v]);
		s->ctx[v].logdir = s->logdir;
		s->ctx[v].cwd = s->workroot;
		if (be->priv_size)
			s->ctx[v].priv = xcalloc(1, be->priv_size);
	}
	return 0;
}

/* Lines of a failed run's output check_failed_pairs() shows. */
#define STUDY_TAIL_LINES 5

/* The first failed run of one (variant, workload), for check_failed_pairs(). */
struct first_failure {
	const char *variant, *workload;
	int found;
};

static int print_first_failure(const struct stored_failure *f, void *ctx)
{
	struct first_failure *ff = ctx;
	char *tail;

	if (strcmp(f->variant, ff->variant) || strcmp(f->workload, ff->workload))
		return 0;
	ff->found = 1;
	tail = last_lines(f->output_tail, STUDY_TAIL_LINES);
	fprintf(stderr, "  the first, %s%d: %s%s%s%s\n", f->warmup ? "warm-up " : "run ",
		f->repetition + 1, f->status, f->reason && *f->reason ? ", " : "",
		f->reason ? f->reason : "", *tail ? "; its last lines of output:" : "");
	put_lines(stderr, tail, "    | ", NULL);	/* escaped, as in the report */
	free(tail);
	return 1;
}

/* A (variant, workload) pair without a single good measured run cannot be
 * reported: said, with the first failure's reason and last lines of
 * output; -1 when there is one. */
static int check_failed_pairs(struct study *s)
{
	const struct experiment *exp = &s->exp;
	size_t nv = exp->n_variants, nw = exp->n_workloads;
	int *total = xcalloc(nv * nw, sizeof(int)), *failed = xcalloc(nv * nw, sizeof(int));
	struct store_walk walk = { .total = total, .failed = failed,
				   .n_workloads = nw, .n_variants = nv };
	int failed_pairs = 0;

	if (store_walk_values(s->st, s->run_id, &walk) == 0)
		for (size_t v = 0; v < nv; v++)
			for (size_t w = 0; w < nw; w++) {
				size_t k = w * nv + v;
				if (!total[k] || failed[k] != total[k])
					continue;
				struct first_failure ff = { exp->variants[v].name,
							    exp->workloads[w].name, 0 };
				error("every run of workload '%s' under variant '%s' failed",
				      exp->workloads[w].name, exp->variants[v].name);
				if (store_each_failure(s->st, s->run_id, print_first_failure, &ff) < 0)
					break;
				failed_pairs++;
			}
	free(total);
	free(failed);
	return failed_pairs ? -1 : 0;
}

static void study_release(struct study *s)
{
	if (s->ctx) {
		for (size_t v = 0; v < s->exp.n_variants; v++) {
			const struct backend *be = s->exp.variants[v].be;
			if (be->done)
				be->done(&s->ctx[v]);
			argv_free(s->ctx[v].envp);
			if (be->priv_size)
				free(s->ctx[v].priv);
		}
		free(s->ctx);
	}
	if (s->workdirs) {
		for (size_t w = 0; w < s->exp.n_workloads; w++)
			free(s->workdirs[w]);
		free(s->workdirs);
	}
	argv_free(s->base_env);
	counters_close(s->counters);
	proc_call_at(0, NULL, NULL);	/* no flush of a closed store */
	if (s->st)
		store_close(s->st);
	if (s->began) {	/* nothing of the study is left running */
		cgroup_base_remove();	/* and its journal record */
	}
	if (s->lock_fd >= 0)
		close(s->lock_fd);	/* the run's lock goes with it */
	if (s->db_lock_fd >= 0)	/* after store_close(): see run_lock() */
		close(s->db_lock_fd);
	machine_release(&s->mi);
	revision_release(&s->rev);
	plan_release(&s->plan);
	self_check_release(&s->exp, s->n_real_variants);
	experiment_release(&s->exp);
	free(s->filter.variants);
	free(s->filter.workloads);
	free(s->done);
	store_shards_free(s->shards, s->shards ? (size_t)s->shards[0].n_shards : 0);
	free(s->skip_v);
	free(s->skip_w);
	free(s->dbdir);
	free(s->workroot);
	free(s->logdir);
}

/* The command that resumes this study, as it can be pasted: the file and
 * the database the run used, quoted for the shell where needed. */
static char *resume_hint(const struct study_opts *o)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "perturb run ");
	strbuf_add_shell_word(&sb, o->file);
	if (o->n_shards && o->shard >= 0) {
		/* a task: its shard is submitted again from the main database */
		strbuf_addstr(&sb, " --slurm --resume' (with the main database) or 'perturb run ");
		strbuf_add_shell_word(&sb, o->file);
		strbuf_addf(&sb, " --shard %d/%d", o->shard, o->n_shards);
	}
	strbuf_addstr(&sb, " --db ");
	strbuf_add_shell_word(&sb, o->db);
	if (!o->n_shards || o->shard < 0)
		strbuf_addstr(&sb, " --resume");
	return strbuf_detach(&sb);
}

enum study_result study_run(const struct study_opts *o)
{
	struct study s = {
		.o = o, .nocounters = -1, .n_real_variants = SIZE_MAX, .lock_fd = -1,
		.db_lock_fd = -1,
		.active = -1, .active_block = -1, .entry_seq = -1, .t0 = now_mono(),
	};
	enum study_result ret = STUDY_REFUSED;

	if (o->filter) {
		s.filter = *o->filter;
		s.filter.variants = xcalloc(o->filter->n_variants + 1, sizeof(char *));
		if (o->filter->n_variants)	/* variants may be NULL when there are none */
			memcpy(s.filter.variants, o->filter->variants,
			       o->filter->n_variants * sizeof(char *));
		s.filter.workloads = xcalloc(o->filter->n_workloads + 1, sizeof(char *));
		if (o->filter->n_workloads)
			memcpy(s.filter.workloads, o->filter->workloads,
			       o->filter->n_workloads * sizeof(char *));
	}
	if (o->target_ci && !o->widest) {
		error("target_ci needs a way to compute intervals (no widest())");
		goto out;
	}
	if (o->n_shards && (o->skip_unavailable || o->target_ci)) {
		error("a study in shards takes no %s: every shard runs the same design",
		      o->skip_unavailable ? "--skip-unavailable" : "--target-ci");
		goto out;
	}
	/* Every check that can fail happens before anything is written. */
	backend_dry_run = o->dry_run;
	if (load(&s, &ret) < 0 || check_available(&s) < 0)
		goto out;
	if (s.exp.order == ORDER_DUET) {
		char why[512];
		if (o->target_ci || o->more) {
			error("%s: order: duet takes no --target-ci and no bisect rounds (they add "
			      "interleaved rounds)", s.exp.path);
			goto out;
		}
		if (study_duet_cpus(&s.exp, s.duet_cpus, why, sizeof(why)) < 0) {
			error("%s: %s", s.exp.path, why);
			goto out;
		}
	}
	if (s.resuming || (s.shards && s.done)) {
		/* Skipped parts of a resumed plan stay missing in the database. */
		for (size_t i = 0; i < s.plan.n; i++)
			if (s.skip_v[s.plan.e[i].variant] || s.skip_w[s.plan.e[i].workload])
				s.done[i] = 1;
	} else {
		plan_drop(&s.plan, s.skip_v, s.skip_w);
	}
	if (!s.plan.n) {
		error("%s: the plan is empty: nothing to run", s.exp.path);
		goto out;
	}
	if (o->dry_run) {
		print_plan(&s.exp, &s.plan, s.seed, s.done, s.duet_cpus);
		ret = STUDY_DONE;
		goto out;
	}
	if (!s.resuming && probe_revision(&s) < 0)
		goto out;

	/* From here on, failures are runtime failures. */
	ret = STUDY_FAILED;
	if (o->submit) {
		if (begin(&s) < 0)
			goto out;
		if (o->run_id_out)
			*o->run_id_out = s.run_id;
		ret = STUDY_DONE;
		goto out;
	}
	if (begin(&s) < 0)
		goto fail_run;
	if (o->run_id_out)
		*o->run_id_out = s.run_id;
	if (study_walk(&s) < 0)
		goto fail_run;
	if (s.stopped) {
		char *hint = resume_hint(o);
		error("stopped by signal %d (%s); run %lld keeps every finished run; "
		      "'%s' completes it", s.stopped, strsignal(s.stopped), (long long)s.run_id,
		      hint);
		free(hint);
		store_end_run(s.st, s.run_id, "interrupted");
		goto out;
	}
	if (!s.walked) {	/* a run that stopped early is never completed */
		error("run %lld of '%s' ended before its plan did", (long long)s.run_id,
		      s.exp.name);
		goto fail_run;
	}
	if (store_end_run(s.st, s.run_id, "completed") < 0)
		goto out;
	note("run %lld of '%s' done: %zu runs, %zu failed, %.1f s; 'perturb report --db %s' shows it",
	     (long long)s.run_id, s.exp.name, s.n_ok + s.n_bad, s.n_bad, now_mono() - s.t0, o->db);
	ret = check_failed_pairs(&s) < 0 ? STUDY_FAILED : STUDY_DONE;
	goto out;

fail_run:
	if (!s.stopped)
		s.stopped = stop_requested();
	study_leave_active(&s, NULL);
	if (s.st && s.run_id) {
		if (s.stopped) {
			char *hint = resume_hint(o);
			error("stopped by signal %d (%s); '%s' completes run %lld",
			      s.stopped, strsignal(s.stopped), hint, (long long)s.run_id);
			free(hint);
			store_end_run(s.st, s.run_id, "interrupted");
		} else {
			store_end_run(s.st, s.run_id, "failed");
		}
	}
	ret = STUDY_FAILED;
out:
	study_release(&s);
	return ret;
}
