/* The kernel engines, compiled once per ISA (setup.py passes -DODML_ISA=<name> and that ISA's -m flags).
 *
 * Element-wise engine (elementwise()): n-ary, strided, broadcast through zero strides. It drops size-1
 * dimensions, orders the rest by the output's strides, merges dimensions that are contiguous for every operand,
 * splits the flat element range across threads, and calls an inner function once per innermost run.
 *   Add an operator: a unary float op is one `static vf op_NAME(vf x, const odml_params *p)` plus one line
 *   in UNARY_FLOAT_OPS (f32 and f16 loops, contiguous and strided, come from the macro); other shapes of
 *   operator get an inner function `ew_inner` and a case in ew_pick().
 *
 * Reduction engine (reduce()): any set of axes. Dimensions split into kept (K) and reduced (R) lists; R keeps
 * ascending axis order (ARGMAX numbers reduced coordinates row-major in that order) and merges contiguous
 * neighbours. A group whose innermost reduced run is contiguous and at least a
 * vector long is reduced along it a vector at a time ("contig"; one contiguous run takes straight loops);
 * otherwise LANES groups side by side along the densest kept dimension form a strip whose running state stays
 * in registers while the reduced axes are walked ("strip"; lanes at a stride come by the hardware gather: for a
 * run shorter than a vector that beats a group at a time 2-5x; lanes adjacent in memory go as panels of strips
 * side by side, see PANEL_MAX). Nothing is transposed, and no pass packs the input ahead of a kernel: the
 * softmaxes keep a packed copy of a group or a strip, made during their first pass over it (group_scan,
 * strip_max_min, panel_max_min), for the passes that follow.
 * An optional "run" function takes the consecutive contig groups along the innermost kept dimension in one
 * call: short rows loop (four at a time) without a trip through the engine each, and groups whose runs lie far
 * apart go a block of adjacent groups at a time, run by run (see GROUP_BLOCK, FAR_GROUPS), each group's order
 * unchanged.
 * Each group is reduced by exactly one thread, in a fixed order: results never depend on the thread count.
 *   Add an operator: a `red_contig` and a `red_strip` function (see argmax/hardmax/log_softmax below), a
 *   `red_run` if it pays (RED_RUN makes the plain loop), and a case in red_pick(). */
#include <stdlib.h>

#include "engine.h"
#include "simd.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* ============================== element-wise engine ============================== */

#define EW_MAXOP 4 /* output + up to 3 inputs */
typedef void (*ew_inner)(ptrdiff_t n, char *const *p, const ptrdiff_t *s, const odml_params *prm);

typedef struct {
    int nop, nd;
    ptrdiff_t shape[ODML_MAXDIM];
    ptrdiff_t st[EW_MAXOP][ODML_MAXDIM];
    char *base[EW_MAXOP];
    ew_inner fn;
    const odml_params *prm;
} ew_plan;

static void ew_task(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    const ew_plan *P = ctx;
    int nd = P->nd, last = nd - 1;
    ptrdiff_t inner = P->shape[last], idx[ODML_MAXDIM], rem = begin / inner, col = begin % inner;
    char *p[EW_MAXOP];
    for (int k = 0; k < P->nop; k++) p[k] = P->base[k];
    for (int d = last - 1; d >= 0; d--) { /* unravel the starting row */
        idx[d] = rem % P->shape[d];
        rem /= P->shape[d];
        for (int k = 0; k < P->nop; k++) p[k] += idx[d] * P->st[k][d];
    }
    ptrdiff_t s[EW_MAXOP];
    for (int k = 0; k < P->nop; k++) s[k] = P->st[k][last];
    for (ptrdiff_t pos = begin; pos < end;) {
        ptrdiff_t n = inner - col < end - pos ? inner - col : end - pos;
        char *q[EW_MAXOP];
        for (int k = 0; k < P->nop; k++) q[k] = p[k] + col * s[k];
        P->fn(n, q, s, P->prm);
        pos += n;
        col = 0;
        for (int d = last - 1; d >= 0; d--) { /* next row */
            for (int k = 0; k < P->nop; k++) p[k] += P->st[k][d];
            if (++idx[d] < P->shape[d]) break;
            for (int k = 0; k < P->nop; k++) p[k] -= P->st[k][d] * P->shape[d];
            idx[d] = 0;
        }
    }
}

/* Run fn over operands ops[0] (the output) .. ops[nop-1], all of ops[0]'s shape. */
static void ew_run(int nop, const odml_array *const *ops, ew_inner fn, const odml_params *prm) {
    ew_plan P = {.nop = nop, .fn = fn, .prm = prm};
    const odml_array *out = ops[0];
    int order[ODML_MAXDIM], nd = 0;
    for (int d = 0; d < out->ndim; d++)
        if (out->shape[d] != 1) order[nd++] = d;
    /* Outer dimensions first by the output's stride (stable), so that the innermost run is its densest. */
    for (int i = 1; i < nd; i++)
        for (int j = i; j > 0 && out->strides[order[j - 1]] < out->strides[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int k = 0; k < nop; k++) P.base[k] = ops[k]->data;
    for (int i = 0; i < nd; i++) {
        int d = order[i], m = P.nd - 1, merge = P.nd > 0;
        for (int k = 0; merge && k < nop; k++) merge = P.st[k][m] == ops[k]->strides[d] * out->shape[d];
        if (merge) { /* dimension m and d walk memory as one: fold d into m */
            P.shape[m] *= out->shape[d];
            for (int k = 0; k < nop; k++) P.st[k][m] = ops[k]->strides[d];
            continue;
        }
        P.shape[P.nd] = out->shape[d];
        for (int k = 0; k < nop; k++) P.st[k][P.nd] = ops[k]->strides[d];
        P.nd++;
    }
    if (P.nd == 0) { /* a single element */
        P.nd = 1;
        P.shape[0] = 1;
        for (int k = 0; k < nop; k++) P.st[k][0] = 0;
    }
    ptrdiff_t total = 1;
    for (int d = 0; d < P.nd; d++) total *= P.shape[d];
    odml_parallel(ew_task, &P, total, 1024, prm->nthreads);
}

/* ---- inner functions: one vector op, looped by macros over f32/f16, contiguous/strided ---- */

static inline vf op_hard_sigmoid(vf x, const odml_params *p) {
    vf y = x * p->f[0]; /* two roundings, as DirectML's float32 math and the NumPy reference: never an FMA */
    y = y + p->f[1];
    y = selectf(cmp_lt(y, splatf(0.0f)), splatf(0.0f), y); /* NaN compares false and propagates; -0.0 stays */
    return selectf(cmp_gt(y, splatf(1.0f)), splatf(1.0f), y);
}

#define UNARY_FLOAT_OPS(X) X(HARD_SIGMOID, op_hard_sigmoid)

/* Gather up to LANES elements at a byte stride into a vector (the tail and strided path), and scatter back; by
 * memcpy, which takes any alignment (an array may start at any byte). */
#define GATHER(T, v, p, s, n)                                                                                   \
    for (ptrdiff_t l_ = 0; l_ < (n); l_++) { T e_; memcpy(&e_, (p) + l_ * (s), sizeof e_); (v)[l_] = e_; }
#define SCATTER(T, v, p, s, n)                                                                                  \
    for (ptrdiff_t l_ = 0; l_ < (n); l_++) { T e_ = (v)[l_]; memcpy((p) + l_ * (s), &e_, sizeof e_); }

static inline vf gather_f16(const char *p, ptrdiff_t s, ptrdiff_t n) {
    uint16_t h[LANES] = {0};
    for (ptrdiff_t l = 0; l < n; l++) memcpy(&h[l], p + l * s, 2);
    return load_f16(h);
}

static inline void scatter_f16(char *p, ptrdiff_t s, ptrdiff_t n, vf v) {
    uint16_t h[LANES];
    store_f16(h, v);
    for (ptrdiff_t l = 0; l < n; l++) memcpy(p + l * s, &h[l], 2);
}

/* Large contiguous outputs are written with streaming stores once aligned (see simd.h). */
#define STREAM_MIN (1 << 20)
/* A softmax's row (a packed group) of at least LONG_ROW elements, taken alone, streams its outputs (STREAM_RUN)
 * and does not fetch its output lines ahead: the row, its outputs read for writing and its kept terms did not all
 * stay in L2 (one thread, Intel, flushed caches: LOG_SOFTMAX1 float32 over (1, 2) of (64, 512, 512) 17.0 -> 13.7
 * ms, float16 9.4 -> 6.1, SOFTMAX1: see softmaxes_long; rows of 2^17, (512, 131072), float32 LOG_SOFTMAX1 55.7 ->
 * 45.4, SOFTMAX1 60.8 -> 47.4). Such a row in cache pays: LOG_SOFTMAX1 of (2, 131072) float32 back to back, 0.125
 * -> 0.143 ms. */
#define LONG_ROW (1 << 17)

#define UNARY_LOOPS(NAME, OP)                                                                                   \
    static void NAME##_f32(ptrdiff_t n, char *const *p, const ptrdiff_t *s, const odml_params *prm_at) {       \
        /* Locals: a store through char * may change anything a pointer argument reaches (prm, p[k]), which    \
         * the loop would then load again every step. */                                                        \
        const odml_params prm_copy = *prm_at, *prm = &prm_copy;                                                 \
        char *o = p[0];                                                                                         \
        const char *x = p[1];                                                                                   \
        ptrdiff_t i = 0;                                                                                        \
        if (s[0] == 4 && s[1] == 4) {                                                                           \
            if (n * 4 >= STREAM_MIN) {                                                                          \
                for (; i < n && ((uintptr_t)(o + 4 * i) & 63); i++)                                             \
                    storef1(o + 4 * i, OP(splatf(loadf1(x + 4 * i)), prm)[0]);                                \
                for (; i + LANES <= n; i += LANES) stream_f32(o + 4 * i, OP(loadf(x + 4 * i), prm));              \
                stream_fence();                                                                                 \
            }                                                                                                   \
            for (; i + LANES <= n; i += LANES) storef(o + 4 * i, OP(loadf(x + 4 * i), prm));                    \
        }                                                                                                       \
        for (; i < n; i += LANES) {                                                                             \
            ptrdiff_t m = n - i < LANES ? n - i : LANES;                                                        \
            vf v = {0};                                                                                         \
            GATHER(float, v, x + i * s[1], s[1], m);                                                            \
            v = OP(v, prm);                                                                                     \
            SCATTER(float, v, o + i * s[0], s[0], m);                                                           \
        }                                                                                                       \
    }                                                                                                           \
    static void NAME##_f16(ptrdiff_t n, char *const *p, const ptrdiff_t *s, const odml_params *prm_at) {       \
        const odml_params prm_copy = *prm_at, *prm = &prm_copy; /* (locals: see NAME##_f32) */                \
        char *o = p[0];                                                                                         \
        const char *x = p[1];                                                                                   \
        ptrdiff_t i = 0;                                                                                        \
        if (s[0] == 2 && s[1] == 2) {                                                                           \
            if (n * 2 >= STREAM_MIN) {                                                                          \
                for (; i < n && ((uintptr_t)(o + 2 * i) & 31); i++)                                             \
                    scatter_f16(o + 2 * i, 2, 1, OP(gather_f16(x + 2 * i, 2, 1), prm));                         \
                for (; i + LANES <= n; i += LANES) stream_f16(o + 2 * i, OP(load_f16(x + 2 * i), prm));         \
                stream_fence();                                                                                 \
            }                                                                                                   \
            for (; i + LANES <= n; i += LANES) store_f16(o + 2 * i, OP(load_f16(x + 2 * i), prm));              \
        }                                                                                                       \
        for (; i < n; i += LANES) {                                                                             \
            ptrdiff_t m = n - i < LANES ? n - i : LANES;                                                        \
            scatter_f16(o + i * s[0], s[0], m, OP(gather_f16(x + i * s[1], s[1], m), prm));                     \
        }                                                                                                       \
    }
#define UNARY_DEFINE(ID, OP) UNARY_LOOPS(OP, OP)
UNARY_FLOAT_OPS(UNARY_DEFINE)

/* ELEMENT_WISE_IF: out = cond ? a : b as raw bits, per element size. Operands: out, cond (u8), a, b. */
#define IF_LOOP(T)                                                                                              \
    static void if_##T(ptrdiff_t n, char *const *pp, const ptrdiff_t *s, const odml_params *prm) {             \
        char *const p[4] = {pp[0], pp[1], pp[2], pp[3]}; /* (locals: see UNARY_LOOPS) */                        \
        typedef T vt VEC(T);                                                                                    \
        typedef uint8_t vc VEC(uint8_t);                                                                        \
        ptrdiff_t i = 0, z = sizeof(T);                                                                         \
        if (s[0] == z && s[1] == 1 && s[2] == z && s[3] == z)                                                   \
            for (; i + LANES <= n; i += LANES) {                                                                \
                vc c;                                                                                           \
                vt a, b;                                                                                        \
                memcpy(&c, p[1] + i, sizeof c);                                                                 \
                memcpy(&a, p[2] + i * z, sizeof a);                                                             \
                memcpy(&b, p[3] + i * z, sizeof b);                                                             \
                vt m = (vt)__builtin_convertvector(c != 0, __typeof__(a != b));                                 \
                vt r = (a & m) | (b & ~m);                                                                      \
                memcpy(p[0] + i * z, &r, sizeof r);                                                             \
            }                                                                                                   \
        for (; i < n; i++) {                                                                                    \
            const char *src = *(const uint8_t *)(p[1] + i * s[1]) ? p[2] + i * s[2] : p[3] + i * s[3];          \
            memcpy(p[0] + i * s[0], src, sizeof(T));                                                            \
        }                                                                                                       \
    }
IF_LOOP(uint8_t)
IF_LOOP(uint16_t)
IF_LOOP(uint32_t)
IF_LOOP(uint64_t)

/* ---------------- issues 10 and 11: arithmetic, comparison, quantization and activations ----------------
 * Exact members (ADD, SUBTRACT, MULTIPLY, LESS_THAN, CLIP, RELU, QUANTIZE_LINEAR) give the NumPy reference's
 * bits: float16 goes through float32, where + - * / are correctly rounded and so round once more to the same
 * half as NumPy; integers wrap (computed on unsigned lanes). The transcendental members (EXP, SIGMOID, TANH,
 * GELU) are float32 approximations within 2 ulp (float16: 1 ulp after the final rounding). Each takes a lean fast
 * path for a vector whose lanes are all in the ordinary range (one compare, a predictable branch) and a
 * careful one (subnormal results, overflow, NaN) otherwise, which gives the fast path's bits on its ordinary
 * lanes: a result never depends on its neighbours. */

/* Operand kinds: element size, lane vector type, and load/store/gather/scatter of a vector's lanes. */
#define Z_f32 4
#define Z_f16 2
#define VT_f32 vf
#define VT_f16 vf
#define ld_f32 loadf
#define st_f32 storef
#define ld_f16 load_f16
#define st_f16 store_f16
#define ga_f16 gather_f16
#define sc_f16(p, s, m, v) scatter_f16(p, s, m, v)
ALWAYS vf ga_f32(const char *p, ptrdiff_t s, ptrdiff_t m) {
    vf v = {0};
    GATHER(float, v, p, s, m);
    return v;
}
ALWAYS void sc_f32(char *p, ptrdiff_t s, ptrdiff_t m, vf v) { SCATTER(float, v, p, s, m); }

#define INT_KIND(K, T)                                                                                          \
    typedef T VT_##K VEC(T);                                                                                    \
    ALWAYS VT_##K ld_##K(const void *p) { VT_##K v; memcpy(&v, p, sizeof v); return v; }                        \
    ALWAYS void st_##K(void *p, VT_##K v) { memcpy(p, &v, sizeof v); }                                          \
    ALWAYS VT_##K ga_##K(const char *p, ptrdiff_t s, ptrdiff_t m) {                                             \
        VT_##K v = {0};                                                                                         \
        GATHER(T, v, p, s, m);                                                                                  \
        return v;                                                                                               \
    }                                                                                                           \
    ALWAYS void sc_##K(char *p, ptrdiff_t s, ptrdiff_t m, VT_##K v) { SCATTER(T, v, p, s, m); }
INT_KIND(u8, uint8_t)
INT_KIND(u16, uint16_t)
INT_KIND(u32, uint32_t)
INT_KIND(u64, uint64_t)
INT_KIND(i8, int8_t)
INT_KIND(i16, int16_t)
INT_KIND(i32, int32_t)
INT_KIND(i64, int64_t)
#define NTA_u8 15 /* (bytes: LESS_THAN's and QUANTIZE's outputs, a vector of LANES bytes) */
#define NTA_u16 -1
#define NTA_u32 -1
#define NTA_u64 -1
ALWAYS void NT_u8(char *p, VT_u8 v) { stream_bytes(p, &v, sizeof v); }
#define NT_u16 st_u16
#define NT_u32 st_u32
#define NT_u64 st_u64
#define Z_u8 1
#define Z_u16 2
#define Z_u32 4
#define Z_u64 8
#define Z_i8 1
#define Z_i16 2
#define Z_i32 4
#define Z_i64 8

/* The low byte of each int32 lane (lanes within a byte's range: QUANTIZE's conversion to bytes): GCC's AVX2
 * build converts lane by lane, so there a byte shuffle gathers them. */
