/*
 * The one array-growth helper of the core and the driver. Plain C, no MPI.
 */
#ifndef BBLOG_GROW_H
#define BBLOG_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Makes the array *p (capacity *cap elements of size bytes) hold at least need elements:
 * nothing when it does, else realloc to the capacity doubled (from 16) until it does. Returns
 * 0, or ENOMEM with *p and *cap unchanged when memory runs out or the byte count would not fit
 * in a size_t. Called with (void **) &array, as every caller's array is a plain pointer.
 */
static inline int bblog_grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t n = *cap ? *cap : 16;
    void *q;

    if (need <= *cap)
        return 0;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return ENOMEM;
        n *= 2;
    }
    if (size != 0 && n > SIZE_MAX / size)
        return ENOMEM;
    q = realloc(*p, n * size);
    if (q == NULL)
        return ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

#endif
