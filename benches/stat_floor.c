/* The floor of a replay of an unchanged tree: `fstatat` of every name the census stamps, nothing
 * else (no cache read, no process work), on one thread and on two, three times each.
 *
 *   gcc -O2 -pthread -o target/stat_floor benches/stat_floor.c
 *   (cd TREE && find project/.ai user/.ai system/.ai) | target/stat_floor
 *
 * A replay must stamp every file (an edit in place changes no folder's stamp) and every folder
 * (a file added or removed changes only its folder's): this is what it cannot go below on the
 * machine it runs on. Paths are relative to the working directory, as `find` prints them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static char **paths;
static long n;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *half(void *arg) {
    struct stat st;
    for (long i = (long)arg; i < n; i += 2)
        fstatat(AT_FDCWD, paths[i], &st, AT_SYMLINK_NOFOLLOW);
    return NULL;
}

int main(void) {
    char line[4096];
    long cap = 1024;
    paths = malloc(cap * sizeof *paths);
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (n == cap) paths = realloc(paths, (cap *= 2) * sizeof *paths);
        paths[n++] = strdup(line);
    }
    for (int round = 0; round < 3; round++) {
        struct stat st;
        double t0 = now();
        for (long i = 0; i < n; i++) fstatat(AT_FDCWD, paths[i], &st, AT_SYMLINK_NOFOLLOW);
        double t1 = now();
        pthread_t a, b;
        pthread_create(&a, NULL, half, (void *)0);
        pthread_create(&b, NULL, half, (void *)1);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        double t2 = now();
        printf("%ld names: one thread %.1f ms (%.2f us each), two threads %.1f ms\n", n,
               (t1 - t0) * 1e3, (t1 - t0) / n * 1e6, (t2 - t1) * 1e3);
    }
    return 0;
}