ALWAYS VT_u8 low_bytes(vi v) {
#if defined(__AVX2__) && !defined(__AVX512F__) /* (LANES 8) */
    __m256i x;
    memcpy(&x, &v, 32);
    x = _mm256_shuffle_epi8(x, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4,
                                                 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
    x = _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
    VT_u8 r;
    memcpy(&r, &x, sizeof r);
    return r;
#else
    return __builtin_convertvector(v, VT_u8);
#endif
}

/* 1 where a mask lane is set, else 0, as bytes */
#define MASK_U8(m) (__builtin_convertvector((m), VT_u8) & 1)

/* A binary member: out (kind OK) = EXPR(a, b) of inputs of kind IK. The fast loop takes contiguous operands
 * and inputs broadcast along the run (stride 0); anything else goes a vector at a time through gathers. */
/* Float outputs of a large contiguous run are streamed (see UNARY_LOOPS) from an aligned start: NTA_ is the
 * alignment mask of a whole-vector non-temporal store, -1 where a kind has none. */
#define NTA_f32 63
#define NTA_f16 31
#define NT_f32 stream_f32
#define NT_f16 stream_f16
#define BINARY_LOOP(NAME, IK, OK, EXPR)                                                                         \
    static void NAME(ptrdiff_t n, char *const *pp, const ptrdiff_t *ss, const odml_params *prm) {               \
        (void)prm; /* (locals: see UNARY_LOOPS) */                                                              \
        char *const p[3] = {pp[0], pp[1], pp[2]};                                                               \
        const ptrdiff_t s[3] = {ss[0], ss[1], ss[2]};                                                           \
        ptrdiff_t i = 0;                                                                                        \
        if (s[0] == Z_##OK && (s[1] == Z_##IK || !s[1]) && (s[2] == Z_##IK || !s[2])) {                         \
            VT_##IK a0 = ga_##IK(p[1], 0, LANES), b0 = ga_##IK(p[2], 0, LANES);                                 \
            if (NTA_##OK >= 0 && n * Z_##OK >= STREAM_MIN) {                                                    \
                for (; i < n && ((uintptr_t)(p[0] + i * Z_##OK) & (NTA_##OK & 63)); i++) {                       \
                    VT_##IK a = ga_##IK(p[1] + i * s[1], s[1], 1), b = ga_##IK(p[2] + i * s[2], s[2], 1);       \
                    sc_##OK(p[0] + i * Z_##OK, Z_##OK, 1, EXPR);                                                \
                }                                                                                               \
                for (; i + LANES <= n; i += LANES) {                                                            \
                    VT_##IK a = s[1] ? ld_##IK(p[1] + i * Z_##IK) : a0;                                         \
                    VT_##IK b = s[2] ? ld_##IK(p[2] + i * Z_##IK) : b0;                                         \
                    NT_##OK(p[0] + i * Z_##OK, EXPR);                                                           \
                }                                                                                               \
                stream_fence();                                                                                 \
            }                                                                                                   \
            if (s[1] && s[2]) /* (no broadcast: the loop without selects) */                                    \
                for (; i + LANES <= n; i += LANES) {                                                            \
                    VT_##IK a = ld_##IK(p[1] + i * Z_##IK), b = ld_##IK(p[2] + i * Z_##IK);                     \
                    st_##OK(p[0] + i * Z_##OK, EXPR);                                                           \
                }                                                                                               \
            for (; i + LANES <= n; i += LANES) {                                                                \
                VT_##IK a = s[1] ? ld_##IK(p[1] + i * Z_##IK) : a0, b = s[2] ? ld_##IK(p[2] + i * Z_##IK) : b0; \
                st_##OK(p[0] + i * Z_##OK, EXPR);                                                               \
            }                                                                                                   \
        }                                                                                                       \
        for (; i < n; i += LANES) {                                                                             \
            ptrdiff_t m = n - i < LANES ? n - i : LANES;                                                        \
            VT_##IK a = ga_##IK(p[1] + i * s[1], s[1], m), b = ga_##IK(p[2] + i * s[2], s[2], m);               \
            sc_##OK(p[0] + i * s[0], s[0], m, EXPR);                                                            \
        }                                                                                                       \
    }

/* Kinds of each member: floats, and integers as unsigned lanes (wrapping arithmetic, the same bits). */
#define ARITH_KINDS(X, OPN, EXPR) X(OPN, f32, f32, EXPR) X(OPN, f16, f16, EXPR) X(OPN, u8, u8, EXPR)            \
    X(OPN, u16, u16, EXPR) X(OPN, u32, u32, EXPR) X(OPN, u64, u64, EXPR)
#define LESS_KINDS(X, OPN, EXPR) X(OPN, f32, u8, EXPR) X(OPN, f16, u8, EXPR) X(OPN, u8, u8, EXPR)               \
    X(OPN, u16, u8, EXPR) X(OPN, u32, u8, EXPR) X(OPN, u64, u8, EXPR) X(OPN, i8, u8, EXPR)                      \
    X(OPN, i16, u8, EXPR) X(OPN, i32, u8, EXPR) X(OPN, i64, u8, EXPR)
#define BINARY_DEFINE(OPN, IK, OK, EXPR) BINARY_LOOP(OPN##_##IK, IK, OK, EXPR)
ARITH_KINDS(BINARY_DEFINE, add, a + b)
ARITH_KINDS(BINARY_DEFINE, subtract, a - b)
ARITH_KINDS(BINARY_DEFINE, multiply, a * b)
LESS_KINDS(BINARY_DEFINE, less, MASK_U8(a < b))

/* The kind name of a dtype, for the pickers; signed integers take unsigned lanes where `as_unsigned`. */
#define KIND_CASES(X, OPN, US)                                                                                  \
    case ODML_F32: return X(OPN, f32);                                                                          \
    case ODML_F16: return X(OPN, f16);                                                                          \
    case ODML_U8: return X(OPN, u8);                                                                            \
    case ODML_U16: return X(OPN, u16);                                                                          \
    case ODML_U32: return X(OPN, u32);                                                                          \
    case ODML_U64: return X(OPN, u64);                                                                          \
    case ODML_I8: return X(OPN, US(i8, u8));                                                                    \
    case ODML_I16: return X(OPN, US(i16, u16));                                                                 \
    case ODML_I32: return X(OPN, US(i32, u32));                                                                 \
    case ODML_I64: return X(OPN, US(i64, u64));
#define FN_NAME_(OPN, K) OPN##_##K
#define FN_NAME(OPN, K) FN_NAME_(OPN, K)
#define SIGNED(i, u) i
#define UNSIGNED(i, u) u

/* ---- CLIP (no ScaleBias): min(Max, max(Min, x)) in float32 with IEEE maximum/minimum (NaN propagates; on
 * equal values, +0 wins the maximum and -0 the minimum, as the reference's bit AND / OR). ---- */
ALWAYS vf ieee_maxf(vf a, vf x) { /* a NaN: a's first, as np.maximum(a, x) */
    vf r = selectf(x > a, x, a);
    r = selectf(x == a, (vf)((vi)x & (vi)a), r);
    return selectf(a != a, a, selectf(x != x, x, r));
}
ALWAYS vf ieee_minf(vf a, vf x) {
    vf r = selectf(x < a, x, a);
    r = selectf(x == a, (vf)((vi)x | (vi)a), r);
    return selectf(a != a, a, selectf(x != x, x, r));
}
/* With bounds that are not NaN, each side is one compare and select: x < lo gives lo (a NaN x compares false
 * and stays), and on x == lo the rule only matters for zeros, so lo = +0 compares against the least subnormal
 * instead (x <= +0 gives +0); likewise hi = -0 against minus the least subnormal. */
ALWAYS float bits_float(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline vf op_clip(vf x, const odml_params *p) {
    float lo = p->f[0], hi = p->f[1];
    if (lo != lo || hi != hi) return ieee_minf(splatf(hi), ieee_maxf(splatf(lo), x));
    /* Nonzero bounds: the max/min instructions (their second operand where either is NaN: x's NaN stays). */
    if (lo != 0.0f && hi != 0.0f) return vmin(splatf(hi), vmax(splatf(lo), x));
    float below = lo == 0.0f && !signbit(lo) ? bits_float(1) : lo;
    float above = hi == 0.0f && signbit(hi) ? bits_float(0x80000001u) : hi;
    x = selectf(x < below, splatf(lo), x);
    return selectf(x > above, splatf(hi), x);
}

/* RELU: max(0, x), then + 0 so that -0.0 becomes +0.0 and a NaN is quieted, as the reference's np.maximum and
 * `out += 0`. */
static inline vf op_relu(vf x, const odml_params *p) {
    (void)p;
    return selectf(cmp_lt(x, splatf(0.0f)), splatf(0.0f), x) + 0.0f;
}

/* 1/d to about 14 bits (AVX-512's estimate; AVX2's 12-bit one with a Newton step: 23 bits), as the start of the
 * corrections in div_split: a division costs as much as the rest of a SIGMOID on these machines. Baseline: the
 * division itself. */
ALWAYS vf rcp_approx(vf d) {
#if defined(__AVX512F__)
    return (vf)_mm512_rcp14_ps((__m512)d);
#elif defined(__AVX2__) /* (LANES 8) */
    __m256 e;
    memcpy(&e, &d, 32);
    e = _mm256_rcp_ps(e);
    vf r;
    memcpy(&r, &e, 32);
    return fmadd(r, fmadd(-d, r, splatf(1.0f)), r);
#else
    return 1.0f / d;
#endif
}

/* num / (d + dl), d + dl held unrounded (|dl| <= ulp(d)/2), to half an ulp and about 2^-28 relative: y = num * r
 * from the estimate r, then one correction y + r * (num - y * (d + dl)) whose residual the FMAs take exactly
 * enough (its own error is 2^-14 of a 2^-14 term). Without an FMA: the division, and d's rounding undone as
 * y / (1 + dl/d). */
ALWAYS vf div_split(vf num, vf d, vf dl) {
#if defined(__FMA__) || defined(__AVX512F__)
    vf r = rcp_approx(d), y = num * r;
    return fmadd(fnmadd(y, dl, fnmadd(y, d, num)), r, y);
#else
    vf y = num / d;
    return y - y * (dl / d);
#endif
}

/* exp(x) = 2^k * e for finite |x| <= 104 (k returned, integral; e = exp(r) in [0.7, 1.42] before its rounding):
 * Cody-Waite reduction x = k*ln2 + r with a two-part ln2 (k*LN2_HI exact; r returned) and a degree-6 polynomial
 * (a minimax fit with 1 + r fixed: 4e-9 relative), e = 1 + r * exp_tail(r) rounded once: within about 0.9 ulp.
 * The polynomial goes by Estrin's scheme, not Horner's: these loops are bound by the latency of each vector's
 * chain (an out-of-order window fills with waiting chains), and Estrin's is two FMAs shorter. exp_reduce_of
 * reduces c * a for a power of two c (c * a exact) with k taken from a directly: the same bits as scaling first,
 * one step shorter. */
ALWAYS vf exp_reduce_of(vf a, float c, vf *k) {
    const float MAGIC = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    *k = fmadd(a, splatf(c * 1.44269504088896341f), splatf(MAGIC)) - MAGIC;
    return fmadd(*k, splatf(2.12194440e-4f), fmadd(*k, splatf(-0.693359375f), c * a));
}

ALWAYS vf exp_reduce(vf x, vf *k) { return exp_reduce_of(x, 1.0f, k); }

ALWAYS vf exp_q(vf r, vf r2) { /* exp(r) = 1 + r + r^2 * exp_q(r, r^2), r2 = r * r */
    vf lo = fmadd(splatf(0.1666652113199234f), r, splatf(0.4999999403953552f));
    vf hi = fmadd(splatf(0.008368718437850475f), r, splatf(0.04166838899254799f));
    return fmadd(fmadd(splatf(0.0013814594130963087f), r2, hi), r2, lo);
}

ALWAYS vf exp_tail(vf r) { return fmadd(exp_q(r, r * r), r, splatf(1.0f)); } /* exp(r) = 1 + r * exp_tail(r) */

ALWAYS vf exp_reduced(vf x, vf *k) {
    vf r = exp_reduce(x, k);
    return fmadd(exp_tail(r), r, splatf(1.0f));
}

ALWAYS vf pow2i(vi n) { return (vf)((n + 127) << 23); } /* -126 <= n <= 127 */

/* v * 2^k for integral k, exact where the result is normal: one instruction on AVX-512. */
ALWAYS vf ldexpk(vf v, vf k) {
#if defined(__AVX512F__)
    return (vf)_mm512_scalef_ps((__m512)v, (__m512)k);
#else
    return v * pow2i(__builtin_convertvector(k, vi));
#endif
}

/* exp(x) where the result is normal: -87.3 < x < 88.7. */
ALWAYS vf exp_normal(vf x) {
    vf k, e = exp_reduced(x, &k);
    return ldexpk(e, k);
}

/* exp(x) for a float16 group's softmax terms (x <= 0 from -2^17 on, exactly 1 at 0; below -87.3 only as small:
 * see softmax_terms_kept), within 2^-17 relative where
 * float16's half ulp is 2^-11 (see fdsum): a one-constant reduction (k * (ln2 - float(ln2)): below 2^-22) and
 * a degree-4 polynomial (a minimax fit with 1 + r fixed: 2^-17.5), four fewer multiply-adds than exp_normal's
 * (they are the sum pass's bottleneck). */
ALWAYS vf exp_f16_term(vf x) {
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    /* 2^y for y = x log2(e) rounded (2^-17.5 relative through 2^y at y near -125, 2^-20.5 for x >= -17.5), as
     * 2^floor(y) times 2^f for f = y - floor(y) in [0, 1) (one `reduce`), a degree-4 fit with p(0) = 1 (2^-18.4),
     * scaled by `scalef`: seven instructions to the other form's nine (float16 SOFTMAX1 rows in cache 9% faster).
     * Measured over every float x in [-87, 0] against exp in double: 2^-17.2 relative at worst, 2^-18.0 for x
     * >= -17.5, where a float16 term is not 0 (the other form: 2^-17.4 and 2^-17.5). */
    __m512 y = (__m512)(x * 1.44269504088896341f), f = _mm512_reduce_ps(y, _MM_FROUND_TO_NEG_INF);
    vf v = (vf)f, p = fmadd(fmadd(fmadd(splatf(0x1.b7f5cep-7f), v, splatf(0x1.abf8f8p-5f)), v, splatf(0x1.ee244p-3f)),
                            v, splatf(0x1.62d6c6p-1f));
    return (vf)_mm512_scalef_ps((__m512)fmadd(p, v, splatf(1.0f)), y);
#else
    const float MAGIC = 12582912.0f;
#if !defined(__AVX512F__) /* (pow2i takes normal exponents only: a term below e^-87 counts as e^-87; NaN stays) */
    x = selectf(x < -87.0f, splatf(-87.0f), x);
#endif
    vf k = fmadd(x, splatf(1.44269504088896341f), splatf(MAGIC)) - MAGIC;
    vf r = fmadd(k, splatf(-0.693147182464599609375f), x);
    vf r2 = r * r, q = fmadd(splatf(0.16753600537776947f), r, splatf(0.5000512599945068f));
    vf p = fmadd(splatf(0.04127736762166023f), r2, q);
    return ldexpk(fmadd(p, r2, r + 1.0f), k);
#endif
}

/* The softmaxes' float32 terms exp(t + err) (t = x - max in [-87, 0], err its rounding error, below an ulp of
 * t): with AVX-512, 2^(k/32) from a 32-entry table (exp_table: its two lookups are a permute each there; AVX2's
 * gathers made the softmaxes 30% slower than the polynomial below, so other ISAs keep that one). */
#if defined(__AVX512F__)
/* ---- exp(t + err) for t in [-87, 0] and err below an ulp of t, as 2^floor(k/32) * th * (1 + w): th = 2^(j/32)
 * rounded to float (j = k mod 32), w about 1% at most, the pair within about 3e-9 of the term (float32's own
 * rounding is 6e-8: the softmaxes' sums need the difference). t + err = q ln2 + r for q = k/32, with ln2 in two
 * parts (q * EXP_LN2_HI is exact for |k| < 2^12); 2^(j/32) as a table's float and that float's relative error; e^r
 * = 1 + r + r^2 (1/2 + r/6) for |r| <= ln2/64 (error below 6e-10). exp_table returns th, w and q, whose floor is
 * the power of two: `scalef` applies it in one instruction (exact where the result is normal, as every term from
 * t >= -87 is; a NaN stays NaN), where forming it as a float's bits and multiplying took four. A NaN t gives a NaN
 * w. ---- */
static const float EXP2_32_HI[32] __attribute__((aligned(64))) = {
    0x1p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f, 0x1.172b84p+0f, 0x1.1d4874p+0f, 0x1.2387a6p+0f,
    0x1.29e9ep+0f, 0x1.306fep+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f, 0x1.4bfdaep+0f, 0x1.5342b6p+0f,
    0x1.5ab07ep+0f, 0x1.6247ecp+0f, 0x1.6a09e6p+0f, 0x1.71f75ep+0f, 0x1.7a1148p+0f, 0x1.82589ap+0f, 0x1.8ace54p+0f,
    0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f, 0x1.ae89fap+0f, 0x1.b7f77p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f,
    0x1.d5818ep+0f, 0x1.dfc974p+0f, 0x1.ea4afap+0f, 0x1.f50766p+0f};
static const float EXP2_32_LO[32] __attribute__((aligned(64))) = {
    0.0f, -0x1.947414p-25f, 0x1.8d96d4p-25f, -0x1.dda2fcp-25f, -0x1.9c0c22p-27f, -0x1.a2fbb2p-25f, 0x1.964904p-25f,
    -0x1.2b0dbcp-25f, 0x1.125002p-25f, -0x1.cde8cep-26f, 0x1.370be4p-25f, 0x1.336de2p-30f, -0x1.0a355p-25f,
    -0x1.c541b4p-26f, -0x1.00d8acp-27f, -0x1.6cb284p-25f, 0x1.26055cp-26f, 0x1.8b2bb8p-26f, -0x1.05cb44p-25f,
    -0x1.1c2142p-26f, 0x1.67a1cap-28f, -0x1.348e56p-25f, 0x1.a3b5e4p-28f, -0x1.0b7ec8p-25f, -0x1.f9c304p-27f,
    -0x1.e4c886p-26f, -0x1.6961b4p-28f, -0x1.b5151ep-28f, -0x1.a5217cp-28f, -0x1.ab7132p-26f, 0x1.61428ep-28f,
    -0x1.2ad5f8p-27f};
ALWAYS vf exp_table(vf t, vf err, vf *w, vf *q) {
    /* 1.5 * 2^18: adding it rounds to a multiple of 1/32, k kept in the low bits (j = k mod 32 in the lowest 5,
     * which the lookups' permutes take as their index) */
    const float MAGIC = 393216.0f;
    const float EXP_LN2_HI = 0x1.62ep-1f, EXP_LN2_LO = 0x1.0bfbe8p-15f; /* ln2 = EXP_LN2_HI + EXP_LN2_LO */
    vf biased = fmadd(t, splatf(1.44269504088896341f), splatf(MAGIC)); /* 1/ln2 */
    *q = biased - MAGIC;
    vf r = fmadd(*q, splatf(-EXP_LN2_LO), fmadd(*q, splatf(-EXP_LN2_HI), t)) + err;
    *w = fmadd(r * r, fmadd(r, splatf(1.0f / 6), splatf(0.5f)), r + lookup32(EXP2_32_LO, (vi)biased));
    return lookup32(EXP2_32_HI, (vi)biased);
}

/* v * 2^floor(q) (exp_table's q) */
ALWAYS vf scale_by_floor(vf v, vf q) { return (vf)_mm512_scalef_ps((__m512)v, (__m512)q); }

/* The term as eh + el: eh = 2^floor(k/32) * th exactly (a normal float), el = eh * w the small rest (subnormal,
 * so good to 2^-149 only, from t below about -82.8: the pair's error grows to 1.7e-8 at -86, 4.3e-8 at -87).
 * Where `keep` is clear (t == 0, a term taken elsewhere, t out of range), eh and el are 0. */
ALWAYS void exp_split(vf t, vf err, vi keep, vf *eh, vf *el) {
    vf w, q, th = exp_table(t, err, &w, &q);
    vf h = (vf)((vi)scale_by_floor(th, q) & keep);
    *eh = h;
    *el = (vf)((vi)(h * w) & keep);
}

#else
/* exp(x + lo) in float32 arithmetic, for a small lo (below an ulp of x; it joins the reduced argument, where its
 * rounding is harmless) and x <= 88, as parts a caller can add exactly enough: Cody-Waite reduction x = n*ln2 + r
 * with a two-part ln2 (n*LN2_HI is exact), then Cephes' degree-6 polynomial: exp(x) = 2^n * (1 + r + q), |r| <=
 * ln2/2, q = r^2 * P(r). The scale 2^n is right for x >= -87.3 only: callers mask the other lanes. */
ALWAYS void exp_parts_lo(vf x, vf lo, vf *scale, vf *r, vf *q) {
    const float LOG2E = 1.44269504088896341f, LN2_HI = 0.693359375f, LN2_LO = -2.12194440e-4f;
    const float MAGIC = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer, kept in the low bits */
    vf biased = fmadd(x, splatf(LOG2E), splatf(MAGIC));
    vf n = biased - MAGIC;
    vf rr = fmadd(n, splatf(-LN2_LO), fmadd(n, splatf(-LN2_HI), x)) + lo;
    vf r2 = rr * rr; /* P by Estrin's scheme: a shorter chain than Horner's (see exp_q) */
    vf p = fmadd(fmadd(fmadd(splatf(1.9875691500e-4f), rr, splatf(1.3981999507e-3f)), r2,
                       fmadd(splatf(8.3334519073e-3f), rr, splatf(4.1665795894e-2f))),
                 r2, fmadd(splatf(1.6666665459e-1f), rr, splatf(5.0000001201e-1f)));
    *q = p * r2;
    *r = rr;
    *scale = (vf)(((vi)biased - (vi)splatf(MAGIC) + 127) << 23);
}

/* exp(t + err) as eh + el, from exp_parts_lo's scale, r and q: eh = s * h exactly (1 + r = h + l, Fast2Sum) and el
 * = s * (l + q + (h + q) * err), within about 2e-8 of the term; where `keep` is clear, both are 0. */
ALWAYS void exp_split(vf t, vf err, vi keep, vf *eh, vf *el) {
    vf sc, r, q;
    exp_parts_lo(t, (vf)splati(INT32_MIN), &sc, &r, &q); /* (lo = -0.0: t + -0.0 is t) */
    vf h = r + 1.0f, l = r - (h - 1.0f);
    *eh = (vf)((vi)(sc * h) & keep);
    *el = (vf)((vi)(sc * fmadd(h + q, err, l + q)) & keep);
}
#endif

/* c * exp(v) rounded once (also where the result is subnormal), for any v (NaN excepted: callers select), with
 * 2^n applied as 2^(n/2) * 2^(n - n/2): exp_normal's bits where that result is normal and c = 1. */
ALWAYS vf exp_scaled(vf v, vf c) {
    v = selectf(v > 89.0f, splatf(89.0f), v); /* exp(89) overflows, exp(-104) rounds to 0 */
    v = selectf(v < -104.0f, splatf(-104.0f), v);
    vf k, e = exp_reduced(v, &k);
    vi n = __builtin_convertvector(k, vi), n1 = n >> 1;
    return (c * e) * pow2i(n1) * pow2i(n - n1);
}

/* Every lane's lo <= |x| <= hi (not NaN; lo > 0 excludes zeros): the test of the fast paths, one unsigned compare
 * of the bits for all lanes, straight to a mask register on AVX-512. */
ALWAYS int all_within_range(vf x, float lo, float hi) {
    int32_t l, h;
    memcpy(&l, &lo, 4), memcpy(&h, &hi, 4);
#if defined(__AVX512F__)
    vu off = ((vu)x & 0x7fffffffu) - (uint32_t)l;
    return !_mm512_cmpgt_epu32_mask((__m512i)off, _mm512_set1_epi32(h - l));
#else /* (signed compares: AVX2 has no unsigned one, and GCC would test lane by lane) */
    vi a = (vi)x & 0x7fffffff;
    return !any_set(icmp_gt(splati(l), a) | icmp_gt(a, splati(h)));
#endif
}

ALWAYS int all_within(vf x, float lim) { return all_within_range(x, 0.0f, lim); }

/* EXP: NaN keeps its payload (quieted), as np.exp in float64 does. (The careful paths inline too: a call in the
 * loop, even one never taken, makes the compiler reload the fast path's constants each iteration.) */
ALWAYS vf exp_careful(vf x) { return selectf(x != x, x + x, exp_scaled(x, splatf(1.0f))); }

ALWAYS vf op_exp(vf x, const odml_params *p) {
    (void)p;
    return all_within(x, 87.0f) ? exp_normal(x) : exp_careful(x);
}

/* SIGMOID from t = exp(-|x|) in (0, 1]: 1 / (1 + t) for x >= 0, t / (1 + t) below (no overflow, and exp(x)'s
 * subnormals for x < -87), the sum kept unrounded (Fast2Sum: 1 + t = d + dl exactly); NaN gives the default quiet
 * NaN, as the activations' reference does. */
ALWAYS vf sigmoid_from(vf x, vf t) {
    vf d = 1.0f + t;
    return div_split(selectf(x >= 0.0f, splatf(1.0f), t), d, t - (d - 1.0f));
}

ALWAYS vf sigmoid_careful(vf x) {
    vf ax = (vf)((vi)x & 0x7fffffff);
    return selectf(x != x, splatf(NAN), sigmoid_from(x, exp_scaled(-ax, splatf(1.0f))));
}

ALWAYS vf op_sigmoid(vf x, const odml_params *p) {
    (void)p;
    vf m_ax = (vf)((vi)x | (int32_t)0x80000000); /* -|x| */
    return all_within(x, 87.0f) ? sigmoid_from(x, exp_normal(m_ax)) : sigmoid_careful(x);
}

/* TANH(|x|) = (1 - t) / (1 + t), t = exp(-2|x|) = 2^k * (1 + E), both sums formed without cancellation from
 * E = r + r^2 * exp_q(r) (for |x| < 0.17, k = 0 and E = expm1(-2|x|), r = -2|x| exactly; 1 - 2^k and 1 + 2^k are
 * exact): 1 - t rounded once (exact for k = 0), 1 + t held unrounded as hi + lo (the residual by an FMA), then
 * one quotient as div_split's, the sign copied back (-0.0 stays): within 2 ulp (measured: 2 near |x| = 0.2, one
 * in 30000; E's own error reaches the result at most 1.2 times). */
/* y (not negative) with x's sign: one ternary-logic instruction on AVX-512. */
ALWAYS vf copy_sign_to(vf y, vf x) {
#if defined(__AVX512F__)
    return (vf)_mm512_ternarylogic_epi32((__m512i)y, (__m512i)x, _mm512_set1_epi32(INT32_MIN), 0xF8); /* y|(x&m) */
#else
    return (vf)((vi)y | ((vi)x & (int32_t)0x80000000));
#endif
}

ALWAYS vf tanh_from(vf x, vf r, vf k) {
    vf sc = ldexpk(splatf(1.0f), k);
#if defined(__FMA__) || defined(__AVX512F__)
    vf r2 = r * r, e = fmadd(r2, exp_q(r, r2), r), one_m = 1.0f - sc, one_p = 1.0f + sc;
    vf dh = fmadd(sc, e, one_p), y = div_split(fnmadd(sc, e, one_m), dh, fmadd(sc, e, one_p - dh));
#else /* no FMA for the residuals: the same sums and quotient in double */
    vd rd = __builtin_convertvector(r, vd), sd = __builtin_convertvector(sc, vd);
    vd e = rd + rd * rd * __builtin_convertvector(exp_q(r, r * r), vd);
    vf y = __builtin_convertvector(((1.0 - sd) - sd * e) / ((1.0 + sd) + sd * e), vf);
#endif
    return copy_sign_to(y, x);
}

ALWAYS vf m2abs(vf x) { return (vf)((vu)x & 0x7fffffffu) * -2.0f; } /* -2|x| (|x| as all_within takes it) */

ALWAYS vf tanh_careful(vf x) {
    vf k, r = exp_reduce(selectf(m2abs(x) < -88.0f, splatf(-88.0f), m2abs(x)), &k); /* (t is 0 to 1 + t) */
    return selectf(x != x, splatf(NAN), tanh_from(x, r, k));
}

ALWAYS vf op_tanh(vf x, const odml_params *p) {
    (void)p;
    if (!all_within(x, 43.0f)) return tanh_careful(x);
    vf k, r = exp_reduce_of((vf)((vu)x & 0x7fffffffu), -2.0f, &k); /* (exp_reduce(m2abs(x)): the same bits) */
    return tanh_from(x, r, k);
}

/* GELU: x * Phi(x) with h = Phi(-|x|) = 0.5 * erfc(|x| / sqrt(2)) = exp(-x^2 / 2) * g(|x|). The careful path
 * (tails, tiny |x|, NaN, infinities; and everything without AVX2 or AVX-512), in double: g is
 * 0.5 * erfcx(|x| / sqrt(2)), a Chebyshev series (Clenshaw) in t = (|x| - 4) / (|x| + 4) (the reference's change of
 * variable; 1e-10 relative, interpolated from the reference's erfcx), so that x * h (x < 0, down to the
 * subnormals) and x - x * h (x >= 0, no cancellation: h <= 1/2) round once to float32: within 1 ulp. Beyond
 * |x| = 14.5 the result is x or -0.0 (|gelu| < 2^-150); NaN gives the default NaN, -0.0 stays -0.0. */
typedef int64_t vl VEC(int64_t);
ALWAYS vd seld(vl m, vd a, vd b) { return (vd)(((vl)a & m) | ((vl)b & ~m)); }

ALWAYS vd exp_d(vd v) { /* -745 < v <= 0: Cody-Waite with fdlibm's two-part ln2, degree-11 Taylor, 2^n by bits */
    const double MAGIC = 6755399441055744.0; /* 1.5 * 2^52 */
    vd biased = v * 1.4426950408889634 + MAGIC, n = biased - MAGIC;
    vd r = (v - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
    vd e = (vd){0} + 1.0 / 39916800;
    static const double inv[] = {1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120,
                                 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0};
    for (int k = 0; k < 11; k++) e = e * r + inv[k];
    return e * (vd)(((vl)biased - (vl)((vd){0} + MAGIC) + 1023) << 52);
}

ALWAYS vf gelu_double(vf x) {
    static const double c[] = {0.1682882016232327, -0.22915709990540906, 0.07778835509065733,
        -0.020384686418274015, 0.003918137045457986, -0.0004666606283378416, 6.287520132066659e-06,
        8.583985799169233e-06, -1.0167576109481464e-06, -1.3975267490490968e-07, 3.6692809121142975e-08,
        2.804162900262493e-09, -1.258479861871812e-09, -8.923367045277075e-11, 4.703236463482474e-11};
    vf ax = (vf)((vi)x & 0x7fffffff);
    vi neg = (vi)x < 0, big = ax > 14.5f;
    vd xd = __builtin_convertvector(x, vd), a = __builtin_convertvector(selectf(big, splatf(14.5f), ax), vd);
    vd d = a + 4.0, r = __builtin_convertvector(rcp_approx(__builtin_convertvector(d, vf)), vd);
    r = r + r * (1.0 - d * r), r = r + r * (1.0 - d * r); /* Newton: 14 or 23 bits -> 48 or more, no division */
    vd t = (a - 4.0) * r, t2 = t + t, b1 = {0}, b2 = {0};
    for (int k = 14; k >= 1; k--) {
        vd b0 = t2 * b1 - b2 + c[k];
        b2 = b1, b1 = b0;
    }
    vd h = exp_d(-0.5 * (a * a)) * (t * b1 - b2 + c[0]), xh = xd * h;
    vl negl = __builtin_convertvector(neg, vl);
    vf y = __builtin_convertvector(seld(negl, xh, xd - xh), vf);
    y = selectf(big, selectf(neg, splatf(-0.0f), x), y);
    return selectf(x != x, splatf(NAN), y);
}

#if defined(__AVX512F__) || defined(__AVX2__) /* (FMA: the exact split of x^2) */
/* The float32 GELU for 2^-20 <= |x| <= 12.375 (results normal), within 2 ulp: g in 16 pieces of width 0.8 centred
 * on 0.8k, each a degree-7 polynomial in s = |x| - 0.8k (exact: Sterbenz) whose coefficients come from 16-entry
 * tables (one permute each; fitted to 0.05 ulp, the constant term as hi + lo so that x * g rounds once);
 * exp(-x^2/2) from x^2 = hi + lo split exactly by an FMA (the reduced argument takes -lo/2), folded as
 * c * e = c + (c * r) * exp_tail(r) with c = x * g. Then x * h, or x - x * h for x >= 0 as in gelu_double. */
static const float GELU_CENTER[16] = {
    0.0f, 0.800000012f, 1.60000002f, 2.4000001f, 3.20000005f, 4.0f, 4.80000019f, 5.5999999f, 6.4000001f,
    7.19999981f, 8.0f, 8.80000019f, 9.60000038f, 10.3999996f, 11.1999998f, 12.0f};
static const float GELU_G[9][16] = {
    {
        0.5f, 0.291751951f, 0.197093308f, 0.146033138f, 0.114982478f, 0.094410643f, 0.0798960477f, 0.0691567585f,
        0.0609126613f, 0.0543963909f, 0.0491225459f, 0.0447702706f, 0.0411195047f, 0.038014587f, 0.0353424214f,
        0.0330189727f},
    {
        -1.84208204e-11f, -2.35497222e-09f, -6.25656527e-10f, 1.67971459e-09f, 1.01814202e-09f, -1.68087055e-09f,
        -2.72351097e-09f, 6.36381059e-10f, 1.42027134e-09f, -1.30387279e-09f, 3.44257595e-10f, -7.96839927e-10f,
        1.60388991e-09f, 2.77792456e-10f, 9.72268821e-10f, -1.64746194e-09f},
    {
        -0.398942262f, -0.165540725f, -0.0835929811f, -0.0484627299f, -0.0309983417f, -0.0212997161f,
        -0.0154412491f, -0.0116644362f, -0.00910123345f, -0.00728828553f, -0.00596191082f, -0.00496389763f,
        -0.00419500424f, -0.00359058706f, -0.00310715684f, -0.00271462742f},
    {
        0.249999702f, 0.0796598494f, 0.0316722877f, 0.014861295f, 0.00789389387f, 0.00460589072f, 0.00288902293f,
        0.00191795966f, 0.00133238384f, 0.000960367441f, 0.000713630288f, 0.000543984468f, 0.000423733145f,
        0.000336241617f, 0.000271133584f, 0.000221720693f},
    {
        -0.132974923f, -0.0339376219f, -0.0109724514f, -0.00426521106f, -0.00191262737f, -0.000958718068f,
        -0.000524646253f, -0.000307954149f, -0.0001913257f, -0.000124546772f, -8.42894369e-05f, -5.89447736e-05f,
        -4.23885976e-05f, -3.12247575e-05f, -2.34869167e-05f, -1.79930666e-05f},
    {
        0.0624428727f, 0.0131224357f, 0.00352835911f, 0.00115606212f, 0.000443341531f, 0.000192746651f,
        9.26778157e-05f, 4.83533113e-05f, 2.69745124e-05f, 1.59075516e-05f, 9.82864276e-06f, 6.31758303e-06f,
        4.20063407e-06f, 2.87603007e-06f, 2.02002457e-06f, 1.45096908e-06f},
    {
        -0.0262882151f, -0.00468673743f, -0.00106509181f, -0.000298049272f, -9.87634703e-05f, -3.75388991e-05f,
        -1.59559477e-05f, -7.43411374e-06f, -3.73734338e-06f, -2.00229101e-06f, -1.13196825e-06f, -6.69962333e-07f,
        -4.12477078e-07f, -2.62795652e-07f, -1.72520188e-07f, -1.1628287e-07f},
    {
        0.00947528332f, 0.00161141704f, 0.000311233394f, 7.4780015e-05f, 2.15115306e-05f, 7.17607372e-06f,
        2.70494434e-06f, 1.12831174e-06f, 5.12221163e-07f, 2.49717942e-07f, 1.29345182e-07f, 7.05658394e-08f,
        4.02637497e-08f, 2.38885907e-08f, 1.46668189e-08f, 9.28131616e-09f},
    {
        -0.00221763039f, -0.000501235947f, -8.41099027e-05f, -1.76419562e-05f, -4.46128888e-06f, -1.31871934e-06f,
        -4.44046748e-07f, -1.66768956e-07f, -6.86672337e-08f, -3.05690406e-08f, -1.45471457e-08f, -7.33156424e-09f,
        -3.88407262e-09f, -2.149253e-09f, -1.23570965e-09f, -7.34876104e-10f},
};

ALWAYS vf gelu_fast(vf x) {
    vf a = (vf)((vi)x & 0x7fffffff);
    vi k = __builtin_convertvector(fmadd(a, splatf(1.25f), splatf(0.5f)), vi);
    vf s = a - lookup16(GELU_CENTER, k), q = lookup16(GELU_G[8], k);
    for (int j = 7; j >= 2; j--) q = fmadd(q, s, lookup16(GELU_G[j], k));
    vf c = fmadd(x, lookup16(GELU_G[0], k), x * fmadd(q, s, lookup16(GELU_G[1], k)));
    vf hi = a * a, lo = fmadd(a, a, -hi);
    vf ek, r = exp_reduce_of(hi, -0.5f, &ek) - 0.5f * lo;
    vf xh = ldexpk(fmadd(c * r, exp_tail(r), c), ek);
    /* Below 0.4 (where the pieces' Horner sums are at their largest relative to g): 0.5x + x^2 * E(x^2), the
     * series of Phi(x) - 1/2 = x * E(x^2) fitted to degree 4 (0.0001 ulp); its share of -0.5x is below 1/3. */
    vf z = x * x, e = fmadd(splatf(0.00011153763625770807f), z, splatf(-0.0011867579305544496f));
    e = fmadd(e, z, splatf(0.009973523207008839f));
    e = fmadd(e, z, splatf(-0.06649038195610046f));
    e = fmadd(e, z, splatf(0.3989422917366028f));
    return selectf(a < 0.4f, fmadd(z, e, 0.5f * x), selectf(x < 0.0f, xh, x - xh));
}

/* (Out of line: the float64 path is too large to inline into every loop.) */
static __attribute__((noinline)) vf gelu_careful(vf x) {
    vi in = (vi)(((vu)x & 0x7fffffffu) - 0x35800000u <= 0x41460000u - 0x35800000u); /* as op_gelu's test, per lane */
    return selectf(in, gelu_fast(selectf(in, x, splatf(1.0f))), gelu_double(x));
}

ALWAYS vf op_gelu(vf x, const odml_params *p) {
    (void)p;
    return all_within_range(x, 0x1p-20f, 12.375f) ? gelu_fast(x) : gelu_careful(x); /* (piece 15 ends at 12.4) */
}
#else
static inline vf op_gelu(vf x, const odml_params *p) {
    (void)p;
    return gelu_double(x);
}
#endif

#define UNARY_FLOAT_OPS_EW(X) X(CLIP, op_clip) X(RELU, op_relu) X(EXP, op_exp) X(SIGMOID, op_sigmoid) X(TANH, op_tanh) \
    X(GELU, op_gelu)
UNARY_FLOAT_OPS_EW(UNARY_DEFINE)

/* ---- QUANTIZE_LINEAR: out = saturate(rint(x / scale) + zero_point), NaN -> the type's minimum. Operands: out
 * (u8 or i8), x and scale (f32 or f16, as float32), zero point (the output's type). ---- */
/* One vector of quotients to saturated integers (before the output type's narrowing). The quotient is clamped
 * to +-1024 first (far beyond the 8-bit range: it saturates anyway; NaN goes to -1024, hence the minimum), then
 * rounded ties to even (simd.h's per-ISA steps). */
ALWAYS vi quantize_vec(vf q, vi zp, int32_t lo, int32_t hi) {
    return clamp_i32(round_i32(clampf_nan_lo(q, -1024.0f, 1024.0f)) + zp, lo, hi);
}

/* The common layout (contiguous x and out, one scale and zero point) takes a loop of its own, free of the
 * per-vector stride tests; anything else goes through gathers. */
#define QUANTIZE_LOOP(XK, SK, OK, LO, HI)                                                                       \
    static void quantize_##XK##_##SK##_##OK(ptrdiff_t n, char *const *p, const ptrdiff_t *s,                    \
                                             const odml_params *prm) {                                          \
        (void)prm;                                                                                              \
        vf sc0 = ga_##SK(p[2], 0, LANES);                                                                       \
        vi zp0 = __builtin_convertvector(ga_##OK(p[3], 0, LANES), vi);                                          \
        ptrdiff_t i = 0;                                                                                        \
        char *o = p[0];                                                                                         \
        const char *x = p[1];                                                                                   \
        if (s[0] == 1 && s[1] == Z_##XK && !s[2] && !s[3]) {                                                    \
            int nt = n >= STREAM_MIN && !((uintptr_t)o & 15);                                                   \
            for (; i + LANES <= n; i += LANES) {                                                                \
                VT_##OK r = (VT_##OK)low_bytes(quantize_vec(ld_##XK(x + i * Z_##XK) / sc0, zp0, LO, HI));       \
                if (nt) stream_bytes(o + i, &r, sizeof r); else st_##OK(o + i, r);                              \
            }                                                                                                   \
            if (nt) stream_fence();                                                                             \
        }                                                                                                       \
        for (; i < n; i += LANES) {                                                                             \
            ptrdiff_t m = n - i < LANES ? n - i : LANES;                                                        \
            vf v = ga_##XK(x + i * s[1], s[1], m);                                                              \
            vf sc = s[2] ? ga_##SK(p[2] + i * s[2], s[2], m) : sc0;                                             \
            vi zp = s[3] ? __builtin_convertvector(ga_##OK(p[3] + i * s[3], s[3], m), vi) : zp0;               \
            sc_##OK(o + i * s[0], s[0], m, __builtin_convertvector(quantize_vec(v / sc, zp, LO, HI), VT_##OK));    \
        }                                                                                                       \
    }
#define QUANTIZE_OUTS(XK, SK) QUANTIZE_LOOP(XK, SK, u8, 0, 255) QUANTIZE_LOOP(XK, SK, i8, -128, 127)
QUANTIZE_OUTS(f32, f32)
QUANTIZE_OUTS(f32, f16)
QUANTIZE_OUTS(f16, f32)
QUANTIZE_OUTS(f16, f16)

/* The pickers of this block: by operator and the operands' dtypes (module.c has checked they are valid). */
#define FLOAT_KIND(k) ((k) == ODML_F32 ? 0 : (k) == ODML_F16 ? 1 : -1)
static ew_inner ew_pick_ew(int op, int nin, const odml_array *in, const odml_array *out) {
    switch (op) {
    case ODML_OP_ADD: switch (out->dtype) { KIND_CASES(FN_NAME, add, UNSIGNED) } break;
    case ODML_OP_SUBTRACT: switch (out->dtype) { KIND_CASES(FN_NAME, subtract, UNSIGNED) } break;
    case ODML_OP_MULTIPLY: switch (out->dtype) { KIND_CASES(FN_NAME, multiply, UNSIGNED) } break;
    case ODML_OP_LESS_THAN: switch (in[0].dtype) { KIND_CASES(FN_NAME, less, SIGNED) } break;
    case ODML_OP_QUANTIZE_LINEAR: {
        static const ew_inner table[2][2][2] = {
            {{quantize_f32_f32_u8, quantize_f32_f32_i8}, {quantize_f32_f16_u8, quantize_f32_f16_i8}},
            {{quantize_f16_f32_u8, quantize_f16_f32_i8}, {quantize_f16_f16_u8, quantize_f16_f16_i8}}};
        int xk = FLOAT_KIND(in[0].dtype), sk = FLOAT_KIND(in[1].dtype), ok = out->dtype == ODML_I8;
        return nin == 3 && xk >= 0 && sk >= 0 ? table[xk][sk][ok] : NULL;
    }
    }
    return NULL;
}

static ew_inner ew_pick(int op, const odml_array *out) {
    switch (op) {
#define UNARY_CASE(ID, OP)                                                                                      \
    case ODML_OP_##ID:                                                                                          \
        return out->dtype == ODML_F32 ? OP##_f32 : out->dtype == ODML_F16 ? OP##_f16 : NULL;
        UNARY_FLOAT_OPS(UNARY_CASE)
        UNARY_FLOAT_OPS_EW(UNARY_CASE)
    case ODML_OP_IF:
        switch (out->itemsize) {
        case 1: return if_uint8_t;
        case 2: return if_uint16_t;
        case 4: return if_uint32_t;
        case 8: return if_uint64_t;
        }
    }
    return NULL;
}

static int elementwise(int op, int nin, const odml_array *in, const odml_array *out, const odml_params *prm) {
    ew_inner fn = ew_pick(op, out);
    if (!fn) fn = ew_pick_ew(op, nin, in, out); /* issues 10 and 11: pickers by the inputs' dtypes too */
    if (!fn || nin + 1 > EW_MAXOP) return -1;
    const odml_array *ops[EW_MAXOP] = {out};
    for (int k = 0; k < nin; k++) ops[k + 1] = &in[k];
    ew_run(nin + 1, ops, fn, prm);
    return 0;
}

/* ============================== reduction engine ============================== */

typedef struct {
    int nd; /* reduced dimensions, ascending axis order, merged where contiguous */
    ptrdiff_t n[ODML_MAXDIM], si[ODML_MAXDIM], so[ODML_MAXDIM]; /* sizes, input and output byte strides */
} rdims;

typedef struct {
    int in_dtype, out_dtype, isize, osize, last; /* last: ODML_LAST | ODML_MIN flags */
    ptrdiff_t scratch_n; /* floats of scratch row each task allocates for its groups (0: none; see scratch_row) */
    float *scratch;
    int far_gb; /* far groups a block holds: the softmaxes' (see FAR_READS), or the one-pass
                 * reductions' states (see FAR_GROUPS); 0: none */
    int fetch; /* the input is larger than FETCH_MIN: rows are fetched ahead (fetch_row) */
} rctx;

/* contig: reduce the one group at `in`, writing at `out`. strip: reduce nl <= 16 groups side by side, lane l at
 * in + l*lsi, written at out + l*lso. In both, `out` is the group's base (full-shape outputs walk R's so). */
typedef void (*red_contig)(const char *in, char *out, const rdims *R, const rctx *c);
/* Optional: `count` groups along one kept dimension, group g at in + g * gsi and out + g * gso, for operators
 * whose short groups are bound by per-group costs (a call each, a chain of dependent steps) and loop or pair them
 * in one call. */
typedef void (*red_run)(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                        const rctx *c);
/* Groups side by side whose runs lie far apart (a reduction over a far axis and a near one, as (0, 2)) go
 * GROUP_BLOCK at a time, run by run: memory is then read in pieces of GROUP_BLOCK runs laid end to end, where
 * one group at a time would read one run from each of many far pages (too many streams for the hardware to
 * fetch, sharing cache sets besides). far_adjacent: the groups' runs (packed, more than one a group) tile. */
#ifndef GROUP_BLOCK
#define GROUP_BLOCK 64 /* (measured: 16 -> 64 took HARDMAX1 float32 over (0, 2) of (64, 512, 512) 4.4 -> 3.4 ms) */
#endif
static int far_adjacent(const rdims *R, ptrdiff_t gsi, const rctx *c) {
    return R->nd >= 2 && R->si[R->nd - 1] == c->isize && gsi == R->n[R->nd - 1] * c->isize;
}
/* Whether `count` such groups of a one-pass reduction (one call: a task's groups within its last kept dimension)
 * go as far blocks: not where their input fits FAR_SMALL, which stays in L2 from group to group, and goes faster
 * a group at a time, its state in registers where a block's states are stored and loaded again at every run (over
 * (0, 2) of (8, 64, 64), one thread, per call back to back: REDUCE MAX float32 7.4 -> 5.9 us; of (8, 32, 256) 9.6
 * -> 6.7). */
#ifndef FAR_SMALL
#define FAR_SMALL (256 << 10) /* bytes */
#endif
static double group_count(const rdims *R);
static int far_blocks(const rdims *R, ptrdiff_t gsi, ptrdiff_t count, const rctx *c) {
    return far_adjacent(R, gsi, c) && (double)count * group_count(R) * c->isize > FAR_SMALL;
}
/* A far block of a one-pass reduction (ARGMAX/ARGMIN, HARDMAX, REDUCE's float sums, MAX and MIN) holds up to
 * FAR_GROUPS groups, their running states (FAR_STATE bytes each at most) in the task's scratch, which reduce sizes
 * (without it, GROUP_BLOCK of them on the stack): its pieces of runs are then longer, and over (0, 2) of
 * (64, 512, 512) the tensor is read in order (one thread, AMD Zen 4: ARGMAX float32 3.4 -> 2.6 ms, REDUCE MAX
 * 3.4 -> 2.4, SUM 2.9 -> 2.4, HARDMAX1 7.4 -> 5.2; 256 groups took about half of that). */
#define FAR_GROUPS 512
_Static_assert(GROUP_BLOCK <= FAR_GROUPS, "a block's indices (at[FAR_GROUPS]) on either path");
/* Whether a far block's runs fetch their next ones (PREFETCH_NEXT_RUN): where the block's runs of one step span
 * FAR_SPAN bytes at most (half the L2), so that those lines are still there when the block reaches them; from a
 * longer span they are gone by then and read twice. Over (0, 2) of (64, 512, 512), 1 MiB a step in float32, Zen 4,
 * one thread, with ARGMAX's mask-register update (update_vf): ARGMAX float32 2.85 ms with the fetches, 2.25-2.4
 * without (2.4-2.6 before both changes); REDUCE SUM 2.3 -> 1.8, MAX 2.35 -> 1.75. ARGMAX float16 (512 KiB a step)
 * keeps them: 2.2 ms without, 1.6 with (2.3 before both). FETCH_CONSTANT runs a block's loop with the choice as a
 * constant FETCH_K. */
#define FAR_SPAN (512 << 10)
#define FAR_FETCH(gb, gsi) ((gb) * (gsi) <= FAR_SPAN)
#define FETCH_CONSTANT(gb, gsi, ...)                                                                            \
    do {                                                                                                        \
        if (FAR_FETCH(gb, gsi)) { enum { FETCH_K = 1 }; __VA_ARGS__; }                                          \
        else { enum { FETCH_K = 0 }; __VA_ARGS__; }                                                             \
    } while (0)
#define FAR_STATE 1024
#define FAR_ALIGN 128 /* (the scratch's alignment: vectors of 64-bit lanes are two registers wide) */
/* The states of a far block: the scratch (reduce sized it for c->far_gb groups) or `stack` (GROUP_BLOCK). */
ALWAYS void *far_states(const rctx *c, void *stack, ptrdiff_t *per) {
    int heap = c->far_gb > GROUP_BLOCK && c->scratch;
    *per = heap ? c->far_gb : GROUP_BLOCK;
    return heap ? (void *)c->scratch : stack;
}
/* The blocks of count groups: the first group g0 of each and its size gb. */
#define FOR_BLOCKS(count, g0, gb, B)                                                                            \
    for (ptrdiff_t g0 = 0, gb = 0; g0 < (count) && (gb = (count) - g0 < (B) ? (count) - g0 : (B)); g0 += (B))

/* ID##_r: the run of groups as a loop over the red_contig ID##_c (no per-group trip through the engine). */
#define RUN_LOOP(ID) for (ptrdiff_t g = 0; g < count; g++) ID##_c(in + g * gsi, out + g * gso, R, c)
/* The same with each next group's lines fetched (fetch_row) before the group runs. */
#define RUN_LOOP_AHEAD(ID)                                                                                      \
    for (ptrdiff_t g = 0; g < count; g++) {                                                                     \
        if (g + 1 < count) fetch_row(in + (g + 1) * gsi, R, c);                                                 \
        ID##_c(in + g * gsi, out + g * gso, R, c);                                                              \
    }
/* A group that is one packed row of at most ROW_AHEAD_MAX bytes: all its lines fetched, ahead of its turn. Rows
 * run one after the other, but a kernel's passes go back over a row (ARGMAX's position), or take a row's lines
 * faster than the hardware fetches the next row's once it sees the stream start again; on Intel's cores rows then
 * waited for memory (one thread, (64, 512, 512), rows of 512, interleaved with caches flushed: REDUCE SUM float16
 * 4.8 -> 2.55 ms, float32 4.5 -> 4.3, MAX float16 2.9 -> 2.3; ARGMAX float32 9.3 -> 4.8 in the benchmark). A longer
 * row's lines would be evicted before their use. */
#ifndef ROW_AHEAD_MAX
#define ROW_AHEAD_MAX (16 << 10)
#endif
/* (In cache, the fetches only cost: REDUCE MAX float32 over the last axis of (8, 64, 64), per call, 4.9 -> 5.6 us.) */
#ifndef FETCH_MIN
#define FETCH_MIN (4 << 20) /* bytes: beyond a core's L2 (2 MiB on Intel's here, 1 MiB on Zen 4's) */
#endif
ALWAYS void fetch_row(const char *p, const rdims *R, const rctx *c) {
    ptrdiff_t bytes = R->n[0] * c->isize;
    if (c->fetch && R->nd == 1 && R->si[0] == c->isize && bytes <= ROW_AHEAD_MAX)
        for (ptrdiff_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
}
#define RED_RUN(ID)                                                                                             \
    static void ID##_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R, \
                       const rctx *c) {                                                                         \
        RUN_LOOP(ID);                                                                                           \
    }
typedef void (*red_strip)(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R,
                          const rctx *c);

/* Walk the runs of a group: BODY sees pi/po (the run's input/output start) and flat (the run's first
 * row-major index over the reduced coordinates); the run has R->n[R->nd-1] elements. */
#define FOR_RUNS(R, IN, OUT, pi, po, flat, ...)                                                                 \
    do {                                                                                                        \
        ptrdiff_t c_[ODML_MAXDIM] = {0};                                                                        \
        const char *pi = (IN);                                                                                  \
        char *po = (OUT);                                                                                       \
        uint32_t flat = 0;                                                                                      \
        const int l_ = (R)->nd - 1;                                                                             \
        for (;;) {                                                                                              \
            (void)po;                                                                                           \
            __VA_ARGS__;                                                                                        \
            flat += (uint32_t)(R)->n[l_];                                                                       \
            (void)flat;                                                                                         \
            int d_ = l_ - 1;                                                                                    \
            for (; d_ >= 0; d_--) {                                                                             \
                pi += (R)->si[d_];                                                                              \
                po += (R)->so[d_];                                                                              \
                if (++c_[d_] < (R)->n[d_]) break;                                                               \
                pi -= (R)->si[d_] * (R)->n[d_];                                                                 \
                po -= (R)->so[d_] * (R)->n[d_];                                                                 \
                c_[d_] = 0;                                                                                     \
            }                                                                                                   \
            if (d_ < 0) break;                                                                                  \
        }                                                                                                       \
    } while (0)

/* Inside FOR_RUNS: fetch the same place of the next run ahead, when runs are far apart (a far-strided reduced
 * axis outside a contiguous one: the hardware follows too few streams to fetch them). */
#define PREFETCH_NEXT_RUN(R, p) ((R)->nd > 1 ? __builtin_prefetch((p) + (R)->si[(R)->nd - 2]) : (void)0)

ALWAYS vu iota(void) { /* 0, 1, ..., LANES - 1 (folded to a constant) */
    vu v;
    for (int l = 0; l < LANES; l++) v[l] = (uint32_t)l;
    return v;
}
#define IOTA iota()
/* A strip's lanes are adjacent groups; the strip STRIP_AHEAD on reads (and writes) the lines beside this one's, far
 * apart from step to step: the hardware tracks too few streams to fetch them, so the strips fetch them. */
#ifndef STRIP_AHEAD
#define STRIP_AHEAD 4
#endif
#define STRIP_FETCH(p, lstride) __builtin_prefetch((p) + STRIP_AHEAD * LANES * (lstride))
#define STRIP_FETCH_W(p, lstride) __builtin_prefetch((p) + STRIP_AHEAD * LANES * (lstride), 1)
/* Panels: strips side by side, up to PANEL_MAX of them, when their lanes are adjacent in memory (the softmaxes,
 * REDUCE's float sums, ARGMAX/ARGMIN and MAX/MIN; reduce sizes a softmax panel so that its copy stays within
 * PANEL_BYTES). A panel's steps are read (and written) as rows of adjacent lines: a lone strip reads one line
 * a step, as many streams as steps, too many for the hardware to fetch ahead, and at a power-of-two stride all
 * in a few cache sets. A softmax panel's copy (a step every ws floats, one vector padding each so that steps do
 * not share cache sets either) serves its passes between. */
#ifndef PANEL_MAX
#define PANEL_MAX 64
#endif
#ifndef PANEL_BYTES
/* (measured: 256 KiB -> 1 MiB took SOFTMAX1 float32 over axis 1 of (64, 512, 512) 12.2 -> 8.1 ms) */
#define PANEL_BYTES (1 << 20)
#endif
#ifndef PANEL_AHEAD
#define PANEL_AHEAD 8 /* steps (measured: 1 -> 8 took SOFTMAX1 float32 over axis 1 of (64, 512, 512) 14.8 -> 12.4 ms) */
#endif
ALWAYS int sub_nl(int nl, int v) { return nl - v * LANES < LANES ? nl - v * LANES : LANES; }
ALWAYS unsigned first_lanes(int k) { return (1u << k) - 1; } /* the lane mask of lanes 0 to k - 1 */
#define CHAINS 4 /* independent running states per contiguous run */

static void store_index(char *p, int dtype, uint32_t v) {
    switch (dtype) {
    case ODML_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case ODML_U32: memcpy(p, &v, 4); break;
    default: { uint64_t x = v; memcpy(p, &x, 8); break; } /* INT64, UINT64: the index is never negative */
    }
}

/* nl <= LANES float16 lanes at a byte stride s as floats into v (lanes past nl: pad's) by a masked load (s = 2)
 * or (s >= 4, nl >= 2) the 4-byte gather: lane 0 reads its half and the 2 bytes after it, each later lane the 2
 * bytes before its half and the half, all between the first and the last lane's halves (inside the tensor);
 * 0 where there is neither (AVX-512 only). */
ALWAYS int gather16f(const char *p, ptrdiff_t s, ptrdiff_t nl, vf pad, vf *v) {
#if defined(__AVX512F__)
    __mmask16 m = (__mmask16)((1u << nl) - 1);
    if (s == 2) return *v = (vf)_mm512_mask_cvtph_ps((__m512)pad, m, _mm256_maskz_loadu_epi16(m, p)), 1;
    if (s < 4 || nl < 2 || s > INT32_MAX / LANES) return 0;
    vi idx = (vi)IOTA * (int32_t)s - 2, sh = splati(16);
    idx[0] = 0, sh[0] = 0; /* (lane 0: the half in the low 16 bits) */
    __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, (__m512i)idx, p, 1);
    *v = (vf)_mm512_mask_cvtph_ps((__m512)pad, m, _mm512_cvtepi32_epi16(_mm512_srlv_epi32(w, (__m512i)sh)));
    return 1;
#else
    (void)p, (void)s, (void)nl, (void)pad, (void)v;
    return 0;
#endif
}

/* The first nl 4-byte lanes of v to p (contiguous: s = 4) by a masked store, which writes only those lanes'
 * bytes; 0 elsewhere (then the caller's lane loop: faster here than AVX-512's scatter). */
ALWAYS int put32(char *p, ptrdiff_t s, ptrdiff_t nl, vi v) {
#if defined(__AVX512F__)
    if (s != 4) return 0;
    _mm512_mask_storeu_epi32(p, (__mmask16)((1u << nl) - 1), (__m512i)v);
    return 1;
#elif defined(__AVX2__) /* (LANES 8) */
    if (s != 4) return 0;
    vi on = (vi)IOTA < (int32_t)nl;
    __m256i m, x;
    memcpy(&m, &on, 32), memcpy(&x, &v, 32);
    _mm256_maskstore_epi32((int *)p, m, x);
    return 1;
#else
    (void)p, (void)s, (void)nl, (void)v;
    return 0;
#endif
}

/* nl <= LANES 4-byte lanes at a byte stride s into g (lanes past nl: pad) by a masked load (s = 4) or the hardware
 * gather, which read only those lanes' bytes; 0 where there is neither (then the caller's lane loop). The strips
 * of a run shorter than a vector take their lanes at the run's stride; a run's last partial vector is one load. */
ALWAYS int gather32(const char *p, ptrdiff_t s, ptrdiff_t nl, vi pad, vi *g) {
#if defined(__AVX512F__)
    if (s == 4) return *g = (vi)_mm512_mask_loadu_epi32((__m512i)pad, (__mmask16)((1u << nl) - 1), p), 1;
    if (s > INT32_MAX / LANES) return 0;
    *g = (vi)_mm512_mask_i32gather_epi32((__m512i)pad, (__mmask16)((1u << nl) - 1), (__m512i)((vi)IOTA * (int32_t)s),
                                         p, 1);
    return 1;
#elif defined(__AVX2__) /* (LANES 8) */
    if (s > INT32_MAX / LANES) return 0;
    vi idx = (vi)IOTA * (int32_t)s, on = (vi)IOTA < (int32_t)nl;
    __m256i a, i, m, r;
    memcpy(&a, &pad, 32), memcpy(&i, &idx, 32), memcpy(&m, &on, 32);
    r = s == 4 ? _mm256_blendv_epi8(a, _mm256_maskload_epi32((const int *)p, m), m)
               : _mm256_mask_i32gather_epi32(a, (const int *)p, i, m, 1);
    memcpy(g, &r, 32);
    return 1;
#else
    (void)p, (void)s, (void)nl, (void)pad, (void)g;
    return 0;
#endif
}

/* ---- ARGMAX (and HARDMAX's first pass): per-lane running (max, index), NaN above every number.
 * INCREASING takes strictly greater values (first max wins), DECREASING greater-or-equal (last wins). Lanes
 * hold candidates; the final pick among tied lanes is by index, so lane order never matters. ---- */
/* `last` holds flags: ODML_LAST as above, ODML_MIN turns the comparisons round (ARGMIN, MIN; NaN still wins). */
#define GT_(x, m, fl) ((fl) & ODML_MIN ? (x) < (m) : (x) > (m))
#define GE_(x, m, fl) ((fl) & ODML_MIN ? (x) <= (m) : (x) >= (m))
#define BEATS_F(x, m, last)                                                                                     \
    ((last) & ODML_LAST ? GE_(x, m, last) | ((x) != (x)) : GT_(x, m, last) | (((x) != (x)) & ((m) == (m))))
#define TIED_F(x, m) (((x) == (m)) | (((x) != (x)) & ((m) != (m))))
#define BEATS_I(x, m, last) ((last) & ODML_LAST ? GE_(x, m, last) : GT_(x, m, last))
#define TIED_I(x, m) ((x) == (m))
#define LOAD_MEM(V, p) ({ V v_; memcpy(&v_, (p), sizeof v_); v_; })
#define LOAD_F16(V, p) load_f16(p)

/* The float update (BEATS_F, then the selects) in mask registers: GCC's form of the generic one moves each
 * compare's mask into a vector and blends with that (four instructions where two do). A NaN x beats a number m:
 * without ODML_LAST, "m is a number and not x <= m" (unordered: true); with it, "x is NaN or x >= m"; ODML_MIN
 * turns the comparisons round (x >= m, x <= m). */
#if defined(__AVX512F__)
#define MASK_UPDATE_F(x, at, last, m, id) (update_vf((vf)(x), at, last, (vf *)(m), id), 1)
ALWAYS void update_vf(vf x, vu at, const int last, vf *m, vu *id) {
    __m512 a = (__m512)x, b = (__m512)*m;
    __mmask16 t, ord = _mm512_cmp_ps_mask(b, b, _CMP_ORD_Q), nan = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
    if (last & ODML_LAST)
        t = nan | (last & ODML_MIN ? _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ) : _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ));
    else
        t = last & ODML_MIN ? _mm512_mask_cmp_ps_mask(ord, a, b, _CMP_NGE_UQ)
                            : _mm512_mask_cmp_ps_mask(ord, a, b, _CMP_NLE_UQ);
    *m = (vf)_mm512_mask_blend_ps(t, b, a);
    *id = (vu)_mm512_mask_blend_epi32(t, (__m512i)*id, (__m512i)at);
}
#else
#define MASK_UPDATE_F(x, at, last, m, id) 0
#endif
#define MASK_UPDATE_I(x, at, last, m, id) 0

/* FN(args) with `last`'s flags as a constant where LAST_K stands among them: the hot loops without a test of
 * each flag a vector (GCC does not unswitch them). (Two flags, four cases: the last branch takes both.) */
_Static_assert((ODML_LAST | ODML_MIN) == 3, "LAST_CONSTANT's four cases are every combination of the flags");
#define LAST_CONSTANT(last, FN, ...)                                                                            \
    do {                                                                                                        \
        if ((last) == 0) { enum { LAST_K = 0 }; FN(__VA_ARGS__); }                                              \
        else if ((last) == ODML_LAST) { enum { LAST_K = ODML_LAST }; FN(__VA_ARGS__); }                         \
        else if ((last) == ODML_MIN) { enum { LAST_K = ODML_MIN }; FN(__VA_ARGS__); }                           \
        else { enum { LAST_K = ODML_MIN | ODML_LAST }; FN(__VA_ARGS__); }                                       \
    } while (0)

#define ARGMAX_T(NAME, T, C, KIND, LOAD16, CONV)                                                                \
    typedef C NAME##_v VEC(C);                                                                                  \
    typedef __typeof__((NAME##_v){0} < (NAME##_v){0}) NAME##_m;                                                 \
    ALWAYS NAME##_v NAME##_lanes(const char *p, ptrdiff_t s, ptrdiff_t nl) {                                    \
        if (nl == LANES && s == sizeof(T)) return LOAD16(NAME##_v, p);                                          \
        NAME##_v v = {0};                                                                                       \
        vi g;                                                                                                   \
        if (sizeof(T) == 4 && gather32(p, s, nl, (vi){0}, &g)) return memcpy(&v, &g, sizeof v), v;             \
        vf h;                                                                                                   \
        if (sizeof(T) == 2 && __builtin_types_compatible_p(C, float) && gather16f(p, s, nl, (vf){0}, &h))     \
            return memcpy(&v, &h, sizeof v), v;                                                                 \
        for (ptrdiff_t l = 0; l < nl; l++) { T t; memcpy(&t, p + l * s, sizeof t); v[l] = (C)CONV(t); }        \
        return v;                                                                                               \
    }                                                                                                           \
    ALWAYS void NAME##_update(NAME##_v x, vu at, int last, NAME##_v *m, vu *id) {                               \
        if (MASK_UPDATE_##KIND(x, at, last, m, id)) return;                                                     \
        NAME##_m t = BEATS_##KIND(x, *m, last);                                                                 \
        *m = (NAME##_v)(((NAME##_m)x & t) | ((NAME##_m)*m & ~t));                                               \
        vu tu = (vu)__builtin_convertvector(t, vi);                                                             \
        *id = (at & tu) | (*id & ~tu);                                                                          \
    }                                                                                                           \
    /* The running state: CHAINS independent (max, index) vectors (one compare-select chain is latency                 \
     * bound) and the best of the scalar tails. */                                                                     \
    typedef struct {                                                                                                   \
        NAME##_v ms[CHAINS];                                                                                           \
        vu ids[CHAINS];                                                                                                \
        C bm;                                                                                                          \
        uint32_t bi;                                                                                                   \
    } NAME##_amax;                                                                                                     \
    ALWAYS void NAME##_amax_start(const char *in, NAME##_amax *t) { /* (from the group's first element) */             \
        T t0;                                                                                                          \
        memcpy(&t0, in, sizeof t0);                                                                                    \
        t->bm = (C)CONV(t0), t->bi = 0;                                                                                \
        for (int k = 0; k < CHAINS; k++) t->ms[k] = (NAME##_v){0} + t->bm, t->ids[k] = (vu){0};                        \
    }                                                                                                                  \
    /* One run (at pi; its first element is the group's element `flat`) into the state; `fetch` (a constant): the  \
     * next run's lines are fetched on the way. */                                                                     \
    ALWAYS void NAME##_amax_run(const char *pi, uint32_t flat, const rdims *R, int last, const int fetch,              \
                                NAME##_amax *state) {                                                                  \
        NAME##_amax t = *state; /* (locals: registers) */                                                              \
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], i = 0;                                                    \
        if (s == sizeof(T)) {                                                                                          \
            for (; i + CHAINS * LANES <= n; i += CHAINS * LANES)                                                       \
                for (int k = 0; k < CHAINS; k++) {                                                                     \
                    if (fetch) PREFETCH_NEXT_RUN(R, pi + (i + k * LANES) * (ptrdiff_t)sizeof(T));                      \
                    NAME##_update(LOAD16(NAME##_v, pi + (i + k * LANES) * (ptrdiff_t)sizeof(T)),                       \
                                  IOTA + (flat + (uint32_t)(i + k * LANES)), last, &t.ms[k], &t.ids[k]);               \
                }                                                                                                      \
            for (; i + LANES <= n; i += LANES)                                                                         \
                NAME##_update(LOAD16(NAME##_v, pi + i * (ptrdiff_t)sizeof(T)), IOTA + (flat + (uint32_t)i), last,      \
                              &t.ms[0], &t.ids[0]);                                                                    \
        }                                                                                                              \
        for (; i < n; i++) {                                                                                           \
            T v;                                                                                                       \
            memcpy(&v, pi + i * s, sizeof v);                                                                          \
            C x = (C)CONV(v);                                                                                          \
            if (BEATS_##KIND(x, t.bm, last)) t.bm = x, t.bi = flat + (uint32_t)i;                                      \
        }                                                                                                              \
        for (int k = 0; k < CHAINS; k++) state->ms[k] = t.ms[k], state->ids[k] = t.ids[k];                            \
        /* (field by field: GCC's copy of the whole struct reads the scalars back as a vector just stored in part, \
         * a stall a run: 14% of the time of ARGMAX's far blocks) */                                                  \
        state->bm = t.bm, state->bi = t.bi;                                                                            \
    }                                                                                                                  \
    ALWAYS uint32_t NAME##_amax_finish(const NAME##_amax *t, int last) {                                               \
        NAME##_v m = t->ms[0];                                                                                         \
        vu id = t->ids[0];                                                                                             \
        C bm = t->bm;                                                                                                  \
        uint32_t bi = t->bi;                                                                                           \
        for (int k = 1; k < CHAINS; k++) { /* merge the states lane by lane: better value, then index order */         \
            NAME##_m t2 = BEATS_##KIND(t->ms[k], m, last & ODML_MIN) |                                                 \
                          (TIED_##KIND(t->ms[k], m) &                                                                  \
                           __builtin_convertvector(last & ODML_LAST ? t->ids[k] > id : t->ids[k] < id, NAME##_m));     \
            m = (NAME##_v)(((NAME##_m)t->ms[k] & t2) | ((NAME##_m)m & ~t2));                                           \
            vu t2u = (vu)__builtin_convertvector(t2, vi);                                                              \
            id = (t->ids[k] & t2u) | (id & ~t2u);                                                                      \
        }                                                                                                              \
        for (int l = 0; l < LANES; l++)                                                                                \
            if (BEATS_##KIND(m[l], bm, last & ODML_MIN) ||                                                             \
                (TIED_##KIND(m[l], bm) && (last & ODML_LAST ? id[l] > bi : id[l] < bi))) {                             \
                bm = m[l];                                                                                             \
                bi = id[l];                                                                                            \
            }                                                                                                          \
        return bi;                                                                                                     \
    }                                                                                                                  \
    static uint32_t NAME##_argmax_contig(const char *in, const rdims *R, int last) {                                   \
        NAME##_amax t;                                                                                                 \
        NAME##_amax_start(in, &t);                                                                                     \
        FOR_RUNS(R, in, NULL, pi, po, flat, NAME##_amax_run(pi, flat, R, last, 1, &t));                                \
        return NAME##_amax_finish(&t, last);                                                                           \
    }                                                                                                                  \
    /* The indices of gb adjacent groups with far runs (see GROUP_BLOCK), run by run; t: their states. */              \
    _Static_assert(sizeof(NAME##_amax) <= FAR_STATE && _Alignof(NAME##_amax) <= FAR_ALIGN, "a far state");             \
    ALWAYS void NAME##_argmax_block_k(const char *in, ptrdiff_t gsi, int gb, const rdims *R, const int last,         \
                                      NAME##_amax *t, uint32_t *at) {                                                  \
        for (int g = 0; g < gb; g++) NAME##_amax_start(in + g * gsi, &t[g]);                                           \
        FOR_RUNS(R, in, NULL, pi, po, flat, {                                                                          \
            FETCH_CONSTANT(gb, gsi, for (int g = 0; g < gb; g++)                                                      \
                                        NAME##_amax_run(pi + g * gsi, flat, R, last, FETCH_K, &t[g]));                 \
        });                                                                                                            \
        for (int g = 0; g < gb; g++) at[g] = NAME##_amax_finish(&t[g], last);                                          \
    }                                                                                                                  \
    __attribute__((unused)) static void NAME##_argmax_block(const char *in, ptrdiff_t gsi, int gb, const rdims *R,     \
                                                            int last, NAME##_amax *t, uint32_t *at) {                  \
        LAST_CONSTANT(last, NAME##_argmax_block_k, in, gsi, gb, R, LAST_K, t, at);                                     \
    }                                                                                                                  \
    static vu NAME##_argmax_strip(const char *in, ptrdiff_t lsi, int nl, const rdims *R, int last) {            \
        NAME##_v m = NAME##_lanes(in, lsi, nl);                                                                 \
        vu id = {0};                                                                                            \
        FOR_RUNS(R, in, NULL, pi, po, flat, {                                                                   \
            ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];                                                \
            for (ptrdiff_t i = 0; i < n; i++) {                                                                 \
                STRIP_FETCH(pi + i * s, lsi);                                                                   \
                NAME##_update(NAME##_lanes(pi + i * s, lsi, nl), (vu){0} + (flat + (uint32_t)i), last, &m, &id); \
            }                                                                                                   \
        });                                                                                                     \
        return id;                                                                                              \
    }                                                                                                           \
    /* The same for a panel of strips side by side (nl > LANES lanes: see panel_max_min), into ids[v]. */      \
    static void NAME##_argmax_panel(const char *in, ptrdiff_t lsi, int nl, const rdims *R, int last, vu *ids) { \
        int nv = (nl + LANES - 1) / LANES;                                                                      \
        if (nv == 1) {                                                                                          \
            ids[0] = NAME##_argmax_strip(in, lsi, nl, R, last);                                                 \
            return;                                                                                             \
        }                                                                                                       \
        NAME##_v m[PANEL_MAX];                                                                                  \
        for (int v = 0; v < nv; v++)                                                                            \
            m[v] = NAME##_lanes(in + v * LANES * lsi, lsi, sub_nl(nl, v)), ids[v] = (vu){0};                    \
        FOR_RUNS(R, in, NULL, pi, po, flat, {                                                                   \
            ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];                                                \
            for (ptrdiff_t i = 0; i < n; i++)                                                                   \
                for (int v = 0; v < nv; v++) {                                                                  \
                    const char *p = pi + i * s + v * LANES * lsi;                                               \
                    __builtin_prefetch(p + PANEL_AHEAD * s); /* a later step's row (no fault past the end) */  \
                    NAME##_update(NAME##_lanes(p, lsi, sub_nl(nl, v)), (vu){0} + (flat + (uint32_t)i), last,     \
                                  &m[v], &ids[v]);                                                              \
                }                                                                                               \
        });                                                                                                     \
    }                                                                                                           \
    __attribute__((unused)) static void NAME##_argmax_c(const char *in, char *out, const rdims *R, const rctx *c) {\
        store_index(out, c->out_dtype, NAME##_argmax_contig(in, R, c->last));                                   \
    }                                                                                                           \
    __attribute__((unused)) static void NAME##_argmax_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso,       \
                                                        ptrdiff_t count, const rdims *R, const rctx *c) {              \
        if (!far_blocks(R, gsi, count, c)) {                                                                           \
            RUN_LOOP(NAME##_argmax);                                                                                   \
            return;                                                                                                    \
        }                                                                                                              \
        NAME##_amax stack[GROUP_BLOCK];                                                                                \
        ptrdiff_t per;                                                                                                 \
        NAME##_amax *t = far_states(c, stack, &per);                                                                   \
        uint32_t at[FAR_GROUPS];                                                                                       \
        FOR_BLOCKS(count, g0, gb, per) {                                                                            \
            NAME##_argmax_block(in + g0 * gsi, gsi, (int)gb, R, c->last, t, at);                                       \
            for (int g = 0; g < gb; g++) store_index(out + (g0 + g) * gso, c->out_dtype, at[g]);                       \
        }                                                                                                              \
    }                                                                                                                  \
    static void NAME##_argmax_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R, \
                                const rctx *c) {                                                                \
        vu ids[PANEL_MAX];                                                                                      \
        NAME##_argmax_panel(in, lsi, nl, R, c->last, ids);                                                      \
        for (int l = 0; l < nl; l++) store_index(out + l * lso, c->out_dtype, ids[l / LANES][l % LANES]);       \
    }

#define SAME(t) (t)
ARGMAX_T(f32, float, float, F, LOAD_MEM, SAME)
ARGMAX_T(f16, uint16_t, float, F, LOAD_F16, f16_to_f32)
ARGMAX_T(i8, int8_t, int8_t, I, LOAD_MEM, SAME)
ARGMAX_T(i16, int16_t, int16_t, I, LOAD_MEM, SAME)
ARGMAX_T(i32, int32_t, int32_t, I, LOAD_MEM, SAME)
ARGMAX_T(i64, int64_t, int64_t, I, LOAD_MEM, SAME)
ARGMAX_T(u8, uint8_t, uint8_t, I, LOAD_MEM, SAME)
ARGMAX_T(u16, uint16_t, uint16_t, I, LOAD_MEM, SAME)
ARGMAX_T(u32, uint32_t, uint32_t, I, LOAD_MEM, SAME)
ARGMAX_T(u64, uint64_t, uint64_t, I, LOAD_MEM, SAME)

/* max with NaN winning */
ALWAYS vf maxnan(vf m, vf x) { return selectf(cmp_gt(x, m) | is_nan(x), x, m); }

/* ---- float ARGMAX/ARGMIN over one contiguous run (the usual last-axis case): two light passes instead of one
 * index-tracking pass. Pass 1 (group_max_min) finds the best value (NaN above every number); pass 2 returns the
 * first (or, for DECREASING, the last) element tied with it, scanning from that end and stopping at the hit.
 * The run is re-read from L1. Same result as the one-pass form: the first/last best, or the first/last NaN. ---- */
ALWAYS unsigned lane_mask(vi m) { /* bit l set where lane l of m is true */
#if defined(__AVX512F__)
    return _mm512_cmpneq_epi32_mask((__m512i)m, _mm512_setzero_si512());
#elif defined(__AVX2__) /* (LANES 8) */
    __m256 r;
    memcpy(&r, &m, 32);
    return (unsigned)_mm256_movemask_ps(r);
#else
    unsigned b = 0;
    for (int l = 0; l < LANES; l++) b |= (unsigned)(m[l] != 0) << l;
    return b;
#endif
}

ALWAYS float get_f(const char *p, ptrdiff_t i, int f16) {
    if (f16) { uint16_t h; memcpy(&h, p + 2 * i, 2); return f16_to_f32(h); }
    float f;
    memcpy(&f, p + 4 * i, 4);
    return f;
}

ALWAYS vf load_run(const char *p, ptrdiff_t i, int f16) { return f16 ? load_f16(p + 2 * i) : loadf(p + 4 * i); }

#if defined(__clang__)
#define ROTATE(v, ...) __builtin_shufflevector(v, v, __VA_ARGS__)
#else
#define ROTATE(v, ...) __builtin_shuffle(v, (vi){__VA_ARGS__})
#endif
/* v = OP(v, v rotated by half, a quarter, ... one lane): every lane ends with OP over all lanes. */
#if LANES == 16
#define HALVING_STEPS(v, OP)                                                                                    \
    (v = OP(v, ROTATE(v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)),                                \
     v = OP(v, ROTATE(v, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3)),                                \
     v = OP(v, ROTATE(v, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1)),                                \
     v = OP(v, ROTATE(v, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0)))
#elif LANES == 8
#define HALVING_STEPS(v, OP)                                                                                    \
    (v = OP(v, ROTATE(v, 4, 5, 6, 7, 0, 1, 2, 3)), v = OP(v, ROTATE(v, 2, 3, 4, 5, 6, 7, 0, 1)),                \
     v = OP(v, ROTATE(v, 1, 2, 3, 4, 5, 6, 7, 0)))
#else
#define HALVING_STEPS(v, OP) (v = OP(v, ROTATE(v, 2, 3, 0, 1)), v = OP(v, ROTATE(v, 1, 2, 3, 0)))
#endif
/* The first (or, for ODML_LAST, the last) element of the run equal to bm, its best value (NaN: the first NaN).
 * Tests go in chunks of TIE_CHUNK, each chunk tested whole and its first hit picked from the tests' masks: an exit
 * per test mispredicts once a row and flushes the next row's loads (ARGMAX float16 rows of 512: the second pass
 * 20 -> 13 ns a row). */
#define TIE_CHUNK 8
/* Returns from the enclosing function the position of the first (RETURN_FIRST_TIE) or last (RETURN_LAST_TIE) tie
 * in [0, end), end a multiple of STEP, TEST(j) being the STEP-bit mask of the ties from element j on; falls
 * through when there is none. */
#define RETURN_FIRST_TIE(TEST, STEP, end)                                                                       \
    for (ptrdiff_t c_ = 0; c_ < (end); c_ += TIE_CHUNK * (STEP)) {                                              \
        uint64_t bs_[TIE_CHUNK];                                                                                \
        unsigned hit_ = 0;                                                                                      \
        for (int k_ = 0; k_ < TIE_CHUNK && c_ + (STEP) * k_ < (end); k_++)                                      \
            bs_[k_] = TEST(c_ + (STEP) * k_), hit_ |= (unsigned)(bs_[k_] != 0) << k_;                           \
        if (hit_) {                                                                                             \
            int k_ = __builtin_ctz(hit_);                                                                       \
            return (uint32_t)(c_ + (STEP) * k_ + __builtin_ctzll(bs_[k_]));                                     \
        }                                                                                                       \
    }
#define RETURN_LAST_TIE(TEST, STEP, end)                                                                        \
    for (ptrdiff_t c_ = (end); c_ > 0; c_ -= TIE_CHUNK * (STEP)) {                                              \
        uint64_t bs_[TIE_CHUNK];                                                                                \
        unsigned hit_ = 0;                                                                                      \
        for (int k_ = 0; k_ < TIE_CHUNK && c_ - (STEP) * (k_ + 1) >= 0; k_++)                                   \
            bs_[k_] = TEST(c_ - (STEP) * (k_ + 1)), hit_ |= (unsigned)(bs_[k_] != 0) << k_;                     \
        if (hit_) {                                                                                             \
            int k_ = __builtin_ctz(hit_);                                                                       \
            return (uint32_t)(c_ - (STEP) * (k_ + 1) + 63 - __builtin_clzll(bs_[k_]));                          \
        }                                                                                                       \
    }
#if defined(__AVX512F__)
/* A float16 row's position by the halves' bits, 64 a test and no conversions: a NaN best value matches any NaN,
 * another its own bits (a zero best value takes the float compare instead: -0.0 == 0.0). */
ALWAYS uint64_t ties16(const char *p, __mmask32 m0, __mmask32 m1, uint16_t hb, int nan) {
    __m512i a = _mm512_maskz_loadu_epi16(m0, p), b = _mm512_maskz_loadu_epi16(m1, p + 64);
    __m512i abs = _mm512_set1_epi16(0x7fff), inf = _mm512_set1_epi16(0x7c00), h = _mm512_set1_epi16((short)hb);
    __mmask32 ta = nan ? _mm512_cmpgt_epu16_mask(_mm512_and_si512(a, abs), inf) : _mm512_cmpeq_epi16_mask(a, h);
    __mmask32 tb = nan ? _mm512_cmpgt_epu16_mask(_mm512_and_si512(b, abs), inf) : _mm512_cmpeq_epi16_mask(b, h);
    return (uint64_t)(ta & m0) | (uint64_t)(tb & m1) << 32;
}

static uint32_t argmax_run_h(const char *p, ptrdiff_t n, int last, float bm) {
    int nan = bm != bm;
    uint16_t hb = f32_to_f16(bm); /* (exact: bm is one of the halves) */
    ptrdiff_t r = n % 64, full = n - r;
    uint64_t valid = (1ull << r) - 1; /* (r < 64) */
    __mmask32 v0 = (__mmask32)valid, v1 = (__mmask32)(valid >> 32), all = 0xffffffffu;
#define TIES64(j) ties16(p + 2 * (j), all, all, hb, nan)
    if (!(last & ODML_LAST)) {
        RETURN_FIRST_TIE(TIES64, 64, full);
        return (uint32_t)(full + __builtin_ctzll(ties16(p + 2 * full, v0, v1, hb, nan) | 1ull << 63));
    }
    uint64_t b = r ? ties16(p + 2 * full, v0, v1, hb, nan) : 0;
    if (b) return (uint32_t)(full + 63 - __builtin_clzll(b));
    RETURN_LAST_TIE(TIES64, 64, full);
#undef TIES64
    return 0; /* not reached: the best value is one of the elements */
}
#endif

ALWAYS vf lanes_f(const char *p, ptrdiff_t s, ptrdiff_t nl, int f16, float pad);
ALWAYS uint32_t argmax_run_f(const char *p, ptrdiff_t n, const int f16, int last, float bm) {
    ptrdiff_t i;
    vf vb = splatf(bm);
    int nan = bm != bm;
#define TIES(x) (nan ? is_nan(x) : cmp_eq(x, vb))
    ptrdiff_t full = n / LANES * LANES;
    if (n < 4 * LANES) { /* a short row in one test (one branch, not a mispredicted exit per vector) */
        uint64_t b = 0;
        for (i = 0; i < full; i += LANES) b |= (uint64_t)lane_mask(TIES(load_run(p, i, f16))) << i;
        if (n > full)
            b |= (uint64_t)(lane_mask(TIES(lanes_f(p + full * (f16 ? 2 : 4), f16 ? 2 : 4, n - full, f16, 0))) &
                            ((1u << (n - full)) - 1)) << full;
        b |= (uint64_t)!b; /* (not reached: the best value is one of the elements) */
        return (uint32_t)(last & ODML_LAST ? 63 - __builtin_clzll(b) : __builtin_ctzll(b));
    }
#if defined(__AVX512F__)
    if (f16 && bm != 0.0f) return argmax_run_h(p, n, last, bm);
#endif
    ptrdiff_t blocks = full / (4 * LANES) * (4 * LANES); /* tests of four vectors (one 4*LANES-bit mask) */
#define TEST4(j) /* (the 4*LANES ties from element j) */                                                         \
    (lane_mask(TIES(load_run(p, j, f16))) | (uint64_t)lane_mask(TIES(load_run(p, j + LANES, f16))) << LANES |     \
     (uint64_t)lane_mask(TIES(load_run(p, j + 2 * LANES, f16))) << 2 * LANES |                                   \
     (uint64_t)lane_mask(TIES(load_run(p, j + 3 * LANES, f16))) << 3 * LANES)
    if (!(last & ODML_LAST)) {
        RETURN_FIRST_TIE(TEST4, 4 * LANES, blocks);
        for (i = blocks; i < full; i += LANES) {
            unsigned b = lane_mask(TIES(load_run(p, i, f16)));
            if (b) return (uint32_t)(i + __builtin_ctz(b));
        }
        for (; i < n; i++) {
            float x = get_f(p, i, f16);
            if (nan ? x != x : x == bm) break;
        }
        return (uint32_t)i;
    }
    for (i = n - 1; i >= full; i--) {
        float x = get_f(p, i, f16);
        if (nan ? x != x : x == bm) return (uint32_t)i;
    }
    for (i = full - LANES; i >= blocks; i -= LANES) {
        unsigned b = lane_mask(TIES(load_run(p, i, f16)));
        if (b) return (uint32_t)(i + 31 - __builtin_clz(b));
    }
    RETURN_LAST_TIE(TEST4, 4 * LANES, blocks);
#undef TEST4
#undef TIES
    return 0; /* not reached: the best value is one of the elements */
}

/* The first/last maximum of a float group: one contiguous run takes the two-pass form (maxima only; ARGMIN's
   flag takes the general form). */
static void group_max_min(const char *in, const rdims *R, int f16, float *max, float *min);
ALWAYS void group_scan(const char *in, const rdims *R, int f16, const int lo, float *max, float *min);

static uint32_t argmax_f(const char *in, const rdims *R, int f16, int last) {
    if (R->nd == 1 && R->si[0] == (f16 ? 2 : 4)) { /* the best value by the max-min scan, then its position */
        float top, low;
        if (last & ODML_MIN) group_max_min(in, R, f16, &top, &low);
        else group_scan(in, R, f16, 0, &top, &low); /* (maxima only) */
        float best = top == top && (last & ODML_MIN) ? low : top; /* (a NaN wins either way) */
        return f16 ? argmax_run_f(in, R->n[0], 1, last, best) : argmax_run_f(in, R->n[0], 0, last, best);
    }
    return f16 ? f16_argmax_contig(in, R, last) : f32_argmax_contig(in, R, last);
}

static void argmax_f_c(const char *in, char *out, const rdims *R, const rctx *c) {
    store_index(out, c->out_dtype, argmax_f(in, R, c->in_dtype == ODML_F16, c->last));
}
static void argmax_f_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                       const rctx *c) {
    if (far_blocks(R, gsi, count, c))
        (c->in_dtype == ODML_F16 ? f16_argmax_r : f32_argmax_r)(in, gsi, out, gso, count, R, c);
    else RUN_LOOP_AHEAD(argmax_f);
}

/* ---- float lanes for HARDMAX and LOG_SOFTMAX (f32 or f16 storage, f32 compute) ---- */
ALWAYS vf lanes_f(const char *p, ptrdiff_t s, ptrdiff_t nl, int f16, float pad) {
    /* (expected: GCC then keeps the callers' contiguous loops as they were before the gathers below) */
    if (__builtin_expect(nl == LANES && s == (f16 ? 2 : 4), 1)) return f16 ? load_f16(p) : loadf(p);
    vi g;
    if (!f16 && gather32(p, s, nl, (vi)splatf(pad), &g)) return (vf)g;
    vf v = splatf(pad);
    if (f16 && gather16f(p, s, nl, v, &v)) return v;
    if (f16)
        for (ptrdiff_t l = 0; l < nl; l++) { uint16_t h; memcpy(&h, p + l * s, 2); v[l] = f16_to_f32(h); }
    else
        for (ptrdiff_t l = 0; l < nl; l++) { float f; memcpy(&f, p + l * s, 4); v[l] = f; }
    return v;
}

ALWAYS void put_lanes_f(char *p, ptrdiff_t s, ptrdiff_t nl, int f16, vf v) {
    if (nl == LANES && s == (f16 ? 2 : 4)) {
        if (f16) store_f16(p, v); else storef(p, v);
    } else if (!f16 && put32(p, s, nl, (vi)v)) {
    } else if (f16) {
        uint16_t h[LANES];
        store_f16(h, v);
        for (ptrdiff_t l = 0; l < nl; l++) memcpy(p + l * s, &h[l], 2);
    } else {
        for (ptrdiff_t l = 0; l < nl; l++) { float f = v[l]; memcpy(p + l * s, &f, 4); }
    }
}

/* A contiguous output run of n entries at po (floats; halves with f16) stored with streaming stores over its whole
 * 64-byte lines, its head and tail plainly; V: the vector of its entries from i on (lanes past the run are not
 * stored). A line must not be streamed in part: with a plain store beside it (the tail, the next run's head) the
 * line was written out in pieces (float16 far blocks of SOFTMAX1 and LOG_SOFTMAX1, outputs 32 or 48 bytes past a
 * line, (16, 64, 512) over (0, 2), one thread, Intel: 0.83 -> 0.22 ms; at 0 bytes past 0.20). For outputs large
 * enough (STREAM_MIN) to be written back to memory anyway: the stores bypass the caches, so the lines are not read
 * first. Every caller fences (stream_fence) before it returns. */
/* (Short rows do not stream: float32 rows of 512, (64, 512, 512), Intel, one thread, went 8.3 -> 12.8 ms with it;
 * float16 rows gained nothing for LOG_SOFTMAX1 and 6% for SOFTMAX1, and only where one call holds 1 MiB of them.
 * Long rows do: LONG_ROW.) */
#define STREAM_RUN(po, n, f16, i, V)                                                                            \
    do {                                                                                                        \
        ptrdiff_t z_ = (f16) ? 2 : 4, line_ = 64 / z_, head_ = (ptrdiff_t)(-(uintptr_t)(po) & 63) / z_, end_, i; \
        if ((uintptr_t)(po) % z_ || (n) < head_) head_ = end_ = (n); /* (no line boundary on an entry) */       \
        else end_ = head_ + ((n) - head_) / line_ * line_;           /* (the whole lines) */                    \
        for (i = 0; i < head_; i += LANES)                                                                      \
            put_lanes_f((po) + i * z_, z_, head_ - i < LANES ? head_ - i : LANES, f16, V);                      \
        for (i = head_; i < end_; i += LANES) {                                                                 \
            if (f16) stream_f16((po) + i * z_, V);                                                              \
            else stream_f32((po) + i * z_, V);                                                                  \
        }                                                                                                       \
        for (i = end_; i < (n); i += LANES) put_lanes_f((po) + i * z_, z_, (n) - i < LANES ? (n) - i : LANES, f16, V); \
    } while (0)

/* STREAM_RUN's plainly stored lines of a run of `bytes` bytes at po (its partial first and last), fetched for
 * writing: a plain store to a line not in the cache holds the stores behind it, streamed ones too, until that
 * line is read from memory. Runs streamed one after another fetch the next run's a run ahead (SOFTMAX1 float16
 * over (0, 2) of (64, 512, 512), one thread, caches flushed, into NumPy's output, 16 bytes past a line: 9.2 ->
 * 7.6 ms, 1.23 -> 1.06 times the same into an output at a line). */
ALWAYS void fetch_plain_lines(uintptr_t po, ptrdiff_t bytes) { /* (an address: the last run's next lies past) */
    if (po % 64) __builtin_prefetch((const void *)po, 1);
    if ((po + (uintptr_t)bytes) % 64) __builtin_prefetch((const void *)(po + (uintptr_t)bytes - 1), 1);
}

/* A packed float32 output row of n elements at po, V the vector of outputs from element i (an expression of the
 * macro's i), stored from a vector's alignment on: NumPy's large arrays start 16 bytes past a page, and a row
 * stored from there splits every (AVX-512) vector store across two cache lines. The first and last vectors are
 * stored whole where they overlap the aligned ones (the same values twice: masked stores measured slower). */
#define ROW_STORE_F32(po, n, i, V)                                                                              \
    do {                                                                                                        \
        ptrdiff_t i = 0;                                                                                        \
        if ((n) < LANES || (uintptr_t)(po) % 4) {                                                               \
            for (; i < (n); i += LANES) put_lanes_f((po) + i * 4, 4, (n) - i < LANES ? (n) - i : LANES, 0, V);  \
            break;                                                                                              \
        }                                                                                                       \
        storef(po, V);                                                                                          \
        for (i = (ptrdiff_t)(-(uintptr_t)(po) % (LANES * 4)) / 4; i + LANES <= (n); i += LANES)                 \
            storef((po) + i * 4, V);                                                                            \
        if (i < (n)) {                                                                                          \
            i = (n) - LANES;                                                                                    \
            storef((po) + i * 4, V);                                                                            \
        }                                                                                                       \
    } while (0)

/* ---- HARDMAX: the first maximum's index (ARGMAX INCREASING), then 1 there and 0 elsewhere ---- */
/* nb zero bytes at p by vector stores (glibc's memset takes `rep stosb` from 2 KiB on, which here stalled on its
 * lines: HARDMAX1 float32 rows of 512, 4.8 -> 3.6 ms). */
ALWAYS void zero_bytes(char *p, ptrdiff_t nb) {
    ptrdiff_t b = 0;
    for (; b + LANES * 4 <= nb; b += LANES * 4) storef(p + b, splatf(0));
    memset(p + b, 0, (size_t)(nb - b));
}

/* A contiguous output run of n elements: zeros, and the one at `at` (when at < n). A run of LONG_ROW elements or
 * more (a group over (1, 2) of (64, 512, 512)) is streamed, the one among its zeros, where plain stores read each
 * line before writing it (one thread, caches flushed, interleaved: HARDMAX1 float32 18.6 -> 12.5 ms, float16 7.6 ->
 * 5.6). */
ALWAYS void hardmax_run(char *po, ptrdiff_t n, int f16, uint32_t at) {
    if (n >= LONG_ROW) {
        vu one = (vu){0} + at;
        STREAM_RUN(po, n, f16, i, selectf((vi)(IOTA + (uint32_t)i) == (vi)one, splatf(1.0f), splatf(0.0f)));
        stream_fence();
        return;
    }
    zero_bytes(po, n * (f16 ? 2 : 4));
    if (at < (uint64_t)n) {
        if (f16) memcpy(po + (ptrdiff_t)at * 2, &(uint16_t){0x3c00}, 2);
        else memcpy(po + (ptrdiff_t)at * 4, &(float){1.0f}, 4);
    }
}

/* One output run of a HARDMAX group (its first element is the group's element `flat`): 1 at `at`, else 0. */
ALWAYS void hardmax_fill(char *po, uint32_t flat, const rdims *R, int f16, uint32_t at) {
    ptrdiff_t n = R->n[R->nd - 1], s = R->so[R->nd - 1];
    if (s == (f16 ? 2 : 4)) { /* (at - flat wraps past n where the one lies before this run) */
        hardmax_run(po, n, f16, at - flat);
        return;
    }
    for (ptrdiff_t i = 0; i < n; i += LANES) {
        vi hot = IOTA + (flat + (uint32_t)i) == (vu){0} + at;
        put_lanes_f(po + i * s, s, n - i < LANES ? n - i : LANES, f16, selectf(hot, splatf(1), splatf(0)));
    }
}


static void hardmax_c(const char *in, char *out, const rdims *R, const rctx *c) {
    int f16 = c->in_dtype == ODML_F16;
    uint32_t at = argmax_f(in, R, f16, 0);
    FOR_RUNS(R, out, out, pi, po, flat, {
        (void)pi;
        hardmax_fill(po, flat, R, f16, at);
    });
}

/* Far runs of adjacent groups (see GROUP_BLOCK): the indices, then the outputs, run by run, each group's output
 * run fetched for writing FILL_AHEAD groups before it is written (HARDMAX1 float16 over (0, 2) of (64, 512, 512),
 * on NumPy's arrays: 2.7 -> 2.3 ms; the store stream alone did not keep its lines coming). */
#define FILL_AHEAD 4
static void hardmax_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                      const rctx *c) {
    int f16 = c->in_dtype == ODML_F16;
    if (!far_blocks(R, gsi, count, c) || R->so[R->nd - 1] != c->osize || gso != R->n[R->nd - 1] * c->osize) {
        RUN_LOOP_AHEAD(hardmax);
        return;
    }
    _Static_assert(sizeof(f16_amax) == sizeof(f32_amax) && _Alignof(f16_amax) == _Alignof(f32_amax), "one stack");
    f32_amax stack[GROUP_BLOCK]; /* (either type's states) */
    ptrdiff_t per;
    void *t = far_states(c, stack, &per);
    uint32_t at[FAR_GROUPS];
    FOR_BLOCKS(count, g0, gb, per) {
        if (f16) f16_argmax_block(in + g0 * gsi, gsi, (int)gb, R, 0, t, at);
        else f32_argmax_block(in + g0 * gsi, gsi, (int)gb, R, 0, t, at);
        FOR_RUNS(R, out + g0 * gso, out + g0 * gso, pi, po, flat, {
            (void)pi;
            for (int g = 0; g < gb; g++) {
                if (g0 + g + FILL_AHEAD < count) /* (within the output; past the block: the next one's lines) */
                    for (ptrdiff_t b = 0; b < gso; b += 64) __builtin_prefetch(po + (g + FILL_AHEAD) * gso + b, 1);
                hardmax_fill(po + g * gso, flat, R, f16, at[g]);
            }
        });
    }
}

