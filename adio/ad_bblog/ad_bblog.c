/*
 * The operations table of the bblog driver: nothing else lives in this file. Designated
 * initializers, so no function can land in the wrong slot.
 *
 * Invariants. Every slot holds bblog's own function but individual file pointer arithmetic
 * (ADIOI_GEN_SeekIndividual) and the completion of nonblocking requests (ADIOI_FAKE_*): a request
 * has completed when its call returns. SetLock is set only where ROMIO has the slot
 * (ADIOI_BBLOG_HAVE_SETLOCK).
 */
#include "ad_bblog.h"
#include "ad_bblog_ops.h"
#include "adioi.h"

struct ADIOI_Fns_struct ADIO_BBLOG_operations = {
    /* A deferred open (ROMIO's ADIO_ImmediateOpen): the inner file opened where it was not. */
    .ADIOI_xxx_Open = ADIOI_BBLOG_Open,
    /* Collective open: hints, inner file, log. No create pass at this level. */
    .ADIOI_xxx_OpenColl = ADIOI_BBLOG_OpenColl,
    /* Reads overlay this process's logged extents on the inner file. */
    .ADIOI_xxx_ReadContig = ADIOI_BBLOG_ReadContig,
    /* Writes append flattened extents to the log; nothing reaches the PFS yet. */
    .ADIOI_xxx_WriteContig = ADIOI_BBLOG_WriteContig,
    /* Collective read: the inner two-phase read when no process has logged data there. */
    .ADIOI_xxx_ReadStridedColl = ADIOI_BBLOG_ReadStridedColl,
    /* Collective write: logged like an independent one; the drain aggregates later. */
    .ADIOI_xxx_WriteStridedColl = ADIOI_BBLOG_WriteStridedColl,
    /* Individual file pointer arithmetic is file-system independent. */
    .ADIOI_xxx_SeekIndividual = ADIOI_GEN_SeekIndividual,
    /* get_size (max of PFS size and own logged end), atomicity (drain, write through). */
    .ADIOI_xxx_Fcntl = ADIOI_BBLOG_Fcntl,
    /* ROMIO hints go to the inner file; bblog_* hints are validated at open. */
    .ADIOI_xxx_SetInfo = ADIOI_BBLOG_SetInfo,
    .ADIOI_xxx_ReadStrided = ADIOI_BBLOG_ReadStrided,
    .ADIOI_xxx_WriteStrided = ADIOI_BBLOG_WriteStrided,
    /* Close: drain, close the inner file, remove the logs. */
    .ADIOI_xxx_Close = ADIOI_BBLOG_Close,
    /* Nonblocking I/O completes when the data is in the log (reads: when read). */
    .ADIOI_xxx_IreadContig = ADIOI_BBLOG_IreadContig,
    .ADIOI_xxx_IwriteContig = ADIOI_BBLOG_IwriteContig,
    .ADIOI_xxx_ReadDone = ADIOI_FAKE_IODone,
    .ADIOI_xxx_WriteDone = ADIOI_FAKE_IODone,
    .ADIOI_xxx_ReadComplete = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_WriteComplete = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_IreadStrided = ADIOI_BBLOG_IreadStrided,
    .ADIOI_xxx_IwriteStrided = ADIOI_BBLOG_IwriteStrided,
    /* MPI_File_sync: drain (bblog_sync=pfs) or make the log durable (bb). */
    .ADIOI_xxx_Flush = ADIOI_BBLOG_Flush,
    /* set_size: drain, then resize the inner file. */
    .ADIOI_xxx_Resize = ADIOI_BBLOG_Resize,
    /* Delete the PFS file through its own driver, and this user's stale logs of it. */
    .ADIOI_xxx_Delete = ADIOI_BBLOG_Delete,
    .ADIOI_xxx_Feature = ADIOI_BBLOG_Feature,
    .fsname = "BBLOG: burst-buffer log, drained with collective two-phase writes",
    .ADIOI_xxx_IreadStridedColl = ADIOI_BBLOG_IreadStridedColl,
    .ADIOI_xxx_IwriteStridedColl = ADIOI_BBLOG_IwriteStridedColl,
#ifdef ADIOI_BBLOG_HAVE_SETLOCK
    /* Locks are the inner file's (atomic mode, shared file pointer). */
    .ADIOI_xxx_SetLock = ADIOI_BBLOG_SetLock,
#endif
};
