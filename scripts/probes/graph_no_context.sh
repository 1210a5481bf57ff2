#!/usr/bin/env bash
# graph_no_context.sh PTX: which graph calls crash when no context is current. Runs
# graph_no_context.py once per call (a crash ends its process) with a PTX that has
# add_f32(float*, float, int) (examples/kernels/graph_kernels.ptx) and prints each
# call's status or exit signal.
set -u
here=$(dirname "$0")
for op in add set get execset instantiate launch upload clone update addhost addempty destroyexec destroy; do
  out=$(python3 "$here/graph_no_context.py" "$1" "$op" 2>&1); s=$?
  echo "$op: exit $s: $(echo "$out" | tail -n 1)"
done
