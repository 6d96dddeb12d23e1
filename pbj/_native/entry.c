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
 * Python), which raises the error with every missing path. An input the engine declines is parsed by the class's
 * Python parser (codec.parse) exactly as pbj.api does; an object the engine declines is encoded
 * by the Python function.
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
#include "structmember.h"

static struct {
    PyObject *current;          /* pbj.engines.CURRENT */
    PyTypeObject *current_type;
    Py_ssize_t engine_off;      /* its `engine` slot */
    PyObject *native;           /* the native engine's Engine object */
    PyTypeObject *codec_type;   /* pbj.codec.compiler.Codec */
    Py_ssize_t native_off, parse_off;  /* its `native` and `parse` slots */
    PyObject *py_decode, *py_encode;   /* pbj.api's Python functions */
    PyObject *check_decode, *check_encode;  /* pbj.required's walks */
    PyObject *default_depth;    /* pbj.api.DEFAULT_MAX_DEPTH */
    int default_depth_c;        /* its value as the engine takes it (at most INT32_MAX) */
    PyObject *s_codec, *s_free, *s_max_depth, *s_max_size, *s_allow_partial, *s_reverse;
    PyObject *zero;
} E;

/* the offset of a __slots__ member called `name` of `t`, or -1 (Python error set) */
static Py_ssize_t slot_offset(PyTypeObject *t, const char *name)
{
    PyObject *d = PyDict_GetItemString(t->tp_dict, name);
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type) || ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "entry_points: %s.%s is not a __slots__ member", t->tp_name, name);
        return -1;
    }
    return ((PyMemberDescrObject *)d)->d_member->offset;
}

static inline int native_selected(void)
{
    return Py_IS_TYPE(E.current, E.current_type) && SLOT(E.current, E.engine_off) == E.native;
}

/* A class attribute read as getattr(cls, name, None) reads it, without the look-up on the
 * metaclass: `cls` is exactly a `type`, and `type` has no attribute of these names. Borrowed. */
static inline PyObject *class_attr(PyTypeObject *cls, PyObject *name)
{
    return _PyType_Lookup(cls, name);
}

/* 1: getattr(o, FREE, None) is type(o), 0: it is not, -1: error. A class attribute holding a
 * class (no __get__), read as Python reads it; an instance with a __dict__ is asked in full. */
static int is_free(PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    if (t->tp_dictoffset == 0) {
        PyObject *f = class_attr(t, E.s_free);
        if (f == NULL || Py_TYPE(f)->tp_descr_get == NULL) return f == (PyObject *)t;
    }
    PyObject *f = PyObject_GetAttr(o, E.s_free);
    if (f == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(f);
    return f == (PyObject *)t;
}

/* The codec of `t` and its native plan, both new references, if `t` is compiled and the
 * engine runs it; else 0 (no error). */
static int native_codec(PyTypeObject *t, PyObject **codec, PyObject **plan)
{
    PyObject *c = class_attr(t, E.s_codec);
    if (c == NULL || !Py_IS_TYPE(c, E.codec_type)) return 0;
    PyObject *p = SLOT(c, E.native_off);
    if (p == NULL || p == Py_None) return 0;
    *codec = Py_NewRef(c);
    *plan = Py_NewRef(p);
    return 1;
}

/* What a bound decoder or encoder (bind_decode, bind_encode: a builtin of one argument, METH_O,
 * whose self is this object; the interpreter calls such a builtin directly) keeps of its class
 * between calls. The cache holds while the class keeps its version
 * tag (CPython changes it whenever an attribute of the class or of a base is set or deleted:
 * __pbj_codec__, FREE) and its codec's native plan is the same object. */
typedef struct {
    PyObject_HEAD
    PyObject *cls;              /* a type */
    PyObject *other;            /* encode: what an object of another class is given to */
    PyObject *catch_, *handler; /* decode: errors of class catch_ are given to handler(exc); or NULL */
    PyObject *codec, *plan;     /* the cache (owned), or NULL */
    NMessage *nm;               /* decode: plan's message (pbj_message_of), once asked; NULL: not yet */
    unsigned int tag;
    int free;                   /* instances of cls cannot miss a required field (FREE) */
} Bound;

static inline int tag_holds(PyTypeObject *t, unsigned int tag)
{
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
    if (!PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG)) return 0;
#endif
    return tag != 0 && t->tp_version_tag == tag;
}

