/*
 * config.c - load and validate an experiment file (see config.h, SPEC.md
 * "The experiment file (YAML)").
 *
 * Two stages.  First the YAML text becomes a small tree of struct ynode,
 * built from libyaml's event stream: building it ourselves lets us stop
 * early on the defences the contract promises (nesting depth, alias
 * expansion), before libyaml's scanner does quadratic work on hostile input.
 * Then the tree is checked key by key and copied into struct experiment;
 * every message carries the position of the node it is about.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "config.h"
#include "counters/counters.h"
#include "lib/util.h"

#ifndef PERTURB_SHARE_DIR
#define PERTURB_SHARE_DIR "/usr/local/share/perturb"
#endif

#define MAX_FILE_SIZE (16u << 20)
#define MAX_NODES 10000
#define MAX_DEPTH 64

/* ------------------------------------------------------------------ */
/* The YAML tree */

enum ynode_type { YN_SCALAR, YN_SEQ, YN_MAP };

/*
 * One node.  Aliases share the anchored node, so a node may have several
 * parents; every node is owned by ydoc.all.  A mapping's kids alternate
 * key, value, key, value.
 */
struct ynode {
	enum ynode_type type;
	int line, col;		/* 1-based */
	char *str;		/* scalar value, NUL-terminated */
	size_t len;
	int plain;		/* unquoted scalar */
	struct ynode **kids;
	size_t n;
	size_t weight;		/* nodes in the subtree, aliases expanded */
};

struct ydoc {
	struct ynode *root;
	struct ynode **all;
	size_t n_all, alloc_all;
};

struct anchor {
	char *name;
	struct ynode *node;
};

/* Loading state. */
struct ctx {
	struct experiment *exp;
	const char *file;	/* the file being read, owned by exp->files */
	char *dir;		/* its folder */
	char *err;
	size_t errlen;
};

static void ydoc_free(struct ydoc *d)
{
	for (size_t i = 0; i < d->n_all; i++) {
		free(d->all[i]->str);
		free(d->all[i]->kids);
		free(d->all[i]);
	}
	free(d->all);
	memset(d, 0, sizeof(*d));
}

static struct ynode *new_node(struct ydoc *d, enum ynode_type t, const yaml_mark_t *m)
{
	struct ynode *n = xcalloc(1, sizeof(*n));
	n->type = t;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	n->weight = 1;
	ALLOC_GROW(d->all, d->n_all + 1, d->alloc_all);
	d->all[d->n_all++] = n;
	return n;
}

static void add_kid(struct ynode *parent, struct ynode *kid)
{
	parent->kids = xrealloc(parent->kids, (parent->n + 1) * sizeof(*parent->kids));
	parent->kids[parent->n++] = kid;
}

/* ------------------------------------------------------------------ */
/* Messages */

static int vfail_at(struct ctx *c, const char *file, int line, int col,
		    const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	if (line > 0)
		strbuf_addf(&sb, "%s:%d:%d: ", file, line, col);
	else
		strbuf_addf(&sb, "%s: ", file);
	strbuf_vaddf(&sb, fmt, ap);
	if (c->errlen)
		snprintf(c->err, c->errlen, "%s", sb.buf);
	strbuf_release(&sb);
	return -1;
}

static int PRINTF(4, 5) fail_at(struct ctx *c, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(c, c->file, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* Fail with a message about node n of the current file (NULL: no position). */
static int PRINTF(3, 4) fail(struct ctx *c, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(c, c->file, n ? n->line : 0, n ? n->col : 0, fmt, ap);
	va_end(ap);
	return -1;
}

/* "a mapping", "a list" or the quoted scalar (shortened), for "got ..." */
static const char *describe(const struct ynode *n, char *buf, size_t len)
{
	if (n->type == YN_MAP)
		return "a mapping";
	if (n->type == YN_SEQ)
		return "a list";
	if (n->len > 40)
		snprintf(buf, len, "'%.37s...'", n->str);
	else
		snprintf(buf, len, "'%s'", n->str);
	return buf;
}
#define GOT(n) describe((n), gotbuf, sizeof(gotbuf))

/* Where pos is, for "first at ...": LINE:COL in the current file, else FILE:LINE:COL. */
static const char *where(struct ctx *c, const struct pos *p, char *buf, size_t len)
{
	if (p->file == c->file)
		snprintf(buf, len, "%d:%d", p->line, p->col);
	else
		snprintf(buf, len, "%s:%d:%d", p->file, p->line, p->col);
	return buf;
}

static struct pos pos_of(struct ctx *c, const struct ynode *n)
{
	struct pos p = { c->file, n->line, n->col };
	return p;
}

/* ------------------------------------------------------------------ */
/* Reading YAML */

/* Position of a byte offset (libyaml reports reader errors by offset). */
static void offset_pos(const char *text, size_t len, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		unsigned char ch = (unsigned char)text[i];
		if (ch == '\n') {
			(*line)++;
			*col = 1;
		} else if ((ch & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static int yaml_error(struct ctx *c, yaml_parser_t *p, const char *text, size_t len)
{
	int line, col;
	const char *problem = p->problem ? p->problem : "unknown YAML error";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return fail(c, NULL, "out of memory while parsing YAML");
	case YAML_READER_ERROR:
		offset_pos(text, len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			return fail_at(c, line, col, "%s (0x%X)", problem, (unsigned)p->problem_value);
		return fail_at(c, line, col, "%s", problem);
	default:
		line = (int)p->problem_mark.line + 1;
		col = (int)p->problem_mark.column + 1;
		if (p->context)
			return fail_at(c, line, col, "%s (%s at %d:%d)", problem, p->context,
				       (int)p->context_mark.line + 1,
				       (int)p->context_mark.column + 1);
		return fail_at(c, line, col, "%s", problem);
	}
}

/*
 * Parse text into d.  Exactly one non-empty document is accepted.  Fails
 * (message in c) on YAML errors, nesting deeper than MAX_DEPTH, more than
 * MAX_NODES nodes counting each alias as the nodes it stands for, unknown
 * aliases.  d is always safe to ydoc_free().
 */
static int parse_yaml(struct ctx *c, const char *text, size_t len, struct ydoc *d)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct {
		struct ynode *node;
		char *anchor;
	} stack[MAX_DEPTH];
	size_t depth = 0, total = 0, n_anchors = 0, alloc_anchors = 0;
	struct anchor *anchors = NULL;
	int docs = 0, done = 0, ret = -1;

	memset(d, 0, sizeof(*d));
	if (!yaml_parser_initialize(&p))
		return fail(c, NULL, "out of memory while parsing YAML");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);

	while (!done) {
		struct ynode *n = NULL;
		const char *anchor = NULL;
		int alias = 0, bad = 0;

		if (!yaml_parser_parse(&p, &ev)) {
			yaml_error(c, &p, text, len);
			goto out;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				bad = fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      "more than one YAML document in the file");
			break;
		case YAML_SCALAR_EVENT:
			n = new_node(d, YN_SCALAR, &ev.start_mark);
			n->len = ev.data.scalar.length;
			n->str = xmalloc(n->len + 1);
			memcpy(n->str, ev.data.scalar.value, n->len);
			n->str[n->len] = '\0';
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			anchor = (const char *)ev.data.scalar.anchor;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth == MAX_DEPTH) {
				bad = fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      "nesting deeper than %d levels", MAX_DEPTH);
				break;
			}
			if (ev.type == YAML_SEQUENCE_START_EVENT) {
				n = new_node(d, YN_SEQ, &ev.start_mark);
				anchor = (const char *)ev.data.sequence_start.anchor;
			} else {
				n = new_node(d, YN_MAP, &ev.start_mark);
				anchor = (const char *)ev.data.mapping_start.anchor;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT: {
			struct ynode *top = stack[--depth].node;
			for (size_t i = 0; i < top->n; i++)
				top->weight += top->kids[i]->weight;
			if (stack[depth].anchor) {
				ALLOC_GROW(anchors, n_anchors + 1, alloc_anchors);
				anchors[n_anchors].name = stack[depth].anchor;
				anchors[n_anchors++].node = top;
			}
			break;
		}
		case YAML_ALIAS_EVENT: {
			const char *name = (const char *)ev.data.alias.anchor;
			for (size_t i = n_anchors; i-- > 0; )
				if (!strcmp(anchors[i].name, name)) {
					n = anchors[i].node;
					break;
				}
			if (!n)
				bad = fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      "unknown alias '*%s'", name);
			alias = 1;
			break;
		}
		default:
			break;
		}
		if (n && !bad) {
			total += n->weight;
			if (total > MAX_NODES) {
				bad = fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      alias ? "too many nodes (alias expansion)"
						    : "too many nodes (more than %d)", MAX_NODES);
			} else {
				if (depth)
					add_kid(stack[depth - 1].node, n);
				else
					d->root = n;
				if (n->type != YN_SCALAR && !alias) {
					stack[depth].node = n;
					stack[depth++].anchor = anchor ? xstrdup(anchor) : NULL;
				} else if (anchor) {
					ALLOC_GROW(anchors, n_anchors + 1, alloc_anchors);
					anchors[n_anchors].name = xstrdup(anchor);
					anchors[n_anchors++].node = n;
				}
			}
		}
		yaml_event_delete(&ev);
		if (bad)
			goto out;
	}
	if (!d->root || (d->root->type == YN_SCALAR && !d->root->len && d->root->plain)) {
		fail(c, NULL, "empty document");
		goto out;
	}
	ret = 0;
