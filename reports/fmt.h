/*
 * fmt.h - number formatting shared by the renderers (formatting only: no
 * statistic is computed here).
 *
 * Values are printed with at least 4 significant digits and at least 2
 * decimals below 10^4 (KTAU's 64.47 s, Markers' 1298.16 cycles), fewer
 * decimals above; beyond 10^9 or below 10^-4 in exponent form.  NaN prints
 * as "-".
 */
#ifndef PERTURB_REPORTS_FMT_H
#define PERTURB_REPORTS_FMT_H

#include <stddef.h>
#include <stdio.h>
#include "stats/stats.h"

/* The decimals fmt_value() uses for v (-1: exponent form). */
int fmt_decimals(double v);
/* v with fmt_decimals(v) decimals. */
void fmt_value(char *buf, size_t len, double v);
/* v with the decimals of ref (a dilation printed like its baseline value);
 * plus sign when sign is set. */
void fmt_like(char *buf, size_t len, double v, double ref, int sign);
/* A count: a whole number without decimals (below 10^15), else as
 * fmt_value(). */
void fmt_count(char *buf, size_t len, double v);
/* A cost in ns (per traced event) with a sign: one decimal when |ref| >=
 * 10, else as fmt_like(v, ref). */
void fmt_cost(char *buf, size_t len, double v, double ref);
/* The bounds of an interval for a writer's ci(): in % (unit "" or " %":
 * fmt_pct), else in the metric's unit (a difference without a percentage,
 * report.h no_pct) with the decimals its width needs. */
void fmt_ci_bounds(char *lo, char *hi, size_t len, const struct interval *iv, const char *unit);

/* "%+.2f" (a percentage, no "%" sign); "-" for NaN. */
void fmt_pct(char *buf, size_t len, double v);
/* A p-value: "0.0312", "<1e-04" style below 10^-4; "-" for NaN. */
void fmt_p(char *buf, size_t len, double p);
/* "v [lo, hi]" with the bounds as fmt_like(bound, v); "v" alone when
 * has_ci is 0. */
void fmt_value_ci(char *buf, size_t len, double v, int has_ci, double lo, double hi);
/* The confidence level as "95" or "99.9" (percent, no sign). */
void fmt_level(char *buf, size_t len, double conf);

/* open_memstream(3), which fails on out-of-memory only: fatal then, as for
 * the x* allocators (lib/util.h). */
FILE *fmt_memstream(char **buf, size_t *len);

/* s as plain text (the text report, gate's and compare's text): only the
 * escaping of escape_bytes() (lib/util.h), which every format's escaping
 * is, and put_lines() a run's output in a report. */
void fmt_text(FILE *out, const char *s);
/* fmt_text() into a malloc'd string, for printf's %-16s. */
char *fmt_text_dup(const char *s);
/* s as text of a Markdown table cell or paragraph (render_markdown, gate). */
void fmt_markdown(FILE *out, const char *s);
/* s as HTML text or attribute value (render_html, history): <, >, &, " and '
 * as entities, after escape_bytes(). */
void fmt_html(FILE *out, const char *s);
/* A CSV field (render_csv, history), quoted (RFC 4180) when it holds a
 * comma or a quote; control bytes and bytes that are not UTF-8 as "\xNN"
 * (escape_bytes()), so that a row is one line and a terminal shows a field
 * rather than obeys it. */
void fmt_csv(FILE *out, const char *s);
/* A CSV number field: 17 significant digits (it reads back the same
 * double), nothing when v is not finite: fmt_g17(). */
void fmt_csv_num(FILE *out, double v);
/* v as "%.17g" writes it, byte for byte, into buf (FMT_G17_LEN bytes), and
 * its length: the digits by exact integer arithmetic where v allows (about
 * 10^-6 <= |v| < 2^52, every measured time and count), printf otherwise;
 * ten times faster than glibc's printf (4·10^6 values in a tidy CSV). */
#define FMT_G17_LEN 32
size_t fmt_g17(char *buf, double v);
/* text as lines of at most width columns (a longer word stays whole), the
 * first starting with first, the others indented by its length; its bytes
 * escaped as fmt_text() escapes them (escaped text stays as it is). */
void fmt_wrap(FILE *out, const char *first, const char *text, size_t width);

#endif