/* native_codec for a Bound's class, from its cache or filling it; *free: 1 if instances of the
 * class are known free of required fields, 0 if that is to be asked (is_free). */
static int bound_codec(Bound *b, PyObject **codec, PyObject **plan, int *free)
{
    PyTypeObject *t = (PyTypeObject *)b->cls;
    if (b->plan != NULL && tag_holds(t, b->tag) && SLOT(b->codec, E.native_off) == b->plan) {
        *codec = Py_NewRef(b->codec);
        *plan = Py_NewRef(b->plan);
        *free = b->free;
        return 1;
    }
    if (!native_codec(t, codec, plan)) return 0;
    PyObject *f = t->tp_dictoffset == 0 ? class_attr(t, E.s_free) : NULL;
    *free = f == (PyObject *)t;
    Py_XSETREF(b->codec, Py_NewRef(*codec));
    Py_XSETREF(b->plan, Py_NewRef(*plan));
    b->nm = NULL;
    b->free = *free;
    b->tag = t->tp_version_tag;  /* set by the look-ups above (0, or not valid: no cache) */
    return 1;
}

enum { ANSWERED, TO_PYTHON };

/* decode(cls, data, max_depth=depth, max_size=max_size, allow_partial=partial) when the engine
 * can answer it: the result, or NULL with an error (*how ANSWERED); NULL with *how TO_PYTHON:
 * the Python function is to run (no error set). */
