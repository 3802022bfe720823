/*
 * config_variant.c - one variant's mapping of an experiment file: its
 * common keys (env, wrap, setup, teardown, daemon, background, kernel:,
 * lttng:) and its backend's block (config_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "matrix.h"
#include "backends/backend.h"
#include "lib/util.h"

/* Every variant's keys; each backend's key follows (backends/backend.h). */
static const char *const common_keys[] = {
	"name", "description", "env", "wrap", "cmd", "setup", "teardown", "daemon",
	"daemon_ready", "background", "kernel", "lttng", "matrix", NULL
};
static const char *const kernel_keys[] = {
	"tracer", "events", "tracing_on", "buffer_size_kb", "functions", "options", NULL
};

static int parse_env(struct ctx *c, const struct ynode *n, struct variant *v)
{
	if (yn_want_map(&c->y, n, "env") || yn_check_keys(&c->y, n, "env", NULL))
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
			return yn_fail(&c->y, k, "invalid environment variable name '%s'", k->str);
		if (yn_want_str(&c->y, val, k->str, &vs))
			return -1;
		v->env[v->n_env].key = xstrdup(k->str);
		v->env[v->n_env++].value = xstrdup(vs);
	}
	return 0;
}

static int parse_kernel(struct ctx *c, const struct ynode *n, struct variant *var)
{
	const struct ynode *v;
	struct ktrace_spec *k;

	if (yn_want_map(&c->y, n, "kernel") || yn_check_keys(&c->y, n, "kernel", kernel_keys))
		return -1;
	k = var->kernel = xmalloc(sizeof(*k));
	*k = (struct ktrace_spec)KTRACE_SPEC_INIT;
	var->kernel_pos = yn_pos(&c->y, n);
	if (yn_get_str(&c->y, n, "tracer", &k->tracer) || yn_get_bool(&c->y, n, "tracing_on", &k->tracing_on))
		return -1;
	if ((v = yn_get(n, "buffer_size_kb"))) {
		double kb;
		if (yn_want_range(&c->y, v, "buffer_size_kb", R_BUFFER_SIZE_KB, &kb))
			return -1;
		k->buffer_size_kb = (long)kb;
	}
	if ((v = yn_get(n, "events"))) {
		if (yn_want_strv(&c->y, v, "events", 0, &k->events, &k->n_events))
			return -1;
		for (size_t i = 0; i < k->n_events; i++)
			if (!strchr(k->events[i], ':') || k->events[i][0] == ':')
				return yn_fail(&c->y, v->kids[i], "event '%s' must be 'system:event' (globs allowed, like sched:*)",
					    k->events[i]);
	}
	if ((v = yn_get(n, "functions")) && yn_want_strv(&c->y, v, "functions", 0, &k->functions, &k->n_functions))
		return -1;
	if ((v = yn_get(n, "options")) && yn_want_strv(&c->y, v, "options", 0, &k->options, &k->n_options))
		return -1;
	return 0;
}

/* ---- lttng: (docs/experiment.md, "lttng") ---- */

static const char *const lttng_keys[] = { "kernel", "userspace", "preload", "channel", NULL };
static const char *const lttng_channel_keys[] = { "subbuf_size", "subbuf_count", "mode", NULL };
static const char *const lttng_preloads[] = { "libc", "pthread", "dl", NULL };
static const char *const lttng_modes[] = { "discard", "overwrite", NULL };

/* A name LTTng takes: letters, digits, _ (and * when glob). */
static int lttng_name_ok(const char *s, int glob)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || (glob && *s == '*')))
			return 0;
	return 1;
}

