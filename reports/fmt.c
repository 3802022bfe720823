/* fmt.c - number formatting for the renderers; see fmt.h */
#include "fmt.h"
#include "lib/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fmt_decimals(double v)
{
	double a = fabs(v);
	int d;

	if (a == 0.0)
		return 2;
	if (a >= 1e9 || a < 1e-4)
		return -1;
	if (a >= 1e5)
		return 0;
	if (a >= 1e4)
		return 1;
	d = 3 - (int)floor(log10(a));
	return d < 2 ? 2 : d;
}

static void fmt_dec(char *buf, size_t len, double v, int d, int sign)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, v > 0 ? "inf" : "-inf");
	else if (d < 0)
		snprintf(buf, len, sign ? "%+.3e" : "%.3e", v);
	else
		snprintf(buf, len, sign ? "%+.*f" : "%.*f", d, v);
}

void fmt_value(char *buf, size_t len, double v)
{
	fmt_dec(buf, len, v, fmt_decimals(v), 0);
}

void fmt_like(char *buf, size_t len, double v, double ref, int sign)
{
	int d = isfinite(ref) ? fmt_decimals(ref) : fmt_decimals(v);
	/* a dilation far smaller than its reference keeps 2 significant digits */
	if (d >= 0 && v != 0.0 && isfinite(v) && fabs(v) < pow(10, -d) * 10) {
		int need = 1 - (int)floor(log10(fabs(v)));
		if (need > d)
			d = need > 9 ? -1 : need;
	}
	fmt_dec(buf, len, v, d, sign);
}

void fmt_count(char *buf, size_t len, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		fmt_value(buf, len, v);
}

void fmt_cost(char *buf, size_t len, double v, double ref)
{
	if (isfinite(v) && fabs(ref) >= 10)
		snprintf(buf, len, "%+.1f", v);
	else
		fmt_like(buf, len, v, ref, 1);
}

void fmt_value_ci(char *buf, size_t len, double v, int has_ci, double lo, double hi)
{
	char a[48], l[48], h[48];

	fmt_value(a, sizeof(a), v);
	if (!has_ci) {
		snprintf(buf, len, "%s", a);
		return;
	}
	fmt_like(l, sizeof(l), lo, v, 0);
	fmt_like(h, sizeof(h), hi, v, 0);
	snprintf(buf, len, "%s [%s, %s]", a, l, h);
}

void fmt_pct(char *buf, size_t len, double v)
{
	fmt_dec(buf, len, v, 2, 1);
}

void fmt_p(char *buf, size_t len, double p)
{
	if (isnan(p))
		snprintf(buf, len, "-");
	else if (p < 1e-4)
		snprintf(buf, len, "<0.0001");
	else
		snprintf(buf, len, "%.4f", p);
}

void fmt_level(char *buf, size_t len, double conf)
{
	snprintf(buf, len, "%g", 100.0 * conf);
}

/* Markdown's active characters with a backslash, <, > and & as entities,
 * line breaks as spaces. */
