/*  pvmtev.h — PVM 3.4's tracing interface as gimpi provides it: the trace event numbers
 *  (TEV_*, one per library call, with TEV_EVENT_ENTRY / TEV_EVENT_EXIT or'd in to tell a
 *  call's start from its end), the markers and data types of the self-describing trace
 *  messages a tracer task receives (TEV_MARK_*, TEV_DATA_*), the semantic ids of their
 *  fields (TEV_DID_*), and the trace mask (Pvmtmask, TEV_MASK_*) that pvm_settmask and
 *  pvm_gettmask read and write.  The numbers are PVM 3.4.6's, so that a tracer or a mask
 *  built against PVM works unchanged; the text is gimpi's.  doc/tracing.md tells how a
 *  tracer uses them.
 */
#ifndef GIMPI_PVMTEV_H
#define GIMPI_PVMTEV_H

#include "gimpi_export.h"

/*  Markers that frame the parts of a trace message (a message of ints and strings packed
 *  with PvmDataDefault). */
#define TEV_MARK_EVENT_BUFFER           -1
#define TEV_MARK_EVENT_BUFFER_END       -2
#define TEV_MARK_DATA_ID                -3
#define TEV_MARK_DATA_ID_END            -4
#define TEV_MARK_EVENT_DESC             -5
#define TEV_MARK_EVENT_DESC_END         -6
#define TEV_MARK_EVENT_RECORD           -7
#define TEV_MARK_EVENT_RECORD_END       -8
#define TEV_MARK_USER_EVENT_RECORD      -9
#define TEV_MARK_USER_EVENT_RECORD_END  -10

/*  The tid and message tag that stand for "no tracer" in a user-defined event. */
#define PVM_TRACE_TID                   -1111
#define PVM_TRACE_CODE                  -2222

/*  How a field of an event is typed: one of these, or'd with TEV_DATA_ARRAY for an array
 *  (its length comes first). */
#define TEV_DATA_NULL                   0
#define TEV_DATA_BYTE                   1
#define TEV_DATA_CPLX                   2
#define TEV_DATA_DCPLX                  3
#define TEV_DATA_DOUBLE                 4
#define TEV_DATA_FLOAT                  5
#define TEV_DATA_INT                    6
#define TEV_DATA_UINT                   7
#define TEV_DATA_LONG                   8
#define TEV_DATA_ULONG                  9
#define TEV_DATA_SHORT                  10
#define TEV_DATA_USHORT                 11
#define TEV_DATA_STRING                 12
#define TEV_DATA_STRUCT_START           13
#define TEV_DATA_STRUCT_END             14
#define TEV_DATA_DEFERRED               15
#define TEV_DATA_SCALAR                 0x00
#define TEV_DATA_ARRAY                  0x80

/*  What a field of an event means (the first time an event is sent, each field comes with
 *  its id and type; afterwards only its value). */
