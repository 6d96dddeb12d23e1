/* walk.h: the engine's one wire walker, over a class's plan (NMessage), with sinks.
 *
 * The walker reads a message's encoding as protobuf.dev "Encoding" says and pbj/codec/parse.py
 * reads it: tags, wire types, the dispatch of the plan (known tags to their field, every other tag
 * an unknown field, kept byte for byte in arrival order), packed and unpacked runs, groups up to
 * their end tag, the nesting limit (`depth`, refused at 0, and NATIVE_MAX_LEVEL levels of C
 * recursion, declined beyond), a singular sub-message that occurs more than once merged over all
 * its occurrences ("Last One Wins": its later spans are kept and handed to the sink with the first
 * when the message ends), a oneof member replaced and coming back (its waiting occurrences still
 * checked), map entries (an entry holding an unknown field, or a closed enum's non-member, kept
 * whole as an unknown field), a closed enum's non-member kept as an unknown field.
 *
 * A *sink* is what the values go to: a const PbjSink of functions, given to pbj_walk, which each
 * sink inlines into its own message function (so the calls are direct and the compiler sees
 * through them). The walker reads tags and lengths; the sink reads each value with read.h's
 * readers (its own representation: a Python object, column bits, a count) and decides what a
 * sub-message is (it walks it with its own message function, or declines). Sinks today:
 *   decode.c  pbj's objects (pbj.decode)
 *   arrow.c   Arrow columns (pbj.arrow.decode_to_arrow)
 *   count.c   values per field (the worked example of docs/codec-protobuf.md, "How to add a sink")
 *
 * Every failure leaves through one exit, with the field path and the byte offset of the failing
 * field's tag built as the walk unwinds (walk.c): the DecodeError pbj.decode raises, with the
 * text, path and offset the Python parser gives. A sink answers -1 for an error (the walker
 * explains it), and sets c->declined for valid input it leaves to Python.
 */
#ifndef PBJ_WALK_H
#define PBJ_WALK_H

#include "read.h"

/* a sink's answer for a value: a closed enum's non-member, which the walker keeps as an unknown field */
#define PBJ_KEEP 1

/* what a sink's `message` is asked to do with a sub-message's occurrences */
enum {
    PBJ_SUB_FIRST,    /* its first occurrence: read it (and hold it: later ones may merge into it) */
    PBJ_SUB_MERGED,   /* all its occurrences, as one message: replaces the first */
    PBJ_SUB_CHECK,    /* occurrences of a oneof member another member replaced: read (checked), dropped */
    PBJ_SUB_MAP       /* a map entry's message value: its first occurrence, or (more) all of them */
};

/* A singular sub-message's occurrences: the first and the later ones, merged at the end */
typedef struct {
    Span first;
    Span *more;
    Py_ssize_t n, cap;
} Spans;

/* what the walker keeps of one message while it reads it */
typedef struct {
    int *cur;          /* per oneof: the field index of the member set, or -1 */
    Spans *sp;         /* per singular sub-message field (NMessage.msg_of_field): its occurrences */
    UBuf unk;          /* the unknown fields, as they arrived */
    int repeats;       /* a singular sub-message occurred more than once */
} WalkFrame;

