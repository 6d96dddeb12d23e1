#!/usr/bin/env bash
# Build pbj's native engine with AddressSanitizer and UndefinedBehaviorSanitizer (gcc) in a copy of
# the package, run the mid-write reproducers of fuzz/native_checks.py (replaced_while_growing,
# map_replaced_by_key_compare), the private-cache matrix (fuzz/cache_matrix.py) and then the
# native fuzz harness (fuzz/fuzz_native.py) on it. Any
# sanitizer report or failed check aborts the run with a non-zero status.
#
#   fuzz/native_asan.sh -runs=1000000            # the documented long run (docs/security.md)
#   fuzz/native_asan.sh -runs=20000              # the short run CI does
#   PBJ_FUZZ_HARNESS=fuzz/fuzz_arrow.py fuzz/native_asan.sh -runs=20000   # decode_to_arrow's C walker
#
# Needs gcc, Python's headers and atheris (pip install atheris); PYTHON picks the interpreter
# (default: .venv/bin/python, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
py=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
case $py in */*) py=$(cd "$(dirname "$py")" && pwd)/$(basename "$py") ;; esac  # absolute: used from $work too
work=$(mktemp -d /tmp/pbj-asan.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r pbj setup.py pyproject.toml README.md "$work/"
rm -f "$work"/pbj/_native/*.so
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
(cd "$work" && CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" "$py" setup.py -q build_ext --inplace \
    >"$work/build.log" 2>&1) || { cat "$work/build.log"; exit 1; }
ls "$work"/pbj/_native/_engine*.so >/dev/null
mkdir -p "$work/corpus"
# pymalloc off so AddressSanitizer sees every allocation; leaks are CPython's own at exit, not checked
sanitized() {
    env PYTHONPATH="$work:$root" PYTHONMALLOC=malloc LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" "$py" "$@"
}
# issue 20's use-after-free reproducers first: Python code replacing a field while a native writer
# holds it (a buffer's growth, a map key's comparison); a writer reading freed memory aborts here
echo "+ mid-write reproducers on the sanitized build" >&2
sanitized -c "from fuzz.native_checks import replaced_while_growing as g, map_replaced_by_key_compare as m
print('mid-write reproducers:', g(), 'reverse writes replaced while growing,', m(), 'map writes declined')"
# private state set by hand (object.__setattr__): cached sizes, lying lengths, sub-messages of
# another class, through every writer of both engines; any undecodable output or disagreement fails
echo "+ the private-cache matrix on the sanitized build" >&2
sanitized -m fuzz.cache_matrix
echo "+ native fuzz on the sanitized build in $work: $*" >&2
PBJ_FUZZ_STATS="${PBJ_FUZZ_STATS:-10000}" PBJ_FUZZ_SEEDS="${PBJ_FUZZ_SEEDS:-20}" \
    sanitized "${PBJ_FUZZ_HARNESS:-fuzz/fuzz_native.py}" -print_final_stats=1 -len_control=0 -max_len=512 "$@" "$work/corpus"
