/*
 * config_workload.c - one workload's mapping of an experiment or workload
 * file: its commands, metrics and calibration: block (config_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "matrix.h"
#include "core/result.h"
#include "lib/util.h"

static const char *const workload_keys[] = {
	"name", "kind", "description", "requires", "setup", "prepare", "cmd", "shell",
	"metrics", "timeout", "repetitions", "dir", "matrix", "calibration", "primary", NULL
};
static const char *const metric_keys[] = { "name", "regex", "unit", NULL };

static int parse_metric(struct ctx *c, const struct ynode *n, struct workload *w)
{
	struct metric_def *m;
	const struct ynode *re;
	const struct reserved_metric *r;
	const char *src;
	char gotbuf[64], msg[256];
	int rc;

	if (n->type != YN_MAP)
		return yn_fail(&c->y, n, "each metric must be a mapping like {name: x, regex: '...'}, got %s",
			    YN_GOT(n));
	if (yn_check_keys(&c->y, n, "metric", metric_keys))
		return -1;
	m = &w->metrics[w->n_metrics++];
	m->pos = yn_pos(&c->y, n);
	if (get_name(c, n, "metric", &m->name))
		return -1;
	/* a tracer's names: config.c, once every variant is known */
	if ((r = result_metric_reserved(m->name)) && !r->block)
		return yn_fail(&c->y, yn_get(n, "name"), "metric name '%s' is reserved (%s)",
			       m->name, r->column ? "wall, user, sys and maxrss are always recorded" :
			       "perturb records it for every run: cgroup_*, leftover_procs");
	for (size_t i = 0; i < c->exp->n_counters; i++)
		if (!strcmp(c->exp->counters[i], m->name))
			return yn_fail(&c->y, yn_get(n, "name"),
				    "metric name '%s' is also a counter of the experiment",
				    m->name);
	for (size_t i = 0; i + 1 < w->n_metrics; i++)
		if (!strcmp(w->metrics[i].name, m->name))
			return yn_fail(&c->y, yn_get(n, "name"), "duplicate metric '%s' in workload '%s' (first at %d:%d)",
				    m->name, w->name, w->metrics[i].pos.line, w->metrics[i].pos.col);
	if (!(re = yn_get(n, "regex")))
		return yn_fail(&c->y, n, "metric '%s' has no 'regex'", m->name);
	if (yn_want_str(&c->y, re, "regex", &src))
		return -1;
	if ((rc = regcomp(&m->re, src, REG_EXTENDED))) {
		regerror(rc, &m->re, msg, sizeof(msg));
		regfree(&m->re);
		return yn_fail(&c->y, re, "bad regex in metric '%s': %s", m->name, msg);
	}
	m->regex_src = xstrdup(src);	/* marks re as compiled */
	m->has_group = m->re.re_nsub >= 1;
	m->unit = xstrdup("");
	return yn_get_str(&c->y, n, "unit", &m->unit);
}

/*
 * calibration: {hits: N} or {hits_metric: NAME}, and optionally metric:
 * and (with hits) ops_metric: (struct workload, docs/experiment.md
 * "calibration").  A metric named must be one the workload has: one of
 * its metrics:, or wall for metric:.
 */
static int parse_calibration(struct ctx *c, const struct ynode *n, struct workload *w)
{
	static const char *const keys[] = { "hits", "hits_metric", "metric", "ops_metric",
					    NULL };
	const struct ynode *hits, *hm, *x;
	const char *names[3] = { NULL, NULL, NULL };

	if (yn_want_map(&c->y, n, "calibration") || yn_check_keys(&c->y, n, "calibration", keys))
		return -1;
	hits = yn_get(n, "hits");
	hm = yn_get(n, "hits_metric");
	if (!!hits == !!hm)
		return yn_fail(&c->y, n, "calibration: needs exactly one of hits or hits_metric");
	if (hm && (x = yn_get(n, "ops_metric")))
		return yn_fail(&c->y, x, "calibration: ops_metric goes with hits (hits per "
			       "operation), not with hits_metric (hits per run)");
	if (hits && yn_want_range(&c->y, hits, "hits", R_CALIB_HITS, &w->calib_hits))
		return -1;
	if (hm && yn_get_str(&c->y, n, "hits_metric", &w->calib_hits_metric))
		return -1;
	if (yn_get_str(&c->y, n, "metric", &w->calib_metric) ||
	    yn_get_str(&c->y, n, "ops_metric", &w->calib_ops_metric))
		return -1;
	if (w->calib_ops_metric && w->calib_metric && !strcmp(w->calib_metric, "wall"))
		return yn_fail(&c->y, yn_get(n, "ops_metric"), "calibration: ops_metric goes "
			       "with hits per operation, not with metric: wall (hits per run)");
	names[0] = w->calib_hits_metric;
	names[1] = w->calib_metric;
	names[2] = w->calib_ops_metric;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		static const char *const key[] = { "hits_metric", "metric", "ops_metric" };
		int found = !names[k] || (k == 1 && !strcmp(names[k], "wall"));
		for (size_t i = 0; !found && i < w->n_metrics; i++)
			found = !strcmp(w->metrics[i].name, names[k]);
		if (!found)
			return yn_fail(&c->y, yn_get(n, key[k]),
				       "calibration: '%s' is not a metric of workload '%s'",
				       names[k], w->name);
	}
	return 0;
}

