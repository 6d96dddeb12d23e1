/* entry.c: pbj.decode and pbj.encode as builtins, so that a small call pays no Python frame.
 *
 * pbj.api's decode and encode are Python functions: the reference, with every argument check,
 * every error message and the pure-Python engine. When the extension is built, pbj.api replaces
 * the two names by the builtins entry_points() makes here (METH_FASTCALL | METH_KEYWORDS):
 *
 *   decode(cls, data, *, max_depth=100, max_size=None, allow_partial=False)
 *   encode(obj, *, reverse=False, allow_partial=False)
 *
 * They run in C the call they can answer in full: the native engine in use (pbj.engines.CURRENT),
 * the class compiled with a native plan (its __pbj_codec__.native), `data` exactly bytes,
 * max_depth an int >= 0, max_size None or an int the input does not exceed, allow_partial and
 * reverse exactly True or False (either writer: the forward one, or the reverse one into this
 * thread's scratch), every keyword one of theirs. They do the required-field check as pbj.api
 * does: the class attribute pbj.required.FREE decides whether the class can miss a required field
 * at all; only then does the walk run, in C (required.c: pbj.required's walk plan); where it finds
 * a field missing, or cannot tell, pbj.required's own check runs (check_decode / check_encode,
 * Python), which raises the error with every missing path. An input that is not a valid encoding
 * raises the DecodeError the engine makes (the Python parser's, with no Python parse); valid input
 * the engine declines is parsed by the class's Python parser (codec.parse) exactly as pbj.api
 * does; an object the engine declines is encoded by the Python function.
 *
 * Every other call (another engine, a class not compiled yet, a bytearray, an argument of
 * another type or value, a keyword they do not know, ...) goes to the Python function with the
 * same arguments, which compiles, converts or raises exactly as it always did. So the builtins
 * raise no error of their own: what they raise comes from the same code the Python functions
 * call (the parser, the required check, the engine's MemoryError).
 *
 * bind_decode(cls, catch, handler) and bind_encode(cls, other) make one-argument builtins
 * (METH_O) for grpcio's deserializers and serializers: decode(cls, data) and encode(obj) with
 * the defaults, handler(exc) for a decode error of class `catch`, other(obj) for an object of
 * another class than `cls`. They keep the class's codec between calls (Bound, below).
 *
 * References: the codec and its native plan are read from the class and held (strong) for the
 * whole call, since decoding makes objects and can run Python code (a collection, a finalizer)
 * that could replace them.
 */
#include "engine.h"

/* What these builtins read lives in the module's state (engine.h, PbjEntry): the builtins' self
 * is the engine's module, a Bound keeps the state of the module whose type it is. */

/* the offset of a __slots__ member called `name` of `t`, or -1 (Python error set) */
static Py_ssize_t slot_offset(PyTypeObject *t, const char *name)
{
    PyObject *dict = pbj_type_dict_ref(t);
    Py_ssize_t off = dict ? pbj_slot_offset(PyDict_GetItemString(dict, name)) : -1;
    Py_XDECREF(dict);
    if (off < 0) PyErr_Format(PyExc_TypeError, "entry_points: %s.%s is not a __slots__ member", t->tp_name, name);
    return off;
}

static inline int native_selected(PbjEntry *E)
{
    return E->current && Py_IS_TYPE(E->current, E->current_type) && SLOT(E->current, E->engine_off) == E->native;
}

/* A class attribute read as getattr(cls, name, None) reads it, without the look-up on the
 * metaclass: `cls` is exactly a `type`, and `type` has no attribute of these names. A new
 * reference, or NULL (compat.h: the MRO's namespaces, no Python code). */
static inline PyObject *class_attr(PyTypeObject *cls, PyObject *name)
{
    return pbj_type_lookup(cls, name);
}

/* 1: getattr(o, FREE, None) is type(o), 0: it is not, -1: error. A class attribute holding a
 * class (no __get__), read as Python reads it; an instance with a __dict__ is asked in full. */