out:
	while (depth)
		free(stack[--depth].anchor);
	for (size_t i = 0; i < n_anchors; i++)
		free(anchors[i].name);
	free(anchors);
	yaml_parser_delete(&p);
	return ret;
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
 * caller saves and restores c->file / c->dir around this).  A read error
 * is reported at node `at` of the current file when given.  *textp gets
 * the bytes when textp is not NULL.
 */
static int read_doc(struct ctx *c, const char *path, const struct ynode *at,
		    struct ydoc *d, char **textp, size_t *lenp)
{
	struct stat st;
	size_t len = 0;
	char *text = NULL;
	int ret;

	memset(d, 0, sizeof(*d));
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		errno = EISDIR;
	else if (stat(path, &st) == 0 && st.st_size > (off_t)MAX_FILE_SIZE)
		goto too_big;
	else
		text = read_file(path, &len);
	if (!text) {
		if (at)
			return fail(c, at, "cannot read '%s': %s", path, strerror(errno));
		return fail(c, NULL, "cannot read: %s", strerror(errno));
	}
	if (len > MAX_FILE_SIZE) {
		free(text);
		goto too_big;
	}
	c->file = add_file(c->exp, path);
	free(c->dir);
	c->dir = dir_name(path);
	ret = parse_yaml(c, text, len, d);
	if (textp) {
		*textp = text;
		*lenp = len;
	} else {
		free(text);
	}
	return ret;
too_big:
	if (at)
		return fail(c, at, "'%s' is larger than 16 MiB", path);
	return fail(c, NULL, "file is larger than 16 MiB");
}

/* A path named in the current file: relative to its folder. */
static char *resolve(struct ctx *c, const char *rel)
{
	if (rel[0] == '/' || !strcmp(c->dir, "."))
		return xstrdup(rel);
	return xasprintf("%s/%s", c->dir, rel);
}

/* ------------------------------------------------------------------ */
/* Typed access to mappings */

/* The value of key in map, or NULL.  Keys have been checked unique. */
static struct ynode *get(const struct ynode *map, const char *key)
{
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (map->kids[i]->type == YN_SCALAR && !strcmp(map->kids[i]->str, key))
			return map->kids[i + 1];
	return NULL;
}

static struct ynode *get_key_node(const struct ynode *map, const char *key)
{
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (map->kids[i]->type == YN_SCALAR && !strcmp(map->kids[i]->str, key))
			return map->kids[i];
	return NULL;
}

/*
 * Keys of map must be strings, unique, and (when keys is not NULL) among
 * keys.  what names the mapping in messages ("variant").
 */
static int check_keys(struct ctx *c, const struct ynode *map, const char *what,
		      const char *const *keys)
{
	char gotbuf[64];
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct ynode *k = map->kids[i];
		if (k->type != YN_SCALAR)
			return fail(c, k, "keys in %s must be strings, got %s", what, GOT(k));
		for (size_t j = 0; j < i; j += 2)
			if (!strcmp(map->kids[j]->str, k->str))
				return fail(c, k, "duplicate key '%s' in %s (first at %d:%d)",
					    k->str, what, map->kids[j]->line, map->kids[j]->col);
		if (!keys)
			continue;
		size_t w;
		for (w = 0; keys[w]; w++)
			if (!strcmp(keys[w], k->str))
				break;
		if (keys[w])
			continue;
		const char *s = did_you_mean(k->str, keys);
		if (s)
			return fail(c, k, "unknown key '%s' in %s; did you mean '%s'?", k->str, what, s);
		return fail(c, k, "unknown key '%s' in %s", k->str, what);
	}
	return 0;
}

