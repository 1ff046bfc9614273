/* Portable SIMD for the kernels: GCC/Clang vector extensions as wide as one register of the ISA variant being
 * compiled (LANES floats: 16 with AVX-512, 8 with AVX/AVX2, 4 with SSE2, NEON and plain C). Wider vectors than
 * the registers look free but are not: GCC keeps them in memory and moves them through general registers, which
 * made its AVX2 build of 16-lane vectors 10-40x slower than NumPy. So kernels are written for any LANES (a power
 * of two, 4 to 16), and only the f16 conversions and non-temporal stores need x86 intrinsics, chosen by the -m
 * flags in force. */
#ifndef ODML_SIMD_H
#define ODML_SIMD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define LANES 16
#define HALF_LANES 8
#elif defined(__AVX__)
#define LANES 8
#define HALF_LANES 4
#else
#define LANES 4
#define HALF_LANES 2
#endif
#define VEC(T) __attribute__((vector_size(LANES * sizeof(T))))
typedef float vf VEC(float);
typedef int32_t vi VEC(int32_t);
typedef uint32_t vu VEC(uint32_t);
typedef double vd VEC(double);

#define ALWAYS static inline __attribute__((always_inline, unused)) /* unused: not every kind is used by every ISA build */

/* Horizontal reductions by halving (log2(LANES) steps, a fixed order: the same bits on every call). */
#define HALF_STEP(T, n, v, OP) /* v (n lanes of T) -> its two halves combined by OP (n/2 lanes) */            \
    ({                                                                                                          \
        typedef T h_ __attribute__((vector_size((n) / 2 * sizeof(T))));                                         \
        h_ a_, b_;                                                                                              \
        memcpy(&a_, &(v), sizeof a_), memcpy(&b_, (char *)&(v) + sizeof a_, sizeof b_);                         \
        OP(a_, b_);                                                                                             \
    })
#if LANES == 16
#define HALVES(T, NAME, OP)                                                                                     \
    ALWAYS T NAME(T __attribute__((vector_size(LANES * sizeof(T)))) v) {                                        \
        __auto_type a = HALF_STEP(T, 16, v, OP);                                                                \
        __auto_type b = HALF_STEP(T, 8, a, OP);                                                                 \
        __auto_type c = HALF_STEP(T, 4, b, OP);                                                                 \
        return OP(c[0], c[1]);                                                                                  \
    }
#elif LANES == 8
#define HALVES(T, NAME, OP)                                                                                     \
    ALWAYS T NAME(T __attribute__((vector_size(LANES * sizeof(T)))) v) {                                        \
        __auto_type b = HALF_STEP(T, 8, v, OP);                                                                 \
        __auto_type c = HALF_STEP(T, 4, b, OP);                                                                 \
        return OP(c[0], c[1]);                                                                                  \
    }
#else
#define HALVES(T, NAME, OP)                                                                                     \
    ALWAYS T NAME(T __attribute__((vector_size(LANES * sizeof(T)))) v) {                                        \
        __auto_type c = HALF_STEP(T, 4, v, OP);                                                                 \
        return OP(c[0], c[1]);                                                                                  \
    }
#endif
#define ADD_(a, b) ((a) + (b))
HALVES(double, hsum_d, ADD_)
HALVES(int32_t, hsum_i, ADD_)

/* ---- The horizontal reductions of N vectors of N lanes at once (a block of rows, one vector each): lane r of
 * the result is OP over the lanes of w[r], combined in the halving order above (lane i with lane i + N/2, then
 * i + N/4, ...: the bits of reducing each vector alone), at under three instructions a vector instead of
 * 2 log2(N). A level pairs w[2j] and w[2j+1], whose lanes hold segments of 2h partial results (a segment a
 * row, w[2j]'s rows then w[2j+1]'s), and halves the segments: lo takes each segment's first h lanes, hi its last
 * h, and OP(lo, hi) lands in w[j]. w is overwritten; the result is w[0]. ---- */
