/* options.c - option helpers shared by the subcommands (commands.h) */
#include "commands.h"
#include "util.h"

#include <string.h>

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
