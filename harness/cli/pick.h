/*
 * pick.h - the stored run a read command shows or judges (report, compare,
 * gate): one place that resolves a run spec and says why a run is not
 * the one asked for.
 *
 *  - spec (--run, or compare's RUN_A...): an id, a label, latest, -N
 *    (store_resolve_run()).  Without one, the latest run, or with sha256
 *    set (perturb gate EXPERIMENT.yaml) the latest run of that experiment
 *    (its stored hash: the file's bytes as they are now), never the latest
 *    run of another study: when none matches, exit 2 naming the runs that
 *    exist and their experiments.
 *  - A run whose plan is not all stored (status not completed, or fewer
 *    results than plan entries: killed, interrupted, still running) is
 *    refused with how much of it is stored (exit 2) when refuse_incomplete
 *    is set, unless allow_incomplete; then p->incomplete is set and the
 *    command's verdict says how much is missing (pick_incomplete_note()).
 */
#ifndef PERTURB_CLI_PICK_H
#define PERTURB_CLI_PICK_H

#include <stdint.h>
#include "engine/store.h"

struct pick {
	/* in */
	const char *db;			/* the database's path, for messages */
	const char *spec;		/* NULL: the default run */
	const char *sha256;		/* the default run is this experiment's */
	const char *file;		/* its path, for messages */
	int refuse_incomplete;		/* gate, compare */
	int allow_incomplete;		/* --allow-incomplete */
	/* out */
	int64_t id;
	/* plan entries with a result / in the plan: counted with
	 * refuse_incomplete only (else 0, and incomplete is by status) */
	int64_t done, total;
	int incomplete;
	char *status;			/* as listed (malloc'd; pick_release()) */
};

/* Resolve p (see above) in st.  0, or an exit status (printed). */
int pick_run(struct store *st, struct pick *p);
/* "run 4 is incomplete (interrupted): 12 of 36 runs of its plan are stored,
 * 24 missing", or NULL when it is complete (malloc'd). */
char *pick_incomplete_note(const struct pick *p);
void pick_release(struct pick *p);

/*
 * Names given on the command line (option, e.g. "--metric", of what, e.g.
 * "metric") that match nothing of have[0..n_have) (literally, or as an
 * fnmatch glob when glob is set) are a typo, not an empty selection: exit
 * 2 naming the first with a did-you-mean and what where ("run 4", "runs 3
 * and 4", "the 12 runs of study 'x'") has.  0, or EXIT_USAGE (printed).
 * The one check of report, compare, gate, bisect and history.
 */
int pick_names(const char *option, const char *what, char *const *want, size_t n_want,
	       char *const *have, size_t n_have, int glob, const char *where);

/* What a run has of one kind of name, appended to *names (*n of them, each
 * once): 0, or EXIT_RUNTIME (printed).  pick_names_free() frees them. */
enum pick_kind { PICK_METRIC, PICK_WORKLOAD, PICK_VARIANT };
int pick_load_names(struct store *st, int64_t run_id, enum pick_kind kind, char ***names,
		    size_t *n);
void pick_names_free(char **names, size_t n);
/* pick_names() against what run_id has of kind: 0 or an exit status. */
int pick_names_in(struct store *st, int64_t run_id, enum pick_kind kind, const char *option,
		  char *const *want, size_t n_want, int glob);
/* The same against what any of run_ids[0..n_runs) has, said as where
 * (NULL: "run <first>"). */
int pick_names_in_runs(struct store *st, const int64_t *run_ids, size_t n_runs,
		       enum pick_kind kind, const char *option, char *const *want, size_t n_want,
		       int glob, const char *where);

#endif