#define TR_I(p, h, o) (((p) / (h)) * 2 * (h) + (p) % (h) + (o)) /* lane p's source in the pair's 2N lanes */
#define TR_2(h, o) TR_I(0, h, o), TR_I(1, h, o)
#define TR_4(h, o) TR_2(h, o), TR_I(2, h, o), TR_I(3, h, o)
#define TR_8(h, o) TR_4(h, o), TR_I(4, h, o), TR_I(5, h, o), TR_I(6, h, o), TR_I(7, h, o)
#define TR_16(h, o)                                                                                             \
    TR_8(h, o), TR_I(8, h, o), TR_I(9, h, o), TR_I(10, h, o), TR_I(11, h, o), TR_I(12, h, o), TR_I(13, h, o),      \
        TR_I(14, h, o), TR_I(15, h, o)
#define TR_LEVEL(N, w, k, h, OP)                                                                                \
    for (int j_ = 0; j_ < (k) / 2; j_++)                                                                        \
        (w)[j_] = OP(__builtin_shufflevector((w)[2 * j_], (w)[2 * j_ + 1], TR_##N(h, 0)),                         \
                     __builtin_shufflevector((w)[2 * j_], (w)[2 * j_ + 1], TR_##N(h, h)));
#define TR_REDUCE_2(w, OP) TR_LEVEL(2, w, 2, 1, OP)
#define TR_REDUCE_4(w, OP) TR_LEVEL(4, w, 4, 2, OP) TR_LEVEL(4, w, 2, 1, OP)
#define TR_REDUCE_8(w, OP) TR_LEVEL(8, w, 8, 4, OP) TR_LEVEL(8, w, 4, 2, OP) TR_LEVEL(8, w, 2, 1, OP)
#define TR_REDUCE_16(w, OP)                                                                                     \
    TR_LEVEL(16, w, 16, 8, OP) TR_LEVEL(16, w, 8, 4, OP) TR_LEVEL(16, w, 4, 2, OP) TR_LEVEL(16, w, 2, 1, OP)
#define TR_REDUCE_(N, w, OP) TR_REDUCE_##N(w, OP)
#define TR_REDUCE(N, w, OP) TR_REDUCE_(N, w, OP) /* (N: LANES or HALF_LANES, expanded to its number first) */

/* ---- Lane comparisons (masks: all ones where true), max and min: on AVX2 and SSE2 the native instruction on
 * each register-wide piece of the vector (one piece at LANES 8 and 4), elsewhere the operators (AVX-512;
 * non-x86 machines). vmax/vmin are the instructions' max/min: b where either is NaN. ---- */
#if defined(__AVX512F__) || !defined(__SSE2__)
ALWAYS vi cmp_lt(vf a, vf b) { return a < b; }
ALWAYS vi cmp_le(vf a, vf b) { return a <= b; }
ALWAYS vi cmp_eq(vf a, vf b) { return a == b; }
ALWAYS vi cmp_neq(vf a, vf b) { return a != b; } /* (true for NaN, as C's !=) */
ALWAYS vi icmp_gt(vi a, vi b) { return a > b; }
#if defined(__AVX512F__)
ALWAYS vf vmax(vf a, vf b) { return (vf)_mm512_max_ps((__m512)a, (__m512)b); }
ALWAYS vf vmin(vf a, vf b) { return (vf)_mm512_min_ps((__m512)a, (__m512)b); }
#else
ALWAYS vf vmax(vf a, vf b) { vi m = a > b; return (vf)(((vi)a & m) | ((vi)b & ~m)); }
ALWAYS vf vmin(vf a, vf b) { vi m = a < b; return (vf)(((vi)a & m) | ((vi)b & ~m)); }
#endif
#else
#if defined(__AVX__)
typedef __m256 piece_f;
typedef __m256i piece_i;
#define P_LT(x, y) _mm256_cmp_ps(x, y, _CMP_LT_OQ)
#define P_LE(x, y) _mm256_cmp_ps(x, y, _CMP_LE_OQ)
#define P_EQ(x, y) _mm256_cmp_ps(x, y, _CMP_EQ_OQ)
#define P_NEQ(x, y) _mm256_cmp_ps(x, y, _CMP_NEQ_UQ)
#define P_MAX _mm256_max_ps
#define P_MIN _mm256_min_ps
#if defined(__AVX2__)
#define P_IGT _mm256_cmpgt_epi32
#endif
#else
typedef __m128 piece_f;
typedef __m128i piece_i;
#define P_LT _mm_cmplt_ps
#define P_LE _mm_cmple_ps
#define P_EQ _mm_cmpeq_ps
#define P_NEQ _mm_cmpneq_ps
#define P_MAX _mm_max_ps
#define P_MIN _mm_min_ps
#define P_IGT _mm_cmpgt_epi32
#endif
/* r = FN(a, b) piece by piece, through memory that the compiler keeps in registers. */
#define PIECEWISE(R, P, FN, a, b)                                                                               \
    ({                                                                                                          \
        R r_;                                                                                                   \
        for (int p_ = 0; p_ < (int)(sizeof r_ / sizeof(P)); p_++) {                                             \
            P x_, y_;                                                                                           \
            memcpy(&x_, (const char *)&(a) + p_ * sizeof x_, sizeof x_);                                        \
            memcpy(&y_, (const char *)&(b) + p_ * sizeof y_, sizeof y_);                                        \
            x_ = (P)FN(x_, y_);                                                                                 \
            memcpy((char *)&r_ + p_ * sizeof x_, &x_, sizeof x_);                                               \
        }                                                                                                       \
        r_;                                                                                                     \
    })
ALWAYS vi cmp_lt(vf a, vf b) { return PIECEWISE(vi, piece_f, P_LT, a, b); }
ALWAYS vi cmp_le(vf a, vf b) { return PIECEWISE(vi, piece_f, P_LE, a, b); }
ALWAYS vi cmp_eq(vf a, vf b) { return PIECEWISE(vi, piece_f, P_EQ, a, b); }
ALWAYS vi cmp_neq(vf a, vf b) { return PIECEWISE(vi, piece_f, P_NEQ, a, b); }
ALWAYS vf vmax(vf a, vf b) { return PIECEWISE(vf, piece_f, P_MAX, a, b); }
ALWAYS vf vmin(vf a, vf b) { return PIECEWISE(vf, piece_f, P_MIN, a, b); }
#if defined(P_IGT)
ALWAYS vi icmp_gt(vi a, vi b) { return PIECEWISE(vi, piece_i, P_IGT, a, b); }
#else /* (AVX without AVX2: no 8-lane integer compare) */
ALWAYS vi icmp_gt(vi a, vi b) { return a > b; }
#endif
#endif
ALWAYS vi cmp_gt(vf a, vf b) { return cmp_lt(b, a); }
ALWAYS vi cmp_ge(vf a, vf b) { return cmp_le(b, a); }
ALWAYS vi is_nan(vf x) { return cmp_neq(x, x); }

/* Unaligned whole-vector load and store (memcpy compiles to one move per register). */
ALWAYS vf loadf(const void *p) { vf v; memcpy(&v, p, sizeof v); return v; }
ALWAYS void storef(void *p, vf v) { memcpy(p, &v, sizeof v); }
ALWAYS float loadf1(const void *p) { float f; memcpy(&f, p, sizeof f); return f; } /* (any alignment) */
ALWAYS void storef1(void *p, float f) { memcpy(p, &f, sizeof f); }
ALWAYS vf selectf(vi m, vf a, vf b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); }
ALWAYS vf splatf(float x) { /* (from the bits: {0} + x would make a -0.0 +0.0) */
    int32_t b;
    memcpy(&b, &x, 4);
    return (vf)((vi){0} + b);
}
ALWAYS vi splati(int32_t x) { vi v = {0}; return v + x; }

/* ---- float16 <-> float32, exact (NumPy's conversions: f16->f32 exact, f32->f16 round to nearest even). ---- */
static inline float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else {
        float f = (float)man * 0x1p-24f; /* subnormal (or zero): exact */
        memcpy(&bits, &f, 4);
        bits |= sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t f32_to_f16(float f) {
#if defined(__F16C__) /* (the same bits as below for every float, NaNs included: checked) */
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) /* inf or NaN: keep a quiet NaN's top payload bits */
        return (uint16_t)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 | ((a >> 13) & 0x3ff) : 0));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
    if (a < 0x38800000u) { /* below 2^-14: subnormal half; let the FPU round (x * 2^24 is exact in range) */
        float t;
        uint32_t ab = a;
        memcpy(&t, &ab, 4);
        return (uint16_t)(sign | (uint32_t)lrintf(t * 0x1p24f));
    }
    uint32_t r = a + 0x0fffu + ((a >> 13) & 1); /* round to nearest even on the 13 dropped bits */
    return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
#endif
}

