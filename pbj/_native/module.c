/* module.c: the pbj._native._engine extension module.
 *
 * Functions (all used by pbj only, through pbj/_native/__init__.py and pbj.api):
 *   build(messages, externals) -> [capsule | None]   plan.c
 *   decode(plan, data, max_depth) -> obj | None       decode.c
 *   encode(plan, obj) -> bytes | None                 encode.c
 *   write_reverse(plan, obj, buf, pos) -> pos | None  reverse.c
 *   arrow_plan(nodes, classes), arrow_decode(plan, payloads, max_depth) -> arrow_array capsule | None   arrow.c
 *   setup(FrozenMap, OneOf, EMPTY_MAP, layout)        the containers decoded values use; the
 *                                                     codes and record sizes Python sends (checked)
 *   entry_points(...) -> (decode, encode, binders)    pbj.decode and pbj.encode as builtins   entry.c
 *   bind_decode(cls, ...), bind_encode(cls, other)    their one-argument forms (grpcio)       entry.c
 * None always means: run the pure-Python engine on the same input.
 */
#include "engine.h"

PyObject *pbj_FrozenMap, *pbj_OneOf, *pbj_EMPTY_MAP, *pbj_empty_tuple, *pbj_empty_bytes;

/* The layout Python sends must be this engine's, entry for entry (engine.h, PBJ_LAYOUT_ENTRIES). */
static int check_layout(PyObject *layout)
{
    Py_ssize_t n = 0;
#define X(name, value) \
    { \
        PyObject *v = PyDict_GetItemString(layout, #name); \
        long got = v && PyLong_Check(v) ? PyLong_AsLong(v) : -1; \
        if (got != (value)) { \
            PyErr_Format(PyExc_ImportError, "pbj's native engine was built for another codec plan: its %s is %d, " \
                         "pbj sends %R (rebuild the extension from these sources)", #name, (int)(value), v); \
            return -1; \
        } \
        n++; \
    }
    PBJ_LAYOUT_ENTRIES
#undef X
    if (PyDict_GET_SIZE(layout) != n) {
        PyErr_Format(PyExc_ImportError, "pbj's native engine was built for another codec plan: pbj sends %zd "
                     "codes, the engine knows %zd (rebuild the extension from these sources)",
                     PyDict_GET_SIZE(layout), n);
        return -1;
    }
    return 0;
}

static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *fm, *oneof, *empty, *layout;
    if (!PyArg_ParseTuple(args, "O!O!OO!", &PyType_Type, &fm, &PyType_Type, &oneof, &empty, &PyDict_Type, &layout))
        return NULL;
    if (check_layout(layout) < 0) return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)fm, &PyDict_Type) || !PyType_IsSubtype((PyTypeObject *)oneof, &PyTuple_Type)
        || ((PyTypeObject *)oneof)->tp_basicsize != PyTuple_Type.tp_basicsize) {
        PyErr_SetString(PyExc_TypeError, "setup(FrozenMap, OneOf, EMPTY_MAP): unexpected container types");
        return NULL;
    }
    Py_XSETREF(pbj_FrozenMap, Py_NewRef(fm));
    Py_XSETREF(pbj_OneOf, Py_NewRef(oneof));
    Py_XSETREF(pbj_EMPTY_MAP, Py_NewRef(empty));
    Py_RETURN_NONE;
}

extern int pbj_untrack;

static PyObject *set_untrack(PyObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    int before = pbj_untrack;
    pbj_untrack = on;
    return PyBool_FromLong(before);
}

static PyMethodDef methods[] = {
    {"set_untrack", set_untrack, METH_O,
     "set_untrack(on) -> the previous setting: leave decoded messages untracked by the cyclic GC."},
    {"set_share_min", pbj_set_share_min, METH_O,
     "set_share_min(n) -> the previous value: inputs of at least n bytes share repeated sub-messages (share.c)."},
    {"setup", setup, METH_VARARGS,
     "setup(FrozenMap, OneOf, EMPTY_MAP, layout): the containers decoded values use; the codes Python sends."},
    {"build", pbj_build, METH_VARARGS, "build(messages, externals) -> list of plan capsules (None: declined)."},
    {"decode", (PyCFunction)(void (*)(void))pbj_decode, METH_FASTCALL,
     "decode(plan, data, max_depth) -> the decoded object, or None (run the Python parser)."},
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
    {"arrow_plan", (PyCFunction)(void (*)(void))pbj_arrow_plan, METH_FASTCALL,
     "arrow_plan(nodes, classes) -> the column plan of pbj.arrow.native (arrow.c)."},
    {"arrow_decode", (PyCFunction)(void (*)(void))pbj_arrow_decode, METH_FASTCALL,
     "arrow_decode(plan, payloads, max_depth) -> an arrow_array capsule, or None (decode + to_arrow)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "pbj._native._engine",
    "pbj's native codec engine (see pbj/_native/__init__.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__engine(void)
{
    const uint16_t one = 1;
    if (*(const uint8_t *)&one != 1) {
        PyErr_SetString(PyExc_ImportError, "pbj's native engine needs a little-endian machine");
        return NULL;
    }
    pbj_empty_tuple = PyTuple_New(0);
    pbj_empty_bytes = PyBytes_FromStringAndSize("", 0);
    if (!pbj_empty_tuple || !pbj_empty_bytes) return NULL;
    return PyModule_Create(&module);
}
