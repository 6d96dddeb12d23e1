/* share.c: one object for every repeated sub-message of a decode call.
 *
 * Decoding is a function of (class, bytes, depth left): two occurrences of the same encoded
 * sub-message, of the same class, at the same depth, decode to equal objects, and pbj's messages
 * are immutable (their cached size too is a function of their value). So within one decode call
 * the second occurrence can be the first one's object: a real block repeats its keys, account
 * and token IDs thousands of times (the shipped Hedera block: 276,583 messages, 61,588 distinct),
 * and sharing them cuts the objects a decoded block holds, and the time to free them, by 3-4x
 * (docs/performance.md, "Memory"). Python itself shares immutable values the same way (small
 * ints, interned strings); only `is` between two sub-messages can tell.
 *
 * What is shared: a sub-message read from a LEN field (not a group: its end is only known after
 * it is decoded) whose encoded length is at most PBJ_SHARE_MAX_BYTES, in an input of at least
 * PbjState.share_min bytes (4096; smaller inputs make too few objects for the table to pay). The
 * table holds a strong reference to each object and the span of the input it came from (the
 * input outlives the call); it is released when the call ends, before the objects are tracked.
 *
 * Cost bounds (hostile input): the key is a keyed hash of the span (SipHash-1-3, as CPython hashes
 * str and bytes, keyed per module from CPython's own per-process seed: pbj_share_key), so
 * colliding spans cannot be made offline; a probe looks at
 * most SHARE_PROBES entries (then the sub-message is simply decoded again, not shared); the table
 * holds at most one entry per SHARE_INPUT_PER_ENTRY bytes of input, so its memory (at most 80 bytes
 * an entry with the growth room, 32 in the index) stays below 2.5x the input whatever the input is.
 */
#include "read.h"

#define SHARE_PROBES 64
#define SHARE_INPUT_PER_ENTRY 48
#define SHARE_FIRST_CAP 256

typedef struct {
    Py_hash_t h;
    const uint8_t *p;
    NMessage *m;
    uint32_t n;
    int depth;
    PyObject *o;          /* owned */
} ShareEntry;

/* The entries in the order they came, and an open-addressing index over them whose slots are
 * 8 bytes (the hash's upper half, the entry's place + 1; 0: empty), so that a probe reads a small
 * table and an entry (and the input it names) only when the hash's upper half matches. */
struct PbjShare {
    uint64_t *slot;
    ShareEntry *e;
    size_t cap, used, ecap;
};

