/* values.c: what both writers (encode.c, reverse.c) share that is not inline (values.h): the
 * write table, implicit presence's slow path, a oneof's member, map entries in key order.
 *
 * None of these functions runs Python code (see values.h: declines and errors). */
#include "values.h"

/* The writers' table of `m` (engine.h, WStep): each write step's slot offset and shape, so the
 * walk (values.h, pbj_step) reads a step's value with one load and switches once on its shape.
 * Made at the class's first write; 0, or -1 with MemoryError set. */
int pbj_write_table(NMessage *m)
{
    WStep *t = PyMem_Calloc((size_t)m->nwrites + 1, sizeof(WStep));
    if (!t) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < m->nwrites; i++) {
        NWrite *w = &m->writes[i];
        WStep *s = &t[i];
        s->st = w;
        s->index = w->index;
        if (w->step == W_RUN) {
            s->shape = SH_ONEOF;
            s->op = -1;
            NOneof *one = &m->oneofs[w->index];
            s->whole = w->nmembers == one->nmembers;  /* and each member of the oneof is in the run: */
            for (int k = 0; s->whole && k < one->nmembers; k++) s->whole = pbj_in_run(w, one->members[k]);
            s->off = m->slot_off[m->oneofs[w->index].slot];
            continue;
        }
        if (w->step == W_EXTENSIONS && m->ext_off >= 0) {  /* the _pbj_extensions slot's holders */
            s->shape = SH_EXT;
            s->op = -1;
            s->off = m->ext_off;
            continue;
        }
        if (w->step != W_FIELD) {  /* a step this writer does not know: pbj_step declines it */
            s->shape = s->op = -1;
            s->off = m->slot_off[0];
            continue;
        }
        NField *f = &m->fields[w->index];
        s->f = f;
        s->off = m->slot_off[f->slot];
        switch (f->label) {
        case L_IMPLICIT: s->shape = f->type == T_MESSAGE ? SH_MESSAGE : SH_IMPLICIT; break;
        case L_EXPLICIT: s->shape = f->type == T_MESSAGE ? SH_MESSAGE : SH_EXPLICIT; break;
        case L_REPEATED: s->shape = SH_REPEATED; break;
        case L_PACKED: s->shape = SH_PACKED; break;
        case L_MAP: s->shape = SH_MAP; break;
        default: s->shape = -1; break;
        }
        s->op = s->shape == SH_IMPLICIT || s->shape == SH_EXPLICIT ? WOP(s->shape, f->wtype) : -1;
        if (f->wtype == T_ANYSTR && s->op >= 0) {  /* out of the scalars' switch (values.h, pbj_step) */
            s->shape = s->shape == SH_IMPLICIT ? SH_KEPT_IMPLICIT : SH_KEPT_EXPLICIT;
            s->op = -1;
        }
    }
    m->wsteps = t;
    return 0;
}

void pbj_write_table_free(NMessage *m)
{
    PyMem_Free(m->wsteps);
    m->wsteps = NULL;
}

void pbj_writer_types(NField *f)
{
    f->wtype = f->type == T_STRING && !f->utf8 ? T_ANYSTR : f->type;
    f->wkey = f->key == T_STRING && !f->utf8 ? T_ANYSTR : f->key;
}

/* implicit presence ("Field Presence") of a value pbj_wire declined: 1 when it is a zero of its
 * type all the same (not written, as the Python writer skips it), else 0 (a decline) */
