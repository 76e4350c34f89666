c     t/fortran_chk.f - the check routine of the Fortran test programs
c     (t/fortran_*.f): each check prints one line that
c     t/fortran_lib.sh turns into TAP.  fbuild and pbuild build it into
c     every one of them.

c     prints "ok NAME" when cond holds, else "not ok NAME (got GOT)"
      subroutine chk(cond, name, got)
      logical cond
      character*(*) name
      integer got
      if (cond) then
         write (*, '(A,A)') 'ok ', name
      else
         write (*, '(A,A,A,I12,A)') 'not ok ', name, ' (got', got, ')'
      endif
      end
