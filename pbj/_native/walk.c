/* walk.c: the wire walker's cold paths (walk.h): merge spans, a closed enum's packed non-member,
 * the dispatch past the look-up table, and the one error exit.
 *
 * Errors. The walker reads within the bounds of each message; the Python parser
 * (pbj/codec/parse.py, the reference) reads a field's value wherever the input goes on and checks
 * the message's end afterwards, and its errors carry the text, the field path and the byte offset
 * users see (pbj.errors.DecodeError). So when the walk fails at a field of a message, the field is
 * read once more here, from its tag, by the Python parser's rules (explain_field): the error found
 * is the one the Python parser raises there, with its offset (the field's tag) and this message's
 * part of the path (the field's name; a repeated field's element index; a map entry's key, read
 * again from the entry as pbj.codec.runtime._map_key reads it). As the walk unwinds, each
 * enclosing message adds its part (pbj_walk_child_failed), as runtime.locate does in each
 * generated function. Only the failing field is read again, never the input: a refused input
 * costs what the valid part before the error cost, and one field.
 *
 * Where this reading finds no error at the field (an engine disagreement, or the engine out of
 * memory), the input is declined: pbj.api runs the Python parser, which decides.
 */
#include "walk.h"

int pbj_spans_push(Spans *sp, const uint8_t *s, const uint8_t *e)
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

/* A closed enum's non-member number in a packed run ("Enum Behavior", closed enums): kept as an
 * unknown varint field of the same number, as upb keeps it and pbj/codec/parse.py
 * (_keep_unknown_enum): a varint tag of its own and the canonical varint of the element's 64-bit
 * value as read (at `vs`, where the element began), not narrowed to 32 bits. (A value that arrived
 * as a field of its own is kept as it arrived, tag and varint: the walker copies those bytes.) */
int pbj_keep_packed_enum(UBuf *unk, uint32_t number, const uint8_t *vs, const uint8_t *e)
{
    uint64_t raw;
    uint8_t b[16], *q;
    if (rd_varint(&vs, e, &raw) < 0) return -1;
    q = put_varint(b, (uint64_t)number << 3);
    q = put_varint(q, raw);
    return pbj_ubuf_add(unk, b, (size_t)(q - b));
}

