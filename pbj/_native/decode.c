/* decode.c: the native parser. Builds pbj's own objects from the plan.
 *
 * It follows the contract of the generated parse_<Name> (pbj/codec/parse.py) value for value:
 * last value wins for singular fields, a singular sub-message that occurs more than once is
 * merged (decoded once more over all its occurrences when the message ends: "Last One Wins" in
 * "Encoding"; a group, a oneof member and a map entry's message value too), repeated scalars
 * accept packed and unpacked runs, int32, uint32 and enum keep the low 32 bits, strings must be
 * valid UTF-8 (a field that keeps any bytes: surrogateescape), unknown fields (and known numbers
 * with a wire type that does not fit) are kept byte for byte in arrival order, a closed enum's
 * non-member number is kept as an unknown varint field, a map entry holding an unknown field (or
 * a closed enum's non-member) is kept whole as an unknown field, and a class with extension
 * ranges reads its registered extensions out of its unknown fields (extensions.c).
 *
 * It declines (returns NULL; the caller then runs the pure-Python parser on the same input) on
 * every error and on nesting deeper than NATIVE_MAX_LEVEL.
 *
 * Memory safety: every read is checked against the end of the current message; a declared
 * length is compared with the bytes that are there before anything is read or allocated; each
 * nested message or group costs one level of `depth` (refused at 0) and of the native level.
 * The spans kept for a merge point into the caller's bytes object, alive for the whole call.
 */
#include "read.h"

static PyObject *decode_msg(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                            uint32_t group_end, const uint8_t **after, const Span *more, Py_ssize_t nmore);

/* A singular sub-message's occurrences: the first (decoded when it arrived) and the later ones,
 * which the spec merges into it ("Last One Wins" in "Encoding": a message field is merged, as
 * if its occurrences were one). They are decoded once more as one message when the enclosing
 * message ends, as pbj/codec/parse.py does (its ``more`` spans). */
typedef struct {
    Span first;
    Span *more;
    Py_ssize_t n, cap;
} Spans;

static int spans_push(Spans *sp, const uint8_t *s, const uint8_t *e)
{
    if (sp->n == sp->cap) {
        Py_ssize_t cap = sp->cap ? sp->cap * 2 : 4;
        Span *items = PyMem_Realloc(sp->more, cap * sizeof(Span));
        if (!items) return -1;
        sp->more = items;
        sp->cap = cap;
    }
    sp->more[sp->n].s = s;
    sp->more[sp->n].e = e;
    sp->n++;
    return 0;
}

/* every occurrence of a sub-message of plan m, as one message (depth: the sub-message's own) */
static PyObject *merged(Ctx *c, NMessage *m, Spans *sp, int depth)
{
    return decode_msg(c, m, sp->first.s, sp->first.e, depth, 0, NULL, sp->more, sp->n);
}

PyObject *pbj_decode_spans(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                           const Span *more, Py_ssize_t nmore)
{
    return decode_msg(c, m, p, end, depth, 0, NULL, more, nmore);
}

/* A LEN value of field f: bytes, or a string: strict UTF-8, or (f->utf8 false: proto2,
 * utf8_validation NONE) any bytes, each byte of an invalid sequence kept as U+DC80..U+DCFF
 * (surrogateescape), as the Python parser keeps them (pbj.codec.emit.str_decode; read.h,
 * pbj_str_value). */
static inline PyObject *len_value(NField *f, int type, const uint8_t *p, const uint8_t *e)
{
    if (type == T_STRING) return pbj_str_value(p, e, f->utf8);
    return PyBytes_FromStringAndSize((const char *)p, e - p);
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

/* the state of one message being decoded */
typedef struct {
    PyObject **vals;   /* per slot: NULL (not on the wire), a value, a FrozenMap, or (repeated) the
                        * tuple of a first packed run */
    Vec *vecs;         /* per repeated slot: its elements (once there is more than a first packed run) */
    int *cur;          /* per oneof: the field index of the member set, or -1 */
    Spans *sp;         /* per singular sub-message field (NMessage.msg_of_field): its occurrences */
    UBuf unk;
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
static __attribute__((noinline)) int store_other(Ctx *c, NMessage *m, State *s, NField *f, int fidx, PyObject *v)
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
        s->cur[f->oneof] = fidx;
        return 0;
    }
    default:
        Py_XSETREF(*slot, v);
        return 0;
    }
}

