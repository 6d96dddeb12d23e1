/* reverse.c: the native reverse writer, back to front, in one pass.
 *
 * Same bytes as the generated write_reverse_<Name> (pbj/codec/reverse.py) and as the forward
 * writer: it writes the unknown fields first (so they come out last), then the write steps in
 * reverse order, repeated elements and map entries in reverse, each value before its length
 * and tag; a sub-message's length is the number of bytes its writer added, so no size is
 * measured or cached, and no Python code runs per field. Its room checks are one comparison of
 * two pointers (a scalar field: one check for its tag and value together; a packed run: one
 * check per 256 values, converted in a loop of their own type).
 *
 * It writes into one of two kinds of storage:
 * - a ReverseBuffer (write_reverse(plan, obj, buf, pos)), only through the writer protocol of
 *   pbj/codec/buffer.py: it stores below `pos` in `writer_view` and calls `writer_grow(pos,
 *   need)` for room (which replaces the storage); the caller commits;
 * - the bytes returned (write_reverse(plan, obj): what pbj.encode(obj, reverse=True) calls)
 *   when the object's size is cached: written back to front straight into them, each byte moved
 *   once; a size that does not fill them exactly (set by hand) falls to the next;
 * - else this thread's own scratch storage, kept in the thread's state dict and freed with it;
 *   it grows with PyMem_Malloc, and the result is copied out of it into the bytes returned. A
 *   warm scratch allocates nothing but those bytes.
 *
 * It declines (returns -1; the caller runs the Python writer from the same place) on what the
 * forward writer declines. Every store is checked against the storage's start (room made first).
 *
 * A ReverseBuffer's growth runs Python code (writer_grow, the writer_view property, and through
 * them anything: a signal handler, another thread, a finalizer), which may replace any field of
 * the message being written (object.__setattr__) and so free its old value. So every object
 * whose memory is read after a room check is held by a strong reference from the moment it is
 * read out of its slot to its last use: a field's value, a oneof's OneOf, the unknown-field
 * bytes, a map's keys and values (pbj_map_sorted); a str's UTF-8 and a bytes' contents live as
 * long as the object does (a string that keeps bytes that are not UTF-8 is copied from a bytes
 * object made for it, values.h K_OWNED, held until the copy is done), and a tuple's items and a sub-message's slots are read from objects
 * held that way (a scalar is converted to its C value before the check, and nothing of it is read
 * after). Whatever growth raises (KeyboardInterrupt, MemoryError, an error of a buffer subclass)
 * is not the engine's: it leaves unchanged (NULL), never as a decline. The scratch's growth runs
 * no Python code.
 */
#include "values.h"

typedef struct {
    size_t cap;
    int busy;          /* a write holds it (never two at once: no Python code runs in one) */
    uint8_t *buf;
} Scratch;

typedef struct {
    uint8_t *base, *p, *end;   /* the storage is [base, end); written there so far: [p, end) */
    PyObject *rb;              /* the ReverseBuffer, or NULL: `sc` */
    PbjState *st;              /* the module's state (interned names) */
    Scratch *sc;               /* or NULL too: the bytes returned, made the size cached (`head`) */
    Py_buffer view;
    int have_view;
    /* In place (encode_in_place), the storage is the bytes returned, exactly the size cached.
     * Room checks ask for the most a value can take, so the last values (the message's first
     * fields) may not pass one although they fit: then the write goes on in the scratch, and at
     * the end what it wrote there is copied to the front of the bytes returned, if it fills them
     * exactly. `before`: what was written in the bytes returned before that switch; `head`: their
     * start (NULL: not in place); `head_room`: what is left in front of what was written there. */
    Py_ssize_t before;
    uint8_t *head;
    Py_ssize_t head_room;
} RW;

/* bytes written so far, in the storage and before a switch (lengths are differences of two) */
#define WRITTEN(w) ((w)->end - (w)->p + (w)->before)

static int rw_view(RW *w, Py_ssize_t pos)
{
    PyObject *mv = PyObject_GetAttr(w->rb, w->st->s_writer_view);
    if (!mv) return -1;
    int r = PyObject_GetBuffer(mv, &w->view, PyBUF_WRITABLE | PyBUF_SIMPLE);
    Py_DECREF(mv);
    if (r < 0) return -1;
    w->have_view = 1;
    if (pos < 0 || pos > w->view.len) return -1;
    w->base = (uint8_t *)w->view.buf;
    w->end = w->base + w->view.len;
    w->p = w->base + pos;
    return 0;
}