/* A kernel event: a tracepoint (globs allowed), syscall:NAME or syscalls. */
static int lttng_kernel_event(struct ctx *c, const struct ynode *it, const char *e)
{
	static const char *const prefixes[] = { "syscall", "syscalls", NULL };
	const char *colon = strchr(e, ':'), *dym;

	if (!strcmp(e, "syscalls") || (colon && !strncmp(e, "syscall:", 8) &&
					lttng_name_ok(colon + 1, 0)) ||
	    (!colon && lttng_name_ok(e, 1)))
		return 0;
	if (colon) {
		char *pre = xstrndup(e, (size_t)(colon - e));
		dym = strcmp(pre, "syscall") ? did_you_mean(pre, prefixes) : NULL;
		free(pre);
		if (dym)
			return yn_fail(&c->y, it, "lttng: kernel event '%s': did you mean "
				       "'syscall:%s'?", e, colon + 1);
	}
	return yn_fail(&c->y, it, "lttng: kernel event '%s' must be a tracepoint name (like "
		       "sched_switch, globs allowed), 'syscall:NAME' or 'syscalls'", e);
}

static int parse_lttng_channel(struct ctx *c, const struct ynode *n, struct lttng_spec *l)
{
	const struct ynode *v;
	double x;
	int mode;

	if (yn_want_map(&c->y, n, "channel") ||
	    yn_check_keys(&c->y, n, "channel", lttng_channel_keys))
		return -1;
	if ((v = yn_get(n, "subbuf_size"))) {
		if (yn_want_range(&c->y, v, "subbuf_size", R_LTTNG_SUBBUF_SIZE, &x))
			return -1;
		l->subbuf_size = (unsigned long)x;
		if (l->subbuf_size & (l->subbuf_size - 1))
			return yn_fail(&c->y, v, "'subbuf_size' must be a power of two, like 256K, "
				       "got '%s'", v->str);
	}
	if ((v = yn_get(n, "subbuf_count"))) {
		if (yn_want_range(&c->y, v, "subbuf_count", R_LTTNG_SUBBUF_COUNT, &x))
			return -1;
		l->subbuf_count = (unsigned)x;
		if (l->subbuf_count & (l->subbuf_count - 1))
			return yn_fail(&c->y, v, "'subbuf_count' must be a power of two, like 4, "
				       "got '%s'", v->str);
	}
	if ((v = yn_get(n, "mode"))) {
		if (yn_want_enum(&c->y, v, "mode", lttng_modes, &mode))
			return -1;
		l->overwrite = mode == 1;
	}
	return 0;
}

static int parse_lttng(struct ctx *c, const struct ynode *n, struct variant *var)
{
	const struct ynode *v;
	struct lttng_spec *l;

	if (yn_want_map(&c->y, n, "lttng") || yn_check_keys(&c->y, n, "lttng", lttng_keys))
		return -1;
	l = var->lttng = xcalloc(1, sizeof(*l));
	if ((v = yn_get(n, "kernel"))) {
		if (yn_want_strv(&c->y, v, "kernel", 1, &l->kernel, &l->n_kernel))
			return -1;
		for (size_t i = 0; i < l->n_kernel; i++)
			if (lttng_kernel_event(c, v->kids[i], l->kernel[i]))
				return -1;
	}
	if ((v = yn_get(n, "userspace"))) {
		if (yn_want_strv(&c->y, v, "userspace", 1, &l->user, &l->n_user))
			return -1;
		for (size_t i = 0; i < l->n_user; i++)
			if (!*l->user[i] || strpbrk(l->user[i], " \t\n,"))
				return yn_fail(&c->y, v->kids[i], "lttng: userspace pattern '%s' must be "
					       "one event pattern, like 'provider:*' (no spaces or "
					       "commas)", l->user[i]);
	}
	if ((v = yn_get(n, "preload"))) {
		if (yn_want_strv(&c->y, v, "preload", 1, &l->preload, &l->n_preload))
			return -1;
		for (size_t i = 0; i < l->n_preload; i++) {
			int k;
			if (yn_want_enum(&c->y, v->kids[i], "preload", lttng_preloads, &k))
				return -1;
		}
	}
	if ((v = yn_get(n, "channel")) && parse_lttng_channel(c, v, l))
		return -1;
	if (!l->n_kernel && !l->n_user && !l->n_preload)
		return yn_fail(&c->y, n, "lttng: needs events: 'kernel', 'userspace' or 'preload'");
	return 0;
}

