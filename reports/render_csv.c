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

#include <string.h>

#include "fmt.h"

/* A field, quoted (RFC 4180) when it holds a comma or a quote; control
 * bytes and bytes that are not UTF-8 as "\xNN" (fmt_escape()), so that a
 * row is one line and a terminal shows a field rather than obeys it. */
static void field(FILE *out, const char *s)
{
	static const char *const quoted[256] = { ['"'] = "\"\"" };

	if (!strpbrk(s, ",\"")) {
		fmt_text(out, s);
		return;
	}
	fputc('"', out);
	fmt_escape(out, s, quoted);
	fputc('"', out);
}

static int csv(const struct report_model *m, FILE *out)
{
	int status = m->opts->include_failed;

	fputs("run_id,variant,workload,repetition,metric,value,unit,seq,warmup,block,timebase",
	      out);
	fputs(status ? ",status\n" : "\n", out);
	for (size_t i = 0; i < m->n_rows; i++) {
		const struct report_row *r = &m->rows[i];
		fprintf(out, "%lld,", (long long)m->run.id);
		field(out, r->variant);
		fputc(',', out);
		field(out, r->workload);
		fprintf(out, ",%d,", r->repetition + 1);
		field(out, r->metric);
		fprintf(out, ",%.17g,", r->value);
		field(out, r->unit);
		fprintf(out, ",%d,%d,%d,%s", r->seq, r->warmup, r->block,
			r->virtual_time ? "virtual" : "real");
		if (status) {
			fputc(',', out);
			field(out, r->status);
		}
		fputc('\n', out);
	}
	return 0;
}

const struct renderer render_csv = {
	.name = "csv",
	.tidy = 1,
	.render = csv,
};
