c     fpvm3.h -- gimpi's Fortran header for PVM 3.4 programs.
c
c     A Fortran 77 program that uses PVM's calls includes this file
c     (include 'fpvm3.h') for their constants: the spawn flags, the
c     buffer encodings, the notify events, the datatype codes of
c     pvmfpack and pvmfunpack, the options of pvmfsetopt, the message
c     box flags and the error codes.  Their values are PVM 3.4.6's.
c     The file is fixed-form Fortran 77 (comments marked in column 1,
c     statements in columns 7-72), like PVM's.  It declares no
c     EXTERNAL: a program that passes a reduce function to pvmfreduce
c     says external PvmSum (or PvmMax, PvmMin, PvmProduct) itself.
c     Build with gimpifort; the calls are described in fpvm3(3).
c
c     The calls (libgimpi.so, or -lfpvm3 -lgpvm3 -lpvm3):
c     call pvmfmytid(tid)
c     call pvmfparent(tid)
c     call pvmfexit(info)
c     call pvmfkill(tid, info)
c     call pvmfspawn(task, flag, where, ntask, tids, numt)
c     call pvmfsiblings(nsiblings, index, sibling)
c     call pvmfcatchout(onoff, info)
c     call pvmfpstat(tid, status)
c     call pvmftidtohost(tid, dtid)
c     call pvmfnotify(what, msgtag, cnt, tids, info)
c     call pvmfsendsig(tid, signum, info)
c     call pvmfsleep(secs)
c     call pvmfconfig(nhost, narch, dtid, name, arch, speed, info)
c     call pvmftasks(where, ntask, tid, ptid, dtid, flag, aout, info)
c     call pvmfaddhost(host, info)
c     call pvmfdelhost(host, info)
c     call pvmfmstat(host, mstat)
c     call pvmfarchcode(arch, code)
c     call pvmfhalt(info)
c     call pvmfstartpvmd(args, block, info)
c     call pvmfhostsync(host, clksec, clkusec, deltasec, deltausec,
c                       info)
c     call pvmfinitsend(encoding, bufid)
c     call pvmfmkbuf(encoding, bufid)
c     call pvmffreebuf(bufid, info)
c     call pvmfgetsbuf(bufid)
c     call pvmfgetrbuf(bufid)
c     call pvmfsetsbuf(bufid, oldbuf)
c     call pvmfsetrbuf(bufid, oldbuf)
c     call pvmfbufinfo(bufid, bytes, msgtag, tid, info)
c     call pvmfpack(what, xp, nitem, stride, info)
c     call pvmfunpack(what, xp, nitem, stride, info)
c     call pvmfsend(tid, msgtag, info)
c     call pvmfmcast(ntask, tids, msgtag, info)
c     call pvmfrecv(tid, msgtag, bufid)
c     call pvmfnrecv(tid, msgtag, bufid)
c     call pvmfprobe(tid, msgtag, bufid)
c     call pvmftrecv(tid, msgtag, sec, usec, bufid)
c     call pvmfpsend(tid, msgtag, buf, len, datatype, info)
c     call pvmfprecv(tid, msgtag, buf, len, datatype, atid, atag,
c                    alen, info)
c     call pvmfgetminfo(bufid, len, ctx, tag, wid, enc, crc, src,
c                       dst, info)
c     call pvmfsetminfo(bufid, ctx, tag, wid, src, dst, info)
c     call pvmfpkmesg(bufid, info)
c     call pvmfpkmesgbody(bufid, info)
c     call pvmfupkmesg(bufid, newbufid)
c     call pvmfjoingroup(group, inum)
c     call pvmflvgroup(group, info)
c     call pvmfgettid(group, inum, tid)
c     call pvmfgetinst(group, tid, inum)
c     call pvmfgsize(group, size)
c     call pvmfbarrier(group, count, info)
c     call pvmfbcast(group, msgtag, info)
c     call pvmffreezegroup(group, size, info)
c     call pvmfreduce(func, data, count, datatype, msgtag, group,
c                     rootinst, info)
c     call pvmfgather(result, data, count, datatype, msgtag, group,
c                     rootinst, info)
c     call pvmfscatter(result, data, count, datatype, msgtag, group,
c                      rootinst, info)
c     call pvmfperror(msg, info)
c     call pvmfserror(set, oldset)
c     call pvmfsetopt(what, val, oldval)
c     call pvmfgetopt(what, val)
c     call pvmfadvise(route, info)
c     call pvmfnewcontext(ctx)
c     call pvmfsetcontext(newctx, oldctx)
c     call pvmffreecontext(ctx, info)
c     call pvmfgetcontext(ctx)
c     call pvmfaddmhf(src, tag, ctx, unused, func, info)
c     call pvmfdelmhf(mhid, info)
c     call pvmfputinfo(name, bufid, flags, index)
c     call pvmfrecvinfo(name, index, flags, bufid)
c     call pvmfdelinfo(name, index, flags, info)
c     call pvmfgetmboxinfo(pattern, name, nclasses, nentries, index,
c                          owner, flags, info)

