/* pick.c - the stored run a read command shows or judges; see pick.h */
#include "pick.h"
#include "commands.h"
#include "engine/study.h"
#include "lib/util.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* No run of the experiment: exit 2, naming the runs there are. */
static int no_run_of(const struct pick *p, const struct run_summary *r,
		     size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n && i < 10; i++)
		strbuf_addf(&sb, "%srun %" PRId64 " (experiment '%s', sha256 %.12s)", i ? ", " : "",
			    r[n - 1 - i].id, r[n - 1 - i].name ? r[n - 1 - i].name : "?",
			    r[n - 1 - i].sha256 ? r[n - 1 - i].sha256 : "?");
	if (n > 10)
		strbuf_addf(&sb, " and %zu more", n - 10);
	error("no run of '%s' (sha256 %.12s, its text as it is now) in results database '%s'%s%s"
	      "; run it with 'perturb run %s', or name a run with --run (a file edited since "
	      "its run has another hash)", p->file, p->sha256, p->db,
	      n ? ": it holds " : ": it holds no run", sb.buf ? sb.buf : "", p->file);
	strbuf_release(&sb);
	return EXIT_USAGE;
}

int pick_run(struct store *st, struct pick *p)
{
	struct run_summary *runs = NULL;
	const struct run_summary *r = NULL;
	size_t n = 0;
	int usage = 0, ret = EXIT_RUNTIME;

	p->id = 0;
	if (p->spec || !p->sha256) {
		if (store_resolve_run(st, p->spec, &p->id, &usage) < 0)
			return usage ? EXIT_USAGE : EXIT_RUNTIME;
	}
	if (store_list_runs_brief(st, &runs, &n) < 0)
		return EXIT_RUNTIME;
	for (size_t i = n; i-- > 0 && !r;)
		if (p->id ? runs[i].id == p->id :
		    runs[i].sha256 && !strcmp(runs[i].sha256, p->sha256))
			r = &runs[i];
	if (!r) {
		ret = p->id ? EXIT_RUNTIME : no_run_of(p, runs, n);
		if (p->id)
			error("run %" PRId64 " vanished from results database '%s'", p->id,
			      p->db);
		goto out;
	}
	p->id = r->id;
	/* the counts read every plan entry and result: only for those who
	 * judge completeness (at 10^6 runs, 5 % of `perturb report`) */
	if (p->refuse_incomplete && store_run_counts(st, r->id, &p->done, &p->total) < 0)
		goto out;
	p->status = xstrdup(r->status ? study_listed_status(st, p->db, r->id, r->status) : "?");
	p->incomplete = strcmp(p->status, "completed") || p->done < p->total;
	ret = 0;
	if (p->incomplete && p->refuse_incomplete && !p->allow_incomplete) {
		char *note = pick_incomplete_note(p);
		error("%s; resume it (perturb run --resume) or judge it anyway with "
		      "--allow-incomplete", note);
		free(note);
		ret = EXIT_USAGE;
	}
out:
	run_summaries_release(runs, n);
	return ret;
}

char *pick_incomplete_note(const struct pick *p)
{
	if (!p->incomplete)
		return NULL;
	if (!strcmp(p->status, "completed"))	/* a task of a study split in shards */
		return xasprintf("run %" PRId64 " is incomplete: %" PRId64 " of %" PRId64
				 " runs of its plan are stored, %" PRId64 " missing (a shard's "
				 "database holds its shard only: 'perturb merge' gathers them)",
				 p->id, p->done, p->total, p->total - p->done);
	return xasprintf("run %" PRId64 " is incomplete (%s): %" PRId64 " of %" PRId64
			 " runs of its plan are stored, %" PRId64 " missing", p->id, p->status,
			 p->done, p->total, p->total - p->done);
}

void pick_release(struct pick *p)
{
	free(p->status);
	p->status = NULL;
}

int pick_names(const char *option, const char *what, char *const *want, size_t n_want,
	       char *const *have, size_t n_have, int glob, const char *where)
{
	for (size_t i = 0; i < n_want; i++) {
		struct strbuf sb = STRBUF_INIT;
		const char **words = xcalloc(n_have + 1, sizeof(*words));
		const char *sug;
		int hit = 0;

		for (size_t k = 0; k < n_have && !hit; k++)
			hit = !strcmp(want[i], have[k]) || (glob && !fnmatch(want[i], have[k], 0));
		if (hit) {
			free(words);
			continue;
		}
		for (size_t k = 0; k < n_have; k++) {
			words[k] = have[k];
			strbuf_addf(&sb, "%s%s", k ? ", " : "", have[k]);
		}
		sug = did_you_mean(want[i], words);
		error("%s '%s' matches no %s of %s%s%s%s (%s%s: %s)", option, want[i], what, where,
		      sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "", what,
		      n_have == 1 ? "" : "s", n_have ? sb.buf : "none");
		strbuf_release(&sb);
		free(words);
		return EXIT_USAGE;
	}
	return 0;
}

int pick_load_names(struct store *st, int64_t run_id, enum pick_kind kind, char ***names,
		    size_t *n)
{
	char **got = NULL;
	size_t n_got = 0;
	int rc = kind == PICK_METRIC ? store_metric_names(st, run_id, &got, &n_got) :
		 kind == PICK_WORKLOAD ? store_workload_names(st, run_id, &got, &n_got) :
		 store_variant_names(st, run_id, &got, &n_got);

	if (rc < 0)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < n_got; i++) {
		size_t k = 0;
		while (k < *n && strcmp((*names)[k], got[i]))
			k++;
		if (k < *n) {
			free(got[i]);
			continue;
		}
		*names = xrealloc(*names, (*n + 1) * sizeof(**names));
		(*names)[(*n)++] = got[i];
	}
	free(got);
	return 0;
}

void pick_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int pick_names_in_runs(struct store *st, const int64_t *run_ids, size_t n_runs,
		       enum pick_kind kind, const char *option, char *const *want, size_t n_want,
		       int glob, const char *where)
{
	static const char *const what[] = { "metric", "workload", "variant" };
	char **have = NULL, *run = NULL;
	size_t n = 0;
	int rc = 0;

	if (!n_want)
		return 0;
	for (size_t k = 0; k < n_runs && !rc; k++)
		rc = pick_load_names(st, run_ids[k], kind, &have, &n);
	if (!rc) {
		if (!where)
			where = run = xasprintf("run %" PRId64, n_runs ? run_ids[0] : 0);
		rc = pick_names(option, what[kind], want, n_want, have, n, glob, where);
	}
	pick_names_free(have, n);
	free(run);
	return rc;
}

int pick_names_in(struct store *st, int64_t run_id, enum pick_kind kind, const char *option,
		  char *const *want, size_t n_want, int glob)
{
	return pick_names_in_runs(st, &run_id, 1, kind, option, want, n_want, glob, NULL);
}
