/* read.h: reading one value from the wire, shared by decode.c (messages) and read.c (values).
 *
 * Every reader takes the end of the message being read and fails (returns -1 or NULL) rather
 * than read past it; a declared length is compared with the bytes that remain first.
 */
#ifndef PBJ_READ_H
#define PBJ_READ_H

#include "engine.h"

/* the unknown fields of one message, in arrival order */
typedef struct {
    uint8_t *buf;
    size_t len, cap;
} UBuf;

/* one decode call: the native recursion level, and whether the input was declined (valid, but
 * left to Python) rather than refused */
typedef struct {
    PbjState *st;   /* the module's state (engine.h) */
    const uint8_t *data, *data_end;  /* the whole input (offsets count from data) */
    /* the error (walk.c): its reason (a str, owned), the byte offset of the failing field's tag (-1:
     * none), the path, innermost element first (a list, owned) */
    PyObject *err_reason, *err_path;
    Py_ssize_t err_offset;
    long group_found;   /* a group body ended without its end tag: the end tag found instead (0: the
                         * input ended), for the group's field to report; -1 otherwise */
    int quiet;      /* a failure is not explained (walk.c): the caller declines any failure */
    int level;
    int declined;   /* valid input the engine leaves to Python (a merge, deep nesting) */
    int defer_gc;       /* a large input: messages are tracked when the call ends (decode.c, hold_young) */
    PyObject **young;   /* messages made by this call, held, not yet tracked by the cyclic GC */
    Py_ssize_t nyoung, cap_young;
    struct PbjShare *share;  /* the sub-messages decoded so far, to share (share.c), or NULL */
    size_t share_limit;      /* most entries the table may hold; 0: this call shares nothing */
} Ctx;

int pbj_ubuf_add(UBuf *u, const uint8_t *p, size_t n);

/* a stretch of the input that holds (part of) one message's encoding */
typedef struct {
    const uint8_t *s, *e;
} Span;

/* A decoder of one message of plan m from [p, end) and then from each of more[0..nmore) in turn (its
 * later occurrences, merged), with `depth` levels left; NULL on error or decline (c->declined):
 * decode.c's, which it hands to extensions.c for the holders of extensions */
typedef PyObject *(*PbjDecodeSpans)(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                                   const Span *more, Py_ssize_t nmore);
/* extensions.c: split the unknown fields `unk` of a just-decoded message of m (a class with
 * extension ranges) into its registered extensions (*holders: a new tuple, sorted by number, each
 * decoded with `decode`) and the rest (left in unk), as pbj.extensions.wire.take does */
int pbj_ext_take(Ctx *c, NMessage *m, UBuf *unk, int depth, PyObject **holders, PbjDecodeSpans decode);
/* decode.c: pbj_ext_take with decode.c's decoder, the holders dropped (a sink that makes no objects
 * refuses what pbj.decode refuses in an extension). 0 or -1 */
int pbj_check_extensions(Ctx *c, NMessage *m, UBuf *unk, int depth);
int pbj_skip_field(Ctx *c, const uint8_t **pp, const uint8_t *end, uint32_t tag, int depth);
PyObject *pbj_len_value(int type, const uint8_t *p, const uint8_t *e);
/* share.c: one object for every repeated sub-message of a decode call (LEN values of at most
 * PBJ_SHARE_MAX_BYTES bytes) */
#define PBJ_SHARE_MAX_BYTES 256
void pbj_share_begin(Ctx *c, Py_ssize_t input_len);
PyObject *pbj_share_lookup(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *e, int depth, Py_hash_t *hash);
void pbj_share_insert(Ctx *c, NMessage *m, const uint8_t *p, const uint8_t *e, int depth, Py_hash_t hash,
                      PyObject *o);
void pbj_share_end(Ctx *c);
PyObject *pbj_scalar_value(NField *f, int type, const uint8_t **pp, const uint8_t *end, int32_t *raw);
/* 1: `num` is a member of enum field f, 0: it is not, -1: error (read.c) */
int pbj_enum_has(NField *f, int32_t num);

