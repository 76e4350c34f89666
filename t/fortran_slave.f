c     t/fortran_slave.f -- the child t/fortran_master.f spawns: receives
c     an INTEGER4 and a STRING from its parent and answers with its tid,
c     its parent's, twice the number and 'pong', then waits for the
c     word to go (tag 3).
      program fslave
      include 'fpvm3.h'
      integer mytid, ptid, bufid, val, info
      character*4 s
      call pvmfmytid(mytid)
      call pvmfparent(ptid)
      call pvmfrecv(ptid, 1, bufid)
      call pvmfunpack(INTEGER4, val, 1, 1, info)
      call pvmfunpack(STRING, s, 4, 1, info)
      if (s .eq. 'ping') s = 'pong'
      call pvmfinitsend(PVMDEFAULT, bufid)
      call pvmfpack(INTEGER4, mytid, 1, 1, info)
      call pvmfpack(INTEGER4, ptid, 1, 1, info)
      call pvmfpack(INTEGER4, 2 * val, 1, 1, info)
      call pvmfpack(STRING, s, 4, 1, info)
      call pvmfsend(ptid, 2, info)
      call pvmfrecv(ptid, 3, bufid)
      call pvmfexit(info)
      end
