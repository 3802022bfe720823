# perturb - build settings
#
#   make                 build build/perturb (and build/libperturb.a) and the
#                        micro-benchmarks build/perturb-micro (+ -static, and
#                        perturb-micro-ust.so with liblttng-ust-dev)
#   make test | check    build and run the Criterion test suite
#   make golden          rewrite the golden outputs (tests/golden/STUDY.*) from
#                        the stored studies tests/golden/STUDY.sql after a
#                        deliberate change of output (review the diff); the
#                        tests print a diff -u on any difference.  The studies
#                        themselves: tests/golden/make-fixtures.sh
#   make run             run the default study (experiments.yaml): its closing
#                        screen, and its full report written next to the
#                        database (REPORT.txt and REPORT.html)
#   make bench           benchmarks of perturb itself (bench/)
#   make deps            install the Debian packages perturb needs (as root),
#                        or print the apt-get line that would
#   make kernels         build every kernels/configs/ fragment into build/kernels/
#   make fuzz            build the libFuzzer targets (tests/fuzz/) with clang,
#                        ASan and UBSan, and run each for FUZZ_SECONDS
#   make deps-fuzz       install only clang and its libFuzzer (as root)
#   make test-browser    render an HTML report in headless Chromium and check
#                        the CDF plot (installs chromium and python3 as root)
#   make install         install into $(DESTDIR)$(PREFIX)
#   make clean
#
# Settings (make VAR=value):
#   CC, CFLAGS, LDFLAGS   as usual
#   PREFIX=/usr/local     install prefix; DESTDIR for staged installs
#   PKG_CONFIG=pkg-config
#   SANITIZE=1            build everything with AddressSanitizer + UBSan
#   V=1                   print full commands
#   DB=results/perturb.db database used by `make run`
#   REPORT=results/perturb-report  where `make run` writes the full report
#                         (.txt and .html): next to the database
#   EXPERIMENT=experiments.yaml  study run by `make run`
#   RUN_ARGS=             more options for `make run`'s perturb run
#                         (e.g. RUN_ARGS=--repetitions=1)
#   NO_DEPS=1             make run/test/bench/kernels skip the package check
#   JOBS=$(nproc)         make run/test/bench/kernels/fuzz build with make -jJOBS
#   FUZZ_SECONDS=60       how long make fuzz runs each target
#   MICRO_STATIC=0        do not build build/perturb-micro-static (built when
#                         a -static probe links; never with SANITIZE=1)

PREFIX ?= /usr/local
DESTDIR ?=
PKG_CONFIG ?= pkg-config
CC ?= cc
DB ?= results/perturb.db
REPORT ?= $(dir $(DB))perturb-report
EXPERIMENT ?= experiments.yaml

# Debian packages: to build and test, and what the default study runs.
# (python3-jsonschema: the tests check every JSON report against
# docs/report-schema.json.)
DEB_BUILD := gcc make pkgconf libgsl-dev libyaml-dev libsqlite3-dev \
	libpapi-dev libcriterion-dev libtracefs-dev libtraceevent-dev zlib1g-dev \
	nettle-dev libjansson-dev python3-jsonschema liblttng-ust-dev
DEB_RUN := git bzip2 strace bpftrace lttng-tools babeltrace2 xz-utils gzip zstd rt-tests sysbench linux-perf qemu-system-x86 busybox-static
DEB_BENCH := hyperfine sqlite3 bc python3-numpy time
# Guest kernels built from kernels/configs/ (boot: config:, make kernels,
# the kernels tests): Debian's kernel source and the tools to build it;
# lttng-modules' source and LTTng's tools for an lttng: block in a guest.
DEB_KERNELS := linux-source-6.1 flex bison bc libelf-dev xz-utils lttng-modules-dkms lttng-tools kmod
# Studies on Slurm (docs/distributed.md): the tests start a private
# cluster of two nodes with tests/slurm-cluster.sh.
DEB_SLURM := slurm-wlm munge
DEB_PACKAGES := $(DEB_BUILD) $(DEB_RUN) $(DEB_BENCH) $(DEB_KERNELS) $(DEB_SLURM)
# Only for `make fuzz` (clang's libFuzzer).
DEB_FUZZ := clang libclang-rt-14-dev
# Only for `make test-browser` (headless Chromium renders the HTML report).
DEB_BROWSER := chromium python3

# zlib: CRC-32 (backends/proto.c); nettle: SHA-256 (lib/hash.c); jansson: JSON
# with UTF-8 checks (lib/json.c).
PKGS := gsl yaml-0.1 sqlite3 papi libtracefs libtraceevent zlib nettle jansson
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CRIT_CFLAGS = $(shell $(PKG_CONFIG) --cflags criterion 2>/dev/null)
CRIT_LIBS = $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null)

CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wformat=2 -Wno-unused-parameter \
	-Iharness -I. \
	-DPERTURB_SHARE_DIR='"$(PREFIX)/share/perturb"'
ifeq ($(FUZZ),1)
BASE_CFLAGS += -fsanitize=fuzzer-no-link
SANITIZE := 1
endif
ifeq ($(SANITIZE),1)
BASE_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
# libcriterion's own runner leaks a few bytes when many tests run in
# parallel; nothing of ours is suppressed (tests/lsan.supp).
TEST_ENV += LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp
# an lttng: preload (liblttng-ust's libc wrapper) comes before the ASan
# runtime in an instrumented workload's library list: allowed, the
# wrapper's own calls are simply not checked
TEST_ENV += ASAN_OPTIONS=verify_asan_link_order=0
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
LIBS = $(PKG_LIBS) -lm -pthread

ifneq ($(V),1)
Q := @
QUIET_CC = @echo '   CC      $@';
QUIET_AR = @echo '   AR      $@';
QUIET_LINK = @echo '   LINK    $@';
endif

B := build
LIB_SRC := $(filter-out harness/cli/main.c,$(wildcard harness/*/*.c)) $(wildcard stats/*.c) $(wildcard reports/*.c) \
	$(wildcard instrumentation/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
MAIN_OBJ := $(B)/harness/cli/main.o
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/%.o)
PROG_SRC := $(wildcard tests/progs/*.c)
PROG_BIN := $(PROG_SRC:tests/progs/%.c=$(B)/tests/progs/%)
DEPS := $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# ---- perturb-micro: the micro-benchmarks (workloads/micro/) ----
# One program, no library dependency; {micro} in a workload's argv is the
# perturb-micro next to the perturb executable.  A static copy
# (perturb-micro-static) is for images without a C library (initramfs); the
# dynamic one is what workloads run, so that a variant's LD_PRELOAD applies.
# (This block defines rules before `all`, hence the explicit default goal.)
.DEFAULT_GOAL := all
MICRO_SRC := $(wildcard workloads/micro/*.c)
MICRO_OBJ := $(MICRO_SRC:%.c=$(B)/%.o)
MICRO_BINS := $(B)/perturb-micro
ifneq ($(SANITIZE),1)
ifneq ($(MICRO_STATIC),0)
HAVE_STATIC := $(shell printf 'int main(void){return 0;}\n' | \
	$(CC) -static -x c -o /dev/null - >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_STATIC),1)
MICRO_BINS += $(B)/perturb-micro-static $(B)/perturb-guest-agent
endif
endif
endif
DEPS += $(MICRO_OBJ:.o=.d)

$(B)/perturb-micro: $(MICRO_OBJ)
	$(QUIET_LINK)$(CC) $(LDFLAGS) -o $@ $^

# (glibc's warning about the lttng-ust flavour's dlopen() is dropped: a
# static perturb-micro says so when that flavour cannot load its library)
$(B)/perturb-micro-static: $(MICRO_OBJ)
	$(QUIET_LINK)$(CC) $(LDFLAGS) -static -o $@ $^ 2>$@.err; r=$$?; \
		grep -v "in function .ust_loop.:$$\|Using 'dlopen' in statically" $@.err >&2; \
		rm -f $@.err; exit $$r

# The qemu backend's guest agent: /init of the guests' initramfs (static),
# with the host's tracefs code (a kernel: block is applied in the guest)
# and its counter names and perf_event code (counters: are counted in the
# guest; no PAPI: there is no static libpfm), and the wire protocol it
# shares with perturb (harness/backends/proto.c; zlib's crc32(), libz.a).
# libtraceevent's plugin loader is linked in but never called: glibc's
# warning about dlopen in a static program is dropped, nothing else.
AGENT_SRC := harness/backends/guest/agent.c harness/backends/proto.c instrumentation/tracefs.c \
	harness/lib/util.c harness/lib/mounts.c harness/counters/counters_names.c \
	harness/counters/counters_perf.c
$(B)/perturb-guest-agent: $(AGENT_SRC) harness/backends/proto.h instrumentation/tracefs.h \
		harness/lib/util.h harness/counters/counters.h harness/counters/counters_backend.h
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(BASE_CFLAGS) $(shell $(PKG_CONFIG) --cflags libtracefs 2>/dev/null) \
		$(CFLAGS) $(LDFLAGS) -static -o $@ $(AGENT_SRC) -ltracefs -ltraceevent -lz -lm \
		2>$@.err; r=$$?; grep -v "in function .load_plugin.:$$\|Using 'dlopen' in statically" \
		$@.err >&2; rm -f $@.err; exit $$r

# The lttng-ust flavour of the marker micros (PERTURB_MARKER=lttng-ust):
# perturb-micro-ust.so, which perturb-micro loads for that flavour only
# (workloads/micro/ust/ust.c), built where liblttng-ust-dev is installed.
HAVE_LTTNG_UST := $(shell printf '\043include <lttng/tracepoint.h>\nint main(void){return 0;}\n' | \
	$(CC) -x c -o /dev/null - -llttng-ust >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_LTTNG_UST),1)
MICRO_BINS += $(B)/perturb-micro-ust.so
endif
$(B)/perturb-micro-ust.so: workloads/micro/ust/ust.c workloads/micro/ust/perturb_micro_tp.h \
		workloads/micro/marker_loops.h workloads/micro/micro.h
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) -std=gnu11 -Wall $(CFLAGS) -fPIC -shared -Iworkloads/micro/ust \
		$(LDFLAGS) -o $@ $< -llttng-ust
# ---- end of perturb-micro ----

# ---- markers: user-space markers (instrumentation/markers.[ch]) ----
# The library gets markers.o through instrumentation/*.c; perturb-micro's
# marker-* loops (workloads/micro/markers.c) link it too.  The tests' one
# site per flavour is tests/markers_site.c (picked up by tests/*.c).
$(B)/perturb-micro $(B)/perturb-micro-static: $(B)/instrumentation/markers.o
# ---- end of markers ----

.PHONY: all test check golden run bench deps deps-browser deps-fuzz install clean
all: $(B)/perturb $(MICRO_BINS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(CRIT_CFLAGS) -c -o $@ $<

$(B)/libperturb.a: $(LIB_OBJ)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

$(B)/perturb: $(MAIN_OBJ) $(B)/libperturb.a
	$(QUIET_LINK)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/tests/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) -O1 -Wall -Wextra -o $@ $<

$(B)/tests/perturb-tests: $(TEST_OBJ) $(B)/libperturb.a
	$(QUIET_LINK)$(CC) $(LDFLAGS) -o $@ $^ $(CRIT_LIBS) $(LIBS)

# The test suite runs from the source tree; integration tests find the
# binary and the helper programs through these variables.
# run, test, bench and kernels first install what is missing (make deps),
# then build in a second make: the probes above (pkg-config, the -static
# link test) are read when make starts, and on a fresh machine that is
# before gcc and the -dev packages are there.
# The second make builds in parallel (-jJOBS: every CPU).
# tests/run.sh runs the suite: the tests that build guest kernels and
# lttng-modules in the background of the others, said up front with their
# expected time; with a --filter in TEST_ARGS, only those tests, at once.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
ifeq ($(NO_DEPS),)
test check run bench kernels:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j$(JOBS) NO_DEPS=1 $@
else
test check: $(B)/perturb $(MICRO_BINS) $(B)/tests/perturb-tests $(PROG_BIN)
	$(TEST_ENV) PERTURB_BIN=$(abspath $(B))/perturb PERTURB_PROGS=$(abspath $(B))/tests/progs \
	PERTURB_MICRO=$(abspath $(B))/perturb-micro PERTURB_KERNELS=$(CURDIR)/kernels \
	PERTURB_SRC=$(CURDIR) tests/run.sh $(B)/tests/perturb-tests $(TEST_ARGS)

# all, not only perturb: the shipped workloads run perturb-micro.  The
# closing screen is perturb run's; the full report goes to files, also
# after failed runs (status 3), not after bad input (2: nothing stored).
run: all
	@status=0; $(B)/perturb run $(EXPERIMENT) --db $(DB) $(RUN_ARGS) || status=$$?; \
	if [ $$status -ne 2 ] && [ -f $(DB) ]; then \
		$(B)/perturb report -q --db $(DB) --output $(REPORT).txt && \
		$(B)/perturb report -q --db $(DB) --format html --output $(REPORT).html && \
		printf 'full report written: %s\n                     %s\n' \
			$(REPORT).txt $(REPORT).html || status=$$?; \
	fi; exit $$status

bench: all
	bench/run-all.sh $(CURDIR)/$(B)/perturb
endif

# The golden tests with PERTURB_GOLDEN_UPDATE=1 (tests/test_golden.c).
golden:
	@$(MAKE) --no-print-directory NO_DEPS=1 test TEST_ENV='$(TEST_ENV) PERTURB_GOLDEN_UPDATE=1' \
		TEST_ARGS="--filter 'golden/*'"

# Install missing Debian packages (root), or say which command would.
# $(1): the package list.  dpkg unpacks without a sync per file
# (--force-unsafe-io, as Debian's container images do): on a fresh machine
# the two hundred packages took 6 of the cold `make test`'s first 8 minutes
# with it off (issue 25); a crash during the install may leave a package to
# install again.
define install_debs
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "perturb: installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends \
			-o Dpkg::Options::=--force-unsafe-io $$missing; \
	else \
		echo "perturb: missing Debian packages; run as root:"; \
		echo "  apt-get install -y$$missing"; exit 1; \
	fi
endef

deps:
	$(call install_debs,$(DEB_PACKAGES))

deps-browser:
	$(call install_debs,$(DEB_BROWSER))

deps-fuzz:
	$(call install_debs,$(DEB_FUZZ))

install: $(B)/perturb $(MICRO_BINS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/perturb/workloads
	install -m 755 $(B)/perturb $(MICRO_BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 workloads/*.yaml $(DESTDIR)$(PREFIX)/share/perturb/workloads/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 docs/perturb.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/perturb/kernels/configs
	install -m 755 kernels/build.sh kernels/lttng-modules.sh $(DESTDIR)$(PREFIX)/share/perturb/kernels/
	install -m 644 kernels/configs/*.config $(DESTDIR)$(PREFIX)/share/perturb/kernels/configs/

# ---- kernels: make kernels ----
# Every kernels/configs/*.config (but base) built from Debian's
# linux-source-6.1 (unpacked once into $(B)/) by kernels/build.sh into
# $(B)/kernels/NAME.bzImage; KERNEL_SOURCE=TREE builds from another tree.
# perturb builds a boot: variant's config: itself (cached); this target is
# for images to give as kernel: PATH, or to look at.
KERNEL_TARBALL ?= /usr/src/linux-source-6.1.tar.xz
KERNEL_SOURCE ?= $(B)/linux-source-6.1
KERNEL_NAMES := $(filter-out base,$(basename $(notdir $(wildcard kernels/configs/*.config))))
.PHONY: kernels
ifneq ($(NO_DEPS),)
kernels: $(KERNEL_NAMES:%=$(B)/kernels/%.bzImage)
endif
$(B)/linux-source-6.1/Makefile:
	@mkdir -p $(B)
	tar -xf $(KERNEL_TARBALL) -C $(B)
	touch $@
$(B)/kernels/%.bzImage: kernels/configs/%.config kernels/configs/base.config kernels/build.sh \
		$(if $(filter $(B)/linux-source-6.1,$(KERNEL_SOURCE)),$(B)/linux-source-6.1/Makefile)
	kernels/build.sh $(KERNEL_SOURCE) $< $@
# ---- end of kernels ----

# ---- reporter: make test-browser (begin) ----
# Render an HTML report with headless Chromium (Debian package chromium) and
# check that the CDF plot is drawn; the PNG is left in $(B)/test-browser/.
.PHONY: test-browser
test-browser: $(if $(NO_DEPS),,deps-browser) $(B)/perturb $(B)/tests/progs/spin
	tests/browser/check.sh $(abspath $(B))/perturb $(abspath $(B))/tests/progs \
		$(abspath $(B))/test-browser
# ---- reporter: make test-browser (end) ----

# ---- fuzz: make fuzz ----
# tests/fuzz/NAME.c defines LLVMFuzzerTestOneInput; it is linked with the
# whole library built by clang with ASan, UBSan and the fuzzer's coverage
# (FUZZ=1, in build/fuzz/), and run for FUZZ_SECONDS from its seed corpus
# (tests/fuzz/NAME.seeds names the files), copied into build/fuzz/corpus-NAME
# so that what the fuzzer adds stays out of the tree.  A crash, a leak or a
# time-out stops make with the input that caused it (build/fuzz/crash-*).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(basename $(notdir $(wildcard tests/fuzz/*.c)))
.PHONY: fuzz fuzz-run
fuzz:
	$(if $(NO_DEPS),,$(call install_debs,$(DEB_PACKAGES) $(DEB_FUZZ)))
	@$(MAKE) --no-print-directory -j$(JOBS) NO_DEPS=1 FUZZ=1 CC=clang B=$(B)/fuzz fuzz-run
fuzz-run: $(FUZZ_TARGETS:%=$(B)/fuzz-%)
	@set -e; for t in $(FUZZ_TARGETS); do \
		c=$(B)/corpus-$$t; mkdir -p $$c; \
		for f in $$(cat tests/fuzz/$$t.seeds); do cp $$f $$c/; done; \
		echo "   FUZZ    $$t ($(FUZZ_SECONDS) s)"; \
		$(B)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix=$(B)/ -print_final_stats=1 $$c 2>$(B)/fuzz-$$t.log || \
			{ tail -40 $(B)/fuzz-$$t.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' $(B)/fuzz-$$t.log; \
	done
$(B)/fuzz-%: tests/fuzz/%.c $(B)/libperturb.a
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(B)/libperturb.a $(LIBS)
# ---- end of fuzz ----

clean:
	rm -rf $(B)

-include $(DEPS)
