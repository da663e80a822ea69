# sfbpf — build, test and run. See README.md.
#   make          build everything into build/ (installs nothing)
#   make deps     install the Debian packages the build and the tests use
#   make check    install missing packages, build, run every test
#   make check-arm64  the unwinder on an arm64 kernel under qemu (docs/ARM64.md)
#   make check-kernels  sfbpf on Debian's x86-64 kernels 5.10 to newest under qemu
#   make check-jdks  HotSpot read from outside on every JDK of Debian unstable (11 on)
#   make check-nodes  node's JavaScript frames with Debian 12's, 13's and unstable's nodes
#   make check-phps  PHP's frames with Debian 12's PHP 8.2 and Debian 13's and unstable's 8.4
#   make check-rubies  Ruby's frames with Debian 12's Ruby 3.1 and Debian 13's and unstable's 3.3
#   make check-perls  Perl's frames with Debian 12's Perl 5.36, Debian 13's 5.40 and unstable's 5.42
#   make check-fresh  make check in a fresh minimal Debian 12 root (LOAD=2: busy CPUs)
#   sudo make top install missing packages, build, start sfbpf-top
#   make release  sfbpf-top for any distribution (glibc 2.31+), in build-release/
#   make release-image  its container image (OCI, from scratch); make check-release proves both
#   make vmlinux  regenerate vmlinux.h from the running kernel's BTF
#   make ARCH=arm64  cross-build the programs and BPF objects into build-arm64/

BUILD     ?= $(if $(CROSS),build-$(ARCH),build)
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= bpftool
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH      := $(HOST_ARCH)
PREFIX    ?= /usr/local

WARN      := -Wall -Wextra -Werror
CFLAGS    ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -I. -Iuserspace
# libcurl and libdebuginfod are loaded when --push, --otlp or --debuginfod
# need them (util/dynlib.h), not linked.
LDLIBS    := -lbpf -ldw -lelf -lprotobuf-c -lncursesw -liberty -lz -lnettle -lcapstone
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# The version and the commit the programs say they are (--version). make
# release builds from a copy with no git, and passes the commit it copied.
SFBPF_VERSION := 0.1
SFBPF_COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
	git diff --quiet HEAD -- 2>/dev/null || echo -dirty)

# make release (scripts/release.sh) builds in a Debian 11 root (glibc 2.31)
# with RELEASE=1: every library but the C library's own linked in, from the
# root's static archives and a libbpf built there into LIBBPF_PREFIX.
ifneq ($(RELEASE),)
LIBBPF_PREFIX ?= /opt/libbpf
CFLAGS    += -I$(LIBBPF_PREFIX)/include
LDLIBS    := -L$(LIBBPF_PREFIX)/lib -Wl,-Bstatic $(LDLIBS) -ltinfo -llzma -lbz2 -lzstd \
	-Wl,-Bdynamic -ldl -lpthread
endif

# Each architecture's BPF code sees its own kernel's types: the x86-64 ones in
# vmlinux.h, the others' in bpf/arch/ARCH/vmlinux.h (make vmlinux writes them).
VMLINUX_H := $(if $(filter x86,$(ARCH)),vmlinux.h,bpf/arch/$(ARCH)/vmlinux.h)
BPF_INC   := $(if $(filter x86,$(ARCH)),,-Ibpf/arch/$(ARCH))
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

# make ARCH=arm64 on another machine: Debian's cross compiler and arm64
# libraries (multiarch, installed by scripts/deps.sh arm64). Builds the
# programs and the BPF objects only: no sanitized copies, no C tests.
ifneq ($(ARCH),$(HOST_ARCH))
ifneq ($(ARCH),arm64)
$(error cross-building supports ARCH=arm64 only)
endif
CROSS     := aarch64-linux-gnu-
CC        := $(CROSS)gcc
AR        := $(CROSS)ar
VMLINUX_BTF := /var/cache/sfbpf/arm64/vmlinux.btf
# The programs carry their libraries in $(BUILD)/lib (scripts/bundle-libs.sh):
# a root of any suite runs them with its own C library only. DT_RPATH, not
# RUNPATH, so that the libraries' own dependencies are found there too.
PROG_LDFLAGS := -Wl,-rpath,'$$ORIGIN/lib' -Wl,--disable-new-dtags
endif