/* primary: a metric the workload has: wall, user, sys, maxrss or one of
 * its metrics: (struct workload's primary). */
static int parse_primary(struct ctx *c, const struct ynode *n, struct workload *w)
{
	const struct reserved_metric *r;
	int found;

	if (yn_get_str(&c->y, n, "primary", &w->primary))
		return -1;
	if (!w->primary)
		return 0;
	found = (r = result_metric_reserved(w->primary)) && r->column;
	for (size_t i = 0; !found && i < w->n_metrics; i++)
		found = !strcmp(w->metrics[i].name, w->primary);
	if (!found)
		return yn_fail(&c->y, yn_get(n, "primary"), "primary: '%s' is not a metric of "
			       "workload '%s' (wall, user, sys, maxrss or one of its metrics:)",
			       w->primary, w->name);
	return 0;
}

/*
 * A workload mapping.  w->name is set first, so that a failure later still
 * leaves a releasable workload.
 */
int config_parse_workload(struct ctx *c, const struct ynode *n, struct workload *w)
{
	static const char *const kinds[] = { "real", "micro", NULL };
	const struct ynode *x, *cmd, *shell;
	char gotbuf[64];
	int kind;

	if (n->type != YN_MAP)
		return yn_fail(&c->y, n, "each workload must be a mapping or the name of a workload file, got %s",
			    YN_GOT(n));
	if (yn_check_keys(&c->y, n, "workload", workload_keys))
		return -1;
	w->pos = yn_pos(&c->y, n);
	if (get_name(c, n, "workload", &w->name) ||
	    yn_get_str(&c->y, n, "description", &w->description))
		return -1;
	if ((x = yn_get(n, "kind"))) {
		if (yn_want_enum(&c->y, x, "kind", kinds, &kind))
			return -1;
		w->kind = kind == 1 ? WORKLOAD_MICRO : WORKLOAD_REAL;
	}
	if ((x = yn_get(n, "requires")) &&
	    yn_want_strv(&c->y, x, "requires", 0, &w->requires, &w->n_requires))
		return -1;
	if (yn_get_cmds(&c->y, n, "setup", &w->setup, &w->n_setup) ||
	    yn_get_cmds(&c->y, n, "prepare", &w->prepare, &w->n_prepare))
		return -1;
	cmd = yn_get(n, "cmd");
	shell = yn_get(n, "shell");
	if (cmd && shell)
		return yn_fail(&c->y, yn_get_key(n, "shell"),
			    "workload '%s' has both 'cmd' and 'shell'; use one", w->name);
	if (!cmd && !shell)
		return yn_fail(&c->y, n, "workload '%s' needs 'cmd' or 'shell'", w->name);
	if (cmd && yn_want_argv(&c->y, cmd, "cmd", &w->cmd))
		return -1;
	if (shell) {
		if (yn_get_str(&c->y, n, "shell", &w->shell))
			return -1;
		if (!*w->shell)
			return yn_fail(&c->y, shell, "'shell' must not be empty");
	}
	if ((x = yn_get(n, "metrics"))) {
		if (yn_want_seq(&c->y, x, "metrics", 0))
			return -1;
		w->metrics = xcalloc(x->n ? x->n : 1, sizeof(*w->metrics));
		for (size_t i = 0; i < x->n; i++)
			if (parse_metric(c, x->kids[i], w))
				return -1;
	}
	if (yn_get_duration(&c->y, n, "timeout", R_TIMEOUT, &w->timeout_s) ||
	    yn_get_count(&c->y, n, "repetitions", R_REPETITIONS, &w->repetitions) ||
	    yn_get_str(&c->y, n, "dir", &w->dir))
		return -1;
	if (w->dir && w->dir[0] != '/')
		return yn_fail(&c->y, yn_get(n, "dir"), "'dir' must be an absolute path, got '%s'",
			       w->dir);
	if ((x = yn_get(n, "calibration")) && parse_calibration(c, x, w))
		return -1;
	return parse_primary(c, n, w);
}

void workload_release(struct workload *w)
{
	free(w->name);
	free(w->base);
	matrix_values_free(w->matrix, w->n_matrix);
	free(w->description);
	yn_strv_free(w->requires, w->n_requires);
	yn_cmds_free(w->setup, w->n_setup);
	yn_cmds_free(w->prepare, w->n_prepare);
	yn_argv_free(&w->cmd);
	free(w->shell);
	free(w->dir);
	free(w->calib_hits_metric);
	free(w->calib_metric);
	free(w->calib_ops_metric);
	free(w->primary);
	for (size_t i = 0; i < w->n_metrics; i++) {
		struct metric_def *m = &w->metrics[i];
		free(m->name);
		if (m->regex_src)
			regfree(&m->re);
		free(m->regex_src);
		free(m->unit);
	}
	free(w->metrics);
	memset(w, 0, sizeof(*w));
}
