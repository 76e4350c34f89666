c     t/fortran_calls.f -- the calls of gimpi's Fortran binding that the
c     other test programs do not make (with them, all 75 external names
c     are called), and the cases PVM does not share, from one task
c     started from the shell (t/fortran.sh): strings of blanks only and
c     long names PVM refused, INTEGER*8 beyond 32 bits.  A call whose C
c     call gimpi does not build yet may answer PvmNotImpl; when it is
c     built, its answer is checked.  pvmfhalt, pvmfstartpvmd,
c     pvmfaddhost and pvmfdelhost are linked, not run.  One line per
c     check: "ok NAME" or "not ok NAME (got N)".
      program fcalls
      include 'fpvm3.h'
      external PvmSum, PvmMax, PvmMin, PvmProduct, hand
      integer hand
      integer mytid, info, t, t2, bufid, rbuf, old, v, n, i, ctx, nc
      integer nh, na, dtid, speed, sec, usec, dsec, dusec, idx, mid
      integer len, tag, wid, enc, crc, src, dst, ne, seen, nt
      integer iv(4), ix(4), ow(4), fl(4)
      integer*8 l, l2
      character*64 host, arch
      character*40 long
      character*16 nm

      call pvmfmytid(mytid)
      if (mytid .lt. 0) then
         call pvmfhalt(info)
         call pvmfstartpvmd('-d0 hosts', 1, info)
         call pvmfaddhost('nosuchhost', info)
         call pvmfdelhost('nosuchhost', info)
      endif
      call pvmfconfig(nh, na, dtid, host, arch, speed, info)

c     names: long ones, blanks only
      long = 'a group name longer than PVM''s 31 bytes'
      call pvmfjoingroup(long, n)
      call pvmfgettid(long, n, t)
      call chk(n .eq. 0 .and. t .eq. mytid,
     +         'a 39-character group name works', n)
      call pvmflvgroup(long, info)
      call pvmfgettid('   ', 0, t)
      call chk(t .eq. PvmNullGroup, 'gettid on blanks', t)
      call pvmfgetinst('   ', mytid, t)
      call chk(t .eq. PvmNullGroup, 'getinst on blanks', t)
      call pvmfgsize('   ', t)
      call chk(t .eq. PvmNullGroup, 'gsize on blanks', t)
      call pvmflvgroup('   ', t)
      call chk(t .eq. PvmNullGroup, 'lvgroup on blanks', t)
      call pvmfbcast('   ', 1, t)
      call chk(t .eq. PvmNullGroup, 'bcast on blanks', t)
      call pvmffreezegroup('   ', 1, t)
      call chk(t .eq. PvmNullGroup, 'freezegroup on blanks', t)
      call pvmfgather(iv, iv, 1, INTEGER4, 1, '  ', 0, t)
      call chk(t .eq. PvmNullGroup, 'gather on blanks', t)
      call pvmfscatter(iv, iv, 1, INTEGER4, 1, '  ', 0, t)
      call chk(t .eq. PvmNullGroup, 'scatter on blanks', t)
      call pvmfperror('    ', info)
      call pvmfperror('', info)
      call chk(info .eq. 0, 'perror of blanks and of nothing', info)
      call pvmfmstat(host, v)
      call chk(v .eq. PvmOk, 'mstat of the padded host name', v)
      call pvmfmstat('   ', v)
      call chk(v .lt. 0, 'mstat of blanks: an error', v)
      call pvmfspawn('   ', PVMTASKDEFAULT, '*', 1, iv, n)
      call chk(n .le. 0, 'spawn of a blank program name fails', n)

c     INTEGER*8 beyond 32 bits, raw and default encodings
      l = -123456789012345_8
      do 10 i = PVMDATADEFAULT, PVMDATARAW
         call pvmfinitsend(i, bufid)
         call pvmfpack(INTEGER8, l, 1, 1, info)
         call pvmfsend(mytid, 5, info)
 10   continue
      call pvmfrecv(mytid, 5, bufid)
      call pvmfunpack(INTEGER8, l2, 1, 1, info)
      call chk(l2 .eq. l, 'INTEGER8 -123456789012345 (default)', info)
      call pvmfrecv(mytid, 5, bufid)
      call pvmfunpack(INTEGER8, l2, 1, 1, info)
      call chk(l2 .eq. l, 'INTEGER8 -123456789012345 (raw)', info)
      call pvmfgetrbuf(rbuf)
      call chk(rbuf .eq. bufid, 'getrbuf', rbuf)
      call pvmfsetrbuf(0, old)
      call chk(old .eq. bufid, 'setrbuf', old)
      call pvmffreebuf(bufid, info)

c     the reduce functions called directly, as C programs may
      iv(1) = 3
      ix(1) = 4
      call pvmsum(INTEGER4, iv, ix, 1, info)
      call chk(iv(1) .eq. 7, 'PvmSum called directly', iv(1))
      call pvmmax(INTEGER4, iv, ix, 1, info)
      call pvmmin(INTEGER4, iv, ix, 1, info)
      call pvmproduct(INTEGER4, iv, ix, 1, info)
      call chk(iv(1) .eq. 16, 'PvmMax, PvmMin, PvmProduct', iv(1))

