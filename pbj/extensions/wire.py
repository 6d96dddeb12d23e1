"""The wire helpers of extensions, kept importable here: they live in :mod:`pbj.codec.extensions`.

The generated codec of a class with extension ranges calls them, so they sit in the codec
package, below :mod:`pbj.extensions` (which declares extensions with :mod:`pbj.schema` and
reads their values with :mod:`pbj.api`).
"""

from pbj.codec.extensions import size_range, take, write_fresh_range, write_range, write_reverse_range

__all__ = ["take", "size_range", "write_range", "write_fresh_range", "write_reverse_range"]
