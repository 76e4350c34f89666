/*  gimpi_version.c — the library version string and the text of each error code. */
#include "config.h"
#include "gimpi.h"

/*  Version string of the library. */
const char *gimpi_version(void)
{
    return PACKAGE_VERSION;
}

/*  PVM's pvm_perror texts, by code. */
const char *gimpi_strerror(int code)
{
    switch (code) {
    case GIMPI_OK: return "Error 0";
    case GIMPI_EBADPARAM: return "Bad parameter";
    case GIMPI_EMISMATCH: return "Parameter mismatch";
    case GIMPI_EOVERFLOW: return "Value too large";
    case GIMPI_ENODATA: return "End of buffer";
    case GIMPI_ENOHOST: return "No such host";
    case GIMPI_ENOFILE: return "No such file";
    case GIMPI_EDENIED: return "Permission denied";
    case GIMPI_ENOMEM: return "Malloc failed";
    case GIMPI_EBADMSG: return "Can't decode message";
    case GIMPI_ESYSERR: return "Can't contact local daemon";
    case GIMPI_ENOBUF: return "No current buffer";
    case GIMPI_ENOSUCHBUF: return "No such buffer";
    case GIMPI_ENULLGROUP: return "Null group name";
    case GIMPI_EDUPGROUP: return "Already in group";
    case GIMPI_ENOGROUP: return "No such group";
    case GIMPI_ENOTINGROUP: return "Not in group";
    case GIMPI_ENOINST: return "No such instance";
    case GIMPI_EHOSTFAIL: return "Host failed";
    case GIMPI_ENOPARENT: return "No parent task";
    case GIMPI_ENOTIMPL: return "Not implemented";
    case GIMPI_EDSYSERR: return "Pvmd system error";
    case GIMPI_EBADVERSION: return "Version mismatch";
    case GIMPI_EOUTOFRES: return "Out of resources";
    case GIMPI_EDUPHOST: return "Duplicate host";
    case GIMPI_ECANTSTART: return "Can't start pvmd";
    case GIMPI_EALREADY: return "Already in progress";
    case GIMPI_ENOTASK: return "No such task";
    case GIMPI_ENOTFOUND: return "Not Found";
    case GIMPI_EEXISTS: return "Already Exists";
    case GIMPI_EHOSTRNMSTR: return "Hoster must run on master host";
    case GIMPI_EPARENTNOTSET: return "Spawning parent set PvmNoParent";
    case GIMPI_EIPLOOPBACK: return "Master Host IP Address is Loopback! (See pvm3/Readme)";
    case -1: return "Error 1";
    case -9: return "Error 9";
    case -11: return "Error 11";
    case -13: return "Error 13";
    default: return "Unknown Error";
    }
}