static void hardmax_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R,
                      const rctx *c) {
    int f16 = c->in_dtype == ODML_F16;
    vu at = f16 ? f16_argmax_strip(in, lsi, nl, R, 0) : f32_argmax_strip(in, lsi, nl, R, 0);
    FOR_RUNS(R, out, out, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->so[R->nd - 1];
        (void)pi;
        for (ptrdiff_t i = 0; i < n; i++) {
            STRIP_FETCH_W(po + i * s, lso);
            put_lanes_f(po + i * s, lso, nl, f16, selectf(at == (vu){0} + (flat + (uint32_t)i), splatf(1), splatf(0)));
        }
    });
}

/* ---- LOG_SOFTMAX: out = x - max - log(sum(exp(x - max))), with log(sum) = log(count of maxima) +
 * log1p(rest / count) in double so that a dominated group's maxima keep their tiny negative value. exp runs in
 * float32 on x - max split exactly (two_diff) into t + err, as exp(t) * (1 + err); the sums are in double; the
 * output x - max - L is formed as ls_out_run says.
 * A group whose max is not finite (a NaN, a +inf, only -inf) is all NaN. ---- */
ALWAYS vd widen(vf v) { return __builtin_convertvector(v, vd); }
ALWAYS vf narrow(vd v) { return __builtin_convertvector(v, vf); }

