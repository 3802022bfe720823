/* util.c - see util.h */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int perturb_quiet;

static void oom(size_t n)
{
	fprintf(stderr, "perturb: fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		oom(strlen(s));
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom(n);
	return p;
}

void argv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void argv_push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

char **argv_copy(char *const *v)
{
	size_t n = 0;
	char **c;

	while (v && v[n])
		n++;
	c = xcalloc(n + 1, sizeof(*c));
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

void env_put(char ***envp, const char *key, const char *value, const char *sep)
{
	size_t n = strlen(key), i;
	char **e = *envp;

	for (i = 0; e[i]; i++)
		if (!strncmp(e[i], key, n) && e[i][n] == '=') {
			char *old = e[i];
			e[i] = sep && old[n + 1] ? xasprintf("%s=%s%s%s", key, value, sep, old + n + 1) :
			       xasprintf("%s=%s", key, value);
			free(old);
			return;
		}
	e = xrealloc(e, (i + 2) * sizeof(*e));
	e[i] = xasprintf("%s=%s", key, value);
	e[i + 1] = NULL;
	*envp = e;
}

char *xasprintf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb);
}

void grow_array(void **arr, size_t *alloc, size_t need, size_t elem)
{
	if (need <= *alloc)
		return;
	size_t n = *alloc ? *alloc : 8;
	while (n < need)
		n *= 2;
	*arr = xrealloc(*arr, n * elem);
	memset((char *)*arr + *alloc * elem, 0, (n - *alloc) * elem);
	*alloc = n;
}

/*
 * One message line on stderr: prefix, then fmt.  A message quotes what the
 * user, a file, a database or a program gave (a name, a command line, an
 * --env value, a log line): its control bytes other than newline and tab
 * (ESC, CR, BEL, C1) and bytes that are not UTF-8 are shown as \xNN, never
 * obeyed by the terminal (escape_bytes(), as every report format does).
 */
static void message(const char *prefix, const char *fmt, va_list ap)
{
	static const char *const keep[256] = { ['\n'] = "\n", ['\t'] = "\t" };
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	fputs(prefix, stderr);
	escape_bytes(stderr, sb.buf ? sb.buf : "", keep);
	fputc('\n', stderr);
	strbuf_release(&sb);
}

void printf_shown(FILE *out, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	escape_bytes(out, sb.buf ? sb.buf : "", NULL);
	strbuf_release(&sb);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message("perturb: error: ", fmt, ap);
	va_end(ap);
	return -1;
}

