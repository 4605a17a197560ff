/*
 * bblog return codes, in the LMDB manner: 0 is success, a positive value is an errno from the
 * system, a negative value is a bblog condition from the reserved range below. One
 * bblog_strerror() names both.
 */
#ifndef BBLOG_ERR_H
#define BBLOG_ERR_H

#define BBLOG_E_FIRST     (-30900)
#define BBLOG_ECORRUPT    (-30900)      /* a record or payload fails its CRC before the tail */
#define BBLOG_ETORN       (-30899)      /* the log ends in a partially written record */
#define BBLOG_EVERSION    (-30898)      /* format version this build cannot read */
#define BBLOG_EBADMAGIC   (-30897)      /* not a bblog log file */
#define BBLOG_EENDIAN     (-30896)      /* written with the other byte order */
#define BBLOG_EMISMATCH   (-30895)      /* logs of another job, file or process set */
#define BBLOG_EBADHDR     (-30894)      /* header fails its CRC or holds impossible values */
#define BBLOG_ESTICKY     (-30893)      /* an earlier durable write failed; the log is unusable */
#define BBLOG_EINVAL      (-30892)      /* a caller passed an impossible argument */
#define BBLOG_EUNBORN     (-30891)      /* an empty .meta file: its creation did not finish */
#define BBLOG_E_LAST      (-30891)

const char *bblog_strerror(int rc);

#endif
