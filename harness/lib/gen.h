/*
 * gen.h - deterministic input data for workloads (`perturb gen`).
 *
 * A generator turns (kind, seed) into an endless byte stream.  The stream
 * is a pure function of the kind and the seed: the same on every machine
 * (no floating point, no rand(), bytes assembled with shifts so that the
 * host's byte order never shows), and independent of how it is read, so
 * that the first N bytes of a stream are the same whatever the read sizes
 * and whatever total size is asked for (a 1M file is a prefix of the 64M
 * file with the same seed).
 *
 * Kinds:
 *   text    English-like prose: words from a built-in vocabulary drawn with a
 *           Zipf-Mandelbrot rank distribution, sentences with punctuation,
 *           lines of 60-80 characters, paragraphs.  Printable ASCII and '\n'
 *           only.  Compresses like real prose (bzip2 about 3-4x).
 *   binary  a mix of segments: random bytes, runs of one byte, repeated
 *           short patterns, little-endian small-integer arrays and fixed-size
 *           records.  Compresses about 1.5-2.5x.
 *
 * Changing the output of an existing kind for a given seed breaks stored
 * experiments' inputs: add a new kind instead (tests/test_gen.c pins the
 * SHA-256 of each kind).
 */
#ifndef PERTURB_GEN_H
#define PERTURB_GEN_H

#include <stddef.h>
#include <stdint.h>

struct gen;

/* "text, binary": the valid kinds, for messages and usage. */
const char *gen_kinds(void);
/* 1 when name is a valid kind, 0 otherwise (nothing printed). */
int gen_kind_valid(const char *name);

/*
 * A new generator for kind, seeded with seed (any value, 0 included).
 * Returns NULL after error() ("unknown kind 'x' (valid kinds: text,
 * binary)") when kind is not valid.  Free with gen_free().
 */
struct gen *gen_new(const char *kind, uint64_t seed);
/* The next len bytes of the stream into buf. */
void gen_read(struct gen *g, void *buf, size_t len);
void gen_free(struct gen *g);

/*
 * Write exactly size bytes of the (kind, seed) stream to fd, in 64 KiB
 * writes (short writes and EINTR are retried).  Returns 0, -EINVAL after
 * error() for an unknown kind, or -errno of a failed write (nothing printed:
 * the caller knows the file's name).
 */
int gen_write(const char *kind, uint64_t size, uint64_t seed, int fd);

#endif