static int is_free(PbjEntry *E, PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    if (t->tp_dictoffset == 0) {
        PyObject *f = class_attr(t, E->s_free);
        if (f == NULL && PyErr_Occurred()) return -1;
        if (f == NULL || Py_TYPE(f)->tp_descr_get == NULL) {
            Py_XDECREF(f);
            return f == (PyObject *)t;
        }
        Py_DECREF(f);
    }
    PyObject *f = PyObject_GetAttr(o, E->s_free);
    if (f == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(f);
    return f == (PyObject *)t;
}

/* whether type t still has version tag `tag` (CPython gives a type a new one whenever an attribute
 * of it or of a base is set or deleted: __pbj_codec__, FREE) */
static inline int tag_holds(PyTypeObject *t, unsigned int tag)
{
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
    if (!PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG)) return 0;
#endif
    return tag != 0 && t->tp_version_tag == tag;
}

/* The codec of `t` and its native plan, both new references, if `t` is compiled and the engine
 * runs it (*free: 1 if instances of t are known to miss no required field, FREE); else 0 (no
 * error). A small cache in the module's state (PbjEntry.types, by the type's address) answers
 * again for the same class while it keeps its version tag and its codec's plan: borrowed pointers,
 * valid as long as that holds (a living type's tag is unique; the codec is in its namespace; the
 * plan is compared with the codec's slot, whose object is then used). The look-up on a miss reads
 * __pbj_codec__ as getattr(cls, ...) does (which also gives the type its version tag).
 * Free-threaded CPython (Py_GIL_DISABLED) keeps no cache: an entry is several words another thread
 * could be writing, and its borrowed codec could be freed between the check and the incref by a
 * thread that replaces __pbj_codec__; every call looks the codec up (a new reference, CPython's own
 * type cache underneath). A codec's `native` is set once, before the codec is published on its
 * class (pbj._native.adopt), so the plan read from it stays valid while the codec is held. */
static int native_codec(PbjState *st, PyTypeObject *t, PyObject **codec, PyObject **plan, int *free)
{
    PbjEntry *E = &st->entry;
#ifndef Py_GIL_DISABLED
    TypeCache *e = &E->types[((uintptr_t)t >> 5) & (PBJ_TYPE_CACHE - 1)];
    if (e->type == t && tag_holds(t, e->tag)) {
        PyObject *p = SLOT(e->codec, E->native_off);
        if (p == e->plan && p != NULL) {
            *codec = Py_NewRef(e->codec);
            *plan = Py_NewRef(p);
            *free = e->free;
            return 1;
        }
    }
#endif
    PyObject *c = Py_IS_TYPE(t, &PyType_Type) ? PyObject_GetAttr((PyObject *)t, st->s_codec) : class_attr(t, st->s_codec);
    if (c == NULL) { PyErr_Clear(); return 0; }
    PyObject *p = Py_IS_TYPE(c, E->codec_type) ? SLOT(c, E->native_off) : NULL;
    if (p == NULL || p == Py_None) { Py_DECREF(c); return 0; }
    PyObject *f = t->tp_dictoffset == 0 ? class_attr(t, E->s_free) : NULL;
    if (f == NULL) PyErr_Clear();
    *free = f == (PyObject *)t;
    Py_XDECREF(f);
    *codec = c;
    *plan = Py_NewRef(p);
#ifndef Py_GIL_DISABLED
    if (Py_IS_TYPE(t, &PyType_Type) && tag_holds(t, t->tp_version_tag)) {
        e->type = t;
        e->tag = t->tp_version_tag;
        e->codec = c;
        e->plan = p;
        e->free = *free;
    }
#endif
    return 1;
}

/* What a bound decoder or encoder (bind_decode, bind_encode: a builtin of one argument, METH_O,
 * whose self is this object; the interpreter calls such a builtin directly) keeps of its class
 * between calls. The cache holds while the class keeps its version
 * tag (CPython changes it whenever an attribute of the class or of a base is set or deleted:
 * __pbj_codec__, FREE) and its codec's native plan is the same object. */
