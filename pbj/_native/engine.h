/* pbj native engine: the compact plan and what the engine's files share.
 *
 * The engine runs the codec plan of pbj.codec.plan, converted once per class
 * by plan.c from the tuples pbj/_native/__init__.py (native_plan) builds.
 * Every function that can fail returns an error value (NULL or -1) with or
 * without a Python exception set; the caller of the engine (pbj.api) then
 * hands the same input to the pure-Python engine, which raises the error it
 * always raised. So the engine never has to say *why* it failed, only *that*
 * it did: a decline and an error look the same from outside.
 */
#ifndef PBJ_ENGINE_H
#define PBJ_ENGINE_H

#include "compat.h"
#include <stdint.h>
#include <string.h>

/* type codes: pbj.scalars.BY_CODE order, MESSAGE after them */
enum {
    T_DOUBLE, T_FLOAT, T_INT64, T_UINT64, T_INT32, T_FIXED64, T_FIXED32, T_BOOL,
    T_STRING, T_BYTES, T_UINT32, T_SFIXED32, T_SFIXED64, T_SINT32, T_SINT64, T_ENUM,
    T_MESSAGE
};
/* the writers' own code for a string that may keep any bytes (NField.wtype, wkey: a string field
 * whose utf8 is false): its lone surrogates U+DC80..U+DCFF are written as the bytes they stand for
 * (surrogateescape), as the Python writer writes them (values.h: pbj_wire) */
#define T_ANYSTR (T_MESSAGE + 1)
/* labels (pbj.codec.plan) */
enum { L_IMPLICIT, L_EXPLICIT, L_REPEATED, L_PACKED, L_MAP, L_MEMBER };
/* parse forms */
enum { F_VALUE, F_PACKED_RUN, F_GROUP_START };
/* write steps */
enum { W_FIELD, W_RUN, W_EXTENSIONS };
/* what a slot holds while decoding (pbj.codec.plan: slot kinds) */
enum { S_SINGULAR, S_REPEATED, S_MAP, S_ONEOF };
/* the node kinds of a column plan (arrow.c; pbj._native.ARROW_KINDS) */
enum { AK_SCALAR, AK_ENUM, AK_STRUCT, AK_ONEOF, AK_LIST, AK_MAP, AK_TIME, AK_WRAPPER, AK_ENCODED, AK_PRESENT, AK_COUNT };

/* The plan's own records, as the engine reads them (plan.c): the position of each attribute it reads
 * in pbj.codec.plan's FieldPlan, MessagePlan and OneofPlan, and in the adapter's NativeMessage
 * (pbj/_native/__init__.py: the plan and what flattening its slot names gives). */
enum { FP_NAME = 0, FP_NUMBER = 2, FP_SLOT = 4, FP_LABEL = 5, FP_TYPE = 6, FP_GROUP = 7, FP_TAG = 8, FP_END_TAG = 9,
       FP_WIDTH = 10, FP_SUB = 11, FP_CLOSED = 13, FP_KEY = 14, FP_ONEOF = 16, FP_UTF8 = 18, FP_KEY_TAG = 19,
       FP_VALUE_TAG = 20, FP_VALUE_DEFAULT = 21, FP_ENUM_MEMBERS = 22, FP_SIZE = 23 };
enum { MP_CLS = 2, MP_FIELDS = 5, MP_WRITES = 6, MP_ONEOFS = 7, MP_DISPATCH = 8, MP_EXTENSION_RANGES = 10,
       MP_MESSAGE_SET = 11, MP_SLOT_KINDS = 12, MP_SLOT_DEFAULTS = 13, MP_EXTENSION_NUMBER = 14,
       MP_EXTENSION_REGISTRY = 15, MP_SIZE = 17 };
enum { OP_SLOT = 1, OP_MEMBERS = 2, OP_SIZE = 3 };
enum { NM_PLAN, NM_SLOT_DESCRIPTORS, NM_UNKNOWN_SLOT, NM_SIZE_SLOT, NM_EXTENSIONS_SLOT, NM_HOLDER_PLAN, NM_SIZE };

