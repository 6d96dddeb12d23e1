/* encode.c: the native forward writer: sizes cached on the objects, then one pass front to back.
 *
 * Same output as the generated size_<Name>/write_<Name> (pbj/codec/forward.py): fields in the
 * plan's write order (ascending field number, a oneof's set member where its number falls),
 * implicit-presence scalars only when not zero (-0.0 is written), map entries sorted by key,
 * both key and value, unknown fields last. Each measured message's size is cached in its
 * _pbj_size slot, as the Python writer caches it.
 *
 * A fresh encode (no size cached on the object) walks the values once: the size pass measures
 * and caches the sizes and puts, in write order, everything the write needs on a tape (each
 * value converted, with its tag; each length, with its tag), so the write pass is a loop over
 * the tape that reads no Python object again (a packed run's values excepted: it converts them
 * again in one loop of their type). A sub-message whose size was already cached, and a map's
 * message values, are put on the tape as such and written by the walk of a sizes-cached encode,
 * which reads the lengths from the cache (and checks them against the bytes written).
 *
 * A cached size is private state, but Python code can set it by hand (object.__setattr__), so
 * none is trusted blindly: one that is not an exact int in [0, PBJ_SIZE_MAX] is no size a writer
 * cached and is measured again (values.h: pbj_cached_size), one in range is checked against the bytes written
 * (w_contents), and no sum of sizes can overflow: a sum of a number of terms that only the data
 * bounds (elements, entries, extensions) is checked against PBJ_MESSAGE_MAX at each term (size_add),
 * a packed run's and a message's own once, at their end (packed_size, size_msg say why).
 *
 * It declines (the caller runs the Python writer, which raises its EncodeError with the path)
 * on anything it does not know to be right: a value of an unexpected Python type, an integer
 * out of its type's range, a float too large for float32, a str that is not valid UTF-8 (or,
 * for a string that keeps any bytes, holds a surrogate that stands for no byte), a oneof holding something that is not one of its members, a cached size that does not match
 * the bytes written (that one it reports apart: NotImplemented). Every store is bounds-checked
 * against the output's size.
 *
 * It runs no Python code: every value it reads is of an exact built-in type (or an enum member)
 * or declined, map keys are sorted on their C values (values.c: pbj_map_sorted), and it allocates
 * no object the cyclic collector tracks (so no collection, finalizer or thread switch can run in
 * the middle). The borrowed references it reads therefore stay valid for the whole write. A
 * decline returns None; an error that is not the engine's (MemoryError) is raised unchanged.
 */
#include "values.h"

/* n cached as o's size: an int CPython shares (n <= 256), the module's int of the same value
 * (PbjState.sizes), or a new one that the module keeps for the next equal size. Free-threaded
 * builds skip the module's ints: two threads writing one entry (its int and its value, two stores)
 * could leave an int of another value under n, and both release the int they replace. There the
 * size is swapped in over the value this thread read (compat.h: pbj_swap_pointer): two threads
 * measuring one message at once cache one int, and each releases only what it replaced (-1 in
 * every write: an int CPython never frees). */
static int set_size(PyObject *o, NMessage *m, Py_ssize_t n)
{
    PyObject *s;
#ifdef Py_GIL_DISABLED
    PyObject *was = SLOT(o, m->size_off);
    s = PyLong_FromSsize_t(n);
    if (!s) return -1;
    if (pbj_swap_pointer(&SLOT(o, m->size_off), was, s)) Py_XDECREF(was);
    else Py_DECREF(s);  /* another thread cached it meanwhile: the same size (the message is frozen) */
    return 0;
#else
    if (n <= 256) {
        s = PyLong_FromSsize_t(n);
    } else {
        PbjState *st = m->st;
        size_t i = (size_t)n & 255;
        if (st->sizes_of[i] == n) {
            s = Py_NewRef(st->sizes[i]);
        } else {
            s = PyLong_FromSsize_t(n);
            if (!s) return -1;
            Py_XSETREF(st->sizes[i], Py_NewRef(s));
            st->sizes_of[i] = n;
        }
    }
    if (!s) return -1;
    Py_XSETREF(SLOT(o, m->size_off), s);
    return 0;
#endif
}

/* (s at most PBJ_SIZE_MAX + a few bytes: no overflow) */
static inline Py_ssize_t len_field(Py_ssize_t taglen, Py_ssize_t s)
{
    return taglen + vlen((uint64_t)s) + s;
}

/* The largest message the forward writer measures: 2 GiB - 1, protobuf's own limit ("Any proto in
 * serialized form must be <2GiB", protobuf.dev "Proto Limits", "Total Size of the Message"), or
 * PBJ_SIZE_MAX where that is less (32-bit builds). A larger one is declined (the Python writer
 * runs, and caches its size, which a sizes-cached write then trusts up to PBJ_SIZE_MAX). Below
 * 2**31 on every build, it bounds the terms of a message's sum (size_msg). */
#define PBJ_MESSAGE_MAX ((Py_ssize_t)(PBJ_SIZE_MAX < INT32_MAX ? PBJ_SIZE_MAX : INT32_MAX))

/* *n += s, for *n in [0, PBJ_MESSAGE_MAX] and a size s >= 0 (a Py_ssize_t): the sum, below
 * 2**31 + 2**63, is made in 64 bits unsigned, where it cannot wrap; -1: past PBJ_MESSAGE_MAX (a
 * decline), *n then unchanged */
static inline int size_add(Py_ssize_t *n, Py_ssize_t s)
{
    uint64_t r = (uint64_t)*n + (uint64_t)s;
    if (r > (uint64_t)PBJ_MESSAGE_MAX) return -1;
    *n = (Py_ssize_t)r;
    return 0;
}

/* the bytes of a converted scalar of `kind` (without its tag) */
static inline Py_ssize_t kind_size(int kind, const WV *x)
{
    switch (kind) {
    case K_FIXED64: return 8;
    case K_FIXED32: return 4;
    case K_LEN: return vlen((uint64_t)x->n) + x->n;
    default: return vlen(x->u);
    }
}

