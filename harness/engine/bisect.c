/* bisect.c - perturb bisect: git bisect driven by a study; see bisect.h */
#include "bisect.h"
#include "config.h"
#include "revision.h"
#include "study.h"
#include "core/proc.h"
#include "core/stop.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* git -C dir ARGS... with its stdout and stderr in *out (malloc'd): the
 * exit status, -1 when it could not run (printed).  For git bisect, whose
 * messages are the answer and whose status is not 0 when it cannot go on. */
static int git_status(const char *dir, const char *const *args, char **out)
{
	struct strbuf cmd = STRBUF_INIT, sb = STRBUF_INIT;
	char buf[4096];
	size_t k;
	FILE *f;
	int st;

	strbuf_addf(&cmd, "git -C ");
	strbuf_add_shell_word(&cmd, dir);
	for (size_t i = 0; args[i]; i++) {
		strbuf_addf(&cmd, " ");
		strbuf_add_shell_word(&cmd, args[i]);
	}
	strbuf_addf(&cmd, " 2>&1 </dev/null");
	fflush(NULL);
	if (!(f = popen(cmd.buf, "r"))) {
		strbuf_release(&cmd);
		return error("cannot run git: %s", strerror(errno));
	}
	while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, k);
	st = pclose(f);
	strbuf_release(&cmd);
	*out = sb.buf ? strbuf_detach(&sb) : xstrdup("");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* A git command that must succeed; its output in *out when out. */
static int git_ok(const char *dir, const char *const *args, char **out)
{
	char *o = NULL;
	int st = git_status(dir, args, &o);

	if (st != 0) {
		if (st > 0)
			error("git %s %s in '%s' failed: %s", args[0], args[1] ? args[1] : "", dir, o);
		free(o);
		return -1;
	}
	if (out)
		*out = o;
	else
		free(o);
	return 0;
}

static void step_free(struct bisect_step *s)
{
	free(s->commit);
	free(s->describe);
}

void bisect_release(struct bisect_result *r)
{
	for (size_t i = 0; i < r->n_steps; i++)
		step_free(&r->steps[i]);
	free(r->steps);
	free(r->first_bad);
	free(r->last_good);
	argv_free(r->candidates);
	memset(r, 0, sizeof(*r));
}

const struct bisect_step *bisect_step_of(const struct bisect_result *r, const char *id)
{
	for (size_t i = r->n_steps; i-- > 0;)
		if (!strcmp(r->steps[i].commit, id))
			return &r->steps[i];
	return NULL;
}

struct more_ctx {
	const struct bisect_opts *o;
	enum bisect_verdict v;
	int rounds;
};

/* study_more_fn: another round while the run is undecided. */
static int more_rounds(struct store *st, int64_t run_id, int rounds, void *arg)
{
	struct more_ctx *c = arg;

	c->rounds = rounds;
	if (c->o->judge(st, run_id, &c->v, c->o->judge_arg) < 0)
		return -1;
	return c->v == BISECT_UNDECIDED && rounds < c->o->max_rounds;
}

/* The latest completed run of the study measured at commit id (its label
 * and commit), or 0. */
