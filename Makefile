# rbln device-management stack: kernel driver, libdevmgr, tools, tests.
#
#   make run       set up, build, boot a VM with one ATOM and one Rebel100, show the devices
#   make shell     the same VM, left at a shell
#   make test      set up, build, run everything: host unit tests, lint, DKMS, KUnit, VM tests
#                  on Debian's 6.1, 6.12 and newest 7.x kernels and on the sanitizer kernel, a
#                  60 s storm there; and that the host is unchanged
#   make bench     set up, build, and print driver figures against same-VM baselines (JSON too)
#   make stress    set up, build, and run the storm on the sanitizer kernel
#                  (STRESS_SECONDS=300)
#   make fuzz      fuzz the RBLN_* variable parser with libFuzzer (clang; FUZZ_SECONDS=60)
#   make deps      install the Debian packages the project needs
#   make install   install libdevmgr, tools, headers, udev rules, the CDI boot unit,
#                  sysusers group and DKMS sources
#                  (DESTDIR=..., PREFIX=/usr)
#
# KERNELS picks the kernels by ABI name; default: the newest Debian kernel of
# each series in tests/vm/kernels.txt (6.1, 6.12, 7.x) with image and headers.

BUILD       ?= $(CURDIR)/build
KERNELS     ?= $(shell tests/vm/kernel-cache.sh list)
# The demo and bench VM: Debian's 6.12 (the 7.x build needs a chroot made first).
DEMO_KERNEL ?= $(firstword $(filter 6.12.%,$(KERNELS)) $(lastword $(KERNELS)))
DEMO_KO      = $(BUILD)/kernel/$(DEMO_KERNEL)/rbln.ko
JOBS        ?= $(shell nproc)
PREFIX      ?= /usr

KERNEL_SRCS := $(shell find kernel -type f \( -name '*.[ch]' -o -name Kbuild -o -name VERSION \))

.PHONY: all deps kernel userspace test check test-host test-vm test-dkms kunit run shell \
	demo bench bench-run fuzz install clean debug-kernel stress stress-run

all: kernel userspace

deps:
	tests/deps.sh

# The entry points set up first, then build and run in a sub-make, so that
# the kernel list is read after apt has its package lists.  make test also
# checks that nothing but deps changed the host (tests/host-snapshot.sh).
test: deps
	@mkdir -p $(BUILD) && tests/host-snapshot.sh > $(BUILD)/host-before.txt
	RBLN_HOST_BEFORE=$(BUILD)/host-before.txt $(MAKE) check
run: deps
	$(MAKE) demo
shell: deps
	$(MAKE) demo DEMO_ARGS=--shell VM_FLAGS=-i

bench: deps
	$(MAKE) bench-run

# The second VM counts instructions: with -icount shift=0 the guest's clock
# moves 1 ns per instruction executed (sleep=off: an idle guest's clock jumps
# to its next timer at once).
bench-run: userspace $(DEMO_KO)
	tests/vm/run-vm.sh -o $(BUILD)/bench $(DEMO_KERNEL) tests/vm/bench.sh
	RBLN_VM_QEMU_ARGS="$${RBLN_VM_QEMU_ARGS:-} -icount shift=0,sleep=off" \
		tests/vm/run-vm.sh -o $(BUILD)/bench-instructions $(DEMO_KERNEL) tests/vm/bench-instructions.sh
	@echo "bench: figures in $(BUILD)/bench/bench.json, bench-register.json, bench-smi.json and bench-exporter.json;"
	@echo "bench: guest instructions in $(BUILD)/bench-instructions/bench-instructions.json"

FUZZ_SECONDS ?= 60
fuzz:
	@command -v clang++ >/dev/null || { echo "fuzz: needs clang and libclang-rt-14-dev"; exit 2; }
	@mkdir -p $(BUILD)/fuzz/corpus
	clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Ilibdevmgr/include \
		tests/fuzz/fuzz_grouping.cpp libdevmgr/src/grouping.cpp libdevmgr/src/error.cpp \
		-lfmt -o $(BUILD)/fuzz/fuzz_grouping
	$(BUILD)/fuzz/fuzz_grouping -max_total_time=$(FUZZ_SECONDS) $(BUILD)/fuzz/corpus

