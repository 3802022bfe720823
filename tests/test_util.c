/*
 * test_util.c - helpers of util.c that the experiment file relies on:
 * durations, percentages, sizes and SHA-256.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"

static double dur(const char *s)
{
	double v = -1;
	cr_assert_eq(parse_duration(s, &v), 0, "parse_duration(\"%s\") failed", s);
	return v;
}

static double pct(const char *s)
{
	double v = -1;
	cr_assert_eq(parse_percent(s, &v), 0, "parse_percent(\"%s\") failed", s);
	return v;
}

/* parse() rejects every string of bad[] and NULL, and writes no output. */
static void expect_rejected(int (*parse)(const char *, double *), const char *const *bad,
			    size_t n)
{
	double v = 123;
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(parse(bad[i], &v), -1, "\"%s\" accepted", bad[i]);
	cr_expect_eq(parse(NULL, &v), -1);
	cr_expect_eq(v, 123, "output written on failure");
}

/* self_pid() caches the pid, and a fork's child has its own. */
Test(util, self_pid_is_each_process_own)
{
	pid_t parent = self_pid(), pid;
	int status;

	cr_assert_eq(parent, getpid());
	cr_assert_eq(self_pid(), parent);
	pid = fork();
	cr_assert(pid >= 0);
	if (!pid)
		_exit(self_pid() == getpid() && self_pid() != parent ? 0 : 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status), "a fork's child had its parent's pid");
	cr_assert_eq(self_pid(), parent);
}

Test(util, parse_duration_units)
{
	cr_expect_float_eq(dur("250ms"), 0.25, 1e-12);
	cr_expect_float_eq(dur("30s"), 30.0, 1e-12);
	cr_expect_float_eq(dur("5m"), 300.0, 1e-12);
	cr_expect_float_eq(dur("1h"), 3600.0, 1e-12);
	cr_expect_float_eq(dur("1500us"), 0.0015, 1e-15);
	cr_expect_float_eq(dur("20ns"), 20e-9, 1e-18);
	cr_expect_float_eq(dur("1.5s"), 1.5, 1e-12);
	cr_expect_float_eq(dur(".5s"), 0.5, 1e-12);
	cr_expect_float_eq(dur("42"), 42.0, 1e-12);	/* bare number: seconds */
	cr_expect_float_eq(dur("0"), 0.0, 1e-12);
	cr_expect_float_eq(dur("0s"), 0.0, 1e-12);
}

Test(util, parse_duration_rejects)
{
	static const char *const bad[] = {
		"", "s", "-1s", "+1s", " 1s", "1s ", "1 s", "1sec", "1S", "1d", "ms",
		"1e400s", "nan", "inf", "1ms5", "abc", "1,5s",
	};
	expect_rejected(parse_duration, bad, sizeof(bad) / sizeof(bad[0]));
}

Test(util, parse_percent_forms)
{
	cr_expect_float_eq(pct("2%"), 0.02, 1e-12);
	cr_expect_float_eq(pct("0.02"), 0.02, 1e-12);
	cr_expect_float_eq(pct("0%"), 0.0, 1e-12);
	cr_expect_float_eq(pct("0"), 0.0, 1e-12);
	cr_expect_float_eq(pct("150%"), 1.5, 1e-12);
	cr_expect_float_eq(pct("0.5%"), 0.005, 1e-12);
	cr_expect_float_eq(pct("95%"), 0.95, 1e-12);
	cr_expect_float_eq(pct("-2%"), -0.02, 1e-12);	/* sign is the caller's to check */
}

