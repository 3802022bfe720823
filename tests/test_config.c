/*
 * test_config.c - the experiment file loader.
 *
 * The corpus: tests/config/NNN-what.yaml, one case a file, whose first line
 * says what loading it must give:
 *
 *     # expect: ok
 *     # expect: 3:1: unknown key 'repetiton' in experiment; did you mean 'repetitions'?
 *
 * The message is compared with every occurrence of "tests/config/" (the
 * corpus folder, however it was reached) removed, and with the case's own
 * file name removed from its start: so "3:1: ..." for the case itself and
 * "x.inc.yaml:2:1: ..." for a file it includes.  Files named *.inc.yaml are
 * include fragments and folders hold workload files: both are skipped.
 * PERTURB_WORKLOADS points at tests/config/share during the corpus run.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/config.h"
#include "backends/qemu_config.h"
#include "core/result.h"
#include "lib/range.h"
#include "lib/util.h"
#include "testlib.h"

static const char *src_dir(void)
{
	const char *s = getenv("PERTURB_SRC");
	return s && *s ? s : ".";
}

static char *corpus_dir(void)
{
	return xasprintf("%s/tests/config", src_dir());
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/* The "# expect: " line of a case, or NULL. */
static char *read_expect(const char *path)
{
	char *text = read_file(path, NULL), *nl, *ret = NULL;
	const char *tag = "# expect: ";
	if (!text)
		return NULL;
	if (!strncmp(text, tag, strlen(tag))) {
		nl = strchr(text, '\n');
		ret = nl ? xstrndup(text + strlen(tag), (size_t)(nl - text) - strlen(tag))
			 : xstrdup(text + strlen(tag));
	}
	free(text);
	return ret;
}

/* msg with every "DIR/" removed, then "BASE:" removed from its start. */
static char *normalise(const char *msg, const char *dir, const char *base)
{
	struct strbuf sb = STRBUF_INIT;
	char *prefix = xasprintf("%s/", dir), *b = xasprintf("%s:", base);
	const char *p = msg, *q;
	while ((q = strstr(p, prefix))) {
		strbuf_add(&sb, p, (size_t)(q - p));
		p = q + strlen(prefix);
	}
	strbuf_addstr(&sb, p);
	char *s = strbuf_detach(&sb), *ret;
	if (!strncmp(s, b, strlen(b)))
		ret = xstrdup(s + strlen(b) + (s[strlen(b)] == ' '));
	else
		ret = xstrdup(s);
	free(s);
	free(prefix);
	free(b);
	return ret;
}

Test(config, corpus)
{
	char *dir = corpus_dir(), *share = xasprintf("%s/share", dir);
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;

	cr_assert(d, "cannot open %s", dir);
	setenv("PERTURB_WORKLOADS", share, 1);
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, ".yaml") || ends_with(de->d_name, ".inc.yaml"))
			continue;
		ALLOC_GROW(names, n + 1, alloc);
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	cr_assert_geq(n, 40, "only %zu cases in %s", n, dir);

	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		char *expect = read_expect(path);
		char err[1024];
		struct experiment exp;

		cr_expect(expect, "%s: no '# expect: ' first line", names[i]);
		if (expect) {
			int rc = config_load(path, &exp, err, sizeof(err));
			if (!strcmp(expect, "ok")) {
				cr_expect_eq(rc, 0, "%s: expected ok, got: %s", names[i], err);
			} else {
				char *got = rc ? normalise(err, dir, names[i]) : xstrdup("ok");
				cr_expect_str_eq(got, expect, "%s:\n  expected: %s\n  got:      %s",
						 names[i], expect, got);
				free(got);
			}
			if (!rc)
				experiment_release(&exp);
		}
		free(expect);
		free(path);
		free(names[i]);
	}
	free(names);
	free(share);
	free(dir);
}

static void load_full(struct experiment *exp)
{
	char *dir = corpus_dir(), *path = xasprintf("%s/001-full.yaml", dir);
	char err[1024];
	int rc = config_load(path, exp, err, sizeof(err));
	cr_assert_eq(rc, 0, "%s", err);
	free(path);
	free(dir);
}

