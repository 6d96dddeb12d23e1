/* arrow_encode.c: Arrow columns straight to encoded messages (pbj.arrow.encode_from_arrow, and
 * from_arrow on the native engine), the module pbj._native._arrow.
 *
 * pbj/arrow/encode.py flattens the column tree of pbj.arrow.mapping joined with each class's
 * codec plan (field numbers, labels, groups, packed forms, the field-number order of the writes)
 * into node records; plan() turns them into an EPlan (a capsule). encode() then takes one record
 * batch's arrays as records (their buffers as pyarrow.Buffer objects read through the buffer
 * protocol, so each buffer's size is known; the columns in the mapping's exact types:
 * pbj/arrow/conform.py made them so; nothing under a struct whose rows are all null) and
 * writes each row's encoding as pbj's writers write
 * the message from_arrow builds for that row: fields in field-number order, a oneof's member at
 * its number, implicit-presence zeros left out (+0.0 but not -0.0), packed runs, groups, map
 * entries sorted by key with key and value both written (the last of equal keys kept, as a dict
 * would), Timestamp/Duration split into seconds and nanos, wrappers and empty messages as the
 * messages they are, encodings past the recursion depth copied.
 *
 * Writing is back to front into one growing buffer (upb's and pbj's reverse writer): a value is
 * written before its length, so no size pass; each row is copied out into its bytes object.
 *
 * Errors are ValueErrors naming the column and the row (a null where the field has no presence,
 * an enum name that is no member, a oneof member name that is no member, a string that is not
 * UTF-8, offsets outside their child). Memory safety: every array is checked against its node
 * before use (children and buffers present), every index against the array's length, every list
 * or string span against its offsets (monotonic, inside the child or up to the last offset), and
 * every buffer against its size once per array (sized()). No Python code runs during a walk; the
 * buffers are held (PyObject_GetBuffer) until encode() returns.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#include "arrow_abi.h"

#define EPLAN_CAPSULE "pbj.native.arrow_encode_plan"
#define MAX_LEVEL NATIVE_MAX_LEVEL

/* node kinds: engine.h's AK_* (pbj._native.ARROW_KINDS), type codes and labels: checked with the rest of the
 * layout by setup() before any plan is made */

typedef struct {
    int child;       /* the column (a struct's child position; TIME: 0 seconds, 1 nanos; WRAPPER: 0) */
    int member;      /* a oneof member's position, or -1 */
    uint32_t number;
    int label;
    int group;
    /* the field's tag for the wire type of the value this step writes (a packed run's: LEN), its bytes ending
     * the 8 (put by rb_tag()); a group writes its own two tags */
    uint8_t tag[8];
    int tag_len;
    struct ENode *node;     /* a struct's step: the child's node (a oneof's, for a member); set by prepare() */
} EStep;

typedef struct {
    const char *name;       /* utf-8, for errors (owned by the plan's names tuple) */
    Py_ssize_t name_len;
    int32_t number;
} EName;

typedef struct ENode {
    int kind, type, nullable;
    int nchildren;
    int *children;
    int nsteps;
    EStep *steps;
    /* ENUM (as names) and ONEOF: the names, sorted by bytes, each with its number (ONEOF: position) */
    int as_names;
    int nnames;
    EName *names;
    int duration;           /* TIME */
    int closed;             /* ENUM: a closed enum (its members only; decode keeps others as unknown fields) */
    int32_t *members;       /* ENUM: the member numbers, ascending (nnames of them) */
    const char *label;      /* the column path, for errors (owned by the plan's names tuple) */
    int me;                 /* this node's index in the plan */
    /* STRUCT, made by prepare(): the steps of fields outside any oneof (ascending), the child positions of the
     * oneofs, and for each oneof (from oneof_first[o]) its members' steps (-1: none); a row finds the member set
     * of each oneof and writes those steps with the plain ones, never visiting the members not set.
     * scratch: where in a call's `sets` this node keeps the steps of the members set in the row being written
     * (a node is never its own descendant: children come after their parents) */
    int nplain;
    int *plain;
    int noneofs;
    int *oneofs;
    int *oneof_first;
    int *msteps;
    int scratch;
} ENode;

/* per call and node: the dictionary last mapped, and its index -> number (or member position), NO_NAME
 * for an entry that names nothing (an error only where a row uses it) */
#define NO_NAME INT64_MIN
typedef struct {
    const struct ArrowArray *seen;
    int64_t *map;
    int64_t len;
} EDict;

typedef struct {
    int nnodes;
    ENode *nodes;
    PyObject *keep;         /* the records (their strings back the names) */
    int nscratch;           /* the oneofs of every struct node: the size of a call's `sets` */
} EPlan;

/* ---- plan ---- */

static void free_plan(EPlan *pl)
{
    if (pl == NULL) return;
    for (int i = 0; i < pl->nnodes; i++) {
        ENode *n = &pl->nodes[i];
        free(n->children);
        free(n->steps);
        free(n->names);
        free(n->members);
        free(n->plain);
        free(n->oneofs);
        free(n->oneof_first);
        free(n->msteps);
    }
    free(pl->nodes);
    Py_XDECREF(pl->keep);
    free(pl);
}

static void plan_capsule_free(PyObject *cap)
{
    free_plan((EPlan *)PyCapsule_GetPointer(cap, EPLAN_CAPSULE));
}

static int get_int(PyObject *t, Py_ssize_t i, long long lo, long long hi, long long *out)
{
    PyObject *o = PyTuple_GET_ITEM(t, i);
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "arrow encode plan: %lld is outside %lld..%lld", v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    const EName *x = a, *y = b;
    Py_ssize_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, (size_t)n);
    if (c) return c;
    return (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* names (a tuple of str) with numbers (a tuple of int, or NULL: their positions), sorted */
static int convert_names(ENode *n, PyObject *names, PyObject *numbers)
{
    if (!PyTuple_Check(names) || (numbers != NULL && (!PyTuple_Check(numbers) ||
                                                      PyTuple_GET_SIZE(numbers) != PyTuple_GET_SIZE(names)))) {
        PyErr_SetString(PyExc_ValueError, "arrow encode plan: names and numbers");
        return -1;
    }
    Py_ssize_t k = PyTuple_GET_SIZE(names);
    if (k > 1 << 20) { PyErr_SetString(PyExc_ValueError, "arrow encode plan: too many names"); return -1; }
    n->nnames = (int)k;
    n->names = calloc((size_t)(k ? k : 1), sizeof(EName));
    if (n->names == NULL) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *s = PyTuple_GET_ITEM(names, i);
        if (!PyUnicode_Check(s)) { PyErr_SetString(PyExc_ValueError, "arrow encode plan: a name"); return -1; }
        n->names[i].name = PyUnicode_AsUTF8AndSize(s, &n->names[i].name_len);
        if (n->names[i].name == NULL) return -1;
        long long v = i;
        if (numbers != NULL && get_int(numbers, i, INT32_MIN, INT32_MAX, &v) < 0) return -1;
        n->names[i].number = (int32_t)v;
    }
    qsort(n->names, (size_t)k, sizeof(EName), cmp_names);
    return 0;
}

