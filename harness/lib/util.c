/* util.c - see util.h */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* One message line on stderr: prefix, then fmt. */
static void message(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
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

int parse_percent(const char *s, double *fraction)
{
	char *end;
	if (!s || !*s || *s == ' ')
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	if (!strcmp(end, "%")) {
		*fraction = v / 100.0;
		return 0;
	}
	if (*end)
		return -1;
	*fraction = v;
	return 0;
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

/*
 * SHA-256 as specified in FIPS 180-4 (Secure Hash Standard), section 6.2.
 * Used to recognise an experiment text (resume, deduplication), not for
 * security.
 */
static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void sha256_hex(const void *data, size_t len, char out[65])
{
	uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	const unsigned char *p = data;
	size_t left = len;
	while (left >= 64) {
		sha_block(h, p);
		p += 64;
		left -= 64;
	}
	unsigned char tail[128] = { 0 };
	memcpy(tail, p, left);
	tail[left] = 0x80;
	size_t tl = left + 1 + 8 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha_block(h, tail);
	if (tl == 128)
		sha_block(h, tail + 64);
	for (int i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", h[i]);
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
