/*  fpvm_str.c — Fortran strings to C and back for the Fortran binding (fpvm_str.h), and
 *  its own failures.  gfortran passes a CHARACTER argument as its address plus its length
 *  by value, with no NUL; PVM's libfpvm copied the string into a bounded buffer without
 *  its trailing blanks and refused longer ones (PvmBadParam beyond 31 bytes for a group,
 *  255 for a host).  These copies have no bound.
 */
#include "fortran/fpvm_str.h"
#include "pvm/pvm_ctx.h"
#include "pvm3.h"

#include <stdlib.h>
#include <string.h>

/*  A NUL-terminated copy of n bytes at s. */
static char *s_copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        if (n)
            memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/*  A copy without the trailing blanks. */
char *fpvm_str_in(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    return s_copy(s, len);
}

/*  A copy as given. */
char *fpvm_str_raw(const char *s, size_t len)
{
    return s_copy(s, len);
}

/*  C to Fortran: cut or blank-padded. */
void fpvm_str_out(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n > len)
        n = len;
    if (n)
        memcpy(dst, src, n);
    if (len > n)
        memset(dst + n, ' ', len - n);
}

/*  A failure of the binding's own, through the PVM layer's reporting. */
int fpvm_fail(const char *fn, int code)
{
    return pvm_ctx_fail(pvm_ctx_current(), fn, code);
}
