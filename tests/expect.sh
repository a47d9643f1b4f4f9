# shellcheck shell=bash
# Sourced by the shell tests that check a command's exit status and output (tests/slurm/launch_test.sh,
# tests/datasets/get_mnist_test.sh). Counts failures in $failures.
failures=0

# expect NAME EXPECTED_STATUS REGEX COMMAND...: runs COMMAND in a subshell; passes when it exits with
# EXPECTED_STATUS and a line of its output (stdout and stderr) matches REGEX.
expect() {
  local name="$1" status="$2" pattern="$3" output found
  shift 3
  output="$( ("$@") 2>&1)"
  found=$?
  if [ "$found" -ne "$status" ] || ! grep -Eq -- "$pattern" <<< "$output"; then
    echo "FAIL $name: expected status $status and a line matching: $pattern"
    echo "  got status $found and:"
    while IFS= read -r line; do echo "    $line"; done <<< "$output"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

# fail_check NAME MESSAGE: a failed check made outside expect.
fail_check() {
  echo "FAIL $1: $2"
  failures=$((failures + 1))
}

# expect_summary: prints the outcome; exits 1 if any check failed.
expect_summary() {
  if [ "$failures" -eq 0 ]; then
    echo "all checks passed"
  else
    echo "$failures check(s) failed"
    exit 1
  fi
}
