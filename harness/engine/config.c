/*
 * config.c - load and validate an experiment file (see config.h and
 * docs/perturb.1).
 *
 * Two stages.  First the YAML text becomes a small tree of struct ynode
 * (core/yamlnode.h, which also holds the defences against hostile input).
 * Then the tree is checked key by key and copied into struct experiment;
 * every message carries the position of the node it is about.  A variant's
 * backend block is handed to the backend that claims its key
 * (backends/backend.h), which reads it with the same node functions.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_int.h"
#include "matrix.h"
#include "core/result.h"
#include "backends/backend.h"
#include "counters/counters.h"
#include "lib/util.h"
#include "stats/stats.h"

#ifndef PERTURB_SHARE_DIR
#define PERTURB_SHARE_DIR "/usr/local/share/perturb"
#endif

#define MAX_FILE_SIZE CONFIG_FILE_MAX

/* Where pos is, for "first at ...": LINE:COL in the current file, else FILE:LINE:COL. */
static const char *where(struct ctx *c, const struct pos *p, char *buf, size_t len)
{
	if (p->file == c->y.file)
		snprintf(buf, len, "%d:%d", p->line, p->col);
	else
		snprintf(buf, len, "%s:%d:%d", p->file, p->line, p->col);
	return buf;
}

/* Keep path in exp->files (so that pos.file stays valid); returns the copy. */
static const char *add_file(struct experiment *exp, const char *path)
{
	exp->files = xrealloc(exp->files, (exp->n_files + 1) * sizeof(*exp->files));
	exp->files[exp->n_files] = xstrdup(path);
	return exp->files[exp->n_files++];
}

/*
 * Read and parse path; on success the current file of c is path (the
 * caller saves and restores c->y.file / c->y.dir around this).  A read error
 * is reported at node `at` of the current file when given.  *textp gets
 * the bytes when textp is not NULL.
 */
static int read_doc(struct ctx *c, const char *path, const struct ynode *at,
		    struct ydoc *d, char **textp, size_t *lenp)
{
	size_t len = 0;
	char *text, why[128];
	int ret;

	memset(d, 0, sizeof(*d));
	text = read_user_file(path, MAX_FILE_SIZE, &len, why, sizeof(why));
	if (!text && errno == EFBIG)
		goto too_big;
	if (!text) {
		if (at)
			return yn_fail(&c->y, at, "cannot read '%s': %s", path, why);
		return yn_fail(&c->y, NULL, "cannot read: %s", why);
	}
	c->y.file = add_file(c->exp, path);
	free(c->y.dir);
	c->y.dir = dir_name(path);
	ret = yn_parse(&c->y, text, len, d);
	if (textp) {
		*textp = text;
		*lenp = len;
	} else {
		free(text);
	}
	return ret;
too_big:
	if (at)
		return yn_fail(&c->y, at, "'%s' is larger than 16 MiB", path);
	return yn_fail(&c->y, NULL, "file is larger than 16 MiB");
}

/* ------------------------------------------------------------------ */
/* Assembling the experiment */

static struct variant *new_variant(struct experiment *exp)
{
	exp->variants = xrealloc(exp->variants, (exp->n_variants + 1) * sizeof(*exp->variants));
	memset(&exp->variants[exp->n_variants], 0, sizeof(*exp->variants));
	return &exp->variants[exp->n_variants++];
}

static struct workload *new_workload(struct experiment *exp)
{
	exp->workloads = xrealloc(exp->workloads, (exp->n_workloads + 1) * sizeof(*exp->workloads));
	memset(&exp->workloads[exp->n_workloads], 0, sizeof(*exp->workloads));
	return &exp->workloads[exp->n_workloads++];
}

/*
 * A variant or workload mapping with a matrix: (engine/matrix.h): the
 * name as written, and the matrix read; m->node NULL when n has none (or
 * has no usable name, which the variant's or workload's parser reports).
 */
static int matrix_of(struct ctx *c, const struct ynode *n, const char *what, struct matrix *m)
{
	const struct ynode *name = n->type == YN_MAP ? yn_get(n, "name") : NULL;

	memset(m, 0, sizeof(*m));
	if (!name || name->type != YN_SCALAR || !config_valid_name(name->str))
		return 0;
	return matrix_read(&c->y, n, what, name->str, m);
}