/* store value `v` (a new reference, NULL: the read failed) of field f; a singular field's (the
 * last one on the wire wins) without a call */
static inline int store(Ctx *c, NMessage *m, State *s, NField *f, int fidx, PyObject *v)
{
    if (v && (f->label == L_IMPLICIT || f->label == L_EXPLICIT)) {
        Py_XSETREF(s->vals[f->slot], v);
        return 0;
    }
    return store_other(c, m, s, f, fidx, v);
}

/* a sub-message field that is already set: this occurrence is merged into it */
static int is_repeat(State *s, NField *f, int fidx)
{
    if (f->label == L_MEMBER) return s->cur[f->oneof] == fidx;
    if (f->label == L_EXPLICIT || f->label == L_IMPLICIT) return s->vals[f->slot] != NULL;
    return 0;
}

static __attribute__((noinline)) PyObject *shared_sub_message(Ctx *c, NMessage *m, const uint8_t *p,
                                                               const uint8_t *e, int depth)
{
    Py_hash_t h = 0;
    PyObject *v = pbj_share_lookup(c, m, p, e, depth, &h);
    if (v) return v;
    v = decode_msg(c, m, p, e, depth, 0, NULL, NULL, 0);
    if (v) pbj_share_insert(c, m, p, e, depth, h, v);
    return v;
}

/* The sub-message of class m in the LEN value [p, e) at `depth`: the object an equal earlier
 * occurrence in this call gave (share.c), or a new one. A call that shares nothing (a small
 * input) pays one test. */
static inline PyObject *sub_message(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *e, int depth)
{
    if (!c->share_limit || e - p > PBJ_SHARE_MAX_BYTES) return decode_msg(c, m, p, e, depth, 0, NULL, NULL, 0);
    return shared_sub_message(c, m, p, e, depth);
}

static PyObject *empty_message(Ctx *c, NMessage *m)
{
    static const uint8_t nothing[1] = {0};
    return decode_msg(c, m, nothing, nothing, 0, 0, NULL, NULL, 0);
}

/* A closed enum's non-member number in a packed run ("Enum Behavior", closed enums): kept as an
 * unknown varint field of the same number, as upb keeps it and pbj/codec/parse.py
 * (_keep_unknown_enum): a varint tag of its own and the canonical varint of the element's 64-bit
 * value as read (at `vs`, where the element began), not narrowed to 32 bits. (A value that arrived
 * as a field of its own is kept as it arrived, tag and varint: the caller copies those bytes.) */