static int want_map(struct ctx *c, const struct ynode *n, const char *key)
{
	char gotbuf[64];
	if (n->type != YN_MAP)
		return fail(c, n, "'%s' must be a mapping, got %s", key, GOT(n));
	return 0;
}

/* The text of scalar n, or a failure naming key. */
static int want_str(struct ctx *c, const struct ynode *n, const char *key, const char **out)
{
	char gotbuf[64];
	if (n->type != YN_SCALAR)
		return fail(c, n, "'%s' must be a string, got %s", key, GOT(n));
	if (strlen(n->str) != n->len)
		return fail(c, n, "'%s' must not contain NUL characters", key);
	*out = n->str;
	return 0;
}

/* Optional string: *out untouched when absent. */
static int get_str(struct ctx *c, const struct ynode *map, const char *key, char **out)
{
	const struct ynode *v = get(map, key);
	const char *s;
	if (!v)
		return 0;
	if (want_str(c, v, key, &s))
		return -1;
	free(*out);
	*out = xstrdup(s);
	return 0;
}

static int want_long(struct ctx *c, const struct ynode *n, const char *key,
		     long min, long max, long *out)
{
	char gotbuf[64];
	if (n->type == YN_SCALAR && strlen(n->str) == n->len &&
	    !parse_long(n->str, min, max, out))
		return 0;
	if (max == LONG_MAX || max == INT_MAX)
		return fail(c, n, "'%s' must be an integer >= %ld, got %s", key, min, GOT(n));
	return fail(c, n, "'%s' must be an integer between %ld and %ld, got %s",
		    key, min, max, GOT(n));
}

/* Optional int in [min, INT_MAX]: *out untouched when absent. */
static int get_int(struct ctx *c, const struct ynode *map, const char *key, long min, int *out)
{
	const struct ynode *v = get(map, key);
	long l;
	if (!v)
		return 0;
	if (want_long(c, v, key, min, INT_MAX, &l))
		return -1;
	*out = (int)l;
	return 0;
}

/* Optional boolean (true / false only): *out untouched when absent. */
static int get_bool(struct ctx *c, const struct ynode *map, const char *key, int *out)
{
	const struct ynode *v = get(map, key);
	char gotbuf[64];
	if (!v)
		return 0;
	if (v->type == YN_SCALAR && !strcmp(v->str, "true"))
		*out = 1;
	else if (v->type == YN_SCALAR && !strcmp(v->str, "false"))
		*out = 0;
	else
		return fail(c, v, "'%s' must be true or false, got %s", key, GOT(v));
	return 0;
}

/* Optional duration, > 0: *out untouched when absent. */
static int get_timeout(struct ctx *c, const struct ynode *map, const char *key, double *out)
{
	const struct ynode *v = get(map, key);
	char gotbuf[64];
	double s;
	if (!v)
		return 0;
	if (v->type != YN_SCALAR || parse_duration(v->str, &s))
		return fail(c, v, "'%s' must be a duration like 30s or 250ms, got %s", key, GOT(v));
	if (!(s > 0))
		return fail(c, v, "'%s' must be greater than 0, got %s", key, GOT(v));
	*out = s;
	return 0;
}

/* Index of n's text in words (NULL-terminated), or a failure listing them. */
static int want_enum(struct ctx *c, const struct ynode *n, const char *key,
		     const char *const *words, int *out)
{
	char gotbuf[64];
	struct strbuf sb = STRBUF_INIT;
	if (n->type == YN_SCALAR)
		for (int i = 0; words[i]; i++)
			if (!strcmp(words[i], n->str)) {
				*out = i;
				return 0;
			}
	for (int i = 0; words[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", words[i]);
	fail(c, n, "'%s' must be one of %s, got %s", key, sb.buf, GOT(n));
	strbuf_release(&sb);
	return -1;
}

static int want_seq(struct ctx *c, const struct ynode *n, const char *key, int nonempty)
{
	char gotbuf[64];
	if (n->type != YN_SEQ)
		return fail(c, n, "'%s' must be a list, got %s", key, GOT(n));
	if (nonempty && !n->n)
		return fail(c, n, "'%s' must not be empty", key);
	return 0;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A list of strings; *v gets a NULL-terminated array (also when empty). */
static int want_strv(struct ctx *c, const struct ynode *n, const char *key, int nonempty,
		     char ***v, size_t *nv)
{
	char gotbuf[64];
	if (want_seq(c, n, key, nonempty))
		return -1;
	free_strv(*v, *nv);
	*v = xcalloc(n->n + 1, sizeof(**v));
	*nv = 0;
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *it = n->kids[i];
		if (it->type != YN_SCALAR || strlen(it->str) != it->len)
			return fail(c, it, "items of '%s' must be strings, got %s", key, GOT(it));
		(*v)[(*nv)++] = xstrdup(it->str);
	}
	return 0;
}

/* An argv: a non-empty list of strings. */
static int want_argv(struct ctx *c, const struct ynode *n, const char *key, struct argv_list *a)
{
	char gotbuf[64];
	if (n->type != YN_SEQ)
		return fail(c, n, "'%s' must be a command as a list of strings, like [cmd, arg], got %s",
			    key, GOT(n));
	return want_strv(c, n, key, 1, &a->v, &a->n);
}

static int get_argv(struct ctx *c, const struct ynode *map, const char *key, struct argv_list *a)
{
	const struct ynode *v = get(map, key);
	return v ? want_argv(c, v, key, a) : 0;
}

static void free_argv(struct argv_list *a)
{
	free_strv(a->v, a->n);
	a->v = NULL;
	a->n = 0;
}

static void free_cmds(struct argv_list *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free_argv(&v[i]);
	free(v);
}

/* A list of commands: [[cmd, arg], [cmd2]]. */
static int get_cmds(struct ctx *c, const struct ynode *map, const char *key,
		    struct argv_list **v, size_t *nv)
{
	const struct ynode *n = get(map, key);
	char gotbuf[64];
	if (!n)
		return 0;
	if (want_seq(c, n, key, 0))
		return -1;
	*v = xcalloc(n->n ? n->n : 1, sizeof(**v));
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *it = n->kids[i];
		if (it->type != YN_SEQ)
			return fail(c, it, "each command in '%s' must be a list of strings, like [cmd, arg], got %s",
				    key, GOT(it));
		(*nv)++;
		if (want_argv(c, it, key, &(*v)[i]))
			return -1;
	}
	return 0;
}

/* Names of variants, workloads and metrics: [A-Za-z0-9_.+-]+ */
static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_.+-", *s)))
			return 0;
	return 1;
}

