# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Top-level entry points. The work is done by the sub-project Makefiles;
# everything they build goes under build/.
#
#   make              library and test binaries
#   make check        install missing build dependencies, then every test suite
#   make bench        build and run the benchmarks
#   make fuzz         run every fuzzer for FUZZ_SECONDS (default 60)
#   make deps         install missing Debian packages (no-op when all present)
#   make node-deps    install the pinned npm packages into node_modules/
#   make demo         profile demo/workload.c with deferred user callchains:
#                     summary, perf report, flame graph, exports in DEMO_OUT
#                     (DEMO_KERNEL=vm: recorded in Linux 7.2 in QEMU)
#   make perf-upstream  pristine upstream perf 7.2.13 as build/perf-upstream
#   make hotspot      hotspot's perfparser, patched to join deferred callchains
#   make install      PREFIX=/usr/local DESTDIR=
#   make clean

LIBUNWIND_COOKIE_DIR := tools/lib/unwind-cookie
BUILD := $(CURDIR)/build

LIB_MAKE = $(MAKE) -C $(LIBUNWIND_COOKIE_DIR) OUTPUT=$(BUILD)/libunwind-cookie/
# build/perf: upstream perf 7.2 with our perf code (tools/perf/) and hooks
# (patches/perf-7.2/); see Makefile.perf-patch.
PERF_MAKE = $(MAKE) -f $(CURDIR)/Makefile.perf-patch

# Debian packages the build and the test suites need. libclang-rt-14-dev
# carries libFuzzer and the sanitizer runtimes for Debian 12's clang 14.
# linux-perf is the distro perf 6.1 (/usr/bin/perf): an older client that
# must read what perf stitch -o writes.
# chromium renders make demo's flame graph in the screenshot test; time
# (/usr/bin/time) measures peak RSS in make bench; golang-go and the pprof
# sources build the pprof CLI that reads -F pprof's output; hotspot (with
# xvfb, xauth for xvfb-run, xdotool and imagemagick for its screenshot)
# is the GUI the converted files are checked in.  qemu-system-x86 and
# busybox-static boot Debian's Linux 7.2 for make vm-record;
# babeltrace2 reads back what perf data convert --to-ctf writes;
# asciidoc, xmlto and man-db: perf's man pages, as make install writes
# them (tests/perf/test-install.sh reads them).  python3-zstandard lets the oracle (tests/perf/helpers/oracle.py, run by
# /usr/bin/python3) read perf record -z files.  Node.js
# and npm (for node-deps) are checked by command, since the machines may
# carry them from a non-Debian nodejs package.
DEPS_PACKAGES := make gcc g++ pkg-config check clang libclang-rt-14-dev valgrind linux-perf \
	chromium time golang-go golang-github-google-pprof-dev hotspot xvfb xauth xdotool \
	imagemagick qemu-system-x86 busybox-static tmux python3-zstandard asciidoc xmlto man-db \
	babeltrace2

# tests/perf's suites as perf shell tests of build/perf (perf test list
# 'deferred suite'); not part of make install
PERF_TEST_SUITES = tests/perf/perf-test-install.sh $(BUILD)/perf-prefix/libexec/perf-core/tests/shell

all:
	$(LIB_MAKE) all
	$(PERF_MAKE)
	$(PERF_TEST_SUITES)

perf:
	$(PERF_MAKE)
	$(PERF_TEST_SUITES)

# Needs build/perf; `make check` builds it first.  The series' own shell
# tests (tools/perf/tests/shell/*deferred*.sh) through perf test, then the
# project's suites (also perf tests: perf test 'deferred suite'), with a
# perf configuration and build-id cache of their own (PERF_CONFIG, not
# ~/.perfconfig and ~/.debug).  perf test looks for ./tests/shell first: run it
# elsewhere than here, where ./tests is ours.
check-perf:
	@mkdir -p $(BUILD)/.perf-test/buildid && \
		printf '[buildid]\n\tdir = %s\n' $(BUILD)/.perf-test/buildid > $(BUILD)/.perf-test/config
	cd $(BUILD) && PERF_CONFIG=$(BUILD)/.perf-test/config \
		./perf test -v 'deferred user callchains' > perf-test.log 2>&1; \
		grep -E ': (Ok|FAILED!|Skip)' perf-test.log; \
		[ $$(grep -cE '^ *[0-9]+: .*deferred user callchains.*: Ok$$' perf-test.log) -eq 2 ] || \
			{ cat perf-test.log; exit 1; }
	tests/perf/run-all.sh

