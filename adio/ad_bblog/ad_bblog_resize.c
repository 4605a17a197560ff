/*
 * MPI_File_set_size (collective): drain first, so that no logged byte past the new size can
 * come back later, then let the inner driver resize the file.
 */
#include "ad_bblog.h"
#include "adioi.h"

void ADIOI_BBLOG_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    *error_code = st->passthrough ? MPI_SUCCESS : ADIOI_BBLOG_SETTLE(st);
    if (!st->passthrough && *error_code == MPI_SUCCESS)
        *error_code = ADIOI_BBLOG_Drain(fd, 0);
    if (*error_code == MPI_SUCCESS)
        ADIO_Resize(st->inner, size, error_code);
    ADIOI_BBLOG_Coll_end(fd, 0, 1);
}
