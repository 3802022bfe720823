/*
 * matrix.c - a mapping's matrix: its instances, with placeholders replaced
 * (see matrix.h and docs/experiment.md, "Matrices").
 */
#include "matrix.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

static int ident_start(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int ident_char(char ch)
{
	return ident_start(ch) || (ch >= '0' && ch <= '9');
}

/* Characters a value may have to be part of an instance's name. */
static int label_char(char ch)
{
	return ident_char(ch) || (ch && strchr(".+-:*/%@", ch));
}

/* The placeholders filled when a run starts (docs/experiment.md): never a
 * matrix parameter's, left as they are. */
static const char *const run_placeholders[] = {
	"workdir", "perturb", "micro", "logdir", "variant", "tracefs", NULL
};

static int is_run_placeholder(const char *s, size_t len)
{
	for (size_t i = 0; run_placeholders[i]; i++)
		if (strlen(run_placeholders[i]) == len && !strncmp(run_placeholders[i], s, len))
			return 1;
	return 0;
}

static int cmp_params(const void *a, const void *b)
{
	return strcmp(((const struct matrix_param *)a)->name,
		      ((const struct matrix_param *)b)->name);
}

/* The value's text in a name: the scalar, or a list's items joined by '+'. */
static char *value_label(const struct ynode *v)
{
	struct strbuf sb = STRBUF_INIT;
	if (v->type == YN_SCALAR)
		return xstrdup(v->str);
	for (size_t i = 0; i < v->n; i++)
		strbuf_addf(&sb, "%s%s", i ? "+" : "", v->kids[i]->str);
	return strbuf_detach(&sb);
}

/* One value of a parameter: a scalar, or a non-empty list of scalars;
 * either must make a name. */
static int check_value(struct yn_ctx *y, const struct matrix_param *p, const struct ynode *v)
{
	char gotbuf[64];
	int ret = 0;

	if (v->type == YN_MAP)
		return yn_fail(y, v, "values of matrix parameter '%s' must be scalars or lists, got %s",
			       p->name, YN_GOT(v));
	if (v->type == YN_SEQ) {
		if (!v->n)
			return yn_fail(y, v, "a value of matrix parameter '%s' is an empty list", p->name);
		for (size_t i = 0; i < v->n; i++)
			if (v->kids[i]->type != YN_SCALAR)
				return yn_fail(y, v->kids[i], "items of a value of matrix parameter '%s' must be scalars, got %s",
					       p->name, YN_GOT(v->kids[i]));
	}
	char *label = value_label(v);
	const char *s = label;
	if (!*s)
		ret = yn_fail(y, v, "matrix parameter '%s' has an empty value", p->name);
	for (; !ret && *s; s++)
		if (!label_char(*s))
			ret = yn_fail(y, v, "matrix value '%s' cannot be part of a name: use letters, digits and _ . + - : * / %% @",
				      label);
	free(label);
	return ret;
}

int matrix_read(struct yn_ctx *y, const struct ynode *owner, const char *what,
		const char *base, struct matrix *m)
{
	const struct ynode *n = yn_get(owner, "matrix");
	double product = 1;
	char gotbuf[64];

	memset(m, 0, sizeof(*m));
	if (!n)
		return 0;
	if (n->type != YN_MAP)
		return yn_fail(y, n, "'matrix' must be a mapping of parameters to lists of values, like {size: [1M, 8M]}, got %s",
			       YN_GOT(n));
	if (!n->n)
		return yn_fail(y, n, "'matrix' of %s '%s' has no parameters", what, base);
	if (yn_check_keys(y, n, "matrix", NULL))
		return -1;
	if (n->n / 2 > MATRIX_MAX_PARAMS)
		return yn_fail(y, n, "'matrix' of %s '%s' has %zu parameters, more than %d",
			       what, base, n->n / 2, MATRIX_MAX_PARAMS);
	m->node = n;
	for (size_t i = 0; i + 1 < n->n; i += 2) {
		struct matrix_param *p = &m->p[m->n_params++];
		const char *s = n->kids[i]->str;
		p->key = n->kids[i];
		p->name = s;
		p->values = n->kids[i + 1];
		if (!ident_start(*s))
			goto bad_name;
		for (; *s; s++)
			if (!ident_char(*s))
				goto bad_name;
		if (is_run_placeholder(p->name, strlen(p->name)))
			return yn_fail(y, p->key, "'%s' cannot be a matrix parameter: {%s} is filled when a run starts",
				       p->name, p->name);
		if (p->values->type != YN_SEQ)
			return yn_fail(y, p->values, "matrix parameter '%s' must be a list of values, got %s",
				       p->name, YN_GOT(p->values));
		if (!p->values->n)
			return yn_fail(y, p->values, "matrix parameter '%s' has an empty list of values", p->name);
		for (size_t j = 0; j < p->values->n; j++) {
			const struct ynode *v = p->values->kids[j];
			if (check_value(y, p, v))
				return -1;
			for (size_t k = 0; k < j; k++) {
				const struct ynode *w = p->values->kids[k];
				char *a = value_label(v), *b = value_label(w);
				int same = !strcmp(a, b);
				free(b);
				if (same) {
					yn_fail(y, v, "matrix parameter '%s' lists '%s' twice (first at %d:%d): "
						"the instances would have one name", p->name, a, w->line, w->col);
					free(a);
					return -1;
				}
				free(a);
			}
		}
		product *= (double)p->values->n;
		continue;
bad_name:
		return yn_fail(y, p->key, "invalid matrix parameter name '%s': use letters, digits and _, not first a digit",
			       p->name);
	}
	if (product > MATRIX_MAX_INSTANCES)
		return yn_fail(y, n, "'matrix' of %s '%s' gives %.0f instances, more than %d",
			       what, base, product, MATRIX_MAX_INSTANCES);
	m->n_instances = (size_t)product;
	qsort(m->p, m->n_params, sizeof(m->p[0]), cmp_params);
	return 0;
}

/* The value of each parameter in instance i: the last one varies fastest. */
static void choose(const struct matrix *m, size_t i, const struct ynode **chosen)
{
	for (size_t k = m->n_params; k-- > 0; ) {
		size_t len = m->p[k].values->n;
		chosen[k] = m->p[k].values->kids[i % len];
		i /= len;
	}
}

struct subst {
	struct yn_ctx *y;
	const struct matrix *m;
	const struct ynode **chosen;
	int used[MATRIX_MAX_PARAMS];
	struct ydoc *scratch;
};

/* The parameter named s[0..len), or -1. */
static int find_param(const struct matrix *m, const char *s, size_t len)
{
	for (size_t k = 0; k < m->n_params; k++)
		if (strlen(m->p[k].name) == len && !strncmp(m->p[k].name, s, len))
			return (int)k;
	return -1;
}

static int unknown_placeholder(struct subst *x, const struct ynode *n, const char *s, size_t len)
{
	const char *names[MATRIX_MAX_PARAMS + 1] = { NULL };
	struct strbuf list = STRBUF_INIT;
	char *name = xstrndup(s, len);
	const char *sug;

	for (size_t k = 0; k < x->m->n_params; k++) {
		names[k] = x->m->p[k].name;
		strbuf_addf(&list, "%s%s", k ? ", " : "", names[k]);
	}
	sug = did_you_mean(name, names);
	if (sug)
		yn_fail(x->y, n, "unknown placeholder '{%s}'; did you mean '{%s}'? (matrix parameters: %s)",
			name, sug, list.buf);
	else
		yn_fail(x->y, n, "unknown placeholder '{%s}' (matrix parameters: %s; '{{' is a literal '{')",
			name, list.buf);
	free(name);
	strbuf_release(&list);
	return -1;
}

/* Scalar n with its placeholders replaced: *out is n itself when it has
 * none, the chosen value when n is exactly one, else a new scalar. */
static int subst_scalar(struct subst *x, const struct ynode *n, const struct ynode **out)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s = n->str, *end = n->str + n->len;
	int changed = 0;

	while (s < end) {
		const char *id = s + 1, *e = id;
		if (*s == '{' && s + 1 < end && s[1] == '{') {
			strbuf_add(&sb, "{", 1);
			s += 2;
			changed = 1;
			continue;
		}
		if (*s != '{' || (s > n->str && s[-1] == '$') || !ident_start(*id)) {
			strbuf_add(&sb, s++, 1);
			continue;
		}
		while (e < end && ident_char(*e))
			e++;
		if (e >= end || *e != '}') {
			strbuf_add(&sb, s++, 1);
			continue;
		}
		int k = find_param(x->m, id, (size_t)(e - id));
		if (k < 0 && is_run_placeholder(id, (size_t)(e - id))) {
			strbuf_add(&sb, s, (size_t)(e + 1 - s));
			s = e + 1;
			continue;
		}
		if (k < 0) {
			strbuf_release(&sb);
			return unknown_placeholder(x, n, id, (size_t)(e - id));
		}
		x->used[k] = 1;
		const struct ynode *v = x->chosen[k];
		if (s == n->str && e + 1 == end) {	/* the whole scalar */
			strbuf_release(&sb);
			*out = v;
			return 0;
		}
		if (v->type != YN_SCALAR) {
			strbuf_release(&sb);
			return yn_fail(x->y, n, "matrix parameter '%s' is a list: '{%s}' must be the whole value",
				       x->m->p[k].name, x->m->p[k].name);
		}
		strbuf_add(&sb, v->str, v->len);
		changed = 1;
		s = e + 1;
	}
	*out = changed ? yn_new(x->scratch, YN_SCALAR, n, sb.buf, sb.len) : n;
	strbuf_release(&sb);
	return 0;
}