int pbj_find_dispatch_slow(NMessage *m, uint32_t tag)
{
    int lo = 0, hi = m->ndispatch - 1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        uint32_t t = m->dispatch[mid].tag;
        if (t == tag) return mid;
        if (t < tag) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* ---- the Python parser's reading of one field (pbj/codec/parse.py, pbj/wire.py) ---- */

/* what a read found: nothing wrong, or the reason (a str) */
typedef struct {
    const uint8_t *data;
    Py_ssize_t n;            /* len(data): Python reads up to here, whatever the message's end */
    PyObject *reason;        /* owned, or NULL */
} PyRead;

static int says(PyRead *r, PyObject *text)
{
    if (r->reason == NULL) r->reason = text;
    else Py_XDECREF(text);
    return -1;
}

static int say(PyRead *r, const char *text)
{
    return says(r, PyUnicode_FromString(text));
}

#define TRUNCATED "truncated input"  /* an IndexError or struct.error (runtime._reason) */

/* wire.read_varint at *pos */
static int py_varint(PyRead *r, Py_ssize_t *pos, uint64_t *out)
{
    Py_ssize_t p = *pos;
    uint64_t result = 0;
    for (int shift = 0;; shift += 7) {
        if (p >= r->n) return say(r, TRUNCATED);
        uint64_t b = r->data[p++];
        if (b < 0x80) {
            if (shift == 63 && b > 1) return say(r, "varint overflows 64 bits");
            result |= b << shift;
            break;
        }
        result |= (b & 0x7f) << shift;
        if (shift + 7 > 63) return say(r, "varint is longer than 10 bytes");
    }
    *out = result;
    *pos = p;
    return 0;
}

/* wire.read_size at *pos */
static int py_size(PyRead *r, Py_ssize_t *pos, uint64_t *out)
{
    Py_ssize_t start = *pos;
    if (py_varint(r, pos, out) < 0) return -1;
    if (*pos - start > 5)
        return says(r, PyUnicode_FromFormat("length prefix of %zd bytes is longer than 5 bytes (an int32 varint)",
                                            *pos - start));
    if (*out > 0x7FFFFFFFu)
        return says(r, PyUnicode_FromFormat("length %llu is above the maximum 2147483647", (unsigned long long)*out));
    return 0;
}

/* wire.read_tag at *pos (any length) */
static int py_read_tag(PyRead *r, Py_ssize_t *pos, uint64_t *out)
{
    Py_ssize_t start = *pos;
    if (py_varint(r, pos, out) < 0) return -1;
    if (*out > 0xFFFFFFFFu || (*out >> 3) > MAX_FIELD_NUMBER)
        return says(r, PyUnicode_FromFormat("field number %llu is above the maximum 536870911",
                                            (unsigned long long)(*out >> 3)));
    if (*pos - start > 5)
        return says(r, PyUnicode_FromFormat("tag varint of %zd bytes is longer than 5 bytes", *pos - start));
    return 0;
}

/* the generated parser's tag read: one byte, two, or read_tag */
static int py_tag(PyRead *r, Py_ssize_t *pos, uint64_t *out)
{
    Py_ssize_t p = *pos;
    if (p >= r->n) return say(r, TRUNCATED);
    uint64_t b = r->data[p];
    if (b < 0x80) { *out = b; *pos = p + 1; return 0; }
    if (p + 1 >= r->n) return say(r, TRUNCATED);
    uint64_t b2 = r->data[p + 1];
    if (b2 < 0x80) { *out = (b & 0x7f) | (b2 << 7); *pos = p + 2; return 0; }
    return py_read_tag(r, pos, out);
}

/* wire.skip_field(data, pos, tag, end, depth) */
static int py_skip(PyRead *r, Py_ssize_t *pos, uint64_t tag, Py_ssize_t end, int depth)
{
    uint64_t v;
    Py_ssize_t p = *pos;
    if ((tag >> 3) == 0) return say(r, "field number 0 is not allowed");
    switch (tag & 7) {
    case 0:
        if (py_varint(r, &p, &v) < 0) return -1;
        break;
    case 1:
        p += 8;
        break;
    case 2:
        if (py_size(r, &p, &v) < 0) return -1;
        p += (Py_ssize_t)v;
        break;
    case 5:
        p += 4;
        break;
    case 3: {
        if (depth <= 0) return say(r, "groups nested too deeply");
        uint64_t number = tag >> 3;
        for (;;) {
            uint64_t inner;
            if (p >= end) return says(r, PyUnicode_FromFormat("group %llu has no end tag", (unsigned long long)number));
            if (p >= r->n) return say(r, TRUNCATED);
            if (r->data[p] < 0x80) {
                inner = r->data[p++];
            } else if (py_read_tag(r, &p, &inner) < 0) {
                return -1;
            }
            if ((inner & 7) == 4) {
                if ((inner >> 3) != number)
                    return says(r, PyUnicode_FromFormat("group %llu ended by the end tag of field %llu",
                                                        (unsigned long long)number, (unsigned long long)(inner >> 3)));
                break;
            }
            if (py_skip(r, &p, inner, end, depth - 1) < 0) return -1;
        }
        break;
    }
    case 4:
        return says(r, PyUnicode_FromFormat("end-group tag of field %llu without a start-group tag",
                                            (unsigned long long)(tag >> 3)));
    default:
        return says(r, PyUnicode_FromFormat("wire type %d is not a valid wire type", (int)(tag & 7)));
    }
    if (p > end) return say(r, "truncated input: field runs past the end of its message");
    *pos = p;
    return 0;
}

static int py_depth(PyRead *r, int depth)
{
    return depth <= 0 ? say(r, "nesting too deep: the depth limit was reached") : 0;
}

/* a LEN value's bytes, after its length: [*pos, *e); `limit`: the end it may not pass, `what` says so */
static int py_len(PyRead *r, Py_ssize_t *pos, Py_ssize_t limit, const char *what, Py_ssize_t *e)
{
    uint64_t n;
    if (py_size(r, pos, &n) < 0) return -1;
    *e = *pos + (Py_ssize_t)n;
    return *e > limit ? say(r, what) : 0;
}

#define PAST_MESSAGE "truncated input: length runs past the end of the message"
#define PAST_ENTRY "truncated input: map entry value runs past the entry"

/* the str of a string value, as the parser decodes it: invalid UTF-8 of a strict field is the error */
static int py_string(PyRead *r, NField *f, Py_ssize_t s, Py_ssize_t e)
{
    if (!f->utf8) return 0;
    PyObject *u = PyUnicode_DecodeUTF8((const char *)r->data + s, e - s, NULL);
    if (u) { Py_DECREF(u); return 0; }
    if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;  /* (no memory: declined) */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_ssize_t at = 0;
    PyObject *why = value ? PyUnicodeDecodeError_GetReason(value) : NULL;
    if (why && PyUnicodeDecodeError_GetStart(value, &at) == 0) {
        says(r, PyUnicode_FromFormat("invalid UTF-8 in a string field (%U at string byte %zd)", why, at));
    }
    Py_XDECREF(why);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    return -1;
}

/* one value of scalar `type` (not string, bytes or message), as _read_scalar reads it */
static int py_scalar(PyRead *r, int type, Py_ssize_t *pos)
{
    uint64_t v;
    switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64:
        if (*pos + 8 > r->n) return say(r, TRUNCATED);
        *pos += 8;
        return 0;
    case T_FLOAT: case T_FIXED32: case T_SFIXED32:
        if (*pos + 4 > r->n) return say(r, TRUNCATED);
        *pos += 4;
        return 0;
    default:
        return py_varint(r, pos, &v);
    }
}


