/* oneliner.c - a study from a command line; see oneliner.h */
#include "oneliner.h"
#include "config.h"
#include "core/yamlnode.h"
#include "lib/util.h"

/* The bytes of a command's text kept in its name (then an ellipsis). */
#define ONELINER_NAME_MAX 40

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

void oneliner_argv_free(struct argv_list *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

static void push_word(struct argv_list *a, struct strbuf *w)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(char *));
	a->v[a->n++] = strbuf_detach(w);
	a->v[a->n] = NULL;
}

int oneliner_split(const char *s, struct argv_list *out, char *err, size_t len)
{
	struct strbuf w = STRBUF_INIT;
	int in_word = 0;
	const char *p = s;

	memset(out, 0, sizeof(*out));
	for (; *p; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n') {
			if (in_word)
				push_word(out, &w);
			in_word = 0;
			continue;
		}
		in_word = 1;
		if (*p == '\\') {
			if (!p[1]) {
				strbuf_add(&w, p, 1);	/* a trailing backslash: itself */
				break;
			}
			if (p[1] != '\n')
				strbuf_add(&w, p + 1, 1);
			p++;
		} else if (*p == '\'') {
			const char *end = strchr(p + 1, '\'');
			if (!end)
				goto unclosed;
			strbuf_add(&w, p + 1, (size_t)(end - p - 1));
			p = end;
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1] && strchr("\\\"$`\n", p[1])) {
					if (p[1] != '\n')
						strbuf_add(&w, p + 1, 1);
					p++;
				} else {
					strbuf_add(&w, p, 1);
				}
			}
			if (!*p)
				goto unclosed;
		} else if (strchr("|&;<>()$`*?", *p)) {
			snprintf(err, len, "'%c' in '%s' needs a shell: quote it, or give --shell "
				 "to run the command by /bin/sh -c", *p, s);
			goto fail;
		} else {
			strbuf_add(&w, p, 1);
		}
	}
	if (in_word)
		push_word(out, &w);
	strbuf_release(&w);
	if (!out->n) {
		snprintf(err, len, "an empty command ('%s')", s);
		goto fail;
	}
	return 0;
unclosed:
	snprintf(err, len, "an unclosed quote in '%s'", s);
fail:
	strbuf_release(&w);
	oneliner_argv_free(out);
	return -1;
}

/* ---- names ---- */

struct names {
	char **v;
	size_t n;
};

static void names_add(struct names *ns, const char *name)
{
	ns->v = xrealloc(ns->v, (ns->n + 1) * sizeof(char *));
	ns->v[ns->n++] = xstrdup(name);
}

/* The base name of cmd's program (with shell its line's first word),
 * escaped, without blanks at either end (malloc'd): the study's name is
 * the programs' names, and a study's name is printable text
 * (config_valid_text()). */
static char *program_name(const struct argv_list *cmd, int shell)
{
	const char *word = cmd->v[shell ? 2 : 0];
	char *prog = xstrndup(word, shell ? strcspn(word, " \t\n;|&<>()") : strlen(word));
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char *name = escape_bytes_str(base), *start = name + strspn(name, " ");
	size_t n = strlen(start);

	while (n && start[n - 1] == ' ')
		n--;
	free(prog);
	prog = xstrndup(n ? start : "cmd", n ? n : 3);
	free(name);
	return prog;
}

/*
 * Command i's text as its name, as hyperfine names its commands (malloc'd):
 * the line as given with each run of blanks one space, or the words of
 * -- CMD ARGS quoted for a shell; escaped (escape_bytes(): a byte that is
 * not UTF-8 or a control byte as \xNN), each character a name cannot hold
 * (, [ ] ~: engine/config.h) as '_', and cut after ONELINER_NAME_MAX bytes
 * with an ellipsis.
 */