typedef struct PbjSink PbjSink;
struct PbjSink {
    /* the value of scalar, string or bytes field f (not a message, not a packed run) at *pp, after
     * its tag: read it (advancing *pp) and store it. 0, PBJ_KEEP (a closed enum's non-member), -1. */
    int (*value)(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t **pp, const uint8_t *end);
    /* a packed run [p, e) of repeated scalar f (its length read): every element (a closed enum's
     * non-member: pbj_keep_packed_enum into wf->unk). 0 or -1. */
    int (*packed)(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, NField *f, int fidx, const uint8_t *p,
                  const uint8_t *e);
    /* a sub-message of f (its class f->subm): [p, e) then each of more[0..nmore), with `depth` levels
     * left for it, as `mode` says (PBJ_SUB_*). For a group (PBJ_SUB_FIRST of a group field) e is the
     * end of the enclosing message, group_end its end tag, and *after is set past the end tag. */
    int (*message)(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t *p, const uint8_t *e,
                   const Span *more, Py_ssize_t nmore, int depth, int mode, uint32_t group_end, const uint8_t **after);
    /* a singular sub-message field f occurs again (its span is kept to merge): 0, or -1 to decline */
    int (*repeat)(Ctx *c, void *fr, NMessage *m, NField *f, int fidx);
    /* map entries of map field f: begin (the field's map exists, even if the entry is then kept
     * unknown), its key and its (scalar, string, bytes) value at *pp as `value` reads them (the value
     * may answer PBJ_KEEP), end: keep 1 (put the entry; a missing key or value is its default) or 0
     * (the entry is kept as an unknown field) */
    int (*map_begin)(Ctx *c, void *fr, NMessage *m, NField *f);
    int (*map_key)(Ctx *c, void *fr, NMessage *m, NField *f, const uint8_t **pp, const uint8_t *end);
    int (*map_value)(Ctx *c, void *fr, NMessage *m, NField *f, const uint8_t **pp, const uint8_t *end);
    int (*map_end)(Ctx *c, void *fr, NMessage *m, NField *f, int keep, int depth);
    /* the message ends (every value read, merges done; wf->unk holds its unknown fields): 0 or -1 */
    int (*end)(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, int depth);
    /* error path only: how many elements repeated field f holds so far (the path's index) */
    Py_ssize_t (*count)(void *fr, NMessage *m, NField *f);
};

/* ---- walk.c: what the walker does off its hot path ---- */
int pbj_spans_push(Spans *sp, const uint8_t *s, const uint8_t *e);
int pbj_keep_packed_enum(UBuf *unk, uint32_t number, const uint8_t *vs, const uint8_t *e);
int pbj_find_dispatch_slow(NMessage *m, uint32_t tag);
/* the place of a failure, for walk.c's error exit */
typedef struct {
    NMessage *m;
    const uint8_t *msg;        /* where the message's (current span's) bytes begin */
    const uint8_t *start;      /* the failing field's tag */
    const uint8_t *end;        /* the end of the message's (current) span */
    int depth;
    uint32_t group_end;        /* the group's end tag (a group body), else 0 */
    int again;                 /* the field is a singular sub-message already present */
    Py_ssize_t count;          /* a repeated field: its elements so far (count()), else 0 */
} FailAt;
/* a failure at a field of this message (not inside a sub-message): the error it is, as the Python
 * parser gives it (walk.c), unless one is set or the input is declined; always -1 */
int pbj_walk_failed(Ctx *c, const FailAt *at);
/* a sub-message (or group, or map entry's value) of field f failed: this message's part of the path */
int pbj_walk_child_failed(Ctx *c, const FailAt *at, NField *f, int merge);
/* the group body of field f (whose tag is at at->start) ended without its end tag (found: the
 * end-group tag that came instead, 0: the input ended) */
int pbj_walk_group_failed(Ctx *c, const FailAt *at, NField *f, uint32_t found);

/* the DecodeError of a failed walk (a new reference), NULL when none was found (declined) */
PyObject *pbj_walk_error(Ctx *c);
void pbj_walk_clear(Ctx *c);

static inline int pbj_find_dispatch(NMessage *m, uint32_t tag)
{
    if (tag < (uint32_t)m->lut_size) return m->lut[tag] - 1;
    return pbj_find_dispatch_slow(m, tag);
}

/* a sub-message field that is already set: this occurrence is merged into it */
static inline int pbj_walk_again(WalkFrame *wf, NMessage *m, NField *f, int fidx)
{
    if (f->label == L_MEMBER) return wf->cur[f->oneof] == fidx;
    return wf->sp[m->msg_of_field[fidx]].first.s != NULL;
}

/* the place of a failure (FailAt), from the walk's own variables */
#define AT_HERE() \
    do { \
        at.m = m; at.msg = NULL; at.start = start; at.end = end; at.depth = depth; at.group_end = group_end; \
        at.again = 0; at.count = 0; \
    } while (0)

/* oneof member f (a sub-message) starts afresh after another member replaced it: the later
 * occurrences of its last run are still read, and so checked (then dropped), as the Python parser
 * checks them (_check_superseded) */
