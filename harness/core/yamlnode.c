/*
 * yamlnode.c - YAML documents as trees of positioned nodes, and typed
 * access that fails with positioned messages (see yamlnode.h).
 *
 * The tree is built from libyaml's event stream here rather than taken from
 * libyaml's document API: building it ourselves lets us stop early on the
 * defences (nesting depth, alias expansion), before libyaml's scanner does
 * quadratic work on hostile input.
 */
#include "yamlnode.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ------------------------------------------------------------------ */
/* The YAML tree */

struct anchor {
	char *name;
	struct ynode *node;
};

void yn_doc_free(struct ydoc *d)
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

struct ynode *yn_new(struct ydoc *d, enum ynode_type t, const struct ynode *at,
		     const char *str, size_t len)
{
	yaml_mark_t m = { 0 };
	struct ynode *n;

	m.line = at && at->line > 0 ? (size_t)at->line - 1 : 0;
	m.column = at && at->col > 0 ? (size_t)at->col - 1 : 0;
	n = new_node(d, t, &m);
	if (t == YN_SCALAR) {
		n->str = xmalloc(len + 1);
		memcpy(n->str, str, len);
		n->str[len] = '\0';
		n->len = len;
		n->plain = at ? at->plain : 1;
	}
	return n;
}

void yn_add_kid(struct ynode *parent, struct ynode *kid)
{
	add_kid(parent, kid);
	parent->weight += kid->weight;
}

/* ------------------------------------------------------------------ */
/* Messages */

