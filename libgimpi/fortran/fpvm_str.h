/*  fpvm_str.h — what every file of the Fortran binding needs: Fortran strings to C and
 *  back (PVM's rules: an input loses its trailing blanks, an output is blank-padded or cut
 *  to the Fortran length) and the failures the binding itself reports.
 */
#ifndef GIMPI_FPVM_STR_H
#define GIMPI_FPVM_STR_H

#include <stddef.h>

/*  A malloc'd, NUL-terminated copy of the len bytes at s without their trailing blanks
 *  ("" for blanks only or len 0; s may then be NULL); NULL when out of memory. */
char *fpvm_str_in(const char *s, size_t len);
/*  The same without stripping anything (pvmfperror's message). */
char *fpvm_str_raw(const char *s, size_t len);
/*  Writes C string src into the Fortran string dst of len bytes: cut to len, or padded
 *  with blanks.  src NULL is "". */
void fpvm_str_out(char *dst, size_t len, const char *src);
/*  Reports a failure of Fortran call fn ("pvmfpack") found by the binding itself, as the
 *  C calls report theirs (pvm_errno, PvmAutoErr), and returns code. */
int fpvm_fail(const char *fn, int code);

#endif