static void lttng_spec_free(struct lttng_spec *l)
{
	if (!l)
		return;
	yn_strv_free(l->kernel, l->n_kernel);
	yn_strv_free(l->user, l->n_user);
	yn_strv_free(l->preload, l->n_preload);
	free(l);
}

/* daemon_ready: a delay, or a regex the daemon's output must match. */
static int parse_daemon_ready(struct ctx *c, const struct ynode *n, struct variant *v)
{
	const char *s;
	char msg[256];
	int rc;

	if (yn_want_str(&c->y, n, "daemon_ready", &s))
		return -1;
	if (!v->daemon.n)
		return yn_fail(&c->y, n, "'daemon_ready' without a 'daemon'");
	if (!parse_duration(s, &v->daemon_ready_s))	/* a delay: within its range */
		return yn_want_range(&c->y, n, "daemon_ready", R_DAEMON_READY, &v->daemon_ready_s);
	v->daemon_ready_s = 0;
	if (!*s)
		return yn_fail(&c->y, n, "'daemon_ready' must be a duration or a regex, got ''");
	if ((rc = regcomp(&v->daemon_ready_re, s, REG_EXTENDED))) {
		regerror(rc, &v->daemon_ready_re, msg, sizeof(msg));
		regfree(&v->daemon_ready_re);
		return yn_fail(&c->y, n, "'daemon_ready' is neither a duration nor a valid regex: %s", msg);
	}
	v->daemon_ready_regex = xstrdup(s);	/* marks daemon_ready_re as compiled */
	return 0;
}

/* The variant keys: common_keys, then the backends' keys (NULL-terminated,
 * malloc'd). */
static const char **variant_keys(void)
{
	size_t n = ARRAY_SIZE(common_keys) - 1, alloc = 0;
	const struct backend *be;
	struct backend_block k;
	const char **keys = NULL;

	ALLOC_GROW(keys, n + 1, alloc);
	memcpy(keys, common_keys, n * sizeof(*keys));
	for (size_t i = 0; (be = backend_at(i)); i++)
		for (size_t j = 0; backend_block_at(be, j, &k) == 0; j++) {
			ALLOC_GROW(keys, n + 2, alloc);
			keys[n++] = k.key;
		}
	keys[n] = NULL;
	return keys;
}

/*
 * The variant's backend: the one whose key it holds (at most one key of
 * any backend), else the default; the block goes to that key's parse().
 */
static int parse_backend(struct ctx *c, const struct ynode *n, struct variant *v)
{
	const struct ynode *key = NULL, *x;
	const struct backend *be;
	struct backend_block k, blk = { 0 };

	v->be = backend_default();
	v->cfg_pos = v->pos;
	for (size_t i = 0; (be = backend_at(i)); i++) {
		for (size_t j = 0; backend_block_at(be, j, &k) == 0; j++) {
			if (!(x = yn_get_key(n, k.key)))
				continue;
			if (key) {
				/* said at the second of the two in the file */
				int x_first = x->line < key->line ||
					      (x->line == key->line && x->col < key->col);
				const struct ynode *first = x_first ? x : key;
				const struct ynode *second = x_first ? key : x;
				return yn_fail(&c->y, second, "variant '%s' has both '%s' and '%s'; "
					       "one backend block serves a variant", v->name,
					       first->str, second->str);
			}
			key = x;
			blk = k;
			v->be = be;
		}
	}
	if (!key)
		return 0;
	x = yn_get(n, key->str);
	v->cfg_pos = yn_pos(&c->y, x);
	v->cfg_key = blk.key;
	v->cfg = xcalloc(1, blk.cfg_size ? blk.cfg_size : 1);
	return blk.parse(&c->y, x, v->cfg);
}

/* v->system_key and its position: the first (in file order) of the keys
 * that change the whole system, not the variant's process alone. */