/* ---------------------------------------------------------------- the tape
 * What a fresh encode writes, in order, as its size pass found it. The values it points to stay
 * alive and unchanged until the write pass ends: no Python code runs in between; a K_OWNED entry
 * (a string that keeps bytes that are not UTF-8) holds the bytes object it points into, released
 * with the tape. */

enum {
    E_HEAD = K_OWNED + 1,  /* a tag and a length (u): a sub-message's, a map entry's; its contents follow */
    E_TAG,               /* a tag alone (a group's start or end) */
    E_PACKED,            /* a packed run: tag, length (u), the values of obj (a tuple) of field f */
    E_CACHED,            /* a sub-message with a cached size (u): tag (none for a group), length, then
                          * obj written by the sizes-cached walk (sub: its class), at `level` */
    E_RAW,               /* bytes (s, n): unknown fields */
    E_PACKED_HELD        /* a small packed run: tag, length (u), its bytes held in the entry (held) */
};

/* the most bytes of a packed run an entry holds (E_PACKED_HELD) */
#define HELD_BYTES 32

typedef struct {
    const uint8_t *tag;
    union {
        struct {
            const char *s;       /* K_LEN, K_OWNED, E_RAW: the bytes */
            PyObject *obj;       /* E_PACKED, E_CACHED; K_OWNED: the bytes object s points into (owned) */
            Py_ssize_t n;        /* K_LEN, K_OWNED, E_RAW: how many bytes */
            union {
                NField *f;       /* E_PACKED */
                NMessage *sub;   /* E_CACHED */
            } of;
        };
        uint8_t held[HELD_BYTES]; /* E_PACKED_HELD: the run's bytes, converted once */
    };
    uint64_t u;          /* a number's wire bits, or a length */
    uint8_t kind, tag_len;
    uint16_t level;      /* E_CACHED */
    int group;           /* E_CACHED: a group (no length; its end tag in s, n) */
} TE;

/* The tape is a chain of blocks (the first on the C stack), so that growing it copies nothing and
 * an entry stays where it is (a sub-message's length is filled in after its contents). */
typedef struct TBlock {
    struct TBlock *next;
    Py_ssize_t n, cap;
    TE *e;               /* the block's entries (a block from PyMem: just after it) */
} TBlock;

typedef struct {
    TBlock *cur;         /* the block entries are added to */
    Py_ssize_t owned;    /* K_OWNED entries (each holds a strong reference) */
    TBlock head;
    TE small[64];
} Tape;

static void tape_init(Tape *t)
{
    t->cur = &t->head;
    t->owned = 0;
    t->head.next = NULL;
    t->head.n = 0;
    t->head.cap = (Py_ssize_t)(sizeof t->small / sizeof t->small[0]);
    t->head.e = t->small;
}

/* the bytes objects of the K_OWNED entries released (out of line: most tapes have none) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void tape_release_owned(Tape *t)
{
    for (TBlock *b = &t->head; t->owned && b; b = b->next) {
        for (Py_ssize_t i = 0; i < b->n; i++) {
            if (b->e[i].kind == K_OWNED) {
                Py_DECREF(b->e[i].obj);  /* a bytes object: no Python code */
                t->owned--;
            }
        }
    }
}

static inline void tape_free(Tape *t)
{
    if (t->owned) tape_release_owned(t);
    TBlock *b = t->head.next;
    while (b) {
        TBlock *next = b->next;
        PyMem_Free(b);
        b = next;
    }
    t->head.next = NULL;
}

static int tape_grow(Tape *t)
{
    Py_ssize_t cap = t->cur->cap * 4 < 16384 ? t->cur->cap * 4 : 16384;
    TBlock *b = PyMem_Malloc(sizeof(TBlock) + (size_t)cap * sizeof(TE));
    if (!b) {
        PyErr_NoMemory();
        return -1;
    }
    b->next = NULL;
    b->n = 0;
    b->cap = cap;
    b->e = (TE *)(b + 1);
    t->cur->next = b;
    t->cur = b;
    return 0;
}

/* a new entry, or NULL: no memory (an error set) */
static inline TE *tape_add(Tape *t, int kind, const uint8_t *tag, int tag_len)
{
    if (t->cur->n == t->cur->cap && tape_grow(t) < 0) return NULL;
    TE *e = &t->cur->e[t->cur->n++];
    e->kind = (uint8_t)kind;
    e->tag = tag;
    e->tag_len = (uint8_t)tag_len;
    return e;
}

/* a string that keeps bytes that are not UTF-8 (kind K_OWNED, tape_value's arguments): its entry takes
 * the bytes object (released now without t, and on failure) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int tape_owned(Tape *t, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    (void)kind;
    TE *e = t ? tape_add(t, K_OWNED, tag, tag_len) : NULL;
    if (!e) {
        wv_release(K_OWNED, x);
        return t ? -1 : 0;
    }
    e->s = x->s;
    e->n = x->n;
    e->obj = wv_owner(x);
    t->owned++;
    return 0;
}

/* a converted scalar with its tag (not K_OWNED: tape_owned) */
PBJ_INLINE int tape_value(Tape *t, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    if (!t) return 0;
    TE *e = tape_add(t, kind, tag, tag_len);
    if (!e) return -1;
    e->u = x->u;
    e->s = x->s;
    e->n = x->n;
    return 0;
}

/* a converted scalar of any kind with its tag (a K_OWNED one's bytes object taken) */
static inline int tape_any(Tape *t, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    if (kind == K_OWNED) return tape_owned(t, kind, tag, tag_len, x);
    return tape_value(t, kind, tag, tag_len, x);
}

/* ---------------------------------------------------------------- measuring */

static Py_ssize_t size_msg(NMessage *m, PyObject *o, int level, Tape *t);

/* the size of sub-message `v` (of f->subm's class, checked): cached, or measured (and cached) */
static Py_ssize_t sub_size(NField *f, PyObject *v, int level)
{
    Py_ssize_t s = pbj_cached_size(v, f->subm);
    return s >= 0 ? s : size_msg(f->subm, v, level + 1, NULL);
}

