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

/* Is p a C1 control? */
static int has_c1_at(const char *p)
{
	return (unsigned char)p[0] == 0xc2 && (unsigned char)p[1] >= 0x80 &&
	       (unsigned char)p[1] < 0xa0;
}

/* Does s hold a C1 control (U+0080..U+009F, UTF-8 C2 80..C2 9F)? */
static int has_c1(const char *s)
{
	for (const char *p = s; (p = strchr(p, '\xc2')); p++)
		if (has_c1_at(p))
			return 1;
	return 0;
}

json_t *json_text(const char *s)
{
	json_t *v;

	if (!s)
		return json_null();
	v = has_c1(s) ? NULL : json_string(s);
	if (!v) {
		struct strbuf sb = STRBUF_INIT;
		for (const char *p = s; *p;) {
			size_t k = utf8_len((unsigned char)*p);
			json_t *ch = strnlen(p, k) == k && !has_c1_at(p) ? json_stringn(p, k) : NULL;
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
