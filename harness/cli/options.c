/*
 * options.c - the typed option parser (options.h) over getopt_long(3).
 *
 * getopt_long reads the spellings ("--name=V", "--name V", abbreviations,
 * clusters, "--"); this file turns a table into getopt_long's, checks and
 * stores each value, words every error and prints the help.  getopt_long
 * runs in its "return in order" mode (optstring "-..."): argv is never
 * permuted, and positional arguments come back in order.
 */
#include "options.h"
#include "lib/util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's val of row i is VAL_ROW + i: above every short letter. */
#define VAL_ROW 0x1000
#define VAL_LIST_OPTIONS 0x0fff
/* The column of the help texts (0-based), as in `perturb help`. */
#define HELP_COL 26

/* The items of a list row, gathered while parsing, stored at the end. */
struct items {
	char **v;
	size_t n, alloc;
};

/* Copies of the arguments that lists split at their commas: they live as
 * long as argv does (the process), so items never need freeing. */
static struct items kept;

static const char *intro_usage, *intro_about;

static int is_option(const struct opt *o)
{
	return o->type != OPT_T_ARG && o->type != OPT_T_ARGS;
}

/* "--name", or "-x" for a row with only a short letter. */
static const char *name_of(const struct opt *o, char buf[4])
{
	if (o->long_name)
		return o->long_name;
	buf[0] = (char)o->short_name;
	buf[1] = 0;
	return buf;
}

#define DASHES(o) ((o)->long_name ? "--" : "-")

static void add_real(struct strbuf *sb, const struct opt *o, double x)
{
	if (o->type == OPT_T_PERCENT)
		strbuf_addf(sb, "%g%%", 100 * x);
	else if (o->type == OPT_T_DURATION)
		strbuf_addf(sb, "%gs", x);
	else
		strbuf_addf(sb, "%g", x);
}

/* " above 0% and at most 1000%", " of at least 0s", "" for no bound. */
static void add_range(struct strbuf *sb, const struct opt *o)
{
	int lo = isfinite(o->rmin), hi = isfinite(o->rmax), above = o->flags & OPT_ABOVE_MIN;

	if (lo) {
		strbuf_addstr(sb, above ? " above " : hi ? " from " : " of at least ");
		add_real(sb, o, o->rmin);
	}
	if (hi) {
		strbuf_addstr(sb, !lo ? " of at most " : above ? " and at most " : " to ");
		add_real(sb, o, o->rmax);
	}
}

/* Print "--NAME takes WHAT, got 'ARG'"; returns -1. */
static int bad_value(const struct opt *o, const char *arg)
{
	struct strbuf sb = STRBUF_INIT;
	char b[4];

	if (o->range) {
		char what[128];
		error("%s%s takes %s, got '%s'", DASHES(o), name_of(o, b),
		      range_describe(o->range, what, sizeof(what)), arg);
		return -1;
	}
	switch (o->type) {
	case OPT_T_INTEGER:
		if (o->max != LONG_MAX)
			strbuf_addf(&sb, "an integer from %ld to %ld", o->min, o->max);
		else if (o->min == 1)
			strbuf_addstr(&sb, "a positive integer");
		else if (o->min == 0)
			strbuf_addstr(&sb, "a non-negative integer");
		else
			strbuf_addf(&sb, "an integer of at least %ld", o->min);
		break;
	case OPT_T_UNSIGNED:
		strbuf_addf(&sb, "an integer from 0 to %llu", (unsigned long long)UINT64_MAX);
		break;
	case OPT_T_DOUBLE:
		strbuf_addstr(&sb, "a number");
		add_range(&sb, o);
		break;
	case OPT_T_DURATION:
		strbuf_addstr(&sb, "a duration");
		add_range(&sb, o);
		strbuf_addstr(&sb, " (250ms, 30s, 5m; a bare number is seconds)");
		break;
	case OPT_T_PERCENT:
		strbuf_addstr(&sb, "a percentage");
		add_range(&sb, o);
		strbuf_addstr(&sb, " (2% or 0.02)");
		break;
	case OPT_T_LEVEL:
		strbuf_addstr(&sb, "a level between 0 and 1 (e.g. 0.95 or 95%)");
		break;
	case OPT_T_LIST: {
		const char *a = o->argh ? o->argh : "VALUE";
		strbuf_addf(&sb, "%s or %s,%s,...", a, a, a);
		break;
	}
	default:
		strbuf_addstr(&sb, "a value");
		break;
	}
	error("%s%s takes %s, got '%s'", DASHES(o), name_of(o, b), sb.buf, arg);
	strbuf_release(&sb);
	return -1;
}