/* sub-message `v` with its tag and length: the bytes it takes, its entries put on t (or -1) */
static Py_ssize_t sub_field(NField *f, PyObject *v, int level, Tape *t)
{
    Py_ssize_t s = pbj_cached_size(v, f->subm);
    if (s >= 0 || t == NULL) {
        if (s < 0 && (s = size_msg(f->subm, v, level + 1, NULL)) < 0) return -1;
        if (t) {
            TE *e = tape_add(t, E_CACHED, f->tag, f->tag_len);
            if (!e) return -1;
            e->u = (uint64_t)s;
            e->obj = v;
            e->of.sub = f->subm;
            e->level = (uint16_t)(level + 1);
            e->group = f->group;
            e->s = (const char *)f->end_tag;
            e->n = f->end_tag_len;
        }
    } else if (f->group) {
        if (!tape_add(t, E_TAG, f->tag, f->tag_len) || (s = size_msg(f->subm, v, level + 1, t)) < 0
            || !tape_add(t, E_TAG, f->end_tag, f->end_tag_len)) return -1;
    } else {
        TE *head = tape_add(t, E_HEAD, f->tag, f->tag_len);
        if (!head || (s = size_msg(f->subm, v, level + 1, t)) < 0) return -1;
        head->u = (uint64_t)s;  /* (entries do not move) */
    }
    return f->group ? f->tag_len + f->end_tag_len + s : len_field(f->tag_len, s);
}

#define SIZE_LOOP(TYPE, EACH) \
    for (Py_ssize_t i = 0; i < n; i++) { \
        WV x; \
        if (pbj_wire(TYPE, items[i], &x) < 0) return -1; \
        total += EACH; \
    } \
    return total > (uint64_t)PBJ_MESSAGE_MAX ? -1 : (Py_ssize_t)total;

/* the bytes of a packed run of n values (without its tag and length), or -1 (a value declined, or
 * more than PBJ_MESSAGE_MAX). The sum is checked once, at its end: each value takes at most 10 bytes
 * and n, the length of a tuple (an array of n pointers in one allocation of at most PY_SSIZE_T_MAX
 * bytes), is below 2**60 on a 64-bit build (2**29 on a 32-bit one), so the total stays below
 * 10 * 2**60 < 2**64 and cannot wrap in 64 bits unsigned */
static Py_ssize_t packed_size(int type, PyObject **items, Py_ssize_t n)
{
    uint64_t total = 0;
    switch (type) {
    case T_DOUBLE: SIZE_LOOP(T_DOUBLE, 8)
    case T_FLOAT: SIZE_LOOP(T_FLOAT, 4)
    case T_FIXED64: SIZE_LOOP(T_FIXED64, 8)
    case T_SFIXED64: SIZE_LOOP(T_SFIXED64, 8)
    case T_FIXED32: SIZE_LOOP(T_FIXED32, 4)
    case T_SFIXED32: SIZE_LOOP(T_SFIXED32, 4)
    case T_BOOL: SIZE_LOOP(T_BOOL, 1)
    case T_INT64: SIZE_LOOP(T_INT64, vlen(x.u))
    case T_UINT64: SIZE_LOOP(T_UINT64, vlen(x.u))
    case T_INT32: SIZE_LOOP(T_INT32, vlen(x.u))
    case T_UINT32: SIZE_LOOP(T_UINT32, vlen(x.u))
    case T_ENUM: SIZE_LOOP(T_ENUM, vlen(x.u))
    case T_SINT32: SIZE_LOOP(T_SINT32, vlen(x.u))
    case T_SINT64: SIZE_LOOP(T_SINT64, vlen(x.u))
    default: return -1;
    }
}

/* A packed run converted into `out` (at most `cap` bytes), each value once: the bytes it takes,
 * -1 (a value declined), or -2 (it takes more than `cap`; nothing of `out` is to be used). Small
 * runs (a descriptor's source locations: a few int32 a run) are converted once this way and
 * copied, where a larger run is measured, then converted again as it is written. */
#define INTO_LOOP(TYPE, WIDTH, STORE) \
    for (Py_ssize_t i = 0; i < n; i++) { \
        WV x; \
        if (pbj_wire(TYPE, items[i], &x) < 0) return -1; \
        if (lim - q < (WIDTH)) return -2; \
        STORE; \
    } \
    return q - out;

static Py_ssize_t packed_into(int type, PyObject **items, Py_ssize_t n, uint8_t *out, Py_ssize_t cap)
{
    uint8_t *q = out, *lim = out + cap;
    uint32_t u32;
    switch (type) {
    case T_DOUBLE: INTO_LOOP(T_DOUBLE, 8, (memcpy(q, &x.u, 8), q += 8))
    case T_FLOAT: INTO_LOOP(T_FLOAT, 4, (u32 = (uint32_t)x.u, memcpy(q, &u32, 4), q += 4))
    case T_FIXED64: INTO_LOOP(T_FIXED64, 8, (memcpy(q, &x.u, 8), q += 8))
    case T_SFIXED64: INTO_LOOP(T_SFIXED64, 8, (memcpy(q, &x.u, 8), q += 8))
    case T_FIXED32: INTO_LOOP(T_FIXED32, 4, (u32 = (uint32_t)x.u, memcpy(q, &u32, 4), q += 4))
    case T_SFIXED32: INTO_LOOP(T_SFIXED32, 4, (u32 = (uint32_t)x.u, memcpy(q, &u32, 4), q += 4))
    case T_BOOL: INTO_LOOP(T_BOOL, 1, *q++ = (uint8_t)x.u)
    case T_INT64: INTO_LOOP(T_INT64, vlen(x.u), q = put_varint(q, x.u))
    case T_UINT64: INTO_LOOP(T_UINT64, vlen(x.u), q = put_varint(q, x.u))
    case T_INT32: INTO_LOOP(T_INT32, vlen(x.u), q = put_varint(q, x.u))
    case T_UINT32: INTO_LOOP(T_UINT32, vlen(x.u), q = put_varint(q, x.u))
    case T_ENUM: INTO_LOOP(T_ENUM, vlen(x.u), q = put_varint(q, x.u))
    case T_SINT32: INTO_LOOP(T_SINT32, vlen(x.u), q = put_varint(q, x.u))
    case T_SINT64: INTO_LOOP(T_SINT64, vlen(x.u), q = put_varint(q, x.u))
    default: return -1;
    }
}