/* After a variant was appended: its name must be new. */
static int check_new_variant(struct ctx *c, const struct ynode *at)
{
	struct experiment *exp = c->exp;
	struct variant *v = &exp->variants[exp->n_variants - 1];
	char buf[PATH_MAX + 32];

	for (size_t i = 0; i + 1 < exp->n_variants; i++)
		if (!strcmp(exp->variants[i].name, v->name))
			return yn_fail(&c->y, at, "duplicate variant '%s' (first at %s)",
				    v->name, where(c, &exp->variants[i].pos, buf, sizeof(buf)));
	return 0;
}

/*
 * Parse instance i of n's matrix m with parse() into the new entry that
 * new_entry() appends, then name it (base[p=v,...]) through the pointers
 * that fields() gives.
 */
struct instance_ops {
	const char *what;
	void *(*new_entry)(struct experiment *exp);
	int (*parse)(struct ctx *c, const struct ynode *n, void *entry);
	void (*fields)(void *entry, char ***name, char ***base, struct matrix_value ***vals, size_t **n_vals);
};

static int add_instance(struct ctx *c, const struct matrix *m, size_t i, const struct ynode *n,
			const struct instance_ops *ops)
{
	struct ydoc scratch = { 0 };
	const struct ynode *inst;
	struct matrix_value *vals = NULL, **vp;
	char *name = NULL, **namep, **basep;
	size_t *nvp;
	void *entry;
	int ret = -1;

	if (matrix_instance(&c->y, m, i, n, yn_get(n, "name")->str, &scratch, &inst, &name, &vals))
		goto out;
	entry = ops->new_entry(c->exp);
	ops->fields(entry, &namep, &basep, &vp, &nvp);
	if (ops->parse(c, inst, entry))
		goto out;
	*basep = *namep;
	*namep = name;
	*vp = vals;
	*nvp = m->n_params;
	name = NULL;
	vals = NULL;
	ret = 0;
out:
	free(name);
	matrix_values_free(vals, m->n_params);
	yn_doc_free(&scratch);
	return ret;
}

static void *new_variant_entry(struct experiment *exp)
{
	return new_variant(exp);
}

static int parse_variant_entry(struct ctx *c, const struct ynode *n, void *v)
{
	return config_parse_variant(c, n, v);
}

static void variant_fields(void *entry, char ***name, char ***base,
			   struct matrix_value ***vals, size_t **n_vals)
{
	struct variant *v = entry;
	*name = &v->name;
	*base = &v->base;
	*vals = &v->matrix;
	*n_vals = &v->n_matrix;
}

static const struct instance_ops variant_instances = {
	"variant", new_variant_entry, parse_variant_entry, variant_fields
};

/* A variant, or one per instance of its matrix. */
static int add_variant(struct ctx *c, const struct ynode *n)
{
	struct matrix m;

	if (matrix_of(c, n, "variant", &m))
		return -1;
	if (!m.node)
		return config_parse_variant(c, n, new_variant(c->exp)) || check_new_variant(c, yn_get(n, "name"));
	for (size_t i = 0; i < m.n_instances; i++)
		if (add_instance(c, &m, i, n, &variant_instances) || check_new_variant(c, yn_get(n, "name")))
			return -1;
	return 0;
}

/* After `added` workloads were appended: their names must be new. */
static int check_new_workload(struct ctx *c, const struct ynode *at, size_t added)
{
	struct experiment *exp = c->exp;
	char buf[PATH_MAX + 32];

	for (size_t k = exp->n_workloads - added; k < exp->n_workloads; k++)
		for (size_t i = 0; i < k; i++)
			if (!strcmp(exp->workloads[i].name, exp->workloads[k].name))
				return yn_fail(&c->y, at, "duplicate workload '%s' (first at %s)",
					       exp->workloads[k].name,
					       where(c, &exp->workloads[i].pos, buf, sizeof(buf)));
	return 0;
}

static void *new_workload_entry(struct experiment *exp)
{
	return new_workload(exp);
}

static int parse_workload_entry(struct ctx *c, const struct ynode *n, void *w)
{
	return config_parse_workload(c, n, w);
}

static void workload_fields(void *entry, char ***name, char ***base,
			    struct matrix_value ***vals, size_t **n_vals)
{
	struct workload *w = entry;
	*name = &w->name;
	*base = &w->base;
	*vals = &w->matrix;
	*n_vals = &w->n_matrix;
}

static const struct instance_ops workload_instances = {
	"workload", new_workload_entry, parse_workload_entry, workload_fields
};

/* Append the workload of mapping n, or one per instance of its matrix;
 * *added says how many were appended (check_new_workload()). */