typedef struct {
    PyObject_HEAD
    PbjState *st;               /* of the module whose Bound type this is (the type holds the module) */
    PyObject *cls;              /* a type */
    PyObject *other;            /* encode: what an object of another class is given to */
    PyObject *catch_, *handler; /* decode: errors of class catch_ are given to handler(exc); or NULL */
    PyObject *codec, *plan;     /* the cache (owned), or NULL */
    NMessage *nm;               /* decode: plan's message (pbj_message_of), once asked; NULL: not yet */
    unsigned int tag;
    int free;                   /* instances of cls cannot miss a required field (FREE) */
} Bound;


/* native_codec for a Bound's class, from its cache or filling it; *free: 1 if instances of the
 * class are known free of required fields, 0 if that is to be asked (is_free). */
static int bound_codec(Bound *b, PyObject **codec, PyObject **plan, int *free)
{
    PyTypeObject *t = (PyTypeObject *)b->cls;
#ifdef Py_GIL_DISABLED
    /* free-threaded: no cache (see native_codec): b->codec, b->plan and b->nm stay NULL, so
     * bound_decode's short path never runs and decode_in_c never sets b->nm */
    return native_codec(b->st, t, codec, plan, free);
#else
    PbjEntry *E = &b->st->entry;
    if (b->plan != NULL && tag_holds(t, b->tag) && SLOT(b->codec, E->native_off) == b->plan) {
        *codec = Py_NewRef(b->codec);
        *plan = Py_NewRef(b->plan);
        *free = b->free;
        return 1;
    }
    if (!native_codec(b->st, t, codec, plan, free)) return 0;
    Py_XSETREF(b->codec, Py_NewRef(*codec));
    Py_XSETREF(b->plan, Py_NewRef(*plan));
    b->nm = NULL;
    b->free = *free;
    b->tag = t->tp_version_tag;  /* set by the look-ups above (0, or not valid: no cache) */
    return 1;
#endif
}

enum { ANSWERED, TO_PYTHON };

/* decode(cls, data, max_depth=depth, max_size=max_size, allow_partial=partial) when the engine
 * can answer it: the result, or NULL with an error (*how ANSWERED); NULL with *how TO_PYTHON:
 * the Python function is to run (no error set). */
static PyObject *decode_in_c(PbjState *st, PyObject *cls, PyObject *data, PyObject *depth, PyObject *max_size,
                             PyObject *partial, int *how, Bound *b)
{
    PbjEntry *E = &st->entry;
    *how = TO_PYTHON;
    if (!native_selected(E) || !Py_IS_TYPE(cls, &PyType_Type) || !PyBytes_CheckExact(data)) return NULL;
    if (partial != Py_False && partial != Py_True) return NULL;
    int overflow, cdepth = E->default_depth_c;
    if (depth != E->default_depth) {
        if (!PyLong_CheckExact(depth)) return NULL;
        long long d = PyLong_AsLongLongAndOverflow(depth, &overflow);
        if (overflow < 0 || (overflow == 0 && d < 0)) return NULL;  /* refused: Python says why */
        cdepth = overflow > 0 || d > INT32_MAX ? INT32_MAX : (int)d;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    if (max_size != Py_None) {
        if (!PyLong_CheckExact(max_size)) return NULL;
        long long limit = PyLong_AsLongLongAndOverflow(max_size, &overflow);
        if (overflow < 0 || (overflow == 0 && limit < n)) return NULL;  /* refused: Python says why */
    }
    PyObject *codec, *plan;
    int known_free = 0;
    if (b ? !bound_codec(b, &codec, &plan, &known_free)
          : !native_codec(st, (PyTypeObject *)cls, &codec, &plan, &known_free))
        return NULL;
    *how = ANSWERED;
    /* the plan's message: a Bound keeps it with the plan it holds (which keeps it alive) */
    NMessage *m = b && b->nm && plan == b->plan ? b->nm : pbj_message_of(plan);
    if (b && plan == b->plan) b->nm = m;
    int declined = 1;
    PyObject *r = m ? pbj_decode_bytes(st, m, data, cdepth, &declined) : NULL;
    if (r == NULL && declined) {  /* valid input left to Python (or not a plan): the Python parser, as pbj.api runs it */
        PyErr_Clear();
        PyObject *parse = SLOT(codec, E->parse_off);
        PyObject *end = PyLong_FromSsize_t(n);
        if (parse != NULL && end != NULL) {
            Py_INCREF(parse);
            PyObject *pargs[5] = {data, E->zero, end, depth, Py_None};
            r = PyObject_Vectorcall(parse, pargs, 5, NULL);
            Py_DECREF(parse);
        } else if (parse == NULL && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_AttributeError, "parse");
        }
        Py_XDECREF(end);
    }
    if (r != NULL && partial == Py_False && !(known_free && (PyObject *)Py_TYPE(r) == cls)) {
        int free = is_free(E, r);
        /* the walk in C (required.c); m stays alive with `plan`, held until here */
        if (free == 0 && m != NULL) {
            int ok = pbj_required_ok(r, m);
            free = ok == 1 ? 1 : ok == -2 ? -1 : 0;  /* -2: a KeyboardInterrupt, kept */
        }
        if (free == 0) {  /* one is missing, or the C walk cannot tell: pbj.required says which */
            PyObject *ok = PyObject_CallOneArg(E->check_decode, r);
            Py_XDECREF(ok);
            if (ok == NULL) free = -1;
        }
        if (free < 0) Py_CLEAR(r);
    }
    Py_DECREF(codec);
    Py_DECREF(plan);
    return r;
}

