/*
 * Tests of the workload suite: perturb-micro (its registry, timing and
 * output), the workload files, the {micro} placeholder end to end, and the
 * requirements of workloads with their Debian packages.
 *
 * perturb-micro is $PERTURB_MICRO (set by make test); every micro runs
 * with --samples 3 --min-time 5ms, a few tens of ms each.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/config.h"
#include "core/packages.h"
#include "testlib.h"
#include "lib/util.h"
#include "workloads/micro/micros.h"

/* The set the issue names; the registry must hold at least these. */
static const char *const required[] = {
	"null-syscall", "read", "write", "stat", "open-close", "pipe-latency", "ctxsw",
	"fork-exit", "fork-exec", "page-fault", "mmap", "memcpy-4096", "empty-loop",
};

#define MICRO_NAME(ident, name) name,
static const char *const registry[] = { MICRO_LIST(MICRO_NAME) };
#undef MICRO_NAME

static const char *micro_bin(void)
{
	const char *p = getenv("PERTURB_MICRO");
	cr_assert(p, "PERTURB_MICRO is not set (run the tests with make test)");
	return p;
}

static const char *src_dir(void)
{
	const char *s = getenv("PERTURB_SRC");
	return s ? s : ".";
}

/* Run perturb-micro with args (NULL-terminated); stdout into *out
 * (malloc'd), stderr discarded; returns the exit status. */
