#!/bin/bash
# Part of make bench, inside the VM: the cost of one rbln-exporter scrape
# (wall time, and system calls of the exporter's threads) for 64, 8 and 1
# simulated NPUs; the cost per NPU should stay flat.  Runs after
# bench-smi.sh, which leaves 64 NPUs.  Wall time per scrape is that of one
# curl making 6 requests less one making 1, over 5 (curl's start-up, most of
# a second under TCG, cancels out).  "Per added NPU" is against the same
# run's 1-NPU scrape.  Prints a table and writes /run/vm/bench-exporter.json.
set -u
exporter=$1
addr=127.0.0.1:19400
"$exporter" --listen "$addr" --pod-resources-socket /nonexistent > /dev/null &
pid=$!
trap 'kill $pid' EXIT
for _ in $(seq 100); do curl -sf "http://$addr/metrics" > /dev/null && break; sleep 0.1; done

url=http://$addr/metrics
timed_us() {	# curl ARGS...: its wall time
	local start
	start=$(date +%s%N)
	curl -sf "$@" > /dev/null
	echo $((($(date +%s%N) - start) / 1000))
}

declare -A wall calls
for n in 64 8 1; do
	for d in /sys/bus/rbln_sim/devices/rbln_sim*; do
		id=${d##*rbln_sim}
		[ "$id" -lt "$n" ] || echo "$id" > /sys/bus/rbln_sim/del_device
	done
	udevadm settle --timeout=120
	[ "$(ls /sys/bus/rbln_sim/devices | wc -l)" = "$n" ] || { echo "bench-exporter: wanted $n NPUs"; exit 1; }
	curl -sf "$url" > /dev/null	# warm caches
	one=$(timed_us "$url")
	six=$(timed_us "$url" "$url" "$url" "$url" "$url" "$url")
	wall[$n]=$(((six - one) / 5))
	strace -f -c -o /tmp/strace-exporter.txt -p "$pid" 2> /dev/null &
	tracer=$!
	sleep 1	# attached to every thread
	curl -sf "http://$addr/metrics" > /dev/null
	kill -INT $tracer; wait $tracer
	calls[$n]=$(awk '/ total$/ { print $4 }' /tmp/strace-exporter.txt)
done

rows=()
printf '\n%8s %14s %16s %24s %24s\n' npus "scrape ms" "scrape syscalls" "syscalls per added NPU" "scrape ms per added NPU"
for n in 1 8 64; do
	if [ "$n" = 1 ]; then
		per_calls=- per_ms=-
	else
		per_calls=$(echo "(${calls[$n]} - ${calls[1]}) / ($n - 1)" | bc -l)
		per_ms=$(echo "(${wall[$n]} - ${wall[1]}) / ($n - 1) / 1000" | bc -l)
		printf -v per_calls '%.1f' "$per_calls"
		printf -v per_ms '%.2f' "$per_ms"
	fi
	printf '%8d %14.1f %16d %24s %24s\n' "$n" "$(echo "${wall[$n]} / 1000" | bc -l)" "${calls[$n]}" "$per_calls" "$per_ms"
	rows+=("{\"npus\": $n, \"scrape_wall_us\": ${wall[$n]}, \"scrape_syscalls\": ${calls[$n]}}")
done
(IFS=,; echo "{\"schema_version\": 1, \"rbln_exporter\": [${rows[*]}]}") > /run/vm/bench-exporter.json
