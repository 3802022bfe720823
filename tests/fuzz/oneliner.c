/*
 * fuzz/oneliner.c - libFuzzer target: the one-liner's splitter and the
 * study it writes (harness/engine/oneliner.h), what `perturb run 'CMD'
 * ...` makes of its arguments.
 *
 * An input is a flags byte, then fields separated by NUL bytes (an
 * argument cannot hold one):
 *   bit 0   --shell: each field is a line for /bin/sh -c
 *   bit 1   the fields are one command's words (perturb run -- CMD ARGS)
 *   bit 2   the last field is a --variant's NAME=CMD, not a command
 *   bit 3   the first field is an --env NAME=VALUE, not a command
 * Each field is split by oneliner_split(): a refusal says why and hands
 * back nothing; a split's words, quoted again for a shell
 * (strbuf_add_shell_word), split to the same words.  Then the study is
 * written (oneliner_yaml): a refusal says why; a study is written to a
 * private folder and loaded (config_load), and must load, with every
 * command's words byte for byte (UTF-8 or not) and no placeholder
 * filled.  Anything else aborts.  The seed corpus, tests/fuzz/oneliner/,
 * holds command lines of every form; built and run by `make fuzz`.
 */
#include "engine/config.h"
#include "engine/oneliner.h"
#include "lib/util.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FIELDS 64

static char dir[64], path[96];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

/* Split s; what it accepted splits again, quoted, to the same words. */
static void check_split(const char *s)
{
	struct argv_list a, b;
	struct strbuf q = STRBUF_INIT;
	char err[512] = "";

	if (oneliner_split(s, &a, err, sizeof(err)) < 0) {
		if (!*err || a.v || a.n)
			abort();	/* a refusal says why, and hands back nothing */
		return;
	}
	if (!a.n || a.v[a.n])
		abort();
	for (size_t i = 0; i < a.n; i++) {
		if (i)
			strbuf_addstr(&q, " ");
		strbuf_add_shell_word(&q, a.v[i]);
	}
	if (oneliner_split(q.buf, &b, err, sizeof(err)) < 0 || b.n != a.n)
		abort();
	for (size_t i = 0; i < a.n; i++)
		if (strcmp(a.v[i], b.v[i]))
			abort();
	oneliner_argv_free(&a);
	oneliner_argv_free(&b);
	strbuf_release(&q);
}

/* Does the loaded argv hold exactly words (the split of line, or
 * /bin/sh -c line)? */
static void check_words(const struct argv_list *got, const struct oneliner *o, const char *line)
{
	struct argv_list want;
	char err[512];

	if (o->shell) {
		if (got->n != 3 || strcmp(got->v[2], line))
			abort();
		return;
	}
	if (oneliner_split(line, &want, err, sizeof(err)) < 0 || want.n != got->n)
		abort();
	for (size_t i = 0; i < want.n; i++)
		if (strcmp(want.v[i], got->v[i]))
			abort();
	oneliner_argv_free(&want);
}

static void check_study(const struct oneliner *o)
{
	struct experiment exp;
	char err[1024] = "", *yaml = NULL;
	int fd;

	if (oneliner_yaml(o, &yaml, err, sizeof(err)) < 0) {
		if (!*err || yaml)
			abort();
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, yaml, strlen(yaml)) != (ssize_t)strlen(yaml))
		abort();
	close(fd);
	memset(&exp, 0, sizeof(exp));
	if (config_load(path, &exp, err, sizeof(err)) < 0) {
		fprintf(stderr, "the study does not load: %s\n%s\n", err, yaml);
		abort();
	}
	if (!exp.verbatim)
		abort();	/* a user's words are measured as given */
	if (o->argv) {
		if (exp.workloads[0].cmd.n != o->argc)
			abort();
		for (size_t i = 0; i < o->argc; i++)
			if (strcmp(exp.workloads[0].cmd.v[i], o->argv[i]))
				abort();
	} else if (o->n_variants || o->n_commands == 1) {
		if (exp.n_workloads != o->n_commands)
			abort();
		for (size_t i = 0; i < o->n_commands; i++)
			check_words(&exp.workloads[i].cmd, o, o->commands[i]);
	} else {
		if (exp.n_variants != o->n_commands)
			abort();
		for (size_t i = 0; i < o->n_commands; i++)
			check_words(&exp.variants[i].cmd, o, o->commands[i]);
	}
	experiment_release(&exp);
	free(yaml);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *fields[MAX_FIELDS], *copy;
	size_t n = 0;
	unsigned flags;
	struct oneliner o = { .warmup = -1, .dir = "/tmp" };

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/perturb-fuzz-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/oneliner.yaml", dir);
		atexit(cleanup);
	}
	if (!size)
		return 0;
	flags = data[0];
	/* the fields: an exact-size copy, NUL-terminated, so that ASan sees
	 * any read past a field's end */
	copy = malloc(size);
	if (!copy)
		abort();
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = '\0';
	for (char *p = copy; n < MAX_FIELDS && p < copy + size; p += strlen(p) + 1)
		fields[n++] = p;
	for (size_t i = 0; i < n; i++)
		check_split(fields[i]);
	o.shell = flags & 1;
	if (flags & 8 && n > 1) {
		o.env = fields;
		o.n_env = 1;
	}
	if (flags & 4 && n > 1 + o.n_env) {
		o.variants = &fields[n - 1];
		o.n_variants = 1;
	}
	if (flags & 2) {
		o.argv = fields + o.n_env;
		o.argc = n - o.n_env - o.n_variants;
	} else {
		o.commands = fields + o.n_env;
		o.n_commands = n - o.n_env - o.n_variants;
	}
	check_study(&o);
	free(copy);
	return 0;
}