/* a map entry's length: key and value converted (kw, xw; a message value: its size in xw->n);
 * the caller releases what they own (wv_release) after a success, nothing after a failure */
static Py_ssize_t entry_size(NField *f, PyObject *k, PyObject *x, WV *kw, WV *xw, int *kk, int *xk, int level)
{
    if ((*kk = any_scalar(f->wkey, k, kw)) < 0) return -1;
    Py_ssize_t e = 1 + kind_size(as_len(*kk), kw);
    if (f->type == T_MESSAGE) {
        Py_ssize_t s = Py_TYPE(x) == f->subm->cls ? sub_size(f, x, level) : -1;
        if (s < 0) {
            wv_release(*kk, kw);
            return -1;
        }
        xw->n = s;
        *xk = E_CACHED;
        return e + len_field(1, s);
    }
    if ((*xk = any_scalar(f->wtype, x, xw)) < 0) {
        wv_release(*kk, kw);
        return -1;
    }
    return e + 1 + kind_size(as_len(*xk), xw);
}

/* a map entry (its length e, key and value converted) on the tape: 0, or -1 (no memory); what kw
 * and xw own is taken either way */
PBJ_INLINE int tape_entry(Tape *t, NField *f, PyObject *x, Py_ssize_t e, int kk, const WV *kw, int xk, const WV *xw,
                          int level)
{
    TE *h = tape_add(t, E_HEAD, f->tag, f->tag_len);
    if (!h) {
        wv_release(kk, kw);
        wv_release(xk, xw);
        return -1;
    }
    h->u = (uint64_t)e;
    if (tape_any(t, kk, &f->ktag, 1, kw) < 0) {  /* (takes what kw owns) */
        wv_release(xk, xw);
        return -1;
    }
    if (xk != E_CACHED) return tape_any(t, xk, f->vtag, 1, xw);
    TE *c = tape_add(t, E_CACHED, f->vtag, 1);
    if (!c) return -1;
    c->u = (uint64_t)xw->n;
    c->obj = x;
    c->of.sub = f->subm;
    c->level = (uint16_t)(level + 1);
    c->group = 0;
    return 0;
}

/* a map's entries (in key order on the tape); `kept` (a constant): its keys or values are strings
 * that may keep any bytes (K_OWNED), else none is */
PBJ_INLINE Py_ssize_t map_size_of(NField *f, PyObject *v, int level, Tape *t, int kept)
{
    Py_ssize_t n = 0;
    if (t == NULL) {  /* the order does not change a sum */
        Py_ssize_t pos = 0;
        PyObject *k, *x;
        while (PyDict_Next(v, &pos, &k, &x)) {
            WV kw, xw;
            int kk, xk;
            Py_ssize_t e = entry_size(f, k, x, &kw, &xw, &kk, &xk, level);
            if (e < 0) return -1;
            if (kept) {
                wv_release(kk, &kw);
                wv_release(xk, &xw);
            }
            if (size_add(&n, len_field(f->tag_len, e)) < 0) return -1;
        }
        return n;
    }
    PMap map;
    if (pbj_map_sorted(f, v, &map) < 0) {
        n = -1;
        goto done;
    }
    /* the entries' keys and values stay alive after the release: the dict holds them, and no
     * Python code runs before the write pass is over */
    for (Py_ssize_t i = 0; i < map.n; i++) {
        WV kw, xw;
        int kk, xk;
        Py_ssize_t e = entry_size(f, map.e[i].k, map.e[i].x, &kw, &xw, &kk, &xk, level);
        if (kept) {
            if (e < 0 || tape_entry(t, f, map.e[i].x, e, kk, &kw, xk, &xw, level) < 0
                || size_add(&n, len_field(f->tag_len, e)) < 0) {
                n = -1;
                goto done;
            }
            continue;
        }
        TE *h;
        if (e < 0 || !(h = tape_add(t, E_HEAD, f->tag, f->tag_len)) || (h->u = (uint64_t)e, 0)
            || tape_value(t, kk, &f->ktag, 1, &kw) < 0) {
            n = -1;
            goto done;
        }
        if (xk == E_CACHED) {
            TE *c = tape_add(t, E_CACHED, f->vtag, 1);
            if (!c) {
                n = -1;
                goto done;
            }
            c->u = (uint64_t)xw.n;
            c->obj = map.e[i].x;
            c->of.sub = f->subm;
            c->level = (uint16_t)(level + 1);
            c->group = 0;
        } else if (tape_value(t, xk, f->vtag, 1, &xw) < 0) {
            n = -1;
            goto done;
        }
        if (size_add(&n, len_field(f->tag_len, e)) < 0) {
            n = -1;
            goto done;
        }
    }
done:
    pbj_map_release(&map);
    return n;
}

/* map_size_of a map with strings that may keep any bytes (out of line) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static Py_ssize_t map_size_kept(NField *f, PyObject *v, int level, Tape *t)
{
    return map_size_of(f, v, level, t, 1);
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))  /* (out of size_msg's loop: fewer registers live there) */
#endif
static Py_ssize_t map_size(NField *f, PyObject *v, int level, Tape *t)
{
    if (f->wkey == T_ANYSTR || f->wtype == T_ANYSTR) return map_size_kept(f, v, level, t);
    return map_size_of(f, v, level, t, 0);
}

