/* arrow.c: the column sink of the wire walker (walk.h): encoded messages straight to Arrow columns
 * (pbj.arrow.decode_to_arrow on the native engine).
 *
 * pbj/arrow/native.py flattens the column tree pbj.arrow.mapping builds for a class (one node per
 * column: scalars, enums, structs, oneofs, lists, maps, Timestamp/Duration, wrappers, encodings past
 * the recursion depth, messages without fields) into node records; each node that is a message on
 * the wire names its class's native codec plan (the capsule the walker reads, plan.c) and, for each
 * field of that plan, its column. arrow_plan turns the records into an APlan (a capsule). Then
 * arrow_decode walks every payload with the walker and this file's sink, which appends each value
 * to its column's builder (a validity bitmap, int32 offsets, a data buffer): no Python object is
 * made per message or value. The result is one Arrow C Data Interface struct array (a capsule named
 * "arrow_array") that pyarrow imports as the record batch of the table, with the schema Python
 * already holds.
 *
 * Column rows. A struct column has one row per row of its parent; a field that is not on the wire
 * gets the row the empty message gives it (its default: null where the field has presence, else its
 * zero; an empty list or map). Those rows are added lazily: a builder is padded to its parent's
 * length just before a value is appended to it, and every builder to its parent's final length at
 * the end (finalize), so an unset sub-message costs one validity bit, not one row in each of its
 * descendants. A value is appended where pbj's decoder would store it (last value wins for a
 * singular scalar: held until the message ends; a sub-message's row is written as it is read).
 * What the walker keeps as an unknown field (a closed enum's non-member, a map entry holding an
 * unknown field) is not a value: the column gets the row decode + to_arrow give it.
 *
 * It declines (returns None, and Python runs decode + to_arrow, which raises the error the decoder
 * raises or gives the table) on every error and on valid input it does not rebuild: a singular
 * sub-message occurring twice (merged by the spec), a oneof member replacing a sub-message member,
 * a map entry kept as an unknown field after its message value was read, a key seen before in its
 * map, a string that is not UTF-8 (an error, or a proto2 string Arrow cannot hold), a
 * Timestamp/Duration Arrow's int64 nanoseconds cannot hold, nesting deeper than NATIVE_MAX_LEVEL,
 * more than 2**31-1 bytes or items in one column.
 *
 * Memory safety: the walker reads within each message's bounds (read.h's readers); each nested
 * message costs one level of `depth` (refused at 0) and of the native level. The buffers handed to
 * Arrow are malloc'd (Arrow may release them without the GIL).
 */
#include "walk.h"

#include <stdlib.h>
#include "arrow_abi.h"


#define APLAN_CAPSULE "pbj.native.arrow_plan"

/* node kinds: engine.h's AK_* (pbj._native.ARROW_KINDS, the order pbj/arrow/native.py sends; checked at import) */
/* what a builder stores: bits, 4 or 8 bytes a row, offsets + bytes, offsets of a child, nothing */
enum { ST_BIT, ST_W4, ST_W8, ST_VAR, ST_OFFS, ST_NONE };

/* a field of a struct (or of a Timestamp/Duration/wrapper message) */
typedef struct {
    int child;         /* position among the node's children (a member: its oneof's); TIME: 0 seconds, 1 nanos */
    int member;        /* position among the oneof's members, or -1 */
    int label, type, group;
    uint32_t number;
} AEntry;

typedef struct {
    int kind, nullable, type, store;
    uint64_t def_u;            /* the default row's value (storage bits), where not nullable */
    char *def_b;               /* a VAR default's bytes (malloc), def_n of them */
    Py_ssize_t def_n;
    int nchildren;
    int *children;             /* node ids */
    int nentries;
    AEntry *entries;
    /* a message on the wire (struct, time, wrapper, encoded, present): its class's codec plan */
    PyObject *capsule;         /* owned */
    NMessage *plan;            /* the walker's plan (held through capsule) */
    int *entry_of;             /* plan field index -> entry (struct, time, wrapper) */
    /* enums (and a oneof's member names): the dictionary */
    int as_names, closed, duration;
    int nnames;
    int32_t *sorted_num, *sorted_idx;   /* enum numbers ascending, each with its position */
    char *names;               /* the names' UTF-8, back to back (malloc) */
    int32_t *name_off;         /* nnames + 1 offsets into names */
    PyObject *reencode;        /* AK_ENCODED: (bytes, depth) -> bytes | None, owned */
} ANode;

typedef struct {
    int nnodes;
    ANode *nodes;
} APlan;

static void free_plan(APlan *pl)
{
    if (!pl) return;
    for (int i = 0; pl->nodes && i < pl->nnodes; i++) {
        ANode *n = &pl->nodes[i];
        free(n->def_b);
        PyMem_Free(n->children);
        PyMem_Free(n->entries);
        PyMem_Free(n->entry_of);
        PyMem_Free(n->sorted_num);
        PyMem_Free(n->sorted_idx);
        free(n->names);
        PyMem_Free(n->name_off);
        Py_XDECREF(n->reencode);
        Py_XDECREF(n->capsule);
    }
    PyMem_Free(pl->nodes);
    PyMem_Free(pl);
}

static void plan_capsule_free(PyObject *cap)
{
    free_plan((APlan *)PyCapsule_GetPointer(cap, APLAN_CAPSULE));
}

/* ---- plan conversion ---- */

static int item_int(PyObject *t, Py_ssize_t i, long long *out)
{
    if (!PyTuple_Check(t) || i >= PyTuple_GET_SIZE(t)) return -1;
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
}

static int item_i(PyObject *t, Py_ssize_t i, int *out)
{
    long long v;
    if (item_int(t, i, &v) < 0 || v < INT32_MIN || v > INT32_MAX) return -1;
    *out = (int)v;
    return 0;
}

/* a node whose values are messages on the wire */
static int is_message_node(int kind)
{
    return kind == AK_STRUCT || kind == AK_TIME || kind == AK_WRAPPER || kind == AK_ENCODED || kind == AK_PRESENT;
}

static int store_of(int kind, int type)
{
    switch (kind) {
    case AK_STRUCT: return ST_NONE;
    case AK_ONEOF: return ST_W4;   /* the member set ("which") */
    case AK_LIST: case AK_MAP: return ST_OFFS;
    case AK_TIME: return ST_W8;
    case AK_ENCODED: return ST_VAR;
    case AK_PRESENT: return ST_BIT;
    case AK_ENUM: return ST_W4;
    default: break;
    }
    switch (type) {
    case T_BOOL: return ST_BIT;
    case T_INT32: case T_SINT32: case T_SFIXED32: case T_UINT32: case T_FIXED32: case T_FLOAT: return ST_W4;
    case T_INT64: case T_SINT64: case T_SFIXED64: case T_UINT64: case T_FIXED64: case T_DOUBLE: return ST_W8;
    case T_STRING: case T_BYTES: return ST_VAR;
    default: return -1;
    }
}

/* a message node's class: its codec plan (a capsule of plan.c), held */
static int convert_capsule(ANode *n, PyObject *capsule)
{
    n->plan = pbj_message_of(capsule);
    if (!n->plan) return -1;
    n->capsule = Py_NewRef(capsule);
    return 0;
}

/* entries: ((child, member, label, type, group, number), ...), one per field of the plan, and the
 * plan's field index -> entry (entry_of): each entry is its field's (number, label, type) */
static int convert_fields(ANode *n, PyObject *entries, PyObject *capsule, PyObject *entry_of)
{
    if (!PyTuple_Check(entries) || convert_capsule(n, capsule) < 0) return -1;
    n->nentries = (int)PyTuple_GET_SIZE(entries);
    n->entries = PyMem_Calloc(n->nentries + 1, sizeof(AEntry));
    if (!n->entries) return -1;
    for (int i = 0; i < n->nentries; i++) {
        PyObject *e = PyTuple_GET_ITEM(entries, i);
        AEntry *a = &n->entries[i];
        int number;
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 6 || item_i(e, 0, &a->child) < 0 || item_i(e, 1, &a->member) < 0
            || item_i(e, 2, &a->label) < 0 || item_i(e, 3, &a->type) < 0 || item_i(e, 4, &a->group) < 0
            || item_i(e, 5, &number) < 0) return -1;
        if (number <= 0 || (uint32_t)number > MAX_FIELD_NUMBER || a->type < 0 || a->type > T_MESSAGE) return -1;
        if (a->label < L_IMPLICIT || a->label > L_MEMBER) return -1;
        a->number = (uint32_t)number;
    }
    int nf;
    if (!(n->entry_of = pbj_int_array(entry_of, &nf)) || nf != n->plan->nfields) return -1;
    for (int i = 0; i < nf; i++) {
        int k = n->entry_of[i];
        NField *f = &n->plan->fields[i];
        if (k < 0 || k >= n->nentries) return -1;
        AEntry *a = &n->entries[k];
        if (a->number != f->number || a->label != f->label || a->type != f->type || a->group != f->group) return -1;
    }
    return 0;
}