Test(config, full_experiment)
{
	struct experiment exp;
	load_full(&exp);

	cr_expect_str_eq(exp.name, "full");
	cr_expect_str_eq(exp.description, "every key of the schema");
	cr_expect_str_eq(exp.baseline, "traced");
	cr_expect_eq(exp.repetitions, 12);
	cr_expect_eq(exp.warmup, 0);
	cr_expect_eq(exp.order, ORDER_RANDOM);
	cr_expect(exp.has_seed);
	cr_expect_eq(exp.seed, UINT64_MAX);
	cr_expect_float_eq(exp.timeout_s, 90.0, 1e-9);
	cr_assert_eq(exp.n_cpus, 2);
	cr_expect_eq(exp.cpus[0], 1);
	cr_expect_eq(exp.cpus[1], 3);
	cr_assert_eq(exp.n_counters, 2);
	cr_expect_str_eq(exp.counters[1], "instructions");
	cr_expect(strstr(exp.text, "name: full") != NULL);
	cr_expect_eq(strlen(exp.text), exp.text_len);

	/* variants: the file's, then the include's */
	cr_assert_eq(exp.n_variants, 4);
	cr_expect_str_eq(exp.variants[3].name, "extra");
	cr_expect_eq(experiment_find_variant(&exp, "qemu-6.1"), 2);
	cr_expect_eq(experiment_find_variant(&exp, "nope"), -1);

	const struct variant *v = &exp.variants[0];
	cr_assert_not_null(v->kernel);
	cr_expect_str_eq(v->kernel->tracer, "nop");
	cr_expect_eq(v->kernel->n_events, 0);
	cr_expect_eq(v->kernel->tracing_on, 0);
	cr_expect_eq(v->kernel->buffer_size_kb, -1);
	cr_expect_eq(v->wrap.n, 0);
	cr_expect_eq(v->pos.line, 15);
	cr_expect_eq(v->pos.col, 5);
	cr_expect(strstr(v->pos.file, "001-full.yaml") != NULL);

	v = &exp.variants[1];
	cr_assert_eq(v->n_env, 3);
	cr_expect_str_eq(v->env[0].key, "LD_PRELOAD");
	cr_expect_str_eq(v->env[1].value, "3");
	cr_expect_str_eq(v->env[2].value, "");
	cr_assert_eq(v->wrap.n, 4);
	cr_expect_str_eq(v->wrap.v[3], "/dev/null");
	cr_expect_null(v->wrap.v[4]);
	/* cmd: in place of the workloads' own */
	cr_assert_eq(v->cmd.n, 3);
	cr_expect_str_eq(v->cmd.v[2], "exit 0");
	cr_expect_null(exp.variants[0].cmd.v);
	cr_assert_eq(v->n_setup, 2);
	cr_expect_str_eq(v->setup[0].v[1], "setup");
	cr_expect_eq(v->setup[1].n, 1);
	cr_expect_str_eq(v->setup[1].v[0], "true");
	cr_expect_eq(v->n_teardown, 1);
	cr_expect_eq(v->daemon.n, 2);
	cr_expect_float_eq(v->daemon_ready_s, 0.25, 1e-12);
	cr_expect_null(v->daemon_ready_regex);
	cr_expect_str_eq(v->background.v[2], "sleep 1");
	cr_assert_not_null(v->kernel);
	cr_expect_eq(v->kernel->tracing_on, 1);
	cr_expect_eq(v->kernel->buffer_size_kb, 4096);
	cr_expect_eq(v->kernel->n_events, 2);
	cr_expect_str_eq(v->kernel->events[1], "syscalls:sys_enter_*");
	cr_expect_str_eq(v->kernel->functions[1], "do_sys_*");
	cr_expect_str_eq(v->kernel->options[0], "nooverwrite");
	cr_expect_eq(v->be, &backend_host);
	cr_expect_null(v->cfg);

	v = &exp.variants[2];
	cr_expect_str_eq(v->daemon_ready_regex, "ready: [0-9]+");
	cr_expect_eq(regexec(&v->daemon_ready_re, "kernel ready: 42", 0, NULL, 0), 0);
	cr_expect_neq(regexec(&v->daemon_ready_re, "ready: soon", 0, NULL, 0), 0);
	cr_assert_eq(v->be, &backend_qemu);
	cr_expect_null(v->kernel);
	const struct boot_cfg *b = v->cfg;
	cr_expect_null(b->kernel);	/* config: builds it */
	cr_expect_str_eq(b->initrd, "auto");
	cr_expect_str_eq(b->cmdline, "console=ttyS0 quiet");
	cr_expect_eq(b->memory_bytes, 1ull << 30);
	cr_expect_eq(b->cpus, 2);
	cr_expect_eq(b->kvm, -1);
	/* relative to the file's folder */
	cr_expect(strstr(b->config, "config/kernels/configs/tracing.config") &&
		  !strcmp(strstr(b->config, "config/kernels/configs/tracing.config"),
			  "config/kernels/configs/tracing.config"), "%s", b->config);
	cr_expect_str_eq(b->source, "/usr/src/linux-source-6.1");
	cr_expect_eq(b->boots, 3);
	cr_expect_eq(b->deterministic, 1);

	/* workloads: inline, by name, then the include's */
	cr_assert_eq(exp.n_workloads, 4);
	const struct workload *w = &exp.workloads[0];
	cr_expect_str_eq(w->name, "compress");
	cr_expect_eq(w->kind, WORKLOAD_REAL);
	cr_expect_str_eq(w->requires[0], "bzip2");
	cr_expect_eq(w->n_setup, 1);
	cr_expect_str_eq(w->setup[0].v[3], "{workdir}/input.txt");
	cr_expect_str_eq(w->prepare[0].v[0], "sync");
	cr_expect_eq(w->cmd.n, 4);
	cr_expect_null(w->shell);
	cr_expect_float_eq(w->timeout_s, 120.0, 1e-9);
	cr_expect_str_eq(w->dir, "/tmp");
	cr_expect_null(exp.workloads[1].dir);
	cr_expect_eq(workload_timeout(&exp, w), 120.0);
	cr_expect_eq(workload_repetitions(&exp, w), 20);

	cr_assert_eq(w->n_metrics, 2);
	const struct metric_def *m = &w->metrics[0];
	regmatch_t pm[2];
	const char *out = "Time in seconds =   12.75\n";
	cr_expect_str_eq(m->unit, "s");
	cr_expect(m->has_group);
	cr_assert_eq(regexec(&m->re, out, 2, pm, 0), 0);
	cr_expect_eq(pm[1].rm_eo - pm[1].rm_so, 5);
	cr_expect_eq(strncmp(out + pm[1].rm_so, "12.75", 5), 0);
	m = &w->metrics[1];
	cr_expect(!m->has_group);
	cr_expect_str_eq(m->unit, "");
	cr_expect_eq(regexec(&m->re, "read 300 lines", 0, NULL, 0), 0);

	w = &exp.workloads[1];
	cr_expect_eq(w->kind, WORKLOAD_MICRO);
	cr_expect_str_eq(w->shell, "perturb micro getpid");
	cr_expect_eq(w->cmd.n, 0);
	cr_expect_eq(workload_repetitions(&exp, w), 12);
	cr_expect_float_eq(workload_timeout(&exp, w), 90.0, 1e-9);

	w = &exp.workloads[2];
	cr_expect_str_eq(w->name, "wl-by-name");
	cr_expect(strstr(w->pos.file, "workloads/wl-by-name.yaml") != NULL);
	cr_expect_eq(w->pos.line, 2);
	cr_expect_str_eq(exp.workloads[3].name, "from-include");
	cr_expect_eq(experiment_find_workload(&exp, "from-include"), 3);

	/* every file read is kept, the main one first */
	cr_assert_eq(exp.n_files, 3);
	cr_expect(ends_with(exp.files[0], "001-full.yaml"));
	cr_expect(ends_with(exp.files[1], "workloads/wl-by-name.yaml"));
	cr_expect(ends_with(exp.files[2], "001-full.inc.yaml"));

	/* gate: defaults and given values */
	cr_assert_eq(exp.n_gate, 2);
	const struct gate_rule *r = &exp.gate[0];
	cr_expect_str_eq(r->variant, "traced");
	cr_expect_str_eq(r->workload, "*");
	cr_expect_str_eq(r->metric, "wall");
	cr_expect_eq(r->statistic, STAT_P50);
	cr_expect_float_eq(r->max_dilation, 0.02, 1e-12);
	cr_expect_float_eq(r->confidence, 0.95, 1e-12);
	r = &exp.gate[1];
	cr_expect_str_eq(r->variant, "*");
	cr_expect_str_eq(r->workload, "compress");
	cr_expect_str_eq(r->metric, "exec_time");
	cr_expect_eq(r->statistic, STAT_P99);
	cr_expect_str_eq(statistic_name(r->statistic), "p99");
	cr_expect_float_eq(r->max_dilation, 0.05, 1e-12);
	cr_expect_float_eq(r->confidence, 0.99, 1e-12);

	experiment_release(&exp);
	cr_expect_eq(exp.n_variants, 0);
	experiment_release(&exp);	/* released twice is harmless */
}

