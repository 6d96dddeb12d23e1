/* values.c: a Python value in its wire form, for both writers (encode.c, reverse.c).
 *
 * pbj_to_wire accepts only what it knows to be right: an int (bool and IntEnum members included)
 * in its type's range, an exact float (float32: not too large), an exact str (valid UTF-8), exact
 * bytes. Anything else returns -1 and the writer declines, so the Python writer runs and raises
 * its EncodeError with the path. */
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
        return out->s ? 0 : -1;
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
        if (out->u == (uint64_t)-1 && PyErr_Occurred()) return -1;
        return 0;
    default:
        break;
    }
    if (!PyLong_Check(v)) return -1;
    n = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (n == -1 && PyErr_Occurred())) return -1;
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

/* the member of oneof j that `v` (a OneOf) sets, as a field index, or -1 */
int pbj_oneof_member(NMessage *m, int j, PyObject *v)
{
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) return -1;
    PyObject *name = PyTuple_GET_ITEM(v, 0);
    if (!PyUnicode_Check(name)) return -1;
    NOneof *o = &m->oneofs[j];
    for (int k = 0; k < o->nmembers; k++) {
        NField *f = &m->fields[o->members[k]];
        if (f->name == name || PyUnicode_Compare(f->name, name) == 0) return o->members[k];
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return -1;
}

int pbj_in_run(NWrite *w, int field)
{
    for (int k = 0; k < w->nmembers; k++) if (w->members[k] == field) return 1;
    return 0;
}

