"""Editions features of every field, enum and message of a schema: :func:`resolve`.

Implements protobuf.dev "Feature Settings for Editions" (and "Protobuf
Editions Overview", section "Lifecycle of a Feature"; the legacy sets of
"Preserving proto2 or proto3 Behavior") for the six features of
``google.protobuf.FeatureSet`` that change the encoding, the API or JSON:
``field_presence``, ``enum_type``, ``repeated_field_encoding``,
``utf8_validation``, ``message_encoding`` and ``json_format``.

How a feature is resolved, for one element:

1. the file's edition gives the defaults (:data:`EDITION_DEFAULTS`); a
   proto2 or proto3 file is the legacy edition ``EDITION_PROTO2`` or
   ``EDITION_PROTO3``, whose features cannot be changed in the file;
2. each enclosing element that sets a feature overrides it, outermost first:
   file -> message -> nested message -> oneof -> field (extensions: the scope
   they are declared in), file -> message -> enum -> enum value;
3. in proto2 and proto3 files the legacy syntax says what a feature would
   say: ``required`` is ``LEGACY_REQUIRED``, a group is ``DELIMITED``,
   ``[packed = true]`` is ``PACKED`` and proto3's ``[packed = false]`` is
   ``EXPANDED`` (Google's ``InferLegacyProtoFeatures`` does the same).

The result, :class:`Features`, is the same six values Google's descriptors
give (``FieldDescriptor._GetFeatures()``). What a runtime does with a field
also depends on the field itself, so each field gets a :class:`FieldFeatures`
whose values are the ones that apply to it: a repeated field has no presence
(``IMPLICIT``); a message field, a oneof member (proto3 ``optional`` ones
included), and an extension always have explicit presence; only a repeated
scalar can be ``PACKED``; only a message field that is not a map can be
``DELIMITED``; only a string can be ``VERIFY``.

A schema that breaks protoc's rules (:mod:`pbj.feature_rules`) raises
:class:`pbj.SchemaError` naming the file, the message and the field. A
``TYPE_GROUP`` field in an editions file (protoc writes ``TYPE_MESSAGE`` with
``DELIMITED``; other tools may not) is ``DELIMITED``, as upb reads it.

The module is pure: it reads the descriptors :mod:`pbj.descriptor` decodes
and does not import Google's protobuf.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any, NamedTuple, NoReturn

from pbj.errors import SchemaError
from pbj.feature_enums import (
    EnumType,
    FieldPresence,
    JsonFormat,
    MessageEncoding,
    RepeatedFieldEncoding,
    Utf8Validation,
)
from pbj.feature_rules import (
    NOT_PACKABLE,
    editions_field_error,
    packed_option_error,
    presence_error,
    proto3_field_error,
    target_error,
)

__all__ = ["Features", "FieldFeatures", "EnumFeatures", "MessageFeatures", "Resolution", "resolve",
           "EDITION_DEFAULTS", "edition_of"]

_EXPLICIT, _IMPLICIT, _REQUIRED = FieldPresence.EXPLICIT, FieldPresence.IMPLICIT, FieldPresence.LEGACY_REQUIRED
_OPEN, _CLOSED = EnumType.OPEN, EnumType.CLOSED
_PACKED, _EXPANDED = RepeatedFieldEncoding.PACKED, RepeatedFieldEncoding.EXPANDED
_VERIFY, _NO_UTF8 = Utf8Validation.VERIFY, Utf8Validation.NONE
_PREFIXED, _DELIMITED = MessageEncoding.LENGTH_PREFIXED, MessageEncoding.DELIMITED
_ALLOW, _BEST_EFFORT = JsonFormat.ALLOW, JsonFormat.LEGACY_BEST_EFFORT

# FieldDescriptorProto.Type and .Label numbers (descriptor.proto).
_GROUP, _MESSAGE, _STRING, _ENUM = 10, 11, 9, 14
_LABEL_REQUIRED, _LABEL_REPEATED = 2, 3
# Edition numbers (descriptor.proto ``Edition``).
PROTO2, PROTO3, E2023, E2024, E2026, UNSTABLE = 998, 999, 1000, 1001, 1002, 9999


class Features(NamedTuple):
    """The six features of one element, every one resolved (``google.protobuf.FeatureSet``)."""

    field_presence: FieldPresence
    enum_type: EnumType
    repeated_field_encoding: RepeatedFieldEncoding
    utf8_validation: Utf8Validation
    message_encoding: MessageEncoding
    json_format: JsonFormat


_NAMES = Features._fields
_KINDS: tuple[type[enum.IntEnum], ...] = (FieldPresence, EnumType, RepeatedFieldEncoding, Utf8Validation,
                                          MessageEncoding, JsonFormat)

#: Defaults of each edition, from descriptor.proto's ``edition_defaults`` of each feature
#: ("Feature Settings for Editions", the "Default behavior" of each feature): proto2 is
#: ``EDITION_LEGACY``'s set, proto3 ``EDITION_PROTO3``'s; 2023 and later change none of the six.
EDITION_DEFAULTS: dict[int, Features] = {
    PROTO2: Features(_EXPLICIT, _CLOSED, _EXPANDED, _NO_UTF8, _PREFIXED, _BEST_EFFORT),
    PROTO3: Features(_IMPLICIT, _OPEN, _PACKED, _VERIFY, _PREFIXED, _ALLOW),
    E2023: Features(_EXPLICIT, _OPEN, _PACKED, _VERIFY, _PREFIXED, _ALLOW),
}
for _e in (E2024, E2026, UNSTABLE):
    EDITION_DEFAULTS[_e] = EDITION_DEFAULTS[E2023]



class FieldFeatures(NamedTuple):
    """What the features of one field (or extension) mean for it.

    Attributes:
        full_name: ``pkg.Message.field`` (an extension: its scope and name).
        features: the resolved :class:`Features` of the field, as Google's
            descriptors give them.
        field_presence: ``IMPLICIT`` (no presence: repeated fields, maps,
            implicit scalars), ``EXPLICIT`` or ``LEGACY_REQUIRED``.
        enum_type: ``OPEN`` or ``CLOSED`` (the field's enum), ``None`` when
            the field is not of an enum type.
        repeated_field_encoding: ``PACKED`` for a packed repeated scalar,
            else ``EXPANDED``.
        utf8_validation: ``VERIFY`` when the field's strings (a map's key or
            value too) must be valid UTF-8, else ``NONE``.
        message_encoding: ``DELIMITED`` for the group encoding, else
            ``LENGTH_PREFIXED``.
        json_format: the containing message's ``json_format``.
    """

    full_name: str
    features: Features
    field_presence: FieldPresence
    enum_type: EnumType | None
    repeated_field_encoding: RepeatedFieldEncoding
    utf8_validation: Utf8Validation
    message_encoding: MessageEncoding
    json_format: JsonFormat

    @property
    def has_presence(self) -> bool:
        """Whether the field tracks presence (Google's ``FieldDescriptor.has_presence``)."""
        return self.field_presence != _IMPLICIT

    @property
    def required(self) -> bool:
        """Whether the field is required (``LEGACY_REQUIRED``)."""
        return self.field_presence == _REQUIRED

    @property
    def packed(self) -> bool:
        """Whether the field is written packed (Google's ``FieldDescriptor.is_packed``)."""
        return self.repeated_field_encoding == _PACKED

    @property
    def delimited(self) -> bool:
        """Whether the field uses the group encoding (Google's ``type == TYPE_GROUP``)."""
        return self.message_encoding == _DELIMITED


class EnumFeatures(NamedTuple):
    """The features of one enum: ``enum_type`` (``closed``) and ``json_format``."""

    full_name: str
    features: Features
    enum_type: EnumType
    json_format: JsonFormat

    @property
    def closed(self) -> bool:
        """Whether the enum is closed (Google's ``EnumDescriptor.is_closed``)."""
        return self.enum_type == _CLOSED


class MessageFeatures(NamedTuple):
    """The features of one message; ``json_format`` is the one that applies to it."""

    full_name: str
    features: Features
    json_format: JsonFormat


class Resolution(NamedTuple):
    """The resolved features of every element of a set of files, by full name.

    Attributes:
        fields: ``pkg.Msg.field`` (and every extension) -> :class:`FieldFeatures`;
            map-entry messages' ``key`` and ``value`` fields included.
        messages: ``pkg.Msg`` -> :class:`MessageFeatures` (map entries included).
        enums: ``pkg.Enum`` -> :class:`EnumFeatures`.
        enum_values: ``pkg.Enum.VALUE`` (the enum's full name, then the
            value's name) -> :class:`Features`.
        oneofs: ``pkg.Msg.oneof`` -> :class:`Features` (synthetic ones included).
        files: file name -> (its edition number, its :class:`Features`).
    """

    fields: dict[str, FieldFeatures]
    messages: dict[str, MessageFeatures]
    enums: dict[str, EnumFeatures]
    enum_values: dict[str, Features]
    oneofs: dict[str, Features]
    files: dict[str, tuple[int, Features]]


def edition_of(fd: Any) -> int:
    """The edition number of a ``FileDescriptorProto`` (998 proto2, 999 proto3, 1000 2023 …).

    Raises:
        SchemaError: an unknown ``syntax``, an ``"editions"`` file without an
            edition, or an edition without defaults (before proto2, after 2026,
            other than ``EDITION_UNSTABLE``).
    """
    syntax = fd.syntax or "proto2"
    if syntax == "proto2":
        return PROTO2
    if syntax == "proto3":
        return PROTO3
    if syntax != "editions":
        raise SchemaError(f"unknown syntax {syntax!r} (in {fd.name})", cls_name=fd.name)
    edition = fd.edition
    if edition is None:
        raise SchemaError(f"an editions file has no edition (in {fd.name})", cls_name=fd.name)
    if int(edition) not in EDITION_DEFAULTS or int(edition) in (PROTO2, PROTO3):
        raise SchemaError(f"edition {int(edition)} is not supported: pbj knows 2023, 2024, 2026 and "
                          f"UNSTABLE (in {fd.name})", cls_name=fd.name)
    return int(edition)


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


class _Resolver:
    """One pass over a set of files; see :func:`resolve`.

    ``defines`` (full name -> whether the schema has a message or enum of that name) lets a
    relative type name be resolved before every file is added: a load resolves the files of the
    classes it builds only (:class:`pbj.loader.features.LazyFeatures`).
    """

    def __init__(self, defines: Any = None) -> None:
        self.defines = defines
        self.fields: dict[str, FieldFeatures] = {}
        self.messages: dict[str, MessageFeatures] = {}
        self.enums: dict[str, EnumFeatures] = {}
        self.enum_values: dict[str, Features] = {}
        self.oneofs: dict[str, Features] = {}
        self.files: dict[str, tuple[int, Features]] = {}
        self.map_entries: dict[str, Any] = {}  # full name -> DescriptorProto
        self.enum_first: dict[str, int | None] = {}  # enum full name -> the number of its first value
        self.pending: list[tuple] = []  # fields, resolved once every enum and message is known
        self.pending_of: dict[str, list[tuple]] = {}  # the same, by file name
        self.file = ""
        self.legacy = False

    # -- merging

    def merge(self, parent: Features, options: Any, kind: str, owner: str, name: str | None = None) -> Features:
        """``parent`` overridden by the features ``options`` sets (checked against ``kind``'s targets)."""
        fs = options.features if options is not None else None
        if fs is None:
            return parent
        values = [getattr(fs, n) for n in _NAMES]
        if all(v is None for v in values):
            return parent
        if self.legacy:
            self.fail("Features are only valid under editions.", owner, name)
        out: list[int] = list(parent)  # each an IntEnum member, or 0 for a value no member names
        for i, v in enumerate(values):
            if v is None:
                continue
            self.check(target_error(_NAMES[i], kind), owner, name)
            try:
                out[i] = _KINDS[i](v)
            except ValueError:
                out[i] = 0
            if out[i] == 0:
                self.fail(f"Feature field `{_NAMES[i]}` must resolve to a known value, found {int(v)}.", owner, name)
        return Features._make(out)

    def fail(self, text: str, owner: str, name: str | None = None) -> NoReturn:
        raise SchemaError(f"{text} (in {self.file})", cls_name=owner or self.file, field_name=name)

    def check(self, error: str | None, owner: str, name: str | None = None) -> None:
        if error is not None:
            self.fail(error, owner, name)

    # -- walking

    def add_file(self, fd: Any) -> None:
        self.file = fd.name or "<unnamed file>"
        edition = edition_of(fd)
        self.legacy = edition in (PROTO2, PROTO3)
        feats = self.merge(EDITION_DEFAULTS[edition], fd.options, "file", "")
        if fd.options is not None and fd.options.features is not None and \
                fd.options.features.field_presence == _REQUIRED:
            self.fail("Required presence can't be specified by default.", "")
        self.files[self.file] = (edition, feats)
        package = fd.package or ""
        for ed in fd.enum_type:
            self.add_enum(ed, package, feats)
        for md in fd.message_type:
            self.add_message(md, package, feats, edition)
        for ext in fd.extension:
            self.defer((ext, package, feats, edition, self.file, None, True))
        for sd in fd.service:
            self.merge(feats, sd.options, "service", _join(package, sd.name or ""))
            for m in sd.method:
                self.merge(feats, m.options, "method", _join(package, sd.name or ""), m.name)

    def add_enum(self, ed: Any, scope: str, parent: Features) -> None:
        full = _join(scope, ed.name or "")
        feats = self.merge(parent, ed.options, "enum", full)
        self.enums[full] = EnumFeatures(full, feats, feats.enum_type, feats.json_format)
        for v in ed.value:
            self.enum_values[_join(full, v.name or "")] = self.merge(feats, v.options, "enum entry", full, v.name)
        self.enum_first[full] = ed.value[0].number if ed.value else None
        if feats.enum_type == _OPEN and ed.value and ed.value[0].number != 0:
            self.fail("The first enum value must be zero for open enums.", full, ed.value[0].name)

    def add_message(self, md: Any, scope: str, parent: Features, edition: int) -> None:
        full = _join(scope, md.name or "")
        feats = self.merge(parent, md.options, "message", full)
        self.messages[full] = MessageFeatures(full, feats, feats.json_format)
        if md.options is not None and md.options.map_entry:
            self.map_entries[full] = md
        for ed in md.enum_type:
            self.add_enum(ed, full, feats)
        for nd in md.nested_type:
            self.add_message(nd, full, feats, edition)
        oneofs = []
        for i, od in enumerate(md.oneof_decl):
            of = self.merge(feats, od.options, "oneof", full, od.name)
            self.oneofs[_join(full, od.name or f"oneof_{i}")] = of
            oneofs.append(of)
        for r in md.extension_range:
            self.merge(feats, r.options, "extension range", full)
        for fdp in md.field:
            idx = fdp.oneof_index
            if idx is not None and not 0 <= idx < len(oneofs):
                self.fail(f"oneof_index {idx} is out of range.", full, fdp.name)
            self.defer((fdp, full, feats if idx is None else oneofs[idx], edition, self.file, md, False))
        for ext in md.extension:
            self.defer((ext, full, feats, edition, self.file, md, True))

    def defer(self, item: tuple) -> None:
        """Keep a field for :meth:`add_field`, once every enum it may use is known."""
        self.pending.append(item)
        self.pending_of.setdefault(self.file, []).append(item)

    # -- fields

    def target(self, fdp: Any, scope: str) -> tuple[str | None, int | None]:
        """(the full name of the field's message or enum type, its type number) or (None, type)."""
        t = fdp.type
        name = fdp.type_name
        if not name:
            return None, t
        if name.startswith("."):
            full = name[1:]
        else:  # a relative name (not written by protoc): search the enclosing scopes
            full, s = None, scope
            while full is None:
                cand = _join(s, name)
                known = (cand in self.defines) if self.defines is not None else \
                    (cand in self.messages or cand in self.enums)
                if known:
                    full = cand
                elif not s:
                    full = name
                else:
                    s = s.rpartition(".")[0]
        if t is None:
            t = _ENUM if full in self.enums else _MESSAGE
        return full, t

    def add_field(self, fdp: Any, scope: str, parent: Features, edition: int, file: str, md: Any,
                  is_ext: bool) -> None:
        self.file = file
        self.legacy = edition in (PROTO2, PROTO3)
        name = fdp.name or f"field_{fdp.number}"
        owner = scope
        target, t = self.target(fdp, scope)
        feats = self.merge(parent, fdp.options, "extension" if is_ext else "field", owner, name)
        repeated = fdp.label == _LABEL_REPEATED
        in_oneof = fdp.oneof_index is not None
        is_message = t in (_MESSAGE, _GROUP)
        in_entry = md is not None and scope in self.map_entries
        is_map = repeated and t == _MESSAGE and target in self.map_entries
        enum_feats = self.enums.get(target) if t == _ENUM and target is not None else None
        if t == _ENUM and enum_feats is None:
            self.fail(f"unknown enum type {fdp.type_name!r}.", owner, name)
        closed = enum_feats is not None and enum_feats.closed
        if self.legacy:
            feats = self.legacy_field(fdp, feats, edition, t, repeated, enum_feats if closed else None, owner, name)
        else:
            own = fdp.options.features if fdp.options is not None else None
            self.check(editions_field_error(fdp, own, t, repeated, in_oneof, is_ext, is_map, in_entry), owner, name)
        # What applies to this field ("Field Presence", "Encoding": packed and groups).
        if repeated:
            presence = _IMPLICIT
        elif feats.field_presence == _REQUIRED:
            presence = _REQUIRED
        elif is_message or in_oneof or is_ext or fdp.proto3_optional:
            presence = _EXPLICIT
        else:
            presence = feats.field_presence
        first = self.enum_first.get(target) if in_entry and enum_feats is not None and target is not None else None
        self.check(presence_error(presence, repeated, closed, fdp.default_value is not None, is_ext, first),
                   owner, name)
        packed = repeated and t not in NOT_PACKABLE and feats.repeated_field_encoding == _PACKED
        if t == _STRING:
            utf8 = feats.utf8_validation
        elif is_map and target is not None:  # is_map: target names a map entry
            entry = self.map_entries[target]
            utf8 = feats.utf8_validation if any(f.type == _STRING for f in entry.field) else _NO_UTF8
        else:
            utf8 = _NO_UTF8
        delimited = (t == _GROUP or (is_message and feats.message_encoding == _DELIMITED)) and not is_map \
            and not (in_entry or target in self.map_entries)
        full = _join(scope, name)
        self.fields[full] = FieldFeatures(
            full, feats, presence, enum_feats.enum_type if enum_feats is not None else None,
            _PACKED if packed else _EXPANDED, utf8, _DELIMITED if delimited else _PREFIXED, feats.json_format)

    def legacy_field(self, fdp: Any, feats: Features, edition: int, t: int | None, repeated: bool,
                     closed_enum: EnumFeatures | None, owner: str, name: str) -> Features:
        """The features proto2/proto3 syntax implies for a field ("Preserving proto2 or proto3 Behavior")."""
        packed = fdp.options.packed if fdp.options is not None else None
        if edition == PROTO3:
            self.check(proto3_field_error(fdp, t, closed_enum.full_name if closed_enum else None, owner), owner, name)
        self.check(packed_option_error(packed, repeated, t), owner, name)
        changes: dict[str, Any] = {}  # Features field name -> its new value
        if fdp.label == _LABEL_REQUIRED:
            changes["field_presence"] = _REQUIRED
        if t == _GROUP:
            changes["message_encoding"] = _DELIMITED
        if packed:
            changes["repeated_field_encoding"] = _PACKED
        elif packed is not None and edition == PROTO3:
            changes["repeated_field_encoding"] = _EXPANDED
        return feats._replace(**changes) if changes else feats


def resolve(files: Iterable[Any] | Any) -> Resolution:
    """Resolve the features of every element of a set of ``.proto`` files.

    Implements protobuf.dev "Feature Settings for Editions" (see the module
    docstring for the order of inheritance and the legacy sets of proto2 and
    proto3).

    Args:
        files: the decoded ``FileDescriptorProto`` objects of a schema
            (:mod:`pbj.descriptor`), imports included, or a decoded
            ``FileDescriptorSet``. Enums a field uses must be among them.

    Returns:
        A :class:`Resolution`.

    Raises:
        SchemaError: naming the file, the message (or enum) and the field (or
            oneof, enum value) at fault, with protoc's text: an unknown syntax
            or edition; features in a proto2/proto3 file; a feature set where
            descriptor.proto's ``targets`` exclude it, or to an unknown value;
            ``LEGACY_REQUIRED`` as a file default; a field that breaks a rule
            of :mod:`pbj.feature_rules` (editions: ``[packed]``, the
            ``required`` label, features that cannot apply to the field;
            proto3: ``required``, groups, defaults, closed enums; implicit
            presence with a default or a closed enum; required extensions;
            ``[packed = true]`` on a non-scalar); an open enum (or a map
            value's enum) whose first value is not zero; an enum type that
            is not in ``files``.
    """
    files = getattr(files, "file", files)
    r = _Resolver()
    for fd in files:
        r.add_file(fd)
    for item in r.pending:
        r.add_field(*item)
    return Resolution(r.fields, r.messages, r.enums, r.enum_values, r.oneofs, r.files)
