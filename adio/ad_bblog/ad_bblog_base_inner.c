/*
 * The inner file: the real ADIO file on the parallel file system that bblog drains into. Here:
 * which ROMIO driver serves it, rank 0's create pass, its late open, its view, reads of it, and its
 * close.
 *
 * Driver. Which ROMIO driver serves it is decided here rather than by ADIO_ResolveFileType, because
 * under ROMIO_FSTYPE_FORCE=bblog: that function would answer "bblog" again. A prefix after "bblog:"
 * names the inner driver (bblog:lustre:/p); without one, the file system is told by statfs of the
 * file or its directory, as ROMIO does, and ufs serves the types no other driver claims. A
 * collective open asks on rank 0 alone and shares the answer in its agreement (ad_bblog_open.c), as
 * ROMIO's scalable file-system check does: a statfs of a file that does not exist yet is a lookup
 * on the file system's servers (an MDS request on Lustre) that every process would otherwise make
 * at every create (RATIONALE: bench/results/rationale.md, inner-statfs). Rank 0 also makes the
 * create pass of a file that ufs serves there (Inner_create); a driver of its own (Lustre, GPFS)
 * creates with its own calls.
 *
 * Data path. Reads of the PFS bytes (Read_inner) go through the inner driver in pieces of at most
 * 1 GiB and stop at the file's end. A strided operation that reaches the inner file runs with the
 * outer file's view and file pointer, copied over first (Inner_sync_view sets the view again only
 * where it may have changed). Inner_sieves says whether a handle's one-process drains may sieve,
 * and Inner_lock takes the byte-range locks they use.
 *
 * Invariants. The inner file shares the outer file's communicator while open, and gets a duplicate
 * of MPI_COMM_SELF of its own to free at close (Inner_close): ROMIO frees the outer file's after
 * bblog's Close returns, and the close of the drivers bblog drains into makes no collective call.
 * Where a deferred open (romio_no_indep_rw) left a process without the inner file open, Inner_ready
 * opens it before a read, get_size or write through.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "adioi.h"

#define BBLOG_NFS_MAGIC    0x6969
#define BBLOG_LUSTRE_MAGIC 0x0BD00BD0
#define BBLOG_GPFS_MAGIC   0x47504653
#define BBLOG_PANFS_MAGIC  0xAAD7AAEA

struct inner_fs {
    const char *prefix;
    int fstype;
    ADIOI_Fns *ops;
    long magic;                 /* statfs f_type that selects it without a prefix, or 0 */
};

static const struct inner_fs inner_fs[] = {
#ifdef ROMIO_UFS
    {"ufs:", ADIO_UFS, &ADIO_UFS_operations, 0},
#endif
#ifdef ROMIO_NFS
    {"nfs:", ADIO_NFS, &ADIO_NFS_operations, BBLOG_NFS_MAGIC},
#endif
#ifdef ROMIO_LUSTRE
    {"lustre:", ADIO_LUSTRE, &ADIO_LUSTRE_operations, BBLOG_LUSTRE_MAGIC},
#endif
#ifdef ROMIO_GPFS
    {"gpfs:", ADIO_GPFS, &ADIO_GPFS_operations, BBLOG_GPFS_MAGIC},
#endif
#ifdef ROMIO_PANFS
    {"panfs:", ADIO_PANFS, &ADIO_PANFS_operations, BBLOG_PANFS_MAGIC},
#endif
#ifdef ROMIO_XFS
    {"xfs:", ADIO_XFS, &ADIO_XFS_operations, 0},
#endif
#ifdef ROMIO_PVFS2
    {"pvfs2:", ADIO_PVFS2, &ADIO_PVFS2_operations, 0},
#endif
#ifdef ROMIO_TESTFS
    {"testfs:", ADIO_TESTFS, &ADIO_TESTFS_operations, 0},
#endif
};
#define NINNER (sizeof(inner_fs) / sizeof(inner_fs[0]))

