/* decode.c: the object sink of the wire walker (walk.h): pbj's own objects, what pbj.decode returns.
 *
 * It follows the contract of the generated parse_<Name> (pbj/codec/parse.py) value for value; the
 * walker (walk.h) reads the wire, this file makes the values: last value wins for singular fields,
 * a singular sub-message that occurs more than once is the decode of all its occurrences as one
 * message (the walker hands them over when the message ends: "Last One Wins" in "Encoding"; a
 * group, a oneof member and a map entry's message value too), repeated scalars from packed and
 * unpacked runs, int32, uint32 and enum keep the low 32 bits, strings must be valid UTF-8 (a field
 * that keeps any bytes: surrogateescape), the unknown fields (the walker keeps them) become
 * _pbj_unknown, and a class with extension ranges reads its registered extensions out of them
 * (extensions.c).
 *
 * An input that is not a valid encoding raises the DecodeError the Python parser raises (the
 * walker's one error exit, walk.c); valid input the engine leaves to Python (nesting deeper than
 * NATIVE_MAX_LEVEL, a holder class the engine declines) returns NULL with no error (declined).
 *
 * Memory safety: every read is checked against the end of the current message; a declared
 * length is compared with the bytes that are there before anything is read or allocated; each
 * nested message or group costs one level of `depth` (refused at 0) and of the native level.
 * The spans kept for a merge point into the caller's bytes object, alive for the whole call.
 */
#include "walk.h"

static PyObject *obj_message(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                             uint32_t group_end, const uint8_t **after, const Span *more, Py_ssize_t nmore);

/* the decoder extensions.c is given for the holders of extensions (read.h, PbjDecodeSpans) */
static PyObject *decode_spans(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                              const Span *more, Py_ssize_t nmore)
{
    return obj_message(c, m, p, end, depth, 0, NULL, more, nmore);
}

static PyObject *new_oneof(Ctx *c, PyObject *name, PyObject *value)
{
    PyTypeObject *t = (PyTypeObject *)c->st->OneOf;
    PyObject *o = t->tp_alloc(t, 2);
    if (!o) { Py_DECREF(value); return NULL; }
    PyTuple_SET_ITEM(o, 0, Py_NewRef(name));
    PyTuple_SET_ITEM(o, 1, value);
    return o;
}

/* the elements of a repeated field read so far (owned references) */
typedef struct {
    PyObject **items;
    Py_ssize_t n, cap;
} Vec;

/* the object sink's frame: the values of one message being decoded */
typedef struct {
    PyObject **vals;   /* per slot: NULL (not on the wire), a value, a FrozenMap, or (repeated) the
                        * tuple of a first packed run */
    Vec *vecs;         /* per repeated slot: its elements (once there is more than a first packed run) */
    PyObject *k, *x;   /* the map entry being read: its key and value, or NULL */
    PyObject *result;  /* the message, once made (end) */
} State;

/* the elements of repeated slot `slot` as a Vec, moving a first packed run's tuple into it */
static Vec *vec_of(NMessage *m, State *s, int slot)
{
    Vec *v = &s->vecs[m->rep_of_slot[slot]];
    PyObject *t = s->vals[slot];
    if (t != NULL) {
        Py_ssize_t n = PyTuple_GET_SIZE(t);
        if (v->cap < v->n + n) {
            Py_ssize_t cap = v->n + n + 4;
            PyObject **items = PyMem_Realloc(v->items, cap * sizeof(PyObject *));
            if (!items) return NULL;
            v->items = items;
            v->cap = cap;
        }
        for (Py_ssize_t i = 0; i < n; i++) v->items[v->n++] = Py_NewRef(PyTuple_GET_ITEM(t, i));
        s->vals[slot] = NULL;
        Py_DECREF(t);
    }
    return v;
}

