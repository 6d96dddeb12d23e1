/* plan.c: the engine's compact form of a class's codec plan.
 *
 * pbj/_native/__init__.py (native_plan) sends each MessagePlan of a batch as it is, with the slot
 * descriptors its slot names flatten to (NativeMessage); the engine reads the plan's own records by
 * position (engine.h: FP_*, MP_*, OP_*, NM_*, checked by name at import). pbj_build turns them into
 * NMessage structs, one capsule per class, stored on the class's Codec (codec.native). A class whose
 * plan refers to a class the engine declined is declined too (None), so every NMessage the
 * engine runs reaches only NMessages.
 *
 * Lifetimes: an NMessage holds its class and the NMessages of the classes it refers to
 * *borrowed*: the capsule is owned by the class (through its Codec) and the class keeps the
 * classes it refers to alive (through its MessageInfo), so no reference cycle goes through a
 * capsule, which the cyclic collector could not break.
 */
#include "engine.h"

#define CAPSULE_NAME "pbj.native.plan"

static void free_message(NMessage *m)
{
    if (m == NULL) return;
    if (m->slot_default) {
        for (int i = 0; i < m->nslots; i++) Py_XDECREF(m->slot_default[i]);
    }
    if (m->fields) {
        for (int i = 0; i < m->nfields; i++) {
            Py_XDECREF(m->fields[i].name);
            pbj_enum_table_free(&m->fields[i]);
            Py_XDECREF(m->fields[i].enum_map);
            Py_XDECREF(m->fields[i].map_vdefault);
        }
    }
    for (int i = 0; m->oneofs && i < m->noneofs; i++) PyMem_Free(m->oneofs[i].members);
    for (int i = 0; m->writes && i < m->nwrites; i++) PyMem_Free(m->writes[i].members);
    PyMem_Free(m->slot_off);
    PyMem_Free(m->slot_kind);
    PyMem_Free(m->rep_of_slot);
    PyMem_Free(m->slot_default);
    PyMem_Free(m->fields);
    PyMem_Free(m->dispatch);
    PyMem_Free(m->lut);
    PyMem_Free(m->oneofs);
    PyMem_Free(m->writes);
    pbj_write_table_free(m);  /* the writers' table (values.c), made at the first write */
    PyMem_Free(m->msg_of_field);
    PyMem_Free(m->ranges);
    Py_XDECREF(m->registry);
    Py_XDECREF(m->holder_plan);
    Py_XDECREF(m->module);
    PyMem_Free(m);
}

static void capsule_free(PyObject *cap)
{
    free_message((NMessage *)PyCapsule_GetPointer(cap, CAPSULE_NAME));
}

NMessage *pbj_message_of(PyObject *capsule)
{
    if (!PyCapsule_CheckExact(capsule)) return NULL;
    return (NMessage *)PyCapsule_GetPointer(capsule, CAPSULE_NAME);
}

/* the byte offset a slot's member descriptor stores at, or -1 */
static Py_ssize_t offset_of(PyObject *descr)
{
    return pbj_slot_offset(descr);
}

static int get_int(PyObject *t, Py_ssize_t i, int *out)
{
    long v = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < INT_MIN || v > INT_MAX) return -1;  /* never cut down to another number */
    *out = (int)v;
    return 0;
}

/* a tag of the dispatch table: up to (MAX_FIELD_NUMBER << 3) | 7, past INT_MAX from field number 2**28 */
static int get_tag_number(PyObject *t, Py_ssize_t i, uint32_t *out)
{
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v <= 0 || v > (long long)(((uint64_t)MAX_FIELD_NUMBER << 3) | 7)) return -1;
    *out = (uint32_t)v;
    return 0;
}

static int get_tag(PyObject *b, uint8_t *dst, uint8_t *len)
{
    if (!PyBytes_Check(b) || PyBytes_GET_SIZE(b) > 5) return -1;
    *len = (uint8_t)PyBytes_GET_SIZE(b);
    memcpy(dst, PyBytes_AS_STRING(b), *len);
    return 0;
}

/* a tuple of ints as a new array of *n ints (PyMem_Free it), or NULL; also read by arrow.c */
int *pbj_int_array(PyObject *t, int *n)
{
    if (!PyTuple_Check(t)) return NULL;
    *n = (int)PyTuple_GET_SIZE(t);
    int *a = PyMem_Calloc(*n + 1, sizeof(int));
    if (!a) return NULL;
    for (int i = 0; i < *n; i++) {
        if (get_int(t, i, &a[i]) < 0) { PyMem_Free(a); return NULL; }
    }
    return a;
}


