#!/bin/bash
# A VM whose PCI layout has every relation of rbln-smi topo -m, then the
# suite's PciTopology tests in it (tests/integration/test_pci_topology.cpp):
#   tests/vm/pci-topology.sh OUTDIR KERNEL
# QEMU's edu devices (1234:11e8), which the PCI backend drives as NPUs:
#   A, B  each behind a root port of the main host bridge         A-B PHB
#   C, D  behind two downstream ports of one switch               C-D PIX
#   G     behind a second switch below that switch's third port   C-G PXB
#   E, H  behind expander host bridges (pxb-pcie) on NUMA node 0  E-H NODE
#   F     behind an expander host bridge on NUMA node 1           E-F SYS
# Each is named in RBLN_TOPO_CASES by its host bridge and the device.function
# of every function from the root port down (bus numbers are the firmware's).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$1 kernel=$2

layout="-object memory-backend-ram,id=m0,size=120M -numa node,nodeid=0,cpus=0,memdev=m0
-object memory-backend-ram,id=m1,size=120M -numa node,nodeid=1,cpus=1,memdev=m1
-device pcie-root-port,id=tp1,bus=pcie.0,chassis=11,addr=10.0 -device edu,bus=tp1
-device pcie-root-port,id=tp2,bus=pcie.0,chassis=12,addr=11.0 -device edu,bus=tp2
-device pcie-root-port,id=tp3,bus=pcie.0,chassis=13,addr=12.0 -device x3130-upstream,id=up1,bus=tp3
-device xio3130-downstream,id=dn1,bus=up1,chassis=14,slot=0,addr=0.0 -device edu,bus=dn1
-device xio3130-downstream,id=dn2,bus=up1,chassis=15,slot=0,addr=1.0 -device edu,bus=dn2
-device xio3130-downstream,id=dn3,bus=up1,chassis=16,slot=0,addr=2.0 -device x3130-upstream,id=up2,bus=dn3
-device xio3130-downstream,id=dn4,bus=up2,chassis=17,slot=0,addr=0.0 -device edu,bus=dn4
-device pxb-pcie,id=pxb1,bus_nr=64,numa_node=0,bus=pcie.0,addr=13.0
-device pcie-root-port,id=tp4,bus=pxb1,chassis=18,addr=0.0 -device edu,bus=tp4
-device pxb-pcie,id=pxb2,bus_nr=128,numa_node=1,bus=pcie.0,addr=14.0
-device pcie-root-port,id=tp5,bus=pxb2,chassis=19,addr=0.0 -device edu,bus=tp5
-device pxb-pcie,id=pxb3,bus_nr=96,numa_node=0,bus=pcie.0,addr=15.0
-device pcie-root-port,id=tp6,bus=pxb3,chassis=20,addr=0.0 -device edu,bus=tp6"

A=pci0000:00/10.0/00.0 B=pci0000:00/11.0/00.0
C=pci0000:00/12.0/00.0/00.0/00.0 D=pci0000:00/12.0/00.0/01.0/00.0
G=pci0000:00/12.0/00.0/02.0/00.0/00.0/00.0
E=pci0000:40/00.0/00.0 F=pci0000:80/00.0/00.0 H=pci0000:60/00.0/00.0
cases="$A $A X;$A $B PHB;$C $D PIX;$C $G PXB;$D $G PXB;$A $C PHB;$B $G PHB"
cases+=";$E $H NODE;$E $F SYS;$H $F SYS"

# 240 MiB of RAM, all below the 256 MiB edu's 28-bit DMA reaches: the PCI
# backend (kernel/pci) binds edu without an IOMMU then, so its NPUs are in
# rbln-smi topo -m too (PciTopology.SmiMatrixOfTheNpusOnPci).
RBLN_VM_MEM=240 RBLN_VM_QEMU_ARGS=$(echo $layout) "$here/run-vm.sh" -o "$out" "$kernel" \
	env RBLN_TOPO_CASES="$cases" RBLN_SUITE_ONLY=rbln_integration_tests \
	GTEST_FILTER='PciTopology.*' "$here/suite.sh"
