/*
 * One perturb at a time per stored run (harness/engine/study.c, run_lock):
 * a second `perturb run --resume` of a run that a live perturb is running
 * or resuming is refused, exit 3, with "run N is being resumed by pid P",
 * and runs nothing.  Two real perturb processes; the first is held inside
 * its workload by two FIFOs (no sleeps): the workload writes "up" to
 * `ready` (the test reads it: the first perturb holds the run now) and
 * then waits for EOF on `go` (the test opens and closes it to let it end).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "lib/util.h"

TL_FIXTURE_WORK()

TestSuite(resume, .init = tl_setup, .fini = tl_teardown, .timeout = 60);


static void make_fifos(void)
{
	char *r = xasprintf("%s/ready", work), *g = xasprintf("%s/go", work);
	cr_assert_eq(mkfifo(r, 0600), 0, "%s", strerror(errno));
	cr_assert_eq(mkfifo(g, 0600), 0, "%s", strerror(errno));
	free(r);
	free(g);
}

/* Blocks until the held workload has written "up" to ready. */
static void wait_ready(void)
{
	char *r = xasprintf("%s/ready", work), buf[8] = "";
	int fd = open(r, O_RDONLY);
	cr_assert(fd >= 0, "%s", strerror(errno));
	cr_assert(read(fd, buf, sizeof(buf) - 1) > 0);
	cr_assert(!strncmp(buf, "up", 2));
	close(fd);
	free(r);
}

/* One run, held in its workload until release(). */
static void write_held_study(void)
{
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 1\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - name: t\n"
		 "    shell: 'echo up > ../ready; cat ../go'\n");
}

/* Lets the held workload end; returns the first perturb's exit status. */
static int release(pid_t first)
{
	char *g = xasprintf("%s/go", work);
	int fd = open(g, O_WRONLY);
	cr_assert(fd >= 0, "%s", strerror(errno));
	close(fd);
	free(g);
	return cli_wait(first);
}

/* A --resume through the database's name `name` (NULL: db) is refused. */
static void refused_through(pid_t first, const char *how, const char *name)
{
	struct cli_result r;
	char *want = xasprintf("run 1 is being %s by pid %d", how, (int)first);

	cli_run(dir, &r, "run", "e.yaml", "--db", name ? name : db, "--resume", NULL);
	cr_expect_eq(r.status, 3, "exit %d: %s", r.status, r.err);
	cr_expect(strstr(r.err, want), "expected '%s' in: %s", want, r.err);
	cr_expect(!strstr(r.err, "UNIQUE"), "%s", r.err);
	cli_result_release(&r);
	free(want);
}

static void second_is_refused(pid_t first, const char *how)
{
	refused_through(first, how, NULL);
}

Test(resume, two_resumes_of_one_run_the_second_is_refused)
{
	struct cli_result r;
	pid_t first;

	/* the first run stops itself (SIGINT) before anything is stored */
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 1\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - name: t\n"
		 "    shell: 'if [ -e ../once ]; then echo up > ../ready; cat ../go; else "
		 "touch ../once; kill -INT $PPID; sleep 30; fi'\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 3, "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 0);
	make_fifos();

	first = cli_start(dir, "run", "e.yaml", "--db", db, "--resume", NULL);
	wait_ready();
	second_is_refused(first, "resumed");
	cr_assert_eq(release(first), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status = 'ok'"), 1);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 1);
	tl_assert_no_children();
}

Test(resume, a_resume_of_a_run_that_is_running_is_refused)
{
	pid_t first;

	write_held_study();
	make_fifos();
	first = cli_start(dir, "run", "e.yaml", "--db", db, NULL);
	wait_ready();
	second_is_refused(first, "run");
	cr_assert_eq(release(first), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 1);
	tl_assert_no_children();
}

/*
 * The class: the options of `perturb run` that shape a plan.  A resume
 * runs the stored plan as it was first run, so each of them given with
 * --resume is refused, exit 2, with its name, and nothing is run: never
 * silently ignored (--warmup and --self-check were).
 */
Test(resume, every_option_that_shapes_the_plan_is_refused_by_a_resume)
{
	static const char *const shaping[][2] = {
		{ "--repetitions=3", "--repetitions" },
		{ "--warmup=2", "--warmup" },
		{ "--self-check", "--self-check" },
		{ "--seed=7", "--seed" },
		{ "--only-variant=a", "--only-variant" },
		{ "--only-workload=t", "--only-workload" },
	};
	struct cli_result r;

	/* an interrupted run with nothing stored: the workload stops perturb */
	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 1\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - name: t\n"
		 "    shell: 'if [ -e ../once ]; then true; else "
		 "touch ../once; kill -INT $PPID; sleep 30; fi'\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 3, "%s", r.err);
	cli_result_release(&r);
	for (size_t i = 0; i < sizeof(shaping) / sizeof(shaping[0]); i++) {
		cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", shaping[i][0], NULL);
		cr_expect_eq(r.status, 2, "%s: exit %d: %s", shaping[i][0], r.status, r.err);
		cr_expect(strstr(r.err, shaping[i][1]), "%s: %s", shaping[i][0], r.err);
		cli_result_release(&r);
		cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 0, "%s",
			     shaping[i][0]);
	}
	/* without them, the resume runs what is missing */
	cli_run(dir, &r, "run", "e.yaml", "--db", db, "--resume", NULL);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cli_result_release(&r);
	cr_expect_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 1);
	tl_assert_no_children();
}

