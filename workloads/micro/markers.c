/*
 * markers.c - marker-empty-loop and marker-memcpy-4096: the two loops of
 * the 2006 Linux Kernel Markers measurements, each iteration holding one
 * marker site (instrumentation/markers.h).
 *
 * Each loop is compiled once per flavour (MARKER_LOOPS below); the
 * environment picks one when the micro is set up:
 *   PERTURB_MARKER=none|nop|jump-generic|jump-optimized|static-key
 *                            the flavour (default none: the bare loop);
 *   PERTURB_MARKER_ENABLED=1 switch the sites on: every iteration records
 *                            an event into the thread's ring buffer.
 *
 * One op() runs LOOPS iterations of the inlined loop and counts as LOOPS
 * events (events_per_op), so the result is per iteration - the Markers'
 * "cycles per loop" - with the framework's call of op() (and the loop's
 * own indirect call of the flavour's function) spread over LOOPS
 * iterations instead of dominating them.  When enabled, op() drains the
 * ring buffer after its loop (the buffer holds 2 x LOOPS events, so none
 * is dropped): the result is the cost of recording and consuming an event.
 */
#include "micro.h"
#include "instrumentation/markers.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY_LOOPS 1024	/* iterations per op() */
#define MEMCPY_LOOPS 16

static char src[4096] __attribute__((aligned(64)));
static char dst[4096] __attribute__((aligned(64)));

typedef void (*loop_fn)(void);

#define MARKER_LOOPS(sfx, FL)						\
static __attribute__((noinline)) void empty_##sfx(void)		\
{									\
	for (long i = 0; i < EMPTY_LOOPS; i++) {			\
		PERTURB_MARKER_##FL("marker_empty_loop", "i %ld", i);	\
		__asm__ __volatile__("" : : : "memory");		\
	}								\
}									\
static __attribute__((noinline)) void memcpy_##sfx(void)		\
{									\
	for (long i = 0; i < MEMCPY_LOOPS; i++) {			\
		PERTURB_MARKER_##FL("marker_memcpy_4096", "i %ld", i);	\
		memcpy(dst, src, sizeof(dst));				\
		micro_consume(dst);					\
	}								\
}

MARKER_LOOPS(none, NONE)
MARKER_LOOPS(nop, NOP)
MARKER_LOOPS(jump_generic, JUMP_GENERIC)
MARKER_LOOPS(jump_optimized, JUMP_OPTIMIZED)
MARKER_LOOPS(static_key, STATIC_KEY)

static const struct {
	const char *name;	/* PERTURB_MARKER's value */
	loop_fn empty, memcpy;
} flavours[] = {
	{ "none", empty_none, memcpy_none },
	{ "nop", empty_nop, memcpy_nop },
	{ "jump-generic", empty_jump_generic, memcpy_jump_generic },
	{ "jump-optimized", empty_jump_optimized, memcpy_jump_optimized },
	{ "static-key", empty_static_key, memcpy_static_key },
};

struct marker_state {
	loop_fn loop;
	int enabled;
};

static int discard(const struct marker_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
	return 0;
}

static int setup(struct micro_ctx *m, int memcpy_loop)
{
	const char *fl = getenv("PERTURB_MARKER"), *on = getenv("PERTURB_MARKER_ENABLED");
	struct marker_state *s;
	size_t i;
	int r;

	if (!fl || !*fl)
		fl = "none";
	for (i = 0; i < sizeof(flavours) / sizeof(flavours[0]); i++)
		if (!strcmp(flavours[i].name, fl))
			break;
	if (i == sizeof(flavours) / sizeof(flavours[0]))
		return micro_error("PERTURB_MARKER='%s' is not one of none, nop, jump-generic, "
				   "jump-optimized, static-key", fl);
	if (!(s = calloc(1, sizeof(*s))))
		return micro_error("out of memory");
	m->priv = s;
	s->loop = memcpy_loop ? flavours[i].memcpy : flavours[i].empty;
	memset(src, 0x5a, sizeof(src));
	s->enabled = on && !strcmp(on, "1");
	if (s->enabled) {
		markers_set_capacity(2 * EMPTY_LOOPS);
		if ((r = markers_enable(memcpy_loop ? "marker_memcpy_4096" : "marker_empty_loop")) < 0)
			return micro_error("cannot enable the marker sites: %s", strerror(-r));
	}
	return 0;
}

static int empty_setup(struct micro_ctx *m)
{
	return setup(m, 0);
}

static int memcpy_setup(struct micro_ctx *m)
{
	return setup(m, 1);
}

static int op(struct micro_ctx *m)
{
	struct marker_state *s = m->priv;
	s->loop();
	if (s->enabled && markers_drain(discard, NULL) < 0)
		return micro_error("cannot drain the marker buffer");
	return 0;
}

static void teardown(struct micro_ctx *m)
{
	struct marker_state *s = m->priv;
	if (s && s->enabled) {
		markers_disable(NULL);
		markers_release();
	}
	free(s);
	m->priv = NULL;
}

const struct micro_info micro_marker_empty_loop = {
	.name = "marker-empty-loop",
	.help = "one iteration of an empty loop holding a marker site ($PERTURB_MARKER flavour)",
	.setup = empty_setup,
	.op = op,
	.teardown = teardown,
	.events_per_op = EMPTY_LOOPS,
};

const struct micro_info micro_marker_memcpy_4096 = {
	.name = "marker-memcpy-4096",
	.help = "one memcpy of 4096 bytes in a loop holding a marker site ($PERTURB_MARKER flavour)",
	.setup = memcpy_setup,
	.op = op,
	.teardown = teardown,
	.events_per_op = MEMCPY_LOOPS,
};