static int keep_packed_enum(UBuf *unk, uint32_t number, const uint8_t *vs, const uint8_t *e)
{
    uint64_t raw;
    uint8_t b[16], *q;
    if (rd_varint(&vs, e, &raw) < 0) return -1;
    q = put_varint(b, (uint64_t)number << 3);
    q = put_varint(q, raw);
    return pbj_ubuf_add(unk, b, (size_t)(q - b));
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

static int map_entry(Ctx *c, NMessage *m, State *s, NField *f, const uint8_t *start, const uint8_t **pp,
                     const uint8_t *end, int depth)
{
    const uint8_t *p = *pp, *e;
    if (rd_len(&p, end, &e) < 0) return -1;
    PyObject **slot = &s->vals[f->slot];
    if (*slot == NULL && !(*slot = new_map(c))) return -1;
    PyObject *k = NULL, *x = NULL;
    int unknown = 0, raw_enum = 0;
    Spans xs = {{NULL, NULL}, NULL, 0, 0};  /* the message value's occurrences (merged) */
    while (p < e) {
        uint32_t t;
        if (rd_tag(&p, e, &t) < 0) goto fail;
        if (t == f->ktag) {
            PyObject *nk;
            if (f->key == T_STRING) {
                const uint8_t *ve;
                if (rd_len(&p, e, &ve) < 0) goto fail;
                nk = len_value(f, T_STRING, p, ve);
                p = ve;
            } else {
                int32_t raw;
                nk = pbj_scalar_value(f, f->key, &p, e, &raw);
            }
            if (!nk) goto fail;
            Py_XSETREF(k, nk);
        } else if (f->vtag_len == 1 && t == f->vtag[0]) {
            PyObject *nx;
            if (f->type == T_MESSAGE) {
                const uint8_t *ve;
                if (rd_len(&p, e, &ve) < 0 || depth <= 0) goto fail;
                if (x) {  /* a later occurrence merges into the first ("Maps": an entry is a message) */
                    if (spans_push(&xs, p, ve) < 0) goto fail;
                    p = ve;
                    continue;
                }
                nx = sub_message(c, f->subm, p, ve, depth - 1);
                xs.first.s = p;
                xs.first.e = ve;
                p = ve;
            } else if (f->type == T_STRING || f->type == T_BYTES) {
                const uint8_t *ve;
                if (rd_len(&p, e, &ve) < 0) goto fail;
                nx = len_value(f, f->type, p, ve);
                p = ve;
            } else {
                int32_t raw = 0;
                nx = pbj_scalar_value(f, f->type, &p, e, &raw);
                if (nx == Py_None) {  /* a closed enum's non-member: the entry is kept whole, even
                                       * when a member follows it (as an unknown field would) */
                    Py_DECREF(nx);
                    nx = PyLong_FromLong(raw);
                    raw_enum = 1;
                }
            }
            if (!nx) goto fail;
            Py_XSETREF(x, nx);
        } else {
            if (pbj_skip_field(c, &p, e, t, depth) < 0) goto fail;
            unknown = 1;
        }
    }
    if (xs.n) {  /* every occurrence of the value as one message, even in an entry kept unknown */
        PyObject *nx = merged(c, f->subm, &xs, depth - 1);
        if (!nx) goto fail;
        Py_XSETREF(x, nx);
    }
    if (unknown || raw_enum) {
        if (pbj_ubuf_add(&s->unk, start, e - start) < 0) goto fail;
    } else {
        if (!k) {
            switch (f->key) {
            case T_STRING: k = PyUnicode_FromStringAndSize("", 0); break;
            case T_BOOL: k = Py_NewRef(Py_False); break;
            default: k = PyLong_FromLong(0); break;
            }
            if (!k) goto fail;
        }
        if (!x) {
            if (f->type == T_MESSAGE) x = empty_message(c, f->subm);
            else if (f->map_vdefault) x = Py_NewRef(f->map_vdefault);
            else goto fail;
            if (!x) goto fail;
        }
        if (PyDict_SetItem(*slot, k, x) < 0) goto fail;
    }
    Py_XDECREF(k);
    Py_XDECREF(x);
    PyMem_Free(xs.more);
    *pp = e;
    return 0;
fail:
    Py_XDECREF(k);
    Py_XDECREF(x);
    PyMem_Free(xs.more);
    return -1;
}

static int find_dispatch(NMessage *m, uint32_t tag)
{
    if (tag < (uint32_t)m->lut_size) return m->lut[tag] - 1;
    int lo = 0, hi = m->ndispatch - 1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        uint32_t t = m->dispatch[mid].tag;
        if (t == tag) return mid;
        if (t < tag) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
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

/* A packed run ("Packed Repeated Fields"). The first run of a field is read straight into a
 * tuple of the elements the run holds (counted before anything is allocated: a varint element
 * ends in the one byte below 0x80), so the memory above the result stays below the input's size. */
static int packed_run(Ctx *c, NMessage *m, State *s, NField *f, const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp, *e;
    if (rd_len(&p, end, &e) < 0) return -1;
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
                if (keep_packed_enum(&s->unk, f->number, vs, e) < 0) { Py_DECREF(t); return -1; }
                continue;
            }
            PyTuple_SET_ITEM(t, i++, v);
        }
        if (i < count && !(t = tuple_shrink(t, i))) return -1;
        *slot = t;
        *pp = e;
        return 0;
    }
    Vec *vec = vec_of(m, s, f->slot);
    if (!vec) return -1;
    while (p < e) {
        int32_t raw = 0;
        const uint8_t *vs = p;
        PyObject *v = pbj_scalar_value(f, f->type, &p, e, &raw);
        if (!v) return -1;
        if (v == Py_None) {
            Py_DECREF(v);
            if (keep_packed_enum(&s->unk, f->number, vs, e) < 0) return -1;
            continue;
        }
        if (vec_push(vec, v) < 0) return -1;
    }
    *pp = e;
    return 0;
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