/* Every code above, by the name pbj/_native/__init__.py gives it in the layout it hands to
 * setup() at import: setup() refuses (and the import fails) unless each is the value the Python
 * side sends, so a code or a record changed on one side only cannot give silently wrong bytes. */
#define PBJ_TYPE_ENTRIES \
    X(double, T_DOUBLE) X(float, T_FLOAT) X(int64, T_INT64) X(uint64, T_UINT64) X(int32, T_INT32) \
    X(fixed64, T_FIXED64) X(fixed32, T_FIXED32) X(bool, T_BOOL) X(string, T_STRING) X(bytes, T_BYTES) \
    X(uint32, T_UINT32) X(sfixed32, T_SFIXED32) X(sfixed64, T_SFIXED64) X(sint32, T_SINT32) \
    X(sint64, T_SINT64) X(enum, T_ENUM)
#define PBJ_LAYOUT_ENTRIES \
    PBJ_TYPE_ENTRIES X(message, T_MESSAGE) \
    X(IMPLICIT, L_IMPLICIT) X(EXPLICIT, L_EXPLICIT) X(REPEATED, L_REPEATED) X(PACKED, L_PACKED) \
    X(MAP, L_MAP) X(MEMBER, L_MEMBER) \
    X(VALUE, F_VALUE) X(PACKED_RUN, F_PACKED_RUN) X(GROUP_START, F_GROUP_START) \
    X(FIELD, W_FIELD) X(RUN, W_RUN) X(EXTENSIONS, W_EXTENSIONS) \
    X(S_SINGULAR, S_SINGULAR) X(S_REPEATED, S_REPEATED) X(S_MAP, S_MAP) X(S_ONEOF, S_ONEOF) \
    X(arrow.scalar, AK_SCALAR) X(arrow.enum, AK_ENUM) X(arrow.struct, AK_STRUCT) X(arrow.oneof, AK_ONEOF) \
    X(arrow.list, AK_LIST) X(arrow.map, AK_MAP) X(arrow.time, AK_TIME) X(arrow.wrapper, AK_WRAPPER) \
    X(arrow.encoded, AK_ENCODED) X(arrow.present, AK_PRESENT) \
    X(FieldPlan.name, FP_NAME) X(FieldPlan.number, FP_NUMBER) X(FieldPlan.slot, FP_SLOT) \
    X(FieldPlan.label, FP_LABEL) X(FieldPlan.type, FP_TYPE) X(FieldPlan.group, FP_GROUP) X(FieldPlan.tag, FP_TAG) \
    X(FieldPlan.end_tag, FP_END_TAG) X(FieldPlan.width, FP_WIDTH) X(FieldPlan.sub, FP_SUB) \
    X(FieldPlan.closed, FP_CLOSED) X(FieldPlan.key, FP_KEY) X(FieldPlan.oneof, FP_ONEOF) X(FieldPlan.utf8, FP_UTF8) \
    X(FieldPlan.key_tag, FP_KEY_TAG) X(FieldPlan.value_tag, FP_VALUE_TAG) \
    X(FieldPlan.value_default, FP_VALUE_DEFAULT) X(FieldPlan.enum_members, FP_ENUM_MEMBERS) \
    X(FieldPlan.size, FP_SIZE) \
    X(MessagePlan.cls, MP_CLS) X(MessagePlan.fields, MP_FIELDS) X(MessagePlan.writes, MP_WRITES) \
    X(MessagePlan.oneofs, MP_ONEOFS) X(MessagePlan.dispatch, MP_DISPATCH) \
    X(MessagePlan.extension_ranges, MP_EXTENSION_RANGES) X(MessagePlan.message_set, MP_MESSAGE_SET) \
    X(MessagePlan.slot_kinds, MP_SLOT_KINDS) X(MessagePlan.slot_defaults, MP_SLOT_DEFAULTS) \
    X(MessagePlan.extension_number, MP_EXTENSION_NUMBER) X(MessagePlan.extension_registry, MP_EXTENSION_REGISTRY) \
    X(MessagePlan.size, MP_SIZE) \
    X(OneofPlan.slot, OP_SLOT) X(OneofPlan.members, OP_MEMBERS) X(OneofPlan.size, OP_SIZE) \
    X(NativeMessage.plan, NM_PLAN) X(NativeMessage.slot_descriptors, NM_SLOT_DESCRIPTORS) \
    X(NativeMessage.unknown_slot, NM_UNKNOWN_SLOT) X(NativeMessage.size_slot, NM_SIZE_SLOT) \
    X(NativeMessage.extensions_slot, NM_EXTENSIONS_SLOT) X(NativeMessage.holder_plan, NM_HOLDER_PLAN) \
    X(NativeMessage.size, NM_SIZE)