static char *command_name(const struct oneliner *o, size_t i)
{
	struct strbuf sb = STRBUF_INIT;
	char *shown, *c;
	size_t n;

	if (o->argv) {
		for (size_t k = 0; k < o->argc; k++) {
			if (k)
				strbuf_addstr(&sb, " ");
			strbuf_add_shell_word(&sb, o->argv[k]);
		}
	} else {
		for (const char *p = o->commands[i]; *p;) {
			size_t blank = strspn(p, " \t\n");
			if (blank && sb.len && p[blank])
				strbuf_addstr(&sb, " ");
			if (!blank)
				strbuf_add(&sb, p, 1);
			p += blank ? blank : 1;
		}
	}
	shown = escape_bytes_str(sb.buf ? sb.buf : "");
	strbuf_release(&sb);
	for (c = shown; *c; c++)
		if (strchr(",[]~", *c))
			*c = '_';
	n = strlen(shown);
	if (n > ONELINER_NAME_MAX) {
		n = ONELINER_NAME_MAX;
		while (n && ((unsigned char)shown[n] & 0xc0) == 0x80)
			n--;	/* not inside a UTF-8 sequence */
		while (n && shown[n - 1] == ' ')
			n--;
		shown[n] = '\0';
		c = xasprintf("%s\xe2\x80\xa6", shown);	/* U+2026, an ellipsis */
		free(shown);
		shown = c;
	}
	if (!*shown) {
		free(shown);
		shown = xstrdup("command");
	}
	return shown;
}

static int names_has(const struct names *ns, const char *name)
{
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], name))
			return 1;
	return 0;
}

/* name, else "name (2)", "name (3)", ...: the first not in ns (taken,
 * malloc'd). */
static char *unique_name(const struct names *ns, char *name)
{
	char *cand = xstrdup(name);

	for (int k = 2; names_has(ns, cand); k++) {
		free(cand);
		cand = xasprintf("%s (%d)", name, k);
	}
	free(name);
	return cand;
}

/*
 * The commands' names into ns (nc of them, in order): the --name ones
 * first, each checked (engine/config.h: config_valid_name()), then each
 * command's text, unique.  0, or -1 with the reason in err.
 */
static int command_names(const struct oneliner *o, size_t nc, struct names *ns, char *err,
			 size_t len)
{
	if (o->n_names > nc) {
		snprintf(err, len, "%zu --name for %zu command%s: one a command, in order",
			 o->n_names, nc, nc == 1 ? "" : "s");
		return -1;
	}
	for (size_t i = 0; i < o->n_names; i++) {
		int ok = config_valid_name(o->names[i]), twice = names_has(ns, o->names[i]);
		if (!ok || twice) {
			char *shown = escape_bytes_str(o->names[i]);
			if (twice)
				snprintf(err, len, "--name '%s' twice: each command's name is its own",
					 shown);
			else
				snprintf(err, len, "--name '%s': a name is %s", shown,
					 CONFIG_NAME_RULE);
			free(shown);
			return -1;
		}
		names_add(ns, o->names[i]);
	}
	for (size_t i = o->n_names; i < nc; i++) {
		char *name = unique_name(ns, command_name(o, i));
		names_add(ns, name);
		free(name);
	}
	return 0;
}

