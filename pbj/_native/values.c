/* values.c: a Python value in its wire form, for both writers (encode.c, reverse.c).
 *
 * pbj_to_wire accepts only what it knows to be right: an int (bool and IntEnum members included)
 * in its type's range, an exact float (float32: not too large), an exact str (valid UTF-8), exact
 * bytes. Anything else returns -1 and the writer declines, so the Python writer runs and raises
 * its EncodeError with the path.
 *
 * Declines and errors (both writers): -1 with no exception set is a decline, the engine's own
 * "not mine" (an exception the engine's own checks raise, as an OverflowError for a negative
 * uint64, is cleared where it is raised); -1 with an exception set is an error that is not the
 * engine's (MemoryError, or what Python code run by the reverse writer's buffer growth raised)
 * and leaves the engine unchanged. None of these functions runs Python code: the values they
 * accept are exact built-in types (int subclasses only as enum members, whose conversion is C). */
#include "engine.h"
#include <math.h>

/* an int is not zero (without relying on the layout of int objects) */
static int long_nonzero(PyObject *v)
{
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
    return overflow != 0 || n != 0;
}

int pbj_to_wire(int type, PyObject *v, WV *out)
{
    int overflow = 0;
    long long n;
    switch (type) {
    case T_DOUBLE: {
        if (!PyFloat_CheckExact(v)) return -1;
        double d = PyFloat_AS_DOUBLE(v);
        memcpy(&out->u, &d, 8);
        return 0;
    }
    case T_FLOAT: {
        if (!PyFloat_CheckExact(v)) return -1;
        double d = PyFloat_AS_DOUBLE(v);
        uint32_t w;
        if (d != d) {  /* a NaN narrows bit for bit, as pbj/codec/float32.py's nan_bits */
            uint64_t wide;
            memcpy(&wide, &d, 8);
            uint32_t payload = (uint32_t)(wide >> 29) & 0x7FFFFFu;
            out->u = (uint32_t)((wide >> 32) & 0x80000000u) | 0x7F800000u | (payload ? payload : 0x400000u);
            return 0;
        }
        float x = (float)d;
        if (isinf(x) && !isinf(d)) return -1;
        memcpy(&w, &x, 4);
        out->u = w;
        return 0;
    }
    case T_STRING:
        if (!PyUnicode_CheckExact(v)) return -1;
        out->s = PyUnicode_AsUTF8AndSize(v, &out->n);
        if (out->s) return 0;
        /* lone surrogates (a proto2 string that keeps any bytes): the Python writer's */
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) PyErr_Clear();
        return -1;
    case T_BYTES:
        if (!PyBytes_CheckExact(v)) return -1;
        out->s = PyBytes_AS_STRING(v);
        out->n = PyBytes_GET_SIZE(v);
        return 0;
    case T_BOOL:
        if (v == Py_True) { out->u = 1; return 0; }
        if (v == Py_False) { out->u = 0; return 0; }
        if (!PyLong_CheckExact(v)) return -1;
        out->u = long_nonzero(v);
        return 0;
    case T_UINT64:
    case T_FIXED64:
        if (!PyLong_Check(v)) return -1;
        out->u = PyLong_AsUnsignedLongLong(v);
        if (out->u == (uint64_t)-1 && PyErr_Occurred()) {
            /* negative or past 2**64: that OverflowError is the range check's, a decline */
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) PyErr_Clear();
            return -1;
        }
        return 0;
    default:
        break;
    }
    if (!PyLong_Check(v)) return -1;
    n = PyLong_AsLongLongAndOverflow(v, &overflow);  /* an int: no error but the overflow flag */
    if (overflow) return -1;
    switch (type) {
    case T_INT32: case T_ENUM: case T_SFIXED32:
        if (n < INT32_MIN || n > INT32_MAX) return -1;
        out->u = type == T_SFIXED32 ? (uint32_t)(int32_t)n : (uint64_t)n;
        return 0;
    case T_INT64: case T_SFIXED64:
        out->u = (uint64_t)n;
        return 0;
    case T_UINT32: case T_FIXED32:
        if (n < 0 || n > (long long)UINT32_MAX) return -1;
        out->u = (uint64_t)n;
        return 0;
    case T_SINT32:
        if (n < INT32_MIN || n > INT32_MAX) return -1;
        out->u = (uint32_t)(((uint32_t)n << 1) ^ (uint32_t)((int32_t)n >> 31));
        return 0;
    case T_SINT64:
        out->u = ((uint64_t)n << 1) ^ (uint64_t)(n >> 63);
        return 0;
    default:
        return -1;
    }
}

Py_ssize_t pbj_wire_size(int type, const WV *w)
{
    switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64: return 8;
    case T_FLOAT: case T_FIXED32: case T_SFIXED32: return 4;
    case T_BOOL: return 1;
    case T_STRING: case T_BYTES: return varint_len((uint64_t)w->n) + w->n;
    default: return varint_len(w->u);
    }
}

