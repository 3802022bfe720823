/*
 * markers.c - marker-empty-loop and marker-memcpy-4096: the two loops of
 * the 2006 Linux Kernel Markers measurements, each iteration holding one
 * marker site (instrumentation/markers.h).
 *
 * Each loop is compiled once per flavour (MARKER_LOOPS below); the
 * environment picks one when the micro is set up:
 *   PERTURB_MARKER=none|nop|jump-generic|jump-optimized|static-key|lttng-ust
 *                            the flavour (default none: the bare loop);
 *                            lttng-ust: an lttng-ust tracepoint of the
 *                            provider perturb_micro (events
 *                            perturb_micro:marker_empty_loop and
 *                            perturb_micro:marker_memcpy_4096), from
 *                            perturb-micro-ust.so next to perturb-micro
 *                            (ust/ust.c), recording when an LTTng session
 *                            enables it (the lttng: block) - the
 *                            PERTURB_MARKER_ENABLED switch is not its;
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
#include "marker_loops.h"
#include "instrumentation/markers.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

typedef void (*loop_fn)(void);

#define MARK_NONE(ev, i) PERTURB_MARKER_NONE(#ev, "i %ld", i)
#define MARK_NOP(ev, i) PERTURB_MARKER_NOP(#ev, "i %ld", i)
#define MARK_JUMP_GENERIC(ev, i) PERTURB_MARKER_JUMP_GENERIC(#ev, "i %ld", i)
#define MARK_JUMP_OPTIMIZED(ev, i) PERTURB_MARKER_JUMP_OPTIMIZED(#ev, "i %ld", i)
#define MARK_STATIC_KEY(ev, i) PERTURB_MARKER_STATIC_KEY(#ev, "i %ld", i)

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
	{ "lttng-ust", NULL, NULL },	/* from perturb-micro-ust.so: ust_loop() */
};


/* The lttng-ust flavour's loop: perturb-micro-ust.so next to self_exe,
 * loaded now (liblttng-ust registers with a session daemon, if one runs,
 * before dlopen() returns). */
static int ust_loop(const char *self_exe, int memcpy_loop, loop_fn *out)
{
	const struct perturb_micro_ust *u;
	char path[PATH_MAX];
	const char *slash = strrchr(self_exe, '/');
	void *lib;

	/* no program interpreter: static, and a static glibc cannot load a
	 * library that needs libc.so */
	if (!getauxval(AT_BASE))
		return micro_error("PERTURB_MARKER=lttng-ust: a static perturb-micro cannot "
				   "load perturb-micro-ust.so (run perturb-micro)");
	snprintf(path, sizeof(path), "%.*s/perturb-micro-ust.so",
		 slash ? (int)(slash - self_exe) : 1, slash ? self_exe : ".");
	if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
		return micro_error("PERTURB_MARKER=lttng-ust: %s (built where liblttng-ust-dev "
				   "is installed)", dlerror());
	if (!(u = dlsym(lib, "perturb_micro_ust")))
		return micro_error("PERTURB_MARKER=lttng-ust: %s", dlerror());
	u->init();
	*out = memcpy_loop ? u->memcpy : u->empty;
	return 0;
}

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
				   "jump-optimized, static-key, lttng-ust", fl);
	if (!(s = calloc(1, sizeof(*s))))
		return micro_error("out of memory");
	m->priv = s;
	s->loop = memcpy_loop ? flavours[i].memcpy : flavours[i].empty;
	marker_loops_init();
	if (!s->loop)
		return ust_loop(m->self_exe, memcpy_loop, &s->loop);
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
