c     t/fortran_self.f -- PVM's Fortran calls in one task started from
c     the shell (t/fortran.sh): tids, groups named with trailing and
c     leading blanks and with blanks only, pvmfpack/pvmfunpack of every
c     datatype (STRING too) sent to itself, bad datatypes, psend/precv,
c     pvmfconfig's and pvmftasks' one row per call, options, buffers,
c     pvmfperror.  Every check prints one line, "ok NAME" or "not ok
c     NAME (got N)"; the same program passes under PVM 3.4.6.
      program fself
      include 'fpvm3.h'
      integer mytid, t, n, info, inum, old, v, bufid, i, first
      integer nh, na, dtid, speed, nt, ptid, flag, bytes, tag, src
      integer*2 s(3), s2(3)
      integer iv(6), iv2(6)
      integer*8 l, l2
      real r(2), r2(2)
      double precision d(2), d2(2)
      complex c, c2
      double complex z, z2
      character*5 b, b2
      character*8 str
      character*4 names(3), names2(3)
      character*64 host, arch
      character*1 h1
      character*32 aout

      call pvmfmytid(mytid)
      call chk(mytid .gt. 0, 'pvmfmytid gives a tid', mytid)
      call pvmfparent(t)
      call chk(t .eq. PvmNoParent, 'pvmfparent from the shell', t)
      call pvmfsiblings(n, 0, t)
      call chk(n .eq. 1 .and. t .eq. mytid, 'pvmfsiblings: itself', n)
      call pvmfsiblings(n, 1, t)
      call chk(t .eq. PvmNoTask, 'pvmfsiblings index 1: PvmNoTask', t)

