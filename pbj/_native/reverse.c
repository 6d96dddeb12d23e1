/* reverse.c: the native reverse writer, back to front into a ReverseBuffer's storage.
 *
 * Same bytes as the generated write_reverse_<Name> (pbj/codec/reverse.py) and as the forward
 * writer: it writes the unknown fields first (so they come out last), then the write steps in
 * reverse order, repeated elements and map entries in reverse, each value before its length
 * and tag; a sub-message's length is the number of bytes its writer added, so no size is
 * measured or cached. It uses the buffer only through the writer protocol of
 * pbj/codec/buffer.py: it stores below `pos` in `writer_view` and calls `writer_grow(pos,
 * need)` for room (which replaces the storage). The caller commits.
 *
 * It declines (returns -1; the caller runs the Python writer from the same place) on what the
 * forward writer declines. Every store is checked against `pos` (room made first).
 *
 * Growth runs Python code (writer_grow, the writer_view property, and through them anything: a
 * signal handler, another thread, a finalizer), which may replace any field of the message being
 * written (object.__setattr__) and so free its old value. So every object whose memory is read
 * after a store is held by a strong reference from the moment it is read out of its slot to its
 * last use: a field's value (r_field), a oneof's OneOf, the unknown-field bytes, a map's keys and
 * values (pbj_map_sorted); a str's UTF-8 and a bytes' contents live as long as the object does,
 * and a tuple's items and a sub-message's slots are read from objects held that way. Whatever
 * growth raises (KeyboardInterrupt, MemoryError, an error of a buffer subclass) is not the
 * engine's: it leaves unchanged (NULL), never as a decline.
 */
#include "engine.h"

typedef struct {
    PyObject *rb;
    Py_buffer view;
    int have_view;
    Py_ssize_t pos;
} RW;

static PyObject *s_writer_view, *s_writer_grow;  /* interned names: no allocation per write */

static int rw_view(RW *w)
{
    if (!s_writer_view && !(s_writer_view = PyUnicode_InternFromString("writer_view"))) return -1;
    PyObject *mv = PyObject_GetAttr(w->rb, s_writer_view);
    if (!mv) return -1;
    int r = PyObject_GetBuffer(mv, &w->view, PyBUF_WRITABLE | PyBUF_SIMPLE);
    Py_DECREF(mv);
    if (r < 0) return -1;
    w->have_view = 1;
    if (w->pos < 0 || w->pos > w->view.len) return -1;
    return 0;
}

static void rw_release(RW *w)
{
    if (w->have_view) PyBuffer_Release(&w->view);
    w->have_view = 0;
}

/* make room for `need` bytes below pos (writer_grow replaces the storage) */
static int rw_room(RW *w, Py_ssize_t need)
{
    if (w->pos >= need) return 0;
    rw_release(w);
    if (!s_writer_grow && !(s_writer_grow = PyUnicode_InternFromString("writer_grow"))) return -1;
    PyObject *a = PyLong_FromSsize_t(w->pos), *b = PyLong_FromSsize_t(need);
    PyObject *r = a && b ? PyObject_CallMethodObjArgs(w->rb, s_writer_grow, a, b, NULL) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (!r) return -1;
    w->pos = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    if (w->pos == -1 && PyErr_Occurred()) return -1;
    if (rw_view(w) < 0) return -1;
    return w->pos >= need ? 0 : -1;
}

#define BASE(w) ((uint8_t *)(w)->view.buf)
/* bytes written in the storage so far: stays valid across growth */
#define WRITTEN(w) ((w)->view.len - (w)->pos)

static inline int r_raw(RW *w, const void *p, size_t n)
{
    if (rw_room(w, (Py_ssize_t)n) < 0) return -1;
    w->pos -= (Py_ssize_t)n;
    memcpy(BASE(w) + w->pos, p, n);
    return 0;
}

static inline int r_varint(RW *w, uint64_t v)
{
    uint8_t b[10];
    uint8_t *e = put_varint(b, v);
    return r_raw(w, b, e - b);
}

static int r_value(RW *w, int type, const WV *v)
{
    uint8_t b[8];
    switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64:
        for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v->u >> (8 * i));
        return r_raw(w, b, 8);
    case T_FLOAT: case T_FIXED32: case T_SFIXED32:
        for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v->u >> (8 * i));
        return r_raw(w, b, 4);
    case T_BOOL:
        return r_varint(w, v->u ? 1 : 0);
    case T_STRING: case T_BYTES:
        if (r_raw(w, v->s, (size_t)v->n) < 0) return -1;
        return r_varint(w, (uint64_t)v->n);
    default:
        return r_varint(w, v->u);
    }
}

