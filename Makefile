# rbln device-management stack: kernel driver, libdevmgr, tools, tests.
#
#   make run       boot a VM with one ATOM and one Rebel100 and show the devices
#   make shell     the same VM, with a shell
#   make test      everything: host unit tests, VM tests on Debian 6.1 and 6.12
#   make deps      install the Debian packages the project needs (root)
#
# KERNELS picks the kernels (ABI names); default: the newest Debian 6.1 and
# 6.12 kernels with both image and headers in apt.

BUILD    ?= $(CURDIR)/build
KERNELS  ?= $(shell tests/vm/kernel-cache.sh list)
DEMO_KERNEL ?= $(lastword $(KERNELS))
JOBS     ?= $(shell nproc)

kmod_dir = $(BUILD)/kernel/$(1)
kmod     = $(call kmod_dir,$(1))/rbln.ko

KERNEL_SRCS := $(shell find kernel -type f \( -name '*.[ch]' -o -name Kbuild -o -name VERSION \))

.PHONY: all deps kernel userspace test test-host test-vm test-dkms run shell clean

all: kernel userspace

deps:
	tests/deps.sh

# One out-of-tree build per kernel, each in its own copy of the sources
# (6.1's kbuild cannot put objects outside the source directory).
kernel: $(foreach k,$(KERNELS),$(call kmod,$(k)))

$(BUILD)/kernel/%/rbln.ko: $(KERNEL_SRCS)
	@test -d /usr/src/linux-headers-$* || { echo "missing linux-headers-$* (make deps)"; exit 1; }
	@mkdir -p $(@D)
	@cp -r kernel/. $(@D)/
	$(MAKE) -C /usr/src/linux-headers-$* M=$(@D) W=1 modules

userspace:
	cmake -S . -B $(BUILD)/cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD)/cmake -j $(JOBS)

test: all
	tests/run-all.sh $(KERNELS)

test-host: userspace
	ctest --test-dir $(BUILD)/cmake --output-on-failure

test-vm: all
	tests/run-all.sh --vm-only $(KERNELS)

test-dkms:
	tests/dkms-test.sh $(firstword $(KERNELS))

run: all
	tests/vm/run-vm.sh $(DEMO_KERNEL) tests/vm/demo.sh

shell: all
	tests/vm/run-vm.sh -i $(DEMO_KERNEL) tests/vm/demo.sh --shell

clean:
	rm -rf $(BUILD)