/* one pbj.codec.plan.FieldPlan (read by position: engine.h, FP_*, checked at import) */
static int convert_field(NField *f, PyObject *t)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != FP_SIZE) return -1;
    int number;
    if (get_int(t, FP_NUMBER, &number) < 0 || get_int(t, FP_SLOT, &f->slot) < 0 || get_int(t, FP_LABEL, &f->label) < 0
        || get_int(t, FP_TYPE, &f->type) < 0 || get_int(t, FP_KEY, &f->key) < 0 || get_int(t, FP_ONEOF, &f->oneof) < 0
        || get_int(t, FP_GROUP, &f->group) < 0 || get_int(t, FP_CLOSED, &f->closed) < 0
        || get_int(t, FP_WIDTH, &f->width) < 0)
        return -1;
    f->number = (uint32_t)number;
    if (get_tag(PyTuple_GET_ITEM(t, FP_TAG), f->tag, &f->tag_len) < 0
        || get_tag(PyTuple_GET_ITEM(t, FP_END_TAG), f->end_tag, &f->end_tag_len) < 0
        || get_tag(PyTuple_GET_ITEM(t, FP_VALUE_TAG), f->vtag, &f->vtag_len) < 0)
        return -1;
    int ktag;
    if (get_int(t, FP_KEY_TAG, &ktag) < 0 || ktag < 0 || ktag > 0x7F) return -1;
    f->ktag = (uint8_t)ktag;
    f->name = Py_NewRef(PyTuple_GET_ITEM(t, FP_NAME));
    PyObject *em = PyTuple_GET_ITEM(t, FP_ENUM_MEMBERS);
    f->enum_map = em == Py_None ? NULL : Py_NewRef(em);
    if (f->enum_map && (!PyDict_CheckExact(f->enum_map) || pbj_enum_table(f) < 0)) return -1;
    PyObject *vd = PyTuple_GET_ITEM(t, FP_VALUE_DEFAULT);
    f->map_vdefault = vd == Py_None ? NULL : Py_NewRef(vd);
    if (get_int(t, FP_SUB, &f->sub) < 0 || get_int(t, FP_UTF8, &f->utf8) < 0) return -1;
    if (f->type < 0 || f->type > T_MESSAGE || f->label < 0 || f->label > L_MEMBER) return -1;
    if (f->label == L_MAP && (f->key < 0 || f->key >= T_MESSAGE)) return -1;
    pbj_writer_types(f);  /* (values.c) */
    return 0;
}


/* one class: the adapter's NativeMessage (the plan itself, pbj.codec.plan.MessagePlan, read by
 * position: engine.h, MP_*, NM_*, checked at import; and the slots its names flatten to) */