/* Store v in the row's integer of o->size bytes; the row's range must fit. */
static int store_integer(const struct opt *o, long v)
{
	char b[4];

	switch (o->size) {
	case sizeof(int64_t): {
		int64_t t = v;
		memcpy(o->value, &t, sizeof(t));
		return 0;
	}
	case sizeof(int32_t):
		if (o->min >= INT32_MIN && (unsigned long)o->max <= UINT32_MAX) {
			int32_t t = (int32_t)v;	/* the same bits for an unsigned target */
			memcpy(o->value, &t, sizeof(t));
			return 0;
		}
		break;
	case sizeof(int16_t):
		if (o->min >= INT16_MIN && o->max <= UINT16_MAX) {
			int16_t t = (int16_t)v;
			memcpy(o->value, &t, sizeof(t));
			return 0;
		}
		break;
	}
	return error("option table of %s%s: the range %ld..%ld does not fit its %zu-byte integer",
		     DASHES(o), name_of(o, b), o->min, o->max, o->size);
}

/* Strict decimal uint64_t: digits only. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static void items_add(struct items *it, char *s)
{
	ALLOC_GROW(it->v, it->n + 1, it->alloc);
	it->v[it->n++] = s;
}

/* "a,b,c": every item, none empty; an argument without a comma is used as
 * it is. */
static int list_add(const struct opt *o, const char *arg, struct items *it)
{
	char *copy, *save = NULL;

	if (!strchr(arg, ',')) {
		if (!*arg)
			return bad_value(o, arg);
		items_add(it, (char *)arg);
		return 0;
	}
	if (arg[0] == ',' || strstr(arg, ",,") || arg[strlen(arg) - 1] == ',')
		return bad_value(o, arg);
	copy = xstrdup(arg);
	items_add(&kept, copy);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		items_add(it, tok);
	return 0;
}

/* The list as a malloc'd array the caller owns (and may grow). */
static void items_store(const struct opt *o, const struct items *it)
{
	char **v = xmalloc(it->n * sizeof(*v));

	memcpy(v, it->v, it->n * sizeof(*v));
	*(char ***)o->value = v;
	*o->count = it->n;
}

static int set_value(const struct opt *o, const char *arg, struct items *it)
{
	char why[256], b[4];
	double x;
	long l;
	int rc;

	switch (o->type) {
	case OPT_T_FLAG:
		*(int *)o->value = 1;
		return 0;
	case OPT_T_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPT_T_INTEGER:
		if (o->range) {
			if (range_parse(o->range, arg, &x))
				return bad_value(o, arg);
			return store_integer(o, (long)x);
		}
		if (parse_long(arg, o->min, o->max, &l))
			return bad_value(o, arg);
		return store_integer(o, l);
	case OPT_T_UNSIGNED:
		return parse_u64(arg, o->value) ? bad_value(o, arg) : 0;
	case OPT_T_DURATION:
		if (range_parse(o->range, arg, &x))
			return bad_value(o, arg);
		*(double *)o->value = x;
		return 0;
	case OPT_T_DOUBLE:
	case OPT_T_PERCENT:
	case OPT_T_LEVEL:
		rc = o->type == OPT_T_DOUBLE ? parse_double(arg, &x) :
		     parse_percent_why(arg, &x, why, sizeof(why));
		if (rc == PERCENT_AMBIGUOUS)	/* "5": say both spellings */
			return error("%s%s: %s", DASHES(o), name_of(o, b), why);
		if (rc ||
		    x < o->rmin || x > o->rmax || ((o->flags & OPT_ABOVE_MIN) && x == o->rmin) ||
		    (o->type == OPT_T_LEVEL && x == 1))
			return bad_value(o, arg);
		*(double *)o->value = x;
		return 0;
	case OPT_T_LIST:
		return list_add(o, arg, it);
	case OPT_T_CALLBACK:
		return o->cb(o, arg);
	default:
		return error("option table: row '%s' of an unknown type", o->long_name);
	}
}

