/* encode.c: the native forward writer: sizes cached on the objects, then one pass front to back.
 *
 * Same output as the generated size_<Name>/write_<Name> (pbj/codec/forward.py): fields in the
 * plan's write order (ascending field number, a oneof's set member where its number falls),
 * implicit-presence scalars only when not zero (-0.0 is written), map entries sorted by key,
 * both key and value, unknown fields last. Each measured message's size is cached in its
 * _pbj_size slot, as the Python writer caches it.
 *
 * It declines (the caller runs the Python writer, which raises its EncodeError with the path)
 * on anything it does not know to be right: a value of an unexpected Python type, an integer
 * out of its type's range, a float too large for float32, a str that is not valid UTF-8, a
 * oneof holding something that is not one of its members, a cached size that does not match
 * the bytes written (that one it reports apart: NotImplemented). Every store is bounds-checked
 * against the output's size.
 *
 * It runs no Python code: every value it reads is of an exact built-in type (or an enum member)
 * or declined, map keys are sorted on their C values (values.c: pbj_map_sorted), and it allocates
 * no object the cyclic collector tracks (so no collection, finalizer or thread switch can run in
 * the middle). The borrowed references it reads therefore stay valid for the whole write. A
 * decline returns None; an error that is not the engine's (MemoryError) is raised unchanged.
 */
#include "engine.h"
#include <math.h>


/* the size cached on `o` (-1: none), or -2: not an exact int of a size's range (decline) */
static Py_ssize_t cached_size(PyObject *o, NMessage *m)
{
    PyObject *s = SLOT(o, m->size_off);
    if (s == NULL || !PyLong_CheckExact(s)) return -2;
    Py_ssize_t n = PyLong_AsSsize_t(s);
    if (n == -1 && PyErr_Occurred()) {
        PyErr_Clear();  /* an OverflowError: no size the engine wrote */
        return -2;
    }
    return n < -1 ? -2 : n;
}

static int set_size(PyObject *o, NMessage *m, Py_ssize_t n)
{
    PyObject *s = PyLong_FromSsize_t(n);
    if (!s) return -1;
    Py_XSETREF(SLOT(o, m->size_off), s);
    return 0;
}

/* the size of sub-message `v` of field f (cached or measured), or -1 */
static Py_ssize_t sub_size(NField *f, PyObject *v, int level)
{
    if (Py_TYPE(v) != f->subm->cls) return -1;
    Py_ssize_t s = cached_size(v, f->subm);
    if (s == -2) return -1;
    if (s < 0) s = pbj_size_of(f->subm, v, level + 1);
    return s;
}

static inline Py_ssize_t len_field(Py_ssize_t taglen, Py_ssize_t s)
{
    return taglen + varint_len((uint64_t)s) + s;
}

/* the size of one present singular value of f with its tag, or -1 */
static Py_ssize_t single_size(NField *f, PyObject *v, int level)
{
    if (f->type == T_MESSAGE) {
        Py_ssize_t s = sub_size(f, v, level);
        if (s < 0) return -1;
        return f->group ? f->tag_len + f->end_tag_len + s : len_field(f->tag_len, s);
    }
    WV w;
    if (pbj_to_wire(f->type, v, &w) < 0) return -1;
    return f->tag_len + pbj_wire_size(f->type, &w);
}

static Py_ssize_t map_entry_size(NField *f, PyObject *k, PyObject *x, int level)
{
    WV w;
    if (pbj_to_wire(f->key, k, &w) < 0) return -1;
    Py_ssize_t e = 1 + pbj_wire_size(f->key, &w);
    if (f->type == T_MESSAGE) {
        Py_ssize_t s = sub_size(f, x, level);
        if (s < 0) return -1;
        e += 1 + varint_len((uint64_t)s) + s;
    } else {
        if (pbj_to_wire(f->type, x, &w) < 0) return -1;
        e += 1 + pbj_wire_size(f->type, &w);
    }
    return e;
}

