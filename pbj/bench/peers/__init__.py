"""The other Python protobuf libraries as benchmark peers, each behind one small interface.

Each module has ``NAME``, ``version()``, ``build_hot(values)``, ``encode(obj)``, ``decode(data)`` and
``read_all(obj)`` (reads every field of the hot message, returns a checksum); Google's also has
``encode_canonical(obj)`` (deterministic: map entries sorted by key, the bytes pbj writes).
pure-protobuf and betterproto2 cannot load a schema at run time, so ``hot.proto`` is declared for
them by hand; Google's classes are made from ``hot.proto``'s descriptors at run time.
"""