static void rw_release(RW *w)
{
    if (w->have_view) PyBuffer_Release(&w->view);
    w->have_view = 0;
}

static Scratch *thread_scratch(PbjState *st);

/* make room for `need` bytes below p: the slow path of room() */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int rw_grow(RW *w, size_t need)
{
    Py_ssize_t written = w->end - w->p;
    if (w->rb == NULL && w->sc == NULL) {  /* in place: on in the scratch (see RW) */
        Scratch *sc = thread_scratch(w->st);
        if (!sc) return -1;
        w->before = written;
        w->head_room = w->p - w->base;
        w->sc = sc;
        sc->busy = 1;
        w->base = sc->buf;
        w->p = w->end = sc->buf + sc->cap;
        return (size_t)(w->p - w->base) >= need ? 0 : rw_grow(w, need);
    }
    if (w->rb == NULL) {
        Scratch *sc = w->sc;
        size_t cap = sc->cap * 2;
        if (cap < (size_t)written + need + 64) cap = (size_t)written + need + 64;
        uint8_t *nb = PyMem_Malloc(cap);
        if (!nb) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(nb + cap - written, w->p, (size_t)written);
        PyMem_Free(sc->buf);
        sc->buf = nb;
        sc->cap = cap;
        w->base = nb;
        w->end = nb + cap;
        w->p = w->end - written;
        return 0;
    }
    Py_ssize_t pos = w->p - w->base;
    rw_release(w);
    PyObject *a = PyLong_FromSsize_t(pos), *b = PyLong_FromSsize_t((Py_ssize_t)need);
    PyObject *r = a && b ? PyObject_CallMethodObjArgs(w->rb, w->st->s_writer_grow, a, b, NULL) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (!r) return -1;
    pos = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    if (pos == -1 && PyErr_Occurred()) return -1;
    if (rw_view(w, pos) < 0) return -1;
    /* the protocol: what was written is at the new storage's end, and there is room below it */
    return w->p - w->base >= (Py_ssize_t)need && w->end - w->p == written ? 0 : -1;
}

static inline int room(RW *w, size_t need)
{
    return (size_t)(w->p - w->base) >= need ? 0 : rw_grow(w, need);
}

/* ---- stores below p, room made first ---- */

/* room a scalar field needs: its tag (at most 5 bytes) and a varint (at most 10) */
#define SCALAR_ROOM 15

static inline void r_bytes(RW *w, const void *s, size_t n)
{
    w->p -= n;
    memcpy(w->p, s, n);
}

static inline void r_varint(RW *w, uint64_t v)
{
    if (v < 0x80) {
        *--w->p = (uint8_t)v;
        return;
    }
    uint8_t *q = w->p -= vlen(v);
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q = (uint8_t)v;
}

static inline void r_tag(RW *w, const uint8_t *tag, int len)
{
    switch (len) {
    case 1: *--w->p = tag[0]; return;
    case 2: w->p -= 2; w->p[0] = tag[0]; w->p[1] = tag[1]; return;
    default: r_bytes(w, tag, (size_t)len); return;
    }
}

static inline void r_fixed32(RW *w, uint64_t u)
{
    uint32_t v = (uint32_t)u;
    w->p -= 4;
    memcpy(w->p, &v, 4);  /* little-endian (checked when the module loads) */
}

static inline void r_fixed64(RW *w, uint64_t u)
{
    w->p -= 8;
    memcpy(w->p, &u, 8);
}

/* a converted number of kind K_VARINT, K_FIXED32 or K_FIXED64 (room made) */
static inline void r_number(RW *w, int kind, const WV *x)
{
    switch (kind) {
    case K_FIXED64: r_fixed64(w, x->u); return;
    case K_FIXED32: r_fixed32(w, x->u); return;
    default: r_varint(w, x->u); return;
    }
}

/* one converted scalar of `kind` with its tag (nothing of the Python value is read but x->s) */
PBJ_INLINE int r_scalar(RW *w, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    if (kind == K_LEN) {
        if (room(w, (size_t)x->n + SCALAR_ROOM) < 0) return -1;
        r_bytes(w, x->s, (size_t)x->n);
        r_varint(w, (uint64_t)x->n);
    } else {
        if (room(w, SCALAR_ROOM) < 0) return -1;
        r_number(w, kind, x);
    }
    r_tag(w, tag, tag_len);
    return 0;
}

/* a K_OWNED scalar (r_scalar's arguments), its bytes object held across the room check (growth runs
 * Python code, which may drop the str it was made from) until it is copied, then released */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int r_kept(RW *w, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    int r = r_scalar(w, K_LEN, tag, tag_len, x);
    wv_release(kind, x);
    return r;
}