static void names_release(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

/* Is s NAME=VALUE with NAME an environment variable's name? */
static int is_assignment(const char *s)
{
	const char *eq = strchr(s, '=');
	if (!eq || eq == s || (*s >= '0' && *s <= '9'))
		return 0;
	for (const char *c = s; c < eq; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_'))
			return 0;
	return 1;
}

/* ---- the emitter: events into a strbuf ---- */

struct emit {
	yaml_emitter_t e;
	struct strbuf out;
	size_t nodes;		/* scalars, sequences and mappings emitted */
	int failed;
};

static int write_handler(void *data, unsigned char *buf, size_t size)
{
	strbuf_add(&((struct emit *)data)->out, buf, size);
	return 1;
}

static void ev(struct emit *em, yaml_event_t *event, int ok)
{
	if (em->failed)
		return;
	if (!ok || !yaml_emitter_emit(&em->e, event))
		em->failed = 1;
}

/* s as a scalar; bytes that are not UTF-8 (a Latin-1 file name), which a
 * YAML file cannot hold, as !!binary (base64), which the loader decodes
 * (core/yamlnode.h): the command is stored and run byte for byte. */
static void scalar(struct emit *em, const char *s)
{
	yaml_event_t e;
	em->nodes++;
	if (!utf8_valid(s)) {
		char *b = base64_encode(s, strlen(s));
		ev(em, &e, yaml_scalar_event_initialize(&e, NULL, (yaml_char_t *)YN_BINARY_TAG,
							(yaml_char_t *)b, (int)strlen(b), 0, 0,
							YAML_PLAIN_SCALAR_STYLE));
		free(b);
		return;
	}
	ev(em, &e, yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
						1, 1, YAML_ANY_SCALAR_STYLE));
}

/* A mapping (seq 0) or a sequence (seq 1) opens, block or flow style. */
static void open_(struct emit *em, int seq, int flow)
{
	yaml_event_t e;
	em->nodes++;
	int ok = seq ? yaml_sequence_start_event_initialize(&e, NULL, NULL, 1,
				flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE)
		     : yaml_mapping_start_event_initialize(&e, NULL, NULL, 1,
				flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
	ev(em, &e, ok);
}

static void close_(struct emit *em, int seq)
{
	yaml_event_t e;
	ev(em, &e, seq ? yaml_sequence_end_event_initialize(&e)
		       : yaml_mapping_end_event_initialize(&e));
}

#define map_start(em, flow) open_(em, 0, flow)
#define seq_start(em, flow) open_(em, 1, flow)
#define map_end(em) close_(em, 0)
#define seq_end(em) close_(em, 1)

static void key_str(struct emit *em, const char *k, const char *v)
{
	scalar(em, k);
	scalar(em, v);
}

static void key_argv(struct emit *em, const char *k, const struct argv_list *a)
{
	scalar(em, k);
	seq_start(em, 1);
	for (size_t i = 0; i < a->n; i++)
		scalar(em, a->v[i]);
	seq_end(em);
}

/* Is NAME= of a set later in list[from..n)? */
static int set_later(const char *a, char *const *list, size_t from, size_t n)
{
	size_t len = (size_t)(strchr(a, '=') - a) + 1;
	for (size_t i = from; i < n; i++)
		if (!strncmp(list[i], a, len))
			return 1;
	return 0;
}

/* env: the --env ones, then the variant's own (own->v[0..n_own), NULL:
 * none); a name set again later is written once, with its last value. */
static void key_env(struct emit *em, const struct oneliner *o, const struct argv_list *own,
		    size_t n_own)
{
	if (!o->n_env && !n_own)
		return;
	scalar(em, "env");
	map_start(em, 0);
	for (size_t k = 0; k < o->n_env + n_own; k++) {
		const char *a = k < o->n_env ? o->env[k] : own->v[k - o->n_env];
		const char *eq = strchr(a, '=');
		char *name;
		if (k < o->n_env ? set_later(a, o->env, k + 1, o->n_env) ||
				   (own && set_later(a, own->v, 0, n_own))
				 : set_later(a, own->v, k - o->n_env + 1, n_own))
			continue;
		name = xstrndup(a, (size_t)(eq - a));
		key_str(em, name, eq + 1);
		free(name);
	}
	map_end(em);
}

/* prog into req unless there or unless a relative path (requires: takes
 * programs on PATH and absolute paths: docs/experiment.md). */
static void require(struct names *req, const char *prog)
{
	if (strchr(prog, '/') && prog[0] != '/')
		return;
	for (size_t i = 0; i < req->n; i++)
		if (!strcmp(req->v[i], prog))
			return;
	names_add(req, prog);
}

/* requires: the programs of cmds[from..to), so that a missing one stops
 * the study before anything runs, naming its Debian package (the host
 * backend checks the wraps' programs itself). */
static void key_requires(struct emit *em, const struct argv_list *cmds, size_t from, size_t to)
{
	struct names req = { 0 };
	struct argv_list list;

	for (size_t i = from; i < to; i++)
		require(&req, cmds[i].v[0]);
	list.v = req.v;
	list.n = req.n;
	if (req.n)
		key_argv(em, "requires", &list);
	names_release(&req);
}

/* A command line as an argv: split, or /bin/sh -c LINE with shell. */
static int command(const struct oneliner *o, const char *line, struct argv_list *a, char *err,
		   size_t len)
{
	if (o->shell) {
		memset(a, 0, sizeof(*a));
		a->v = xcalloc(4, sizeof(char *));
		a->v[0] = xstrdup("/bin/sh");
		a->v[1] = xstrdup("-c");
		a->v[2] = xstrdup(line);
		a->n = 3;
		return 0;
	}
	return oneliner_split(line, a, err, len);
}

int oneliner_yaml(const struct oneliner *o, char **yaml, char *err, size_t len)
{
	struct emit em = { .out = STRBUF_INIT };
	struct argv_list *cmds = NULL, *vwords = NULL;
	struct names cnames = { 0 }, vnames = { 0 };
	size_t nc = o->argv ? 1 : o->n_commands;
	yaml_event_t e;
	char num[32];
	int ret = -1;

	*yaml = NULL;
	if (!nc || (o->argv && !o->argc)) {
		snprintf(err, len, "no command to run");
		return -1;
	}
	if (o->argv && o->shell) {
		snprintf(err, len, "--shell runs command lines ('CMD | CMD'); after -- the words "
			 "are the command itself: give --shell 'LINE' instead");
		return -1;
	}
	cmds = xcalloc(nc, sizeof(*cmds));
	for (size_t i = 0; i < nc; i++) {
		if (o->argv) {
			cmds[i].v = xcalloc(o->argc + 1, sizeof(char *));
			for (size_t k = 0; k < o->argc; k++)
				cmds[i].v[k] = xstrdup(o->argv[k]);
			cmds[i].n = o->argc;
		} else if (command(o, o->commands[i], &cmds[i], err, len) < 0) {
			goto out;
		}
	}
	if (command_names(o, nc, &cnames, err, len) < 0)
		goto out;
	for (size_t i = 0; i < o->n_env; i++)
		if (!is_assignment(o->env[i])) {
			snprintf(err, len, "--env takes NAME=VALUE, got '%s'", o->env[i]);
			goto out;
		}
	vwords = xcalloc(o->n_variants + 1, sizeof(*vwords));
	names_add(&vnames, "base");
	for (size_t i = 0; i < o->n_variants; i++) {
		const char *eq = strchr(o->variants[i], '=');
		char *name = eq ? xstrndup(o->variants[i], (size_t)(eq - o->variants[i])) : NULL;
		int bad = !name || !*name || strspn(name, "abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") != strlen(name);
		for (size_t k = 0; !bad && k < vnames.n; k++)
			bad = !strcmp(vnames.v[k], name) ? 2 : 0;
		if (bad) {
			snprintf(err, len, bad == 2 ? "--variant '%s': the name is taken (base is "
				 "the baseline's)" : "--variant takes NAME=COMMAND, NAME of letters, "
				 "digits and _ . + -, got '%s'", o->variants[i]);
			free(name);
			goto out;
		}
		names_add(&vnames, name);
		free(name);
		if (eq[1] && oneliner_split(eq + 1, &vwords[i], err, len) < 0)
			goto out;
	}

	yaml_emitter_initialize(&em.e);
	yaml_emitter_set_output(&em.e, write_handler, &em);
	yaml_emitter_set_unicode(&em.e, 1);
	yaml_emitter_set_width(&em.e, -1);
	ev(&em, &e, yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING));
	ev(&em, &e, yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 1));
	map_start(&em, 0);
	{
		struct strbuf nm = STRBUF_INIT;
		for (size_t i = 0; i < nc; i++) {
			char *prog = program_name(&cmds[i], o->shell);
			strbuf_addf(&nm, "%s%s", i ? " vs " : "", prog);
			free(prog);
		}
		key_str(&em, "name", nm.buf);
		strbuf_release(&nm);
	}
	if (o->cmdline)
		key_str(&em, "description", o->cmdline);
	/* the user's words are measured as given: no {workdir}, {micro}, ... */
	key_str(&em, "placeholders", "false");
	if (o->repetitions > 0) {
		snprintf(num, sizeof(num), "%d", o->repetitions);
		key_str(&em, "repetitions", num);
	}
	if (o->order)
		key_str(&em, "order", o->order);
	if (o->warmup >= 0) {
		snprintf(num, sizeof(num), "%d", o->warmup);
		key_str(&em, "warmup", num);
	}
	scalar(&em, "variants");
	seq_start(&em, 0);
	if (o->n_variants || nc == 1) {
		/* the commands are workloads; base and the --variant wraps */
		for (size_t i = 0; i <= o->n_variants; i++) {
			size_t n_own = 0;
			map_start(&em, 0);
			key_str(&em, "name", vnames.v[i]);
			if (i) {
				const struct argv_list *wd = &vwords[i - 1];
				struct argv_list wrap;
				while (n_own < wd->n && is_assignment(wd->v[n_own]))
					n_own++;
				key_env(&em, o, wd, n_own);
				wrap.v = wd->v ? wd->v + n_own : NULL;	/* --variant NAME= : none */
				wrap.n = wd->n - n_own;
				if (wrap.n)
					key_argv(&em, "wrap", &wrap);
			} else {
				key_env(&em, o, NULL, 0);
			}
			map_end(&em);
		}
	} else {
		/* hyperfine's way: each command a variant of one workload */
		for (size_t i = 0; i < nc; i++) {
			map_start(&em, 0);
			key_str(&em, "name", cnames.v[i]);
			key_env(&em, o, NULL, 0);
			key_argv(&em, "cmd", &cmds[i]);
			map_end(&em);
		}
	}
	seq_end(&em);
	scalar(&em, "workloads");
	seq_start(&em, 0);
	for (size_t i = 0; i < ((o->n_variants || nc == 1) ? nc : 1); i++) {
		map_start(&em, 0);
		key_str(&em, "name", o->n_variants || nc == 1 ? cnames.v[i] : "commands");
		if (o->dir)
			key_str(&em, "dir", o->dir);
		key_requires(&em, cmds, o->n_variants || nc == 1 ? i : 0,
			     o->n_variants || nc == 1 ? i + 1 : nc);
		key_argv(&em, "cmd", &cmds[i]);
		map_end(&em);
	}
	seq_end(&em);
	map_end(&em);
	ev(&em, &e, yaml_document_end_event_initialize(&e, 1));
	ev(&em, &e, yaml_stream_end_event_initialize(&e));
	yaml_emitter_flush(&em.e);
	if (em.failed)
		snprintf(err, len, "cannot write the study's YAML: %s",
			 em.e.problem ? em.e.problem : "libyaml's emitter failed");
	yaml_emitter_delete(&em.e);
	if (em.failed)
		goto out;
	/* what the loader would refuse is refused now, before a file is
	 * written: a command of more words than a study holds */
	if (em.nodes > YN_MAX_NODES || em.out.len + 100 > CONFIG_FILE_MAX) {
		snprintf(err, len, "the command line is too long for a study: %zu words and "
			 "names, %zu bytes (a study holds at most %d and %u MiB)", em.nodes,
			 em.out.len, YN_MAX_NODES, CONFIG_FILE_MAX >> 20);
		goto out;
	}
	*yaml = xasprintf("# written by perturb run from a command line (docs/perturb.1)\n%s%s",
			  em.out.buf ? em.out.buf : "",
			  em.out.len && em.out.buf[em.out.len - 1] == '\n' ? "" : "\n");
	ret = 0;
out:
	strbuf_release(&em.out);
	for (size_t i = 0; i < nc; i++)
		oneliner_argv_free(&cmds[i]);
	free(cmds);
	for (size_t i = 0; vwords && i < o->n_variants; i++)
		oneliner_argv_free(&vwords[i]);
	free(vwords);
	names_release(&cnames);
	names_release(&vnames);
	return ret;
}
