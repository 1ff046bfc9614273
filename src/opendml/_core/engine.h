/* What module.c (Python-facing, baseline ISA) and kernels.c (compiled once per ISA) share.
 * Arrays arrive here already validated: a data pointer, dtype, shape and byte strides describing memory that
 * NumPy proved lies inside the caller's bound range. Kernels touch nothing else. */
#ifndef ODML_ENGINE_H
#define ODML_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"

#define ODML_MAXDIM 8

/* Element types (our own numbering; module.c maps NumPy's). */
enum odml_dtype { ODML_F32, ODML_F16, ODML_F64, ODML_I8, ODML_I16, ODML_I32, ODML_I64,
                  ODML_U8, ODML_U16, ODML_U32, ODML_U64, ODML_NDTYPES };

typedef struct {
    char *data;
    int dtype, itemsize, ndim;
    ptrdiff_t shape[ODML_MAXDIM];
    ptrdiff_t strides[ODML_MAXDIM]; /* bytes; >= 0 (0 broadcasts) */
} odml_array;

typedef struct {
    float f[4];        /* float parameters (HARD_SIGMOID: alpha, beta), already rounded to float32 */
    int flags;         /* reduction: ODML_LAST picks the last of equal maxima (ARGMAX DECREASING); ODML_MIN
                        * looks for minima instead (ARGMIN, REDUCE MIN) */
    unsigned axes;     /* reduction: bit d set = dimension d is reduced */
    int nthreads;      /* threads to use (1 = the calling thread only) */
} odml_params;

#define ODML_LAST 1
#define ODML_MIN 2

/* Operator ids: one X-macro list per engine, in ops.h. */
enum odml_op {
#define ODML_ENUM(name) ODML_OP_##name,
    ODML_ELEMENTWISE_OPS(ODML_ENUM) ODML_REDUCE_OPS(ODML_ENUM) ODML_NOPS
#undef ODML_ENUM
};

/* Reductions whose output has the input's shape (the others keep 1 in the reduced dimensions). */
#define ODML_FULL_OUTPUT(op) ((op) == ODML_OP_HARDMAX || (op) == ODML_OP_LOG_SOFTMAX || (op) == ODML_OP_SOFTMAX)

/* Returns 0, or -1 when the op does not take these dtypes (module.c checks first, so that is a bug). */
typedef struct {
    const char *name;
    int (*elementwise)(int op, int nin, const odml_array *in, const odml_array *out, const odml_params *prm);
    int (*reduce)(int op, const odml_array *in, const odml_array *out, const odml_params *prm);
} odml_isa;

extern const odml_isa odml_isa_baseline, odml_isa_avx2, odml_isa_avx512;

/* pool.c: run fn(ctx, begin, end) over [0, n) split into at most nthreads contiguous ranges whose bounds are
 * multiples of grain; the calling thread takes the first range. Which thread runs which range never changes
 * a result: every kernel writes disjoint outputs per range and keeps each reduction inside one range. */
typedef void (*odml_task)(void *ctx, ptrdiff_t begin, ptrdiff_t end);
void odml_parallel(odml_task fn, void *ctx, ptrdiff_t n, ptrdiff_t grain, int nthreads);

#endif
