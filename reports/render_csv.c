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

/* A row's text fields repeat from row to row (interned names, rows in
 * order): each column keeps the last field it wrote, written by fmt_csv()
 * into a string once. */
struct field_memo {
	const char *src;
	char *text;
	size_t len;
};

static void memo_field(FILE *out, struct field_memo *f, const char *s)
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
	fwrite(f->text, 1, f->len, out);
}

/* An int's decimal digits, as "%d" writes them. */
static void put_int(FILE *out, long long v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), out);
}

static int csv(const struct report_model *m, FILE *out)
{
	int status = m->opts->include_failed;
	struct field_memo memo[5] = { { 0 } };

	fputs("run_id,variant,workload,repetition,metric,value,unit,seq,warmup,block,timebase",
	      out);
	fputs(status ? ",status\n" : "\n", out);
	for (size_t i = 0; i < m->n_rows; i++) {
		const struct report_row *r = &m->rows[i];
		put_int(out, (long long)m->run.id);
		fputc(',', out);
		memo_field(out, &memo[0], r->variant);
		fputc(',', out);
		memo_field(out, &memo[1], r->workload);
		fputc(',', out);
		put_int(out, r->repetition + 1);
		fputc(',', out);
		memo_field(out, &memo[2], r->metric);
		fprintf(out, ",%.17g,", r->value);
		memo_field(out, &memo[3], r->unit);
		fputc(',', out);
		put_int(out, r->seq);
		fputc(',', out);
		put_int(out, r->warmup);
		fputc(',', out);
		put_int(out, r->block);
		fputs(r->virtual_time ? ",virtual" : ",real", out);
		if (status) {
			fputc(',', out);
			memo_field(out, &memo[4], r->status);
		}
		fputc('\n', out);
	}
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
