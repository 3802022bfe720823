/*
 * options.h - typed option tables: a command declares its options as data,
 * one parser fills them and the same table prints the command's help.
 *
 * A command writes a table of rows ending in OPT_END():
 *
 *	const char *db = "results/perturb.db";
 *	long run = 0;
 *	struct opt opts[] = {
 *		OPT_ARG("EXPERIMENT.yaml", &file, "default ./experiments.yaml"),
 *		OPT_STRING(0, "db", &db, "PATH", "results database"),
 *		OPT_INTEGER(0, "run", &run, 1, INT64_MAX, "ID", "a stored run"),
 *		OPT_FLAG('q', "quiet", &perturb_quiet, "print only errors"),
 *		OPT_END(),
 *	};
 *	if ((rc = parse_options(argc, argv, opts, "gate")))
 *		return rc < 0 ? EXIT_USAGE : EXIT_OK;
 *
 * Rows (value: what the pointer points to; it keeps its default unless the
 * option is given; a later occurrence overrides an earlier one):
 *   OPT_FLAG        int: set to 1; takes no value
 *   OPT_STRING      const char *: the argument itself (it points into argv)
 *   OPT_INTEGER     any integer type (int, long, unsigned, size_t, int64_t):
 *                   a decimal integer in [min, max]; the range must fit the
 *                   type (checked when the option is given).  For
 *                   identifiers (--run ID); a count is an OPT_COUNT
 *   OPT_COUNT       the same, in the range of its row rid of lib/range.h
 *                   (the one range of that count, in the file and here)
 *   OPT_UNSIGNED    uint64_t: a decimal integer from 0 to UINT64_MAX
 *   OPT_DOUBLE      double: a finite number in the range (below)
 *   OPT_DURATION    double, in seconds: the grammar of the experiment's
 *                   durations (parse_duration(): 250ms, 30s, 5m, a bare
 *                   number is seconds), in the range of its row rid of
 *                   lib/range.h
 *   OPT_PERCENT     double, a fraction: "2%" or "0.02" (parse_percent()),
 *                   in the range (given as fractions)
 *   OPT_LEVEL       double: a confidence level in (0, 1), "0.95" or "95%"
 *   OPT_LIST        char ** and size_t: repeatable, and each value may hold
 *                   several items separated by commas (no empty item); the
 *                   list must start empty (NULL, 0) and ends as a malloc'd
 *                   array the caller frees (and may grow); its strings point
 *                   into argv or into copies kept for the life of the process
 *   OPT_CALLBACK    int cb(const struct opt *o, const char *arg): 0, or -1
 *                   after printing what was wrong; o->value is the row's
 *                   pointer
 *   OPT_ARG         const char *: the next positional argument, in order
 *   OPT_ARGS        char ** and size_t: every further positional argument,
 *                   a malloc'd array of pointers into argv (free it)
 * Ranges of OPT_DOUBLE and OPT_PERCENT: [min, max], or
 * (min, max] with OPT_ABOVE_MIN; -INFINITY / INFINITY for no bound.
 *
 * Spellings: "--name V", "--name=V", a unique prefix of a long name
 * (getopt_long's abbreviations), "-x V" and "-xV" for a row with a short
 * letter, flags clustered ("-qv"); "--" ends the options (every argument
 * after it is positional).  Every command also takes "-h"/"--help" (prints
 * its help, opt_print_help()) and "--list-options" (every spelling the
 * table accepts, one a line, for shell completion and the tests).
 *
 * Errors are printed as "perturb: error: ..." naming the option and what
 * was expected ("--bootstrap takes an integer from 100 to 10000000, got
 * '5'"); an unknown option says "did you mean" when a long name is close.
 */
#ifndef PERTURB_OPTIONS_H
#define PERTURB_OPTIONS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/range.h"

enum opt_type {
	OPT_T_END,
	OPT_T_FLAG,
	OPT_T_STRING,
	OPT_T_INTEGER,
	OPT_T_UNSIGNED,
	OPT_T_DOUBLE,
	OPT_T_DURATION,
	OPT_T_PERCENT,
	OPT_T_LEVEL,
	OPT_T_LIST,
	OPT_T_CALLBACK,
	OPT_T_ARG,
	OPT_T_ARGS,
};

enum opt_flags {
	OPT_ABOVE_MIN = 1 << 0,	/* real ranges: the minimum itself is refused */
};

struct opt;
typedef int (*opt_cb)(const struct opt *o, const char *arg);

struct opt {
	enum opt_type type;
	int short_name;		/* a letter, or 0 */
	const char *long_name;	/* without "--"; positional rows: the name shown */
	void *value;		/* where the value goes (see the rows above) */
	size_t *count;		/* OPT_LIST, OPT_ARGS: the number of items */
	size_t size;		/* OPT_INTEGER: sizeof the integer */
	long min, max;		/* OPT_INTEGER */
	double rmin, rmax;	/* OPT_DOUBLE, OPT_PERCENT */
	const struct range *range;	/* OPT_COUNT, OPT_DURATION: lib/range.h */
	unsigned flags;		/* enum opt_flags */
	opt_cb cb;		/* OPT_CALLBACK */
	const char *argh;	/* the value's name in help: "PATH", "N" */
	const char *help;	/* help text; "\n" starts an indented line */
	unsigned seen;		/* set by parse_options(): times given */
};

