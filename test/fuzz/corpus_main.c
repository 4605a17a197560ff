/*
 * Corpus runner: a main() for a fuzz target without the fuzzing engine, so that make check can
 * replay the committed corpus with any compiler (the sanitizer build of scripts/test-all.sh
 * runs it under ASan and UBSan). Arguments are files or directories (every regular file in
 * them, in name order); with none, the directory FUZZ_CORPUS_DIR the build names. An empty
 * corpus is a failure: it would pass without testing anything.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzzlog.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || (buf = malloc((size_t) len + 1)) == NULL ||
        fread(buf, 1, (size_t) len, f) != (size_t) len) {
        fprintf(stderr, "%s: can't read the input\n", path);
        if (f)
            fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t) len);
    free(buf);
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Runs every regular file of DIR; returns the count, or -1. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    long done = 0;

    if (d == NULL) {
        perror(dir);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            if (names == NULL)
                abort();
        }
        if (asprintf(&names[n], "%s/%s", dir, de->d_name) < 0)
            abort();
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;

        if (done >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
            done = run_file(names[i]) == 0 ? done + 1 : -1;
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv)
{
    const char *dflt[] = { FUZZ_CORPUS_DIR };
    const char *const *args = argc > 1 ? (const char *const *) argv + 1 : dflt;
    int nargs = argc > 1 ? argc - 1 : 1;
    long total = 0;

    for (int i = 0; i < nargs; i++) {
        struct stat st;
        long n;

        if (stat(args[i], &st) != 0) {
            perror(args[i]);
            return 1;
        }
        n = S_ISDIR(st.st_mode) ? run_dir(args[i]) : run_file(args[i]) == 0 ? 1 : -1;
        if (n < 0)
            return 1;
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "%s: no inputs found in %s: the corpus is missing\n", argv[0], args[0]);
        return 1;
    }
    printf("%s: %ld inputs ran without a finding\n", argv[0], total);
    return 0;
}
