/* test_gen.c - deterministic input data (harness/lib/gen.c, harness/cli/cmd_gen.c) */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "lib/gen.h"
#include "lib/util.h"

/*
 * SHA-256 of the first MiB of each kind with seed 1.  These pin the streams
 * across machines, compilers and releases: a change here means every stored
 * experiment's generated input changed.  Update only on purpose, and then
 * prefer adding a new kind.
 */
#define GOLDEN_TEXT_1M_SEED1 \
	"7810e6887bbe60d2645b963e63e5ff363a5e7ea5644b0c1df6c8b10536322361"
#define GOLDEN_BINARY_1M_SEED1 \
	"6a76c500b3b9d22aa001352e54a5eb009f432ac9764ec628e06c032f475bf283"

static const char *const kinds[] = { "text", "binary" };

/* gen_write() into a temporary file, read back; *len gets the file size. */
static unsigned char *gen_file(const char *kind, uint64_t size, uint64_t seed, size_t *len)
{
	FILE *f = tmpfile();
	struct stat st;

	cr_assert_not_null(f);
	cr_assert_eq(gen_write(kind, size, seed, fileno(f)), 0, "gen_write %s %llu",
		     kind, (unsigned long long)size);
	cr_assert_eq(fstat(fileno(f), &st), 0);
	*len = (size_t)st.st_size;
	unsigned char *buf = xmalloc(*len + 1);
	rewind(f);
	cr_assert_eq(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/* Order-0 (byte frequency) Shannon entropy, bits per byte. */
static double entropy(const unsigned char *p, size_t n)
{
	uint64_t count[256] = { 0 };
	double h = 0;

	for (size_t i = 0; i < n; i++)
		count[p[i]]++;
	for (int c = 0; c < 256; c++) {
		if (!count[c])
			continue;
		double q = (double)count[c] / (double)n;
		h -= q * log2(q);
	}
	return h;
}

Test(gen, exact_size)
{
	static const uint64_t sizes[] = { 0, 1, 4095, 65536, 65537, (1 << 20) + 3 };

	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			size_t len;
			free(gen_file(kinds[k], sizes[i], 1, &len));
			cr_expect_eq(len, sizes[i], "%s: asked %llu, got %zu", kinds[k],
				     (unsigned long long)sizes[i], len);
		}
	}
}

Test(gen, same_seed_same_bytes)
{
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		size_t la, lb, lc;
		unsigned char *a = gen_file(kinds[k], 300000, 42, &la);
		unsigned char *b = gen_file(kinds[k], 300000, 42, &lb);
		unsigned char *c = gen_file(kinds[k], 300000, 43, &lc);

		cr_expect(!memcmp(a, b, la), "%s: seed 42 twice differs", kinds[k]);
		cr_expect(memcmp(a, c, la), "%s: seeds 42 and 43 give the same bytes", kinds[k]);
		free(a);
		free(b);
		free(c);
	}
}

Test(gen, kinds_differ_for_one_seed)
{
	size_t lt, lb;
	unsigned char *t = gen_file("text", 4096, 1, &lt);
	unsigned char *b = gen_file("binary", 4096, 1, &lb);

	cr_expect(memcmp(t, b, lt));
	free(t);
	free(b);
}

/* A smaller file is a prefix of a larger one, and read sizes do not matter. */
Test(gen, stream_is_prefix_stable)
{
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		size_t lbig, lsmall;
		unsigned char *big = gen_file(kinds[k], 200003, 9, &lbig);
		unsigned char *small = gen_file(kinds[k], 70001, 9, &lsmall);
		cr_expect(!memcmp(big, small, lsmall), "%s: 70001 bytes not a prefix", kinds[k]);

		struct gen *g = gen_new(kinds[k], 9);
		cr_assert_not_null(g);
		unsigned char *r = xmalloc(lbig);
		size_t off = 0, step = 1;
		while (off < lbig) {
			size_t n = step < lbig - off ? step : lbig - off;
			gen_read(g, r + off, n);
			off += n;
			step = step * 3 + 1;	/* 1, 4, 13, ..., past the chunk size */
		}
		gen_free(g);
		cr_expect(!memcmp(big, r, lbig), "%s: gen_read differs from gen_write", kinds[k]);
		free(r);
		free(big);
		free(small);
	}
}

Test(gen, golden_sha256)
{
	char hex[65];
	size_t len;
	unsigned char *t = gen_file("text", 1 << 20, 1, &len);

	sha256_hex(t, len, hex);
	cr_expect_str_eq(hex, GOLDEN_TEXT_1M_SEED1, "text 1M seed 1 changed");
	free(t);

	unsigned char *b = gen_file("binary", 1 << 20, 1, &len);
	sha256_hex(b, len, hex);
	cr_expect_str_eq(hex, GOLDEN_BINARY_1M_SEED1, "binary 1M seed 1 changed");
	free(b);
}