/* encode(obj, reverse=reverse, allow_partial=partial) when the engine writes it: as decode_in_c. */
static PyObject *encode_in_c(PbjState *st, PyObject *obj, int reverse, PyObject *partial, int *how, Bound *b)
{
    PbjEntry *E = &st->entry;
    *how = TO_PYTHON;
    if (!native_selected(E) || (partial != Py_False && partial != Py_True)) return NULL;
    PyObject *codec, *plan;
    int known_free = 0;  /* b: obj is exactly of b's class */
    if (b ? !bound_codec(b, &codec, &plan, &known_free) : !native_codec(st, Py_TYPE(obj), &codec, &plan, &known_free))
        return NULL;
    *how = ANSWERED;
    PyObject *r = NULL;
    int free = partial == Py_True || known_free ? 1 : is_free(E, obj);
    if (free == 0) {  /* the walk in C (required.c); -2: a KeyboardInterrupt, kept */
        int ok = pbj_required_ok(obj, pbj_message_of(plan));
        free = ok == 1 ? 1 : ok == -2 ? -1 : 0;
    }
    if (free == 0) {  /* one is missing, or the C walk cannot tell: pbj.required raises or passes */
        PyObject *ok = PyObject_CallOneArg(E->check_encode, obj);
        Py_XDECREF(ok);
        free = ok == NULL ? -1 : 1;
    }
    if (free > 0) {
        PyObject *argv[2] = {plan, obj};
        r = reverse ? pbj_write_reverse(NULL, argv, 2) : pbj_encode(NULL, argv, 2);  /* (read the state through the plan) */
        if (r != NULL && !PyBytes_CheckExact(r)) {  /* declined, or sizes to measure again: Python */
            Py_CLEAR(r);
            *how = TO_PYTHON;
        }
    }
    Py_DECREF(codec);
    Py_DECREF(plan);
    return r;
}

static PyObject *entry_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PbjState *st = pbj_state(self);
    PbjEntry *E = &st->entry;
    if (nargs == 2) {
        PyObject *depth = E->default_depth, *max_size = Py_None, *partial = Py_False;
        Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t i = 0; i < nk; i++) {
            PyObject *k = PyTuple_GET_ITEM(kwnames, i);
            if (k == E->s_max_depth) depth = args[2 + i];
            else if (k == E->s_max_size) max_size = args[2 + i];
            else if (k == E->s_allow_partial) partial = args[2 + i];
            else goto python;  /* another keyword (or one spelled by a string that is not interned) */
        }
        int how;
        PyObject *r = decode_in_c(st, args[0], args[1], depth, max_size, partial, &how, NULL);
        if (how == ANSWERED) return r;
    }
python:
    return PyObject_Vectorcall(E->py_decode, args, nargs, kwnames);
}

