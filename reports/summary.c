/* summary.c - perturb run's closing screen; see summary.h */
#include "summary.h"
#include "table.h"
#include "doc.h"
#include "fmt.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

/* Counts of the run: variants, workloads and the fewest and most measured
 * runs of a series, over the wall groups (over every group when the report
 * shows no wall: --metric). */
static void counts(const struct report_model *m, size_t *nv, size_t *nw, size_t *lo, size_t *hi)
{
	const char *seen[256];
	size_t ns = 0;
	int walls = 0;

	*nv = *nw = *hi = 0;
	*lo = (size_t)-1;
	for (size_t g = 0; g < m->n_groups; g++)
		walls |= !strcmp(m->groups[g].metric, "wall");
	for (size_t g = 0; g < m->n_groups; g++) {
		const struct report_group *gr = &m->groups[g];
		int known = 0;
		if (gr->n_series > *nv)
			*nv = gr->n_series;
		for (size_t k = 0; k < ns; k++)
			known |= seen[k] == gr->workload;
		if (!known && ns < ARRAY_SIZE(seen))
			seen[ns++] = gr->workload;
		if (walls && strcmp(gr->metric, "wall"))
			continue;
		for (size_t i = 0; i < gr->n_series; i++) {
			size_t n = gr->series[i].n + (size_t)gr->series[i].failed;
			if (n > *hi)
				*hi = n;
			if (n < *lo)
				*lo = n;
		}
	}
	*nw = ns;
	if (*lo == (size_t)-1)
		*lo = 0;
}

/* The rows s takes on a terminal SUMMARY_WIDTH columns wide: a line longer
 * than that (a word fmt_wrap() could not break, a wide table row) is more
 * than one.  Bytes count as columns (a multi-byte character counts more
 * than it takes, never less), but for the colours the text writer adds
 * (ESC [ ... m: every ESC on the screen is perturb's, a name's are
 * escaped). */
static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0, col = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\033' && i + 1 < len && s[i + 1] == '[') {
			while (i + 1 < len && s[i + 1] != 'm' && s[i + 1] != '\n')
				i++;
			i += i + 1 < len && s[i + 1] == 'm';
			continue;
		}
		if (s[i] != '\n') {
			col++;
			continue;
		}
		n += col ? (col + SUMMARY_WIDTH - 1) / SUMMARY_WIDTH : 1;
		col = 0;
	}
	return n;
}

/* The answer section through the text writer, at most rows variants and
 * cols workloads, into a malloc'd buffer; its lines in *lines. */
static char *answer_text(const struct report_model *m, const struct doc_section *s,
			 size_t rows, size_t cols, size_t *lines)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fmt_memstream(&buf, &len);

	tw_text(f, m, s, rows, cols);
	fclose(f);
	*lines = count_lines(buf, len);
	return buf;
}

/* Does the answer at rows x cols fit in budget lines (with a line for what
 * is left out)? */
static int fits(const struct report_model *m, const struct doc_section *s, size_t rows,
		size_t cols, size_t all_rows, size_t all_cols, size_t budget)
{
	size_t lines;

	free(answer_text(m, s, rows, cols, &lines));
	return lines + (rows < all_rows || cols < all_cols) <= budget;
}

/*
 * The most of the answer that fits in budget lines: every variant of as
 * many workloads as fit with the first few variants (the text writer
 * folds a table wider than the screen: each fold repeats the rows), then
 * as many variants as fit with those workloads.
 */
static void answer_shape(const struct report_model *m, const struct doc_section *s,
			 size_t all_rows, size_t all_cols, size_t budget, size_t *rows,
			 size_t *cols)
{
	size_t few = all_rows < SUMMARY_FEW_ROWS ? all_rows : SUMMARY_FEW_ROWS;

	*rows = all_rows;
	*cols = all_cols;
	if (fits(m, s, *rows, *cols, all_rows, all_cols, budget))
		return;
	while (*cols > 1 && !fits(m, s, few, *cols, all_rows, all_cols, budget))
		--*cols;
	while (*rows > 1 && !fits(m, s, *rows, *cols, all_rows, all_cols, budget))
		--*rows;
}

/* The screen's first line: the run, its shape and state, its baseline,
 * wrapped at the report's width (a study's name is the user's, or a
 * database's: any length; fmt_wrap() escapes its bytes); its rows in
 * *lines. */
static char *header_text(const struct report_model *m, size_t nv, size_t nw, size_t lo,
			 size_t hi, size_t *lines)
{
	const struct run_header *h = &m->run;
	struct strbuf sb = STRBUF_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	strbuf_addf(&sb, "run %lld '%s': %zu variant%s x %zu workload%s, ", (long long)h->id,
		    h->experiment ? h->experiment : "", nv, nv == 1 ? "" : "s", nw,
		    nw == 1 ? "" : "s");
	if (lo == hi)
		strbuf_addf(&sb, "%zu measured run%s each", hi, hi == 1 ? "" : "s");
	else
		strbuf_addf(&sb, "%zu to %zu measured runs each", lo, hi);
	strbuf_addf(&sb, ", %s; baseline %s", h->status ? h->status : "",
		    m->baseline ? m->baseline : "");
	out = fmt_memstream(&buf, &len);
	fmt_wrap(out, "", sb.buf, SUMMARY_WIDTH);	/* escaped there */
	fclose(out);
	strbuf_release(&sb);
	*lines = count_lines(buf, len);
	return buf;
}

