/* count.c: a sink that counts the values of each field (the worked example of docs/codec-protobuf.md,
 * "How to add a sink").
 *
 *   count_values(plan, data, max_depth) -> {(message class, field name): count}
 *
 * Every value the walker reads is counted under its class and field: a scalar, each element of a
 * packed run, a string, a sub-message (and the values inside it, under its own class), a map entry.
 * A singular sub-message that occurs again is counted again (its occurrences are walked, merged,
 * as they are for pbj.decode). Unknown fields and extensions are not counted (extensions are read,
 * as pbj.decode reads them, and refused alike). An input that is not a valid
 * encoding raises the DecodeError pbj.decode raises (the walker's error exit); None: valid input
 * the walker leaves to Python (nesting deeper than the engine's own limit).
 *
 * A sink is: a frame of its own per message (here: the message's class, and the call's dict), the
 * functions of a PbjSink (walk.h), each reading its value with read.h's readers, and a message
 * function that inlines pbj_walk with the sink. That is all this file is.
 */
#include "walk.h"

typedef struct {
    PyObject *counts;   /* the call's dict, borrowed */
    NMessage *m;
    Py_ssize_t *here;   /* per field of m: the values counted in this message (an error path's index) */
} Counter;

static int count_message(Ctx *c, PyObject *counts, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                         uint32_t group_end, const uint8_t **after, const Span *more, Py_ssize_t nmore);

/* counts[(class, name)] += n */
static int add(Counter *k, NField *f, Py_ssize_t n)
{
    k->here[f - k->m->fields] += n;
    PyObject *key = PyTuple_Pack(2, (PyObject *)k->m->cls, f->name);
    if (!key) return -1;
    PyObject *was = PyDict_GetItemWithError(k->counts, key);
    Py_ssize_t before = was ? PyLong_AsSsize_t(was) : 0;
    PyObject *now = PyErr_Occurred() ? NULL : PyLong_FromSsize_t(before + n);
    int r = now ? PyDict_SetItem(k->counts, key, now) : -1;
    Py_XDECREF(now);
    Py_DECREF(key);
    return r;
}

/* a scalar, string or bytes value: read (as pbj.decode reads it: a string must be UTF-8), counted */
static int count_value(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t **pp, const uint8_t *end)
{
    int32_t raw = 0;
    PyObject *v = pbj_value_object(f, f->type, pp, end, &raw);
    if (!v) return -1;
    Py_DECREF(v);
    return v == Py_None ? PBJ_KEEP : add(fr, f, 1);  /* a closed enum's non-member: an unknown field */
}

static int count_packed(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, NField *f, int fidx, const uint8_t *p,
                        const uint8_t *e)
{
    Py_ssize_t n = 0;
    if (f->width > 1 && (e - p) % f->width) return -1;
    while (p < e) {
        int32_t raw = 0;
        const uint8_t *vs = p;
        PyObject *v = pbj_scalar_value(f, f->type, &p, e, &raw);
        if (!v) return -1;
        Py_DECREF(v);
        if (v == Py_None) {
            if (pbj_keep_packed_enum(&wf->unk, f->number, vs, e) < 0) return -1;
            continue;
        }
        n++;
    }
    return add(fr, f, n);
}

static int count_sub(Ctx *c, void *fr, NMessage *m, NField *f, int fidx, const uint8_t *p, const uint8_t *e,
                     const Span *more, Py_ssize_t nmore, int depth, int mode, uint32_t group_end,
                     const uint8_t **after)
{
    Counter *k = fr;
    if (mode == PBJ_SUB_FIRST)  /* counted once walked: while it is, the elements before it are its index */
        return count_message(c, k->counts, f->subm, p, e, depth, group_end, after, NULL, 0) < 0 ? -1 : add(k, f, 1);
    if (mode == PBJ_SUB_MAP && nmore == 0)
        return count_message(c, k->counts, f->subm, p, e, depth, group_end, after, NULL, 0);
    /* all the occurrences of one (merged, or superseded and checked): the first was walked and
     * counted when it came, each later one counted then (count_repeat): the later ones are walked */
    if (nmore == 0) return 0;
    return count_message(c, k->counts, f->subm, more[0].s, more[0].e, depth, 0, NULL, more + 1, nmore - 1);
}