/* names: a tuple of str -> back-to-back UTF-8 and offsets; numbers (enums): a tuple of ints, one a name */
static int convert_names(ANode *n, PyObject *names, PyObject *numbers)
{
    if (!PyTuple_Check(names)) return -1;
    n->nnames = (int)PyTuple_GET_SIZE(names);
    n->name_off = PyMem_Calloc(n->nnames + 1, sizeof(int32_t));
    if (!n->name_off) return -1;
    size_t total = 0;
    for (int i = 0; i < n->nnames; i++) {
        Py_ssize_t len;
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) return -1;
        if (!PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(names, i), &len)) return -1;
        total += (size_t)len;
        if (total > 0x7FFFFFFF) return -1;
    }
    n->names = malloc(total + 1);
    if (!n->names) return -1;
    size_t at = 0;
    for (int i = 0; i < n->nnames; i++) {
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(names, i), &len);
        if (!s) return -1;
        memcpy(n->names + at, s, (size_t)len);
        at += (size_t)len;
        n->name_off[i + 1] = (int32_t)at;
    }
    if (numbers == NULL) return 0;
    if (!PyTuple_Check(numbers) || PyTuple_GET_SIZE(numbers) != n->nnames) return -1;
    n->sorted_num = PyMem_Calloc(n->nnames + 1, sizeof(int32_t));
    n->sorted_idx = PyMem_Calloc(n->nnames + 1, sizeof(int32_t));
    if (!n->sorted_num || !n->sorted_idx) return -1;
    for (int i = 0; i < n->nnames; i++) {   /* insertion sort: enums are small, built once */
        int v;
        if (item_i(numbers, i, &v) < 0) return -1;
        int j = i;
        while (j > 0 && n->sorted_num[j - 1] > v) {
            n->sorted_num[j] = n->sorted_num[j - 1];
            n->sorted_idx[j] = n->sorted_idx[j - 1];
            j--;
        }
        if (j > 0 && n->sorted_num[j - 1] == v) return -1;  /* one position per number */
        n->sorted_num[j] = v;
        n->sorted_idx[j] = i;
    }
    return 0;
}

#define NODE_HEAD 6   /* (kind, nullable, type, def_u, def_b, rest) */

static int convert_node(ANode *n, PyObject *t, int nnodes)
{
    PyObject *rest, *defb;
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != NODE_HEAD || item_i(t, 0, &n->kind) < 0
        || item_i(t, 1, &n->nullable) < 0 || item_i(t, 2, &n->type) < 0) return -1;
    if (n->kind < 0 || n->kind >= AK_COUNT || n->type < 0 || n->type > T_MESSAGE) return -1;
    PyObject *du = PyTuple_GET_ITEM(t, 3);
    n->def_u = PyLong_AsUnsignedLongLongMask(du);
    if (n->def_u == (uint64_t)-1 && PyErr_Occurred()) return -1;
    defb = PyTuple_GET_ITEM(t, 4);
    rest = PyTuple_GET_ITEM(t, 5);
    if (!PyBytes_Check(defb) || !PyTuple_Check(rest)) return -1;
    n->def_n = PyBytes_GET_SIZE(defb);
    n->def_b = malloc((size_t)n->def_n + 1);
    if (!n->def_b) return -1;
    memcpy(n->def_b, PyBytes_AS_STRING(defb), (size_t)n->def_n);
    n->store = store_of(n->kind, n->type);
    if (n->store < 0) return -1;
    Py_ssize_t nr = PyTuple_GET_SIZE(rest);
    switch (n->kind) {
    case AK_SCALAR:
        if (nr != 0) return -1;
        break;
    case AK_PRESENT:
        if (nr != 1 || convert_capsule(n, PyTuple_GET_ITEM(rest, 0)) < 0) return -1;
        break;
    case AK_ENUM:
        if (nr != 4 || item_i(rest, 0, &n->as_names) < 0 || item_i(rest, 1, &n->closed) < 0) return -1;
        if (convert_names(n, PyTuple_GET_ITEM(rest, 3), PyTuple_GET_ITEM(rest, 2)) < 0) return -1;
        break;
    case AK_STRUCT:
        if (nr != 4) return -1;
        if (!(n->children = pbj_int_array(PyTuple_GET_ITEM(rest, 0), &n->nchildren))) return -1;
        if (convert_fields(n, PyTuple_GET_ITEM(rest, 1), PyTuple_GET_ITEM(rest, 2), PyTuple_GET_ITEM(rest, 3)) < 0)
            return -1;
        for (int i = 0; i < n->nentries; i++) {
            if (n->entries[i].child < 0 || n->entries[i].child >= n->nchildren) return -1;
        }
        break;
    case AK_ONEOF:
        if (nr != 2) return -1;
        if (!(n->children = pbj_int_array(PyTuple_GET_ITEM(rest, 0), &n->nchildren))) return -1;
        if (convert_names(n, PyTuple_GET_ITEM(rest, 1), NULL) < 0 || n->nnames != n->nchildren) return -1;
        if (!n->nullable) return -1;
        break;
    case AK_LIST:
        if (nr != 1 || n->nullable) return -1;
        if (!(n->children = pbj_int_array(rest, &n->nchildren)) || n->nchildren != 1) return -1;
        break;
    case AK_MAP:
        if (nr != 2 || n->nullable) return -1;
        if (!(n->children = pbj_int_array(rest, &n->nchildren)) || n->nchildren != 2) return -1;
        break;
    case AK_TIME:
        if (nr != 4 || item_i(rest, 0, &n->duration) < 0) return -1;
        if (convert_fields(n, PyTuple_GET_ITEM(rest, 1), PyTuple_GET_ITEM(rest, 2), PyTuple_GET_ITEM(rest, 3)) < 0)
            return -1;
        for (int i = 0; i < n->nentries; i++) {
            int want = n->entries[i].child == 0 ? T_INT64 : T_INT32;
            if (n->entries[i].child < 0 || n->entries[i].child > 1 || n->entries[i].type != want
                || (n->entries[i].label != L_IMPLICIT && n->entries[i].label != L_EXPLICIT)) return -1;
        }
        break;
    case AK_WRAPPER:
        if (nr != 3) return -1;
        if (convert_fields(n, PyTuple_GET_ITEM(rest, 0), PyTuple_GET_ITEM(rest, 1), PyTuple_GET_ITEM(rest, 2)) < 0)
            return -1;
        for (int i = 0; i < n->nentries; i++) {
            if (n->entries[i].type != n->type
                || (n->entries[i].label != L_IMPLICIT && n->entries[i].label != L_EXPLICIT)) return -1;
        }
        break;
    case AK_ENCODED:
        if (nr != 2 || !PyCallable_Check(PyTuple_GET_ITEM(rest, 0))) return -1;
        if (convert_capsule(n, PyTuple_GET_ITEM(rest, 1)) < 0) return -1;
        n->reencode = Py_NewRef(PyTuple_GET_ITEM(rest, 0));
        break;
    }
    for (int i = 0; i < n->nchildren; i++) {
        if (n->children[i] <= 0 || n->children[i] >= nnodes) return -1;
    }
    return 0;
}

/* Every node but the root is the child of exactly one node, after it in the list: a tree; a map's
 * key and value fit the plan's map field. */
