# Shared by tests/gpu/checks.sh and run.sh (sourced, from the repository root, with $out set):
# run, check, results and the failure count.
: "${CFLRUN:?CFLRUN must name the CUDA variant of cflrun}"
failures=0
py="${CFLRUN_GPU_PYTHON:-python3}"
# Python with the device's own libraries (device_env.sh puts Debian's first), and results.py.
device_python() { LD_LIBRARY_PATH="${CFLRUN_GPU_SAVED_LD_LIBRARY_PATH-${LD_LIBRARY_PATH-}}" "$py" "$@"; }
results() { device_python tests/gpu/results.py "$@"; }
check() {  # check NAME COMMAND...: counts a failure, does not stop
  local name="$1"
  shift
  if "$@"; then echo "gpu: ok   $name"; else echo "gpu: FAIL $name"; failures=$((failures + 1)); fi
}
run() {  # run NAME [cflrun options...]: a quiet run into $out/NAME.h5; a failure is counted, not fatal
  local name="$1"
  shift
  "$CFLRUN" --quiet --overwrite --checkpoint-every 0 --out "$out/$name.h5" "$@" ||
    { echo "gpu: FAIL run $name"; failures=$((failures + 1)); }
}
