#!/bin/bash
# What the tests must leave on the host as they found it: the installed
# packages (as dpkg -l lists them) and the files under /lib/modules, /boot,
# /usr/src and /var/lib/dkms (path, type, size, modification time).
# run-all.sh takes one before and one after the tests and compares them.
#   tests/host-snapshot.sh > FILE
set -euo pipefail
echo "# packages"
dpkg-query -W -f '${db:Status-Abbrev} ${Package}:${Architecture} ${Version}\n' | sort
for dir in /lib/modules /boot /usr/src /var/lib/dkms; do
	echo "# $dir"
	[ ! -e "$dir" ] || find -H "$dir" -xdev -printf '%p %y %s %T@\n' | sort
done