/* Halves of a vector widened to doubles (each one register: a vector of LANES doubles is two, which GCC keeps
 * in memory, putting a store and a load into every step that uses one). */
typedef double vdh __attribute__((vector_size(LANES / 2 * sizeof(double))));
typedef float vfh __attribute__((vector_size(LANES / 2 * sizeof(float))));
typedef int32_t vih __attribute__((vector_size(LANES / 2 * sizeof(int32_t))));
#if LANES == 16
#define LO_HALF 0, 1, 2, 3, 4, 5, 6, 7
#define HI_HALF 8, 9, 10, 11, 12, 13, 14, 15
#elif LANES == 8
#define LO_HALF 0, 1, 2, 3
#define HI_HALF 4, 5, 6, 7
#else
#define LO_HALF 0, 1
#define HI_HALF 2, 3
#endif
#if defined(__AVX512F__) /* (GCC splits the generic conversions into 128-bit pieces) */
ALWAYS vdh widen_lo(vf v) { return (vdh)_mm512_cvtps_pd(_mm512_castps512_ps256((__m512)v)); }
ALWAYS vdh widen_hi(vf v) {
    return (vdh)_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd((__m512)v), 1)));
}
ALWAYS vf narrow2(vdh lo, vdh hi) {
    __m256 a = _mm512_cvtpd_ps((__m512d)lo), b = _mm512_cvtpd_ps((__m512d)hi);
    return (vf)_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(a)), _mm256_castps_pd(b), 1);
}
#else
ALWAYS vdh widen_lo(vf v) { return __builtin_convertvector(__builtin_shufflevector(v, v, LO_HALF), vdh); }
ALWAYS vdh widen_hi(vf v) { return __builtin_convertvector(__builtin_shufflevector(v, v, HI_HALF), vdh); }
ALWAYS vf narrow2(vdh lo, vdh hi) {
    vfh a = __builtin_convertvector(lo, vfh), b = __builtin_convertvector(hi, vfh);
    return __builtin_shufflevector(a, b, LO_HALF, HI_HALF);
}
#endif
/* The LANES / 2 packed floats at p widened to doubles, loaded by the conversion itself: widen_lo of the vector at
 * p, and widen_hi of the vector at p - LANES / 2 floats, without widen_hi's extraction step. */
ALWAYS vdh widen_at(const char *p) {
#if defined(__AVX512F__)
    return (vdh)_mm512_cvtps_pd(_mm256_loadu_ps((const float *)p));
#elif defined(__AVX2__)
    return (vdh)_mm256_cvtps_pd(_mm_loadu_ps((const float *)p));
#else
    vfh h;
    memcpy(&h, p, sizeof h);
    return __builtin_convertvector(h, vdh);
#endif
}
ALWAYS double hsum_dh(vdh a) { /* (a fixed order: the same bits on every call) */
#if LANES == 16
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
#elif LANES == 8
    return (a[0] + a[2]) + (a[1] + a[3]);
#else
    return a[0] + a[1];
#endif
}
ALWAYS vf scaled_d(vf x, double c) { return narrow2(widen_lo(x) * c, widen_hi(x) * c); } /* x * c, one rounding */
/* A vector's lanes of double sums as two registers (a struct of two vdh: scalar replacement keeps it there). */
typedef struct {
    vdh lo, hi;
} dsum;
ALWAYS void dsum_add(dsum *s, vf x) { s->lo += widen_lo(x), s->hi += widen_hi(x); }
ALWAYS double dsum_lane(const dsum *s, int l) { return l < LANES / 2 ? s->lo[l] : s->hi[l - LANES / 2]; }
ALWAYS double dsum_total(const dsum *s) { return hsum_dh(s->lo + s->hi); }
ALWAYS vf dsum_scale(vf x, const dsum *s) { return narrow2(widen_lo(x) * s->lo, widen_hi(x) * s->hi); }
ALWAYS vf shifted_d(vf x, double a, double b) {                                            /* x - a - b, one rounding */
    return narrow2((widen_lo(x) - a) - b, (widen_hi(x) - a) - b);
}

/* One vector of sum terms: count the maxima (x == m), add exp(x - m) of the others into a double sum (hi, the part
 * exact in float) and a float one (lo, the small corrections): x - m = t + err exactly (two_diff), exp(t + err) = eh
 * + el (exp_split), good to about 3e-9 (AVX-512; 2e-8 elsewhere) where a float exp would give 1e-7. Terms below
 * e^-87 (float32's normal range) are zero here and flag the group, which is then summed again with `slow` set,
 * taking them in double from libm as the float64 reference does: they decide whether a dominated maximum gives a
 * subnormal, -0.0 or 0.0. */
/* x - m = t + err exactly, for x <= m (every caller's m is its group's maximum, or padding equal to it); a NaN x
 * gives a NaN t. (A NaN m, a strip's lane whose group holds a NaN, gives a finite t: callers discard such lanes.) */
ALWAYS vf two_diff(vf x, vf m, vf *err) {
#if defined(__SSE2__) || defined(__AVX512F__)
    /* Fast2Sum, the larger magnitude first: for x <= m that is min(-m, x) (-m where x > -m, else x). Five
     * instructions to TwoSum's six (SOFTMAX1 float32 rows of 64 in cache about 3% faster), the same t and err but
     * for the signs of zeros (t == 0 either way) and an overflowing x - m (err +inf, not NaN: out of range). */
    vf a = vmin(-m, x), b = vmax(-m, x), t = a + b;
    *err = b - (t - a);
#else /* (TwoSum: min and max are no single instruction here) */
    vf t = x - m, bb = t - x;
    *err = (x - (t - bb)) + (-m - bb);
#endif
    return t;
}

ALWAYS void add_terms(vf x, vf m, const int slow, const int plain, vi *flag, vi *cnt, dsum *hi, vf *lo, int *pending) {
    vf err, t = two_diff(x, m, &err);
    vi eq = cmp_eq(t, splatf(0.0f)), tiny = {0}, keep = ~eq;
    if (!plain) { /* the group has terms below e^-87 or -inf entries (else every t is in [-87, 0]) */
        tiny = cmp_lt(t, splatf(-87.0f)) & cmp_gt(t, splatf(-INFINITY));
        keep = ~(eq | tiny | cmp_lt(t, splatf(-100.0f))); /* (t < -100 also drops -inf, whose err is NaN) */
    }
    vf eh, el;
    exp_split(t, err, keep, &eh, &el);
    dsum e = {widen_lo(eh), widen_hi(eh)};
    if (slow)
        for (int k = 0; k < LANES; k++)
            if (tiny[k]) {
                double v = exp((double)x[k] - (double)m[k]);
                if (k < LANES / 2) e.lo[k] = v; else e.hi[k - LANES / 2] = v;
            }
    hi->lo += e.lo, hi->hi += e.hi;
    *lo += el;
    if (++*pending == 16) { /* the float part goes to the double sum every 16 terms: its error stays ~1e-9 */
        dsum_add(hi, *lo);
        *lo = (vf){0};
        *pending = 0;
    }
    *flag |= tiny;
    *cnt -= eq;
}

/* The sum pass of a contiguous-run group; `slow` and `plain` are constants at each call (no call in the fast
 * loop, no range checks where the group's minimum showed they cannot matter). */
/* The running state of a group's sum pass: flags, counts of maxima, the double sum, its float part and padding. */
typedef struct {
    vi flag, cnt;
    dsum sum;
    vf lo;
    int pending;
    int32_t pads;
} sum_state;

/* One run (at pi) of a group into its sum pass. */
ALWAYS void sum_run_c(const char *pi, const rdims *R, int f16, vf vm, const int slow, const int plain, sum_state *st) {
    sum_state u = *st; /* (locals: registers) */
    ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
    for (ptrdiff_t i = 0; i < n; i += LANES) {
        /* A partial vector's padding is -inf (no term), or in the plain case the max itself (counted as one of the
         * maxima, then taken back) since plain terms have no -inf handling. */
        ptrdiff_t k = n - i < LANES ? n - i : LANES;
        if (R->nd == 1) __builtin_prefetch(pi + (i + n) * s); /* the next group, usually adjacent */
        PREFETCH_NEXT_RUN(R, pi + i * s);
        add_terms(lanes_f(pi + i * s, s, k, f16, plain ? vm[0] : -INFINITY), vm, slow, plain, &u.flag, &u.cnt, &u.sum,
                  &u.lo, &u.pending);
        u.pads += (int32_t)(LANES - k);
    }
    *st = u;
}

ALWAYS void sum_finish(sum_state *st, const int plain) {
    if (plain) st->cnt[0] -= st->pads;
    dsum_add(&st->sum, st->lo);
}

ALWAYS void sum_pass_c(const char *in, const rdims *R, int f16, vf vm, const int slow, const int plain, vi *flag,
                       vi *cnt, dsum *sum) {
    sum_state st = {*flag, *cnt, *sum, {0}, 0, 0};
    FOR_RUNS(R, in, NULL, pi, po, flat, sum_run_c(pi, R, f16, vm, slow, plain, &st));
    sum_finish(&st, plain);
    *flag = st.flag, *cnt = st.cnt, *sum = st.sum;
}

/* A strip's lanes at step `at` (pi: the step's address): from the strip's copy `wide` when it has one (see
 * strip_max_min; a step every ws floats), else from memory. */
ALWAYS vf strip_at(const float *wide, ptrdiff_t ws, ptrdiff_t at, const char *pi, ptrdiff_t lsi, int nl, int f16) {
    return wide ? loadf(wide + at * ws) : lanes_f(pi, lsi, nl, f16, 0);
}

ALWAYS void sum_pass_s(const char *in, ptrdiff_t lsi, int nl, const rdims *R, int f16, const float *wide,
                       ptrdiff_t ws, vf m, const int slow, const int plain, vi *flag, vi *cnt, dsum *sum) {
    vf lo = {0};
    int pending = 0;
    FOR_RUNS(R, in, NULL, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i++)
            add_terms(strip_at(wide, ws, flat + i, pi + i * s, lsi, nl, f16), m, slow, plain, flag, cnt, sum, &lo,
                      &pending);
    });
    dsum_add(sum, lo);
}

#define ANY(v) (lane_mask((vi)(v) != 0) != 0) /* (lane_mask reads masks: compare first) */


/* log(1 + r) for r >= 0 in several lanes at once (two rows of LOG_SOFTMAX, or half a strip's lanes; libm's log1p
 * took a third of a 64-element row's time), within 2^-49 relative: u = 1 + r rounded, with its rounding error c
 * (Fast2Sum); u = 2^k * f with f in [sqrt(1/2), sqrt(2)); log f = 2 atanh(s), s = (f - 1) / (f + 1), by its
 * series to s^17 (|s| <= 0.1716: the first term left out is below 2^-50 of the sum; measured against long
 * double on 2e7 values: 2^-49.6); log(1 + r) = k * ln2 + log f + c / u. A tiny r gives r itself. */
typedef double d2 __attribute__((vector_size(16)));
typedef int64_t l2 __attribute__((vector_size(16)));
typedef int64_t vlh __attribute__((vector_size(LANES / 2 * sizeof(int64_t))));
#define LOG1P_POS(NAME, D, L, NL)                                                                               \
    ALWAYS D NAME(D r) {                                                                                        \
        D u = 1.0 + r, c0 = r - (u - 1.0), c1 = 1.0 - (u - r);                                                  \
        L small = r <= 1.0;                                                                                     \
        D c = (D)((small & (L)c0) | (~small & (L)c1));                                                          \
        L k = ((L)u >> 52) - 1023; /* (u >= 1: positive and normal) */                                         \
        D f = (D)(((L)u & 0x000fffffffffffff) | 0x3ff0000000000000), half = f * 0.5;                           \
        L big = f > 1.4142135623730951;                                                                         \
        f = (D)((big & (L)half) | (~big & (L)f)), k -= big; /* (big: -1 where true) */                         \
        D g = f - 1.0, t = 2.0 * g / (2.0 + g), z = t * t * 0.25, z2 = z * z, z4 = z2 * z2; /* (t = 2s, z = s^2) */ \
        D p = ((1.0 / 3 + z * (1.0 / 5)) + z2 * (1.0 / 7 + z * (1.0 / 9))) +                                  \
              z4 * ((1.0 / 11 + z * (1.0 / 13)) + z2 * (1.0 / 15 + z * (1.0 / 17)));                          \
        D y = (__builtin_convertvector(k, D) * 6.93147180559945286227e-01 + c / u) + (t + t * z * p);          \
        for (int l = 0; l < (NL); l++)                                                                          \
            if (!(u[l] < INFINITY)) y[l] = log1p(r[l]); /* (NaN, inf: not met in practice) */                  \
        return y;                                                                                               \
    }
LOG1P_POS(log1p_pos2, d2, l2, 2)
LOG1P_POS(log1p_posh, vdh, vlh, LANES / 2)

/* log(count + rest) = log1p(count - 1 + rest) (count >= 1, exact in double; the usual count is 1), for one
 * group or two. */
static double log_sum(uint64_t count, double rest) { return log1p_pos2((d2){0} + ((double)(count - 1) + rest))[0]; }
ALWAYS d2 log_sum2(uint64_t count0, double rest0, uint64_t count1, double rest1) {
    return log1p_pos2((d2){(double)(count0 - 1) + rest0, (double)(count1 - 1) + rest1});
}

ALWAYS float hmaxf(vf v) { /* every lane ends with the maximum (NaN-free input) */
    HALVING_STEPS(v, vmax);
    return v[0];
}
ALWAYS float hminf(vf v) {
    HALVING_STEPS(v, vmin);
    return v[0];
}

/* The maximum of a float group (NaN if it holds one) and its minimum, read once. The fast scan ORs together
 * the bits of x - x (+0 for a finite x, NaN for a NaN or an infinity): only a group where they are not all zero
 * is scanned again with NaN-aware comparisons. */
