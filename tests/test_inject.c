/*
 * test_inject.c - placeholders never inject shell code (lib/util.h,
 * expand_placeholders_script(); docs/experiment.md, "Placeholders in shell
 * text").  A results folder named `x;touch PWNED;#` or `$(touch PWNED)`
 * ran the command and the study recorded the failing command as ok.
 *
 * Every nasty value (; # $( ) ` ' " newline spaces backslash) in every
 * quoting context is run through a real sh; then a real study whose
 * results folder (so {logdir} and {workdir}) has such a name runs every
 * place a placeholder is expanded: a workload's shell:, cmd, setup and
 * prepare, a variant's wrap, setup, teardown, daemon and background.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "testlib.h"

TL_FIXTURE_DIR()

TestSuite(inject, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

static const char *const nasty[] = {
	"x;touch PWNED;#",
	"$(touch PWNED)",
	"`touch PWNED`",
	"a'b",
	"a\"b",
	"line\nbreak",
	"two  spaces",
	"back\\slash",
	"'; touch PWNED; '",
	"\"; touch PWNED; \"",
	"${IFS}*",
	"-n",
};

/* What `words...` prints on stdout (run in dir, no shell of ours). */
static char *run_words(char **words)
{
	struct tl_capture c;
	pid_t pid;
	int st;

	fflush(stdout);
	tl_capture_start(&c, 1);
	pid = fork();
	if (pid == 0) {
		if (chdir(dir) < 0)
			_exit(126);
		execvp(words[0], words);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	char *out = tl_capture_end(&c);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d for %s", WEXITSTATUS(st),
		  words[2]);
	return out;
}

Test(inject, a_value_is_never_shell_code_in_any_quoting)
{
	/* the script prints the value between > and < */
	static const char *const contexts[] = {
		"printf '>%s<' \"{v}\"",		/* in double quotes */
		"printf '>%s<' {v}",			/* outside quotes */
		"printf '>%s<' '{v}'",			/* in single quotes */
		"printf '>%s<' \"pre {v} post\"",	/* inside a longer text */
		"x=\"{v}\"; printf '>%s<' \"$x\"",
	};
	static const char *const shells[][3] = {
		{ "sh", "-c" }, { "bash", "-ec" }, { "env", "dash" },
	};

	for (size_t k = 0; k < ARRAY_SIZE(nasty); k++) {
		struct placeholder ph[] = { { "{v}", nasty[k] } };
		for (size_t c = 0; c < ARRAY_SIZE(contexts); c++) {
			for (size_t s = 0; s < ARRAY_SIZE(shells); s++) {
				char *words[] = { (char *)shells[s][0], (char *)shells[s][1],
						  (char *)"-c", (char *)contexts[c], NULL };
				size_t n = s == 2 ? 4 : 3;
				if (s != 2)
					words[2] = (char *)contexts[c], words[3] = NULL;
				if (!program_exists(words[s == 2 ? 1 : 0]))
					continue;
				char **v = expand_placeholders_argv(words, n, ph, 1);
				char *out = run_words(v);
				int pre = strstr(contexts[c], "pre ") != NULL;
				char *want = xasprintf("%s%s%s", pre ? "pre " : "", nasty[k],
						       pre ? " post" : "");
				char *want_out = xasprintf(">%s<", want);
				/* unquoted, the shell splits on blanks: one value, two
				 * printf arguments; still no code run */
				if (c != 1 || !strpbrk(nasty[k], " \n\t"))
					cr_assert_str_eq(out, want_out, "value '%s', script %s -> %s",
							 nasty[k], contexts[c], v[n - 1]);
				cr_assert(!tl_exists("PWNED"), "value '%s' ran code", nasty[k]);
				free(want);
				free(want_out);
				free(out);
				argv_free(v);
			}
		}
	}
}

