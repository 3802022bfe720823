/* json.c - see json.h */
#include "json.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_oom(void)
{
	fprintf(stderr, "perturb: fatal: out of memory building JSON\n");
	abort();
}

json_t *json_text(const char *s)
{
	json_t *v;

	if (!s)
		return json_null();
	v = json_string(s);
	if (!v) {
		char *copy = xstrdup(s);
		for (unsigned char *p = (unsigned char *)copy; *p; p++)
			if (*p >= 0x80)
				*p = '?';
		v = json_string(copy);
		free(copy);
	}
	if (!v)
		json_oom();
	return v;
}

char *json_line(json_t *obj)
{
	char *s = json_dumps(obj, JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	json_decref(obj);
	if (!s)
		json_oom();
	return s;
}