/* statfs of the directory that holds path. */
static long dir_magic(const char *path)
{
    struct statfs sb;
    char dir[PATH_MAX];
    char *slash;

    if (strlen(path) >= sizeof(dir))
        return 0;
    strcpy(dir, path);
    slash = strrchr(dir, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return statfs(dir, &sb) == 0 ? (long) sb.f_type : 0;
}

/* statfs of the file, else dir, its directory's type (the file may not exist yet). */
static long file_magic(const char *path, long dir)
{
    struct statfs sb;

    return statfs(path, &sb) == 0 ? (long) sb.f_type : dir;
}

/* statfs of the file, else of its directory. */
long ADIOI_BBLOG_Inner_magic(const char *path)
{
    struct statfs sb;

    if (statfs(path, &sb) == 0)
        return (long) sb.f_type;
    return dir_magic(path);
}

/*
 * The create pass of ROMIO's ufs driver, made by rank 0 of an open before the processes agree
 * (ad_bblog_open.c): open with O_CREAT, with the mode ufs gives a new file, and close. When the
 * file's driver is still to be told (no prefix, *magic not NULL), the directory is asked first
 * and the file is created only where the directory is one ufs serves: a driver of its own
 * (Lustre, GPFS) creates with its own calls (striping from the hints). *magic is then the
 * file's own type, from fstatfs of the open descriptor (a file that existed may be a link to
 * another file system), which costs no lookup. Returns 1 when the file exists now; 0 when it
 * was not created (another driver, or the open failed: the inner open then makes its create
 * pass and reports the error as ROMIO does), with *magic from Inner_magic.
 */
int ADIOI_BBLOG_Inner_create(const char *path, int access_mode, int perm, long *magic)
{
    struct statfs sb;
    int fstype, f, rw = (access_mode & ADIO_RDWR) ? O_RDWR : O_WRONLY;
    long dir = magic ? dir_magic(path) : 0;
    ADIOI_Fns *ops;

    if (magic && (ADIOI_BBLOG_Inner_by_magic(path, dir, &fstype, &ops) != MPI_SUCCESS ||
                  fstype != ADIO_UFS)) {
        *magic = file_magic(path, dir);
        return 0;
    }
    f = open(path, O_CREAT | rw, perm == ADIO_PERM_NULL ? 0666 : perm);
    /* A create that loses a race with another client's create of the same file fails with
     * EEXIST on some FUSE file systems (GlusterFS): the file is there, open it. */
    if (f < 0 && errno == EEXIST)
        f = open(path, rw);
    if (magic)
        *magic = f >= 0 && fstatfs(f, &sb) == 0 ? (long) sb.f_type : file_magic(path, dir);
    if (f < 0)
        return 0;
    close(f);
    return 1;
}

int ADIOI_BBLOG_Inner_prefix(const char *filename, const char **inner_name, int *fstype,
                             ADIOI_Fns ** ops)
{
    static const char myname[] = "ADIOI_BBLOG_INNER_RESOLVE";
    const char *colon = strchr(filename, ':');
    size_t i;

    *inner_name = filename;
    *ops = NULL;
    /* Like MPI_File_open, a one-letter "prefix" is a drive letter, not a file system. */
    if (!colon || colon <= filename + 1)
        return MPI_SUCCESS;
    for (i = 0; i < NINNER; i++) {
        if (strncasecmp(filename, inner_fs[i].prefix, strlen(inner_fs[i].prefix)) == 0) {
            *inner_name = colon + 1;
            *fstype = inner_fs[i].fstype;
            *ops = inner_fs[i].ops;
            return MPI_SUCCESS;
        }
    }
    return ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_IO,
                           "bblog: %s names a file system that bblog cannot stack on "
                           "(not built into this MPI, or bblog itself)", filename);
}

int ADIOI_BBLOG_Inner_by_magic(const char *filename, long magic, int *fstype, ADIOI_Fns ** ops)
{
    size_t i;

    for (i = 0; i < NINNER; i++) {
        if (inner_fs[i].magic && inner_fs[i].magic == magic) {
            *fstype = inner_fs[i].fstype;
            *ops = inner_fs[i].ops;
            return MPI_SUCCESS;
        }
    }
#ifdef ROMIO_UFS
    (void) filename;
    *fstype = ADIO_UFS;
    *ops = &ADIO_UFS_operations;
    return MPI_SUCCESS;
#else
    return ADIOI_BBLOG_Err("ADIOI_BBLOG_INNER_RESOLVE", __LINE__, MPI_ERR_IO,
                           "bblog: no inner driver for %s (ROMIO built without ufs)", filename);
#endif
}

int ADIOI_BBLOG_Inner_resolve(const char *filename, const char **inner_name, int *fstype,
                              ADIOI_Fns ** ops)
{
    int err = ADIOI_BBLOG_Inner_prefix(filename, inner_name, fstype, ops);

    if (err != MPI_SUCCESS || *ops)
        return err;
    return ADIOI_BBLOG_Inner_by_magic(filename, ADIOI_BBLOG_Inner_magic(filename), fstype, ops);
}

int ADIOI_BBLOG_Abspath(const char *name, char *out, size_t n)
{
    char cwd[PATH_MAX];
    int len;

    if (name[0] == '/' || !getcwd(cwd, sizeof(cwd)))
        len = snprintf(out, n, "%s", name);
    else
        len = snprintf(out, n, "%s/%s", cwd, name);
    return len < 0 || (size_t) len >= n ? ENAMETOOLONG : 0;
}