static int rev_msg(NMessage *m, PyObject *o, RW *w, int level);

static int r_sub(RW *w, NField *f, PyObject *v, int level)
{
    if (Py_TYPE(v) != f->subm->cls) return -1;
    if (f->group) {
        if (r_raw(w, f->end_tag, f->end_tag_len) < 0 || rev_msg(f->subm, v, w, level + 1) < 0) return -1;
        return r_raw(w, f->tag, f->tag_len);
    }
    Py_ssize_t mark = WRITTEN(w);
    if (rev_msg(f->subm, v, w, level + 1) < 0) return -1;
    if (r_varint(w, (uint64_t)(WRITTEN(w) - mark)) < 0) return -1;
    return r_raw(w, f->tag, f->tag_len);
}

static int r_single(RW *w, NField *f, PyObject *v, int level)
{
    if (f->type == T_MESSAGE) return r_sub(w, f, v, level);
    WV x;
    if (pbj_to_wire(f->type, v, &x) < 0 || r_value(w, f->type, &x) < 0) return -1;
    return r_raw(w, f->tag, f->tag_len);
}

static int r_map(RW *w, NField *f, PyObject *v, int level)
{
    if (!PyDict_Check(v)) return -1;
    if (PyDict_GET_SIZE(v) == 0) return 0;
    PMap map;
    int r = -1;
    if (pbj_map_sorted(f, v, &map) < 0) goto done;
    for (Py_ssize_t i = map.n - 1; i >= 0; i--) {
        PyObject *k = map.e[i].k, *x = map.e[i].x;  /* owned by map: they outlive any growth */
        WV kw, xw;
        Py_ssize_t mark = WRITTEN(w);
        if (f->type == T_MESSAGE) {
            if (Py_TYPE(x) != f->subm->cls) goto done;
            Py_ssize_t inner = WRITTEN(w);
            if (rev_msg(f->subm, x, w, level + 1) < 0) goto done;
            if (r_varint(w, (uint64_t)(WRITTEN(w) - inner)) < 0 || r_raw(w, f->vtag, 1) < 0) goto done;
        } else {
            if (pbj_to_wire(f->type, x, &xw) < 0 || r_value(w, f->type, &xw) < 0 || r_raw(w, f->vtag, 1) < 0)
                goto done;
        }
        if (pbj_to_wire(f->key, k, &kw) < 0 || r_value(w, f->key, &kw) < 0 || r_raw(w, &f->ktag, 1) < 0) goto done;
        if (r_varint(w, (uint64_t)(WRITTEN(w) - mark)) < 0 || r_raw(w, f->tag, f->tag_len) < 0) goto done;
    }
    r = 0;
done:
    pbj_map_release(&map);
    return r;
}

static int r_field_held(RW *w, NField *f, PyObject *v, int level)
{
    switch (f->label) {
    case L_IMPLICIT: {
        if (f->type == T_MESSAGE) return v == Py_None ? 0 : r_single(w, f, v, level);
        int p = pbj_implicit_present(f->type, v);
        if (p <= 0) return p;
        return r_single(w, f, v, level);
    }
    case L_EXPLICIT:
        return v == Py_None ? 0 : r_single(w, f, v, level);
    case L_REPEATED: case L_PACKED: {
        if (!PyTuple_CheckExact(v)) return -1;
        Py_ssize_t len = PyTuple_GET_SIZE(v);
        if (len == 0) return 0;
        if (f->label == L_PACKED) {
            Py_ssize_t mark = WRITTEN(w);
            WV x;
            for (Py_ssize_t i = len - 1; i >= 0; i--) {
                if (pbj_to_wire(f->type, PyTuple_GET_ITEM(v, i), &x) < 0 || r_value(w, f->type, &x) < 0) return -1;
            }
            if (r_varint(w, (uint64_t)(WRITTEN(w) - mark)) < 0) return -1;
            return r_raw(w, f->tag, f->tag_len);
        }
        for (Py_ssize_t i = len - 1; i >= 0; i--) {
            if (r_single(w, f, PyTuple_GET_ITEM(v, i), level) < 0) return -1;
        }
        return 0;
    }
    case L_MAP:
        return r_map(w, f, v, level);
    default:
        return -1;
    }
}

