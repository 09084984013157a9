# rbln device-management stack: kernel driver, libdevmgr, tools, tests.
#
#   make run       set up, build, boot a VM with one ATOM and one Rebel100, show the devices
#   make shell     the same VM, left at a shell
#   make test      set up, build, run everything: host unit tests, lint, DKMS, VM tests on
#                  Debian's 6.1, 6.12 and newest 7.x kernels; and that the host is unchanged
#   make bench     set up, build, and print driver figures against same-VM baselines (JSON too)
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
	demo bench bench-run fuzz install clean

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

bench-run: userspace $(DEMO_KO)
	tests/vm/run-vm.sh -o $(BUILD)/bench $(DEMO_KERNEL) tests/vm/bench.sh
	@echo "bench: figures in $(BUILD)/bench/bench.json, bench-smi.json and bench-exporter.json"

FUZZ_SECONDS ?= 60
fuzz:
	@command -v clang++ >/dev/null || { echo "fuzz: needs clang and libclang-rt-14-dev"; exit 2; }
	@mkdir -p $(BUILD)/fuzz/corpus
	clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Ilibdevmgr/include \
		tests/fuzz/fuzz_grouping.cpp libdevmgr/src/grouping.cpp libdevmgr/src/error.cpp \
		-lfmt -o $(BUILD)/fuzz/fuzz_grouping
	$(BUILD)/fuzz/fuzz_grouping -max_total_time=$(FUZZ_SECONDS) $(BUILD)/fuzz/corpus

check: all
	tests/run-all.sh $(KERNELS)

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
	tests/run-all.sh --vm-only $(KERNELS)

test-dkms:
	tests/dkms-test.sh $(KERNELS)

# KUnit suites in a test kernel built from Debian's linux-source-6.12 (cached
# in ~/.cache/rbln-kunit; the first build takes a while, later ones seconds).
kunit: deps
	tests/kunit/run.sh

install: userspace
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)/cmake
	install -D -m 0644 kernel/include/uapi/drm/rbln_drm.h $(DESTDIR)$(PREFIX)/include/rbln/rbln_drm.h
	install -D -m 0644 udev/70-rbln.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/70-rbln.rules
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