/* append `x` (a new reference, stolen even on failure) */
static int vec_push(Vec *v, PyObject *x)
{
    if (v->n == v->cap) {
        Py_ssize_t cap = v->cap ? v->cap * 2 : 4;
        PyObject **items = PyMem_Realloc(v->items, cap * sizeof(PyObject *));
        if (!items) { Py_DECREF(x); return -1; }
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = x;
    return 0;
}

/* store value `v` (a new reference) of field f: a repeated field's, or a oneof member's (store) */
static __attribute__((noinline)) int store_other(Ctx *c, NMessage *m, State *s, NField *f, PyObject *v)
{
    if (!v) return -1;
    PyObject **slot = &s->vals[f->slot];
    switch (f->label) {
    case L_REPEATED:
    case L_PACKED: {
        Vec *vec = vec_of(m, s, f->slot);
        if (!vec) { Py_DECREF(v); return -1; }
        return vec_push(vec, v);
    }
    case L_MEMBER: {
        PyObject *o = new_oneof(c, f->name, v);
        if (!o) return -1;
        Py_XSETREF(*slot, o);
        return 0;
    }
    default:
        Py_XSETREF(*slot, v);
        return 0;
    }
}

/* store value `v` (a new reference, NULL: the read failed) of field f; a singular field's (the
 * last one on the wire wins) without a call */
static inline int store(Ctx *c, NMessage *m, State *s, NField *f, PyObject *v)
{
    if (v && (f->label == L_IMPLICIT || f->label == L_EXPLICIT)) {
        Py_XSETREF(s->vals[f->slot], v);
        return 0;
    }
    return store_other(c, m, s, f, v);
}

static __attribute__((noinline)) PyObject *shared_sub_message(Ctx *c, NMessage *m, const uint8_t *p,
                                                               const uint8_t *e, int depth)
{
    Py_hash_t h = 0;
    PyObject *v = pbj_share_lookup(c, m, p, e, depth, &h);
    if (v) return v;
    v = obj_message(c, m, p, e, depth, 0, NULL, NULL, 0);
    if (v) pbj_share_insert(c, m, p, e, depth, h, v);
    return v;
}

/* The sub-message of class m in the LEN value [p, e) at `depth`: the object an equal earlier
 * occurrence in this call gave (share.c), or a new one. A call that shares nothing (a small
 * input) pays one test. */
static inline PyObject *sub_message(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *e, int depth)
{
    if (!c->share_limit || e - p > PBJ_SHARE_MAX_BYTES) return obj_message(c, m, p, e, depth, 0, NULL, NULL, 0);
    return shared_sub_message(c, m, p, e, depth);
}

static PyObject *empty_message(Ctx *c, NMessage *m)
{
    static const uint8_t nothing[1] = {0};
    return obj_message(c, m, nothing, nothing, 0, 0, NULL, NULL, 0);
}

/* an empty FrozenMap, made as dict's own constructor makes it (FrozenMap has no __new__ or
 * __init__ of its own: dict's tp_init with no arguments does nothing), with no call through the type
 * (a container class that had its own would be called, as before) */
static PyObject *new_map(Ctx *c)
{
    PyTypeObject *t = (PyTypeObject *)c->st->FrozenMap;
    if (t->tp_new != PyDict_Type.tp_new || t->tp_init != PyDict_Type.tp_init) return PyObject_CallNoArgs((PyObject *)t);
    return t->tp_new(t, c->st->empty_tuple, NULL);
}

/* tuple `t` (a new one, its first n items set, the rest NULL) as a tuple of exactly n items: a new
 * tuple takes its items (the old one, left with none, is freed); NULL when out of memory */
static PyObject *tuple_shrink(PyObject *t, Py_ssize_t n)
{
    PyObject *r = PyTuple_New(n);
    if (r) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyTuple_SET_ITEM(r, i, PyTuple_GET_ITEM(t, i));
            PyTuple_SET_ITEM(t, i, NULL);
        }
    }
    Py_DECREF(t);
    return r;
}