static NMessage *convert_message(PyObject *module, PyObject *t)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != NM_SIZE) return NULL;
    PyObject *mp = PyTuple_GET_ITEM(t, NM_PLAN);
    if (!PyTuple_Check(mp) || PyTuple_GET_SIZE(mp) != MP_SIZE) return NULL;
    NMessage *m = PyMem_Calloc(1, sizeof(NMessage));
    if (!m) return NULL;
    m->module = Py_NewRef(module);
    m->st = pbj_state(module);
    PyObject *cls = PyTuple_GET_ITEM(mp, MP_CLS);
    PyObject *descrs = PyTuple_GET_ITEM(t, NM_SLOT_DESCRIPTORS);
    PyObject *defaults = PyTuple_GET_ITEM(mp, MP_SLOT_DEFAULTS);
    PyObject *kinds = PyTuple_GET_ITEM(mp, MP_SLOT_KINDS);
    PyObject *fields = PyTuple_GET_ITEM(mp, MP_FIELDS);
    PyObject *dispatch = PyTuple_GET_ITEM(mp, MP_DISPATCH);
    PyObject *writes = PyTuple_GET_ITEM(mp, MP_WRITES);
    PyObject *oneofs = PyTuple_GET_ITEM(mp, MP_ONEOFS);
    PyObject *ranges = PyTuple_GET_ITEM(mp, MP_EXTENSION_RANGES);
    PyObject *registry = PyTuple_GET_ITEM(mp, MP_EXTENSION_REGISTRY);
    PyObject *ext_descr = PyTuple_GET_ITEM(t, NM_EXTENSIONS_SLOT);
    PyObject *holder_plan = PyTuple_GET_ITEM(t, NM_HOLDER_PLAN);
    m->ext_off = -1;
    if (!PyTuple_Check(ranges) || (registry != Py_None && !PyDict_CheckExact(registry))) goto fail;
    if (!PyType_Check(cls) || !PyTuple_Check(descrs) || !PyTuple_Check(defaults) || !PyTuple_Check(kinds)
        || !PyTuple_Check(fields) || !PyTuple_Check(dispatch) || !PyTuple_Check(writes) || !PyTuple_Check(oneofs))
        goto fail;
    m->cls = (PyTypeObject *)cls;
    if (m->cls->tp_itemsize != 0) goto fail;
    m->nslots = (int)PyTuple_GET_SIZE(descrs);
    if (PyTuple_GET_SIZE(defaults) != m->nslots || PyTuple_GET_SIZE(kinds) != m->nslots) goto fail;
    m->slot_off = PyMem_Calloc(m->nslots + 1, sizeof(Py_ssize_t));
    m->slot_kind = PyMem_Calloc(m->nslots + 1, sizeof(int));
    m->slot_default = PyMem_Calloc(m->nslots + 1, sizeof(PyObject *));
    if (!m->slot_off || !m->slot_kind || !m->slot_default) goto fail;
    for (int i = 0; i < m->nslots; i++) {
        m->slot_off[i] = offset_of(PyTuple_GET_ITEM(descrs, i));
        if (m->slot_off[i] < (Py_ssize_t)sizeof(PyObject)
            || m->slot_off[i] + (Py_ssize_t)sizeof(PyObject *) > m->cls->tp_basicsize) goto fail;
        if (get_int(kinds, i, &m->slot_kind[i]) < 0 || m->slot_kind[i] < S_SINGULAR || m->slot_kind[i] > S_ONEOF) goto fail;
        m->slot_default[i] = Py_NewRef(PyTuple_GET_ITEM(defaults, i));
    }
    m->rep_of_slot = PyMem_Calloc(m->nslots + 1, sizeof(int));
    if (!m->rep_of_slot) goto fail;
    for (int i = 0; i < m->nslots; i++) {
        m->rep_of_slot[i] = m->slot_kind[i] == S_REPEATED ? m->nrep++ : -1;
    }
    /* PyObject_GC_New leaves the slots unset: every slot of the instance must be one the
     * decoder sets (the listed slots, _pbj_unknown, _pbj_size), and nothing else may need
     * zeroing (no __dict__, no __weakref__) */
    /* extensions: the ranges (ascending, within field numbers), the registry read at each decode */
    m->nranges = (int)PyTuple_GET_SIZE(ranges);
    m->ranges = PyMem_Calloc(2 * m->nranges + 2, sizeof(uint32_t));
    if (!m->ranges) goto fail;
    for (int i = 0; i < m->nranges; i++) {
        PyObject *r = PyTuple_GET_ITEM(ranges, i);
        int lo, hi;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 || get_int(r, 0, &lo) < 0 || get_int(r, 1, &hi) < 0
            || lo < 1 || hi <= lo) goto fail;  /* a message set's reaches 2**31 - 1 */
        if (i > 0 && (uint32_t)lo < m->ranges[2 * i - 1]) goto fail;
        m->ranges[2 * i] = (uint32_t)lo;
        m->ranges[2 * i + 1] = (uint32_t)hi;
    }
    if (get_int(mp, MP_MESSAGE_SET, &m->message_set) < 0) goto fail;
    {
        long number = PyLong_AsLong(PyTuple_GET_ITEM(mp, MP_EXTENSION_NUMBER));
        if (number == -1 && PyErr_Occurred()) goto fail;
        m->ext_number = number;
    }
    if (m->nranges) {
        if (registry == Py_None || !PyCallable_Check(holder_plan)) goto fail;
        m->registry = Py_NewRef(registry);
        m->holder_plan = Py_NewRef(holder_plan);
        m->ext_off = offset_of(ext_descr);
        if (m->ext_off < (Py_ssize_t)sizeof(PyObject)
            || m->ext_off + (Py_ssize_t)sizeof(PyObject *) > m->cls->tp_basicsize) goto fail;
    }
    m->gc_new = PyType_HasFeature(m->cls, Py_TPFLAGS_HAVE_GC) && m->cls->tp_dictoffset == 0
                && m->cls->tp_weaklistoffset == 0
                && m->cls->tp_basicsize == (Py_ssize_t)sizeof(PyObject)
                   + (m->nslots + 2 + (m->ext_off >= 0)) * (Py_ssize_t)sizeof(PyObject *);
    m->unknown_off = offset_of(PyTuple_GET_ITEM(t, NM_UNKNOWN_SLOT));
    m->size_off = offset_of(PyTuple_GET_ITEM(t, NM_SIZE_SLOT));
    if (m->unknown_off < (Py_ssize_t)sizeof(PyObject) || m->size_off < (Py_ssize_t)sizeof(PyObject)
        || m->unknown_off + (Py_ssize_t)sizeof(PyObject *) > m->cls->tp_basicsize
        || m->size_off + (Py_ssize_t)sizeof(PyObject *) > m->cls->tp_basicsize) goto fail;

    m->nfields = (int)PyTuple_GET_SIZE(fields);
    m->fields = PyMem_Calloc(m->nfields + 1, sizeof(NField));
    if (!m->fields) goto fail;
    for (int i = 0; i < m->nfields; i++) {
        if (convert_field(&m->fields[i], PyTuple_GET_ITEM(fields, i)) < 0) goto fail;
        NField *f = &m->fields[i];
        if (f->slot < 0 || f->slot >= m->nslots) goto fail;
    }
    m->msg_of_field = PyMem_Calloc(m->nfields + 1, sizeof(int));
    if (!m->msg_of_field) goto fail;
    for (int i = 0; i < m->nfields; i++) {
        NField *f = &m->fields[i];
        int single = f->type == T_MESSAGE && (f->label == L_EXPLICIT || f->label == L_IMPLICIT || f->label == L_MEMBER);
        m->msg_of_field[i] = single ? m->nmsgf++ : -1;
    }

    m->small = m->nslots <= PBJ_STACK_SLOTS && m->nrep <= PBJ_STACK_REPEATED && m->nmsgf <= PBJ_STACK_SPANS;

    m->ndispatch = (int)PyTuple_GET_SIZE(dispatch);
    m->dispatch = PyMem_Calloc(m->ndispatch + 1, sizeof(NDispatch));
    if (!m->dispatch) goto fail;
    uint32_t max_tag = 0;
    for (int i = 0; i < m->ndispatch; i++) {
        PyObject *d = PyTuple_GET_ITEM(dispatch, i);
        uint32_t tag;
        int field, form;
        if (!PyTuple_Check(d) || PyTuple_GET_SIZE(d) != 3 || get_tag_number(d, 0, &tag) < 0
            || get_int(d, 1, &field) < 0 || get_int(d, 2, &form) < 0) goto fail;
        if (field < 0 || field >= m->nfields) goto fail;
        m->dispatch[i].tag = tag;
        m->dispatch[i].field = field;
        if (form != F_VALUE && form != F_PACKED_RUN && form != F_GROUP_START) goto fail;
        m->dispatch[i].form = form;
        if (tag > max_tag) max_tag = tag;
        if (i > 0 && m->dispatch[i - 1].tag >= tag) goto fail;  /* sorted, unique */
    }
    m->lut_size = max_tag < 4096 ? (int)max_tag + 1 : 4096;
    m->lut = PyMem_Calloc(m->lut_size, sizeof(int16_t));
    if (!m->lut) goto fail;
    for (int i = 0; i < m->ndispatch && i < 32000; i++) {
        if (m->dispatch[i].tag < (uint32_t)m->lut_size) m->lut[m->dispatch[i].tag] = (int16_t)(i + 1);
    }
    if (m->ndispatch >= 32000) goto fail;

    m->noneofs = (int)PyTuple_GET_SIZE(oneofs);
    m->oneofs = PyMem_Calloc(m->noneofs + 1, sizeof(NOneof));
    if (!m->oneofs) goto fail;
    for (int i = 0; i < m->noneofs; i++) {
        PyObject *o = PyTuple_GET_ITEM(oneofs, i);  /* a pbj.codec.plan.OneofPlan */
        if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != OP_SIZE || get_int(o, OP_SLOT, &m->oneofs[i].slot) < 0) goto fail;
        m->oneofs[i].members = pbj_int_array(PyTuple_GET_ITEM(o, OP_MEMBERS), &m->oneofs[i].nmembers);
        if (!m->oneofs[i].members || m->oneofs[i].slot < 0 || m->oneofs[i].slot >= m->nslots) goto fail;
        for (int k = 0; k < m->oneofs[i].nmembers; k++) {
            if (m->oneofs[i].members[k] < 0 || m->oneofs[i].members[k] >= m->nfields) goto fail;
        }
    }
    for (int i = 0; i < m->nfields; i++) {
        if (m->fields[i].oneof >= m->noneofs) goto fail;
    }
    if (m->noneofs > PBJ_STACK_SLOTS) m->small = 0;

    m->nwrites = (int)PyTuple_GET_SIZE(writes);
    m->writes = PyMem_Calloc(m->nwrites + 1, sizeof(NWrite));
    if (!m->writes) goto fail;
    for (int i = 0; i < m->nwrites; i++) {
        PyObject *w = PyTuple_GET_ITEM(writes, i);
        NWrite *nw = &m->writes[i];
        if (!PyTuple_Check(w) || PyTuple_GET_SIZE(w) != 3 || get_int(w, 0, &nw->step) < 0
            || get_int(w, 1, &nw->index) < 0) goto fail;
        nw->members = pbj_int_array(PyTuple_GET_ITEM(w, 2), &nw->nmembers);
        if (!nw->members) goto fail;
        if (nw->step != W_FIELD && nw->step != W_RUN && nw->step != W_EXTENSIONS) goto fail;  /* a step this engine does not know */
        if (nw->step == W_FIELD && (nw->index < 0 || nw->index >= m->nfields)) goto fail;
        if (nw->step == W_RUN && (nw->index < 0 || nw->index >= m->noneofs)) goto fail;
        if (nw->step == W_EXTENSIONS && (nw->index < 0 || nw->index >= m->nranges)) goto fail;
        for (int k = 0; k < nw->nmembers; k++) {
            if (nw->members[k] < 0 || nw->members[k] >= m->nfields) goto fail;
        }
    }
    return m;