/* `holders`: the _pbj_extensions tuple (owned, stolen) of a class with extension ranges, else NULL */
static PyObject *finish(Ctx *c, NMessage *m, State *s, PyObject *holders)
{
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
    PyObject *u = s->unk.len ? PyBytes_FromStringAndSize((const char *)s->unk.buf, s->unk.len)
                             : Py_NewRef(c->st->empty_bytes);
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
    SLOT(o, m->size_off) = Py_NewRef(c->st->minus_one);
    if (m->ext_off >= 0) SLOT(o, m->ext_off) = holders;
    else Py_XDECREF(holders);
    if (!c->defer_gc) {  /* a small input: tracked at once, as CPython would */
        if (m->gc_new && !c->st->untrack) PyObject_GC_Track(o);
        else if (!m->gc_new && c->st->untrack) PyObject_GC_UnTrack(o);
        return o;
    }
    if (!m->gc_new) PyObject_GC_UnTrack(o);
    if (!c->st->untrack) hold_young(c, o);
    for (int i = 0; i < m->nslots; i++) {
        int k = m->slot_kind[i];
        PyObject *v = SLOT(o, m->slot_off[i]);
        if ((k == S_REPEATED || k == S_ONEOF) && PyTuple_Check(v)) settle_tuple(c, v);
    }
    if (m->ext_off >= 0 && PyTuple_GET_SIZE(SLOT(o, m->ext_off))) settle_tuple(c, SLOT(o, m->ext_off));
    return o;
}

/* Oneof member f (a sub-message) starts afresh after another member replaced it: the later
 * occurrences of its last run are still decoded, and so checked, then dropped, as the Python
 * parser checks them (_check_superseded) */
static inline int superseded(Ctx *c, State *s, NField *f, int mi, int depth)
{
    if (f->label != L_MEMBER || s->sp[mi].n == 0) return 0;
    PyObject *v = merged(c, f->subm, &s->sp[mi], depth - 1);
    if (!v) return -1;
    Py_DECREF(v);
    s->sp[mi].n = 0;
    return 0;
}

/* The end of the message: each singular sub-message that occurred more than once is decoded once
 * more over all its occurrences; a oneof member's value is kept only if the member is still set. */
static int merge_repeats(Ctx *c, NMessage *m, State *s, int depth)
{
    for (int i = 0; i < m->nfields; i++) {
        int mi = m->msg_of_field[i];
        if (mi < 0 || s->sp[mi].n == 0) continue;
        NField *f = &m->fields[i];
        PyObject *v = merged(c, f->subm, &s->sp[mi], depth - 1);
        if (!v) return -1;
        if (f->label == L_MEMBER) {
            if (s->cur[f->oneof] != i) { Py_DECREF(v); continue; }
            PyObject *o = new_oneof(c, f->name, v);
            if (!o) return -1;
            Py_XSETREF(s->vals[f->slot], o);
        } else {
            Py_XSETREF(s->vals[f->slot], v);
        }
    }
    return 0;
}

#define STACK_SLOTS 48
#define STACK_SPANS 16