/* The failed runs: how many, where, the first one's reason, wrapped at
 * the report's width; in *lines how many lines (the blank one above
 * included). */
static char *failed_text(const struct report_model *m, size_t *lines)
{
	const struct report_failure *f = &m->failures[0];
	struct strbuf sb = STRBUF_INIT;
	char *buf = NULL;
	size_t n = 0, len = 0;
	FILE *out;

	for (size_t i = 0; i < m->n_failures; i++)
		n += m->failures[i].n;
	strbuf_addf(&sb, "Failed runs: %zu, of %zu variant x workload pair%s; the first: %s under "
		    "%s, %s%s%s", n, m->n_failures, m->n_failures == 1 ? "" : "s", f->workload,
		    f->variant, f->status, *f->reason ? ", " : "", f->reason);
	out = fmt_memstream(&buf, &len);
	fputc('\n', out);
	fmt_wrap(out, "", sb.buf, SUMMARY_WIDTH);
	fclose(out);
	strbuf_release(&sb);
	*lines = count_lines(buf, len);
	return buf;
}

/* Is warning w about the answer: the machine or the run as a whole (no
 * metric), or a workload's primary metric?  Warnings about tracer
 * accounting, counters and bookkeeping (ops) are not the screen's. */
static int about_answer(const struct report_model *m, const struct report_warning *w)
{
	if (!w->metric)
		return 1;
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		const struct report_group *g = &m->groups[gi];
		if (g->metric == w->metric && (!w->workload || g->workload == w->workload))
			return g->primary;
	}
	return 0;
}

/* The shown warnings, each wrapped at the report's width under its kind
 * (a 200-column line is three rows of a terminal: the screen's 40 lines
 * count rows), and in *lines how many lines that is: the first
 * SUMMARY_WARNINGS about the answer, in the model's order, then others
 * if there are fewer. */
static char *warnings_text(const struct report_model *m, size_t shown, size_t *lines)
{
	char *buf = NULL, first[64];
	size_t len = 0, k = 0;
	FILE *f = fmt_memstream(&buf, &len);

	for (int pass = 1; pass >= 0; pass--)
		for (size_t i = 0; i < m->n_warnings && k < shown; i++) {
			const struct report_warning *w = &m->warnings[i];

			if (about_answer(m, w) != pass)
				continue;
			snprintf(first, sizeof(first), "  %s: ", report_warning_kinds[w->kind]);
			fmt_wrap(f, first, w->text, SUMMARY_WIDTH);
			k++;
		}
	fclose(f);
	*lines = count_lines(buf, len);
	return buf;
}

int report_summary(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;
	struct strbuf cmd = STRBUF_INIT;
	const struct doc_section *ans;
	size_t nv, nw, lo, hi, fixed, lines = 0, rows = 0, cols = 0, all_rows, all_cols;
	size_t shown = m->n_warnings < SUMMARY_WARNINGS ? m->n_warnings : SUMMARY_WARNINGS;
	char *text = NULL, *warn, *fail, *head;
	size_t warn_lines, fail_lines = 0, head_lines;
	struct doc d;

	counts(m, &nv, &nw, &lo, &hi);
	head = header_text(m, nv, nw, lo, hi, &head_lines);
	fputs(head, out);
	free(head);
	/* the lines around the answer: the blank line perturb run puts
	 * before the screen, the header above, the failed runs, the
	 * warnings, the command; the answer gets the rest */
	warn = warnings_text(m, shown, &warn_lines);
	fail = m->n_failures ? failed_text(m, &fail_lines) : NULL;
	fixed = 1 + head_lines + (m->n_warnings ? 2 + warn_lines + (m->n_warnings > shown) : 0) +
		2 + (fail ? fail_lines : 0);
	doc_build(m, &d);
	ans = doc_find(&d, "answer");
	all_rows = tw_answer_rows(m, &all_cols);
	if (ans) {
		answer_shape(m, ans, all_rows, all_cols, SUMMARY_LINES - fixed, &rows, &cols);
		text = answer_text(m, ans, rows, cols, &lines);
		fputs(text, out);
		free(text);
		if (rows < all_rows || cols < all_cols)
			fprintf(out, "  ... %zu of %zu variants x %zu of %zu workloads shown: see the "
				"full report\n", rows, all_rows, cols, all_cols);
	} else {
		fputs("\n  no successful measured run\n", out);
	}
	doc_release(&d);
	if (fail)
		fputs(fail, out);
	free(fail);
	if (m->n_warnings)
		fprintf(out, "\nwarnings (%zu):\n", m->n_warnings);
	fputs(warn, out);
	free(warn);
	if (m->n_warnings > shown)
		fprintf(out, "  ... and %zu more in the full report\n", m->n_warnings - shown);
	strbuf_addf(&cmd, "perturb report --run %lld", (long long)h->id);
	if (m->opts->db) {
		strbuf_addstr(&cmd, " --db ");
		strbuf_add_shell_word(&cmd, m->opts->db);
	}
	fprintf(out, "\nfull report: %s\n", cmd.buf);
	strbuf_release(&cmd);
	return 0;
}

const struct renderer render_summary = {
	.name = "summary",
	.skip_noise = 1,	/* the closing screen shows no section 1 */
	.answer_only = 1,
	.render = report_summary,
};