/* a record: (kind, type, nullable, children, steps, extra, label) */
static int convert_node(ENode *n, PyObject *rec, int nnodes, int me)
{
    if (!PyTuple_Check(rec) || PyTuple_GET_SIZE(rec) != 7) {
        PyErr_SetString(PyExc_ValueError, "arrow encode plan: a node is a 7-tuple");
        return -1;
    }
    long long v;
    n->me = me;
    if (get_int(rec, 0, 0, AK_COUNT - 1, &v) < 0) return -1;
    n->kind = (int)v;
    if (get_int(rec, 1, 0, T_MESSAGE, &v) < 0) return -1;
    n->type = (int)v;
    if (get_int(rec, 2, 0, 1, &v) < 0) return -1;
    n->nullable = (int)v;
    PyObject *children = PyTuple_GET_ITEM(rec, 3), *steps = PyTuple_GET_ITEM(rec, 4);
    PyObject *extra = PyTuple_GET_ITEM(rec, 5), *label = PyTuple_GET_ITEM(rec, 6);
    if (!PyTuple_Check(children) || !PyTuple_Check(steps) || !PyTuple_Check(extra) || !PyUnicode_Check(label)) {
        PyErr_SetString(PyExc_ValueError, "arrow encode plan: a node's parts");
        return -1;
    }
    n->label = PyUnicode_AsUTF8(label);
    if (n->label == NULL) return -1;
    Py_ssize_t nc = PyTuple_GET_SIZE(children), ns = PyTuple_GET_SIZE(steps);
    if (nc > 1 << 20 || ns > 1 << 20) { PyErr_SetString(PyExc_ValueError, "arrow encode plan: too big"); return -1; }
    n->nchildren = (int)nc;
    n->children = calloc((size_t)(nc ? nc : 1), sizeof(int));
    n->nsteps = (int)ns;
    n->steps = calloc((size_t)(ns ? ns : 1), sizeof(EStep));
    if (n->children == NULL || n->steps == NULL) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < nc; i++) {
        if (get_int(children, i, me + 1, nnodes - 1, &v) < 0) return -1;  /* children come after */
        n->children[i] = (int)v;
    }
    for (Py_ssize_t i = 0; i < ns; i++) {
        PyObject *s = PyTuple_GET_ITEM(steps, i);
        if (!PyTuple_Check(s) || PyTuple_GET_SIZE(s) != 5) {
            PyErr_SetString(PyExc_ValueError, "arrow encode plan: a step is a 5-tuple");
            return -1;
        }
        EStep *e = &n->steps[i];
        if (get_int(s, 0, 0, nc > 0 ? nc - 1 : 1, &v) < 0) return -1;
        e->child = (int)v;
        if (get_int(s, 1, -1, 1 << 20, &v) < 0) return -1;
        e->member = (int)v;
        if (get_int(s, 2, 1, MAX_FIELD_NUMBER, &v) < 0) return -1;
        e->number = (uint32_t)v;
        if (get_int(s, 3, L_IMPLICIT, L_MEMBER, &v) < 0) return -1;
        e->label = (int)v;
        if (get_int(s, 4, 0, 1, &v) < 0) return -1;
        e->group = (int)v;
    }
    switch (n->kind) {
    case AK_ENUM:
        if (PyTuple_GET_SIZE(extra) != 4) break;
        if (get_int(extra, 0, 0, 1, &v) < 0) return -1;
        n->as_names = (int)v;
        if (get_int(extra, 3, 0, 1, &v) < 0) return -1;
        n->closed = (int)v;
        if (convert_names(n, PyTuple_GET_ITEM(extra, 2), PyTuple_GET_ITEM(extra, 1)) < 0) return -1;
        n->members = malloc((size_t)(n->nnames ? n->nnames : 1) * sizeof(int32_t));
        if (n->members == NULL) { PyErr_NoMemory(); return -1; }
        for (int i = 0; i < n->nnames; i++) n->members[i] = n->names[i].number;
        qsort(n->members, (size_t)n->nnames, sizeof(int32_t), cmp_int32);
        return 0;
    case AK_ONEOF:
        if (PyTuple_GET_SIZE(extra) != 1 || PyTuple_GET_SIZE(PyTuple_GET_ITEM(extra, 0)) != nc) break;
        return convert_names(n, PyTuple_GET_ITEM(extra, 0), NULL);
    case AK_TIME:
        if (PyTuple_GET_SIZE(extra) != 1) break;
        if (get_int(extra, 0, 0, 1, &v) < 0) return -1;
        n->duration = (int)v;
        return 0;
    default:
        if (PyTuple_GET_SIZE(extra) != 0) break;
        return 0;
    }
    PyErr_SetString(PyExc_ValueError, "arrow encode plan: a node's extra items");
    return -1;
}

/* what each kind needs of its children and steps */
static int check_node(const EPlan *pl, const ENode *n)
{
    switch (n->kind) {
    case AK_SCALAR:
        return n->type < T_ENUM && n->nchildren == 0 ? 0 : -1;
    case AK_ENUM: case AK_ENCODED: case AK_PRESENT:
        return n->nchildren == 0 ? 0 : -1;
    case AK_STRUCT:
        for (int i = 0; i < n->nsteps; i++) {
            const EStep *e = &n->steps[i];
            if (e->child >= n->nchildren) return -1;
            const ENode *c = &pl->nodes[n->children[e->child]];
            if (e->member >= 0 && (c->kind != AK_ONEOF || e->member >= c->nchildren)) return -1;
            if (e->member < 0 && c->kind == AK_ONEOF) return -1;
            if (e->group && e->member < 0 && c->kind != AK_STRUCT && !(c->kind == AK_LIST &&
                                                                      pl->nodes[c->children[0]].kind == AK_STRUCT))
                return -1;
        }
        return 0;
    case AK_ONEOF:
        return n->nchildren == n->nnames ? 0 : -1;
    case AK_LIST:
        return n->nchildren == 1 && pl->nodes[n->children[0]].kind != AK_LIST &&
               pl->nodes[n->children[0]].kind != AK_MAP ? 0 : -1;
    case AK_MAP:
        return n->nchildren == 2 && pl->nodes[n->children[0]].kind == AK_SCALAR ? 0 : -1;
    case AK_TIME:
        if (n->nchildren != 0 || n->nsteps > 2) return -1;
        for (int i = 0; i < n->nsteps; i++) if (n->steps[i].child > 1) return -1;
        return 0;
    case AK_WRAPPER:
        return n->nchildren == 1 && n->nsteps == 1 && n->steps[0].child == 0 &&
               (pl->nodes[n->children[0]].kind == AK_SCALAR || pl->nodes[n->children[0]].kind == AK_ENUM) ? 0 : -1;
    }
    return -1;
}

static int wire_of(int type);

/* the wire type of the value step e writes into node n (a struct's child or oneof member, a time, a wrapper) */
static int step_wire(const EPlan *pl, const ENode *parent, const EStep *e)
{
    if (parent->kind == AK_TIME) return 0;
    const ENode *n = &pl->nodes[parent->children[e->child]];
    if (parent->kind == AK_STRUCT && e->member >= 0) n = &pl->nodes[n->children[e->member]];
    switch (n->kind) {
    case AK_SCALAR: return wire_of(n->type);
    case AK_ENUM: return 0;
    case AK_LIST: {
        if (e->label == L_PACKED) return 2;
        const ENode *item = &pl->nodes[n->children[0]];
        return item->kind == AK_SCALAR ? wire_of(item->type) : item->kind == AK_ENUM ? 0 : 2;
    }
    default: return 2;
    }
}

/* once per plan, after check_node(): each step's tag bytes, and each struct's plain steps and oneof members'
 * steps (what put_struct_fields() walks) */
static int prepare(EPlan *pl)
{
    for (int i = 0; i < pl->nnodes; i++) {
        ENode *n = &pl->nodes[i];
        for (int k = 0; k < n->nsteps; k++) {
            EStep *e = &n->steps[k];
            uint8_t tmp[8];
            uint8_t *end = put_varint(tmp, ((uint64_t)e->number << 3) | (uint64_t)step_wire(pl, n, e));
            e->tag_len = (int)(end - tmp);
            memset(e->tag, 0, sizeof e->tag);
            memcpy(e->tag + 8 - e->tag_len, tmp, (size_t)e->tag_len);
            e->node = n->kind == AK_STRUCT ? &pl->nodes[n->children[e->child]] : NULL;
        }
        if (n->kind != AK_STRUCT) continue;
        int members = 0;
        n->plain = calloc((size_t)(n->nsteps ? n->nsteps : 1), sizeof(int));
        n->oneofs = calloc((size_t)(n->nchildren ? n->nchildren : 1), sizeof(int));
        n->oneof_first = calloc((size_t)(n->nchildren ? n->nchildren : 1), sizeof(int));
        if (n->plain == NULL || n->oneofs == NULL || n->oneof_first == NULL) { PyErr_NoMemory(); return -1; }
        for (int ch = 0; ch < n->nchildren; ch++) {
            const ENode *cn = &pl->nodes[n->children[ch]];
            if (cn->kind != AK_ONEOF) continue;
            n->oneofs[n->noneofs] = ch;
            n->oneof_first[n->noneofs++] = members;
            members += cn->nchildren;
        }
        n->msteps = malloc((size_t)(members ? members : 1) * sizeof(int));
        if (n->msteps == NULL) { PyErr_NoMemory(); return -1; }
        for (int m = 0; m < members; m++) n->msteps[m] = -1;
        for (int k = 0; k < n->nsteps; k++) {
            const EStep *e = &n->steps[k];
            if (e->member < 0) { n->plain[n->nplain++] = k; continue; }
            for (int o = 0; o < n->noneofs; o++)  /* check_node: a member step's child is a oneof */
                if (n->oneofs[o] == e->child) n->msteps[n->oneof_first[o] + e->member] = k;
        }
        n->scratch = pl->nscratch;
        if (pl->nscratch > (1 << 26) - n->noneofs) { PyErr_SetString(PyExc_ValueError, "arrow encode plan: too big"); return -1; }
        pl->nscratch += n->noneofs;
    }
    return 0;
}

