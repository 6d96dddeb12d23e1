/* extensions.c: extensions in the native engine (protobuf.dev "Language Guide (proto2)",
 * "Extensions"; "Encoding"), value for value as pbj/codec/extensions.py.
 *
 * A message of a class with extension ranges keeps its extensions in the slot _pbj_extensions:
 * a tuple of holder messages sorted by field number (pbj/extensions/declare.py: a hidden
 * one-field class per extension, compiled like any class, so the engine reads and writes a
 * holder with the holder's own plan).
 *
 * Decoding (pbj_ext_take): decode.c keeps every field it does not know as an unknown field, in
 * arrival order; at the end of a message of such a class, the fields whose number is an
 * extension registered for the class *now* (its registry, read at each decode, so extensions
 * registered after the class was compiled are read too) are decoded with their holder's plan,
 * all occurrences of a number together (a message merges, a repeated extension accumulates);
 * everything else stays as it arrived. A registered number with a wire type its holder does not
 * read stays unknown where it arrived; so does a closed enum's non-member (decoded occurrence by
 * occurrence for its bytes). Message sets (message_set_wire_format): items are read as upb reads
 * them, merged by type_id as C++ merges them, and unregistered items kept in the form upb writes
 * back (type_id, then message): see pbj/codec/extensions.py, whose rules this follows.
 *
 * Writing (encode.c, reverse.c, at each EXTENSIONS step of the plan): the holders whose number
 * is in the step's range, in the tuple's order (pbj_holder_of gives each one's plan). A holder's
 * class is compiled before any holder of it exists (pbj.extensions.values.holder_of, the Python
 * decoder's message-set holder, this decoder's lookup), so the writers, which run no Python code
 * of their own, find every plan; only a holder made by calling its hidden class directly, put in
 * behind the constructor's back, has none, and the writers decline it.
 *
 * Python code: a registered extension whose holder has no codec yet is compiled (_holder_plan,
 * through the message record): every object read across that call is held (the registry, the
 * extension, the capsules); the input's bytes belong to the caller, the unknown fields to us.
 */
#include "read.h"

/* the capsule of the native plan of message class `cls` (a new reference), None if it has no
 * codec yet or the engine declines it, NULL with an exception on error. Runs no Python code:
 * a class attribute looked up in the namespaces of the class's MRO (compat.h), a slot of our Codec. */
static PyObject *plan_capsule(PbjState *st, PyTypeObject *cls)
{
    PyObject *codec = pbj_type_lookup(cls, st->s_codec);
    if (codec == NULL) return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    PyObject *r = codec == Py_None ? Py_NewRef(Py_None) : PyObject_GetAttr(codec, st->s_native);
    Py_DECREF(codec);
    return r;
}

NMessage *pbj_holder_of(PbjState *st, PyObject *h, PyObject **cap, long *number)
{
    *cap = NULL;
    PyObject *c = plan_capsule(st, Py_TYPE(h));
    if (!c) { PyErr_Clear(); return NULL; }
    NMessage *nm = c == Py_None ? NULL : pbj_message_of(c);
    if (!nm || nm->cls != Py_TYPE(h) || nm->ext_number < 0) {
        PyErr_Clear();
        Py_DECREF(c);
        return NULL;
    }
    *cap = c;
    *number = nm->ext_number;
    return nm;
}

int pbj_in_range(NMessage *m, int k, long number)
{
    return number >= (long)m->ranges[2 * k] && number < (long)m->ranges[2 * k + 1];
}

static int in_ranges(NMessage *m, uint64_t number)
{
    for (int k = 0; k < m->nranges; k++) {
        if (number >= m->ranges[2 * k] && number < m->ranges[2 * k + 1]) return 1;
    }
    return 0;
}

/* one registered number met among the unknown fields */
typedef struct {
    uint64_t number;
    PyObject *cap;       /* owned: the holder's plan */
    PyObject *ext;       /* owned: the Extension (its full_name names it in an error) */
    NMessage *nm;        /* the holder's plan (held through cap) */
    UBuf occ;            /* its occurrences, as they arrived (message sets: the messages' bytes) */
} Found;

typedef struct {
    Found *f;
    Py_ssize_t n, cap;
    PyObject *registry;  /* owned while the take runs */
    PyObject *holder_plan;
    PbjDecodeSpans decode;  /* the decoder of a holder (the caller's: decode.c) */
} Take;

static void take_release(Take *t)
{
    for (Py_ssize_t i = 0; i < t->n; i++) {
        Py_XDECREF(t->f[i].cap);
        Py_XDECREF(t->f[i].ext);
        PyMem_Free(t->f[i].occ.buf);
    }
    PyMem_Free(t->f);
    Py_XDECREF(t->registry);
    Py_XDECREF(t->holder_plan);
}

