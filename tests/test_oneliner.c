/*
 * test_oneliner.c - a study from a command line (engine/oneliner.h): the
 * shell-like split, and the generated YAML read back by the loader
 * (engine/config.h) to exactly the argv, env and names asked for, hostile
 * strings included.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/oneliner.h"
#include "core/yamlnode.h"
#include "lib/util.h"
#include "testlib.h"

TL_FIXTURE_DIR()

TestSuite(oneliner, .init = tl_setup, .fini = tl_teardown);

static void split_is(const char *s, size_t n, const char *const *want)
{
	struct argv_list a;
	char err[256];

	cr_assert_eq(oneliner_split(s, &a, err, sizeof(err)), 0, "%s: %s", s, err);
	cr_assert_eq(a.n, n, "%s: %zu words", s, a.n);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(a.v[i], want[i], "%s: word %zu", s, i);
	cr_assert_null(a.v[n]);
	oneliner_argv_free(&a);
}

static void split_fails(const char *s, const char *want)
{
	struct argv_list a;
	char err[256];

	cr_assert_eq(oneliner_split(s, &a, err, sizeof(err)), -1, "%s split", s);
	cr_assert(strstr(err, want), "%s: %s", s, err);
	cr_assert_null(a.v);
}

Test(oneliner, split_like_a_shell_without_expanding)
{
	split_is("gzip -6 -c in", 4, (const char *[]){ "gzip", "-6", "-c", "in" });
	split_is("  a\t b \n", 2, (const char *[]){ "a", "b" });
	split_is("echo 'a  b' \"c d\" e\\ f", 4, (const char *[]){ "echo", "a  b", "c d", "e f" });
	split_is("echo 'it'\\''s' \"\\\"q\\\" \\\\ \\$HOME `x` $y\"", 3,
		 (const char *[]){ "echo", "it's", "\"q\" \\ $HOME `x` $y" });
	split_is("a '' \"\"", 3, (const char *[]){ "a", "", "" });
	split_is("a b\\\nc", 2, (const char *[]){ "a", "bc" });
	split_is("sh -c 'exit 0'", 3, (const char *[]){ "sh", "-c", "exit 0" });
	split_is("echo '#: x' a:b", 3, (const char *[]){ "echo", "#: x", "a:b" });
}

Test(oneliner, split_refuses_what_needs_a_shell)
{
	split_fails("ls | wc -l", "'|' in 'ls | wc -l' needs a shell");
	split_fails("ls > out", "give --shell");
	split_fails("echo $HOME", "'$'");
	split_fails("ls *.c", "'*'");
	split_fails("echo 'open", "an unclosed quote");
	split_fails("echo \"open", "an unclosed quote");
	split_fails("   ", "an empty command");
}

/* Generate, write, load: the experiment the loader makes of it. */
static void load(const struct oneliner *o, struct experiment *exp)
{
	char err[512], *yaml, *path;

	cr_assert_eq(oneliner_yaml(o, &yaml, err, sizeof(err)), 0, "%s", err);
	tl_write(dir, "o.yaml", yaml);
	path = xasprintf("%s/o.yaml", dir);
	memset(exp, 0, sizeof(*exp));
	cr_assert_eq(config_load(path, exp, err, sizeof(err)), 0, "%s\n%s", err, yaml);
	free(path);
	free(yaml);
}

Test(oneliner, hostile_arguments_come_back_exactly)
{
	char *argv[] = { "/bin/echo", "a: b # c", "line1\nline2", "it's \"q\"", "- x", "{y}",
			 "&z *w", "", "true", "3", "null", "~", "\t tab", "[1, 2]", "é ü" };
	struct oneliner o = { .argv = argv, .argc = 15, .warmup = 0, .repetitions = 2,
			      .dir = "/tmp/a dir: #1" };
	struct experiment exp;

	load(&o, &exp);
	cr_assert_eq(exp.n_workloads, 1);
	cr_assert_eq(exp.n_variants, 1);
	cr_assert_str_eq(exp.variants[0].name, "base");
	/* named by its words, quoted for a shell, escaped, shortened */
	cr_assert_str_eq(exp.workloads[0].name, "/bin/echo 'a: b # c' 'line1\\x0aline2' 'i\xe2\x80\xa6");
	cr_assert_str_eq(exp.workloads[0].dir, "/tmp/a dir: #1");
	cr_assert_eq(exp.repetitions, 2);
	cr_assert_eq(exp.warmup, 0);
	cr_assert_eq(exp.workloads[0].cmd.n, 15);
	for (size_t i = 0; i < 15; i++)
		cr_assert_str_eq(exp.workloads[0].cmd.v[i], argv[i], "word %zu", i);
	experiment_release(&exp);
}

