// SPDX-License-Identifier: MIT
// `rbln-ctk runtime configure`: registers rbln-container-runtime with a
// container engine and turns CDI on, through the engine's drop-in directory
// where it has one:
//
//   containerd  /etc/containerd/conf.d/99-rbln.toml in the layout of
//               config.toml's version (2: containerd 1.x, 3: containerd 2.x),
//               imported from config.toml (read and written with toml++); it
//               carries config.toml's CRI plugin section too, since containerd
//               replaces a plugin's section with an imported file's whole
//   crio        /etc/crio/crio.conf.d/99-rbln.conf (CDI is on by default)
//   docker      /etc/docker/daemon.json (no drop-ins: edited, with a backup)
//   podman      /etc/containers/containers.conf.d/99-rbln.conf (CDI built in)
//
// Every change is shown as a diff; an existing file is backed up and replaced
// atomically, never edited in place.
#pragma once

#include <string>
#include <vector>

namespace rbln::ctk {

struct FileChange {
	std::string path;
	std::string before;		// empty when the file does not exist
	std::string after;
	bool exists = false;
};

struct RuntimeOptions {
	std::string runtime;		// containerd, crio, docker, podman
	std::string shim_path = "/usr/bin/rbln-container-runtime";
	std::string root = "/";		// prefix of every path (tests, image builds)
	bool set_as_default = false;	// make rbln the engine's default runtime
	// containerd's config.toml or docker's daemon.json at another path than
	// the default under root; containerd's drop-in then goes to conf.d/ beside
	// it, imported by that absolute path.  Empty: the default.
	std::string config = {};
};

// The files to write for @opt.  Throws rbln::Error (invalid_argument) for an
// unknown runtime or a config this tool will not edit safely, saying why.
std::vector<FileChange> plan_runtime_config(const RuntimeOptions &opt);

// A unified-style diff of one change ("--- a", "+++ b", "-old", "+new").
std::string diff_text(const FileChange &c);

// Backs up an existing file to PATH.rbln-backup and writes the new text atomically.
void apply_change(const FileChange &c);

} // namespace rbln::ctk