/* A packed run of f (its tag read, at *pos its length), as _packed_tuple and _read_closed_enum read
 * it; *members: the elements a closed enum's run appended before an error (they count in the path's
 * index, as the parser's list holds them). `names`: the scalar types' names by code. */
static int py_packed(PyRead *r, NField *f, Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t *members, PyObject *names)
{
    Py_ssize_t e;
    if (py_len(r, pos, end, PAST_MESSAGE, &e) < 0) return -1;
    Py_ssize_t p = *pos, n = e - p;
    if (f->closed) {
        while (p < e) {
            uint64_t v;
            if (py_varint(r, &p, &v) < 0) return -1;
            if (f->enum_table || f->enum_map) {
                int32_t num = (int32_t)(uint32_t)v;
                if (pbj_enum_has(f, num) > 0) (*members)++;
            }
        }
        if (p != e) return say(r, "packed run ends inside its last element");
    } else if (f->width > 1) {
        if (n % f->width)
            return says(r, PyUnicode_FromFormat("packed %S run of %zd bytes is not a multiple of %d",
                                                PyTuple_GET_ITEM(names, f->type), n, f->width));
    } else {
        int ascii = 1;
        for (Py_ssize_t i = p; i < e; i++) ascii &= r->data[i] < 0x80;
        if (!ascii) {
            while (p < e) {
                uint64_t v;
                if (py_varint(r, &p, &v) < 0) return -1;
            }
            if (p != e) return say(r, "packed run ends inside its last element");
        }
    }
    *pos = e;
    return 0;
}

/* a map entry of f (its tag read, at *pos its length), as _plan_map reads it */
static int py_map_entry(PyRead *r, NField *f, Py_ssize_t *pos, Py_ssize_t end, int depth)
{
    Py_ssize_t e, ve;
    if (py_len(r, pos, end, PAST_MESSAGE, &e) < 0) return -1;
    Py_ssize_t p = *pos;
    int vtype = f->type;
    uint32_t vtag = f->vtag[0];
    while (p < e) {
        uint64_t t;
        if (p >= r->n) return say(r, TRUNCATED);
        if (r->data[p] < 0x80) t = r->data[p++];
        else if (py_read_tag(r, &p, &t) < 0) return -1;
        int type = t == f->ktag ? f->key : f->vtag_len == 1 && t == vtag ? vtype : -1;
        if (type < 0) {
            if (py_skip(r, &p, t, e, depth) < 0) return -1;
        } else if (type == T_STRING || type == T_BYTES || type == T_MESSAGE) {
            if (py_len(r, &p, e, PAST_ENTRY, &ve) < 0) return -1;
            if (type == T_MESSAGE && py_depth(r, depth) < 0) return -1;
            if (type == T_STRING && py_string(r, f, p, ve) < 0) return -1;
            p = ve;  /* a message value: read by the walker before it came here */
        } else if (py_scalar(r, type, &p) < 0) {
            return -1;
        }
    }
    if (p != e) return say(r, "map entry overruns its length");
    *pos = e;
    return 0;
}

