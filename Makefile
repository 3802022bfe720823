# perturb - build settings
#
#   make                 build build/perturb (and build/libperturb.a)
#   make test | check    build and run the Criterion test suite
#   make run             run the default study (experiments.yaml) and print its report
#   make bench           benchmarks of perturb itself (bench/)
#   make deps            install the Debian packages perturb needs (as root),
#                        or print the apt-get line that would
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
#   EXPERIMENT=experiments.yaml  study run by `make run`
#   NO_DEPS=1             make run/test skip the package check

PREFIX ?= /usr/local
DESTDIR ?=
PKG_CONFIG ?= pkg-config
CC ?= cc
DB ?= results/perturb.db
EXPERIMENT ?= experiments.yaml

# Debian packages: to build and test, and what the default study runs.
DEB_BUILD := gcc make pkgconf libgsl-dev libyaml-dev libsqlite3-dev \
	libpapi-dev libcriterion-dev
DEB_RUN := bzip2 strace
DEB_BENCH := hyperfine
DEB_PACKAGES := $(DEB_BUILD) $(DEB_RUN) $(DEB_BENCH)

PKGS := gsl yaml-0.1 sqlite3 papi
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CRIT_CFLAGS = $(shell $(PKG_CONFIG) --cflags criterion 2>/dev/null)
CRIT_LIBS = $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null)

CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wformat=2 -Wno-unused-parameter \
	-Iharness -Istats -Ireports -I. \
	-DPERTURB_SHARE_DIR='"$(PREFIX)/share/perturb"'
ifeq ($(SANITIZE),1)
BASE_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
LIBS = $(PKG_LIBS) -lm

ifneq ($(V),1)
Q := @
QUIET_CC = @echo '   CC      $@';
QUIET_AR = @echo '   AR      $@';
QUIET_LINK = @echo '   LINK    $@';
endif

B := build
LIB_SRC := $(filter-out harness/main.c,$(wildcard harness/*.c)) $(wildcard stats/*.c) $(wildcard reports/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
MAIN_OBJ := $(B)/harness/main.o
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/%.o)
PROG_SRC := $(wildcard tests/progs/*.c)
PROG_BIN := $(PROG_SRC:tests/progs/%.c=$(B)/tests/progs/%)
DEPS := $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

.PHONY: all test check run bench deps install clean smoke
all: $(B)/perturb

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
test check: $(if $(NO_DEPS),,deps) $(B)/perturb $(B)/tests/perturb-tests $(PROG_BIN)
	PERTURB_BIN=$(abspath $(B))/perturb PERTURB_PROGS=$(abspath $(B))/tests/progs \
	PERTURB_SRC=$(CURDIR) $(B)/tests/perturb-tests $(TEST_ARGS)

run: $(if $(NO_DEPS),,deps) $(B)/perturb
	$(B)/perturb run $(EXPERIMENT) --db $(DB)
	$(B)/perturb report --db $(DB)

bench: $(if $(NO_DEPS),,deps) $(B)/perturb
	bench/run-all.sh $(CURDIR)/$(B)/perturb

# Install missing Debian packages (root), or say which command would.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "perturb: installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	else \
		echo "perturb: missing Debian packages; run as root:"; \
		echo "  apt-get install -y$$missing"; exit 1; \
	fi

install: $(B)/perturb
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/perturb/workloads
	install -m 755 $(B)/perturb $(DESTDIR)$(PREFIX)/bin/perturb
	install -m 644 workloads/*.yaml $(DESTDIR)$(PREFIX)/share/perturb/workloads/

clean:
	rm -rf $(B)

-include $(DEPS)
