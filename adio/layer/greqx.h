/*
 * greqx.h - MPICH's extended generalized requests (MPIX_Grequest_class_create/_allocate: a
 * request whose poll function the MPI calls while the program waits for it), declared for
 * ROMIO built over an MPI that has only the standard ones (Open MPI). ROMIO's nonblocking
 * collective I/O and its POSIX AIO path start such requests; layer_greq.c implements them over
 * MPI_Grequest_start and runs the poll functions from the program's completion calls.
 * scripts/build-layer.sh force-includes this header into every ROMIO source for such an MPI.
 */
#ifndef BBLOG_LAYER_GREQX_H
#define BBLOG_LAYER_GREQX_H

#include <mpi.h>

typedef int MPIX_Grequest_poll_function(void *extra_state, MPI_Status *status);
typedef int MPIX_Grequest_wait_function(int count, void **array_of_states, double timeout,
                                        MPI_Status *status);
typedef struct layer_greq_class *MPIX_Grequest_class;

int PMPIX_Grequest_class_create(MPI_Grequest_query_function *query_fn,
                                MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel_fn,
                                MPIX_Grequest_poll_function *poll_fn,
                                MPIX_Grequest_wait_function *wait_fn,
                                MPIX_Grequest_class *greq_class);
int PMPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class, void *extra_state,
                                  MPI_Request *request);
#define MPIX_Grequest_class_create PMPIX_Grequest_class_create
#define MPIX_Grequest_class_allocate PMPIX_Grequest_class_allocate

#endif
