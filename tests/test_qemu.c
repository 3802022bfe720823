/*
 * Tests of the qemu backend (harness/backend_qemu.c): Debian's 6.1 kernel
 * (fetched once into perturb's cache) boots under TCG with the guest agent,
 * once plainly and once with boot-time syscall tracing
 * (trace_event=raw_syscalls:*), and every run of a micro workload comes
 * back with its metric.  About a minute here (two boots of ~7 s, TCG).
 *
 * Skipped (cr_skip) when qemu-system-x86_64 or busybox-static is missing,
 * or the guest agent was not built (no static C library).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "initramfs.h"
#include "testlib.h"
#include "util.h"

static char *dir;

static void setup(void)
{
	dir = tl_tmpdir();
}

static void teardown(void)
{
	tl_rmtree(dir);
	free(dir);
}

TestSuite(qemu, .init = setup, .fini = teardown, .timeout = 180);

static void skip_unless_qemu(void)
{
	const char *bin = getenv("PERTURB_BIN");
	char *agent, *bindir;
	int have_agent;

	if (!program_exists("qemu-system-x86_64"))
		cr_skip_test("qemu-system-x86_64 is missing (Debian package qemu-system-x86)");
	if (access("/bin/busybox", X_OK) < 0)
		cr_skip_test("/bin/busybox is missing (Debian package busybox-static)");
	cr_assert(bin, "PERTURB_BIN is not set (run the tests with make test)");
	bindir = dir_name(bin);
	agent = xasprintf("%s/perturb-guest-agent", bindir);
	have_agent = access(agent, X_OK) == 0;
	free(agent);
	free(bindir);
	if (!have_agent)
		cr_skip_test("build/perturb-guest-agent was not built (no static C library)");
}

Test(qemu, cpio_is_newc_and_aligned)
{
	struct cpio c;

	cpio_init(&c);
	cpio_add_data(&c, "/a/b/f", "xyz", 3, 0644);
	cpio_add_symlink(&c, "/bin/sh", "busybox");
	cpio_add_data(&c, "/a/b/f", "dup", 3, 0644);	/* ignored */
	cpio_finish(&c);
	cr_assert_eq(c.buf.len % 512, 0);
	cr_assert(!memcmp(c.buf.buf, "070701", 6));
	/* /a, /a/b, /a/b/f, /bin, /bin/sh */
	cr_assert_eq(c.n_paths, 5);
	cr_assert(memmem(c.buf.buf, c.buf.len, "TRAILER!!!", 10));
	cr_assert(memmem(c.buf.buf, c.buf.len, "a/b/f\0", 6));
	cpio_release(&c);
}

Test(qemu, two_command_lines_every_run_comes_back)
{
	struct cli_result r;
	char *db;

	skip_unless_qemu();
	tl_write(dir, "e.yaml",
		 "name: qemu-boot\n"
		 "repetitions: 3\n"
		 "warmup: 0\n"
		 "order: sequential\n"
		 "variants:\n"
		 "  - name: plain\n"
		 "    boot: {qemu: {kernel: debian, memory: 512M, cpus: 1, kvm: false}}\n"
		 "  - name: raw-syscalls\n"
		 "    boot: {qemu: {kernel: debian, cmdline: \"trace_event=raw_syscalls:*\",\n"
		 "                  memory: 512M, cpus: 1, kvm: false}}\n"
		 "workloads:\n"
		 "  - name: null-syscall\n"
		 "    kind: micro\n"
		 "    cmd: [\"{micro}\", null-syscall, --samples, \"3\", --min-time, 5ms]\n"
		 "    metrics:\n"
		 "      - {name: ns_per_op, regex: '^ns_per_op: (-?[0-9.]+)', unit: ns}\n"
		 "    timeout: 60s\n");
	db = xasprintf("%s/r.db", dir);
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "perturb run failed:\n%s", r.err);
	cr_assert(strstr(r.err, "booted 6.1."), "no boot reported:\n%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 6,
		     "%s", r.err);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM metric_values WHERE metric = 'ns_per_op'"
				 " AND value > 0"), 6);
	/* the command line took effect: every getppid() now writes two events
	 * (3.5x slower under TCG here); ask for a quarter more at least */
	cr_assert_gt(cli_sql_int(db, "SELECT 1 FROM (SELECT"
				 " (SELECT min(m.value) FROM metric_values m JOIN plan p USING (run_id, seq)"
				 "  WHERE p.variant = 'raw-syscalls') AS t,"
				 " (SELECT max(m.value) FROM metric_values m JOIN plan p USING (run_id, seq)"
				 "  WHERE p.variant = 'plain') AS v) WHERE t > 1.25 * v"), 0,
		     "syscall tracing did not slow getppid down:\n%s", r.err);
	cli_result_release(&r);
	free(db);
}