/* a converted scalar of any kind with its tag (a K_OWNED one's bytes object released) */
static inline int r_any(RW *w, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    if (kind == K_OWNED) return r_kept(w, kind, tag, tag_len, x);
    return r_scalar(w, kind, tag, tag_len, x);
}

/* ---- messages ---- */

static int rev_msg(NMessage *m, PyObject *o, RW *w, int level);

/* sub-message v (of f->subm's class, checked; held by the caller) with its length and tag */
static int r_sub(RW *w, NField *f, PyObject *v, int level)
{
    if (f->group) {
        if (room(w, f->end_tag_len) < 0) return -1;
        r_bytes(w, f->end_tag, f->end_tag_len);
        if (rev_msg(f->subm, v, w, level + 1) < 0 || room(w, f->tag_len) < 0) return -1;
        r_tag(w, f->tag, f->tag_len);
        return 0;
    }
    Py_ssize_t mark = WRITTEN(w);
    if (rev_msg(f->subm, v, w, level + 1) < 0 || room(w, SCALAR_ROOM) < 0) return -1;
    r_varint(w, (uint64_t)(WRITTEN(w) - mark));
    r_tag(w, f->tag, f->tag_len);
    return 0;
}

/* Packed values of one type, converted and stored in a loop of their own: `i` runs down from
 * `*next` for at most `chunk` values (room for them made). 0, or -1 (a value declined). */
#define PACKED_LOOP(TYPE, STORE) \
    for (; i >= stop; i--) { \
        WV x; \
        if (pbj_wire(TYPE, items[i], &x) < 0) return -1; \
        STORE; \
    }

static int r_packed_chunk(RW *w, int type, PyObject **items, Py_ssize_t i, Py_ssize_t stop)
{
    switch (type) {
    case T_DOUBLE: PACKED_LOOP(T_DOUBLE, r_fixed64(w, x.u)) return 0;
    case T_FLOAT: PACKED_LOOP(T_FLOAT, r_fixed32(w, x.u)) return 0;
    case T_FIXED64: PACKED_LOOP(T_FIXED64, r_fixed64(w, x.u)) return 0;
    case T_SFIXED64: PACKED_LOOP(T_SFIXED64, r_fixed64(w, x.u)) return 0;
    case T_FIXED32: PACKED_LOOP(T_FIXED32, r_fixed32(w, x.u)) return 0;
    case T_SFIXED32: PACKED_LOOP(T_SFIXED32, r_fixed32(w, x.u)) return 0;
    case T_INT64: PACKED_LOOP(T_INT64, r_varint(w, x.u)) return 0;
    case T_UINT64: PACKED_LOOP(T_UINT64, r_varint(w, x.u)) return 0;
    case T_INT32: PACKED_LOOP(T_INT32, r_varint(w, x.u)) return 0;
    case T_UINT32: PACKED_LOOP(T_UINT32, r_varint(w, x.u)) return 0;
    case T_ENUM: PACKED_LOOP(T_ENUM, r_varint(w, x.u)) return 0;
    case T_SINT32: PACKED_LOOP(T_SINT32, r_varint(w, x.u)) return 0;
    case T_SINT64: PACKED_LOOP(T_SINT64, r_varint(w, x.u)) return 0;
    case T_BOOL: PACKED_LOOP(T_BOOL, *--w->p = (uint8_t)x.u) return 0;
    default: return -1;
    }
}

#define PACKED_CHUNK 256

/* a packed run (t: a non-empty tuple, held by the caller) as one LEN value */
static int r_packed(RW *w, NField *f, PyObject *t)
{
    Py_ssize_t n = PyTuple_GET_SIZE(t), mark = WRITTEN(w);
    PyObject **items = &PyTuple_GET_ITEM(t, 0);
    size_t each = f->width ? (size_t)f->width : 10;
    for (Py_ssize_t i = n - 1; i >= 0; i -= PACKED_CHUNK) {
        Py_ssize_t stop = i >= PACKED_CHUNK ? i - PACKED_CHUNK + 1 : 0;
        if (room(w, each * (size_t)(i - stop + 1)) < 0 || r_packed_chunk(w, f->type, items, i, stop) < 0) return -1;
    }
    if (room(w, SCALAR_ROOM) < 0) return -1;
    r_varint(w, (uint64_t)(WRITTEN(w) - mark));
    r_tag(w, f->tag, f->tag_len);
    return 0;
}