c     spawn flags (pvmfspawn), and their PVM 3.3 names
      integer PVMTASKDEFAULT, PVMTASKHOST, PVMTASKARCH, PVMTASKDEBUG
      integer PVMTASKTRACE, PVMMPPFRONT, PVMHOSTCOMPL
      integer PVMNOSPAWNPARENT
      integer PVMHOST, PVMARCH, PVMDEBUG, PVMTRACE
      parameter (PVMTASKDEFAULT = 0, PVMTASKHOST = 1, PVMTASKARCH = 2)
      parameter (PVMTASKDEBUG = 4, PVMTASKTRACE = 8, PVMMPPFRONT = 16)
      parameter (PVMHOSTCOMPL = 32, PVMNOSPAWNPARENT = 64)
      parameter (PVMHOST = 1, PVMARCH = 2, PVMDEBUG = 4, PVMTRACE = 8)

c     buffer encodings (pvmfinitsend, pvmfmkbuf), and PVM 3.3's names
      integer PVMDATADEFAULT, PVMDATARAW, PVMDATAINPLACE, PVMDATATRACE
      integer PVMDEFAULT, PVMRAW, PVMINPLACE
      parameter (PVMDATADEFAULT = 0, PVMDATARAW = 1)
      parameter (PVMDATAINPLACE = 2, PVMDATATRACE = 4)
      parameter (PVMDEFAULT = 0, PVMRAW = 1, PVMINPLACE = 2)

c     events (pvmfnotify)
      integer PVMTASKEXIT, PVMHOSTDELETE, PVMHOSTADD, PVMROUTEADD
      integer PVMROUTEDELETE, PVMNOTIFYCANCEL
      parameter (PVMTASKEXIT = 1, PVMHOSTDELETE = 2, PVMHOSTADD = 3)
      parameter (PVMROUTEADD = 4, PVMROUTEDELETE = 5)
      parameter (PVMNOTIFYCANCEL = 256)

c     datatype codes (pvmfpack, pvmfunpack, pvmfpsend, pvmfprecv,
c     pvmfreduce, pvmfgather, pvmfscatter); INTEGER8 is INTEGER*8
      integer STRING, BYTE1, INTEGER2, INTEGER4, INTEGER8
      integer REAL4, COMPLEX8, REAL8, COMPLEX16
      parameter (STRING = 0, BYTE1 = 1, INTEGER2 = 2, INTEGER4 = 3)
      parameter (REAL4 = 4, COMPLEX8 = 5, REAL8 = 6, COMPLEX16 = 7)
      parameter (INTEGER8 = 8)

c     options (pvmfsetopt, pvmfgetopt)
      integer PVMROUTE, PVMDEBUGMASK, PVMAUTOERR, PVMOUTPUTTID
      integer PVMOUTPUTCODE, PVMTRACETID, PVMTRACECODE, PVMTRACEBUFFER
      integer PVMTRACEOPTIONS, PVMFRAGSIZE, PVMRESVTIDS
      integer PVMSOUTPUTTID, PVMSOUTPUTCODE, PVMSTRACETID
      integer PVMSTRACECODE, PVMSTRACEBUFFER, PVMSTRACEOPTIONS
      integer PVMSHOWTIDS, PVMPOLLTYPE, PVMPOLLTIME, PVMOUTPUTCTX
      integer PVMTRACECTX, PVMSOUTPUTCTX, PVMSTRACECTX, PVMNORESET
      parameter (PVMROUTE = 1, PVMDEBUGMASK = 2, PVMAUTOERR = 3)
      parameter (PVMOUTPUTTID = 4, PVMOUTPUTCODE = 5, PVMTRACETID = 6)
      parameter (PVMTRACECODE = 7, PVMTRACEBUFFER = 8)
      parameter (PVMTRACEOPTIONS = 9, PVMFRAGSIZE = 10)
      parameter (PVMRESVTIDS = 11, PVMSOUTPUTTID = 12)
      parameter (PVMSOUTPUTCODE = 13, PVMSTRACETID = 14)
      parameter (PVMSTRACECODE = 15, PVMSTRACEBUFFER = 16)
      parameter (PVMSTRACEOPTIONS = 17, PVMSHOWTIDS = 18)
      parameter (PVMPOLLTYPE = 19, PVMPOLLTIME = 20)
      parameter (PVMOUTPUTCTX = 21, PVMTRACECTX = 22)
      parameter (PVMSOUTPUTCTX = 23, PVMSTRACECTX = 24)
      parameter (PVMNORESET = 25)