int why_error(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;
	if (perturb_quiet)
		return;
	va_start(ap, fmt);
	message("perturb: warning: ", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;
	if (perturb_quiet)
		return;
	va_start(ap, fmt);
	message("perturb: ", fmt, ap);
	va_end(ap);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	ALLOC_GROW(sb->buf, sb->len + (size_t)n + 1, sb->alloc);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	ALLOC_GROW(sb->buf, sb->len + len + 1, sb->alloc);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_add_shell_word(struct strbuf *sb, const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_./:=@%+,-";

	if (*s && strspn(s, plain) == strlen(s)) {
		strbuf_addstr(sb, s);
		return;
	}
	strbuf_add(sb, "'", 1);
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_add(sb, s, 1);
	}
	strbuf_add(sb, "'", 1);
}

char *path_component(const char *name)
{
	static const char keep[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_+-=[]@.";
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p = (const unsigned char *)name;
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a's offset basis */
	size_t cut = 0;

	for (; *p; p++) {
		h = (h ^ *p) * 0x100000001b3ull;	/* FNV-1a's prime */
		if (strchr(keep, *p) && !(p == (const unsigned char *)name && strchr(".-", *p)))
			strbuf_add(&sb, p, 1);
		else
			strbuf_addf(&sb, "%%%02X", *p);
		if (sb.len <= PATH_COMPONENT_MAX - 17)
			cut = sb.len;	/* never inside a %XX */
	}
	if (!sb.len)
		strbuf_addstr(&sb, "%");	/* the empty name: no name encodes to it */
	if (sb.len > PATH_COMPONENT_MAX) {
		sb.len = cut;
		strbuf_addf(&sb, "~%016llx", (unsigned long long)h);
	}
	return strbuf_detach(&sb);
}

/* The length of the valid UTF-8 sequence at p (RFC 3629: no overlong
 * form, no surrogate, at most U+10FFFF), 0 when p starts none. */
static size_t utf8_seq(const unsigned char *p)
{
	size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	unsigned lo = 0x80, hi = 0xbf;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void escape_bytes(FILE *out, const char *s, const char *const subst[256])
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		size_t n;

		if (subst && subst[*p]) {
			fputs(subst[*p], out);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\x%02x", *p);	/* ESC, BEL, CR, ...: shown, not obeyed */
		} else if (*p < 0x80) {
			fputc(*p, out);
		} else if (!(n = utf8_seq(p))) {
			fprintf(out, "\\x%02x", *p);	/* not UTF-8 */
		} else if (p[0] == 0xc2 && p[1] < 0xa0) {
			fprintf(out, "\\x%02x\\x%02x", p[0], p[1]);	/* a C1 control (CSI) */
			p++;
		} else {
			fwrite(p, 1, n, out);
			p += n - 1;
		}
	}
}

char *escape_bytes_str(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		oom(len);
	escape_bytes(f, s, NULL);
	if (fclose(f) != 0)
		oom(len);
	return buf;
}

int utf8_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = *p < 0x80 ? 1 : utf8_seq(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *p, size_t n)
{
	const unsigned char *b = p;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)b[i] << 16 | (i + 1 < n ? (unsigned)b[i + 1] << 8 : 0) |
			     (i + 2 < n ? b[i + 2] : 0);
		char q[4] = { b64[v >> 18], b64[v >> 12 & 63],
			      i + 1 < n ? b64[v >> 6 & 63] : '=', i + 2 < n ? b64[v & 63] : '=' };
		strbuf_add(&sb, q, 4);
	}
	return strbuf_detach(&sb);
}

int base64_decode(const char *s, size_t len, struct strbuf *out)
{
	unsigned v = 0;
	int nbits = 0, pad = 0;

	for (size_t i = 0; i < len; i++) {
		const char *c;
		if (s[i] && strchr(" \t\r\n", s[i]))
			continue;
		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad || !s[i] || !(c = strchr(b64, s[i])))
			return -1;	/* a character after '=', or not of the alphabet */
		v = (v << 6 | (unsigned)(c - b64)) & 0xffffff;
		nbits += 6;
		if (nbits >= 8) {
			char byte = (char)(v >> (nbits - 8) & 0xff);
			strbuf_add(out, &byte, 1);
			nbits -= 8;
		}
	}
	/* what is left over are the zero bits of the last group, padded to 4 */
	return nbits >= 6 || pad > 2 ? -1 : 0;
}

void put_lines(FILE *out, const char *text, const char *prefix,
	       void (*esc)(FILE *, const char *))
{
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);

		fputs(prefix, out);
		if (esc)
			esc(out, line);
		else
			escape_bytes(out, line, NULL);
		fputc('\n', out);
		free(line);
		p += len + (p[len] == '\n');
	}
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

char *strbuf_detach(struct strbuf *sb)
{
	char *p = sb->buf ? sb->buf : xstrdup("");
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	return p;
}

char *expand_placeholders(const char *s, const struct placeholder *table, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	while (*s) {
		const struct placeholder *p = NULL;
		for (size_t i = 0; i < n && !p; i++)
			if (!strncmp(s, table[i].name, strlen(table[i].name)))
				p = &table[i];
		if (p) {
			strbuf_addstr(&sb, p->value);
			s += strlen(p->name);
		} else {
			strbuf_add(&sb, s, 1);
			s++;
		}
	}
	return strbuf_detach(&sb);
}

/* The placeholder of table that s starts with, or NULL. */
static const struct placeholder *placeholder_at(const char *s, const struct placeholder *table,
						size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(s, table[i].name, strlen(table[i].name)))
			return &table[i];
	return NULL;
}

/* "{logdir}" -> "perturb_logdir": the shell variable that holds it. */
static void add_shell_var(struct strbuf *sb, const char *name)
{
	strbuf_addstr(sb, "perturb_");
	strbuf_add(sb, name + 1, strlen(name) - 2);
}

