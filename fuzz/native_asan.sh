#!/usr/bin/env bash
# Build pbj's native engine with AddressSanitizer and UndefinedBehaviorSanitizer (gcc) in a copy of
# the package, and run the native fuzz harness (fuzz/fuzz_native.py) on it. Any sanitizer report
# aborts the run with a non-zero status.
#
#   fuzz/native_asan.sh -runs=1000000            # the documented long run (docs/security.md)
#   fuzz/native_asan.sh -runs=20000              # the short run CI does
#
# Needs gcc, Python's headers and atheris (pip install atheris); PYTHON picks the interpreter
# (default: .venv/bin/python, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
py=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
work=$(mktemp -d /tmp/pbj-asan.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r pbj setup.py pyproject.toml README.md "$work/"
rm -f "$work"/pbj/_native/*.so
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
(cd "$work" && CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" "$root/$py" setup.py -q build_ext --inplace \
    >"$work/build.log" 2>&1) || { cat "$work/build.log"; exit 1; }
ls "$work"/pbj/_native/_engine*.so >/dev/null
mkdir -p "$work/corpus"
echo "+ native fuzz on the sanitized build in $work: $*" >&2
# pymalloc off so AddressSanitizer sees every allocation; leaks are CPython's own at exit, not checked
env PYTHONPATH="$work:$root" PYTHONMALLOC=malloc LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    PBJ_FUZZ_STATS="${PBJ_FUZZ_STATS:-10000}" PBJ_FUZZ_SEEDS="${PBJ_FUZZ_SEEDS:-20}" \
    "$root/$py" fuzz/fuzz_native.py -print_final_stats=1 -len_control=0 -max_len=512 "$@" "$work/corpus"