/* ---- the sink's functions (walk.h, PbjSink) ---- */

static inline __attribute__((always_inline)) int obj_value(Ctx *c, void *fr, NMessage *m, NField *f, int fidx,
                                                          const uint8_t **pp, const uint8_t *end)
{
    int32_t raw = 0;
    PyObject *v = pbj_value_object(f, f->type, pp, end, &raw);
    if (v == Py_None) {  /* a closed enum's non-member: an unknown field, as it arrived */
        Py_DECREF(v);
        return PBJ_KEEP;
    }
    return store(c, m, fr, f, v);
}

/* A packed run ("Packed Repeated Fields"). The first run of a field is read straight into a
 * tuple of the elements the run holds (counted before anything is allocated: a varint element
 * ends in the one byte below 0x80), so the memory above the result stays below the input's size.
 * A later run that fails leaves the field's elements as they were before it. */
static inline __attribute__((always_inline)) int obj_packed(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, NField *f, int fidx, const uint8_t *p,
                      const uint8_t *e)
{
    State *s = fr;
    PyObject **slot = &s->vals[f->slot];
    if (f->width > 1 && (e - p) % f->width) return -1;
    if (*slot == NULL && s->vecs[m->rep_of_slot[f->slot]].n == 0) {
        Py_ssize_t count = 0;
        if (f->width > 1) {
            count = (e - p) / f->width;
        } else {
            for (const uint8_t *q = p; q < e; q++) count += *q < 0x80;
        }
        PyObject *t = PyTuple_New(count);
        if (!t) return -1;
        Py_ssize_t i = 0;
        while (p < e) {
            int32_t raw = 0;
            const uint8_t *vs = p;
            PyObject *v = i < count ? pbj_scalar_value(f, f->type, &p, e, &raw) : NULL;
            if (!v) { Py_DECREF(t); return -1; }
            if (v == Py_None) {
                Py_DECREF(v);
                if (pbj_keep_packed_enum(&wf->unk, f->number, vs, e) < 0) { Py_DECREF(t); return -1; }
                continue;
            }
            PyTuple_SET_ITEM(t, i++, v);
        }
        if (i < count && !(t = tuple_shrink(t, i))) return -1;
        *slot = t;
        return 0;
    }
    Vec *vec = vec_of(m, s, f->slot);
    if (!vec) return -1;
    Py_ssize_t before = vec->n;
    while (p < e) {
        int32_t raw = 0;
        const uint8_t *vs = p;
        PyObject *v = pbj_scalar_value(f, f->type, &p, e, &raw);
        if (!v) goto fail;
        if (v == Py_None) {
            Py_DECREF(v);
            if (pbj_keep_packed_enum(&wf->unk, f->number, vs, e) < 0) goto fail;
            continue;
        }
        if (vec_push(vec, v) < 0) goto fail;
    }
    return 0;
fail:
    while (vec->n > before) Py_DECREF(vec->items[--vec->n]);
    return -1;
}

static inline __attribute__((always_inline)) int obj_message_value(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t *p,
                             const uint8_t *e, const Span *more, Py_ssize_t nmore, int depth, int mode,
                             uint32_t group_end, const uint8_t **after)
{
    State *s = fr;
    PyObject *v;
    if (group_end) v = obj_message(c, f->subm, p, e, depth, group_end, after, NULL, 0);
    else if (nmore) v = obj_message(c, f->subm, p, e, depth, 0, NULL, more, nmore);
    else v = sub_message(c, f->subm, p, e, depth);
    if (!v) return -1;
    switch (mode) {
    case PBJ_SUB_CHECK:
        Py_DECREF(v);
        return 0;
    case PBJ_SUB_MAP:
        Py_XSETREF(s->x, v);
        return 0;
    default:
        return store(c, m, s, f, v);
    }
}

static inline __attribute__((always_inline)) int obj_repeat(Ctx *c, void *fr, NMessage *m, NField *f, int fidx)
{
    return 0;
}