/*
 * The class: the names of one database.  The lock follows the file, not
 * the name: a resume through a symbolic link to the database, through a
 * link to its folder, or by a path with .. in it meets the lock of the
 * run that is running (it got past it: two perturbs ran one run); a hard
 * link, below.
 */
Test(resume, every_name_of_the_database_meets_the_same_lock)
{
	static const char *const names[] = {
		"link.db", "linked-results/perturb.db", "results/../results/perturb.db",
	};
	pid_t first;

	write_held_study();
	char *l = xasprintf("%s/link.db", dir), *d = xasprintf("%s/linked-results", dir);
	cr_assert_eq(symlink("results/perturb.db", l), 0);
	cr_assert_eq(symlink("results", d), 0);
	free(l);
	free(d);
	make_fifos();
	first = cli_start(dir, "run", "e.yaml", "--db", db, NULL);
	wait_ready();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		refused_through(first, "run", names[i]);
	cr_assert_eq(release(first), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 1);
	tl_assert_no_children();
}

/*
 * A hard link to the database in a folder of its own: its DB.lock is
 * another file, so the database file itself is locked (run_lock).  The
 * interrupted run is in the main file (SQLite checkpointed it when the
 * first perturb closed it), so the resume through the link finds it.
 */
Test(resume, a_resume_through_a_hard_link_meets_the_lock)
{
	struct cli_result r;
	pid_t first;

	tl_write(dir, "e.yaml", "name: x\nwarmup: 0\nrepetitions: 1\n"
		 "variants: [{name: a}]\n"
		 "workloads:\n"
		 "  - name: t\n"
		 "    shell: 'if [ -e ../once ]; then echo up > ../ready; cat ../go; else "
		 "touch ../once; kill -INT $PPID; sleep 30; fi'\n");
	cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
	cr_assert_eq(r.status, 3, "%s", r.err);
	cli_result_release(&r);
	char *other = xasprintf("%s/other", dir), *hard = xasprintf("%s/other/hard.db", dir);
	cr_assert_eq(mkdir(other, 0755), 0);
	cr_assert_eq(link(db, hard), 0, "%s", strerror(errno));
	make_fifos();
	first = cli_start(dir, "run", "e.yaml", "--db", db, "--resume", NULL);
	wait_ready();
	cli_run(dir, &r, "run", "e.yaml", "--db", "other/hard.db", "--resume", NULL);
	cr_expect_eq(r.status, 3, "exit %d: %s", r.status, r.err);
	cr_expect(strstr(r.err, "run 1 is being run or resumed by another perturb, through "
			 "another name"), "%s", r.err);
	cli_result_release(&r);
	cr_assert_eq(release(first), 0);
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results"), 1);
	tl_assert_no_children();
	free(other);
	free(hard);
}

/*
 * The class "a run listed as running forever": a run whose process was
 * killed (SIGKILL: it could not mark itself interrupted) is stored
 * "running", and its lock (byte 2N of the database file) has no holder.
 * Wherever it is listed - perturb runs (text and JSON), the report's
 * header and JSON, gate's refusal - it is "interrupted"; while its process
 * holds the lock it is "running".
 */
Test(resume, a_killed_run_is_listed_as_interrupted)
{
	struct cli_result r;
	pid_t first;

	write_held_study();
	make_fifos();
	first = cli_start(dir, "run", "e.yaml", "--db", db, NULL);
	wait_ready();
	cli_run(dir, &r, "runs", "--db", db, "--json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"status\": \"running\""), "%s", r.out);
	cli_result_release(&r);

	cr_assert_eq(kill(first, SIGKILL), 0);
	cr_assert_eq(cli_wait(first), 128 + SIGKILL);
	{	/* the orphaned workload ends */
		char *g = xasprintf("%s/go", work);
		int fd = open(g, O_WRONLY);
		cr_assert(fd >= 0, "%s", strerror(errno));
		close(fd);
		free(g);
	}
	cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM runs WHERE status = 'running'"), 1);

	cli_run(dir, &r, "runs", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "interrupted") && !strstr(r.out, "running"), "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "runs", "--db", db, "--json", NULL);
	cr_assert(strstr(r.out, "\"status\": \"interrupted\""), "%s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, "--format", "json", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "\"status\":\"interrupted\""), "%.600s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "report", "--db", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "interrupted") && !strstr(r.out, "running"), "%.600s", r.out);
	cli_result_release(&r);
	cli_run(dir, &r, "gate", "--db", db, "--max-dilation", "5%", NULL);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(strstr(r.err, "run 1 is incomplete (interrupted)"), "%s", r.err);
	cli_result_release(&r);
	tl_assert_no_children();
}