c     tasks and hosts
      call pvmftidtohost(mytid, t)
      call pvmftidtoh(mytid, t2)
      call chk(t .eq. dtid .and. t2 .eq. t, 'tidtohost, tidtoh', t2)
      call pvmfcatchout(1, info)
      call pvmfcatchout(0, t)
      call chk(info .eq. 0 .and. t .eq. 0, 'catchout on, off', info)
      call pvmfsleep(0)
      call pvmfpstat(mytid, v)
      call chk(v .eq. PvmOk, 'pstat of itself', v)
      call pvmfkill(-5, info)
      call chk(info .eq. PvmBadParam, 'kill of tid -5', info)
      call pvmfarchcode(arch, v)
      call chk(v .eq. PvmNotImpl .or. v .gt. 0,
     +         'archcode of the padded architecture', v)
      call pvmfhostsync(dtid, sec, usec, dsec, dusec, info)
      call chk(info .eq. PvmNotImpl .or. (info .eq. 0 .and. sec .gt. 0),
     +         'hostsync of this host', info)
      call pvmfsendsig(mytid, 0, info)
      call chk(info .eq. PvmNotImpl .or. info .eq. 0,
     +         'sendsig 0 to itself', info)
      call pvmfserror(0, old)
      call chk(old .eq. PvmNotImpl .or. old .ge. 0, 'serror', old)
      call pvmfadvise(PVMDONTROUTE, info)
      call chk(info .eq. PvmNotImpl .or. info .ge. 0, 'advise', info)

c     message contexts, headers, whole messages
      call pvmfnewcontext(ctx)
      call pvmfsetcontext(ctx, old)
      call pvmfgetcontext(v)
      call chk(ctx .eq. PvmNotImpl .or. v .eq. ctx,
     +         'newcontext, setcontext, getcontext', v)
      call pvmfsetcontext(old, v)
      call pvmffreecontext(ctx, info)
      call chk(ctx .eq. PvmNotImpl .or. info .eq. 0, 'freecontext',
     +         info)
      call pvmfinitsend(PVMDEFAULT, bufid)
      call pvmfpack(INTEGER4, iv, 4, 1, info)
      call pvmfsend(mytid, 6, info)
      call pvmfrecv(mytid, 6, bufid)
      call pvmfgetminfo(bufid, len, ctx, tag, wid, enc, crc, src, dst,
     +                  info)
      call chk(info .eq. PvmNotImpl .or. (info .eq. 0 .and.
     +         tag .eq. 6 .and. src .eq. mytid .and. len .eq. 16),
     +         'getminfo of a received message', info)
      call pvmfsetminfo(bufid, 0, 66, 0, mytid, mytid, info)
      call chk(info .eq. PvmNotImpl .or. info .eq. 0, 'setminfo',
     +         info)
      call pvmfinitsend(PVMDEFAULT, t)
      call pvmfpkmesg(bufid, info)
      call pvmfpkmesgbody(bufid, t2)
      call chk((info .eq. PvmNotImpl .or. info .ge. 0) .and.
     +         (t2 .eq. PvmNotImpl .or. t2 .ge. 0),
     +         'pkmesg, pkmesgbody', info)
      call pvmfupkmesg(0, n)
      call chk(n .eq. PvmNotImpl .or. n .ne. 0, 'upkmesg', n)
      call pvmfaddmhf(-1, 99, -1, 0, hand, mid)
      call pvmfdelmhf(mid, info)
      call chk(mid .eq. PvmNotImpl .or. info .eq. 0, 'addmhf, delmhf',
     +         mid)

c     the message box: two classes, one per pvmfgetmboxinfo call
      call pvmfinitsend(PVMDEFAULT, bufid)
      call pvmfpack(INTEGER4, iv, 1, 1, info)
      call pvmfputinfo('fcalls one   ', bufid, PVMMBOXDEFAULT, idx)
      call pvmfputinfo('fcalls two', bufid, PVMMBOXDEFAULT, v)
      call chk(idx .eq. PvmNotImpl .or. (idx .ge. 0 .and. v .ge. 0),
     +         'putinfo of two names', idx)
      seen = 0
      nt = 0
      nc = -1
      do 20 i = 1, 5
         call pvmfgetmboxinfo('fcalls*   ', nm, nc, ne, ix, ow, fl,
     +                        info)
         if (info .lt. 0) goto 21
         nt = nt + 1
         if (nm .eq. 'fcalls one' .or. nm .eq. 'fcalls two') then
            if (ne .eq. 1 .and. ow(1) .eq. mytid) seen = seen + 1
         endif
 20   continue
 21   call chk(idx .eq. PvmNotImpl .or. (seen .eq. 2 .and. nt .eq. 2
     +         .and. info .eq. PvmNotFound .and. nc .eq. 2),
     +         'getmboxinfo: one class per call, then PvmNotFound',
     +         info)
      call pvmfrecvinfo('fcalls one  ', idx, PVMMBOXDEFAULT, t)
      call chk(idx .eq. PvmNotImpl .or. t .gt. 0, 'recvinfo', t)
      call pvmfdelinfo('fcalls one', idx, PVMMBOXDEFAULT, info)
      call pvmfdelinfo('fcalls two ', v, PVMMBOXDEFAULT, t)
      call chk(idx .eq. PvmNotImpl .or. (info .eq. 0 .and. t .eq. 0),
     +         'delinfo', info)
      call pvmfexit(info)
      end

c     a message handler: gets the message id by value, as in PVM
      integer function hand(mid)
      integer, value :: mid
      hand = mid
      end