static PyObject *decode_msg(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                            uint32_t group_end, const uint8_t **after, const Span *more, Py_ssize_t nmore)
{
    PyObject *stack_vals[STACK_SLOTS];
    Vec stack_vecs[8];
    int stack_cur[STACK_SLOTS];
    Spans stack_sp[STACK_SPANS];
    State s;
    PyObject *result = NULL;
    int ended = 0, repeats = 0;
    Py_ssize_t k_more = 0;
    if (c->level >= NATIVE_MAX_LEVEL) { c->declined = 1; return NULL; }
    c->level++;
    s.unk.buf = NULL;
    s.unk.len = s.unk.cap = 0;
    if (m->nslots <= STACK_SLOTS && m->noneofs <= STACK_SLOTS && m->nrep <= 8 && m->nmsgf <= STACK_SPANS) {
        s.vals = stack_vals;  /* the usual message: its state on the stack, nothing to check */
        s.cur = stack_cur;
        s.vecs = stack_vecs;
        s.sp = stack_sp;
    } else {
        s.vals = m->nslots <= STACK_SLOTS ? stack_vals : PyMem_Calloc(m->nslots, sizeof(PyObject *));
        s.cur = m->noneofs <= STACK_SLOTS ? stack_cur : PyMem_Calloc(m->noneofs, sizeof(int));
        s.vecs = m->nrep <= 8 ? stack_vecs : PyMem_Calloc(m->nrep, sizeof(Vec));
        s.sp = m->nmsgf <= STACK_SPANS ? stack_sp : PyMem_Calloc(m->nmsgf, sizeof(Spans));
        if (!s.vals || !s.cur || !s.vecs || !s.sp) {
            if (s.vals && s.vals != stack_vals) PyMem_Free(s.vals);
            if (s.cur && s.cur != stack_cur) PyMem_Free(s.cur);
            if (s.vecs && s.vecs != stack_vecs) PyMem_Free(s.vecs);
            if (s.sp && s.sp != stack_sp) PyMem_Free(s.sp);
            c->level--;
            return NULL;
        }
    }
    for (int i = 0; i < m->nslots; i++) s.vals[i] = NULL;
    for (int i = 0; i < m->noneofs; i++) s.cur[i] = -1;
    for (int i = 0; i < m->nrep; i++) { s.vecs[i].items = NULL; s.vecs[i].n = s.vecs[i].cap = 0; }
    for (int i = 0; i < m->nmsgf; i++) { s.sp[i].more = NULL; s.sp[i].n = s.sp[i].cap = 0; }

    for (;;) {
    while (p < end) {
        const uint8_t *start = p;
        uint32_t tag;
        if (rd_tag(&p, end, &tag) < 0) goto done;
        int di = find_dispatch(m, tag);
        if (di < 0) {
            if ((tag & 7) == 4) {
                if (group_end && tag == group_end) { ended = 1; break; }
                goto done;
            }
            if (pbj_skip_field(c, &p, end, tag, depth) < 0) goto done;
            if (pbj_ubuf_add(&s.unk, start, p - start) < 0) goto done;
            continue;
        }
        NDispatch *d = &m->dispatch[di];
        NField *f = &m->fields[d->field];
        if (d->form == F_PACKED_RUN) {
            if (packed_run(c, m, &s, f, &p, end) < 0) goto done;
            continue;
        }
        if (f->label == L_MAP) {
            if (map_entry(c, m, &s, f, start, &p, end, depth) < 0) goto done;
            continue;
        }
        if (f->type == T_MESSAGE) {
            PyObject *v;
            if (depth <= 0) goto done;
            int mi = m->msg_of_field[d->field];
            int again = mi >= 0 && is_repeat(&s, f, d->field);
            if (d->form == F_GROUP_START) {
                if (again) {  /* kept for the merge: the body, up to its end tag */
                    const uint8_t *q = p;
                    if (pbj_skip_field(c, &q, end, tag, depth) < 0) goto done;
                    if (spans_push(&s.sp[mi], p, q - f->end_tag_len) < 0) goto done;
                    repeats = 1;
                    p = q;
                    continue;
                }
                if (mi >= 0 && superseded(c, &s, f, mi, depth) < 0) goto done;
                const uint8_t *body = p;
                uint32_t etag = (f->number << 3) | 4;
                v = decode_msg(c, f->subm, p, end, depth - 1, etag, &p, NULL, 0);
                if (v && mi >= 0) { s.sp[mi].first.s = body; s.sp[mi].first.e = p - f->end_tag_len; }
            } else {
                const uint8_t *e;
                if (rd_len(&p, end, &e) < 0) goto done;
                if (again) {
                    if (spans_push(&s.sp[mi], p, e) < 0) goto done;
                    repeats = 1;
                    p = e;
                    continue;
                }
                if (mi >= 0 && superseded(c, &s, f, mi, depth) < 0) goto done;
                v = sub_message(c, f->subm, p, e, depth - 1);
                if (mi >= 0) { s.sp[mi].first.s = p; s.sp[mi].first.e = e; }
                p = e;
            }
            if (store(c, m, &s, f, d->field, v) < 0) goto done;
            continue;
        }
        if (f->type == T_STRING || f->type == T_BYTES) {
            const uint8_t *e;
            if (rd_len(&p, end, &e) < 0) goto done;
            PyObject *v = len_value(f, f->type, p, e);
            p = e;
            if (store(c, m, &s, f, d->field, v) < 0) goto done;
            continue;
        }
        int32_t raw = 0;
        PyObject *v = pbj_scalar_value(f, f->type, &p, end, &raw);
        if (v == Py_None) {  /* a closed enum's non-member: an unknown field, as it arrived */
            Py_DECREF(v);
            if (pbj_ubuf_add(&s.unk, start, p - start) < 0) goto done;
            continue;
        }
        if (store(c, m, &s, f, d->field, v) < 0) goto done;
    }
    if (ended || k_more >= nmore) break;
    p = more[k_more].s;   /* the next occurrence of this message (a merge) */
    end = more[k_more].e;
    k_more++;
    }
    if (group_end && !ended) goto done;
    if (repeats && merge_repeats(c, m, &s, depth) < 0) goto done;
    PyObject *holders = NULL;
    if (m->ext_off >= 0 && s.unk.len && m->registry && PyDict_GET_SIZE(m->registry)
        && pbj_ext_take(c, m, &s.unk, depth, &holders) < 0) goto done;
    result = finish(c, m, &s, holders);
    if (result && after) *after = p;
done:
    /* finish, when it made the object, moved every value into it (s.vals all NULL) */
    for (int i = 0; !result && i < m->nslots; i++) Py_XDECREF(s.vals[i]);
    if (s.vals != stack_vals) PyMem_Free(s.vals);
    if (s.cur != stack_cur) PyMem_Free(s.cur);
    for (int i = 0; i < m->nrep; i++) {
        if (!s.vecs[i].items) continue;
        for (Py_ssize_t k = 0; k < s.vecs[i].n; k++) Py_DECREF(s.vecs[i].items[k]);
        PyMem_Free(s.vecs[i].items);
    }
    if (s.vecs != stack_vecs) PyMem_Free(s.vecs);
    /* spans are kept (spans_push) only for a repeated sub-message, which sets `repeats` */
    for (int i = 0; repeats && i < m->nmsgf; i++) PyMem_Free(s.sp[i].more);
    if (s.sp != stack_sp) PyMem_Free(s.sp);
    if (s.unk.buf) PyMem_Free(s.unk.buf);
    c->level--;
    return result;
}

