/* values.h: what both writers share, inline: a value's wire form, and the one walk over a
 * message's present fields (values.c has the rest: the write table, oneofs, map order).
 *
 * pbj_wire accepts only what it knows to be right: an int (bool and IntEnum members included)
 * in its type's range, an exact float (float32: not too large), an exact str (valid UTF-8; for a
 * string that may keep any bytes, T_ANYSTR, also lone surrogates U+DC80..U+DCFF, written as the
 * bytes they stand for), exact bytes. Anything else returns -1 and the writer declines, so the
 * Python writer runs and raises its EncodeError with the path: declines are errors to explain.
 *
 * A string that keeps bytes that are not UTF-8 (pbj_wire returns 1; the walk's kind K_OWNED) is
 * written from a bytes object made for it (surrogateescape), whose contents WV.s points to: a
 * strong reference (wv_owner) that whoever holds the WV releases once the bytes are copied: the forward writer's tape entry (after
 * the write pass), the reverse writer after its copy (a ReverseBuffer's growth, which runs Python
 * code, may come between reading the value and copying it, and may drop the str).
 *
 * Declines and errors (both writers): -1 with no exception set is a decline, the engine's own
 * "not mine" (an exception the engine's own checks raise, as an OverflowError for a negative
 * uint64, is cleared where it is raised); -1 with an exception set is an error that is not the
 * engine's (MemoryError, or what Python code run by the reverse writer's buffer growth raised)
 * and leaves the engine unchanged. None of these functions runs Python code: the values they
 * accept are exact built-in types (int subclasses only as enum members, whose conversion is C).
 *
 * The walk (pbj_step): the write table (values.c, pbj_write_table) gives each write step of the
 * plan its slot's byte offset and its shape; pbj_step reads the step's value out of the object,
 * decides whether it is present, finds a oneof's member and converts a scalar, and says what is
 * to be written (a K_* kind). The forward writer (encode.c), its size pass and the reverse writer
 * (reverse.c) all run their steps through it, in their own order, and differ only in how they
 * write what it found.
 */
#ifndef PBJ_VALUES_H
#define PBJ_VALUES_H

#include "engine.h"
#include <math.h>
#include <stddef.h>

/* the writers' per-value helpers are small once their switch on a constant type folds: inline them */
#if defined(__GNUC__) || defined(__clang__)
#define PBJ_INLINE static inline __attribute__((always_inline))
#else
#define PBJ_INLINE static inline
#endif

/* ---- ints without a call: the value of an int that fits in 64 bits, by its digits ---- */

/* 1 and *out: `v` (an int, or an int subclass: same layout) fits the fast path; 0: ask CPython */
PBJ_INLINE int int_fast(PyObject *v, int64_t *out)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (PyUnstable_Long_IsCompact((PyLongObject *)v)) {
        *out = (int64_t)PyUnstable_Long_CompactValue((PyLongObject *)v);
        return 1;
    }
    return 0;
#else
    const digit *d = ((PyLongObject *)v)->ob_digit;
    switch (Py_SIZE(v)) {
    case 0: *out = 0; return 1;
    case 1: *out = (int64_t)d[0]; return 1;
    case -1: *out = -(int64_t)d[0]; return 1;
    case 2: *out = (int64_t)(((uint64_t)d[1] << PyLong_SHIFT) | d[0]); return 1;
    case -2: *out = -(int64_t)(((uint64_t)d[1] << PyLong_SHIFT) | d[0]); return 1;
    default: return 0;
    }
#endif
}

/* 1 and *out: `v` has three 30-bit digits and is below 2**limit_bits; 0: ask CPython */
PBJ_INLINE int int_three(PyObject *v, int limit_bits, uint64_t *out)
{
#if PY_VERSION_HEX >= 0x030C0000
    (void)v; (void)limit_bits; (void)out;
    return 0;
#else
    const digit *d = ((PyLongObject *)v)->ob_digit;
    if (d[2] >> (limit_bits - 2 * PyLong_SHIFT)) return 0;
    *out = ((uint64_t)d[2] << (2 * PyLong_SHIFT)) | ((uint64_t)d[1] << PyLong_SHIFT) | d[0];
    return 1;
#endif
}