/* The entry of `number` (added if it is registered): 1 found (*out), 0 not registered, -1 error
 * (c->declined: a holder the engine does not run). */
static int lookup(Ctx *c, Take *t, uint64_t number, Found **out)
{
    for (Py_ssize_t i = 0; i < t->n; i++) {
        if (t->f[i].number == number) { *out = &t->f[i]; return 1; }
    }
    PyObject *key = PyLong_FromUnsignedLongLong(number);
    if (!key) return -1;
#ifdef Py_GIL_DISABLED
    /* (free-threaded: another thread may register an extension meanwhile; the reference is taken
     * under the dict's own lock) */
    PyObject *ext;
    int found = PyDict_GetItemRef(t->registry, key, &ext);
    Py_DECREF(key);
    if (found <= 0) return found;
#else
    PyObject *ext = PyDict_GetItemWithError(t->registry, key);  /* int keys: no Python code */
    Py_DECREF(key);
    if (!ext) return PyErr_Occurred() ? -1 : 0;
    Py_INCREF(ext);
#endif
    PyObject *cap = NULL;
    PyObject *holder = PyObject_GetAttr(ext, c->st->s_holder);
    if (holder && PyType_Check(holder)) {
        cap = plan_capsule(c->st, (PyTypeObject *)holder);
        if (cap == Py_None) {  /* not compiled yet: compile it (Python code; everything read is held) */
            Py_DECREF(cap);
            cap = PyObject_CallOneArg(t->holder_plan, ext);
        }
    }
    Py_XDECREF(holder);
    NMessage *nm = cap && cap != Py_None ? pbj_message_of(cap) : NULL;
    if (!nm || nm->nfields != 1 || nm->ext_number < 0) {
        Py_XDECREF(cap);
        Py_DECREF(ext);
        PyErr_Clear();
        c->declined = 1;
        return -1;
    }
    if (t->n == t->cap) {
        Py_ssize_t n = t->cap ? t->cap * 2 : 4;
        Found *f = PyMem_Realloc(t->f, n * sizeof(Found));
        if (!f) { Py_DECREF(cap); Py_DECREF(ext); c->declined = 1; return -1; }
        t->f = f;
        t->cap = n;
    }
    Found *f = &t->f[t->n++];
    f->number = number;
    f->cap = cap;
    f->ext = ext;
    f->nm = nm;
    f->occ.buf = NULL;
    f->occ.len = f->occ.cap = 0;
    *out = f;
    return 1;
}

static int by_number(const void *a, const void *b)
{
    uint64_t x = ((const Found *)a)->number, y = ((const Found *)b)->number;
    return x < y ? -1 : x > y;
}

static int find_tag(NMessage *m, uint32_t tag)
{
    for (int i = 0; i < m->ndispatch; i++) {
        if (m->dispatch[i].tag == tag) return 1;
    }
    return 0;
}

/* A holder's decode of `f` failed: the error as pbj.codec.extensions raises it, "extension <full
 * name>: <reason>" at the path ["[<full name>]", ...] below the holder's own fields (`drop`: the
 * holder's outer part of the path left out: its "value" field; a message set's "item" and
 * "message"), and no offset (the enclosing message's field gives it one). */
static void extension_failed(Ctx *c, Found *f, int drop)
{
    if (!c->err_reason || c->declined) return;
    PyObject *name = PyObject_GetAttrString(f->ext, "full_name");
    PyObject *reason = name ? PyUnicode_FromFormat("extension %S: %U", name, c->err_reason) : NULL;
    PyObject *head = name ? PyUnicode_FromFormat("[%S]", name) : NULL;
    Py_XDECREF(name);
    Py_ssize_t n = c->err_path ? PyList_GET_SIZE(c->err_path) : 0;
    if (!reason || !head || (!c->err_path && !(c->err_path = PyList_New(0)))) goto fail;
    if (drop == 1) {  /* the holder's "value" (its one field), if the path starts with it */
        if (n && PyUnicode_Check(PyList_GET_ITEM(c->err_path, n - 1))
            && PyUnicode_CompareWithASCIIString(PyList_GET_ITEM(c->err_path, n - 1), "value") == 0) n--;
    } else {
        n = n >= drop ? n - drop : 0;
    }
    if (PyList_SetSlice(c->err_path, n, PyList_GET_SIZE(c->err_path), NULL) < 0
        || PyList_Append(c->err_path, head) < 0) goto fail;
    Py_DECREF(head);
    Py_SETREF(c->err_reason, reason);
    c->err_offset = -1;
    return;
fail:
    Py_XDECREF(reason);
    Py_XDECREF(head);
    PyErr_Clear();
    c->declined = 1;
}

