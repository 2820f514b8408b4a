// Reader-writer locks for Loom's registries.
//
// glibc's default rwlock prefers readers: a steady stream of lookups starves
// a registration forever. Loom's registries are read far more often than
// written, but a registration must still finish, so their locks prefer
// writers (new readers wait while a writer is queued).

#ifndef LOOM_BASE_RWLOCK_H_
#define LOOM_BASE_RWLOCK_H_

#include <pthread.h>

static inline void loom__rwlock_initialize(pthread_rwlock_t* lock) {
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
#if defined(__GLIBC__)
  pthread_rwlockattr_setkind_np(&attr,
                                PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
  pthread_rwlock_init(lock, &attr);
  pthread_rwlockattr_destroy(&attr);
}

#endif  // LOOM_BASE_RWLOCK_H_