#define TEV_DID_FIRST                   0
#define TEV_DID_AN                      0
#define TEV_DID_AC                      1
#define TEV_DID_AS                      2
#define TEV_DID_BF                      3
#define TEV_DID_CC                      4
#define TEV_DID_CN                      5
#define TEV_DID_CI                      6
#define TEV_DID_CF                      7
#define TEV_DID_CD                      8
#define TEV_DID_CR                      9
#define TEV_DID_CL                      10
#define TEV_DID_CDA                     11
#define TEV_DID_CDT                     12
#define TEV_DID_CDX                     13
#define TEV_DID_CDC                     14
#define TEV_DID_CGI                     15
#define TEV_DID_CRF                     16
#define TEV_DID_CXC                     17
#define TEV_DID_CXF                     18
#define TEV_DID_CXN                     19
#define TEV_DID_CXS                     20
#define TEV_DID_ERI                     21
#define TEV_DID_ERR                     22
#define TEV_DID_FDS                     23
#define TEV_DID_FP                      24
#define TEV_DID_GN                      25
#define TEV_DID_GI                      26
#define TEV_DID_GT                      27
#define TEV_DID_GS                      28
#define TEV_DID_GBC                     29
#define TEV_DID_HN                      30
#define TEV_DID_HNL                     31
#define TEV_DID_HNA                     32
#define TEV_DID_HPT                     33
#define TEV_DID_HA                      34
#define TEV_DID_HSP                     35
#define TEV_DID_HIS                     36
#define TEV_DID_HCS                     37
#define TEV_DID_HCU                     38
#define TEV_DID_HDS                     39
#define TEV_DID_HDU                     40
#define TEV_DID_HS                      41
#define TEV_DID_INB                     42
#define TEV_DID_IMC                     43
#define TEV_DID_IST                     44
#define TEV_DID_MC                      45
#define TEV_DID_MCX                     46
#define TEV_DID_MB                      47
#define TEV_DID_MNB                     48
#define TEV_DID_SRC                     49
#define TEV_DID_DST                     50
#define TEV_DID_MDL                     51
#define TEV_DID_MTS                     52
#define TEV_DID_MTU                     53
#define TEV_DID_MRF                     54
#define TEV_DID_MRB                     55
#define TEV_DID_MSB                     56
#define TEV_DID_ME                      57
#define TEV_DID_MHI                     58
#define TEV_DID_AST                     59
#define TEV_DID_AMC                     60
#define TEV_DID_AML                     61
#define TEV_DID_NE                      62
#define TEV_DID_NMC                     63
#define TEV_DID_NCT                     64
#define TEV_DID_NTL                     65
#define TEV_DID_NH                      66
#define TEV_DID_NA                      67
#define TEV_DID_OPT                     68
#define TEV_DID_OPV                     69
#define TEV_DID_OS                      70
#define TEV_DID_PDA                     71
#define TEV_DID_PDT                     72
#define TEV_DID_PC                      73
#define TEV_DID_PSD                     74
#define TEV_DID_PSG                     75
#define TEV_DID_PF                      76
#define TEV_DID_PRF                     77
#define TEV_DID_RST                     78
#define TEV_DID_RMC                     79
#define TEV_DID_RCX                     80
#define TEV_DID_SN                      81
#define TEV_DID_SE                      82
#define TEV_DID_SF                      83
#define TEV_DID_SW                      84
#define TEV_DID_SC                      85
#define TEV_DID_STL                     86
#define TEV_DID_SIB                     87
#define TEV_DID_TID                     88
#define TEV_DID_PT                      89
#define TEV_DID_MT                      90
#define TEV_DID_TF                      91
#define TEV_DID_TN                      92
#define TEV_DID_PID                     93
#define TEV_DID_TT                      94
#define TEV_DID_TW                      95
#define TEV_DID_TIS                     96
#define TEV_DID_TNT                     97
#define TEV_DID_TST                     98
#define TEV_DID_TUS                     99
#define TEV_DID_TUU                     100
#define TEV_DID_TSS                     101
#define TEV_DID_TSU                     102
#define TEV_DID_TES                     103
#define TEV_DID_TA                      104
#define TEV_DID_TR                      105
#define TEV_DID_TS                      106
#define TEV_DID_TU                      107
#define TEV_DID_TGS                     108
#define TEV_DID_TGU                     109
#define TEV_DID_TMW                     110
#define TEV_DID_TM                      111
#define TEV_DID_TRC                     112
#define TEV_DID_TRT                     113
#define TEV_DID_TRX                     114
#define TEV_DID_TRO                     115
#define TEV_DID_TRM                     116
#define TEV_DID_TRB                     117
#define TEV_DID_TRL                     118
#define TEV_DID_VER                     119
#define TEV_DID_VCT                     120
#define TEV_DID_VID                     121
#define TEV_DID_WID                     122
#define TEV_DID_MAX                     122

/*  The events: one per call of the library, plus the daemon's task events and the
 *  summaries of PvmTraceTime and PvmTraceCount. */
