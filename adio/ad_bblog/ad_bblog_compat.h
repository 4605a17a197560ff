/*
 * Every difference between the ROMIO versions bblog builds against lives here, so that the
 * driver sources stay one set of files.
 *   MPICH 4.0.x: I/O counts are int.
 *   MPICH 4.1 and later: I/O counts are MPI_Aint.
 */
#ifndef AD_BBLOG_COMPAT_H_INCLUDED
#define AD_BBLOG_COMPAT_H_INCLUDED

#include "adio.h"

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40100000
typedef MPI_Aint ADIOI_BBLOG_count_t;
#else
typedef int ADIOI_BBLOG_count_t;
#endif

#ifdef HAVE_STATUS_SET_BYTES
#define ADIOI_BBLOG_SET_BYTES(status, bytes) \
    do { if (status) MPIR_Status_set_bytes((status), MPI_BYTE, (bytes)); } while (0)
#else
#define ADIOI_BBLOG_SET_BYTES(status, bytes) do { (void) (status); } while (0)
#endif

#endif
