#!/usr/bin/env bash
# What a config file's text does to cflrun's messages: a value with an escape sequence is echoed
# with the control character as \x1b (never raw to the terminal); a 10 MB value is echoed
# shortened; a config file saved with a UTF-8 byte-order mark is read as without it.
# Usage: config_text.sh CFLRUN WORKDIR TINY_CONFIG
set -u
cflrun="$1"; work="$2"; tiny="$3"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "config_text: FAIL: $*"; exit 1; }

printf 'lr = \033[31mred\n' > "$work/escape.cfg"
"$cflrun" --config "$work/escape.cfg" --dry-run > "$work/escape.log" 2>&1 && fail "a value of text was accepted for --lr"
cat "$work/escape.log"
grep -q 'error: .*\\x1b\[31mred' "$work/escape.log" || fail "the value is not echoed with \\x1b"
! grep -q $'\033' "$work/escape.log" || fail "a raw escape character reached the output"

{ printf 'algorithm = '; head -c 10000000 /dev/zero | tr '\0' x; echo; } > "$work/huge.cfg"
"$cflrun" --config "$work/huge.cfg" --dry-run > "$work/huge.log" 2>&1 && fail "a 10 MB algorithm name was accepted"
bytes="$(wc -c < "$work/huge.log")"
echo "the error on a 10 MB value: $bytes bytes"
grep -q 'error: .*bytes left out' "$work/huge.log" || { head -c 600 "$work/huge.log"; fail "the value is not shortened"; }
[ "$bytes" -lt 5000 ] || fail "the error is $bytes bytes long"

{ printf '\357\273\277'; cat "$tiny"; } > "$work/bom.cfg"
"$cflrun" --config "$work/bom.cfg" --dry-run > "$work/bom.log" 2>&1 || { cat "$work/bom.log"; fail "a config file with a byte-order mark was refused"; }
echo "config_text: ok"