/* a repeated string that may keep any bytes (found_size's K_REPEATED, out of line) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static Py_ssize_t repeated_kept_size(NField *f, PyObject *v, Tape *t)
{
    Py_ssize_t len = PyTuple_GET_SIZE(v), n = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        WV y;
        int k = any_scalar(T_ANYSTR, PyTuple_GET_ITEM(v, i), &y);
        if (k < 0 || tape_any(t, k, f->tag, f->tag_len, &y) < 0
            || size_add(&n, f->tag_len + kind_size(K_LEN, &y)) < 0) return -1;
    }
    return n;
}

/* the bytes of what pbj_step found, with tags and lengths, put on t (or -1) */
static Py_ssize_t found_size(int kind, NField *f, PyObject *v, const WV *x, int level, Tape *t)
{
    switch (kind) {
    case K_VARINT: case K_FIXED32: case K_FIXED64: case K_LEN:
        if (tape_value(t, kind, f->tag, f->tag_len, x) < 0) return -1;
        return f->tag_len + kind_size(kind, x);
    case K_MESSAGE:
        return sub_field(f, v, level, t);
    case K_REPEATED: {
        if (f->wtype == T_ANYSTR) return repeated_kept_size(f, v, t);
        Py_ssize_t len = PyTuple_GET_SIZE(v), n = 0;
        for (Py_ssize_t i = 0; i < len; i++) {
            PyObject *e = PyTuple_GET_ITEM(v, i);
            Py_ssize_t s;
            if (f->type == T_MESSAGE) {
                if (Py_TYPE(e) != f->subm->cls || (s = sub_field(f, e, level, t)) < 0) return -1;
            } else {
                WV y;
                int k = any_scalar(f->type, e, &y);  /* (never K_OWNED: not a string that keeps bytes) */
                if (k < 0 || tape_value(t, k, f->tag, f->tag_len, &y) < 0) return -1;
                s = f->tag_len + kind_size(k, &y);
            }
            if (size_add(&n, s) < 0) return -1;
        }
        return n;
    }
    case K_PACKED: {
        PyObject **items = &PyTuple_GET_ITEM(v, 0);
        Py_ssize_t count = PyTuple_GET_SIZE(v), n = -2;
        TE *e = NULL;
        if (t) {
            if (!(e = tape_add(t, E_PACKED_HELD, f->tag, f->tag_len))) return -1;
            n = packed_into(f->type, items, count, e->held, HELD_BYTES);
            if (n == -1) return -1;
        }
        if (n == -2) {  /* measured; converted again when written */
            if ((n = packed_size(f->type, items, count)) < 0) return -1;
            if (e) {
                e->kind = E_PACKED;
                e->obj = v;
                e->of.f = f;
            }
        }
        if (e) e->u = (uint64_t)n;
        return len_field(f->tag_len, n);
    }
    case K_MAP:
        return map_size(f, v, level, t);
    default:  /* (K_OWNED: owned_size) */
        return -1;
    }
}

/* the size of the extensions of `o` whose number is in extension range k (plan step EXTENSIONS):
 * its holders' sizes, cached or measured, as pbj.extensions.wire.size_range; with t, what they
 * write put on t (each holder's own plan writes its extension's tag) */
static Py_ssize_t ext_size(NMessage *m, PyObject *o, int k, int level, Tape *t)
{
    PyObject *tu = SLOT(o, m->ext_off);
    if (tu == NULL || !PyTuple_CheckExact(tu)) return -1;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tu); i++) {
        PyObject *h = PyTuple_GET_ITEM(tu, i), *cap;
        long number;
        NMessage *nm = pbj_holder_of(m->st, h, &cap, &number);
        if (!nm) return -1;
        Py_ssize_t s = 0;
        if (pbj_in_range(m, k, number)) {
            s = t ? -1 : pbj_cached_size(h, nm);  /* onto a tape: measured again, its entries put there */
            if (s == -1) s = size_msg(nm, h, level + 1, t);
        }
        Py_DECREF(cap);
        if (s < 0 || size_add(&n, s) < 0) return -1;
    }
    return n;
}

/* what pbj_step found as K_OWNED, with its tag, put on t (found_size's, out of line) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static Py_ssize_t owned_size(NField *f, const WV *x, Tape *t)
{
    if (tape_owned(t, K_OWNED, f->tag, f->tag_len, x) < 0) return -1;
    return f->tag_len + kind_size(K_LEN, x);
}

/* The size of `o`, measured and cached; with t, what it writes put on t; or -1 (a decline: a value
 * declined, or a size past PBJ_MESSAGE_MAX).
 *
 * Its sum is checked once, at its end, not at each term: each of its terms (one per step of the
 * plan, m->nwrites of them, an int: fewer than 2**31) is tested to be in [0, PBJ_MESSAGE_MAX], the
 * same unsigned comparison that finds an error (-1); a term past PBJ_MESSAGE_MAX is a decline anyway
 * (the message would be larger); the unknown fields add one more, at most PY_SSIZE_T_MAX < 2**63.
 * So n < 2**31 * 2**31 + 2**63 < 2**64: no wrap in 64 bits unsigned, and one comparison with
 * PBJ_MESSAGE_MAX at the end decides what a comparison at each addition would. */
static Py_ssize_t size_msg(NMessage *m, PyObject *o, int level, Tape *t)
{
    if (level >= NATIVE_MAX_LEVEL) return -1;
    if (!m->wsteps && pbj_write_table(m) < 0) return -1;
    uint64_t n = 0;
    for (int i = 0; i < m->nwrites; i++) {
        PyObject *hold, *v;
        NField *f;
        WV x;
        int kind = pbj_step(m, &m->wsteps[i], o, &hold, &f, &v, &x);
        if (kind == K_ABSENT) continue;
        Py_ssize_t s = kind >= K_EXT ? (kind == K_EXT ? ext_size(m, o, m->wsteps[i].index, level, t)
                                                      : owned_size(f, &x, t))  /* (K_OWNED) */
                       : kind < 0 ? -1 : found_size(kind, f, v, &x, level, t);
        if ((size_t)s > (size_t)PBJ_MESSAGE_MAX) return -1;  /* an error (s < 0), or past the limit */
        n += (uint64_t)s;
    }
    PyObject *u = SLOT(o, m->unknown_off);
    if (u == NULL || !PyBytes_CheckExact(u)) return -1;
    Py_ssize_t un = PyBytes_GET_SIZE(u);
    if (un && t) {
        TE *e = tape_add(t, E_RAW, NULL, 0);
        if (!e) return -1;
        e->s = PyBytes_AS_STRING(u);
        e->n = un;
    }
    n += (uint64_t)un;
    if (n > (uint64_t)PBJ_MESSAGE_MAX || set_size(o, m, (Py_ssize_t)n) < 0) return -1;
    return (Py_ssize_t)n;
}

