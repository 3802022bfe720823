/*
 * yamlnode.h - a YAML document as a small tree of nodes with positions, and
 * typed access to it that fails with positioned messages.
 *
 * The experiment loader (engine/config.c) reads files with it, and a
 * variant backend parses its own block (backend.h: parse()) with the same
 * functions, so that every message of the experiment file has one form:
 * "FILE:LINE:COL: message" (1-based), or "FILE: message" without a node.
 *
 * Merge keys (YAML 1.1, "<<: *anchor" and "<<: [*a, *b]") are applied by
 * yn_parse(): a mapping's own keys win over merged ones, an earlier mapping
 * of the list over a later one, and the "<<" key is gone from the tree, so
 * every reader of a mapping sees the merged result.
 *
 * yn_parse() builds the tree from libyaml's event stream itself, so that
 * the defences stop hostile input early: nesting deeper than YN_MAX_DEPTH,
 * more than YN_MAX_NODES nodes written out, aliases that stand for more
 * than YN_MAX_ALIASED nodes in all (a "billion laughs"), unknown aliases,
 * more than one document, an empty one.  The nodes written out are bounded
 * by the file's size anyway; their limit lets a one-liner's command of a
 * few hundred thousand words (what the kernel passes: ARG_MAX) load.
 *
 * A scalar tagged !!binary (YAML's tag:yaml.org,2002:binary) is base64
 * and stands for its bytes, so that what is not UTF-8 (a Latin-1 file name
 * in a command) can be written in a YAML file; bytes that hold a NUL are
 * refused.
 *
 * Errors: every yn_want_* / yn_get_* / yn_check_keys / yn_fail function
 * returns 0, or -1 after writing one message into c->err (always
 * NUL-terminated, truncated to c->errlen).  yn_get_*(map, key) leave *out
 * untouched when key is absent; yn_want_*(node) require the node.  Strings
 * handed out are malloc'd copies; what yn_want_strv / yn_want_argv /
 * yn_get_cmds filled is freed with yn_strv_free / yn_argv_free /
 * yn_cmds_free, also after a failure halfway.
 */
#ifndef PERTURB_YAMLNODE_H
#define PERTURB_YAMLNODE_H

#include <stddef.h>
#include <stdint.h>
#include "experiment.h"
#include "lib/range.h"
#include "lib/util.h"

#define YN_MAX_NODES 1000000
#define YN_MAX_ALIASED 10000
#define YN_BINARY_TAG "tag:yaml.org,2002:binary"
#define YN_MAX_DEPTH 64

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

/* The file being read: where messages go, what positions name. */
struct yn_ctx {
	const char *file;	/* its name, as positions carry it (not copied) */
	char *dir;		/* its folder, for yn_resolve() */
	char *err;		/* the message of a failure */
	size_t errlen;
};

/* Parse text into d: exactly one non-empty document.  d is always safe to
 * yn_doc_free(). */
int yn_parse(struct yn_ctx *c, const char *text, size_t len, struct ydoc *d);
void yn_doc_free(struct ydoc *d);

/*
 * Building trees (engine/matrix.c makes a workload's instances this way):
 * a new node owned by d, at the position of at (none when NULL); a scalar
 * gets a copy of str[0..len) and at's plainness.  yn_add_kid() appends
 * kid (owned by any document that outlives parent) to a list or mapping.
 */
struct ynode *yn_new(struct ydoc *d, enum ynode_type t, const struct ynode *at,
		     const char *str, size_t len);
void yn_add_kid(struct ynode *parent, struct ynode *kid);

/* A failure about node n of the current file (NULL: no position), or at a
 * line and column; both return -1. */
int yn_fail(struct yn_ctx *c, const struct ynode *n, const char *fmt, ...) PRINTF(3, 4);
int yn_fail_at(struct yn_ctx *c, int line, int col, const char *fmt, ...) PRINTF(4, 5);
/* "a mapping", "a list" or the quoted scalar (shortened), for "got ..."; with
 * a char gotbuf[64] in scope, YN_GOT(n) is that. */
const char *yn_describe(const struct ynode *n, char *buf, size_t len);
#define YN_GOT(n) yn_describe((n), gotbuf, sizeof(gotbuf))
struct pos yn_pos(struct yn_ctx *c, const struct ynode *n);
/* A path named in the current file: relative to its folder (malloc'd). */
char *yn_resolve(struct yn_ctx *c, const char *rel);

/* The value (or the key node) of key in map, or NULL. */
struct ynode *yn_get(const struct ynode *map, const char *key);
struct ynode *yn_get_key(const struct ynode *map, const char *key);
/*
 * Keys of map must be strings, unique, and (when keys is not NULL) among
 * keys: an unknown key is "unknown key 'K' in WHAT", with "; did you mean
 * 'X'?" when did_you_mean() (lib/util.h) finds one.  what names the mapping ("variant").
 * With keys, a key beginning "x-" is an extension field, never unknown: a
 * place for anchors that merge keys use (docs/experiment.md).
 */
int yn_check_keys(struct yn_ctx *c, const struct ynode *map, const char *what,
		  const char *const *keys);

int yn_want_map(struct yn_ctx *c, const struct ynode *n, const char *key);
int yn_want_seq(struct yn_ctx *c, const struct ynode *n, const char *key, int nonempty);
/* The text of scalar n (not copied). */
int yn_want_str(struct yn_ctx *c, const struct ynode *n, const char *key, const char **out);
int yn_want_long(struct yn_ctx *c, const struct ynode *n, const char *key,
		 long min, long max, long *out);
/* Index of n's text in words (NULL-terminated); the failure lists them. */
int yn_want_enum(struct yn_ctx *c, const struct ynode *n, const char *key,
		 const char *const *words, int *out);
/* A list of strings; *v gets a NULL-terminated array (also when empty). */
int yn_want_strv(struct yn_ctx *c, const struct ynode *n, const char *key, int nonempty,
		 char ***v, size_t *nv);
/* A command: a non-empty list of strings. */
int yn_want_argv(struct yn_ctx *c, const struct ynode *n, const char *key, struct argv_list *a);

/*
 * A duration, count or size: n's text read and checked against its row of
 * lib/range.h (the one check of every such key), or "'KEY' must be
 * <range_describe()>, got 'TEXT'" at n.
 */
int yn_want_range(struct yn_ctx *c, const struct ynode *n, const char *key,
		  enum range_id r, double *out);

/* Optional values of map (absent: *out untouched). */
int yn_get_str(struct yn_ctx *c, const struct ynode *map, const char *key, char **out);
/* a count of row r (lib/range.h) */
int yn_get_count(struct yn_ctx *c, const struct ynode *map, const char *key,
		 enum range_id r, int *out);
/* true or false only */
int yn_get_bool(struct yn_ctx *c, const struct ynode *map, const char *key, int *out);
/* a duration of row r, like 30s or 250ms */
int yn_get_duration(struct yn_ctx *c, const struct ynode *map, const char *key,
		    enum range_id r, double *out);
/* a size of row r, like 512M */
int yn_get_size(struct yn_ctx *c, const struct ynode *map, const char *key,
		enum range_id r, uint64_t *out);
int yn_get_argv(struct yn_ctx *c, const struct ynode *map, const char *key, struct argv_list *a);
/* A list of commands: [[cmd, arg], [cmd2]]. */
int yn_get_cmds(struct yn_ctx *c, const struct ynode *map, const char *key,
		struct argv_list **v, size_t *nv);

void yn_strv_free(char **v, size_t n);
void yn_argv_free(struct argv_list *a);
void yn_cmds_free(struct argv_list *v, size_t n);

#endif
