/* required.c: the proto2 required-field check of pbj.decode and pbj.encode, in C.
 *
 * protobuf.dev "Language Guide (proto2)", "Required": a message whose required field is not set
 * (at any depth) is refused by decode and encode unless allow_partial. pbj.required decides once
 * per class which classes can miss one and walks an object tree along the fields that can lead
 * to one (its walk plan, _plan). This file runs that walk in C: pbj_required_ok answers "every
 * required field is set" (1) for the common case; anything else (one is missing, or the walk
 * cannot tell: extensions present, an object of an unexpected type, nesting past the engine's
 * limit) makes the caller run pbj.required's Python check, which raises the error with every
 * missing path, exactly as before. So the text and paths of the errors stay the Python ones, and
 * the C walk only has to be right when it says 1.
 *
 * The table: per class, built from pbj.required.native_steps(cls) (the class's state list and
 * its walk plan, each step (attribute, required, shape, oneof member)) and the class's NMessage
 * (slot offsets, sub-message plans), kept in a capsule appended to that state list (so it dies
 * with the list: pbj.required.forget_answers drops every class's list when an extension that can
 * hold a required field is registered). A table links to the tables of the sub-message classes
 * its steps walk into, without references: each table records the generation of
 * pbj.required.GENERATION it was built in, which forget_answers bumps before it drops any list,
 * so a table of the current generation links only to live tables of the current generation.
 * The walk reads the generation once per call, runs no Python code, allocates nothing and holds
 * the GIL: nothing it reads can change or be freed under it. Free-threaded builds (no GIL) do not
 * walk in C (pbj_required_ok).
 */
#include "engine.h"

enum { RS_NONE, RS_SINGLE, RS_REPEATED, RS_MAP, RS_ONEOF, RS_EXTENSIONS };  /* pbj.required.NATIVE_SHAPES */

typedef struct RTable RTable;

typedef struct {
    Py_ssize_t off;       /* the slot's byte offset */
    int required;         /* None there is a missing required field */
    int shape;            /* RS_* */
    PyObject *member;     /* RS_ONEOF: the member's name (owned) */
    NMessage *sub;        /* the sub-message class's plan (borrowed from the class's plan) */
    RTable *table;        /* its table (borrowed: see the generation, above) */
} RStep;

struct RTable {
    NMessage *m;          /* the plan it was built for */
    long generation;
    int nsteps;
    RStep steps[];
};

/* What the walk reads of pbj.required is the module state's (PbjEntry: steps_of, generation,
 * s_required_state), reached through the plan walked (NMessage.st). */

static long current_generation(const PbjEntry *E)
{
    PyObject *g = PyList_GET_SIZE(E->generation) ? PyList_GET_ITEM(E->generation, 0) : NULL;
    long v = g && PyLong_CheckExact(g) ? PyLong_AsLong(g) : -1;
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
    return v;
}

/* Every table made so far goes stale (pbj.required.GENERATION bumped): a table of the current
 * generation could not be completed, or must be replaced, and tables of this generation may link
 * to it. The next check builds them again. */
static void invalidate(const PbjEntry *E, long generation)
{
    PyObject *next = PyLong_FromLong(generation + 1);
    if (next == NULL || PyList_SetItem(E->generation, 0, next) < 0) PyErr_Clear();  /* (SetItem steals next) */
}

static void table_free(PyObject *cap)
{
    RTable *t = PyCapsule_GetPointer(cap, "pbj.required");
    if (!t) return;
    for (int i = 0; i < t->nsteps; i++) Py_XDECREF(t->steps[i].member);
    PyMem_Free(t);
}

/* the table of class m->cls in `state` (its pbj.required state list), if it is one of the current
 * generation built for m; NULL (no error) if not */
static RTable *table_in(PyObject *state, NMessage *m, long generation)
{
    if (PyList_GET_SIZE(state) < 4) return NULL;
    PyObject *cap = PyList_GET_ITEM(state, 3);
    if (!PyCapsule_CheckExact(cap)) return NULL;
    RTable *t = PyCapsule_GetPointer(cap, "pbj.required");
    if (!t) {
        PyErr_Clear();
        return NULL;
    }
    return t->m == m && t->generation == generation ? t : NULL;
}