/* 16 halves -> 16 floats and back. */
ALWAYS vf load_f16(const void *p) {
#if defined(__AVX512F__)
    return (vf)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
#elif defined(__F16C__) /* (LANES 8) */
    __m256 r = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    vf v;
    memcpy(&v, &r, sizeof v);
    return v;
#else
    uint16_t h[LANES];
    memcpy(h, p, sizeof h);
    vf v;
    for (int i = 0; i < LANES; i++) v[i] = f16_to_f32(h[i]);
    return v;
#endif
}

ALWAYS void store_f16(void *p, vf v) {
#if defined(__AVX512F__)
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph((__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__F16C__) /* (LANES 8) */
    __m256 r;
    memcpy(&r, &v, sizeof r);
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
    uint16_t h[LANES];
    for (int i = 0; i < LANES; i++) h[i] = f32_to_f16(v[i]);
    memcpy(p, h, sizeof h);
#endif
}

/* Non-temporal store of a vector of floats (p aligned to its size; callers align to 64 bytes): large outputs
 * bypass the caches instead of evicting the input that is still to be read. A plain store where there is no such
 * instruction. */
ALWAYS void stream_f32(void *p, vf v) {
#if defined(__AVX512F__)
    _mm512_stream_ps((float *)p, (__m512)v);
#elif defined(__AVX__)
    __m256 r;
    memcpy(&r, &v, sizeof r);
    _mm256_stream_ps((float *)p, r);
#else
    storef(p, v);
#endif
}

ALWAYS void stream_fence(void) {
#if defined(__AVX2__) || defined(__AVX512F__)
    _mm_sfence();
#endif
}

/* a * b + c, fused where the ISA has FMA (kernels whose result must match NumPy bit for bit do not use it). */
ALWAYS vf fmadd(vf a, vf b, vf c) {
#if defined(__AVX512F__)
    return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__FMA__) /* (LANES 8) */
    __m256 x, y, z;
    memcpy(&x, &a, 32), memcpy(&y, &b, 32), memcpy(&z, &c, 32);
    x = _mm256_fmadd_ps(x, y, z);
    vf r;
    memcpy(&r, &x, 32);
    return r;
#else
    return a * b + c;
#endif
}