# No committed file (recordings and binaries included, the records perf
# record -z compressed too) names this checkout's absolute path: a clone
# elsewhere would read nothing there, or another checkout's files
check-paths: deps
	/usr/bin/python3 tests/check-paths.py

# upstream perf 7.2's own 'perf test' on build/perf and build/perf-upstream
# side by side: no test that passes on pristine fails or is skipped on ours
# (tests/upstream/perf-test-compare.sh; results in build/perf-test)
check-upstream-tests:
	tests/upstream/perf-test-compare.sh

# each mail of the series that fixes what pristine 7.2 does, with the perf
# test it adds: failing with build/perf-upstream, passing with build/perf
# (patches/perf-7.2/fix-tests; tests/upstream/fix-tests.sh)
check-fix-tests:
	tests/upstream/fix-tests.sh

# The pprof CLI (build/pprof), built offline from Debian's packaged sources:
# the perf suites read perf stitch -F pprof's profiles with it.
PPROF := $(BUILD)/pprof
pprof: deps
	@if [ -x $(PPROF) ]; then echo "pprof: $(PPROF) built"; else \
		mkdir -p $(BUILD)/go-cache && \
		GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$(BUILD)/go-cache GOFLAGS= \
			go build -o $(PPROF) github.com/google/pprof && echo "pprof: built $(PPROF)"; fi

# Both perfs also built with BPF skeletons, with clang (build/perf-bpf: the
# clang-bpf one of perf-configs; build/perf-upstream-bpf), and upstream's
# perf test on the two side by side as check-upstream-tests does (results
# in build/perf-test-bpf): the tests a build without skeletons skips or
# has not (BPF_TESTS), where this machine lets them run (root, the host
# kernel's BTF); none that passes on pristine may fail on ours.  Ours
# with BPF skeletons builds in make check (perf-configs); the pristine
# BPF build and this comparison (345 s in CI's run of f945252) are not
# in make check: with them its fresh clone took 71.3 min of CI's 70.
BPF_TESTS := perf kwork tests|kernel lock contention analysis test|perf record sample filtering (by BPF) tests|perf stat --bpf-counters --for-each-cgroup test|BPF metadata collection test|perf trace enum augmentation tests|perf record offcpu profiling tests|perf stat --bpf-counters test|perf trace BTF general tests
perf-bpf: deps
	$(PERF_MAKE) perf-bpf

perf-upstream-bpf:
	$(MAKE) -f $(CURDIR)/Makefile.perf-upstream perf-upstream-bpf

check-upstream-tests-bpf: perf-bpf perf-upstream-bpf
	PERF=$(BUILD)/perf-bpf PERF_OBJ=$(BUILD)/perf-config/clang-bpf \
	UPSTREAM_PERF=$(BUILD)/perf-upstream-bpf UPSTREAM_OBJ=$(BUILD)/perf-upstream-bpf-obj \
	TESTS='$(BPF_TESTS)' OUT=$(BUILD)/perf-test-bpf tests/upstream/perf-test-compare.sh

# issue 49: perf's BPF --off-cpu beside the deferred one in the 7.2 guest
# (tests/vm/offcpu-bpf.sh): the workloads' own clocks, throughput, file
# size, stack depth, a thread blocked past the recording; the table and
# plot in build/vm/offcpu-bpf/ (Documentation/off-cpu.md has one run's)
offcpu-bpf: deps perf-upstream-bpf
	$(PERF_MAKE)
	$(MAKE) vm-workloads
	tests/vm/offcpu-bpf.sh