/* the field of m called `name` (a oneof member if `member`), or NULL */
static NField *field_named(NMessage *m, PyObject *name, int member)
{
    for (int i = 0; i < m->nfields; i++) {
        NField *f = &m->fields[i];
        if ((f->label == L_MEMBER) != member) continue;
        int eq = f->name == name ? 1 : PyUnicode_Compare(f->name, name) == 0;
        if (eq) return f;
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return NULL;
}

static RTable *table_of(NMessage *m, long generation, int depth);

/* a new table for m (its class's walk plan from pbj.required), linked to its sub-messages'
 * tables (made now if need be, down to `depth` levels); NULL: the walk cannot use one (an error
 * may be set) */
static RTable *build_steps(NMessage *m, PyObject *state, PyObject *plan, long generation, int depth)
{
    Py_ssize_t n = PyTuple_GET_SIZE(plan);
    RTable *t = PyMem_Calloc(1, sizeof(RTable) + (size_t)n * sizeof(RStep));
    if (!t) {
        PyErr_NoMemory();
        return NULL;
    }
    t->m = m;
    t->generation = generation;
    PyObject *cap = PyCapsule_New(t, "pbj.required", table_free);
    if (!cap) {
        PyMem_Free(t);
        return NULL;
    }
    /* the capsule owns the table from here; it goes into the state list before the links are
     * made, so that a recursive message finds its own table */
    int r = PyList_GET_SIZE(state) < 4 ? PyList_Append(state, cap) : PyList_SetItem(state, 3, Py_NewRef(cap));
    Py_DECREF(cap);
    if (r < 0) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *step = PyTuple_GET_ITEM(plan, i);
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 4) return NULL;
        PyObject *name = PyTuple_GET_ITEM(step, 0), *member = PyTuple_GET_ITEM(step, 3);
        long shape = PyLong_AsLong(PyTuple_GET_ITEM(step, 2));
        if (shape == -1 && PyErr_Occurred()) return NULL;
        RStep *s = &t->steps[t->nsteps];
        s->required = PyObject_IsTrue(PyTuple_GET_ITEM(step, 1)) == 1;
        s->shape = (int)shape;
        NField *f;
        if (shape == RS_EXTENSIONS) {
            if (m->ext_off < 0) return NULL;
            s->off = m->ext_off;
        } else if (shape == RS_ONEOF) {
            if (!PyUnicode_Check(member) || !(f = field_named(m, member, 1)) || f->oneof < 0) return NULL;
            s->off = m->slot_off[m->oneofs[f->oneof].slot];
            s->member = Py_NewRef(f->name);
        } else {
            if (!(f = field_named(m, name, 0))) return NULL;
            s->off = m->slot_off[f->slot];
        }
        if (shape == RS_SINGLE || shape == RS_REPEATED || shape == RS_MAP || shape == RS_ONEOF) {
            if (!f->subm) return NULL;
            s->sub = f->subm;
            if (!(s->table = table_of(f->subm, generation, depth + 1))) return NULL;
        }
        t->nsteps++;
    }
    return t;
}

/* build_steps, the table put where a table of the class may already be */
static RTable *build(NMessage *m, PyObject *state, PyObject *plan, long generation, int depth)
{
    if (PyList_GET_SIZE(state) >= 4) {
        /* a table of this class is there: one of an older generation (nothing current links to
         * it) is replaced; one of this generation (built for another plan of the class) may be
         * linked to, so every table goes stale first */
        PyObject *old = PyList_GET_ITEM(state, 3);
        RTable *was = PyCapsule_CheckExact(old) ? PyCapsule_GetPointer(old, "pbj.required") : NULL;
        if (!was) PyErr_Clear();
        if (was && was->generation == generation) {
            invalidate(&m->st->entry, generation);
            return NULL;
        }
    }
    RTable *t = build_steps(m, state, plan, generation, depth);
    if (t == NULL) invalidate(&m->st->entry, generation);  /* the half-made table is in the list: make it stale */
    return t;
}

/* the table of m's class: its own if it is current, else built (with pbj.required's plan);
 * NULL: the walk cannot use one (an error may be set) */
static RTable *table_of(NMessage *m, long generation, int depth)
{
    if (depth >= NATIVE_MAX_LEVEL) return NULL;
    PyObject *d = m->cls->tp_dict;
    PyObject *state = d ? PyDict_GetItemWithError(d, m->st->entry.s_required_state) : NULL;
    if (state && PyList_CheckExact(state) && PyList_GET_SIZE(state) >= 3
        && PyList_GET_ITEM(state, 0) == (PyObject *)m->cls) {
        RTable *t = table_in(state, m, generation);
        if (t) return t;
    }
    if (PyErr_Occurred()) return NULL;
    PyObject *got = PyObject_CallOneArg(m->st->entry.steps_of, (PyObject *)m->cls);  /* (state, plan) or None */
    RTable *t = NULL;
    if (got && PyTuple_CheckExact(got) && PyTuple_GET_SIZE(got) == 2 && PyList_CheckExact(PyTuple_GET_ITEM(got, 0))
        && PyTuple_CheckExact(PyTuple_GET_ITEM(got, 1))) {
        PyObject *st = PyTuple_GET_ITEM(got, 0);
        t = table_in(st, m, generation);  /* made meanwhile (a recursive message) */
        if (!t) t = build(m, st, PyTuple_GET_ITEM(got, 1), generation, depth);
    }
    Py_XDECREF(got);
    return t;
}

