/*
 * gen.c - deterministic input data for workloads; see gen.h.
 *
 * Everything here is integer arithmetic on explicitly sized types, and
 * multi-byte values are stored one byte at a time with shifts, so the
 * stream for a (kind, seed) is the same on every machine and compiler.
 */
#include "gen.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The random source: xoshiro256** 1.0, seeded through splitmix64, both from
 * D. Blackman and S. Vigna, "Scrambled Linear Pseudorandom Number
 * Generators", ACM Trans. Math. Softw. 47(4), 2021 (reference code at
 * https://prng.di.unimi.it/).  Written out here, not rand(): the stream must
 * not depend on the C library.
 */
struct rng {
	uint64_t s[4];
};

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);	/* never all zero */
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/*
 * Uniform-ish in [0, n) by multiply-shift of the high 32 bits (D. Lemire,
 * "Fast Random Integer Generation in an Interval", ACM TOMACS 29(1), 2019,
 * without the rejection step: the bias, below n / 2^32, is irrelevant here
 * and skipping it keeps one draw per call).
 */
static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

/*
 * The text vocabulary, most frequent first: the rank of a word in this list
 * is its rank in the Zipf distribution below.  (A list of common English
 * words; order approximates frequency in general prose.)
 */
static const char *const vocabulary[] = {
	"the", "of", "and", "to", "a", "in", "is", "that", "it", "was",
	"for", "on", "are", "as", "with", "his", "they", "be", "at", "one",
	"have", "this", "from", "or", "had", "by", "not", "word", "but",
	"what", "some", "we", "can", "out", "other", "were", "all", "there",
	"when", "up", "use", "your", "how", "said", "an", "each", "she",
	"which", "do", "their", "time", "if", "will", "way", "about", "many",
	"then", "them", "write", "would", "like", "so", "these", "her",
	"long", "make", "thing", "see", "him", "two", "has", "look", "more",
	"day", "could", "go", "come", "did", "number", "sound", "no", "most",
	"people", "my", "over", "know", "water", "than", "call", "first",
	"who", "may", "down", "side", "been", "now", "find", "any", "new",
	"work", "part", "take", "get", "place", "made", "live", "where",
	"after", "back", "little", "only", "round", "man", "year", "came",
	"show", "every", "good", "me", "give", "our", "under", "name",
	"very", "through", "just", "form", "sentence", "great", "think",
	"say", "help", "low", "line", "differ", "turn", "cause", "much",
	"mean", "before", "move", "right", "boy", "old", "too", "same",
	"tell", "does", "set", "three", "want", "air", "well", "also",
	"play", "small", "end", "put", "home", "read", "hand", "port",
	"large", "spell", "add", "even", "land", "here", "must", "big",
	"high", "such", "follow", "act", "why", "ask", "men", "change",
	"went", "light", "kind", "off", "need", "house", "picture", "try",
	"us", "again", "animal", "point", "mother", "world", "near", "build",
	"self", "earth", "father", "head", "stand", "own", "page", "should",
	"country", "found", "answer", "school", "grow", "study", "still",
	"learn", "plant", "cover", "food", "sun", "four", "between", "state",
	"keep", "eye", "never", "last", "let", "thought", "city", "tree",
	"cross", "farm", "hard", "start", "might", "story", "saw", "far",
	"sea", "draw", "left", "late", "run", "while", "press", "close",
	"night", "real", "life", "few", "north", "open", "seem", "together",
	"next", "white", "children", "begin", "got", "walk", "example",
	"ease", "paper", "group", "always", "music", "those", "both", "mark",
	"often", "letter", "until", "mile", "river", "car", "feet", "care",
	"second", "book", "carry", "took", "science", "eat", "room",
	"friend", "began", "idea", "fish", "mountain", "stop", "once",
	"base", "hear", "horse", "cut", "sure", "watch", "color", "face",
	"wood", "main", "enough", "plain", "girl", "usual", "young", "ready",
	"above", "ever", "red", "list", "though", "feel", "talk", "bird",
	"soon", "body", "dog", "family", "direct", "pose", "leave", "song",
	"measure", "door", "product", "black", "short", "numeral", "class",
	"wind", "question", "happen", "complete", "ship", "area", "half",
	"rock", "order", "fire", "south", "problem", "piece", "told", "knew",
	"pass", "since", "top", "whole", "king", "space", "heard", "best",
	"hour", "better", "true", "during", "hundred", "five", "remember",
	"step", "early", "hold", "west", "ground", "interest", "reach",
	"fast", "verb", "sing", "listen", "six", "table", "travel", "less",
	"morning", "ten", "simple", "several", "vowel", "toward", "war",
	"lay", "against", "pattern", "slow", "center", "love", "person",
	"money", "serve", "appear", "road", "map", "rain", "rule", "govern",
	"pull", "cold", "notice", "voice", "unit", "power", "town", "fine",
	"certain", "fly", "fall", "lead", "cry", "dark", "machine", "note",
	"wait", "plan", "figure", "star", "box", "noun", "field", "rest",
	"correct", "able", "pound", "done", "beauty", "drive", "stood",
	"contain", "front", "teach", "week", "final", "gave", "green",
	"quick", "develop", "ocean", "warm", "free", "minute", "strong",
	"special", "mind", "behind", "clear", "tail", "produce", "fact",
	"street", "inch", "multiply", "nothing", "course", "stay", "wheel",
	"full", "force", "blue", "object", "decide", "surface", "deep",
	"moon", "island", "foot", "system", "busy", "test", "record", "boat",
	"common", "gold", "possible", "plane", "stead", "dry", "wonder",
	"laugh", "thousand", "ago", "ran", "check", "game", "shape",
	"equate", "miss", "brought", "heat", "snow", "tire", "bring", "yes",
	"distant", "fill", "east", "paint", "language", "among",
};

