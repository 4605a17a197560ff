/*
 * layer_check.c - part of libbblog-mpiio.so (scripts/build-layer.sh): when the library is
 * loaded, it checks that the process's MPI_File_open is the layer's own. Linked after the MPI
 * library (a link line with libmpi first, without the preload), the binary MPI's own MPI-IO
 * answers every call, bblog: files and ROMIO_FSTYPE_FORCE=bblog: included, and bblog would be
 * lost without a word; so the library says so on stderr (once per job where the launcher gives
 * ranks, on rank 0). A statically linked program never loads the library at all: bblog-run
 * checks for that before it starts the command.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The process's rank from the launcher's environment; -1 when no launcher gives one. */
static int launcher_rank(void)
{
    static const char *const vars[] = { "PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
        "SLURM_PROCID" };

    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);

        if (v && *v)
            return atoi(v);
    }
    return -1;
}

__attribute__((constructor)) static void layer_check(void)
{
    void *seen = dlsym(RTLD_DEFAULT, "MPI_File_open");
    Dl_info mine, theirs;

    if (!seen || !dladdr((void *) layer_check, &mine) || !dladdr(seen, &theirs) ||
        mine.dli_fbase == theirs.dli_fbase || launcher_rank() > 0)
        return;
    fprintf(stderr, "bblog: this program's MPI_File_open is %s's, not bblog's layer (%s): "
            "that library comes before the layer in the link order, so bblog: files and "
            "ROMIO_FSTYPE_FORCE=bblog: are not handled by bblog; preload the layer "
            "(bblog-run, or LD_PRELOAD=%s) or link it before the MPI library\n",
            theirs.dli_fname ? theirs.dli_fname : "another library",
            mine.dli_fname ? mine.dli_fname : "libbblog-mpiio.so",
            mine.dli_fname ? mine.dli_fname : "libbblog-mpiio.so");
}
