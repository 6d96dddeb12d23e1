"""Write a starting corpus for ``fuzz/fuzz_native.py``: the valid and refused encodings the project has.

Each file is one harness input that decodes a seed as it is: the target's index (first byte), mode 0
(second byte: the bytes themselves, :func:`fuzz.fuzz_decode.pick`) and the seed. The seeds
(:func:`fuzz.fuzz_native.fuzz_targets`): the shipped block's ``BlockItem``s, ``pbj.testing.values``
examples of every target, the native targets' extensions and message sets, every binary payload of
the conformance runner (``../shared/conformance/vectors.jsonl``) and the bytes of every binary field
case (``../shared/cases``). libFuzzer mutates these (it gets no coverage feedback from the C code,
so it adds nothing to the corpus); the harness's own edit mode mutates the same seeds, whole.

    python -m fuzz.seed_corpus DIR [MAX_LEN]

Seeds longer than ``MAX_LEN`` bytes (default 512, the ``-max_len`` of ``fuzz/native_asan.sh``) are left
out: libFuzzer would cut them; the edit mode reaches them. Prints the number of files per target.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

#: At most this many seeds of a target go into the corpus (evenly spread over its seeds), so that
#: the block's 1,600 small items do not take most of libFuzzer's picks.
PER_TARGET = 256


def write_corpus(folder: Path, max_len: int = 512) -> dict[str, int]:
    """Write one file per seed of each target (up to :data:`PER_TARGET`) into ``folder``; the count per target."""
    from fuzz.fuzz_native import fuzz_targets

    targets, seeds = fuzz_targets()
    assert len(targets) <= 256, "the first byte picks the target"
    folder.mkdir(parents=True, exist_ok=True)
    counts = {}
    for index, t in enumerate(targets):
        fit = sorted({bytes((index, 0)) + seed for seed in seeds.get(t.name, ())} - {b""}, key=lambda d: (len(d), d))
        fit = [d for d in fit if len(d) <= max_len]
        written = fit[::-(-len(fit) // PER_TARGET)] if fit else []
        for data in written:
            (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        counts[t.name] = len(written)
    return counts


if __name__ == "__main__":
    counts = write_corpus(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 512)
    print(f"corpus: {sum(counts.values())} inputs for {len(counts)} targets: {counts}", file=sys.stderr)
