#!/bin/bash
# Checks deploy/: every file parses as YAML, and kubectl accepts every object
# with `apply --dry-run=client --validate=false`, its kinds mapped by a
# discovery stand-in (api-discovery.py) since no cluster runs here.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT

fail=0
for f in "$top"/deploy/*.yaml; do
	python3 -c 'import sys, yaml; list(yaml.safe_load_all(open(sys.argv[1])))' "$f" ||
		{ echo "deploy-check: $f does not parse"; fail=1; }
done

python3 "$top/tests/deploy/api-discovery.py" "$tmp/port" &
server=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "deploy-check: the discovery stand-in did not start"; exit 1; }

# A kubeconfig of its own: nothing of the user's is read or changed.
export KUBECONFIG=$tmp/kubeconfig HOME=$tmp
kubectl config set-cluster standin --server="http://127.0.0.1:$(cat "$tmp/port")" >/dev/null
kubectl config set-context standin --cluster=standin >/dev/null
kubectl config use-context standin >/dev/null
out=$(kubectl apply --dry-run=client --validate=false -f "$top/deploy/" 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "deploy-check: kubectl refused deploy/"; fail=1; }
objects=$(cat "$top"/deploy/*.yaml | grep -c '^kind:')
created=$(echo "$out" | grep -c 'created (dry run)')
[ "$created" = "$objects" ] || { echo "deploy-check: $objects objects, kubectl took $created"; fail=1; }
[ $fail = 0 ] && echo "deploy-check: ok ($objects objects)"
exit $fail
