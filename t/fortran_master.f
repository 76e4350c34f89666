c     t/fortran_master.f -- pvmfspawn of a Fortran program and messages
c     with it (t/fortran_group.sh; also under PVM 3.4.6): spawns
c     fortran_slave with where '*', with PVMTASKHOST and a host name
c     padded with blanks, with a program name padded with blanks, and
c     fails on an unknown host and program; pvmfmcast of an INTEGER4 and
c     a STRING, the replies; pvmftasks sees the children; pvmfnotify of
c     their exits once told to go.  One line per check: "ok NAME" or
c     "not ok NAME (got N)".
      program fmaster
      include 'fpvm3.h'
      integer mytid, nh, na, dtid, speed, info, n, i, j, t, bufid
      integer tids(4), bad(1), who, par, val, kids, ntask, ptid, flag
      integer seen
      character*64 host, arch
      character*4 s
      character*32 aout

      call pvmfmytid(mytid)
      call pvmfconfig(nh, na, dtid, host, arch, speed, info)
      call pvmfspawn('fortran_slave', PVMTASKDEFAULT, '*', 2, tids, n)
      call chk(n .eq. 2 .and. tids(1) .gt. 0 .and. tids(2) .gt. 0,
     +         'spawn 2 anywhere (where ''*'')', n)
      call pvmfspawn('fortran_slave', PVMTASKHOST, host, 1, tids(3), n)
      call chk(n .eq. 1 .and. tids(3) .gt. 0,
     +         'spawn on the host pvmfconfig named (padded)', tids(3))
      call pvmfspawn('fortran_slave     ', PVMTASKDEFAULT, ' ', 1,
     +               tids(4), n)
      call chk(n .eq. 1 .and. tids(4) .gt. 0,
     +         'spawn a padded program name, where blank', tids(4))
      call pvmfspawn('fortran_slave', PVMTASKHOST, 'nosuchhost   ', 1,
     +               bad, n)
      call chk(n .eq. 0 .and. bad(1) .eq. PvmNoHost,
     +         'spawn on an unknown host: PvmNoHost', bad(1))
      call pvmfspawn('fortran_nosuchprogram', PVMTASKDEFAULT, '*', 1,
     +               bad, n)
      call chk(n .eq. 0 .and. bad(1) .eq. PvmNoFile,
     +         'spawn of an unknown program: PvmNoFile', bad(1))

      call pvmfnotify(PVMTASKEXIT, 9, 4, tids, info)
      call chk(info .eq. 0, 'notify of their exits', info)
      call pvmfinitsend(PVMDEFAULT, bufid)
      call pvmfpack(INTEGER4, 21, 1, 1, info)
      call pvmfpack(STRING, 'ping', 4, 1, info)
      call pvmfmcast(4, tids, 1, info)
      call chk(info .eq. 0, 'mcast to the 4 children', info)
      n = 0
      do 20 i = 1, 4
         call pvmftrecv(-1, 2, 30, 0, bufid)
         if (bufid .le. 0) goto 20
         call pvmfunpack(INTEGER4, who, 1, 1, info)
         call pvmfunpack(INTEGER4, par, 1, 1, info)
         call pvmfunpack(INTEGER4, val, 1, 1, info)
         call pvmfunpack(STRING, s, 4, 1, info)
         do 15 j = 1, 4
            if (who .eq. tids(j) .and. par .eq. mytid .and.
     +          val .eq. 42 .and. s .eq. 'pong') n = n + 1
 15      continue
 20   continue
      call chk(n .eq. 4, 'each child answered: its tid, parent, 42',
     +         n)
c     the children (all known: they answered), one pvmftasks row
c     per call
      kids = 0
      ntask = -1
      call pvmftasks(0, ntask, t, ptid, dtid, flag, aout, info)
      do 10 i = 1, ntask
         if (i .gt. 1) call pvmftasks(0, n, t, ptid, dtid, flag, aout,
     +                                info)
         do 5 j = 1, 4
            if (t .eq. tids(j)) kids = kids + 1
  5      continue
 10   continue
      call chk(kids .eq. 4, 'pvmftasks: a row for each child', kids)

      call pvmfinitsend(PVMDEFAULT, bufid)
      call pvmfmcast(4, tids, 3, info)
      seen = 0
      do 30 i = 1, 4
         call pvmftrecv(-1, 9, 30, 0, bufid)
         if (bufid .le. 0) goto 30
         call pvmfunpack(INTEGER4, who, 1, 1, info)
         do 25 j = 1, 4
            if (who .eq. tids(j)) seen = seen + 1
 25      continue
 30   continue
      call chk(seen .eq. 4, 'the 4 exits were notified', seen)
      call pvmfexit(info)
      end