static int check_tree(APlan *pl)
{
    int *parents = PyMem_Calloc(pl->nnodes + 1, sizeof(int));
    if (!parents) return -1;
    int ok = pl->nodes[0].kind == AK_STRUCT && !pl->nodes[0].nullable;
    for (int i = 0; ok && i < pl->nnodes; i++) {
        ANode *n = &pl->nodes[i];
        for (int k = 0; k < n->nchildren; k++) {
            int c = n->children[k];
            if (c <= i || parents[c]++) { ok = 0; break; }
        }
        if (n->kind == AK_STRUCT) {
            for (int k = 0; ok && k < n->nentries; k++) {
                AEntry *e = &n->entries[k];
                ANode *ch = &pl->nodes[n->children[e->child]];
                if (e->member >= 0) {
                    ok = ch->kind == AK_ONEOF && e->member < ch->nchildren && e->label == L_MEMBER;
                } else if (e->label == L_REPEATED || e->label == L_PACKED) {
                    ok = ch->kind == AK_LIST;
                } else if (e->label == L_MAP) {
                    ok = ch->kind == AK_MAP;
                    if (ok) {
                        ANode *v = &pl->nodes[ch->children[1]];
                        ok = is_message_node(v->kind) ? e->type == T_MESSAGE : v->type == e->type;
                    }
                } else {
                    ok = e->label == L_IMPLICIT || e->label == L_EXPLICIT;
                }
                if (ok && e->label != L_MAP && e->type != T_MESSAGE) {
                    ANode *leaf = ch->kind == AK_ONEOF ? &pl->nodes[ch->children[e->member]]
                                  : ch->kind == AK_LIST ? &pl->nodes[ch->children[0]] : ch;
                    ok = (leaf->kind == AK_SCALAR || leaf->kind == AK_ENUM) && leaf->type == e->type;
                }
                if (ok && e->label != L_MAP && e->type == T_MESSAGE) {
                    ANode *leaf = ch->kind == AK_ONEOF ? &pl->nodes[ch->children[e->member]]
                                  : ch->kind == AK_LIST ? &pl->nodes[ch->children[0]] : ch;
                    ok = is_message_node(leaf->kind);
                    if (ok && e->group && leaf->kind == AK_ENCODED) ok = 0;
                }
            }
            /* a message field's column reads the field's class (the plan the walker gives it) */
            for (int k = 0; ok && k < n->plan->nfields; k++) {
                NField *f = &n->plan->fields[k];
                if (f->type != T_MESSAGE) continue;
                AEntry *e = &n->entries[n->entry_of[k]];
                ANode *ch = &pl->nodes[n->children[e->child]];
                ANode *leaf = f->label == L_MAP ? &pl->nodes[ch->children[1]]
                              : ch->kind == AK_ONEOF ? &pl->nodes[ch->children[e->member]]
                              : ch->kind == AK_LIST ? &pl->nodes[ch->children[0]] : ch;
                ok = is_message_node(leaf->kind) && leaf->plan == f->subm;
            }
            /* a map field's key and value columns are the plan's key and value types */
            for (int k = 0; ok && k < n->plan->nfields; k++) {
                NField *f = &n->plan->fields[k];
                if (f->label != L_MAP) continue;
                ANode *m = &pl->nodes[n->children[n->entries[n->entry_of[k]].child]];
                ok = m->kind == AK_MAP && pl->nodes[m->children[0]].type == f->key && f->ktag > 0 && f->vtag_len == 1;
            }
        }
        if (ok && n->kind == AK_MAP) {
            ANode *k = &pl->nodes[n->children[0]];
            ANode *v = &pl->nodes[n->children[1]];
            ok = k->kind == AK_SCALAR && k->type != T_MESSAGE && k->type != T_BYTES && k->type != T_FLOAT
                 && k->type != T_DOUBLE && !k->nullable && !v->nullable;
        }
    }
    for (int i = 1; ok && i < pl->nnodes; i++) ok = parents[i] == 1;
    PyMem_Free(parents);
    return ok ? 0 : -1;
}

/* arrow_plan(nodes) -> capsule: the flat column tree pbj/arrow/native.py builds (node 0: the table) */
PyObject *pbj_arrow_plan(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) == 0 || PyTuple_GET_SIZE(args[0]) > (1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "arrow_plan(nodes): a non-empty tuple of node records");
        return NULL;
    }
    PyObject *arg = args[0];
    APlan *pl = PyMem_Calloc(1, sizeof(APlan));
    if (!pl) return PyErr_NoMemory();
    pl->nnodes = (int)PyTuple_GET_SIZE(arg);
    pl->nodes = PyMem_Calloc(pl->nnodes, sizeof(ANode));
    if (!pl->nodes) { free_plan(pl); return PyErr_NoMemory(); }
    for (int i = 0; i < pl->nnodes; i++) {
        if (convert_node(&pl->nodes[i], PyTuple_GET_ITEM(arg, i), pl->nnodes) < 0) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "arrow_plan: node %d is not a valid record", i);
            free_plan(pl);
            return NULL;
        }
    }
    if (check_tree(pl) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "arrow_plan: the nodes are not a column tree");
        free_plan(pl);
        return NULL;
    }
    PyObject *cap = PyCapsule_New(pl, APLAN_CAPSULE, plan_capsule_free);
    if (!cap) free_plan(pl);
    return cap;
}

/* ---- builders ---- */

typedef struct {
    uint8_t *p;
    size_t len, cap;
} Buf;

typedef struct {
    int64_t length, nulls;
    Buf valid, data, offs;
    int32_t *extra;        /* enum numbers no member names, in order of first occurrence (malloc) */
    int nextra, cap_extra;
} ABuilder;

/* one arrow_decode call */
typedef struct {
    Ctx rd;                /* the walker's (first: a sink's Ctx is its ACall); quiet: an error is not
                            * explained (the call declines, and Python's decode raises it) */
    APlan *pl;
    ABuilder *b;
    int fatal;             /* a Python exception is set and must propagate */
    int64_t *lost;         /* per node, what the table leaves out of its messages: [2 ni] unknown fields,
                            * [2 ni + 1] their bytes (calloc on the first one; NULL: none met) */
} ACall;

#define MAX_ITEMS 0x7FFFFFFF

/* room for `extra` more bytes; new memory is zeroed (unset bits are 0, null slots hold 0) */
static int buf_reserve(Buf *b, size_t extra)
{
    if (extra > (size_t)1 << 40 || b->len + extra <= b->cap) return extra > (size_t)1 << 40 ? -1 : 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) return -1;
    memset(p + b->cap, 0, cap - b->cap);
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const void *src, size_t n)
{
    if (buf_reserve(b, n) < 0) return -1;
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

/* make the bitmap `b` hold bits [0, nbits) (the new ones 0) */
static int bits_cover(Buf *b, int64_t nbits)
{
    size_t need = (size_t)((nbits + 7) >> 3);
    if (need <= b->len) return 0;
    if (buf_reserve(b, need - b->len) < 0) return -1;
    b->len = need;
    return 0;
}

static int bit_put(Buf *b, int64_t i, int v)
{
    if (bits_cover(b, i + 1) < 0) return -1;
    if (v) b->p[i >> 3] |= (uint8_t)(1u << (i & 7));
    return 0;
}

static int offs_put(Buf *b, size_t at)
{
    if (at > MAX_ITEMS) return -1;
    int32_t o = (int32_t)at;
    return buf_put(b, &o, 4);
}

static int64_t child_len(ACall *a, const ANode *n)
{
    return n->kind == AK_MAP || n->kind == AK_LIST ? a->b[n->children[0]].length : 0;
}

/* add default rows to node `ni` until it has `target` rows (see the file's comment) */
static int pad(ACall *a, int ni, int64_t target)
{
    ABuilder *b = &a->b[ni];
    ANode *n = &a->pl->nodes[ni];
    int64_t k = target - b->length;
    if (k <= 0) return 0;
    if (target > MAX_ITEMS) return -1;
    if (n->nullable) {
        if (bits_cover(&b->valid, target) < 0) return -1;
        b->nulls += k;
    }
    uint64_t d = n->nullable ? 0 : n->def_u;
    switch (n->store) {
    case ST_BIT:
        if (bits_cover(&b->data, target) < 0) return -1;
        if (d) for (int64_t i = b->length; i < target; i++) b->data.p[i >> 3] |= (uint8_t)(1u << (i & 7));
        break;
    case ST_W4:
    case ST_W8: {
        size_t w = n->store == ST_W4 ? 4 : 8;
        if (buf_reserve(&b->data, (size_t)k * w) < 0) return -1;
        if (d) {
            uint32_t d4 = (uint32_t)d;
            for (int64_t i = 0; i < k; i++) memcpy(b->data.p + b->data.len + (size_t)i * w, w == 4 ? (void *)&d4 : (void *)&d, w);
        }
        b->data.len += (size_t)k * w;
        break;
    }
    case ST_VAR:
        for (int64_t i = 0; i < k; i++) {
            if (!n->nullable && buf_put(&b->data, n->def_b, (size_t)n->def_n) < 0) return -1;
            if (offs_put(&b->offs, b->data.len) < 0) return -1;
        }
        break;
    case ST_OFFS: {
        size_t at = (size_t)child_len(a, n);
        for (int64_t i = 0; i < k; i++) if (offs_put(&b->offs, at) < 0) return -1;
        break;
    }
    default:
        break;
    }
    b->length = target;
    return 0;
}

/* ---- values ---- */

typedef struct {
    uint64_t u;            /* the value's storage bits (an enum: its number) */
    const uint8_t *s;      /* a LEN value */
    Py_ssize_t n;
} AVal;

/* strict UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF), as PyUnicode_DecodeUTF8 */
static int utf8_ok(const uint8_t *s, Py_ssize_t n)
{
    const uint8_t *e = s + n;
    while (s < e) {
        if (e - s >= 8) {
            uint64_t w;
            memcpy(&w, s, 8);
            if (!(w & 0x8080808080808080ull)) { s += 8; continue; }
        }
        uint8_t c = *s;
        if (c < 0x80) { s++; continue; }
        int len;
        uint32_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) len = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) lo = 0xA0;
            else if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) lo = 0x90;
            else if (c == 0xF4) hi = 0x8F;
        } else return 0;
        if (e - s < len) return 0;
        if (s[1] < lo || s[1] > hi) return 0;
        for (int i = 2; i < len; i++) {
            if (s[i] < 0x80 || s[i] > 0xBF) return 0;
        }
        s += len;
    }
    return 1;
}