static int add_workload_node(struct ctx *c, const struct ynode *n, size_t *added)
{
	struct matrix m;

	*added = 0;
	if (matrix_of(c, n, "workload", &m))
		return -1;
	if (!m.node) {
		*added = 1;
		return config_parse_workload(c, n, new_workload(c->exp));
	}
	for (size_t i = 0; i < m.n_instances; i++) {
		if (add_instance(c, &m, i, n, &workload_instances))
			return -1;
		(*added)++;
	}
	return 0;
}

static int path_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * Load a workload file into w (same rules as a workload mapping); with
 * want_name, its name must be that.  Messages are about that file.  With
 * w NULL, the file's workload is appended to the experiment, one per
 * instance of its matrix, *added of them (add_workload_node()).
 */
static int load_workload_file(struct ctx *c, const char *path, const struct ynode *at,
			      const char *want_name, struct workload *w, size_t *added)
{
	const char *saved_file = c->y.file;
	char *saved_dir = xstrdup(c->y.dir ? c->y.dir : ".");
	struct ydoc d;
	char gotbuf[64];
	int ret = -1;

	if (read_doc(c, path, at, &d, NULL, NULL))
		goto out;
	if (d.root->type != YN_MAP) {
		yn_fail(&c->y, d.root, "a workload file must hold one mapping, got %s", YN_GOT(d.root));
		goto out;
	}
	if (w ? config_parse_workload(c, d.root, w) : add_workload_node(c, d.root, added))
		goto out;
	if (!w)
		w = &c->exp->workloads[c->exp->n_workloads - 1];
	if (want_name && strcmp(w->base ? w->base : w->name, want_name)) {
		yn_fail(&c->y, yn_get(d.root, "name"), "workload file for '%s' has name '%s'",
		     want_name, w->base ? w->base : w->name);
		goto out;
	}
	ret = 0;
out:
	yn_doc_free(&d);
	c->y.file = saved_file;
	free(c->y.dir);
	c->y.dir = saved_dir;
	return ret;
}

/* A workload given by name: DIR/workloads/NAME.yaml, DIR/NAME.yaml, then
 * the shipped workloads (config_workload_dirs()). */
static int add_workload_by_name(struct ctx *c, const struct ynode *n)
{
	char *paths[5] = { NULL }, *dirs[3];
	size_t np = 0, nd, added = 0;
	const char *found = NULL;
	int ret = -1;

	if (!valid_name(n->str))
		return yn_fail(&c->y, n, "invalid workload name '%s': use letters, digits and _ . + -", n->str);
	paths[np++] = strcmp(c->y.dir, ".") ? xasprintf("%s/workloads/%s.yaml", c->y.dir, n->str)
					    : xasprintf("workloads/%s.yaml", n->str);
	paths[np++] = strcmp(c->y.dir, ".") ? xasprintf("%s/%s.yaml", c->y.dir, n->str)
					    : xasprintf("%s.yaml", n->str);
	nd = config_workload_dirs(dirs);
	for (size_t i = 0; i < nd; i++) {
		paths[np++] = xasprintf("%s/%s.yaml", dirs[i], n->str);
		free(dirs[i]);
	}
	for (size_t i = 0; i < np && !found; i++)
		if (path_is_file(paths[i]))
			found = paths[i];
	if (!found) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < np; i++)
			strbuf_addf(&sb, "%s%s", i ? (i + 1 == np ? " and " : ", ") : "", paths[i]);
		yn_fail(&c->y, n, "workload '%s' not found (looked for %s)", n->str, sb.buf);
		strbuf_release(&sb);
		goto out;
	}
	if (load_workload_file(c, found, n, n->str, NULL, &added))
		goto out;
	ret = check_new_workload(c, n, added);
out:
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	return ret;
}

static int add_workloads(struct ctx *c, const struct ynode *list)
{
	if (yn_want_seq(&c->y, list, "workloads", 1))
		return -1;
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *it = list->kids[i];
		if (it->type == YN_SCALAR) {
			if (add_workload_by_name(c, it))
				return -1;
		} else {
			size_t added;
			if (add_workload_node(c, it, &added) ||
			    check_new_workload(c, yn_get(it, "name"), added))
				return -1;
		}
	}
	return 0;
}

static int add_variants(struct ctx *c, const struct ynode *list)
{
	if (yn_want_seq(&c->y, list, "variants", 1))
		return -1;
	for (size_t i = 0; i < list->n; i++)
		if (add_variant(c, list->kids[i]))
			return -1;
	return 0;
}

static const char *const include_keys[] = { "variants", "workloads", "include", NULL };