char *expand_placeholders_script(const char *s, const struct placeholder *table, size_t n)
{
	struct strbuf set = STRBUF_INIT, body = STRBUF_INIT;
	unsigned used = 0;
	char quote = 0;		/* 0, '\'' or '"': where s is */

	for (; *s; s++) {
		const struct placeholder *p = placeholder_at(s, table, n);
		if (p) {
			size_t i = (size_t)(p - table);
			if (i < 32 && !(used & 1u << i)) {
				used |= 1u << i;
				add_shell_var(&set, p->name);
				strbuf_addstr(&set, "=");
				strbuf_add_shell_word(&set, p->value);
				strbuf_addstr(&set, "; ");
			}
			/* a reference, quoted for where it stands */
			strbuf_addstr(&body, quote == '"' ? "${" : quote ? "'\"${" : "\"${");
			add_shell_var(&body, p->name);
			strbuf_addstr(&body, quote == '"' ? "}" : quote ? "}\"'" : "}\"");
			s += strlen(p->name) - 1;
			continue;
		}
		strbuf_add(&body, s, 1);
		if (*s == '\\' && quote != '\'' && s[1]) {
			strbuf_add(&body, ++s, 1);
		} else if (*s == '\'' || *s == '"') {
			if (!quote)
				quote = *s;
			else if (quote == *s)
				quote = 0;
		}
	}
	strbuf_addstr(&set, body.buf ? body.buf : "");
	strbuf_release(&body);
	return strbuf_detach(&set);
}

/* Does a shell run word as its script?  It follows an option cluster
 * holding c (-c, -ec, -xc) that follows a shell's name. */
static int is_script_word(char *const *words, size_t i)
{
	static const char *const shells[] = { "sh", "bash", "dash", "ash", "ksh", "mksh",
					      "zsh", "busybox", NULL };
	const char *o = i ? words[i - 1] : NULL;

	if (!o || o[0] != '-' || !strchr(o, 'c') || strspn(o + 1, "abcdefghijklmnopqrstuvwxyz"
							   "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(o + 1))
		return 0;
	for (size_t k = 0; k + 1 < i; k++) {
		const char *base = strrchr(words[k], '/');
		base = base ? base + 1 : words[k];
		for (size_t j = 0; shells[j]; j++)
			if (!strcmp(base, shells[j]))
				return 1;
	}
	return 0;
}

char **expand_placeholders_argv(char *const *words, size_t nw, const struct placeholder *table,
				size_t n)
{
	char **v = xcalloc(nw + 1, sizeof(char *));

	for (size_t i = 0; i < nw; i++)
		v[i] = is_script_word(words, i) ? expand_placeholders_script(words[i], table, n) :
		       expand_placeholders(words[i], table, n);
	return v;
}

static pid_t cached_pid;	/* 0: not known (at start, in a fork's child) */

static void forget_pid(void)
{
	__atomic_store_n(&cached_pid, 0, __ATOMIC_RELAXED);
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forget_pid);
}

pid_t self_pid(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pid_t pid = __atomic_load_n(&cached_pid, __ATOMIC_RELAXED);

	if (pid)
		return pid;
	pthread_once(&once, watch_forks);
	pid = getpid();
	__atomic_store_n(&cached_pid, pid, __ATOMIC_RELAXED);
	return pid;
}

double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t now_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void now_iso8601(char *buf, size_t len)
{
	/* each run's start: the text of the second, made once a second (a
	 * run of /bin/true spent 2 us in gmtime_r and strftime) */
	static _Thread_local time_t last = (time_t)-1;
	static _Thread_local char text[32];
	time_t t = time(NULL);

	if (t != last) {
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
		last = t;
	}
	snprintf(buf, len, "%s", text);
}

int parse_double(const char *s, double *out)
{
	char *end;
	if (!s || !*s || *s == ' ' || *s == '\t')
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	if (!s || !*s || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_duration(const char *s, double *seconds)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 },
		{ "s", 1.0 }, { "m", 60.0 }, { "h", 3600.0 },
	};
	char *end;
	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (!*end) {
		*seconds = v;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].suffix)) {
			*seconds = v * units[i].scale;
			return 0;
		}
	}
	return -1;
}

int parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (*s) {
		switch (*s) {
		case 'K': case 'k': shift = 10; break;
		case 'M': case 'm': shift = 20; break;
		case 'G': case 'g': shift = 30; break;
		case 'T': case 't': shift = 40; break;
		default: return -1;
		}
		s++;
		if (!strcmp(s, "iB") || !strcmp(s, "ib") || !strcmp(s, "B") || !strcmp(s, "b"))
			s += strlen(s);
		if (*s)
			return -1;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

int parse_percent_why(const char *s, double *fraction, char *why, size_t len)
{
	char *end;
	double v;

	if (!s || !*s || *s == ' ')
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		goto bad;
	if (!strcmp(end, "%")) {
		*fraction = v / 100.0;
		return 0;
	}
	if (*end)
		goto bad;
	if (fabs(v) >= 1) {
		if (why)
			snprintf(why, len, "'%s' is ambiguous (%s %% or %g %%?): write %s%% for "
				 "%s %%, or the fraction %g; a bare number is a fraction and must be "
				 "below 1", s, s, v * 100, s, s, v / 100);
		return PERCENT_AMBIGUOUS;
	}
	*fraction = v;
	return 0;
bad:
	if (why)
		snprintf(why, len, "'%s' is not a percentage (write 5%% or the fraction 0.05)",
			 s ? s : "");
	return -1;
}

int parse_percent(const char *s, double *fraction)
{
	return parse_percent_why(s, fraction, NULL, 0);
}

char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char tmp[65536];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			strbuf_release(&sb);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		strbuf_add(&sb, tmp, (size_t)n);
	}
	close(fd);
	if (len)
		*len = sb.len;
	return strbuf_detach(&sb);
}

/* "16 MiB", "512 KiB", "100 bytes" */
static void size_words(size_t n, char *buf, size_t len)
{
	if (n >= (1u << 20) && !(n & ((1u << 20) - 1)))
		snprintf(buf, len, "%zu MiB", n >> 20);
	else if (n >= 1024 && !(n & 1023))
		snprintf(buf, len, "%zu KiB", n >> 10);
	else
		snprintf(buf, len, "%zu bytes", n);
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

char *read_user_file(const char *path, size_t max, size_t *len, char *why, size_t whylen)
{
	char size[32], *buf = NULL;
	struct stat st;
	size_t got = 0, alloc;
	int fd, e = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		if (why)
			snprintf(why, whylen, "%s", strerror(e));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		if (why)
			snprintf(why, whylen, "%s", strerror(e));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		if (why && e == EISDIR)
			snprintf(why, whylen, "%s", strerror(e));
		else if (why)
			snprintf(why, whylen, "not a regular file (%s)", file_kind(st.st_mode));
		goto out;
	}
	alloc = st.st_size > 0 && (uint64_t)st.st_size <= max ? (size_t)st.st_size + 1 : 4096;
	buf = xmalloc(alloc + 1);
	for (;;) {
		ssize_t n;
		if (got == alloc) {
			alloc = alloc * 2 > max + 1 ? max + 1 : alloc * 2;
			buf = xrealloc(buf, alloc + 1);
		}
		n = read(fd, buf + got, alloc - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			if (why)
				snprintf(why, whylen, "%s", strerror(e));
			goto out;
		}
		if (!n)
			break;
		got += (size_t)n;
		if (got > max) {
			e = EFBIG;
			size_words(max, size, sizeof(size));
			if (why)
				snprintf(why, whylen, "larger than %s", size);
			goto out;
		}
	}
	buf[got] = '\0';
	if (len)
		*len = got;
out:
	if (fd >= 0)
		close(fd);
	if (e) {
		free(buf);
		errno = e;
		return NULL;
	}
	return buf;
}

char *read_line_file(const char *path)
{
	size_t len;
	char *s = read_file(path, &len);
	if (!s)
		return NULL;
	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		s[--len] = '\0';
	return s;
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	int ret = 0;
	for (char *q = p + 1; ; q++) {
		if (*q == '/' || !*q) {
			char c = *q;
			*q = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				ret = -errno;
				break;
			}
			*q = c;
			if (!c)
				break;
		}
	}
	free(p);
	return ret;
}

char *dir_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