Test(gen, text_is_printable_prose)
{
	size_t len, line = 0, maxline = 0, spaces = 0, periods = 0, paragraphs = 0;
	unsigned char *t = gen_file("text", 1 << 20, 3, &len);

	for (size_t i = 0; i < len; i++) {
		unsigned char c = t[i];
		cr_assert(c == '\n' || (c >= 0x20 && c < 0x7f),
			  "byte 0x%02x at offset %zu", c, i);
		if (c == '\n') {
			if (i && t[i - 1] == '\n')
				paragraphs++;
			if (line > maxline)
				maxline = line;
			line = 0;
			continue;
		}
		line++;
		spaces += c == ' ';
		periods += c == '.';
	}
	cr_expect_leq(maxline, 80, "longest line %zu", maxline);
	/* words of about 4-5 letters, sentences of about a dozen words */
	cr_expect_gt(spaces, len / 8);
	cr_expect_lt(spaces, len / 4);
	cr_expect_gt(periods, len / 150);
	cr_expect_gt(paragraphs, len / 3000);
	free(t);
}

Test(gen, entropy_bounds)
{
	size_t len;
	unsigned char *t = gen_file("text", 1 << 20, 1, &len);
	double h = entropy(t, len);
	cr_expect(h > 3.5 && h < 5.0, "text entropy %.3f bits/byte", h);
	free(t);

	unsigned char *b = gen_file("binary", 1 << 20, 1, &len);
	h = entropy(b, len);
	cr_expect(h > 5.0 && h < 7.9, "binary entropy %.3f bits/byte", h);
	free(b);
}

Test(gen, unknown_kind, .init = cr_redirect_stderr)
{
	cr_expect_null(gen_new("Text", 1));
	cr_expect_null(gen_new("", 1));
	cr_expect_eq(gen_write("bin", 10, 1, -1), -EINVAL);
	cr_expect(gen_kind_valid("text"));
	cr_expect(gen_kind_valid("binary"));
	cr_expect(!gen_kind_valid("random"));
	fflush(stderr);
	cr_expect_stderr_eq_str(
		"perturb: error: unknown kind 'Text' (valid kinds: text, binary)\n"
		"perturb: error: unknown kind '' (valid kinds: text, binary)\n"
		"perturb: error: unknown kind 'bin' (valid kinds: text, binary)\n");
}

/* The subcommand: arguments, exit statuses, the file it leaves. */
static int run_gen(int argc, const char **argv)
{
	return cmd_gen(argc, (char **)argv);
}

Test(gen, cmd_gen, .init = cr_redirect_stderr)
{
	char dir[] = "/tmp/perturb-test-gen-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char *out = xasprintf("%s/in.txt", dir);
	char *tmp = xasprintf("%s.tmp", out);
	struct stat st;
	size_t len;

	const char *ok[] = { "gen", "text", "1K", out, "--seed", "5" };
	cr_expect_eq(run_gen(6, ok), EXIT_OK);
	cr_expect_eq(stat(out, &st), 0);
	cr_expect_eq(st.st_size, 1024);
	cr_expect_neq(stat(tmp, &st), 0, "temporary file left behind");
	char *data = read_file(out, &len);
	unsigned char *want = gen_file("text", 1024, 5, &len);
	cr_expect(data && !memcmp(data, want, 1024));
	free(data);
	free(want);

	const char *eq[] = { "gen", "--seed=5", "binary", "100", out };
	cr_expect_eq(run_gen(5, eq), EXIT_OK);
	cr_expect_eq(stat(out, &st), 0);
	cr_expect_eq(st.st_size, 100);

	const char *few[] = { "gen", "text", "1K" };
	cr_expect_eq(run_gen(3, few), EXIT_USAGE);
	const char *kind[] = { "gen", "words", "1K", out };
	cr_expect_eq(run_gen(4, kind), EXIT_USAGE);
	const char *size[] = { "gen", "text", "1Q", out };
	cr_expect_eq(run_gen(4, size), EXIT_USAGE);
	const char *seed[] = { "gen", "text", "1K", out, "--seed", "-1" };
	cr_expect_eq(run_gen(6, seed), EXIT_USAGE);
	const char *noval[] = { "gen", "text", "1K", out, "--seed" };
	cr_expect_eq(run_gen(5, noval), EXIT_USAGE);
	const char *opt[] = { "gen", "text", "1K", out, "--sed", "1" };
	cr_expect_eq(run_gen(6, opt), EXIT_USAGE);
	/* usage errors write nothing */
	cr_expect_eq(stat(out, &st), 0);
	cr_expect_eq(st.st_size, 100);

	char *missing = xasprintf("%s/no/such/dir/x", dir);
	const char *nodir[] = { "gen", "text", "1K", missing };
	cr_expect_eq(run_gen(4, nodir), EXIT_RUNTIME);
	const char *full[] = { "gen", "text", "1K", "/dev/full" };
	if (!access("/dev/full", W_OK))
		cr_expect_eq(run_gen(4, full), EXIT_RUNTIME);

	unlink(out);
	rmdir(dir);
	free(missing);
	free(out);
	free(tmp);
}
