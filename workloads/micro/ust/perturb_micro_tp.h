/*
 * perturb_micro_tp.h - the lttng-ust tracepoint provider perturb_micro:
 * one event per marker micro (workloads/micro/markers.c), each carrying
 * the loop's index.  Read twice by lttng-ust's headers (the multi-read
 * guard below); built into perturb-micro-ust.so only (ust.c).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER perturb_micro

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "perturb_micro_tp.h"

#if !defined(PERTURB_MICRO_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PERTURB_MICRO_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT_CLASS(perturb_micro, loop,
	LTTNG_UST_TP_ARGS(long, i),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(long, i, i)))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(perturb_micro, loop, perturb_micro, marker_empty_loop,
	LTTNG_UST_TP_ARGS(long, i))

LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(perturb_micro, loop, perturb_micro, marker_memcpy_4096,
	LTTNG_UST_TP_ARGS(long, i))

#endif

#include <lttng/tracepoint-event.h>
