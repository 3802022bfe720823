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

/* The length of the UTF-8 sequence that lead byte c announces (1 for a
 * byte that cannot start one). */
static size_t utf8_len(unsigned char c)
{
	return c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 1;
}

json_t *json_text(const char *s)
{
	json_t *v;

	if (!s)
		return json_null();
	v = json_string(s);
	if (!v) {
		struct strbuf sb = STRBUF_INIT;
		for (const char *p = s; *p;) {
			size_t k = utf8_len((unsigned char)*p);
			json_t *ch = strnlen(p, k) == k ? json_stringn(p, k) : NULL;
			if (ch)
				strbuf_add(&sb, p, k);
			else
				strbuf_addstr(&sb, "\xef\xbf\xbd");	/* U+FFFD */
			json_decref(ch);
			p += ch ? k : 1;
		}
		v = json_string(sb.buf ? sb.buf : "");
		strbuf_release(&sb);
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