Test(oneliner, several_commands_are_variants_the_first_the_baseline)
{
	char *cmds[] = { "gzip -6 -c 'in: #1'", "zstd -19 -c in", "/usr/bin/gzip -1 -c in" };
	char *env[] = { "LC_ALL=C" };
	struct oneliner o = { .commands = cmds, .n_commands = 3, .env = env, .n_env = 1,
			      .warmup = -1 };
	struct experiment exp;

	load(&o, &exp);
	cr_assert_eq(exp.n_variants, 3);
	cr_assert_str_eq(exp.name, "gzip vs zstd vs gzip");
	cr_assert_str_eq(exp.baseline, "gzip -6 -c 'in: #1'");
	cr_assert_str_eq(exp.variants[1].name, "zstd -19 -c in");
	cr_assert_str_eq(exp.variants[2].name, "/usr/bin/gzip -1 -c in");
	cr_assert_str_eq(exp.variants[0].cmd.v[3], "in: #1");
	cr_assert_str_eq(exp.variants[2].cmd.v[0], "/usr/bin/gzip");
	cr_assert_eq(exp.variants[1].n_env, 1);
	cr_assert_str_eq(exp.variants[1].env[0].value, "C");
	cr_assert_eq(exp.n_workloads, 1);
	cr_assert_str_eq(exp.workloads[0].name, "commands");
	/* every command's program, so that a missing one is said before any run */
	cr_assert_eq(exp.workloads[0].n_requires, 3);
	cr_assert_str_eq(exp.workloads[0].requires[1], "zstd");
	cr_assert_str_eq(exp.workloads[0].requires[2], "/usr/bin/gzip");
	cr_assert_eq(exp.warmup, 1, "the default warm-up");
	experiment_release(&exp);
}

Test(oneliner, variants_wrap_each_command_with_their_env)
{
	char *cmds[] = { "ls -l", "sh -c 'exit 0'" };
	char *vars[] = { "strace=strace -f -o /dev/null", "bind=LD_BIND_NOW=1 X=\"a b\"",
			 "both=X=2 nice -n 5" };
	char *env[] = { "X=1", "Y=y" };
	struct oneliner o = { .commands = cmds, .n_commands = 2, .variants = vars,
			      .n_variants = 3, .env = env, .n_env = 2, .warmup = -1 };
	struct experiment exp;

	load(&o, &exp);
	cr_assert_eq(exp.n_workloads, 2);
	cr_assert_str_eq(exp.workloads[0].name, "ls -l");
	cr_assert_str_eq(exp.workloads[1].name, "sh -c 'exit 0'");
	cr_assert_str_eq(exp.workloads[1].cmd.v[2], "exit 0");
	cr_assert_eq(exp.n_variants, 4);
	cr_assert_str_eq(exp.baseline, "base");
	cr_assert_eq(exp.variants[0].n_env, 2);
	cr_assert_eq(exp.variants[0].wrap.n, 0);
	cr_assert_eq(exp.variants[1].wrap.n, 4);
	cr_assert_str_eq(exp.variants[1].wrap.v[3], "/dev/null");
	/* bind: env only; its X wins over --env's */
	cr_assert_eq(exp.variants[2].wrap.n, 0);
	cr_assert_eq(exp.variants[2].n_env, 3);
	cr_assert_str_eq(exp.variants[2].env[0].key, "Y");
	cr_assert_str_eq(exp.variants[2].env[1].key, "LD_BIND_NOW");
	cr_assert_str_eq(exp.variants[2].env[2].value, "a b");
	cr_assert_eq(exp.variants[3].wrap.n, 3);
	cr_assert_str_eq(exp.variants[3].wrap.v[0], "nice");
	cr_assert_str_eq(exp.variants[3].env[1].value, "2");
	experiment_release(&exp);
}