static int run_micro(char **out, ...)
{
	char *argv[32];
	int n = 0, fds[2], st;
	va_list ap;
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t got;

	argv[n++] = (char *)micro_bin();
	va_start(ap, out);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 31;)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	cr_assert(pipe(fds) == 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(fds[1], 1);
		if (null >= 0)
			dup2(null, 2);
		close(fds[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	while ((got = read(fds[0], buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR))
		if (got > 0)
			strbuf_add(&sb, buf, (size_t)got);
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*out = strbuf_detach(&sb);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The value of the "key: value" line of out; NAN when absent. */
static double field(const char *out, const char *key)
{
	size_t len = strlen(key);
	for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ':')
			return strtod(p + len + 1, NULL);
	return NAN;
}

/* Load workloads/NAME.yaml of the source tree into w (holder owns it). */
static void load_workload(const char *name, struct experiment *holder, struct workload *w)
{
	char err[1024];
	char *path = xasprintf("%s/workloads/%s.yaml", src_dir(), name);
	cr_assert(tl_exists(path), "no workload file %s", path);
	cr_assert_eq(config_load_workload(path, holder, w, err, sizeof(err)), 0, "%s", err);
	free(path);
}

/* The value the metric's regex extracts from out, as the runner does
 * (line-wise, group 1); NAN when it does not match. */
static double extract(const struct metric_def *md, const char *out)
{
	regex_t re;
	regmatch_t m[2];
	double v = NAN;
	cr_assert_eq(regcomp(&re, md->regex_src, REG_EXTENDED | REG_NEWLINE), 0);
	if (!regexec(&re, out, 2, m, 0) && m[1].rm_so >= 0)
		v = strtod(out + m[1].rm_so, NULL);
	regfree(&re);
	return v;
}

TestSuite(micro, .timeout = 60);

Test(micro, registry_holds_every_required_micro_and_list_prints_it)
{
	char *out;
	cr_assert_eq(run_micro(&out, "--list", NULL), 0);
	for (size_t i = 0; i < ARRAY_SIZE(required); i++) {
		int found = 0;
		for (size_t j = 0; j < ARRAY_SIZE(registry); j++)
			found |= !strcmp(required[i], registry[j]);
		cr_assert(found, "'%s' is not in MICRO_LIST", required[i]);
	}
	cr_assert_eq(tl_count_lines(out), (int)ARRAY_SIZE(registry), "%s", out);
	for (size_t j = 0; j < ARRAY_SIZE(registry); j++) {
		char *line = xasprintf("%s\n", registry[j]);
		cr_assert(strstr(out, line), "--list lacks %s: %s", registry[j], out);
		free(line);
	}
	free(out);
}

Test(micro, every_micro_has_a_valid_workload_file)
{
	for (size_t j = 0; j < ARRAY_SIZE(registry); j++) {
		struct experiment holder = { 0 };
		struct workload w = { 0 };
		int ns = 0, cyc = 0;
		load_workload(registry[j], &holder, &w);
		cr_assert_eq(w.kind, WORKLOAD_MICRO, "%s", registry[j]);
		cr_assert(w.description && *w.description, "%s", registry[j]);
		cr_assert_geq(w.cmd.n, 2, "%s", registry[j]);
		cr_assert_str_eq(w.cmd.v[0], "{micro}");
		cr_assert_str_eq(w.cmd.v[1], registry[j]);
		for (size_t m = 0; m < w.n_metrics; m++) {
			if (!strcmp(w.metrics[m].name, "ns_per_op")) {
				cr_assert_str_eq(w.metrics[m].unit, "ns");
				ns = 1;
			} else if (!strcmp(w.metrics[m].name, "tsc_cycles_per_op")) {
				cr_assert_str_eq(w.metrics[m].unit, "cycles");
				cyc = 1;
			}
		}
		cr_assert(ns && cyc, "%s: ns_per_op and tsc_cycles_per_op metrics", registry[j]);
		workload_release(&w);
		experiment_release(&holder);
	}
}

/* Each micro runs briefly and its workload's regexes find positive
 * values in what it prints (empty-loop's may be about 0: below). */
Test(micro, every_micro_runs_and_its_metrics_match)
{
	for (size_t j = 0; j < ARRAY_SIZE(registry); j++) {
		struct experiment holder = { 0 };
		struct workload w = { 0 };
		char *out;
		int st = run_micro(&out, registry[j], "--samples", "3", "--min-time", "5ms", NULL);
		cr_assert_eq(st, 0, "%s exited %d: %s", registry[j], st, out);
		load_workload(registry[j], &holder, &w);
		for (size_t m = 0; m < w.n_metrics; m++) {
			double v = extract(&w.metrics[m], out);
			cr_assert(isfinite(v), "%s: metric %s not found in:\n%s", registry[j],
				  w.metrics[m].name, out);
			if (strcmp(registry[j], "empty-loop"))
				cr_assert_gt(v, 0, "%s: %s = %g", registry[j], w.metrics[m].name, v);
		}
		cr_assert_eq(field(out, "samples"), 3);
		cr_assert_geq(field(out, "iterations"), 1);
		workload_release(&w);
		experiment_release(&holder);
		free(out);
	}
}

/*
 * What the subtraction is: the reference loop is measured (a positive cost
 * per call) and named, each sample's net cost is a median's neighbour (the
 * minimum at most the median), and a micro with its own baseline names it.
 * How close to 0 an empty operation comes, and by how much memcpy-4096
 * exceeds it, are timing claims: a preempted reference sample moves them
 * by tens of ns on a busy machine (the test failed so); they are measured
 * by bench/micro-subtraction.sh.
 */
Test(micro, loop_overhead_is_subtracted)
{
	char *out;
	double empty, loop;

	cr_assert_eq(run_micro(&out, "empty-loop", "--samples", "15", "--min-time", "2ms", NULL), 0);
	empty = field(out, "ns_per_op");
	loop = field(out, "loop_ns_per_call");
	cr_assert(isfinite(empty) && isfinite(loop), "%s", out);
	cr_assert_gt(loop, 0, "%s", out);
	cr_assert_leq(field(out, "ns_per_op_min"), empty, "%s", out);
	cr_assert(strstr(out, "reference: empty\n"), "%s", out);
	free(out);

	cr_assert_eq(run_micro(&out, "memcpy-4096", "--samples", "5", "--min-time", "5ms", NULL), 0);
	cr_assert(isfinite(field(out, "ns_per_op")), "%s", out);
	cr_assert(strstr(out, "reference: empty\n"), "%s", out);
	free(out);

	/* ctxsw subtracts its own baseline (the pipe round trip without a
	 * switch); its operations switch, as the kernel counts */
	cr_assert_eq(run_micro(&out, "ctxsw", "--samples", "3", "--min-time", "5ms", NULL), 0);
	cr_assert(strstr(out, "reference: baseline\n"), "%s", out);
	cr_assert(isfinite(field(out, "ns_per_op")), "%s", out);
	cr_assert_gt(field(out, "ctxsw_per_op"), 0, "%s", out);
	free(out);
}

Test(micro, page_fault_faults_once_per_op)
{
	char *out;
	cr_assert_eq(run_micro(&out, "page-fault", "--samples", "3", "--min-time", "5ms", NULL), 0);
	double f = field(out, "minor_faults_per_op");
	cr_assert(f > 0.9 && f < 1.2, "minor_faults_per_op %g:\n%s", f, out);
	free(out);
}

/*
 * ops: every operation of the run in the unit of ns_per_op (calls x the
 * micro's events per call), the iteration search and every sample: a
 * fixed count with --iterations, at least the samples' and the last
 * search loop's otherwise (docs/workloads.md).
 */
Test(micro, ops_counts_every_operation_of_the_run)
{
	char *out;
	double n;

	cr_assert_eq(run_micro(&out, "null-syscall", "--iterations", "1000", "--samples", "2",
			       "--min-time", "1ms", NULL), 0);
	cr_assert_eq(field(out, "ops"), 2000, "2 samples of 1000 calls, no search: %s", out);
	free(out);
	cr_assert_eq(run_micro(&out, "marker-empty-loop", "--iterations", "3", "--samples", "2",
			       "--min-time", "1ms", NULL), 0);
	cr_assert_eq(field(out, "ops"), 2 * 3 * 1024, "1024 iterations a call: %s", out);
	free(out);
	cr_assert_eq(run_micro(&out, "null-syscall", "--samples", "3", "--min-time", "1ms", NULL), 0);
	n = field(out, "iterations");
	cr_assert_geq(field(out, "ops"), 4 * n, "the search's last loop and 3 samples: %s", out);
	free(out);
	cr_assert_eq(run_micro(&out, "null-syscall", "--iterations", "10", "--samples", "1", "--json",
			       NULL), 0);
	cr_assert(strstr(out, "\"ops\": 10}"), "%s", out);
	free(out);
}

Test(micro, options_and_errors)
{
	char *out;
	cr_assert_eq(run_micro(&out, "null-syscall", "--iterations", "1000", "--samples", "2",
			       "--min-time", "1ms", NULL), 0);
	cr_assert_eq(field(out, "iterations"), 1000, "%s", out);
	free(out);

	cr_assert_eq(run_micro(&out, "read", "--json", "--samples", "2", "--min-time=1ms", NULL), 0);
	cr_assert(out[0] == '{' && strstr(out, "\"ns_per_op\": ") &&
		  strstr(out, "\"micro\": \"read\""), "%s", out);
	free(out);

	cr_assert_eq(run_micro(&out, "noop", NULL), 0);
	cr_assert_str_eq(out, "");
	free(out);

	cr_assert_eq(run_micro(&out, "no-such-micro", NULL), 2);
	free(out);
	cr_assert_eq(run_micro(&out, "read", "--samples", "0", NULL), 2);
	free(out);
	cr_assert_eq(run_micro(&out, "read", "--min-time", "soon", NULL), 2);
	free(out);
	cr_assert_eq(run_micro(&out, "read", "--bogus", NULL), 2);
	free(out);
	cr_assert_eq(run_micro(&out, NULL), 2);
	free(out);
	cr_assert_eq(run_micro(&out, "stat", "--path", "/nonexistent/file", NULL), 1);
	free(out);
	cr_assert_eq(run_micro(&out, "--help", NULL), 0);
	cr_assert(strstr(out, "memcpy-4096"), "%s", out);
	free(out);
}

/* ---- perturb run with micro workloads ---- */

TL_FIXTURE_DB("results/perturb.db")

static void cli_setup(void)
{
	char *link;
	tl_setup();
	/* workloads given by name are found in DIR/workloads/ */
	link = xasprintf("%s/workloads", dir);
	char *target = xasprintf("%s/workloads", src_dir());
	char *abs = realpath(target, NULL);
	cr_assert(abs, "%s", target);
	cr_assert_eq(symlink(abs, link), 0);
	free(abs);
	free(target);
	free(link);
}

TestSuite(micro_cli, .init = cli_setup, .fini = tl_teardown, .timeout = 60);

Test(micro_cli, run_stores_ns_per_op_of_two_micro_workloads)
{
	struct cli_result r;
	tl_write(dir, "e.yaml",
		 "name: micro\n"
		 "repetitions: 2\n"
		 "warmup: 0\n"
		 "variants: [{name: vanilla}]\n"
		 "workloads:\n"
		 "  - memcpy-4096\n"		/* workloads/memcpy-4096.yaml */
		 "  - name: syscall\n"
		 "    kind: micro\n"
		 "    cmd: [\"{micro}\", null-syscall, --samples, \"3\", --min-time, 5ms]\n"
		 "    metrics:\n"
		 "      - {name: ns_per_op, regex: '^ns_per_op: (-?[0-9.]+)', unit: ns}\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "-q", NULL);
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 4);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values WHERE metric = 'ns_per_op'"
				 " AND value > 0 AND unit = 'ns'"), 4);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values"
				 " WHERE metric = 'tsc_cycles_per_op' AND unit = 'cycles'"), 2);
}