# run-all.sh fails a series of kernels.txt without a kernel, unless the
# kernels were picked by hand (then it is a skip, named in the summary).
KERNELS_CHOSEN = $(if $(filter command line environment,$(origin KERNELS))$(RBLN_KERNELS),1,0)
check: all debug-kernel
	RBLN_KERNELS_CHOSEN=$(KERNELS_CHOSEN) RBLN_DEBUG_KERNEL=$(DEBUG_KERNEL) tests/run-all.sh $(KERNELS)

# The sanitizer kernel (KASAN, lockdep, kmemleak, UBSAN, fault injection) from
# Debian's linux-source-6.12, cached in ~/.cache/rbln-debug-kernel (first build
# about 20 minutes on 2 cores), and rbln.ko built out of tree against it.  A
# module older than the kernel is rebuilt.
DEBUG_KERNEL = $(shell tests/debug-kernel/build.sh release)
# The release name comes from the build (make expands a whole recipe before
# running it, so $(DEBUG_KERNEL) here would be read before a first build).
debug-kernel:
	@ver=$$(tests/debug-kernel/build.sh kernel) && \
		stamp=$$(tests/vm/kernel-cache.sh prepare $$ver)/.rbln-installed && \
		ko=$(BUILD)/kernel/$$ver/rbln.ko && \
		{ [ ! -f $$ko ] || [ $$ko -nt $$stamp ] || rm -f $$ko; } && \
		$(MAKE) $$ko

STRESS_SECONDS ?= 300
stress: deps
	$(MAKE) stress-run
stress-run: userspace debug-kernel
	RBLN_ALLOW_INJECTED_FAILURES=1 RBLN_VM_MEM=3072 tests/vm/run-vm.sh -o $(BUILD)/stress \
		$(DEBUG_KERNEL) env STRESS_SECONDS=$(STRESS_SECONDS) tests/stress/storm.sh
	@echo "stress: report in $(BUILD)/stress/storm.json, kernel log in $(BUILD)/stress/dmesg.txt"

demo: userspace $(DEMO_KO)
	tests/vm/run-vm.sh $(VM_FLAGS) $(DEMO_KERNEL) tests/vm/demo.sh $(DEMO_ARGS)

# One out-of-tree build per kernel, each in its own copy of the sources
# (6.1's kbuild cannot put objects outside the source directory), against the
# kernel's headers from the cache and in the userland that kernel was made for.
kernel: $(foreach k,$(KERNELS),$(BUILD)/kernel/$(k)/rbln.ko)

$(BUILD)/kernel/%/rbln.ko: $(KERNEL_SRCS)
	@rm -rf $(@D) && mkdir -p $(@D)
	@cp -r kernel/. $(@D)/
	kdir=$$(tests/vm/kernel-cache.sh headers $*) && \
		tests/vm/kernel-cache.sh run $* $(MAKE) -C $$kdir M=$(@D) W=1 modules

userspace:
	cmake -S . -B $(BUILD)/cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD)/cmake -j $(JOBS)

test-host: userspace
	cd $(BUILD)/cmake && ctest --output-on-failure

test-vm: all
	RBLN_KERNELS_CHOSEN=$(KERNELS_CHOSEN) tests/run-all.sh --vm-only $(KERNELS)

test-dkms:
	tests/dkms-test.sh $(KERNELS)

# KUnit suites on the sanitizer kernel (the first build takes a while, later
# ones only rebuild the driver).
kunit: deps
	tests/kunit/run.sh

install: userspace
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)/cmake
	install -D -m 0644 kernel/include/uapi/drm/rbln_drm.h $(DESTDIR)$(PREFIX)/include/rbln/rbln_drm.h
	install -D -m 0644 udev/70-rbln.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/70-rbln.rules
	install -D -m 0644 udev/72-rbln-late.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/72-rbln-late.rules
	install -D -m 0644 udev/rbln.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/rbln.conf
	install -D -m 0644 udev/71-rbln-cdi.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/71-rbln-cdi.rules
	install -D -m 0644 systemd/rbln-cdi-refresh.service $(DESTDIR)$(PREFIX)/lib/systemd/system/rbln-cdi-refresh.service
	DESTDIR=$(DESTDIR) dkms/install-source.sh
	@if [ -z "$(DESTDIR)" ]; then \
		systemd-sysusers rbln.conf && udevadm control --reload && \
		echo "next: dkms install rbln/$$(cat kernel/VERSION) && modprobe rbln sim_devices=atom,rebel100"; \
	fi

clean:
	rm -rf $(BUILD)