static PyObject *decode_in_c(PyObject *cls, PyObject *data, PyObject *depth, PyObject *max_size, PyObject *partial,
                             int *how, Bound *b)
{
    *how = TO_PYTHON;
    if (!native_selected() || !Py_IS_TYPE(cls, &PyType_Type) || !PyBytes_CheckExact(data)) return NULL;
    if (partial != Py_False && partial != Py_True) return NULL;
    int overflow, cdepth = E.default_depth_c;
    if (depth != E.default_depth) {
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
    if (b ? !bound_codec(b, &codec, &plan, &known_free) : !native_codec((PyTypeObject *)cls, &codec, &plan))
        return NULL;
    *how = ANSWERED;
    /* the plan's message: a Bound keeps it with the plan it holds (which keeps it alive) */
    NMessage *m = b && b->nm && plan == b->plan ? b->nm : pbj_message_of(plan);
    if (b && plan == b->plan) b->nm = m;
    int declined = 0;
    PyObject *r = m ? pbj_decode_bytes(m, data, cdepth, &declined) : NULL;
    if (r == NULL) {  /* declined (or not a plan): the Python parser, as pbj.api runs it */
        PyErr_Clear();
        PyObject *parse = SLOT(codec, E.parse_off);
        PyObject *end = PyLong_FromSsize_t(n);
        if (parse != NULL && end != NULL) {
            Py_INCREF(parse);
            PyObject *pargs[5] = {data, E.zero, end, depth, Py_None};
            r = PyObject_Vectorcall(parse, pargs, 5, NULL);
            Py_DECREF(parse);
        } else if (parse == NULL && !PyErr_Occurred()) {
            PyErr_SetString(PyExc_AttributeError, "parse");
        }
        Py_XDECREF(end);
    }
    Py_DECREF(codec);
    Py_DECREF(plan);
    if (r != NULL && partial == Py_False && !(known_free && (PyObject *)Py_TYPE(r) == cls)) {
        int free = is_free(r);
        if (free == 0 && m != NULL && pbj_required_ok(r, m) == 1) free = 1;  /* the walk in C (required.c) */
        if (free == 0) {  /* one is missing, or the C walk cannot tell: pbj.required says which */
            PyObject *ok = PyObject_CallOneArg(E.check_decode, r);
            Py_XDECREF(ok);
            if (ok == NULL) free = -1;
        }
        if (free < 0) Py_CLEAR(r);
    }
    return r;
}

/* encode(obj, reverse=reverse, allow_partial=partial) when the engine writes it: as decode_in_c. */
static PyObject *encode_in_c(PyObject *obj, int reverse, PyObject *partial, int *how, Bound *b)
{
    *how = TO_PYTHON;
    if (!native_selected() || (partial != Py_False && partial != Py_True)) return NULL;
    PyObject *codec, *plan;
    int known_free = 0;  /* b: obj is exactly of b's class */
    if (b ? !bound_codec(b, &codec, &plan, &known_free) : !native_codec(Py_TYPE(obj), &codec, &plan)) return NULL;
    *how = ANSWERED;
    PyObject *r = NULL;
    int free = partial == Py_True || known_free ? 1 : is_free(obj);
    if (free == 0 && pbj_required_ok(obj, pbj_message_of(plan)) == 1) free = 1;  /* the walk in C (required.c) */
    if (free == 0) {  /* one is missing, or the C walk cannot tell: pbj.required raises or passes */
        PyObject *ok = PyObject_CallOneArg(E.check_encode, obj);
        Py_XDECREF(ok);
        free = ok == NULL ? -1 : 1;
    }
    if (free > 0) {
        PyObject *argv[2] = {plan, obj};
        r = reverse ? pbj_write_reverse(NULL, argv, 2) : pbj_encode(NULL, argv, 2);
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
    if (nargs == 2) {
        PyObject *depth = E.default_depth, *max_size = Py_None, *partial = Py_False;
        Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t i = 0; i < nk; i++) {
            PyObject *k = PyTuple_GET_ITEM(kwnames, i);
            if (k == E.s_max_depth) depth = args[2 + i];
            else if (k == E.s_max_size) max_size = args[2 + i];
            else if (k == E.s_allow_partial) partial = args[2 + i];
            else goto python;  /* another keyword (or one spelled by a string that is not interned) */
        }
        int how;
        PyObject *r = decode_in_c(args[0], args[1], depth, max_size, partial, &how, NULL);
        if (how == ANSWERED) return r;
    }
python:
    return PyObject_Vectorcall(E.py_decode, args, nargs, kwnames);
}

static PyObject *entry_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs == 1) {
        PyObject *partial = Py_False;
        int reverse = 0;
        Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t i = 0; i < nk; i++) {
            PyObject *k = PyTuple_GET_ITEM(kwnames, i);
            if (k == E.s_allow_partial) partial = args[1 + i];
            else if (k == E.s_reverse && (args[1 + i] == Py_False || args[1 + i] == Py_True))
                reverse = args[1 + i] == Py_True;
            else goto python;  /* another keyword, or reverse not a bool: Python says why */
        }
        int how;
        PyObject *r = encode_in_c(args[0], reverse, partial, &how, NULL);
        if (how == ANSWERED) return r;
    }
python:
    return PyObject_Vectorcall(E.py_encode, args, nargs, kwnames);
}

/* bind_decode's function (self: its Bound): decode(cls, data); an error of class catch_ goes to
 * handler(exc) */
static PyObject *bound_decode(PyObject *self, PyObject *data)
{
    Bound *b = (Bound *)self;
    /* The usual message: the class's cache holds (bound_codec), its plan's message is known, its
     * instances cannot miss a required field, `data` is bytes. Only the decode itself runs, the
     * plan held (it keeps the message alive); anything else (a decline, an error) is the
     * general path's, from the start. */
    if (b->nm != NULL && b->free && native_selected() && PyBytes_CheckExact(data)
        && tag_holds((PyTypeObject *)b->cls, b->tag) && SLOT(b->codec, E.native_off) == b->plan) {
        PyObject *plan = Py_NewRef(b->plan);
        int declined = 0;
        PyObject *r = pbj_decode_bytes(b->nm, data, E.default_depth_c, &declined);
        Py_DECREF(plan);
        if (r != NULL && (PyObject *)Py_TYPE(r) == b->cls) return r;
        Py_XDECREF(r);
    }
    int how;
    PyObject *r = decode_in_c(b->cls, data, E.default_depth, Py_None, Py_False, &how, b);
    if (how != ANSWERED) {
        PyObject *argv[2] = {b->cls, data};
        r = PyObject_Vectorcall(E.py_decode, argv, 2, NULL);
    }
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
    PyObject *r = encode_in_c(obj, 0, Py_False, &how, b);
    if (how == ANSWERED) return r;
    return PyObject_CallOneArg(E.py_encode, obj);
}

