/*
 * render_csv.c - tidy CSV (docs/report-csv.md): a header row, then one row
 * per run and metric.  Columns:
 *   run_id,variant,workload,repetition,metric,value,unit,seq,warmup,block,
 *   timebase[,status]
 * run_id is the stored `perturb run` (as --run takes it); repetition is
 * 1-based among the measured (or warm-up) runs; seq is the run's position in
 * the plan; block is the plan's block (plan.h: a boot of a boot: variant);
 * timebase is "virtual" for a deterministic QEMU -icount variant (its times
 * count instructions) and "real" otherwise; status appears with
 * --include-failed.  Fields are quoted as RFC
 * 4180 says when they hold a comma or a quote; control bytes are escaped.
 */
#include "report.h"
#include "lib/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

/*
 * The rows go through a buffer of our own, written with one fwrite() when
 * full: 4·10^6 rows of 11 fields were 44·10^6 stdio calls, each taking the
 * stream's lock (issue 25).
 */
struct row_buf {
	FILE *out;
	size_t len;
	char buf[1 << 16];
};

static void rb_flush(struct row_buf *b)
{
	fwrite(b->buf, 1, b->len, b->out);
	b->len = 0;
}

static void rb_add(struct row_buf *b, const char *s, size_t n)
{
	if (b->len + n > sizeof(b->buf)) {
		rb_flush(b);
		if (n > sizeof(b->buf)) {
			fwrite(s, 1, n, b->out);
			return;
		}
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

static void rb_str(struct row_buf *b, const char *s)
{
	rb_add(b, s, strlen(s));
}

/* An int's decimal digits, as "%lld" writes them. */
static void rb_int(struct row_buf *b, long long v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	rb_add(b, p, (size_t)(buf + sizeof(buf) - p));
}

/* A row's text fields repeat from row to row (interned names, rows in
 * order): each column keeps the last field it wrote, written by fmt_csv()
 * into a string once. */
struct field_memo {
	const char *src;
	char *text;
	size_t len;
};

static void memo_field(struct row_buf *b, struct field_memo *f, const char *s)
{
	if (s != f->src || !f->text) {
		FILE *mem;

		free(f->text);
		f->text = NULL;
		mem = fmt_memstream(&f->text, &f->len);
		fmt_csv(mem, s);
		fclose(mem);
		f->src = s;
	}
	rb_add(b, f->text, f->len);
}

static int csv(const struct report_model *m, FILE *out)
{
	int status = m->opts->include_failed;
	struct field_memo memo[5] = { { 0 } };
	struct row_buf *b = xmalloc(sizeof(*b));
	char num[FMT_G17_LEN];

	b->out = out;
	b->len = 0;
	rb_str(b, "run_id,variant,workload,repetition,metric,value,unit,seq,warmup,block,timebase");
	rb_str(b, status ? ",status\n" : "\n");
	for (size_t j = 0; j < m->n_row_set_order; j++) {
		const struct report_row_set *rs = &m->row_sets[m->row_set_order[j]];

		for (size_t i = 0; i < rs->n; i++) {
			const struct report_row *r = &rs->rows[i];

			rb_int(b, (long long)m->run.id);
			rb_add(b, ",", 1);
			memo_field(b, &memo[0], rs->variant);
			rb_add(b, ",", 1);
			memo_field(b, &memo[1], rs->workload);
			rb_add(b, ",", 1);
			rb_int(b, r->repetition + 1);
			rb_add(b, ",", 1);
			memo_field(b, &memo[2], rs->metric);
			rb_add(b, ",", 1);
			rb_add(b, num, fmt_g17(num, r->value));
			rb_add(b, ",", 1);
			memo_field(b, &memo[3], r->unit);
			rb_add(b, ",", 1);
			rb_int(b, r->seq);
			rb_add(b, ",", 1);
			rb_int(b, r->warmup);
			rb_add(b, ",", 1);
			rb_int(b, r->block);
			rb_str(b, rs->virtual_time ? ",virtual" : ",real");
			if (status) {
				rb_add(b, ",", 1);
				memo_field(b, &memo[4], r->status);
			}
			rb_add(b, "\n", 1);
		}
	}
	rb_flush(b);
	free(b);
	for (size_t k = 0; k < ARRAY_SIZE(memo); k++)
		free(memo[k].text);
	return 0;
}

/*
 * The overhead curves (report.h: struct report_curve), one row per point
 * (docs/report-csv.md, "csv-curves"):
 *   run_id,of,base,param,fixed,workload,variant,metric,unit,statistic,
 *   label,x,value,dilation_pct,ci_lo,ci_hi,level,significant,note
 * x, value and the dilation with 17 significant digits, empty when missing
 * (level as %g);
 * note is the interval's method, or why a value is missing.
 */
static int csv_curves(const struct report_model *m, FILE *out)
{
	char stat[32];

	report_stat_name(m, stat, sizeof(stat));
	fputs("run_id,of,base,param,fixed,workload,variant,metric,unit,statistic,label,x,value,"
	      "dilation_pct,ci_lo,ci_hi,level,significant,note\n", out);
	for (size_t i = 0; i < m->n_curves; i++) {
		const struct report_curve *c = &m->curves[i];
		for (size_t k = 0; k < c->n; k++) {
			const struct report_curve_point *p = &c->pts[k];
			const struct interval *ci = &p->ci;
			int has_ci = p->ok && ci->has_ci;
			const char *const text[] = {
				c->of_variant ? "variant" : "workload", c->base, c->param, c->fixed,
				p->workload, p->variant, c->metric, c->unit, stat, p->label,
			};
			fprintf(out, "%lld", (long long)m->run.id);
			for (size_t j = 0; j < ARRAY_SIZE(text); j++) {
				fputc(',', out);
				fmt_csv(out, text[j]);
			}
			fputc(',', out);
			fmt_csv_num(out, p->x);
			fputc(',', out);
			fmt_csv_num(out, p->value);
			fputc(',', out);
			fmt_csv_num(out, p->ok ? p->pct : NAN);
			fputc(',', out);
			fmt_csv_num(out, has_ci ? ci->lo : NAN);
			fputc(',', out);
			fmt_csv_num(out, has_ci ? ci->hi : NAN);
			fputc(',', out);
			if (has_ci)
				fprintf(out, "%g", ci->level);
			fprintf(out, ",%d,", p->significant);
			fmt_csv(out, !p->ok ? p->reason : has_ci ? ci->method :
				   ci->reason ? ci->reason : "no interval");
			fputc('\n', out);
		}
	}
	return 0;
}

const struct renderer render_csv_curves = {
	.name = "csv-curves",
	.render = csv_curves,
};

const struct renderer render_csv = {
	.name = "csv",
	.tidy = 1,
	.render = csv,
};