static inline __attribute__((always_inline)) int obj_map_begin(Ctx *c, void *fr, NMessage *m, NField *f)
{
    State *s = fr;
    PyObject **slot = &s->vals[f->slot];
    if (*slot == NULL && !(*slot = new_map(c))) return -1;
    return 0;
}

static inline __attribute__((always_inline)) int obj_map_key(Ctx *c, void *fr, NMessage *m, NField *f,
                                                            const uint8_t **pp, const uint8_t *end)
{
    State *s = fr;
    int32_t raw;
    PyObject *k = pbj_value_object(f, f->key, pp, end, &raw);
    if (!k) return -1;
    Py_XSETREF(s->k, k);
    return 0;
}

static inline __attribute__((always_inline)) int obj_map_value(Ctx *c, void *fr, NMessage *m, NField *f,
                                                              const uint8_t **pp, const uint8_t *end)
{
    State *s = fr;
    int32_t raw = 0;
    int keep = 0;
    PyObject *x = pbj_value_object(f, f->type, pp, end, &raw);
    if (x == Py_None) {  /* a closed enum's non-member: the entry is kept whole, even when a member
                          * follows it (as an unknown field would) */
        Py_DECREF(x);
        x = PyLong_FromLong(raw);
        keep = PBJ_KEEP;
    }
    if (!x) return -1;
    Py_XSETREF(s->x, x);
    return keep;
}

static inline __attribute__((always_inline)) int obj_map_end(Ctx *c, void *fr, NMessage *m, NField *f, int keep, int depth)
{
    State *s = fr;
    int r = 0;
    if (keep > 0) {
        if (!s->k) {
            switch (f->key) {
            case T_STRING: s->k = PyUnicode_FromStringAndSize("", 0); break;
            case T_BOOL: s->k = Py_NewRef(Py_False); break;
            default: s->k = PyLong_FromLong(0); break;
            }
        }
        if (s->k && !s->x) {
            if (f->type == T_MESSAGE) s->x = empty_message(c, f->subm);
            else if (f->map_vdefault) s->x = Py_NewRef(f->map_vdefault);
        }
        r = s->k && s->x ? PyDict_SetItem(s->vals[f->slot], s->k, s->x) : -1;
    }
    Py_CLEAR(s->k);
    Py_CLEAR(s->x);
    return r;
}

static inline __attribute__((always_inline)) Py_ssize_t obj_count(void *fr, NMessage *m, NField *f)
{
    State *s = fr;
    PyObject *t = s->vals[f->slot];
    return s->vecs[m->rep_of_slot[f->slot]].n + (t ? PyTuple_GET_SIZE(t) : 0);
}

/* Hold message `o`, made untracked, until the decode call ends (pbj_decode then tracks it).
 * While a decode runs, the collector does not scan the objects it is making again and again
 * (each collection of the young generation would walk them all); at the end the result is
 * tracked like any object, so no cycle a program makes through it later escapes the collector.
 * This changes nothing process-wide: only the objects this call made, and only while it runs. */
static void hold_young(Ctx *c, PyObject *o)
{
    if (c->nyoung == c->cap_young) {
        Py_ssize_t cap = c->cap_young ? c->cap_young * 2 : 64;
        PyObject **items = PyMem_Realloc(c->young, cap * sizeof(PyObject *));
        if (!items) { PyObject_GC_Track(o); return; }  /* no room to hold it: tracked now, as usual */
        c->young = items;
        c->cap_young = cap;
    }
    c->young[c->nyoung++] = Py_NewRef(o);
}

/* A repeated field's tuple or a oneof's OneOf, just made (tracked): one that holds no object the
 * collector knows (numbers, strings, bytes) can never be part of a cycle and is untracked for
 * good, as CPython's collector itself untracks such tuples; any other is held as a message is. */
