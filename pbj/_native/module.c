/* module.c: the pbj._native._engine extension module.
 *
 * Functions (all used by pbj only, through pbj/_native/__init__.py and pbj.api):
 *   build(messages, externals) -> [capsule | None]   plan.c
 *   decode(plan, data, max_depth) -> obj | None       decode.c (raises the DecodeError of refused input)
 *   encode(plan, obj) -> bytes | None                 encode.c
 *   write_reverse(plan, obj, buf, pos) -> pos | None  reverse.c
 *   arrow_plan(nodes, classes), arrow_decode(plan, payloads, max_depth) -> arrow_array capsule | None   arrow.c
 *   count_values(plan, data, max_depth) -> {(class, field name): count}  count.c (the example sink)
 *   setup(FrozenMap, OneOf, EMPTY_MAP, DecodeError, layout)  the containers decoded values use, the
 *                                                     error of a refused input; the codes and record
 *                                                     sizes Python sends (checked)
 *   entry_points(...) -> (decode, encode, binders)    pbj.decode and pbj.encode as builtins   entry.c
 *   bind_decode(cls, ...), bind_encode(cls, other)    their one-argument forms (grpcio)       entry.c
 * None always means: run the pure-Python engine on the same input (valid input the engine leaves to
 * it; an input that is not a valid encoding raises its DecodeError from C, with no Python parse).
 *
 * The module is initialised in two phases (PEP 489) and keeps all its state in the module object
 * (PbjState, engine.h): no process globals, so every interpreter (and every new module object made
 * from this file) has its own. Two switches for tests and fuzzing are read from the environment
 * once, when a module object is executed, and are not entry points:
 *   PBJ_NATIVE_SHARE_MIN=n   inputs of at least n bytes share repeated sub-messages (default 4096;
 *                            0: every input, to reach share.c with small inputs)
 *   PBJ_NATIVE_UNTRACK=1     decoded messages are left untracked by the cyclic GC
 * They apply to the decode(plan, data, max_depth) function of the module object that read them
 * (tests make a second module object of this file with them set: tests/native_switches.py).
 */
#include "engine.h"

static PyObject *setup(PyObject *self, PyObject *args)
{
    PbjState *st = pbj_state(self);
    PyObject *fm, *oneof, *empty, *decode_error, *layout;
    if (!PyArg_ParseTuple(args, "O!O!OO!O!", &PyType_Type, &fm, &PyType_Type, &oneof, &empty, &PyType_Type,
                          &decode_error, &PyDict_Type, &layout))
        return NULL;
    if (pbj_check_layout(layout) < 0) return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)fm, &PyDict_Type) || !PyType_IsSubtype((PyTypeObject *)oneof, &PyTuple_Type)
        || ((PyTypeObject *)oneof)->tp_basicsize != PyTuple_Type.tp_basicsize) {
        PyErr_SetString(PyExc_TypeError, "setup(FrozenMap, OneOf, EMPTY_MAP): unexpected container types");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)decode_error, (PyTypeObject *)PyExc_Exception)) {
        PyErr_SetString(PyExc_TypeError, "setup: DecodeError must be an exception class");
        return NULL;
    }
    Py_XSETREF(st->DecodeError, Py_NewRef(decode_error));
    PyObject *names = PyTuple_New(T_MESSAGE);
    if (!names) return NULL;
#define X(name, value) PyTuple_SET_ITEM(names, value, PyUnicode_FromString(#name));
    PBJ_TYPE_ENTRIES
#undef X
    for (Py_ssize_t i = 0; i < T_MESSAGE; i++) {
        if (!PyTuple_GET_ITEM(names, i)) { Py_DECREF(names); return NULL; }
    }
    Py_XSETREF(st->type_names, names);
    Py_XSETREF(st->FrozenMap, Py_NewRef(fm));
    Py_XSETREF(st->OneOf, Py_NewRef(oneof));
    Py_XSETREF(st->EMPTY_MAP, Py_NewRef(empty));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(FrozenMap, OneOf, EMPTY_MAP, DecodeError, layout): the containers decoded values use, the error a "
     "refused input raises; the codes Python sends."},
    {"build", pbj_build, METH_VARARGS, "build(messages, externals) -> list of plan capsules (None: declined)."},
    {"decode", (PyCFunction)(void (*)(void))pbj_decode, METH_FASTCALL,
     "decode(plan, data, max_depth) -> the decoded object, or None (valid input left to the Python parser); "
     "raises the DecodeError of an input that is not a valid encoding."},
    {"decode_many", (PyCFunction)(void (*)(void))pbj_decode_many, METH_FASTCALL,
     "decode_many(plan, payloads, max_depth) -> list of decode's objects (None: left to the Python parser), "
     "one call: equal sub-messages shared, messages that can join no cycle left untracked (pbj.arrow.from_arrow)."},
    {"encode", (PyCFunction)(void (*)(void))pbj_encode, METH_FASTCALL,
     "encode(plan, obj) -> bytes, or None (run the Python writer)."},
    {"write_reverse", (PyCFunction)(void (*)(void))pbj_write_reverse, METH_FASTCALL,
     "write_reverse(plan, obj, buf, pos) -> new pos, or None (run the Python writer)."},
    {"entry_points", pbj_entry_points, METH_VARARGS,
     "entry_points(native, current, Codec, decode, encode, check_decode, check_encode, FREE, DEFAULT_MAX_DEPTH)"
     " -> (decode, encode, bind_decode, bind_encode): pbj.api's entry points as builtins, falling back to its Python functions (entry.c)."},
    {"bind_decode", pbj_bind_decode, METH_VARARGS,
     "bind_decode(cls, catch=None, handler=None) -> data -> pbj.decode(cls, data), handler(exc) for an error of "
     "class catch (grpcio's deserializer)."},
    {"bind_encode", pbj_bind_encode, METH_VARARGS,
     "bind_encode(cls, other) -> obj -> pbj.encode(obj) for a cls instance, other(obj) otherwise (grpcio's serializer)."},
    {"count_values", (PyCFunction)(void (*)(void))pbj_count_values, METH_FASTCALL,
     "count_values(plan, data, max_depth) -> {(class, field name): number of values}: the counting sink "
     "(count.c, the example of docs/codec-protobuf.md); raises the DecodeError of a refused input."},
    {"arrow_plan", (PyCFunction)(void (*)(void))pbj_arrow_plan, METH_FASTCALL,
     "arrow_plan(nodes, classes) -> the column plan of pbj.arrow.native (arrow.c)."},
    {"arrow_decode", (PyCFunction)(void (*)(void))pbj_arrow_decode, METH_FASTCALL,
     "arrow_decode(plan, payloads, max_depth) -> (an arrow_array capsule, its address, the unknown fields "
     "left out: ((node, fields, bytes), ...)), or None (decode + to_arrow)."},
    {NULL, NULL, 0, NULL},
};

