/* The floor of `sign '*'`'s writing on the machine it runs on, as `sign` wrote before 4c0c85e
 * (each file renamed over its target; since then `src/cli/replace.rs` exchanges staged files with
 * their targets and writes the old files again): every listed file replaced atomically and
 * durably by a rename, and nothing else — no load, no validation, no signing, no checks of
 * stamps. Each file's bytes are read first (not timed)
 * and a line of 160 bytes put before them; then, timed: each new text written to a temporary
 * file beside its target (`openat` O_CREAT|O_EXCL, `write`, `close`), one `syncfs`, each
 * temporary renamed over its target (`renameat`), one `syncfs` — on THREADS threads (default 16,
 * `sign`'s I/O threads), each taking runs of 64 files in turn.
 *
 *   gcc -O2 -pthread -o target/replace_floor benches/replace_floor.c
 *   find TREE/project/.ai/tools -type f | target/replace_floor [THREADS]
 *
 * It replaces the files (with a line that is not a signature): run it on a copy. On a file system
 * mounted with `discard`, each rename that frees the old file's blocks waits for their discard
 * (the block layer lets few discards be in flight at once: `wbt`). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char **paths, **tmps, **texts;
static size_t *sizes;
static long n, next;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* CPU time of the process so far (user and system, every thread), in seconds. */
static double cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static long take(void) {
    pthread_mutex_lock(&lock);
    long at = next;
    next += 64;
    pthread_mutex_unlock(&lock);
    return at;
}

static void *stage(void *arg) {
    (void)arg;
    for (long at; (at = take()) < n;)
        for (long i = at; i < n && i < at + 64; i++) {
            int fd = open(tmps[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0 || write(fd, texts[i], sizes[i]) != (ssize_t)sizes[i]) {
                perror(tmps[i]);
                exit(1);
            }
            close(fd);
        }
    return NULL;
}

static void *rename_all(void *arg) {
    (void)arg;
    for (long at; (at = take()) < n;)
        for (long i = at; i < n && i < at + 64; i++)
            if (rename(tmps[i], paths[i]) != 0) {
                perror(paths[i]);
                exit(1);
            }
    return NULL;
}

static void on_threads(int threads, void *(*f)(void *)) {
    pthread_t t[256];
    next = 0;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, f, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    if (threads < 1 || threads > 256)
        threads = 16;
    char line[4096];
    long cap = 1024;
    paths = malloc(cap * sizeof *paths);
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (n == cap)
            paths = realloc(paths, (cap *= 2) * sizeof *paths);
        paths[n++] = strdup(line);
    }
    tmps = malloc(n * sizeof *tmps);
    texts = malloc(n * sizeof *texts);
    sizes = malloc(n * sizeof *sizes);
    for (long i = 0; i < n; i++) {
        struct stat st;
        int fd = open(paths[i], O_RDONLY);
        if (fd < 0 || fstat(fd, &st) != 0) {
            perror(paths[i]);
            return 1;
        }
        sizes[i] = st.st_size + 160;
        texts[i] = malloc(sizes[i]);
        memset(texts[i], '#', 159);
        texts[i][159] = '\n';
        if (read(fd, texts[i] + 160, st.st_size) != st.st_size) {
            perror(paths[i]);
            return 1;
        }
        close(fd);
        tmps[i] = malloc(strlen(paths[i]) + 8);
        sprintf(tmps[i], "%s.fl.tmp", paths[i]);
    }
    int dir = open(paths[0], O_RDONLY);
    double t0 = now(), c0 = cpu();
    on_threads(threads, stage);
    double t1 = now(), c1 = cpu();
    syncfs(dir);
    double t2 = now(), c2 = cpu();
    on_threads(threads, rename_all);
    double t3 = now(), c3 = cpu();
    syncfs(dir);
    double t4 = now(), c4 = cpu();
    printf("%ld files, %d threads: %.3f s (stage %.3f, sync %.3f, rename %.3f, sync %.3f); CPU time "
           "of the process %.3f s (%.3f, %.3f, %.3f, %.3f)\n",
           n, threads, t4 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3, c4 - c0, c1 - c0, c2 - c1,
           c3 - c2, c4 - c3);
    return 0;
}