/* one value of `type` (not a message) at *pp (pbj.wire's rules, as read.c reads it) */
static int read_value(int type, const uint8_t **pp, const uint8_t *end, AVal *v)
{
    uint64_t x;
    uint32_t w;
    switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64:
        return rd_fixed64(pp, end, &v->u);
    case T_FLOAT: case T_FIXED32: case T_SFIXED32:
        if (rd_fixed32(pp, end, &w) < 0) return -1;
        v->u = w;
        return 0;
    case T_STRING: case T_BYTES: {
        const uint8_t *e;
        if (rd_len(pp, end, &e) < 0) return -1;
        v->s = *pp;
        v->n = e - *pp;
        *pp = e;
        return type == T_STRING && !utf8_ok(v->s, v->n) ? -1 : 0;
    }
    default:
        break;
    }
    if (rd_varint(pp, end, &x) < 0) return -1;
    switch (type) {
    case T_INT64: case T_UINT64: v->u = x; return 0;
    case T_INT32: case T_UINT32: case T_ENUM: v->u = (uint32_t)x; return 0;   /* the low 32 bits */
    case T_BOOL: v->u = x != 0; return 0;
    case T_SINT32: {
        uint32_t u = (uint32_t)x;
        v->u = (u >> 1) ^ (0u - (u & 1));
        return 0;
    }
    case T_SINT64: v->u = (x >> 1) ^ (0ull - (x & 1)); return 0;
    default: return -1;
    }
}

