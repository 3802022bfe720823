/*
 * matrix.h - a workload's or a variant's matrix: one instance per
 * combination of parameter values (docs/experiment.md, "Matrices").
 *
 *     - name: gzip
 *       matrix: {level: [1, 6], size: [1M, 8M]}
 *       cmd: [gzip, '-{level}', '-c', 'in-{size}']
 *
 * gives four workloads, gzip[level=1,size=1M] ... gzip[level=6,size=8M]:
 * the parameters in the name sorted by name, the instances in the order of
 * the cartesian product with the last parameter (by name) varying fastest.
 *
 * Placeholders: in every scalar of the mapping but its name and matrix:
 * keys, "{p}" (p an identifier) is the value of parameter p; "${p}" is left
 * alone (the shell's), and so are the placeholders filled when a run
 * starts ({workdir}, {perturb}, {micro}, {logdir}, {variant}, {tracefs}),
 * which no parameter may be named; "{{" is a literal "{".  A scalar that is exactly
 * "{p}" becomes p's value as it is written, a list too (a list of events).
 * An unknown placeholder, a parameter used nowhere, an empty list of
 * values, a value that cannot be part of a name, two values giving one name
 * and more than MATRIX_MAX_INSTANCES instances are errors, at the node
 * they are about.
 */
#ifndef PERTURB_MATRIX_H
#define PERTURB_MATRIX_H

#include <stddef.h>
#include "core/yamlnode.h"

#define MATRIX_MAX_PARAMS 8
/* The cap of one mapping's instances: each instance is a workload or a
 * variant of its own, every one run repetitions times against every other */
#define MATRIX_MAX_INSTANCES 64

struct matrix_param {
	const char *name;
	const struct ynode *key, *values;	/* values: a non-empty list */
};

struct matrix {
	const struct ynode *node;	/* the matrix: mapping; NULL: none */
	struct matrix_param p[MATRIX_MAX_PARAMS];	/* sorted by name */
	size_t n_params;
	size_t n_instances;
};

/*
 * Read the matrix: of owner, a mapping (what: "workload" or "variant",
 * base: its name, for messages).  0 with m->node NULL when owner has none.
 */
int matrix_read(struct yn_ctx *y, const struct ynode *owner, const char *what,
		const char *base, struct matrix *m);

/*
 * Instance i (< m->n_instances) of owner: *out is owner without its
 * matrix: key and with its placeholders replaced (new nodes belong to
 * scratch, the others stay owner's document's; free scratch after *out is
 * read), *name "base[p=v,...]" and *vals the m->n_params values, both
 * malloc'd (matrix_values_free()).  Instance 0 also checks that every
 * parameter is used.
 */
int matrix_instance(struct yn_ctx *y, const struct matrix *m, size_t i,
		    const struct ynode *owner, const char *base, struct ydoc *scratch,
		    const struct ynode **out, char **name, struct matrix_value **vals);
void matrix_values_free(struct matrix_value *v, size_t n);

#endif