static void settle_tuple(Ctx *c, PyObject *t)
{
    if (!PyObject_GC_IsTracked(t)) return;
    PyObject_GC_UnTrack(t);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
        if (PyObject_IS_GC(PyTuple_GET_ITEM(t, i))) { hold_young(c, t); return; }
    }
}

/* Inputs of at least this many bytes have their messages tracked when the call ends (hold_young);
 * a smaller one makes too few objects for the collector's passes over them to matter. */
#define DEFER_GC_BYTES 4096

/* End of a decode call: track every message it made that is still alive (`keep`: the call
 * succeeded), drop the references held. */
static void release_young(Ctx *c, int keep)
{
    for (Py_ssize_t i = 0; i < c->nyoung; i++) {
        PyObject *o = c->young[i];
        if (keep && Py_REFCNT(o) > 1 && !PyObject_GC_IsTracked(o)) PyObject_GC_Track(o);
        Py_DECREF(o);
    }
    PyMem_Free(c->young);
    c->young = NULL;
    c->nyoung = c->cap_young = 0;
}

/* Ctx.defer_gc of decode_many: each object is tracked or not when it is made (settle_now) */
#define SETTLE_AT_ONCE 2

/* 1 when `v` is an object the cyclic collector tracks */
static inline int tracked(PyObject *v)
{
    return PyObject_IS_GC(v) && PyObject_GC_IsTracked(v);
}

/* A tuple (a repeated field's, a OneOf) just made, its items already settled: untracked for good when no
 * item is tracked (numbers, strings, bytes, and objects settled untracked), as CPython's collector itself
 * untracks such tuples; 1 when it stays tracked. */
static int settle_tuple_now(PyObject *t)
{
    if (!PyObject_GC_IsTracked(t)) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
        if (tracked(PyTuple_GET_ITEM(t, i))) return 1;
    }
    PyObject_GC_UnTrack(t);
    return 0;
}

/* decode_many's rule for message `o` of m, just made (its values made before it, each settled): it is
 * tracked only when it could ever be part of a reference cycle, that is when one of its values is
 * tracked (an enum member, a map, a message or tuple that is: they may come to refer back to it) or its
 * class was made by tp_alloc (it may have a __dict__: it stays as tp_alloc made it). Otherwise every value
 * is atomic or itself untracked for the same reason: a tree of immutable values, which CPython's
 * collector leaves untracked for tuples and dicts. One referent is not looked at: the class of `o`,
 * which a cycle could only pass through by the class holding `o` itself (a class attribute). The
 * objects the collector tracks are then a few per call, so its passes while the call runs cost little. */
static void settle_now(Ctx *c, NMessage *m, PyObject *o)
{
    int track = !m->gc_new;
    for (int i = 0; i < m->nslots; i++) {
        int k = m->slot_kind[i];
        PyObject *v = SLOT(o, m->slot_off[i]);
        if ((k == S_REPEATED || k == S_ONEOF) && PyTuple_Check(v)) track |= settle_tuple_now(v);
        else track |= tracked(v);
    }
    if (m->ext_off >= 0) track |= settle_tuple_now(SLOT(o, m->ext_off));
    if (track && !c->st->untrack && !PyObject_GC_IsTracked(o)) PyObject_GC_Track(o);
    else if (!track && PyObject_GC_IsTracked(o)) PyObject_GC_UnTrack(o);
}