/* the position of enum number `num` among the members, or -1 */
static int enum_position(const ANode *n, int32_t num)
{
    int lo = 0, hi = n->nnames - 1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        if (n->sorted_num[mid] == num) return n->sorted_idx[mid];
        if (n->sorted_num[mid] < num) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

#define MAX_EXTRA 4096   /* distinct non-member numbers in one enum column; more: declined */

/* the storage of enum number `num`: its dictionary index (names) or the number; -1: declined */
static int enum_store(ACall *a, const ANode *n, ABuilder *b, int32_t num, uint32_t *out)
{
    int pos = enum_position(n, num);
    if (pos < 0 && n->closed) { a->rd.declined = 1; return -1; }  /* kept as an unknown field by decode */
    if (!n->as_names) { *out = (uint32_t)num; return 0; }
    if (pos >= 0) { *out = (uint32_t)pos; return 0; }
    for (int i = 0; i < b->nextra; i++) {
        if (b->extra[i] == num) { *out = (uint32_t)(n->nnames + i); return 0; }
    }
    if (b->nextra >= MAX_EXTRA) { a->rd.declined = 1; return -1; }
    if (b->nextra == b->cap_extra) {
        int cap = b->cap_extra ? b->cap_extra * 2 : 8;
        int32_t *x = realloc(b->extra, (size_t)cap * sizeof(int32_t));
        if (!x) return -1;
        b->extra = x;
        b->cap_extra = cap;
    }
    b->extra[b->nextra] = num;
    *out = (uint32_t)(n->nnames + b->nextra++);
    return 0;
}

/* append value `v` as the next row of scalar, enum or wrapper node `ni` (padded already) */
static int append_value(ACall *a, int ni, const AVal *v)
{
    ABuilder *b = &a->b[ni];
    ANode *n = &a->pl->nodes[ni];
    if (b->length >= MAX_ITEMS) return -1;
    if (n->nullable && bit_put(&b->valid, b->length, 1) < 0) return -1;
    switch (n->store) {
    case ST_BIT:
        if (bit_put(&b->data, b->length, v->u != 0) < 0) return -1;
        break;
    case ST_W4: {
        uint32_t w = (uint32_t)v->u;
        if (n->kind == AK_ENUM && enum_store(a, n, b, (int32_t)w, &w) < 0) return -1;
        if (buf_put(&b->data, &w, 4) < 0) return -1;
        break;
    }
    case ST_W8:
        if (buf_put(&b->data, &v->u, 8) < 0) return -1;
        break;
    case ST_VAR:
        if (buf_put(&b->data, v->s, (size_t)v->n) < 0 || offs_put(&b->offs, b->data.len) < 0) return -1;
        break;
    default:
        return -1;
    }
    b->length++;
    return 0;
}

/* a closed enum's number that is not a member: decode keeps it as an unknown field, not as the value */
static int enum_rejects(const ANode *n, const AVal *v)
{
    return n->kind == AK_ENUM && n->closed && enum_position(n, (int32_t)(uint32_t)v->u) < 0;
}

#define MAX_MAP_SCAN 1024   /* entries of one map checked for a repeated key; more: declined */

/* whether key `k` is among this map's entries so far (decode keeps the first position, the last
 * value: the engine declines such input) */
static int key_seen(ACall *a, const ANode *m, const AVal *k)
{
    ABuilder *mb = &a->b[(int)(m - a->pl->nodes)];
    int kn = m->children[0];
    ABuilder *kb = &a->b[kn];
    const ANode *kt = &a->pl->nodes[kn];
    int32_t start;
    memcpy(&start, mb->offs.p + (size_t)mb->length * 4, 4);
    if (kb->length - start > MAX_MAP_SCAN) { a->rd.declined = 1; return 1; }
    for (int64_t i = start; i < kb->length; i++) {
        switch (kt->store) {
        case ST_BIT:
            if (((kb->data.p[i >> 3] >> (i & 7)) & 1) == (k->u != 0)) return 1;
            break;
        case ST_W4: {
            uint32_t x;
            memcpy(&x, kb->data.p + (size_t)i * 4, 4);
            if (x == (uint32_t)k->u) return 1;
            break;
        }
        case ST_W8: {
            uint64_t x;
            memcpy(&x, kb->data.p + (size_t)i * 8, 8);
            if (x == k->u) return 1;
            break;
        }
        case ST_VAR: {
            int32_t o0, o1;
            memcpy(&o0, kb->offs.p + (size_t)i * 4, 4);
            memcpy(&o1, kb->offs.p + (size_t)i * 4 + 4, 4);
            if (o1 - o0 == k->n && (k->n == 0 || !memcmp(kb->data.p + o0, k->s, (size_t)k->n))) return 1;
            break;
        }
        default:
            return 1;
        }
    }
    return 0;
}

/* ---- the sink (walk.h): each value to its column ---- */

static int arrow_message(ACall *a, int ni, const uint8_t *p, const uint8_t *end, int depth, uint32_t group_end,
                         const uint8_t **after);

#define STACK_ENTRIES 64

/* the sink's frame: one message being read into node `ni` */
typedef struct {
    ACall *a;
    int ni;
    const ANode *n;
    int64_t row;               /* a struct: its row */
    uint8_t *seen;             /* per entry: a value (a list's or map's first) came */
    AVal *vals;                /* per entry: a singular scalar's last value */
    uint8_t *omsg;             /* per child: the oneof's member set is a sub-message (its row is written) */
    AVal *oval;                /* per child: the oneof's scalar member's value */
    int *ocur;                 /* per child: the oneof's member set, or -1 */
    /* the map entry being read */
    AVal k, x;
    int has_x, wrote_x;
    int64_t vrow;
    /* a Timestamp/Duration: seconds, nanos; a wrapper: its value */
    int64_t s;
    int32_t ns;
    AVal v;
} AFrame;

static inline int decline(ACall *a)
{
    a->rd.declined = 1;
    return -1;
}

static inline const AEntry *entry_of(const AFrame *F, int fidx)
{
    return &F->n->entries[F->n->entry_of[fidx]];
}

static int a_value(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t **pp, const uint8_t *end)
{
    AFrame *F = fr;
    ACall *a = F->a;
    const ANode *n = F->n, *nodes = a->pl->nodes;
    const AEntry *e = entry_of(F, fidx);
    AVal v = {0, (const uint8_t *)"", 0};
    if (n->kind == AK_TIME || n->kind == AK_WRAPPER) {
        if (read_value(e->type, pp, end, &v) < 0) return -1;
        if (n->kind == AK_WRAPPER) F->v = v;
        else if (e->child == 0) F->s = (int64_t)v.u;
        else F->ns = (int32_t)(uint32_t)v.u;
        return 0;
    }
    if (n->kind != AK_STRUCT) return decline(a);
    int ch = n->children[e->child];
    if (e->member >= 0) {
        int oc = e->child;
        int mi = nodes[ch].children[e->member];
        if (F->ocur[oc] >= 0 && F->omsg[oc]) return decline(a);  /* a sub-message member's row is written */
        if (read_value(e->type, pp, end, &v) < 0) return -1;
        if (enum_rejects(&nodes[mi], &v)) return PBJ_KEEP;
        F->oval[oc] = v;
        F->omsg[oc] = 0;
        F->ocur[oc] = e->member;
        return 0;
    }
    int k = F->n->entry_of[fidx];
    if (e->label == L_IMPLICIT || e->label == L_EXPLICIT) {
        if (read_value(e->type, pp, end, &v) < 0) return -1;
        if (enum_rejects(&nodes[ch], &v)) return PBJ_KEEP;
        F->vals[k] = v;
        F->seen[k] = 1;
        return 0;
    }
    int item = nodes[ch].children[0];  /* a repeated scalar's element */
    if (!F->seen[k]) {
        if (pad(a, ch, F->row) < 0) return -1;
        F->seen[k] = 1;
    }
    if (read_value(e->type, pp, end, &v) < 0) return -1;
    if (enum_rejects(&nodes[item], &v)) return PBJ_KEEP;
    return append_value(a, item, &v);
}

static int a_packed(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, NField *f, int fidx, const uint8_t *p,
                    const uint8_t *e)
{
    AFrame *F = fr;
    ACall *a = F->a;
    if (F->n->kind != AK_STRUCT) return decline(a);
    const AEntry *en = entry_of(F, fidx);
    int k = F->n->entry_of[fidx];
    int ch = F->n->children[en->child];
    int item = a->pl->nodes[ch].children[0];
    const ANode *in = &a->pl->nodes[item];
    if (f->width > 1 && (e - p) % f->width) return -1;
    if (!F->seen[k]) {
        if (pad(a, ch, F->row) < 0) return -1;
        F->seen[k] = 1;
    }
    while (p < e) {
        AVal v;
        const uint8_t *vs = p;
        if (read_value(en->type, &p, e, &v) < 0) return -1;
        if (enum_rejects(in, &v)) {  /* kept as an unknown field, as decode keeps it */
            if (pbj_keep_packed_enum(&wf->unk, f->number, vs, e) < 0) return -1;
            continue;
        }
        if (append_value(a, item, &v) < 0) return -1;
    }
    return 0;
}

static int a_message(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t *p, const uint8_t *e,
                     const Span *more, Py_ssize_t nmore, int depth, int mode, uint32_t group_end,
                     const uint8_t **after)
{
    AFrame *F = fr;
    ACall *a = F->a;
    const ANode *nodes = a->pl->nodes;
    if (F->n->kind != AK_STRUCT || nmore || (mode != PBJ_SUB_FIRST && mode != PBJ_SUB_MAP)) return decline(a);
    const AEntry *en = entry_of(F, fidx);
    int k = F->n->entry_of[fidx];
    int ch = F->n->children[en->child];
    if (mode == PBJ_SUB_MAP) {  /* a map entry's message value (a second one merges: declined before) */
        int vn = nodes[ch].children[1];
        if (arrow_message(a, vn, p, e, depth, 0, NULL) < 0) return -1;
        F->has_x = F->wrote_x = 1;
        return 0;
    }
    if (en->member >= 0) {
        int oc = en->child;
        int mi = nodes[ch].children[en->member];
        if (F->ocur[oc] >= 0 && F->omsg[oc]) return decline(a);  /* a sub-message member's row is written */
        if (pad(a, ch, F->row) < 0 || pad(a, mi, a->b[ch].length) < 0) return -1;
        if (arrow_message(a, mi, p, e, depth, group_end, after) < 0) return -1;
        F->omsg[oc] = 1;
        F->ocur[oc] = en->member;
        return 0;
    }
    if (en->label == L_REPEATED) {
        int item = nodes[ch].children[0];
        if (!F->seen[k]) {
            if (pad(a, ch, F->row) < 0) return -1;
            F->seen[k] = 1;
        }
        return arrow_message(a, item, p, e, depth, group_end, after);
    }
    if (pad(a, ch, F->row) < 0 || arrow_message(a, ch, p, e, depth, group_end, after) < 0) return -1;
    F->seen[k] = 1;
    return 0;
}

/* a singular sub-message occurring again: merged by decode, declined here (its row is written) */
static int a_repeat(Ctx *c, void *fr, NMessage *m, NField *f, int fidx)
{
    return decline(((AFrame *)fr)->a);
}

static int a_map_begin(Ctx *c, void *fr, NMessage *m, NField *f)
{
    AFrame *F = fr;
    ACall *a = F->a;
    if (F->n->kind != AK_STRUCT) return decline(a);
    int k = F->n->entry_of[f - m->fields];
    int ch = F->n->children[F->n->entries[k].child];
    if (!F->seen[k]) {
        if (pad(a, ch, F->row) < 0) return -1;
        F->seen[k] = 1;
    }
    F->k = (AVal){0, (const uint8_t *)"", 0};
    F->has_x = F->wrote_x = 0;
    F->vrow = a->b[a->pl->nodes[ch].children[1]].length;
    return 0;
}

static inline int map_node(AFrame *F, NMessage *m, NField *f)
{
    return F->n->children[F->n->entries[F->n->entry_of[f - m->fields]].child];
}

static int a_map_key(Ctx *c, void *fr, NMessage *m, NField *f, const uint8_t **pp, const uint8_t *end)
{
    AFrame *F = fr;
    const ANode *mn = &F->a->pl->nodes[map_node(F, m, f)];
    return read_value(F->a->pl->nodes[mn->children[0]].type, pp, end, &F->k);
}

static int a_map_value(Ctx *c, void *fr, NMessage *m, NField *f, const uint8_t **pp, const uint8_t *end)
{
    AFrame *F = fr;
    const ANode *mn = &F->a->pl->nodes[map_node(F, m, f)];
    const ANode *vt = &F->a->pl->nodes[mn->children[1]];
    if (read_value(vt->type, pp, end, &F->x) < 0) return -1;
    F->has_x = 1;
    return enum_rejects(vt, &F->x) ? PBJ_KEEP : 0;
}

static int a_map_end(Ctx *c, void *fr, NMessage *m, NField *f, int keep, int depth)
{
    AFrame *F = fr;
    ACall *a = F->a;
    if (keep < 0) return 0;
    if (!keep) return F->wrote_x ? decline(a) : 0;  /* kept as an unknown field: not in the map */
    int mi = map_node(F, m, f);
    const ANode *mn = &a->pl->nodes[mi];
    int kn = mn->children[0], vn = mn->children[1];
    if (key_seen(a, mn, &F->k)) return decline(a);  /* decode keeps the first position, the last value */
    if (append_value(a, kn, &F->k) < 0) return -1;
    if (is_message_node(a->pl->nodes[vn].kind) || !F->has_x) return pad(a, vn, F->vrow + 1);  /* the default */
    return append_value(a, vn, &F->x);
}

/* the message ends: a struct's row (its singular scalars, list and map lengths, oneofs), a
 * Timestamp's or wrapper's value, a message without fields' true */
/* the unknown fields of a message of node ni (wf->unk, as they arrived: the walker kept each whole),
 * which no column holds: counted per node, as pbj.arrow.lost counts them for to_arrow */
static int note_lost(ACall *a, int ni, const WalkFrame *wf, int depth)
{
    if (a->lost == NULL) {
        a->lost = calloc((size_t)a->pl->nnodes * 2, sizeof(int64_t));
        if (a->lost == NULL) { PyErr_NoMemory(); a->fatal = 1; return -1; }
    }
    const uint8_t *p = wf->unk.buf, *e = p + wf->unk.len;
    int64_t fields = 0;
    while (p < e) {  /* (read once already: each is a whole field) */
        uint32_t tag;
        if (rd_tag(&p, e, &tag) < 0 || pbj_skip_field(&a->rd, &p, e, tag, depth) < 0) return decline(a);
        fields++;
    }
    a->lost[2 * ni] += fields;
    a->lost[2 * ni + 1] += (int64_t)wf->unk.len;
    return 0;
}

static int a_end(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, int depth)
{
    AFrame *F = fr;
    ACall *a = F->a;
    const ANode *n = F->n, *nodes = a->pl->nodes;
    ABuilder *b = &a->b[F->ni];
    if (wf->unk.len && note_lost(a, F->ni, wf, depth) < 0) return -1;
    if (n->kind == AK_WRAPPER) return append_value(a, F->ni, &F->v);
    if (n->kind == AK_PRESENT) {
        AVal one = {1, NULL, 0};
        return append_value(a, F->ni, &one);
    }
    if (n->kind == AK_TIME) {
        int64_t s = F->s;
        int32_t ns = F->ns;
        int ok = n->duration ? (ns > -1000000000 && ns < 1000000000 && !(s > 0 && ns < 0) && !(s < 0 && ns > 0))
                             : (ns >= 0 && ns < 1000000000);
#ifdef __SIZEOF_INT128__
        __int128 total = (__int128)s * 1000000000 + ns;
        if (total < INT64_MIN || total > INT64_MAX) ok = 0;
        uint64_t bits = (uint64_t)(int64_t)total;
#else
        int64_t t64;
        if (__builtin_mul_overflow(s, (int64_t)1000000000, &t64) || __builtin_add_overflow(t64, (int64_t)ns, &t64)) ok = 0;
        uint64_t bits = (uint64_t)t64;
#endif
        if (!ok) return decline(a);  /* to_arrow raises EncodeError for it */
        if (b->length >= MAX_ITEMS) return -1;
        if (n->nullable && bit_put(&b->valid, b->length, 1) < 0) return -1;
        if (buf_put(&b->data, &bits, 8) < 0) return -1;
        b->length++;
        return 0;
    }
    int ne = n->nentries, nc = n->nchildren;
    for (int i = 0; i < ne; i++) {
        if (!F->seen[i]) continue;
        const AEntry *e = &n->entries[i];
        int ch = n->children[e->child];
        if (e->label == L_REPEATED || e->label == L_PACKED || e->label == L_MAP) {
            ABuilder *lb = &a->b[ch];
            if (offs_put(&lb->offs, (size_t)child_len(a, &nodes[ch])) < 0) return -1;
            lb->length++;
        } else if (e->type != T_MESSAGE) {
            if (pad(a, ch, F->row) < 0 || append_value(a, ch, &F->vals[i]) < 0) return -1;
        }
    }
    for (int k = 0; k < nc; k++) {
        if (F->ocur[k] < 0) continue;
        int och = n->children[k];
        ABuilder *ob = &a->b[och];
        if (pad(a, och, F->row) < 0) return -1;
        uint32_t which = (uint32_t)F->ocur[k];
        if (bit_put(&ob->valid, ob->length, 1) < 0 || buf_put(&ob->data, &which, 4) < 0) return -1;
        if (!F->omsg[k]) {
            int mi = nodes[och].children[F->ocur[k]];
            if (pad(a, mi, ob->length) < 0 || append_value(a, mi, &F->oval[k]) < 0) return -1;
        }
        ob->length++;
    }
    if (n->nullable && bit_put(&b->valid, b->length, 1) < 0) return -1;
    b->length++;
    return 0;
}

static Py_ssize_t a_count(void *fr, NMessage *m, NField *f)
{
    return 0;  /* (errors are not explained here: the call declines) */
}

static const PbjSink COLUMNS = {
    .value = a_value,
    .packed = a_packed,
    .message = a_message,
    .repeat = a_repeat,
    .map_begin = a_map_begin,
    .map_key = a_map_key,
    .map_value = a_map_value,
    .map_end = a_map_end,
    .end = a_end,
    .count = a_count,
};

static int parse_encoded(ACall *a, int ni, const uint8_t *p, const uint8_t *end, int depth, uint32_t group_end);

/* one message into node `ni` (its next row): the walker with the column sink, or a past-depth encoding */
static int arrow_message(ACall *a, int ni, const uint8_t *p, const uint8_t *end, int depth, uint32_t group_end,
                         const uint8_t **after)
{
    const ANode *n = &a->pl->nodes[ni];
    if (n->kind == AK_ENCODED) return parse_encoded(a, ni, p, end, depth, group_end);
    uint8_t seen_s[STACK_ENTRIES], omsg_s[STACK_ENTRIES];
    AVal vals_s[STACK_ENTRIES], oval_s[STACK_ENTRIES];
    int ocur_s[STACK_ENTRIES];
    int ne = n->nentries, nc = n->nchildren, r = -1;
    AFrame F;
    memset(&F, 0, sizeof F);
    F.a = a;
    F.ni = ni;
    F.n = n;
    F.row = a->b[ni].length;
    F.v = (AVal){0, (const uint8_t *)"", 0};
    F.seen = seen_s;
    F.omsg = omsg_s;
    F.vals = vals_s;
    F.oval = oval_s;
    F.ocur = ocur_s;
    if (ne > STACK_ENTRIES || nc > STACK_ENTRIES) {
        F.seen = PyMem_Calloc((size_t)ne + 1, 1);
        F.vals = PyMem_Calloc((size_t)ne + 1, sizeof(AVal));
        F.omsg = PyMem_Calloc((size_t)nc + 1, 1);
        F.oval = PyMem_Calloc((size_t)nc + 1, sizeof(AVal));
        F.ocur = PyMem_Calloc((size_t)nc + 1, sizeof(int));
        if (!F.seen || !F.vals || !F.omsg || !F.oval || !F.ocur) { decline(a); goto done; }
    } else {
        memset(F.seen, 0, (size_t)ne);
    }
    for (int i = 0; i < nc; i++) F.ocur[i] = -1;
    if (n->kind == AK_WRAPPER) {  /* its zero value when the field is not on the wire */
        AVal zero = {0, (const uint8_t *)"", 0};
        F.v = zero;
    }
    r = pbj_walk(&COLUMNS, &a->rd, n->plan, &F, p, end, depth, group_end, after, NULL, 0);
done:
    if (F.seen != seen_s) {
        PyMem_Free(F.seen);
        PyMem_Free(F.vals);
        PyMem_Free(F.omsg);
        PyMem_Free(F.oval);
        PyMem_Free(F.ocur);
    }
    return r;
}

/* ---- the canonical form of a message past the recursion depth: a sink that checks ---- */

/* Whether encode(decode(span)) is the span itself: fields in ascending number (a repeated field's
 * elements one after the other), each tag and length as short as they can be, each value in the
 * form pbj's writers give it (implicit fields: not their zero), no unknown field, map or group.
 * The walker reads the span (so an input decode refuses is never in canonical form); the sink
 * checks the form and stops the walk at the first thing out of it (then pbj re-encodes the span). */
typedef struct {
    ACall *a;
    uint32_t last;             /* the last field number */
    int last_repeats;          /* the last field is a repeated field read element by element */
    uint64_t oneofs;           /* the oneofs whose member came */
} Canon;

static int canon_message(ACall *a, NMessage *m, const uint8_t *p, const uint8_t *end, int depth);

/* the `n` bytes before `at` are the canonical varint of v */
static int canonical_before(const uint8_t *at, uint64_t v)
{
    uint8_t b[10];
    int n = (int)(put_varint(b, v) - b);
    return memcmp(at - n, b, (size_t)n) == 0 ? n : 0;
}

/* field f's tag, written for wire type `wire`, ends at `at` as pbj writes it; and the order */
static int canon_tag(Canon *k, NMessage *m, NField *f, const uint8_t *at, int wire, int repeats)
{
    if (!canonical_before(at, ((uint64_t)f->number << 3) | (uint64_t)wire)) return -1;
    if (f->number < k->last || (f->number == k->last && !(k->last_repeats && repeats))) return -1;
    k->last = f->number;
    k->last_repeats = repeats;
    if (f->label == L_MEMBER) {
        if (f->oneof >= 64 || (k->oneofs >> f->oneof) & 1) return -1;
        k->oneofs |= 1ull << f->oneof;
    }
    return 0;
}

/* a varint value of `type` in the form pbj's writers give it (shortest, int32 and enum sign-extended
 * to 64 bits, bool 0 or 1, 32-bit types below 2**32) */
static int canonical_varint(int type, const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *start = *pp;
    uint64_t v;
    if (rd_varint(pp, end, &v) < 0 || *pp - start != varint_len(v)) return 0;
    switch (type) {
    case T_INT32: case T_ENUM: if ((uint64_t)(int64_t)(int32_t)(uint32_t)v != v) return 0; break;
    case T_UINT32: case T_SINT32: if (v >> 32) return 0; break;
    case T_BOOL: if (v > 1) return 0; break;
    default: break;
    }
    *out = v;
    return 1;
}

/* one scalar, string or bytes value of f at *pp as pbj writes it (`implicit`: not its zero) */
static int canonical_scalar(NField *f, const uint8_t **pp, const uint8_t *end, int implicit)
{
    uint64_t v = 0;
    uint32_t w;
    switch (f->type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64:
        if (rd_fixed64(pp, end, &v) < 0) return 0;
        return !implicit || v != 0;   /* a double -0.0 is written, +0.0 is not */
    case T_FLOAT: case T_FIXED32: case T_SFIXED32:
        if (rd_fixed32(pp, end, &w) < 0) return 0;
        return !implicit || w != 0;
    case T_STRING: case T_BYTES: {
        const uint8_t *e;
        if (rd_len(pp, end, &e) < 0 || !canonical_before(*pp, (uint64_t)(e - *pp))) return 0;
        const uint8_t *body = *pp;
        *pp = e;
        if (implicit && e == body) return 0;
        return f->type == T_BYTES || utf8_ok(body, e - body);
    }
    default:
        if (f->closed) return 0;   /* a non-member would go to the unknown fields: not checked here */
        if (!canonical_varint(f->type, pp, end, &v)) return 0;
        return !implicit || v != 0;
    }
}

static int canon_value(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t **pp, const uint8_t *end)
{
    Canon *k = fr;
    int wire = f->type == T_STRING || f->type == T_BYTES ? 2 : f->width == 8 ? 1 : f->width == 4 ? 5 : 0;
    if (f->label == L_PACKED || f->label == L_MAP) return -1;  /* written as a packed run */
    if (canon_tag(k, m, f, *pp, wire, f->label == L_REPEATED) < 0) return -1;
    return canonical_scalar(f, pp, end, f->label == L_IMPLICIT) ? 0 : -1;
}

static int canon_packed(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, NField *f, int fidx, const uint8_t *p,
                        const uint8_t *e)
{
    Canon *k = fr;
    int n = canonical_before(p, (uint64_t)(e - p));
    if (f->label != L_PACKED || p == e || !n || canon_tag(k, m, f, p - n, 2, 0) < 0) return -1;
    while (p < e) {
        if (!canonical_scalar(f, &p, e, 0)) return -1;
    }
    return 0;
}

static int canon_sub(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t *p, const uint8_t *e,
                     const Span *more, Py_ssize_t nmore, int depth, int mode, uint32_t group_end,
                     const uint8_t **after)
{
    Canon *k = fr;
    if (mode != PBJ_SUB_FIRST || group_end || f->group) return -1;  /* merges, map values, groups: pbj's */
    int n = canonical_before(p, (uint64_t)(e - p));
    if (!n || canon_tag(k, m, f, p - n, 2, f->label == L_REPEATED) < 0) return -1;
    return canon_message(k->a, f->subm, p, e, depth);
}

static int canon_stop(Ctx *c, void *fr, NMessage *m, NField *f, int fidx)
{
    return -1;  /* a repeated singular sub-message: merged by decode, re-encoded by pbj */
}

static int canon_map(Ctx *c, void *fr, NMessage *m, NField *f)
{
    return -1;  /* maps: written in key order, both key and value: left to pbj */
}

static int canon_map_part(Ctx *c, void *fr, NMessage *m, NField *f, const uint8_t **pp, const uint8_t *end)
{
    return -1;
}

static int canon_map_end(Ctx *c, void *fr, NMessage *m, NField *f, int keep, int depth)
{
    return keep < 0 ? 0 : -1;
}

static int canon_end(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, int depth)
{
    return wf->unk.len || m->nranges ? -1 : 0;  /* unknown fields (extensions too): re-encoded by pbj */
}

static Py_ssize_t canon_count(void *fr, NMessage *m, NField *f)
{
    return 0;
}

static const PbjSink CANONICAL = {
    .value = canon_value,
    .packed = canon_packed,
    .message = canon_sub,
    .repeat = canon_stop,
    .map_begin = canon_map,
    .map_key = canon_map_part,
    .map_value = canon_map_part,
    .map_end = canon_map_end,
    .end = canon_end,
    .count = canon_count,
};

static int canon_message(ACall *a, NMessage *m, const uint8_t *p, const uint8_t *end, int depth)
{
    Canon k = {a, 0, 0, 0};
    return pbj_walk(&CANONICAL, &a->rd, m, &k, p, end, depth, 0, NULL, NULL, 0);
}

/* a message past the recursion depth: its encoding as pbj writes it (the span itself when it is
 * in that form already, else from Python) */
static int parse_encoded(ACall *a, int ni, const uint8_t *p, const uint8_t *end, int depth, uint32_t group_end)
{
    const ANode *n = &a->pl->nodes[ni];
    if (group_end) return -1;   /* groups: refused by the plan check; never here */
    int level = a->rd.level;
    int canonical = canon_message(a, n->plan, p, end, depth) == 0;
    a->rd.level = level;
    a->rd.declined = 0;  /* (the check's stop is not the call's: pbj re-encodes) */
    if (canonical) {
        AVal same = {0, p, end - p};
        return append_value(a, ni, &same);
    }
    PyObject *raw = PyBytes_FromStringAndSize((const char *)p, end - p);
    if (!raw) { a->fatal = 1; return -1; }
    PyObject *reencode = Py_NewRef(n->reencode);
    PyObject *out = PyObject_CallFunction(reencode, "Oi", raw, depth);
    Py_DECREF(reencode);
    Py_DECREF(raw);
    if (!out) { a->fatal = 1; return -1; }
    if (out == Py_None) { Py_DECREF(out); a->rd.declined = 1; return -1; }  /* an error Python will raise */
    if (!PyBytes_Check(out)) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_TypeError, "arrow_decode: a re-encoding was not bytes");
        a->fatal = 1;
        return -1;
    }
    AVal v = {0, (const uint8_t *)PyBytes_AS_STRING(out), PyBytes_GET_SIZE(out)};
    int r = append_value(a, ni, &v);
    Py_DECREF(out);
    return r;
}

