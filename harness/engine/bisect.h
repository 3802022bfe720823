/*
 * bisect.h - `perturb bisect`: git bisect driven by a study (docs/history.md).
 *
 * In the repository at repo, between a good and a bad commit: `git bisect
 * start BAD GOOD`, then at each commit git checks out, the build command
 * runs (sh -c, in repo; a failed build is `git bisect skip`), the study
 * runs with the commit as its label and its revision (study.h: label,
 * revision), and judge() decides from the stored run: good, bad, or
 * undecided.  Undecided adds an interleaved round to the same stored run
 * (study.h: more) until judge() decides or max_rounds rounds were added;
 * still undecided is `git bisect skip`, never a guess.  The good and bad
 * commits are measured first: a good one that judges bad (or a bad one
 * good) stops the bisect, saying so.
 *
 * The state is the database: a completed run of the study whose commit
 * and label are a commit's id is that commit's measurement, judged again
 * rather than run again, so an interrupted bisect started again with the
 * same options resumes where it stopped.
 *
 * git bisect reset runs on every exit path (an error, a stop, the end), so
 * that the repository is left on the branch or commit it was on; bisect
 * refuses to start in a repository with uncommitted changes to tracked
 * files or with a bisect under way.
 */
#ifndef PERTURB_ENGINE_BISECT_H
#define PERTURB_ENGINE_BISECT_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "store.h"

enum bisect_verdict { BISECT_UNDECIDED, BISECT_GOOD, BISECT_BAD };

/* The verdict on a stored run (perturb bisect: the gate's): 0, or -1
 * (printed). */
typedef int bisect_judge_fn(struct store *st, int64_t run_id, enum bisect_verdict *v,
			    void *arg);

struct bisect_opts {
	const char *repo, *good, *bad;	/* a git work tree; two commits */
	const char *build;		/* a shell command run in repo at each commit */
	const char *file, *db;		/* the study; the results database */
	const struct plan_filter *filter;	/* NULL: the whole study */
	int max_rounds;			/* rounds added to an undecided commit [3] */
	bisect_judge_fn *judge;
	void *judge_arg;
};

/* One commit measured (or found measured). */
struct bisect_step {
	char *commit;		/* full id */
	char *describe;		/* git describe --always */
	int64_t run_id;		/* 0: none (its build failed) */
	int rounds;		/* rounds added to its run */
	int reused;		/* its run was in the database already */
	int build_failed;
	enum bisect_verdict v;
};

struct bisect_result {
	int found;		/* 1: first_bad is the first bad commit */
	char *first_bad;	/* found: its id */
	char *last_good;	/* found: the good commit to compare it with: its
				   parent when measured good, else the good
				   commit measured last (NULL: none) */
	char **candidates;	/* not found: git's "could be any of" (NULL-terminated) */
	size_t n_candidates;
	const char *why;	/* not found: why (static) */
	struct bisect_step *steps;	/* in the order measured */
	size_t n_steps;
	int64_t runs;		/* measured runs (results) the bisect's own
				   study runs stored; reused runs not counted */
	int max_rounds;		/* the options': a commit is judged at most
				   max_rounds + 1 times */
};

/* 0: the bisect ended (found, or undecided: r says), 1: refused (bad input,
 * printed; nothing run), -1: failed or stopped (printed).  r is released
 * with bisect_release() either way. */
int bisect_run(const struct bisect_opts *o, struct bisect_result *r);
void bisect_release(struct bisect_result *r);
/* The step of commit id, or NULL. */
const struct bisect_step *bisect_step_of(const struct bisect_result *r, const char *id);

#endif
