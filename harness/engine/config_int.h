/*
 * config_int.h - what the files of the experiment loader share (config.h
 * is its interface): config.c reads a file, its top level, lists,
 * includes, matrices and gate rules; config_variant.c one variant's
 * mapping, config_workload.c one workload's.  Private to config*.c.
 */
#ifndef PERTURB_CONFIG_INT_H
#define PERTURB_CONFIG_INT_H

#include <string.h>

#include "config.h"
#include "core/experiment.h"
#include "core/yamlnode.h"
#include "lib/util.h"

/* Loading state. */
struct ctx {
	struct yn_ctx y;	/* the file being read (y.file owned by exp->files) */
	struct experiment *exp;
};

/* Names of variants, workloads and metrics: [A-Za-z0-9_.+-]+ */
static inline int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_.+-", *s)))
			return 0;
	return 1;
}

/* The required name of a variant or workload (config_valid_name()), or of
 * a metric (valid_name()). */
static inline int get_name(struct ctx *c, const struct ynode *map, const char *what, char **out)
{
	const struct ynode *v = yn_get(map, "name");
	int metric = !strcmp(what, "metric");
	const char *s;
	if (!v)
		return yn_fail(&c->y, map, "%s has no 'name'", what);
	if (yn_want_str(&c->y, v, "name", &s))
		return -1;
	if (metric ? !valid_name(s) : !config_valid_name(s)) {
		char *shown = escape_bytes_str(s);
		yn_fail(&c->y, v, "invalid %s name '%s': use %s", what, shown,
			metric ? "letters, digits and _ . + -" : CONFIG_NAME_RULE);
		free(shown);
		return -1;
	}
	*out = xstrdup(s);
	return 0;
}

/* Parse variant mapping n into v (zeroed by the caller).  0, or -1 with
 * the message in c->y; what was read stays in v either way, for
 * config_variant_release(). */
int config_parse_variant(struct ctx *c, const struct ynode *n, struct variant *v);
/* Free what config_parse_variant() put in v, and zero it. */
void config_variant_release(struct variant *v);

/* Parse workload mapping n into w, as config_parse_variant(). */
int config_parse_workload(struct ctx *c, const struct ynode *n, struct workload *w);

#endif