fail:
    free_message(m);
    return NULL;
}

/* build(messages, externals) -> list of capsules (None where the engine declines the class).
 * externals[i] is the capsule (or None) of classes[len(messages) + i]. */
PyObject *pbj_build(PyObject *self, PyObject *args)
{
    PyObject *messages, *externals;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &messages, &PyTuple_Type, &externals)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(messages), ne = PyTuple_GET_SIZE(externals);
    NMessage **ms = PyMem_Calloc(n + ne + 1, sizeof(NMessage *));
    if (!ms) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        ms[i] = convert_message(self, PyTuple_GET_ITEM(messages, i));
        PyErr_Clear();
    }
    for (Py_ssize_t i = 0; i < ne; i++) {
        PyObject *c = PyTuple_GET_ITEM(externals, i);
        ms[n + i] = c == Py_None ? NULL : pbj_message_of(c);
        PyErr_Clear();
    }
    /* a class referring to a declined class is declined, until nothing changes */
    int changed = 1;
    while (changed) {
        changed = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            NMessage *m = ms[i];
            if (!m) continue;
            for (int k = 0; k < m->nfields; k++) {
                NField *f = &m->fields[k];
                if (f->type != T_MESSAGE) continue;
                if (f->sub < 0 || f->sub >= n + ne || ms[f->sub] == NULL) {
                    free_message(m);
                    ms[i] = NULL;
                    changed = 1;
                    break;
                }
                f->subm = ms[f->sub];
            }
        }
    }
    PyObject *out = PyList_New(n);
    if (!out) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ms[i] == NULL) {
            PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
            continue;
        }
#ifdef Py_GIL_DISABLED
        /* Free-threaded CPython: the writers' table is made here, before any thread can see the
         * plan, and never changes (with the GIL it is made at the class's first write: values.c) */
        if (pbj_write_table(ms[i]) < 0) { Py_DECREF(out); out = NULL; goto fail; }
#endif
        PyObject *cap = PyCapsule_New(ms[i], CAPSULE_NAME, capsule_free);
        if (!cap) { Py_DECREF(out); out = NULL; goto fail; }
        ms[i] = NULL;
        PyList_SET_ITEM(out, i, cap);
    }
    PyMem_Free(ms);
    return out;
fail:
    for (Py_ssize_t i = 0; i < n; i++) free_message(ms[i]);
    PyMem_Free(ms);
    return NULL;
}