/* util.h */
char *path_follow(const char *path, struct stat *st)
{
	char *p = xstrdup(path);

	for (int hop = 0; hop < 40; hop++) {
		char link[PATH_MAX];
		ssize_t n;

		if (lstat(p, st) < 0) {
			if (errno != ENOENT)
				goto fail;
			memset(st, 0, sizeof(*st));
			return p;
		}
		if (!S_ISLNK(st->st_mode))
			return p;
		if ((n = readlink(p, link, sizeof(link) - 1)) < 0)
			goto fail;
		link[n] = '\0';
		char *next;
		if (link[0] == '/') {
			next = xstrdup(link);
		} else {
			char *dir = dir_name(p);
			next = xasprintf("%s/%s", dir, link);
			free(dir);
		}
		free(p);
		p = next;
	}
	errno = ELOOP;
fail:
	free(p);
	return NULL;
}

/* util.h */
char *path_canonical(const char *path)
{
	struct stat st;
	char *end = path_follow(path, &st), *dir, *real, *base, *ret;

	if (!end)
		return xstrdup(path);
	dir = dir_name(end);
	real = realpath(dir, NULL);
	base = strrchr(end, '/') ? strrchr(end, '/') + 1 : end;
	ret = real ? xasprintf("%s/%s", strcmp(real, "/") ? real : "", base) : xstrdup(end);
	free(real);
	free(dir);
	free(end);
	return ret;
}

int program_exists(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char *copy = xstrdup(path), *save = NULL;
	int found = 0;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *full = xasprintf("%s/%s", *d ? d : ".", prog);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
			found = 1;
		free(full);
	}
	free(copy);
	return found;
}

int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

char *last_lines(const char *s, int n)
{
	size_t len = strlen(s);
	const char *p;

	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	for (p = s + len; p > s; p--)
		if (p[-1] == '\n' && --n == 0)
			break;
	return xstrndup(p, (size_t)(s + len - p));
}

char *said_line(const char *text, const char *marker, const char *unless)
{
	char *copy = xstrdup(text ? text : ""), *line, *save = NULL, *found = NULL, *last = NULL;
	size_t n;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *e = strstr(line, marker);
		if (e && (!unless || !strstr(e, unless)))
			found = e + strlen(marker);
		else if (!e && line[strspn(line, " \t~^")])
			last = line;
	}
	found = found ? found : last;
	if (found) {
		found = xstrdup(found + strspn(found, " \t"));
		for (n = strlen(found); n && strchr(" \t\r.", found[n - 1]); n--)
			found[n - 1] = '\0';
		if (!*found) {
			free(found);
			found = NULL;
		}
	}
	free(copy);
	return found;
}

void print_file_tail(const char *path, int n)
{
	char *data = read_file(path, NULL), *tail;

	if (!data)
		return;
	tail = last_lines(data, n);
	put_lines(stderr, tail, "", NULL);
	free(tail);
	free(data);
}

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	size_t d = row[lb];
	free(row);
	return d;
}

const char *did_you_mean(const char *s, const char *const *words)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, len = strlen(s);

	for (size_t i = 0; words[i]; i++) {
		size_t d = edit_distance(s, words[i]);
		if (d < best_d) {
			best_d = d;
			best = words[i];
		}
	}
	return best && (best_d <= 2 || best_d <= len / 3) ? best : NULL;
}

const char *perturb_cache_dir(void)
{
	static char *dir;
	const char *e;

	if (dir)
		return dir;
	if ((e = getenv("PERTURB_CACHE")) && *e)
		dir = xstrdup(e);
	else if ((e = getenv("XDG_CACHE_HOME")) && *e)
		dir = xasprintf("%s/perturb", e);
	else
		dir = xasprintf("%s/.cache/perturb", getenv("HOME") ? getenv("HOME") : "/tmp");
	return dir;
}

int perturb_cache_lock(const char *path, const char *what)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644), r;

	if (fd < 0)
		return error("cannot open the lock '%s': %s", path, strerror(errno));
	r = flock(fd, LOCK_EX | LOCK_NB);
	if (r < 0 && errno == EWOULDBLOCK) {
		note("another perturb is %s; waiting for it (%s)", what, path);
		while ((r = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
			;
	}
	if (r < 0) {
		error("cannot lock '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

const char *perturb_self_exe(void)
{
	static char path[PATH_MAX];
	if (!path[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (n < 0)
			strcpy(path, "perturb");
		else
			path[n] = '\0';
	}
	return path;
}
