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




/* ---- an enum field's members by number, in C (no dict lookup, no int made for a member) ---- */

struct NEnum {
    int32_t lo;          /* dense: member number lo + i is objs[i] (NULL: none) */
    uint32_t span;       /* entries of a dense table; 0: a sorted one */
    Py_ssize_t n;        /* entries of a sorted table */
    int32_t *nums;       /* sorted: the members' numbers, ascending (objs[i] is nums[i]'s) */
    PyObject **objs;     /* owned references */
};

typedef struct { int32_t num; PyObject *obj; } EnumPair;

static int pair_order(const void *a, const void *b)
{
    int32_t x = ((const EnumPair *)a)->num, y = ((const EnumPair *)b)->num;
    return (x > y) - (x < y);
}

void pbj_enum_table_free(NField *f)
{
    struct NEnum *t = f->enum_table;
    if (!t) return;
    Py_ssize_t n = t->span ? (Py_ssize_t)t->span : t->n;
    for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(t->objs[i]);
    PyMem_Free(t->objs);
    PyMem_Free(t->nums);
    PyMem_Free(t);
    f->enum_table = NULL;
}

/* The table of f->enum_map (number -> member, every key an int in int32 range): dense when the
 * numbers span at most twice their count (+16), else sorted for a binary search. 0 (also when the
 * map has a key of another kind: then the field keeps its dict lookup), -1 when out of memory. */
int pbj_enum_table(NField *f)
{
    PyObject *map = f->enum_map, *k, *v;
    Py_ssize_t pos = 0, n = map ? PyDict_GET_SIZE(map) : 0, i = 0;
    if (!map) return 0;
    EnumPair *pairs = PyMem_Calloc(n + 1, sizeof(EnumPair));
    if (!pairs) return -1;
    while (PyDict_Next(map, &pos, &k, &v)) {
        int overflow = 0;
        long long num = PyLong_CheckExact(k) ? PyLong_AsLongLongAndOverflow(k, &overflow) : 0;
        if (!PyLong_CheckExact(k) || overflow || num < INT32_MIN || num > INT32_MAX || i >= n) {
            PyErr_Clear();
            PyMem_Free(pairs);
            return 0;
        }
        pairs[i].num = (int32_t)num;
        pairs[i++].obj = v;
    }
    n = i;
    qsort(pairs, (size_t)n, sizeof(EnumPair), pair_order);
    struct NEnum *t = PyMem_Calloc(1, sizeof(struct NEnum));
    if (!t) { PyMem_Free(pairs); return -1; }
    int64_t span = n ? (int64_t)pairs[n - 1].num - pairs[0].num + 1 : 0;
    if (n && span <= 2 * (int64_t)n + 16) {
        t->lo = pairs[0].num;
        t->span = (uint32_t)span;
        t->objs = PyMem_Calloc((size_t)span, sizeof(PyObject *));
        if (!t->objs) goto nomem;
        for (i = 0; i < n; i++) t->objs[pairs[i].num - t->lo] = Py_NewRef(pairs[i].obj);
    } else {
        t->n = n;
        t->nums = PyMem_Calloc(n + 1, sizeof(int32_t));
        t->objs = PyMem_Calloc(n + 1, sizeof(PyObject *));
        if (!t->nums || !t->objs) goto nomem;
        for (i = 0; i < n; i++) {
            t->nums[i] = pairs[i].num;
            t->objs[i] = Py_NewRef(pairs[i].obj);
        }
    }
    PyMem_Free(pairs);
    f->enum_table = t;
    return 0;
nomem:
    PyMem_Free(t->objs);
    PyMem_Free(t->nums);
    PyMem_Free(t);
    PyMem_Free(pairs);
    return -1;
}

/* the member numbered `num` (borrowed), or NULL */
static inline PyObject *enum_member(const struct NEnum *t, int32_t num)
{
    if (t->span) {
        uint32_t i = (uint32_t)((int64_t)num - t->lo);
        return (int64_t)num >= t->lo && i < t->span ? t->objs[i] : NULL;
    }
    Py_ssize_t lo = 0, hi = t->n - 1;
    while (lo <= hi) {
        Py_ssize_t mid = (lo + hi) >> 1;
        if (t->nums[mid] == num) return t->objs[mid];
        if (t->nums[mid] < num) lo = mid + 1; else hi = mid - 1;
    }
    return NULL;
}

int pbj_enum_has(NField *f, int32_t num)
{
    if (f->enum_table) return enum_member(f->enum_table, num) != NULL;
    if (!f->enum_map) return 1;
    PyObject *key = PyLong_FromLong(num);
    if (!key) return -1;
    int r = PyDict_Contains(f->enum_map, key);
    Py_DECREF(key);
    return r;
}

PyObject *pbj_len_value(int type, const uint8_t *p, const uint8_t *e)
{
    if (type == T_STRING) return pbj_str_value(p, e, 1);
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
        if (f->enum_table) {
            PyObject *member = enum_member(f->enum_table, n);
            if (member) return Py_NewRef(member);
            if (f->closed) {
                *raw = n;
                return Py_NewRef(Py_None);
            }
            return PyLong_FromLong(n);
        }
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