static PyObject *entry_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PbjState *st = pbj_state(self);
    PbjEntry *E = &st->entry;
    if (nargs == 1) {
        PyObject *partial = Py_False;
        int reverse = 0;
        Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t i = 0; i < nk; i++) {
            PyObject *k = PyTuple_GET_ITEM(kwnames, i);
            if (k == E->s_allow_partial) partial = args[1 + i];
            else if (k == E->s_reverse && (args[1 + i] == Py_False || args[1 + i] == Py_True))
                reverse = args[1 + i] == Py_True;
            else goto python;  /* another keyword, or reverse not a bool: Python says why */
        }
        int how;
        PyObject *r = encode_in_c(st, args[0], reverse, partial, &how, NULL);
        if (how == ANSWERED) return r;
    }
python:
    return PyObject_Vectorcall(E->py_encode, args, nargs, kwnames);
}

/* bind_decode's function (self: its Bound): decode(cls, data); an error of class catch_ goes to
 * handler(exc) */
static PyObject *bound_decode(PyObject *self, PyObject *data)
{
    Bound *b = (Bound *)self;
    PbjEntry *E = &b->st->entry;
    /* The usual message: the class's cache holds (bound_codec), its plan's message is known, its
     * instances cannot miss a required field, `data` is bytes. Only the decode itself runs, the
     * plan held (it keeps the message alive); anything else (a decline, an error) is the
     * general path's, from the start. */
    PyObject *r = NULL;
    if (b->nm != NULL && b->free && native_selected(E) && PyBytes_CheckExact(data)
        && tag_holds((PyTypeObject *)b->cls, b->tag) && SLOT(b->codec, E->native_off) == b->plan) {
        PyObject *plan = Py_NewRef(b->plan);
        int declined = 0;
        r = pbj_decode_bytes(b->st, b->nm, data, E->default_depth_c, &declined);
        Py_DECREF(plan);
        if (r != NULL && (PyObject *)Py_TYPE(r) == b->cls) return r;
        Py_CLEAR(r);
        if (!declined && PyErr_Occurred()) goto failed;  /* refused: its DecodeError is set */
    }
    int how;
    r = decode_in_c(b->st, b->cls, data, E->default_depth, Py_None, Py_False, &how, b);
    if (how != ANSWERED) {
        PyObject *argv[2] = {b->cls, data};
        r = PyObject_Vectorcall(E->py_decode, argv, 2, NULL);
    }
    if (r != NULL) return r;
failed:
    if (r == NULL && b->catch_ != NULL && PyErr_ExceptionMatches(b->catch_)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb != NULL && value != NULL) PyException_SetTraceback(value, tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        if (value == NULL) return NULL;
        PyObject *handler = Py_NewRef(b->handler);
        r = PyObject_CallOneArg(handler, value);
        Py_DECREF(handler);
        Py_DECREF(value);
    }
    return r;
}

/* bind_encode's function (self: its Bound): encode(obj) for an object of exactly cls, other(obj)
 * otherwise */
static PyObject *bound_encode(PyObject *self, PyObject *obj)
{
    Bound *b = (Bound *)self;
    if ((PyObject *)Py_TYPE(obj) != b->cls) return PyObject_CallOneArg(b->other, obj);
    int how;
    PyObject *r = encode_in_c(b->st, obj, 0, Py_False, &how, b);
    if (how == ANSWERED) return r;
    return PyObject_CallOneArg(b->st->entry.py_encode, obj);
}

static int bound_traverse(PyObject *self, visitproc visit, void *arg)
{
    Bound *b = (Bound *)self;
    Py_VISIT(Py_TYPE(self));  /* a heap type: its instances hold it */
    Py_VISIT(b->cls);
    Py_VISIT(b->other);
    Py_VISIT(b->catch_);
    Py_VISIT(b->handler);
    Py_VISIT(b->codec);
    Py_VISIT(b->plan);
    return 0;
}

static int bound_clear(PyObject *self)
{
    Bound *b = (Bound *)self;
    Py_CLEAR(b->cls);
    Py_CLEAR(b->other);
    Py_CLEAR(b->catch_);
    Py_CLEAR(b->handler);
    Py_CLEAR(b->codec);
    Py_CLEAR(b->plan);
    return 0;
}