static int bound_traverse(PyObject *self, visitproc visit, void *arg)
{
    Bound *b = (Bound *)self;
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
    PyObject_GC_UnTrack(self);
    bound_clear(self);
    PyObject_GC_Del(self);
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

static PyTypeObject BoundType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pbj._native._engine.Bound",
    .tp_doc = "What a bound pbj.decode(cls, data) or pbj.encode(obj) keeps of its class (bind_decode, bind_encode).",
    .tp_basicsize = sizeof(Bound),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = bound_traverse,
    .tp_clear = bound_clear,
    .tp_dealloc = bound_dealloc,
    .tp_repr = bound_repr,
};

static int entry_ready(void)
{
    if (E.py_decode == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "entry_points() has not run");
        return 0;
    }
    return 1;
}

static PyObject *new_bound(PyObject *cls, PyMethodDef *def, PyObject *other, PyObject *catch_, PyObject *handler)
{
    if (!entry_ready()) return NULL;
    if (!PyType_Check(cls)) {
        PyErr_Format(PyExc_TypeError, "bind: %R is not a class", cls);
        return NULL;
    }
    Bound *b = PyObject_GC_New(Bound, &BoundType);
    if (b == NULL) return NULL;
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
    return new_bound(cls, &bound_decode_def, NULL, catch_ == Py_None ? NULL : catch_, handler == Py_None ? NULL : handler);
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
    return new_bound(cls, &bound_encode_def, other, NULL, NULL);
}

/* A builtin named `name` in module pbj.api whose __doc__ is `signature`, then the Python
 * function's own docstring (inspect.signature reads the first line). The method record and
 * its text live as long as the process (entry_points runs once per import of pbj.api). */
static PyObject *make_builtin(const char *name, _PyCFunctionFastWithKeywords fn, PyObject *signature, PyObject *pyfunc,
                              PyObject *module)
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
    char *copy = utf8 ? PyMem_RawMalloc(n + 1) : NULL;
    PyMethodDef *def = copy ? PyMem_RawCalloc(1, sizeof(PyMethodDef)) : NULL;
    if (def == NULL) {
        PyMem_RawFree(copy);
        Py_DECREF(text);
        return utf8 ? PyErr_NoMemory() : NULL;
    }
    memcpy(copy, utf8, n + 1);
    Py_DECREF(text);
    def->ml_name = name;
    def->ml_meth = (PyCFunction)(void (*)(void))fn;
    def->ml_flags = METH_FASTCALL | METH_KEYWORDS;
    def->ml_doc = copy;
    return PyCFunction_NewEx(def, NULL, module);
}

/* entry_points(native, current, Codec, decode, encode, check_decode, check_encode, FREE, DEFAULT_MAX_DEPTH,
 *              native_steps, GENERATION)
 *   -> (decode, encode, bind_decode, bind_encode): the builtins, falling back to the Python decode
 *   and encode given, and the makers of their one-argument forms; the last two are pbj.required's,
 *   for the check in C (required.c). */