static const char *const md_subst[256] = {
	['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['\n'] = " ", ['\r'] = " ",
	['\\'] = "\\\\", ['`'] = "\\`", ['*'] = "\\*", ['_'] = "\\_", ['['] = "\\[",
	[']'] = "\\]", ['|'] = "\\|", ['#'] = "\\#", ['~'] = "\\~",
};

void fmt_markdown(FILE *out, const char *s)
{
	escape_bytes(out, s, md_subst);
}

FILE *fmt_memstream(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	if (!f) {
		fputs("perturb: fatal: out of memory\n", stderr);
		abort();
	}
	return f;
}

void fmt_wrap(FILE *out, const char *first, const char *text, size_t width)
{
	char *shown = fmt_text_dup(text);	/* names from a database: shown, not obeyed */
	size_t ind = strlen(first), col = ind;
	const char *p = shown;

	fputs(first, out);
	while (*p) {
		size_t wl = strcspn(p, " ");
		if (col > ind && col + 1 + wl > width) {
			fprintf(out, "\n%*s", (int)ind, "");
			col = ind;
		} else if (col > ind) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, wl, out);
		col += wl;
		p += wl;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
	free(shown);
}

void fmt_text(FILE *out, const char *s)
{
	static const char *const none[256];
	escape_bytes(out, s, none);
}

char *fmt_text_dup(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fmt_memstream(&buf, &len);

	fmt_text(f, s);
	fclose(f);
	return buf;
}

/* 10^k, k = 0..19 (10^19 < 2^64) */
static const uint64_t pow10_u64[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/*
 * The 17 significant digits of v > 0 (finite, normal) rounded as printf
 * rounds them (to nearest, ties to even), as an integer in [10^16, 10^17),
 * and the decimal exponent x of its first digit: v ~ digits * 10^(x - 16).
 * Exact: with v = m * 2^e (m < 2^53, e < 0) and k = 16 - x <= 22 decimals,
 * v * 10^k = m * 10^k / 2^-e, whose numerator is below 2^53 * 10^22 < 2^127
 * and is divided by a shift, the remainder compared with half the divisor.
 * 0 when v is out of that range (about below 10^-6 or at or above 2^52):
 * printf writes those.
 */
static int digits17(double v, uint64_t *digits, int *x10)
{
	uint64_t bits, m;
	int be, s, x;

	memcpy(&bits, &v, sizeof(bits));
	be = (int)(bits >> 52 & 0x7ff);
	m = (bits & ((1ULL << 52) - 1)) | 1ULL << 52;
	s = 1075 - be;		/* v = m / 2^s */
	if (be == 0 || s <= 0 || s >= 127)
		return 0;
	/* floor(log10(2^(be - 1023))), which is x or x - 1 */
	x = (int)(((long)(be - 1023) * 78913) >> 18);
	for (int tries = 0; tries < 3; tries++) {
		int k = 16 - x;
		unsigned __int128 n, rem, half;
		uint64_t q;

		if (k < 0 || k > 22)
			return 0;
		n = (unsigned __int128)m * (k <= 19 ? pow10_u64[k] : pow10_u64[19]);
		if (k > 19)
			n *= pow10_u64[k - 19];
		q = (uint64_t)(n >> s);	/* < 2^127 / 2^s: fits when in range */
		if (n >> s >= pow10_u64[17]) {
			x++;
			continue;
		}
		if (q < pow10_u64[16]) {
			x--;
			continue;
		}
		rem = n & (((unsigned __int128)1 << s) - 1);
		half = (unsigned __int128)1 << (s - 1);
		if (rem > half || (rem == half && (q & 1)))
			q++;
		if (q == pow10_u64[17]) {	/* 99..9.5 rounded up to 10..0 */
			q = pow10_u64[16];
			x++;
		}
		*digits = q;
		*x10 = x;
		return 1;
	}
	return 0;
}

/* The 8 decimal digits of v < 10^8, two at a time. */
static void put_digits8(char *d, uint32_t v)
{
	static const char pairs[] =
		"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
		"5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

	for (int i = 6; i >= 0; i -= 2, v /= 100)
		memcpy(d + i, pairs + 2 * (v % 100), 2);
}

size_t fmt_g17(char *buf, double v)
{
	char d[17], *p = buf;
	uint64_t q;
	int x, nd = 17;

	if (v == 0.0 || !digits17(fabs(v), &q, &x))
		return (size_t)snprintf(buf, FMT_G17_LEN, "%.17g", v);
	if (signbit(v))
		*p++ = '-';
	put_digits8(d + 9, (uint32_t)(q % 100000000));
	q /= 100000000;		/* 9 digits */
	d[0] = (char)('0' + q / 100000000);
	put_digits8(d + 1, (uint32_t)(q % 100000000));
	while (nd > 1 && d[nd - 1] == '0')
		nd--;
	if (x < -4 || x >= 17) {	/* %e: d.ddde-XX */
		int ax = x < 0 ? -x : x;

		*p++ = d[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, d + 1, (size_t)nd - 1);
			p += nd - 1;
		}
		*p++ = 'e';
		*p++ = x < 0 ? '-' : '+';
		if (ax >= 100)
			*p++ = (char)('0' + ax / 100);
		*p++ = (char)('0' + ax / 10 % 10);
		*p++ = (char)('0' + ax % 10);
	} else if (x >= 0) {	/* %f: the integer digits, then what remains */
		memcpy(p, d, (size_t)x + 1);
		p += x + 1;
		if (nd > x + 1) {
			*p++ = '.';
			memcpy(p, d + x + 1, (size_t)(nd - x - 1));
			p += nd - x - 1;
		}
	} else {		/* 0.000ddd */
		*p++ = '0';
		*p++ = '.';
		for (int i = -1; i > x; i--)
			*p++ = '0';
		memcpy(p, d, (size_t)nd);
		p += nd;
	}
	*p = '\0';
	return (size_t)(p - buf);
}

void fmt_csv_num(FILE *out, double v)
{
	char buf[FMT_G17_LEN];

	if (isfinite(v))
		fwrite(buf, 1, fmt_g17(buf, v), out);
}

void fmt_csv(FILE *out, const char *s)
{
	static const char *const quoted[256] = { ['"'] = "\"\"" };

	if (!strpbrk(s, ",\"")) {
		fmt_text(out, s);
		return;
	}
	fputc('"', out);
	escape_bytes(out, s, quoted);
	fputc('"', out);
}

void fmt_html(FILE *out, const char *s)
{
	static const char *const html_subst[256] = {
		['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['"'] = "&quot;", ['\''] = "&#39;",
	};

	escape_bytes(out, s, html_subst);
}

void fmt_ci_bounds(char *lo, char *hi, size_t len, const struct interval *iv, const char *unit)
{
	double w = fabs(iv->hi - iv->lo), ref = w > 0 ? w : fmax(fabs(iv->lo), fabs(iv->hi));

	if (!*unit || !strcmp(unit, " %")) {
		fmt_pct(lo, len, iv->lo);
		fmt_pct(hi, len, iv->hi);
		return;
	}
	fmt_like(lo, len, iv->lo, ref, 1);
	fmt_like(hi, len, iv->hi, ref, 1);
}