/* The required name of a variant/workload/metric. */
static int get_name(struct ctx *c, const struct ynode *map, const char *what, char **out)
{
	const struct ynode *v = get(map, "name");
	const char *s;
	if (!v)
		return fail(c, map, "%s has no 'name'", what);
	if (want_str(c, v, "name", &s))
		return -1;
	if (!valid_name(s))
		return fail(c, v, "invalid %s name '%s': use letters, digits and _ . + -", what, s);
	*out = xstrdup(s);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Variants */

static const char *const variant_keys[] = {
	"name", "description", "env", "wrap", "setup", "teardown", "daemon",
	"daemon_ready", "background", "kernel", "boot", NULL
};
static const char *const kernel_keys[] = {
	"tracer", "events", "tracing_on", "buffer_size_kb", "functions", "options", NULL
};
static const char *const boot_keys[] = { "qemu", NULL };
static const char *const qemu_keys[] = {
	"kernel", "initrd", "cmdline", "memory", "cpus", "kvm", "config", "source",
	"boots", "deterministic", NULL
};

static int parse_env(struct ctx *c, const struct ynode *n, struct variant *v)
{
	if (want_map(c, n, "env") || check_keys(c, n, "env", NULL))
		return -1;
	v->env = xcalloc(n->n / 2 + 1, sizeof(*v->env));
	for (size_t i = 0; i + 1 < n->n; i += 2) {
		const struct ynode *k = n->kids[i], *val = n->kids[i + 1];
		const char *ks = k->str, *vs;
		int ok = (*ks < '0' || *ks > '9') && *ks;
		for (; ok && *ks; ks++)
			ok = (*ks >= 'a' && *ks <= 'z') || (*ks >= 'A' && *ks <= 'Z') ||
			     (*ks >= '0' && *ks <= '9') || *ks == '_';
		if (!ok)
			return fail(c, k, "invalid environment variable name '%s'", k->str);
		if (want_str(c, val, k->str, &vs))
			return -1;
		v->env[v->n_env].key = xstrdup(k->str);
		v->env[v->n_env++].value = xstrdup(vs);
	}
	return 0;
}

static int parse_kernel(struct ctx *c, const struct ynode *n, struct kernel_cfg *k)
{
	const struct ynode *v;
	if (want_map(c, n, "kernel") || check_keys(c, n, "kernel", kernel_keys))
		return -1;
	k->present = 1;
	k->pos = pos_of(c, n);
	if (get_str(c, n, "tracer", &k->tracer) || get_bool(c, n, "tracing_on", &k->tracing_on))
		return -1;
	if ((v = get(n, "buffer_size_kb"))) {
		if (want_long(c, v, "buffer_size_kb", 1, LONG_MAX, &k->buffer_size_kb))
			return -1;
	}
	if ((v = get(n, "events"))) {
		if (want_strv(c, v, "events", 0, &k->events, &k->n_events))
			return -1;
		for (size_t i = 0; i < k->n_events; i++)
			if (!strchr(k->events[i], ':') || k->events[i][0] == ':')
				return fail(c, v->kids[i], "event '%s' must be 'system:event' (globs allowed, like sched:*)",
					    k->events[i]);
	}
	if ((v = get(n, "functions")) && want_strv(c, v, "functions", 0, &k->functions, &k->n_functions))
		return -1;
	if ((v = get(n, "options")) && want_strv(c, v, "options", 0, &k->options, &k->n_options))
		return -1;
	return 0;
}

/* A size: bytes, or a number with K, M, G or T (powers of 1024; KiB etc. too). */
static int parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *suffix; int shift; } units[] = {
		{ "", 0 }, { "K", 10 }, { "M", 20 }, { "G", 30 }, { "T", 40 },
		{ "k", 10 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
	};
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v > (UINT64_MAX >> units[i].shift))
			return -1;
		*out = (uint64_t)v << units[i].shift;
		return 0;
	}
	return -1;
}

static int parse_boot(struct ctx *c, const struct ynode *n, struct boot_cfg *b)
{
	static const char *const kvm_words[] = { "auto", "false", "true", NULL };
	const struct ynode *q, *v;
	char gotbuf[64];
	int kvm;

	if (want_map(c, n, "boot") || check_keys(c, n, "boot", boot_keys))
		return -1;
	if (!(q = get(n, "qemu")))
		return fail(c, n, "'boot' must hold one backend, 'qemu'");
	if (want_map(c, q, "qemu") || check_keys(c, q, "qemu", qemu_keys))
		return -1;
	b->present = 1;
	b->pos = pos_of(c, n);
	b->kvm = -1;
	b->deterministic = -1;
	if (!get(q, "kernel") && !get(q, "config"))
		return fail(c, q, "'qemu' has no 'kernel' (an image, or debian) and no 'config' "
			    "(a Kconfig fragment to build one from)");
	if (get(q, "kernel") && get(q, "config"))
		return fail(c, get_key_node(q, "config"), "'qemu' has both 'kernel' and 'config'; "
			    "config: builds the kernel, give one of them");
	if (get(q, "source") && !get(q, "config"))
		return fail(c, get_key_node(q, "source"), "'source' without 'config': the "
			    "source tree is what config: builds from");
	if (get_str(c, q, "kernel", &b->kernel) || get_str(c, q, "initrd", &b->initrd) ||
	    get_str(c, q, "cmdline", &b->cmdline) || get_str(c, q, "config", &b->config) ||
	    get_str(c, q, "source", &b->source) || get_int(c, q, "cpus", 1, &b->cpus) ||
	    get_int(c, q, "boots", 1, &b->boots) ||
	    get_bool(c, q, "deterministic", &b->deterministic))
		return -1;
	if (b->kernel && !*b->kernel)
		return fail(c, get(q, "kernel"), "'kernel' must not be empty");
	if (b->config && !*b->config)
		return fail(c, get(q, "config"), "'config' must not be empty");
	if (b->source && !*b->source)
		return fail(c, get(q, "source"), "'source' must not be empty");
	/* paths in the file are relative to its folder */
	char **paths[] = { &b->kernel, &b->config, &b->source };
	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		char *r;
		if (!*paths[i] || (i == 0 && !strcmp(b->kernel, "debian")))
			continue;
		r = resolve(c, *paths[i]);
		free(*paths[i]);
		*paths[i] = r;
	}
	if ((v = get(q, "memory"))) {
		if (v->type != YN_SCALAR || parse_size(v->str, &b->memory_bytes) || !b->memory_bytes)
			return fail(c, v, "'memory' must be a size like 512M or 1G, got %s", GOT(v));
	}
	if ((v = get(q, "kvm"))) {
		if (want_enum(c, v, "kvm", kvm_words, &kvm))
			return -1;
		b->kvm = kvm - 1;
	}
	return 0;
}

