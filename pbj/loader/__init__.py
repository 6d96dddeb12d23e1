"""Loading real schemas at run time: ``pbj.load_descriptor_set`` and ``pbj.load_proto``.

A ``google.protobuf.FileDescriptorSet`` (what ``protoc --include_imports
--descriptor_set_out`` or ``buf build -o`` writes) is decoded with pbj itself
(:mod:`pbj.descriptor`) and turned into ordinary pbj classes, one per message
and one ``enum.IntEnum`` per enum, nested ones included. The classes are the
same kind ``@pbj.message`` makes; their codecs are compiled on first use.

How the descriptors map onto pbj declarations (protobuf.dev "Language Guide"
for proto2 and proto3, "Field Presence", "Encoding"):

* labels: ``repeated`` fields are tuples; proto2 ``optional`` singular fields
  and proto3 ``optional`` fields have explicit presence (``None`` when
  absent); proto2 ``required`` fields are ``required``;
* a proto3 ``optional`` field's synthetic oneof becomes a plain optional
  field; real oneofs become ``pbj.oneof`` attributes (placed where their first
  member is declared);
* repeated scalars are packed by default in proto3 and unpacked in proto2;
  ``[packed = ...]`` overrides either; editions files follow their
  ``repeated_field_encoding`` feature;
* a repeated field whose type is a map-entry message is a ``pbj.map_field``
  (entry messages get no class of their own);
* ``json_name`` and proto2 ``default`` values are kept on each field;
* groups (proto2) and ``DELIMITED`` message fields (editions) use the group
  encoding;
* every ``extend`` block (top-level or nested) becomes a :class:`pbj.Extension`
  registered with the extended class of the load (``Namespace.extension``,
  :mod:`pbj.loader.extensions`); ``extensions`` ranges and
  ``message_set_wire_format`` are kept on each class;
* proto2 enums (and editions enums with ``enum_type = CLOSED``) are closed:
  their class has ``__pbj_closed__ = True`` and the parser keeps a number that
  is not a member as an unknown field, as Google's runtimes do.

Names: a field whose name is a Python keyword (``from``), starts with
``_pbj`` or repeats another attribute gets a trailing underscore, with
``name=`` keeping the proto name. Message types refer to each other through
callables resolved on first use, so recursive schemas load.

Messages and enums of Google's well-known types (``google.protobuf.Timestamp``
…) are the classes of :mod:`pbj.wellknown`, not new ones.

Pickling: every loaded class lives, for ``pickle``, in a module
``pbj._loaded.<package>`` that resolves names through the loads of the process,
the last one first. Instances and enum members pickle
by full name, so another process that loaded the same schema unpickles them
into its own classes (``multiprocessing`` works).

A load decodes and indexes the set; each class is built on its first use
(:mod:`~pbj.loader.schema`), so a program pays for the classes it touches, and
importing this package loads none of the machinery (``import pbj`` imports it).

The modules, one per concern: :mod:`~pbj.loader.namespace` (the result),
:mod:`~pbj.loader.schema` (the classes of a load, built on first use),
:mod:`~pbj.loader.pickling` (the registry), :mod:`~pbj.loader.index` (the
descriptors by full name), :mod:`~pbj.loader.features` (their editions features,
file by file), :mod:`~pbj.loader.enums`, :mod:`~pbj.loader.fields`
and :mod:`~pbj.loader.messages` (the classes), :mod:`~pbj.loader.names` and
:mod:`~pbj.loader.defaults` (names and default values),
:mod:`~pbj.loader.descriptor_set` and :mod:`~pbj.loader.protoc` (the two entry points),
:mod:`~pbj.loader.declarations` (each class's declaration as plain data, and the class made
from it), :mod:`~pbj.loader.cache` and :mod:`~pbj.loader.set_cache` (the schema cache on disk:
protoc's output, and a set's names and declarations, so a second process decodes no set).
"""

from pbj.loader.descriptor_set import load_descriptor_set
from pbj.loader.namespace import Namespace

# _REGISTRY is read by tests, the fuzz targets and Any resolution; _restore_* are the names
# pickles made before the loader became a package refer to.
from pbj.loader.pickling import _REGISTRY as _REGISTRY
from pbj.loader.pickling import REGISTRY_MODULE
from pbj.loader.pickling import _restore_enum as _restore_enum
from pbj.loader.pickling import _restore_message as _restore_message
from pbj.loader.protoc import load_proto

__all__ = ["Namespace", "load_descriptor_set", "load_proto", "REGISTRY_MODULE"]