#define SUPERSEDED() \
    do { \
        if (mi >= 0 && f->label == L_MEMBER && wf.sp[mi].n) { \
            if (S->message(c, fr, m, f, d->field, wf.sp[mi].first.s, wf.sp[mi].first.e, wf.sp[mi].more, \
                           wf.sp[mi].n, depth - 1, PBJ_SUB_CHECK, 0, NULL) < 0) goto child_fail; \
            wf.sp[mi].n = 0; \
        } \
    } while (0)

/* a sub-message (group, map value) of field f failed: this message's part of the path (the field,
 * its element's index, its entry's key), then out */
#define CHILD_FAILED(f, merge) \
    do { \
        AT_HERE(); \
        at.count = (f)->label == L_REPEATED || (f)->label == L_PACKED ? S->count(fr, m, (f)) : 0; \
        pbj_walk_child_failed(c, &at, (f), (merge)); \
        goto out; \
    } while (0)

/* The walk of one message of plan m over [p, end) and then each of more[0..nmore) (its later
 * occurrences, merged), with `depth` levels left; a group body when group_end is its end tag (then
 * *after is set past it). The sink's frame `fr` is the sink's own. 0, or -1 (c->err set, or
 * c->declined). Inlined into each sink's message function (the sink S a constant there). */
static inline __attribute__((always_inline)) int pbj_walk(const PbjSink *S, Ctx *c, NMessage *m, void *fr,
                                                         const uint8_t *p, const uint8_t *end, int depth,
                                                         uint32_t group_end, const uint8_t **after,
                                                         const Span *more, Py_ssize_t nmore)
{
    int stack_cur[PBJ_STACK_SLOTS];
    Spans stack_sp[PBJ_STACK_SPANS];
    WalkFrame wf;
    int r = -1, ended = 0;
    Py_ssize_t k_more = 0;
    FailAt at;  /* filled on the way out of a failure only */
    const uint8_t *start = p;
    if (c->level >= NATIVE_MAX_LEVEL) { c->declined = 1; return -1; }
    c->level++;
    wf.unk.buf = NULL;
    wf.unk.len = wf.unk.cap = 0;
    wf.repeats = 0;
    if (m->small) {  /* the usual message: its state on the stack */
        wf.cur = stack_cur;
        wf.sp = stack_sp;
    } else {
        wf.cur = m->noneofs <= PBJ_STACK_SLOTS ? stack_cur : PyMem_Calloc(m->noneofs, sizeof(int));
        wf.sp = m->nmsgf <= PBJ_STACK_SPANS ? stack_sp : PyMem_Calloc(m->nmsgf, sizeof(Spans));
        if (!wf.cur || !wf.sp) { c->declined = 1; goto out; }  /* no memory: Python's engine */
    }
    for (int i = 0; i < m->noneofs; i++) wf.cur[i] = -1;
    for (int i = 0; i < m->nmsgf; i++) { wf.sp[i].first.s = NULL; wf.sp[i].more = NULL; wf.sp[i].n = wf.sp[i].cap = 0; }

    for (;;) {
    while (p < end) {
        start = p;
        uint32_t tag;
        if (rd_tag(&p, end, &tag) < 0) goto fail;
        int di = pbj_find_dispatch(m, tag);
        if (di < 0) {
            if ((tag & 7) == 4) {
                if (group_end && tag == group_end) { ended = 1; break; }
                goto fail;
            }
            if (pbj_skip_field(c, &p, end, tag, depth) < 0) goto fail;
            if (pbj_ubuf_add(&wf.unk, start, p - start) < 0) goto fail;
            continue;
        }
        NDispatch *d = &m->dispatch[di];
        NField *f = &m->fields[d->field];
        if (d->form == F_PACKED_RUN) {
            const uint8_t *e;
            if (rd_len(&p, end, &e) < 0) goto fail;
            if (S->packed(c, fr, &wf, m, f, d->field, p, e) < 0) goto fail;
            p = e;
            continue;
        }
        if (f->label == L_MAP) {
            const uint8_t *e, *q;
            if (rd_len(&p, end, &e) < 0) goto fail;
            if (S->map_begin(c, fr, m, f) < 0) goto fail;
            int unknown = 0, have_x = 0;
            Spans xs = {{NULL, NULL}, NULL, 0, 0};  /* the message value's occurrences (merged) */
            q = p;
            while (q < e) {
                uint32_t t;
                if (rd_tag(&q, e, &t) < 0) goto map_fail;
                if (t == f->ktag) {
                    if (S->map_key(c, fr, m, f, &q, e) < 0) goto map_fail;
                } else if (f->vtag_len == 1 && t == f->vtag[0]) {
                    if (f->type == T_MESSAGE) {
                        const uint8_t *ve;
                        if (rd_len(&q, e, &ve) < 0 || depth <= 0) goto map_fail;
                        if (have_x) {  /* a later occurrence merges into the first ("Maps": an entry is a message) */
                            if (S->repeat(c, fr, m, f, d->field) < 0 || pbj_spans_push(&xs, q, ve) < 0) goto map_fail;
                        } else {
                            if (S->message(c, fr, m, f, d->field, q, ve, NULL, 0, depth - 1, PBJ_SUB_MAP, 0, NULL) < 0)
                                goto map_child_fail;
                            xs.first.s = q;
                            xs.first.e = ve;
                        }
                        q = ve;
                    } else {
                        int k = S->map_value(c, fr, m, f, &q, e);
                        if (k < 0) goto map_fail;
                        if (k == PBJ_KEEP) unknown = 1;  /* a closed enum's non-member: the entry is kept whole */
                    }
                    have_x = 1;
                } else {
                    if (pbj_skip_field(c, &q, e, t, depth) < 0) goto map_fail;
                    unknown = 1;
                }
            }
            /* every occurrence of the value as one message, even in an entry kept unknown */
            if (xs.n && S->message(c, fr, m, f, d->field, xs.first.s, xs.first.e, xs.more, xs.n, depth - 1,
                                   PBJ_SUB_MAP, 0, NULL) < 0) goto map_child_fail;
            PyMem_Free(xs.more);
            if (unknown && pbj_ubuf_add(&wf.unk, start, e - start) < 0) goto fail;
            if (S->map_end(c, fr, m, f, !unknown, depth) < 0) goto fail;
            p = e;
            continue;
        map_child_fail:
            PyMem_Free(xs.more);
            S->map_end(c, fr, m, f, -1, depth);  /* (drops what the entry holds) */
            CHILD_FAILED(f, 0);
        map_fail:
            PyMem_Free(xs.more);
            S->map_end(c, fr, m, f, -1, depth);
            goto fail;
        }
        if (f->type == T_MESSAGE) {
            int mi = m->msg_of_field[d->field];
            int again = mi >= 0 && pbj_walk_again(&wf, m, f, d->field);
            if (d->form == F_GROUP_START) {
                if (depth <= 0) goto fail;
                if (again) {  /* kept for the merge: the body, up to its end tag */
                    const uint8_t *q = p;
                    if (S->repeat(c, fr, m, f, d->field) < 0) goto fail;
                    if (pbj_skip_field(c, &q, end, tag, depth) < 0) goto fail;
                    if (pbj_spans_push(&wf.sp[mi], p, q - f->end_tag_len) < 0) goto fail;
                    wf.repeats = 1;
                    p = q;
                    continue;
                }
                SUPERSEDED();
                const uint8_t *body = p;
                uint32_t etag = (f->number << 3) | 4;
                if (S->message(c, fr, m, f, d->field, p, end, NULL, 0, depth - 1, PBJ_SUB_FIRST, etag, &p) < 0) {
                    if (c->group_found >= 0) {  /* the body ended without its end tag */
                        uint32_t found = (uint32_t)c->group_found;
                        c->group_found = -1;
                        AT_HERE();
                        at.count = f->label == L_REPEATED ? S->count(fr, m, f) : 0;
                        pbj_walk_group_failed(c, &at, f, found);
                        goto out;
                    }
                    goto child_fail;
                }
                if (mi >= 0) { wf.sp[mi].first.s = body; wf.sp[mi].first.e = p - f->end_tag_len; }
            } else {
                const uint8_t *e;
                if (rd_len(&p, end, &e) < 0 || depth <= 0) goto fail;
                if (again) {
                    if (S->repeat(c, fr, m, f, d->field) < 0 || pbj_spans_push(&wf.sp[mi], p, e) < 0) goto fail;
                    wf.repeats = 1;
                    p = e;
                    continue;
                }
                SUPERSEDED();
                if (S->message(c, fr, m, f, d->field, p, e, NULL, 0, depth - 1, PBJ_SUB_FIRST, 0, NULL) < 0)
                    goto child_fail;
                if (mi >= 0) { wf.sp[mi].first.s = p; wf.sp[mi].first.e = e; }
                p = e;
            }
            if (f->label == L_MEMBER) wf.cur[f->oneof] = d->field;
            continue;
        child_fail:
            CHILD_FAILED(f, 0);
        }
        {
            int k = S->value(c, fr, m, f, d->field, &p, end);
            if (k < 0) goto fail;
            if (k == PBJ_KEEP) {  /* a closed enum's non-member: an unknown field, as it arrived */
                if (pbj_ubuf_add(&wf.unk, start, p - start) < 0) goto fail;
            } else if (f->label == L_MEMBER) {
                wf.cur[f->oneof] = d->field;
            }
        }
    }
    if (ended || k_more >= nmore) break;
    p = more[k_more].s;   /* the next occurrence of this message (a merge) */
    end = more[k_more].e;
    k_more++;
    }
    if (group_end && !ended) {  /* the input ended before the group's end tag: the parent says so */
        c->group_found = 0;
        goto out;
    }
    if (wf.repeats) {
        /* each singular sub-message that occurred more than once, over all its occurrences: the
         * fields, then the oneofs' members (the order the Python parser merges them in) */
        for (int pass = 0; pass < 2; pass++) {
            for (int j = 0; j < (pass ? m->noneofs : 1); j++) {
                int n = pass ? m->oneofs[j].nmembers : m->nfields;
                for (int k = 0; k < n; k++) {
                    int i = pass ? m->oneofs[j].members[k] : k;
                    int mi = m->msg_of_field[i];
                    NField *f = &m->fields[i];
                    if (mi < 0 || wf.sp[mi].n == 0 || (f->label == L_MEMBER) != pass) continue;
                    int mode = pass && wf.cur[f->oneof] != i ? PBJ_SUB_CHECK : PBJ_SUB_MERGED;
                    if (S->message(c, fr, m, f, i, wf.sp[mi].first.s, wf.sp[mi].first.e, wf.sp[mi].more,
                                   wf.sp[mi].n, depth - 1, mode, 0, NULL) < 0) {
                        AT_HERE();  /* start: the last field read, Python's offset for an error that has none */
                        pbj_walk_child_failed(c, &at, f, 1);
                        goto out;
                    }
                }
            }
        }
    }
    if (S->end(c, fr, &wf, m, depth) < 0) {
        AT_HERE();
        at.start = NULL;
        pbj_walk_child_failed(c, &at, NULL, 0);  /* an extension's error: no part of the path here */
        goto out;
    }
    if (after) *after = p;
    r = 0;
    goto out;
fail:
    AT_HERE();
    if (c->err_reason == NULL && !c->declined) {
        int mi = -1;
        if (start < end) {  /* the field's state the error may depend on (a group that is a repeat) */
            const uint8_t *q = start;
            uint32_t tag;
            int di = rd_tag(&q, end, &tag) < 0 ? -1 : pbj_find_dispatch(m, tag);
            if (di >= 0) {
                NField *f = &m->fields[m->dispatch[di].field];
                mi = m->msg_of_field[m->dispatch[di].field];
                at.again = mi >= 0 && pbj_walk_again(&wf, m, f, m->dispatch[di].field);
                if (f->label == L_REPEATED || f->label == L_PACKED) at.count = S->count(fr, m, f);
            }
        }
    }
    pbj_walk_failed(c, &at);
out:
    /* spans are kept (pbj_spans_push) only for a repeated sub-message, which sets `repeats` (and
     * then wf.sp was allocated, or is the stack's) */
    if (wf.repeats) {
        for (int i = 0; i < m->nmsgf; i++) PyMem_Free(wf.sp[i].more);
    }
    if (!m->small) {  /* (a small message's state is all on the stack: one test) */
        if (wf.cur && wf.cur != stack_cur) PyMem_Free(wf.cur);
        if (wf.sp && wf.sp != stack_sp) PyMem_Free(wf.sp);
    }
    if (wf.unk.buf) PyMem_Free(wf.unk.buf);
    c->level--;
    return r;
}

#endif