/* an int in [-2**63, 2**63): 0 and *out, or -1 (a decline: out of range; no error left set) */
PBJ_INLINE int int_i64(PyObject *v, int64_t *out)
{
    if (int_fast(v, out)) return 0;
#if PY_VERSION_HEX < 0x030C0000 && PyLong_SHIFT == 30
    uint64_t u;  /* three digits: nanosecond timestamps and other large ids */
    if (Py_SIZE(v) == 3 && int_three(v, 63, &u)) { *out = (int64_t)u; return 0; }
    if (Py_SIZE(v) == -3 && int_three(v, 63, &u)) { *out = -(int64_t)u; return 0; }
#endif
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(v, &overflow);  /* an int: no error but the overflow flag */
    if (overflow) return -1;
    *out = n;
    return 0;
}

/* an int in [0, 2**64): 0 and *out, or -1 (a decline; the range check's OverflowError cleared) */
PBJ_INLINE int int_u64(PyObject *v, uint64_t *out)
{
    int64_t n;
    if (int_fast(v, &n)) {
        if (n < 0) return -1;
        *out = (uint64_t)n;
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000 && PyLong_SHIFT == 30
    if (Py_SIZE(v) == 3 && int_three(v, 64, out)) return 0;
#endif
    *out = PyLong_AsUnsignedLongLong(v);
    if (*out == (uint64_t)-1 && PyErr_Occurred()) {
        /* negative or past 2**64: that OverflowError is the range check's, a decline */
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) PyErr_Clear();
        return -1;
    }
    return 0;
}

/* bytes of the varint of v (1..10), without a loop */
PBJ_INLINE int vlen(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return (int)(((63 - __builtin_clzll(v | 1)) * 9 + 73) >> 6);
#else
    return varint_len(v);
#endif
}

/* a float32's bits from a double: NaN narrowed bit for bit (pbj/codec/float32.py's nan_bits);
 * -1: too large for float32 (a decline) */
static inline int float32_bits(double d, uint64_t *out)
{
    if (d != d) {
        uint64_t wide;
        memcpy(&wide, &d, 8);
        uint32_t payload = (uint32_t)(wide >> 29) & 0x7FFFFFu;
        *out = (uint32_t)((wide >> 32) & 0x80000000u) | 0x7F800000u | (payload ? payload : 0x400000u);
        return 0;
    }
    float x = (float)d;
    if (isinf(x) && !isinf(d)) return -1;
    uint32_t w;
    memcpy(&w, &x, 4);
    *out = w;
    return 0;
}

/* A str of a string field that may keep any bytes, not ASCII (values.c): 0, its UTF-8 in out->s/n;
 * 1, it holds lone surrogates U+DC80..U+DCFF: out->s/n, the contents of a new bytes object (the
 * caller's: wv_owner) with the bytes they stand for (surrogateescape); -1: another surrogate (a decline, no error:
 * the Python writer raises) or MemoryError (set). Runs no Python code and, on success, allocates
 * no object the cyclic collector tracks (it raises no UnicodeEncodeError to clear). */
int pbj_str_keep(PyObject *v, WV *out);

/* str's UTF-8 (ASCII: the characters themselves, no call); -1: not valid UTF-8 (a decline) */
PBJ_INLINE int str_utf8(PyObject *v, WV *out)
{
    if (PyUnicode_IS_COMPACT_ASCII(v)) {
        out->s = (const char *)(((PyASCIIObject *)v) + 1);
        out->n = PyUnicode_GET_LENGTH(v);
        return 0;
    }
    out->s = PyUnicode_AsUTF8AndSize(v, &out->n);
    if (out->s) return 0;
    /* lone surrogates (a proto2 string that keeps any bytes): the Python writer's */
    if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) PyErr_Clear();
    return -1;
}

/* `v` in type's wire form (WV.u: varint or fixed-width bits; WV.s/.n: a LEN value): 0, or 1 (a
 * T_ANYSTR that keeps other bytes: its bytes object, wv_owner, to release), or -1 */