# Pristine upstream perf 7.2.13 (build/perf-upstream), built beside ours from
# Debian sid's linux-source-7.2 as the anchor tests/perf/helpers/upstream-compare.py
# compares with; Makefile.perf-upstream installs its packages
# (UPSTREAM_DEPS_PACKAGES there) as deps does.  LINUX_SRC=tarball: other sources.
perf-upstream:
	$(MAKE) -f $(CURDIR)/Makefile.perf-upstream

# The perf series as a maintainer takes them (build/series/N-NAME): our
# files and hooks as git format-patch mails, several series each on the
# one before it, the first against pristine 7.2, each with its cover
# letter; series-check: git am of them in turn on the pristine sources,
# checkpatch, all of perf built after every patch, each fix's perf test
# failing just before its mail and passing with it (SERIES_BUILD=touched:
# a compile of what each touches; fixes: the first series mail by mail
# with its proofs, the others built at their ends; ends: each series
# built at its end), and the result = the tree build/perf is built from.
# make check runs it with SERIES_BUILD=none, no build between mails, to
# stay inside CI's time: the build after each mail takes 21 minutes
# (touched: 8), and is make series-check's, nightly-style, run before a
# series is sent.
series: deps
	$(PERF_MAKE) series

series-check: deps
	$(PERF_MAKE) series-check $(if $(SERIES_BUILD),SERIES_BUILD=$(SERIES_BUILD))

# Each step's wall time goes to $(CHECK_TIMES) and, as a table, to the end
# of the log: what CI's time budget (70 min on a fresh clone) goes to.
CHECK_TIMES := $(BUILD)/check-times.txt
define check-step
	@echo "make check: $(1)"; start=$$(date +%s); \
	$(2) || { echo "make check: $(1) FAILED after $$(( $$(date +%s) - start )) s" >&2; exit 1; }; \
	printf '%6d s  %s\n' $$(( $$(date +%s) - start )) '$(1)' >> $(CHECK_TIMES)
endef

check: deps node-deps pprof
	@mkdir -p $(BUILD) && : > $(CHECK_TIMES)
	$(call check-step,check-paths,$(MAKE) check-paths)
	$(call check-step,lib,$(LIB_MAKE) check)
	$(call check-step,perf,$(PERF_MAKE))
	$(call check-step,hotspot,$(MAKE) hotspot)
	$(call check-step,perf-suites-install,$(PERF_TEST_SUITES))
	$(call check-step,perf-upstream,$(MAKE) perf-upstream)
	$(call check-step,perf-asan,$(PERF_MAKE) perf-asan)
	$(call check-step,perf-configs,$(PERF_MAKE) perf-configs)
	$(call check-step,check-perf,$(MAKE) check-perf)
	$(call check-step,check-upstream-tests,$(MAKE) check-upstream-tests)
	$(call check-step,check-fix-tests,$(MAKE) check-fix-tests)
	$(call check-step,vm-check,$(MAKE) vm-check VM_OPTIONAL=1)
	$(call check-step,fuzz-perf-smoke,$(MAKE) fuzz-perf-smoke)
	$(call check-step,series-check,$(PERF_MAKE) series-check SERIES_BUILD=none)
	@echo "make check: passed; each step's wall time:"; cat $(CHECK_TIMES); \
		awk '{ s += $$1 } END { printf "%6d s  all steps\n", s }' $(CHECK_TIMES)

# The library's micro-benchmarks, then bench/bench-perf.sh: build/perf
# against pristine perf 7.2, against itself on the frame-pointer recording,
# perf stitch against perf inject and perf script | stackcollapse, on the
# real corpus, generated files and the 7.2 guest's system-wide recordings
# of many blocked tasks (bench-vm-record: made once into build/bench/vm;
# BENCH_VM_RECORD=1 records them again; without a VM their rows are left
# out, said so).
BENCH_VM := $(BUILD)/bench/vm
bench: deps
	$(LIB_MAKE) bench
	$(PERF_MAKE)
	$(MAKE) perf-upstream
	$(MAKE) bench-vm-record
	BENCH_VM=$(BENCH_VM) bench/bench-perf.sh