# protobuf-c code generated from proto/*.proto is library code too.
PROTOS    := $(wildcard proto/*.proto)
PROTO_SRC := $(PROTOS:proto/%.proto=$(BUILD)/%.pb-c.c)
PROTO_HDR := $(PROTOS:proto/%.proto=$(BUILD)/%.pb-c.h)

# Every userspace/*/*.c is library code except the programs' main files.
PROGS     := sfbpf-dump sfbpf-top
MAIN_SRCS := userspace/sframe/sfbpf-dump.c userspace/top/sfbpf-top.c
LIB_SRCS  := $(filter-out $(MAIN_SRCS),$(wildcard userspace/*/*.c))
LIB_OBJS  := $(LIB_SRCS:userspace/%.c=$(BUILD)/obj/%.o) $(PROTO_SRC:$(BUILD)/%.c=$(BUILD)/obj/%.o)
SAN_OBJS  := $(LIB_SRCS:userspace/%.c=$(BUILD)/asan/obj/%.o) $(PROTO_SRC:$(BUILD)/%.c=$(BUILD)/asan/obj/%.o)
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.bpf.o)
SKELS     := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.skel.h)
# The benchmarks' frame-pointer reference program (not part of the product).
BENCH_SKELS := $(BUILD)/fpwalk.skel.h
TEST_SRCS := $(wildcard tests/*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps build-deps check-deps check check-asan top install vmlinux clean bench fuzz soak
.DELETE_ON_ERROR:
.SECONDARY:

# A plain make only builds: packages are installed by make deps, make check
# and make top.
ifeq ($(CROSS),)
all: $(PROGS:%=$(BUILD)/%) $(BUILD)/asan/sfbpf-dump $(BUILD)/asan/sfbpf-top $(TEST_BINS) $(BENCH_SKELS)
else
all:
	@scripts/deps.sh $(ARCH)
	@$(MAKE) --no-print-directory $(PROGS:%=$(BUILD)/%)
	@CC=$(CC) scripts/bundle-libs.sh $(BUILD)/lib $(PROGS:%=$(BUILD)/%) >/dev/null
endif

# Everything the build, the tests and the benchmarks use: the packages, then
# the references built from them once per machine (cached under
# /var/cache/sfbpf): binutils 2.44 and 2.47 (SFrame V2 and V3, the conformance
# and unwinding fixtures) and Google's pprof. The tests fail, not skip, when
# these are missing, so make deps must leave them built.
deps: test-deps
	@scripts/build-binutils.sh

# make check fetches binutils itself (tests/run.sh), beside the tests that do
# not need them.
.PHONY: test-deps
test-deps:
	@scripts/deps.sh test
	@scripts/deps.sh arm64
	@scripts/pprof-tool.sh >/dev/null

# What building and running the profiler needs (make top).
build-deps:
	@scripts/deps.sh build

# bench, fuzz and soak only say what is missing (make deps installs it).
check-deps:
	@scripts/deps.sh --check test

# BPF: clang -target bpf, then a libbpf skeleton per program. Headers come
# from the compilers' own dependency lists (-MMD -MP, *.d beside each object).
$(BUILD)/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-function \
		-MMD -MP $(BPF_INC) -I. -Ibpf -c $< -o $@

$(BUILD)/fpwalk.bpf.o: tests/bench/fpwalk.bpf.c $(VMLINUX_H)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-function \
		-MMD -MP $(BPF_INC) -I. -Ibpf -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/%.pb-c.c $(BUILD)/%.pb-c.h: proto/%.proto
	@mkdir -p $(@D)
	protoc-c --proto_path=proto --c_out=$(BUILD) $<

$(BUILD)/obj/%.pb-c.o: $(BUILD)/%.pb-c.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(BUILD) -c $< -o $@

$(BUILD)/asan/obj/%.pb-c.o: $(BUILD)/%.pb-c.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -I$(BUILD) -c $< -o $@

# Generated headers (skeletons, protobuf-c) must exist before the first
# compile, when there is no dependency file yet to say who needs them.
$(BUILD)/obj/%.o: userspace/%.c | $(SKELS) $(PROTO_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/asan/obj/%.o: userspace/%.c | $(SKELS) $(PROTO_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP -c $< -o $@

# Rewritten only when it changes, so that a new commit relinks the programs
# and nothing else.
$(BUILD)/version.h: FORCE
	@mkdir -p $(@D)
	@printf '#define SFBPF_VERSION "%s"\n#define SFBPF_COMMIT "%s"\n' \
		'$(SFBPF_VERSION)' '$(SFBPF_COMMIT)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

.PHONY: FORCE
FORCE:

# The BPF skeletons alone (make release builds them here, where clang is).
.PHONY: skeletons
skeletons: $(SKELS)

$(BUILD)/libsfbpf.a: $(LIB_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/asan/libsfbpf.a: $(SAN_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/sfbpf-dump: userspace/sframe/sfbpf-dump.c $(BUILD)/libsfbpf.a $(BUILD)/version.h Makefile
	$(CC) $(ALL_CFLAGS) -MMD -MP $< $(BUILD)/libsfbpf.a $(LDLIBS) $(PROG_LDFLAGS) -o $@

$(BUILD)/sfbpf-top: userspace/top/sfbpf-top.c $(BUILD)/libsfbpf.a $(BUILD)/version.h Makefile
	$(CC) $(ALL_CFLAGS) -MMD -MP $< $(BUILD)/libsfbpf.a $(LDLIBS) $(PROG_LDFLAGS) -o $@

# Sanitized copies of the programs: the conformance, malformed-input and
# hostile-binary tests run them.
$(BUILD)/asan/sfbpf-dump: userspace/sframe/sfbpf-dump.c $(BUILD)/asan/libsfbpf.a $(BUILD)/version.h
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP $< $(BUILD)/asan/libsfbpf.a $(LDLIBS) -o $@

$(BUILD)/asan/sfbpf-top: userspace/top/sfbpf-top.c $(BUILD)/asan/libsfbpf.a $(BUILD)/version.h
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP $< $(BUILD)/asan/libsfbpf.a $(LDLIBS) -o $@

# C test programs link the sanitized library. proctrack_race comes between
# the loader and its open of a mapping (tests/proctrack_race.c).
$(BUILD)/tests/proctrack_race: TEST_LDFLAGS := -Wl,--wrap=procmap__open
$(BUILD)/tests/%: tests/%.c $(BUILD)/asan/libsfbpf.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP $< $(BUILD)/asan/libsfbpf.a $(LDLIBS) \
		$(TEST_LDFLAGS) -o $@

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

check: test-deps
	@$(MAKE) --no-print-directory -j$(shell nproc) all
	@tests/run.sh

# The whole suite again with every userspace binary built with ASan, UBSan and
# LeakSanitizer, in build-asan/ (TESTS="tests/x.test ..." to pick some).
check-asan: deps
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g $(SAN_FLAGS)" all
	@scripts/build-binutils.sh
	@SFBPF_BUILD=$(CURDIR)/build-asan ASAN_OPTIONS=detect_leaks=1 tests/run.sh $(TESTS)

# The unwinder on a real arm64 kernel under qemu-system-aarch64 (docs/ARM64.md);
# not part of check. gas 2.47 for aarch64 assembles the SFrame V3 fixtures.
.PHONY: check-arm64
check-arm64:
	@scripts/build-binutils.sh 2.47
	@scripts/check-arm64.sh

# make check as a new machine runs it: in a fresh minimal Debian 12 root on
# this kernel, whose packages all come from make deps (scripts/check-fresh.sh).
.PHONY: check-fresh
check-fresh:
	@scripts/check-fresh.sh

# sfbpf on Debian's own x86-64 kernels (bullseye 5.10, bookworm 6.1, trixie
# 6.12, sid) under qemu-system-x86_64, against perf in each guest; not part of
# check, which boots 5.10 and 6.1 for a quick look (tests/kernels.test).
# KERNELS="bullseye bookworm" picks some.
# The evidence that the suite holds on new and busy machines, from HEAD:
# ROUNDS (3) runs of check-fresh beside ROUNDS of LOAD=2 make check
# (scripts/proof.sh); about 45 min a round on 2 CPUs.
.PHONY: proof
proof:
	@scripts/proof.sh

.PHONY: check-kernels
check-kernels: deps
	@$(MAKE) --no-print-directory all
	@scripts/check-kernels.sh

# The SFrame version matrix: tests/unwind.test with every fixture of V1, V2
# and V3 against perf (make check runs every V3 fixture and a few of V1/V2).
.PHONY: check-unwind
check-unwind: test-deps
	@$(MAKE) --no-print-directory all
	@scripts/build-binutils.sh
	@UNWIND_FULL=1 tests/run.sh tests/unwind.test

# The JDK matrix: tests/hotspot.test and tests/hsprofile.test with every
# openjdk-N-jdk-headless of Debian unstable from 11 on, each in a root of that
# suite (scripts/container-root.sh), and the other collectors; make check runs
# them with Debian 12's JDK only.
.PHONY: check-jdks
check-jdks: test-deps
	@$(MAKE) --no-print-directory all
	@SFBPF_HOTSPOT_JDKS=all tests/run.sh tests/hotspot.test tests/hsprofile.test

# The Node.js matrix: tests/v8profile.test with Debian 12's nodejs (18, a
# stripped libnode), Debian 13's (20) and Debian unstable's, each in a root of that suite
# (scripts/container-root.sh); make check runs it with the machine's node.
.PHONY: check-nodes
check-nodes: test-deps
	@$(MAKE) --no-print-directory all
	@SFBPF_V8_NODES=all tests/run.sh tests/v8profile.test

# The PHP matrix: tests/phpprofile.test with Debian 12's PHP (8.2) and with
# Debian 13's and unstable's (8.4), each in a root of that suite
# (scripts/container-root.sh); make check runs it with the machine's PHP.
.PHONY: check-phps
check-phps: test-deps
	@$(MAKE) --no-print-directory all
	@SFBPF_PHP_ROOTS=all tests/run.sh tests/phpprofile.test

# The Ruby matrix: tests/rbprofile.test with Debian 12's Ruby (3.1) and with
# Debian 13's and unstable's (3.3), each in a root of that suite
# (scripts/container-root.sh); make check runs it with the machine's Ruby.
.PHONY: check-rubies
check-rubies: test-deps
	@$(MAKE) --no-print-directory all
	@SFBPF_RUBY_ROOTS=all tests/run.sh tests/rbprofile.test

# The Perl matrix: tests/plprofile.test with Debian 12's Perl (5.36) and with
# Debian 13's (5.40) and unstable's (5.42), each in a root of that suite
# (scripts/container-root.sh); make check runs it with the machine's Perl.
.PHONY: check-perls
check-perls: test-deps
	@$(MAKE) --no-print-directory all
	@SFBPF_PERL_ROOTS=all tests/run.sh tests/plprofile.test

# The CPython matrix: tests/pywalk.test with every interpreter it finds
# (pyenv's 3.9 to 3.13, trixie's 3.13, each python3.N of Debian unstable);
# make check runs its quick form (Debian's 3.11, 3.9, unstable's newest).
.PHONY: check-pythons
check-pythons: test-deps
	@$(MAKE) --no-print-directory all
	@PYWALK_PYTHONS=all tests/run.sh tests/pywalk.test

# Benchmarks (not tests): results go to docs/BENCHMARKS.md. BENCH_ARGS="--quick" for a smoke run.
bench: check-deps all
	@scripts/bench.sh $(BENCH_ARGS)

# libFuzzer targets (tests/fuzz/*.c), FUZZ_SECONDS each.
FUZZ_SECONDS ?= 60
fuzz: check-deps all
	@scripts/fuzz.sh $(FUZZ_SECONDS)

# Churn and soak: system-wide profiling for SOAK_SECONDS while processes,
# libraries and threads come and go; memory must stay flat (docs/RELIABILITY.md).
# make check runs the same, shortened (tests/soak.test). SOAK_ARGS=--churn (or
# make soak-churn): "a week in an hour", 3600 s judged by default.
SOAK_SECONDS ?= $(if $(filter --churn,$(SOAK_ARGS)),3600,600)
soak: check-deps all
	@scripts/soak.sh $(SOAK_ARGS) $(SOAK_SECONDS)

.PHONY: soak-churn
soak-churn: check-deps all
	@scripts/soak.sh --churn $(filter-out --churn,$(SOAK_ARGS)) \
		$(if $(filter command line environment,$(origin SOAK_SECONDS)),$(SOAK_SECONDS),3600)

# sfbpf-top and sfbpf-dump for a fleet, in build-release/ARCH/: every library
# but the C library linked in, for glibc 2.31 and later (scripts/release.sh).
.PHONY: release release-image check-release
release:
	@scripts/deps.sh build
	@scripts/deps.sh release
	@scripts/release.sh

# The container image of the release programs, built offline from scratch
# (scripts/release-image.sh); scripts/sfbpf-daemonset.yaml deploys it.
release-image: release
	@scripts/release-image.sh

# The release programs and image where a fleet runs them (scripts/check-release.sh):
# fresh roots of Debian 11 to sid, Debian's kernels 5.10 to newest, the arm64
# guest, podman with the host's PID namespace. make check runs a quick form
# (tests/release.test).
check-release: release-image
	@scripts/check-release.sh

top: build-deps
	@$(MAKE) --no-print-directory $(BUILD)/sfbpf-top
	$(BUILD)/sfbpf-top $(ARGS)

install: all
	install -D -m 0755 $(BUILD)/sfbpf-top $(DESTDIR)$(PREFIX)/sbin/sfbpf-top
	install -D -m 0755 $(BUILD)/sfbpf-dump $(DESTDIR)$(PREFIX)/bin/sfbpf-dump
	install -D -m 0644 docs/sfbpf-top.8 $(DESTDIR)$(PREFIX)/share/man/man8/sfbpf-top.8

vmlinux:
	@mkdir -p $(dir $(VMLINUX_H))
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $(VMLINUX_H)

clean:
	rm -rf $(BUILD)