/* daemon_ready: a delay, or a regex the daemon's output must match. */
static int parse_daemon_ready(struct ctx *c, const struct ynode *n, struct variant *v)
{
	const char *s;
	char msg[256];
	int rc;

	if (want_str(c, n, "daemon_ready", &s))
		return -1;
	if (!v->daemon.n)
		return fail(c, n, "'daemon_ready' without a 'daemon'");
	if (!parse_duration(s, &v->daemon_ready_s))
		return 0;
	v->daemon_ready_s = 0;
	if (!*s)
		return fail(c, n, "'daemon_ready' must be a duration or a regex, got ''");
	if ((rc = regcomp(&v->daemon_ready_re, s, REG_EXTENDED))) {
		regerror(rc, &v->daemon_ready_re, msg, sizeof(msg));
		regfree(&v->daemon_ready_re);
		return fail(c, n, "'daemon_ready' is neither a duration nor a valid regex: %s", msg);
	}
	v->daemon_ready_regex = xstrdup(s);	/* marks daemon_ready_re as compiled */
	return 0;
}

static int parse_variant(struct ctx *c, const struct ynode *n, struct variant *v)
{
	const struct ynode *x;
	char gotbuf[64];

	if (n->type != YN_MAP)
		return fail(c, n, "each variant must be a mapping, got %s", GOT(n));
	if (check_keys(c, n, "variant", variant_keys))
		return -1;
	v->pos = pos_of(c, n);
	v->kernel.tracing_on = -1;
	v->kernel.buffer_size_kb = -1;
	v->boot.kvm = -1;
	v->boot.deterministic = -1;
	if (get_name(c, n, "variant", &v->name) || get_str(c, n, "description", &v->description))
		return -1;
	if ((x = get(n, "env")) && parse_env(c, x, v))
		return -1;
	if (get_argv(c, n, "wrap", &v->wrap) || get_argv(c, n, "daemon", &v->daemon) ||
	    get_argv(c, n, "background", &v->background) ||
	    get_cmds(c, n, "setup", &v->setup, &v->n_setup) ||
	    get_cmds(c, n, "teardown", &v->teardown, &v->n_teardown))
		return -1;
	if ((x = get(n, "daemon_ready")) && parse_daemon_ready(c, x, v))
		return -1;
	if ((x = get(n, "kernel")) && parse_kernel(c, x, &v->kernel))
		return -1;
	/* kernel: with boot: is the tracing state set inside the guest */
	if ((x = get(n, "boot")) && parse_boot(c, x, &v->boot))
		return -1;
	return 0;
}

static void variant_release(struct variant *v)
{
	free(v->name);
	free(v->description);
	for (size_t i = 0; i < v->n_env; i++) {
		free(v->env[i].key);
		free(v->env[i].value);
	}
	free(v->env);
	free_argv(&v->wrap);
	free_cmds(v->setup, v->n_setup);
	free_cmds(v->teardown, v->n_teardown);
	free_argv(&v->daemon);
	if (v->daemon_ready_regex)
		regfree(&v->daemon_ready_re);
	free(v->daemon_ready_regex);
	free_argv(&v->background);
	free(v->kernel.tracer);
	free_strv(v->kernel.events, v->kernel.n_events);
	free_strv(v->kernel.functions, v->kernel.n_functions);
	free_strv(v->kernel.options, v->kernel.n_options);
	free(v->boot.kernel);
	free(v->boot.initrd);
	free(v->boot.cmdline);
	free(v->boot.config);
	free(v->boot.source);
	memset(v, 0, sizeof(*v));
}

/* ------------------------------------------------------------------ */
/* Workloads */

static const char *const workload_keys[] = {
	"name", "kind", "description", "requires", "setup", "prepare", "cmd", "shell",
	"metrics", "timeout", "repetitions", NULL
};
static const char *const metric_keys[] = { "name", "regex", "unit", NULL };
static const char *const reserved_metrics[] = { "wall", "user", "sys", "maxrss", NULL };

static int parse_metric(struct ctx *c, const struct ynode *n, struct workload *w)
{
	struct metric_def *m;
	const struct ynode *re;
	const char *src;
	char gotbuf[64], msg[256];
	int rc;

	if (n->type != YN_MAP)
		return fail(c, n, "each metric must be a mapping like {name: x, regex: '...'}, got %s",
			    GOT(n));
	if (check_keys(c, n, "metric", metric_keys))
		return -1;
	m = &w->metrics[w->n_metrics++];
	m->pos = pos_of(c, n);
	if (get_name(c, n, "metric", &m->name))
		return -1;
	for (size_t i = 0; reserved_metrics[i]; i++)
		if (!strcmp(m->name, reserved_metrics[i]))
			return fail(c, get(n, "name"),
				    "metric name '%s' is reserved (wall, user, sys and maxrss are always recorded)",
				    m->name);
	for (size_t i = 0; i < c->exp->n_counters; i++)
		if (!strcmp(c->exp->counters[i], m->name))
			return fail(c, get(n, "name"),
				    "metric name '%s' is also a counter of the experiment",
				    m->name);
	for (size_t i = 0; i + 1 < w->n_metrics; i++)
		if (!strcmp(w->metrics[i].name, m->name))
			return fail(c, get(n, "name"), "duplicate metric '%s' in workload '%s' (first at %d:%d)",
				    m->name, w->name, w->metrics[i].pos.line, w->metrics[i].pos.col);
	if (!(re = get(n, "regex")))
		return fail(c, n, "metric '%s' has no 'regex'", m->name);
	if (want_str(c, re, "regex", &src))
		return -1;
	if ((rc = regcomp(&m->re, src, REG_EXTENDED))) {
		regerror(rc, &m->re, msg, sizeof(msg));
		regfree(&m->re);
		return fail(c, re, "bad regex in metric '%s': %s", m->name, msg);
	}
	m->regex_src = xstrdup(src);	/* marks re as compiled */
	m->has_group = m->re.re_nsub >= 1;
	m->unit = xstrdup("");
	return get_str(c, n, "unit", &m->unit);
}