PBJ_INLINE int pbj_wire(int type, PyObject *v, WV *out)
{
    int64_t n;
    switch (type) {
    case T_DOUBLE: {
        if (!PyFloat_CheckExact(v)) return -1;
        double d = PyFloat_AS_DOUBLE(v);
        memcpy(&out->u, &d, 8);
        return 0;
    }
    case T_FLOAT:
        if (!PyFloat_CheckExact(v)) return -1;
        return float32_bits(PyFloat_AS_DOUBLE(v), &out->u);
    case T_STRING:
        if (!PyUnicode_CheckExact(v)) return -1;
        return str_utf8(v, out);
    case T_ANYSTR:  /* 1: out->s is in a bytes object of the caller's (see above) */
        if (!PyUnicode_CheckExact(v)) return -1;
        if (PyUnicode_IS_COMPACT_ASCII(v)) {
            out->s = (const char *)(((PyASCIIObject *)v) + 1);
            out->n = PyUnicode_GET_LENGTH(v);
            return 0;
        }
        return pbj_str_keep(v, out);
    case T_BYTES:
        if (!PyBytes_CheckExact(v)) return -1;
        out->s = PyBytes_AS_STRING(v);
        out->n = PyBytes_GET_SIZE(v);
        return 0;
    case T_BOOL:
        if (v == Py_True) { out->u = 1; return 0; }
        if (v == Py_False) { out->u = 0; return 0; }
        if (!PyLong_CheckExact(v)) return -1;
        out->u = !int_fast(v, &n) || n != 0;  /* what the fast path leaves is never zero */
        return 0;
    case T_UINT64: case T_FIXED64:
        if (!PyLong_Check(v)) return -1;
        return int_u64(v, &out->u);
    default:
        break;
    }
    if (!PyLong_Check(v) || int_i64(v, &n) < 0) return -1;
    switch (type) {
    case T_INT32: case T_ENUM:
        if (n < INT32_MIN || n > INT32_MAX) return -1;
        out->u = (uint64_t)n;
        return 0;
    case T_SFIXED32:
        if (n < INT32_MIN || n > INT32_MAX) return -1;
        out->u = (uint32_t)(int32_t)n;
        return 0;
    case T_INT64: case T_SFIXED64:
        out->u = (uint64_t)n;
        return 0;
    case T_UINT32: case T_FIXED32:
        if (n < 0 || n > (int64_t)UINT32_MAX) return -1;
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

/* ---- cached sizes ---- */

/* The largest size the writers measure or trust (a quarter of what Py_ssize_t holds): a sum of
 * two sizes below it, plus tags and lengths, cannot overflow, so every sum is checked against it
 * once, where it is made. A message that would be larger is declined (the Python writer runs). */
#define PBJ_SIZE_MAX (PY_SSIZE_T_MAX / 4)

/* the size cached on `o`, or -1: none to trust. A cached size is private state that Python code
 * can set by hand (object.__setattr__): anything but an exact int in [0, PBJ_SIZE_MAX] (-2, True,
 * 2**63-1, a str) is no size the engine wrote, and the size is measured again. A size in range
 * that is wrong is found when the bytes are written (encode.c w_contents: NotImplemented; reverse.c: the result not filled). */
PBJ_INLINE Py_ssize_t pbj_cached_size(PyObject *o, NMessage *m)
{
    PyObject *s = SLOT(o, m->size_off);
    if (s == NULL || !PyLong_CheckExact(s)) return -1;
    int64_t n;
    if (!int_fast(s, &n)) {
        n = PyLong_AsSsize_t(s);
        if (n == -1 && PyErr_Occurred()) {
            PyErr_Clear();  /* past Py_ssize_t: OverflowError, the range check's own */
            return -1;
        }
    }
    return n < 0 || n > PBJ_SIZE_MAX ? -1 : (Py_ssize_t)n;
}

/* ---- the walk over present fields ---- */

/* what pbj_step found */
enum {
    K_ABSENT,    /* nothing to write */
    K_VARINT,    /* *f's value, converted: a varint in x->u */
    K_FIXED32,   /* ... four bytes, x->u */
    K_FIXED64,   /* ... eight bytes, x->u */
    K_LEN,       /* ... a LEN value, x->s and x->n */
    K_MESSAGE,   /* *f's sub-message *v (of f->subm's class: checked) */
    K_REPEATED,  /* *v: a non-empty tuple of *f's values, each with its own tag */
    K_PACKED,    /* *v: a non-empty tuple of *f's scalars, one LEN value */
    K_MAP,       /* *v: a non-empty dict of *f's entries */
    K_EXT,       /* *v: a non-empty tuple of extension holders (the step's extension range) */
    K_OWNED      /* (the last: encode.c size_msg tests kind >= K_EXT) a LEN value (x->s, x->n): the
                  * contents of a bytes object (wv_owner), a strong
                  * reference the caller releases after the copy: a string that keeps bytes that
                  * are not UTF-8 */
};

/* the bytes object whose contents a K_OWNED value's x->s is (made by pbj_str_keep) */
PBJ_INLINE PyObject *wv_owner(const WV *x)
{
    return (PyObject *)(x->s - offsetof(PyBytesObject, ob_sval));
}

/* the kind to write a converted scalar as (K_OWNED: a LEN value), for the writers' switches,
 * which know only the K_* kinds of pbj_wire */
PBJ_INLINE int as_len(int kind)
{
    return kind == K_OWNED ? K_LEN : kind;
}

/* release what a converted scalar of `kind` owns (K_OWNED: its bytes object) */
PBJ_INLINE void wv_release(int kind, const WV *x)
{
    if (kind == K_OWNED) Py_DECREF(wv_owner(x));
}

/* the kind of a converted scalar of `type` */
PBJ_INLINE int wire_kind(int type)
{
    switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64: return K_FIXED64;
    case T_FLOAT: case T_FIXED32: case T_SFIXED32: return K_FIXED32;
    case T_STRING: case T_BYTES: case T_ANYSTR: return K_LEN;
    default: return K_VARINT;
    }
}

/* A slow path of implicit presence: a value pbj_wire declined may still be a zero (an int subclass
 * that is not an enum member, for a bool field), which is not written (values.c). */
int pbj_implicit_zero(int type, PyObject *v);

/* a scalar of implicit presence ("Field Presence": written unless zero; -0.0 is written) */
PBJ_INLINE int implicit_scalar(int type, PyObject *v, WV *x)
{
    if (type == T_FLOAT) {  /* presence is the double's, not its float32's */
        if (!PyFloat_CheckExact(v)) return -1;
        double d = PyFloat_AS_DOUBLE(v);
        if (d == 0.0 && !signbit(d)) return K_ABSENT;
        return float32_bits(d, &x->u) < 0 ? -1 : K_FIXED32;
    }
    int r = pbj_wire(type, v, x);
    if (r < 0) return pbj_implicit_zero(type, v) ? K_ABSENT : -1;
    if (r > 0) return K_OWNED;  /* (a str holding a surrogate is not empty) */
    if (type == T_STRING || type == T_BYTES || type == T_ANYSTR ? x->n == 0 : x->u == 0) return K_ABSENT;
    return wire_kind(type);
}

/* a scalar of explicit presence: written unless None */
PBJ_INLINE int explicit_scalar(int type, PyObject *v, WV *x)
{
    if (v == Py_None) return K_ABSENT;
    int r = pbj_wire(type, v, x);
    return r < 0 ? -1 : r > 0 ? K_OWNED : wire_kind(type);
}

/* a scalar of any type: its kind (K_OWNED: wv_release it), or -1 */
PBJ_INLINE int any_scalar(int type, PyObject *v, WV *x)
{
    int r = pbj_wire(type, v, x);
    return r < 0 ? -1 : r > 0 ? K_OWNED : wire_kind(type);
}

/* the write table's op of a step: its shape and, for a scalar, its type (one switch finds both) */
#define WOP(shape, type) ((shape) * 32 + (type))
#define WOP_SCALARS(X, SHAPE) \
    X(SHAPE, T_DOUBLE) X(SHAPE, T_FLOAT) X(SHAPE, T_INT64) X(SHAPE, T_UINT64) X(SHAPE, T_INT32) \
    X(SHAPE, T_FIXED64) X(SHAPE, T_FIXED32) X(SHAPE, T_BOOL) X(SHAPE, T_STRING) X(SHAPE, T_BYTES) \
    X(SHAPE, T_UINT32) X(SHAPE, T_SFIXED32) X(SHAPE, T_SFIXED64) X(SHAPE, T_SINT32) X(SHAPE, T_SINT64) \
    X(SHAPE, T_ENUM)

/* a string that may keep any bytes, of implicit or explicit presence (shape SH_KEPT_*):
 * implicit_scalar or explicit_scalar of T_ANYSTR, out of line (values.c), so that the walk of
 * other messages stays as it is */
int pbj_kept_scalar(int shape, PyObject *v, WV *x);

/* Step `s` of message `m` in object `o`: a K_* kind, or -1 (decline or error; see above).
 * *hold: the object read out of the slot (what holds *v and the memory *x points into, but for
 * K_OWNED: a bytes object holds that, and the caller releases it: wv_release); the reverse writer keeps a strong
 * reference to it while it writes. */
PBJ_INLINE int pbj_step(NMessage *m, const WStep *s, PyObject *o, PyObject **hold, NField **fp, PyObject **vp,
                        WV *x)
{
    PyObject *v = SLOT(o, s->off);
    NField *f = s->f;
    *hold = v;
    *fp = f;
    *vp = v;
    if (v == NULL) return -1;
    switch (s->op) {
#define IMPLICIT_CASE(SHAPE, TYPE) case WOP(SHAPE, TYPE): return implicit_scalar(TYPE, v, x);
#define EXPLICIT_CASE(SHAPE, TYPE) case WOP(SHAPE, TYPE): return explicit_scalar(TYPE, v, x);
    WOP_SCALARS(IMPLICIT_CASE, SH_IMPLICIT)
    WOP_SCALARS(EXPLICIT_CASE, SH_EXPLICIT)
#undef IMPLICIT_CASE
#undef EXPLICIT_CASE
    default:
        break;
    }
    switch (s->shape) {
    case SH_MESSAGE:
        if (v == Py_None) return K_ABSENT;
        return Py_TYPE(v) == f->subm->cls ? K_MESSAGE : -1;
    case SH_REPEATED: case SH_PACKED:
        if (!PyTuple_CheckExact(v)) return -1;
        if (PyTuple_GET_SIZE(v) == 0) return K_ABSENT;
        return s->shape == SH_PACKED ? K_PACKED : K_REPEATED;
    case SH_MAP:
        if (!PyDict_Check(v)) return -1;
        return PyDict_GET_SIZE(v) == 0 ? K_ABSENT : K_MAP;
    case SH_EXT:
        if (!PyTuple_CheckExact(v)) return -1;
        return PyTuple_GET_SIZE(v) == 0 ? K_ABSENT : K_EXT;
    case SH_KEPT_IMPLICIT: case SH_KEPT_EXPLICIT:
        return pbj_kept_scalar(s->shape, v, x);
    case SH_ONEOF: {
        if (v == Py_None) return K_ABSENT;
        if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) return -1;
        PyObject *name = PyTuple_GET_ITEM(v, 0);
        const NOneof *one = &m->oneofs[s->index];
        int fi = -1;
        for (int k = 0; k < one->nmembers; k++) {  /* by identity (values.c: pbj_oneof_member) */
            if (m->fields[one->members[k]].name == name) {
                fi = one->members[k];
                break;
            }
        }
        if (fi < 0 && (fi = pbj_oneof_member(m, s->index, v)) < 0) return -1;
        if (!s->whole && !pbj_in_run(s->st, fi)) return K_ABSENT;
        f = *fp = &m->fields[fi];
        v = *vp = PyTuple_GET_ITEM(v, 1);
        if (f->type == T_MESSAGE) return Py_TYPE(v) == f->subm->cls ? K_MESSAGE : -1;
        return any_scalar(f->wtype, v, x);
    }
    default:
        return -1;
    }
}

#endif