/* what the Python parser does with the field whose tag is at `start` */
typedef struct {
    int entry;            /* the tag was read whole and is a known field's: this message's part of the path */
    NField *f;
    Py_ssize_t offset;    /* the error's offset (the field's tag, unless the parser gives another) */
    Py_ssize_t members;   /* a closed enum's packed run: elements appended before the error */
    long group_found;     /* a group body met this end tag (its parent reports it), else -1 */
} Explained;

static int explain_field(Ctx *c, const FailAt *at, PyRead *r, Explained *x)
{
    NMessage *m = at->m;
    Py_ssize_t pos = at->start - r->data, end = at->end - r->data, start = pos;
    uint64_t tag;
    x->offset = start;
    if (py_tag(r, &pos, &tag) < 0) return -1;
    int di = tag <= 0xFFFFFFFFu ? pbj_find_dispatch(m, (uint32_t)tag) : -1;
    if (di < 0) {
        if ((tag & 7) == 4 && at->group_end) {  /* another end tag than the group's: its parent says so */
            x->group_found = (long)tag;
            return 0;
        }
        if (py_skip(r, &pos, tag, end, at->depth) < 0) return -1;
    } else {
        NDispatch *d = &m->dispatch[di];
        NField *f = &m->fields[d->field];
        x->entry = 1;
        x->f = f;
        Py_ssize_t e;
        if (d->form == F_PACKED_RUN) {
            if (py_packed(r, f, &pos, end, &x->members, c->st->type_names) < 0) return -1;
        } else if (f->label == L_MAP) {
            if (py_map_entry(r, f, &pos, end, at->depth) < 0) return -1;
        } else if (d->form == F_GROUP_START) {
            if (py_depth(r, at->depth) < 0) return -1;
            if (at->again) {
                if (py_skip(r, &pos, tag, end, at->depth) < 0) return -1;
            } else if (pos > end) {
                /* the group's body starts past the message's end: its parser finds no field and
                 * says so, at the position it was given */
                x->offset = pos;
                return say(r, "truncated input: the last field runs past the end of the message");
            } else {
                return 0;  /* the body is read by the group's own walk: not an error of this field */
            }
        } else if (f->type == T_MESSAGE) {
            if (py_len(r, &pos, end, PAST_MESSAGE, &e) < 0 || py_depth(r, at->depth) < 0) return -1;
            pos = e;
        } else if (f->type == T_STRING || f->type == T_BYTES) {
            if (py_len(r, &pos, end, PAST_MESSAGE, &e) < 0) return -1;
            if (f->type == T_STRING && py_string(r, f, pos, e) < 0) return -1;
            pos = e;
        } else if (py_scalar(r, f->type, &pos) < 0) {
            return -1;
        }
    }
    if (pos > end) return say(r, "truncated input: the last field runs past the end of the message");
    return 0;
}

/* ---- the path ---- */

static int path_add(Ctx *c, PyObject *part)  /* steals */
{
    if (!part) return -1;
    if (!c->err_path && !(c->err_path = PyList_New(0))) { Py_DECREF(part); return -1; }
    int r = PyList_Append(c->err_path, part);
    Py_DECREF(part);
    return r;
}

/* The key of the map entry whose tag is at `start`, as a 1-tuple (runtime._map_key: the last key
 * the entry holds, read again; None when there is none or it cannot be read, as when it runs past
 * the entry's end) */
