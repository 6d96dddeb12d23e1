"""``python -m pbj`` and the ``pbj`` command: the command line of :func:`pbj.cli.main`."""

import sys


def run() -> int:
    """The ``pbj`` command: :func:`pbj.cli.main` on ``sys.argv``.

    :mod:`pbj.cli` is imported here, not where the command is installed, so that a Ctrl-C while
    it loads (its imports take about a tenth of a second) ends the command as one does while it
    runs: one line, ``pbj: interrupted``, on stderr and status 130, no traceback.

    Returns:
        The exit status of :func:`pbj.cli.main`, or 130.
    """
    try:
        from pbj.cli import main
    except KeyboardInterrupt:
        return _interrupted()
    except RuntimeError as exc:  # CPython 3.11 wraps one raised in a class's __set_name__ in a RuntimeError
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted()
        raise
    return main()


def _interrupted() -> int:
    print("pbj: interrupted", file=sys.stderr)
    return 130


if __name__ == "__main__":
    sys.exit(run())
