/* compat.h: the few things the engine needs that CPython's public C API spells differently from
 * one release to the next (3.11 and later). The engine uses public API only: no name that starts
 * with an underscore, no structmember.h (tests/test_native_module.py greps the C sources).
 */
#ifndef PBJ_COMPAT_H
#define PBJ_COMPAT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The member type of a __slots__ slot (a PyMemberDef's `type`): Py_T_OBJECT_EX in descrobject.h
 * since 3.12; 3.11 has the same value only in structmember.h (T_OBJECT_EX, 16), which the engine
 * does not include (it defines names such as T_STRING that clash with the engine's own). */
#ifdef Py_T_OBJECT_EX
#define PBJ_T_OBJECT_EX Py_T_OBJECT_EX
#else
#define PBJ_T_OBJECT_EX 16
#endif

/* The byte offset a __slots__ member descriptor stores its value at, or -1 when `descr` is not a
 * slot holding an object. PyMemberDescrObject is public (cpython/descrobject.h); the PyMemberDef it
 * points to is declared there since 3.12, and on 3.11 only in structmember.h, so for 3.11 its
 * layout is spelled here, as 3.11's structmember.h declares it (name, type, offset, flags, doc). */
#if PY_VERSION_HEX >= 0x030C0000
typedef PyMemberDef pbj_member_def;
#else
typedef struct {
    const char *name;
    int type;
    Py_ssize_t offset;
    int flags;
    const char *doc;
} pbj_member_def;
#endif

static inline Py_ssize_t pbj_slot_offset(PyObject *descr)
{
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) return -1;
    const pbj_member_def *d = (const pbj_member_def *)((PyMemberDescrObject *)descr)->d_member;
    return d->type == PBJ_T_OBJECT_EX ? d->offset : -1;
}

/* A type's own namespace, borrowed (PyType_GetDict gives a new reference since 3.12; before, the
 * public tp_dict field is the dict). */
static inline PyObject *pbj_type_dict_ref(PyTypeObject *t)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyType_GetDict(t);
#else
    return Py_XNewRef(t->tp_dict);
#endif
}

/* `name` looked up on type `t` as a class attribute is: the first namespace along t's MRO that
 * holds it, a new reference, or NULL (no error set unless one occurred). Runs no Python code: the
 * dicts are read with exact-str keys (interned names), never through __getattr__ or a descriptor.
 * (CPython's own cached lookup has no public name; this walks the MRO, 2 or 3 classes for a message
 * class.) */
static inline PyObject *pbj_type_lookup(PyTypeObject *t, PyObject *name)
{
    PyObject *mro = t->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(mro);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *base = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        PyObject *dict = pbj_type_dict_ref(base);
        if (dict == NULL) continue;
        PyObject *v;
#if PY_VERSION_HEX >= 0x030D0000
        int r = PyDict_GetItemRef(dict, name, &v);
        Py_DECREF(dict);
        if (r < 0) return NULL;
        if (r > 0) return v;
#else
        v = PyDict_GetItemWithError(dict, name);
        Py_DECREF(dict);
        if (v != NULL) return Py_NewRef(v);
        if (PyErr_Occurred()) return NULL;
#endif
    }
    return NULL;
}

/* Free-threaded CPython (Py_GIL_DISABLED, 3.13t and later): threads run the engine at once, so a
 * pointer another thread may store at the same time is swapped with one atomic compare-and-swap
 * (a full barrier on both compilers: what was written into the new object before is seen by a thread
 * that reads the pointer). 1: *slot held `expected` and now holds `desired`; 0: it held something
 * else and is unchanged. With the GIL the engine never needs it (and compiles none). */
#ifdef Py_GIL_DISABLED
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static inline int pbj_swap_pointer(PyObject **slot, PyObject *expected, PyObject *desired)
{
    return _InterlockedCompareExchangePointer((void *volatile *)slot, desired, expected) == expected;
}
#else
static inline int pbj_swap_pointer(PyObject **slot, PyObject *expected, PyObject *desired)
{
    return __atomic_compare_exchange_n(slot, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
#endif
#endif

#endif