/* `holders`: the _pbj_extensions tuple (owned, stolen) of a class with extension ranges, else NULL */
static PyObject *finish(Ctx *c, NMessage *m, State *s, UBuf *unk, PyObject *holders)
{
    PbjState *st = c->st;  /* (read once: the stores into the object below may alias it) */
    /* the values first: nothing can fail once the object exists */
    for (int i = 0; m->nrep && i < m->nslots; i++) {
        int r = m->rep_of_slot[i];
        if (r >= 0 && s->vecs[r].n) {
            Vec *v = &s->vecs[r];
            PyObject *t = PyTuple_New(v->n);
            if (!t) { Py_XDECREF(holders); return NULL; }
            memcpy(&PyTuple_GET_ITEM(t, 0), v->items, v->n * sizeof(PyObject *));  /* steals */
            v->n = 0;
            s->vals[i] = t;
        }
    }
    PyObject *u = unk->len ? PyBytes_FromStringAndSize((const char *)unk->buf, unk->len)
                             : Py_NewRef(st->empty_bytes);
    if (!u) { Py_XDECREF(holders); return NULL; }
    if (m->ext_off >= 0 && !holders && !(holders = PyTuple_New(0))) { Py_DECREF(u); return NULL; }
    PyObject *o = m->gc_new ? PyObject_GC_New(PyObject, m->cls) : m->cls->tp_alloc(m->cls, 0);
    if (!o) { Py_DECREF(u); Py_XDECREF(holders); return NULL; }
    for (int i = 0; i < m->nslots; i++) {
        PyObject *v = s->vals[i];
        s->vals[i] = NULL;
        SLOT(o, m->slot_off[i]) = v ? v : Py_NewRef(m->slot_default[i]);
    }
    SLOT(o, m->unknown_off) = u;
    SLOT(o, m->size_off) = Py_NewRef(st->minus_one);
    if (m->ext_off >= 0) SLOT(o, m->ext_off) = holders;
    else Py_XDECREF(holders);
    if (!c->defer_gc) {  /* a small input: tracked at once, as CPython would */
        if (m->gc_new && !st->untrack) PyObject_GC_Track(o);
        else if (!m->gc_new && st->untrack) PyObject_GC_UnTrack(o);
        return o;
    }
    if (c->defer_gc == SETTLE_AT_ONCE) {
        settle_now(c, m, o);
        return o;
    }
    if (!m->gc_new) PyObject_GC_UnTrack(o);
    if (!st->untrack) hold_young(c, o);
    for (int i = 0; i < m->nslots; i++) {
        int k = m->slot_kind[i];
        PyObject *v = SLOT(o, m->slot_off[i]);
        if ((k == S_REPEATED || k == S_ONEOF) && PyTuple_Check(v)) settle_tuple(c, v);
    }
    if (m->ext_off >= 0 && PyTuple_GET_SIZE(SLOT(o, m->ext_off))) settle_tuple(c, SLOT(o, m->ext_off));
    return o;
}

static inline __attribute__((always_inline)) int obj_end(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, int depth)
{
    State *s = fr;
    PyObject *holders = NULL;
    if (m->ext_off >= 0 && wf->unk.len && m->registry && PyDict_GET_SIZE(m->registry)
        && pbj_ext_take(c, m, &wf->unk, depth, &holders, decode_spans) < 0) return -1;
    s->result = finish(c, m, s, &wf->unk, holders);
    return s->result ? 0 : -1;
}

/* read.h: the registered extensions among the unknown fields of a message of m decoded and dropped,
 * for a sink that makes no objects (count.c): the same errors as pbj.decode's. 0 or -1 */
int pbj_check_extensions(Ctx *c, NMessage *m, UBuf *unk, int depth)
{
    if (m->ext_off < 0 || !unk->len || !m->registry || !PyDict_GET_SIZE(m->registry)) return 0;
    PyObject *holders = NULL;
    int r = pbj_ext_take(c, m, unk, depth, &holders, decode_spans);
    Py_XDECREF(holders);
    if (c->young) release_young(c, 0);  /* what the holders' decode made goes with them */
    return r;
}

static const PbjSink OBJECTS = {
    .value = obj_value,
    .packed = obj_packed,
    .message = obj_message_value,
    .repeat = obj_repeat,
    .map_begin = obj_map_begin,
    .map_key = obj_map_key,
    .map_value = obj_map_value,
    .map_end = obj_map_end,
    .end = obj_end,
    .count = obj_count,
};

