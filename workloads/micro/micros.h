/*
 * micros.h - the registry of perturb-micro's micro-benchmarks.
 *
 * One X-macro list, X(ident, "name"), generates both the enum of the
 * micros and the table perturb-micro looks names up in (framework.c); the
 * test suite walks the same list.  A row here, a `const struct micro_info
 * micro_IDENT` in some .c file of this folder, and workloads/NAME.yaml are
 * all a new micro-benchmark needs (see micro.h).
 */
#ifndef PERTURB_MICROS_H
#define PERTURB_MICROS_H

#define MICRO_LIST(X)				\
	X(null_syscall,	"null-syscall")		\
	X(read,		"read")			\
	X(write,	"write")		\
	X(stat,		"stat")			\
	X(open_close,	"open-close")		\
	X(pipe_latency,	"pipe-latency")		\
	X(ctxsw,	"ctxsw")		\
	X(fork_exit,	"fork-exit")		\
	X(fork_exec,	"fork-exec")		\
	X(page_fault,	"page-fault")		\
	X(mmap,		"mmap")			\
	X(memcpy_4096,	"memcpy-4096")		\
	X(empty_loop,	"empty-loop")		\
	X(marker_empty_loop,	"marker-empty-loop")	\
	X(marker_memcpy_4096,	"marker-memcpy-4096")

#define MICRO_ENUM(ident, name) MICRO_##ident,
enum micro_id {
	MICRO_LIST(MICRO_ENUM)
	MICRO_COUNT
};
#undef MICRO_ENUM

#endif