static int vfail_at(struct yn_ctx *c, const char *file, int line, int col,
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

int yn_fail_at(struct yn_ctx *c, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(c, c->file, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* Fail with a message about node n of the current file (NULL: no position). */
int yn_fail(struct yn_ctx *c, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail_at(c, c->file, n ? n->line : 0, n ? n->col : 0, fmt, ap);
	va_end(ap);
	return -1;
}

/* "a mapping", "a list" or the quoted scalar (shortened), for "got ..." */
const char *yn_describe(const struct ynode *n, char *buf, size_t len)
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

struct pos yn_pos(struct yn_ctx *c, const struct ynode *n)
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

static int yaml_error(struct yn_ctx *c, yaml_parser_t *p, const char *text, size_t len)
{
	int line, col;
	const char *problem = p->problem ? p->problem : "unknown YAML error";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return yn_fail(c, NULL, "out of memory while parsing YAML");
	case YAML_READER_ERROR:
		offset_pos(text, len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			return yn_fail_at(c, line, col, "%s (0x%X)", problem, (unsigned)p->problem_value);
		return yn_fail_at(c, line, col, "%s", problem);
	default:
		line = (int)p->problem_mark.line + 1;
		col = (int)p->problem_mark.column + 1;
		if (p->context)
			return yn_fail_at(c, line, col, "%s (%s at %d:%d)", problem, p->context,
				       (int)p->context_mark.line + 1,
				       (int)p->context_mark.column + 1);
		return yn_fail_at(c, line, col, "%s", problem);
	}
}

/* A merge key: a plain "<<" (YAML 1.1's tag:yaml.org,2002:merge). */
static int is_merge_key(const struct ynode *k)
{
	return k->type == YN_SCALAR && k->plain && !strcmp(k->str, "<<");
}

/* Does map (its first n kids) hold key k? */
static int has_key(const struct ynode *map, size_t n, const struct ynode *k)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		if (map->kids[i]->type == YN_SCALAR && k->type == YN_SCALAR &&
		    !strcmp(map->kids[i]->str, k->str))
			return 1;
	return 0;
}

/*
 * Apply the merge key of map, YAML 1.1's "<<" (https://yaml.org/type/merge.html):
 * its value, a mapping or a list of mappings (aliases, as a rule), lends
 * map the keys it does not have itself; of a list, the earlier mapping
 * wins.  The merge key itself is removed, the lent pairs are appended
 * after map's own (they keep the positions they have where they were
 * written).  Mappings are closed inner first, so a merged mapping has
 * had its own merge applied.
 */
static int merge_keys(struct yn_ctx *c, struct ynode *map)
{
	const struct ynode *merge = NULL, *mkey = NULL;
	struct ynode **kids;
	size_t n = 0;
	char gotbuf[64];

	for (size_t i = 0; i + 1 < map->n; i += 2) {
		if (!is_merge_key(map->kids[i]))
			continue;
		if (merge)
			return yn_fail(c, map->kids[i], "duplicate key '<<' in a mapping (first at %d:%d)",
				       mkey->line, mkey->col);
		mkey = map->kids[i];
		merge = map->kids[i + 1];
	}
	if (!merge)
		return 0;
	if (merge->type == YN_SEQ) {
		for (size_t j = 0; j < merge->n; j++)
			if (merge->kids[j]->type != YN_MAP)
				return yn_fail(c, merge->kids[j], "the items of a merge key '<<' must be mappings, got %s",
					       YN_GOT(merge->kids[j]));
	} else if (merge->type != YN_MAP) {
		return yn_fail(c, merge, "a merge key '<<' takes a mapping or a list of mappings, got %s",
			       YN_GOT(merge));
	}

	size_t room = map->n;
	for (size_t j = 0; j < (merge->type == YN_SEQ ? merge->n : 1); j++)
		room += (merge->type == YN_SEQ ? merge->kids[j] : merge)->n;
	kids = xcalloc(room ? room : 1, sizeof(*kids));
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (!is_merge_key(map->kids[i])) {
			kids[n++] = map->kids[i];
			kids[n++] = map->kids[i + 1];
		}
	for (size_t j = 0; j < (merge->type == YN_SEQ ? merge->n : 1); j++) {
		const struct ynode *from = merge->type == YN_SEQ ? merge->kids[j] : merge;
		for (size_t i = 0; i + 1 < from->n; i += 2) {
			struct ynode tmp = { .kids = kids };
			if (has_key(&tmp, n, from->kids[i]))
				continue;
			kids[n++] = from->kids[i];
			kids[n++] = from->kids[i + 1];
		}
	}
	free(map->kids);
	map->kids = kids;
	map->n = n;
	return 0;
}

/* A !!binary scalar (base64): its bytes as n's string, which a C string
 * holds only without a NUL byte.  0, or -1 (the message in c). */
static int binary_scalar(struct yn_ctx *c, struct ynode *n, const yaml_event_t *ev)
{
	struct strbuf sb = STRBUF_INIT;
	int bad = base64_decode((const char *)ev->data.scalar.value, ev->data.scalar.length,
				&sb) < 0;

	n->len = sb.len;
	n->str = strbuf_detach(&sb);
	if (bad)
		return yn_fail(c, n, "a !!binary string must be base64 (RFC 4648)");
	if (strlen(n->str) != n->len)
		return yn_fail(c, n, "a !!binary string holds a NUL byte, which no argument, "
			       "name or path can hold");
	return 0;
}

/*
 * Parse text into d.  Exactly one non-empty document is accepted.  Fails
 * (message in c) on YAML errors, nesting deeper than YN_MAX_DEPTH, more than
 * YN_MAX_NODES nodes written out, aliases standing for more than
 * YN_MAX_ALIASED nodes in all, unknown aliases.  d is always safe to
 * yn_doc_free().
 */
int yn_parse(struct yn_ctx *c, const char *text, size_t len, struct ydoc *d)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct {
		struct ynode *node;
		char *anchor;
	} stack[YN_MAX_DEPTH];
	size_t depth = 0, written = 0, aliased = 0, n_anchors = 0, alloc_anchors = 0;
	struct anchor *anchors = NULL;
	int docs = 0, done = 0, ret = -1;

	memset(d, 0, sizeof(*d));
	if (!yaml_parser_initialize(&p))
		return yn_fail(c, NULL, "out of memory while parsing YAML");
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
				bad = yn_fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      "more than one YAML document in the file");
			break;
		case YAML_SCALAR_EVENT:
			n = new_node(d, YN_SCALAR, &ev.start_mark);
			if (ev.data.scalar.tag &&
			    !strcmp((const char *)ev.data.scalar.tag, YN_BINARY_TAG)) {
				bad = binary_scalar(c, n, &ev);
			} else {
				n->len = ev.data.scalar.length;
				n->str = xmalloc(n->len + 1);
				memcpy(n->str, ev.data.scalar.value, n->len);
				n->str[n->len] = '\0';
			}
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			anchor = (const char *)ev.data.scalar.anchor;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth == YN_MAX_DEPTH) {
				bad = yn_fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      "nesting deeper than %d levels", YN_MAX_DEPTH);
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
			if (top->type == YN_MAP && merge_keys(c, top)) {
				free(stack[depth].anchor);
				bad = -1;
				break;
			}
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
				bad = yn_fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      "unknown alias '*%s'", name);
			alias = 1;
			break;
		}
		default:
			break;
		}
		if (n && !bad) {
			if (alias)
				aliased += n->weight;
			else
				written++;
			if (aliased > YN_MAX_ALIASED || written > YN_MAX_NODES) {
				bad = yn_fail_at(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      alias ? "too many nodes (alias expansion)"
						    : "too many nodes (more than %d)", YN_MAX_NODES);
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
		yn_fail(c, NULL, "empty document");
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

/* A path named in the current file: relative to its folder. */
char *yn_resolve(struct yn_ctx *c, const char *rel)
{
	if (rel[0] == '/' || !strcmp(c->dir, "."))
		return xstrdup(rel);
	return xasprintf("%s/%s", c->dir, rel);
}

/* ------------------------------------------------------------------ */
/* Typed access to mappings */

/* The value of key in map, or NULL.  Keys have been checked unique. */
struct ynode *yn_get(const struct ynode *map, const char *key)
{
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (map->kids[i]->type == YN_SCALAR && !strcmp(map->kids[i]->str, key))
			return map->kids[i + 1];
	return NULL;
}

struct ynode *yn_get_key(const struct ynode *map, const char *key)
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
int yn_check_keys(struct yn_ctx *c, const struct ynode *map, const char *what,
		      const char *const *keys)
{
	char gotbuf[64];
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct ynode *k = map->kids[i];
		if (k->type != YN_SCALAR)
			return yn_fail(c, k, "keys in %s must be strings, got %s", what, YN_GOT(k));
		for (size_t j = 0; j < i; j += 2)
			if (!strcmp(map->kids[j]->str, k->str))
				return yn_fail(c, k, "duplicate key '%s' in %s (first at %d:%d)",
					    k->str, what, map->kids[j]->line, map->kids[j]->col);
		if (!keys || !strncmp(k->str, "x-", 2))
			continue;
		size_t w;
		for (w = 0; keys[w]; w++)
			if (!strcmp(keys[w], k->str))
				break;
		if (keys[w])
			continue;
		const char *s = did_you_mean(k->str, keys);
		if (s)
			return yn_fail(c, k, "unknown key '%s' in %s; did you mean '%s'?", k->str, what, s);
		return yn_fail(c, k, "unknown key '%s' in %s", k->str, what);
	}
	return 0;
}

int yn_want_map(struct yn_ctx *c, const struct ynode *n, const char *key)
{
	char gotbuf[64];
	if (n->type != YN_MAP)
		return yn_fail(c, n, "'%s' must be a mapping, got %s", key, YN_GOT(n));
	return 0;
}

/* The text of scalar n, or a failure naming key. */
int yn_want_str(struct yn_ctx *c, const struct ynode *n, const char *key, const char **out)
{
	char gotbuf[64];
	if (n->type != YN_SCALAR)
		return yn_fail(c, n, "'%s' must be a string, got %s", key, YN_GOT(n));
	if (strlen(n->str) != n->len)
		return yn_fail(c, n, "'%s' must not contain NUL characters", key);
	*out = n->str;
	return 0;
}

/* Optional string: *out untouched when absent. */
int yn_get_str(struct yn_ctx *c, const struct ynode *map, const char *key, char **out)
{
	const struct ynode *v = yn_get(map, key);
	const char *s;
	if (!v)
		return 0;
	if (yn_want_str(c, v, key, &s))
		return -1;
	free(*out);
	*out = xstrdup(s);
	return 0;
}

int yn_want_long(struct yn_ctx *c, const struct ynode *n, const char *key,
		     long min, long max, long *out)
{
	char gotbuf[64];
	if (n->type == YN_SCALAR && strlen(n->str) == n->len &&
	    !parse_long(n->str, min, max, out))
		return 0;
	if (max == LONG_MAX || max == INT_MAX)
		return yn_fail(c, n, "'%s' must be an integer >= %ld, got %s", key, min, YN_GOT(n));
	return yn_fail(c, n, "'%s' must be an integer between %ld and %ld, got %s",
		    key, min, max, YN_GOT(n));
}

int yn_want_range(struct yn_ctx *c, const struct ynode *n, const char *key,
		  enum range_id r, double *out)
{
	char gotbuf[64], what[128];

	if (n->type == YN_SCALAR && strlen(n->str) == n->len &&
	    !range_parse(&ranges[r], n->str, out))
		return 0;
	return yn_fail(c, n, "'%s' must be %s, got %s", key,
		       range_describe(&ranges[r], what, sizeof(what)), YN_GOT(n));
}

/* Optional count: *out untouched when absent. */
int yn_get_count(struct yn_ctx *c, const struct ynode *map, const char *key,
		 enum range_id r, int *out)
{
	const struct ynode *v = yn_get(map, key);
	double x;

	if (!v)
		return 0;
	if (yn_want_range(c, v, key, r, &x))
		return -1;
	*out = (int)x;
	return 0;
}

/* Optional boolean (true / false only): *out untouched when absent. */
int yn_get_bool(struct yn_ctx *c, const struct ynode *map, const char *key, int *out)
{
	const struct ynode *v = yn_get(map, key);
	char gotbuf[64];
	if (!v)
		return 0;
	if (v->type == YN_SCALAR && !strcmp(v->str, "true"))
		*out = 1;
	else if (v->type == YN_SCALAR && !strcmp(v->str, "false"))
		*out = 0;
	else
		return yn_fail(c, v, "'%s' must be true or false, got %s", key, YN_GOT(v));
	return 0;
}

/* Optional duration: *out untouched when absent. */
int yn_get_duration(struct yn_ctx *c, const struct ynode *map, const char *key,
		    enum range_id r, double *out)
{
	const struct ynode *v = yn_get(map, key);

	return v ? yn_want_range(c, v, key, r, out) : 0;
}

/* Optional size: *out untouched when absent. */
int yn_get_size(struct yn_ctx *c, const struct ynode *map, const char *key,
		enum range_id r, uint64_t *out)
{
	const struct ynode *v = yn_get(map, key);
	double x;

	if (!v)
		return 0;
	if (yn_want_range(c, v, key, r, &x))
		return -1;
	*out = (uint64_t)x;
	return 0;
}

/* Index of n's text in words (NULL-terminated), or a failure listing them. */
int yn_want_enum(struct yn_ctx *c, const struct ynode *n, const char *key,
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
	yn_fail(c, n, "'%s' must be one of %s, got %s", key, sb.buf, YN_GOT(n));
	strbuf_release(&sb);
	return -1;
}

int yn_want_seq(struct yn_ctx *c, const struct ynode *n, const char *key, int nonempty)
{
	char gotbuf[64];
	if (n->type != YN_SEQ)
		return yn_fail(c, n, "'%s' must be a list, got %s", key, YN_GOT(n));
	if (nonempty && !n->n)
		return yn_fail(c, n, "'%s' must not be empty", key);
	return 0;
}

void yn_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A list of strings; *v gets a NULL-terminated array (also when empty). */
int yn_want_strv(struct yn_ctx *c, const struct ynode *n, const char *key, int nonempty,
		     char ***v, size_t *nv)
{
	char gotbuf[64];
	if (yn_want_seq(c, n, key, nonempty))
		return -1;
	yn_strv_free(*v, *nv);
	*v = xcalloc(n->n + 1, sizeof(**v));
	*nv = 0;
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *it = n->kids[i];
		if (it->type != YN_SCALAR || strlen(it->str) != it->len)
			return yn_fail(c, it, "items of '%s' must be strings, got %s", key, YN_GOT(it));
		(*v)[(*nv)++] = xstrdup(it->str);
	}
	return 0;
}

