#!/usr/bin/env bash
# How cflrun starts MPI (comm::Environment), read from Open MPI's own component log: started
# without a launcher (a singleton) it runs isolated, without the orted daemon, and opens only the
# ob1 PML; a value set in the environment wins; under mpirun Open MPI chooses as usual.
# Usage: singleton_start.sh CFLRUN MPIEXEC
set -euo pipefail
cflrun="$1" mpiexec="$2"
unset OMPI_MCA_pml OMPI_MCA_ess_singleton_isolated
verbose=(env OMPI_MCA_ess_base_verbose=10 OMPI_MCA_pml_base_verbose=10)
fail() { echo "FAIL: $1" >&2; printf '%s\n' "$2" | grep -E "Selected component|pml|component cm" >&2 || true; exit 1; }

log=$("${verbose[@]}" "$cflrun" --version 2>&1)
grep -q "Selected component \[singleton\]" <<< "$log" || fail "not started as a singleton" "$log"
grep -q "Selected component \[hnp\]" <<< "$log" && fail "a singleton started the orted daemon" "$log"
grep -q "select: component ob1 selected" <<< "$log" || fail "a singleton did not select ob1" "$log"
grep -q "found loaded component cm" <<< "$log" && fail "a singleton opened the cm PML" "$log"
echo "ok: a singleton starts isolated on the ob1 PML"

log=$(OMPI_MCA_ess_singleton_isolated=0 "${verbose[@]}" "$cflrun" --version 2>&1)
grep -q "Selected component \[hnp\]" <<< "$log" || fail "OMPI_MCA_ess_singleton_isolated=0 was overridden" "$log"
if log=$(OMPI_MCA_pml=no_such_pml "$cflrun" --version 2>&1); then
  fail "OMPI_MCA_pml=no_such_pml was overridden (cflrun started)" "$log"
fi
grep -q "A requested component was not found" <<< "$log" || fail "no Open MPI message for the unknown PML" "$log"
echo "ok: the environment's values win"

log=$("$mpiexec" -n 2 --oversubscribe -x OMPI_MCA_ess_base_verbose=10 -x OMPI_MCA_pml_base_verbose=10 \
  "$cflrun" --version 2>&1)
grep -q "Selected component \[singleton\]" <<< "$log" && fail "mpirun's ranks started as singletons" "$log"
grep -q "found loaded component cm" <<< "$log" || fail "under mpirun the PML choice was narrowed" "$log"
echo "ok: under mpirun Open MPI chooses as usual"
