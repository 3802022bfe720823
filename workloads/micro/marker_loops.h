/*
 * marker_loops.h - the two loops of the marker micros (markers.c), one
 * pair per flavour of marker site: MARKER_LOOPS(sfx, FL) defines
 * empty_SFX() and memcpy_SFX(), whose iterations each hold the site
 * MARK_FL(event, i) (event: marker_empty_loop or marker_memcpy_4096, a
 * token).  Shared by perturb-micro (markers.c) and the lttng-ust flavour's
 * library (ust/ust.c), so that every flavour runs the same loop.
 */
#ifndef PERTURB_MARKER_LOOPS_H
#define PERTURB_MARKER_LOOPS_H

#include <string.h>
#include "micro.h"

#define EMPTY_LOOPS 1024	/* iterations per op() */
#define MEMCPY_LOOPS 16

static char src[4096] __attribute__((aligned(64)));
static char dst[4096] __attribute__((aligned(64)));

#define MARKER_LOOPS(sfx, FL)						\
static __attribute__((noinline)) void empty_##sfx(void)		\
{									\
	for (long i = 0; i < EMPTY_LOOPS; i++) {			\
		MARK_##FL(marker_empty_loop, i);			\
		__asm__ __volatile__("" : : : "memory");		\
	}								\
}									\
static __attribute__((noinline)) void memcpy_##sfx(void)		\
{									\
	for (long i = 0; i < MEMCPY_LOOPS; i++) {			\
		MARK_##FL(marker_memcpy_4096, i);			\
		memcpy(dst, src, sizeof(dst));				\
		micro_consume(dst);					\
	}								\
}

/* The source of the copies: written, so that it is not the zero page. */
static inline void marker_loops_init(void)
{
	memset(src, 0x5a, sizeof(src));
}

/* The lttng-ust flavour's loops, exported by perturb-micro-ust.so as the
 * object perturb_micro_ust (ust/ust.c) and called through a pointer, as
 * every flavour's are (markers.c). */
struct perturb_micro_ust {
	void (*init)(void);
	void (*empty)(void);
	void (*memcpy)(void);
};

#endif
