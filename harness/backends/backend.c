/* backend.c - backend table and helpers shared by backends; see backend.h */
#include "backend.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/*
 * The table: the default backend (no key) first.  Adding a backend: its
 * file, and one row here.
 */
int backend_dry_run;

static const struct backend *const backends[] = {
	&backend_host,
	&backend_qemu,
};

/* Backends added at run time by backend_register(). */
#define MAX_REGISTERED 8
static const struct backend *registered[MAX_REGISTERED];
static size_t n_registered;

const struct backend *backend_at(size_t i)
{
	if (i < ARRAY_SIZE(backends))
		return backends[i];
	i -= ARRAY_SIZE(backends);
	return i < n_registered ? registered[i] : NULL;
}

int backend_register(const struct backend *be)
{
	const struct backend *b;
	struct backend_block k;

	if (!be->name || !be->run)
		return error("backend '%s': a backend needs a name and a run function",
			     be->name ? be->name : "?");
	for (size_t i = 0; (b = backend_at(i)); i++) {
		if (b == be)
			return 0;
		if (!strcmp(b->name, be->name))
			return error("backend '%s': the name is taken", be->name);
	}
	for (size_t j = 0; backend_block_at(be, j, &k) == 0; j++)
		if ((b = backend_for_key(k.key)))
			return error("backend '%s': key '%s' is taken by backend '%s'", be->name,
				     k.key, b->name);
	if (n_registered == MAX_REGISTERED)
		return error("backend '%s': more than %d registered backends", be->name,
			     MAX_REGISTERED);
	registered[n_registered++] = be;
	return 0;
}

int backend_block_at(const struct backend *be, size_t i, struct backend_block *out)
{
	if (be->key && i == 0) {
		*out = (struct backend_block){ be->key, be->cfg_size, be->parse, be->release };
		return 0;
	}
	i -= !!be->key;
	for (size_t j = 0; be->blocks && be->blocks[j].key; j++)
		if (j == i) {
			*out = be->blocks[j];
			return 0;
		}
	return -1;
}

const struct backend *backend_for_key(const char *key)
{
	const struct backend *b;
	struct backend_block k;
	for (size_t i = 0; (b = backend_at(i)); i++)
		for (size_t j = 0; backend_block_at(b, j, &k) == 0; j++)
			if (!strcmp(k.key, key))
				return b;
	return NULL;
}

const struct backend *backend_default(void)
{
	return backends[0];
}

int backend_boots(const struct variant *v)
{
	return v->be && v->be->boots ? v->be->boots(v) : 1;
}

int backend_virtual_time(const struct variant *v)
{
	return v->be && v->be->virtual_time ? v->be->virtual_time(v) : 0;
}

char **env_build(const struct variant *v)
{
	size_t n = 0, alloc = 0;
	char **env = NULL;

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t klen = eq ? (size_t)(eq - *e) : strlen(*e);
		int replaced = 0;
		for (size_t i = 0; i < v->n_env; i++)
			if (strlen(v->env[i].key) == klen && !strncmp(*e, v->env[i].key, klen))
				replaced = 1;
		if (replaced)
			continue;
		ALLOC_GROW(env, n + 2, alloc);
		env[n++] = xstrdup(*e);
	}
	for (size_t i = 0; i < v->n_env; i++) {
		ALLOC_GROW(env, n + 2, alloc);
		env[n++] = xasprintf("%s=%s", v->env[i].key, v->env[i].value);
	}
	ALLOC_GROW(env, n + 1, alloc);
	env[n] = NULL;
	return env;
}