int ADIOI_BBLOG_Contig_access(ADIO_File fd, MPI_Datatype datatype, int file_ptr_type,
                              ADIO_Offset offset, ADIO_Offset * byte_off)
{
    int buf_contig, file_contig;

    ADIOI_Datatype_iscontig(datatype, &buf_contig);
    ADIOI_Datatype_iscontig(fd->filetype, &file_contig);
    if (!buf_contig || !file_contig)
        return 0;
    *byte_off = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind :
        fd->disp + (ADIO_Offset) fd->etype_size * offset;
    return 1;
}

/* The inner file is opened on the outer file's communicator (ad_bblog_open.c), which ROMIO's
 * ADIO_Close would free with it; the outer file's close still needs it (ROMIO frees it after
 * our Close returns). So the inner file gets a communicator of its own to free first: a
 * duplicate of MPI_COMM_SELF, which involves no other process. ROMIO's close of the drivers
 * that bblog drains into makes no collective call. */
void ADIOI_BBLOG_Inner_close(struct ADIOI_BBLOG_state *st, int *error_code)
{
    MPI_Comm_dup(MPI_COMM_SELF, &st->inner->comm);
    ADIO_Close(st->inner, error_code);
    MPIO_File_free(&st->inner);
}

int ADIOI_BBLOG_Inner_sieves(const struct ADIOI_BBLOG_state *st)
{
    return st->ls && st->ls->multi && st->inner != ADIO_FILE_NULL &&
        st->inner->hints->ds_write != ADIOI_HINT_DISABLE &&
        st->inner->fns->ADIOI_xxx_WriteContig == ADIOI_GEN_WriteContig;
}

int ADIOI_BBLOG_Inner_lock(int fd, short type, uint64_t off, uint64_t len)
{
    struct flock fl;
    int rc;

    memset(&fl, 0, sizeof(fl));
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t) off;
    fl.l_len = (off_t) len;
    do
        rc = fcntl(fd, type == F_UNLCK ? F_SETLK : F_SETLKW, &fl);
    while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
}

int ADIOI_BBLOG_Inner_ready(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err = MPI_SUCCESS;

    /* Deferred open (romio_no_indep_rw) leaves non-aggregators without an open inner file;
     * reads, get_size and write-through need one. */
    if (!st->inner->is_open) {
        ADIO_ImmediateOpen(st->inner, &err);
        if (err == MPI_SUCCESS)
            fd->fd_sys = st->inner->fd_sys;
    }
    return err;
}

static int is_named(MPI_Datatype t)
{
    int ni, na, nt, combiner;

    MPI_Type_get_envelope(t, &ni, &na, &nt, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

void ADIOI_BBLOG_Inner_sync_view(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err;

    /* A derived filetype is copied anew by every MPI_File_set_view and its handle may be
     * reused, so only a view of named types can be recognised as unchanged. */
    if (!is_named(fd->filetype) || !is_named(fd->etype) ||
        st->synced_filetype != fd->filetype || st->synced_etype != fd->etype ||
        st->synced_disp != fd->disp) {
        ADIO_Set_view(st->inner, fd->disp, fd->etype, fd->filetype, MPI_INFO_NULL, &err);
        st->synced_filetype = fd->filetype;
        st->synced_etype = fd->etype;
        st->synced_disp = fd->disp;
    }
    st->inner->fp_ind = fd->fp_ind;
    st->inner->atomicity = fd->atomicity;
}

void ADIOI_BBLOG_Inner_set_bytes_view(ADIO_File fd, MPI_Datatype filetype, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    ADIO_Set_view(st->inner, 0, MPI_BYTE, filetype, MPI_INFO_NULL, error_code);
    st->synced_filetype = MPI_DATATYPE_NULL;
}

int ADIOI_BBLOG_Read_inner(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, char *buf,
                           ADIO_Offset * got)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err = ADIOI_BBLOG_Inner_ready(fd);

    *got = 0;
    while (err == MPI_SUCCESS && len > 0) {
        int n = len > (1 << 30) ? (1 << 30) : (int) len, count;
        ADIO_Status status;
        ADIO_ReadContig(st->inner, buf, n, MPI_BYTE, ADIO_EXPLICIT_OFFSET, off, &status, &err);
        if (err != MPI_SUCCESS)
            break;
        MPI_Get_count(&status, MPI_BYTE, &count);
        *got += count;
        if (count < n)
            break;
        buf += n;
        off += n;
        len -= n;
    }
    return err;
}