static PyObject *obj_message(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                             uint32_t group_end, const uint8_t **after, const Span *more, Py_ssize_t nmore)
{
    PyObject *stack_vals[PBJ_STACK_SLOTS];
    Vec stack_vecs[PBJ_STACK_REPEATED];
    State s;
    s.k = s.x = s.result = NULL;
    if (m->small) {  /* the usual message: its values on the stack */
        s.vals = stack_vals;
        s.vecs = stack_vecs;
    } else {
        s.vals = m->nslots <= PBJ_STACK_SLOTS ? stack_vals : PyMem_Calloc(m->nslots, sizeof(PyObject *));
        s.vecs = m->nrep <= PBJ_STACK_REPEATED ? stack_vecs : PyMem_Calloc(m->nrep, sizeof(Vec));
        if (!s.vals || !s.vecs) {
            if (s.vals && s.vals != stack_vals) PyMem_Free(s.vals);
            if (s.vecs && s.vecs != stack_vecs) PyMem_Free(s.vecs);
            c->declined = 1;
            return NULL;
        }
    }
    for (int i = 0; i < m->nslots; i++) s.vals[i] = NULL;
    for (int i = 0; i < m->nrep; i++) { s.vecs[i].items = NULL; s.vecs[i].n = s.vecs[i].cap = 0; }
    pbj_walk(&OBJECTS, c, m, &s, p, end, depth, group_end, after, more, nmore);
    /* finish, when it made the object, moved every value into it (s.vals all NULL); a map entry's
     * key and value are let go by map_end, which the walker calls for every entry it begins, but
     * one whose unknown bytes could not be kept (a failed walk) */
    if (!s.result) {
        for (int i = 0; i < m->nslots; i++) Py_XDECREF(s.vals[i]);
        Py_XDECREF(s.k);
        Py_XDECREF(s.x);
    }
    for (int i = 0; i < m->nrep; i++) {
        if (!s.vecs[i].items) continue;
        for (Py_ssize_t k = 0; k < s.vecs[i].n; k++) Py_DECREF(s.vecs[i].items[k]);
        PyMem_Free(s.vecs[i].items);
    }
    if (!m->small) {  /* (a small message's values are all on the stack: one test) */
        if (s.vals != stack_vals) PyMem_Free(s.vals);
        if (s.vecs != stack_vecs) PyMem_Free(s.vecs);
    }
    return s.result;
}

/* After a walk that failed: its DecodeError set (1), or no error: the input is declined (0). */
static int raise_walk_error(Ctx *c)
{
    PyErr_Clear();
    PyObject *err = c->declined ? NULL : pbj_walk_error(c);
    if (err) {
        PyErr_SetObject((PyObject *)Py_TYPE(err), err);
        Py_DECREF(err);
        return 1;
    }
    PyErr_Clear();
    return 0;
}

/* Decode `data` (exactly bytes) with plan m and `depth` levels left: the object; NULL with the
 * DecodeError set (an input that is not a valid encoding); or NULL with no error set, *declined 1:
 * valid input the engine leaves to Python (c->declined). The fixed cost of a call is kept to what a
 * small input needs: the sharing table (share.c) is set up only for an input that reaches its
 * threshold, the young messages' list (hold_young) is released only when one was made. */
PyObject *pbj_decode_bytes(PbjState *st, NMessage *m, PyObject *data, int depth, int *declined)
{
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    Ctx c = {0};
    c.st = st;
    c.data = p;
    c.data_end = p + n;
    c.group_found = -1;
    c.err_offset = -1;
    c.defer_gc = n >= DEFER_GC_BYTES;
    if (n >= st->share_min) pbj_share_begin(&c, n);
    PyObject *r = obj_message(&c, m, p, p + n, depth, 0, NULL, NULL, 0);
    if (c.share) pbj_share_end(&c);  /* before the objects are tracked: it holds a reference to each */
    if (c.young) release_young(&c, r != NULL);
    *declined = r == NULL && !raise_walk_error(&c);
    if (c.err_reason) pbj_walk_clear(&c);
    return r;
}