c     option values: tracing, polling, routing
      integer PVMTRACEFULL, PVMTRACETIME, PVMTRACECOUNT
      integer PVMPOLLCONSTANT, PVMPOLLSLEEP
      integer PVMDONTROUTE, PVMALLOWDIRECT, PVMROUTEDIRECT
      parameter (PVMTRACEFULL = 1, PVMTRACETIME = 2, PVMTRACECOUNT = 3)
      parameter (PVMPOLLCONSTANT = 1, PVMPOLLSLEEP = 2)
      parameter (PVMDONTROUTE = 1, PVMALLOWDIRECT = 2)
      parameter (PVMROUTEDIRECT = 3)

c     message box flags (pvmfputinfo, pvmfrecvinfo, pvmfdelinfo)
      integer PVMMBOXDEFAULT, PVMMBOXPERSISTENT, PVMMBOXMULTIINSTANCE
      integer PVMMBOXOVERWRITABLE, PVMMBOXFIRSTAVAIL
      integer PVMMBOXREADANDDELETE, PVMMBOXWAITFORINFO
      parameter (PVMMBOXDEFAULT = 0, PVMMBOXPERSISTENT = 1)
      parameter (PVMMBOXMULTIINSTANCE = 2, PVMMBOXOVERWRITABLE = 4)
      parameter (PVMMBOXFIRSTAVAIL = 8, PVMMBOXREADANDDELETE = 16)
      parameter (PVMMBOXWAITFORINFO = 32)

c     error codes (info < 0)
      integer PvmOk, PvmBadParam, PvmMismatch, PvmOverflow, PvmNoData
      integer PvmNoHost, PvmNoFile, PvmDenied, PvmNoMem, PvmBadMsg
      integer PvmSysErr, PvmNoBuf, PvmNoSuchBuf, PvmNullGroup
      integer PvmDupGroup, PvmNoGroup, PvmNotInGroup, PvmNoInst
      integer PvmHostFail, PvmNoParent, PvmNotImpl, PvmDSysErr
      integer PvmBadVersion, PvmOutOfRes, PvmDupHost, PvmCantStart
      integer PvmAlready, PvmNoTask, PvmNotFound, PvmExists
      integer PvmHostrNMstr, PvmParentNotSet, PvmIPLoopback
      integer PvmNoEntry, PvmDupEntry
      parameter (PvmOk = 0, PvmBadParam = -2, PvmMismatch = -3)
      parameter (PvmOverflow = -4, PvmNoData = -5, PvmNoHost = -6)
      parameter (PvmNoFile = -7, PvmDenied = -8, PvmNoMem = -10)
      parameter (PvmBadMsg = -12, PvmSysErr = -14, PvmNoBuf = -15)
      parameter (PvmNoSuchBuf = -16, PvmNullGroup = -17)
      parameter (PvmDupGroup = -18, PvmNoGroup = -19)
      parameter (PvmNotInGroup = -20, PvmNoInst = -21)
      parameter (PvmHostFail = -22, PvmNoParent = -23)
      parameter (PvmNotImpl = -24, PvmDSysErr = -25)
      parameter (PvmBadVersion = -26, PvmOutOfRes = -27)
      parameter (PvmDupHost = -28, PvmCantStart = -29)
      parameter (PvmAlready = -30, PvmNoTask = -31)
      parameter (PvmNotFound = -32, PvmExists = -33)
      parameter (PvmHostrNMstr = -34, PvmParentNotSet = -35)
      parameter (PvmIPLoopback = -36)
c     PVM 3.3's names of PvmNotFound and PvmExists
      parameter (PvmNoEntry = -32, PvmDupEntry = -33)
