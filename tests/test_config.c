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
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/config.h"
#include "backends/qemu_config.h"
#include "lib/util.h"

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