/* implicit presence ("Field Presence"): 1 written, 0 not, -1 decline */
int pbj_implicit_present(int type, PyObject *v)
{
    switch (type) {
    case T_DOUBLE: case T_FLOAT: {
        if (!PyFloat_CheckExact(v)) return -1;
        double d = PyFloat_AS_DOUBLE(v);
        return d != 0.0 || signbit(d);
    }
    case T_STRING:
        if (!PyUnicode_CheckExact(v)) return -1;
        return PyUnicode_GET_LENGTH(v) != 0;
    case T_BYTES:
        if (!PyBytes_CheckExact(v)) return -1;
        return PyBytes_GET_SIZE(v) != 0;
    default:
        if (!PyLong_Check(v)) return -1;
        return long_nonzero(v);
    }
}

/* the member of oneof j that `v` (a OneOf) sets, as a field index, or -1.
 *
 * By identity first: a OneOf the native decoder made holds the plan's own name object, and one
 * built in Python code holds the interned literal, which is the plan's name for every class
 * declared in Python; so the hot path is one pointer comparison per member before the match, no
 * string comparison. Only a name that is none of those objects (a OneOf of a loaded schema's
 * class built by hand, whose plan names are not interned) is compared by value. */
int pbj_oneof_member(NMessage *m, int j, PyObject *v)
{
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) return -1;
    PyObject *name = PyTuple_GET_ITEM(v, 0);
    NOneof *o = &m->oneofs[j];
    for (int k = 0; k < o->nmembers; k++) {
        if (m->fields[o->members[k]].name == name) return o->members[k];
    }
    if (!PyUnicode_Check(name)) return -1;
    for (int k = 0; k < o->nmembers; k++) {
        /* both str (a subclass is compared by its characters: no Python code), so no error */
        if (PyUnicode_Compare(m->fields[o->members[k]].name, name) == 0) return o->members[k];
    }
    return -1;
}

int pbj_in_run(NWrite *w, int field)
{
    for (int k = 0; k < w->nmembers; k++) if (w->members[k] == field) return 1;
    return 0;
}


/* ---- map entries in key order, for both writers ("Maps": deterministic output sorts by key) */

static int cmp_order(const void *a, const void *b)
{
    uint64_t x = ((const PMapEntry *)a)->order, y = ((const PMapEntry *)b)->order;
    return (x > y) - (x < y);
}

/* strings in code-point order: the bytewise order of their UTF-8 */
static int cmp_utf8(const void *a, const void *b)
{
    const PMapEntry *x = a, *y = b;
    Py_ssize_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->s, y->s, (size_t)n) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* the key's place in the order, from its C value: the key must be of the exact built-in type the
 * constructor stores (int, bool, str); anything else got in behind its back and is declined, so
 * no key's __lt__, __eq__ or __hash__ runs in the engine. 0, or -1 (decline or error). */
static int key_order(int key, PyObject *k, PMapEntry *e)
{
    int overflow = 0;
    switch (key) {
    case T_STRING:
        if (!PyUnicode_CheckExact(k)) return -1;
        e->s = PyUnicode_AsUTF8AndSize(k, &e->n);
        if (e->s) return 0;
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) PyErr_Clear();
        return -1;
    case T_BOOL:
        if (k != Py_True && k != Py_False) return -1;
        e->order = k == Py_True;
        return 0;
    case T_UINT64: case T_FIXED64:
        if (!PyLong_CheckExact(k)) return -1;
        e->order = PyLong_AsUnsignedLongLong(k);
        if (e->order == (uint64_t)-1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_OverflowError)) PyErr_Clear();
            return -1;
        }
        return 0;
    default: {
        if (!PyLong_CheckExact(k)) return -1;
        long long n = PyLong_AsLongLongAndOverflow(k, &overflow);
        if (overflow) return -1;
        e->order = (uint64_t)n ^ ((uint64_t)1 << 63);  /* signed order as unsigned */
        return 0;
    }
    }
}

int pbj_map_sorted(NField *f, PyObject *map, PMap *out)
{
    out->n = 0;
    out->e = out->small;
    if (!PyDict_Check(map)) return -1;
    Py_ssize_t len = PyDict_GET_SIZE(map), pos = 0;
    if (len > (Py_ssize_t)(sizeof out->small / sizeof out->small[0])) {
        out->e = PyMem_New(PMapEntry, (size_t)len);
        if (!out->e) {
            out->e = out->small;
            PyErr_NoMemory();
            return -1;
        }
    }
    PyObject *k, *x;
    /* PyDict_Next reads the table and runs no Python code; the entries own their key and value */
    while (out->n < len && PyDict_Next(map, &pos, &k, &x)) {
        PMapEntry *e = &out->e[out->n];
        if (key_order(f->key, k, e) < 0) return -1;
        Py_INCREF(k);
        Py_INCREF(x);
        e->k = k;
        e->x = x;
        out->n++;
    }
    if (out->n > 1) qsort(out->e, (size_t)out->n, sizeof *out->e, f->key == T_STRING ? cmp_utf8 : cmp_order);
    return 0;
}

void pbj_map_release(PMap *m)
{
    for (Py_ssize_t i = 0; i < m->n; i++) {
        Py_DECREF(m->e[i].k);
        Py_DECREF(m->e[i].x);
    }
    if (m->e != m->small) PyMem_Free(m->e);
    m->n = 0;
    m->e = m->small;
}