/* repeated values, each with its tag (t: a non-empty tuple, held by the caller), last first */
static int r_repeated(RW *w, NField *f, PyObject *t, int level)
{
    for (Py_ssize_t i = PyTuple_GET_SIZE(t) - 1; i >= 0; i--) {
        PyObject *e = PyTuple_GET_ITEM(t, i);
        if (f->type == T_MESSAGE) {
            if (Py_TYPE(e) != f->subm->cls || r_sub(w, f, e, level) < 0) return -1;
            continue;
        }
        WV x;
        int kind = any_scalar(f->wtype, e, &x);
        if (kind < 0 || r_any(w, kind, f->tag, f->tag_len, &x) < 0) return -1;
    }
    return 0;
}

static int r_map(RW *w, NField *f, PyObject *v, int level)
{
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
            if (rev_msg(f->subm, x, w, level + 1) < 0 || room(w, SCALAR_ROOM) < 0) goto done;
            r_varint(w, (uint64_t)(WRITTEN(w) - inner));
            *--w->p = f->vtag[0];
        } else {
            int kind = any_scalar(f->wtype, x, &xw);
            if (kind < 0 || r_any(w, kind, f->vtag, 1, &xw) < 0) goto done;
        }
        int kk = any_scalar(f->wkey, k, &kw);
        if (kk < 0 || r_any(w, kk, &f->ktag, 1, &kw) < 0 || room(w, SCALAR_ROOM) < 0)
            goto done;
        r_varint(w, (uint64_t)(WRITTEN(w) - mark));
        r_tag(w, f->tag, f->tag_len);
    }
    r = 0;
done:
    pbj_map_release(&map);
    return r;
}

/* what pbj_step found, other than a number (its value held by the caller; what x owns released) */
static int r_found(RW *w, int kind, NField *f, PyObject *v, const WV *x, int level)
{
    switch (kind) {
    case K_LEN: return r_scalar(w, K_LEN, f->tag, f->tag_len, x);
    case K_OWNED: return r_kept(w, K_OWNED, f->tag, f->tag_len, x);
    case K_MESSAGE: return r_sub(w, f, v, level);
    case K_REPEATED: return r_repeated(w, f, v, level);
    case K_PACKED: return r_packed(w, f, v);
    case K_MAP: return r_map(w, f, v, level);
    default: return -1;
    }
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
        NMessage *nm = pbj_holder_of(m->st, h, &cap, &number);
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
    if (!m->wsteps && pbj_write_table(m) < 0) return -1;
    PyObject *u = SLOT(o, m->unknown_off);
    if (u == NULL || !PyBytes_CheckExact(u)) return -1;
    Py_ssize_t un = PyBytes_GET_SIZE(u);
    if (un) {
        Py_INCREF(u);
        int r = room(w, (size_t)un);
        if (r == 0) r_bytes(w, PyBytes_AS_STRING(u), (size_t)un);
        Py_DECREF(u);
        if (r < 0) return -1;
    }
    for (int i = m->nwrites - 1; i >= 0; i--) {
        PyObject *hold, *v;
        NField *f;
        WV x;
        int kind = pbj_step(m, &m->wsteps[i], o, &hold, &f, &v, &x);
        if (kind == K_ABSENT) continue;
        if (kind < 0) return -1;
        if (kind <= K_FIXED64) {
            /* a number: its C value is all that is written, nothing to hold */
            if (room(w, SCALAR_ROOM) < 0) return -1;
            r_number(w, kind, &x);
            r_tag(w, f->tag, f->tag_len);
            continue;
        }
        if (kind == K_EXT) {
            if (r_ext(w, m, o, m->wsteps[i].index, level) < 0) return -1;
            continue;
        }
        Py_INCREF(hold);
        int r = r_found(w, kind, f, v, &x, level);
        Py_DECREF(hold);
        if (r < 0) return -1;
    }
    return 0;
}

/* ---- this thread's scratch storage ---- */

static void scratch_free(PyObject *cap)
{
    Scratch *sc = PyCapsule_GetPointer(cap, NULL);
    if (sc) {
        PyMem_Free(sc->buf);
        PyMem_Free(sc);
    }
}