static PyObject *map_key(const uint8_t *data, Py_ssize_t size, Py_ssize_t start, NField *f)
{
    PyRead r = {data, size, NULL};
    Py_ssize_t pos = start, end;
    uint64_t t, n;
    PyObject *key = NULL;
    if (start < 0 || start >= size) return NULL;
    /* a length the decoder refuses (past 2^31-1) holds no entry, so no key (runtime._map_key alike) */
    if (py_read_tag(&r, &pos, &t) < 0 || py_varint(&r, &pos, &n) < 0 || n > INT32_MAX) goto none;
    end = pos + (Py_ssize_t)n < size ? pos + (Py_ssize_t)n : size;
    while (pos < end) {
        if (py_read_tag(&r, &pos, &t) < 0) goto none;
        if (t != f->ktag) {
            if (py_skip(&r, &pos, t, end, 100) < 0) goto none;
            continue;
        }
        PyObject *k = NULL;
        uint64_t v;
        switch (f->key) {
        case T_STRING:
            if (py_varint(&r, &pos, &v) < 0) goto none;
            if (pos > end || v > (uint64_t)(end - pos)) goto none;  /* past its entry: not its key */
            k = PyUnicode_DecodeUTF8((const char *)data + pos, (Py_ssize_t)v, NULL);
            pos += (Py_ssize_t)v;
            break;
        case T_FIXED32: case T_SFIXED32: {
            uint32_t w;
            if (pos + 4 > end) goto none;
            memcpy(&w, data + pos, 4);
            pos += 4;
            k = f->key == T_FIXED32 ? PyLong_FromUnsignedLong(w) : PyLong_FromLong((int32_t)w);
            break;
        }
        case T_FIXED64: case T_SFIXED64:
            if (pos + 8 > end) goto none;
            memcpy(&v, data + pos, 8);
            pos += 8;
            k = f->key == T_FIXED64 ? PyLong_FromUnsignedLongLong(v) : PyLong_FromLongLong((int64_t)v);
            break;
        default:
            if (py_varint(&r, &pos, &v) < 0 || pos > end) goto none;
            switch (f->key) {
            case T_BOOL: k = Py_NewRef(v ? Py_True : Py_False); break;
            case T_INT32: k = PyLong_FromLong((int32_t)(uint32_t)v); break;
            case T_UINT32: k = PyLong_FromUnsignedLong((uint32_t)v); break;
            case T_SINT32: {
                uint32_t u = (uint32_t)v;
                k = PyLong_FromLong((int32_t)((u >> 1) ^ (0u - (u & 1))));
                break;
            }
            case T_SINT64: k = PyLong_FromLongLong((int64_t)((v >> 1) ^ (0ull - (v & 1)))); break;
            case T_UINT64: k = PyLong_FromUnsignedLongLong(v); break;
            default: k = PyLong_FromLongLong((int64_t)v); break;
            }
        }
        if (!k) goto none;
        Py_XSETREF(key, k);
    }
    Py_XDECREF(r.reason);
    if (!key) return NULL;
    PyObject *one = PyTuple_Pack(1, key);
    Py_DECREF(key);
    return one;
none:
    PyErr_Clear();
    Py_XDECREF(r.reason);
    Py_XDECREF(key);
    return NULL;
}

/* this message's part of the path for field f whose tag is at `start`: its name, then its index
 * (repeated: `count` elements so far) or its map entry's key (added innermost first: reversed) */
static int add_field(Ctx *c, NField *f, const uint8_t *start, Py_ssize_t count)
{
    if (f->label == L_REPEATED || f->label == L_PACKED) {
        if (path_add(c, PyLong_FromSsize_t(count)) < 0) return -1;
    } else if (f->label == L_MAP) {
        PyObject *key = map_key(c->data, c->data_end - c->data, start - c->data, f);
        if (key && path_add(c, key) < 0) return -1;
    }
    return path_add(c, Py_NewRef(f->name));
}

static int set_error(Ctx *c, PyObject *reason, Py_ssize_t offset)
{
    Py_XSETREF(c->err_reason, reason);
    c->err_offset = offset;
    Py_CLEAR(c->err_path);
    return -1;
}

