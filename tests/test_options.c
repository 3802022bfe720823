/*
 * test_options.c - the typed option parser (harness/cli/options.h): every
 * type, ranges, spellings and errors in this process; then, on the real
 * binary, every command's table against its help and docs/perturb.1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "lib/util.h"
#include "testlib.h"

TestSuite(options, .timeout = 60);

/* What parse_options() printed, for the last parse(). */
static char *out, *err;

/* parse_options(opts) on "t ARGS..." (NULL-terminated); keeps what it
 * printed in out and err. */
static int parse(struct opt *opts, ...)
{
	char *argv[32] = { "t" };
	int argc = 1, rc;
	struct tl_capture co, ce;
	va_list ap;

	va_start(ap, opts);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	free(out);
	free(err);
	tl_capture_start(&co, 1);
	tl_capture_start(&ce, 2);
	rc = parse_options(argc, argv, opts, "t");
	err = tl_capture_end(&ce);
	out = tl_capture_end(&co);
	return rc;
}

/* parse() fails and says want. */
#define EXPECT_ERROR(want, ...)                                                       \
	do {                                                                          \
		cr_expect_eq(parse(__VA_ARGS__, NULL), -1, "accepted: %s", #__VA_ARGS__); \
		cr_expect(strstr(err, want), "'%s' not in: %s", want, err);          \
	} while (0)

/* Every value type, one table. */
struct all {
	int flag, q, i, cnt;
	const char *s, *pos1, *pos2;
	unsigned u;
	size_t z;
	int64_t l;
	uint64_t u64;
	double d, dur, pct, lvl;
	char **list;
	size_t n_list;
	const char *cb_arg;
};

static int cb(const struct opt *o, const char *arg)
{
	struct all *a = o->value;
	if (!strcmp(arg, "bad"))
		return error("--cb does not like '%s'", arg);
	a->cb_arg = arg;
	return 0;
}

#define ALL_TABLE(a)                                                                      \
	{                                                                                 \
		OPT_ARG("FIRST", &(a).pos1, "the first"),                                 \
		OPT_ARG("SECOND", &(a).pos2, "the second"),                               \
		OPT_FLAG('f', "flag", &(a).flag, "a flag"),                               \
		OPT_FLAG('q', "quiet", &(a).q, "quiet"),                                  \
		OPT_STRING('s', "string", &(a).s, "S", "a string"),                       \
		OPT_INTEGER(0, "int", &(a).i, -5, 10, "N", "an int"),                     \
		OPT_INTEGER(0, "unsigned", &(a).u, 0, UINT32_MAX, "N", "an unsigned"),   \
		OPT_INTEGER(0, "size", &(a).z, 2, LONG_MAX, "N", "a size_t"),            \
		OPT_INTEGER(0, "id", &(a).l, 1, INT64_MAX, "ID", "an int64_t"),          \
		OPT_UNSIGNED(0, "seed", &(a).u64, "N", "a uint64_t"),                     \
		OPT_DOUBLE(0, "double", &(a).d, -1, 1, 0, "X", "a double"),               \
		OPT_DURATION(0, "time", &(a).dur, R_MAX_TIME, "D", "a duration"),         \
		OPT_COUNT(0, "count", &(a).cnt, R_REPETITIONS, "N", "a count"),           \
		OPT_PERCENT(0, "percent", &(a).pct, 0, 10, OPT_ABOVE_MIN, "X%",          \
			    "a percentage"),                                              \
		OPT_LEVEL(0, "level", &(a).lvl, "C", "a level"),                          \
		OPT_LIST(0, "list", &(a).list, &(a).n_list, "NAME", "a list"),            \
		OPT_CALLBACK(0, "cb", &(a), cb, "V", "a callback"),                       \
		OPT_END(),                                                                \
	}

Test(options, every_type_in_both_spellings)
{
	struct all a = { .s = "default", .i = 7 };
	struct opt opts[] = ALL_TABLE(a);

	cr_assert_eq(parse(opts, "--flag", "one", "-q", "--string", "x", "--int=-5",
			   "--unsigned", "4294967295", "--size=2", "--id", "9223372036854775807",
			   "--seed=18446744073709551615", "--double", "-0.5", "--time", "250ms",
			   "--percent=2%", "--level", "95%", "--list", "a", "--cb=v", "two", NULL),
		     0, "%s", err);
	cr_expect_str_eq(err, "");
	cr_expect(a.flag && a.q);
	cr_expect_str_eq(a.pos1, "one");
	cr_expect_str_eq(a.pos2, "two");
	cr_expect_str_eq(a.s, "x");
	cr_expect_eq(a.i, -5);
	cr_expect_eq(a.u, UINT32_MAX);
	cr_expect_eq(a.z, 2);
	cr_expect_eq(a.l, INT64_MAX);
	cr_expect_eq(a.u64, UINT64_MAX);
	cr_expect_eq(a.d, -0.5);
	cr_expect_eq(a.dur, 0.25);
	cr_expect_eq(a.pct, 0.02);
	cr_expect_eq(a.lvl, 0.95);
	cr_expect_eq(a.n_list, 1);
	cr_expect_str_eq(a.list[0], "a");
	cr_expect_str_eq(a.cb_arg, "v");
	free(a.list);

	/* the other spellings of the same values */
	struct all b = { 0 };
	struct opt opts2[] = ALL_TABLE(b);
	cr_assert_eq(parse(opts2, "-fq", "-sy", "--time=5m", "--percent", "0.02", "--level=0.9",
			   "--int", "10", NULL), 0, "%s", err);
	cr_expect(b.flag && b.q);
	cr_expect_str_eq(b.s, "y");
	cr_expect_eq(b.dur, 300);
	cr_expect_eq(b.pct, 0.02);
	cr_expect_eq(b.lvl, 0.9);
	cr_expect_eq(b.i, 10);
	cr_assert_eq(parse(opts2, "--time", "30", "-s", "z", "--string=", NULL), 0, "%s", err);
	cr_expect_eq(b.dur, 30, "a bare number is seconds");
	cr_expect_str_eq(b.s, "", "the last one wins, an empty value is a value");
	cr_expect_null(b.pos1);
}

Test(options, defaults_stay_when_not_given)
{
	struct all a = { .s = "default", .i = 7, .dur = 600 };
	struct opt opts[] = ALL_TABLE(a);

	cr_assert_eq(parse(opts, NULL), 0);
	cr_expect_str_eq(a.s, "default");
	cr_expect_eq(a.i, 7);
	cr_expect_eq(a.dur, 600);
	cr_expect_null(a.list);
	cr_expect_eq(opt_given(opts, &a.s), 0);
	cr_assert_eq(parse(opts, "-s", "a", "--string", "b", NULL), 0);
	cr_expect_eq(opt_given(opts, &a.s), 2);
	cr_expect_eq(opt_given(opts, &a.i), 0);
	cr_expect_eq(opt_given(opts, &a.pos1), 0);
	cr_assert_eq(parse(opts, "p", NULL), 0);
	cr_expect_eq(opt_given(opts, &a.s), 0, "counts start afresh");
	cr_expect_eq(opt_given(opts, &a.pos1), 1);
}

Test(options, bad_values_name_the_option_and_what_it_takes)
{
	struct all a = { 0 };
	struct opt opts[] = ALL_TABLE(a);

	EXPECT_ERROR("perturb: error: --int takes an integer from -5 to 10, got '11'", opts,
		     "--int", "11");
	EXPECT_ERROR("--int takes an integer from -5 to 10, got '1.5'", opts, "--int=1.5");
	EXPECT_ERROR("--size takes an integer of at least 2, got '1'", opts, "--size", "1");
	EXPECT_ERROR("--id takes a positive integer, got '0'", opts, "--id", "0");
	EXPECT_ERROR("--id takes a positive integer, got '9223372036854775808'", opts, "--id",
		     "9223372036854775808");
	EXPECT_ERROR("--seed takes an integer from 0 to 18446744073709551615, got '-1'", opts,
		     "--seed", "-1");
	EXPECT_ERROR("--seed takes an integer from 0 to 18446744073709551615, got "
		     "'18446744073709551616'", opts, "--seed", "18446744073709551616");
	EXPECT_ERROR("--double takes a number from -1 to 1, got '2'", opts, "--double", "2");
	EXPECT_ERROR("--double takes a number from -1 to 1, got 'nan'", opts, "--double", "nan");
	EXPECT_ERROR("--time takes a duration like 10m, above 0s and at most 168h, got '0'",
		     opts, "--time", "0");
	EXPECT_ERROR("--time takes a duration like 10m, above 0s", opts, "--time", "5x");
	EXPECT_ERROR("--time takes a duration like 10m, above 0s and at most 168h, got '1e300s'",
		     opts, "--time", "1e300s");
	EXPECT_ERROR("--time takes a duration", opts, "--time", "169h");
	EXPECT_ERROR("--count takes an integer from 1 to 1000000, got '1000001'", opts,
		     "--count", "1000001");
	EXPECT_ERROR("--count takes an integer from 1 to 1000000, got '0'", opts, "--count", "0");
	EXPECT_ERROR("--percent takes a percentage above 0% and at most 1000% (2% or 0.02), "
		     "got '0%'", opts, "--percent", "0%");
	EXPECT_ERROR("--percent takes a percentage above 0%", opts, "--percent", "1001%");
	EXPECT_ERROR("--level takes a level between 0 and 1 (e.g. 0.95 or 95%), got '100%'", opts,
		     "--level", "100%");
	EXPECT_ERROR("--level takes a level between 0 and 1", opts, "--level", "0");
	/* a bare number of 1 or more: ambiguous, both spellings shown */
	EXPECT_ERROR("--level: '95' is ambiguous (95 % or 9500 %?): write 95% for 95 %, or the "
		     "fraction 0.95", opts, "--level", "95");
	EXPECT_ERROR("--percent: '5' is ambiguous (5 % or 500 %?): write 5% for 5 %, or the "
		     "fraction 0.05", opts, "--percent", "5");
	EXPECT_ERROR("--percent: '1' is ambiguous", opts, "--percent", "1");
	EXPECT_ERROR("--cb does not like 'bad'", opts, "--cb", "bad");
	cr_expect_str_eq(out, "");
}

Test(options, spelling_errors)
{
	struct all a = { 0 };
	struct opt opts[] = ALL_TABLE(a);

	EXPECT_ERROR("perturb: error: option '--string' needs a value", opts, "--string");
	EXPECT_ERROR("option '--string' needs a value", opts, "--str");
	EXPECT_ERROR("option '-s' needs a value", opts, "-fs");
	EXPECT_ERROR("option '--flag' takes no value", opts, "--flag=1");
	EXPECT_ERROR("unknown option '--bogus' (see 'perturb help t')", opts, "--bogus");
	EXPECT_ERROR("unknown option '--strng'; did you mean '--string'?", opts, "--strng=x");
	EXPECT_ERROR("unknown option '-z' (see 'perturb help t')", opts, "-z");
	EXPECT_ERROR("unknown option '-z'", opts, "-fz");
	EXPECT_ERROR("option '--s' is ambiguous (--string, --size, --seed)", opts, "--s", "1");
	EXPECT_ERROR("unexpected argument 'three' (see 'perturb help t')", opts, "one", "two",
		     "three");
	/* a unique prefix is the option */
	cr_assert_eq(parse(opts, "--str", "x", "--perc", "5%", NULL), 0, "%s", err);
	cr_expect_str_eq(a.s, "x");
	cr_expect_eq(a.pct, 0.05);
}

Test(options, double_dash_ends_the_options)
{
	struct all a = { 0 };
	struct opt opts[] = ALL_TABLE(a);

	cr_assert_eq(parse(opts, "-f", "--", "--string", "-q", NULL), 0, "%s", err);
	cr_expect(a.flag);
	cr_expect(!a.q);
	cr_expect_null(a.s);
	cr_expect_str_eq(a.pos1, "--string");
	cr_expect_str_eq(a.pos2, "-q");
	/* "-" alone is an argument (standard output) */
	cr_assert_eq(parse(opts, "-", NULL), 0, "%s", err);
	cr_expect_str_eq(a.pos1, "-");
}

Test(options, lists_repeat_and_split_at_commas)
{
	char **list = NULL, **rest = NULL;
	size_t n = 0, n_rest = 0;
	struct opt opts[] = {
		OPT_LIST('m', "metric", &list, &n, "M", "metrics"),
		OPT_ARGS("FILE...", &rest, &n_rest, "files"),
		OPT_END(),
	};

	cr_assert_eq(parse(opts, "f1", "--metric", "a,b", "-m", "c", "f2", "--metric=d,e,f", NULL),
		     0, "%s", err);
	cr_assert_eq(n, 6);
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(list[i][0], 'a' + (int)i, "item %zu is '%s'", i, list[i]);
	cr_expect_str_eq(list[1], "b");
	cr_assert_eq(n_rest, 2);
	cr_expect_str_eq(rest[0], "f1");
	cr_expect_str_eq(rest[1], "f2");
	/* the caller owns the array and may grow it */
	list = xrealloc(list, (n + 1) * sizeof(*list));
	list[n++] = "g";
	cr_expect_str_eq(list[0], "a");
	cr_expect_str_eq(list[5], "f");
	free(list);
	free(rest);

	list = NULL;
	n = 0;
	EXPECT_ERROR("--metric takes M or M,M,..., got 'a,,b'", opts, "--metric", "a,,b");
	EXPECT_ERROR("--metric takes M or M,M,..., got ',a'", opts, "--metric", ",a");
	EXPECT_ERROR("--metric takes M or M,M,..., got 'a,'", opts, "--metric", "a,");
	EXPECT_ERROR("--metric takes M or M,M,..., got ''", opts, "--metric=");
	cr_expect_null(list, "a failed parse leaves lists as they were");
	cr_expect_eq(n, 0);
}

Test(options, an_integer_range_must_fit_its_type)
{
	int small = 0;
	struct opt opts[] = {
		OPT_INTEGER(0, "small", &small, 0, 1L << 40, "N", "too wide for an int"),
		OPT_END(),
	};

	EXPECT_ERROR("does not fit its 4-byte integer", opts, "--small", "1");
}

Test(options, help_and_list_options_print_the_table)
{
	struct all a = { 0 };
	struct opt opts[] = {
		OPT_ARG("FILE", &a.pos1, "the input"),
		OPT_STRING(0, "db", &a.s, "PATH", "results database"),
		OPT_FLAG('q', "quiet", &a.q, "print only errors"),
		OPT_INTEGER(0, "a-very-long-option-name", &a.i, 0, 9, "N",
			    "a help on its own line\nand a second line"),
		OPT_LIST(0, "metric", &a.list, &a.n_list, "M", NULL),
		OPT_END(),
	};
	const char *want;

	cr_assert_eq(parse(opts, "--db", "x", "--help", "--bogus", NULL), OPT_EXIT_DONE, "%s", err);
	cr_expect_str_eq(err, "");
	cr_expect_str_eq(out,
			 "  FILE                    the input\n"
			 "  --db PATH               results database\n"
			 "  -q, --quiet             print only errors\n"
			 "  --a-very-long-option-name N\n"
			 "                          a help on its own line\n"
			 "                          and a second line\n"
			 "  --metric M\n");
	cr_assert_eq(parse(opts, "-h", NULL), OPT_EXIT_DONE);
	cr_expect(!strncmp(out, "  FILE ", 7), "%s", out);
	opt_set_help_intro("t [options]", "What t does.\n");
	cr_assert_eq(parse(opts, "--he", NULL), OPT_EXIT_DONE);
	want = "usage: perturb t [options]\n\nWhat t does.\n\n  FILE ";
	cr_expect(!strncmp(out, want, strlen(want)), "%s", out);
	opt_set_help_intro(NULL, NULL);
	cr_assert_eq(parse(opts, "--list-options", NULL), OPT_EXIT_DONE);
	cr_expect_str_eq(out, "--db\n-q\n--quiet\n--a-very-long-option-name\n--metric\n");
}

/* ---- every command: its table, its help and the man page agree ---- */

struct words {
	char **v;
	size_t n;
};

static void words_add(struct words *w, const char *s, size_t len)
{
	for (size_t i = 0; i < w->n; i++)
		if (strlen(w->v[i]) == len && !strncmp(w->v[i], s, len))
			return;
	w->v = xrealloc(w->v, (w->n + 1) * sizeof(*w->v));
	w->v[w->n++] = xstrndup(s, len);
}

static int words_has(const struct words *w, const char *s)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->v[i], s))
			return 1;
	return 0;
}