static int find_run(const struct bisect_opts *o, const char *study, const char *id,
		    int64_t *run_id, int64_t *results)
{
	struct run_summary *runs = NULL;
	struct store *st = NULL;
	size_t n = 0;

	*run_id = 0;
	if (access(o->db, F_OK) < 0)
		return 0;
	if (store_open(o->db, STORE_READ, &st) < 0 || store_list_runs(st, &runs, &n) < 0) {
		store_close(st);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (runs[i].name && !strcmp(runs[i].name, study) && runs[i].label &&
		    !strcmp(runs[i].label, id) && runs[i].commit && !strcmp(runs[i].commit, id) &&
		    runs[i].status && !strcmp(runs[i].status, "completed")) {
			*run_id = runs[i].id;
			if (results)
				*results = runs[i].done;
		}
	run_summaries_release(runs, n);
	store_close(st);
	return 0;
}

/* Judge the stored run_id. */
static int judge_run(const struct bisect_opts *o, int64_t run_id, enum bisect_verdict *v)
{
	struct store *st = NULL;
	int rc;

	if (store_open(o->db, STORE_READ, &st) < 0)
		return -1;
	rc = o->judge(st, run_id, v, o->judge_arg);
	store_close(st);
	return rc;
}

static const char *verdict_word(enum bisect_verdict v)
{
	return v == BISECT_GOOD ? "good" : v == BISECT_BAD ? "bad" : "undecided";
}

/*
 * Measure the commit checked out in o->repo (id): its stored run when there
 * is one, else build and run the study.  0, or -1 (printed; a stop too).
 */
static int measure(const struct bisect_opts *o, const char *study, const char *id,
		   struct bisect_result *r)
{
	static const char *const desc[] = { "describe", "--always", NULL };
	struct bisect_step *s;
	struct more_ctx mc = { .o = o };
	int64_t rid = 0, done = 0;

	r->steps = xrealloc(r->steps, (r->n_steps + 1) * sizeof(*r->steps));
	s = &r->steps[r->n_steps++];
	memset(s, 0, sizeof(*s));
	s->commit = xstrdup(id);
	if (revision_git(o->repo, desc, &s->describe) < 0)
		s->describe = xstrndup(id, 12);
	if (find_run(o, study, id, &s->run_id, NULL) < 0)
		return -1;
	if (s->run_id) {
		s->reused = 1;
		if (judge_run(o, s->run_id, &s->v) < 0)
			return -1;
		note("bisect: %s (%.12s): %s, run %lld already stored", s->describe, id,
		     verdict_word(s->v), (long long)s->run_id);
		return 0;
	}
	{
		char *argv[] = { "/bin/sh", "-c", (char *)o->build, NULL };
		if (proc_run_command(argv, NULL, o->repo, 0, "the build") < 0) {
			if (stop_requested())
				return -1;
			s->build_failed = 1;
			note("bisect: %s (%.12s): the build failed: skipped", s->describe, id);
			return 0;
		}
	}
	{
		struct study_opts so = {
			.file = o->file, .db = o->db, .filter = o->filter,
			.cmdline = "perturb bisect", .label = id, .revision = o->repo,
			.more = more_rounds, .more_arg = &mc, .run_id_out = &s->run_id,
		};
		if (study_run(&so) != STUDY_DONE)
			return -1;
	}
	s->rounds = mc.rounds;
	s->v = mc.v;
	if (find_run(o, study, id, &rid, &done) == 0)
		r->runs += done;
	note("bisect: %s (%.12s): %s after %d added round%s (run %lld)", s->describe, id,
	     verdict_word(s->v), s->rounds, s->rounds == 1 ? "" : "s", (long long)s->run_id);
	return 0;
}

/* git bisect's answer in out: 1 found (r->first_bad), 2 only skipped
 * commits left (r->candidates), 0 go on. */
static int bisect_answer(const char *out, struct bisect_result *r)
{
	const char *p;

	if ((p = strstr(out, " is the first bad commit"))) {
		const char *b = p;
		while (b > out && b[-1] != '\n')
			b--;
		r->first_bad = xstrndup(b, (size_t)(p - b));
		r->found = 1;
		return 1;
	}
	if ((p = strstr(out, "could be any of:\n"))) {
		p += strlen("could be any of:\n");
		while (*p && strspn(p, "0123456789abcdef") >= 40) {
			size_t len = strspn(p, "0123456789abcdef");
			char *id = xstrndup(p, len);
			argv_push(&r->candidates, &r->n_candidates, id);
			free(id);
			p += len;
			p += strcspn(p, "\n");
			if (*p)
				p++;
		}
		r->why = "the commits left could not be told apart (undecided or not built)";
		return 2;
	}
	return 0;
}

int bisect_run(const struct bisect_opts *o, struct bisect_result *r)
{
	static const char *const dirty[] = { "status", "--porcelain", "--untracked-files=no", NULL };
	static const char *const log[] = { "rev-parse", "--git-path", "BISECT_LOG", NULL };
	static const char *const reset[] = { "bisect", "reset", NULL };
	static const char *const head[] = { "rev-parse", "HEAD", NULL };
	static const char *const orig[] = { "rev-parse", "--abbrev-ref", "HEAD", NULL };
	struct experiment exp = { 0 };
	struct revision rev = { 0 };
	char err[1024], *good = NULL, *bad = NULL, *out = NULL, *logpath = NULL, *where = NULL;
	char *here = NULL;
	int ret = 1, started = 0, rc;

	memset(r, 0, sizeof(*r));
	r->max_rounds = o->max_rounds;
	if (config_load(o->file, &exp, err, sizeof(err)) < 0) {
		error("%s", err);
		goto out;
	}
	if (revision_probe(o->repo, &rev) < 0 || revision_resolve(o->repo, o->good, &good) < 0 ||
	    revision_resolve(o->repo, o->bad, &bad) < 0)
		goto out;
	if (revision_git(o->repo, dirty, &out) < 0)
		goto out;
	if (*out) {
		error("'%s' has uncommitted changes (git status): commit or stash them first; a "
		      "bisect checks out other commits", o->repo);
		goto out;
	}
	free(out);
	out = NULL;
	if (revision_git(o->repo, log, &logpath) < 0)
		goto out;
	where = logpath[0] == '/' ? xstrdup(logpath) : xasprintf("%s/%s", rev.repo, logpath);
	if (access(where, F_OK) == 0) {
		error("a git bisect is under way in '%s' ('git bisect reset' ends it)", o->repo);
		goto out;
	}
	if (revision_git(o->repo, orig, &here) < 0)
		goto out;
	stop_install_signals();

	/* from here on, every exit goes through git bisect reset */
	ret = -1;
	{
		const char *const start[] = { "bisect", "start", bad, good, NULL };
		if ((rc = git_status(o->repo, start, &out)) < 0)
			goto out;
		started = 1;
		if (rc != 0) {
			error("git bisect start %s %s in '%s' failed: %s", o->bad, o->good, o->repo,
			      out);
			ret = 1;
			goto out;
		}
	}
	/* the ends first: a good commit that judges bad is no bisect */
	for (int end = 0; end < 2; end++) {
		const char *id = end ? bad : good;
		const char *const co[] = { "checkout", "-q", id, NULL };
		enum bisect_verdict want = end ? BISECT_BAD : BISECT_GOOD;
		if (git_ok(o->repo, co, NULL) < 0 || measure(o, exp.name, id, r) < 0)
			goto out;
		{
			const struct bisect_step *s = &r->steps[r->n_steps - 1];
			if (s->build_failed || s->v == BISECT_UNDECIDED) {
				note("the %s commit %s is %s: the bisect may end undecided (more "
				     "rounds, --max-rounds, or a quieter metric would decide)",
				     end ? "bad" : "good", s->describe,
				     s->build_failed ? "not built" : "undecided");
			} else if (s->v != want) {
				error("the %s commit %s judges %s: nothing to bisect",
				      end ? "bad" : "good", s->describe, verdict_word(s->v));
				ret = 1;
				goto out;
			}
		}
	}
	rc = bisect_answer(out, r);
	while (!rc) {
		const struct bisect_step *s;
		char *id = NULL;
		const char *word;

		free(out);
		out = NULL;
		{
			/* git bisect start checked the commit out; our checkouts of the
			 * ends moved HEAD: back to the one git bisect wants */
			const char *const next[] = { "bisect", "next", NULL };
			if (git_status(o->repo, next, &out) < 0)
				goto out;
			if ((rc = bisect_answer(out, r)))
				break;
			free(out);
			out = NULL;
		}
		if (revision_git(o->repo, head, &id) < 0)
			goto out;
		s = bisect_step_of(r, id);
		if (!s) {
			if (measure(o, exp.name, id, r) < 0) {
				free(id);
				goto out;
			}
			s = &r->steps[r->n_steps - 1];
		}
		word = s->build_failed || s->v == BISECT_UNDECIDED ? "skip" :
		       s->v == BISECT_GOOD ? "good" : "bad";
		{
			const char *const mark[] = { "bisect", word, id, NULL };
			rc = git_status(o->repo, mark, &out);
		}
		free(id);
		if (rc < 0)
			goto out;
		rc = bisect_answer(out, r);
		if (!rc && strstr(out, "We cannot bisect more"))
			rc = 2;
	}
	if (r->found) {
		char *parent = NULL, *spec = xasprintf("%s^", r->first_bad);
		const struct bisect_step *s;
		if (revision_resolve(o->repo, spec, &parent) == 0 &&
		    (s = bisect_step_of(r, parent)) && s->v == BISECT_GOOD && !s->build_failed)
			r->last_good = xstrdup(parent);
		for (size_t i = r->n_steps; i-- > 0 && !r->last_good;)
			if (r->steps[i].v == BISECT_GOOD && !r->steps[i].build_failed)
				r->last_good = xstrdup(r->steps[i].commit);
		free(parent);
		free(spec);
	}
	ret = 0;
out:
	if (started) {
		char *o2 = NULL;
		if (git_status(o->repo, reset, &o2) != 0)
			warning("git bisect reset in '%s': %s", o->repo, o2 ? o2 : "failed");
		free(o2);
		if (here && strcmp(here, "HEAD")) {
			char *now = NULL;
			const char *const cur[] = { "rev-parse", "--abbrev-ref", "HEAD", NULL };
			if (revision_git(o->repo, cur, &now) == 0 && strcmp(now, here))
				warning("'%s' is on %s, not on %s as before the bisect", o->repo, now,
					here);
			free(now);
		}
	}
	free(out);
	free(good);
	free(bad);
	free(logpath);
	free(where);
	free(here);
	revision_release(&rev);
	experiment_release(&exp);
	return ret;
}