Test(util, parse_percent_refuses_a_bare_number_of_1_or_more)
{
	static const char *const ambiguous[] = { "1", "5", "1.0", "95", "-1", "-2", "100", "1e2" };
	char why[256];
	double v;

	for (size_t i = 0; i < sizeof(ambiguous) / sizeof(ambiguous[0]); i++)
		cr_expect_eq(parse_percent(ambiguous[i], &v), PERCENT_AMBIGUOUS, "'%s' accepted",
			     ambiguous[i]);
	cr_assert_eq(parse_percent_why("5", &v, why, sizeof(why)), PERCENT_AMBIGUOUS);
	cr_expect_str_eq(why, "'5' is ambiguous (5 % or 500 %?): write 5% for 5 %, or the "
			 "fraction 0.05; a bare number is a fraction and must be below 1");
	cr_expect_float_eq(pct("0.999"), 0.999, 1e-12);
	cr_expect_float_eq(pct("-0.5"), -0.5, 1e-12);
	cr_expect_float_eq(pct("500%"), 5.0, 1e-12, "500 % is written with its sign");
	cr_assert_eq(parse_percent_why("x", &v, why, sizeof(why)), -1);
	cr_expect(strstr(why, "5%") && strstr(why, "0.05"), "%s", why);
}

Test(util, parse_percent_rejects)
{
	static const char *const bad[] = {
		"", "%", " 2%", "2 %", "2%%", "2%x", "two", "2pc", "nan", "inf", "1e999",
	};
	expect_rejected(parse_percent, bad, sizeof(bad) / sizeof(bad[0]));
}

Test(util, parse_long_strict)
{
	long v;
	cr_expect_eq(parse_long("42", 0, 100, &v), 0);
	cr_expect_eq(v, 42);
	cr_expect_eq(parse_long("-1", 0, 100, &v), -1);
	cr_expect_eq(parse_long("101", 0, 100, &v), -1);
	cr_expect_eq(parse_long("1.0", 0, 100, &v), -1);
	cr_expect_eq(parse_long("0x10", 0, 100, &v), -1);
	cr_expect_eq(parse_long(" 1", 0, 100, &v), -1);
	cr_expect_eq(parse_long("", 0, 100, &v), -1);
	cr_expect_eq(parse_long("99999999999999999999", 0, LONG_MAX, &v), -1);
}

Test(util, edit_distance)
{
	cr_expect_eq(edit_distance("repetiton", "repetitions"), 2);
	cr_expect_eq(edit_distance("", "abc"), 3);
	cr_expect_eq(edit_distance("abc", "abc"), 0);
	cr_expect_eq(edit_distance("kitten", "sitting"), 3);
}

Test(util, parse_size)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 },
		{ "1", 1 },
		{ "4095", 4095 },
		{ "1K", 1024 },
		{ "1k", 1024 },
		{ "64M", UINT64_C(64) << 20 },
		{ "64MiB", UINT64_C(64) << 20 },
		{ "64mb", UINT64_C(64) << 20 },
		{ "512m", UINT64_C(512) << 20 },
		{ "512MB", UINT64_C(512) << 20 },
		{ "1g", UINT64_C(1) << 30 },
		{ "2kib", 2048 },
		{ "2G", UINT64_C(2) << 30 },
		{ "3GiB", UINT64_C(3) << 30 },
		{ "1T", UINT64_C(1) << 40 },
		{ "18446744073709551615", UINT64_MAX },
		{ "16777215T", UINT64_C(16777215) << 40 },
		{ "007", 7 },
	};
	static const char *const bad[] = {
		"", "12Q", "-1", "+1", " 1", "1 ", "1.5M", "M", "K1", "1KK",
		"1Mi", "1MiBs", "0x10",
		"18446744073709551616",		/* 2^64 */
		"99999999999999999999999",
		"16777216T",			/* 2^64 */
		"17179869184G",			/* 2^64 */
	};
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		v = 12345;
		cr_expect_eq(parse_size(ok[i].s, &v), 0, "'%s' rejected", ok[i].s);
		cr_expect_eq(v, ok[i].v, "'%s' gave %llu", ok[i].s, (unsigned long long)v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 12345;
		cr_expect_eq(parse_size(bad[i], &v), -1, "'%s' accepted", bad[i]);
		cr_expect_eq(v, 12345, "'%s' touched the output", bad[i]);
	}
	cr_expect_eq(parse_size(NULL, &v), -1);
}

/* FIPS 180-4 / NIST example vectors: "", "abc", a million 'a', and a
 * 56-byte message whose padding takes a second block. */