Test(micro_cli, missing_program_is_reported_with_its_package_before_anything_runs)
{
	struct cli_result r;
	tl_write(dir, "e.yaml",
		 "name: req\n"
		 "variants: [{name: vanilla}]\n"
		 "workloads:\n"
		 "  - {name: hb, requires: [hackbench], cmd: [hackbench]}\n");
	/* an empty PATH: hackbench cannot be found, whatever is installed */
	cli_run_env(dir, "PATH=/nonexistent", &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cr_assert(strstr(r.err, "workload 'hb' requires 'hackbench', not found on PATH "
			 "(Debian package: rt-tests)"), "%s", r.err);
	cli_result_release(&r);
	cr_assert_not(tl_exists(db), "a database was written");

	cli_run_env(dir, "PATH=/nonexistent", &r, "workloads", "list", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "needs 'perf', not found on PATH (Debian package: linux-perf)"),
		  "%s", r.out);
	cli_result_release(&r);

	cli_run_env(dir, "PATH=/nonexistent", &r, "workloads", "show", "hackbench", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "# available here: no, needs 'hackbench', not found on PATH "
			 "(Debian package: rt-tests)"), "%s", r.out);
	cli_result_release(&r);
}

Test(micro_cli, micro_workload_needs_perturb_micro_next_to_perturb)
{
	struct cli_result r;
	char *bin = xasprintf("%s/perturb", dir), *cmd;
	/* a perturb with no perturb-micro beside it */
	cmd = xasprintf("cp '%s' '%s'", getenv("PERTURB_BIN"), bin);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	tl_write(dir, "e.yaml",
		 "name: nomicro\nvariants: [{name: vanilla}]\nworkloads: [null-syscall]\n");
	cmd = xasprintf("cd '%s' && ./perturb run e.yaml --db '%s' 2> err.txt", dir, db);
	cr_assert_eq(WEXITSTATUS(system(cmd)), 2);
	free(cmd);
	char *path = xasprintf("%s/err.txt", dir), *err = read_file(path, NULL);
	cr_assert(err && strstr(err, "requires perturb-micro, not found at"), "%s", err);
	free(err);
	free(path);
	free(bin);

	cli_run(dir, &r, "workloads", "validate", "workloads/null-syscall.yaml", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	tl_write(dir, "bad.yaml", "name: bad\nkind: micro\ncmd: [\"{micro}\", no-such-micro]\n");
	cli_run(dir, &r, "workloads", "validate", "bad.yaml", NULL);
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "perturb-micro has no micro-benchmark 'no-such-micro'"), "%s", r.err);
	cli_result_release(&r);
}