#if defined(__AVX512F__)
/* tab[idx & 31] in each lane (tab: 32 floats, aligned to 64 bytes): one permute of two registers. */
ALWAYS vf lookup32(const float *tab, vi idx) {
    return (vf)_mm512_permutex2var_ps(_mm512_load_ps(tab), (__m512i)idx, _mm512_load_ps(tab + 16));
}
#endif

/* Non-temporal store of n bytes (16 or 32, p aligned to n) from v; a plain copy elsewhere and for other sizes. */
ALWAYS void stream_bytes(void *p, const void *v, size_t n) {
#if defined(__AVX2__) || defined(__AVX512F__)
    __m256i t = _mm256_setzero_si256();
    memcpy(&t, v, n <= 32 ? n : 32);
    if (n == 16) _mm_stream_si128((__m128i *)p, _mm256_castsi256_si128(t));
    else if (n == 32) _mm256_stream_si256((__m256i *)p, t);
    else memcpy(p, v, n);
#else
    memcpy(p, v, n);
#endif
}

/* A vector stored as halves, streamed (p aligned to 2 * LANES bytes). */
ALWAYS void stream_f16(void *p, vf v) {
    uint16_t h[LANES];
    store_f16(h, v);
    stream_bytes(p, h, sizeof h);
}

/* Any lane of a mask (lanes 0 or -1) set: one test, for per-vector fast paths. */
#define OR_(a, b) ((a) | (b))
HALVES(int32_t, hor_i, OR_)
ALWAYS int any_set(vi m) {
#if defined(__AVX512F__)
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0;
#elif defined(__AVX2__) /* (LANES 8) */
    __m256i r;
    memcpy(&r, &m, 32);
    return !_mm256_testz_si256(r, r);
#else
    return hor_i(m) != 0;
#endif
}

