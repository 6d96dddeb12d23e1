"""The codec compiler: builds, on first use, the specialised functions of a message class.

``compile_class(cls)`` resolves the class's schema and compiles, in *batches*,
the class and every message class it reaches that has no codec yet, split
into groups of mutually recursive classes (:func:`recursion_groups`), each
compiled after the groups it refers to. For the
batch it builds the plan (:mod:`pbj.codec.plan`), has the emitters turn each
class's plan into source (:mod:`pbj.codec.forward`, :mod:`pbj.codec.reverse`,
:mod:`pbj.codec.parse`), compiles that source into a namespace of the batch's
own (:mod:`pbj.codec.source`) and stores a :class:`Codec` on each class
(``cls.__pbj_codec__``).

Lifetime: nothing process-wide refers to a batch. Its namespace lives as long
as any of its classes (through their codecs); when they are all collected,
the namespace and its linecache entries go too. A batch is a recursion group
rather than everything one call reaches because a namespace keeps all its
classes alive: a long-lived class (a well-known type) compiled together with
the classes of a loaded schema would keep that schema alive forever.

Threads and re-entrancy: batches are compiled under one lock, so a class is
compiled once even when several threads use it first at the same moment. A
compile started on a thread that is already compiling (a signal handler
that encodes or decodes a class not compiled yet, interrupting the first
compile) raises ``RuntimeError`` instead of starting over.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pbj.codec import extensions as _extensions
from pbj.codec.plan import BatchPlan, MessagePlan, build_batch
from pbj.schema import MessageInfo, resolve

if TYPE_CHECKING:
    from pbj.codec.emit import Emit
    from pbj.codec.source import Scope

__all__ = ["Codec", "compile_class", "codec_of", "source_of", "emit_class", "emit_batch", "emit_plan", "reachable",
           "register_engine"]

_ROLES = ("size", "write", "write_fresh", "write_reverse", "parse")
_lock = threading.RLock()
_state = threading.local()


#: An engine's adopter: called with each finished batch plan and the batch's codecs (see :func:`register_engine`).
Adopter = Callable[[BatchPlan, "list[Codec]"], None]
_adopters: list[Adopter] = []


def register_engine(adopt: Adopter) -> None:
    """Hand every batch plan finished from now on to ``adopt`` (an engine's entry point).

    The compiler knows no engine: an engine (``pbj._native``) registers here when it is
    imported, and each batch's plan is given to it as soon as it is built, before any Python
    source exists. ``adopt(batch, codecs)`` may set ``codec.native`` on any of ``codecs``
    (``codecs[i]`` is the codec of ``batch.messages[i]``); it must not raise.
    """
    if adopt not in _adopters:
        _adopters.append(adopt)


class Codec:
    """The codec of one message class (its ``__pbj_codec__``): its plan, its native form, and the
    functions of the pure-Python engine.

    The Python functions are made on the first call of one of them, for the whole batch the
    class was compiled with and one *part* at a time (:data:`PARTS`: the forward writer's
    three functions, the reverse writer, the parser): a first encode compiles no parser, a
    first decode no writer. With the native engine in use they are only made when the
    pure-Python engine is needed (an error to explain, an input the native engine declines,
    ``pbj.source_of``). Reading ``source`` or ``filename`` makes every part.

    Attributes:
        plan: the class's :class:`~pbj.codec.plan.MessagePlan`.
        native: the class's plan in the native engine's form (:mod:`pbj._native`),
            or ``None`` when the engine is not built or declines the class.
        size: ``size(o) -> int`` (caches the size on ``o``).
        write: ``write(o, ap) -> None`` (forward writer; sizes must be cached).
        write_fresh: ``write_fresh(o, parts, ap) -> int`` (forward writer in one pass:
            needs no cached size, caches every size it learns, returns the size of ``o``).
        write_reverse: ``write_reverse(o, rb, pos) -> pos``.
        parse: ``parse(data, pos, end, depth, more, group=0) -> obj``.
        name: the stem of the generated functions' names.
        source: the class's generated source, as compiled.
        filename: the linecache name the source is registered under.
    """

    __slots__ = ("_name", "_python", "native", "parse", "plan", "size", "write", "write_fresh", "write_reverse")

    size: Callable[..., int]
    write: Callable[..., None]
    write_fresh: Callable[..., int]
    write_reverse: Callable[..., int]
    parse: Callable[..., Any]

    def __init__(self, plan: MessagePlan, python: _PythonCode) -> None:
        self.plan = plan
        self.native: Any = None
        self._python: _PythonCode = python
        self._name = ""
        # until a part of the batch's Python code exists, each role is a stand-in that makes it, then
        # runs it (plain slots, no __getattr__: reading a codec's attributes stays the interpreter's fast path)
        for role in _ROLES:
            setattr(self, role, _stand_in(self, role))

    @property
    def has_python_code(self) -> bool:
        """Whether some of the pure-Python engine's functions of this class exist yet (made on first need)."""
        return bool(self._python.made)

    def _made(self, part: int | None = None) -> Codec:
        """Make part ``part`` of :data:`PARTS` of the Python code (every part: ``None``), once; returns ``self``."""
        self._python.make(part)
        return self

    @property
    def name(self) -> str:
        """The stem of the generated functions' names (makes the Python code if needed)."""
        return self._made()._name

    @property
    def source(self) -> str:
        """The class's generated source, as compiled (makes every part of the Python code if needed)."""
        self._made()
        return self._python.source(self.plan.idx)

    @property
    def filename(self) -> str:
        """The linecache name the source is registered under (makes the Python code if needed)."""
        self._made()
        return self._python.files[self.plan.idx][0]


#: The parts of a class's Python code, each emitted and compiled on its first need, in source order:
#: the forward writer (``size``, ``write``, ``write_fresh``), the reverse writer, the parser.
PARTS: tuple[tuple[str, ...], ...] = (("size", "write", "write_fresh"), ("write_reverse",), ("parse",))
_PART_OF = {role: k for k, roles in enumerate(PARTS) for role in roles}


def _stand_in(codec: Codec, role: str) -> Callable[..., Any]:
    part = _PART_OF[role]

    def make_then_run(*args: Any, **kwargs: Any) -> Any:
        return getattr(codec._made(part), role)(*args, **kwargs)
    make_then_run.__qualname__ = f"make_python_code_then_{role}"
    return make_then_run


class _PythonCode:
    """The pure-Python engine's code of one batch, emitted and compiled one part at a time on first need.

    The parts are emitted in source order (so a class's source and its generated names are the same
    whichever part is needed first) and each is compiled when first needed, under its class's
    linecache name, at the lines it has in the class's source.
    """

    __slots__ = ("batch", "codecs", "ctx", "emitted", "files", "made", "owner")

    def __init__(self, batch: BatchPlan) -> None:
        self.batch = batch
        self.codecs: list[Codec] = []
        self.ctx: Emit | None = None
        self.emitted: list[list[str]] = []  # emitted[part][i]: the text of that part of batch.messages[i]
        self.made: set[int] = set()
        self.files: list[list[Any]] = []  # per class: [linecache name, entry]
        self.owner: Any = None

    def source(self, i: int) -> str:
        """The source of ``batch.messages[i]``: the text of its parts emitted so far, in order."""
        if len(self.made) == len(PARTS):
            return "".join(self.files[i][1][2])  # every part compiled: the lines registered in linecache
        return "\n".join(texts[i] for texts in self.emitted)

    def make(self, part: int | None = None) -> None:
        """Emit and compile part ``part`` of :data:`PARTS` (all parts: ``None``) of the batch, once,
        after the same part of the batches it refers to."""
        with _lock:
            for k in (range(len(PARTS)) if part is None else (part,)):
                if k not in self.made:
                    self._make(k)

    def _make(self, part: int) -> None:
        messages = self.batch.messages
        for c in self.batch.classes[len(messages):]:  # earlier batches first
            codec = c.__dict__.get("__pbj_codec__")
            if codec is not None:
                codec._python.make(part)
        if getattr(_state, "compiling", None) is not None:
            raise RuntimeError(
                f"pbj cannot compile the Python code of {messages[0].cls.__qualname__} while this "
                f"thread is compiling that of {_state.compiling} (a signal handler interrupted it?); use each "
                "class once (or call pbj.source_of(cls)) before installing the handler")
        try:  # set inside the try: an interrupt right after it must not leave the thread marked
            _state.compiling = messages[0].cls.__qualname__
            self._compile(part)
        finally:
            _state.compiling = None
        self.made.add(part)
        if len(self.made) == len(PARTS):
            # the emission's state (names taken, constants' keys) is not needed any more, and the
            # source is the text registered in linecache
            self.ctx = None
            self.emitted = []

    def _compile(self, part: int) -> None:
        from pbj.codec.source import Batch, register_lines
        if self.ctx is None:
            self.ctx = _emission(self.batch)
            self.owner = Batch(self.files)
            self.ctx.scope.values["__pbj_batch__"] = self.owner
        ctx = self.ctx
        scope, stems = ctx.scope, ctx.stems
        messages = self.batch.messages
        for i in range(len(messages), len(self.batch.classes)):  # earlier batches' functions, made above
            codec = self.batch.classes[i].__dict__.get("__pbj_codec__")
            if codec is not None:
                for role in PARTS[part]:
                    scope.bind(f"{role}_{stems[i]}", getattr(codec, role))
        while len(self.emitted) <= part:  # every part before this one is emitted first: same names whatever the order
            emit = _PART_EMITTERS[len(self.emitted)]
            self.emitted.append([emit(ctx, mp) for mp in messages])
        namespace = scope.values
        for mp, codec in zip(messages, self.codecs, strict=True):
            i = mp.idx
            lines = sum(texts[i].count("\n") + 1 for texts in self.emitted[:part])  # + 1: the blank line between
            text = self.source(i)
            if len(self.files) <= i:
                cls = mp.cls
                filename, entry = register_lines(f"{cls.__module__}.{cls.__qualname__}", text)
                self.files.append([filename, entry])
            else:
                self.files[i][1] = register_lines(self.files[i][0], text, replace=self.files[i][1])[1]
            exec(compile("\n" * lines + self.emitted[part][i], self.files[i][0], "exec"), namespace)
            name = stems[i]
            codec._name = name
            for role in PARTS[part]:
                setattr(codec, role, namespace[f"{role}_{name}"])


def reachable(cls: type, compiled_stop: bool = True) -> list[MessageInfo]:
    """Every message class reachable from ``cls``, resolved, ``cls`` first.

    Args:
        cls: a message class.
        compiled_stop: skip (and do not go through) classes that have a codec already.
    """
    out: list[MessageInfo] = []
    seen: set[type] = set()
    stack = [cls]
    while stack:
        c = stack.pop()
        if c in seen or (compiled_stop and c.__dict__.get("__pbj_codec__") is not None):
            continue
        seen.add(c)
        mi = resolve(c)
        out.append(mi)
        for f in mi.all_fields():
            for t in (f.type, f.map_value):
                if isinstance(t, type) and hasattr(t, "__pbj_info__"):
                    stack.append(t)
    return out


def _refs(mi: MessageInfo) -> list[type]:
    out = []
    for f in mi.all_fields():
        for t in (f.type, f.map_value):
            if isinstance(t, type) and hasattr(t, "__pbj_info__"):
                out.append(t)
    return out


def recursion_groups(infos: list[MessageInfo]) -> list[list[MessageInfo]]:
    """``infos`` split into groups of mutually recursive classes, each after those it refers to.

    The strongly connected components of the "field refers to" graph
    (Tarjan's algorithm, without recursion), in the order it finds them,
    which is dependencies first.
    """
    by_cls = {mi.cls: mi for mi in infos}
    index: dict[type, int] = {}
    low: dict[type, int] = {}
    on_stack: set[type] = set()
    stack: list[type] = []
    groups: list[list[MessageInfo]] = []
    for root in by_cls:
        if root in index:
            continue
        work = [(root, iter([t for t in _refs(by_cls[root]) if t in by_cls]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter([t for t in _refs(by_cls[child]) if t in by_cls])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    c = stack.pop()
                    on_stack.discard(c)
                    group.append(by_cls[c])
                    if c is node:
                        break
                group.reverse()
                groups.append(group)
    return groups


def emit_class(ctx: Emit, plan: MessagePlan) -> str:
    """The whole generated source of one class: forward writer, reverse writer, parser."""
    return "\n".join(emit(ctx, plan) for emit in _PART_EMITTERS)


def emit_batch(infos: list[MessageInfo]) -> tuple[BatchPlan, Scope, list[str], list[str]]:
    """Plan and emit a batch without compiling it.

    Returns:
        ``(plan, scope, stems, texts)``: the batch plan, its namespace being
        built, the name stem of every class of ``plan.classes`` and the
        source of each class of ``plan.messages``. Classes outside the batch
        are bound to their compiled functions when they have them.
    """
    batch = build_batch(infos)
    return (batch, *emit_plan(batch))


def _emission(batch: BatchPlan) -> Emit:
    """The emission of a batch, names allocated, nothing emitted yet.

    The emitters and the generated code's helpers are imported here, on the first need of the
    pure-Python engine's code: the native engine runs without them.
    """
    from pbj.codec.emit import Emit
    from pbj.codec.runtime import HELPERS
    from pbj.codec.source import Scope
    scope = Scope(HELPERS)
    scope.values["__name__"] = "pbj.codec.generated"
    scope.name("__pbj_batch__")
    stems: list[str] = []
    for c in batch.classes:
        stems.append(scope.names(*(f"{r}_" for r in _ROLES), stem=c.__name__))
    return Emit(batch, scope, stems)


def emit_plan(batch: BatchPlan) -> tuple[Scope, list[str], list[str]]:
    """Emit the source of a batch plan: ``(scope, stems, texts)`` as :func:`emit_batch` returns them.

    The parts are emitted in the order the compiler emits them (each part of every class, part
    after part), so the texts are those the compiled classes' ``source`` gives.
    """
    ctx = _emission(batch)
    for i, c in enumerate(batch.classes[len(batch.messages):], len(batch.messages)):
        codec = c.__dict__.get("__pbj_codec__")
        if codec is not None:
            for role in _ROLES:
                ctx.scope.bind(f"{role}_{ctx.stems[i]}", getattr(codec, role))
    parts = [[emit(ctx, mp) for mp in batch.messages] for emit in _PART_EMITTERS]
    return ctx.scope, ctx.stems, ["\n".join(texts) for texts in zip(*parts, strict=True)]


def _emit_forward(ctx: Emit, plan: MessagePlan) -> str:
    from pbj.codec.forward import emit_forward
    return emit_forward(ctx, plan)


def _emit_reverse(ctx: Emit, plan: MessagePlan) -> str:
    from pbj.codec.reverse import emit_reverse
    return emit_reverse(ctx, plan)


def _emit_parse(ctx: Emit, plan: MessagePlan) -> str:
    from pbj.codec.parse import emit_parse
    return emit_parse(ctx, plan)


#: The emitter of each of :data:`PARTS`.
_PART_EMITTERS = (_emit_forward, _emit_reverse, _emit_parse)


def _compile_batch(infos: list[MessageInfo]) -> list[Codec]:
    batch = build_batch(infos)
    python = _PythonCode(batch)
    codecs = [Codec(mp, python) for mp in batch.messages]
    python.codecs = codecs
    for adopt in _adopters:
        adopt(batch, codecs)  # each registered engine's own form of the plans
    return codecs


def compile_class(cls: type) -> Codec:
    """Compile (once) the codec of ``cls`` and of every class it reaches.

    Returns:
        The class's :class:`Codec`, also stored as ``cls.__pbj_codec__``.

    Raises:
        SchemaError: a forward reference cannot be resolved or names a wrong type.
        RuntimeError: called while this thread is compiling already (from a
            signal handler that interrupted a compile).
    """
    with _lock:
        codec = cls.__dict__.get("__pbj_codec__")
        if codec is not None:
            return codec
        if getattr(_state, "compiling", None) is not None:
            raise RuntimeError(
                f"pbj cannot compile the codec of {cls.__qualname__} while this thread is compiling "
                f"the codec of {_state.compiling} (a signal handler interrupted it?); use each class "
                "once (or call pbj.source_of(cls)) before installing the handler")
        try:  # set inside the try: an interrupt right after it must not leave the thread marked
            _state.compiling = cls.__qualname__
            for group in recursion_groups(reachable(cls)):
                codecs = _compile_batch(group)
                for mi, c in zip(group, codecs, strict=True):
                    mi.cls.__pbj_codec__ = c
        finally:
            _state.compiling = None
        codec = cls.__dict__["__pbj_codec__"]
        return codec


def codec_of(cls: type) -> Codec:
    """The codec of a message class, compiling it on first use."""
    codec = cls.__pbj_codec__  # type: ignore[attr-defined]  # a plain class attribute read: no mappingproxy or bound method allocated
    return codec if codec is not None else compile_class(cls)


_extensions.use_compiler(codec_of)  # what generated code calls for extensions compiles holders with it


def source_of(cls: Any) -> str:
    """The generated source of a message class or instance (compiling it if needed).

    Returns:
        The text compiled for the class: its forward writer (``size_<Name>``,
        ``write_<Name>``), reverse writer (``write_reverse_<Name>``) and parser
        (``parse_<Name>``), with a comment naming the field each part serves.

    Raises:
        TypeError: ``cls`` is not a pbj message class or instance.
        SchemaError: as for the first encode or decode.
    """
    if not isinstance(cls, type):
        cls = type(cls)
    if getattr(cls, "__pbj_info__", None) is None:
        raise TypeError(f"{cls!r} is not a pbj message class")
    return codec_of(cls).source