Test(config, deterministic_on_the_experiment_is_each_boot_variants_default)
{
	struct experiment exp;
	char *dir = corpus_dir(), *path = xasprintf("%s/099-deterministic-top.yaml", dir);
	char err[1024];

	cr_assert_eq(config_load(path, &exp, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(((struct boot_cfg *)exp.variants[0].cfg)->deterministic, 1);
	cr_expect_eq(((struct boot_cfg *)exp.variants[1].cfg)->deterministic, 0,
		     "the variant's own value wins");
	experiment_release(&exp);
	free(path);
	free(dir);
}

Test(config, defaults)
{
	char *dir = corpus_dir(), *path = xasprintf("%s/060-minimal.yaml", dir);
	struct experiment exp;
	char err[512];

	cr_assert_eq(config_load(path, &exp, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(exp.baseline, "base");
	cr_expect_eq(exp.repetitions, 10);
	cr_expect_eq(exp.warmup, 1);
	cr_expect_eq(exp.order, ORDER_INTERLEAVED);
	cr_expect_str_eq(order_name(exp.order), "interleaved");
	cr_expect(!exp.has_seed);
	cr_expect_float_eq(exp.timeout_s, 300.0, 1e-9);
	cr_expect_eq(exp.n_cpus, 0);
	cr_expect_eq(exp.n_gate, 0);
	cr_expect_null(exp.variants[0].kernel);
	cr_expect_eq(exp.workloads[0].kind, WORKLOAD_REAL);
	cr_expect_null(exp.workloads[0].description);
	experiment_release(&exp);
	free(path);
	free(dir);
}

Test(config, names)
{
	cr_expect_str_eq(statistic_name(STAT_P0), "p0");
	cr_expect_str_eq(statistic_name(STAT_MEAN), "mean");
	cr_expect_str_eq(order_name(ORDER_SEQUENTIAL), "sequential");
	cr_expect_str_eq(order_name(ORDER_RANDOM), "random");
}

Test(config, missing_file)
{
	struct experiment exp;
	char err[512];
	cr_expect_eq(config_load("/nonexistent/x.yaml", &exp, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "/nonexistent/x.yaml: cannot read: No such file or directory");
	cr_expect_eq(exp.n_files, 0);
	/* a short buffer truncates, NUL-terminated */
	cr_expect_eq(config_load("/nonexistent/x.yaml", &exp, err, 8), -1);
	cr_expect_str_eq(err, "/nonexi");
}

Test(config, share_dir)
{
	setenv("PERTURB_WORKLOADS", "/tmp/wl", 1);
	cr_expect_str_eq(config_share_workloads_dir(), "/tmp/wl");
	unsetenv("PERTURB_WORKLOADS");
	cr_expect(ends_with(config_share_workloads_dir(), "/workloads"));
}

Test(config, load_workload)
{
	char *dir = corpus_dir(), *path = xasprintf("%s/workloads/wl-mismatch.yaml", dir);
	struct experiment holder = { 0 };
	struct workload w;
	char err[512];

	/* on its own, the file's name need not match */
	cr_assert_eq(config_load_workload(path, &holder, &w, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(w.name, "other");
	cr_expect_eq(w.pos.file, holder.files[0]);
	workload_release(&w);
	free(path);

	path = xasprintf("%s/060-minimal.yaml", dir);
	cr_expect_eq(config_load_workload(path, &holder, &w, err, sizeof(err)), -1);
	cr_expect(strstr(err, "unknown key 'variants' in workload") != NULL, "%s", err);
	experiment_release(&holder);
	free(path);
	free(dir);
}

/* Write text to a temporary file; returns its malloc'd path. */
static char *temp_yaml(const char *text, size_t len)
{
	char *path = xstrdup("/tmp/perturb-test-config-XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	FILE *f = fdopen(fd, "w");
	cr_assert(f);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	fclose(f);
	return path;
}

/* config_load() of the text in sb fails with an error containing want,
 * in less than max_s seconds when max_s > 0. */
static void expect_load_error(const struct strbuf *sb, const char *want, double max_s)
{
	struct experiment exp;
	char err[512];
	char *path = temp_yaml(sb->buf, sb->len);
	double t0 = now_mono();

	cr_expect_eq(config_load(path, &exp, err, sizeof(err)), -1);
	cr_expect(strstr(err, want) != NULL, "%s", err);
	if (max_s > 0)
		cr_expect_lt(now_mono() - t0, max_s);
	unlink(path);
	free(path);
}

/* A study's name is shown on every screen: printable text, or refused
 * with where (a terminal's escape sequence in it would be obeyed). */
Test(config, a_study_name_is_printable_text)
{
	static const struct { const char *name, *want; } bad[] = {
		{ "\"a\\e[2Jb\"", ":1:7: invalid study name 'a\\x1b[2Jb': use printable text" },
		{ "\"a\\x07\"", ":1:7: invalid study name 'a\\x07'" },
		{ "\" a\"", ":1:7: invalid study name ' a'" },
		{ "!!binary gA==", ":1:7: invalid study name '\\x80'" },
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "name: %s\nvariants: [{name: v}]\n"
			    "workloads: [{name: w, cmd: [true]}]\n", bad[i].name);
		expect_load_error(&sb, bad[i].want, 0);
	}
	strbuf_release(&sb);
}

/* Hostile inputs fail fast, not after libyaml's quadratic work. */
Test(config, hostile_inputs_fail_fast)
{
	size_t depth = 200000;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "name: ");
	for (size_t i = 0; i < depth; i++)
		strbuf_addstr(&sb, "[");
	for (size_t i = 0; i < depth; i++)
		strbuf_addstr(&sb, "]");
	expect_load_error(&sb, ":1:70: nesting deeper than 64 levels", 1.0);

	/* ten levels of ten aliases: 10^10 nodes if expanded */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 10; i++)
		strbuf_addf(&sb, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n",
			    i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	expect_load_error(&sb, "too many nodes (alias expansion)", 1.0);

	/* over 16 MiB */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "name: t\ndescription: ");
	while (sb.len <= (16u << 20))
		strbuf_addstr(&sb, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	expect_load_error(&sb, ": file is larger than 16 MiB", 0);
	strbuf_release(&sb);
}

/* Load text (written to a temporary file) into exp; asserts success. */
static void load_text(const char *text, struct experiment *exp)
{
	char err[1024];
	char *path = temp_yaml(text, strlen(text));
	int rc = config_load(path, exp, err, sizeof(err));
	unlink(path);
	free(path);
	cr_assert_eq(rc, 0, "%s", err);
}

static void expect_same_argv(const struct argv_list *a, const struct argv_list *b, const char *what)
{
	cr_expect_eq(a->n, b->n, "%s: %zu != %zu items", what, a->n, b->n);
	for (size_t i = 0; i < a->n && i < b->n; i++)
		cr_expect_str_eq(a->v[i], b->v[i], "%s[%zu]", what, i);
}

/* The parts of two experiments a merge key can change are equal. */
static void expect_same_experiment(const struct experiment *a, const struct experiment *b)
{
	cr_expect_eq(a->repetitions, b->repetitions);
	cr_expect_eq(a->n_variants, b->n_variants);
	for (size_t i = 0; i < a->n_variants && i < b->n_variants; i++) {
		const struct variant *x = &a->variants[i], *y = &b->variants[i];
		cr_expect_str_eq(x->name, y->name);
		cr_expect_eq(x->n_env, y->n_env, "variant %s: env", x->name);
		for (size_t k = 0; k < x->n_env && k < y->n_env; k++) {
			int found = 0;
			for (size_t j = 0; j < y->n_env; j++)
				found |= !strcmp(x->env[k].key, y->env[j].key) &&
					 !strcmp(x->env[k].value, y->env[j].value);
			cr_expect(found, "variant %s: %s=%s only on one side", x->name,
				  x->env[k].key, x->env[k].value);
		}
		expect_same_argv(&x->wrap, &y->wrap, "wrap");
	}
	cr_expect_eq(a->n_workloads, b->n_workloads);
	for (size_t i = 0; i < a->n_workloads && i < b->n_workloads; i++) {
		const struct workload *x = &a->workloads[i], *y = &b->workloads[i];
		cr_expect_str_eq(x->name, y->name);
		expect_same_argv(&x->cmd, &y->cmd, "cmd");
		cr_expect_eq(x->timeout_s, y->timeout_s, "workload %s: timeout", x->name);
		cr_expect_eq(x->repetitions, y->repetitions, "workload %s: repetitions", x->name);
		cr_expect_eq(x->n_setup, y->n_setup, "workload %s: setup", x->name);
	}
}

/* YAML 1.1 merge keys: own keys win, then the earlier mapping of the list. */
Test(config, merge_keys_load_as_the_expanded_file)
{
	struct experiment merged, expanded;

	load_text("name: t\n"
		  "x-slow: &slow {timeout: 20s, repetitions: 3}\n"
		  "x-env: &env {env: {A: '1', B: '2'}, wrap: [nice]}\n"
		  "x-env2: &env2 {env: {A: 'no'}, wrap: [ionice], description: d}\n"
		  "variants:\n"
		  "  - &base {name: base, env: {A: '0'}}\n"
		  "  - <<: [*env, *env2]\n"
		  "    name: traced\n"
		  "  - <<: *base\n"
		  "    name: again\n"
		  "workloads:\n"
		  "  - <<: *slow\n"
		  "    name: w\n"
		  "    cmd: ['true']\n"
		  "    repetitions: 5\n"
		  "  - {<<: *slow, name: v, cmd: ['false'], setup: [[touch, x]]}\n", &merged);
	load_text("name: t\n"
		  "variants:\n"
		  "  - {name: base, env: {A: '0'}}\n"
		  "  - name: traced\n"
		  "    env: {A: '1', B: '2'}\n"
		  "    wrap: [nice]\n"
		  "    description: d\n"
		  "  - {name: again, env: {A: '0'}}\n"
		  "workloads:\n"
		  "  - {name: w, cmd: ['true'], timeout: 20s, repetitions: 5}\n"
		  "  - {name: v, cmd: ['false'], timeout: 20s, repetitions: 3, setup: [[touch, x]]}\n",
		  &expanded);
	expect_same_experiment(&merged, &expanded);
	cr_expect_str_eq(merged.variants[1].description, "d");
	experiment_release(&merged);
	experiment_release(&expanded);
}

/* A merged key keeps the position where it was written. */
Test(config, merge_key_errors_point_at_the_anchor)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "name: t\nx-bad: &bad {repetitions: zero}\nvariants:\n  - name: base\n"
		      "workloads:\n  - <<: *bad\n    name: w\n    cmd: ['true']\n");
	expect_load_error(&sb, ":2:27: 'repetitions' must be an integer from 1 to 1000000, got 'zero'", 0);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "name: t\nvariants:\n  - {name: base, <<: {env: {}}, <<: {wrap: [x]}}\n"
		      "workloads: [{name: w, cmd: ['true']}]\n");
	expect_load_error(&sb, ":3:33: duplicate key '<<' in a mapping (first at 3:18)", 0);
	strbuf_release(&sb);
}

/* One instance per combination, named base[p=v,...] with the parameters
 * sorted, the last varying fastest; {p} replaced in every value. */
Test(config, matrix_instances)
{
	struct experiment exp;
	const char *names[] = {
		"gzip[level=1,size=1M]", "gzip[level=1,size=8M]",
		"gzip[level=6,size=1M]", "gzip[level=6,size=8M]",
	};

	load_text("name: t\n"
		  "variants:\n"
		  "  - name: base\n"
		  "  - name: ftrace\n"
		  "    matrix: {buffer_size_kb: [1024, 16384]}\n"
		  "    kernel: {tracer: nop, buffer_size_kb: '{buffer_size_kb}'}\n"
		  "  - name: ev\n"
		  "    matrix: {events: [['sched:*'], ['sched:*', 'irq:*']]}\n"
		  "    kernel: {events: '{events}'}\n"
		  "    env: {X: '${HOME}{{y}'}\n"
		  "workloads:\n"
		  "  - name: gzip\n"
		  "    matrix: {size: [1M, 8M], level: [1, 6]}\n"
		  "    description: 'gzip -{level} of {size}'\n"
		  "    setup: [[gen, '{size}', '{workdir}/in']]\n"
		  "    prepare: [[sync, '{size}']]\n"
		  "    cmd: [gzip, '-{level}', '-c', 'in-{size}']\n"
		  "  - name: sh\n"
		  "    matrix: {n: [2]}\n"
		  "    shell: 'seq {n}'\n", &exp);

	cr_assert_eq(exp.n_variants, 5);
	cr_expect_str_eq(exp.variants[0].name, "base");
	cr_expect_null(exp.variants[0].base);
	cr_expect_str_eq(exp.variants[1].name, "ftrace[buffer_size_kb=1024]");
	cr_expect_str_eq(exp.variants[1].base, "ftrace");
	cr_expect_eq(exp.variants[1].kernel->buffer_size_kb, 1024);
	cr_expect_str_eq(exp.variants[2].name, "ftrace[buffer_size_kb=16384]");
	cr_expect_eq(exp.variants[2].kernel->buffer_size_kb, 16384);
	cr_expect_eq(exp.variants[2].matrix[0].x, 16384);
	cr_expect_str_eq(exp.variants[3].name, "ev[events=sched:*]");
	cr_expect_eq(exp.variants[3].kernel->n_events, 1);
	cr_expect_str_eq(exp.variants[4].name, "ev[events=sched:*+irq:*]");
	cr_expect_eq(exp.variants[4].kernel->n_events, 2);
	cr_expect_str_eq(exp.variants[4].kernel->events[1], "irq:*");
	cr_expect(exp.variants[4].matrix[0].is_list);
	cr_expect_eq(exp.variants[4].matrix[0].x, 2);
	cr_expect_str_eq(exp.variants[4].env[0].value, "${HOME}{y}");
	cr_expect_str_eq(exp.baseline, "base");

	cr_assert_eq(exp.n_workloads, 5);
	for (size_t i = 0; i < 4; i++) {
		const struct workload *w = &exp.workloads[i];
		const char *size = strstr(names[i], "size=1M") ? "1M" : "8M";
		const char *level = strstr(names[i], "level=1") ? "1" : "6";
		char *want;
		cr_expect_str_eq(w->name, names[i]);
		cr_expect_str_eq(w->base, "gzip");
		cr_assert_eq(w->n_matrix, 2);
		cr_expect_str_eq(w->matrix[0].param, "level");
		cr_expect_str_eq(w->matrix[0].value, level);
		cr_expect_str_eq(w->matrix[1].param, "size");
		cr_expect_str_eq(w->matrix[1].value, size);
		cr_expect_eq(w->matrix[1].x, !strcmp(size, "1M") ? 1048576.0 : 8388608.0);
		cr_expect_str_eq(w->cmd.v[1], !strcmp(level, "1") ? "-1" : "-6");
		want = xasprintf("in-%s", size);
		cr_expect_str_eq(w->cmd.v[3], want);
		free(want);
		cr_expect_str_eq(w->setup[0].v[1], size);
		cr_expect_str_eq(w->setup[0].v[2], "{workdir}/in");
		cr_expect_str_eq(w->prepare[0].v[1], size);
		want = xasprintf("gzip -%s of %s", level, size);
		cr_expect_str_eq(w->description, want);
		free(want);
	}
	cr_expect_str_eq(exp.workloads[4].name, "sh[n=2]");
	cr_expect_str_eq(exp.workloads[4].shell, "seq 2");
	experiment_release(&exp);
}

/* A study with matrices, run for real: every instance's parameters are
 * stored (table matrix), the report draws their curves, and a gate rule
 * names an instance literally (its name is also a glob that does not match
 * itself). */
Test(config, matrix_instances_are_stored_reported_and_gated)
{
	char *dir = tl_tmpdir(), *db = xasprintf("%s/m.db", dir);
	/* a journal folder of its own: perturbs running beside the tests
	 * leave theirs in the shared one */
	char *state = xasprintf("PERTURB_STATE_DIR=%s/state", dir);
	struct cli_result r;

	tl_write(dir, "m.yaml",
		 "name: m\nrepetitions: 4\nwarmup: 0\n"
		 "variants:\n"
		 "  - name: base\n"
		 "  - {name: slow, matrix: {n: [1, 2]}, env: {N: '{n}'}}\n"
		 "workloads:\n"
		 "  - {name: sh, matrix: {size: [1K, 8K]}, cmd: [sh, -c, 'exit 0', '{size}']}\n"
		 "gate:\n"
		 "  - {variant: 'slow[n=2]', workload: 'sh[size=1K]', max_dilation: 1000%}\n");
	cli_run_env(dir, state, &r, "run", "m.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM matrix"), 4);
	cr_expect_eq(cli_sql_int(db, "SELECT x FROM matrix WHERE name = 'sh[size=8K]'"), 8192);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM matrix WHERE kind = 'variant'"
				 " AND base = 'slow' AND param = 'n'"), 2);

	cli_run(dir, &r, "report", "--db", db, "--format", "csv-curves", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* the header, slow against n on 2 workloads, each variant against size */
	cr_expect_eq(tl_count_lines(r.out), 1 + 2 * 2 + 2 * 2, "%s", r.out);
	cr_expect(strstr(r.out, ",variant,slow,n,,sh[size=1K],slow[n=1],wall,s,median,1,1,"), "%s", r.out);
	cr_expect(strstr(r.out, ",workload,sh,size,,sh[size=8K],slow[n=2],wall,s,median,8K,8192,"), "%s", r.out);
	cli_result_release(&r);

	cli_run(dir, &r, "gate", "--db", db, NULL);
	cr_expect(strstr(r.out, "slow[n=2]") && strstr(r.out, "sh[size=1K]"), "%s", r.out);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	cli_result_release(&r);
	tl_rmtree(dir);
	free(dir);
	free(db);
	free(state);
}

/* The shipped example of a matrix loads, with the instances it promises. */
Test(config, matrix_example)
{
	char *path = xasprintf("%s/examples/overhead-curve.yaml", src_dir());
	struct experiment exp;
	char err[1024];

	cr_assert_eq(config_load(path, &exp, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(exp.n_variants, 1 + 4 + 3);
	cr_expect_str_eq(exp.variants[4].name, "buf[kb=16384]");
	cr_expect_eq(exp.variants[4].kernel->buffer_size_kb, 16384);
	cr_expect(exp.variants[4].kernel->tracing_on == 1, "merged from the anchor");
	cr_expect_str_eq(exp.variants[4].kernel->tracer, "nop");
	cr_expect_str_eq(exp.variants[4].description, "sched events into a 16384 KiB buffer per CPU");
	cr_expect_str_eq(exp.variants[7].name, "events[set=sched:*+irq:*+raw_syscalls:*]");
	cr_expect_eq(exp.variants[7].kernel->n_events, 3);
	cr_expect_eq(exp.n_workloads, 3);
	cr_expect_str_eq(exp.workloads[2].name, "gzip[size=64M]");
	cr_expect_str_eq(exp.workloads[2].cmd.v[3], "{workdir}/in-64M.txt");
	experiment_release(&exp);
	free(path);
}

/* Every study the project ships (experiments.yaml, every examples/NAME.yaml) loads:
 * an example that a change of the schema broke fails here, not in a
 * user's hands. */
Test(config, every_shipped_study_loads)
{
	char *dir = xasprintf("%s/examples", src_dir()), *path, err[1024];
	struct dirent *e;
	struct experiment exp;
	size_t n = 0;
	DIR *d = opendir(dir);

	cr_assert(d, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!ends_with(e->d_name, ".yaml"))
			continue;
		path = xasprintf("%s/%s", dir, e->d_name);
		cr_expect_eq(config_load(path, &exp, err, sizeof(err)), 0, "%s", err);
		cr_expect_gt(exp.n_variants, 1, "%s", path);
		experiment_release(&exp);
		free(path);
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 9, "examples found: %zu", n);
	path = xasprintf("%s/experiments.yaml", src_dir());
	cr_expect_eq(config_load(path, &exp, err, sizeof(err)), 0, "%s", err);
	experiment_release(&exp);
	free(path);
	free(dir);
}

/* ---- every duration, count and size has its range (lib/range.h) ---- */

#define STUDY(top, variant, workload) \
	"name: t\n" top "variants:\n  - {name: base" variant "}\n" \
	"workloads:\n  - {name: w, cmd: [\"true\"]" workload "}\n"

/*
 * Where each row of ranges[] is written: a file with %s for the value, or
 * a command line (%s for the value).  Every row has a site here, and every
 * site refuses a value past either end of its row.
 */
static const struct range_site {
	enum range_id r;
	const char *yaml;
	const char *argv[8];
} range_sites[] = {
	{ R_REPETITIONS, STUDY("repetitions: %s\n", "", ""), { NULL } },
	{ R_REPETITIONS, STUDY("", "", ", repetitions: %s"), { NULL } },
	{ R_REPETITIONS, NULL, { "run", "--repetitions", "%s", "--dry-run", "e.yaml" } },
	{ R_WARMUP, STUDY("warmup: %s\n", "", ""), { NULL } },
	{ R_WARMUP, NULL, { "run", "--warmup", "%s", "--dry-run", "e.yaml" } },
	{ R_TIMEOUT, STUDY("timeout: %s\n", "", ""), { NULL } },
	{ R_TIMEOUT, STUDY("", "", ", timeout: %s"), { NULL } },
	{ R_DAEMON_READY, STUDY("", ", daemon: [sleep, \"9\"], daemon_ready: %s", ""), { NULL } },
	{ R_CPU, STUDY("cpus: [%s]\n", "", ""), { NULL } },
	{ R_BUFFER_SIZE_KB, STUDY("", ", kernel: {buffer_size_kb: %s}", ""), { NULL } },
	{ R_BOOT_CPUS, STUDY("", ", boot: {qemu: {kernel: debian, cpus: %s}}", ""), { NULL } },
	{ R_BOOTS, STUDY("", ", boot: {qemu: {kernel: debian, boots: %s}}", ""), { NULL } },
	{ R_BOOT_MEMORY, STUDY("", ", boot: {qemu: {kernel: debian, memory: %s}}", ""), { NULL } },
	{ R_MAX_TIME, NULL, { "run", "--target-ci", "1%", "--max-time", "%s", "e.yaml" } },
	{ R_BOOTSTRAP, NULL, { "report", "--bootstrap", "%s" } },
	{ R_MAX_BOOTSTRAP_N, NULL, { "report", "--max-bootstrap-n", "%s" } },
	{ R_GEN_SIZE, NULL, { "gen", "text", "%s", "out" } },
	{ R_SLURM_TIME, STUDY("engine: {slurm: {time: %s}}\n", "", ""), { NULL } },
	{ R_SHARDS, STUDY("engine: {slurm: {shards: %s}}\n", "", ""), { NULL } },
	{ R_SHARDS, NULL, { "run", "--slurm", "--shards", "%s", "--dry-run", "e.yaml" } },
	{ R_MAX_PARALLEL, STUDY("engine: {slurm: {max_parallel: %s}}\n", "", ""), { NULL } },
	{ R_CALIB_HITS, STUDY("", "", ", calibration: {hits: %s}"), { NULL } },
	{ R_PERF_FREQUENCY, STUDY("", ", perf: {record: {frequency: %s}}", ""), { NULL } },
	{ R_PERF_PERIOD, STUDY("", ", perf: {record: {period: %s}}", ""), { NULL } },
	{ R_PERF_MMAP_PAGES, STUDY("", ", perf: {record: {mmap_pages: %s}}", ""), { NULL } },
	{ R_LTTNG_SUBBUF_SIZE, STUDY("", ", lttng: {userspace: ['a:*'], channel: {subbuf_size: %s}}",
				     ""), { NULL } },
	{ R_LTTNG_SUBBUF_COUNT, STUDY("", ", lttng: {userspace: ['a:*'], channel: {subbuf_count: %s}}",
				      ""), { NULL } },
};

/* Values just outside r (and absurd ones), in r's grammar; NULL-ended. */
static size_t outside(const struct range *r, char out[6][64])
{
	size_t n = 0;

	switch (r->kind) {
	case RANGE_COUNT:
		snprintf(out[n++], 64, "%.0f", r->min - 1);
		snprintf(out[n++], 64, "%.0f", r->max + 1);
		snprintf(out[n++], 64, "2147483647");
		snprintf(out[n++], 64, "99999999999999999999");
		break;
	case RANGE_DURATION:
		if (r->above_min)
			snprintf(out[n++], 64, "%gs", r->min);
		snprintf(out[n++], 64, "%.0fs", r->max + 1);
		snprintf(out[n++], 64, "9.3e18s");
		snprintf(out[n++], 64, "1e300s");
		if (r != &ranges[R_DAEMON_READY])	/* a regex there */
			snprintf(out[n++], 64, "-1s");
		break;
	case RANGE_SIZE:
		if (r->min > 0)
			snprintf(out[n++], 64, "%.0f", r->min - 1);
		snprintf(out[n++], 64, "%.0f", r->max + 1);
		snprintf(out[n++], 64, "16E");
		break;
	}
	return n;
}

/* tmpl with its %s replaced by value (malloc'd). */
static char *subst(const char *tmpl, const char *value)
{
	const char *at = strstr(tmpl, "%s");
	if (!at)
		return xstrdup(tmpl);
	return xasprintf("%.*s%s%s", (int)(at - tmpl), tmpl, value, at + 2);
}

static char *site_file(const char *dir, const char *yaml, const char *value)
{
	char *text = subst(yaml, value), *path = xasprintf("%s/e.yaml", dir);
	tl_write(dir, "e.yaml", text);
	free(text);
	return path;
}

Test(config, every_duration_count_and_size_is_refused_outside_its_range, .timeout = 120)
{
	char *dir = tl_tmpdir(), err[512], vals[6][64], what[128];
	char *state = xasprintf("PERTURB_STATE_DIR=%s", dir);

	tl_write(dir, "e.yaml", STUDY("", "", ""));
	for (size_t r = 0; r < R_N_RANGES; r++) {
		size_t sites = 0;
		for (size_t i = 0; i < ARRAY_SIZE(range_sites); i++)
			sites += range_sites[i].r == r;
		cr_expect(sites, "range '%s' has no site in this test", ranges[r].name);
	}
	for (size_t i = 0; i < ARRAY_SIZE(range_sites); i++) {
		const struct range_site *st = &range_sites[i];
		const struct range *r = &ranges[st->r];
		size_t n = outside(r, vals);

		range_describe(r, what, sizeof(what));
		if (st->yaml) {
			/* inside: loads (so that what follows fails on the range) */
			struct experiment exp;
			char *path = site_file(dir, st->yaml, r->example);
			cr_expect_eq(config_load(path, &exp, err, sizeof(err)), 0,
				     "%s: %s", r->example, err);
			experiment_release(&exp);
			free(path);
		}
		for (size_t k = 0; k < n; k++) {
			if (st->yaml) {
				struct experiment exp;
				char *path = site_file(dir, st->yaml, vals[k]), *want;
				cr_expect_eq(config_load(path, &exp, err, sizeof(err)), -1,
					     "%s: %s: %s was taken", r->name, st->yaml, vals[k]);
				experiment_release(&exp);
				want = xasprintf("' must be %s, got '%s'", what, vals[k]);
				cr_expect(strstr(err, want) && !strncmp(err, path, strlen(path)) &&
					  err[strlen(path)] == ':' && err[strlen(path) + 1] >= '1' &&
					  err[strlen(path) + 1] <= '9',
					  "%s = %s: want FILE:LINE:COL: ...%s, got %s", r->name,
					  vals[k], want, err);
				free(want);
				free(path);
				tl_write(dir, "e.yaml", STUDY("", "", ""));
			} else {
				struct cli_result res;
				char *argv[8] = { NULL };
				for (size_t a = 0; st->argv[a]; a++)
					argv[a] = subst(st->argv[a], vals[k]);
				/* journals of its own: nothing else's is looked at */
				cli_run_env(dir, state, &res, argv[0], argv[1], argv[2], argv[3],
					    argv[4], argv[5], argv[6], NULL);
				cr_expect_eq(res.status, 2, "%s %s: exit %d: %s", r->name, vals[k],
					     res.status, res.err);
				cr_expect(strstr(res.err, what), "%s %s: %s", r->name, vals[k],
					  res.err);
				cli_result_release(&res);
				for (size_t a = 0; argv[a]; a++)
					free(argv[a]);
			}
		}
	}
	tl_rmtree(dir);
	free(dir);
	free(state);
}

/* ---- only regular files are read, and no further than the limit ---- */

/*
 * An experiment or an include that is a FIFO, a device or a folder is
 * refused at once with what it is (a FIFO hung the loader, /dev/zero was
 * read until memory ran out); `workloads validate` and `run` say so with
 * exit 2.
 */
Test(config, only_regular_files_are_read, .timeout = 60)
{
	static const struct { const char *name, *says; } bad[] = {
		{ "p.fifo", "not a regular file (a FIFO)" },
		{ "/dev/zero", "not a regular file (a character device)" },
		{ "sub", "Is a directory" },
	};
	char *dir = tl_tmpdir(), err[512];
	char *state = xasprintf("PERTURB_STATE_DIR=%s", dir);
	char *fifo = xasprintf("%s/p.fifo", dir), *sub = xasprintf("%s/sub", dir);
	struct experiment exp;

	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	cr_assert_eq(mkdir(sub, 0700), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *path = bad[i].name[0] == '/' ? xstrdup(bad[i].name)
						 : xasprintf("%s/%s", dir, bad[i].name);
		char *want = xasprintf("%s: cannot read: %s", path, bad[i].says);
		char *inc = xasprintf("name: t\ninclude: [%s]\n"
				      "variants: [{name: a}]\nworkloads: [{name: w, cmd: [\"true\"]}]\n",
				      bad[i].name);
		struct cli_result r;

		cr_assert_eq(config_load(path, &exp, err, sizeof(err)), -1, "%s was read", path);
		cr_expect_str_eq(err, want);
		free(want);
		/* included: with the include's position */
		tl_write(dir, "e.yaml", inc);
		free(path);
		path = xasprintf("%s/e.yaml", dir);
		cr_assert_eq(config_load(path, &exp, err, sizeof(err)), -1);
		cr_expect(strstr(err, "e.yaml:2:11: cannot read '") && strstr(err, bad[i].says),
			  "%s", err);
		free(path);
		free(inc);
		/* the commands */
		cli_run_env(dir, state, &r, "workloads", "validate", bad[i].name, NULL);
		cr_expect_eq(r.status, 2, "validate %s: %d", bad[i].name, r.status);
		cr_expect(strstr(r.err, bad[i].says), "%s", r.err);
		cli_result_release(&r);
		cli_run_env(dir, state, &r, "run", bad[i].name, "--dry-run", NULL);
		cr_expect_eq(r.status, 2, "run %s: %d", bad[i].name, r.status);
		cr_expect(strstr(r.err, bad[i].says), "%s", r.err);
		cli_result_release(&r);
	}
	tl_rmtree(dir);
	free(dir);
	free(state);
	free(fifo);
	free(sub);
}

/*
 * The class "a metric name perturb stores itself": every name of the one
 * list (core/result.h) is refused as a workload metric with its position
 * (a tracer's where a variant holds its block), and every name perturb's sources add to a run (result_add_value(res,
 * "NAME", ...) and host.c's add_value(res, "NAME", ...)) is on the list.
 */
Test(config, metric_names_perturb_stores_are_reserved)
{
	struct strbuf sb = STRBUF_INIT;
	const char *src = getenv("PERTURB_SRC");
	static const char *const files[] = {
		"harness/core/runner.c", "harness/backends/host.c", "harness/backends/qemu.c",
		"harness/backends/lttng.c", "harness/backends/qemu_lttng.c",
	};
	static const char *const calls[] = { "result_add_value(res, \"", "add_value(res, \"" };
	int found = 0;

	for (const struct reserved_metric *r = result_reserved_metrics; r->name; r++) {
		/* a tracer's names: refused where a variant holds its block */
		static const struct { const char *block, *yaml; } blocks[] = {
			{ "kernel", "kernel: {events: ['sched:sched_switch']}" },
			{ "bpf", "bpf: {probes: ['tracepoint:syscalls:sys_enter_getppid']}" },
			{ "perf", "perf: {trace: {}}" },
			{ "lttng", "lttng: {kernel: [sched_switch]}" },
		};
		const char *block = "";
		char want[256];
		for (size_t i = 0; r->block && i < sizeof(blocks) / sizeof(blocks[0]); i++)
			if (!strcmp(blocks[i].block, r->block))
				block = blocks[i].yaml;
		cr_assert(!r->block || *block, "no block for '%s'", r->block);
		strbuf_reset(&sb);
		strbuf_addf(&sb, "name: t\nvariants:\n  - name: base\n  - {name: v, %s}\n"
			    "workloads:\n  - name: w\n"
			    "    cmd: [true]\n    metrics:\n      - name: x\n        regex: 'x'\n"
			    "      - name: %s\n        regex: 'y'\n", *block ? block : "env: {A: '1'}",
			    r->name);
		snprintf(want, sizeof(want), r->block ? ":11:9: metric name '%s' is reserved (" :
			 ":11:15: metric name '%s' is reserved (", r->name);
		expect_load_error(&sb, want, 0);
		if (r->block) {	/* without the block, a simulation of the tracer may name it */
			struct experiment exp;
			char err[512];
			strbuf_reset(&sb);
			strbuf_addf(&sb, "name: t\nvariants: [{name: base}]\nworkloads:\n  - name: w\n"
				    "    cmd: [true]\n    metrics: [{name: %s, regex: 'y'}]\n", r->name);
			char *path = temp_yaml(sb.buf, sb.len);
			cr_expect_eq(config_load(path, &exp, err, sizeof(err)), 0, "%s: %s", r->name, err);
			experiment_release(&exp);
			unlink(path);
			free(path);
		}
	}
	strbuf_release(&sb);

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *path = xasprintf("%s/%s", src, files[i]), *text = read_file(path, NULL);
		cr_assert(text, "%s", path);
		for (size_t k = 0; k < sizeof(calls) / sizeof(calls[0]); k++)
			for (const char *p = text; (p = strstr(p, calls[k])); ) {
				p += strlen(calls[k]);
				char *name = xstrndup(p, strcspn(p, "\""));
				cr_expect_not_null(result_metric_reserved(name),
						   "%s adds metric '%s', not in result_reserved_metrics[]",
						   files[i], name);
				found++;
				free(name);
			}
		free(text);
		free(path);
	}
	cr_assert_geq(found, 25, "only %d names found: did the calls change?", found);
}