#define NWORDS ARRAY_SIZE(vocabulary)
#define LONGEST_WORD 16

/*
 * Words are drawn by rank k = 1..NWORDS with the Zipf-Mandelbrot law
 * p(k) ~ 1 / (k + q)^s, s = 1, q = 2.7 (G. K. Zipf, "Human Behavior and the
 * Principle of Least Effort", 1949; B. Mandelbrot, "An informational theory
 * of the statistical structure of language", 1953, whose fit to English has
 * q close to 2.7).  The weights are integers, floor(2^32 * 10 / (10k + 27)),
 * and the law is tabulated into ZIPF_SLOTS equally likely slots (slot i
 * holds the rank whose cumulative weight covers the slot's midpoint), so a
 * draw is one table look-up and no floating point is involved anywhere.
 */
#define ZIPF_BITS 16
#define ZIPF_SLOTS (1u << ZIPF_BITS)

/* Generation appends whole units (a sentence, a binary segment) to the
 * buffer until it holds at least GEN_CHUNK bytes; a unit is at most
 * MAX_UNIT bytes. */
#define GEN_CHUNK (64 * 1024)
#define MAX_UNIT (8 * 1024)

enum gen_kind {
	GEN_TEXT,
	GEN_BINARY,
};

static const char *const kind_names[] = {
	[GEN_TEXT] = "text",
	[GEN_BINARY] = "binary",
};

struct gen {
	enum gen_kind kind;
	struct rng rng;
	unsigned char *buf;	/* GEN_CHUNK + MAX_UNIT bytes */
	size_t len, pos;	/* buf[pos..len) not yet read */

	/* text */
	uint16_t *zipf;		/* ZIPF_SLOTS ranks (0-based) */
	unsigned char words[NWORDS][LONGEST_WORD];	/* zero-padded */
	uint8_t wlen[NWORDS];
	unsigned line_len, line_width;
	unsigned sentences_left;	/* in the current paragraph */
};

const char *gen_kinds(void)
{
	return "text, binary";
}

static int kind_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(kind_names); i++)
		if (name && !strcmp(name, kind_names[i]))
			return (int)i;
	return -1;
}

int gen_kind_valid(const char *name)
{
	return kind_lookup(name) >= 0;
}

/* ---- text ---- */

static void zipf_build(uint16_t *table)
{
	uint64_t cum[NWORDS], total = 0;

	for (size_t k = 0; k < NWORDS; k++) {
		total += (UINT64_C(10) << 32) / (10 * (k + 1) + 27);
		cum[k] = total;
	}
	size_t k = 0;
	for (uint64_t i = 0; i < ZIPF_SLOTS; i++) {
		/* midpoint of slot i, in weight units: (i + 1/2) * total / SLOTS */
		uint64_t target = ((2 * i + 1) * total) >> (ZIPF_BITS + 1);
		while (k < NWORDS - 1 && cum[k] <= target)
			k++;
		table[i] = (uint16_t)k;
	}
}

static void new_line_width(struct gen *g)
{
	g->line_width = 60 + rng_below(&g->rng, 21);	/* 60..80 */
	g->line_len = 0;
}

/* The separator before a word of len bytes, then the word's place. */
static unsigned char *text_sep(struct gen *g, unsigned char *p, unsigned len)
{
	if (g->line_len) {
		if (g->line_len + 1 + len > g->line_width) {
			*p++ = '\n';
			new_line_width(g);
		} else {
			*p++ = ' ';
			g->line_len++;
		}
	}
	g->line_len += len;
	return p;
}

