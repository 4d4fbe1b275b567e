#!/usr/bin/env bash
# `rv exec` on the login node itself (no --host: Slurm's commands on PATH), against the real cluster.
# testbed-lock: shared (submits no job, changes no cluster state: runs beside the other readers)
# shellcheck source=tests/integration/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

run "$RV" exec sinfo
assert_rc 0 "rv exec sinfo"
for p in gpu-a100 gpu-a6000 gpu-v100 gpu-h200 gpu-mig 'cpu*'; do
  assert_contains "$RUN_OUT" "$p " "rv exec sinfo lists partition $p"
done
pass "rv exec sinfo lists every partition"

run "$RV" exec -- 'exit 7'
assert_rc 7 "rv exec -- 'exit 7'"
assert_eq "" "$RUN_OUT" "rv exec -- 'exit 7' prints nothing"
pass "the command's exit status comes back"

run "$RV" exec -- 'echo to-out; echo to-err >&2; echo more-out'
assert_rc 0 "stdout/stderr command"
assert_eq $'to-out\nmore-out' "$RUN_OUT" "stdout carries only the command's stdout"
assert_eq "to-err" "$RUN_ERR" "stderr carries only the command's stderr"
pass "stdout and stderr stay separate"

run "$RV" --json exec -- 'echo to-out; echo to-err >&2; exit 3'
assert_rc 3 "rv --json exec exit status"
assert_json '[.exit_code, .stdout, .stderr]' '[3,"to-out\n","to-err\n"]' "--json shape"
assert_json 'keys - ["exit_code","stdout","stderr","signal"]' '[]' "--json has no unexpected keys"
assert_eq "" "$RUN_ERR" "--json: nothing on stderr"
pass "--json gives {exit_code, stdout, stderr}"

run "$RV" exec --timeout 1s -- 'sleep 10'
assert_rc 124 "--timeout 1s -- 'sleep 10'"
assert_faster_than 5 "--timeout 1s kills the command quickly"
assert_contains "$RUN_ERR" "timed out" "--timeout says why it failed"
pass "--timeout 1s exits 124 after ${RUN_SECS}s"

weird=$'  two  spaces "double" \'single\' $HOME ${X} `id` $(id) \\back\\slash * ? [a] ; | & > <\nsecond line\ttab  ünïcødé 日本語 🚀 -n --flag '
run "$RV" exec printf '%s\n' "$weird"
assert_rc 0 "printf with a weird argument"
# The trailing x keeps $(...) from eating the newlines at the end.
assert_eq "$weird"$'\nx' "$(cat "$IT_DIR/out" && printf x)" "weird argument arrives intact (exact bytes)"
pass "spaces, quotes, \$, backticks, newlines and non-ASCII arrive intact"

run "$RV" exec printf '[%s]' a 'b c' '' '-x' "'" '"'
assert_rc 0 "printf with several arguments"
assert_eq "[a][b c][][-x]['][\"]" "$RUN_OUT" "every argument arrives as one, empty ones too"
pass "argv boundaries kept, empty argument included"


# A config file the user names must exist (the default one may not); rv config show names the file.
run "$RV" --config "$IT_DIR/no-such-config.json" config show
assert_rc 2 "a missing --config file is an error"
assert_contains "$RUN_ERR" "config file $IT_DIR/no-such-config.json (from --config) does not exist" "says which"
run env RV_CONFIG="$IT_DIR/no-such.json" "$RV" config show
assert_rc 2 "a missing RV_CONFIG file is an error"
printf '{"host": "x",\n oops}' >"$IT_DIR/bad.json"
run "$RV" --config "$IT_DIR/bad.json" config show
assert_rc 2 "a broken config file is an error"
assert_not_contains "$RUN_ERR" "json.exception" "without the JSON library's tag"
printf '{"sync_transport": "rsync"}\n' >"$IT_DIR/ok.json"
run "$RV" --config "$IT_DIR/ok.json" config show
assert_rc 0 "rv config show"
assert_contains "$RUN_OUT" "# config file: $IT_DIR/ok.json (read)" "names the file it read"
pass "config files: named ones must exist, broken ones are clear errors, show names the file"

printf 'ok - %s: %d checks\n' "$IT_NAME" "$IT_CHECKS"
