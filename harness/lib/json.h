/*
 * json.h - what perturb adds to Jansson (jansson.h) for its JSON output.
 *
 * Jansson writes the JSON (escaping, RFC 8259) and refuses a string that is
 * not UTF-8; json_text() is the one place that decides what such a string
 * becomes.
 */
#ifndef PERTURB_JSON_H
#define PERTURB_JSON_H

#include <jansson.h>

/*
 * A new JSON value for s: null when s is NULL, else the string s when it is
 * valid UTF-8, else s with each byte that does not start a valid UTF-8
 * sequence, and each C1 control (U+0080..U+009F: U+009B is a terminal's
 * CSI), replaced by U+FFFD, the validity of each sequence decided by
 * Jansson (a kernel command line, a host name or a foreign database's text
 * in another encoding still gives valid JSON).
 * Never NULL (aborts on out-of-memory, as xmalloc).
 */
json_t *json_text(const char *s);

/*
 * obj (consumed) as JSON text on one line, keys in insertion order,
 * ": " and ", " between them: malloc'd, never NULL.
 */
char *json_line(json_t *obj);

#endif