PyObject *pbj_entry_points(PyObject *self, PyObject *args)
{
    PyObject *native, *current, *codec_type, *py_decode, *py_encode, *check_decode, *check_encode, *free_name, *depth;
    PyObject *steps_of, *generation;
    if (!PyArg_ParseTuple(args, "OOO!OOOOUO!OO:entry_points", &native, &current, &PyType_Type, &codec_type, &py_decode,
                          &py_encode, &check_decode, &check_encode, &free_name, &PyLong_Type, &depth, &steps_of,
                          &generation))
        return NULL;
    if (pbj_required_setup(steps_of, generation) < 0) return NULL;
    Py_ssize_t engine_off = slot_offset(Py_TYPE(current), "engine");
    Py_ssize_t native_off = engine_off < 0 ? -1 : slot_offset((PyTypeObject *)codec_type, "native");
    Py_ssize_t parse_off = native_off < 0 ? -1 : slot_offset((PyTypeObject *)codec_type, "parse");
    if (parse_off < 0) return NULL;
    if (!PyCallable_Check(py_decode) || !PyCallable_Check(py_encode) || !PyCallable_Check(check_decode)
        || !PyCallable_Check(check_encode)) {
        PyErr_SetString(PyExc_TypeError, "entry_points: the functions must be callable");
        return NULL;
    }
    if (BoundType.tp_flags & Py_TPFLAGS_READY ? 0 : PyType_Ready(&BoundType) < 0) return NULL;
    PyObject *module = PyUnicode_FromString("pbj.api");
    if (module == NULL) return NULL;
#define NAME(field, text) \
    if (E.field == NULL && (E.field = PyUnicode_InternFromString(text)) == NULL) { Py_DECREF(module); return NULL; }
    NAME(s_codec, "__pbj_codec__")
    NAME(s_max_depth, "max_depth")
    NAME(s_max_size, "max_size")
    NAME(s_allow_partial, "allow_partial")
    NAME(s_reverse, "reverse")
#undef NAME
    if (E.zero == NULL && (E.zero = PyLong_FromLong(0)) == NULL) { Py_DECREF(module); return NULL; }
    Py_INCREF(free_name);
    PyUnicode_InternInPlace(&free_name);
    Py_XSETREF(E.s_free, free_name);
    Py_XSETREF(E.current, Py_NewRef(current));
    E.current_type = Py_TYPE(current);
    E.engine_off = engine_off;
    Py_XSETREF(E.native, Py_NewRef(native));
    Py_XSETREF(E.codec_type, (PyTypeObject *)Py_NewRef(codec_type));
    E.native_off = native_off;
    E.parse_off = parse_off;
    Py_XSETREF(E.py_decode, Py_NewRef(py_decode));
    Py_XSETREF(E.py_encode, Py_NewRef(py_encode));
    Py_XSETREF(E.check_decode, Py_NewRef(check_decode));
    Py_XSETREF(E.check_encode, Py_NewRef(check_encode));
    long dc = PyLong_AsLong(depth);
    if (dc == -1 && PyErr_Occurred()) {  /* too large for a long: as the engine clamps any depth */
        PyErr_Clear();
        dc = Py_SIZE(depth) < 0 ? INT32_MIN : INT32_MAX;
    }
    E.default_depth_c = dc > INT32_MAX ? INT32_MAX : dc < INT32_MIN ? INT32_MIN : (int)dc;
    Py_XSETREF(E.default_depth, Py_NewRef(depth));
    PyObject *dec = make_builtin("decode", entry_decode,
        PyUnicode_FromFormat("decode(cls, data, *, max_depth=%R, max_size=None, allow_partial=False)", depth),
        py_decode, module);
    PyObject *enc = dec ? make_builtin("encode", entry_encode,
        PyUnicode_FromString("encode(obj, *, reverse=False, allow_partial=False)"), py_encode, module) : NULL;
    Py_DECREF(module);
    PyObject *bind_dec = enc ? PyObject_GetAttrString(self, "bind_decode") : NULL;
    PyObject *bind_enc = bind_dec ? PyObject_GetAttrString(self, "bind_encode") : NULL;
    PyObject *out = bind_enc ? PyTuple_Pack(4, dec, enc, bind_dec, bind_enc) : NULL;
    Py_XDECREF(dec);
    Py_XDECREF(enc);
    Py_XDECREF(bind_dec);
    Py_XDECREF(bind_enc);
    return out;
}