/* the module's state: whether setup() has checked the layout Python sends */
typedef struct {
    int layout_checked;
} AState;

/* setup(layout): pbj._native.layout(), checked against this build's codes (ImportError) */
static PyObject *setup(PyObject *self, PyObject *args)
{
    PyObject *layout;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &layout)) return NULL;
    if (pbj_check_layout(layout) < 0) return NULL;
    ((AState *)PyModule_GetState(self))->layout_checked = 1;
    Py_RETURN_NONE;
}

/* plan(nodes) -> capsule (setup() first: the node kinds, type codes and labels are the engine's) */
static PyObject *plan(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1 || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "plan(nodes: tuple)");
        return NULL;
    }
    if (!((AState *)PyModule_GetState(self))->layout_checked) {
        PyErr_SetString(PyExc_RuntimeError, "arrow encode plan: setup(layout) was not called");
        return NULL;
    }
    Py_ssize_t nn = PyTuple_GET_SIZE(args[0]);
    if (nn < 1 || nn > 1 << 24) { PyErr_SetString(PyExc_ValueError, "arrow encode plan: node count"); return NULL; }
    EPlan *pl = calloc(1, sizeof(EPlan));
    if (pl == NULL) return PyErr_NoMemory();
    pl->nodes = calloc((size_t)nn, sizeof(ENode));
    if (pl->nodes == NULL) { free(pl); return PyErr_NoMemory(); }
    pl->nnodes = (int)nn;
    Py_INCREF(args[0]);
    pl->keep = args[0];
    for (Py_ssize_t i = 0; i < nn; i++)
        if (convert_node(&pl->nodes[i], PyTuple_GET_ITEM(args[0], i), (int)nn, (int)i) < 0) goto fail;
    if (pl->nodes[0].kind != AK_STRUCT) goto refused;
    for (int i = 0; i < pl->nnodes; i++)
        if (check_node(pl, &pl->nodes[i]) < 0) goto refused;
    if (prepare(pl) < 0) goto fail;
    PyObject *cap = PyCapsule_New(pl, EPLAN_CAPSULE, plan_capsule_free);
    if (cap == NULL) goto fail;
    return cap;
refused:
    PyErr_SetString(PyExc_ValueError, "arrow encode plan: a node does not fit its kind");
fail:
    free_plan(pl);
    return NULL;
}

/* ---- the reverse buffer: data is mem[pos..cap) ---- */

typedef struct {
    uint8_t *mem;
    size_t cap, pos;
} RBuf;

static int rb_grow(RBuf *b, size_t need)
{
    size_t used = b->cap - b->pos;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - used < need) {
        if (cap > (SIZE_MAX >> 2)) { PyErr_NoMemory(); return -1; }
        cap *= 2;
    }
    uint8_t *mem = malloc(cap);
    if (mem == NULL) { PyErr_NoMemory(); return -1; }
    if (used) memcpy(mem + cap - used, b->mem + b->pos, used);
    free(b->mem);
    b->mem = mem;
    b->pos = cap - used;
    b->cap = cap;
    return 0;
}

static inline int rb_put(RBuf *b, const void *src, size_t n)
{
    if (b->pos < n && rb_grow(b, n) < 0) return -1;
    b->pos -= n;
    if (n) memcpy(b->mem + b->pos, src, n);
    return 0;
}

static inline int rb_varint(RBuf *b, uint64_t v)
{
    if (b->pos < 10 && rb_grow(b, 10) < 0) return -1;
    if (v < 0x80) {
        b->mem[--b->pos] = (uint8_t)v;
        return 0;
    }
    b->pos -= (size_t)varint_len(v);
    put_varint(b->mem + b->pos, v);
    return 0;
}

/* step e's tag: its 8 bytes copied to end at pos (those before the tag are free space), pos moved by its length */
static inline int rb_tag(RBuf *b, const EStep *e)
{
    if (b->pos < 8 && rb_grow(b, 8) < 0) return -1;
    memcpy(b->mem + b->pos - 8, e->tag, 8);
    b->pos -= (size_t)e->tag_len;
    return 0;
}

static inline size_t rb_used(const RBuf *b) { return b->cap - b->pos; }

/* ---- a call ---- */

typedef struct {
    const EPlan *pl;
    RBuf out;
    int64_t row;            /* the table row being written, for errors */
    EDict *dicts;           /* one per node */
    const struct ArrowArray **fitted;  /* one per node: the array fits() last found fitting it (checked once) */
    int *sets;              /* per struct node (its scratch): the steps of the oneof members set in its row */
    const struct ArrowArray **checked;  /* per struct node: the array check_struct() has checked (once per call) */
} ECall;

static int fail_at(ECall *c, const ENode *n, const char *what)
{
    PyErr_Format(PyExc_ValueError, "column '%s' row %lld: %s", n->label, (long long)c->row, what);
    return -1;
}

static int bad_array(ECall *c, const ENode *n)
{
    return fail_at(c, n, "the array does not fit its column (children, buffers or offsets)");
}

/* the sizes in bytes of an array's buffers (its private_data: encode() made the array from a record) */
typedef struct {
    int64_t size[3];
} ESizes;

/* the buffers of array `a` hold what node n reads: the validity bitmap, the values (of the node's width) or the
 * offsets, and a string's or binary's bytes up to its last offset (which is read only once the offsets are known
 * to be there) */
static int sized(const ENode *n, const struct ArrowArray *a)
{
    const ESizes *z = a->private_data;
    if (z == NULL || a->n_buffers > 3) return -1;
    int64_t end = a->offset + a->length;  /* both at most 2**40: encode() checked */
    if (a->buffers[0] != NULL && z->size[0] * 8 < end) return -1;
    if (a->n_buffers < 2 || a->buffers[1] == NULL) return 0;  /* fits() said when the values must be there */
    int64_t width = 0;  /* bytes per element; -1: bits; 0: offsets (and bytes) */
    switch (n->kind) {
    case AK_SCALAR:
        switch (n->type) {
        case T_DOUBLE: case T_FIXED64: case T_SFIXED64: case T_INT64: case T_UINT64: case T_SINT64: width = 8; break;
        case T_BOOL: width = -1; break;
        case T_STRING: case T_BYTES: width = 0; break;
        default: width = 4; break;
        }
        break;
    case AK_ENUM: width = 4; break;
    case AK_TIME: width = 8; break;
    case AK_PRESENT: width = -1; break;
    case AK_LIST: case AK_MAP: case AK_ENCODED: width = 0; break;
    default: return 0;
    }
    if (width > 0) return z->size[1] >= end * width ? 0 : -1;
    if (width < 0) return z->size[1] * 8 >= end ? 0 : -1;
    if (z->size[1] < (end + 1) * 4) return -1;
    if (a->n_buffers == 3) {  /* the bytes: up to the last offset */
        int32_t last;
        memcpy(&last, (const uint8_t *)a->buffers[1] + 4 * end, 4);
        if (last < 0 || (last > 0 && a->buffers[2] == NULL) || z->size[2] < last) return -1;
    }
    return 0;
}

/* an array fits node n: its buffers and children are there, and its buffers are big enough (checked once per
 * node and array: fits()) */
static int fits_check(ECall *c, const ENode *n, const struct ArrowArray *a)
{
    if (a == NULL || a->length < 0 || a->offset < 0 || a->buffers == NULL) return bad_array(c, n);
    int64_t nbuf = 2, nch = 0;
    switch (n->kind) {
    case AK_SCALAR:
        nbuf = (n->type == T_STRING || n->type == T_BYTES) ? 3 : 2;
        break;
    case AK_ENUM:
        if (n->as_names && (a->dictionary == NULL || a->dictionary->n_buffers != 3 || a->dictionary->buffers == NULL))
            return bad_array(c, n);
        break;
    case AK_STRUCT: nbuf = 1; nch = n->nchildren; break;
    case AK_ONEOF: nbuf = 1; nch = n->nchildren + 1; break;
    case AK_LIST: nch = 1; break;
    case AK_MAP:
        nch = 1;
        if (a->n_children == 1 && a->children != NULL && a->children[0] != NULL &&
            a->children[0]->n_children != 2) return bad_array(c, n);
        break;
    case AK_TIME: case AK_PRESENT: case AK_WRAPPER: break;
    case AK_ENCODED: nbuf = 3; break;
    }
    if (n->kind == AK_WRAPPER) return 0;  /* the value's node checks it */
    if (a->n_buffers != nbuf || a->n_children != nch || (nch && a->children == NULL)) return bad_array(c, n);
    for (int64_t i = 0; i < nch; i++) if (a->children[i] == NULL) return bad_array(c, n);
    if (n->kind != AK_STRUCT && n->kind != AK_ONEOF && a->buffers[1] == NULL && a->length > 0) return bad_array(c, n);
    if (sized(n, a) < 0) return bad_array(c, n);
    c->fitted[n->me] = a;
    return 0;
}