void pbj_share_begin(Ctx *c, Py_ssize_t input_len)
{
    c->share = NULL;
    c->share_limit = input_len >= c->st->share_min ? (size_t)input_len / SHARE_INPUT_PER_ENTRY + 16 : 0;
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND \
    do { \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
    } while (0)

/* SipHash-1-3 of the n bytes at p with key (k0, k1) (Aumasson and Bernstein; the variant CPython
 * hashes str and bytes with) */
static uint64_t siphash13(uint64_t k0, uint64_t k1, const uint8_t *p, size_t n)
{
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    uint64_t b = (uint64_t)n << 56, m;
    const uint8_t *end = p + (n & ~(size_t)7);
    for (; p < end; p += 8) {
        memcpy(&m, p, 8);  /* little-endian hosts only (checked at import) */
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    m = 0;
    memcpy(&m, p, n & 7);
    b |= m;
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* The key of the sharing table's hash: two values of CPython's own keyed hash of bytes (seeded per
 * process, or by PYTHONHASHSEED), read once when the module is executed. -1 on error. */
int pbj_share_key(PbjState *st)
{
    PyObject *a = PyBytes_FromString("pbj share key 0"), *b = PyBytes_FromString("pbj share key 1");
    Py_hash_t ha = a ? PyObject_Hash(a) : -1, hb = b ? PyObject_Hash(b) : -1;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (ha == -1 || hb == -1) return -1;
    st->share_key[0] = (uint64_t)ha;
    st->share_key[1] = (uint64_t)hb * 0x9E3779B97F4A7C15ull;
    return 0;
}

static Py_hash_t share_hash(Ctx *c, NMessage *m, const uint8_t *p, size_t n, int depth)
{
    Py_hash_t h = n ? (Py_hash_t)siphash13(c->st->share_key[0], c->st->share_key[1], p, n) : 0;
    return (Py_hash_t)(((size_t)h ^ ((size_t)(uintptr_t)m >> 4) * 0x9E3779B97F4A7C15u) + (size_t)depth * 0x100000001B3u);
}

#define SLOT_TAG(h) ((uint64_t)((uint64_t)(h) >> 32) << 32)

/* The index slot for (m, span, depth): *hit is its entry when there is one, else the slot is the
 * empty one to fill; -1 when neither is within SHARE_PROBES of its place. */
static Py_ssize_t share_find(struct PbjShare *t, Py_hash_t h, NMessage *m, const uint8_t *p, size_t n, int depth,
                             ShareEntry **hit)
{
    size_t mask = t->cap - 1;
    uint64_t tag = SLOT_TAG(h);
    *hit = NULL;
    for (size_t i = 0, j = (size_t)h & mask; i < SHARE_PROBES; i++, j = (j + 1) & mask) {
        uint64_t s = t->slot[j];
        if (!s) return (Py_ssize_t)j;
        if ((s & 0xFFFFFFFF00000000u) != tag) continue;
        ShareEntry *e = &t->e[(s & 0xFFFFFFFFu) - 1];
        if (e->h == h && e->m == m && e->n == n && e->depth == depth && memcmp(e->p, p, n) == 0) {
            *hit = e;
            return (Py_ssize_t)j;
        }
    }
    return -1;
}

PyObject *pbj_share_lookup(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *e, int depth, Py_hash_t *hash)
{
    size_t n = (size_t)(e - p);
    if (!c->share_limit || n > PBJ_SHARE_MAX_BYTES) return NULL;
    *hash = share_hash(c, m, p, n, depth);
    if (!c->share) return NULL;
    ShareEntry *x;
    share_find(c->share, *hash, m, p, n, depth, &x);
    return x ? Py_NewRef(x->o) : NULL;
}

/* room for one more entry: the index at most half full, the entries' array with a free place;
 * 0, or -1 with nothing changed */
static int share_room(Ctx *c)
{
    struct PbjShare *t = c->share;
    if (!t) {
        t = PyMem_Calloc(1, sizeof(*t));
        if (!t) return -1;
        c->share = t;
    }
    if (t->used == t->ecap) {
        size_t ecap = t->ecap ? t->ecap * 2 : SHARE_FIRST_CAP / 2;
        ShareEntry *e = PyMem_Realloc(t->e, ecap * sizeof(ShareEntry));
        if (!e) return -1;
        t->e = e;
        t->ecap = ecap;
    }
    if ((t->used + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : SHARE_FIRST_CAP;
        uint64_t *slot = PyMem_Calloc(cap, sizeof(uint64_t));
        if (!slot) return -1;
        for (size_t i = 0; i < t->used; i++) {
            size_t j = (size_t)t->e[i].h & (cap - 1);
            while (slot[j]) j = (j + 1) & (cap - 1);  /* at most half full: an empty one exists */
            slot[j] = SLOT_TAG(t->e[i].h) | (uint64_t)(i + 1);
        }
        PyMem_Free(t->slot);
        t->slot = slot;
        t->cap = cap;
    }
    return 0;
}

void pbj_share_insert(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *e, int depth, Py_hash_t hash,
                      PyObject *o)
{
    size_t n = (size_t)(e - p);
    if (!c->share_limit || n > PBJ_SHARE_MAX_BYTES) return;
    if (c->share && c->share->used >= c->share_limit) return;
    if (share_room(c) < 0) return;  /* no memory for it: not shared */
    struct PbjShare *t = c->share;
    ShareEntry *x;
    Py_ssize_t j = share_find(t, hash, m, p, n, depth, &x);
    if (j < 0 || x) return;
    x = &t->e[t->used];
    x->h = hash;
    x->p = p;
    x->m = m;
    x->n = (uint32_t)n;
    x->depth = depth;
    x->o = Py_NewRef(o);
    t->slot[j] = SLOT_TAG(hash) | (uint64_t)(t->used + 1);
    t->used++;
}

void pbj_share_end(Ctx *c)
{
    struct PbjShare *t = c->share;
    if (!t) return;
    for (size_t i = 0; i < t->used; i++) Py_DECREF(t->e[i].o);
    PyMem_Free(t->e);
    PyMem_Free(t->slot);
    PyMem_Free(t);
    c->share = NULL;
}
