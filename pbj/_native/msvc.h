/* msvc.h: what MSVC lacks of the GCC/Clang extensions the engine's sources use, for the Windows wheels.
 *
 * setup.py forces this header into every source when the compiler is MSVC (/FI); GCC and Clang never see it.
 * GNU attributes (only `noinline` and `always_inline` are used: hints, not semantics) are dropped, and the
 * overflow-checked 64-bit arithmetic that GCC and Clang give as builtins (used where there is no __int128)
 * is written out. */
#ifndef PBJ_MSVC_H
#define PBJ_MSVC_H
#if defined(_MSC_VER) && !defined(__clang__)
#include <stdint.h>

#define __attribute__(x)

static __inline int pbj_msvc_mul_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : (a != 0 && b < INT64_MAX / a))) return 1;
    *r = a * b;
    return 0;
}

static __inline int pbj_msvc_add_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 1;
    *r = a + b;
    return 0;
}

#define __builtin_mul_overflow(a, b, r) pbj_msvc_mul_overflow_i64((a), (b), (r))
#define __builtin_add_overflow(a, b, r) pbj_msvc_add_overflow_i64((a), (b), (r))
#endif
#endif