/*
 * A workload mapping.  w->name is set first, so that a failure later still
 * leaves a releasable workload.
 */
static int parse_workload(struct ctx *c, const struct ynode *n, struct workload *w)
{
	static const char *const kinds[] = { "real", "micro", NULL };
	const struct ynode *x, *cmd, *shell;
	char gotbuf[64];
	int kind;

	if (n->type != YN_MAP)
		return fail(c, n, "each workload must be a mapping or the name of a workload file, got %s",
			    GOT(n));
	if (check_keys(c, n, "workload", workload_keys))
		return -1;
	w->pos = pos_of(c, n);
	if (get_name(c, n, "workload", &w->name) ||
	    get_str(c, n, "description", &w->description))
		return -1;
	if ((x = get(n, "kind"))) {
		if (want_enum(c, x, "kind", kinds, &kind))
			return -1;
		w->kind = kind == 1 ? WORKLOAD_MICRO : WORKLOAD_REAL;
	}
	if ((x = get(n, "requires")) &&
	    want_strv(c, x, "requires", 0, &w->requires, &w->n_requires))
		return -1;
	if (get_cmds(c, n, "setup", &w->setup, &w->n_setup) ||
	    get_cmds(c, n, "prepare", &w->prepare, &w->n_prepare))
		return -1;
	cmd = get(n, "cmd");
	shell = get(n, "shell");
	if (cmd && shell)
		return fail(c, get_key_node(n, "shell"),
			    "workload '%s' has both 'cmd' and 'shell'; use one", w->name);
	if (!cmd && !shell)
		return fail(c, n, "workload '%s' needs 'cmd' or 'shell'", w->name);
	if (cmd && want_argv(c, cmd, "cmd", &w->cmd))
		return -1;
	if (shell) {
		if (get_str(c, n, "shell", &w->shell))
			return -1;
		if (!*w->shell)
			return fail(c, shell, "'shell' must not be empty");
	}
	if ((x = get(n, "metrics"))) {
		if (want_seq(c, x, "metrics", 0))
			return -1;
		w->metrics = xcalloc(x->n ? x->n : 1, sizeof(*w->metrics));
		for (size_t i = 0; i < x->n; i++)
			if (parse_metric(c, x->kids[i], w))
				return -1;
	}
	if (get_timeout(c, n, "timeout", &w->timeout_s) ||
	    get_int(c, n, "repetitions", 1, &w->repetitions))
		return -1;
	return 0;
}

void workload_release(struct workload *w)
{
	free(w->name);
	free(w->description);
	free_strv(w->requires, w->n_requires);
	free_cmds(w->setup, w->n_setup);
	free_cmds(w->prepare, w->n_prepare);
	free_argv(&w->cmd);
	free(w->shell);
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

static int add_variant(struct ctx *c, const struct ynode *n)
{
	struct experiment *exp = c->exp;
	struct variant *v = new_variant(exp);
	char buf[PATH_MAX + 32];

	if (parse_variant(c, n, v))
		return -1;
	for (size_t i = 0; i + 1 < exp->n_variants; i++)
		if (!strcmp(exp->variants[i].name, v->name))
			return fail(c, get(n, "name"), "duplicate variant '%s' (first at %s)",
				    v->name, where(c, &exp->variants[i].pos, buf, sizeof(buf)));
	return 0;
}

/* After a workload was appended: its name must be new. */
static int check_new_workload(struct ctx *c, const struct ynode *at)
{
	struct experiment *exp = c->exp;
	struct workload *w = &exp->workloads[exp->n_workloads - 1];
	char buf[PATH_MAX + 32];

	for (size_t i = 0; i + 1 < exp->n_workloads; i++)
		if (!strcmp(exp->workloads[i].name, w->name))
			return fail(c, at, "duplicate workload '%s' (first at %s)",
				    w->name, where(c, &exp->workloads[i].pos, buf, sizeof(buf)));
	return 0;
}

static int path_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * Load a workload file into w (same rules as a workload mapping); with
 * want_name, its name must be that.  Messages are about that file.
 */
static int load_workload_file(struct ctx *c, const char *path, const struct ynode *at,
			      const char *want_name, struct workload *w)
{
	const char *saved_file = c->file;
	char *saved_dir = xstrdup(c->dir ? c->dir : ".");
	struct ydoc d;
	char gotbuf[64];
	int ret = -1;

	if (read_doc(c, path, at, &d, NULL, NULL))
		goto out;
	if (d.root->type != YN_MAP) {
		fail(c, d.root, "a workload file must hold one mapping, got %s", GOT(d.root));
		goto out;
	}
	if (parse_workload(c, d.root, w))
		goto out;
	if (want_name && strcmp(w->name, want_name)) {
		fail(c, get(d.root, "name"), "workload file for '%s' has name '%s'",
		     want_name, w->name);
		goto out;
	}
	ret = 0;
out:
	ydoc_free(&d);
	c->file = saved_file;
	free(c->dir);
	c->dir = saved_dir;
	return ret;
}

/* A workload given by name: DIR/workloads/NAME.yaml, DIR/NAME.yaml, share. */
static int add_workload_by_name(struct ctx *c, const struct ynode *n)
{
	char *paths[3] = { NULL, NULL, NULL };
	const char *found = NULL;
	int ret = -1;

	if (!valid_name(n->str))
		return fail(c, n, "invalid workload name '%s': use letters, digits and _ . + -", n->str);
	paths[0] = strcmp(c->dir, ".") ? xasprintf("%s/workloads/%s.yaml", c->dir, n->str)
				       : xasprintf("workloads/%s.yaml", n->str);
	paths[1] = strcmp(c->dir, ".") ? xasprintf("%s/%s.yaml", c->dir, n->str)
				       : xasprintf("%s.yaml", n->str);
	paths[2] = xasprintf("%s/%s.yaml", config_share_workloads_dir(), n->str);
	for (size_t i = 0; i < 3 && !found; i++)
		if (path_is_file(paths[i]))
			found = paths[i];
	if (!found) {
		fail(c, n, "workload '%s' not found (looked for %s, %s and %s)",
		     n->str, paths[0], paths[1], paths[2]);
		goto out;
	}
	if (load_workload_file(c, found, n, n->str, new_workload(c->exp)))
		goto out;
	ret = check_new_workload(c, n);
out:
	for (size_t i = 0; i < 3; i++)
		free(paths[i]);
	return ret;
}

static int add_workloads(struct ctx *c, const struct ynode *list)
{
	if (want_seq(c, list, "workloads", 1))
		return -1;
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *it = list->kids[i];
		if (it->type == YN_SCALAR) {
			if (add_workload_by_name(c, it))
				return -1;
		} else {
			if (parse_workload(c, it, new_workload(c->exp)) ||
			    check_new_workload(c, get(it, "name")))
				return -1;
		}
	}
	return 0;
}

