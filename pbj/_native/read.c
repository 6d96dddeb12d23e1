/* read.c: one value from the wire (pbj.wire's rules): an unknown field skipped, a scalar, a LEN
 * value, a closed enum's non-member kept as an unknown varint field. */
#include "read.h"

int pbj_ubuf_add(UBuf *u, const uint8_t *p, size_t n)
{
    if (n == 0) return 0;  /* an empty span (an empty message-set message): nothing to copy, no NULL memcpy */
    if (u->len + n > u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 64;
        while (cap < u->len + n) cap *= 2;
        uint8_t *b = PyMem_Realloc(u->buf, cap);
        if (!b) return -1;
        u->buf = b;
        u->cap = cap;
    }
    memcpy(u->buf + u->len, p, n);
    u->len += n;
    return 0;
}

/* skip the value of an unknown field whose tag was read (pbj.wire.skip_field) */
int pbj_skip_field(Ctx *c, const uint8_t **pp, const uint8_t *end, uint32_t tag, int depth)
{
    const uint8_t *p = *pp;
    uint64_t v;
    if ((tag >> 3) == 0) return -1;
    switch (tag & 7) {
    case 0:
        if (rd_varint(&p, end, &v) < 0) return -1;
        break;
    case 1:
        if (end - p < 8) return -1;
        p += 8;
        break;
    case 2: {
        const uint8_t *e;
        if (rd_len(&p, end, &e) < 0) return -1;
        p = e;
        break;
    }
    case 5:
        if (end - p < 4) return -1;
        p += 4;
        break;
    case 3: {
        if (depth <= 0) return -1;
        if (c->level >= NATIVE_MAX_LEVEL) { c->declined = 1; return -1; }
        c->level++;
        uint32_t number = tag >> 3;
        for (;;) {
            uint32_t inner;
            if (p >= end || rd_tag(&p, end, &inner) < 0) { c->level--; return -1; }
            if ((inner & 7) == 4) {
                if ((inner >> 3) != number) { c->level--; return -1; }
                break;
            }
            if (pbj_skip_field(c, &p, end, inner, depth - 1) < 0) { c->level--; return -1; }
        }
        c->level--;
        break;
    }
    default:
        return -1;
    }
    *pp = p;
    return 0;
}




PyObject *pbj_len_value(int type, const uint8_t *p, const uint8_t *e)
{
    if (type == T_STRING) return PyUnicode_DecodeUTF8((const char *)p, e - p, NULL);
    return PyBytes_FromStringAndSize((const char *)p, e - p);
}

/* Read one scalar of `type` (not string/bytes) at *pp. Returns a new reference, or NULL on
 * error. For a closed enum field whose number is not a member, returns Py_None (a new
 * reference) and sets *raw to the number. */
PyObject *pbj_scalar_value(NField *f, int type, const uint8_t **pp, const uint8_t *end, int32_t *raw)
{
    uint64_t v;
    uint32_t w;
    switch (type) {
    case T_DOUBLE: {
        double d;
        if (rd_fixed64(pp, end, &v) < 0) return NULL;
        memcpy(&d, &v, 8);
        return PyFloat_FromDouble(d);
    }
    case T_FLOAT: {
        float x;
        if (rd_fixed32(pp, end, &w) < 0) return NULL;
        if ((w & 0x7F800000u) == 0x7F800000u && (w & 0x7FFFFFu)) {
            /* a NaN keeps its bits: sign, then the 23 payload bits at the top of the binary64's 52,
             * quiet bit as it arrived (the x86 conversion would quiet a signalling NaN), as
             * pbj/codec/float32.py holds it */
            uint64_t wide = ((uint64_t)(w & 0x80000000u) << 32) | 0x7FF0000000000000ull
                            | ((uint64_t)(w & 0x7FFFFFu) << 29);
            double d;
            memcpy(&d, &wide, 8);
            return PyFloat_FromDouble(d);
        }
        memcpy(&x, &w, 4);
        return PyFloat_FromDouble((double)x);
    }
    case T_FIXED64:
        if (rd_fixed64(pp, end, &v) < 0) return NULL;
        return PyLong_FromUnsignedLongLong(v);
    case T_SFIXED64:
        if (rd_fixed64(pp, end, &v) < 0) return NULL;
        return PyLong_FromLongLong((long long)(int64_t)v);
    case T_FIXED32:
        if (rd_fixed32(pp, end, &w) < 0) return NULL;
        return PyLong_FromUnsignedLong(w);
    case T_SFIXED32:
        if (rd_fixed32(pp, end, &w) < 0) return NULL;
        return PyLong_FromLong((int32_t)w);
    default:
        break;
    }
    if (rd_varint(pp, end, &v) < 0) return NULL;
    switch (type) {
    case T_INT64: return PyLong_FromLongLong((long long)(int64_t)v);
    case T_UINT64: return PyLong_FromUnsignedLongLong(v);
    case T_INT32: return PyLong_FromLong((int32_t)(uint32_t)v);
    case T_UINT32: return PyLong_FromUnsignedLong((uint32_t)v);
    case T_BOOL: return Py_NewRef(v ? Py_True : Py_False);
    case T_SINT32: {
        uint32_t u = (uint32_t)v;
        return PyLong_FromLong((int32_t)((u >> 1) ^ (0u - (u & 1))));
    }
    case T_SINT64:
        return PyLong_FromLongLong((long long)(int64_t)((v >> 1) ^ (0ull - (v & 1))));
    case T_ENUM: {
        int32_t n = (int32_t)(uint32_t)v;
        PyObject *key = PyLong_FromLong(n);
        if (!key || !f->enum_map) return key;
        PyObject *member = PyDict_GetItemWithError(f->enum_map, key);
        if (member) {
            Py_DECREF(key);
            return Py_NewRef(member);
        }
        if (PyErr_Occurred()) { Py_DECREF(key); return NULL; }
        if (f->closed) {
            Py_DECREF(key);
            *raw = n;
            return Py_NewRef(Py_None);
        }
        return key;
    }
    default:
        return NULL;
    }
}