/* n with its placeholders replaced; at the top (the owner), the keys
 * name and matrix are left out of the replacing. */
static int subst_node(struct subst *x, const struct ynode *n, int top, const struct ynode **out)
{
	struct ynode *copy;

	if (n->type == YN_SCALAR)
		return subst_scalar(x, n, out);
	copy = yn_new(x->scratch, n->type, n, NULL, 0);
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *kid = n->kids[i], *r = kid;
		if (n->type == YN_MAP && i % 2 == 0) {
			if (top && kid->type == YN_SCALAR && !strcmp(kid->str, "matrix")) {
				i++;
				continue;
			}
			yn_add_kid(copy, (struct ynode *)kid);
			if (top && kid->type == YN_SCALAR && !strcmp(kid->str, "name"))
				yn_add_kid(copy, n->kids[++i]);
			continue;
		}
		if (subst_node(x, kid, 0, &r))
			return -1;
		yn_add_kid(copy, (struct ynode *)r);
	}
	*out = copy;
	return 0;
}

void matrix_values_free(struct matrix_value *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].param);
		free(v[i].value);
	}
	free(v);
}

/* A value on a numeric axis: a number, a size (8M), a list's length. */
static double axis_value(const struct ynode *v)
{
	double d;
	uint64_t size;

	if (v->type == YN_SEQ)
		return (double)v->n;
	if (!parse_double(v->str, &d))
		return d;
	if (!parse_size(v->str, &size))
		return (double)size;
	return NAN;
}

