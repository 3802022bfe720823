/*
 * revision.c - a git work tree's revision and its repository's commit
 * order (revision.h).  Everything goes through the git command (no
 * library: git is what the user's work tree is made with, and its
 * describe is what the user reads).
 */
#include "revision.h"
#include "core/proc.h"
#include "lib/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int revision_git(const char *dir, const char *const *args, char **out)
{
	char **argv = NULL;
	size_t n = 0, len;
	int ret;

	argv_push(&argv, &n, "git");
	argv_push(&argv, &n, "-C");
	argv_push(&argv, &n, dir);
	for (size_t i = 0; args[i]; i++)
		argv_push(&argv, &n, args[i]);
	ret = proc_capture(argv, NULL, out);
	argv_free(argv);
	if (ret < 0)
		return -1;
	len = strlen(*out);
	while (len && ((*out)[len - 1] == '\n' || (*out)[len - 1] == '\r'))
		(*out)[--len] = '\0';
	return 0;
}

void revision_release(struct revision *r)
{
	free(r->repo);
	free(r->describe);
	free(r->commit);
	memset(r, 0, sizeof(*r));
}

int revision_probe(const char *dir, struct revision *r)
{
	static const char *const top[] = { "rev-parse", "--show-toplevel", NULL };
	static const char *const head[] = { "rev-parse", "--verify", "HEAD^{commit}", NULL };
	static const char *const desc[] = { "describe", "--always", "--dirty", NULL };

	memset(r, 0, sizeof(*r));
	if (!program_exists("git"))
		return error("revision '%s': git is not on PATH", dir);
	if (revision_git(dir, top, &r->repo) < 0 || revision_git(dir, head, &r->commit) < 0 ||
	    revision_git(dir, desc, &r->describe) < 0) {
		revision_release(r);
		return error("revision '%s' is not a git work tree with a commit", dir);
	}
	return 0;
}

int revision_list(const char *dir, char ***ids, size_t *n)
{
	static const char *const args[] = { "rev-list", "--topo-order", "--reverse", "--all", NULL };
	char *out = NULL, *line, *save = NULL;

	*ids = NULL;
	*n = 0;
	if (revision_git(dir, args, &out) < 0)
		return error("cannot list the commits of '%s'", dir);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		argv_push(ids, n, line);
	free(out);
	return 0;
}

int revision_resolve(const char *dir, const char *rev, char **id)
{
	char *spec = xasprintf("%s^{commit}", rev);
	const char *const args[] = { "rev-parse", "--verify", "--quiet", spec, NULL };
	int ret = revision_git(dir, args, id);

	free(spec);
	if (ret < 0 || !**id) {
		free(*id);
		*id = NULL;
		return error("'%s' is not a commit of the repository '%s'", rev, dir);
	}
	return 0;
}