# bench/bench-scale.sh: ours and pristine perf 7.2 on generated system-wide
# recordings of 64 CPUs, 0.25 to 3 GiB and with the longest block from 1 s
# to the whole recording (SIZES, BLOCKS, RUNS: see the script), cpu and
# peak RSS as a table and a plot (matplotlib); COPY_PLOT=1 puts the plot
# into Documentation/images/.  Not part of make check: it takes an hour.
BENCH_SCALE_PACKAGES := python3-matplotlib
bench-scale: deps
	$(MAKE) deps DEPS_PACKAGES="$(BENCH_SCALE_PACKAGES)"
	$(PERF_MAKE)
	$(MAKE) perf-upstream
	bench/bench-scale.sh

# hotspot's perfparser, patched (patches/perfparser-1.3.0/) to join
# deferred user callchains through libunwind-cookie, under build/hotspot
# (tests/hotspot/build-perfparser.sh): Debian 12's hotspot sources, Qt 5.
HOTSPOT_PACKAGES := qtbase5-dev cmake libdw-dev libelf-dev libzstd-dev g++ python3
hotspot: deps
	$(MAKE) deps DEPS_PACKAGES="$(HOTSPOT_PACKAGES)"
	$(LIB_MAKE) lib
	LIB_MAKE="$(LIB_MAKE)" tests/hotspot/build-perfparser.sh $(BUILD)

bench-vm-record: deps
	@if [ -s $(BENCH_VM)/sleepers-20.data ] && [ -z "$(BENCH_VM_RECORD)" ]; then \
		echo "bench-vm-record: recordings in $(BENCH_VM)"; \
	else \
		$(PERF_MAKE) && $(MAKE) vm-workloads && \
		VM_SET=bench VM_REC=$(BENCH_VM) tests/vm/vm-record.sh || \
		echo "bench-vm-record: the 7.2 guest did not record (see above)"; \
	fi

fuzz:
	$(LIB_MAKE) fuzz

# perf.data readers under ASan and UBSan (build/perf-asan) on mutated
# files: FUZZ_PERF_COUNT mutants (default 1000), findings in build/fuzz-perf/;
# FUZZ_PERF_COMMANDS: some of the commands only (script,report,stitch,folded,stats)
FUZZ_PERF_COUNT ?= 1000
FUZZ_PERF_SEED ?= 1
fuzz-perf: deps
	$(PERF_MAKE)
	$(PERF_MAKE) perf-asan
	FUZZ_COMMANDS='$(FUZZ_PERF_COMMANDS)' \
		tests/perf/helpers/fuzz-perf.sh $(FUZZ_PERF_COUNT) $(FUZZ_PERF_SEED)

# make check's bounded run: FUZZ_PERF_SMOKE mutants of the fixed seed 1 (of
# the seeds every machine makes alike) and the kept findings, reported in a
# directory of its own made afresh
FUZZ_PERF_SMOKE ?= 200
fuzz-perf-smoke: deps
	$(PERF_MAKE)
	$(PERF_MAKE) perf-asan
	rm -rf $(BUILD)/fuzz-perf-smoke
	FUZZ_OUT=$(BUILD)/fuzz-perf-smoke FUZZ_SEEDS=$(BUILD)/fuzz-perf/seeds FUZZ_SMOKE=1 \
		tests/perf/helpers/fuzz-perf.sh $(FUZZ_PERF_SMOKE) 1

install:
	$(LIB_MAKE) install
	$(PERF_MAKE) install PREFIX=$(or $(PREFIX),/usr/local)

uninstall:
	$(LIB_MAKE) uninstall

# dpkg-query first, so that a machine with everything installed never
# touches apt (no network, no root needed).
deps:
	@missing=""; \
	for p in $(DEPS_PACKAGES); do \
		st=$$(dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null || true); \
		[ "$$st" = "install ok installed" ] || missing="$$missing $$p"; \
	done; \
	command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -z "$$missing" ]; then \
		echo "deps: all present ($(DEPS_PACKAGES))"; \
		exit 0; \
	fi; \
	echo "deps: installing:$$missing"; \
	if [ "$$(id -u)" -eq 0 ]; then \
		sudo=""; \
	elif command -v sudo >/dev/null 2>&1; then \
		sudo="sudo"; \
	else \
		echo "deps: not root and no sudo: install$$missing by hand" >&2; \
		exit 1; \
	fi; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends $$missing