/*
 * An included file: a mapping of variants: and/or workloads:, or one
 * workload (a mapping with cmd or shell).  Includes do not nest.
 */
static int add_include(struct ctx *c, const struct ynode *item)
{
	const char *saved_file = c->y.file, *rel;
	char *saved_dir = xstrdup(c->y.dir), *path = NULL;
	const struct ynode *root, *x;
	struct ydoc d = { 0 };
	char gotbuf[64];
	int ret = -1;

	if (yn_want_str(&c->y, item, "include", &rel))
		goto out;
	if (!*rel) {
		yn_fail(&c->y, item, "items of 'include' must be file names, got ''");
		goto out;
	}
	path = yn_resolve(&c->y, rel);
	if (read_doc(c, path, item, &d, NULL, NULL))
		goto out;
	root = d.root;
	if (root->type != YN_MAP) {
		yn_fail(&c->y, root, "an included file must hold a mapping, got %s", YN_GOT(root));
		goto out;
	}
	if (yn_get(root, "cmd") || yn_get(root, "shell")) {
		size_t added;
		if (add_workload_node(c, root, &added) ||
		    check_new_workload(c, yn_get(root, "name"), added))
			goto out;
		ret = 0;
		goto out;
	}
	if (yn_check_keys(&c->y, root, "included file", include_keys))
		goto out;
	if ((x = yn_get_key(root, "include"))) {
		yn_fail(&c->y, x, "'include' is not allowed in an included file");
		goto out;
	}
	if (!yn_get(root, "variants") && !yn_get(root, "workloads")) {
		yn_fail(&c->y, root, "an included file must hold 'variants', 'workloads' or one workload");
		goto out;
	}
	if ((x = yn_get(root, "variants")) && add_variants(c, x))
		goto out;
	if ((x = yn_get(root, "workloads")) && add_workloads(c, x))
		goto out;
	ret = 0;
out:
	yn_doc_free(&d);
	free(path);
	c->y.file = saved_file;
	free(c->y.dir);
	c->y.dir = saved_dir;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Gate */

static const char *const gate_keys[] = {
	"variant", "workload", "metric", "statistic", "max_dilation", "confidence", NULL
};

static int is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Is metric recorded for some workload of exp? */
static int metric_known(const struct experiment *exp, const char *metric)
{
	static const char *const always[] = {
		"wall", "user", "sys", "maxrss", "ns_per_op", "cycles_per_op", NULL
	};
	for (size_t i = 0; always[i]; i++)
		if (!strcmp(always[i], metric))
			return 1;
	for (size_t i = 0; i < exp->n_counters; i++)
		if (!strcmp(exp->counters[i], metric))
			return 1;
	for (size_t i = 0; i < exp->n_workloads; i++)
		for (size_t j = 0; j < exp->workloads[i].n_metrics; j++)
			if (!strcmp(exp->workloads[i].metrics[j].name, metric))
				return 1;
	return 0;
}

/* A rule's variant/workload: a glob, or the name of one that exists. */
static int get_target(struct ctx *c, const struct ynode *map, const char *key,
		      int is_variant, char **out)
{
	const struct experiment *exp = c->exp;
	const struct ynode *v = yn_get(map, key);
	const char *s;
	if (!v) {
		if (is_variant)
			return yn_fail(&c->y, map, "gate rule has no 'variant'");
		*out = xstrdup("*");
		return 0;
	}
	if (yn_want_str(&c->y, v, key, &s))
		return -1;
	*out = xstrdup(s);
	if (is_glob(s))
		return 0;
	if (is_variant ? experiment_find_variant(exp, s) >= 0 : experiment_find_workload(exp, s) >= 0)
		return 0;

	size_t n = is_variant ? exp->n_variants : exp->n_workloads;
	const char **names = xcalloc(n + 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = is_variant ? exp->variants[i].name : exp->workloads[i].name;
	const char *sug = did_you_mean(s, names);
	if (sug)
		yn_fail(&c->y, v, "gate rule names unknown %s '%s'; did you mean '%s'?", key, s, sug);
	else
		yn_fail(&c->y, v, "gate rule names unknown %s '%s'", key, s);
	free(names);
	return -1;
}

static int parse_rule(struct ctx *c, const struct ynode *n, struct gate_rule *r)
{
	const struct ynode *v;
	char gotbuf[64], why[256];

	if (n->type != YN_MAP)
		return yn_fail(&c->y, n, "each gate rule must be a mapping, got %s", YN_GOT(n));
	if (yn_check_keys(&c->y, n, "gate rule", gate_keys))
		return -1;
	r->pos = yn_pos(&c->y, n);
	r->statistic = STAT_P50;
	r->confidence = 0.95;
	if (get_target(c, n, "variant", 1, &r->variant) ||
	    get_target(c, n, "workload", 0, &r->workload))
		return -1;
	r->metric = xstrdup("wall");
	if (yn_get_str(&c->y, n, "metric", &r->metric))
		return -1;
	if (!metric_known(c->exp, r->metric))
		return yn_fail(&c->y, yn_get(n, "metric"),
			    "gate rule names metric '%s', which is not recorded (not wall, user, sys, maxrss, a counter or a workload metric)",
			    r->metric);
	if ((v = yn_get(n, "statistic")) &&
	    (v->type != YN_SCALAR || statistic_parse(v->str, &r->statistic)))
		return yn_fail(&c->y, v, "'statistic' must be one of " STATISTIC_NAMES ", got %s",
			       YN_GOT(v));
	if (!(v = yn_get(n, "max_dilation")))
		return yn_fail(&c->y, n, "gate rule has no 'max_dilation'");
	if (v->type != YN_SCALAR)
		return yn_fail(&c->y, v, "'max_dilation' must be a percentage like 2%% or 0.02, got %s", YN_GOT(v));
	if (parse_percent_why(v->str, &r->max_dilation, why, sizeof(why)))
		return yn_fail(&c->y, v, "'max_dilation': %s", why);
	if (r->max_dilation < 0)
		return yn_fail(&c->y, v, "'max_dilation' must be >= 0, got %s", YN_GOT(v));
	if ((v = yn_get(n, "confidence"))) {
		if (v->type == YN_SCALAR &&
		    parse_percent_why(v->str, &r->confidence, why, sizeof(why)) == PERCENT_AMBIGUOUS)
			return yn_fail(&c->y, v, "'confidence': %s", why);
		if (v->type != YN_SCALAR || parse_percent(v->str, &r->confidence) ||
		    !(r->confidence > 0 && r->confidence < 1))
			return yn_fail(&c->y, v, "'confidence' must be a number between 0 and 1 (exclusive), got %s",
				    YN_GOT(v));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The experiment */

static const char *const experiment_keys[] = {
	"name", "description", "baseline", "repetitions", "warmup", "order", "seed",
	"timeout", "cpus", "counters", "include", "variants", "workloads", "gate",
	"deterministic", "engine", "revision", "placeholders", NULL
};

static const char *const engine_keys[] = { "slurm", NULL };
static const char *const slurm_keys[] = {
	"partition", "account", "time", "shards", "max_parallel", "sbatch_args", NULL
};

/* revision: DIR, a git work tree (relative to the file's folder) whose
 * commit every run stores (docs/experiment.md); that it is one is checked
 * when a run starts (engine/revision.h), here only that it is a folder. */
static int parse_revision(struct ctx *c, const struct ynode *v)
{
	char gotbuf[64];
	struct stat sb;
	char *dir, *real;

	if (v->type != YN_SCALAR || !*v->str)
		return yn_fail(&c->y, v, "'revision' must be the path of a git work tree, got %s",
			       YN_GOT(v));
	dir = v->str[0] == '/' || !c->y.dir ? xstrdup(v->str) : xasprintf("%s/%s", c->y.dir, v->str);
	real = realpath(dir, NULL);
	if (!real || stat(real, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		yn_fail(&c->y, v, "'revision': '%s' is not a folder", dir);
		free(real);
		free(dir);
		return -1;
	}
	free(dir);
	free(c->exp->revision);
	c->exp->revision = real;
	return 0;
}

/* engine: {slurm: {...}} (docs/experiment.md). */
static int parse_engine(struct ctx *c, const struct ynode *engine)
{
	struct slurm_settings *sl = &c->exp->slurm;
	const struct ynode *b;

	if (yn_want_map(&c->y, engine, "engine") ||
	    yn_check_keys(&c->y, engine, "engine", engine_keys))
		return -1;
	if (!(b = yn_get(engine, "slurm")))
		return 0;
	if (yn_want_map(&c->y, b, "slurm") || yn_check_keys(&c->y, b, "slurm", slurm_keys) ||
	    yn_get_str(&c->y, b, "partition", &sl->partition) ||
	    yn_get_str(&c->y, b, "account", &sl->account) ||
	    yn_get_duration(&c->y, b, "time", R_SLURM_TIME, &sl->time_s) ||
	    yn_get_count(&c->y, b, "shards", R_SHARDS, &sl->shards) ||
	    yn_get_count(&c->y, b, "max_parallel", R_MAX_PARALLEL, &sl->max_parallel))
		return -1;
	if (yn_get(b, "sbatch_args") &&
	    yn_want_strv(&c->y, yn_get(b, "sbatch_args"), "sbatch_args", 0,
			 &sl->sbatch_args.v, &sl->sbatch_args.n))
		return -1;
	return 0;
}

/*
 * order: duet runs a variant and the baseline at the same time on two CPUs
 * (docs/experiment.md): each variant may change only its own process
 * (env, wrap, cmd).  What changes the whole system would reach the
 * baseline's run beside it, so it is a design error, refused at its key;
 * so are counters (a counter set counts one process at a time) and a
 * cpus: list of fewer than two.
 */
static int check_duet(struct ctx *c, const struct ynode *root)
{
	const struct experiment *exp = c->exp;
	const struct ynode *v;

	for (size_t i = 0; i < exp->n_variants; i++) {
		const struct variant *var = &exp->variants[i];
		const char *file = c->y.file;
		int r;

		if (!var->system_key)
			continue;
		c->y.file = var->system_pos.file;
		r = yn_fail_at(&c->y, var->system_pos.line, var->system_pos.col,
			       "variant '%s': order: duet runs each variant beside the baseline, at "
			       "the same time, so a variant may change only its own process (env, "
			       "wrap, cmd); '%s:' changes the whole system, and the baseline's run "
			       "would see it too (use order: interleaved)", var->name,
			       var->system_key);
		c->y.file = file;
		return r;
	}
	if ((v = yn_get(root, "counters")) && exp->n_counters)
		return yn_fail(&c->y, yn_get_key(root, "counters"), "order: duet runs two processes "
			       "at once, and counters: count one at a time; leave counters out, or use "
			       "order: interleaved");
	if ((v = yn_get(root, "cpus")) && exp->n_cpus < 2)
		return yn_fail(&c->y, v, "order: duet runs on two CPUs at once; 'cpus' must list "
			       "at least two");
	return 0;
}

/* Does v hold block ("kernel", "bpf", "perf", "lttng": core/result.h)? */
static int variant_has_block(const struct variant *v, const char *block)
{
	if (!strcmp(block, "kernel"))
		return v->kernel != NULL;
	if (!strcmp(block, "lttng"))
		return v->lttng != NULL;
	return v->cfg_key && !strcmp(v->cfg_key, block);
}

/* A workload metric named like a tracer's accounting (trace_events, ...),
 * in a study where a variant holds that tracer's block: perturb stores
 * the name itself for that variant's runs, so it is refused. */
static int check_tracer_metrics(struct ctx *c)
{
	const struct experiment *exp = c->exp;

	for (size_t w = 0; w < exp->n_workloads; w++)
		for (size_t k = 0; k < exp->workloads[w].n_metrics; k++) {
			const struct metric_def *m = &exp->workloads[w].metrics[k];
			const struct reserved_metric *r = result_metric_reserved(m->name);
			const char *file = c->y.file;
			size_t v;
			int ret;

			if (!r || !r->block)
				continue;
			for (v = 0; v < exp->n_variants; v++)
				if (variant_has_block(&exp->variants[v], r->block))
					break;
			if (v == exp->n_variants)
				continue;
			c->y.file = m->pos.file;
			ret = yn_fail_at(&c->y, m->pos.line, m->pos.col,
					 "metric name '%s' is reserved (perturb records it itself for "
					 "variant '%s', whose %s: block it counts)", m->name,
					 exp->variants[v].name, r->block);
			c->y.file = file;
			return ret;
		}
	return 0;
}

static int parse_top(struct ctx *c, const struct ynode *root)
{
	struct experiment *exp = c->exp;
	const struct ynode *v;
	const char *s;
	char gotbuf[64];
	int order;

	if (root->type != YN_MAP)
		return yn_fail(&c->y, root, "the top level must be a mapping, got %s", YN_GOT(root));
	if (yn_check_keys(&c->y, root, "experiment", experiment_keys))
		return -1;
	if (!(v = yn_get(root, "name")))
		return yn_fail(&c->y, root, "experiment has no 'name'");
	if (yn_want_str(&c->y, v, "name", &s))
		return -1;
	if (!*s)
		return yn_fail(&c->y, v, "'name' must not be empty");
	if (!config_valid_text(s)) {
		char *shown = escape_bytes_str(s);
		yn_fail(&c->y, v, "invalid study name '%s': use %s", shown, CONFIG_TEXT_RULE);
		free(shown);
		return -1;
	}
	exp->name = xstrdup(s);
	if (yn_get_str(&c->y, root, "description", &exp->description) ||
	    yn_get_count(&c->y, root, "repetitions", R_REPETITIONS, &exp->repetitions) ||
	    yn_get_count(&c->y, root, "warmup", R_WARMUP, &exp->warmup) ||
	    yn_get_duration(&c->y, root, "timeout", R_TIMEOUT, &exp->timeout_s))
		return -1;
	if ((v = yn_get(root, "placeholders"))) {
		int on = 1;
		if (yn_get_bool(&c->y, root, "placeholders", &on))
			return -1;
		exp->verbatim = !on;
	}
	if ((v = yn_get(root, "order"))) {
		if (yn_want_enum(&c->y, v, "order", order_names, &order))
			return -1;
		exp->order = (enum run_order)order;
	}
	if ((v = yn_get(root, "seed"))) {
		char *end = NULL;
		unsigned long long seed = 0;
		errno = 0;
		if (v->type == YN_SCALAR && v->str[0] >= '0' && v->str[0] <= '9')
			seed = strtoull(v->str, &end, 10);
		if (!end || errno || *end)
			return yn_fail(&c->y, v, "'seed' must be an integer between 0 and 2^64-1, got %s",
				    YN_GOT(v));
		exp->has_seed = 1;
		exp->seed = seed;
	}
	if ((v = yn_get(root, "cpus"))) {
		if (yn_want_seq(&c->y, v, "cpus", 1))
			return -1;
		exp->cpus = xcalloc(v->n, sizeof(*exp->cpus));
		for (size_t i = 0; i < v->n; i++) {
			double x;
			long cpu;
			if (yn_want_range(&c->y, v->kids[i], "cpus", R_CPU, &x))
				return -1;
			cpu = (long)x;
			for (size_t j = 0; j < exp->n_cpus; j++)
				if (exp->cpus[j] == cpu)
					return yn_fail(&c->y, v->kids[i], "cpu %ld listed twice in 'cpus'", cpu);
			exp->cpus[exp->n_cpus++] = (int)cpu;
		}
	}
	if ((v = yn_get(root, "counters"))) {
		if (yn_want_strv(&c->y, v, "counters", 0, &exp->counters, &exp->n_counters))
			return -1;
		for (size_t i = 0; i < exp->n_counters; i++) {
			char why[512];
			if (counter_parse(exp->counters[i], NULL, why, sizeof(why)) < 0)
				return yn_fail(&c->y, v->kids[i], "%s", why);
		}
		for (size_t i = 0; i < exp->n_counters; i++)
			for (size_t j = 0; j < i; j++)
				if (!strcmp(exp->counters[i], exp->counters[j]))
					return yn_fail(&c->y, v->kids[i], "counter '%s' listed twice",
						    exp->counters[i]);
	}
	if ((v = yn_get(root, "variants")) && add_variants(c, v))
		return -1;
	if ((v = yn_get(root, "workloads")) && add_workloads(c, v))
		return -1;
	if ((v = yn_get(root, "include"))) {
		if (yn_want_seq(&c->y, v, "include", 0))
			return -1;
		for (size_t i = 0; i < v->n; i++)
			if (add_include(c, v->kids[i]))
				return -1;
	}
	if (!exp->n_variants)
		return yn_fail(&c->y, root, "experiment has no 'variants'");
	/* experiment-wide defaults of the backends' blocks (deterministic:) */
	if (yn_get_bool(&c->y, root, "deterministic", &exp->deterministic))
		return -1;
	for (size_t i = 0; i < exp->n_variants; i++)
		if (exp->variants[i].be->finish)
			exp->variants[i].be->finish(&exp->variants[i], exp);
	if (!exp->n_workloads)
		return yn_fail(&c->y, root, "experiment has no 'workloads'");

	if ((v = yn_get(root, "baseline"))) {
		if (yn_want_str(&c->y, v, "baseline", &s))
			return -1;
		if (experiment_find_variant(exp, s) < 0) {
			const char **names = xcalloc(exp->n_variants + 1, sizeof(*names));
			for (size_t i = 0; i < exp->n_variants; i++)
				names[i] = exp->variants[i].name;
			const char *sug = did_you_mean(s, names);
			if (sug)
				yn_fail(&c->y, v, "baseline '%s' is not a variant; did you mean '%s'?", s, sug);
			else
				yn_fail(&c->y, v, "baseline '%s' is not a variant", s);
			free(names);
			return -1;
		}
		exp->baseline = xstrdup(s);
	} else {
		exp->baseline = xstrdup(exp->variants[0].name);
	}

	if (exp->order == ORDER_DUET && check_duet(c, root))
		return -1;
	if (check_tracer_metrics(c))
		return -1;
	if ((v = yn_get(root, "revision")) && parse_revision(c, v))
		return -1;
	if ((v = yn_get(root, "engine")) && parse_engine(c, v))
		return -1;
	if ((v = yn_get(root, "gate"))) {
		if (yn_want_seq(&c->y, v, "gate", 0))
			return -1;
		exp->gate = xcalloc(v->n ? v->n : 1, sizeof(*exp->gate));
		for (size_t i = 0; i < v->n; i++)
			if (parse_rule(c, v->kids[i], &exp->gate[exp->n_gate++]))
				return -1;
	}
	return 0;
}

size_t config_workload_dirs(char *dirs[3])
{
	const char *env = getenv("PERTURB_WORKLOADS");
	char *bindir;

	if (env && *env) {
		dirs[0] = xstrdup(env);
		return 1;
	}
	bindir = dir_name(perturb_self_exe());
	dirs[0] = xasprintf("%s/../workloads", bindir);
	dirs[1] = xasprintf("%s/../share/perturb/workloads", bindir);
	dirs[2] = xstrdup(PERTURB_SHARE_DIR "/workloads");
	free(bindir);
	for (size_t i = 0; i < 3; i++) {
		char *real = realpath(dirs[i], NULL);	/* readable in messages */
		if (real) {
			free(dirs[i]);
			dirs[i] = real;
		}
	}
	return 3;
}

const char *config_share_workloads_dir(void)
{
	static char *dir;
	char *dirs[3];
	size_t n;

	free(dir);	/* recomputed: PERTURB_WORKLOADS may have changed */
	dir = NULL;
	n = config_workload_dirs(dirs);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (!dir && (i == n - 1 || (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))))
			dir = dirs[i];
		else
			free(dirs[i]);
	}
	return dir;
}

int config_load(const char *path, struct experiment *exp, char *err, size_t errlen)
{
	struct ctx c = { { path, NULL, err, errlen }, exp };
	struct ydoc d = { 0 };
	int ret = -1;

	if (errlen)
		err[0] = '\0';
	memset(exp, 0, sizeof(*exp));
	exp->path = xstrdup(path);
	exp->repetitions = 10;
	exp->warmup = 1;
	exp->order = ORDER_INTERLEAVED;
	exp->timeout_s = 300;
	exp->deterministic = -1;
	c.y.dir = dir_name(path);
	if (read_doc(&c, path, NULL, &d, &exp->text, &exp->text_len))
		goto out;
	ret = parse_top(&c, d.root);
out:
	yn_doc_free(&d);
	free(c.y.dir);
	if (ret)
		experiment_release(exp);
	return ret;
}

int config_load_workload(const char *path, struct experiment *holder,
			 struct workload *out, char *err, size_t errlen)
{
	struct ctx c = { { path, NULL, err, errlen }, holder };
	int ret;

	if (errlen)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	c.y.dir = dir_name(path);
	ret = load_workload_file(&c, path, NULL, NULL, out, NULL);
	free(c.y.dir);
	if (ret)
		workload_release(out);
	return ret;
}

void experiment_release(struct experiment *exp)
{
	for (size_t i = 0; i < exp->n_variants; i++)
		config_variant_release(&exp->variants[i]);
	free(exp->variants);
	for (size_t i = 0; i < exp->n_workloads; i++)
		workload_release(&exp->workloads[i]);
	free(exp->workloads);
	for (size_t i = 0; i < exp->n_gate; i++) {
		free(exp->gate[i].variant);
		free(exp->gate[i].workload);
		free(exp->gate[i].metric);
	}
	free(exp->gate);
	free(exp->path);
	free(exp->text);
	free(exp->name);
	free(exp->description);
	free(exp->baseline);
	free(exp->revision);
	free(exp->cpus);
	yn_strv_free(exp->counters, exp->n_counters);
	yn_strv_free(exp->files, exp->n_files);
	free(exp->slurm.partition);
	free(exp->slurm.account);
	yn_strv_free(exp->slurm.sbatch_args.v, exp->slurm.sbatch_args.n);
	memset(exp, 0, sizeof(*exp));
}
