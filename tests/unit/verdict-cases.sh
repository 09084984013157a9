# Sourced by the tests of a check script (test-check-*.sh): runs the check on
# a case and counts whether it passed or failed as it must.
#   judge pass|fail NAME COMMAND...     (needs $dir, a scratch directory)
#   judged NAME                         the closing line; status 0 iff all were right
n=0 bad=0

judge() {
	local want=$1 name=$2 got
	shift 2
	n=$((n + 1))
	if "$@" >"$dir/out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" = "$want" ]; then
		echo "ok: $name ($got)"
	else
		echo "FAIL: $name: wanted $want, got $got"
		sed 's/^/    /' "$dir/out"
		bad=$((bad + 1))
	fi
}

judged() {
	echo "$1: $((n - bad)) of $n cases as they must be"
	[ "$bad" = 0 ]
}
