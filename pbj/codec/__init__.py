"""pbj's binary codec compiler and its run-time parts, one module per role.

* :mod:`~pbj.codec.plan`: the codec plan of a message class (plain data).
* :mod:`~pbj.codec.forward`, :mod:`~pbj.codec.reverse`, :mod:`~pbj.codec.parse`:
  the emitters, each turning a plan into source text.
* :mod:`~pbj.codec.emit`: what the emitters share.
* :mod:`~pbj.codec.source`: source lines, the namespace of a compile batch, linecache.
* :mod:`~pbj.codec.runtime`: the helpers generated code calls, the decode-error boundary.
* :mod:`~pbj.codec.extensions`: what generated code calls for a class with extension ranges.
* :mod:`~pbj.codec.buffer`: :class:`ReverseBuffer` and its writer protocol.
* :mod:`~pbj.codec.compiler`: plans, emits and compiles a batch; ``codec_of``, ``source_of``.

See ``docs/codec-protobuf.md``.
"""

from pbj.codec.buffer import ReverseBuffer
from pbj.codec.compiler import Codec, codec_of, compile_class, source_of

__all__ = ["Codec", "ReverseBuffer", "codec_of", "compile_class", "source_of"]