/* 1: every required field in o's tree is set; 0: one is not; -1: cannot tell */
static int walk(PyObject *o, const RTable *t, int level)
{
    if (level >= NATIVE_MAX_LEVEL) return -1;
    for (int i = 0; i < t->nsteps; i++) {
        const RStep *s = &t->steps[i];
        PyObject *v = SLOT(o, s->off);
        if (v == NULL) return -1;
        if (v == Py_None) {
            if (s->required) return 0;
            continue;
        }
        int r = 1;
        switch (s->shape) {
        case RS_NONE:
            break;
        case RS_SINGLE:
            if (Py_TYPE(v) != s->sub->cls || s->table->m != s->sub) return -1;
            r = walk(v, s->table, level + 1);
            break;
        case RS_REPEATED:
            if (!PyTuple_CheckExact(v) || s->table->m != s->sub) return -1;
            for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(v) && r == 1; k++) {
                PyObject *x = PyTuple_GET_ITEM(v, k);
                r = Py_TYPE(x) == s->sub->cls ? walk(x, s->table, level + 1) : -1;
            }
            break;
        case RS_MAP: {
            if (!PyDict_Check(v) || s->table->m != s->sub) return -1;
            Py_ssize_t pos = 0;
            PyObject *k, *x;
            while (r == 1 && PyDict_Next(v, &pos, &k, &x)) {
                r = Py_TYPE(x) == s->sub->cls ? walk(x, s->table, level + 1) : -1;
            }
            break;
        }
        case RS_ONEOF: {
            if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 2) return -1;
            PyObject *name = PyTuple_GET_ITEM(v, 0);
            if (name != s->member) {
                if (!PyUnicode_Check(name)) return -1;
                int eq = PyUnicode_Compare(name, s->member);
                if (eq == -1 && PyErr_Occurred()) {
                    PyErr_Clear();
                    return -1;
                }
                if (eq != 0) break;  /* another member is set */
            }
            PyObject *x = PyTuple_GET_ITEM(v, 1);
            if (Py_TYPE(x) != s->sub->cls || s->table->m != s->sub) return -1;
            r = walk(x, s->table, level + 1);
            break;
        }
        case RS_EXTENSIONS:  /* extensions present: pbj.required reads their values */
            if (!PyTuple_CheckExact(v)) return -1;
            if (PyTuple_GET_SIZE(v)) return -1;
            break;
        default:
            return -1;
        }
        if (r != 1) return r;
    }
    return 1;
}

/* 1: every required field in the tree of `o` (an instance of m->cls) is set; 0: one is not; -1:
 * the walk cannot tell. 0 and -1: the caller runs pbj.required's check, and no error is set. -2: a
 * KeyboardInterrupt (any error that is not an Exception) arrived while the table was built: it is
 * set, and the caller fails with it. */
int pbj_required_ok(PyObject *o, NMessage *m)
{
#ifdef Py_GIL_DISABLED
    /* Free-threaded CPython: the tables are linked without references and replaced while other
     * threads could be walking them (the generation above only guards one thread's own calls), so
     * the walk is not run there: pbj.required's Python check answers every class that can miss a
     * required field (the classes that cannot, pbj.required.FREE, need no walk at all). */
    (void)o;
    (void)m;
    return -1;
#endif
    if (m == NULL || m->st->entry.steps_of == NULL || Py_TYPE(o) != m->cls) return -1;
    const PbjEntry *E = &m->st->entry;
    long generation = current_generation(E);
    RTable *t = table_of(m, generation, 0);
    /* building tables runs Python code (pbj.required): if it made tables stale meanwhile, the links
     * just made may lead to freed ones, so this call walks nothing */
    if (t == NULL || current_generation(E) != generation) {
        /* an error that is not an Exception (KeyboardInterrupt, SystemExit) raised in the Python
         * code is the program's, not the check's: it is kept and goes to the caller */
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return -2;
        PyErr_Clear();  /* the Python check runs instead, and meets any error again */
        return -1;
    }
    return walk(o, t, 0);
}

/* entry_points: pbj.required.native_steps and pbj.required.GENERATION */
int pbj_required_setup(PbjEntry *E, PyObject *steps_of, PyObject *generation)
{
    if (!PyCallable_Check(steps_of) || !PyList_CheckExact(generation)) {
        PyErr_SetString(PyExc_TypeError, "entry_points: native_steps must be callable, GENERATION a list");
        return -1;
    }
    if (E->s_required_state == NULL
        && (E->s_required_state = PyUnicode_InternFromString("__pbj_required__")) == NULL) return -1;
    Py_XSETREF(E->steps_of, Py_NewRef(steps_of));
    Py_XSETREF(E->generation, Py_NewRef(generation));
    return 0;
}