Test(inject, only_a_shells_script_word_is_rewritten)
{
	struct placeholder ph[] = { { "{v}", "a b" } };
	char *gcc[] = { "gcc", "-c", "-o", "{v}/x.o", NULL };
	char *ts[] = { "taskset", "-c", "0", "bash", "-ec", "echo {v}", "{v}", NULL };
	char **v;

	v = expand_placeholders_argv(gcc, 4, ph, 1);
	cr_assert_str_eq(v[3], "a b/x.o");
	cr_assert_null(v[4]);
	argv_free(v);
	v = expand_placeholders_argv(ts, 7, ph, 1);
	cr_assert_str_eq(v[2], "0");
	cr_assert_str_eq(v[5], "perturb_v='a b'; echo \"${perturb_v}\"");
	cr_assert_str_eq(v[6], "a b", "an argument after the script is a plain word");
	argv_free(v);
}

/* A study in a results folder with a nasty name: every place runs its
 * command with the folder itself, nothing else runs, every run is ok. */
Test(inject, a_nasty_results_folder_in_every_place)
{
	static const char *const folders[] = {
		"x;touch PWNED;#",
		"$(touch PWNED)",
		"q'uote\"d `touch PWNED` sp ace\nnl",
	};
	struct cli_result r;

	for (size_t f = 0; f < ARRAY_SIZE(folders); f++) {
		char *res = xasprintf("%s/%s", dir, folders[f]);
		char *db = xasprintf("%s/p.db", res);
		char *ok = xasprintf("%s/ok", dir);
		char *yaml;

		cr_assert_eq(mkdir(res, 0755), 0);
		tl_rmtree(ok);
		cr_assert_eq(mkdir(ok, 0755), 0);
		/* each command touches ok/NAME only when the folder it was given exists */
		yaml = xasprintf(
			"name: inject\n"
			"repetitions: 1\n"
			"warmup: 0\n"
			"variants:\n"
			"  - name: base\n"
			"    wrap: [sh, -c, 'test -d \"{workdir}\" && touch %1$s/wrap && exec \"$@\"', sh]\n"
			"    setup: [[sh, -c, 'test -d \"{logdir}\" && touch %1$s/vsetup']]\n"
			"    teardown: [[bash, -ec, 'test -d {logdir}; touch %1$s/teardown']]\n"
			"    daemon: [sh, -c, \"test -d '{logdir}' && touch %1$s/daemon; exec sleep 60\"]\n"
			"    background: [sh, -c, 'test -d \"{logdir}\" && touch %1$s/background; exec sleep 60']\n"
			"workloads:\n"
			"  - name: sh\n"
			"    setup: [[sh, -c, 'test -d \"{workdir}\" && touch %1$s/wsetup']]\n"
			"    prepare: [[sh, -c, 'test -d {workdir} && touch %1$s/prepare']]\n"
			"    shell: \"test -d '{workdir}' && touch %1$s/shell\"\n"
			"  - name: cmd\n"
			"    cmd: [sh, -c, 'test -d \"{workdir}\" && touch %1$s/cmd']\n",
			ok);
		tl_write(dir, "e.yaml", yaml);
		cli_run(dir, &r, "run", "e.yaml", "--db", db, NULL);
		cr_assert_eq(r.status, 0, "folder '%s': exit %d: %s", folders[f], r.status, r.err);
		cli_result_release(&r);
		cr_assert_eq(cli_sql_int(db, "SELECT count(*) FROM results WHERE status != 'ok'"), 0,
			     "folder '%s': a run failed", folders[f]);
		static const char *const marks[] = { "wrap", "vsetup", "teardown", "daemon",
						     "background", "wsetup", "prepare", "shell",
						     "cmd" };
		for (size_t m = 0; m < ARRAY_SIZE(marks); m++) {
			char *p = xasprintf("%s/%s", ok, marks[m]);
			cr_assert(tl_exists(p), "folder '%s': %s did not see its folder", folders[f],
				  marks[m]);
			free(p);
		}
		char *find = xasprintf("test -z \"$(find '%s' -name PWNED)\"", dir);
		cr_assert_eq(system(find), 0, "folder '%s': a placeholder ran code", folders[f]);
		free(find);
		free(yaml);
		free(ok);
		free(db);
		free(res);
	}
}
