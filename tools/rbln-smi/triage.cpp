#include "triage.hpp"

#include <regex>

namespace rbln::smi {

const std::vector<TriageRule> &triage_rules()
{
	// Pattern -> layer -> first checks.  First match wins, so the order is the
	// precedence: the layer that failed before the layers a message merely
	// mentions.  A registration failure names RBLN_VISIBLE_DEVICES / RBLN_DEVICES
	// as a way out and an allocation failure says "stale": both come before
	// configuration and registration respectively.
	static const std::vector<TriageRule> rules = {
		{"RBLN ABI mismatch", "ABI (driver vs library versions)",
		 "rbln-smi diagnose (abi); install rbln.ko and libdevmgr from the same release"},
		{"undefined symbol", "ABI / build of the native libraries",
		 "ldd on the failing library; rbln-smi diagnose (library, abi); unset RBLN_SKIP_ABI_CHECK"},
		{"librbln\\S*\\.so\\S*: cannot open shared object|cannot open shared object file",
		 "dynamic linker (library path)",
		 "rbln-smi diagnose (library candidates in search order); ldconfig -p | grep rbln; LD_LIBRARY_PATH"},
		{"No module named", "Python environment",
		 "which python; python -m pip --version; python -m pip show torch-rbln"},
		{"driver is not loaded|rbln driver.*not registered|lsmod \\| grep rbln",
		 "driver (rbln.ko)", "lsmod | grep rbln; dkms status; dmesg | grep rbln; uname -r"},
		{"permission denied|EACCES|group 'rbln'", "permissions (device nodes)",
		 "id; ls -l /dev/rbln* /dev/accel /dev/dri; add the user to group rbln"},
		{"rbln_register_device_id failed|held by PID|in use by another process",
		 "registration (NPU held elsewhere or stale)",
		 "rbln-smi (Context table: who holds the NPU, STALE); rbln-smi --reclaim"},
		{"rbln_malloc_(lazy|eager|host) failed|out of device memory", "device memory",
		 "rbln-smi (Memory and Context tables); rbln-smi --reclaim for stale clients; smaller batches"},
		{"no such device node|/dev/rbln\\d+.*(no such|not found)|no NPU matches", "device nodes",
		 "ls -l /dev/rbln*; rbln-smi; udevadm info /dev/rbln0; in containers, the CDI spec"},
		{"RBLN_VISIBLE_DEVICES|RBLN_DEVICES|RBLN_DEVICE_MAP|RBLN_NPUS_PER_DEVICE|No logical device|"
		 "Physical NPU \\d+ (is )?out of range|Physical NPU \\d+ is already assigned",
		 "configuration (RBLN_* variables)", "rbln-smi -g; env | grep RBLN_"},
		{"stale", "registration (NPU held elsewhere or stale)",
		 "rbln-smi (Context table: who holds the NPU, STALE); rbln-smi --reclaim"},
		{"engine hung|timed out|job .* failed", "device (DMA engine)",
		 "rbln-smi -q (engine resets, status); rbln-smi events; dmesg | grep rbln"},
		{"device was removed|chiplet (is|went) down|\\bENODEV\\b|status (is |became )?FAULT",
		 "device health", "rbln-smi -q (status); dmesg | grep rbln; rbln-smi events"},
		{"Segmentation fault|core dumped", "native code (a crash)",
		 "collect the core dump (ulimit -c unlimited, rerun), the backtrace (gdb), and "
		 "rbln-smi diagnose --json; an ABI mismatch skipped with RBLN_SKIP_ABI_CHECK is a "
		 "common cause"},
	};
	return rules;
}

TriageVerdict triage(const std::string &message)
{
	for (const auto &r : triage_rules())
		if (std::regex_search(message, std::regex(r.pattern, std::regex::icase)))
			return {r.layer, r.check, true};
	return {"unclassified", "rbln-smi diagnose --json and the complete error output (and "
				"dmesg | grep rbln); compare with a working host: rbln-smi diagnose --diff",
		false};
}

} // namespace rbln::smi