/* ---------------------------------------------------------------- writing */

typedef struct {
    uint8_t *q, *lim;
    int lied;      /* a cached size did not match the bytes written: the object changed behind the
                    * constructor's back (object.__setattr__) after it was measured */
} W;

/* room for n more bytes (the output's size is what was measured: no room means a size lied) */
static inline int w_room(W *w, Py_ssize_t n)
{
    if (w->lim - w->q >= n) return 0;
    w->lied = 1;
    return -1;
}

static inline void w_varint(W *w, uint64_t v)
{
    while (v >= 0x80) {
        *w->q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *w->q++ = (uint8_t)v;
}

static inline void w_tag(W *w, const uint8_t *tag, int len)
{
    if (len == 1) {
        *w->q++ = tag[0];
        return;
    }
    memcpy(w->q, tag, (size_t)len);
    w->q += len;
}

static inline void w_fixed32(W *w, uint64_t u)
{
    uint32_t v = (uint32_t)u;
    memcpy(w->q, &v, 4);  /* little-endian (checked when the module loads) */
    w->q += 4;
}

static inline void w_fixed64(W *w, uint64_t u)
{
    memcpy(w->q, &u, 8);
    w->q += 8;
}

/* a converted scalar of `kind` (room made for kind_size of it) */
static inline void w_value(W *w, int kind, const WV *x)
{
    switch (kind) {
    case K_FIXED64: w_fixed64(w, x->u); return;
    case K_FIXED32: w_fixed32(w, x->u); return;
    case K_LEN:
        w_varint(w, (uint64_t)x->n);
        memcpy(w->q, x->s, (size_t)x->n);
        w->q += x->n;
        return;
    default: w_varint(w, x->u); return;
    }
}

PBJ_INLINE int w_scalar(W *w, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    if (w_room(w, tag_len + kind_size(kind, x)) < 0) return -1;
    w_tag(w, tag, tag_len);
    w_value(w, kind, x);
    return 0;
}


static int write_msg(NMessage *m, PyObject *o, W *w, int level);

/* the contents of sub-message v, `s` bytes by its cached size (checked) */
static int w_contents(W *w, NMessage *sm, PyObject *v, Py_ssize_t s, int level)
{
    uint8_t *before = w->q;
    if (w_room(w, s) < 0 || write_msg(sm, v, w, level) < 0) return -1;
    if (w->q - before != s) {  /* a cached size that lies */
        w->lied = 1;
        return -1;
    }
    return 0;
}

/* sub-message v (of f->subm's class, checked) with its tag and length, its sizes cached */
static int w_sub(W *w, NField *f, PyObject *v, int level)
{
    Py_ssize_t s = pbj_cached_size(v, f->subm);
    if (s < 0 && (s = size_msg(f->subm, v, level + 1, NULL)) < 0) return -1;  /* not measured yet */
    if (w_room(w, f->tag_len + (f->group ? 0 : vlen((uint64_t)s))) < 0) return -1;
    w_tag(w, f->tag, f->tag_len);
    if (!f->group) w_varint(w, (uint64_t)s);
    if (w_contents(w, f->subm, v, s, level + 1) < 0) return -1;
    if (!f->group) return 0;
    if (w_room(w, f->end_tag_len) < 0) return -1;
    w_tag(w, f->end_tag, f->end_tag_len);
    return 0;
}

#define WRITE_LOOP(TYPE, STORE) \
    for (Py_ssize_t i = 0; i < n; i++) { \
        WV x; \
        if (pbj_wire(TYPE, items[i], &x) < 0) return -1; \
        STORE; \
    } \
    return 0;

/* packed values of one type in a loop of their own (room made for all of them) */
static int w_packed_values(W *w, int type, PyObject **items, Py_ssize_t n)
{
    switch (type) {
    case T_DOUBLE: WRITE_LOOP(T_DOUBLE, w_fixed64(w, x.u))
    case T_FLOAT: WRITE_LOOP(T_FLOAT, w_fixed32(w, x.u))
    case T_FIXED64: WRITE_LOOP(T_FIXED64, w_fixed64(w, x.u))
    case T_SFIXED64: WRITE_LOOP(T_SFIXED64, w_fixed64(w, x.u))
    case T_FIXED32: WRITE_LOOP(T_FIXED32, w_fixed32(w, x.u))
    case T_SFIXED32: WRITE_LOOP(T_SFIXED32, w_fixed32(w, x.u))
    case T_BOOL: WRITE_LOOP(T_BOOL, *w->q++ = (uint8_t)x.u)
    case T_INT64: WRITE_LOOP(T_INT64, w_varint(w, x.u))
    case T_UINT64: WRITE_LOOP(T_UINT64, w_varint(w, x.u))
    case T_INT32: WRITE_LOOP(T_INT32, w_varint(w, x.u))
    case T_UINT32: WRITE_LOOP(T_UINT32, w_varint(w, x.u))
    case T_ENUM: WRITE_LOOP(T_ENUM, w_varint(w, x.u))
    case T_SINT32: WRITE_LOOP(T_SINT32, w_varint(w, x.u))
    case T_SINT64: WRITE_LOOP(T_SINT64, w_varint(w, x.u))
    default: return -1;
    }
}


/* a packed run's values, `n` bytes as measured (checked) */
static int w_packed_run(W *w, NField *f, PyObject *v, Py_ssize_t n)
{
    PyObject **items = &PyTuple_GET_ITEM(v, 0);
    Py_ssize_t len = PyTuple_GET_SIZE(v);
    uint8_t *before = w->q;
    Py_ssize_t left = w->lim - w->q;
    if (f->width ? len * f->width <= left : len * 10 <= left) {
        if (w_packed_values(w, f->type, items, len) < 0) return -1;  /* room for the most they can take */
    } else {
        for (Py_ssize_t i = 0; i < len; i++) {  /* near the output's end: each value checked */
            WV x;
            int kind = any_scalar(f->type, items[i], &x);
            if (kind < 0 || w_room(w, kind_size(kind, &x)) < 0) return -1;
            w_value(w, kind, &x);
        }
    }
    if (w->q - before != n) {
        w->lied = 1;
        return -1;
    }
    return 0;
}

static int w_packed(W *w, NField *f, PyObject *v)
{
    uint8_t held[64];
    Py_ssize_t n = packed_into(f->type, &PyTuple_GET_ITEM(v, 0), PyTuple_GET_SIZE(v), held, sizeof held);
    if (n == -1) return -1;
    if (n >= 0) {  /* a small run: converted once, copied */
        if (w_room(w, len_field(f->tag_len, n)) < 0) return -1;
        w_tag(w, f->tag, f->tag_len);
        w_varint(w, (uint64_t)n);
        memcpy(w->q, held, (size_t)n);
        w->q += n;
        return 0;
    }
    n = packed_size(f->type, &PyTuple_GET_ITEM(v, 0), PyTuple_GET_SIZE(v));
    if (n < 0 || w_room(w, len_field(f->tag_len, n)) < 0) return -1;
    w_tag(w, f->tag, f->tag_len);
    w_varint(w, (uint64_t)n);
    return w_packed_run(w, f, v, n);
}

/* one map entry of length e (key and value converted; a message value x: its size in xw->n) */
PBJ_INLINE int w_entry(W *w, NField *f, PyObject *x, Py_ssize_t e, int kk, const WV *kw, int xk, const WV *xw,
                       int level)
{
    if (w_room(w, len_field(f->tag_len, e)) < 0) return -1;
    w_tag(w, f->tag, f->tag_len);
    w_varint(w, (uint64_t)e);
    *w->q++ = f->ktag;
    w_value(w, kk, kw);
    *w->q++ = f->vtag[0];
    if (xk == E_CACHED) {
        w_varint(w, (uint64_t)xw->n);
        return w_contents(w, f->subm, x, xw->n, level + 1);
    }
    w_value(w, xk, xw);
    return 0;
}

/* w_entry of an entry with a string that keeps bytes that are not UTF-8, what it owns released
 * (out of line) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int w_kept_entry(W *w, NField *f, PyObject *x, Py_ssize_t e, int kk, const WV *kw, int xk, const WV *xw,
                        int level)
{
    int r = w_entry(w, f, x, e, as_len(kk), kw, as_len(xk), xw, level);
    wv_release(kk, kw);
    wv_release(xk, xw);
    return r;
}

static int w_map(W *w, NField *f, PyObject *v, int level)
{
    PMap map;
    int r = -1;
    if (pbj_map_sorted(f, v, &map) < 0) goto done;
    for (Py_ssize_t i = 0; i < map.n; i++) {
        PyObject *k = map.e[i].k, *x = map.e[i].x;
        WV kw, xw;
        int kk, xk;
        Py_ssize_t e = entry_size(f, k, x, &kw, &xw, &kk, &xk, level);
        if (e < 0) goto done;
        if ((kk == K_OWNED || xk == K_OWNED ? w_kept_entry(w, f, x, e, kk, &kw, xk, &xw, level)
                                            : w_entry(w, f, x, e, kk, &kw, xk, &xw, level)) < 0) goto done;
    }
    r = 0;
done:
    pbj_map_release(&map);
    return r;
}

/* a K_OWNED scalar with its tag (w_scalar's arguments), its bytes object released after the copy */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int w_kept(W *w, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    int r = w_scalar(w, K_LEN, tag, tag_len, x);
    wv_release(kind, x);
    return r;
}

/* a converted scalar of any kind with its tag (a K_OWNED one's bytes object released) */
static inline int w_any(W *w, int kind, const uint8_t *tag, int tag_len, const WV *x)
{
    if (kind == K_OWNED) return w_kept(w, kind, tag, tag_len, x);
    return w_scalar(w, kind, tag, tag_len, x);
}

/* a repeated string that may keep any bytes (w_found's K_REPEATED, out of line) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int w_repeated_kept(W *w, NField *f, PyObject *v)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); i++) {
        WV y;
        int k = any_scalar(T_ANYSTR, PyTuple_GET_ITEM(v, i), &y);
        if (k < 0 || w_any(w, k, f->tag, f->tag_len, &y) < 0) return -1;
    }
    return 0;
}

/* what pbj_step found (what x owns released) */
static int w_found(W *w, int kind, NField *f, PyObject *v, const WV *x, int level)
{
    switch (kind) {
    case K_VARINT: case K_FIXED32: case K_FIXED64: case K_LEN:
        return w_scalar(w, kind, f->tag, f->tag_len, x);
    case K_OWNED:
        return w_kept(w, kind, f->tag, f->tag_len, x);
    case K_MESSAGE:
        return w_sub(w, f, v, level);
    case K_REPEATED: {
        if (f->wtype == T_ANYSTR) return w_repeated_kept(w, f, v);
        Py_ssize_t len = PyTuple_GET_SIZE(v);
        for (Py_ssize_t i = 0; i < len; i++) {
            PyObject *e = PyTuple_GET_ITEM(v, i);
            if (f->type == T_MESSAGE) {
                if (Py_TYPE(e) != f->subm->cls || w_sub(w, f, e, level) < 0) return -1;
                continue;
            }
            WV y;
            int k = any_scalar(f->type, e, &y);  /* (never K_OWNED: not a string that keeps bytes) */
            if (k < 0 || w_scalar(w, k, f->tag, f->tag_len, &y) < 0) return -1;
        }
        return 0;
    }
    case K_PACKED:
        return w_packed(w, f, v);
    case K_MAP:
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
        NMessage *nm = pbj_holder_of(m->st, h, &cap, &number);
        if (!nm) return -1;
        int r = 0;
        if (pbj_in_range(m, k, number)) {
            Py_ssize_t s = pbj_cached_size(h, nm);
            if (s == -1) s = size_msg(nm, h, level + 1, NULL);
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

/* the walk of a sizes-cached encode */
static int write_msg(NMessage *m, PyObject *o, W *w, int level)
{
    if (level >= NATIVE_MAX_LEVEL) return -1;
    if (!m->wsteps && pbj_write_table(m) < 0) return -1;
    for (int i = 0; i < m->nwrites; i++) {
        PyObject *hold, *v;
        NField *f;
        WV x;
        int kind = pbj_step(m, &m->wsteps[i], o, &hold, &f, &v, &x);
        if (kind == K_ABSENT) continue;
        if (kind == K_EXT) {
            if (w_ext(w, m, o, m->wsteps[i].index, level) < 0) return -1;
            continue;
        }
        if (kind < 0 || w_found(w, kind, f, v, &x, level) < 0) return -1;
    }
    PyObject *u = SLOT(o, m->unknown_off);
    if (u == NULL || !PyBytes_CheckExact(u)) return -1;
    Py_ssize_t un = PyBytes_GET_SIZE(u);
    if (un == 0) return 0;
    if (w_room(w, un) < 0) return -1;
    memcpy(w->q, PyBytes_AS_STRING(u), (size_t)un);
    w->q += un;
    return 0;
}

/* the write pass of a fresh encode: the tape, in order */
static int write_tape(W *w, const Tape *t)
{
    for (const TBlock *b = &t->head; b; b = b->next) {
        for (Py_ssize_t i = 0; i < b->n; i++) {
            const TE *e = &b->e[i];
            switch (e->kind) {
            case K_VARINT: case K_FIXED32: case K_FIXED64: case K_LEN: {
                WV x = {e->u, e->s, e->n};
                if (w_scalar(w, e->kind, e->tag, e->tag_len, &x) < 0) return -1;
                break;
            }
            case K_OWNED: {  /* a LEN value (its bytes object released with the tape) */
                WV x = {e->u, e->s, e->n};
                if (w_scalar(w, K_LEN, e->tag, e->tag_len, &x) < 0) return -1;
                break;
            }
            case E_HEAD:
                if (w_room(w, e->tag_len + vlen(e->u)) < 0) return -1;
                w_tag(w, e->tag, e->tag_len);
                w_varint(w, e->u);
                break;
            case E_TAG:
                if (w_room(w, e->tag_len) < 0) return -1;
                w_tag(w, e->tag, e->tag_len);
                break;
            case E_PACKED:
                if (w_room(w, e->tag_len + vlen(e->u)) < 0) return -1;
                w_tag(w, e->tag, e->tag_len);
                w_varint(w, e->u);
                if (w_packed_run(w, e->of.f, e->obj, (Py_ssize_t)e->u) < 0) return -1;
                break;
            case E_PACKED_HELD:
                if (w_room(w, len_field(e->tag_len, (Py_ssize_t)e->u)) < 0) return -1;
                w_tag(w, e->tag, e->tag_len);
                w_varint(w, e->u);
                memcpy(w->q, e->held, (size_t)e->u);
                w->q += e->u;
                break;
            case E_CACHED:
                if (w_room(w, e->tag_len + (e->group ? 0 : vlen(e->u))) < 0) return -1;
                w_tag(w, e->tag, e->tag_len);
                if (!e->group) w_varint(w, e->u);
                if (w_contents(w, e->of.sub, e->obj, (Py_ssize_t)e->u, e->level) < 0) return -1;
                if (e->group) {  /* the end tag (s, n) */
                    if (w_room(w, e->n) < 0) return -1;
                    w_tag(w, (const uint8_t *)e->s, (int)e->n);
                }
                break;
            case E_RAW:
                if (w_room(w, e->n) < 0) return -1;
                memcpy(w->q, e->s, (size_t)e->n);
                w->q += e->n;
                break;
            default:
                return -1;
            }
        }
    }
    return 0;
}

/* encode(plan, obj) -> bytes, or None: hand `obj` to the Python writer, or NotImplemented: a
 * size cached in `obj`'s tree does not match its bytes (the caller measures again, trusting no
 * cached size); raises only what is not the engine's own (values.h: declines and errors). */
PyObject *pbj_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "encode(plan, obj)");
        return NULL;
    }
    NMessage *m = pbj_message_of(args[0]);
    PyObject *o = args[1], *out = NULL;
    if (!m) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (Py_TYPE(o) != m->cls) goto decline;
    Tape tape, *t = NULL;
    Py_ssize_t n = pbj_cached_size(o, m);
    if (n >= 0 && !(out = PyBytes_FromStringAndSize(NULL, n))) {
        /* a cached size too large to hold, which may be a size set by hand: measured again */
        if (!PyErr_ExceptionMatches(PyExc_MemoryError)) goto decline;
        PyErr_Clear();
        n = -1;
    }
    if (n < 0) {  /* fresh: one walk over the values, onto the tape */
        t = &tape;
        tape_init(t);
        if ((n = size_msg(m, o, 0, t)) < 0) goto fail;
        if (!(out = PyBytes_FromStringAndSize(NULL, n))) goto fail;
    }
    W w = {(uint8_t *)PyBytes_AS_STRING(out), (uint8_t *)PyBytes_AS_STRING(out) + n, 0};
    int r = t ? write_tape(&w, t) : write_msg(m, o, &w, 0);
    if (r == 0 && w.q != w.lim) w.lied = 1;
    if (t) tape_free(t);
    if (r < 0 || w.lied) {
        Py_DECREF(out);
        if (w.lied && !PyErr_Occurred()) Py_RETURN_NOTIMPLEMENTED;
        goto decline;
    }
    return out;
fail:
    if (t) tape_free(t);
decline:
    if (PyErr_Occurred()) return NULL;  /* not the engine's: unchanged (a MemoryError) */
    Py_RETURN_NONE;
}
