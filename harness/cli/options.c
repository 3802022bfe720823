/* options.c - option helpers shared by the subcommands (commands.h) */
#include "commands.h"
#include "lib/util.h"

#include <string.h>

int opt_confidence(const char *val, double *level)
{
	double c;

	if (parse_percent(val, &c) || !(c > 0 && c < 1))
		return error("--confidence takes a level between 0 and 1 (e.g. 0.95 or 95%%), "
			     "got '%s'", val);
	*level = c;
	return 0;
}

int opt_run_id(const char *val, long *id)
{
	if (parse_long(val, 1, INT64_MAX, id))
		return error("--run takes a run id (a positive integer), got '%s'", val);
	return 0;
}

int opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *a = argv[*i];
	size_t len = strlen(name);

	if (strncmp(a, name, len))
		return 0;
	if (a[len] == '=') {
		*value = a + len + 1;
		return 1;
	}
	if (a[len])
		return 0;
	if (*i + 1 >= argc) {
		error("option '%s' needs a value", name);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}