/* An argv: a non-empty list of strings. */
int yn_want_argv(struct yn_ctx *c, const struct ynode *n, const char *key, struct argv_list *a)
{
	char gotbuf[64];
	if (n->type != YN_SEQ)
		return yn_fail(c, n, "'%s' must be a command as a list of strings, like [cmd, arg], got %s",
			    key, YN_GOT(n));
	return yn_want_strv(c, n, key, 1, &a->v, &a->n);
}

int yn_get_argv(struct yn_ctx *c, const struct ynode *map, const char *key, struct argv_list *a)
{
	const struct ynode *v = yn_get(map, key);
	return v ? yn_want_argv(c, v, key, a) : 0;
}

void yn_argv_free(struct argv_list *a)
{
	yn_strv_free(a->v, a->n);
	a->v = NULL;
	a->n = 0;
}

void yn_cmds_free(struct argv_list *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		yn_argv_free(&v[i]);
	free(v);
}

/* A list of commands: [[cmd, arg], [cmd2]]. */
int yn_get_cmds(struct yn_ctx *c, const struct ynode *map, const char *key,
		    struct argv_list **v, size_t *nv)
{
	const struct ynode *n = yn_get(map, key);
	char gotbuf[64];
	if (!n)
		return 0;
	if (yn_want_seq(c, n, key, 0))
		return -1;
	*v = xcalloc(n->n ? n->n : 1, sizeof(**v));
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *it = n->kids[i];
		if (it->type != YN_SEQ)
			return yn_fail(c, it, "each command in '%s' must be a list of strings, like [cmd, arg], got %s",
				    key, YN_GOT(it));
		(*nv)++;
		if (yn_want_argv(c, it, key, &(*v)[i]))
			return -1;
	}
	return 0;
}

