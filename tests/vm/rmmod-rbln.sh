#!/bin/bash
# Unloads rbln.ko once nothing holds it.  Each fence of a job pins the
# module until it is freed, a moment after its last holder let go (the
# scheduler's free_job, the job's end and put work, the fence's own work),
# so an rmmod right after the last process exited can find it still in use.
# Waits up to 10 s for the pins to go.
#   rmmod-rbln.sh [--settle N]    only wait for N pins; exit 1 if not there
want=0
[ "${1:-}" = --settle ] && want=$2
for _ in $(seq 100); do
	[ "$(cat /sys/module/rbln/refcnt 2>/dev/null)" = "$want" ] && break
	sleep 0.1
done
if [ "${1:-}" = --settle ]; then
	[ "$(cat /sys/module/rbln/refcnt 2>/dev/null)" = "$want" ]
	exit
fi
exec rmmod rbln