/* one field's value `v`, read out of its slot: held until written (growth may empty the slot) */
static int r_field(RW *w, NField *f, PyObject *v, int level)
{
    if (v == NULL) return -1;
    Py_INCREF(v);
    int r = r_field_held(w, f, v, level);
    Py_DECREF(v);
    return r;
}

/* a set oneof (a OneOf, held by the caller): its member's value, if this write step writes it */
static int r_oneof(RW *w, NMessage *m, NWrite *st, PyObject *v, int level)
{
    int fi = pbj_oneof_member(m, st->index, v);
    if (fi < 0) return -1;
    if (!pbj_in_run(st, fi)) return 0;
    return r_single(w, &m->fields[fi], PyTuple_GET_ITEM(v, 1), level);
}

/* the extensions of `o` in extension range k, back to front (holders in reverse tuple order),
 * as wire.write_reverse_range; the tuple, each holder and its plan are held across growth */
static int r_ext(RW *w, NMessage *m, PyObject *o, int k, int level)
{
    PyObject *t = SLOT(o, m->ext_off);
    if (t == NULL || !PyTuple_CheckExact(t)) return -1;
    Py_INCREF(t);
    int r = 0;
    for (Py_ssize_t i = PyTuple_GET_SIZE(t) - 1; i >= 0 && r == 0; i--) {
        PyObject *h = Py_NewRef(PyTuple_GET_ITEM(t, i)), *cap;
        long number;
        NMessage *nm = pbj_holder_of(h, &cap, &number);
        if (!nm) r = -1;
        else {
            if (pbj_in_range(m, k, number)) r = rev_msg(nm, h, w, level + 1);
            Py_DECREF(cap);
        }
        Py_DECREF(h);
    }
    Py_DECREF(t);
    return r;
}

/* `o` is held by the caller; its slots are read one at a time, each when its turn comes */
static int rev_msg(NMessage *m, PyObject *o, RW *w, int level)
{
    if (level >= NATIVE_MAX_LEVEL) return -1;
    PyObject *u = SLOT(o, m->unknown_off);
    if (u == NULL || !PyBytes_CheckExact(u)) return -1;
    Py_INCREF(u);
    int r = r_raw(w, PyBytes_AS_STRING(u), (size_t)PyBytes_GET_SIZE(u));
    Py_DECREF(u);
    if (r < 0) return -1;
    for (int i = m->nwrites - 1; i >= 0; i--) {
        NWrite *st = &m->writes[i];
        if (st->step == W_FIELD) {
            NField *f = &m->fields[st->index];
            if (r_field(w, f, SLOT(o, m->slot_off[f->slot]), level) < 0) return -1;
            continue;
        }
        if (st->step == W_EXTENSIONS) {
            if (r_ext(w, m, o, st->index, level) < 0) return -1;
            continue;
        }
        PyObject *v = SLOT(o, m->slot_off[m->oneofs[st->index].slot]);
        if (v == NULL) return -1;
        if (v == Py_None) continue;
        Py_INCREF(v);
        r = r_oneof(w, m, st, v, level);
        Py_DECREF(v);
        if (r < 0) return -1;
    }
    return 0;
}

/* write_reverse(plan, obj, buf, pos) -> the new pos, or None: the caller runs the Python writer
 * (from len(buf.writer_view) minus the bytes written before: the storage may have grown). Raises
 * what the buffer's growth raised, unchanged; a decline is None with no exception. */
PyObject *pbj_write_reverse(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "write_reverse(plan, obj, buf, pos)");
        return NULL;
    }
    NMessage *m = pbj_message_of(args[0]);
    if (!m) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    RW w = {args[2], {0}, 0, PyLong_AsSsize_t(args[3])};
    if (w.pos == -1 && PyErr_Occurred()) return NULL;
    if (Py_TYPE(args[1]) != m->cls) Py_RETURN_NONE;
    if (rw_view(&w) < 0 || rev_msg(m, args[1], &w, 0) < 0) goto decline;
    rw_release(&w);
    return PyLong_FromSsize_t(w.pos);
decline:
    rw_release(&w);
    if (PyErr_Occurred()) return NULL;  /* not the engine's: unchanged (KeyboardInterrupt, MemoryError...) */
    Py_RETURN_NONE;
}
