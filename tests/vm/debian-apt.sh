#!/bin/bash
# Runs apt-get or apt-cache against one suite of Debian's archive through a
# private apt configuration kept in the cache: its own sources list, package
# lists, package cache and empty apt.conf.d, preferences and dpkg status, so the
# host's apt set-up is neither read (beyond its mirror) nor changed.  The lists
# are refreshed when they are older than a day.  Signatures are checked, but not
# the Release files' expiry: a mirror may be a dated snapshot, and these
# packages only become test kernels.
#
#   debian-apt.sh SUITE apt-get|apt-cache ARGS...     e.g. trixie-backports apt-cache pkgnames
#   debian-apt.sh --config SUITE                      print the APT_CONFIG file (lists fetched)
#   debian-apt.sh --mirror                            print the archive's URI
#
# The archive is the host's own Debian mirror (from its apt sources);
# RBLN_DEBIAN_MIRROR overrides it.  RBLN_CACHE: the cache root, as kernel-cache.sh.
set -euo pipefail

cache_root=${RBLN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rbln-vm}
die() { echo "debian-apt: $*" >&2; exit 1; }

# The URI of the archive the host's own release comes from, as apt reads it.
host_mirror() {
	local codename uri
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	uri=$(apt-get indextargets --format '$(REPO_URI)' "Release: $codename" 'Created-By: Packages' | head -n 1)
	[ -n "$uri" ] || uri=$(apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' 'Label: Debian' \
		'Created-By: Packages' | head -n 1)
	echo "$uri"
}

mirror() {
	local uri=${RBLN_DEBIAN_MIRROR:-$(host_mirror)}
	[ -n "$uri" ] || die "no Debian mirror in the host's apt sources; set RBLN_DEBIAN_MIRROR"
	echo "${uri%/}"
}

config_for() {
	local suite=$1 dir mirror
	case "$suite" in
	*[!a-z0-9-]* | "") die "'$suite' is not a Debian suite name (e.g. trixie-backports, sid)" ;;
	esac
	dir=$cache_root/apt/$suite
	if [ ! -f "$dir/apt.conf" ]; then
		mirror=$(mirror)
		mkdir -p "$dir/empty" "$dir/lists/partial" "$dir/cache/archives/partial"
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
			> "$dir/sources.list"
		cat > "$dir/apt.conf.tmp" <<-EOF
			Dir::Etc::main "/dev/null";
			Dir::Etc::parts "$dir/empty";
			Dir::Etc::sourcelist "$dir/sources.list";
			Dir::Etc::sourceparts "$dir/empty";
			Dir::Etc::preferences "/dev/null";
			Dir::Etc::preferencesparts "$dir/empty";
			Dir::State::Lists "$dir/lists";
			Dir::State::status "/dev/null";
			Dir::Cache "$dir/cache";
			APT::Architecture "amd64";
			Acquire::Languages "none";
			Acquire::Check-Valid-Until "false";
		EOF
		mv "$dir/apt.conf.tmp" "$dir/apt.conf"
	fi
	# One refresh at a time; the stamp is written only after a good update.
	if [ -z "$(find "$dir/updated" -mmin -1440 2>/dev/null)" ]; then
		(
			flock 9
			if [ -z "$(find "$dir/updated" -mmin -1440 2>/dev/null)" ]; then
				APT_CONFIG=$dir/apt.conf apt-get -q update >&2 || die "apt-get update of $suite failed"
				touch "$dir/updated"
			fi
		) 9>"$dir/lock"
	fi
	echo "$dir/apt.conf"
}

case "${1:-}" in
--config) config_for "${2:-}"; exit ;;
--mirror) mirror; exit ;;
esac
[ $# -ge 2 ] || die "usage: debian-apt.sh SUITE apt-get|apt-cache ARGS... | --config SUITE | --mirror"
suite=$1 tool=$2
shift 2
case "$tool" in
apt-get | apt-cache) ;;
*) die "'$tool' is not apt-get or apt-cache" ;;
esac
conf=$(config_for "$suite")
APT_CONFIG=$conf exec "$tool" "$@"