static void bound_dealloc(PyObject *self)
{
    PyTypeObject *t = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    bound_clear(self);
    PyObject_GC_Del(self);
    Py_DECREF(t);
}

static PyObject *bound_repr(PyObject *self)
{
    Bound *b = (Bound *)self;
    return PyUnicode_FromFormat("<pbj %s of %s>", b->other ? "encode" : "decode", ((PyTypeObject *)b->cls)->tp_name);
}

static PyMethodDef bound_decode_def = {
    "decode", bound_decode, METH_O,
    "decode(data)\n--\n\npbj.decode(cls, data) for the class this function was made for (grpcio's deserializer).",
};
static PyMethodDef bound_encode_def = {
    "encode", bound_encode, METH_O,
    "encode(obj)\n--\n\npbj.encode(obj) for a message of the class this function was made for; other(obj) "
    "for any other object (grpcio's serializer).",
};

static PyType_Slot bound_slots[] = {
    {Py_tp_doc, "What a bound pbj.decode(cls, data) or pbj.encode(obj) keeps of its class (bind_decode, bind_encode)."},
    {Py_tp_traverse, bound_traverse},
    {Py_tp_clear, bound_clear},
    {Py_tp_dealloc, bound_dealloc},
    {Py_tp_repr, bound_repr},
    {0, NULL},
};

static PyType_Spec bound_spec = {
    .name = "pbj._native._engine.Bound",
    .basicsize = sizeof(Bound),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = bound_slots,
};

/* module exec: the Bound type of this module */
int pbj_entry_init(PyObject *module)
{
    PbjEntry *E = &pbj_state(module)->entry;
    E->bound_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &bound_spec, NULL);
    return E->bound_type ? 0 : -1;
}

int pbj_entry_traverse(PbjEntry *E, visitproc visit, void *arg)
{
    Py_VISIT(E->current);
    Py_VISIT(E->native);
    Py_VISIT(E->codec_type);
    Py_VISIT(E->py_decode);
    Py_VISIT(E->py_encode);
    Py_VISIT(E->check_decode);
    Py_VISIT(E->check_encode);
    Py_VISIT(E->steps_of);
    Py_VISIT(E->generation);
    Py_VISIT(E->default_depth);
    Py_VISIT(E->bound_type);
    return 0;
}

void pbj_entry_clear(PbjEntry *E)
{
    Py_CLEAR(E->current);
    Py_CLEAR(E->native);
    Py_CLEAR(E->codec_type);
    Py_CLEAR(E->py_decode);
    Py_CLEAR(E->py_encode);
    Py_CLEAR(E->check_decode);
    Py_CLEAR(E->check_encode);
    Py_CLEAR(E->steps_of);
    Py_CLEAR(E->generation);
    Py_CLEAR(E->s_required_state);
    Py_CLEAR(E->default_depth);
    Py_CLEAR(E->s_free);
    Py_CLEAR(E->s_max_depth);
    Py_CLEAR(E->s_max_size);
    Py_CLEAR(E->s_allow_partial);
    Py_CLEAR(E->s_reverse);
    Py_CLEAR(E->zero);
    Py_CLEAR(E->bound_type);
    /* the builtins hold the module (their self) and so outlive nothing here: their method records
     * and docs go with the state */
    PyMem_Free((void *)E->decode_def.ml_doc);
    PyMem_Free((void *)E->encode_def.ml_doc);
    E->decode_def.ml_doc = E->encode_def.ml_doc = NULL;
}

static PyObject *new_bound(PyObject *module, PyObject *cls, PyMethodDef *def, PyObject *other, PyObject *catch_,
                           PyObject *handler)
{
    PbjState *st = pbj_state(module);
    if (st->entry.py_decode == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "entry_points() has not run");
        return NULL;
    }
    if (!PyType_Check(cls)) {
        PyErr_Format(PyExc_TypeError, "bind: %R is not a class", cls);
        return NULL;
    }
    Bound *b = PyObject_GC_New(Bound, st->entry.bound_type);
    if (b == NULL) return NULL;
    Py_INCREF(st->entry.bound_type);  /* (a heap type is held by its instances; PyObject_GC_New does not) */
    b->st = st;
    b->cls = Py_NewRef(cls);
    b->other = Py_XNewRef(other);
    b->catch_ = Py_XNewRef(catch_);
    b->handler = Py_XNewRef(handler);
    b->codec = b->plan = NULL;
    b->nm = NULL;
    b->tag = 0;
    b->free = 0;
    PyObject_GC_Track(b);
    PyObject *f = PyCFunction_NewEx(def, (PyObject *)b, NULL);
    Py_DECREF(b);
    return f;
}

