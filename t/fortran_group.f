c     t/fortran_group.f -- PVM's Fortran group calls among 4 members
c     (t/fortran_group.sh): started by gimpirun -np 4, or from the shell,
c     when it spawns the 3 others itself as PVM's examples do (also under
c     PVM 3.4.6).  The group's name is a CHARACTER*16 (trailing blanks).
c     Members join, meet at barriers, reduce with PvmSum, PvmMax, PvmMin,
c     PvmProduct and a Fortran function, gather, scatter and bcast.
c     Instance 0 prints one line per check, "ok NAME" or "not ok NAME
c     (got N)"; the others count their own failed checks, and the last
c     check is that the sum of the counts is 0.
      program fgroup
      include 'fpvm3.h'
      integer NPROC
      parameter (NPROC = 4)
      external PvmSum, PvmMax, PvmMin, PvmProduct, fmul
      integer mytid, ptid, inum, info, nsib, t, i, n, bad, bufid
      integer tids(NPROC), iv(3), jv(3), kv(3), all(NPROC)
      integer part(2), whole(2 * NPROC)
      double precision dv(1)
      character*16 group
      character*13 msg
      logical sent
      common /fails/ bad

      bad = 0
      group = 'fgroup'
      call pvmfmytid(mytid)
      call pvmfparent(ptid)
      call pvmfsiblings(nsib, 0, t)
      call pvmfjoingroup(group, inum)
      if (ptid .eq. PvmNoParent .and. nsib .eq. 1) then
         call pvmfspawn('fortran_group', PVMTASKDEFAULT, '*',
     +                  NPROC - 1, tids, n)
         if (n .ne. NPROC - 1) then
            write (*, '(A,I3)') 'not ok spawn of 3 members: ', n
            call pvmflvgroup(group, info)
            call pvmfexit(info)
            stop
         endif
      endif
      call pvmfbarrier(group, NPROC, info)
      call gchk(inum, info .eq. 0, 'barrier of 4 on a padded name',
     +         info)
      call gchk(inum, inum .ge. 0 .and. inum .lt. NPROC,
     +         'instances 0 to 3', inum)
      call pvmfgsize('fgroup', n)
      call gchk(inum, n .eq. NPROC, 'gsize is 4', n)
      call pvmfgettid(group, inum, t)
      call pvmfgetinst('fgroup  ', mytid, i)
      call gchk(inum, t .eq. mytid .and. i .eq. inum,
     +         'gettid and getinst agree', t)

c     the predefined reduce functions as EXTERNALs, and a Fortran one
      iv(1) = inum + 1
      iv(2) = 10 * (inum + 1)
      iv(3) = -inum
      jv(1) = iv(1)
      jv(2) = iv(2)
      jv(3) = iv(3)
      call pvmfreduce(PvmSum, iv, 3, INTEGER4, 11, group, 0, info)
      call gchk(inum, info .eq. 0, 'reduce PvmSum returns 0', info)
      if (inum .eq. 0) call gchk(inum, iv(1) .eq. 10 .and.
     +    iv(2) .eq. 100 .and. iv(3) .eq. -6, 'PvmSum INTEGER4', iv(1))
      kv(1) = jv(1)
      kv(2) = jv(3)
      call pvmfreduce(PvmMax, kv, 2, INTEGER4, 12, group, 0, info)
      if (inum .eq. 0) call gchk(inum, kv(1) .eq. 4 .and. kv(2) .eq. 0,
     +    'PvmMax INTEGER4', kv(1))
      kv(1) = jv(1)
      kv(2) = jv(3)
      call pvmfreduce(PvmMin, kv, 2, INTEGER4, 13, group, 0, info)
      if (inum .eq. 0) call gchk(inum, kv(1) .eq. 1 .and. kv(2) .eq. -3,
     +    'PvmMin INTEGER4', kv(1))
      kv(1) = jv(1)
      call pvmfreduce(PvmProduct, kv, 1, INTEGER4, 14, group, 0, info)
      if (inum .eq. 0) call gchk(inum, kv(1) .eq. 24,
     +    'PvmProduct INTEGER4', kv(1))
      dv(1) = 0.5d0 * (inum + 1)
      call pvmfreduce(fmul, dv, 1, REAL8, 15, group, 0, info)
      if (inum .eq. 0) call gchk(inum, dv(1) .eq. 1.5d0,
     +    'a Fortran reduce function on REAL8', info)

c     gather, scatter, bcast
      call pvmfgather(all, 100 + inum, 1, INTEGER4, 16, group, 0, info)
      call gchk(inum, info .eq. 0, 'gather returns 0', info)
      if (inum .eq. 0) call gchk(inum, all(1) .eq. 100 .and.
     +    all(4) .eq. 103, 'gather INTEGER4 in instance order', all(4))
      do 10 i = 1, 2 * NPROC
         whole(i) = i
 10   continue
      call pvmfscatter(part, whole, 2, INTEGER4, 17, group, 0, info)
      call gchk(inum, info .eq. 0 .and. part(1) .eq. 2 * inum + 1 .and.
     +         part(2) .eq. 2 * inum + 2, 'scatter INTEGER4', part(1))
      if (inum .eq. 0) then
         call pvmfinitsend(PVMDEFAULT, bufid)
         call pvmfpack(STRING, 'hello fortran', 13, 1, info)
         call pvmfbcast(group, 18, info)
         sent = info .eq. 0
      else
         call pvmftrecv(-1, 18, 20, 0, bufid)
         call pvmfunpack(STRING, msg, 13, 1, info)
         sent = bufid .gt. 0 .and. msg .eq. 'hello fortran'
      endif
      call gchk(inum, sent, 'bcast of a STRING: sent, and arrives',
     &          info)
      call pvmfreduce(PvmSum, 0, 1, INTEGER4, 19, '   ', 0, info)
      call gchk(inum, info .eq. PvmNullGroup,
     +         'reduce on a blank name: PvmNullGroup', info)

c     the members' own failures, summed at instance 0
      n = bad
      call pvmfreduce(PvmSum, n, 1, INTEGER4, 20, group, 0, info)
      if (inum .eq. 0) call gchk(inum, n .eq. 0,
     +    'every member''s own checks passed', n)
      call pvmfbarrier(group, NPROC, info)
      call pvmflvgroup(group, info)
      call pvmfexit(info)
      end

c     x(i) = x(i) * y(i): a reduce function written in Fortran
      subroutine fmul(datatype, x, y, num, info)
      integer datatype, num, info, i
      double precision x(num), y(num)
      do 10 i = 1, num
         x(i) = x(i) * y(i)
 10   continue
      info = 0
      end

c     instance 0 prints its check line (chk); the others count their
c     failures in /fails/
      subroutine gchk(inum, cond, name, got)
      integer inum, got, bad
      logical cond
      character*(*) name
      common /fails/ bad
      if (inum .ne. 0) then
         if (.not. cond) bad = bad + 1
      else
         call chk(cond, name, got)
      endif
      end