/* Made-up proper names from syllables, for the rarer words of real prose. */
static const char *const syllables[] = {
	"ka", "ro", "mi", "tan", "el", "dor", "vi", "sa", "len", "bur",
	"gh", "ith", "on", "ma", "rek", "al", "stru", "po", "ne", "wy",
	"cha", "der", "fo", "lin", "qu", "ash", "ter", "ba", "zo", "ul",
	"pe", "ris",
};

/* A number or a made-up proper name into word; returns its length. */
static unsigned rare_word(unsigned rare, uint32_t v, unsigned char *word)
{
	unsigned len = 0;

	if (rare < 5) {
		/* a year-like 4-digit number or a small count */
		unsigned n = rare < 2 ? 1600 + v % 430 : 2 + v % 98;
		unsigned char digits[8];
		unsigned nd = 0;
		do {
			digits[nd++] = (unsigned char)('0' + n % 10);
			n /= 10;
		} while (n);
		while (nd)
			word[len++] = digits[--nd];
	} else {
		/* a name of 2-4 syllables */
		unsigned ns = 2 + v % 3;
		v /= 3;
		for (unsigned s = 0; s < ns; s++) {
			const char *syl = syllables[v & 31];
			v >>= 5;
			while (*syl)
				word[len++] = (unsigned char)*syl++;
		}
		word[0] -= 'a' - 'A';
	}
	return len;
}

/*
 * One sentence, with the line and paragraph breaks that precede or end it.
 * Per word, one 64-bit draw r is split into fields: bits 48-63 the Zipf
 * slot, 40-47 the comma test, 32-39 the rare-token test (about 2% numbers,
 * 3.5% made-up names), 0-31 the rare token's content.
 */
static void text_unit(struct gen *g)
{
	unsigned char *p = g->buf + g->len;
	unsigned nwords = 3 + rng_below(&g->rng, 10) + rng_below(&g->rng, 12);
	unsigned end = (unsigned)(rng_next(&g->rng) >> 56);

	for (unsigned w = 0; w < nwords; w++) {
		uint64_t r = rng_next(&g->rng);
		unsigned rare = (unsigned)(r >> 32) & 0xff;
		unsigned char rw[LONGEST_WORD] = { 0 };
		const unsigned char *word;
		unsigned len;

		if (rare < 14) {
			len = rare_word(rare, (uint32_t)r, rw);
			word = rw;
		} else {
			unsigned k = g->zipf[r >> 48];
			word = g->words[k];
			len = g->wlen[k];
		}

		int comma = w + 1 < nwords && w > 0 && ((r >> 40) & 0xff) < 20;
		int last = w + 1 == nwords;
		p = text_sep(g, p, len + (comma || last));
		/* whole padded slots: buf has MAX_UNIT bytes of slack */
		memcpy(p, word, LONGEST_WORD);
		if (!w && *p >= 'a' && *p <= 'z')
			*p -= 'a' - 'A';
		p += len;
		if (comma)
			*p++ = ',';
		else if (last)
			*p++ = end < 224 ? '.' : end < 244 ? '?' : '!';
	}

	if (!--g->sentences_left) {
		*p++ = '\n';
		*p++ = '\n';
		new_line_width(g);
		g->sentences_left = 2 + rng_below(&g->rng, 7);
	}
	g->len = (size_t)(p - g->buf);
}

/* ---- binary ---- */

static unsigned char *put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
	return p + 4;
}

static unsigned char *put_random(struct rng *rng, unsigned char *p, size_t n)
{
	while (n >= 8) {
		uint64_t x = rng_next(rng);
		for (int b = 0; b < 8; b++)
			*p++ = (unsigned char)(x >> (8 * b));
		n -= 8;
	}
	if (n) {
		uint64_t x = rng_next(rng);
		while (n--) {
			*p++ = (unsigned char)x;
			x >>= 8;
		}
	}
	return p;
}

/*
 * One segment, its type drawn from a fixed mix (weights out of 256):
 *   64  random bytes, 64-1024 of them (incompressible);
 *   36  a run of one byte (mostly 0x00), 8-256 bytes;
 *   44  a random pattern of 2-16 bytes repeated over 32-512 bytes;
 *   64  16-256 little-endian 32-bit integers, small (below 16, 256, 4096 or
 *       65536) or a counter rising by small steps;
 *   48  8-64 fixed-size records of 16 or 32 bytes (a constant tag, a
 *       sequence number, 4 varying bytes, zero padding), as in table-like
 *       file formats.
 * The mix gives an order-0 entropy near 6.5 bits/byte and a bzip2 -9 ratio
 * near 1.7 (xz -6: 2.2).
 */