c     group names: trailing blanks go, leading ones stay
      call pvmfjoingroup('fself   ', inum)
      call chk(inum .eq. 0, 'join ''fself   '': instance 0', inum)
      call pvmfgettid('fself', 0, t)
      call chk(t .eq. mytid, 'gettid ''fself'' 0 is this task', t)
      call pvmfgetinst('fself     ', mytid, inum)
      call chk(inum .eq. 0, 'getinst ''fself     ''', inum)
      call pvmfgsize('fself', n)
      call chk(n .eq. 1, 'gsize ''fself'' is 1', n)
      call pvmfjoingroup('    ', inum)
      call chk(inum .eq. PvmNullGroup, 'join blanks: PvmNullGroup',
     +         inum)
      call pvmfjoingroup('', inum)
      call chk(inum .eq. PvmNullGroup, 'join '''': PvmNullGroup', inum)
      call pvmfgsize(' fself', n)
      call chk(n .eq. PvmNoGroup, 'gsize '' fself'': PvmNoGroup', n)
      call pvmfbarrier('   ', 1, info)
      call chk(info .eq. PvmNullGroup, 'barrier on blanks', info)
      call pvmfjoingroup('fself', inum)
      call chk(inum .eq. PvmDupGroup, 'join again: PvmDupGroup', inum)
      call pvmfgetinst('fself', 12345, inum)
      call chk(inum .eq. PvmNotInGroup, 'getinst of a stranger', inum)
      call pvmfgettid('fself', 5, t)
      call chk(t .eq. PvmNoInst, 'gettid of instance 5', t)

c     every datatype to itself and back
      b = 'hello'
      s(1) = 1
      s(2) = -2
      s(3) = 32000
      do 10 i = 1, 6
         iv(i) = i * 1000
         iv2(i) = 0
 10   continue
      l = 1234567890
      r(1) = 1.5
      r(2) = -2.25
      d(1) = 3.141592653589793d0
      d(2) = -1.0d300
      c = (1.0, -2.0)
      z = (3.0d0, 4.0d100)
      names(1) = 'ab  '
      names(2) = 'cd e'
      names(3) = '  fg'
      call pvmfinitsend(PVMDEFAULT, bufid)
      call pvmfpack(BYTE1, b, 5, 1, info)
      call pvmfpack(INTEGER2, s, 3, 1, info)
      call pvmfpack(INTEGER4, iv, 3, 2, info)
      call pvmfpack(INTEGER8, l, 1, 1, info)
      call pvmfpack(REAL4, r, 2, 1, info)
      call pvmfpack(REAL8, d, 2, 1, info)
      call pvmfpack(COMPLEX8, c, 1, 1, info)
      call pvmfpack(COMPLEX16, z, 1, 1, info)
      call pvmfpack(STRING, 'abcdefgh', 5, 1, info)
      call pvmfpack(STRING, names, 12, 1, info)
      call chk(info .eq. 0, 'pack every datatype', info)
      call pvmfpack(99, iv, 1, 1, info)
      call chk(info .eq. PvmBadParam, 'pack datatype 99', info)
      call pvmfpack(-1, iv, 1, 1, info)
      call chk(info .eq. PvmBadParam, 'pack datatype -1', info)
      call pvmfsend(mytid, 7, info)
      call chk(info .eq. 0, 'send to itself', info)
      call pvmfrecv(-1, 7, bufid)
      call pvmfbufinfo(bufid, bytes, tag, src, info)
      call chk(tag .eq. 7 .and. src .eq. mytid .and. bytes .gt. 60,
     +         'bufinfo: tag, source, bytes', bytes)
      call pvmfunpack(BYTE1, b2, 5, 1, info)
      call chk(b2 .eq. 'hello', 'BYTE1', info)
      call pvmfunpack(INTEGER2, s2, 3, 1, info)
      call chk(s2(1) .eq. 1 .and. s2(2) .eq. -2 .and. s2(3) .eq. 32000,
     +         'INTEGER2', info)
      call pvmfunpack(INTEGER4, iv2, 3, 2, info)
      call chk(iv2(1) .eq. 1000 .and. iv2(3) .eq. 3000 .and.
     +         iv2(5) .eq. 5000 .and. iv2(2) .eq. 0,
     +         'INTEGER4 stride 2', iv2(3))
      call pvmfunpack(INTEGER8, l2, 1, 1, info)
      call chk(l2 .eq. l, 'INTEGER8', info)
      call pvmfunpack(REAL4, r2, 2, 1, info)
      call chk(r2(1) .eq. 1.5 .and. r2(2) .eq. -2.25, 'REAL4', info)
      call pvmfunpack(REAL8, d2, 2, 1, info)
      call chk(d2(1) .eq. d(1) .and. d2(2) .eq. d(2), 'REAL8', info)
      call pvmfunpack(COMPLEX8, c2, 1, 1, info)
      call chk(c2 .eq. c, 'COMPLEX8', info)
      call pvmfunpack(COMPLEX16, z2, 1, 1, info)
      call chk(z2 .eq. z, 'COMPLEX16', info)
      str = 'xxxxxxxx'
      call pvmfunpack(STRING, str, 5, 1, info)
      call chk(str .eq. 'abcdexxx', 'STRING of 5 into a CHARACTER*8',
     +         info)
      call pvmfunpack(STRING, names2, 12, 1, info)
      call chk(names2(1) .eq. 'ab  ' .and. names2(2) .eq. 'cd e' .and.
     +         names2(3) .eq. '  fg', 'STRING of a CHARACTER*4 array',
     +         info)
      call pvmfunpack(77, iv, 1, 1, info)
      call chk(info .eq. PvmBadParam, 'unpack datatype 77', info)

c     psend/precv, receives that find nothing
      call pvmfpsend(mytid, 8, iv, 3, INTEGER4, info)
      call pvmfprecv(mytid, 8, iv2, 6, INTEGER4, src, tag, n, info)
      call chk(src .eq. mytid .and. tag .eq. 8 .and. n .eq. 12 .and.
     +         iv2(3) .eq. 3000, 'psend, precv (alen in bytes)', n)
      call pvmftrecv(-1, 9, 0, 10000, bufid)
      call chk(bufid .eq. 0, 'trecv for 10 ms: nothing', bufid)
      call pvmfnrecv(-1, 9, bufid)
      call chk(bufid .eq. 0, 'nrecv: nothing', bufid)
      call pvmfprobe(-1, 9, bufid)
      call chk(bufid .eq. 0, 'probe: nothing', bufid)

c     one host per pvmfconfig call, blank-padded, cut, starting over
      call pvmfconfig(nh, na, dtid, host, arch, speed, info)
      call chk(info .eq. 1 .and. nh .ge. 1 .and. dtid .gt. 0 .and.
     +         len_trim(host) .gt. 0 .and. len_trim(arch) .gt. 0,
     +         'pvmfconfig: the first host', info)
      first = dtid
      call chk(host(len_trim(host) + 1:) .eq. ' ',
     +         'pvmfconfig: the name is blank-padded', len_trim(host))
      do 20 i = 1, nh
         call pvmfconfig(n, na, dtid, h1, arch, speed, info)
 20   continue
      call chk(dtid .eq. first .and. h1 .eq. host(1:1),
     +         'pvmfconfig: after the last host the first, cut', dtid)
      n = -1
      call pvmfconfig(n, na, dtid, host, arch, speed, info)
      call chk(info .eq. 1 .and. dtid .eq. first,
     +         'pvmfconfig: nhost -1 starts over', dtid)
      call pvmftasks(mytid, nt, t, ptid, dtid, flag, aout, info)
      call chk(info .eq. 1 .and. nt .eq. 1 .and. t .eq. mytid,
     +         'pvmftasks of this task', nt)

c     options and buffers
      call pvmfsetopt(PVMROUTE, PVMDONTROUTE, old)
      call pvmfgetopt(PVMROUTE, v)
      call chk(old .eq. PVMALLOWDIRECT .and. v .eq. PVMDONTROUTE,
     +         'setopt, getopt PvmRoute', v)
      call pvmfinitsend(PVMRAW, bufid)
      call pvmfgetsbuf(v)
      call chk(bufid .gt. 0 .and. v .eq. bufid, 'initsend, getsbuf', v)
      call pvmfmkbuf(PVMDEFAULT, n)
      call pvmfsetsbuf(n, old)
      call chk(old .eq. bufid, 'mkbuf, setsbuf', old)
      call pvmffreebuf(bufid, info)
      call chk(info .eq. 0, 'freebuf', info)
      call pvmfperror('fself   ', info)
      call chk(info .eq. 0, 'perror', info)

      call pvmflvgroup('fself ', info)
      call chk(info .eq. 0, 'leave ''fself ''', info)
      call pvmflvgroup('fself', info)
      call chk(info .eq. PvmNoGroup, 'leave again: PvmNoGroup', info)
      call pvmfexit(info)
      call chk(info .eq. 0, 'pvmfexit', info)
      end