/* Compile-time check that ptr has type T (a warning otherwise). */
#define OPT_PTR(T, ptr) (1 ? (ptr) : (T)0)

#define OPT_END() { .type = OPT_T_END }
#define OPT_FLAG(s, l, v, h) \
	{ .type = OPT_T_FLAG, .short_name = (s), .long_name = (l), \
	  .value = OPT_PTR(int *, v), .help = (h) }
#define OPT_STRING(s, l, v, a, h) \
	{ .type = OPT_T_STRING, .short_name = (s), .long_name = (l), \
	  .value = OPT_PTR(const char **, v), .argh = (a), .help = (h) }
#define OPT_INTEGER(s, l, v, lo, hi, a, h) \
	{ .type = OPT_T_INTEGER, .short_name = (s), .long_name = (l), .value = (v), \
	  .size = sizeof(*(v)) + 0 * sizeof((*(v)) & 1), .min = (lo), .max = (hi), \
	  .argh = (a), .help = (h) }
#define OPT_UNSIGNED(s, l, v, a, h) \
	{ .type = OPT_T_UNSIGNED, .short_name = (s), .long_name = (l), \
	  .value = OPT_PTR(uint64_t *, v), .argh = (a), .help = (h) }
#define OPT_REAL_(t, s, l, v, lo, hi, f, a, h) \
	{ .type = (t), .short_name = (s), .long_name = (l), .value = OPT_PTR(double *, v), \
	  .rmin = (lo), .rmax = (hi), .flags = (f), .argh = (a), .help = (h) }
#define OPT_DOUBLE(s, l, v, lo, hi, f, a, h) OPT_REAL_(OPT_T_DOUBLE, s, l, v, lo, hi, f, a, h)
#define OPT_DURATION(s, l, v, rid, a, h) \
	{ .type = OPT_T_DURATION, .short_name = (s), .long_name = (l), \
	  .value = OPT_PTR(double *, v), .range = &ranges[rid], .argh = (a), .help = (h) }
#define OPT_COUNT(s, l, v, rid, a, h) \
	{ .type = OPT_T_INTEGER, .short_name = (s), .long_name = (l), .value = (v), \
	  .size = sizeof(*(v)) + 0 * sizeof((*(v)) & 1), .min = (long)ranges[rid].min, \
	  .max = (long)ranges[rid].max, .range = &ranges[rid], .argh = (a), .help = (h) }
#define OPT_PERCENT(s, l, v, lo, hi, f, a, h) OPT_REAL_(OPT_T_PERCENT, s, l, v, lo, hi, f, a, h)
#define OPT_LEVEL(s, l, v, a, h) OPT_REAL_(OPT_T_LEVEL, s, l, v, 0, 1, OPT_ABOVE_MIN, a, h)
#define OPT_LIST(s, l, v, n, a, h) \
	{ .type = OPT_T_LIST, .short_name = (s), .long_name = (l), \
	  .value = OPT_PTR(char ***, v), .count = (n), .argh = (a), .help = (h) }
#define OPT_CALLBACK(s, l, v, fn, a, h) \
	{ .type = OPT_T_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), \
	  .cb = (fn), .argh = (a), .help = (h) }
#define OPT_ARG(name, v, h) \
	{ .type = OPT_T_ARG, .long_name = (name), .value = OPT_PTR(const char **, v), .help = (h) }
#define OPT_ARGS(name, v, n, h) \
	{ .type = OPT_T_ARGS, .long_name = (name), .value = OPT_PTR(char ***, v), \
	  .count = (n), .help = (h) }

/* parse_options()'s result besides 0 (parsed) and -1 (an error, printed). */
#define OPT_EXIT_DONE 1	/* --help or --list-options printed what was asked */

/*
 * Parse argv[1..argc) (argv[0] is the command, named cmd in messages) into
 * the table's values; argv is not reordered nor written.  Returns 0, -1
 * after printing an error (a command exits EXIT_USAGE), or OPT_EXIT_DONE
 * when --help / -h or --list-options printed on stdout (exit EXIT_OK).  On
 * -1 the values may be partly set, lists are untouched.  Not reentrant
 * (getopt_long's state).
 */
int parse_options(int argc, char **argv, struct opt *opts, const char *cmd);

/*
 * A command's help: "usage: perturb USAGE", ABOUT (both as set by
 * opt_set_help_intro(), when set), then its table: positional rows, then
 * options, each "  --name ARG" with its help aligned at column 27.
 */
void opt_print_help(FILE *f, const struct opt *opts);
/* What opt_print_help() prints above the table (main.c: the command's row);
 * the strings must outlive the parse. */
void opt_set_help_intro(const char *usage, const char *about);

/* The times the option writing to value was given (its row's seen), 0 when
 * no row writes there. */
unsigned opt_given(const struct opt *opts, const void *value);

#endif
