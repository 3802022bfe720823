/* backend.c - backend table and helpers shared by backends; see backend.h */
#include "backend.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

const struct backend *backend_for(const struct variant *v)
{
	if (v->boot.present)
		return &backend_qemu;
	return &backend_host;
}

const struct pos *backend_pos(const struct variant *v)
{
	if (v->boot.present)
		return &v->boot.pos;
	if (v->kernel)
		return &v->kernel_pos;
	return &v->pos;
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
