"""Run pbj's benchmarks from a checkout: ``python -m benchmarks.run [options]``.

The same as ``pbj bench``; the runner ships inside the package (:mod:`pbj.bench`) so that it works
after ``pip install 'pbj-protobuf[bench]'``. ``python -m benchmarks.run --markdown`` prints the tables of
``docs/performance.md``; ``--from-json FILE --markdown`` renders an earlier run's again.
"""

import sys

from pbj.bench.run import main

if __name__ == "__main__":
    sys.exit(main())