static Py_ssize_t field_size(NMessage *m, NField *f, PyObject *v, int level)
{
    if (v == NULL) return -1;
    switch (f->label) {
    case L_IMPLICIT: {
        if (f->type == T_MESSAGE) return v == Py_None ? 0 : single_size(f, v, level);
        int p = pbj_implicit_present(f->type, v);
        if (p <= 0) return p;
        return single_size(f, v, level);
    }
    case L_EXPLICIT:
        return v == Py_None ? 0 : single_size(f, v, level);
    case L_REPEATED: case L_PACKED: {
        if (!PyTuple_CheckExact(v)) return -1;
        Py_ssize_t len = PyTuple_GET_SIZE(v), n = 0;
        if (len == 0) return 0;
        if (f->label == L_PACKED) {
            for (Py_ssize_t i = 0; i < len; i++) {
                WV w;
                if (pbj_to_wire(f->type, PyTuple_GET_ITEM(v, i), &w) < 0) return -1;
                n += pbj_wire_size(f->type, &w);
            }
            return len_field(f->tag_len, n);
        }
        for (Py_ssize_t i = 0; i < len; i++) {
            Py_ssize_t s = single_size(f, PyTuple_GET_ITEM(v, i), level);
            if (s < 0) return -1;
            n += s;
        }
        return n;
    }
    case L_MAP: {
        if (!PyDict_Check(v)) return -1;
        Py_ssize_t pos = 0, n = 0;
        PyObject *k, *x;
        while (PyDict_Next(v, &pos, &k, &x)) {
            Py_ssize_t e = map_entry_size(f, k, x, level);
            if (e < 0) return -1;
            n += len_field(f->tag_len, e);
        }
        return n;
    }
    default:
        return -1;
    }
}

/* the size of the extensions of `o` whose number is in extension range k (plan step EXTENSIONS):
 * its holders' sizes, cached or measured, as pbj.extensions.wire.size_range */
static Py_ssize_t ext_size(NMessage *m, PyObject *o, int k, int level)
{
    PyObject *t = SLOT(o, m->ext_off);
    if (t == NULL || !PyTuple_CheckExact(t)) return -1;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
        PyObject *h = PyTuple_GET_ITEM(t, i), *cap;
        long number;
        NMessage *nm = pbj_holder_of(h, &cap, &number);
        if (!nm) return -1;
        Py_ssize_t s = 0;
        if (pbj_in_range(m, k, number)) {
            s = cached_size(h, nm);
            if (s == -1) s = pbj_size_of(nm, h, level + 1);
        }
        Py_DECREF(cap);
        if (s < 0) return -1;
        n += s;
    }
    return n;
}

Py_ssize_t pbj_size_of(NMessage *m, PyObject *o, int level)
{
    if (level >= NATIVE_MAX_LEVEL) return -1;
    Py_ssize_t n = 0;
    for (int i = 0; i < m->nwrites; i++) {
        NWrite *w = &m->writes[i];
        Py_ssize_t s;
        if (w->step == W_FIELD) {
            NField *f = &m->fields[w->index];
            s = field_size(m, f, SLOT(o, m->slot_off[f->slot]), level);
        } else if (w->step == W_EXTENSIONS) {
            s = ext_size(m, o, w->index, level);
        } else {
            PyObject *v = SLOT(o, m->slot_off[m->oneofs[w->index].slot]);
            if (v == NULL) return -1;
            if (v == Py_None) continue;
            int fi = pbj_oneof_member(m, w->index, v);
            if (fi < 0) return -1;
            if (!pbj_in_run(w, fi)) continue;
            s = single_size(&m->fields[fi], PyTuple_GET_ITEM(v, 1), level);
        }
        if (s < 0) return -1;
        n += s;
    }
    PyObject *u = SLOT(o, m->unknown_off);
    if (u == NULL || !PyBytes_CheckExact(u)) return -1;
    n += PyBytes_GET_SIZE(u);
    if (set_size(o, m, n) < 0) return -1;
    return n;
}

/* ---------------------------------------------------------------- writing */

typedef struct {
    uint8_t *q, *lim;
    int lied;      /* a cached size did not match the bytes written: the object changed behind the
                    * constructor's back (object.__setattr__) after it was measured */
} W;

static inline int w_raw(W *w, const void *p, size_t n)
{
    if ((size_t)(w->lim - w->q) < n) return -1;
    memcpy(w->q, p, n);
    w->q += n;
    return 0;
}

static inline int w_varint(W *w, uint64_t v)
{
    if (w->lim - w->q < 10 && w->lim - w->q < varint_len(v)) return -1;
    w->q = put_varint(w->q, v);
    return 0;
}