int matrix_instance(struct yn_ctx *y, const struct matrix *m, size_t i,
		    const struct ynode *owner, const char *base, struct ydoc *scratch,
		    const struct ynode **out, char **name, struct matrix_value **vals)
{
	const struct ynode *chosen[MATRIX_MAX_PARAMS];
	struct subst x = { y, m, chosen, { 0 }, scratch };
	struct strbuf sb = STRBUF_INIT;
	struct matrix_value *v;

	*name = NULL;
	*vals = NULL;
	choose(m, i, chosen);
	if (subst_node(&x, owner, 1, out))
		return -1;
	for (size_t k = 0; i == 0 && k < m->n_params; k++)
		if (!x.used[k])
			return yn_fail(y, m->p[k].key, "matrix parameter '%s' is used nowhere: write '{%s}' where its value goes",
				       m->p[k].name, m->p[k].name);
	v = xcalloc(m->n_params, sizeof(*v));
	strbuf_addf(&sb, "%s[", base);
	for (size_t k = 0; k < m->n_params; k++) {
		v[k].param = xstrdup(m->p[k].name);
		v[k].value = value_label(chosen[k]);
		v[k].is_list = chosen[k]->type == YN_SEQ;
		v[k].x = axis_value(chosen[k]);
		strbuf_addf(&sb, "%s%s=%s", k ? "," : "", v[k].param, v[k].value);
	}
	strbuf_addstr(&sb, "]");
	*name = strbuf_detach(&sb);
	*vals = v;
	return 0;
}