Test(oneliner, shell_runs_the_line_by_sh)
{
	char *cmds[] = { "echo hi | cat > /dev/null" };
	struct oneliner o = { .commands = cmds, .n_commands = 1, .shell = 1, .warmup = -1 };
	struct experiment exp;

	load(&o, &exp);
	cr_assert_eq(exp.workloads[0].cmd.n, 3);
	cr_assert_str_eq(exp.workloads[0].cmd.v[0], "/bin/sh");
	cr_assert_str_eq(exp.workloads[0].cmd.v[2], cmds[0]);
	cr_assert_str_eq(exp.workloads[0].name, "echo hi | cat > /dev/null");
	cr_assert_str_eq(exp.name, "echo");
	experiment_release(&exp);
}

Test(oneliner, bad_variants_and_env_are_refused)
{
	char *cmds[] = { "true" }, *bad_env[] = { "1X=2" };
	char *v1[] = { "base=strace" }, *v2[] = { "strace" }, *v3[] = { "a b=x" };
	char *v4[] = { "s=strace | x" };
	char err[256], *yaml;
	struct oneliner o = { .commands = cmds, .n_commands = 1, .warmup = -1 };

	o.variants = v1;
	o.n_variants = 1;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "the name is taken"), "%s", err);
	o.variants = v2;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--variant takes NAME=COMMAND"), "%s", err);
	o.variants = v3;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	o.variants = v4;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "needs a shell"), "%s", err);
	o.n_variants = 0;
	o.env = bad_env;
	o.n_env = 1;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--env takes NAME=VALUE"), "%s", err);
	cr_assert_null(yaml);
}

/* A command of more words than ever fitted a study file (10,000 nodes):
 * 200,000 words come back exactly; beyond what a study holds the one-liner
 * says so itself, before a file is written (no YAML handed out). */
Test(oneliner, very_long_commands_load_or_are_refused_before_writing)
{
	size_t n = 200000, big = YN_MAX_NODES + 1;
	char **argv = xcalloc(big + 1, sizeof(char *)), err[512], *yaml = NULL;
	struct oneliner o = { .argv = argv, .argc = n, .warmup = -1 };
	struct experiment exp;

	argv[0] = "/bin/true";
	for (size_t i = 1; i < big; i++)
		argv[i] = i % 2 ? "a" : "{workdir}";
	load(&o, &exp);
	cr_assert_eq(exp.workloads[0].cmd.n, n);
	cr_assert_str_eq(exp.workloads[0].cmd.v[n - 1], argv[n - 1]);
	cr_assert_str_eq(exp.workloads[0].cmd.v[n / 2 + 1], argv[n / 2 + 1]);
	experiment_release(&exp);

	o.argc = big;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "the command line is too long for a study"), "%s", err);
	cr_assert_null(yaml);
	free(argv);
}

/* A non-UTF-8 argument (a Latin-1 file name), which a YAML file cannot
 * hold as text, is written as !!binary and comes back byte for byte;
 * !!binary that is not base64, or holds a NUL byte, is refused. */
/* The study is named by its programs: printable text without a blank at
 * either end, whatever the program's name (the fuzzer's find: a program
 * named "echo\xff\" " made a study whose name the loader refused). */
