/* The Arrow C Data Interface's two structs (arrow.apache.org/docs/format/CDataInterface.html), an ABI
 * the Arrow project fixes: one definition for arrow.c (columns from the walker) and arrow_encode.c
 * (columns to encodings). The guard is the one the specification gives, so a program that includes
 * Arrow's own copy first keeps it. */
#ifndef PBJ_ARROW_ABI_H
#define PBJ_ARROW_ABI_H

#include <stdint.h>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif

#endif
