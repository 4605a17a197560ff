#include <string.h>

#include "bblog_err.h"

const char *bblog_strerror(int rc)
{
    switch (rc) {
    case 0:
        return "success";
    case BBLOG_ECORRUPT:
        return "log corrupt: a record or its payload fails its checksum before the end of the log";
    case BBLOG_ETORN:
        return "log ends in a torn (partially written) record";
    case BBLOG_EVERSION:
        return "log format version not supported by this build of bblog";
    case BBLOG_EBADMAGIC:
        return "not a bblog log (bad magic number)";
    case BBLOG_EENDIAN:
        return "log written with the other byte order";
    case BBLOG_EMISMATCH:
        return "logs belong to another job, file or process set";
    case BBLOG_EBADHDR:
        return "log header corrupt or inconsistent";
    case BBLOG_ESTICKY:
        return "an earlier durable write to this log failed; the log can no longer be trusted";
    case BBLOG_EINVAL:
        return "invalid argument";
    case BBLOG_EUNBORN:
        return "empty log: its creation did not finish (no header), so it holds nothing";
    default:
        return rc > 0 ? strerror(rc) : "unknown bblog error";
    }
}