/* bind_decode(cls, catch=None, handler=None) */
PyObject *pbj_bind_decode(PyObject *self, PyObject *args)
{
    PyObject *cls, *catch_ = Py_None, *handler = Py_None;
    if (!PyArg_ParseTuple(args, "O|OO:bind_decode", &cls, &catch_, &handler)) return NULL;
    if ((catch_ == Py_None) != (handler == Py_None) || (handler != Py_None && !PyCallable_Check(handler))) {
        PyErr_SetString(PyExc_TypeError, "bind_decode: catch and handler (a callable) go together");
        return NULL;
    }
    return new_bound(self, cls, &bound_decode_def, NULL, catch_ == Py_None ? NULL : catch_,
                     handler == Py_None ? NULL : handler);
}

/* bind_encode(cls, other) */
PyObject *pbj_bind_encode(PyObject *self, PyObject *args)
{
    PyObject *cls, *other;
    if (!PyArg_ParseTuple(args, "OO:bind_encode", &cls, &other)) return NULL;
    if (!PyCallable_Check(other)) {
        PyErr_SetString(PyExc_TypeError, "bind_encode: other must be callable");
        return NULL;
    }
    return new_bound(self, cls, &bound_encode_def, other, NULL, NULL);
}

typedef PyObject *(*FastWithKeywords)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);

/* A builtin named `name` in module pbj.api whose __doc__ is `signature`, then the Python
 * function's own docstring (inspect.signature reads the first line), bound to the engine's module
 * (its self: the builtin reaches the state through it). The method record `def` lives in the
 * module's state, its text is owned there (freed with it). */
static PyObject *make_builtin(PyMethodDef *def, const char *name, FastWithKeywords fn, PyObject *signature,
                              PyObject *pyfunc, PyObject *self, PyObject *module_name)
{
    if (signature == NULL) return NULL;
    PyObject *doc = PyObject_GetAttrString(pyfunc, "__doc__");
    PyObject *text = doc == NULL ? NULL
        : PyUnicode_Check(doc) ? PyUnicode_FromFormat("%U\n--\n\n%U", signature, doc)
        : PyUnicode_FromFormat("%U\n--\n\n", signature);
    Py_XDECREF(doc);
    Py_DECREF(signature);
    if (text == NULL) return NULL;
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    char *copy = utf8 ? PyMem_Malloc(n + 1) : NULL;
    if (copy == NULL) {
        Py_DECREF(text);
        return utf8 ? PyErr_NoMemory() : NULL;
    }
    memcpy(copy, utf8, n + 1);
    Py_DECREF(text);
    PyMem_Free((void *)def->ml_doc);
    def->ml_name = name;
    def->ml_meth = (PyCFunction)(void (*)(void))fn;
    def->ml_flags = METH_FASTCALL | METH_KEYWORDS;
    def->ml_doc = copy;
    return PyCFunction_NewEx(def, self, module_name);
}

/* entry_points(native, current, Codec, decode, encode, check_decode, check_encode, FREE, DEFAULT_MAX_DEPTH,
 *              native_steps, GENERATION)
 *   -> (decode, encode, bind_decode, bind_encode): the builtins, falling back to the Python decode
 *   and encode given, and the makers of their one-argument forms; the last two are pbj.required's,
 *   for the check in C (required.c). Once per module object (the builtins' method records are the
 *   state's). */