/* The plan and depth arguments of decode and decode_many: 1 (*m and *depth set), or 0: the engine
 * declines (no plan of its own for the class, not set up, a depth that is no int: the caller answers
 * None, and the pure-Python parser decides). */
static int plan_and_depth(PbjState *st, PyObject *plan, PyObject *depth_arg, NMessage **m, int *depth)
{
    *m = pbj_message_of(plan);
    long d = PyLong_AsLong(depth_arg);
    if (!*m || !st->FrozenMap || (d == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *depth = d > INT32_MAX ? INT32_MAX : d < INT32_MIN ? INT32_MIN : (int)d;
    return 1;
}

/* decode(plan, data: bytes, max_depth: int) -> the object; None: valid input the engine leaves to
 * the pure-Python parser; raises the DecodeError of an input that is not a valid encoding. */
PyObject *pbj_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "decode(plan, data: bytes, max_depth)");
        return NULL;
    }
    PbjState *st = pbj_state(self);
    NMessage *m;
    int depth;
    if (!plan_and_depth(st, args[0], args[2], &m, &depth)) Py_RETURN_NONE;
    int declined = 0;
    PyObject *r = pbj_decode_bytes(st, m, args[1], depth, &declined);
    if (r == NULL && declined) Py_RETURN_NONE;
    return r;
}

/* decode_many(plan, payloads: list of bytes, max_depth) -> list: the object of each payload, as decode
 * gives it, or None for one the engine leaves to the pure-Python parser (the caller decodes that one);
 * raises the DecodeError of the first payload that is not a valid encoding (its index is not said: the
 * caller decodes it again to name it). The payloads are one decode call: a sub-message equal to one
 * an earlier payload held is the same object (share.c, over all the payloads), and each object that can
 * never be part of a cycle is left untracked by the cyclic collector (settle_now): pbj.arrow's
 * from_arrow, whose rows are many small payloads. */
PyObject *pbj_decode_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "decode_many(plan, payloads: list, max_depth)");
        return NULL;
    }
    PbjState *st = pbj_state(self);
    NMessage *m;
    int depth;
    if (!plan_and_depth(st, args[0], args[2], &m, &depth)) Py_RETURN_NONE;
    PyObject *items = PyList_AsTuple(args[1]);  /* held: the spans shared point into these bytes */
    if (!items) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(items), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *data = PyTuple_GET_ITEM(items, i);
        if (!PyBytes_CheckExact(data)) {
            PyErr_Format(PyExc_TypeError, "decode_many: payloads[%zd] is %.100s, not bytes", i, Py_TYPE(data)->tp_name);
            Py_DECREF(items);
            return NULL;
        }
        total += PyBytes_GET_SIZE(data);
    }
    PyObject *out = PyList_New(n);
    if (!out) { Py_DECREF(items); return NULL; }
    Ctx c = {0};
    c.st = st;
    c.defer_gc = SETTLE_AT_ONCE;
    if (total >= st->share_min) pbj_share_begin(&c, total);
    int failed = 0;
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        PyObject *data = PyTuple_GET_ITEM(items, i);
        const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(data);
        c.data = p;
        c.data_end = p + PyBytes_GET_SIZE(data);
        c.group_found = -1;
        c.err_offset = -1;
        c.declined = 0;
        c.level = 0;
        PyObject *r = obj_message(&c, m, p, c.data_end, depth, 0, NULL, NULL, 0);
        if (r == NULL && !(failed = raise_walk_error(&c))) r = Py_NewRef(Py_None);
        if (c.err_reason || c.err_path) pbj_walk_clear(&c);
        if (r) PyList_SET_ITEM(out, i, r);
    }
    if (c.share) pbj_share_end(&c);
    if (failed) Py_CLEAR(out);
    Py_DECREF(items);
    return out;
}