/* The fast scan of one run (n elements s bytes apart) into the running states; `far`: runs lie far apart; `lo`:
 * minima too (a constant: REDUCE MAX takes maxima only). */
ALWAYS void scan_run(const char *pi, ptrdiff_t n, ptrdiff_t s, const int f16, const rdims *R, const int far,
                     const int lo, float *wide, ptrdiff_t ahead, vf *mv, vf *mv2, vf *mn, vf *mn2, vi *odd) {
    ptrdiff_t i = 0, e = f16 ? 2 : 4, head = (ptrdiff_t)(-(uintptr_t)pi & (uintptr_t)(LANES * e - 1)) / e;
    if (s == e && n >= 64 * LANES && head && (uintptr_t)pi % (uintptr_t)e == 0) {
        /* a long run loads from the first vector boundary on: a load across two cache lines costs two (NumPy's
         * large arrays start 16 bytes past a page); its first vector is taken whole first (max and min do not
         * mind the entries taken twice). (Short runs: the peel costs more than it saves.) */
        vf a = lanes_f(pi, s, LANES, f16, 0);
        if (wide) storef(wide, a);
        *mv = vmax(a, *mv);
        if (lo) *mn = vmin(a, *mn);
        *odd |= (vi)(a - a);
        i = head;
    }
    for (; i + 2 * LANES <= n; i += 2 * LANES) { /* two chains */
        if (far) {
            PREFETCH_NEXT_RUN(R, pi + i * s);
            if (!f16) PREFETCH_NEXT_RUN(R, pi + (i + LANES) * s);
            if (ahead) { /* the next group's run (see softmax_group) */
                __builtin_prefetch(pi + i * s + ahead);
                if (!f16) __builtin_prefetch(pi + (i + LANES) * s + ahead);
            }
        }
        vf a = lanes_f(pi + i * s, s, LANES, f16, 0), b = lanes_f(pi + (i + LANES) * s, s, LANES, f16, 0);
        if (wide) storef(wide + i, a), storef(wide + i + LANES, b);
        *mv = vmax(a, *mv), *mv2 = vmax(b, *mv2);
        if (lo) *mn = vmin(a, *mn), *mn2 = vmin(b, *mn2);
        *odd |= (vi)(a - a) | (vi)(b - b);
    }
    for (; i < n; i += LANES) {
        ptrdiff_t k = n - i < LANES ? n - i : LANES;
        vf a = lanes_f(pi + i * s, s, k, f16, lanes_f(pi + i * s, s, 1, f16, 0)[0]); /* (padded: its first) */
        if (wide) storef(wide + i, a); /* (past the run: overwritten by the next run, or the row's room) */
        *mv = vmax(a, *mv);
        if (lo) *mn = vmin(a, *mn);
        *odd |= (vi)(a - a);
    }
}

/* The running state of the scan: two chains of maxima and of minima, and the NaN/infinity flag. */
typedef struct {
    vf mv, mv2, mn, mn2;
    vi odd;
} scan_state;
_Static_assert(sizeof(scan_state) <= FAR_STATE && _Alignof(scan_state) <= FAR_ALIGN, "a far block's state");
#define SCAN_START {splatf(-INFINITY), splatf(-INFINITY), splatf(INFINITY), splatf(INFINITY), {0}}

/* (`fetch`, a constant: the next run's lines, and `ahead`'s, are fetched on the way; see FAR_FETCH) */
ALWAYS void scan_far_run(const char *pi, const rdims *R, int f16, float *wide, ptrdiff_t ahead, const int fetch,
                         scan_state *t) {
    scan_state u = *t; /* (locals: registers) */
    scan_run(pi, R->n[R->nd - 1], R->si[R->nd - 1], f16, R, fetch, 1, wide, ahead, &u.mv, &u.mv2, &u.mn, &u.mn2,
             &u.odd);
    *t = u;
}

/* The group's maximum (NaN if it holds one) and minimum (with `lo`, else NaN) from its scan state. */
ALWAYS void scan_finish_of(const char *in, const rdims *R, int f16, const int lo, const scan_state *t, float *max,
                           float *min) {
    float m = hmaxf(vmax(t->mv, t->mv2)), low = lo ? hminf(vmin(t->mn, t->mn2)) : NAN;
    if (ANY(t->odd)) { /* a NaN or an infinity: the NaN-aware scan */
        vf mx = splatf(-INFINITY);
        FOR_RUNS(R, in, NULL, pi, po, flat, {
            ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
            for (ptrdiff_t i = 0; i < n; i += LANES)
                mx = maxnan(mx, lanes_f(pi + i * s, s, n - i < LANES ? n - i : LANES, f16, -INFINITY));
        });
        m = mx[0];
        for (int l = 1; l < LANES; l++) m = (mx[l] > m || mx[l] != mx[l]) ? mx[l] : m;
    }
    *max = m, *min = low;
}

ALWAYS void scan_finish(const char *in, const rdims *R, int f16, const scan_state *t, float *max, float *min) {
    scan_finish_of(in, R, f16, 1, t, max, min);
}

/* With `wide`, the group is also stored there packed as floats, in its flat order (the group's count + LANES of
 * them): later passes then read it from there, contiguous and in cache, whatever the input's layout. `ahead`
 * (bytes, 0: none): where the next group lies, fetched meanwhile when the group's runs lie far apart. */
ALWAYS void group_scan_ahead(const char *in, const rdims *R, int f16, const int lo, float *wide, ptrdiff_t ahead,
                             float *max, float *min) {
    scan_state t = SCAN_START;
    if (R->nd == 1 && R->si[0] == (f16 ? 2 : 4)) { /* one contiguous run: its own loops, f16 a constant */
        if (f16) scan_run(in, R->n[0], 2, 1, R, 0, lo, wide, 0, &t.mv, &t.mv2, &t.mn, &t.mn2, &t.odd);
        else scan_run(in, R->n[0], 4, 0, R, 0, lo, wide, 0, &t.mv, &t.mv2, &t.mn, &t.mn2, &t.odd);
    } else {
        FOR_RUNS(R, in, NULL, pi, po, flat, scan_far_run(pi, R, f16, wide ? wide + flat : NULL, ahead, 1, &t));
    }
    scan_finish_of(in, R, f16, lo, &t, max, min);
}

ALWAYS void group_scan(const char *in, const rdims *R, int f16, const int lo, float *max, float *min) {
    group_scan_ahead(in, R, f16, lo, NULL, 0, max, min);
}

static void group_max_min(const char *in, const rdims *R, int f16, float *max, float *min) {
    group_scan(in, R, f16, 1, max, min);
}

/* The same for a strip of nl groups side by side (lane l: group l; lanes past nl read 0). */
/* With `wide` (a vector a step), the strip is also stored there packed, so that the later passes read it from
 * there: a strip's steps lie a stride apart, often a power of two, so its lines share a few cache sets and would
 * have left the caches by the next pass. */
static void strip_max_min(const char *in, ptrdiff_t lsi, int nl, const rdims *R, int f16, float *wide, vf *max,
                          vf *min) {
    vf m = splatf(-INFINITY), mn = splatf(INFINITY);
    FOR_RUNS(R, in, NULL, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i++) {
            STRIP_FETCH(pi + i * s, lsi);
            vf x = lanes_f(pi + i * s, lsi, nl, f16, 0);
            if (wide) storef(wide + (flat + i) * LANES, x);
            m = maxnan(m, x);
            mn = vmin(x, mn);
        }
    });
    *max = m, *min = mn;
}


/* Whether a panel's output pass fetches the next panel's input rows (the lanes after its own; past the last
 * panel of a row of groups the fetches fall on other data, or none: they never fault): for panels of few steps,
 * whose next rows would otherwise all be met at once (8, 21, 256, 256) over the 21 channels: SOFTMAX1 float32
 * 8.3 -> 7.2 ms); a panel of many steps has its copy fill the cache, the early fetches evicted (float16 over
 * axis 1 of (64, 512, 512) went 6.0 -> 8.7 ms). */
#define PANEL_FETCH_NEXT (256 << 10)
ALWAYS int panel_fetches_next(int nv, ptrdiff_t ws, const rdims *R) {
    double count = 1;
    for (int d = 0; d < R->nd; d++) count *= (double)R->n[d];
    return nv > 1 && count * (double)ws * 4 <= PANEL_FETCH_NEXT;
}

/* The maxima and minima of a panel's nv strips, the panel copied into wide. */
static void panel_max_min(const char *in, ptrdiff_t lsi, int nl, int nv, const rdims *R, int f16, float *wide,
                          ptrdiff_t ws, vf *max, vf *min) {
    for (int v = 0; v < nv; v++) max[v] = splatf(-INFINITY), min[v] = splatf(INFINITY);
    FOR_RUNS(R, in, NULL, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i++) {
            const char *row = pi + i * s;
            float *w = wide + (flat + i) * ws;
            for (int v = 0; v < nv; v++) {
                __builtin_prefetch(row + PANEL_AHEAD * s + v * LANES * lsi); /* a later row (no fault past the end) */
                vf x = lanes_f(row + v * LANES * lsi, lsi, sub_nl(nl, v), f16, 0);
                storef(w + v * LANES, x);
                max[v] = maxnan(max[v], x), min[v] = vmin(x, min[v]);
            }
        }
    });
}

/* The number of elements of a group. */
static double group_count(const rdims *R) {
    double n = 1;
    for (int d = 0; d < R->nd; d++) n *= (double)R->n[d];
    return n;
}

/* Groups of up to SM_KEEP elements keep per-element values in a scratch row between passes, so that a pass
 * carries no dependency from vector to vector (a running sum does) and the input is read once from memory: on
 * the stack up to SM_STACK elements, else on the heap (without memory, the group takes the slower path). */
#define SM_STACK 4096
#define SM_KEEP (1 << 20)

/* A scratch row of count (+ 2 LANES: partial vectors are stored whole, and softmax_row32 may shift its terms by
 * up to a vector) floats: `stack` when it is large enough, else the task's (allocated once per task by red_task),
 * or NULL. */
static float *scratch_row(ptrdiff_t count, float *stack, const rctx *c) {
    return count <= SM_STACK ? stack : c->scratch;
}

/* The sum of the n floats at p, in double (four chains). */

static double sum_kept(const float *p, ptrdiff_t n) {
    vdh a = {0}, b = {0}, c = {0}, d = {0};
    ptrdiff_t i = 0;
    for (; i + 2 * LANES <= n; i += 2 * LANES) {
        vf x = loadf(p + i), y = loadf(p + i + LANES);
        a += widen_lo(x), b += widen_hi(x), c += widen_lo(y), d += widen_hi(y);
    }
    for (; i < n; i += LANES) {
        vf x = lanes_f((const char *)(p + i), 4, n - i < LANES ? n - i : LANES, 0, 0);
        a += widen_lo(x), b += widen_hi(x);
    }
    return hsum_dh((a + b) + (c + d));
}

/* The plain LOG_SOFTMAX sum of a group (max m finite, every entry within 87 of it) into the scratch row kh:
 * the maxima counted, the other terms' main parts kept and summed in double afterwards, their small parts
 * (exp_split's el) summed in float on the way, 16 vectors at a time, then in double. Returns log(sum). */
static double log_sum_kept(const char *in, const rdims *R, int f16, float m, float *kh) {
    vf vm = splatf(m), small = {0};
    vi cnt = {0};
    int32_t pads = 0, pending = 0;
    dsum smalls = {0}; /* (the float part joins it every 16 vectors: its error stays ~1e-9, as add_terms') */
    FOR_RUNS(R, in, NULL, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i += LANES) {
            ptrdiff_t k = n - i < LANES ? n - i : LANES;
            __builtin_prefetch(pi + (i + n) * s); /* the next group, usually adjacent */
            vf err, t = two_diff(lanes_f(pi + i * s, s, k, f16, m), vm, &err), eh, el;
            vi eq = cmp_eq(t, splatf(0.0f)); /* (padding equals the max: counted, then taken back) */
            exp_split(t, err, ~eq, &eh, &el);
            storef(kh + flat + i, eh);
            small += el;
            if (++pending == 16) {
                dsum_add(&smalls, small);
                small = (vf){0}, pending = 0;
            }
            cnt -= eq;
            pads += (int32_t)(LANES - k);
        }
    });
    dsum_add(&smalls, small);
    double rest = sum_kept(kh, (ptrdiff_t)group_count(R)) + dsum_total(&smalls);
    return log_sum((uint64_t)(hsum_i(cnt) - pads), rest);
}

/* ---- Rows: a group that is one contiguous run of input and of output (a packed tensor's last axis, the usual
 * case) takes straight loops, for groups whose entries all lie within 87 of a finite maximum. The max-min pass
 * there has no NaN check: a NaN shows as a NaN sum, and the general kernel then does the group again (its
 * output is never its input: these operators do not run in place). ---- */
ALWAYS vf row_at(const char *p, ptrdiff_t i, ptrdiff_t n, int f16, float pad) {
    return lanes_f(p + i * (f16 ? 2 : 4), f16 ? 2 : 4, n - i < LANES ? n - i : LANES, f16, pad);
}

/* row_range's maxima and minima lane by lane (minima when `lo`, a constant), before the horizontal step. */
ALWAYS void row_range_v(const char *in, ptrdiff_t n, int f16, float *wide, const int lo, vf *top, vf *low) {
    vf a = splatf(-INFINITY), b = a, c = splatf(INFINITY), d = c;
    ptrdiff_t i = 0;
    for (; i + 2 * LANES <= n; i += 2 * LANES) { /* (vmax(x, a) is a when x is NaN) */
        vf x = row_at(in, i, n, f16, 0), y = row_at(in, i + LANES, n, f16, 0);
        if (wide) storef(wide + i, x), storef(wide + i + LANES, y);
        a = vmax(x, a), b = vmax(y, b);
        if (lo) c = vmin(x, c), d = vmin(y, d);
    }
    for (; i < n; i += LANES) {
        vf x = row_at(in, i, n, f16, row_at(in, 0, 1, f16, 0)[0]); /* (padded with the first entry) */
        if (wide) storef(wide + i, x);
        a = vmax(x, a);
        if (lo) c = vmin(x, c);
    }
    *top = vmax(a, b), *low = vmin(c, d);
}

/* The row's maximum and minimum (NaN entries skipped); 0 unless they are finite and within 87 of each other.
 * With `wide` (float16 rows), the row is also stored there as floats (n + LANES of them), so that the later
 * passes read it without converting again (a conversion takes a cycle a vector, a pass about five). */
ALWAYS int row_range(const char *in, ptrdiff_t n, int f16, float *wide, float *top, float *low) {
    vf a, c;
    row_range_v(in, n, f16, wide, low != NULL, &a, &c);
    *top = hmaxf(a);
    if (!low) return isfinite(*top);
    *low = hminf(c);
    return *top - *low <= 87.0f; /* (false for infinities) */
}

static int64_t hsum_i64(vi v) {
    int64_t t = 0;
    for (int l = 0; l < LANES; l++) t += v[l];
    return t;
}

/* Float16 rows need far less: their bound is 1 ulp of float16 (2^-11), so plain float32 does, with room to
 * spare. A term exp(x - m) in float32 (x - m rounded: relative error below 87 * 2^-24 = 2^-17.5 through exp,
 * whose own, exp_f16_term's, is below 2^-17), summed in float for 16 vectors at a time (error below 2^-20 of the
 * sum) and then in double; LOG_SOFTMAX's maxima are counted apart (their terms are exactly 1), so that log1p of
 * the rest keeps its relative accuracy when the maximum dominates. Every error is below 2^-16 relative, far
 * inside the half ulp of float16 left beside the output's own rounding (measured worst: 0.515 ulp). */
typedef struct {
    dsum d;
    vf f;
    int n;
} fdsum;
ALWAYS void fdsum_add(fdsum *s, vf x) {
    s->f += x;
    if (++s->n == 16) {
        dsum_add(&s->d, s->f);
        s->f = (vf){0}, s->n = 0;
    }
}
ALWAYS double fdsum_total(fdsum *s) {
    dsum_add(&s->d, s->f);
    return dsum_total(&s->d);
}

/* The sum of exp(x - m) over the entries x < m of a float16 group whose entries lie within 87 of its finite
 * maximum m (see fdsum; NaN if the group holds a NaN), and the count of its maxima. `row`: the group is one
 * packed run (a constant at each call). */
typedef struct {
    vi cnt;
    fdsum sum;
    int64_t pads;
} rest16_state;

ALWAYS void rest16_add(vf x, vf m, rest16_state *u) {
    vf t = x - m;
    vi eq = cmp_eq(t, splatf(0.0f));
    fdsum_add(&u->sum, (vf)((vi)exp_f16_term(t) & ~eq));
    u->cnt -= eq;
}

ALWAYS void rest16_run(const char *pi, const rdims *R, float top, const int row, const int ahead,
                       rest16_state *st) {
    rest16_state u = *st; /* (locals: registers) */
    vf m = splatf(top);
    ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
    for (ptrdiff_t i = 0; i < n; i += LANES) { /* (padding equals the max: counted, then taken back) */
        if (R->nd == 1) __builtin_prefetch(pi + (i + ahead * n) * s); /* a later group, usually adjacent */
        PREFETCH_NEXT_RUN(R, pi + i * s);
        rest16_add(row ? row_at(pi, i, n, 1, top) : lanes_f(pi + i * s, s, n - i < LANES ? n - i : LANES, 1, top), m,
                   &u);
    }
    u.pads += (n + LANES - 1) / LANES * LANES - n;
    *st = u;
}

ALWAYS double rest16_finish(rest16_state *st, uint64_t *count) {
    *count = (uint64_t)(hsum_i64(st->cnt) - st->pads);
    return fdsum_total(&st->sum);
}

ALWAYS double rest16(const char *in, const rdims *R, float top, const int row, const int ahead, uint64_t *count) {
    rest16_state st = {{0}, {{{0}, {0}}, {0}, 0}, 0};
    FOR_RUNS(R, in, NULL, pi, po, flat, rest16_run(pi, R, top, row, ahead, &st));
    return rest16_finish(&st, count);
}

/* rest16 of a float16 row of n entries at `in` that row_range widened into `wide` (the row `ahead` rows on
 * fetched meanwhile, and its output lines at `out` unless NULL). */
ALWAYS double rest16_wide(const float *wide, const char *in, ptrdiff_t n, float top, const int ahead, char *out,
                          uint64_t *count) {
    rest16_state st = {{0}, {{{0}, {0}}, {0}, 0}, 0};
    vf m = splatf(top);
    for (ptrdiff_t i = 0; i < n; i += LANES) { /* (padding equals the max: counted, then taken back) */
        if (ahead) __builtin_prefetch(in + (i + ahead * n) * 2);
        if (out && i % (2 * LANES) == 0) __builtin_prefetch(out + i * 2, 1); /* (see softmax_terms_kept) */
        rest16_add(i + LANES <= n ? loadf(wide + i) : selectf(IOTA < (vu){0} + (uint32_t)(n - i), loadf(wide + i), m),
                   m, &st);
    }
    st.pads = (n + LANES - 1) / LANES * LANES - n;
    return rest16_finish(&st, count);
}

/* A float16 LOG_SOFTMAX's L >= 0 as the float subtracted from x - m: a positive L that float32 cannot hold (a
 * group dominated past e^-103) stays a positive float, so that the maximum's output keeps its sign (-0.0); the
 * other outputs (|x - m| >= 2^-24) are the same either way. */
ALWAYS uint16_t f64_to_f16(double d);
static void put_f16_of(char *p, double d) { /* d rounded once to float16, stored */
    uint16_t h = f64_to_f16(d);
    memcpy(p, &h, 2);
}

ALWAYS vf float16_shift(double L) {
    float f = (float)L;
    return splatf(L > 0 && f == 0 ? 0x1p-149f : f);
}

/* LOG_SOFTMAX of k rows (a constant, at most ROWS_MAX), as log_softmax_c computes them without its NaN-aware scan
 * (float32: add_terms' plain terms, a row needing no scratch: see log_sum_kept; float16: see fdsum; the output
 * as ls_out_run forms it). The rows go stage by stage, each stage for all before the next: a short row is bound
 * by its chain of dependent steps (max, horizontal max, exp, sum, log), and independent chains overlap.
 * Returns 0 when the general kernel must do the rows (out untouched then). */
#define ROWS_MAX 4 /* rows done stage by stage together (log_softmax_rows, softmax_rows32) */
#ifndef LS_ROWS_LONGEST
#define LS_ROWS_LONGEST 2048 /* rows up to this long go several at a time; longer ones have work enough of their own */
#endif
typedef struct {
    float top, low;
    uint64_t count; /* of the maxima */
    double rest, L; /* the sum of the other terms; log(count + rest) */
} ls_row;

/* One vector of a plain float32 row's terms into its sums: add_terms without its range checks. */
ALWAYS void ls_terms32(vf x, vf m, dsum *hi, vf *lo, vi *cnt) {
    vf err, t = two_diff(x, m, &err), eh, el;
    vi eq = cmp_eq(t, splatf(0.0f));
    exp_split(t, err, ~eq, &eh, &el);
    dsum_add(hi, eh);
    *lo += el;
    *cnt -= eq;
}

/* The plain sum of a float32 row against `top` (its maximum, or a larger one: see far_run_online), the row's
 * output lines (`out`, unless NULL) fetched for writing on the way and the input `ahead` bytes on meanwhile: its
 * terms in double lane by lane (`sum`, before the horizontal step) and the count of its entries equal to `top`
 * lane by lane (only their total counts: a partial vector's padding is taken back from lane 0). */
ALWAYS void ls_sums32(const char *in, char *out, ptrdiff_t n, ptrdiff_t ahead, float top, dsum *sum, vi *count) {
    vf m = splatf(top), lo = {0};
    vi cnt = {0};
    dsum hi = {0};
    ptrdiff_t i = 0;
    while (i < n) {
        ptrdiff_t end = i + 16 * LANES < n ? i + 16 * LANES : n; /* (the float part joins hi every 16 vectors, as
                                                                     * add_terms') */
        for (; i + LANES <= end; i += LANES) {
            __builtin_prefetch(in + i * 4 + ahead); /* a later row, run or piece */
            if (out) __builtin_prefetch(out + i * 4, 1); /* (its read from memory starts here, not at the store) */
            ls_terms32(loadf(in + i * 4), m, &hi, &lo, &cnt);
        }
        if (i < end) { /* a partial vector, padded with the maximum (counted as one, then taken back) */
            ls_terms32(row_at(in, i, n, 0, top), m, &hi, &lo, &cnt);
            cnt[0] -= (int32_t)(i + LANES - n);
            i = end;
        }
        dsum_add(&hi, lo);
        lo = (vf){0};
    }
    *sum = hi, *count = cnt;
}

ALWAYS void ls_sum32(const char *in, char *out, ptrdiff_t n, const int ahead, ls_row *r) {
    dsum hi;
    vi cnt;
    ls_sums32(in, out, n, ahead * n * 4, r->top, &hi, &cnt);
    r->count = (uint64_t)hsum_i64(cnt), r->rest = dsum_total(&hi);
}

ALWAYS void ls_sum(const char *in, char *out, const rdims *R, int f16, const int ahead, ls_row *r) {
    if (f16) r->rest = rest16(in, R, r->top, 1, ahead, &r->count);
    else ls_sum32(in, out, R->n[0], ahead, r);
}

/* Float16 LOG_SOFTMAX outputs y = (x - m) - L whose float32 value reached float16's overflow threshold, -65520,
 * where its rounding would decide between -65504 and -inf: those lanes in double, rounded once. */
ALWAYS void ls16_threshold(char *po, ptrdiff_t so, ptrdiff_t k, vf x, vf y, float m, double L) {
    if (ANY(y <= -65520.0f))
        for (ptrdiff_t j = 0; j < k; j++)
            if (y[j] <= -65520.0f) put_f16_of(po + j * so, ((double)x[j] - m) - L);
}

ALWAYS void ls_out_run(const char *pi, char *po, const rdims *R, int f16, float m, double L, const int row,
                       int plain);
ALWAYS vf float16_shift(double L);

/* ls_out_run's outputs of a contiguous run, float32 plain or a float16 row, streamed (STREAM_RUN). */
ALWAYS void ls_out_stream(const char *pi, char *po, ptrdiff_t n, const int f16, float m, double L) {
    vf vm = splatf(m), l = float16_shift(L);
    STREAM_RUN(po, n, f16, i, (row_at(pi, i, n, f16, 0) - vm) - l);
}

/* ls_out_run's float16 row outputs from the row widened (see row_range). */
ALWAYS void ls_out_wide(const float *wide, char *out, ptrdiff_t n, float m, double L) {
    vf vm = splatf(m), l = float16_shift(L);
    ptrdiff_t i = 0;
    for (; i + LANES <= n; i += LANES) store_f16(out + i * 2, (loadf(wide + i) - vm) - l);
    if (i < n) put_lanes_f(out + i * 2, 2, n - i, 1, (loadf(wide + i) - vm) - l);
}

ALWAYS int log_softmax_rows(const char *const in[], char *const out[], const int k, const rdims *R, int f16) {
    ptrdiff_t n = R->n[0];
    ls_row a[ROWS_MAX] = {0};
    float wide[ROWS_MAX * (LS_ROWS_LONGEST + LANES)]; /* (float16 rows: widened once, see row_range) */
    int widen16 = f16 && n <= LS_ROWS_LONGEST;
    for (int r = 0; r < k; r++)
        if (!row_range(in[r], n, f16, widen16 ? wide + r * (n + LANES) : NULL, &a[r].top, &a[r].low)) return 0;
    for (int r = 0; r < k; r++) {
        if (widen16) a[r].rest = rest16_wide(wide + r * (n + LANES), in[r], n, a[r].top, k, out[r], &a[r].count);
        else ls_sum(in[r], out[r], R, f16, k, &a[r]);
    }
    for (int r = 0; r < k; r += 2) {
        if (r + 1 < k) {
            d2 L = log_sum2(a[r].count, a[r].rest, a[r + 1].count, a[r + 1].rest);
            a[r].L = L[0], a[r + 1].L = L[1];
        } else {
            a[r].L = log_sum(a[r].count, a[r].rest);
        }
    }
    for (int r = 0; r < k; r++)
        if (a[r].L != a[r].L) return 0; /* a NaN entry */
    for (int r = 0; r < k; r++) {
        if (widen16) ls_out_wide(wide + r * (n + LANES), out[r], n, a[r].top, a[r].L);
        else ls_out_run(in[r], out[r], R, f16, a[r].top, a[r].L, 1, 1);
    }
    return 1;
}

static int is_row(const rdims *R, const rctx *c) { return R->nd == 1 && R->si[0] == c->isize && R->so[0] == c->osize; }

/* One run of LOG_SOFTMAX's outputs y = (x - m) - L. A `plain` group (a finite maximum, every entry within 87 of it)
 * and every float16 group take it in float32 with L rounded to float: x - m and that L lie on the same side of 0 as
 * y, no larger than |y|, so the three roundings (1.25 ulp) and L's own error (about 3e-9 relative with AVX-512,
 * 2e-8 elsewhere: add_terms) stay within 1.3 (1.6) ulp of y (README "Speed"); other float32 groups (terms below
 * e^-87 decide their L) in double, rounded once. Every layout of a group takes the same rule (its sum may run in
 * another order there: L, and so a group's outputs, can then differ by an ulp, about one group in a hundred). `row`
 * (a constant): a packed row of the plain range, its stride known, and no output near float16's overflow threshold. */
ALWAYS void ls_out_run(const char *pi, char *po, const rdims *R, int f16, float m, double L, const int row,
                       int plain) {
    ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], so = R->so[R->nd - 1];
    vf vm = splatf(m), l = float16_shift(L);
    if (row && !f16) {
        ROW_STORE_F32(po, n, i, (row_at(pi, i, n, 0, 0) - vm) - l);
        return;
    }
    for (ptrdiff_t i = 0; i < n; i += LANES) {
        ptrdiff_t k = n - i < LANES ? n - i : LANES;
        vf x = row ? row_at(pi, i, n, f16, 0) : lanes_f(pi + i * s, s, k, f16, 0);
        vf y = f16 || plain ? (x - vm) - l : shifted_d(x, m, L);
        if (row) {
            put_lanes_f(po + i * (f16 ? 2 : 4), f16 ? 2 : 4, k, f16, y);
            continue;
        }
        put_lanes_f(po + i * so, so, k, f16, y);
        if (f16) ls16_threshold(po + i * so, so, k, x, y, m, L);
    }
}

/* L of a plain group (a finite maximum m, every entry within 87 of it) from its packed copy `wide` (see
 * group_scan): float32 by log_sum_kept (its terms' main parts in the scratch row kh), float16 by rest16. */
static double ls_copy_L(const float *wide, ptrdiff_t count, int f16, float m, float *kh) {
    if (f16) {
        uint64_t n;
        double rest = rest16_wide(wide, NULL, count, m, 0, NULL, &n);
        return log_sum(n, rest);
    }
    const rdims P = {1, {count}, {4}, {4}}; /* the copy, one run of floats */
    return log_sum_kept((const char *)wide, &P, 0, m, kh);
}

/* The outputs (x - m) - L of one output run (n elements so bytes apart) from the run's packed copy w (the next
 * group's run, ahead_out bytes on, fetched for writing meanwhile when it is not 0). */
ALWAYS void ls_out_copy(const float *w, char *po, ptrdiff_t n, ptrdiff_t so, int f16, float m, double L,
                        ptrdiff_t ahead_out, int stream) {
    vf vm = splatf(m), l = float16_shift(L);
    if (stream) { /* (so: the entry's size) */
        STREAM_RUN(po, n, f16, i, (loadf(w + i) - vm) - l);
        return;
    }
    for (ptrdiff_t i = 0; i < n; i += LANES) {
        if (ahead_out) __builtin_prefetch(po + i * so + ahead_out, 1);
        put_lanes_f(po + i * so, so, n - i < LANES ? n - i : LANES, f16, (loadf(w + i) - vm) - l);
    }
}

ALWAYS int softmaxes_long(const char *in, char *out, ptrdiff_t n, const int f16, const int log);

/* LOG_SOFTMAX of one group (`ahead_in`, `ahead_out`: see softmax_group). A plain group (a finite maximum, every
 * entry within 87 of it) is packed into a scratch row as it is scanned (see group_scan), its sum (ls_copy_L) and
 * its outputs read from there. */
static void log_softmax_group(const char *in, char *out, const rdims *R, const rctx *c, ptrdiff_t ahead_in,
                              ptrdiff_t ahead_out) {
    int f16 = c->in_dtype == ODML_F16;
    const char *ins[1] = {in};
    char *outs[1] = {out};
    ptrdiff_t rn = R->n[0];
    if (is_row(R, c) && (rn >= LONG_ROW ? (f16 ? softmaxes_long(in, out, rn, 1, 1) : softmaxes_long(in, out, rn, 0, 1))
                         : f16          ? log_softmax_rows(ins, outs, 1, R, 1)
                                        : log_softmax_rows(ins, outs, 1, R, 0)))
        return;
    ptrdiff_t count = (ptrdiff_t)group_count(R);
    float m, low, stack[2 * (SM_STACK + 2 * LANES)], *wide = scratch_row(count, stack, c);
    float *kh = wide ? wide + count + 2 * LANES : NULL; /* (LOG_SOFTMAX's scratch holds two rows: see reduce) */
    group_scan_ahead(in, R, f16, 1, wide, ahead_in, &m, &low);
    int plain = isfinite(m) && low - m >= -87.0f;
    double L = NAN;
    if (plain && wide) {
        L = ls_copy_L(wide, count, f16, m, kh);
        int osz = f16 ? 2 : 4, stream = R->so[R->nd - 1] == osz && count * osz >= STREAM_MIN; /* (STREAM_RUN) */
        FOR_RUNS(R, in, out, pi, po, flat, {
            (void)pi; /* (outputs from the copy) */
            ls_out_copy(wide + flat, po, R->n[R->nd - 1], R->so[R->nd - 1], f16, m, L, ahead_out, stream);
        });
        if (stream) stream_fence();
        return;
    }
    if (isfinite(m)) {
        vf vm = splatf(m);
        vi cnt = {0}, flag = {0};
        dsum sum = {0};
        if (f16 && plain) {
            uint64_t n;
            double rest = rest16(in, R, m, 0, 1, &n);
            L = log_sum(n, rest);
        } else if (plain) { /* every term in float's normal range, no -inf: the plain sum */
            sum_pass_c(in, R, f16, vm, 0, 1, &flag, &cnt, &sum);
        } else {
            sum_pass_c(in, R, f16, vm, 0, 0, &flag, &cnt, &sum);
            if (ANY(flag)) {
                cnt = (vi){0}, sum = (dsum){0};
                sum_pass_c(in, R, f16, vm, 1, 0, &flag, &cnt, &sum);
            }
        }
        if (L != L) L = log_sum((uint64_t)hsum_i(cnt), dsum_total(&sum)); /* (a lane count stays below 2^28) */
    }
    FOR_RUNS(R, in, out, pi, po, flat, ls_out_run(pi, po, R, f16, m, L, 0, plain));
}

static void log_softmax_c(const char *in, char *out, const rdims *R, const rctx *c) {
    log_softmax_group(in, out, R, c, 0, 0);
}