/* the holder of `f` decoded over [p, e) (its occurrences), a new reference */
static PyObject *holder_from(Ctx *c, Take *t, Found *f, const uint8_t *p, const uint8_t *e, int depth)
{
    static const uint8_t nothing[1] = {0};
    if (p == NULL) p = e = nothing;
    const uint8_t *data = c->data, *data_end = c->data_end;
    c->data = p;  /* the input of this decode, as pbj.codec.extensions parses it (the bytes given) */
    c->data_end = e;
    PyObject *h = t->decode(c, f->nm, p, e, depth, NULL, 0);
    c->data = data;
    c->data_end = data_end;
    if (!h) extension_failed(c, f, 1);
    return h;
}

/* the holders of the regular (not message-set) extensions, as wire.take */
static int take_regular(Ctx *c, NMessage *m, Take *t, UBuf *unk, int depth, UBuf *rest, PyObject *list)
{
    const uint8_t *p = unk->buf, *end = unk->buf + unk->len;
    while (p < end) {
        const uint8_t *start = p;
        uint32_t tag;
        if (rd_tag(&p, end, &tag) < 0 || pbj_skip_field(c, &p, end, tag, depth) < 0) return -1;
        Found *f = NULL;
        int r = in_ranges(m, tag >> 3) ? lookup(c, t, tag >> 3, &f) : 0;
        if (r < 0) return -1;
        /* a registered number with a wire type its holder does not read stays unknown, where it arrived */
        if (r == 0 || !find_tag(f->nm, tag)) {
            if (pbj_ubuf_add(rest, start, p - start) < 0) return -1;
            continue;
        }
        if (pbj_ubuf_add(&f->occ, start, p - start) < 0) return -1;
        if (f->nm->fields[0].closed) {  /* its non-members stay unknown fields where they arrived */
            PyObject *h = holder_from(c, t, f, start, p, depth);
            if (!h) return -1;
            PyObject *u = SLOT(h, f->nm->unknown_off);
            int bad = pbj_ubuf_add(rest, (const uint8_t *)PyBytes_AS_STRING(u), PyBytes_GET_SIZE(u));
            Py_DECREF(h);
            if (bad < 0) return -1;
        }
    }
    if (t->n == 0) return 1;  /* nothing registered among them: unk stays as it is */
    if (t->n > 1) qsort(t->f, t->n, sizeof(Found), by_number);
    UBuf left = {NULL, 0, 0};
    for (Py_ssize_t i = 0; i < t->n; i++) {
        Found *f = &t->f[i];
        NMessage *nm = f->nm;
        PyObject *h = holder_from(c, t, f, f->occ.buf, f->occ.buf + f->occ.len, depth);
        if (!h) { PyMem_Free(left.buf); return -1; }
        PyObject *u = SLOT(h, nm->unknown_off);
        if (PyBytes_GET_SIZE(u)) {
            /* what the holder could not read stays unknown, after the rest (a closed enum's: above) */
            if (!nm->fields[0].closed
                && pbj_ubuf_add(&left, (const uint8_t *)PyBytes_AS_STRING(u), PyBytes_GET_SIZE(u)) < 0) {
                Py_DECREF(h);
                PyMem_Free(left.buf);
                return -1;
            }
            SLOT(h, nm->unknown_off) = Py_NewRef(c->st->empty_bytes);
            Py_DECREF(u);
        }
        PyObject *v = SLOT(h, nm->slot_off[nm->fields[0].slot]);
        int keep = v != Py_None && !(PyTuple_Check(v) && PyTuple_GET_SIZE(v) == 0);
        int bad = keep ? PyList_Append(list, h) : 0;
        Py_DECREF(h);
        if (bad < 0) { PyMem_Free(left.buf); return -1; }
    }
    int bad = left.len ? pbj_ubuf_add(rest, left.buf, left.len) : 0;
    PyMem_Free(left.buf);
    return bad < 0 ? -1 : 0;
}

#define ITEM_START 0x0b
#define ITEM_END 0x0c
#define TYPE_ID 0x10
#define ITEM_MESSAGE 0x1a

/* a message-set item as upb writes one back: type_id, then message */
static int put_item(UBuf *u, uint64_t type_id, const uint8_t *msg, size_t n)
{
    uint8_t head[24], *q = head;
    *q++ = ITEM_START;
    *q++ = TYPE_ID;
    q = put_varint(q, type_id);
    *q++ = ITEM_MESSAGE;
    q = put_varint(q, (uint64_t)n);
    if (pbj_ubuf_add(u, head, (size_t)(q - head)) < 0 || pbj_ubuf_add(u, msg, n) < 0) return -1;
    uint8_t tail = ITEM_END;
    return pbj_ubuf_add(u, &tail, 1);
}