# npm packages pinned by package-lock.json, into node_modules/: the
# d3-flame-graph template for perf's flamegraph.py, speedscope's file format
# schema and ajv to validate against it.
node-deps: deps
	@if [ node_modules/.package-lock.json -nt package-lock.json ]; then \
		echo "node-deps: node_modules up to date"; \
	else \
		npm ci --no-audit --no-fund --ignore-scripts; \
	fi

# Native deferral where the kernel can (6.19+), emulated elsewhere; the
# script says which.  DEMO_KERNEL=vm records in Linux 7.2 in QEMU instead
# (as vm-record; natively).  Needs what 'all' and 'node-deps' build (the
# template of the flame graph); it builds the workload itself.
DEMO_OUT ?= $(BUILD)/demo
DEMO_KERNEL ?= host
demo: node-deps
	$(MAKE) all
	DEMO_OUT="$(DEMO_OUT)" DEMO_KERNEL="$(DEMO_KERNEL)" PERF="$(BUILD)/perf" demo/run-demo.sh

# Real deferred callchains: Debian's Linux 7.2 (sid, pinned 7.2.13-1) booted
# in QEMU (TCG) with the host's root over virtiofs, build/perf recording
# the workloads of tests/workloads natively (--call-graph=deferred and
# fp,defer) into build/vm/rec (see tests/vm/README.md).  vm-check then
# checks the recordings; when the VM cannot boot it fails, or with
# VM_OPTIONAL=1 says "vm-check: SKIPPED: <reason>" and succeeds.
VM_DIR := $(BUILD)/vm
VM_CC ?= gcc
VM_CFLAGS ?= -O1 -g -fno-omit-frame-pointer -pthread -Wall -Wextra
# built as if in /mnt/clone, where the guest runs them (tests/vm/guest-record.sh):
# the same binary and build id in every clone, and none names the checkout
VM_CFLAGS += -fdebug-prefix-map=$(CURDIR)=/mnt/clone
# the guest's programs among tests/workloads/ (the others are the suites')
VM_WORKLOADS := $(addprefix $(VM_DIR)/bin/,blocker execloop forker offcpu server sleepers threads)

$(VM_DIR)/bin/%: tests/workloads/%.c tests/workloads/common.h tests/workloads/offcpu.h
	@mkdir -p $(@D)
	$(VM_CC) $(VM_CFLAGS) -o $@ $<

vm-workloads: $(VM_WORKLOADS)

vm-record: deps
	$(PERF_MAKE)
	$(PERF_MAKE) perf-asan
	$(MAKE) vm-workloads
	VM_DIR=$(VM_DIR) tests/vm/vm-record.sh

vm-check:
	@rm -f $(VM_DIR)/skip-reason; \
	if ! $(MAKE) vm-record; then \
		if [ ! -s $(VM_DIR)/skip-reason ]; then echo "vm-check: vm-record failed" >&2; exit 1; fi; \
		if [ "$(VM_OPTIONAL)" = 1 ]; then echo "vm-check: SKIPPED: $$(cat $(VM_DIR)/skip-reason)"; exit 0; fi; \
		echo "vm-check: cannot boot the VM: $$(cat $(VM_DIR)/skip-reason) (VM_OPTIONAL=1 makes this a skip)" >&2; \
		exit 1; \
	fi; \
	tests/vm/check-recordings.sh $(VM_DIR)/rec

.PHONY: vm-workloads vm-record vm-check

clean:
	$(LIB_MAKE) clean
	rm -rf $(BUILD)

.PHONY: all perf check check-paths check-upstream-tests check-fix-tests check-upstream-tests-bpf check-perf \
	perf-bpf perf-upstream-bpf offcpu-bpf series series-check bench bench-scale bench-vm-record hotspot fuzz fuzz-perf fuzz-perf-smoke install uninstall deps node-deps pprof perf-upstream demo clean
