/*
 * ROMIO's operations of the driver (the table in ad_bblog.c, the hooks the graft adds to
 * ROMIO), and what the operations' files offer each other: a logged extent (ad_bblog_write.c)
 * and the notes of syncs made without an agreement (ad_bblog_flush.c).
 */
#ifndef AD_BBLOG_OPS_H_INCLUDED
#define AD_BBLOG_OPS_H_INCLUDED

#include "ad_bblog.h"

/* ---- ROMIO operations ---- */
void ADIOI_BBLOG_Open(ADIO_File fd, int *error_code);
void ADIOI_BBLOG_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_BBLOG_Close(ADIO_File fd, int *error_code);
void ADIOI_BBLOG_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
void ADIOI_BBLOG_WriteContig(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_WriteStrided(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_WriteStridedColl(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_IwriteContig(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IwriteStrided(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                               MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                               ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IwriteStridedColl(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_ReadContig(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_ReadStrided(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_ReadStridedColl(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_IreadContig(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IreadStrided(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IreadStridedColl(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_BBLOG_Flush(ADIO_File fd, int *error_code);
void ADIOI_BBLOG_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_BBLOG_Delete(const char *filename, int *error_code);
int ADIOI_BBLOG_Feature(ADIO_File fd, int flag);
int ADIOI_BBLOG_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                        ADIO_Offset len);

/* Independent: appends [off, off+len) of buf to the log (or writes it through). */
int ADIOI_BBLOG_Log_extent(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, const void *buf);

/* ad_bblog_flush.c: Notes_settle hears the rest of the last sync made without an agreement
 * (the other processes' notes, and the "done" of those that drained alone), before any write,
 * collective call or close on the file (ADIOI_BBLOG_SETTLE); Notes_close also waits for this
 * process's sends and frees the communicator, at close, on every process. */
int ADIOI_BBLOG_Notes_settle(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Notes_close(ADIO_File fd);
#define ADIOI_BBLOG_SETTLE(st) ((st)->notes_pending ? ADIOI_BBLOG_Notes_settle(st) : MPI_SUCCESS)

/* ad_bblog_sharedfp.c: the shared file pointer, one slot per view; called from ROMIO's
 * MPI_File_set_view, ADIO_Get_shared_fp and ADIO_Set_shared_fp (graft). */
void ADIOI_BBLOG_View_changed(ADIO_File fd);
void ADIOI_BBLOG_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                               int *error_code);
void ADIOI_BBLOG_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);

#endif /* AD_BBLOG_OPS_H_INCLUDED */