/* ---- The softmaxes' far groups (see GROUP_BLOCK), where reduce picks them (runs a multiple of 4 KiB apart:
 * a group's runs then share a few cache sets, and a group at a time loses its fetches of the next group before
 * it reaches them; float32 LOG_SOFTMAX's runs of 512 or more at any stride): a block of c->far_gb adjacent groups
 * (at most FAR_READS bytes of input, so that it stays in L2 between its passes, but pieces of at least FAR_PIECE
 * bytes a run, one page, where the hardware's fetches stop) goes run by run in memory order: each group's
 * maximum and sum in one read (far_sums_step), then its outputs (SOFTMAX's terms computed again; where a block
 * fits FAR_READS, as the next block's sums are read: softmaxes_far_as), streamed when the outputs of the groups
 * this call holds (a task's share) reach STREAM_MIN. No copy: when the blocks were
 * packed into a scratch of 4 MiB as they were scanned, their later passes read L3 (one thread, Intel, caches
 * flushed, over (0, 2) of (64, 512, 512), interleaved, the copy against three reads of blocks in L2: SOFTMAX1
 * float32 19.2 -> 16.1 ms, float16 12.1 -> 8.9, LOG_SOFTMAX1 float16 12.9 -> 8.9; float32 LOG_SOFTMAX1, which
 * then read its input twice, each run with its own maximum merged in double, 15.7 -> 15.9; runs of 64, (512,
 * 512, 64): SOFTMAX1 float32 25.1 -> 28.4 (two exps an entry, where the copy took one), float16 16.8 -> 15.4,
 * LOG_SOFTMAX1 about the same). The sums run in another order than a group taken alone (see softmax_group), so
 * the two can differ in the last bit. A group out of the plain range (a NaN, an infinity, an entry more than 87
 * below its maximum) is done alone afterwards. ---- */
#ifndef FAR_READS
#define FAR_READS (256 << 10) /* bytes */
#endif
#define FAR_PIECE 4096 /* bytes */

static void softmaxes_far(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                          const rctx *c, int log);

/* ---- Short float32 rows (at most SHORT_ROW entries: a packed tensor's last axis of 64 to 256, common in models,
 * whose per-row steps cost as much as its terms), LANES rows at a time: each stage runs for the whole block
 * before the next, and the horizontal steps of all its rows go together (TR_REDUCE): the maxima and minima, the
 * sums and the counts of the maxima, LOG_SOFTMAX's L of every row in one log1p. Each row gets the bits that
 * log_softmax_rows and softmax_rows32 give it (the same passes lane by lane, the same halving order), so which
 * rows share a block changes nothing. A row out of range, or with a NaN, goes to the general kernel alone. ---- */
#ifndef SHORT_ROW
#define SHORT_ROW 256
#endif
_Static_assert(SHORT_ROW < 1 << 24, "a block row's count of maxima exact as a float");
ALWAYS vf rows_max(vf *w) { TR_REDUCE(LANES, w, vmax); return w[0]; }
ALWAYS vf rows_min(vf *w) { TR_REDUCE(LANES, w, vmin); return w[0]; }
ALWAYS vf rows_sumf(vf *w) { TR_REDUCE(LANES, w, ADD_); return w[0]; }
ALWAYS vdh rows_sumd(vdh *w) { TR_REDUCE(HALF_LANES, w, ADD_); return w[0]; }
HALVES(float, hsum_f, ADD_) /* (rows_sumf's order, a row alone) */

/* SOFTMAX's sum of a short row's terms e in [0, 1] (one of them exactly 1, the maximum's) in two float sums lane
 * by lane, where a double one takes a conversion a half-vector: hi, each e rounded to a multiple of 2^-15 (its
 * sums exact: a row's stays within n <= 2^9, 24 bits of 2^-15), and lo, the rest (|lo| <= min(e, 2^-16): its
 * lanes' n/LANES additions each err by at most 2^-24 n/LANES 2^-16, the log2(LANES) horizontal steps by 2^-24 n
 * 2^-16, together below (n^2/LANES + log2(LANES) n) 2^-40 of the total, which is at least 1: for n <= 256, 2^-27.6
 * with AVX-512's 16 lanes, 2^-25.9 with 4; the terms' own errors are about 2^-25). Each row's total is (double)hi
 * + (double)lo, the horizontal sums in the halving order, the same for a row alone (ssum_total) as for a block's
 * (rows_sumf). */
_Static_assert(SHORT_ROW <= 256, "a short row's float term sums: hi exact, lo within 2^-25.9 of the total");
typedef struct {
    dsum d; /* (rows longer than SHORT_ROW) */
    vf hi, lo;
} ssum;
ALWAYS void ssum_add(ssum *s, vf e, const int split) {
    if (!split) {
        dsum_add(&s->d, e);
        return;
    }
#if defined(__AVX512DQ__)
    vf lo = (vf)_mm512_reduce_ps((__m512)e, 15 << 4); /* (e - e rounded to 15 fraction bits, in one instruction) */
#else
    vf lo = e - ((e + 384.0f) - 384.0f); /* (1.5 * 2^8: adding it rounds e to a multiple of 2^-15) */
#endif
    s->hi += e - lo, s->lo += lo;
}
ALWAYS double ssum_total(const ssum *s, const int split) {
    return split ? (double)hsum_f(s->hi) + (double)hsum_f(s->lo) : dsum_total(&s->d);
}

/* The maxima of a block's rows (`top`) and whether each is in range (`ok`: row_range's test). */
ALWAYS void block_range(const char *in, ptrdiff_t gsi, ptrdiff_t n, float top[LANES], int32_t ok[LANES]) {
    vf a[LANES], c[LANES];
    for (int r = 0; r < LANES; r++) row_range_v(in + r * gsi, n, 0, NULL, 1, &a[r], &c[r]);
    vf t = rows_max(a);
    vi in_range = cmp_le(t - rows_min(c), splatf(87.0f)); /* (false for infinities) */
    storef(top, t), memcpy(ok, &in_range, sizeof in_range);
}

/* A block's double sums, lane by lane, to one total a row (dsum_total's order). */
ALWAYS void block_totals(const dsum sums[LANES], double total[LANES]) {
    vdh w[LANES];
    for (int r = 0; r < LANES; r++) w[r] = sums[r].lo + sums[r].hi;
    vdh a = rows_sumd(w), b = rows_sumd(w + HALF_LANES);
    memcpy(total, &a, sizeof a), memcpy(total + HALF_LANES, &b, sizeof b);
}

/* LOG_SOFTMAX of LANES float32 rows gsi bytes apart (see log_softmax_rows for the stages). */
static void log_softmax_block(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, const rdims *R,
                              const rctx *c) {
    ptrdiff_t n = R->n[0];
    float top[LANES];
    int32_t ok[LANES];
    double rest[LANES], L[LANES];
    dsum sums[LANES];
    vf counts[LANES];
    block_range(in, gsi, n, top, ok);
    for (int r = 0; r < LANES; r++) {
        vi k;
        ls_sums32(in + r * gsi, out + r * gso, n, LANES * n * 4, top[r], &sums[r], &k);
        counts[r] = __builtin_convertvector(k, vf); /* (exact, and so their sums: counts below 2^24) */
    }
    block_totals(sums, rest);
    vf count = rows_sumf(counts);
    vdh lo, hi; /* log_sum's log1p((count - 1) + rest), every row at once */
    memcpy(&lo, rest, sizeof lo), memcpy(&hi, rest + HALF_LANES, sizeof hi);
    lo = log1p_posh((widen_lo(count) - 1.0) + lo), hi = log1p_posh((widen_hi(count) - 1.0) + hi);
    memcpy(L, &lo, sizeof lo), memcpy(L + HALF_LANES, &hi, sizeof hi);
    for (int r = 0; r < LANES; r++) {
        if (ok[r] && L[r] == L[r]) ls_out_run(in + r * gsi, out + r * gso, R, 0, top[r], L[r], 1, 1);
        else log_softmax_c(in + r * gsi, out + r * gso, R, c);
    }
}

/* Rows k at a time (k, f16: constants) while k remain; returns how many were done. */
ALWAYS ptrdiff_t ls_row_groups(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count,
                               const rdims *R, const rctx *c, const int k, const int f16) {
    ptrdiff_t g = 0;
    for (; g + k <= count; g += k) {
        const char *ins[ROWS_MAX];
        char *outs[ROWS_MAX];
        for (int r = 0; r < k; r++) ins[r] = in + (g + r) * gsi, outs[r] = out + (g + r) * gso;
        if (!log_softmax_rows(ins, outs, k, R, f16))
            for (int r = 0; r < k; r++) log_softmax_c(ins[r], outs[r], R, c);
    }
    return g;
}
static void log_softmax_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                          const rctx *c) {
    int f16 = c->in_dtype == ODML_F16;
    ptrdiff_t g = 0;
    if (c->far_gb) {
        softmaxes_far(in, gsi, out, gso, count, R, c, 1);
        return;
    }
    if (is_row(R, c) && !f16 && R->n[0] <= SHORT_ROW)
        for (; g + LANES <= count; g += LANES) log_softmax_block(in + g * gsi, gsi, out + g * gso, gso, R, c);
    if (is_row(R, c) && R->n[0] <= LS_ROWS_LONGEST)
        g += f16 ? ls_row_groups(in + g * gsi, gsi, out + g * gso, gso, count - g, R, c, ROWS_MAX, 1)
                 : ls_row_groups(in + g * gsi, gsi, out + g * gso, gso, count - g, R, c, ROWS_MAX, 0);
    for (; g < count; g++)
        log_softmax_group(in + g * gsi, out + g * gso, R, c, g + 1 < count ? gsi : 0, g + 1 < count ? gso : 0);
}

/* A LOG_SOFTMAX strip's lanes (nl <= LANES) once its maxima m and minima mn are known: the sum passes (reading the
 * copy `wide`, a step every ws floats, when there is one) and what the outputs need. */
typedef struct {
    vf m, l;   /* the maxima; L as the float subtracted (float16_shift) */
    vd L, md;  /* L and the maxima in double (non-plain lanes) */
    vi plain;  /* lanes formed in float32 (ls_out_run's rule) */
    int fast;  /* every lane plain and in range: float32 only, no output near float16's overflow */
} ls_lanes;

static void ls_strip_sums(const char *in, ptrdiff_t lsi, int nl, const rdims *R, int f16, const float *wide,
                          ptrdiff_t ws, vf m, vf mn, ls_lanes *st) {
    vi cnt = {0}, flag = {0};
    dsum sum = {0};
    if (!ANY(~((mn - m) >= -87.0f))) { /* every lane's terms in float's normal range (and no NaN): plain sum */
        sum_pass_s(in, lsi, nl, R, f16, wide, ws, m, 0, 1, &flag, &cnt, &sum);
    } else {
        sum_pass_s(in, lsi, nl, R, f16, wide, ws, m, 0, 0, &flag, &cnt, &sum);
        if (ANY(flag)) {
            cnt = (vi){0}, sum = (dsum){0};
            sum_pass_s(in, lsi, nl, R, f16, wide, ws, m, 1, 0, &flag, &cnt, &sum);
        }
    }
    /* L = log1p(count - 1 + rest) lane by lane (see log_sum), half a strip at a time */
    vdh lo = __builtin_convertvector(__builtin_shufflevector(cnt, cnt, LO_HALF), vdh) - 1.0 + sum.lo,
        hi = __builtin_convertvector(__builtin_shufflevector(cnt, cnt, HI_HALF), vdh) - 1.0 + sum.hi;
    lo = log1p_posh(lo), hi = log1p_posh(hi);
    for (int k = 0; k < LANES; k++) {
        st->L[k] = isfinite(m[k]) ? (k < LANES / 2 ? lo[k] : hi[k - LANES / 2]) : NAN;
        st->l[k] = float16_shift(st->L[k])[0];
    }
    /* (float16 lanes, and the plain ones: in float32, as ls_out_run forms them) */
    vi ranged = ~cmp_lt(mn - m, splatf(-87.0f)) & cmp_eq(m - m, splatf(0.0f));
    st->m = m, st->md = widen(m), st->plain = f16 ? ~(vi){0} : ranged, st->fast = !ANY(~ranged);
}

/* One step of a strip's outputs from its inputs x. */
ALWAYS void ls_strip_out(vf x, const ls_lanes *st, char *po, ptrdiff_t lso, int nl, int f16) {
    if (st->fast) {
        put_lanes_f(po, lso, nl, f16, (x - st->m) - st->l);
        return;
    }
    vd y = (widen(x) - st->md) - st->L;
    vf yf = selectf(st->plain, (x - st->m) - st->l, narrow(y));
    put_lanes_f(po, lso, nl, f16, yf);
    if (f16 && ANY(yf <= -65520.0f)) /* (see ls16_threshold) */
        for (int j = 0; j < nl; j++)
            if (yf[j] <= -65520.0f) put_f16_of(po + j * lso, y[j]);
}

/* The first pass of a softmax strip or panel (nl lanes, as strip function `fn` takes them): the maxima and
 * minima of its nv strips into m and mn, the strips copied into the task's scratch (c->scratch: reduce sizes
 * it) a step every *ws floats; *next: whether the output pass fetches the next panel. Returns 0 when a panel
 * had no memory for its copy: then fn has done it strip by strip. */
static int softmax_panel_start(red_strip fn, const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl,
                               const rdims *R, const rctx *c, vf *m, vf *mn, ptrdiff_t *ws, int *next) {
    int f16 = c->in_dtype == ODML_F16, nv = (nl + LANES - 1) / LANES;
    if (nv > 1 && !c->scratch) {
        for (int v = 0; v < nv; v++) fn(in + v * LANES * lsi, lsi, out + v * LANES * lso, lso, sub_nl(nl, v), R, c);
        return 0;
    }
    *ws = nv > 1 ? (nv + 1) * LANES : LANES;
    *next = panel_fetches_next(nv, *ws, R);
    if (nv > 1) panel_max_min(in, lsi, nl, nv, R, f16, c->scratch, *ws, m, mn);
    else strip_max_min(in, lsi, nl, R, f16, c->scratch, &m[0], &mn[0]); /* (lanes past nl: 0, within range) */
    return 1;
}

/* LOG_SOFTMAX of a strip or a panel (nl lanes: see reduce). */
static void log_softmax_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R,
                          const rctx *c) {
    int f16 = c->in_dtype == ODML_F16, nv = (nl + LANES - 1) / LANES, next;
    float *wide = c->scratch;
    ptrdiff_t ws;
    vf m[PANEL_MAX], mn[PANEL_MAX];
    ls_lanes st[PANEL_MAX];
    if (!softmax_panel_start(log_softmax_s, in, lsi, out, lso, nl, R, c, m, mn, &ws, &next)) return;
    for (int v = 0; v < nv; v++)
        ls_strip_sums(in + v * LANES * lsi, lsi, sub_nl(nl, v), R, f16, wide ? wide + v * LANES : NULL, ws, m[v],
                      mn[v], &st[v]);
    FOR_RUNS(R, in, out, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], so = R->so[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i++)
            for (int v = 0; v < nv; v++) {
                char *to = po + i * so + v * LANES * lso;
                if (next) __builtin_prefetch(pi + i * s + (nv + v) * LANES * lsi); /* the next panel's row */
                if (nv > 1) __builtin_prefetch(to + so, 1); /* the next step's row */
                else STRIP_FETCH_W(to, lso);
                vf x = strip_at(wide ? wide + v * LANES : NULL, ws, flat + i, pi + i * s + v * LANES * lsi, lsi,
                                sub_nl(nl, v), f16);
                ls_strip_out(x, &st[v], to, lso, sub_nl(nl, v), f16);
            }
    });
}

/* ============== REDUCE (SUM, SUM_SQUARE, L1, AVERAGE, MAX, MIN), ARGMIN and SOFTMAX ============== */
typedef uint64_t vq VEC(uint64_t);
typedef int64_t vsq VEC(int64_t);

/* ---- MAX/MIN: the element ARGMAX/ARGMIN (INCREASING) selects, copied bits and all ---- */
static const char *at_flat(const char *in, const rdims *R, uint32_t flat) {
    for (int d = R->nd - 1; d >= 0; d--) {
        in += (ptrdiff_t)(flat % (uint32_t)R->n[d]) * R->si[d];
        flat /= (uint32_t)R->n[d];
    }
    return in;
}

#define EXTREME_T(NAME, DT)                                                                                     \
    static void NAME##_extreme_c(const char *in, char *out, const rdims *R, const rctx *c) {                    \
        memcpy(out, at_flat(in, R, NAME##_argmax_contig(in, R, c->last)), (size_t)c->isize);                   \
    }                                                                                                           \
    static void NAME##_extreme_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl,               \
                                 const rdims *R, const rctx *c) {                                               \
        vu ids[PANEL_MAX];                                                                                      \
        NAME##_argmax_panel(in, lsi, nl, R, c->last, ids);                                                      \
        for (int l = 0; l < nl; l++)                                                                            \
            memcpy(out + l * lso, at_flat(in + l * lsi, R, ids[l / LANES][l % LANES]), (size_t)c->isize);       \
    }                                                                                                           \
    RED_RUN(NAME##_extreme)

/* ---- SOFTMAX: exp(x - max) / sum(exp(x - max)), all in double as the float64 reference, rounded once to float32
 * (float16: via float32). The maximum is the element ARGMAX selects (a NaN, if any). exp runs in double
 * (exp_shift: LOG_SOFTMAX's float32 exp, good to 2e-8 when this path was written, reached every output through
 * the sum and left softmax at 0.86 ulp): its error, below 1.4e-10, is far below float32's. A group without a
 * finite maximum is all NaN, as in LOG_SOFTMAX; a -inf entry, or one more than 708 below the maximum, adds 0 and
 * gives 0. ---- */
/* a * b + c on doubles, fused where the ISA has FMA (softmax only: its bound is in ulps, not bits). */
ALWAYS vd fmadd_d(vd a, vd b, vd c) {
#if defined(__FMA__) || defined(__AVX512F__)
    vd r;
    for (int k = 0; k < LANES; k++) r[k] = __builtin_fma(a[k], b[k], c[k]); /* (vectorised: one FMA a register) */
    return r;
#else
    return a * b + c;
#endif
}

/* exp(t) for t <= 0 (and NaN): Cody-Waite with a two-part ln2 (n*LN2_HI is exact), then 1 + r*P(r) of degree 7
 * fitted on |r| <= 0.354 (Chebyshev nodes): relative error below 1.4e-10; exp(0) is exactly 1. */
ALWAYS vd exp_shift(vd t) {
    const double LOG2E = 1.4426950408889634, MAGIC = 6755399441055744.0; /* 1.5 * 2^52 */
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    /* (-inf too; NaN stays NaN). The compare runs on floats: GCC splits a double vector compare into scalars. */
    vsq drop = __builtin_convertvector(narrow(t) < -708.0f, vsq);
    t = (vd)((vsq)t & ~drop);
    vd biased = t * LOG2E + MAGIC, n = biased - MAGIC, z = {0};
    vd r = (t - n * LN2_HI) - n * LN2_LO;
    vd p = fmadd_d(r, z + 0.0001991026487561163, z + 0.0013943232759007535);
    p = fmadd_d(p, r, z + 0.008333279408886448);
    p = fmadd_d(p, r, z + 0.04166632685648199);
    p = fmadd_d(p, r, z + 0.16666666801496915);
    p = fmadd_d(p, r, z + 0.5000000053104716);
    p = fmadd_d(p, r, z + 0.9999999999947325);
    p = fmadd_d(p, r, z + 1.0);
    vd scale = (vd)(((vsq)biased - (vsq)(z + MAGIC) + 1023) << 52);
    return (vd)((vsq)(p * scale) & ~drop);
}

#define SOFTMAX_PASS(LANES_AT, STEP, ...)                                                                       \
    FOR_RUNS(R, in, out, pi, po, flat, {                                                                        \
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], so = R->so[R->nd - 1];                             \
        (void)so;                                                                                               \
        for (ptrdiff_t i = 0; i < n; i += STEP) {                                                               \
            ptrdiff_t k = n - i < LANES ? n - i : LANES;                                                        \
            (void)k;                                                                                            \
            vd e = exp_shift(widen(LANES_AT) - m);                                                              \
            __VA_ARGS__;                                                                                        \
        }                                                                                                       \
    })

static void softmax_exact_c(const char *in, char *out, const rdims *R, const rctx *c) {
    int f16 = c->in_dtype == ODML_F16;
    const char *at = at_flat(in, R, f16 ? f16_argmax_contig(in, R, 0) : f32_argmax_contig(in, R, 0));
    float top = lanes_f(at, 0, 1, f16, 0)[0];
    vd m = (vd){0} + (isfinite(top) ? top : NAN), sum = {0};
    SOFTMAX_PASS(lanes_f(pi + i * s, s, k, f16, -INFINITY), LANES, sum += e);
    vd inv = (vd){0} + 1.0 / hsum_d(sum);
    SOFTMAX_PASS(lanes_f(pi + i * s, s, k, f16, 0), LANES, put_lanes_f(po + i * so, so, k, f16, narrow(e * inv)));
}

/* The exact path over a strip's nl lanes, writing the lanes of `only` (a bit a lane). */
static void softmax_exact_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R,
                            const rctx *c, unsigned only) {
    int f16 = c->in_dtype == ODML_F16;
    vu id = f16 ? f16_argmax_strip(in, lsi, nl, R, 0) : f32_argmax_strip(in, lsi, nl, R, 0);
    vd m = {0}, sum = {0};
    for (int l = 0; l < nl; l++) {
        float top = lanes_f(at_flat(in + l * lsi, R, id[l]), 0, 1, f16, 0)[0];
        m[l] = isfinite(top) ? top : NAN;
    }
    SOFTMAX_PASS(lanes_f(pi + i * s, lsi, nl, f16, 0), 1, sum += e);
    vd inv = 1.0 / sum;
    SOFTMAX_PASS(lanes_f(pi + i * s, lsi, nl, f16, 0), 1, {
        vf y = narrow(e * inv);
        if (only == first_lanes(nl)) {
            put_lanes_f(po + i * so, lso, nl, f16, y);
        } else { /* the lanes asked for, converted together, stored one by one */
            char b[LANES * 4];
            if (f16) store_f16(b, y);
            else storef(b, y);
            for (int l = 0; l < nl; l++)
                if (only >> l & 1) memcpy(po + i * so + l * lso, b + l * (f16 ? 2 : 4), f16 ? 2 : 4);
        }
    });
}

/* The usual case, in float32: a group whose maximum m is finite and whose every entry lies within 87 of it (so
 * every term is a normal float and no -inf occurs). e = exp(x - m) in float32 (x - m = t + err exactly, two_diff):
 * with AVX-512 from exp_table, rounded once at normal precision and then scaled (about 0.5 ulp), elsewhere as
 * exp_parts_lo's parts (about 0.6 ulp); the sum of the e in double (a packed row of at most SHORT_ROW: in two float
 * parts, see ssum, within 2^-25.9); out = e * (1 / sum) rounded once (fscaled: 2^-47.5 besides; one more rounding for
 * outputs below about 2^-102): within 3 ulp (README "Speed"; tests/test_backends.py measures it).
 * The e are kept between the passes in a scratch row (scratch_row: the output is then written once, and the sum
 * taken in its own loop, so that the exp loop carries no dependency); without one, a float32 group keeps them in
 * the output, a float16 group computes them again (the same bits). Other groups take the exact double path above. */
ALWAYS vf softmax_term(vf x, vf m) {
    vf err, t = two_diff(x, m, &err);
#if defined(__AVX512F__)
    vf w, q;
    vf th = exp_table(t, err, &w, &q);
    return scale_by_floor(fmadd(th, w, th), q); /* rounded once, in [2^-1, 2^2), then scaled exactly */
#else
    vf s, r, q;
    exp_parts_lo(t, err, &s, &r, &q);
    return s * ((q + r) + 1.0f);
#endif
}

/* A SOFTMAX term: float16 groups in plain float32 (see fdsum). */
ALWAYS vf softmax_term_of(vf x, vf m, int f16) { return f16 ? exp_f16_term(x - m) : softmax_term(x, m); }

/* x * c rounded once (c = 1/sum > 0 in double): with FMA, as x * ch + x * cl (c = ch + cl in floats, which
 * leaves 2^-48 of c), the small product rounded (2^-48 of the result) and added to the exact x * ch by the FMA's
 * one rounding: within 2^-47.5 before it (below about 2^-102 the small product's rounding reaches float32's least
 * subnormal: one more rounding there); else in double. Two instructions: forming x * ch's exact error first took
 * four, for the same bound. */
#if defined(__FMA__) || defined(__AVX512F__)
typedef struct {
    float hi, lo;
} fscale;
ALWAYS fscale fscale_of(double c) { return (fscale){(float)c, (float)(c - (double)(float)c)}; }
ALWAYS vf fscaled(vf x, fscale c) { return fmadd(x, splatf(c.hi), x * c.lo); }
#else
typedef double fscale;
ALWAYS fscale fscale_of(double c) { return c; }
ALWAYS vf fscaled(vf x, fscale c) { return scaled_d(x, c); }
#endif
/* An output e / sum from inv = 1 / sum: float32 rounded once, float16 in float32. */
ALWAYS vf softmax_scaled(vf e, double inv, int f16) { return f16 ? e * (float)inv : fscaled(e, fscale_of(inv)); }

/* SOFTMAX of float32 rows, as softmax_c computes them, their terms in scratch rows (the output is then written
 * once; its lines are fetched while the terms are computed). A long row's outputs are stored from a vector's
 * alignment on (ROW_STORE_F32), its terms placed as the outputs so that those loads are aligned too; a short row
 * stores as it computed (a load across two vectors stored a moment before, still in the store queue, would wait
 * for both). */
/* The terms of a row into keep (the next row `ahead` rows on fetched meanwhile, and the row's output lines unless
 * `out` is NULL); returns their sum. */
ALWAYS ssum softmax_sum32(const char *in, char *out, ptrdiff_t n, ptrdiff_t ahead, float top, float *keep,
                         const int split) {
    vf m = splatf(top);
    ssum sum = {{{0}, {0}}, {0}, {0}};
    ptrdiff_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        __builtin_prefetch(in + (i + ahead * n) * 4); /* a later row, usually adjacent */
        if (out) __builtin_prefetch(out + i * 4, 1); /* this output line, for writing: read from memory now */
        vf e = softmax_term(loadf(in + i * 4), m);
        storef(keep + i, e);
        ssum_add(&sum, e, split);
    }
    if (i < n) {
        vf e = selectf(IOTA < (vu){0} + (uint32_t)(n - i), softmax_term(row_at(in, i, n, 0, top), m), splatf(0));
        storef(keep + i, e);
        ssum_add(&sum, e, split);
    }
    return sum; /* (lane by lane: dsum_total adds them) */
}

ALWAYS void softmax_out32(char *out, ptrdiff_t n, const float *keep, double total, int aligned) {
    fscale inv = fscale_of(1.0 / total);
    if (aligned) {
        ROW_STORE_F32(out, n, j, fscaled(loadf(keep + j), inv));
        return;
    }
    ptrdiff_t i = 0;
    for (; i + LANES <= n; i += LANES) storef(out + i * 4, fscaled(loadf(keep + i), inv));
    if (i < n) put_lanes_f(out + i * 4, 4, n - i, 0, fscaled(loadf(keep + i), inv));
}

/* k rows (a constant, at most ROWS_MAX) of n elements stage by stage, as log_softmax_rows does them. `stack`
 * holds SM_STACK + 2 LANES floats: the k rows' scratch (k > 1: n <= SM_ROWS_LONGEST), or one row's when it fits.
 * Returns 0 (outputs untouched) when the general kernel must do them. */
#ifndef SM_ROWS_LONGEST
#define SM_ROWS_LONGEST 512
#endif
_Static_assert(ROWS_MAX * (SM_ROWS_LONGEST + 2 * LANES) <= SM_STACK + 2 * LANES, "the rows' scratch on the stack");
ALWAYS int softmax_rows32(const char *const in[], char *const out[], const int k, ptrdiff_t n, float *stack,
                          const rctx *c) {
    float top[ROWS_MAX], low, *keep[ROWS_MAX];
    double total[ROWS_MAX];
    int aligned = n >= 16 * LANES;
    for (int r = 0; r < k; r++) {
        if (!row_range(in[r], n, 0, NULL, &top[r], &low)) return 0;
        keep[r] = k == 1 ? scratch_row(n, stack, c) : stack + r * (n + 2 * LANES);
        if (!keep[r]) return 0;
        if (aligned) keep[r] += ((uintptr_t)out[r] - (uintptr_t)keep[r]) % (LANES * 4) / 4;
    }
    for (int r = 0; r < k; r++) {
        ssum sum = n <= SHORT_ROW ? softmax_sum32(in[r], out[r], n, k, top[r], keep[r], 1)
                                  : softmax_sum32(in[r], out[r], n, k, top[r], keep[r], 0);
        total[r] = n <= SHORT_ROW ? ssum_total(&sum, 1) : ssum_total(&sum, 0);
    }
    for (int r = 0; r < k; r++)
        if (total[r] != total[r]) return 0; /* a NaN entry */
    for (int r = 0; r < k; r++) softmax_out32(out[r], n, keep[r], total[r], aligned);
    return 1;
}

/* The terms of n values kept in `keep` (a group packed, or a float16 row widened), in place there; returns their
 * sum (float16: see fdsum; float32: in double, afterwards, sum_kept). `in` (the row widened into keep, or NULL):
 * the row `ahead` rows on is fetched meanwhile; `out` (a float16 row's outputs, or NULL): their lines, for
 * writing. */
ALWAYS double softmax_terms_kept(float *keep, ptrdiff_t n, float top, const int f16, const char *in,
                                 ptrdiff_t ahead, char *out) {
    vf m = splatf(top);
    dsum d = {0};
    vdh s_a = {0}, s_b = {0}, s_c = {0}, s_d = {0}; /* (float32: sum_kept's four chains, summed on the way: its bits) */
    ptrdiff_t i = 0, full = n / LANES * LANES;
#define TERM_KEPT(i) /* (the term, also stored) */                                                              \
    ({                                                                                                          \
        vf e_ = softmax_term_of(loadf(keep + (i)), m, f16);                                                     \
        storef(keep + (i), e_);                                                                                 \
        e_;                                                                                                     \
    })
    while (i < full) { /* (float16: fdsum's float sums, in two chains of 8 vectors) */
        ptrdiff_t end = i + 16 * LANES < full ? i + 16 * LANES : full;
        vf s0 = {0}, s1 = {0};
        for (; i + 2 * LANES <= end; i += 2 * LANES) {
            if (in) __builtin_prefetch(in + (i + ahead * n) * (f16 ? 2 : 4)); /* a later row, usually adjacent */
            if (in && !f16) __builtin_prefetch(in + (i + LANES + ahead * n) * 4);
            if (out && f16) __builtin_prefetch(out + i * 2, 1); /* its output line, for writing: read from memory now */
            vf x = TERM_KEPT(i), y = TERM_KEPT(i + LANES);
            if (f16) s0 += x, s1 += y;
            else s_a += widen_lo(x), s_b += widen_hi(x), s_c += widen_lo(y), s_d += widen_hi(y);
        }
        if (i < end) {
            vf x = TERM_KEPT(i);
            if (f16) s0 += x;
            else s_a += widen_lo(x), s_b += widen_hi(x);
            i += LANES;
        }
        if (f16) dsum_add(&d, s0 + s1);
    }
#undef TERM_KEPT
    if (i < n) { /* (no padding term) */
        vf e = selectf(IOTA < (vu){0} + (uint32_t)(n - i), softmax_term_of(loadf(keep + i), m, f16), splatf(0));
        storef(keep + i, e);
        if (f16) dsum_add(&d, e);
        else s_a += widen_lo(e), s_b += widen_hi(e);
    }
    /* A float16 row's entries more than 87 below its maximum (not checked: row_range's maxima only) have terms
     * of at most e^-87 (exp_f16_term stays finite down to x - m = -2^17): below 2^-125 of the sum, and outputs
     * that round to 0. A NaN entry makes the sum NaN, and the group goes to the general kernel. */
    return f16 ? dsum_total(&d) : hsum_dh((s_a + s_b) + (s_c + s_d));
}

/* The outputs e * inv of n kept terms into one contiguous run. */
ALWAYS void softmax_out_kept(char *out, ptrdiff_t n, const float *keep, double inv, const int f16) {
    ptrdiff_t i = 0, osz = f16 ? 2 : 4;
    for (; i + LANES <= n; i += LANES)
        put_lanes_f(out + i * osz, osz, LANES, f16, softmax_scaled(loadf(keep + i), inv, f16));
    if (i < n) put_lanes_f(out + i * osz, osz, n - i, f16, softmax_scaled(loadf(keep + i), inv, f16));
}

/* The outputs e * inv of one output run (n elements so bytes apart) from the run's kept terms w (the next group's
 * run, ahead_out bytes on, fetched for writing meanwhile when it is not 0). */
ALWAYS void softmax_out_copy(const float *w, char *po, ptrdiff_t n, ptrdiff_t so, int f16, double inv,
                             ptrdiff_t ahead_out, int stream) {
    if (stream) { /* (so: the entry's size) */
        STREAM_RUN(po, n, f16, i, softmax_scaled(loadf(w + i), inv, f16));
        return;
    }
    for (ptrdiff_t i = 0; i < n; i += LANES) {
        if (ahead_out) __builtin_prefetch(po + i * so + ahead_out, 1);
        put_lanes_f(po + i * so, so, n - i < LANES ? n - i : LANES, f16, softmax_scaled(loadf(w + i), inv, f16));
    }
}