#define TEV_FIRST                       0
#define TEV_ADDHOSTS                    0
#define TEV_BARRIER                     1
#define TEV_BCAST                       2
#define TEV_BUFINFO                     3
#define TEV_CONFIG                      4
#define TEV_DELETE                      5
#define TEV_DELHOSTS                    6
#define TEV_EXIT                        7
#define TEV_FREEBUF                     8
#define TEV_GETFDS                      9
#define TEV_GETINST                     10
#define TEV_GETOPT                      11
#define TEV_GETRBUF                     12
#define TEV_GETSBUF                     13
#define TEV_GETTID                      14
#define TEV_GSIZE                       15
#define TEV_HALT                        16
#define TEV_INITSEND                    17
#define TEV_INSERT                      18
#define TEV_JOINGROUP                   19
#define TEV_KILL                        20
#define TEV_LOOKUP                      21
#define TEV_LVGROUP                     22
#define TEV_MCAST                       23
#define TEV_MKBUF                       24
#define TEV_MSTAT                       25
#define TEV_MYTID                       26
#define TEV_NOTIFY                      27
#define TEV_NRECV                       28
#define TEV_PARENT                      29
#define TEV_PERROR                      30
#define TEV_PKBYTE                      31
#define TEV_PKCPLX                      32
#define TEV_PKDCPLX                     33
#define TEV_PKDOUBLE                    34
#define TEV_PKFLOAT                     35
#define TEV_PKINT                       36
#define TEV_PKUINT                      37
#define TEV_PKLONG                      38
#define TEV_PKULONG                     39
#define TEV_PKSHORT                     40
#define TEV_PKUSHORT                    41
#define TEV_PKSTR                       42
#define TEV_PROBE                       43
#define TEV_PSTAT                       44
#define TEV_RECV                        45
#define TEV_RECVF                       46
#define TEV_SEND                        47
#define TEV_SENDSIG                     48
#define TEV_SETOPT                      49
#define TEV_SETRBUF                     50
#define TEV_SETSBUF                     51
#define TEV_SPAWN                       52
#define TEV_START_PVMD                  53
#define TEV_TASKS                       54
#define TEV_TICKLE                      55
#define TEV_TIDTOHOST                   56
#define TEV_TRECV                       57
#define TEV_UPKBYTE                     58
#define TEV_UPKCPLX                     59
#define TEV_UPKDCPLX                    60
#define TEV_UPKDOUBLE                   61
#define TEV_UPKFLOAT                    62
#define TEV_UPKINT                      63
#define TEV_UPKUINT                     64
#define TEV_UPKLONG                     65
#define TEV_UPKULONG                    66
#define TEV_UPKSHORT                    67
#define TEV_UPKUSHORT                   68
#define TEV_UPKSTR                      69
#define TEV_VERSION                     70
#define TEV_REG_HOSTER                  71
#define TEV_REG_RM                      72
#define TEV_REG_TASKER                  73
#define TEV_REG_TRACER                  74
#define TEV_NEWTASK                     75
#define TEV_ENDTASK                     76
#define TEV_SPNTASK                     77
#define TEV_ARCHCODE                    78
#define TEV_CATCHOUT                    79
#define TEV_GETMWID                     80
#define TEV_GETTMASK                    81
#define TEV_HOSTSYNC                    82
#define TEV_PACKF                       83
#define TEV_PRECV                       84
#define TEV_PSEND                       85
#define TEV_REDUCE                      86
#define TEV_SETMWID                     87
#define TEV_SETTMASK                    88
#define TEV_UNPACKF                     89
#define TEV_GATHER                      90
#define TEV_SCATTER                     91
#define TEV_PUTINFO                     92
#define TEV_GETINFO                     93
#define TEV_DELINFO                     94
#define TEV_GETMBOXINFO                 95
#define TEV_NEWCONTEXT                  96
#define TEV_FREECONTEXT                 97
#define TEV_SETCONTEXT                  98
#define TEV_GETCONTEXT                  99
#define TEV_SIBLINGS                    100
#define TEV_GETMINFO                    101
#define TEV_SETMINFO                    102
#define TEV_ADDMHF                      103
#define TEV_DELMHF                      104
#define TEV_MHF_INVOKE                  105
#define TEV_TIMING                      106
#define TEV_PROFILING                   107
#define TEV_USER_DEFINED                108
#define TEV_MAX                         108

/*  Or'd into an event number: the call's start or its end. */
#define TEV_EVENT_ENTRY                 0x4000
#define TEV_EVENT_EXIT                  0x8000

/*  A trace mask: one bit per event, four per character (printable: '@' is no bit set),
 *  NUL-terminated.  The length leaves room for events past TEV_MAX. */
#define TEV_MASK_LENGTH                 36
typedef char Pvmtmask[TEV_MASK_LENGTH];

/*  Selects, deselects or tests event k in mask m. */
#define TEV_MASK_SET(m, k)      ((m)[(k) / 4] |= (char)(1 << ((k) & 3)))
#define TEV_MASK_UNSET(m, k)    ((m)[(k) / 4] &= (char)~(1 << ((k) & 3)))
#define TEV_MASK_CHECK(m, k)    ((m)[(k) / 4] & (1 << ((k) & 3)))
/*  Makes m the empty mask. */
#define TEV_MASK_INIT(m)                                                        \
    do {                                                                        \
        int tev_mask_i_ = TEV_MASK_LENGTH - 1;                                  \
        (m)[tev_mask_i_] = 0;                                                   \
        while (tev_mask_i_-- > 0)                                               \
            (m)[tev_mask_i_] = '@';                                             \
    } while (0)

/*  A semantic data id's short name and description (as PVM's tables hold them). */
struct Pvmtevdid {
    char *did;
    char *desc;
};

/*  Where a task's trace and output go (PVM's record of them). */
struct Pvmtracer {
    int trctid;         /* the tracer task (0: none) */
    int trcctx;         /* the context of trace messages */
    int trctag;         /* their tag */
    int outtid;         /* the task output goes to */
    int outctx;
    int outtag;
    int trcbuf;         /* bytes of events gathered before a message leaves (0: each alone) */
    int trcopt;         /* PvmTraceFull, PvmTraceTime or PvmTraceCount */
    Pvmtmask tmask;     /* the events traced */
};

#ifdef __cplusplus
extern "C" {
#endif

/*  Reads (writes) the trace mask of this task (PvmTaskSelf) or of the tasks it will
 *  spawn (PvmTaskChild): 0 or PvmBadParam (pvm3.h declares them as well). */
GIMPI_EXPORT int pvm_gettmask(int who, char *tmask);
GIMPI_EXPORT int pvm_settmask(int who, char *tmask);

#ifdef __cplusplus
}
#endif

#endif