Test(micro_cli, every_workload_file_validates)
{
	struct cli_result r;
	char *cmd = xasprintf("cd '%s' && ls workloads/*.yaml | wc -l > n.txt", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	cli_run(dir, &r, "workloads", "list", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_not(strstr(r.out, "invalid"), "%s", r.out);
	static const char *const real[] = {
		"bzip2", "xz", "gzip", "compile", "kernel-build", "sched-pipe", "hackbench",
		"sysbench-cpu",
	};
	for (size_t i = 0; i < ARRAY_SIZE(real); i++) {
		char *line = xasprintf("\n%-18s real ", real[i]);
		cr_assert(strstr(r.out, line), "no real workload %s in:\n%s", real[i], r.out);
		free(line);
	}
	cli_result_release(&r);
}

/* ---- the package table ---- */

Test(packages, programs_map_to_debian_packages)
{
	static const char *const rows[][2] = {
		{ "bzip2", "bzip2" }, { "xz", "xz-utils" }, { "gzip", "gzip" },
		{ "perf", "linux-perf" }, { "hackbench", "rt-tests" }, { "sysbench", "sysbench" },
		{ "strace", "strace" }, { "gcc", "gcc" }, { "make", "make" },
		{ "bpftrace", "bpftrace" }, { "flex", "flex" }, { "bison", "bison" },
		{ "/usr/src/linux-source-*.tar.xz", "linux-source" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *p = package_for(rows[i][0]);
		cr_assert(p, "no package for %s", rows[i][0]);
		cr_assert_str_eq(p, rows[i][1]);
	}
	cr_assert_null(package_for("no-such-program-xyz"));
}

Test(packages, requirement_messages)
{
	char why[256];
	cr_assert(requirement_met("sh", why, sizeof(why)));
	cr_assert(requirement_met("/bin/s?", why, sizeof(why)));	/* a glob */
	cr_assert_not(requirement_met("no-such-program-xyz", why, sizeof(why)));
	cr_assert_str_eq(why, "'no-such-program-xyz', not found on PATH");
	cr_assert_not(requirement_met("/nonexistent/*.tar.xz", why, sizeof(why)));
	cr_assert_str_eq(why, "'/nonexistent/*.tar.xz', no such file");
}