int pbj_implicit_zero(int type, PyObject *v)
{
    switch (type) {
    case T_DOUBLE: case T_FLOAT: case T_STRING: case T_BYTES: case T_ANYSTR:
        return 0;  /* pbj_wire took every zero of these */
    default: {
        if (!PyLong_Check(v)) return 0;
        int overflow = 0;
        return PyLong_AsLongLongAndOverflow(v, &overflow) == 0 && overflow == 0;
    }
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

/* values.h: a str that may keep any bytes, not ASCII. Its lone surrogates are looked for first,
 * so that a str without one is never encoded with an error raised and cleared (an exception is an
 * object the cyclic collector tracks: making one may run a collection, and finalizers with it). */
int pbj_str_keep(PyObject *v, WV *out)
{
    int kind = PyUnicode_KIND(v), lone = 0;
    if (kind != PyUnicode_1BYTE_KIND && !(PyUnicode_IS_COMPACT(v) && ((PyCompactUnicodeObject *)v)->utf8)) {
        /* no UTF-8 cached by the str (it caches only a valid one): look at its code points */
        const void *d = PyUnicode_DATA(v);
        Py_ssize_t n = PyUnicode_GET_LENGTH(v);
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = kind == PyUnicode_2BYTE_KIND ? ((const Py_UCS2 *)d)[i] : ((const Py_UCS4 *)d)[i];
            if (c < 0xD800 || c > 0xDFFF) continue;
            if (c < 0xDC80 || c > 0xDCFF) return -1;  /* stands for no byte: the Python writer's error */
            lone = 1;
        }
    }
    if (!lone) {
        out->s = PyUnicode_AsUTF8AndSize(v, &out->n);  /* valid: fails only for want of memory */
        return out->s ? 0 : -1;
    }
    /* "utf-8" with "surrogateescape": CPython's own encoder, its handler by name, in C */
    PyObject *b = PyUnicode_AsEncodedString(v, "utf-8", "surrogateescape");
    if (!b) return -1;
    out->s = PyBytes_AS_STRING(b);  /* (wv_owner gives b back) */
    out->n = PyBytes_GET_SIZE(b);
    return 1;
}

int pbj_kept_scalar(int shape, PyObject *v, WV *x)
{
    return shape == SH_KEPT_IMPLICIT ? implicit_scalar(T_ANYSTR, v, x) : explicit_scalar(T_ANYSTR, v, x);
}

int pbj_in_run(NWrite *w, int field)
{
    for (int k = 0; k < w->nmembers; k++) if (w->members[k] == field) return 1;
    return 0;
}


/* ---- map entries in key order, for both writers ("Maps": deterministic output sorts by key) */

static inline int cmp_order(const void *a, const void *b)
{
    uint64_t x = ((const PMapEntry *)a)->order, y = ((const PMapEntry *)b)->order;
    return (x > y) - (x < y);
}

/* strings in code-point order: the bytewise order of their UTF-8 */
static inline int cmp_utf8(const void *a, const void *b)
{
    const PMapEntry *x = a, *y = b;
    Py_ssize_t n = x->n < y->n ? x->n : y->n;
    const unsigned char *p = (const unsigned char *)x->s, *q = (const unsigned char *)y->s;
    Py_ssize_t i = 0;
    while (i < n && i < 8 && p[i] == q[i]) i++;  /* keys differ early, mostly: no call */
    int c = i < n ? (i < 8 ? (p[i] > q[i]) - (p[i] < q[i]) : memcmp(p + i, q + i, (size_t)(n - i))) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* strings in code-point order, the str's own (Python's sorted): a map one of whose keys keeps
 * bytes that are not UTF-8, whose surrogates do not sort as the bytes they stand for. Both exact
 * str: no Python code, no error. */
static int cmp_str(const void *a, const void *b)
{
    return PyUnicode_Compare(((const PMapEntry *)a)->k, ((const PMapEntry *)b)->k);
}

/* key_order of a string key that may keep any bytes: 0, 1 (it keeps bytes that are not UTF-8: the
 * map sorts by code point, cmp_str), or -1 (out of line: the other maps' sort stays as it is) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int kept_key_order(PyObject *k, PMapEntry *e)
{
    WV w;
    int r = pbj_wire(T_ANYSTR, k, &w);
    if (r < 0) return -1;
    wv_release(r > 0 ? K_OWNED : K_LEN, &w);  /* its order is its code points' (cmp_str), not its bytes' */
    e->s = r > 0 ? NULL : w.s;
    e->n = r > 0 ? 0 : w.n;
    return r;
}

/* the key's place in the order, from its C value: the key must be of the exact built-in type the
 * constructor stores (int, bool, str); anything else got in behind its back and is declined, so
 * no key's __lt__, __eq__ or __hash__ runs in the engine. 0, or -1 (decline or error). A string
 * key that may keep any bytes: kept_key_order. */
static int key_order(int key, PyObject *k, PMapEntry *e)
{
    switch (key) {
    case T_STRING: {
        if (!PyUnicode_CheckExact(k)) return -1;
        WV w;
        if (str_utf8(k, &w) < 0) return -1;
        e->s = w.s;
        e->n = w.n;
        return 0;
    }
    case T_BOOL:
        if (k != Py_True && k != Py_False) return -1;
        e->order = k == Py_True;
        return 0;
    case T_UINT64: case T_FIXED64:
        if (!PyLong_CheckExact(k)) return -1;
        return int_u64(k, &e->order);
    default: {
        int64_t n;
        if (!PyLong_CheckExact(k) || int_i64(k, &n) < 0) return -1;
        e->order = (uint64_t)n ^ ((uint64_t)1 << 63);  /* signed order as unsigned */
        return 0;
    }
    }
}

/* pbj_map_sorted; `kept`: the keys are strings that may keep any bytes (a constant: the other
 * maps' loop has no trace of them) */
PBJ_INLINE int map_sorted(NField *f, PyObject *map, PMap *out, int kept)
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
    int by_str = 0;
    /* PyDict_Next reads the table and runs no Python code; the entries own their key and value */
    while (out->n < len && PyDict_Next(map, &pos, &k, &x)) {
        PMapEntry *e = &out->e[out->n];
        int r = kept ? kept_key_order(k, e) : key_order(f->key, k, e);
        if (r < 0) return -1;
        if (kept) by_str |= r;
        Py_INCREF(k);
        Py_INCREF(x);
        e->k = k;
        e->x = x;
        out->n++;
    }
    int str = f->key == T_STRING;
    if (kept && by_str) {  /* rare: any number of entries, by qsort */
        qsort(out->e, (size_t)out->n, sizeof *out->e, cmp_str);
        return 0;
    }
    if (out->n > 16) {
        qsort(out->e, (size_t)out->n, sizeof *out->e, str ? cmp_utf8 : cmp_order);
        return 0;
    }
    for (Py_ssize_t i = 1; i < out->n; i++) {  /* a few entries: insertion, no call of qsort's set-up */
        PMapEntry e = out->e[i];
        Py_ssize_t j = i;
        for (; j > 0 && (str ? cmp_utf8(&out->e[j - 1], &e) : cmp_order(&out->e[j - 1], &e)) > 0; j--)
            out->e[j] = out->e[j - 1];
        out->e[j] = e;
    }
    return 0;
}

int pbj_map_sorted(NField *f, PyObject *map, PMap *out)
{
    if (f->wkey == T_ANYSTR) return map_sorted(f, map, out, 1);
    return map_sorted(f, map, out, 0);
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
