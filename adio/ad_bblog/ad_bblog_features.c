/*
 * What ROMIO may ask of a bblog file, and the locks it uses for atomic mode and the shared file
 * pointer, which are the inner file's.
 *
 * Invariants. ROMIO may use the shared file pointer (a slot per view: ad_bblog_sharedfp.c), locks,
 * atomic mode and unlink after close; not data sieving at this level (the inner driver decides for
 * itself), nor a scalable open or resize: bblog's open is collective over the full communicator.
 *
 * Locking. SetLock hands every lock to the inner driver, after opening the inner file where a
 * deferred open left it closed (Inner_ready).
 */
#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "adioi.h"

int ADIOI_BBLOG_Feature(ADIO_File fd, int flag)
{
    switch (flag) {
    case ADIO_SHARED_FP:        /* one slot per view, no barrier in set_view: ad_bblog_sharedfp.c */
    case ADIO_LOCKS:
    case ADIO_ATOMIC_MODE:
    case ADIO_UNLINK_AFTER_CLOSE:
        return 1;
    default:
        /* No data sieving at this level (the inner driver decides for itself), no scalable
         * open or resize: bblog's open is collective over the full communicator. */
        return 0;
    }
}

#ifdef ADIOI_BBLOG_HAVE_SETLOCK
int ADIOI_BBLOG_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                        ADIO_Offset len)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if (ADIOI_BBLOG_Inner_ready(fd) != MPI_SUCCESS)
        return MPI_ERR_IO;
    return st->inner->fns->ADIOI_xxx_SetLock(st->inner, cmd, type, offset, whence, len);
}
#endif
