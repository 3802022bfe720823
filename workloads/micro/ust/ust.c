/*
 * ust.c - perturb-micro-ust.so: the lttng-ust flavour of the marker micros
 * (PERTURB_MARKER=lttng-ust, workloads/micro/markers.c).  The same loops
 * as every flavour (marker_loops.h), each iteration hitting a tracepoint
 * of the provider perturb_micro (perturb_micro_tp.h), which this library
 * also defines and registers.  perturb-micro loads it with dlopen() only
 * for this flavour: liblttng-ust (its threads, its registration with a
 * session daemon) never runs in the other micros' processes.  Where no
 * session daemon runs, the tracepoints stay disabled and the loop runs.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "perturb_micro_tp.h"
#include "../marker_loops.h"

#define MARK_LTTNG_UST(ev, i) lttng_ust_tracepoint(perturb_micro, ev, i)

MARKER_LOOPS(lttng_ust, LTTNG_UST)

/* What perturb-micro looks up (markers.c): the loops themselves, called
 * through a pointer as every flavour's are. */
extern const struct perturb_micro_ust perturb_micro_ust;
const struct perturb_micro_ust perturb_micro_ust = {
	marker_loops_init, empty_lttng_ust, memcpy_lttng_ust,
};
