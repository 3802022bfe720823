/* summary.c - perturb run's closing screen; see summary.h */
#include "summary.h"
#include "table.h"
#include "lib/util.h"

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

int report_summary(const struct report_model *m, FILE *out)
{
	const struct run_header *h = &m->run;
	struct strbuf cmd = STRBUF_INIT;
	size_t nv, nw, lo, hi;

	counts(m, &nv, &nw, &lo, &hi);
	fprintf(out, "run %lld '%s': %zu variant%s x %zu workload%s, ", (long long)h->id,
		h->experiment, nv, nv == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
	if (lo == hi)
		fprintf(out, "%zu measured run%s each", hi, hi == 1 ? "" : "s");
	else
		fprintf(out, "%zu to %zu measured runs each", lo, hi);
	fprintf(out, ", %s; baseline %s\n", h->status, m->baseline);
	if (m->n_groups)
		tw_text(out, m, tw_summary);	/* each table after a blank line */
	else
		fputs("\n  no successful measured run\n", out);
	if (m->n_comparisons) {
		char stat[32];
		report_stat_name(m, stat, sizeof(stat));
		fprintf(out, "\n*: the %s dilation's interval at its Holm level (Holm CI; %zu "
			"comparisons of the primary metrics, %zu of the others) excludes 0, as perturb "
			"gate decides\n", stat, m->n_family[0], m->n_family[1]);
	}
	if (m->n_warnings)
		fprintf(out, "\nwarnings (%zu):\n", m->n_warnings);
	for (size_t i = 0; i < m->n_warnings; i++)
		fprintf(out, "  %s: %s\n", report_warning_kinds[m->warnings[i].kind],
			m->warnings[i].text);
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
	.render = report_summary,
};
