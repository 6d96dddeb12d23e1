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
# a whole copy (package, harness, test helpers) that every sanitized process runs from: with the
# repository itself first on sys.path (its working directory, or a harness putting its own root
# first), `import pbj` loads the repository's build (from pip install -e), not the sanitized one
cp -r pbj fuzz tests setup.py pyproject.toml README.md "$work/"
rm -rf "$work"/pbj/_native/*.so "$work"/fuzz/crashes
absolute() { mkdir -p "$1" && (cd "$1" && pwd); }                  # the sanitized runs start in $work
export PBJ_SHARED; PBJ_SHARED=$(cd "${PBJ_SHARED:-$root/../shared}" && pwd)  # the copy has no ../shared beside it
export PBJ_FUZZ_CRASHES; PBJ_FUZZ_CRASHES=$(absolute "${PBJ_FUZZ_CRASHES:-$root/fuzz/crashes}")  # outlives the copy
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
(cd "$work" && CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" "$py" setup.py -q build_ext --inplace \
    >"$work/build.log" 2>&1) || { cat "$work/build.log"; exit 1; }
ls "$work"/pbj/_native/_engine*.so >/dev/null
# pymalloc off so AddressSanitizer sees every allocation; leaks are CPython's own at exit, not checked
# PBJ_FUZZ_SANITIZED: fuzz/fuzz_native.py and the checks below refuse to run on any other build
export PBJ_FUZZ_SANITIZED="$work/pbj/_native/"
sanitized() {
    (cd "$work" && env PYTHONPATH="$work" PYTHONMALLOC=malloc LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" "$py" "$@")
}
sanitized -c "import pbj._native as n, os; f = n._engine.__file__
assert f.startswith(os.environ['PBJ_FUZZ_SANITIZED']), f'not the sanitized build: {f}'
print('sanitized engine:', f)"
# issue 20's use-after-free reproducers first: Python code replacing a field while a native writer
# holds it (a buffer's growth, a map key's comparison); a writer reading freed memory aborts here
echo "+ mid-write reproducers on the sanitized build" >&2
sanitized -c "from fuzz.native_checks import replaced_while_growing as g, map_replaced_by_key_compare as m
print('mid-write reproducers:', g(), 'reverse writes replaced while growing,', m(), 'map writes declined')"
# private state set by hand (object.__setattr__): cached sizes, lying lengths, sub-messages of
# another class, through every writer of both engines; any undecodable output or disagreement fails
echo "+ the private-cache matrix on the sanitized build" >&2
sanitized -m fuzz.cache_matrix
# the corpus: PBJ_FUZZ_CORPUS (kept), else a fresh one in the copy; the native harness's starts
# with the encodings the project has (fuzz/seed_corpus.py: the block's items, conformance payloads,
# field cases, examples of every target)
corpus=$(absolute "${PBJ_FUZZ_CORPUS:-$work/corpus}")
if [ -z "${PBJ_FUZZ_HARNESS:-}" ] && [ -z "$(ls -A "$corpus")" ]; then
    echo "+ seeding $corpus" >&2
    PBJ_FUZZ_SEEDS="${PBJ_FUZZ_SEEDS:-20}" sanitized -m fuzz.seed_corpus "$corpus"
fi
echo "+ native fuzz on the sanitized build in $work: $*" >&2
PBJ_FUZZ_STATS="${PBJ_FUZZ_STATS:-10000}" PBJ_FUZZ_SEEDS="${PBJ_FUZZ_SEEDS:-20}" \
    sanitized "${PBJ_FUZZ_HARNESS:-fuzz/fuzz_native.py}" -print_final_stats=1 -len_control=0 -max_len=512 -detect_leaks=0 -keep_seed=1 \
    -artifact_prefix="$PBJ_FUZZ_CRASHES/" "$@" "$corpus"