static int w_value(W *w, int type, const WV *v)
{
    switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64: {
        uint8_t b[8];
        for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v->u >> (8 * i));
        return w_raw(w, b, 8);
    }
    case T_FLOAT: case T_FIXED32: case T_SFIXED32: {
        uint8_t b[4];
        for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v->u >> (8 * i));
        return w_raw(w, b, 4);
    }
    case T_BOOL:
        return w_varint(w, v->u ? 1 : 0);
    case T_STRING: case T_BYTES:
        if (w_varint(w, (uint64_t)v->n) < 0) return -1;
        return w_raw(w, v->s, (size_t)v->n);
    default:
        return w_varint(w, v->u);
    }
}

static int write_msg(NMessage *m, PyObject *o, W *w, int level);

static int w_sub(W *w, NField *f, PyObject *v, int level)
{
    Py_ssize_t s = sub_size(f, v, level);
    if (s < 0 || w_raw(w, f->tag, f->tag_len) < 0) return -1;
    if (!f->group && w_varint(w, (uint64_t)s) < 0) return -1;
    uint8_t *before = w->q;
    if (write_msg(f->subm, v, w, level + 1) < 0) return -1;
    if (w->q - before != s) {  /* a cached size that lies */
        w->lied = 1;
        return -1;
    }
    if (f->group) return w_raw(w, f->end_tag, f->end_tag_len);
    return 0;
}

static int w_single(W *w, NField *f, PyObject *v, int level)
{
    if (f->type == T_MESSAGE) return w_sub(w, f, v, level);
    WV x;
    if (pbj_to_wire(f->type, v, &x) < 0 || w_raw(w, f->tag, f->tag_len) < 0) return -1;
    return w_value(w, f->type, &x);
}

static int w_map(W *w, NField *f, PyObject *v, int level)
{
    if (!PyDict_Check(v)) return -1;
    if (PyDict_GET_SIZE(v) == 0) return 0;
    PMap map;
    int r = -1;
    if (pbj_map_sorted(f, v, &map) < 0) goto done;
    for (Py_ssize_t i = 0; i < map.n; i++) {
        PyObject *k = map.e[i].k, *x = map.e[i].x;
        WV kw, xw;
        Py_ssize_t e = map_entry_size(f, k, x, level);
        if (e < 0 || w_raw(w, f->tag, f->tag_len) < 0 || w_varint(w, (uint64_t)e) < 0) goto done;
        if (pbj_to_wire(f->key, k, &kw) < 0 || w_raw(w, &f->ktag, 1) < 0 || w_value(w, f->key, &kw) < 0) goto done;
        if (f->type == T_MESSAGE) {
            Py_ssize_t s = sub_size(f, x, level);
            if (s < 0 || w_raw(w, f->vtag, 1) < 0 || w_varint(w, (uint64_t)s) < 0) goto done;
            uint8_t *before = w->q;
            if (write_msg(f->subm, x, w, level + 1) < 0) goto done;
            if (w->q - before != s) {
                w->lied = 1;
                goto done;
            }
        } else {
            if (pbj_to_wire(f->type, x, &xw) < 0 || w_raw(w, f->vtag, 1) < 0 || w_value(w, f->type, &xw) < 0) goto done;
        }
    }
    r = 0;
done:
    pbj_map_release(&map);
    return r;
}

static int w_field(W *w, NMessage *m, NField *f, PyObject *v, int level)
{
    if (v == NULL) return -1;
    switch (f->label) {
    case L_IMPLICIT: {
        if (f->type == T_MESSAGE) return v == Py_None ? 0 : w_single(w, f, v, level);
        int p = pbj_implicit_present(f->type, v);
        if (p <= 0) return p;
        return w_single(w, f, v, level);
    }
    case L_EXPLICIT:
        return v == Py_None ? 0 : w_single(w, f, v, level);
    case L_REPEATED: case L_PACKED: {
        if (!PyTuple_CheckExact(v)) return -1;
        Py_ssize_t len = PyTuple_GET_SIZE(v);
        if (len == 0) return 0;
        if (f->label == L_PACKED) {
            Py_ssize_t n = 0;
            WV x;
            for (Py_ssize_t i = 0; i < len; i++) {
                if (pbj_to_wire(f->type, PyTuple_GET_ITEM(v, i), &x) < 0) return -1;
                n += pbj_wire_size(f->type, &x);
            }
            if (w_raw(w, f->tag, f->tag_len) < 0 || w_varint(w, (uint64_t)n) < 0) return -1;
            for (Py_ssize_t i = 0; i < len; i++) {
                if (pbj_to_wire(f->type, PyTuple_GET_ITEM(v, i), &x) < 0 || w_value(w, f->type, &x) < 0) return -1;
            }
            return 0;
        }
        for (Py_ssize_t i = 0; i < len; i++) {
            if (w_single(w, f, PyTuple_GET_ITEM(v, i), level) < 0) return -1;
        }
        return 0;
    }
    case L_MAP:
        return w_map(w, f, v, level);
    default:
        return -1;
    }
}

