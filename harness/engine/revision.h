/*
 * revision.h - the revision of the code a run measured: a git work tree's
 * commit, as `perturb run` stores it with the run (a study's revision:
 * key, docs/experiment.md; docs/history.md), and the order of commits that
 * `perturb history` and `perturb bisect` follow.
 */
#ifndef PERTURB_ENGINE_REVISION_H
#define PERTURB_ENGINE_REVISION_H

#include <stddef.h>

struct revision {
	char *repo;		/* the work tree's top folder, absolute */
	char *describe;		/* git describe --always --dirty */
	char *commit;		/* the full commit id of HEAD */
};

/*
 * The revision of the git work tree at dir (any folder inside it): 0, or
 * -1 after an error() naming dir when it is not a git work tree or git
 * cannot be run (*r zeroed then).  Release with revision_release().
 */
int revision_probe(const char *dir, struct revision *r);
void revision_release(struct revision *r);

/*
 * The commits of the repository at dir in commit order, oldest first:
 * `git rev-list --topo-order --reverse --all` (every branch; a parent
 * always before its children).  *ids malloc'd, n full commit ids
 * (free each and the array with argv_free(), NULL-terminated).
 */
int revision_list(const char *dir, char ***ids, size_t *n);

/*
 * The full commit id of rev (a name git rev-parse understands) in the
 * repository at dir, malloc'd into *id; -1 after an error() when git does
 * not know it.
 */
int revision_resolve(const char *dir, const char *rev, char **id);

/* Run git with args (NULL-terminated, without "git") in dir; its stdout,
 * trailing newlines removed, in *out (malloc'd).  As proc_capture(). */
int revision_git(const char *dir, const char *const *args, char **out);

#endif
