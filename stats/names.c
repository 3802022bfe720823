/* names.c - statistic names; see stats.h */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

/* digits, optionally "." and digits: the whole of s. */
static int plain_decimal(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (!n)
		return 0;
	if (s[n] == '.') {
		size_t f = strspn(s + n + 1, "0123456789");
		if (!f)
			return 0;
		n += 1 + f;
	}
	return s[n] == '\0';
}

int stats_statistic_parse(const char *name, struct stats_statistic *out)
{
	double p;

	if (!name)
		return -1;
	if (!strcmp(name, "mean")) {
		out->is_mean = 1;
		out->p = 0;
		return 0;
	}
	if (!strcmp(name, "median"))
		name = "p50";
	if (name[0] != 'p' || !plain_decimal(name + 1))
		return -1;
	p = strtod(name + 1, NULL);
	if (p > 100)
		return -1;
	out->is_mean = 0;
	out->p = p;
	return 0;
}