static int count_repeat(Ctx *c, void *fr, NMessage *m, NField *f, int fidx)
{
    return f->label == L_MAP ? 0 : add(fr, f, 1);
}

static int count_map_begin(Ctx *c, void *fr, NMessage *m, NField *f)
{
    return 0;
}

/* a map's key or scalar value: read and checked, not counted (the entry is) */
static int count_map_part(Ctx *c, NField *f, int type, const uint8_t **pp, const uint8_t *end)
{
    int32_t raw = 0;
    PyObject *v = pbj_value_object(f, type, pp, end, &raw);
    if (!v) return -1;
    Py_DECREF(v);
    return v == Py_None ? PBJ_KEEP : 0;
}

static int count_map_key(Ctx *c, void *fr, NMessage *m, NField *f, const uint8_t **pp, const uint8_t *end)
{
    return count_map_part(c, f, f->key, pp, end);
}

static int count_map_value(Ctx *c, void *fr, NMessage *m, NField *f, const uint8_t **pp, const uint8_t *end)
{
    return count_map_part(c, f, f->type, pp, end);
}

static int count_map_end(Ctx *c, void *fr, NMessage *m, NField *f, int keep, int depth)
{
    return keep > 0 ? add(fr, f, 1) : 0;
}

/* the message's registered extensions are read (not counted), so that an invalid one is refused as
 * pbj.decode refuses it */
static int count_end(Ctx *c, void *fr, WalkFrame *wf, NMessage *m, int depth)
{
    return pbj_check_extensions(c, m, &wf->unk, depth);
}

/* the elements of repeated field f in this message so far (not the call's count: messages of one
 * class nest, and each has its own elements) */
static Py_ssize_t count_count(void *fr, NMessage *m, NField *f)
{
    Counter *k = fr;
    return k->here[f - m->fields];
}

static const PbjSink COUNTS = {
    .value = count_value,
    .packed = count_packed,
    .message = count_sub,
    .repeat = count_repeat,
    .map_begin = count_map_begin,
    .map_key = count_map_key,
    .map_value = count_map_value,
    .map_end = count_map_end,
    .end = count_end,
    .count = count_count,
};

static int count_message(Ctx *c, PyObject *counts, NMessage *m, const uint8_t *p, const uint8_t *end, int depth,
                         uint32_t group_end, const uint8_t **after, const Span *more, Py_ssize_t nmore)
{
    Py_ssize_t stack_here[16];
    Counter k = {counts, m, stack_here};
    if (m->nfields > 16 && !(k.here = PyMem_Calloc(m->nfields, sizeof(Py_ssize_t)))) {
        c->declined = 1;  /* no memory: declined, as the walker declines it */
        return -1;
    }
    if (k.here == stack_here) memset(stack_here, 0, sizeof(stack_here));
    int r = pbj_walk(&COUNTS, c, m, &k, p, end, depth, group_end, after, more, nmore);
    if (k.here != stack_here) PyMem_Free(k.here);
    return r;
}

/* count_values(plan, data: bytes, max_depth) -> {(class, field name): count}, or None (declined) */
PyObject *pbj_count_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "count_values(plan, data: bytes, max_depth)");
        return NULL;
    }
    NMessage *m = pbj_message_of(args[0]);
    long depth = PyLong_AsLong(args[2]);
    if (!m || (depth == -1 && PyErr_Occurred())) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "count_values: not a plan");
        return NULL;
    }
    PyObject *data = args[1], *counts = PyDict_New();
    if (!counts) return NULL;
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(data);
    Ctx c = {0};
    c.st = pbj_state(self);
    c.data = p;
    c.data_end = p + PyBytes_GET_SIZE(data);
    c.group_found = -1;
    c.err_offset = -1;
    Py_INCREF(data);
    int r = count_message(&c, counts, m, p, c.data_end, depth > INT32_MAX ? INT32_MAX : (int)depth, 0, NULL, NULL, 0);
    Py_DECREF(data);
    if (r == 0) return counts;
    Py_DECREF(counts);
    PyErr_Clear();
    PyObject *err = c.declined ? NULL : pbj_walk_error(&c);
    pbj_walk_clear(&c);
    if (!err) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyErr_SetObject((PyObject *)Py_TYPE(err), err);
    Py_DECREF(err);
    return NULL;
}