/* SOFTMAX of k float16 rows (a constant, at most ROWS_MAX) stage by stage, as fdsum explains: each row widened
 * into its scratch row (see row_range; `stack` as softmax_rows32's), its terms in place there and its outputs
 * e * (1 / sum) in float32. Returns 0 (outputs untouched) when the general kernel must do them. */
ALWAYS int softmax_rows16(const char *const in[], char *const out[], const int k, ptrdiff_t n, float *stack,
                          const rctx *c) {
    float top[ROWS_MAX], *keep[ROWS_MAX] = {0};
    double total[ROWS_MAX];
    for (int r = 0; r < k; r++) {
        keep[r] = k == 1 ? scratch_row(n, stack, c) : stack + r * (n + 2 * LANES);
        if (!keep[r] || !row_range(in[r], n, 1, keep[r], &top[r], NULL)) return 0; /* (see softmax_terms_kept) */
    }
    for (int r = 0; r < k; r++) total[r] = softmax_terms_kept(keep[r], n, top[r], 1, in[r], k, out[r]);
    for (int r = 0; r < k; r++)
        if (total[r] != total[r]) return 0; /* a NaN entry */
    for (int r = 0; r < k; r++) softmax_out_kept(out[r], n, keep[r], 1.0 / total[r], 1);
    return 1;
}

/* The terms of a plain group's packed copy, in place; returns 1 / their sum. */
static double softmax_copy_inv(float *keep, ptrdiff_t count, float top, int f16) {
    return 1.0 / (f16 ? softmax_terms_kept(keep, count, top, 1, NULL, 0, NULL)
                      : softmax_terms_kept(keep, count, top, 0, NULL, 0, NULL));
}

/* A far group's or a long row's sum (softmaxes_far, softmaxes_long): SOFTMAX's terms (float32 in double lane by
 * lane, float16 as fdsum) or LOG_SOFTMAX's count of the maxima and the rest (float32: ls_sums32's; float16:
 * rest16's). */
typedef struct {
    dsum d;
    fdsum h;
    rest16_state st;
    vi cnt;
} far_sum;
/* One run's part of it (n packed entries) against the maximum `top`; `next`: a later run, fetched meanwhile. */
ALWAYS void far_run_sum(const char *pi, ptrdiff_t n, const int f16, const int log, float top, const char *next,
                        far_sum *to) {
    if (log && !f16) {
        dsum d;
        vi cnt;
        ls_sums32(pi, NULL, n, next - pi, top, &d, &cnt);
        to->d.lo += d.lo, to->d.hi += d.hi, to->cnt += cnt;
        return;
    }
    dsum d = to->d; /* (locals, the one in use only: registers) */
    fdsum h = log || !f16 ? (fdsum){0} : to->h;
    rest16_state st = log ? to->st : (rest16_state){0};
    vf m = splatf(top);
    for (ptrdiff_t i = 0; i < n; i += LANES) {
        if (!f16 || i % (2 * LANES) == 0) __builtin_prefetch(next + i * (f16 ? 2 : 4)); /* (a line) */
        vf x = row_at(pi, i, n, f16, top);
        if (log) { /* (padding equals the max: counted, then taken back) */
            rest16_add(x, m, &st);
            continue;
        }
        vf e = softmax_term_of(x, m, f16);
        if (n - i < LANES) e = selectf(IOTA < (vu){0} + (uint32_t)(n - i), e, splatf(0)); /* (padding: no term) */
        if (f16) fdsum_add(&h, e);
        else dsum_add(&d, e);
    }
    if (log) st.pads += (n + LANES - 1) / LANES * LANES - n, to->st = st;
    else if (f16) to->h = h;
    else to->d = d;
}

/* SOFTMAX's outputs of one run (n packed entries; outputs so bytes apart, streamed with `stream`), the terms
 * computed again. */
ALWAYS void softmax_run_out(const char *pi, char *po, ptrdiff_t n, ptrdiff_t so, const int f16, float top,
                            double inv, int stream) {
    vf m = splatf(top);
    if (stream) {
        STREAM_RUN(po, n, f16, i, softmax_scaled(softmax_term_of(row_at(pi, i, n, f16, top), m, f16), inv, f16));
        return;
    }
    for (ptrdiff_t i = 0; i < n; i += LANES)
        put_lanes_f(po + i * so, so, n - i < LANES ? n - i : LANES, f16,
                    softmax_scaled(softmax_term_of(row_at(pi, i, n, f16, top), m, f16), inv, f16));
}

/* A far sum's maximum grows from m_old to m_new: the sum so far scaled by f = exp(m_old - m_new), in double
 * (within about 2^-52); LOG_SOFTMAX's maxima so far (terms of 1) join its rest first. */
ALWAYS void far_sum_rescale(far_sum *u, const int f16, const int log, double f) {
    fdsum *h = log ? &u->st.sum : &u->h;
    dsum *d = f16 ? &h->d : &u->d;
    if (f16) dsum_add(d, h->f), h->f = (vf){0}, h->n = 0; /* (its float part first) */
    if (log) {
        d->lo[0] += (double)(f16 ? hsum_i64(u->st.cnt) - u->st.pads : hsum_i64(u->cnt));
        u->cnt = u->st.cnt = (vi){0}, u->st.pads = 0;
    }
    d->lo *= f, d->hi *= f;
}

/* One run (n packed entries) into a sum gathered in one read as the maximum grows (m, low: the range so far,
 * NaN entries skipped): the run's maximum and minimum, then its terms against the maximum so far while the run is
 * in L1 (`next`: a later run, fetched meanwhile). Returns 0, the sum unfinished, when the range so far is beyond
 * 87 or holds an infinity: the group is then not plain. A NaN entry makes the sum NaN (far_sum_value). */
ALWAYS int far_run_online(const char *p, ptrdiff_t n, const int f16, const int log, const char *next, float *m,
                          float *low, far_sum *u) {
    float mc, lc;
    if (!row_range(p, n, f16, NULL, &mc, &lc)) return 0;
    if (mc > *m) far_sum_rescale(u, f16, log, exp((double)*m - mc)), *m = mc;
    *low = lc < *low ? lc : *low;
    if (!(*m - *low <= 87.0f)) return 0;
    far_run_sum(p, n, f16, log, *m, next, u);
    return 1;
}

/* What a finished far sum gives the outputs: LOG_SOFTMAX's L, SOFTMAX's 1 / sum (NaN: a NaN entry). */
ALWAYS double far_sum_value(far_sum *u, const int f16, const int log) {
    uint64_t count;
    if (log && f16) {
        double rest = rest16_finish(&u->st, &count);
        return log_sum(count, rest);
    }
    if (log) return log_sum((uint64_t)hsum_i64(u->cnt), dsum_total(&u->d));
    return 1.0 / (f16 ? fdsum_total(&u->h) : dsum_total(&u->d));
}

/* LOG_SOFTMAX (`log`) or SOFTMAX of one long row (LONG_ROW) in two reads: piece by piece (LONG_PIECE bytes, read
 * from memory once, then in L1 for its terms; the next piece fetched meanwhile) its sum as the maximum grows
 * (far_run_online), then its outputs from the row (still in L2; SOFTMAX's terms computed again), streamed. A scan for
 * the maximum first, then the sum, read the row from memory in a pass of its own, with nothing to compute
 * meanwhile (over (1, 2) of (64, 512, 512), Intel, one thread, flushed caches: SOFTMAX1 float32 14.4 -> 11.3 ms,
 * float16 6.4 -> 5.5; LOG_SOFTMAX1 float32 13.6 -> 10.8, float16 6.0 -> 5.5; rows of 2^17, (512, 131072),
 * LOG_SOFTMAX1 float32 47.0 -> 42.8); SOFTMAX1's kept terms and the row did not both stay in L2 (float32 15.4 ms,
 * float16 6.9). The outputs' rule is the short rows'; the sum, gathered piece by piece, can differ from theirs in
 * the last bit. Returns 0 (outputs untouched) when the general kernel must do it: a range beyond 87, a NaN or an
 * infinity. */
#define LONG_PIECE (64 << 10) /* bytes (measured: 16 KiB 11.9 ms, 32 KiB 11.4, 64 KiB 11.3, 128 KiB 11.3) */
ALWAYS int softmaxes_long(const char *in, char *out, ptrdiff_t n, const int f16, const int log) {
    ptrdiff_t isz = f16 ? 2 : 4, piece = LONG_PIECE / isz;
    float top = -INFINITY, low = INFINITY;
    far_sum u = {0};
    for (ptrdiff_t j = 0; j < n; j += piece)
        if (!far_run_online(in + j * isz, n - j < piece ? n - j : piece, f16, log, in + (j + piece) * isz, &top,
                            &low, &u))
            return 0;
    double v = far_sum_value(&u, f16, log);
    if (v != v) return 0;
    if (log) ls_out_stream(in, out, n, f16, top, v);
    else softmax_run_out(in, out, n, isz, f16, top, v, 1);
    stream_fence();
    return 1;
}

/* A far block of SOFTMAX or LOG_SOFTMAX (softmaxes_far_as): its groups g0 to g0 + gb, their ranges, whether each is
 * plain, and what their outputs need (v: LOG_SOFTMAX's L, SOFTMAX's 1 / sum). */
typedef struct {
    ptrdiff_t g0, gb;
    float m[GROUP_BLOCK], low[GROUP_BLOCK];
    int plain[GROUP_BLOCK];
    double v[GROUP_BLOCK];
} far_block;

/* A run of a far block's groups (pi: the first group's) into their sums as their maxima grow (far_run_online;
 * each group's next run, 1 MiB on in float32 over (0, 2) of (64, 512, 512), too far for the hardware, fetched
 * meanwhile). A separate scan for the maxima had read the block from memory with nothing to compute meanwhile
 * (one thread, Intel, flushed: SOFTMAX1 float32 15.7 -> 14.5 ms, float16 8.9 -> 7.7; LOG_SOFTMAX1 float32 15.3 ->
 * 13.6, float16 8.6 -> 7.9; runs of 64, (512, 512, 64): LOG_SOFTMAX1 float32 25.9 -> 20.8, float16 14.6 -> 13.0).
 * A group stops being plain at an infinity or a range beyond 87 (a NaN entry shows in its sum, see
 * far_run_online). */
ALWAYS void far_sums_step(const char *pi, ptrdiff_t gsi, const rdims *R, const int f16, const int log, far_block *b,
                          far_sum *u) {
    ptrdiff_t rn = R->n[R->nd - 1], step = R->si[R->nd - 2];
    for (int g = 0; g < b->gb; g++) {
        const char *p = pi + g * gsi;
        if (b->plain[g]) b->plain[g] = far_run_online(p, rn, f16, log, p + step, &b->m[g], &b->low[g], &u[g]);
    }
}

/* The outputs of a run of a far block's plain groups (pi, po: the first group's; SOFTMAX's terms computed
 * again), the next run's plain lines fetched (fetch_plain_lines). */
ALWAYS void far_outs_step(const char *pi, ptrdiff_t gsi, char *po, ptrdiff_t gso, const rdims *R, const int f16,
                          const int log, const far_block *b, int stream) {
    ptrdiff_t rn = R->n[R->nd - 1], so = R->so[R->nd - 1], ostep = R->nd > 1 ? R->so[R->nd - 2] : 0;
    for (int g = 0; g < b->gb; g++) {
        if (!b->plain[g]) continue;
        const char *p = pi + g * gsi;
        char *q = po + g * gso;
        if (stream) fetch_plain_lines((uintptr_t)q + (uintptr_t)ostep, rn * so);
        if (log && stream) ls_out_stream(p, q, rn, f16, b->m[g], b->v[g]);
        else if (log) ls_out_run(p, q, R, f16, b->m[g], b->v[g], 0, 1);
        else softmax_run_out(p, q, rn, so, f16, b->m[g], b->v[g], stream);
    }
}

/* One pass over the runs of far blocks: the sums of block `sums` (NULL: none) and the outputs of block `outs`
 * (NULL: none; after them, their fence, and that block's groups out of the plain range by the general kernel). */
ALWAYS void far_pass(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, const rdims *R, const rctx *c,
                     const int f16, const int log, far_block *sums, far_sum *u, const far_block *outs, int stream) {
    ptrdiff_t base = sums ? sums->g0 : outs->g0, back = outs ? outs->g0 - base : 0;
    FOR_RUNS(R, in + base * gsi, out + (outs ? outs->g0 : 0) * gso, pi, po, flat, {
        if (sums) far_sums_step(pi, gsi, R, f16, log, sums, u);
        if (outs) far_outs_step(pi + back * gsi, gsi, po, gso, R, f16, log, outs, stream);
    });
    if (!outs) return;
    if (stream) stream_fence();
    for (int g = 0; g < outs->gb; g++)
        if (!outs->plain[g])
            (log ? log_softmax_c : softmax_exact_c)(in + (outs->g0 + g) * gsi, out + (outs->g0 + g) * gso, R, c);
}

/* LOG_SOFTMAX (`log`) or SOFTMAX of far groups, a block at a time (see FAR_READS): where a block fits FAR_READS
 * (two then fit in L2), each block's outputs go run by run as the next block's sums are read, so that memory sees
 * reads and writes together, as in a copy (a block's sums read alone, then its outputs written alone: over (0, 2)
 * of (64, 512, 512), one thread, caches flushed, SOFTMAX1 float32 15.0 -> 12.6 ms, LOG_SOFTMAX1 float32 14.2 ->
 * 11.6; float16 about the same, bound by its arithmetic). Larger blocks (a page a run: runs of 64 over (0, 2)
 * of (512, 512, 64) make blocks of 2 MiB) go one after the other: two of them overflow L2 (LOG_SOFTMAX1 float32
 * there 21.5 -> 25 ms). Keeping SOFTMAX's terms from the sums' pass in the scratch (two blocks' worth), each run's
 * scaled by exp(its maximum then - the group's) / sum, gained 4-15% more in float32 SOFTMAX1 (within 1.5x of the
 * bound without it) and nothing in float16, for a second rounding path: the terms are computed again. */
ALWAYS void softmaxes_far_as(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count,
                             const rdims *R, const rctx *c, const int f16, const int log) {
    int stream = R->so[R->nd - 1] == c->osize && count * (ptrdiff_t)group_count(R) * c->osize >= STREAM_MIN;
    int overlap = c->far_gb * (ptrdiff_t)group_count(R) * c->isize <= FAR_READS; /* (two blocks in L2) */
    far_block blocks[2], *prev = NULL;
    int i = 0;
    for (ptrdiff_t g0 = 0; g0 < count || prev; g0 += c->far_gb) { /* (past the last block: its outputs) */
        far_block *b = g0 < count ? &blocks[i++ & 1] : NULL;
        far_sum u[GROUP_BLOCK];
        if (b) {
            b->g0 = g0, b->gb = count - g0 < c->far_gb ? count - g0 : c->far_gb;
            for (int g = 0; g < b->gb; g++) b->m[g] = -INFINITY, b->low[g] = INFINITY, b->plain[g] = 1;
            memset(u, 0, (size_t)b->gb * sizeof *u);
        }
        far_pass(in, gsi, out, gso, R, c, f16, log, b, u, prev, stream);
        prev = NULL;
        if (!b) break;
        for (int g = 0; g < b->gb; g++) {
            if (!b->plain[g]) continue;
            b->v[g] = far_sum_value(&u[g], f16, log);
            b->plain[g] = b->v[g] == b->v[g]; /* (a NaN entry) */
        }
        if (overlap) prev = b;
        else far_pass(in, gsi, out, gso, R, c, f16, log, NULL, u, b, stream);
    }
}
static void softmaxes_far(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                          const rctx *c, int log) {
    int f16 = c->in_dtype == ODML_F16;
    if (f16 && log) softmaxes_far_as(in, gsi, out, gso, count, R, c, 1, 1);
    else if (f16) softmaxes_far_as(in, gsi, out, gso, count, R, c, 1, 0);
    else if (log) softmaxes_far_as(in, gsi, out, gso, count, R, c, 0, 1);
    else softmaxes_far_as(in, gsi, out, gso, count, R, c, 0, 0);
}

/* SOFTMAX of one group; `ahead_in`, `ahead_out` (bytes, 0: none): where the next group's input and output lie,
 * fetched meanwhile (a far group's runs are too many streams for the hardware to fetch ahead). */
static void softmax_group(const char *in, char *out, const rdims *R, const rctx *c, ptrdiff_t ahead_in,
                          ptrdiff_t ahead_out) {
    int f16 = c->in_dtype == ODML_F16, osz = f16 ? 2 : 4;
    float stack[SM_STACK + 2 * LANES];
    ptrdiff_t rn = R->n[0];
    if (is_row(R, c) && (rn >= LONG_ROW ? (f16 ? softmaxes_long(in, out, rn, 1, 0) : softmaxes_long(in, out, rn, 0, 0))
                         : f16          ? softmax_rows16(&in, &out, 1, rn, stack, c)
                                        : softmax_rows32(&in, &out, 1, rn, stack, c)))
        return;
    /* The group packed into the scratch row as it is scanned (see group_scan; its later passes then read neither
     * the input's layout nor its memory), its terms then in place there. */
    ptrdiff_t count = (ptrdiff_t)group_count(R);
    float top, low, *keep = scratch_row(count, stack, c);
    group_scan_ahead(in, R, f16, 1, keep, ahead_in, &top, &low);
    if (!(isfinite(top) && low - top >= -87.0f)) {
        softmax_exact_c(in, out, R, c);
        return;
    }
    vf m = splatf(top);
    if (keep) {
        double inv = softmax_copy_inv(keep, count, top, f16);
        int stream = R->so[R->nd - 1] == osz && count * osz >= STREAM_MIN; /* (STREAM_RUN) */
        if (R->nd == 1 && R->so[0] == osz && !stream) { /* one contiguous output run */
            if (f16) softmax_out_kept(out, count, keep, inv, 1);
            else softmax_out_kept(out, count, keep, inv, 0);
            return;
        }
        FOR_RUNS(R, in, out, pi, po, flat, {
            (void)pi; /* (outputs from the copy) */
            softmax_out_copy(keep + flat, po, R->n[R->nd - 1], R->so[R->nd - 1], f16, inv, ahead_out, stream);
        });
        if (stream) stream_fence();
        return;
    }
    /* No scratch row (a group beyond SM_KEEP): float32 keeps its terms in the output (its sum then needs no pass
     * of its own), float16 computes them again. */
    dsum sum = {0};
    fdsum sum16 = {0};
    FOR_RUNS(R, in, out, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], so = R->so[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i += LANES) {
            ptrdiff_t k = n - i < LANES ? n - i : LANES;
            __builtin_prefetch(pi + (i + n) * s); /* the next group, usually adjacent: read while this one computes */
            PREFETCH_NEXT_RUN(R, pi + i * s);
            vf e = softmax_term_of(lanes_f(pi + i * s, s, k, f16, top), m, f16);
            if (k < LANES) e = selectf(IOTA < (vu){0} + (uint32_t)k, e, splatf(0)); /* (padding: no term) */
            if (f16) fdsum_add(&sum16, e);
            else put_lanes_f(po + i * so, so, k, 0, e), dsum_add(&sum, e);
        }
    });
    double inv = 1.0 / (f16 ? fdsum_total(&sum16) : dsum_total(&sum));
    FOR_RUNS(R, in, out, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], so = R->so[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i += LANES) {
            ptrdiff_t k = n - i < LANES ? n - i : LANES;
            vf e = !f16 ? lanes_f(po + i * so, so, k, 0, 0) : softmax_term_of(lanes_f(pi + i * s, s, k, 1, top), m, 1);
            put_lanes_f(po + i * so, so, k, f16, softmax_scaled(e, inv, f16));
        }
    });
}
static void softmax_c(const char *in, char *out, const rdims *R, const rctx *c) { softmax_group(in, out, R, c, 0, 0); }

/* SOFTMAX of LANES float32 rows gsi bytes apart (see the short rows before log_softmax_block; the stages and each
 * row's bits as softmax_rows32's). */
static void softmax_block(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, const rdims *R, const rctx *c) {
    ptrdiff_t n = R->n[0];
    float top[LANES], stack[LANES * (SHORT_ROW + 2 * LANES)], *keep[LANES];
    int32_t ok[LANES];
    double total[LANES];
    vf hi[LANES], lo[LANES];
    int aligned = n >= 16 * LANES;
    block_range(in, gsi, n, top, ok);
    for (int r = 0; r < LANES; r++) {
        keep[r] = stack + r * (n + 2 * LANES);
        if (aligned) keep[r] += ((uintptr_t)(out + r * gso) - (uintptr_t)keep[r]) % (LANES * 4) / 4;
        ssum sum = softmax_sum32(in + r * gsi, out + r * gso, n, LANES, top[r], keep[r], 1);
        hi[r] = sum.hi, lo[r] = sum.lo;
    }
    vf h = rows_sumf(hi), l = rows_sumf(lo); /* (ssum_total's order) */
    for (int r = 0; r < LANES; r++) total[r] = (double)h[r] + (double)l[r];
    for (int r = 0; r < LANES; r++) {
        if (ok[r] && total[r] == total[r]) softmax_out32(out + r * gso, n, keep[r], total[r], aligned);
        else softmax_c(in + r * gsi, out + r * gso, R, c);
    }
}

/* Short rows ROWS_MAX at a time (see softmax_rows32, softmax_rows16); any other group alone. */
static void softmax_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                      const rctx *c) {
    ptrdiff_t g = 0;
    int f16 = c->in_dtype == ODML_F16;
    if (c->far_gb) {
        softmaxes_far(in, gsi, out, gso, count, R, c, 0);
        return;
    }
    if (is_row(R, c) && !f16 && R->n[0] <= SHORT_ROW)
        for (; g + LANES <= count; g += LANES) softmax_block(in + g * gsi, gsi, out + g * gso, gso, R, c);
    if (is_row(R, c) && R->n[0] <= SM_ROWS_LONGEST) {
        float stack[SM_STACK + 2 * LANES];
        for (; g + ROWS_MAX <= count; g += ROWS_MAX) {
            const char *ins[ROWS_MAX];
            char *outs[ROWS_MAX];
            for (int r = 0; r < ROWS_MAX; r++) ins[r] = in + (g + r) * gsi, outs[r] = out + (g + r) * gso;
            if (!(f16 ? softmax_rows16(ins, outs, ROWS_MAX, R->n[0], stack, c)
                      : softmax_rows32(ins, outs, ROWS_MAX, R->n[0], stack, c)))
                for (int r = 0; r < ROWS_MAX; r++) softmax_c(ins[r], outs[r], R, c);
        }
    }
    for (; g < count; g++)
        softmax_group(in + g * gsi, out + g * gso, R, c, g + 1 < count ? gsi : 0, g + 1 < count ? gso : 0);
}

/* SOFTMAX of a strip or a panel (nl lanes: see reduce, log_softmax_s); a strip with a lane out of range (or a max
 * not finite) takes the exact path. */
static void softmax_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R,
                      const rctx *c) {
    int f16 = c->in_dtype == ODML_F16, nv = (nl + LANES - 1) / LANES, next;
    float *wide = c->scratch; /* (the copy, its terms then in place) */
    ptrdiff_t ws;
    vf m[PANEL_MAX], mn[PANEL_MAX];
    dsum inv[PANEL_MAX];
    unsigned exact[PANEL_MAX]; /* a strip's lanes out of range (see below) */
    if (!softmax_panel_start(softmax_s, in, lsi, out, lso, nl, R, c, m, mn, &ws, &next)) return;
    for (int v = 0; v < nv; v++) {
        const char *iv = in + v * LANES * lsi;
        char *ov = out + v * LANES * lso;
        float *wv = wide ? wide + v * LANES : NULL;
        int k = sub_nl(nl, v);
        /* the lanes out of range (or with a maximum not finite) take the exact path, all of them at once after
         * this one has written every lane: a lane's outputs do not depend on its neighbours */
        exact[v] = lane_mask(~((mn[v] - m[v]) >= -87.0f) | ~((m[v] - m[v]) == 0.0f)) & first_lanes(k);
        if (exact[v] == first_lanes(k)) {
            softmax_exact_s(iv, lsi, ov, lso, k, R, c, exact[v]);
            continue;
        }
        dsum sum = {0};
        FOR_RUNS(R, iv, ov, pi, po, flat, {
            ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], so = R->so[R->nd - 1];
            for (ptrdiff_t i = 0; i < n; i++) {
                vf e = softmax_term_of(strip_at(wv, ws, flat + i, pi + i * s, lsi, k, f16), m[v], f16);
                dsum_add(&sum, e);
                if (wv) storef(wv + (flat + i) * ws, e);
                else if (!f16) STRIP_FETCH_W(po + i * so, lso), put_lanes_f(po + i * so, lso, k, 0, e);
            }
        });
        inv[v] = (dsum){1.0 / sum.lo, 1.0 / sum.hi};
    }
    FOR_RUNS(R, in, out, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1], so = R->so[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i++)
            for (int v = 0; v < nv; v++) {
                int k = sub_nl(nl, v);
                if (exact[v] == first_lanes(k)) continue;
                char *to = po + i * so + v * LANES * lso;
                vf e = wide  ? loadf(wide + v * LANES + (flat + i) * ws)
                       : f16 ? softmax_term_of(lanes_f(pi + i * s + v * LANES * lsi, lsi, k, 1, 0), m[v], 1)
                             : lanes_f(to, lso, k, 0, 0);
                if (next) __builtin_prefetch(pi + i * s + (nv + v) * LANES * lsi); /* the next panel's row */
                if (nv > 1) __builtin_prefetch(to + so, 1); /* the next step's row */
                else if (wide || f16) STRIP_FETCH_W(to, lso);
                put_lanes_f(to, lso, k, f16, dsum_scale(e, &inv[v]));
            }
    });
    for (int v = 0; v < nv; v++) {
        int k = sub_nl(nl, v);
        if (exact[v] && exact[v] != first_lanes(k))
            softmax_exact_s(in + v * LANES * lsi, lsi, out + v * LANES * lso, lso, k, R, c, exact[v]);
    }
}

/* ---- SUM, SUM_SQUARE, L1, AVERAGE on floats: terms and sums in double (exact terms: |x| and x*x of a float32
 * are exact there), lane by lane then halving, rounded once to the output type. ---- */
enum { T_SUM, T_SQUARE, T_ABS };

/* A double rounded once to float16 (via float32 rounded to odd, which keeps the second rounding correct). */
ALWAYS uint16_t f64_to_f16(double d) {
    float f = (float)d;
    uint32_t b, inexact = ((double)f != d) & (d == d); /* (no branch: sums are inexact about half the time) */
    memcpy(&b, &f, 4);
    b -= inexact & (fabs((double)f) > fabs(d)); /* (one step toward zero: f is finite and nonzero, or infinite) */
    b |= inexact;
    memcpy(&f, &b, 4);
    return f32_to_f16(f);
}

ALWAYS void store_double(char *p, int f16, double d) {
    if (d != d) d = NAN; /* the default quiet NaN, as the reference: which NaN a sum carries depends on its order */
    if (f16) {
        uint16_t h = f64_to_f16(d);
        memcpy(p, &h, 2);
    } else {
        float f = fabs(d) >= 0x1.ffffffp127 ? (d > 0 ? INFINITY : -INFINITY) : (float)d;
        memcpy(p, &f, 4);
    }
}

/* Adds x's 16 terms into two accumulators of 8 doubles (registers; see widen_lo). */
ALWAYS void add_fterms(vf x, const int term, vdh *lo, vdh *hi) {
    if (term == T_ABS) x = (vf)((vi)x & 0x7fffffff);
    vdh a = widen_lo(x), b = widen_hi(x);
    *lo += term == T_SQUARE ? a * a : a;
    *hi += term == T_SQUARE ? b * b : b;
}

/* What a float sum becomes: itself (SUM, SUM_SQUARE, L1), the mean (AVERAGE), its square root (L2) or its log
 * (LOG_SUM), in double, rounded once by the caller. */
enum { P_NONE, P_MEAN, P_SQRT, P_LOG };
ALWAYS double finish(double sum, const int post, const rdims *R) {
    return post == P_MEAN ? sum / group_count(R) : post == P_SQRT ? sqrt(sum) : post == P_LOG ? log(sum) : sum;
}

/* A group's float sums in double: two chains of vector pairs, and (float16 runs read as bits: see fsum_run_h) the
 * largest magnitude's bits. */
typedef struct {
    vdh a, b, d, e;
    vu top;
} fsums;
_Static_assert(sizeof(fsums) <= FAR_STATE && _Alignof(fsums) <= FAR_ALIGN, "a far block's state");
#define FSUMS_ZERO {{0}, {0}, {0}, {0}, {0}}
ALWAYS double fsums_total(const fsums *t) { return hsum_dh((t->a + t->b) + (t->d + t->e)); }

#if defined(__AVX512F__)
#define HALF_BITS 1
ALWAYS void add_hterm(vdh v, const int term, vdh *acc) { /* (v: a value times 2^-1008, see fsum_run_h) */
    if (term == T_SQUARE) v *= 0x1p1008;
    *acc += term == T_SQUARE ? v * v : v;
}

/* A packed float16 run into a group's sums without conversion instructions (they bound the loop): a half's bits
 * sign-extended to 64, shifted by 42, the sign's copies cleared (and the sign, for L1), read as a double, are the
 * half's value times 2^-1008, subnormals included (onto double subnormals, exactly); the sum scales back exactly
 * (fsums_result). The terms go into the same lanes in the same order as fsum_run_v's from values: the same bits.
 * Exponent 31 would read as a finite value: top keeps the largest magnitude's bits, and a group that holds an
 * infinity or a NaN is summed again from values. */
ALWAYS void fsum_run_h(const char *in, const rdims *R, const int term, const int fetch, fsums *t) {
    const __m512i keep = _mm512_set1_epi64(term == T_ABS ? 0x01ffffffffffffffll : (long long)0x81ffffffffffffffull);
    const __m512i abs = _mm512_set1_epi16(0x7fff);
    __m512i top = (__m512i)t->top;
    vdh a = t->a, b = t->b, d = t->d, e = t->e;
    ptrdiff_t n = R->n[R->nd - 1], i = 0;
#define HALF_TERMS(h) ((vdh)_mm512_and_si512(_mm512_slli_epi64(_mm512_cvtepi16_epi64(h), 42), keep))
#define HALF_TERMS_AT(k) HALF_TERMS(_mm_loadu_si128((const void *)(in + 2 * (i + (k)))))
    for (; i + 32 <= n; i += 32) {
        if (fetch) PREFETCH_NEXT_RUN(R, in + 2 * i);
        top = _mm512_max_epu16(top, _mm512_and_si512(_mm512_loadu_si512(in + 2 * i), abs));
        add_hterm(HALF_TERMS_AT(0), term, &a), add_hterm(HALF_TERMS_AT(8), term, &b);
        add_hterm(HALF_TERMS_AT(16), term, &d), add_hterm(HALF_TERMS_AT(24), term, &e);
    }
    for (; i < n; i += 16) { /* (as fsum_run_v's tail: vectors of 16 into a and b, zeros past the run) */
        __m256i h = _mm256_maskz_loadu_epi16(n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1), in + 2 * i);
        top = _mm512_max_epu16(top, _mm512_and_si512(_mm512_zextsi256_si512(h), abs));
        add_hterm(HALF_TERMS(_mm256_castsi256_si128(h)), term, &a);
        add_hterm(HALF_TERMS(_mm256_extracti128_si256(h, 1)), term, &b);
    }
#undef HALF_TERMS_AT
#undef HALF_TERMS
    t->top = (vu)top, t->a = a, t->b = b, t->d = d, t->e = e;
}
ALWAYS int half_special(vu top) { return _mm512_cmpge_epu16_mask((__m512i)top, _mm512_set1_epi16(0x7c00)) != 0; }
#else
#define HALF_BITS 0
ALWAYS void fsum_run_h(const char *in, const rdims *R, const int term, const int fetch, fsums *t) {
    (void)in, (void)R, (void)term, (void)fetch, (void)t;
}
ALWAYS int half_special(vu top) { return (void)top, 0; }
#endif

/* add_fterms of the packed float32 vector at p, its halves widened as they load (the same terms). */
ALWAYS void add_fterms_at(const char *p, const int term, vdh *lo, vdh *hi) {
    vdh a = widen_at(p), b = widen_at(p + LANES / 2 * 4);
    if (term == T_ABS) a = (vdh)((vlh)a & INT64_MAX), b = (vdh)((vlh)b & INT64_MAX);
    *lo += term == T_SQUARE ? a * a : a;
    *hi += term == T_SQUARE ? b * b : b;
}

/* One run (at pi, the last of R's dimensions, s bytes a step) into a group's sums from values. */
ALWAYS void fsum_run_v(const char *pi, const rdims *R, ptrdiff_t s, int f16, const int term, const int fetch,
                       fsums *t) {
    ptrdiff_t n = R->n[R->nd - 1], i = 0;
    vdh a = t->a, b = t->b, d = t->d, e = t->e;
    for (; i + 2 * LANES <= n; i += 2 * LANES) {
        if (fetch) PREFETCH_NEXT_RUN(R, pi + i * s);
        if (fetch && !f16) PREFETCH_NEXT_RUN(R, pi + (i + LANES) * s);
        if (!f16 && s == 4) {
            add_fterms_at(pi + i * 4, term, &a, &b), add_fterms_at(pi + (i + LANES) * 4, term, &d, &e);
            continue;
        }
        add_fterms(lanes_f(pi + i * s, s, LANES, f16, 0), term, &a, &b);
        add_fterms(lanes_f(pi + (i + LANES) * s, s, LANES, f16, 0), term, &d, &e);
    }
    for (; i < n; i += LANES) add_fterms(lanes_f(pi + i * s, s, n - i < LANES ? n - i : LANES, f16, 0), term, &a, &b);
    t->a = a, t->b = b, t->d = d, t->e = e;
}