PyObject *pbj_entry_points(PyObject *self, PyObject *args)
{
    PbjEntry *E = &pbj_state(self)->entry;
    PyObject *native, *current, *codec_type, *py_decode, *py_encode, *check_decode, *check_encode, *free_name, *depth;
    PyObject *steps_of, *generation;
    if (!PyArg_ParseTuple(args, "OOO!OOOOUO!OO:entry_points", &native, &current, &PyType_Type, &codec_type, &py_decode,
                          &py_encode, &check_decode, &check_encode, &free_name, &PyLong_Type, &depth, &steps_of,
                          &generation))
        return NULL;
    if (E->py_decode != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "entry_points: already made for this module");
        return NULL;
    }
    if (pbj_required_setup(E, steps_of, generation) < 0) return NULL;
    Py_ssize_t engine_off = slot_offset(Py_TYPE(current), "engine");
    Py_ssize_t native_off = engine_off < 0 ? -1 : slot_offset((PyTypeObject *)codec_type, "native");
    Py_ssize_t parse_off = native_off < 0 ? -1 : slot_offset((PyTypeObject *)codec_type, "parse");
    if (parse_off < 0) return NULL;
    if (!PyCallable_Check(py_decode) || !PyCallable_Check(py_encode) || !PyCallable_Check(check_decode)
        || !PyCallable_Check(check_encode)) {
        PyErr_SetString(PyExc_TypeError, "entry_points: the functions must be callable");
        return NULL;
    }
#define NAME(field, text) \
    if (E->field == NULL && (E->field = PyUnicode_InternFromString(text)) == NULL) return NULL;
    NAME(s_max_depth, "max_depth")
    NAME(s_max_size, "max_size")
    NAME(s_allow_partial, "allow_partial")
    NAME(s_reverse, "reverse")
#undef NAME
    if (E->zero == NULL && (E->zero = PyLong_FromLong(0)) == NULL) return NULL;
    Py_INCREF(free_name);
    PyUnicode_InternInPlace(&free_name);
    Py_XSETREF(E->s_free, free_name);
    Py_XSETREF(E->current, Py_NewRef(current));
    E->current_type = Py_TYPE(current);
    E->engine_off = engine_off;
    Py_XSETREF(E->native, Py_NewRef(native));
    Py_XSETREF(E->codec_type, (PyTypeObject *)Py_NewRef(codec_type));
    E->native_off = native_off;
    E->parse_off = parse_off;
    Py_XSETREF(E->py_decode, Py_NewRef(py_decode));
    Py_XSETREF(E->py_encode, Py_NewRef(py_encode));
    Py_XSETREF(E->check_decode, Py_NewRef(check_decode));
    Py_XSETREF(E->check_encode, Py_NewRef(check_encode));
    long dc = PyLong_AsLong(depth);
    if (dc == -1 && PyErr_Occurred()) {  /* too large for a long: as the engine clamps any depth */
        PyErr_Clear();
        dc = PyObject_RichCompareBool(depth, E->zero, Py_LT) == 1 ? INT32_MIN : INT32_MAX;
    }
    E->default_depth_c = dc > INT32_MAX ? INT32_MAX : dc < INT32_MIN ? INT32_MIN : (int)dc;
    Py_XSETREF(E->default_depth, Py_NewRef(depth));
    PyObject *module_name = PyUnicode_FromString("pbj.api");
    if (module_name == NULL) return NULL;
    PyObject *dec = make_builtin(&E->decode_def, "decode", entry_decode,
        PyUnicode_FromFormat("decode(cls, data, *, max_depth=%R, max_size=None, allow_partial=False)", depth),
        py_decode, self, module_name);
    PyObject *enc = dec ? make_builtin(&E->encode_def, "encode", entry_encode,
        PyUnicode_FromString("encode(obj, *, reverse=False, allow_partial=False)"), py_encode, self, module_name) : NULL;
    Py_DECREF(module_name);
    PyObject *bind_dec = enc ? PyObject_GetAttrString(self, "bind_decode") : NULL;
    PyObject *bind_enc = bind_dec ? PyObject_GetAttrString(self, "bind_encode") : NULL;
    PyObject *out = bind_enc ? PyTuple_Pack(4, dec, enc, bind_dec, bind_enc) : NULL;
    Py_XDECREF(dec);
    Py_XDECREF(enc);
    Py_XDECREF(bind_dec);
    Py_XDECREF(bind_enc);
    return out;
}