static void words_release(struct words *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
}

/* The option spellings ("-q", "--db") among the words of text. */
static void option_words(const char *text, struct words *w)
{
	static const char sep[] = " \t\n[](),;:|=\"";

	for (const char *p = text; *p; ) {
		size_t len;
		p += strspn(p, sep);
		len = strcspn(p, sep);
		if (p[0] == '-' && (p[1] == '-' ? len > 2 && isalpha(p[2]) : len == 2 && isalpha(p[1])))
			words_add(w, p, len);
		p += len;
	}
}

/* The options docs/perturb.1 lists for cmd: the first line after each .TP
 * of its ".SS cmd" section, "\-" read as "-". */
static void man_options(const char *man, const char *cmd, struct words *w)
{
	char *head = xasprintf("\n.SS %s\n", cmd);
	const char *p = strstr(man, head), *end;

	cr_assert(p, "docs/perturb.1 has no section '.SS %s'", cmd);
	p += strlen(head);
	end = p + strcspn(p, "");
	for (const char *q = p; (q = strstr(q, "\n.S")); q++)
		if (q[3] == 'S' || q[3] == 'H') {
			end = q;
			break;
		}
	for (const char *tp = p; (tp = strstr(tp, "\n.TP\n")) && tp < end; tp += 4) {
		const char *line = tp + 5;
		size_t len = strcspn(line, "\n");
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < len; i++) {
			if (line[i] == '\\' && line[i + 1] == '-')
				continue;
			strbuf_add(&sb, &line[i], 1);
		}
		option_words(sb.buf, w);
		strbuf_release(&sb);
	}
	free(head);
}