/* an integer switch from the environment (read once, at module exec), or `fallback` */
static long long env_switch(const char *name, long long fallback)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return fallback;
    char *end;
    long long n = strtoll(v, &end, 10);
    return *end == '\0' && n >= 0 ? n : fallback;
}

static int intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot ? 0 : -1;
}

static int exec_module(PyObject *module)
{
    const uint16_t one = 1;
    if (*(const uint8_t *)&one != 1) {
        PyErr_SetString(PyExc_ImportError, "pbj's native engine needs a little-endian machine");
        return -1;
    }
    PbjState *st = pbj_state(module);
    st->empty_tuple = PyTuple_New(0);
    st->empty_bytes = PyBytes_FromStringAndSize("", 0);
    st->minus_one = PyLong_FromLong(-1);
    if (!st->empty_tuple || !st->empty_bytes || !st->minus_one) return -1;
    if (intern(&st->s_codec, "__pbj_codec__") < 0 || intern(&st->s_native, "native") < 0
        || intern(&st->s_holder, "holder") < 0 || intern(&st->s_writer_view, "writer_view") < 0
        || intern(&st->s_writer_grow, "writer_grow") < 0
        || intern(&st->s_scratch, "pbj._native.reverse_scratch") < 0) return -1;
    st->share_min = (Py_ssize_t)env_switch("PBJ_NATIVE_SHARE_MIN", 4096);
    st->untrack = env_switch("PBJ_NATIVE_UNTRACK", 0) != 0;
    if (pbj_share_key(st) < 0) return -1;
    return pbj_entry_init(module);
}

static int traverse_module(PyObject *module, visitproc visit, void *arg)
{
    PbjState *st = pbj_state(module);
    if (st == NULL) return 0;
    Py_VISIT(st->FrozenMap);
    Py_VISIT(st->OneOf);
    Py_VISIT(st->EMPTY_MAP);
    Py_VISIT(st->DecodeError);
    return pbj_entry_traverse(&st->entry, visit, arg);
}

static int clear_module(PyObject *module)
{
    PbjState *st = pbj_state(module);
    if (st == NULL) return 0;
    Py_CLEAR(st->FrozenMap);
    Py_CLEAR(st->OneOf);
    Py_CLEAR(st->EMPTY_MAP);
    Py_CLEAR(st->DecodeError);
    Py_CLEAR(st->type_names);
    Py_CLEAR(st->empty_tuple);
    Py_CLEAR(st->empty_bytes);
    Py_CLEAR(st->minus_one);
    for (int i = 0; i < 256; i++) {
        Py_CLEAR(st->sizes[i]);
        st->sizes_of[i] = 0;
    }
    Py_CLEAR(st->s_codec);
    Py_CLEAR(st->s_native);
    Py_CLEAR(st->s_holder);
    Py_CLEAR(st->s_writer_view);
    Py_CLEAR(st->s_writer_grow);
    Py_CLEAR(st->s_scratch);
    pbj_entry_clear(&st->entry);
    return 0;
}

static void free_module(void *module)
{
    clear_module((PyObject *)module);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
#ifdef Py_mod_multiple_interpreters
    /* every object the module reads is its own state's or a plan's (made by this interpreter) */
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    /* ready for free-threaded CPython (docs/codec-protobuf.md, "Threads"), not declared so until
     * the suite has run on such a build */
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pbj._native._engine",
    .m_doc = "pbj's native codec engine (see pbj/_native/__init__.py).",
    .m_size = sizeof(PbjState),
    .m_methods = methods,
    .m_slots = slots,
    .m_traverse = traverse_module,
    .m_clear = clear_module,
    .m_free = free_module,
};

PyMODINIT_FUNC PyInit__engine(void)
{
    return PyModuleDef_Init(&module_def);
}