/* The next positional argument into the next OPT_ARG row, or the OPT_ARGS
 * row; an argument no row takes is an error. */
static int positional(struct opt *opts, size_t *next, struct items *pending, const char *arg,
		      const char *cmd)
{
	for (; opts[*next].type != OPT_T_END; ++*next) {
		struct opt *o = &opts[*next];
		if (o->type == OPT_T_ARG) {
			*(const char **)o->value = arg;
			o->seen++;
			++*next;
			return 0;
		}
		if (o->type == OPT_T_ARGS) {
			items_add(&pending[*next], (char *)arg);
			o->seen++;
			return 0;
		}
	}
	return error("unexpected argument '%s' (see 'perturb help %s')", arg, cmd);
}

/* The long name getopt_long reported with val (optopt), or NULL. */
static const char *long_name_of(const struct opt *opts, int val)
{
	if (val == 'h')
		return "help";
	if (val == VAL_LIST_OPTIONS)
		return "list-options";
	if (val >= VAL_ROW)
		return opts[val - VAL_ROW].long_name;
	return NULL;
}

/* getopt_long's '?' (unknown, ambiguous, a value given to a flag) or ':'
 * (a value missing), for the option spelled in tok. */
static void bad_spelling(const struct opt *opts, const char *tok, int c, const char *cmd)
{
	const char *known = long_name_of(opts, optopt);
	const char **words;
	struct strbuf amb = STRBUF_INIT;
	size_t n = 0, n_amb = 0, len;
	char *name;

	if (tok[0] != '-' || tok[1] != '-') {
		if (c == ':')
			error("option '-%c' needs a value", optopt);
		else
			error("unknown option '-%c' (see 'perturb help %s')", optopt, cmd);
		return;
	}
	if (known) {
		if (c == ':')
			error("option '--%s' needs a value", known);
		else
			error("option '--%s' takes no value", known);
		return;
	}
	len = strcspn(tok + 2, "=");
	name = xstrndup(tok + 2, len);
	while (opts[n].type != OPT_T_END)
		n++;
	words = xcalloc(n + 3, sizeof(*words));
	n = 0;
	for (const struct opt *o = opts; o->type != OPT_T_END; o++) {
		if (!is_option(o) || !o->long_name)
			continue;
		words[n++] = o->long_name;
		if (!strncmp(o->long_name, name, len)) {
			strbuf_addf(&amb, "%s--%s", n_amb ? ", " : "", o->long_name);
			n_amb++;
		}
	}
	words[n++] = "help";
	words[n++] = "list-options";
	if (n_amb > 1) {
		error("option '--%s' is ambiguous (%s)", name, amb.buf);
	} else {
		const char *sug = did_you_mean(name, words);
		if (sug)
			error("unknown option '--%s'; did you mean '--%s'?", name, sug);
		else
			error("unknown option '--%s' (see 'perturb help %s')", name, cmd);
	}
	strbuf_release(&amb);
	free(words);
	free(name);
}

static void list_options(const struct opt *opts)
{
	for (const struct opt *o = opts; o->type != OPT_T_END; o++) {
		if (!is_option(o))
			continue;
		if (o->short_name)
			printf("-%c\n", o->short_name);
		if (o->long_name)
			printf("--%s\n", o->long_name);
	}
}