static void note_system_key(struct ctx *c, const struct ynode *n, struct variant *v)
{
	static const char *const system_keys[] = { "kernel", "daemon", "background", "setup",
						   "teardown", NULL };

	for (size_t i = 0; i + 1 < n->n; i += 2) {
		const struct ynode *k = n->kids[i];
		const char *hit = v->cfg && v->be->key && !strcmp(k->str, v->be->key) ?
				  v->be->key : NULL;

		for (size_t j = 0; !hit && system_keys[j]; j++)
			if (!strcmp(k->str, system_keys[j]))
				hit = system_keys[j];
		if (hit) {
			v->system_key = hit;
			v->system_pos = yn_pos(&c->y, k);
			return;
		}
	}
}

int config_parse_variant(struct ctx *c, const struct ynode *n, struct variant *v)
{
	const struct ynode *x;
	const char **keys;
	char gotbuf[64];
	int r;

	if (n->type != YN_MAP)
		return yn_fail(&c->y, n, "each variant must be a mapping, got %s", YN_GOT(n));
	keys = variant_keys();
	r = yn_check_keys(&c->y, n, "variant", keys);
	free(keys);
	if (r)
		return -1;
	v->pos = yn_pos(&c->y, n);
	if (get_name(c, n, "variant", &v->name) || yn_get_str(&c->y, n, "description", &v->description))
		return -1;
	if ((x = yn_get(n, "env")) && parse_env(c, x, v))
		return -1;
	if (yn_get_argv(&c->y, n, "wrap", &v->wrap) || yn_get_argv(&c->y, n, "cmd", &v->cmd) ||
	    yn_get_argv(&c->y, n, "daemon", &v->daemon) ||
	    yn_get_argv(&c->y, n, "background", &v->background) ||
	    yn_get_cmds(&c->y, n, "setup", &v->setup, &v->n_setup) ||
	    yn_get_cmds(&c->y, n, "teardown", &v->teardown, &v->n_teardown))
		return -1;
	if ((x = yn_get(n, "daemon_ready")) && parse_daemon_ready(c, x, v))
		return -1;
	if ((x = yn_get(n, "kernel")) && parse_kernel(c, x, v))
		return -1;
	if ((x = yn_get(n, "lttng")) && parse_lttng(c, x, v))
		return -1;
	/* kernel: with boot: is the tracing state set inside the guest */
	if (parse_backend(c, n, v))
		return -1;
	note_system_key(c, n, v);
	if (v->cmd.n && v->be != &backend_host)
		return yn_fail(&c->y, yn_get(n, "cmd"), "variant '%s': cmd: is not supported with %s: "
			       "(the guest holds the workloads' programs only)", v->name, v->be->key);
	return 0;
}

void config_variant_release(struct variant *v)
{
	free(v->name);
	free(v->base);
	matrix_values_free(v->matrix, v->n_matrix);
	free(v->description);
	for (size_t i = 0; i < v->n_env; i++) {
		free(v->env[i].key);
		free(v->env[i].value);
	}
	free(v->env);
	yn_argv_free(&v->wrap);
	yn_argv_free(&v->cmd);
	yn_cmds_free(v->setup, v->n_setup);
	yn_cmds_free(v->teardown, v->n_teardown);
	yn_argv_free(&v->daemon);
	if (v->daemon_ready_regex)
		regfree(&v->daemon_ready_re);
	free(v->daemon_ready_regex);
	yn_argv_free(&v->background);
	if (v->kernel)
		ktrace_spec_release(v->kernel);
	free(v->kernel);
	if (v->cfg) {
		struct backend_block k;
		for (size_t j = 0; backend_block_at(v->be, j, &k) == 0; j++)
			if (!strcmp(k.key, v->cfg_key) && k.release)
				k.release(v->cfg);
	}
	lttng_spec_free(v->lttng);
	free(v->cfg);
	memset(v, 0, sizeof(*v));
}