/* Decode `data` (exactly bytes) with plan m and `depth` levels left: the object, or NULL with no
 * Python error set (the input goes to the pure-Python parser); *declined is then 1 if the input is
 * valid but left to Python (c->declined). The fixed cost of a call is kept to what a small input
 * needs: the sharing table (share.c) is set up only for an input that reaches its threshold, the
 * young messages' list (hold_young) is released only when one was made. */
PyObject *pbj_decode_bytes(PbjState *st, NMessage *m, PyObject *data, int depth, int *declined)
{
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    Ctx c = {0};
    c.st = st;
    c.defer_gc = n >= DEFER_GC_BYTES;
    if (n >= st->share_min) pbj_share_begin(&c, n);
    PyObject *r = decode_msg(&c, m, p, p + n, depth, 0, NULL, NULL, 0);
    if (c.share) pbj_share_end(&c);  /* before the objects are tracked: it holds a reference to each */
    if (c.young) release_young(&c, r != NULL);
    if (r == NULL) {
        PyErr_Clear();
        *declined = c.declined;
    }
    return r;
}

/* decode(plan, data: bytes, max_depth: int[, explain]) -> the object, or None: hand `data` to
 * the pure-Python parser (an error, or input the engine declines). With `explain` true, a valid
 * input the engine declines gives NotImplemented instead of None (for the engines' tests). */
PyObject *pbj_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 3 || nargs > 4 || !PyBytes_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "decode(plan, data: bytes, max_depth)");
        return NULL;
    }
    PbjState *st = pbj_state(self);
    NMessage *m = pbj_message_of(args[0]);
    long depth = PyLong_AsLong(args[2]);
    if (!m || !st->FrozenMap || (depth == -1 && PyErr_Occurred())) { PyErr_Clear(); Py_RETURN_NONE; }
    if (depth > INT32_MAX) depth = INT32_MAX;
    if (depth < INT32_MIN) depth = INT32_MIN;
    int declined = 0;
    PyObject *r = pbj_decode_bytes(st, m, args[1], (int)depth, &declined);
    if (r == NULL) {
        if (nargs == 4 && declined && PyObject_IsTrue(args[3]) == 1) Py_RETURN_NOTIMPLEMENTED;
        Py_RETURN_NONE;
    }
    return r;
}