Test(util, sha256_vectors)
{
	static const struct {
		const char *in;
		const char *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	char hex[65];

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		sha256_hex(v[i].in, strlen(v[i].in), hex);
		cr_expect_str_eq(hex, v[i].hex, "sha256(\"%s\")", v[i].in);
	}
	char *million = xmalloc(1000000);
	memset(million, 'a', 1000000);
	sha256_hex(million, 1000000, hex);
	cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

/* A shell word comes back from sh exactly as it went in. */
Test(util, shell_word_survives_the_shell)
{
	static const char *const words[] = {
		"plain/path-1.yaml", "", "a b", "it's", "x;touch PWNED;#", "$(touch PWNED)",
		"`id`", "a\\b", "'''", "new\nline", "*", "~user",
	};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		struct strbuf cmd = STRBUF_INIT, w = STRBUF_INIT;
		char buf[256] = "";
		size_t n;
		FILE *p;

		strbuf_add_shell_word(&w, words[i]);
		strbuf_addf(&cmd, "cd / && printf %%s %s", w.buf);
		p = popen(cmd.buf, "r");
		cr_assert(p);
		n = fread(buf, 1, sizeof(buf) - 1, p);
		buf[n] = '\0';
		cr_assert_eq(pclose(p), 0, "%s", cmd.buf);
		cr_expect_str_eq(buf, words[i], "%s", cmd.buf);
		if (i == 0)
			cr_expect_str_eq(w.buf, words[0], "a plain word is left as it is");
		strbuf_release(&cmd);
		strbuf_release(&w);
	}
}

/* An environment built with argv_copy() and env_put(): a key replaced in
 * its place, a new one appended, a list prefixed, the original untouched. */
Test(util, env_put_replaces_appends_and_prefixes)
{
	char *const base[] = { "A=1", "LD_PRELOAD=old.so", NULL };
	char **e = argv_copy(base), **empty = argv_copy(NULL);
	size_t n = 0;
	char **v = NULL;

	env_put(&e, "A", "2", NULL);
	env_put(&e, "B", "3", NULL);
	env_put(&e, "LD_PRELOAD", "new.so", ":");
	env_put(&e, "LIST", "first", ":");	/* nothing to join: the value alone */
	cr_assert(e[0] && e[1] && e[2] && e[3] && !e[4]);
	cr_expect_str_eq(e[0], "A=2");
	cr_expect_str_eq(e[1], "LD_PRELOAD=new.so:old.so");
	cr_expect_str_eq(e[2], "B=3");
	cr_expect_str_eq(e[3], "LIST=first");
	cr_expect_str_eq(base[0], "A=1");
	cr_expect(empty && !empty[0]);
	argv_push(&v, &n, "perf");
	argv_push(&v, &n, "-a");
	cr_expect(n == 2 && !strcmp(v[0], "perf") && !strcmp(v[1], "-a") && !v[2]);
	cr_expect(file_exists("/") && !file_exists("/no/such/path/at/all"));
	argv_free(e);
	argv_free(empty);
	argv_free(v);
}

/*
 * The class "a name becomes a path component" (work folders, logs, perf's
 * files, one-liner files): path_component() gives one component that no
 * name can turn into a way out of its folder, and distinct names give
 * distinct components.
 */