/* this thread's scratch (made at its first use), or NULL (an error set, or busy: no error) */
static Scratch *thread_scratch(PbjState *st)
{
    PyObject *d = PyThreadState_GetDict();
    if (!d) return NULL;
    PyObject *cap = PyDict_GetItemWithError(d, st->s_scratch);
    if (cap && PyCapsule_CheckExact(cap)) {
        Scratch *sc = PyCapsule_GetPointer(cap, NULL);
        if (!sc) PyErr_Clear();
        return sc && !sc->busy ? sc : NULL;
    }
    if (PyErr_Occurred()) return NULL;
    Scratch *sc = PyMem_Calloc(1, sizeof(Scratch));
    if (!sc || !(sc->buf = PyMem_Malloc(1 << 16))) {
        PyMem_Free(sc);
        PyErr_NoMemory();
        return NULL;
    }
    sc->cap = 1 << 16;
    cap = PyCapsule_New(sc, NULL, scratch_free);
    if (!cap) {
        PyMem_Free(sc->buf);
        PyMem_Free(sc);
        return NULL;
    }
    int r = PyDict_SetItem(d, st->s_scratch, cap);
    Py_DECREF(cap);  /* the dict owns it (and frees the scratch with the thread's state) */
    return r < 0 ? NULL : sc;
}

/* write_reverse(plan, obj) -> bytes, `obj` written back to front straight into the bytes returned:
 * its size is cached, the bytes object made that size. NULL: not done (no error: the size lied, or
 * a decline; the scratch decides), or an error that is not the engine's (set). */
static PyObject *encode_in_place(NMessage *m, PyObject *o, Py_ssize_t n)
{
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (!out) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) PyErr_Clear();  /* a size set by hand, maybe */
        return NULL;
    }
    uint8_t *base = (uint8_t *)PyBytes_AS_STRING(out);
    RW w = {.base = base, .p = base + n, .end = base + n, .st = m->st, .head = base};
    int r = rev_msg(m, o, &w, 0);
    if (w.sc == NULL) {  /* all of it in place */
        if (r == 0 && w.p == w.base) return out;
    } else {  /* the first bytes in the scratch: to the front, if they fill it exactly */
        Py_ssize_t tail = w.end - w.p;
        if (r == 0 && tail == w.head_room) {
            memcpy(w.head, w.p, (size_t)tail);
            w.sc->busy = 0;
            return out;
        }
        w.sc->busy = 0;
    }
    Py_DECREF(out);  /* a size that lied (or a decline): the scratch decides */
    return NULL;
}

/* write_reverse(plan, obj) -> bytes: in place if its size is cached, else written into this
 * thread's scratch and copied out (no size cached: a size cached on a message means the sizes
 * of all its sub-messages are, which the forward writers' sizes-cached walk reads) */
static PyObject *encode_reverse_bytes(NMessage *m, PyObject *o)
{
    Py_ssize_t n = pbj_cached_size(o, m);
    if (n >= 0) {
        PyObject *out = encode_in_place(m, o, n);
        if (out || PyErr_Occurred()) return out;
    }
    Scratch *sc = thread_scratch(m->st);
    if (!sc) goto decline;
    RW w = {.base = sc->buf, .p = sc->buf + sc->cap, .end = sc->buf + sc->cap, .st = m->st, .sc = sc};
    sc->busy = 1;
    int r = rev_msg(m, o, &w, 0);
    sc->busy = 0;
    if (r < 0) goto decline;
    return PyBytes_FromStringAndSize((const char *)w.p, w.end - w.p);
decline:
    if (PyErr_Occurred()) return NULL;  /* not the engine's: unchanged (MemoryError) */
    Py_RETURN_NONE;
}

/* write_reverse(plan, obj, buf, pos) -> the new pos, or None: the caller runs the Python writer
 * (from len(buf.writer_view) minus the bytes written before: the storage may have grown). Raises
 * what the buffer's growth raised, unchanged; a decline is None with no exception.
 * write_reverse(plan, obj) -> the bytes of obj (pbj.encode(obj, reverse=True)), or None. */
PyObject *pbj_write_reverse(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 && nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "write_reverse(plan, obj, buf, pos) or write_reverse(plan, obj)");
        return NULL;
    }
    NMessage *m = pbj_message_of(args[0]);
    if (!m) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (nargs == 2) {
        if (Py_TYPE(args[1]) != m->cls) Py_RETURN_NONE;
        return encode_reverse_bytes(m, args[1]);
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[3]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    if (Py_TYPE(args[1]) != m->cls) Py_RETURN_NONE;
    RW w = {.rb = args[2], .st = m->st};
    if (rw_view(&w, pos) < 0 || rev_msg(m, args[1], &w, 0) < 0) goto decline;
    pos = w.p - w.base;
    rw_release(&w);
    return PyLong_FromSsize_t(pos);
decline:
    rw_release(&w);
    if (PyErr_Occurred()) return NULL;  /* not the engine's: unchanged (KeyboardInterrupt, MemoryError...) */
    Py_RETURN_NONE;
}