/* every builder padded to its parent's length, top down */
static int finalize(ACall *a, int ni, int64_t target)
{
    const ANode *n = &a->pl->nodes[ni];
    if (pad(a, ni, target) < 0) return -1;
    for (int i = 0; i < n->nchildren; i++) {
        int c = n->children[i];
        int64_t t = n->kind == AK_STRUCT || n->kind == AK_ONEOF ? a->b[ni].length : a->b[c].length;
        if (finalize(a, c, t) < 0) return -1;
    }
    return 0;
}

/* ---- export: the builders' buffers as one ArrowArray tree ---- */

typedef struct {
    void **ptrs;           /* everything to free(): buffers, arrays, pointer lists */
    size_t n, cap;
} Owned;

static int owned_add(Owned *o, void *p)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        void **x = realloc(o->ptrs, cap * sizeof(void *));
        if (!x) return -1;
        o->ptrs = x;
        o->cap = cap;
    }
    o->ptrs[o->n++] = p;
    return 0;
}

static void *owned_calloc(Owned *o, size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (p && owned_add(o, p) < 0) { free(p); return NULL; }
    return p;
}

/* a builder's buffer, moved into `o` (an allocated empty one if it never grew) */
static const void *take(Owned *o, Buf *b)
{
    if (!b->p) return owned_calloc(o, 8);
    void *p = b->p;
    if (owned_add(o, p) < 0) return NULL;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

static void owned_free(Owned *o)
{
    for (size_t i = 0; i < o->n; i++) free(o->ptrs[i]);
    free(o->ptrs);
    free(o);
}

static void release_child(struct ArrowArray *arr)
{
    arr->release = NULL;
}

static void release_root(struct ArrowArray *arr)
{
    if (arr->private_data) owned_free((Owned *)arr->private_data);
    arr->private_data = NULL;
    arr->release = NULL;
}

static struct ArrowArray *new_array(Owned *o, int64_t length, int64_t nulls, int nbuf, int nchild)
{
    struct ArrowArray *x = owned_calloc(o, sizeof(struct ArrowArray));
    if (!x) return NULL;
    x->length = length;
    x->null_count = nulls;
    x->n_buffers = nbuf;
    x->n_children = nchild;
    x->buffers = owned_calloc(o, (size_t)(nbuf + 1) * sizeof(void *));
    x->children = owned_calloc(o, (size_t)(nchild + 1) * sizeof(struct ArrowArray *));
    x->release = release_child;
    return x->buffers && x->children ? x : NULL;
}

/* a string array of a node's names, then (an enum's) the decimal text of each extra number */
static struct ArrowArray *names_array(Owned *o, const ANode *n, const ABuilder *b)
{
    int count = n->nnames + b->nextra;
    struct ArrowArray *x = new_array(o, count, 0, 3, 0);
    if (!x) return NULL;
    int32_t *offs = owned_calloc(o, (size_t)(count + 1) * 4);
    size_t size = (size_t)n->name_off[n->nnames] + (size_t)b->nextra * 12 + 8;
    char *data = owned_calloc(o, size);
    if (!offs || !data) return NULL;
    memcpy(offs, n->name_off, (size_t)(n->nnames + 1) * 4);
    memcpy(data, n->names, (size_t)n->name_off[n->nnames]);
    int32_t at = n->name_off[n->nnames];
    for (int i = 0; i < b->nextra; i++) {
        at += snprintf(data + at, 12, "%d", (int)b->extra[i]);
        offs[n->nnames + i + 1] = at;
    }
    x->buffers[1] = offs;
    x->buffers[2] = data;
    return x;
}

static struct ArrowArray *export_node(ACall *a, Owned *o, int ni)
{
    const ANode *n = &a->pl->nodes[ni];
    ABuilder *b = &a->b[ni];
    int nbuf, nchild = 0;
    switch (n->store) {
    case ST_VAR: nbuf = 3; break;
    case ST_NONE: nbuf = 1; break;
    default: nbuf = 2; break;
    }
    if (n->kind == AK_STRUCT || n->kind == AK_ONEOF) nbuf = 1;
    if (n->kind == AK_STRUCT) nchild = n->nchildren;
    else if (n->kind == AK_ONEOF) nchild = n->nchildren + 1;
    else if (n->kind == AK_LIST || n->kind == AK_MAP) nchild = 1;
    struct ArrowArray *x = new_array(o, b->length, n->nullable ? b->nulls : 0, nbuf, nchild);
    if (!x) return NULL;
    if (n->nullable && b->nulls) {
        if (!(x->buffers[0] = take(o, &b->valid))) return NULL;
    }
    switch (n->kind) {
    case AK_STRUCT:
        for (int i = 0; i < n->nchildren; i++) {
            if (!(x->children[i] = export_node(a, o, n->children[i]))) return NULL;
        }
        return x;
    case AK_ONEOF: {
        struct ArrowArray *which = new_array(o, b->length, 0, 2, 0);
        if (!which || !(which->buffers[1] = take(o, &b->data)) || !(which->dictionary = names_array(o, n, b)))
            return NULL;
        x->children[0] = which;
        for (int i = 0; i < n->nchildren; i++) {
            if (!(x->children[i + 1] = export_node(a, o, n->children[i]))) return NULL;
        }
        return x;
    }
    case AK_LIST:
        if (!(x->buffers[1] = take(o, &b->offs)) || !(x->children[0] = export_node(a, o, n->children[0])))
            return NULL;
        return x;
    case AK_MAP: {
        struct ArrowArray *entries = new_array(o, a->b[n->children[0]].length, 0, 1, 2);
        if (!entries || !(x->buffers[1] = take(o, &b->offs))) return NULL;
        if (!(entries->children[0] = export_node(a, o, n->children[0]))
            || !(entries->children[1] = export_node(a, o, n->children[1]))) return NULL;
        x->children[0] = entries;
        return x;
    }
    default:
        break;
    }
    if (n->store == ST_VAR) {
        if (!(x->buffers[1] = take(o, &b->offs)) || !(x->buffers[2] = take(o, &b->data))) return NULL;
    } else if (!(x->buffers[1] = take(o, &b->data))) {
        return NULL;
    }
    if (n->kind == AK_ENUM && n->as_names && !(x->dictionary = names_array(o, n, b))) return NULL;
    return x;
}

static void array_capsule_free(PyObject *cap)
{
    struct ArrowArray *arr = PyCapsule_GetPointer(cap, "arrow_array");
    if (!arr) { PyErr_Clear(); return; }
    if (arr->release) arr->release(arr);
    free(arr);
}

static void free_builders(ACall *a)
{
    for (int i = 0; a->b && i < a->pl->nnodes; i++) {
        free(a->b[i].valid.p);
        free(a->b[i].data.p);
        free(a->b[i].offs.p);
        free(a->b[i].extra);
    }
    free(a->b);
}

/* arrow_decode(plan, payloads: tuple of bytes, max_depth) -> (an "arrow_array" capsule, its
 * address): a struct array, the record batch, one row per payload (the capsule owns it until an
 * importer moves it out); or None: run decode + to_arrow (an error, or input the engine declines).
 * Raises only what a re-encoding callback raised, or MemoryError. */
/* the unknown fields the table leaves out: a tuple of (node, fields, bytes), one per node that met any */
static PyObject *lost_counts(const ACall *a)
{
    PyObject *out = PyList_New(0);
    for (int i = 0; out && a->lost && i < a->pl->nnodes; i++) {
        if (a->lost[2 * i] == 0) continue;
        PyObject *t = Py_BuildValue("(iLL)", i, (long long)a->lost[2 * i], (long long)a->lost[2 * i + 1]);
        if (!t || PyList_Append(out, t) < 0) Py_CLEAR(out);
        Py_XDECREF(t);
    }
    if (!out) return NULL;
    PyObject *t = PyList_AsTuple(out);
    Py_DECREF(out);
    return t;
}

/* arrow_decode(plan, payloads, max_depth): (arrow_array capsule, its address, unknown fields left
 * out: ((node, fields, bytes), ...)), or None (declined: Python decodes) */
PyObject *pbj_arrow_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyCapsule_IsValid(args[0], APLAN_CAPSULE) || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "arrow_decode(plan, payloads: tuple, max_depth: int)");
        return NULL;
    }
    long depth = PyLong_AsLong(args[2]);
    if (depth == -1 && PyErr_Occurred()) return NULL;
    if (depth > INT32_MAX) depth = INT32_MAX;
    if (depth < 0) Py_RETURN_NONE;
    PyObject *payloads = args[1];
    Py_ssize_t rows = PyTuple_GET_SIZE(payloads);
    if (rows > MAX_ITEMS) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < rows; i++) {
        if (!PyBytes_CheckExact(PyTuple_GET_ITEM(payloads, i))) Py_RETURN_NONE;
    }
    ACall a;
    memset(&a, 0, sizeof a);
    a.rd.st = pbj_state(self);
    a.rd.quiet = 1;
    a.rd.group_found = -1;
    a.rd.err_offset = -1;
    a.pl = PyCapsule_GetPointer(args[0], APLAN_CAPSULE);
    Py_INCREF(args[0]);
    Py_INCREF(payloads);
    PyObject *result = NULL;
    Owned *o = NULL;
    struct ArrowArray *root = NULL;
    a.b = calloc((size_t)a.pl->nnodes, sizeof(ABuilder));
    if (!a.b) { PyErr_NoMemory(); goto done; }
    for (int i = 0; i < a.pl->nnodes; i++) {
        int st = a.pl->nodes[i].store;
        if ((st == ST_VAR || st == ST_OFFS) && offs_put(&a.b[i].offs, 0) < 0) { PyErr_NoMemory(); goto done; }
    }
    for (Py_ssize_t i = 0; i < rows; i++) {
        PyObject *data = PyTuple_GET_ITEM(payloads, i);
        const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(data);
        a.rd.data = p;
        a.rd.data_end = p + PyBytes_GET_SIZE(data);
        if (arrow_message(&a, 0, p, a.rd.data_end, (int)depth, 0, NULL) < 0) {
            if (a.fatal) goto done;
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    if (finalize(&a, 0, rows) < 0) { result = Py_NewRef(Py_None); goto done; }
    o = calloc(1, sizeof(Owned));
    root = calloc(1, sizeof(struct ArrowArray));
    if (!o || !root) { PyErr_NoMemory(); goto done; }
    struct ArrowArray *top = export_node(&a, o, 0);
    if (!top) { PyErr_NoMemory(); goto done; }
    *root = *top;          /* the root lives in the capsule; its release frees the rest */
    root->private_data = o;
    root->release = release_root;
    o = NULL;
    PyObject *cap = PyCapsule_New(root, "arrow_array", array_capsule_free);
    if (!cap) { root->release(root); free(root); root = NULL; goto done; }
    PyObject *lost = lost_counts(&a);
    if (!lost) { Py_DECREF(cap); root = NULL; goto done; }  /* (the capsule released the arrays) */
    result = Py_BuildValue("(NKN)", cap, (unsigned long long)(uintptr_t)root, lost);
    root = NULL;
done:
    if (o) owned_free(o);
    free(root);
    free_builders(&a);
    free(a.lost);
    Py_DECREF(payloads);
    Py_DECREF(args[0]);
    return result;
}