/* the holders of a message set's extensions, as wire._take_message_set */
static int take_message_set(Ctx *c, NMessage *m, Take *t, UBuf *unk, int depth, UBuf *rest, PyObject *list)
{
    const uint8_t *p = unk->buf, *end = unk->buf + unk->len;
    while (p < end) {
        const uint8_t *start = p;
        uint32_t tag;
        if (rd_tag(&p, end, &tag) < 0) return -1;
        if (tag == ITEM_START) {
            if (depth <= 0) return -1;
            int have_id = 0;
            uint64_t type_id = 0;
            const uint8_t *ms = NULL, *me = NULL;
            for (;;) {  /* the item, as upb reads it: the first type_id and the first message count */
                uint64_t it;
                if (p >= end || rd_varint(&p, end, &it) < 0) return -1;
                if (it == ITEM_END) break;
                if (it == TYPE_ID) {
                    uint64_t v;
                    if (rd_varint(&p, end, &v) < 0) return -1;
                    if (!have_id) { type_id = v & 0xFFFFFFFFu; have_id = 1; }
                } else if (it == ITEM_MESSAGE) {
                    const uint8_t *e;
                    if (rd_len(&p, end, &e) < 0) return -1;
                    if (!ms) { ms = p; me = e; }
                    p = e;
                } else {
                    if (it > 0xFFFFFFFFu || pbj_skip_field(c, &p, end, (uint32_t)it, depth - 1) < 0) return -1;
                }
            }
            if (!ms || !have_id) continue;  /* dropped, as upb and C++ drop it */
            Found *f = NULL;
            int r = lookup(c, t, type_id, &f);
            if (r < 0) return -1;
            if (r) {
                if (pbj_ubuf_add(&f->occ, ms, me - ms) < 0) return -1;
            } else if (put_item(rest, type_id, ms, me - ms) < 0) {
                return -1;
            }
            continue;
        }
        const uint8_t *after_tag = p;
        if (pbj_skip_field(c, &p, end, tag, depth) < 0) return -1;
        if ((tag & 7) == 2) {  /* an extension in the regular encoding is read too, as upb does */
            Found *f = NULL;
            int r = lookup(c, t, tag >> 3, &f);
            if (r < 0) return -1;
            if (r) {
                const uint8_t *q = after_tag, *e;
                if (rd_len(&q, p, &e) < 0 || pbj_ubuf_add(&f->occ, q, e - q) < 0) return -1;
                continue;
            }
        }
        if (pbj_ubuf_add(rest, start, p - start) < 0) return -1;
    }
    if (t->n > 1) qsort(t->f, t->n, sizeof(Found), by_number);
    /* the holder is two levels above the message Python parses (with depth - 2, unchecked): with
     * fewer than two levels left their checks would refuse what Python reads; Python decides */
    if (t->n && depth < 2) { c->declined = 1; return -1; }
    for (Py_ssize_t i = 0; i < t->n; i++) {
        Found *f = &t->f[i];
        /* the holder (item = Item(type_id, message)) decoded from the item it stands for, its
         * message the messages of every item of the type_id as one (merged) */
        UBuf item = {NULL, 0, 0};
        static const uint8_t nothing[1] = {0};
        if (put_item(&item, f->number, f->occ.buf ? f->occ.buf : nothing, f->occ.len) < 0) {
            PyMem_Free(item.buf);
            return -1;
        }
        const uint8_t *data = c->data, *data_end = c->data_end;
        c->data = item.buf + item.len - 1 - f->occ.len;  /* the message's bytes, as Python parses them */
        c->data_end = item.buf + item.len - 1;
        PyObject *h = t->decode(c, f->nm, item.buf, item.buf + item.len, depth, NULL, 0);
        c->data = data;
        c->data_end = data_end;
        PyMem_Free(item.buf);
        if (!h) {
            extension_failed(c, f, 2);  /* (the holder's "item" and its "message") */
            return -1;
        }
        int bad = PyList_Append(list, h);
        Py_DECREF(h);
        if (bad < 0) return -1;
    }
    return 0;
}

int pbj_ext_take(Ctx *c, NMessage *m, UBuf *unk, int depth, PyObject **holders, PbjDecodeSpans decode)
{
    *holders = NULL;
    Take t = {NULL, 0, 0, Py_NewRef(m->registry), Py_NewRef(m->holder_plan), decode};
    UBuf rest = {NULL, 0, 0};
    PyObject *list = PyList_New(0);
    int r = list ? (m->message_set ? take_message_set : take_regular)(c, m, &t, unk, depth, &rest, list) : -1;
    take_release(&t);
    if (r < 0) {
        Py_XDECREF(list);
        PyMem_Free(rest.buf);
        return -1;
    }
    if (r == 0) {  /* the unknown fields are what is left */
        PyMem_Free(unk->buf);
        *unk = rest;
    } else {
        PyMem_Free(rest.buf);
    }
    *holders = PyList_AsTuple(list);
    Py_DECREF(list);
    return *holders ? 0 : -1;
}
