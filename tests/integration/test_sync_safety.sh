#!/usr/bin/env bash
# What `rv sync push` may delete, on the real login node through the loopback sshd (docs/sync.md,
# "What a push may delete"): the home directory, `.` and rv's own directories are refused (dry run
# first, so a regression cannot delete the test user's home); an unmarked directory keeps its
# files; --delete mirrors and marks it; a marker the project carries, or one copied from another
# directory, lets nothing be deleted (N1); a symlinked target keeps what is behind the link.
# No jobs; a few seconds.
# testbed-lock: shared (submits no job, changes no cluster state: runs beside the other readers)
# shellcheck source=tests/integration/lib.sh
. "$RV_SOURCE_DIR/tests/integration/lib.sh"

export RV_STATE_DIR=$IT_DIR/state
base=rv-it-safety-$$
trap 'remote rm -rf "$base" "$base-scratch" 2>/dev/null || true; it_cleanup' EXIT

mkdir -p "$IT_DIR/proj"
cd "$IT_DIR/proj" || exit 1
printf 'print("hi")\n' >train.py
printf '# none\n' >requirements.txt

# A canary in the home directory that any deletion there would take.
remote "printf 'keep me\n' > $base-canary"
home_listing() { remote 'ls -A ~ | grep -v "^rv-it-" | sort'; }
# The shared-lock tests run beside this one (docs/testing.md): netpaths' push may make rv's remote
# root (~/.rv) between the two listings; it exists before the first one.
remote 'mkdir -p -m 700 ~/.rv'
before=$(home_listing)

# shellcheck disable=SC2088  # the tilde is for rv to resolve on the cluster, not for this shell
for target in '~' '~/' '.' '~/.' "$base/.." '~/.rv' '/'; do
  run ssh_rv sync push --dry-run . "$target"
  [[ $RUN_RC == 2 ]] || it_fail "rv sync push --dry-run . '$target' was not refused; not running the real push" "$(it_last_run)"
  assert_contains "$RUN_ERR" "rv will not push to" "the refusal names the rule for '$target'"
done
# shellcheck disable=SC2088
for target in '~' '.' '~/.rv'; do
  run ssh_rv sync push --delete . "$target"
  assert_rc 2 "rv sync push --delete . '$target'"
done
assert_eq "keep me" "$(remote cat "$base-canary")" "the canary in the home directory survived"
remote rm -f "$base-canary"
assert_eq "$before" "$(home_listing)" "nothing in the home directory changed"
pass "~, ~/, ., ~/., DIR/.., ~/.rv and / are refused (also with --delete); the home directory is untouched"

# An existing directory that is not rv's: the files arrive, the rest stays.
remote "mkdir -p $base/data/big && printf 'results\n' > $base/data/big/results.csv"
run ssh_rv sync push --dry-run . "$base/data"
assert_rc 0 "dry run into an unmarked directory"
assert_contains "$RUN_OUT" "keep    big/results.csv" "the dry run names what it keeps"
assert_not_contains "$RUN_OUT" "delete  " "the dry run deletes nothing"
assert_contains "$RUN_OUT" "delete 0, kept 2 not in the project" "the summary counts what is kept"
run ssh_rv sync push . "$base/data"
assert_rc 0 "rv sync push into an unmarked directory"
assert_contains "$RUN_ERR" "is not an rv workspace" "rv says why it deletes nothing"
assert_eq "results" "$(remote cat "$base/data/big/results.csv")" "the unrelated file is kept"
assert_eq 'print("hi")' "$(remote cat "$base/data/train.py")" "the project's file arrived"
remote test ! -e "$base/data/.rv-workspace" || it_fail "an unmarked directory was marked without --delete"
pass "an unmarked directory receives the project and keeps its own files"

run ssh_rv sync push --delete --json . "$base/data"
assert_rc 0 "rv sync push --delete"
assert_json '.mirror' 'true' "--delete mirrors"
remote test ! -e "$base/data/big/results.csv" || it_fail "--delete did not mirror the deletion"
remote test -f "$base/data/.rv-workspace" || it_fail "--delete did not mark the directory"
remote "printf x > $base/data/stale.txt"
run ssh_rv sync push . "$base/data"
assert_rc 0 "push into a marked directory"
remote test ! -e "$base/data/stale.txt" || it_fail "a marked directory was not mirrored"
pass "--delete mirrors and marks; a marked directory is mirrored from then on"