static void binary_unit(struct gen *g)
{
	struct rng *rng = &g->rng;
	unsigned char *p = g->buf + g->len;
	unsigned type = (unsigned)(rng_next(rng) >> 56);

	if (type < 64) {
		p = put_random(rng, p, 64 + rng_below(rng, 961));
	} else if (type < 100) {
		unsigned sel = rng_below(rng, 8);
		unsigned char c = sel < 4 ? 0x00 : sel < 5 ? 0xff :
			(unsigned char)rng_below(rng, 256);
		size_t n = 8 + rng_below(rng, 249);
		memset(p, c, n);
		p += n;
	} else if (type < 144) {
		unsigned char pat[16];
		size_t plen = 2 + rng_below(rng, 15);
		size_t n = 32 + rng_below(rng, 481);
		put_random(rng, pat, plen);
		for (size_t i = 0; i < n; i++)
			*p++ = pat[i % plen];
	} else if (type < 208) {
		size_t n = 16 + rng_below(rng, 241);
		if (rng_below(rng, 2)) {
			static const uint32_t range[] = { 16, 256, 4096, 65536 };
			uint32_t max = range[rng_below(rng, 4)];
			for (size_t i = 0; i < n; i++)
				p = put_le32(p, rng_below(rng, max));
		} else {
			uint32_t v = (uint32_t)rng_next(rng);
			uint32_t step = 1 + rng_below(rng, 64);
			for (size_t i = 0; i < n; i++) {
				p = put_le32(p, v);
				v += rng_below(rng, step);
			}
		}
	} else {
		size_t n = 8 + rng_below(rng, 57);
		size_t size = 16u << rng_below(rng, 2);		/* 16 or 32 */
		uint32_t tag = (uint32_t)rng_next(rng);
		uint32_t seq = rng_below(rng, 100000);
		for (size_t i = 0; i < n; i++) {
			unsigned char *rec = p;
			p = put_le32(p, tag);
			p = put_le32(p, seq++);
			p = put_random(rng, p, 4);
			memset(p, 0, size - 12);
			p = rec + size;
		}
	}
	g->len = (size_t)(p - g->buf);
}

/* ---- stream ---- */

struct gen *gen_new(const char *kind, uint64_t seed)
{
	int k = kind_lookup(kind);
	if (k < 0) {
		error("unknown kind '%s' (valid kinds: %s)", kind ? kind : "", gen_kinds());
		return NULL;
	}

	struct gen *g = xcalloc(1, sizeof(*g));
	g->kind = (enum gen_kind)k;
	g->buf = xmalloc(GEN_CHUNK + MAX_UNIT);
	/* different kinds draw from unrelated streams for the same seed */
	rng_seed(&g->rng, seed ^ (UINT64_C(0x6a09e667f3bcc909) * (uint64_t)(k + 1)));
	if (g->kind == GEN_TEXT) {
		g->zipf = xmalloc(ZIPF_SLOTS * sizeof(*g->zipf));
		zipf_build(g->zipf);
		for (size_t i = 0; i < NWORDS; i++) {
			size_t len = strlen(vocabulary[i]);
			if (len > LONGEST_WORD)	/* a vocabulary edit gone wrong */
				len = LONGEST_WORD;
			memcpy(g->words[i], vocabulary[i], len);
			g->wlen[i] = (uint8_t)len;
		}
		new_line_width(g);
		g->sentences_left = 2 + rng_below(&g->rng, 7);
	}
	return g;
}

static void refill(struct gen *g)
{
	memmove(g->buf, g->buf + g->pos, g->len - g->pos);
	g->len -= g->pos;
	g->pos = 0;
	while (g->len < GEN_CHUNK) {
		if (g->kind == GEN_TEXT)
			text_unit(g);
		else
			binary_unit(g);
	}
}

void gen_read(struct gen *g, void *buf, size_t len)
{
	unsigned char *out = buf;

	while (len) {
		if (g->pos == g->len)
			refill(g);
		size_t n = g->len - g->pos;
		if (n > len)
			n = len;
		memcpy(out, g->buf + g->pos, n);
		g->pos += n;
		out += n;
		len -= n;
	}
}

void gen_free(struct gen *g)
{
	if (!g)
		return;
	free(g->zipf);
	free(g->buf);
	free(g);
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int gen_write(const char *kind, uint64_t size, uint64_t seed, int fd)
{
	struct gen *g = gen_new(kind, seed);
	int ret = 0;

	if (!g)
		return -EINVAL;
	while (size) {
		size_t n = size < GEN_CHUNK ? (size_t)size : GEN_CHUNK;
		/* write straight from the generator's buffer: no copy */
		if (g->pos == g->len)
			refill(g);
		if (n > g->len - g->pos)
			n = g->len - g->pos;
		ret = write_all(fd, g->buf + g->pos, n);
		if (ret)
			goto out;
		g->pos += n;
		size -= n;
	}
out:
	gen_free(g);
	return ret;
}