static int add_variants(struct ctx *c, const struct ynode *list)
{
	if (want_seq(c, list, "variants", 1))
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
	const char *saved_file = c->file, *rel;
	char *saved_dir = xstrdup(c->dir), *path = NULL;
	const struct ynode *root, *x;
	struct ydoc d = { 0 };
	char gotbuf[64];
	int ret = -1;

	if (want_str(c, item, "include", &rel))
		goto out;
	if (!*rel) {
		fail(c, item, "items of 'include' must be file names, got ''");
		goto out;
	}
	path = resolve(c, rel);
	if (read_doc(c, path, item, &d, NULL, NULL))
		goto out;
	root = d.root;
	if (root->type != YN_MAP) {
		fail(c, root, "an included file must hold a mapping, got %s", GOT(root));
		goto out;
	}
	if (get(root, "cmd") || get(root, "shell")) {
		if (parse_workload(c, root, new_workload(c->exp)) ||
		    check_new_workload(c, get(root, "name")))
			goto out;
		ret = 0;
		goto out;
	}
	if (check_keys(c, root, "included file", include_keys))
		goto out;
	if ((x = get_key_node(root, "include"))) {
		fail(c, x, "'include' is not allowed in an included file");
		goto out;
	}
	if (!get(root, "variants") && !get(root, "workloads")) {
		fail(c, root, "an included file must hold 'variants', 'workloads' or one workload");
		goto out;
	}
	if ((x = get(root, "variants")) && add_variants(c, x))
		goto out;
	if ((x = get(root, "workloads")) && add_workloads(c, x))
		goto out;
	ret = 0;
out:
	ydoc_free(&d);
	free(path);
	c->file = saved_file;
	free(c->dir);
	c->dir = saved_dir;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Gate */

static const char *const gate_keys[] = {
	"variant", "workload", "metric", "statistic", "max_dilation", "confidence", NULL
};
static const char *const statistic_names[] = { "p0", "p50", "p80", "p99", "mean", NULL };

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
	const struct ynode *v = get(map, key);
	const char *s;
	if (!v) {
		if (is_variant)
			return fail(c, map, "gate rule has no 'variant'");
		*out = xstrdup("*");
		return 0;
	}
	if (want_str(c, v, key, &s))
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
		fail(c, v, "gate rule names unknown %s '%s'; did you mean '%s'?", key, s, sug);
	else
		fail(c, v, "gate rule names unknown %s '%s'", key, s);
	free(names);
	return -1;
}