static inline int fits(ECall *c, const ENode *n, const struct ArrowArray *a)
{
    if (a != NULL && c->fitted[n->me] == a) return 0;  /* a call's arrays do not change while it runs */
    return fits_check(c, n, a);
}

static inline int valid_at(const struct ArrowArray *a, int64_t i)
{
    const uint8_t *v = a->buffers[0];
    if (v == NULL || a->null_count == 0) return 1;
    int64_t j = a->offset + i;
    return (v[j >> 3] >> (j & 7)) & 1;
}

/* element i of `a` exists */
static inline int in_range(ECall *c, const ENode *n, const struct ArrowArray *a, int64_t i)
{
    if (i < 0 || i >= a->length) return bad_array(c, n);
    return 0;
}

/* the span [*lo, *hi) of list (or string) element i, checked: offsets monotonic, within `limit` */
static int span(ECall *c, const ENode *n, const struct ArrowArray *a, int64_t i, int64_t limit, int64_t *lo, int64_t *hi)
{
    const int32_t *off = a->buffers[1];
    int64_t j = a->offset + i;
    *lo = off[j];
    *hi = off[j + 1];
    if (*lo < 0 || *hi < *lo || *hi > limit) return bad_array(c, n);
    return 0;
}

/* the end of a string array's data: its last offset (the format guarantees the buffer holds it) */
static inline int64_t data_end(const struct ArrowArray *a)
{
    const int32_t *off = a->buffers[1];
    return off[a->offset + a->length];
}