int parse_options(int argc, char **argv, struct opt *opts, const char *cmd)
{
	struct strbuf shorts = STRBUF_INIT;
	struct option *lo;
	struct items *pending;
	size_t n = 0, n_long = 0, next_arg = 0;
	int ret = -1, c, tok = 1;

	while (opts[n].type != OPT_T_END)
		n++;
	lo = xcalloc(n + 3, sizeof(*lo));
	pending = xcalloc(n + 1, sizeof(*pending));
	/* "-": positional arguments in order; ":": a missing value is ':' */
	strbuf_addstr(&shorts, "-:h");
	for (size_t i = 0; i < n; i++) {
		struct opt *o = &opts[i];
		int has_arg = o->type == OPT_T_FLAG ? no_argument : required_argument;

		o->seen = 0;
		if (!is_option(o))
			continue;
		if (o->long_name)
			lo[n_long++] =
				(struct option){ o->long_name, has_arg, NULL, VAL_ROW + (int)i };
		if (o->short_name)
			strbuf_addf(&shorts, "%c%s", o->short_name, has_arg ? ":" : "");
	}
	lo[n_long++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n_long++] = (struct option){ "list-options", no_argument, NULL, VAL_LIST_OPTIONS };

	opterr = 0;
	optind = 0;	/* glibc: initialise afresh */
	while ((c = getopt_long(argc, argv, shorts.buf, lo, NULL)) != -1) {
		if (c == 1) {
			if (positional(opts, &next_arg, pending, optarg, cmd) < 0)
				goto out;
		} else if (c == 'h' || c == VAL_LIST_OPTIONS) {
			if (c == 'h')
				opt_print_help(stdout, opts);
			else
				list_options(opts);
			ret = OPT_EXIT_DONE;
			goto out;
		} else if (c == '?' || c == ':') {
			bad_spelling(opts, argv[tok], c, cmd);
			goto out;
		} else {
			struct opt *o = opts;
			if (c >= VAL_ROW)
				o += c - VAL_ROW;
			else
				while (o->short_name != c || !is_option(o))
					o++;
			o->seen++;
			if (set_value(o, optarg, &pending[o - opts]) < 0)
				goto out;
		}
		tok = optind;
	}
	for (int i = optind; i < argc; i++)	/* after "--" */
		if (positional(opts, &next_arg, pending, argv[i], cmd) < 0)
			goto out;
	for (size_t i = 0; i < n; i++)
		if (pending[i].n)
			items_store(&opts[i], &pending[i]);
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(pending[i].v);
	free(pending);
	free(lo);
	strbuf_release(&shorts);
	return ret;
}

/* "  SPEC" and the help text at HELP_COL, its further lines indented. */
static void print_row(FILE *f, const char *spec, const char *help)
{
	int w = fprintf(f, "  %s", spec);

	if (!help) {
		fputc('\n', f);
		return;
	}
	if (w + 2 > HELP_COL) {
		fputc('\n', f);
		w = 0;
	}
	for (const char *line = help;; ) {
		size_t len = strcspn(line, "\n");
		fprintf(f, "%*s%.*s\n", HELP_COL - w, "", (int)len, line);
		w = 0;
		if (!line[len])
			break;
		line += len + 1;
	}
}

void opt_set_help_intro(const char *usage, const char *about)
{
	intro_usage = usage;
	intro_about = about;
}

void opt_print_help(FILE *f, const struct opt *opts)
{
	struct strbuf sb = STRBUF_INIT;

	if (intro_usage)
		fprintf(f, "usage: perturb %s\n\n", intro_usage);
	if (intro_about)
		fprintf(f, "%s\n", intro_about);

	for (const struct opt *o = opts; o->type != OPT_T_END; o++) {
		strbuf_reset(&sb);
		if (!is_option(o)) {
			strbuf_addstr(&sb, o->long_name);
		} else {
			if (o->short_name)
				strbuf_addf(&sb, "-%c%s", o->short_name, o->long_name ? ", " : "");
			if (o->long_name)
				strbuf_addf(&sb, "--%s", o->long_name);
			if (o->type != OPT_T_FLAG)
				strbuf_addf(&sb, " %s", o->argh ? o->argh : "VALUE");
		}
		print_row(f, sb.buf, o->help);
	}
	/* The rule of percentages (parse_percent_why()), once, under the rows. */
	strbuf_reset(&sb);
	for (const struct opt *o = opts; o->type != OPT_T_END; o++)
		if (o->type == OPT_T_PERCENT || o->type == OPT_T_LEVEL)
			strbuf_addf(&sb, "%s--%s", sb.len ? ", " : "", o->long_name);
	if (sb.len)
		fprintf(f, "\nPercentages (%s): 5%% or the fraction 0.05; a bare number of 1\n"
			"or more is refused as ambiguous (5: 5 %% or 500 %%?).\n", sb.buf);
	strbuf_release(&sb);
}

unsigned opt_given(const struct opt *opts, const void *value)
{
	for (const struct opt *o = opts; o->type != OPT_T_END; o++)
		if (o->value == value)
			return o->seen;
	return 0;
}