static int parse_rule(struct ctx *c, const struct ynode *n, struct gate_rule *r)
{
	const struct ynode *v;
	char gotbuf[64];
	int st;

	if (n->type != YN_MAP)
		return fail(c, n, "each gate rule must be a mapping, got %s", GOT(n));
	if (check_keys(c, n, "gate rule", gate_keys))
		return -1;
	r->pos = pos_of(c, n);
	r->statistic = STAT_P50;
	r->confidence = 0.95;
	if (get_target(c, n, "variant", 1, &r->variant) ||
	    get_target(c, n, "workload", 0, &r->workload))
		return -1;
	r->metric = xstrdup("wall");
	if (get_str(c, n, "metric", &r->metric))
		return -1;
	if (!metric_known(c->exp, r->metric))
		return fail(c, get(n, "metric"),
			    "gate rule names metric '%s', which is not recorded (not wall, user, sys, maxrss, a counter or a workload metric)",
			    r->metric);
	if ((v = get(n, "statistic"))) {
		if (want_enum(c, v, "statistic", statistic_names, &st))
			return -1;
		r->statistic = (enum statistic)st;
	}
	if (!(v = get(n, "max_dilation")))
		return fail(c, n, "gate rule has no 'max_dilation'");
	if (v->type != YN_SCALAR || parse_percent(v->str, &r->max_dilation))
		return fail(c, v, "'max_dilation' must be a percentage like 2%% or 0.02, got %s", GOT(v));
	if (r->max_dilation < 0)
		return fail(c, v, "'max_dilation' must be >= 0, got %s", GOT(v));
	if ((v = get(n, "confidence"))) {
		if (v->type != YN_SCALAR || parse_percent(v->str, &r->confidence) ||
		    !(r->confidence > 0 && r->confidence < 1))
			return fail(c, v, "'confidence' must be a number between 0 and 1 (exclusive), got %s",
				    GOT(v));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The experiment */

static const char *const experiment_keys[] = {
	"name", "description", "baseline", "repetitions", "warmup", "order", "seed",
	"timeout", "cpus", "counters", "include", "variants", "workloads", "gate",
	"deterministic", NULL
};
static const char *const order_names[] = { "interleaved", "sequential", "random", NULL };

static int parse_top(struct ctx *c, const struct ynode *root)
{
	struct experiment *exp = c->exp;
	const struct ynode *v;
	const char *s;
	char gotbuf[64];
	int order;

	if (root->type != YN_MAP)
		return fail(c, root, "the top level must be a mapping, got %s", GOT(root));
	if (check_keys(c, root, "experiment", experiment_keys))
		return -1;
	if (!(v = get(root, "name")))
		return fail(c, root, "experiment has no 'name'");
	if (want_str(c, v, "name", &s))
		return -1;
	if (!*s)
		return fail(c, v, "'name' must not be empty");
	exp->name = xstrdup(s);
	if (get_str(c, root, "description", &exp->description) ||
	    get_int(c, root, "repetitions", 1, &exp->repetitions) ||
	    get_int(c, root, "warmup", 0, &exp->warmup) ||
	    get_timeout(c, root, "timeout", &exp->timeout_s))
		return -1;
	if ((v = get(root, "order"))) {
		if (want_enum(c, v, "order", order_names, &order))
			return -1;
		exp->order = (enum run_order)order;
	}
	if ((v = get(root, "seed"))) {
		char *end = NULL;
		unsigned long long seed = 0;
		errno = 0;
		if (v->type == YN_SCALAR && v->str[0] >= '0' && v->str[0] <= '9')
			seed = strtoull(v->str, &end, 10);
		if (!end || errno || *end)
			return fail(c, v, "'seed' must be an integer between 0 and 2^64-1, got %s",
				    GOT(v));
		exp->has_seed = 1;
		exp->seed = seed;
	}
	if ((v = get(root, "cpus"))) {
		if (want_seq(c, v, "cpus", 1))
			return -1;
		exp->cpus = xcalloc(v->n, sizeof(*exp->cpus));
		for (size_t i = 0; i < v->n; i++) {
			long cpu;
			if (want_long(c, v->kids[i], "cpus", 0, INT_MAX, &cpu))
				return -1;
			for (size_t j = 0; j < exp->n_cpus; j++)
				if (exp->cpus[j] == cpu)
					return fail(c, v->kids[i], "cpu %ld listed twice in 'cpus'", cpu);
			exp->cpus[exp->n_cpus++] = (int)cpu;
		}
	}
	if ((v = get(root, "counters"))) {
		if (want_strv(c, v, "counters", 0, &exp->counters, &exp->n_counters))
			return -1;
		for (size_t i = 0; i < exp->n_counters; i++) {
			char why[512];
			if (counter_parse(exp->counters[i], NULL, why, sizeof(why)) < 0)
				return fail(c, v->kids[i], "%s", why);
		}
		for (size_t i = 0; i < exp->n_counters; i++)
			for (size_t j = 0; j < i; j++)
				if (!strcmp(exp->counters[i], exp->counters[j]))
					return fail(c, v->kids[i], "counter '%s' listed twice",
						    exp->counters[i]);
	}
	if ((v = get(root, "variants")) && add_variants(c, v))
		return -1;
	if ((v = get(root, "workloads")) && add_workloads(c, v))
		return -1;
	if ((v = get(root, "include"))) {
		if (want_seq(c, v, "include", 0))
			return -1;
		for (size_t i = 0; i < v->n; i++)
			if (add_include(c, v->kids[i]))
				return -1;
	}
	if (!exp->n_variants)
		return fail(c, root, "experiment has no 'variants'");
	if ((v = get(root, "deterministic"))) {
		/* every boot: variant's default; a variant's own value wins */
		int det;
		if (get_bool(c, root, "deterministic", &det))
			return -1;
		for (size_t i = 0; i < exp->n_variants; i++)
			if (exp->variants[i].boot.present && exp->variants[i].boot.deterministic < 0)
				exp->variants[i].boot.deterministic = det;
	}
	if (!exp->n_workloads)
		return fail(c, root, "experiment has no 'workloads'");

	if ((v = get(root, "baseline"))) {
		if (want_str(c, v, "baseline", &s))
			return -1;
		if (experiment_find_variant(exp, s) < 0) {
			const char **names = xcalloc(exp->n_variants + 1, sizeof(*names));
			for (size_t i = 0; i < exp->n_variants; i++)
				names[i] = exp->variants[i].name;
			const char *sug = did_you_mean(s, names);
			if (sug)
				fail(c, v, "baseline '%s' is not a variant; did you mean '%s'?", s, sug);
			else
				fail(c, v, "baseline '%s' is not a variant", s);
			free(names);
			return -1;
		}
		exp->baseline = xstrdup(s);
	} else {
		exp->baseline = xstrdup(exp->variants[0].name);
	}

	if ((v = get(root, "gate"))) {
		if (want_seq(c, v, "gate", 0))
			return -1;
		exp->gate = xcalloc(v->n ? v->n : 1, sizeof(*exp->gate));
		for (size_t i = 0; i < v->n; i++)
			if (parse_rule(c, v->kids[i], &exp->gate[exp->n_gate++]))
				return -1;
	}
	return 0;
}

const char *config_share_workloads_dir(void)
{
	const char *env = getenv("PERTURB_WORKLOADS");
	return env && *env ? env : PERTURB_SHARE_DIR "/workloads";
}

int config_load(const char *path, struct experiment *exp, char *err, size_t errlen)
{
	struct ctx c = { exp, path, NULL, err, errlen };
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
	c.dir = dir_name(path);
	if (read_doc(&c, path, NULL, &d, &exp->text, &exp->text_len))
		goto out;
	ret = parse_top(&c, d.root);
out:
	ydoc_free(&d);
	free(c.dir);
	if (ret)
		experiment_release(exp);
	return ret;
}

int config_load_workload(const char *path, struct experiment *holder,
			 struct workload *out, char *err, size_t errlen)
{
	struct ctx c = { holder, path, NULL, err, errlen };
	int ret;

	if (errlen)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	c.dir = dir_name(path);
	ret = load_workload_file(&c, path, NULL, NULL, out);
	free(c.dir);
	if (ret)
		workload_release(out);
	return ret;
}

void experiment_release(struct experiment *exp)
{
	for (size_t i = 0; i < exp->n_variants; i++)
		variant_release(&exp->variants[i]);
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
	free(exp->cpus);
	free_strv(exp->counters, exp->n_counters);
	free_strv(exp->files, exp->n_files);
	memset(exp, 0, sizeof(*exp));
}

const char *statistic_name(enum statistic s)
{
	return (unsigned)s < ARRAY_SIZE(statistic_names) - 1 ? statistic_names[s] : "?";
}

const char *order_name(enum run_order o)
{
	return (unsigned)o < ARRAY_SIZE(order_names) - 1 ? order_names[o] : "?";
}

int experiment_find_variant(const struct experiment *exp, const char *name)
{
	for (size_t i = 0; i < exp->n_variants; i++)
		if (!strcmp(exp->variants[i].name, name))
			return (int)i;
	return -1;
}

int experiment_find_workload(const struct experiment *exp, const char *name)
{
	for (size_t i = 0; i < exp->n_workloads; i++)
		if (!strcmp(exp->workloads[i].name, name))
			return (int)i;
	return -1;
}

int workload_repetitions(const struct experiment *exp, const struct workload *w)
{
	return w->repetitions > 0 ? w->repetitions : exp->repetitions;
}

double workload_timeout(const struct experiment *exp, const struct workload *w)
{
	return w->timeout_s > 0 ? w->timeout_s : exp->timeout_s;
}