/* the extensions of `o` in extension range k, each holder written with its own plan (its field
 * carries the extension's tag), in the tuple's order (sorted by number), as wire.write_range */
static int w_ext(W *w, NMessage *m, PyObject *o, int k, int level)
{
    PyObject *t = SLOT(o, m->ext_off);
    if (t == NULL || !PyTuple_CheckExact(t)) return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
        PyObject *h = PyTuple_GET_ITEM(t, i), *cap;
        long number;
        NMessage *nm = pbj_holder_of(h, &cap, &number);
        if (!nm) return -1;
        int r = 0;
        if (pbj_in_range(m, k, number)) {
            Py_ssize_t s = cached_size(h, nm);
            uint8_t *before = w->q;
            r = s < 0 ? -1 : write_msg(nm, h, w, level + 1);
            if (r == 0 && w->q - before != s) {  /* a cached size that lies */
                w->lied = 1;
                r = -1;
            }
        }
        Py_DECREF(cap);
        if (r < 0) return -1;
    }
    return 0;
}

static int write_msg(NMessage *m, PyObject *o, W *w, int level)
{
    if (level >= NATIVE_MAX_LEVEL) return -1;
    for (int i = 0; i < m->nwrites; i++) {
        NWrite *st = &m->writes[i];
        if (st->step == W_FIELD) {
            NField *f = &m->fields[st->index];
            if (w_field(w, m, f, SLOT(o, m->slot_off[f->slot]), level) < 0) return -1;
            continue;
        }
        if (st->step == W_EXTENSIONS) {
            if (w_ext(w, m, o, st->index, level) < 0) return -1;
            continue;
        }
        PyObject *v = SLOT(o, m->slot_off[m->oneofs[st->index].slot]);
        if (v == NULL) return -1;
        if (v == Py_None) continue;
        int fi = pbj_oneof_member(m, st->index, v);
        if (fi < 0) return -1;
        if (!pbj_in_run(st, fi)) continue;
        if (w_single(w, &m->fields[fi], PyTuple_GET_ITEM(v, 1), level) < 0) return -1;
    }
    PyObject *u = SLOT(o, m->unknown_off);
    if (u == NULL || !PyBytes_CheckExact(u)) return -1;
    return w_raw(w, PyBytes_AS_STRING(u), (size_t)PyBytes_GET_SIZE(u));
}

/* encode(plan, obj) -> bytes, or None: hand `obj` to the Python writer, or NotImplemented: a
 * size cached in `obj`'s tree does not match its bytes (the caller measures again, trusting no
 * cached size); raises only what is not the engine's own (values.c: declines and errors). */
PyObject *pbj_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "encode(plan, obj)");
        return NULL;
    }
    NMessage *m = pbj_message_of(args[0]);
    PyObject *o = args[1];
    if (!m) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (Py_TYPE(o) != m->cls) goto decline;
    Py_ssize_t n = cached_size(o, m);
    if (n == -2) goto decline;
    if (n < 0 && (n = pbj_size_of(m, o, 0)) < 0) goto decline;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (!out) return NULL;
    W w = {(uint8_t *)PyBytes_AS_STRING(out), (uint8_t *)PyBytes_AS_STRING(out) + n, 0};
    int r = write_msg(m, o, &w, 0);
    if (r == 0 && w.q != w.lim) w.lied = 1;
    if (r < 0 || w.lied) {
        Py_DECREF(out);
        if (w.lied && !PyErr_Occurred()) Py_RETURN_NOTIMPLEMENTED;
        goto decline;
    }
    return out;
decline:
    if (PyErr_Occurred()) return NULL;  /* not the engine's: unchanged (a MemoryError) */
    Py_RETURN_NONE;
}
