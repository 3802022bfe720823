/* fmt.c - number formatting for the renderers; see fmt.h */
#include "fmt.h"
#include "lib/util.h"

#include <math.h>
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
	size_t ind = strlen(first), col = ind;
	const char *p = text;

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

void fmt_csv_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
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