Test(oneliner, a_programs_name_makes_a_valid_study_name)
{
	static const char *const progs[][2] = {
		{ "/bin/echo\xff\" ", "echo\\xff\"" },
		{ "/usr/bin/ ", "cmd" },
		{ " true ", "true" },
		{ "/x/\033[2J", "\\x1b[2J" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		char *argv[] = { (char *)progs[i][0], "a" };
		struct oneliner o = { .argv = argv, .argc = 2, .warmup = -1 };
		struct experiment exp;

		load(&o, &exp);
		cr_assert_str_eq(exp.name, progs[i][1], "program '%s'", progs[i][0]);
		cr_assert_str_eq(exp.workloads[0].cmd.v[0], progs[i][0]);
		experiment_release(&exp);
	}
}

Test(oneliner, non_utf8_arguments_come_back_byte_for_byte)
{
	char *argv[] = { "/bin/ls", "caf\xe9", "\xff\x1b[31m", "ok \xc3\xa9" };
	struct oneliner o = { .argv = argv, .argc = 4, .warmup = -1, .dir = "/tmp/d\xe9" };
	struct experiment exp;
	char err[512], *path = xasprintf("%s/b.yaml", dir);

	load(&o, &exp);
	for (size_t i = 0; i < 4; i++)
		cr_assert_str_eq(exp.workloads[0].cmd.v[i], argv[i], "word %zu", i);
	cr_assert_str_eq(exp.workloads[0].dir, "/tmp/d\xe9");
	experiment_release(&exp);

	tl_write(dir, "b.yaml", "name: b\nvariants: [{name: a}]\nworkloads:\n"
		 "  - {name: w, cmd: [ls, !!binary Y2Fm*]}\n");
	cr_assert_eq(config_load(path, &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "b.yaml:4:25: a !!binary string must be base64"), "%s", err);
	experiment_release(&exp);
	tl_write(dir, "b.yaml", "name: b\nvariants: [{name: a}]\nworkloads:\n"
		 "  - {name: w, cmd: [ls, !!binary YQBi]}\n");
	cr_assert_eq(config_load(path, &exp, err, sizeof(err)), -1);
	cr_assert(strstr(err, "holds a NUL byte"), "%s", err);
	experiment_release(&exp);
	free(path);
}

/* Commands are named by their text, as hyperfine names them: blanks as one
 * space, escaped, what a name cannot hold as '_', shortened with an
 * ellipsis, unique; --name names them in order instead. */
Test(oneliner, commands_are_named_by_their_text_or_by_name)
{
	char *cmds[] = { "gzip -6 -c in", "gzip   -1\t-c in", "gzip -6 -c in",
			 "sort -t, -k2 '[a]' ~/f", "printf '\xe9\x1b[31m'",
			 "a-program-with-a-long-name --and --many --options=1" };
	char *names[] = { "six", "one" }, *bad[] = { "a,b" }, *twice[] = { "x", "x" };
	char *more[] = { "1", "2", "3", "4", "5", "6", "7" }, *ctl[] = { "a\x1b[31m" };
	struct oneliner o = { .commands = cmds, .n_commands = 6, .warmup = -1 };
	struct experiment exp;
	char err[512], *yaml = NULL;

	load(&o, &exp);
	cr_assert_eq(exp.n_variants, 6);
	cr_assert_str_eq(exp.variants[0].name, "gzip -6 -c in");
	cr_assert_str_eq(exp.variants[1].name, "gzip -1 -c in");
	cr_assert_str_eq(exp.variants[2].name, "gzip -6 -c in (2)");
	cr_assert_str_eq(exp.variants[3].name, "sort -t_ -k2 '_a_' _/f");
	cr_assert_str_eq(exp.variants[4].name, "printf '\\xe9\\x1b_31m'");
	cr_assert_str_eq(exp.variants[5].name,
			 "a-program-with-a-long-name --and --many\xe2\x80\xa6");
	cr_assert_str_eq(exp.baseline, "gzip -6 -c in");
	experiment_release(&exp);

	/* --name: the first commands, in order; the others keep their text */
	o.names = names;
	o.n_names = 2;
	load(&o, &exp);
	cr_assert_str_eq(exp.variants[0].name, "six");
	cr_assert_str_eq(exp.variants[1].name, "one");
	cr_assert_str_eq(exp.variants[2].name, "gzip -6 -c in");
	cr_assert_str_eq(exp.baseline, "six");
	experiment_release(&exp);

	o.names = bad;
	o.n_names = 1;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--name 'a,b': a name is printable text"), "%s", err);
	o.names = ctl;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--name 'a\\x1b[31m'"), "%s", err);
	o.names = twice;
	o.n_names = 2;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--name 'x' twice"), "%s", err);
	o.names = more;
	o.n_names = 7;
	cr_assert_eq(oneliner_yaml(&o, &yaml, err, sizeof(err)), -1);
	cr_assert(strstr(err, "7 --name for 6 commands"), "%s", err);
	cr_assert_null(yaml);
}