/* RFC 3629 UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF */
static int utf8_ok(const uint8_t *s, int64_t n)
{
    int64_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        if (b < 0x80) { i++; continue; }
        int k;
        uint32_t cp;
        if (b >= 0xC2 && b <= 0xDF) { k = 1; cp = b & 0x1F; }
        else if (b >= 0xE0 && b <= 0xEF) { k = 2; cp = b & 0x0F; }
        else if (b >= 0xF0 && b <= 0xF4) { k = 3; cp = b & 0x07; }
        else return 0;
        if (k > n - 1 - i) return 0;
        for (int j = 1; j <= k; j++) {
            uint8_t t = s[i + j];
            if ((t & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (t & 0x3F);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += k + 1;
    }
    return 1;
}

static int wire_of(int type)
{
    switch (type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64: return 1;
    case T_FLOAT: case T_FIXED32: case T_SFIXED32: return 5;
    case T_STRING: case T_BYTES: case T_MESSAGE: return 2;
    default: return 0;
    }
}

static inline int put_tag(RBuf *b, uint32_t number, int wire)
{
    return rb_varint(b, ((uint64_t)number << 3) | (uint64_t)wire);
}

/* ---- scalar values ---- */

/* the value of scalar node n (or an enum as numbers) at element i: written (returns 1), or a zero
 * that `implicit` leaves out (0), or -1 on an error; inlined where most values are written (a struct's fields, a
 * packed run), put_scalar() elsewhere */
static inline __attribute__((always_inline)) int put_scalar_here(ECall *c, const ENode *n, const struct ArrowArray *a,
                                                                 int64_t i, int implicit)
{
    RBuf *b = &c->out;
    int64_t j = a->offset + i;
    const void *buf = a->buffers[1];
    switch (n->type) {
    case T_DOUBLE: case T_FIXED64: case T_SFIXED64: case T_INT64: case T_UINT64: case T_SINT64: {
        uint64_t u;
        memcpy(&u, (const uint8_t *)buf + 8 * j, 8);
        if (implicit && u == 0) return 0;
        if (n->type == T_DOUBLE || n->type == T_FIXED64 || n->type == T_SFIXED64) {
            uint8_t le[8];
            for (int k = 0; k < 8; k++) le[k] = (uint8_t)(u >> (8 * k));
            return rb_put(b, le, 8) < 0 ? -1 : 1;
        }
        if (n->type == T_SINT64) u = (u << 1) ^ (uint64_t)((int64_t)u >> 63);
        return rb_varint(b, u) < 0 ? -1 : 1;
    }
    case T_FLOAT: case T_FIXED32: case T_SFIXED32: case T_INT32: case T_UINT32: case T_SINT32: case T_ENUM: {
        uint32_t u;
        memcpy(&u, (const uint8_t *)buf + 4 * j, 4);
        if (implicit && u == 0) return 0;
        if (n->type == T_FLOAT || n->type == T_FIXED32 || n->type == T_SFIXED32) {
            uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
            return rb_put(b, le, 4) < 0 ? -1 : 1;
        }
        uint64_t w;
        if (n->type == T_SINT32) w = (uint32_t)((u << 1) ^ (uint32_t)((int32_t)u >> 31));
        else if (n->type == T_UINT32) w = u;
        else w = (uint64_t)(int64_t)(int32_t)u;  /* int32, enum: negative as 10 bytes */
        return rb_varint(b, w) < 0 ? -1 : 1;
    }
    case T_BOOL: {
        int v = (((const uint8_t *)buf)[j >> 3] >> (j & 7)) & 1;
        if (implicit && !v) return 0;
        uint8_t one = (uint8_t)v;
        return rb_put(b, &one, 1) < 0 ? -1 : 1;
    }
    case T_STRING: case T_BYTES: {
        int64_t lo, hi;
        if (span(c, n, a, i, data_end(a), &lo, &hi) < 0) return -1;
        if (implicit && hi == lo) return 0;
        const uint8_t *data = a->buffers[2];
        if (hi > lo && data == NULL) return bad_array(c, n);
        if (n->type == T_STRING && !utf8_ok(data + lo, hi - lo)) return fail_at(c, n, "a string that is not UTF-8");
        if (rb_put(b, data + lo, (size_t)(hi - lo)) < 0 || rb_varint(b, (uint64_t)(hi - lo)) < 0) return -1;
        return 1;
    }
    }
    return bad_array(c, n);
}

static __attribute__((noinline)) int put_scalar(ECall *c, const ENode *n, const struct ArrowArray *a, int64_t i,
                                                int implicit)
{
    return put_scalar_here(c, n, a, i, implicit);
}

/* node n's dictionary (enum names, oneof member names) mapped to numbers (positions) once per array */
static int map_dictionary(ECall *c, const ENode *n, int ni, const struct ArrowArray *a, EDict **out)
{
    EDict *dc = &c->dicts[ni];
    *out = dc;
    const struct ArrowArray *d = a->dictionary;
    if (d == NULL || d->n_buffers != 3 || d->buffers == NULL || d->length < 0 || d->offset < 0 ||
        (d->length > 0 && d->buffers[1] == NULL)) return bad_array(c, n);
    if (dc->seen == d && dc->len == d->length) return 0;
    ENode strings = {.kind = AK_SCALAR, .type = T_STRING};
    if (d->length > 0 && sized(&strings, d) < 0) return bad_array(c, n);
    free(dc->map);
    dc->seen = NULL;
    dc->map = malloc((size_t)(d->length ? d->length : 1) * sizeof(int64_t));
    if (dc->map == NULL) { PyErr_NoMemory(); return -1; }
    int64_t end = d->length ? data_end(d) : 0;
    const char *data = d->buffers[2];
    for (int64_t k = 0; k < d->length; k++) {
        int64_t lo, hi;
        if (span(c, n, d, k, end, &lo, &hi) < 0) return -1;
        if (hi > lo && data == NULL) return bad_array(c, n);
        EName key = {hi > lo ? data + lo : "", (Py_ssize_t)(hi - lo), 0};
        const EName *found = n->nnames ? bsearch(&key, n->names, (size_t)n->nnames, sizeof(EName), cmp_names) : NULL;
        int64_t number = found != NULL ? found->number : NO_NAME;
        if (found == NULL && n->kind == AK_ENUM && hi > lo && hi - lo <= 11) {  /* a number no member names: its text */
            char tmp[12], back[24];
            memcpy(tmp, data + lo, (size_t)(hi - lo));
            tmp[hi - lo] = 0;
            char *endp;
            long long v = strtoll(tmp, &endp, 10);
            snprintf(back, sizeof back, "%lld", v);
            if (*endp == 0 && v >= INT32_MIN && v <= INT32_MAX && strcmp(back, tmp) == 0) number = v;
        }
        dc->map[k] = number;
    }
    dc->seen = d;
    dc->len = d->length;
    return 0;
}

/* the enum number at element i (its name mapped, or the int32 itself); an unknown name is an error */
static int enum_number(ECall *c, int ni, const struct ArrowArray *a, int64_t i, int32_t *out)
{
    const ENode *n = &c->pl->nodes[ni];
    int32_t v;
    memcpy(&v, (const uint8_t *)a->buffers[1] + 4 * (a->offset + i), 4);
    if (n->as_names) {
        EDict *dc;
        if (map_dictionary(c, n, ni, a, &dc) < 0) return -1;
        if (v < 0 || v >= dc->len) return bad_array(c, n);
        if (dc->map[v] == NO_NAME) return fail_at(c, n, "an enum name that is no member nor a number");
        v = (int32_t)dc->map[v];
    }
    if (n->closed && !(n->nnames && bsearch(&v, n->members, (size_t)n->nnames, sizeof(int32_t), cmp_int32)))
        return fail_at(c, n, "a number that is no member of a closed enum (which holds its members only)");
    *out = v;
    return 0;
}

/* ---- values ---- */

static int put_value(ECall *c, int ni, const struct ArrowArray *a, int64_t i, int level);

/* a message-like value (struct, time, wrapper, present, encoded) as the body of a LEN field or group */
static inline int put_struct_body(ECall *c, int ni, const struct ArrowArray *a, int64_t i, int level);

/* a repeated field's elements (node cn, array a, element i: checked by put_field), packed or one field each */
static int put_list(ECall *c, const EStep *e, const ENode *cn, const struct ArrowArray *a, int64_t i, int level)
{
    RBuf *b = &c->out;
    int ini = cn->children[0];
    ENode *item = &c->pl->nodes[ini];
    const struct ArrowArray *items = a->children[0];
    if (fits(c, item, items) < 0) return -1;
    if (!valid_at(a, i)) return fail_at(c, cn, "null, but a repeated field is never null (an empty list)");
    int64_t lo, hi;
    if (span(c, cn, a, i, items->length, &lo, &hi) < 0) return -1;
    if (lo == hi) return 0;
    if (e->label == L_PACKED) {
        size_t mark = rb_used(b);
        for (int64_t k = hi - 1; k >= lo; k--) {
            if (!valid_at(items, k)) return fail_at(c, item, "null, but a list item is never null");
            if (item->kind == AK_ENUM) {
                int32_t num;
                if (enum_number(c, ini, items, k, &num) < 0) return -1;
                if (rb_varint(b, (uint64_t)(int64_t)num) < 0) return -1;
            } else if (put_scalar_here(c, item, items, k, 0) < 0) return -1;
        }
        if (rb_varint(b, rb_used(b) - mark) < 0 || rb_tag(b, e) < 0) return -1;
        return 0;
    }
    for (int64_t k = hi - 1; k >= lo; k--) {
        if (!valid_at(items, k)) return fail_at(c, item, "null, but a list item is never null");
        if (item->kind == AK_STRUCT && e->group) {
            if (put_tag(b, e->number, 4) < 0 || put_struct_body(c, ini, items, k, level) < 0 ||
                put_tag(b, e->number, 3) < 0) return -1;
            continue;
        }
        if (item->kind == AK_STRUCT) {  /* put_value's work for a sub-message (items fitted, k inside: span()) */
            size_t mark = rb_used(b);
            if (put_struct_body(c, ini, items, k, level) < 0 || rb_varint(b, rb_used(b) - mark) < 0 || rb_tag(b, e) < 0)
                return -1;
            continue;
        }
        if (put_value(c, ini, items, k, level) < 0 || rb_tag(b, e) < 0) return -1;  /* the item's wire type */
    }
    return 0;
}

/* one field of a struct: step e over column array a (element i) of node cn (the caller has fitted the array and
 * checked that it holds element i); -2: a map with entries (put_map) */
static int put_field(ECall *c, const EStep *e, int cni, const struct ArrowArray *a, int64_t i, int level)
{
    ENode *cn = &c->pl->nodes[cni];
    RBuf *b = &c->out;
    if (cn->kind == AK_LIST) return put_list(c, e, cn, a, i, level);
    if (cn->kind == AK_MAP) {
        if (!valid_at(a, i)) return fail_at(c, cn, "null, but a map is never null (an empty map)");
        const struct ArrowArray *entries = a->children[0];
        if (entries == NULL || entries->n_children != 2 || entries->children == NULL || entries->offset < 0)
            return bad_array(c, cn);
        int64_t lo, hi;
        if (span(c, cn, a, i, entries->length, &lo, &hi) < 0) return -1;
        if (lo == hi) return 0;
        return -2;  /* maps: put_map (needs sorting) */
    }
    if (!valid_at(a, i)) {
        if (cn->nullable) return 0;
        return fail_at(c, cn, "null, but the field has no presence");
    }
    int implicit = e->label == L_IMPLICIT;
    switch (cn->kind) {
    case AK_SCALAR: {
        int r = put_scalar(c, cn, a, i, implicit);
        if (r < 0) return -1;
        if (r == 0) return 0;
        return rb_tag(b, e);
    }
    case AK_ENUM: {
        int32_t num;
        if (enum_number(c, cni, a, i, &num) < 0) return -1;
        if (implicit && num == 0) return 0;
        if (rb_varint(b, (uint64_t)(int64_t)num) < 0) return -1;
        return rb_tag(b, e);
    }
    case AK_STRUCT:
        if (e->group)
            return put_tag(b, e->number, 4) < 0 || put_struct_body(c, cni, a, i, level) < 0 ||
                   put_tag(b, e->number, 3) < 0 ? -1 : 0;
        /* fall through */
    default:
        if (put_value(c, cni, a, i, level) < 0) return -1;
        return rb_tag(b, e);
    }
}

typedef struct {
    int64_t index;     /* the entry */
    uint64_t u;        /* an integer key, made unsigned-comparable */
    const uint8_t *s;  /* a string key */
    int64_t n;
} EKey;

static int cmp_keys(const void *x, const void *y)
{
    const EKey *a = x, *b = y;
    if (a->s != NULL || b->s != NULL) {
        int64_t n = a->n < b->n ? a->n : b->n;
        int r = n > 0 ? memcmp(a->s, b->s, (size_t)n) : 0;
        if (r) return r;
        if (a->n != b->n) return a->n < b->n ? -1 : 1;
    } else if (a->u != b->u) return a->u < b->u ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;  /* stable: equal keys keep their order */
}

/* a map's entries [lo, hi): sorted by key, the last of equal keys kept, each written as an entry message */
static int put_map(ECall *c, const EStep *e, int cni, const struct ArrowArray *a, int64_t i, int level)
{
    ENode *cn = &c->pl->nodes[cni];
    const struct ArrowArray *entries = a->children[0];
    const struct ArrowArray *keys = entries->children[0], *vals = entries->children[1];
    int kni = cn->children[0], vni = cn->children[1];
    ENode *kn = &c->pl->nodes[kni], *vn = &c->pl->nodes[vni];
    if (fits(c, kn, keys) < 0 || fits(c, vn, vals) < 0) return -1;
    int64_t lo, hi;
    if (span(c, cn, a, i, entries->length, &lo, &hi) < 0) return -1;
    int64_t count = hi - lo;
    EKey *order = malloc((size_t)count * sizeof(EKey));
    if (order == NULL) { PyErr_NoMemory(); return -1; }
    int rc = -1;
    for (int64_t k = 0; k < count; k++) {
        int64_t at = entries->offset + lo + k;  /* the struct's own offset, then each child's */
        int64_t ki = at, vi = at;
        if (in_range(c, kn, keys, ki) < 0 || in_range(c, vn, vals, vi) < 0) goto done;
        if (!valid_at(keys, ki)) { fail_at(c, kn, "null, but a map key is never null"); goto done; }
        if (!valid_at(vals, vi)) { fail_at(c, vn, "null, but a map value is never null"); goto done; }
        EKey *o = &order[k];
        o->index = at;
        o->s = NULL;
        o->n = 0;
        o->u = 0;
        int64_t j = keys->offset + ki;
        const void *buf = keys->buffers[1];
        switch (kn->type) {
        case T_STRING: {
            int64_t s0, s1;
            if (span(c, kn, keys, ki, data_end(keys), &s0, &s1) < 0) goto done;
            o->s = (const uint8_t *)keys->buffers[2] + s0;
            o->n = s1 - s0;
            if (s1 > s0 && keys->buffers[2] == NULL) { bad_array(c, kn); goto done; }
            if (o->s == NULL) o->s = (const uint8_t *)"";
            break;
        }
        case T_BOOL: o->u = (((const uint8_t *)buf)[j >> 3] >> (j & 7)) & 1; break;
        case T_INT64: case T_SINT64: case T_SFIXED64: {
            int64_t v; memcpy(&v, (const uint8_t *)buf + 8 * j, 8);
            o->u = (uint64_t)v ^ (UINT64_C(1) << 63);
            break;
        }
        case T_UINT64: case T_FIXED64: memcpy(&o->u, (const uint8_t *)buf + 8 * j, 8); break;
        case T_INT32: case T_SINT32: case T_SFIXED32: {
            int32_t v; memcpy(&v, (const uint8_t *)buf + 4 * j, 4);
            o->u = (uint64_t)(int64_t)v ^ (UINT64_C(1) << 63);
            break;
        }
        case T_UINT32: case T_FIXED32: { uint32_t v; memcpy(&v, (const uint8_t *)buf + 4 * j, 4); o->u = v; break; }
        default: bad_array(c, kn); goto done;
        }
    }
    qsort(order, (size_t)count, sizeof(EKey), cmp_keys);
    RBuf *b = &c->out;
    for (int64_t k = count - 1; k >= 0; k--) {
        if (k + 1 < count) {  /* a key equal to the next one's: that later entry was written, it wins */
            EKey x = order[k], y = order[k + 1];
            x.index = y.index = 0;
            if (cmp_keys(&x, &y) == 0) continue;
        }
        int64_t at = order[k].index;
        size_t mark = rb_used(b);
        /* value (field 2), then key (field 1), both always written */
        if (vn->kind == AK_ENUM) {
            int32_t num;
            if (enum_number(c, vni, vals, at, &num) < 0) goto done;
            if (rb_varint(b, (uint64_t)(int64_t)num) < 0 || put_tag(b, 2, 0) < 0) goto done;
        } else if (vn->kind == AK_SCALAR) {
            if (put_scalar(c, vn, vals, at, 0) < 0 || put_tag(b, 2, wire_of(vn->type)) < 0) goto done;
        } else {
            if (put_value(c, vni, vals, at, level) < 0 || put_tag(b, 2, 2) < 0) goto done;
        }
        if (put_scalar(c, kn, keys, at, 0) < 0 || put_tag(b, 1, wire_of(kn->type)) < 0) goto done;
        if (rb_varint(b, rb_used(b) - mark) < 0 || rb_tag(b, e) < 0) goto done;
    }
    rc = 0;
done:
    free(order);
    return rc;
}

/* the member set in oneof column `col` (node cn) at element ci: its position, or -1 when the oneof is null
 * (check_struct() has checked the column, its `which` child and mapped that child's dictionary) */
static inline int oneof_member(ECall *c, const ENode *cn, const struct ArrowArray *col, int64_t ci, int64_t *out)
{
    *out = -1;
    if (!valid_at(col, ci)) return 0;
    const struct ArrowArray *which = col->children[0];
    const EDict *dc = &c->dicts[cn->me];
    if (dc->seen == NULL) return bad_array(c, cn);  /* a row set where the column said none is */
    int32_t idx;
    memcpy(&idx, (const uint8_t *)which->buffers[1] + 4 * (which->offset + col->offset + ci), 4);
    if (idx < 0 || idx >= dc->len) return bad_array(c, cn);
    if (dc->map[idx] == NO_NAME) return fail_at(c, cn, "a member name that is no member of the oneof");
    *out = dc->map[idx];
    return 0;
}

/* the row of oneof column `col` (node cn) at element ci sets member `set`: no other member's column holds a
 * value there (from_arrow would drop it: lost data); a member column with no value at all is not read */
static int only_member_set(ECall *c, const ENode *cn, const struct ArrowArray *col, int64_t ci, int64_t set)
{
    int64_t mi = col->offset + ci;
    for (int m = 0; m < cn->nchildren; m++) {
        if (m == set) continue;
        const ENode *mn = &c->pl->nodes[cn->children[m]];
        const struct ArrowArray *mcol = col->children[m + 1];
        if (fits(c, mn, mcol) < 0) return -1;
        if (mcol->null_count == mcol->length) continue;
        if (in_range(c, mn, mcol, mi) < 0) return -1;
        if (valid_at(mcol, mi)) {  /* the members by name: their column paths less the oneof's */
            const char *named = c->pl->nodes[cn->children[set]].label, *other = mn->label;
            size_t skip = strlen(cn->label);
            if (strncmp(named, cn->label, skip) == 0 && named[skip] == '.') named += skip + 1;
            if (strncmp(other, cn->label, skip) == 0 && other[skip] == '.') other += skip + 1;
            PyErr_Format(PyExc_ValueError, "column '%s' row %lld: the member set is '%s', but '%s' holds a value too",
                         cn->label, (long long)c->row, named, other);
            return -1;
        }
    }
    return 0;
}

/* once per call and struct node (its array `a`): every child array fits its node and holds the rows of `a`
 * (from a->offset: a struct's offset applies to its children), and a oneof's `which` child (its member names,
 * dictionary-encoded) holds those of the oneof, its dictionary mapped; a row then reads its fields' arrays
 * with no check of its own but their validity */
static int check_struct(ECall *c, const ENode *n, const struct ArrowArray *a)
{
    int64_t end = a->offset + a->length;  /* both at most 2**40 (read_record) */
    if (a->n_children != n->nchildren || (n->nchildren && a->children == NULL)) return bad_array(c, n);
    for (int ch = 0; ch < n->nchildren; ch++) {
        int cni = n->children[ch];
        const ENode *cn = &c->pl->nodes[cni];
        const struct ArrowArray *col = a->children[ch];
        if (fits(c, cn, col) < 0) return -1;
        if (col->length < end) return bad_array(c, cn);
        if (cn->kind != AK_ONEOF) continue;
        const struct ArrowArray *which = col->children[0];
        if (which == NULL || which->n_buffers != 2 || which->buffers == NULL || which->buffers[1] == NULL ||
            which->offset < 0 || which->length < col->offset + col->length || which->private_data == NULL ||
            ((const ESizes *)which->private_data)->size[1] < 4 * (which->offset + which->length)) {
            if (col->null_count == col->length) continue;  /* no member in any row: no children (not mapped) */
            return bad_array(c, cn);
        }
        EDict *dc;
        if (map_dictionary(c, cn, cni, which, &dc) < 0) return -1;
    }
    c->checked[n->me] = a;
    return 0;
}

/* a set oneof member's field (step e of struct node n, whose row is element ci of its children) */
static int put_member(ECall *c, const ENode *n, const EStep *e, const struct ArrowArray *a, int64_t ci, int level)
{
    (void)n;
    const ENode *cn = e->node;
    const struct ArrowArray *col = a->children[e->child];
    int64_t mi = col->offset + ci;
    int mni = cn->children[e->member];
    ENode *mn = &c->pl->nodes[mni];
    const struct ArrowArray *mcol = col->children[e->member + 1];
    if (fits(c, mn, mcol) < 0 || in_range(c, mn, mcol, mi) < 0) return -1;
    if (!valid_at(mcol, mi)) return fail_at(c, mn, "the member set is null");
    EStep me = *e;
    me.label = L_EXPLICIT;  /* a member set is written, zero or not */
    int r = put_field(c, &me, mni, mcol, mi, level);
    if (r == -2) r = put_map(c, &me, mni, mcol, mi, level);
    return r;
}

/* the fields of a struct row, back to front: first the member set in each oneof (their steps, ascending, in
 * the node's scratch of c->sets), then the plain steps and those merged by step (field-number order) */
static int put_struct_fields(ECall *c, int ni, const struct ArrowArray *a, int64_t i, int level)
{
    const ENode *n = &c->pl->nodes[ni];
    if (c->checked[ni] != a && check_struct(c, n, a) < 0) return -1;
    if (i < 0 || i >= a->length) return bad_array(c, n);
    int64_t ci = a->offset + i;  /* a struct's offset applies to its children */
    int *sets = c->sets + n->scratch;
    int nset = 0;
    for (int o = 0; o < n->noneofs; o++) {
        int ch = n->oneofs[o];
        const ENode *cn = &c->pl->nodes[n->children[ch]];
        int64_t set;
        if (oneof_member(c, cn, a->children[ch], ci, &set) < 0) return -1;
        if (set < 0 || set >= cn->nchildren) continue;  /* none set (map_dictionary gives positions < nchildren) */
        if (only_member_set(c, cn, a->children[ch], ci, set) < 0) return -1;
        int s = n->msteps[n->oneof_first[o] + set];
        if (s < 0) continue;
        int k = nset++;
        while (k > 0 && sets[k - 1] > s) { sets[k] = sets[k - 1]; k--; }
        sets[k] = s;
    }
    int p = n->nplain - 1, q = nset - 1;
    while (p >= 0 || q >= 0) {
        if (q >= 0 && (p < 0 || sets[q] > n->plain[p])) {
            if (put_member(c, n, &n->steps[sets[q--]], a, ci, level) < 0) return -1;
            continue;
        }
        const EStep *e = &n->steps[n->plain[p--]];
        const ENode *cn = e->node;
        const struct ArrowArray *col = a->children[e->child];  /* check_struct(): fits, holds element ci */
        if (cn->kind != AK_LIST && cn->kind != AK_MAP && !valid_at(col, ci)) {  /* put_field's first checks */
            if (cn->nullable) continue;
            return fail_at(c, cn, "null, but the field has no presence");
        }
        if (cn->kind == AK_SCALAR) {  /* put_field's most common case, without its call */
            int r = put_scalar_here(c, cn, col, ci, e->label == L_IMPLICIT);
            if (r < 0 || (r == 1 && rb_tag(&c->out, e) < 0)) return -1;
            continue;
        }
        if (cn->kind == AK_STRUCT && !e->group) {  /* a sub-message: put_field, put_value, put_struct_body's work */
            size_t mark = rb_used(&c->out);
            if (put_struct_body(c, cn->me, col, ci, level) < 0 || rb_varint(&c->out, rb_used(&c->out) - mark) < 0 ||
                rb_tag(&c->out, e) < 0) return -1;
            continue;
        }
        int r = put_field(c, e, cn->me, col, ci, level);
        if (r == -2) r = put_map(c, e, cn->me, col, ci, level);
        if (r < 0) return -1;
    }
    return 0;
}

static inline int put_struct_body(ECall *c, int ni, const struct ArrowArray *a, int64_t i, int level)
{
    if (level >= MAX_LEVEL) return fail_at(c, &c->pl->nodes[ni], "nested deeper than the engine goes");
    return put_struct_fields(c, ni, a, i, level + 1);
}

/* a message-like value's body (its length not written): struct, time, wrapper, present, encoded */
static int put_value(ECall *c, int ni, const struct ArrowArray *a, int64_t i, int level)
{
    ENode *n = &c->pl->nodes[ni];
    RBuf *b = &c->out;
    if (fits(c, n, a) < 0 || in_range(c, n, a, i) < 0) return -1;
    size_t mark = rb_used(b);
    switch (n->kind) {
    case AK_SCALAR:
        if (put_scalar(c, n, a, i, 0) < 0) return -1;
        return 0;  /* a list item or a map value: the caller writes the tag */
    case AK_ENUM: {
        int32_t num;
        if (enum_number(c, ni, a, i, &num) < 0) return -1;
        return rb_varint(b, (uint64_t)(int64_t)num);
    }
    case AK_STRUCT:
        if (put_struct_body(c, ni, a, i, level) < 0) return -1;
        break;
    case AK_TIME: {
        int64_t total;
        memcpy(&total, (const uint8_t *)a->buffers[1] + 8 * (a->offset + i), 8);
        int64_t s, ns;
        if (n->duration) {  /* seconds and nanos of one sign */
            s = total / 1000000000;
            ns = total % 1000000000;
        } else {            /* floor: nanos in 0..999,999,999 */
            s = total / 1000000000;
            ns = total % 1000000000;
            if (ns < 0) { ns += 1000000000; s -= 1; }
        }
        for (int k = n->nsteps - 1; k >= 0; k--) {
            const EStep *e = &n->steps[k];
            int64_t v = e->child == 0 ? s : ns;
            if (e->label == L_IMPLICIT && v == 0) continue;
            uint64_t w = e->child == 0 ? (uint64_t)v : (uint64_t)(int64_t)(int32_t)v;
            if (rb_varint(b, w) < 0 || rb_tag(b, e) < 0) return -1;
        }
        break;
    }
    case AK_WRAPPER: {
        const EStep *e = &n->steps[0];
        ENode *vn = &c->pl->nodes[n->children[0]];
        if (fits(c, vn, a) < 0) return -1;
        if (vn->kind == AK_ENUM) {
            int32_t num;
            if (enum_number(c, n->children[0], a, i, &num) < 0) return -1;
            if (!(e->label == L_IMPLICIT && num == 0) &&
                (rb_varint(b, (uint64_t)(int64_t)num) < 0 || rb_tag(b, e) < 0)) return -1;
            break;
        }
        int r = put_scalar(c, vn, a, i, e->label == L_IMPLICIT);
        if (r < 0) return -1;
        if (r == 1 && rb_tag(b, e) < 0) return -1;
        break;
    }
    case AK_PRESENT:
        break;
    case AK_ENCODED: {
        int64_t lo, hi;
        if (span(c, n, a, i, data_end(a), &lo, &hi) < 0) return -1;
        if (hi > lo && a->buffers[2] == NULL) return bad_array(c, n);
        if (rb_put(b, (const uint8_t *)a->buffers[2] + lo, (size_t)(hi - lo)) < 0) return -1;
        break;
    }
    default:
        return bad_array(c, n);
    }
    return rb_varint(b, rb_used(b) - mark);
}

/* ---- the arrays of a call, from records ---- */

#define MAX_ROWS (INT64_C(1) << 40)

/* the arrays encode() reads: made from pbj/arrow/encode.py's records, each buffer a Python object with the
 * buffer protocol (a pyarrow.Buffer), held and its size known while the call runs */
typedef struct {
    Py_ssize_t n;
    struct ArrowArray *arrays;
    ESizes *sizes;
    const void **buffers;           /* 3 per array */
    Py_buffer *views;               /* 3 per array; obj NULL where no view was taken */
    struct ArrowArray **children;   /* every array's children, one run each */
    uint8_t *zeros;                 /* the validity of an array all of whose rows are null, made here */
} ERecords;

/* what a record's child -1 points to: no array (fits() refuses it; it is never read: its parent's rows are null) */
static const struct ArrowArray no_array = {0};

static void free_records(ERecords *r)
{
    if (r->views != NULL)
        for (Py_ssize_t k = 0; k < 3 * r->n; k++) if (r->views[k].obj != NULL) PyBuffer_Release(&r->views[k]);
    free(r->arrays);
    free(r->sizes);
    free(r->buffers);
    free(r->views);
    free(r->children);
    free(r->zeros);
}

static int record_error(Py_ssize_t i, const char *what)
{
    PyErr_Format(PyExc_ValueError, "arrow encode: record %zd: %s", i, what);
    return -1;
}

/* a record: (length, offset, null_count, buffers: tuple of buffer or None, children: tuple of record indices
 * (each after this one; -1: never read), dictionary: a record index after this one or -1) */
static int read_record(ERecords *r, Py_ssize_t i, PyObject *rec, Py_ssize_t *next_child, int64_t *most_null)
{
    if (!PyTuple_Check(rec) || PyTuple_GET_SIZE(rec) != 6) return record_error(i, "not a 6-tuple");
    long long v[3];
    for (int k = 0; k < 3; k++) {
        v[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(rec, k));
        if (v[k] == -1 && PyErr_Occurred()) return -1;
        if (v[k] < 0 || v[k] > MAX_ROWS) return record_error(i, "length, offset or null count out of range");
    }
    struct ArrowArray *a = &r->arrays[i];
    a->length = v[0];
    a->offset = v[1];
    a->null_count = v[2];
    if (a->null_count > a->length) return record_error(i, "more nulls than rows");
    PyObject *bufs = PyTuple_GET_ITEM(rec, 3), *kids = PyTuple_GET_ITEM(rec, 4), *dict = PyTuple_GET_ITEM(rec, 5);
    if (!PyTuple_Check(bufs) || PyTuple_GET_SIZE(bufs) < 1 || PyTuple_GET_SIZE(bufs) > 3 || !PyTuple_Check(kids))
        return record_error(i, "buffers or children");
    a->n_buffers = PyTuple_GET_SIZE(bufs);
    a->buffers = &r->buffers[3 * i];
    a->private_data = &r->sizes[i];
    for (Py_ssize_t k = 0; k < a->n_buffers; k++) {
        PyObject *b = PyTuple_GET_ITEM(bufs, k);
        if (b == Py_None) continue;
        Py_buffer *view = &r->views[3 * i + k];
        if (PyObject_GetBuffer(b, view, PyBUF_SIMPLE) < 0) return -1;
        r->buffers[3 * i + k] = view->buf;
        r->sizes[i].size[k] = view->len;
    }
    if (a->null_count > 0 && a->buffers[0] == NULL) {
        if (a->null_count != a->length || a->offset != 0) return record_error(i, "nulls but no validity bitmap");
        if (a->length > *most_null) *most_null = a->length;  /* all null: a bitmap of zeros, made below */
    }
    Py_ssize_t nk = PyTuple_GET_SIZE(kids);
    a->n_children = nk;
    a->children = &r->children[*next_child];
    for (Py_ssize_t k = 0; k < nk; k++) {
        long long j = PyLong_AsLongLong(PyTuple_GET_ITEM(kids, k));
        if (j == -1 && PyErr_Occurred()) return -1;
        if (j != -1 && (j <= i || j >= r->n)) return record_error(i, "a child that is not a later record");
        a->children[k] = j == -1 ? (struct ArrowArray *)&no_array : &r->arrays[j];
    }
    *next_child += nk;
    long long d = PyLong_AsLongLong(dict);
    if (d == -1 && PyErr_Occurred()) return -1;
    if (d != -1 && (d <= i || d >= r->n)) return record_error(i, "a dictionary that is not a later record");
    a->dictionary = d == -1 ? NULL : &r->arrays[d];
    return 0;
}

static int read_records(ERecords *r, PyObject *records)
{
    memset(r, 0, sizeof *r);
    Py_ssize_t n = PyTuple_GET_SIZE(records), total = 0;
    if (n < 0 || n > (Py_ssize_t)1 << 26) { PyErr_SetString(PyExc_ValueError, "arrow encode: too many records"); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *rec = PyTuple_GET_ITEM(records, i);
        if (!PyTuple_Check(rec) || PyTuple_GET_SIZE(rec) != 6 || !PyTuple_Check(PyTuple_GET_ITEM(rec, 4)))
            return record_error(i, "not a 6-tuple");
        total += PyTuple_GET_SIZE(PyTuple_GET_ITEM(rec, 4));
    }
    r->n = n;
    size_t m = n > 0 ? (size_t)n : 1;
    r->arrays = calloc(m, sizeof(struct ArrowArray));
    r->sizes = calloc(m, sizeof(ESizes));
    r->buffers = calloc(3 * m, sizeof(void *));
    r->views = calloc(3 * m, sizeof(Py_buffer));
    r->children = calloc((size_t)(total ? total : 1), sizeof(struct ArrowArray *));
    if (!r->arrays || !r->sizes || !r->buffers || !r->views || !r->children) { PyErr_NoMemory(); return -1; }
    Py_ssize_t next_child = 0;
    int64_t most_null = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (read_record(r, i, PyTuple_GET_ITEM(records, i), &next_child, &most_null) < 0) return -1;
    if (most_null > 0) {
        r->zeros = calloc((size_t)(most_null + 7) / 8, 1);
        if (r->zeros == NULL) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t i = 0; i < n; i++) {
            struct ArrowArray *a = &r->arrays[i];
            if (a->null_count > 0 && a->buffers[0] == NULL) {
                a->buffers[0] = r->zeros;
                r->sizes[i].size[0] = (a->length + 7) / 8;
            }
        }
    }
    return 0;
}

/* encode(plan, records, columns, rows) -> list[bytes], one per row: `records` describe the arrays (see
 * read_record), `columns` (a tuple of record indices) are the table's columns, read as the children of a struct
 * of `rows` rows with no nulls. pbj/arrow/encode.py makes the records from pyarrow arrays, their buffers as
 * pyarrow.Buffer objects, leaving out the children of a struct whose rows are all null: exporting every array of a
 * wide table through the C Data Interface, and Arrow's validation of them, cost more than the walk. */
static PyObject *encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4 || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "encode(plan, records: tuple, columns: tuple, rows)");
        return NULL;
    }
    EPlan *pl = PyCapsule_GetPointer(args[0], EPLAN_CAPSULE);
    if (pl == NULL) return NULL;
    long long rows = PyLong_AsLongLong(args[3]);
    if (rows == -1 && PyErr_Occurred()) return NULL;
    if (rows < 0 || rows > MAX_ROWS) { PyErr_SetString(PyExc_ValueError, "encode: rows out of range"); return NULL; }
    ERecords recs;
    PyObject *out = NULL;
    ECall call = {pl, {NULL, 0, 0}, 0, NULL, NULL, NULL, NULL};
    Py_ssize_t k = PyTuple_GET_SIZE(args[2]);
    struct ArrowArray **columns = calloc((size_t)(k ? k : 1), sizeof(struct ArrowArray *));
    if (columns == NULL) return PyErr_NoMemory();
    if (read_records(&recs, args[1]) < 0) goto done;
    for (Py_ssize_t j = 0; j < k; j++) {
        long long at = PyLong_AsLongLong(PyTuple_GET_ITEM(args[2], j));
        if (at == -1 && PyErr_Occurred()) goto done;
        if (at < 0 || at >= recs.n) { PyErr_SetString(PyExc_ValueError, "encode: a column's record"); goto done; }
        columns[j] = &recs.arrays[at];
    }
    const void *no_validity[1] = {NULL};
    ESizes no_sizes = {{0, 0, 0}};
    struct ArrowArray root = {.length = rows, .n_buffers = 1, .buffers = no_validity, .n_children = k,
                              .children = columns, .private_data = &no_sizes};
    call.dicts = calloc((size_t)pl->nnodes, sizeof(EDict));
    call.fitted = calloc((size_t)pl->nnodes, sizeof(struct ArrowArray *));
    call.sets = calloc((size_t)(pl->nscratch ? pl->nscratch : 1), sizeof(int));
    call.checked = calloc((size_t)pl->nnodes, sizeof(struct ArrowArray *));
    if (call.dicts == NULL || call.fitted == NULL || call.sets == NULL || call.checked == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (fits(&call, &pl->nodes[0], &root) < 0) goto done;
    out = PyList_New(rows);
    if (out == NULL) goto done;
    for (int64_t r = 0; r < rows; r++) {
        call.row = r;
        call.out.pos = call.out.cap;
        if (put_struct_fields(&call, 0, &root, r, 0) < 0) { Py_CLEAR(out); goto done; }
        PyObject *row = PyBytes_FromStringAndSize((const char *)call.out.mem + call.out.pos,
                                                  (Py_ssize_t)rb_used(&call.out));
        if (row == NULL) { Py_CLEAR(out); goto done; }
        PyList_SET_ITEM(out, r, row);
    }
done:
    free(call.out.mem);
    if (call.dicts != NULL) for (int j = 0; j < pl->nnodes; j++) free(call.dicts[j].map);
    free(call.dicts);
    free(call.fitted);
    free(call.sets);
    free(call.checked);
    free(columns);
    free_records(&recs);
    return out;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(layout): the codes Python sends (pbj._native.layout()), checked against this build's (ImportError)."},
    {"plan", (PyCFunction)(void (*)(void))plan, METH_FASTCALL,
     "plan(nodes) -> the writer's plan of a column tree (pbj/arrow/encode.py)."},
    {"encode", (PyCFunction)(void (*)(void))encode, METH_FASTCALL,
     "encode(plan, records, columns, rows) -> list of each row's encoding (records: the arrays, made by "
     "pbj/arrow/encode.py; columns: the record index of each of the table's columns)."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    /* as the engine's module (module.c): not declared free of the GIL until the suite has run on such a build */
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "pbj._native._arrow",
    "Arrow columns to encoded messages (pbj.arrow.encode_from_arrow): see arrow_encode.c.", sizeof(AState), methods,
    slots,
    NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__arrow(void)
{
    return PyModuleDef_Init(&module);
}