Test(util, path_component_is_one_safe_component)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "gzip", "gzip" },
		{ "w[p=../../../../OUTSIDE]", "w[p=..%2F..%2F..%2F..%2FOUTSIDE]" },
		{ "v[set=sched:*+irq:*]", "v[set=sched%3A%2A+irq%3A%2A]" },
		{ "a/b", "a%2Fb" },
		{ "..", "%2E." },
		{ ".", "%2E" },
		{ ".hidden", "%2Ehidden" },
		{ "-rf", "%2Drf" },
		{ "a,b", "a%2Cb" },
		{ "100%", "100%25" },
		{ "gzip -6 -c in", "gzip%20-6%20-c%20in" },
		{ "caf\xe9", "caf%E9" },
		{ "", "%" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *c = path_component(cases[i].in);
		cr_assert_str_eq(c, cases[i].out, "path_component(\"%s\")", cases[i].in);
		free(c);
	}

	/* a long name: cut at PATH_COMPONENT_MAX, never inside a %XX, and two
	 * names that differ only at their ends stay apart */
	char a[4000], b[4000];
	memset(a, '/', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(a));
	b[sizeof(b) - 2] = 'x';
	char *ca = path_component(a), *cb = path_component(b);
	cr_assert_leq(strlen(ca), PATH_COMPONENT_MAX);
	cr_assert_null(strchr(ca, '/'));
	cr_assert_str_neq(ca, cb);
	const char *tilde = strchr(ca, '~');
	cr_assert_not_null(tilde);
	cr_assert_eq(strlen(tilde), 17);
	cr_assert_eq((tilde - ca) % 3, 0, "cut inside a %%XX: %s", ca);
	free(ca);
	free(cb);
}

/* Base64 (RFC 4648's test vectors) both ways; what is not base64 refused;
 * UTF-8 told from Latin-1; escape_bytes() as a string. */
Test(util, base64_utf8_and_escaped_strings)
{
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
		{ "caf\xe9", "Y2Fm6Q==" }, { "\xff\xfe\x01", "//4B" },
	};
	static const char *const bad[] = { "Zg=a", "Z", "Zm9v!", "Zg===", "Zm9vY" };

	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		char *e = base64_encode(vec[i][0], strlen(vec[i][0]));
		cr_assert_str_eq(e, vec[i][1]);
		cr_assert_eq(base64_decode(e, strlen(e), &sb), 0, "%s", e);
		cr_assert_eq(sb.len, strlen(vec[i][0]));
		cr_assert(!memcmp(sb.buf ? sb.buf : "", vec[i][0], sb.len), "%s", e);
		strbuf_release(&sb);
		free(e);
	}
	{
		struct strbuf sb = STRBUF_INIT;
		cr_assert_eq(base64_decode("Zm9v\n Ym Fy", 11, &sb), 0);
		cr_assert_str_eq(sb.buf, "foobar");
		strbuf_release(&sb);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		cr_assert_eq(base64_decode(bad[i], strlen(bad[i]), &sb), -1, "%s", bad[i]);
		strbuf_release(&sb);
	}
	cr_assert(utf8_valid("caf\xc3\xa9 plain"));
	cr_assert(!utf8_valid("caf\xe9"));
	cr_assert(!utf8_valid("\xc0\xaf"), "overlong");
	char *e = escape_bytes_str("caf\xe9\x1b[31m\xc3\xa9");
	cr_assert_str_eq(e, "caf\\xe9\\x1b[31m\xc3\xa9");
	free(e);
}

/* said_line: a tool's complaint as one line: the last marked line's rest
 * (one holding `unless` not counting), else the last line with words (not
 * a compiler's underlining), blanks and a final full stop dropped. */
Test(util, said_line_is_the_tools_last_complaint)
{
	static const struct {
		const char *text, *unless, *want;
	} cases[] = {
		{ "Error: first.\nsome line\nError:   Channel x: Not enough memory.\n", NULL,
		  "Channel x: Not enough memory" },
		{ "stdin:1:1-4: ERROR: kfunc not available\n   ~~~~\n", NULL, "kfunc not available" },
		{ "ERROR: could not raise RLIMIT_MEMLOCK\nERROR: attach failed\n"
		  "ERROR: RLIMIT_MEMLOCK again\n", "RLIMIT_MEMLOCK", "attach failed" },
		{ "starting\n  it ended here.  \n  ^~~~\n\n", NULL, "it ended here" },
		{ "ERROR: .\n", NULL, NULL },
		{ "", NULL, NULL },
		{ NULL, NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *marker = i == 1 || i == 2 || i == 4 ? "ERROR: " : "Error: ";
		char *got = said_line(cases[i].text, marker, cases[i].unless);
		if (cases[i].want)
			cr_expect_str_eq(got, cases[i].want, "case %zu", i);
		else
			cr_expect_null(got, "case %zu: %s", i, got);
		free(got);
	}
}