static inline int rd_fixed32(const uint8_t **pp, const uint8_t *end, uint32_t *out)
{
    if (end - *pp < 4) return -1;
    memcpy(out, *pp, 4);  /* little-endian hosts only (checked at import) */
    *pp += 4;
    return 0;
}

static inline int rd_fixed64(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    if (end - *pp < 8) return -1;
    memcpy(out, *pp, 8);
    *pp += 8;
    return 0;
}

/* a LEN value's span: [*pp, *e) after its length. The length prefix is an int32 varint
 * (pbj.wire.read_size): more than 5 bytes, or a value above 2**31-1, is refused, as upb does. */
static inline int rd_len(const uint8_t **pp, const uint8_t *end, const uint8_t **e)
{
    const uint8_t *start = *pp;
    uint64_t n;
    if (rd_varint(pp, end, &n) < 0 || *pp - start > 5 || n > 0x7FFFFFFFu
        || n > (uint64_t)(end - *pp)) return -1;
    *e = *pp + n;
    return 0;
}

/* whether the n bytes at p are all ASCII (below 0x80), read a word (8 bytes) at a time, never
 * outside [p, p + n): the last word of a run of at least 8 overlaps the one before it */
static inline int pbj_is_ascii(const uint8_t *p, size_t n)
{
    const uint64_t high = 0x8080808080808080ull;
    uint64_t w;
    if (n >= 8) {
        const uint8_t *last = p + n - 8;
        for (; p < last; p += 8) {
            memcpy(&w, p, 8);
            if (w & high) return 0;
        }
        memcpy(&w, last, 8);
        return !(w & high);
    }
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        return !((a | b) & 0x80808080u);
    }
    unsigned x = 0;
    for (size_t i = 0; i < n; i++) x |= p[i];
    return x < 0x80;
}

/* A string field's value: the str of the UTF-8 [p, e), strict (RFC 3629, as PyUnicode_DecodeUTF8),
 * or with `strict` 0 (proto2, utf8_validation NONE) any bytes, each byte of an invalid sequence
 * kept as U+DC80..U+DCFF (surrogateescape), as the Python parser keeps them
 * (pbj.codec.emit.str_decode). NULL (an error set) when it is not UTF-8 and `strict`.
 *
 * Two bytes or more that are all ASCII (what most strings on the wire are) are copied into a
 * new compact ASCII str: the same object PyUnicode_DecodeUTF8 would make (it makes a new one too;
 * an ASCII string is valid whatever `strict` says), without its decoder's set-up: about 160
 * instructions instead of 230 for a short string. Fewer than two bytes keep CPython's own shared
 * objects (the empty string, the one-character strings); anything not ASCII goes to CPython's
 * decoder, with its errors. */
static inline PyObject *pbj_str_value(const uint8_t *p, const uint8_t *e, int strict)
{
    Py_ssize_t n = e - p;
    if (n >= 2 && pbj_is_ascii(p, (size_t)n)) {
        PyObject *s = PyUnicode_New(n, 127);
        if (s) memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)n);
        return s;
    }
    return PyUnicode_DecodeUTF8((const char *)p, n, strict ? NULL : "surrogateescape");
}

/* One value of field f of `type` (a map's key or value type too: not a message) at *pp: a string
 * (strict UTF-8, or any bytes kept as Python keeps them when f->utf8 is 0), bytes, or a scalar; NULL
 * on error; for a closed enum's non-member, Py_None (a new reference) and *raw the number. */
static inline __attribute__((always_inline)) PyObject *pbj_value_object(NField *f, int type, const uint8_t **pp, const uint8_t *end, int32_t *raw)
{
    if (type == T_STRING || type == T_BYTES) {
        const uint8_t *e;
        if (rd_len(pp, end, &e) < 0) return NULL;
        PyObject *v = type == T_STRING ? pbj_str_value(*pp, e, f->utf8)
                                       : PyBytes_FromStringAndSize((const char *)*pp, e - *pp);
        *pp = e;
        return v;
    }
    return pbj_scalar_value(f, type, pp, end, raw);
}

#endif
