// Which backend collectives (CollectiveReduceV2) run on in this process:
// the in-process one (the default: the participants are threads of this
// process, e.g. the components of a parallel handler) or MPI (the
// participants are the ranks of MPI_COMM_WORLD, one per process; the
// program runs under mpirun).
//
//   int32_t rank, size;
//   LOOM_RETURN_IF_ERROR(loom_collective_use_mpi(0, &rank, &size));
//   ... CollectiveReduceV2 with group_size = size, same keys on every rank
//   LOOM_RETURN_IF_ERROR(loom_collective_mpi_finalize());
//
// The backend is one per process (collectives of every context use it).
#ifndef LOOM_COLLECTIVE_H_
#define LOOM_COLLECTIVE_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

// The timeout of a collective on MPI whose op asks for none
// (timeout_seconds = 0, TensorFlow's "wait forever"), unless
// loom_collective_use_mpi is given another: across processes a peer that
// died or stopped calling collectives would otherwise hang every rank.
#define LOOM_COLLECTIVE_MPI_DEFAULT_TIMEOUT_SECONDS 300.0

// Whether this build of Loom has the MPI backend (MPI was found when it
// was configured).
LOOM_API bool loom_collective_mpi_available(void);

// Makes the collectives of this process run between the ranks of
// MPI_COMM_WORLD (on a duplicate of it, so they never match the caller's
// own MPI calls). Initializes MPI (MPI_THREAD_SERIALIZED: Loom serializes
// its MPI calls) unless the caller already has, with at least that
// level. A collective's group_size must then be the number of ranks.
// `default_timeout_seconds` applies to ops with timeout_seconds = 0
// (0: LOOM_COLLECTIVE_MPI_DEFAULT_TIMEOUT_SECONDS). Sets *out_rank and
// *out_size (either may be NULL). Calling it again only reports them.
// UNIMPLEMENTED when the build has no MPI; INVALID_ARGUMENT for a negative
// or non-finite timeout; FAILED_PRECONDITION when MPI was finalized or
// initialized with a lower thread level; INTERNAL for an MPI error.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_collective_use_mpi(
    double default_timeout_seconds, int32_t* out_rank, int32_t* out_size);

// Makes collectives run in this process again (the default). MPI stays
// initialized.
LOOM_API void loom_collective_use_local(void);

// Goes back to the in-process backend and, if loom_collective_use_mpi
// initialized MPI, finalizes it (MPI cannot be initialized again: the MPI
// backend cannot be used after this). OK when MPI was never used.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_collective_mpi_finalize(void);

LOOM_EXTERN_C_END

#endif  // LOOM_COLLECTIVE_H_