/* One run into a group's sums (`bits`: see fsum_run_h; `fetch`, a constant: the next run's lines are fetched on
 * the way, see FAR_FETCH). */
ALWAYS void fsum_run(const char *pi, const rdims *R, int f16, const int term, int bits, const int fetch, fsums *t) {
    ptrdiff_t s = R->si[R->nd - 1], size = f16 ? 2 : 4;
    if (bits) fsum_run_h(pi, R, term, fetch, t);
    else if (s == size) fsum_run_v(pi, R, size, f16, term, fetch, t); /* (a packed run: its stride a constant) */
    else fsum_run_v(pi, R, s, f16, term, fetch, t);
}

/* Whether a group's runs are summed from their bits (packed float16 runs, AVX-512). */
ALWAYS int fsum_bits(const rdims *R, int f16) { return HALF_BITS && f16 && R->si[R->nd - 1] == 2; }

/* A group's sum from its state; 0 when the group's float16 bits held an infinity or a NaN (see fsum_run_h). */
ALWAYS int fsums_result(const fsums *t, int bits, const int term, double *sum) {
    double total = fsums_total(t);
    *sum = bits && term != T_SQUARE ? total * 0x1p1008 : total;
    if (!bits) return 1;
    return !half_special(t->top);
}

/* One group's runs into a fresh state (`bits`: a constant at each call), its sum as fsums_result gives it. */
ALWAYS int fsum_try(const char *in, const rdims *R, int f16, const int term, const int bits, double *sum) {
    fsums t = FSUMS_ZERO;
    if (R->nd == 1) fsum_run(in, R, f16, term, bits, 1, &t); /* (a row: no loop around it) */
    else FOR_RUNS(R, in, NULL, pi, po, flat, fsum_run(pi, R, f16, term, bits, 1, &t));
    return fsums_result(&t, bits, term, sum);
}

/* The sum of one group, from values when its bits held an infinity or a NaN. */
ALWAYS double fsum_of(const char *in, const rdims *R, int f16, const int term) {
    double sum;
    if (!fsum_bits(R, f16) || !fsum_try(in, R, f16, term, 1, &sum)) fsum_try(in, R, f16, term, 0, &sum);
    return sum;
}

ALWAYS void fsum_group(const char *in, char *out, const rdims *R, const rctx *c, const int term, const int post) {
    int f16 = c->in_dtype == ODML_F16;
    store_double(out, f16, finish(f16 ? fsum_of(in, R, 1, term) : fsum_of(in, R, 0, term), post, R));
}

/* store_double of HALF_LANES float32 outputs at out (packed) at once: the conversion rounds as (float) does,
 * overflowing to an infinity at 0x1.ffffffp127 and beyond; a NaN lane stores the default quiet NaN. */
ALWAYS void rows_out32(char *out, vdh v) {
    vfh f = __builtin_convertvector(v, vfh);
    vih nan = f != f;
    f = (vfh)(((vih)f & ~nan) | (nan & (vih)((vfh){0} + NAN)));
    memcpy(out, &f, sizeof f);
}
ALWAYS vdh vsqrt_dh(vdh v) {
    for (int l = 0; l < HALF_LANES; l++) v[l] = sqrt(v[l]); /* (vectorised: one vsqrtpd) */
    return v;
}

/* HALF_LANES packed rows of at most SHORT_SUM entries gsi bytes apart (the bits: see fsum_run_h), their states'
 * horizontal steps together (rows_sumd: hsum_dh's order lane by lane, so each row's sum has fsum_group's bits):
 * at (8, 64, 64) over the last axis, one thread, Intel, per call, calls back to back, REDUCE SUM float32 5.6 ->
 * 4.9 us, float16 7.5 -> 7.1. Float32 outputs are stored a block at a time (rows_out32): in a later session, on a
 * slower day, the same measure went 5.5 -> 4.9 us (onnxruntime 5.9). A row whose bits held an infinity or a NaN is
 * summed again from values. */
#define SHORT_SUM 256
ALWAYS void fsum_rows(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, const rdims *R, const rctx *c,
                      int f16, const int term, const int post, const int bits) {
    vdh w[HALF_LANES];
    int special = 0;
    for (int r = 0; r < HALF_LANES; r++) {
        fetch_row(in + (r + 1) * gsi, R, c); /* (see fextreme_rows) */
        fsums t = FSUMS_ZERO;
        fsum_run(in + r * gsi, R, f16, term, bits, 0, &t);
        w[r] = (t.a + t.b) + (t.d + t.e);
        if (bits) special |= half_special(t.top) << r;
    }
    vdh total = rows_sumd(w);
    if (!f16 && !bits && post != P_LOG && gso == 4) { /* (store_double's rule, lanes together: rows_out32) */
        rows_out32(out, post == P_MEAN ? total / (double)group_count(R) : post == P_SQRT ? vsqrt_dh(total) : total);
        return;
    }
    for (int r = 0; r < HALF_LANES; r++) {
        double sum = bits && term != T_SQUARE ? total[r] * 0x1p1008 : total[r];
        if (special >> r & 1) fsum_try(in + r * gsi, R, f16, term, 0, &sum);
        store_double(out + r * gso, f16, finish(sum, post, R));
    }
}

/* Far runs of adjacent groups (see GROUP_BLOCK); each group's terms in fsum_group's order: the same bits. */
ALWAYS void fsum_groups(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                        const rctx *c, const int term, const int post) {
    int f16 = c->in_dtype == ODML_F16, bits = fsum_bits(R, f16);
    if (!far_blocks(R, gsi, count, c)) {
        ptrdiff_t g = 0;
        if (R->nd == 1 && R->si[0] == c->isize && R->n[0] <= SHORT_SUM)
            for (; g + HALF_LANES <= count; g += HALF_LANES) {
                const char *p = in + g * gsi;
                char *q = out + g * gso;
                if (f16 && bits) fsum_rows(p, gsi, q, gso, R, c, 1, term, post, 1);
                else if (f16) fsum_rows(p, gsi, q, gso, R, c, 1, term, post, 0);
                else fsum_rows(p, gsi, q, gso, R, c, 0, term, post, 0);
            }
        for (; g < count; g++) {
            if (g + 1 < count) fetch_row(in + (g + 1) * gsi, R, c);
            fsum_group(in + g * gsi, out + g * gso, R, c, term, post);
        }
        return;
    }
    fsums stack[GROUP_BLOCK];
    ptrdiff_t per;
    fsums *t = far_states(c, stack, &per);
    FOR_BLOCKS(count, g0, gb, per) {
        for (int g = 0; g < gb; g++) t[g] = (fsums)FSUMS_ZERO;
        FOR_RUNS(R, in + g0 * gsi, NULL, pi, po, flat, {
            FETCH_CONSTANT(gb, gsi,
                           for (int g = 0; g < gb; g++) fsum_run(pi + g * gsi, R, f16, term, bits, FETCH_K, &t[g]));
        });
        for (int g = 0; g < gb; g++) {
            double sum;
            if (!fsums_result(&t[g], bits, term, &sum)) fsum_try(in + (g0 + g) * gsi, R, f16, term, 0, &sum);
            store_double(out + (g0 + g) * gso, f16, finish(sum, post, R));
        }
    }
}

/* A strip, or a panel of strips side by side (nl > LANES: see panel_max_min; each lane's terms in the same order
 * either way). */
ALWAYS void fsum_strip(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R, const rctx *c,
                   const int term, const int post) {
    int f16 = c->in_dtype == ODML_F16, nv = (nl + LANES - 1) / LANES;
    dsum a[PANEL_MAX];
    for (int v = 0; v < nv; v++) a[v] = (dsum){0};
    FOR_RUNS(R, in, NULL, pi, po, flat, {
        ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];
        for (ptrdiff_t i = 0; i < n; i++) {
            if (nv == 1) {
                STRIP_FETCH(pi + i * s, lsi);
                add_fterms(lanes_f(pi + i * s, lsi, nl, f16, 0), term, &a[0].lo, &a[0].hi);
                continue;
            }
            for (int v = 0; v < nv; v++) {
                const char *p = pi + i * s + v * LANES * lsi;
                __builtin_prefetch(p + PANEL_AHEAD * s); /* a later step's row (no fault past the end) */
                add_fterms(lanes_f(p, lsi, sub_nl(nl, v), f16, 0), term, &a[v].lo, &a[v].hi);
            }
        }
    });
    for (int v = 0; v < nv; v++)
        for (int l = 0; l < sub_nl(nl, v); l++)
            store_double(out + (v * LANES + l) * lso, f16, finish(dsum_lane(&a[v], l), post, R));
}

/* ---- SUM, SUM_SQUARE, L1 on integers: terms widened to 64 bits, summed modulo 2^64 (unsigned, so wrapping is
 * defined) and the low bytes stored: exact modulo the output's width, as the reference's int64 sums. ---- */

#define ISUM_T(NAME, T, W)                                                                                      \
    typedef T NAME##_iv VEC(T);                                                                                 \
    typedef W NAME##_wv VEC(W);                                                                                 \
    ALWAYS vq NAME##_terms(const char *p, ptrdiff_t s, ptrdiff_t nl, const int term) {                         \
        NAME##_iv v = {0};                                                                                      \
        if (nl == LANES && s == sizeof(T)) memcpy(&v, p, sizeof v);                                             \
        else for (ptrdiff_t l = 0; l < nl; l++) { T e; memcpy(&e, p + l * s, sizeof e); v[l] = e; }             \
        vq u = (vq)__builtin_convertvector(v, NAME##_wv);                                                       \
        if (term == T_ABS && __builtin_types_compatible_p(W, int64_t)) {                                        \
            vq neg = (vq)((vsq)u >> 63);                                                                        \
            u = (u ^ neg) - neg;                                                                                \
        }                                                                                                       \
        return term == T_SQUARE ? u * u : u;                                                                    \
    }                                                                                                           \
    ALWAYS void NAME##_isum_c(const char *in, char *out, const rdims *R, const rctx *c, const int term) {      \
        vq a = {0};                                                                                             \
        FOR_RUNS(R, in, NULL, pi, po, flat, {                                                                   \
            ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];                                                \
            for (ptrdiff_t i = 0; i < n; i += LANES)                                                            \
                a += NAME##_terms(pi + i * s, s, n - i < LANES ? n - i : LANES, term);                          \
        });                                                                                                     \
        uint64_t t = 0;                                                                                         \
        for (int l = 0; l < LANES; l++) t += a[l];                                                              \
        memcpy(out, &t, (size_t)c->osize); /* the low bytes (little-endian): wrapped to the width */            \
    }                                                                                                           \
    ALWAYS void NAME##_isum_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R,  \
                              const rctx *c, const int term) {                                                  \
        vq a = {0};                                                                                             \
        FOR_RUNS(R, in, NULL, pi, po, flat, {                                                                   \
            ptrdiff_t n = R->n[R->nd - 1], s = R->si[R->nd - 1];                                                \
            for (ptrdiff_t i = 0; i < n; i++)                                                                   \
                STRIP_FETCH(pi + i * s, lsi), a += NAME##_terms(pi + i * s, lsi, nl, term);                     \
        });                                                                                                     \
        for (int l = 0; l < nl; l++) { uint64_t t = (uint64_t)a[l]; memcpy(out + l * lso, &t, (size_t)c->osize); } \
    }

/* Every (type, function) pair as a red_contig/red_strip pair. */
#define RED_FN(ID, CALL_C, CALL_R, CALL_S)                                                                      \
    static void ID##_c(const char *in, char *out, const rdims *R, const rctx *c) { CALL_C; }                    \
    static void ID##_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count,                \
                       const rdims *R, const rctx *c) {                                                         \
        CALL_R;                                                                                                 \
    }                                                                                                           \
    static void ID##_s(const char *in, ptrdiff_t lsi, char *out, ptrdiff_t lso, int nl, const rdims *R,         \
                       const rctx *c) {                                                                         \
        CALL_S;                                                                                                 \
    }
#define FSUM_FN(ID, TERM, POST)                                                                                 \
    RED_FN(ID, fsum_group(in, out, R, c, TERM, POST), fsum_groups(in, gsi, out, gso, count, R, c, TERM, POST),   \
           fsum_strip(in, lsi, out, lso, nl, R, c, TERM, POST))
FSUM_FN(fsum, T_SUM, P_NONE)
FSUM_FN(fsquare, T_SQUARE, P_NONE)
FSUM_FN(fl1, T_ABS, P_NONE)
FSUM_FN(faverage, T_SUM, P_MEAN)
FSUM_FN(fl2, T_SQUARE, P_SQRT)
FSUM_FN(flog_sum, T_SUM, P_LOG)

#define RED_INT_TYPES(X)                                                                                        \
    X(i8, int8_t, int64_t, ODML_I8) X(i16, int16_t, int64_t, ODML_I16) X(i32, int32_t, int64_t, ODML_I32)       \
    X(i64, int64_t, int64_t, ODML_I64) X(u8, uint8_t, uint64_t, ODML_U8) X(u16, uint16_t, uint64_t, ODML_U16)   \
    X(u32, uint32_t, uint64_t, ODML_U32) X(u64, uint64_t, uint64_t, ODML_U64)
#define ISUM_DEFINE(NAME, T, W, DT)                                                                             \
    ISUM_T(NAME, T, W)                                                                                          \
    RED_FN(NAME##_sum, NAME##_isum_c(in, out, R, c, T_SUM), RUN_LOOP(NAME##_sum),                               \
           NAME##_isum_s(in, lsi, out, lso, nl, R, c, T_SUM))                                                   \
    RED_FN(NAME##_square, NAME##_isum_c(in, out, R, c, T_SQUARE), RUN_LOOP(NAME##_square),                      \
           NAME##_isum_s(in, lsi, out, lso, nl, R, c, T_SQUARE))                                                \
    RED_FN(NAME##_l1, NAME##_isum_c(in, out, R, c, T_ABS), RUN_LOOP(NAME##_l1),                                 \
           NAME##_isum_s(in, lsi, out, lso, nl, R, c, T_ABS))
RED_INT_TYPES(ISUM_DEFINE)

#define RED_ALL_TYPES(X) X(f32, float, float, ODML_F32) X(f16, uint16_t, float, ODML_F16) RED_INT_TYPES(X)
#define EXTREME_DEFINE(NAME, T, W, DT) EXTREME_T(NAME, DT)
RED_ALL_TYPES(EXTREME_DEFINE)

/* Float MAX/MIN: the max-min scan, then the value itself; a group holding a NaN, or whose result is a zero
 * (+0 or -0: the first one decides), takes the element ARGMAX/ARGMIN selects, bits and all. */
/* MAX/MIN's output from the group's maximum and minimum. */
ALWAYS void fextreme_put(const char *in, char *out, const rdims *R, const rctx *c, float top, float low) {
    int f16 = c->in_dtype == ODML_F16;
    float v = c->last & ODML_MIN ? low : top;
    if (top != top || v == 0.0f) {
        (f16 ? f16_extreme_c : f32_extreme_c)(in, out, R, c);
    } else if (f16) {
        uint16_t h = f32_to_f16(v); /* (exact: v is one of the halves) */
        memcpy(out, &h, 2);
    } else {
        memcpy(out, &v, 4);
    }
}

static void fextreme_c(const char *in, char *out, const rdims *R, const rctx *c) {
    float top, low;
    if (c->last & ODML_MIN) group_max_min(in, R, c->in_dtype == ODML_F16, &top, &low);
    else group_scan(in, R, c->in_dtype == ODML_F16, 0, &top, &low); /* (MAX: maxima only) */
    fextreme_put(in, out, R, c, top, low);
}

/* LANES packed rows of at most SHORT_SUM entries gsi bytes apart, their horizontal steps together (rows_max):
 * the per-row steps cost as much as a short row's terms. A block holding a NaN or an infinity, and a row whose
 * result is a zero (its sign: see fextreme_put), go row by row. */
ALWAYS void fextreme_rows(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, const rdims *R, const rctx *c,
                          int f16, const int lo) {
    vf w[LANES];
    vi odd = {0};
    for (int r = 0; r < LANES; r++) {
        fetch_row(in + (r + 1) * gsi, R, c); /* (the next row, as RUN_LOOP_AHEAD: further ahead was slower) */
        scan_state t = SCAN_START; /* (group_scan's loops: lanes' maxima, minima with `lo`, and odd) */
        if (f16) scan_run(in + r * gsi, R->n[0], 2, 1, R, 0, lo, NULL, 0, &t.mv, &t.mv2, &t.mn, &t.mn2, &odd);
        else scan_run(in + r * gsi, R->n[0], 4, 0, R, 0, lo, NULL, 0, &t.mv, &t.mv2, &t.mn, &t.mn2, &odd);
        w[r] = lo ? vmin(t.mn, t.mn2) : vmax(t.mv, t.mv2);
    }
    vf t = lo ? rows_min(w) : rows_max(w);
    for (int r = 0; r < LANES; r++) {
        float v = t[r];
        if (ANY(odd) || v == 0.0f) {
            fextreme_c(in + r * gsi, out + r * gso, R, c);
        } else if (f16) {
            uint16_t h = f32_to_f16(v); /* (exact: one of the halves) */
            memcpy(out + r * gso, &h, 2);
        } else {
            memcpy(out + r * gso, &v, 4);
        }
    }
}

/* Far runs of adjacent groups (see GROUP_BLOCK). */
static void fextreme_r(const char *in, ptrdiff_t gsi, char *out, ptrdiff_t gso, ptrdiff_t count, const rdims *R,
                       const rctx *c) {
    int f16 = c->in_dtype == ODML_F16;
    if (!far_blocks(R, gsi, count, c)) {
        ptrdiff_t g = 0;
        if (R->nd == 1 && R->si[0] == c->isize && R->n[0] <= SHORT_SUM)
            for (; g + LANES <= count; g += LANES) {
                const char *p = in + g * gsi;
                char *q = out + g * gso;
                if (c->last & ODML_MIN) fextreme_rows(p, gsi, q, gso, R, c, f16, 1);
                else fextreme_rows(p, gsi, q, gso, R, c, f16, 0);
            }
        for (; g < count; g++) {
            if (g + 1 < count) fetch_row(in + (g + 1) * gsi, R, c);
            fextreme_c(in + g * gsi, out + g * gso, R, c);
        }
        return;
    }
    scan_state stack[GROUP_BLOCK];
    ptrdiff_t per;
    scan_state *t = far_states(c, stack, &per);
    FOR_BLOCKS(count, g0, gb, per) {
        for (int g = 0; g < gb; g++) t[g] = (scan_state)SCAN_START;
        FOR_RUNS(R, in + g0 * gsi, NULL, pi, po, flat, {
            FETCH_CONSTANT(gb, gsi,
                           for (int g = 0; g < gb; g++) scan_far_run(pi + g * gsi, R, f16, NULL, 0, FETCH_K, &t[g]));
        });
        for (int g = 0; g < gb; g++) {
            float top, low;
            scan_finish(in + (g0 + g) * gsi, R, f16, &t[g], &top, &low);
            fextreme_put(in + (g0 + g) * gsi, out + (g0 + g) * gso, R, c, top, low);
        }
    }
}

/* The kernels of this block (0), or -1 when op is not one of them or does not take in_dtype. */
static int red_pick_red(int op, int in_dtype, red_contig *c, red_run *r, red_strip *s) {
#define PICK(ID) return *c = ID##_c, *r = ID##_r, *s = ID##_s, 0
    int f = in_dtype == ODML_F32 || in_dtype == ODML_F16;
    switch (op) {
    case ODML_OP_SOFTMAX: if (f) PICK(softmax); return -1;
    case ODML_OP_AVERAGE: if (f) PICK(faverage); return -1;
    case ODML_OP_L2: if (f) PICK(fl2); return -1;
    case ODML_OP_LOG_SUM: if (f) PICK(flog_sum); return -1;
    case ODML_OP_MAX:
        if (f) return *c = fextreme_c, *r = fextreme_r, *s = in_dtype == ODML_F32 ? f32_extreme_s : f16_extreme_s, 0;
        switch (in_dtype) {
#define EXTREME_CASE(NAME, T, W, DT) case DT: PICK(NAME##_extreme);
            RED_ALL_TYPES(EXTREME_CASE)
        }
        return -1;
    }
    if (f) {
        switch (op) {
        case ODML_OP_SUM: PICK(fsum);
        case ODML_OP_SUM_SQUARE: PICK(fsquare);
        case ODML_OP_L1: PICK(fl1);
        }
        return -1;
    }
    switch (in_dtype) {
#define ISUM_CASE(NAME, T, W, DT)                                                                               \
    case DT:                                                                                                    \
        if (op == ODML_OP_SUM) PICK(NAME##_sum);                                                                \
        if (op == ODML_OP_SUM_SQUARE) PICK(NAME##_square);                                                      \
        if (op == ODML_OP_L1) PICK(NAME##_l1);                                                                  \
        return -1;
        RED_INT_TYPES(ISUM_CASE)
    }
    return -1;
#undef PICK
}

/* ---- the engine ---- */
typedef struct {
    rdims R;
    int nk; /* kept dimensions other than the lane dimension */
    ptrdiff_t kn[ODML_MAXDIM], ksi[ODML_MAXDIM], kso[ODML_MAXDIM];
    ptrdiff_t nstrips, lane_n, lane_si, lane_so; /* strip mode when nstrips > 0 */
    ptrdiff_t strip_lanes;                       /* lanes a strip call takes: LANES, or a panel's (softmaxes) */
    const char *in;
    char *out;
    rctx c;
    red_contig contig;
    red_run run;
    red_strip strip;
} red_plan;

static void red_task(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    const red_plan *P = ctx;
    rctx c = P->c; /* this task's copy, with its scratch row */
    if (c.scratch_n) /* (aligned for far blocks' vector states; NULL: the slower paths) */
        c.scratch = aligned_alloc(FAR_ALIGN, ((size_t)c.scratch_n * sizeof(float) + FAR_ALIGN - 1) &
                                                 ~(size_t)(FAR_ALIGN - 1));
    ptrdiff_t per = P->nstrips ? P->nstrips : 1, k = begin / per, strip = begin % per, idx[ODML_MAXDIM];
    const char *in = P->in;
    char *out = P->out;
    for (int d = P->nk - 1; d >= 0; d--) { /* unravel the first group once; then count (no divisions) */
        idx[d] = k % P->kn[d];
        k /= P->kn[d];
        in += idx[d] * P->ksi[d];
        out += idx[d] * P->kso[d];
    }
    const int last = P->nk - 1;
    for (ptrdiff_t item = begin; item < end; item++) {
        if (!P->nstrips) {
            if (P->run && last >= 0) { /* the groups up to the end of the task or of the last kept dimension */
                ptrdiff_t g = P->kn[last] - idx[last] < end - item ? P->kn[last] - idx[last] : end - item;
                P->run(in, P->ksi[last], out, P->kso[last], g, &P->R, &c);
                in += (g - 1) * P->ksi[last], out += (g - 1) * P->kso[last], idx[last] += g - 1, item += g - 1;
            } else {
                P->contig(in, out, &P->R, &c);
            }
        } else {
            ptrdiff_t first = strip * P->strip_lanes;
            ptrdiff_t nl = P->lane_n - first < P->strip_lanes ? P->lane_n - first : P->strip_lanes;
            P->strip(in + first * P->lane_si, P->lane_si, out + first * P->lane_so, P->lane_so, (int)nl, &P->R, &c);
            if (++strip < per) continue;
            strip = 0;
        }
        for (int d = P->nk - 1; d >= 0; d--) {
            in += P->ksi[d];
            out += P->kso[d];
            if (++idx[d] < P->kn[d]) break;
            in -= P->ksi[d] * P->kn[d];
            out -= P->kso[d] * P->kn[d];
            idx[d] = 0;
        }
    }
    free(c.scratch);
}

static int red_pick(int op, int in_dtype, red_contig *c, red_run *r, red_strip *s) {
    if (!red_pick_red(op, in_dtype, c, r, s)) return 0;
    if (op == ODML_OP_ARGMAX) {
        switch (in_dtype) {
#define ARGMAX_CASE(NAME, DT) case DT: *c = NAME##_argmax_c; *r = NAME##_argmax_r; *s = NAME##_argmax_s; return 0;
            case ODML_F32: case ODML_F16:
                *c = argmax_f_c, *r = argmax_f_r, *s = in_dtype == ODML_F32 ? f32_argmax_s : f16_argmax_s;
                return 0;
            ARGMAX_CASE(i8, ODML_I8)
            ARGMAX_CASE(i16, ODML_I16) ARGMAX_CASE(i32, ODML_I32) ARGMAX_CASE(i64, ODML_I64)
            ARGMAX_CASE(u8, ODML_U8) ARGMAX_CASE(u16, ODML_U16) ARGMAX_CASE(u32, ODML_U32)
            ARGMAX_CASE(u64, ODML_U64)
        }
        return -1;
    }
    if (in_dtype != ODML_F32 && in_dtype != ODML_F16) return -1;
    if (op == ODML_OP_HARDMAX) { *c = hardmax_c; *r = hardmax_r; *s = hardmax_s; return 0; }
    if (op == ODML_OP_LOG_SOFTMAX) { *c = log_softmax_c; *r = log_softmax_r; *s = log_softmax_s; return 0; }
    return -1;
}

static int reduce(int op, const odml_array *in, const odml_array *out, const odml_params *prm) {
    red_plan P = {.in = in->data, .out = out->data};
    P.c = (rctx){.in_dtype = in->dtype, .out_dtype = out->dtype, .isize = in->itemsize, .osize = out->itemsize,
                 .last = prm->flags & (ODML_LAST | ODML_MIN)};

    if (red_pick(op, in->dtype, &P.contig, &P.run, &P.strip)) return -1;
    ptrdiff_t bytes = in->itemsize;
    for (int d = 0; d < in->ndim; d++) bytes *= in->shape[d];
    P.c.fetch = bytes > FETCH_MIN;
    int full = ODML_FULL_OUTPUT(op);
    int lane = -1, nk = 0;
    ptrdiff_t kn[ODML_MAXDIM], ksi[ODML_MAXDIM], kso[ODML_MAXDIM];
    for (int d = 0; d < in->ndim; d++) {
        ptrdiff_t n = in->shape[d], si = in->strides[d], so = full ? out->strides[d] : 0;
        if (n == 1) continue;
        if (!(prm->axes >> d & 1)) {
            if (lane < 0 && si == in->itemsize) lane = nk;
            kn[nk] = n, ksi[nk] = si, kso[nk] = out->strides[d], nk++;
            continue;
        }
        rdims *R = &P.R;
        int m = R->nd - 1;
        if (R->nd && R->si[m] == si * n && R->so[m] == so * n) { /* merge with the previous reduced dim */
            R->n[m] *= n, R->si[m] = si, R->so[m] = so;
        } else {
            R->n[R->nd] = n, R->si[R->nd] = si, R->so[R->nd] = so, R->nd++;
        }
    }
    if (!P.R.nd) P.R = (rdims){1, {1}, {in->itemsize}, {out->itemsize}};
    ptrdiff_t count = (ptrdiff_t)group_count(&P.R);
    /* A scratch row per task for groups beyond the stack's. */
    int wants = op == ODML_OP_LOG_SOFTMAX || op == ODML_OP_SOFTMAX;
    if (wants && count > SM_STACK && count <= SM_KEEP) /* (LOG_SOFTMAX: two rows, see log_softmax_group) */
        P.c.scratch_n = (op == ODML_OP_LOG_SOFTMAX ? 2 : 1) * (count + 2 * LANES);
    int inner = P.R.nd - 1, contig = P.R.si[inner] == in->itemsize;
    if (lane < 0 && !(contig && P.R.n[inner] >= LANES) && nk) { /* no contiguous dimension, or a run shorter than a
                                                                   * vector: gather lanes along the densest kept one */
        lane = 0;
        for (int k = 1; k < nk; k++)
            if (ksi[k] < ksi[lane]) lane = k;
    }
    if (lane >= 0 && !(contig && P.R.n[inner] >= LANES)) {
        P.lane_n = kn[lane], P.lane_si = ksi[lane], P.lane_so = kso[lane];
        /* the softmaxes' strips keep a copy, a vector a step (see strip_max_min); with lanes adjacent in memory they
         * go as panels of strips side by side, as many as fit PANEL_BYTES (see panel_max_min) */
        ptrdiff_t nv = 1, need = (P.lane_n + LANES - 1) / LANES;
        int adjacent = P.lane_si == in->itemsize && P.lane_so == out->itemsize, fl = FLOAT_KIND(in->dtype) >= 0;
        int float_sum = fl && (op == ODML_OP_SUM || op == ODML_OP_SUM_SQUARE || op == ODML_OP_L1 ||
                           op == ODML_OP_AVERAGE || op == ODML_OP_L2 || op == ODML_OP_LOG_SUM);
        if (wants && adjacent) {
            nv = PANEL_BYTES / ((ptrdiff_t)sizeof(float) * LANES * (count > 0 ? count : 1)) - 1;
            nv = nv < 1 ? 1 : nv > PANEL_MAX ? PANEL_MAX : nv > need ? need : nv;
        } else if ((float_sum || op == ODML_OP_ARGMAX || op == ODML_OP_MAX) && adjacent) {
            nv = need > PANEL_MAX ? PANEL_MAX : need; /* (no copy: as many strips as the panel holds) */
        }
        P.strip_lanes = nv * LANES;
        P.nstrips = (P.lane_n + P.strip_lanes - 1) / P.strip_lanes;
        ptrdiff_t ws = nv > 1 ? (nv + 1) * LANES : LANES;
        P.c.scratch_n = wants && count <= SM_KEEP / ws ? count * ws : 0;
    } else {
        lane = -1;
    }
    ptrdiff_t items = P.nstrips ? P.nstrips : 1;
    for (int k = 0; k < nk; k++) {
        if (k == lane) continue;
        P.kn[P.nk] = kn[k], P.ksi[P.nk] = ksi[k], P.kso[P.nk] = kso[k], P.nk++;
        items *= kn[k];
    }
    if (wants && !P.nstrips && P.nk && far_adjacent(&P.R, P.ksi[P.nk - 1], &P.c) && count <= SM_KEEP) {
        /* far groups (see FAR_READS) where their runs lie a multiple of 4 KiB apart (as they share cache sets, one
         * group's fetch of the next is gone before its use), and for float32 LOG_SOFTMAX where its runs are long
         * (shorter ones go faster a group at a time); not for an input within one block's FAR_READS, which stays in
         * L2 anyway and goes faster a group at a time, each term computed once (over (0, 2) of (8, 64, 64) float32,
         * one thread, per call: SOFTMAX1 22.6 -> 19.5 us, LOG_SOFTMAX1 24.7 -> 21.5; from memory 110 -> 85) */
        int ls32 = op == ODML_OP_LOG_SOFTMAX && in->dtype == ODML_F32;
        if (bytes > FAR_READS && (P.R.si[P.R.nd - 2] % 4096 == 0 || (ls32 && P.R.n[P.R.nd - 1] >= 512))) {
            ptrdiff_t gb = FAR_READS / (count * in->itemsize), piece = FAR_PIECE / (P.R.n[P.R.nd - 1] * in->itemsize);
            gb = piece > gb ? piece : gb;
            gb = gb < 1 ? 1 : gb > GROUP_BLOCK ? GROUP_BLOCK : gb > P.kn[P.nk - 1] ? P.kn[P.nk - 1] : gb;
            P.c.far_gb = (int)gb;
        }
    }
    int fl = FLOAT_KIND(in->dtype) >= 0, one_pass = op == ODML_OP_ARGMAX || op == ODML_OP_HARDMAX ||
        (fl && (op == ODML_OP_SUM || op == ODML_OP_SUM_SQUARE || op == ODML_OP_L1 || op == ODML_OP_AVERAGE ||
                op == ODML_OP_L2 || op == ODML_OP_LOG_SUM || op == ODML_OP_MAX));
    if (one_pass && !P.nstrips && P.nk && far_adjacent(&P.R, P.ksi[P.nk - 1], &P.c) && P.kn[P.nk - 1] > GROUP_BLOCK &&
        bytes > FAR_SMALL) {
        /* a far block's states in the scratch (see FAR_GROUPS; none where the groups go one at a time: far_blocks) */
        P.c.far_gb = (int)(P.kn[P.nk - 1] < FAR_GROUPS ? P.kn[P.nk - 1] : FAR_GROUPS);
        P.c.scratch_n = (ptrdiff_t)P.c.far_gb * FAR_STATE / (ptrdiff_t)sizeof(float);
    }
    odml_parallel(red_task, &P, items, 1, prm->nthreads);
    return 0;
}

const odml_isa CAT(odml_isa_, ODML_ISA) = {
#define STR_(x) #x
#define STR(x) STR_(x)
    STR(ODML_ISA), elementwise, reduce};
