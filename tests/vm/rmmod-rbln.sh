#!/bin/bash
# Unloads rbln.ko once nothing holds it.  Each fence of a finished job pins
# the module until it is freed, a moment after its last holder let go (an
# RCU grace period and a work item), so an rmmod right after the last
# process exited can find it still in use.  Waits up to 10 s for that.
#   rmmod-rbln.sh [--idle]    --idle: only wait; exit 1 if still in use
for _ in $(seq 100); do
	[ "$(cat /sys/module/rbln/refcnt 2>/dev/null)" = 0 ] && break
	sleep 0.1
done
if [ "${1:-}" = --idle ]; then
	[ "$(cat /sys/module/rbln/refcnt 2>/dev/null)" = 0 ]
	exit
fi
exec rmmod rbln