Test(options, every_command_table_help_and_man_page_agree)
{
	const char *src = getenv("PERTURB_SRC");
	struct cli_result r;
	struct words cmds = { 0 };
	char *dir = tl_tmpdir(), *man, *path;

	cr_assert(src, "PERTURB_SRC is not set (run the tests with make test)");
	path = xasprintf("%s/docs/perturb.1", src);
	man = read_file(path, NULL);
	cr_assert(man, "cannot read %s", path);

	/* the commands: "  perturb NAME ..." lines of the usage */
	cli_run(dir, &r, "--help", NULL);
	cr_assert_eq(r.status, 0);
	for (const char *p = r.out; (p = strstr(p, "\n  perturb ")); p++) {
		const char *name = p + 11;
		size_t len = strcspn(name, " \n");
		if (name[0] != '-' && strncmp(name, "help ", 5))
			words_add(&cmds, name, len);
	}
	cli_result_release(&r);
	cr_assert_geq(cmds.n, 8, "commands found: %zu", cmds.n);

	for (size_t c = 0; c < cmds.n; c++) {
		const char *cmd = cmds.v[c];
		struct words table = { 0 }, help = { 0 }, usage = { 0 }, page = { 0 };

		cli_run(dir, &r, cmd, "--list-options", NULL);
		cr_assert_eq(r.status, 0, "%s --list-options: %s", cmd, r.err);
		option_words(r.out, &table);
		cr_expect_eq(tl_count_lines(r.out), (int)table.n, "%s:\n%s", cmd, r.out);
		cli_result_release(&r);

		cli_run(dir, &r, "help", cmd, NULL);
		cr_assert_eq(r.status, 0, "help %s: %s", cmd, r.err);
		option_words(strstr(r.out, "\n  "), &help);	/* the rows */
		option_words(strtok(r.out, "\n") + strlen("usage: perturb"), &usage);
		cli_result_release(&r);

		man_options(man, cmd, &page);
		for (size_t i = 0; i < table.n; i++) {
			cr_expect(words_has(&help, table.v[i]), "'perturb help %s' lacks %s", cmd,
				  table.v[i]);
			cr_expect(words_has(&page, table.v[i]),
				  "docs/perturb.1 (.SS %s) lacks %s", cmd, table.v[i]);
		}
		for (size_t i = 0; i < page.n; i++)
			cr_expect(words_has(&table, page.v[i]),
				  "docs/perturb.1 (.SS %s) lists %s, which %s does not take", cmd,
				  page.v[i], cmd);
		for (size_t i = 0; i < help.n; i++)
			cr_expect(words_has(&table, help.v[i]),
				  "'perturb help %s' shows %s, which %s does not take", cmd, help.v[i],
				  cmd);
		for (size_t i = 0; i < usage.n; i++)
			cr_expect(words_has(&table, usage.v[i]),
				  "the usage line of %s shows %s, which it does not take", cmd,
				  usage.v[i]);
		words_release(&table);
		words_release(&help);
		words_release(&usage);
		words_release(&page);
	}
	words_release(&cmds);
	free(man);
	free(path);
	tl_rmtree(dir);
	free(dir);
}
