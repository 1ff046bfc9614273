/* A tiny persistent thread pool (pthreads): workers sleep on a condition variable between jobs. One job runs
 * at a time; a second caller that finds the pool busy (another Python thread, with the GIL released) simply
 * runs its job on its own thread, which gives the same result. */
#include <pthread.h>
#include <stdlib.h>

#include "engine.h"

#define MAX_WORKERS 255

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; /* held by the caller running a job */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static int nworkers, pending;
static unsigned long generation;
static struct {
    odml_task fn;
    void *ctx;
    ptrdiff_t n, chunk;
} job;

static void run_chunk(int i) {
    ptrdiff_t begin = (ptrdiff_t)i * job.chunk, end = begin + job.chunk;
    if (end > job.n) end = job.n;
    if (begin < end) job.fn(job.ctx, begin, end);
}

static void *worker(void *arg) {
    int i = (int)(intptr_t)arg; /* worker i runs chunk i (the caller runs chunk 0) */
    unsigned long seen = 0;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (generation == seen) pthread_cond_wait(&wake, &lock);
        seen = generation;
        pthread_mutex_unlock(&lock);
        run_chunk(i);
        pthread_mutex_lock(&lock);
        if (--pending == 0) pthread_cond_signal(&done);
    }
    return NULL;
}

/* After fork() only the forking thread exists: forget the workers (new ones start on demand). */
static void forget_workers(void) {
    pthread_mutex_init(&busy, NULL);
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
    pthread_cond_init(&done, NULL);
    nworkers = 0;
    pending = 0;
}

static int grow(int want) { /* with lock held: at least `want` workers, or as many as could start */
    static int registered;
    if (!registered) registered = !pthread_atfork(NULL, NULL, forget_workers);
    while (nworkers < want && nworkers < MAX_WORKERS) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 4 << 20); /* kernels keep rows and state on the stack (to about
                                                    * 100 KiB: the softmaxes' far sums alone take 53 KiB with
                                                    * AVX-512): not left to the C library's default (musl's
                                                    * is 128 KiB) */
        int failed = pthread_create(&t, &attr, worker, (void *)(intptr_t)(nworkers + 1));
        pthread_attr_destroy(&attr);
        if (failed) break;
        nworkers++;
    }
    return nworkers;
}

void odml_parallel(odml_task fn, void *ctx, ptrdiff_t n, ptrdiff_t grain, int nthreads) {
    if (n <= 0) return;
    ptrdiff_t units = (n + grain - 1) / grain;
    if (nthreads > units) nthreads = (int)units;
    if (nthreads <= 1 || pthread_mutex_trylock(&busy)) {
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&lock);
    int workers = grow(nthreads - 1);
    if (workers < nthreads - 1) nthreads = workers + 1;
    job.fn = fn, job.ctx = ctx, job.n = n;
    job.chunk = (units + nthreads - 1) / nthreads * grain;
    pending = nworkers; /* every worker wakes; those past the last chunk find it empty */
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    run_chunk(0);
    pthread_mutex_lock(&lock);
    while (pending) pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&busy);
}