int pbj_walk_failed(Ctx *c, const FailAt *at)
{
    if (c->quiet) { PyErr_Clear(); return -1; }
    if (c->err_reason || c->declined || c->group_found >= 0) return -1;
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {  /* not the input's: Python's engine */
            PyErr_Clear();
            c->declined = 1;
            return -1;
        }
        PyErr_Clear();
    }
    if (at->start < c->data || at->start > c->data_end || at->end > c->data_end) {  /* (never: a failure
                                                                                      * outside the input) */
        c->declined = 1;
        return -1;
    }
    PyRead r = {c->data, c->data_end - c->data, NULL};
    Explained x = {0, NULL, 0, 0, -1};
    explain_field(c, at, &r, &x);
    if (x.group_found >= 0) {
        c->group_found = x.group_found;
        Py_XDECREF(r.reason);
        return -1;
    }
    if (r.reason == NULL || PyErr_Occurred()) {  /* no error there: the engines disagree; Python decides */
        PyErr_Clear();
        Py_XDECREF(r.reason);
        c->declined = 1;
        return -1;
    }
    set_error(c, r.reason, x.offset);
    if (x.entry && add_field(c, x.f, at->start, at->count + x.members) < 0) {
        PyErr_Clear();
        c->declined = 1;
    }
    return -1;
}

int pbj_walk_child_failed(Ctx *c, const FailAt *at, NField *f, int merge)
{
    if (c->quiet || c->declined) return -1;
    if (!c->err_reason) {  /* the sink failed for a reason not the input's (no memory): Python's engine */
        PyErr_Clear();
        c->declined = 1;
        return -1;
    }
    if (f == NULL) return -1;  /* an extension's error: raised outside this message's part */
    if (c->err_offset < 0 && at->start) c->err_offset = at->start - c->data;
    int r = merge ? path_add(c, Py_NewRef(f->name)) : add_field(c, f, at->start, at->count);
    if (r < 0) {
        PyErr_Clear();
        c->declined = 1;
    }
    return -1;
}

int pbj_walk_group_failed(Ctx *c, const FailAt *at, NField *f, uint32_t found)
{
    if (c->quiet || c->err_reason || c->declined) return -1;
    PyObject *reason = found ? PyUnicode_FromFormat("group %u ended by the end tag of field %u", f->number, found >> 3)
                             : PyUnicode_FromFormat("group %u has no end tag", f->number);
    if (!reason) { PyErr_Clear(); c->declined = 1; return -1; }
    set_error(c, reason, at->start - c->data);
    if (add_field(c, f, at->start, at->count) < 0) {
        PyErr_Clear();
        c->declined = 1;
    }
    return -1;
}

/* The DecodeError of a failed walk (NULL: none was found, the input is to be declined) */
PyObject *pbj_walk_error(Ctx *c)
{
    if (!c->err_reason || !c->st->DecodeError) return NULL;
    PyObject *path = c->err_path ? c->err_path : PyList_New(0);
    if (!path) return NULL;
    c->err_path = NULL;
    if (PyList_Reverse(path) < 0) { Py_DECREF(path); return NULL; }
    if (c->err_offset == 0 && c->data_end - c->data >= 2 && c->data[0] == 0x1f && c->data[1] == 0x8b) {
        /* gzip data at offset 0: the Python parser's hint (pbj.codec.runtime.GZIP_HINT) appended, as
         * runtime.locate appends it (rare: the module is imported here, on this path only) */
        PyObject *rt = PyImport_ImportModule("pbj.codec.runtime");
        PyObject *hint = rt ? PyObject_GetAttrString(rt, "GZIP_HINT") : NULL;
        Py_XDECREF(rt);
        if (hint && PyUnicode_Check(hint) && PyUnicode_Tailmatch(c->err_reason, hint, 0, PY_SSIZE_T_MAX, 1) == 0) {
            PyObject *both = PyUnicode_Concat(c->err_reason, hint);
            if (both) Py_SETREF(c->err_reason, both);
        }
        Py_XDECREF(hint);
        if (PyErr_Occurred()) { Py_DECREF(path); return NULL; }
    }
    PyObject *offset = c->err_offset >= 0 ? PyLong_FromSsize_t(c->err_offset) : Py_NewRef(Py_None);
    PyObject *args = PyTuple_Pack(1, c->err_reason);
    PyObject *kw = offset && args ? Py_BuildValue("{sOsO}", "path", path, "offset", offset) : NULL;
    PyObject *err = kw ? PyObject_Call(c->st->DecodeError, args, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(offset);
    Py_DECREF(path);
    return err;
}

void pbj_walk_clear(Ctx *c)
{
    Py_CLEAR(c->err_reason);
    Py_CLEAR(c->err_path);
}