/* t[idx] per lane (0 <= idx < 16): a 16-entry table lookup, one permute (AVX2: one per half of the table, the
 * half picked by bit 3 of idx moved to the sign bit). */
#if defined(__AVX512F__)
ALWAYS vf lookup16(const float *t, vi idx) { return (vf)_mm512_permutexvar_ps((__m512i)idx, _mm512_loadu_ps(t)); }
#elif defined(__AVX2__)
ALWAYS vf lookup16(const float *t, vi idx) {
    __m256i i;
    memcpy(&i, &idx, 32);
    __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t), i), hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t + 8), i);
    __m256 r = _mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
    vf v;
    memcpy(&v, &r, 32);
    return v;
}
#endif

/* Per-ISA forms of three conversion steps that the generic vector code spells as several compares and
 * selects: min(max(v, lo), hi) with a NaN going to lo; v rounded to int32 ties to even (|v| < 2^22); and an int32
 * clamp. */
#if defined(__AVX512F__)
#define clampf_nan_lo(v, lo, hi) ((vf)_mm512_min_ps(_mm512_max_ps((__m512)(v), _mm512_set1_ps(lo)), _mm512_set1_ps(hi)))
#define round_i32(v) ((vi)_mm512_cvtps_epi32((__m512)(v)))
#define clamp_i32(v, lo, hi)                                                                                    \
    ((vi)_mm512_min_epi32(_mm512_max_epi32((__m512i)(v), _mm512_set1_epi32(lo)), _mm512_set1_epi32(hi)))
#else
ALWAYS vf clampf_nan_lo(vf v, float lo, float hi) {
    v = selectf(cmp_gt(v, splatf(lo)), v, splatf(lo));
    return selectf(cmp_lt(v, splatf(hi)), v, splatf(hi));
}
ALWAYS vi round_i32(vf v) { return (vi)(v + 12582912.0f) - (vi)splatf(12582912.0f); } /* 1.5 * 2^23 */
ALWAYS vi clamp_i32(vi v, int32_t lo, int32_t hi) {
    vi m = icmp_gt(v, splati(lo));
    v = (v & m) | (splati(lo) & ~m);
    m = icmp_gt(splati(hi), v);
    return (v & m) | (splati(hi) & ~m);
}
#endif

/* c - a * b, fused where the ISA has FMA (saves the negation that fmadd(-a, b, c) costs). */
ALWAYS vf fnmadd(vf a, vf b, vf c) {
#if defined(__AVX512F__)
    return (vf)_mm512_fnmadd_ps((__m512)a, (__m512)b, (__m512)c);
#else
    return fmadd(-a, b, c);
#endif
}

#endif