/* The layout Python sends (pbj._native.layout()) must be this build's, entry for entry
 * (PBJ_LAYOUT_ENTRIES): ImportError otherwise. Both modules check it when they are set up (module.c's
 * setup, arrow_encode.c's setup). */
static inline int pbj_check_layout(PyObject *layout)
{
    Py_ssize_t n = 0;
#define X(name, value) \
    { \
        PyObject *v = PyDict_GetItemString(layout, #name); \
        long got = v && PyLong_Check(v) ? PyLong_AsLong(v) : -1; \
        if (got != (value)) { \
            PyErr_Format(PyExc_ImportError, "pbj's native engine was built for another codec plan: its %s is %d, " \
                         "pbj sends %R (rebuild the extension from these sources)", #name, (int)(value), v); \
            return -1; \
        } \
        n++; \
    }
    PBJ_LAYOUT_ENTRIES
#undef X
    if (PyDict_GET_SIZE(layout) != n) {
        PyErr_Format(PyExc_ImportError, "pbj's native engine was built for another codec plan: pbj sends %zd "
                     "codes, the engine knows %zd (rebuild the extension from these sources)",
                     PyDict_GET_SIZE(layout), n);
        return -1;
    }
    return 0;
}

/* Deepest C recursion the engine allows itself (messages, groups, skipped groups); deeper
 * input is declined and the pure-Python engine (with its own limits) decides. */
#define NATIVE_MAX_LEVEL 200
#define MAX_FIELD_NUMBER 536870911u

typedef struct NMessage NMessage;
typedef struct PbjState PbjState;

typedef struct {
    uint32_t number;
    int slot;          /* index into NMessage.slot_off */
    int label, type, key, oneof;
    int group, closed;
    int utf8;          /* a string (map key or value too) must be valid UTF-8; 0: any bytes, kept
                        * as Python keeps them (surrogateescape) */
    int width;         /* fixed width (4/8), 1 for bool, else 0 */
    int wtype, wkey;   /* type and key as the writers convert them: T_ANYSTR for a string (a map's
                        * string key, value) that may keep any bytes, else type and key */
    uint8_t tag[5], tag_len;        /* tag written before each value */
    uint8_t end_tag[5], end_tag_len;
    uint8_t vtag[5], vtag_len;      /* the value's own tag (unpacked element, map value tag) */
    uint8_t ktag;                   /* map key tag (field 1) */
    PyObject *name;       /* attribute (or member) name, owned */
    PyObject *enum_map;   /* dict int -> member, owned, or NULL */
    struct NEnum *enum_table; /* the same in C (read.c, pbj_enum_table), owned, or NULL */
    PyObject *map_vdefault; /* a map's value default (scalars, enums), owned, or NULL */
    int sub;              /* index into the batch's classes, or -1 */
    NMessage *subm;       /* borrowed: lives as long as this class */
} NField;

typedef struct {
    uint32_t tag;
    int field;
    int form;
} NDispatch;

typedef struct {
    int slot;
    int nmembers;
    int *members;        /* field indexes */
} NOneof;

typedef struct {
    int step, index;
    int nmembers;
    int *members;
} NWrite;

/* The writers' table (values.c: pbj_write_table): one entry per write step, with what the walk
 * over present fields (values.h: pbj_step) needs without looking anything else up. */
enum { SH_IMPLICIT, SH_EXPLICIT, SH_MESSAGE, SH_REPEATED, SH_PACKED, SH_MAP, SH_ONEOF, SH_EXT,
       SH_KEPT_IMPLICIT, SH_KEPT_EXPLICIT };  /* SH_KEPT_*: a singular string that may keep any bytes */
typedef struct {
    Py_ssize_t off;      /* the step's slot, as a byte offset into the instance */
    int shape;           /* SH_* */
    int op;              /* values.h, WOP: the shape and a scalar's type, for one switch */
    int index;           /* SH_ONEOF: the oneof; SH_EXT: the extension range */
    int whole;           /* SH_ONEOF: the step writes every member of the oneof (no run to look in) */
    NField *f;           /* the field (SH_ONEOF: NULL, the member is found per object) */
    NWrite *st;          /* the plan's step */
} WStep;

struct NMessage {
    PbjState *st;               /* the state of the module that built it (held through `module`) */
    PyObject *module;           /* owned */
    PyTypeObject *cls;          /* borrowed */
    int nslots;
    Py_ssize_t *slot_off;       /* byte offsets of the slots in an instance */
    int *slot_kind;
    PyObject **slot_default;    /* owned (None, (), EMPTY_MAP, a default value) */
    int nrep;                   /* repeated slots */
    int *rep_of_slot;           /* slot -> index among the repeated slots, or -1 */
    int gc_new;                 /* instances can be made with PyObject_GC_New (all slots are set) */
    int small;                  /* its walk's state fits the stack arrays (walk.h, decode.c): at most
                                 * PBJ_STACK_SLOTS slots and oneofs, 8 repeated fields, PBJ_STACK_SPANS
                                 * singular sub-message fields */
    Py_ssize_t unknown_off, size_off;
    int nfields;
    NField *fields;
    int ndispatch;
    NDispatch *dispatch;
    int lut_size;               /* tags below this are looked up in lut */
    int16_t *lut;               /* tag -> dispatch index + 1, 0 = unknown */
    int noneofs;
    NOneof *oneofs;
    int nwrites;
    NWrite *writes;
    WStep *wsteps;              /* the writers' table, made at the first write (values.c; free-threaded
                                 * builds: with the plan, plan.c), or NULL */
    /* singular sub-message fields (and members), which may occur more than once and merge */
    int nmsgf;
    int *msg_of_field;          /* field index -> index among them, or -1 */
    /* extensions (extensions.c) */
    int nranges;
    uint32_t *ranges;           /* (lo, hi) pairs, hi exclusive, ascending */
    PyObject *registry;         /* owned: the class's extension registry (number -> Extension), or NULL */
    int message_set;
    Py_ssize_t ext_off;         /* the _pbj_extensions slot, or -1 (no extension ranges) */
    long ext_number;            /* a holder class: its extension's number, else -1 */
    PyObject *holder_plan;      /* owned: _holder_plan(ext) -> capsule | None, or NULL */
};

/* entry.c: a class's codec and plan, known from an earlier call (borrowed: valid while the class
 * keeps its version tag; see entry.c, native_codec) */
typedef struct {
    PyTypeObject *type;
    unsigned int tag;
    PyObject *codec, *plan;
    int free;
} TypeCache;
#define PBJ_TYPE_CACHE 64

/* entry.c: what pbj.decode and pbj.encode as builtins read (entry_points() fills it) */
typedef struct {
    PyObject *current;          /* pbj.engines.CURRENT */
    PyTypeObject *current_type;
    Py_ssize_t engine_off;      /* its `engine` slot */
    PyObject *native;           /* the native engine's Engine object */
    PyTypeObject *codec_type;   /* pbj.codec.compiler.Codec */
    Py_ssize_t native_off, parse_off;  /* its `native` and `parse` slots */
    PyObject *py_decode, *py_encode;   /* pbj.api's Python functions */
    PyObject *check_decode, *check_encode;  /* pbj.required's walks */
    PyObject *steps_of;         /* pbj.required.native_steps (required.c) */
    PyObject *generation;       /* pbj.required.GENERATION, a list of one int (required.c) */
    PyObject *s_required_state; /* "__pbj_required__" */
    PyObject *default_depth;    /* pbj.api.DEFAULT_MAX_DEPTH */
    int default_depth_c;        /* its value as the engine takes it (at most INT32_MAX) */
    PyObject *s_free, *s_max_depth, *s_max_size, *s_allow_partial, *s_reverse;
    PyObject *zero;
    PyObject *decode_fn, *encode_fn;  /* the builtins made, or NULL */
    PyMethodDef decode_def, encode_def;  /* their method records; the docs are owned (PyMem) */
    PyTypeObject *bound_type;   /* what bind_decode/bind_encode keep (a heap type of this module) */
    TypeCache types[PBJ_TYPE_CACHE];
} PbjEntry;

/* The module's state (PEP 489: pbj._native._engine keeps nothing in process globals). Every
 * object the engine reads that is not in a plan or an argument is here. A plan (NMessage) keeps
 * the state of the module that built it (`st`, and a strong reference to the module), so a
 * decode or an encode reaches it through the plan it runs, with no look-up per call or value. */
struct PbjState {
    PyObject *FrozenMap, *OneOf, *EMPTY_MAP;  /* the containers decoded values use (setup) */
    PyObject *DecodeError;      /* pbj.errors.DecodeError (setup): what a refused input raises */
    PyObject *type_names;       /* the scalar types' names by code (pbj.scalars, checked by setup), for error texts */
    PyObject *empty_tuple, *empty_bytes;
    PyObject *minus_one;        /* the cached size of a message not measured yet */
    /* the forward writer's size ints above 256 (CPython's own cache ends there), by size & 255: an
     * equal size reuses the int (ints are immutable), so a tree of equal-sized messages holds one
     * int, not one each (encode.c: set_size); sizes_of: the value each one holds, 0 for none */
    PyObject *sizes[256];
    Py_ssize_t sizes_of[256];
    /* interned attribute names */
    PyObject *s_codec, *s_native, *s_holder, *s_writer_view, *s_writer_grow, *s_scratch;
    /* switches for tests and fuzzing, read once from the environment when the module is executed
     * (PBJ_NATIVE_SHARE_MIN, PBJ_NATIVE_UNTRACK: see module.c) */
    Py_ssize_t share_min;       /* inputs of at least this many bytes share sub-messages (share.c) */
    uint64_t share_key[2];      /* the key of share.c's hash (pbj_share_key) */
    int untrack;                /* decoded messages are left untracked by the cyclic GC */
    PbjEntry entry;
};

/* the state of module `mod` (the engine's own module object) */
static inline PbjState *pbj_state(PyObject *mod)
{
    return (PbjState *)PyModule_GetState(mod);
}

#define PBJ_STACK_SLOTS 48
#define PBJ_STACK_REPEATED 8
#define PBJ_STACK_SPANS 16

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* plan.c */
PyObject *pbj_build(PyObject *self, PyObject *args);
NMessage *pbj_message_of(PyObject *capsule);
int *pbj_int_array(PyObject *t, int *n);  /* a tuple of ints: a new array (PyMem_Free), or NULL */
/* decode.c */
PyObject *pbj_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *pbj_decode_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *pbj_decode_bytes(PbjState *st, NMessage *m, PyObject *data, int depth, int *declined);  /* data: exactly bytes */
/* encode.c (values.c and values.h: what both writers share, below) */
PyObject *pbj_encode(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* one scalar in its wire form (values.h: pbj_wire) */
typedef struct {
    uint64_t u;          /* varint or fixed-width bits */
    const char *s;       /* LEN value */
    Py_ssize_t n;        /* (kind K_OWNED, values.h: s is the contents of a bytes object the holder
                          * of the WV owns, wv_owner) */
} WV;
int pbj_write_table(NMessage *m);       /* makes m->wsteps; -1: no memory (an error set) */
void pbj_writer_types(NField *f);       /* sets f->wtype and f->wkey (from type, key, utf8) */
void pbj_write_table_free(NMessage *m);
int pbj_oneof_member(NMessage *m, int j, PyObject *v);
int pbj_in_run(NWrite *w, int field);
/* a map's entries in key order, each holding a strong reference to its key and value (values.c) */
typedef struct {
    uint64_t order;      /* int and bool keys: the key's order as an unsigned number */
    const char *s;       /* str keys: the UTF-8 (owned by k) */
    Py_ssize_t n;
    PyObject *k, *x;     /* owned */
} PMapEntry;
typedef struct {
    Py_ssize_t n;
    PMapEntry *e;        /* small, or PyMem */
    PMapEntry small[8];
} PMap;
int pbj_map_sorted(NField *f, PyObject *map, PMap *out);  /* -1: call pbj_map_release all the same */
void pbj_map_release(PMap *m);
/* extensions.c: a holder of _pbj_extensions, its plan (a strong reference to the capsule in
 * *cap) and its extension's number; NULL: decline */
NMessage *pbj_holder_of(PbjState *st, PyObject *h, PyObject **cap, long *number);
int pbj_in_range(NMessage *m, int k, long number);
/* an enum field's members by number (read.c): made from f->enum_map when the plan is built */
int pbj_enum_table(NField *f);
void pbj_enum_table_free(NField *f);
/* reverse.c */
PyObject *pbj_write_reverse(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* required.c: the required-field check of the entry points (pbj.required's walk, in C) */
int pbj_required_ok(PyObject *o, NMessage *m);
int pbj_required_setup(PbjEntry *E, PyObject *steps_of, PyObject *generation);
/* entry.c: pbj.decode and pbj.encode as builtins (pbj.api) */
PyObject *pbj_entry_points(PyObject *self, PyObject *args);
int pbj_entry_init(PyObject *module);
int pbj_share_key(PbjState *st);              /* share.c, at module exec */         /* the Bound type, at module exec */
int pbj_entry_traverse(PbjEntry *e, visitproc visit, void *arg);
void pbj_entry_clear(PbjEntry *e);
PyObject *pbj_bind_decode(PyObject *self, PyObject *args);
PyObject *pbj_bind_encode(PyObject *self, PyObject *args);
/* count.c: values per field (the worked example of a sink) */
PyObject *pbj_count_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* arrow.c: encoded messages straight to Arrow columns (pbj.arrow.decode_to_arrow) */
PyObject *pbj_arrow_plan(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *pbj_arrow_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* ---- shared wire helpers ---- */

/* Read a varint of at most 10 bytes in [*pp, end); 0 on success. Follows pbj.wire.read_varint:
 * the 10th byte may only be 0 or 1. */
static inline int rd_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p >= end) return -1;
    uint64_t b = *p++;
    if (b < 0x80) { *out = b; *pp = p; return 0; }
    uint64_t r = b & 0x7f;
    int shift = 7;
    for (;;) {
        if (p >= end) return -1;
        b = *p++;
        if (shift == 63) {
            if (b > 1) return -1;
            r |= b << 63;
            break;
        }
        r |= (b & 0x7f) << shift;
        if (b < 0x80) break;
        shift += 7;
    }
    *out = r;
    *pp = p;
    return 0;
}

/* Read a tag: as pbj.wire.read_tag (at most 5 bytes, below 2**32, field number <= 2**29-1). */
static inline int rd_tag(const uint8_t **pp, const uint8_t *end, uint32_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) { *out = *p; *pp = p + 1; return 0; }
    uint64_t v;
    if (rd_varint(&p, end, &v) < 0) return -1;
    if (p - *pp > 2) {
        if (p - *pp > 5 || v > 0xFFFFFFFFu || (v >> 3) > MAX_FIELD_NUMBER) return -1;
    }
    *out = (uint32_t)v;
    *pp = p;
    return 0;
}

static inline int varint_len(uint64_t v)
{
    int n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
    *p++ = (uint8_t)v;
    return p;
}

#endif