# N1 (security review 2): a project carrying `.rv-workspace` (a copy of a snapshot) pushed twice
# into an unmarked directory deleted everything else there. The marker is never sent, and a marker
# copied in from rv's own workspace (a valid proof, for another directory) proves nothing.
mkdir -p "$IT_DIR/carrier" && cd "$IT_DIR/carrier" || exit 1
printf 'print("carrier")\n' >train.py
remote "cat $base/data/.rv-workspace" >.rv-workspace # rv's real marker, copied out of a workspace
remote "mkdir -p $base/mine/big && printf 'mine\n' > $base/mine/big/results.csv"
for i in 1 2; do
  run ssh_rv sync push . "$base/mine"
  assert_rc 0 "push $i of a project carrying the marker into an unmarked directory"
done
assert_eq "mine" "$(remote cat "$base/mine/big/results.csv")" "the user's file survived two pushes"
remote test ! -e "$base/mine/.rv-workspace" || it_fail "the project's marker was sent"
remote "cp $base/data/.rv-workspace $base/mine/.rv-workspace"
run ssh_rv sync push . "$base/mine"
assert_rc 0 "push into a directory holding a marker copied from another directory"
assert_contains "$RUN_ERR" "did not write" "rv says the marker is not its own for this directory"
assert_eq "mine" "$(remote cat "$base/mine/big/results.csv")" "a copied marker deletes nothing"
cd "$IT_DIR/proj" || exit 1
pass "a marker in the project is never sent; a copied marker proves nothing; nothing was deleted"

# A symlinked target: nothing behind the link is deleted, even with --delete.
remote "mkdir -p $base-scratch && printf 'data\n' > $base-scratch/dataset.bin && ln -s ~/$base-scratch $base/scratch"
run ssh_rv sync push --delete . "$base/scratch"
assert_rc 0 "push into a symlinked directory"
assert_contains "$RUN_ERR" "symbolic link" "rv says it will not delete through the link"
assert_eq "data" "$(remote cat "$base-scratch/dataset.bin")" "the file behind the link is kept"
assert_eq 'print("hi")' "$(remote cat "$base-scratch/train.py")" "the project's file arrived behind the link"
pass "a symlinked target receives the files; nothing behind the link is deleted"

# S1 (security review 3): a pull stays inside its destination on both transports. A lab-mate's
# link on the cluster points at the laptop's ~/.config; it is not made here. A link there anyway
# (an older rv made it) is replaced by a directory when the cluster swaps the link for
# cfg/autostart/evil.desktop; a link to a parent is not made either.
for transport in rsync sftp; do
  lab="$base/lab-$transport"
  laptop="$IT_DIR/laptop-$transport"
  mkdir -p "$laptop/.config" "$laptop/pulled"
  remote "mkdir -p $lab/results/sub && printf 'loss 0.1\n' > $lab/results/sub/metrics.csv &&
    ln -s '$laptop/.config' $lab/results/cfg && ln -s .. $lab/results/up && ln -s sub $lab/results/inner"
  RV_SYNC_TRANSPORT=$transport run ssh_rv sync pull --json "$lab/results" "$laptop/pulled"
  assert_rc 0 "rv sync pull over $transport (first)"
  assert_json '.transport' "\"$transport\"" "the pull went over $transport"
  assert_json '.skipped_links | sort | join(",")' '"cfg,up"' "the links that leave the destination are named"
  [[ ! -e $laptop/pulled/results/cfg && ! -L $laptop/pulled/results/cfg ]] ||
    it_fail "$transport: the link to the laptop's ~/.config was made" "$(ls -la "$laptop/pulled/results")"
  [[ ! -L $laptop/pulled/results/up ]] || it_fail "$transport: the link to a parent was made"
  assert_eq "sub" "$(readlink "$laptop/pulled/results/inner")" "$transport: a link inside is kept"
  ln -s "$laptop/.config" "$laptop/pulled/results/cfg"
  remote "rm $lab/results/cfg && mkdir -p $lab/results/cfg/autostart &&
    printf '[Desktop Entry]\n' > $lab/results/cfg/autostart/evil.desktop"
  RV_SYNC_TRANSPORT=$transport run ssh_rv sync pull "$lab/results" "$laptop/pulled"
  assert_rc 0 "rv sync pull over $transport (second, the link swapped for a directory)"
  [[ -z $(ls -A "$laptop/.config") ]] ||
    it_fail "$transport: the pull wrote into the laptop's ~/.config" "$(find "$laptop/.config")"
  [[ -d $laptop/pulled/results/cfg && ! -L $laptop/pulled/results/cfg ]] ||
    it_fail "$transport: the local link was not replaced by a directory"
  assert_eq "[Desktop Entry]" "$(<"$laptop/pulled/results/cfg/autostart/evil.desktop")" \
    "$transport: the file landed inside the destination"
  pass "$transport: two pulls around a link swapped for a directory write nothing outside the destination"
done
