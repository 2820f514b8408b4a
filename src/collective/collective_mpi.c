// The MPI collective backend: the participants of a collective are the
// ranks of a duplicate of MPI_COMM_WORLD, one per process. A collective
// runs in two steps, each a non-blocking MPI call completed by a
// test-and-sleep loop so that the op's timeout holds:
//
// 1. Headers: every rank sends every other rank a small header (the op,
//    keys, group size, merge and final ops, dtype and shape) and receives
//    theirs (point to point, so a timeout can name the ranks that did not
//    come). Every rank then checks the same set of headers, so a
//    disagreement fails every rank with the same error, naming the ranks,
//    before any data moves.
// 2. Data: MPI_Iallreduce into the output (Div divides afterwards), or
//    MPI_Iallgather (in rank order) for a gather, MPI_Ireduce_scatter_block
//    for a reduce-scatter, MPI_Ialltoall for an all-to-all, or MPI_Ibcast
//    from the one rank that sends a broadcast.
//
// A rank that times out cannot take back what it posted (a collective
// request cannot be cancelled; a header already sent reaches its peer
// later): the backend is then unusable on that rank, and later collectives
// fail with FAILED_PRECONDITION. MPI calls are serialized by a mutex.

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collective/collective.h"
#include "loom/collective.h"
#include "loom/shape.h"

#if LOOM_HAVE_MPI

#include <mpi.h>

enum {
  kHeaderTag = 0x10a3,
  kInlineDims = 7,
  // Header fields (int64 each).
  kKind = 0,
  kGroupSize,
  kGroupKey,
  kInstanceKey,
  kDtype,
  kMerge,
  kFinal,
  kRank,
  kDimsHash,
  kDims,
  kHeaderSize = kDims + kInlineDims,
};

enum {
  kKindAllReduce = 1,
  kKindAllGather = 2,
  kKindBcastSend = 3,  // one rank of a broadcast
  kKindBcastRecv = 4,  // the others
  kKindReduceScatter = 5,
  kKindAllToAll = 6,
};

// Sends and receives of one broadcast are the same collective.
static int64_t family(int64_t kind) {
  return kind == kKindBcastRecv ? kKindBcastSend : kind;
}

typedef struct mpi_state_t {
  pthread_mutex_t mutex;
  bool active;       // loom_collective_use_mpi succeeded
  bool initialized;  // by Loom: it finalizes
  bool finalized;    // by loom_collective_mpi_finalize
  bool broken;       // a collective timed out on this rank
  MPI_Comm comm;
  int rank;
  int size;
  double default_timeout;
} mpi_state_t;

static mpi_state_t g_mpi = {.mutex = PTHREAD_MUTEX_INITIALIZER};

static loom_status_t request_error(const loom__collective_reduce_t* request,
                                   loom_status_code_t code, const char* what) {
  return loom_make_status(code, "%s (group_key %d, instance_key %d) on MPI: %s",
                          request->op_name, (int)request->group_key,
                          (int)request->instance_key, what);
}

static loom_status_t mpi_error(const loom__collective_reduce_t* request,
                               const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    snprintf(text, sizeof(text), "error %d", code);
  }
  char what[MPI_MAX_ERROR_STRING + 64];
  snprintf(what, sizeof(what), "%s failed: %s", call, text);
  return request_error(request, LOOM_STATUS_INTERNAL, what);
}

static double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

// Tests `requests` until all are done or `deadline` passes. MPI makes
// progress inside MPI_Test, so the loop spins for a while before it
// sleeps, and sleeps briefly. Sets done[i] per request. Returns whether
// all completed.
static bool wait_until(MPI_Request* requests, bool* done, int count,
                       double deadline, int* out_mpi_error) {
  *out_mpi_error = MPI_SUCCESS;
  for (long spin = 0;; ++spin) {
    bool all = true;
    for (int i = 0; i < count; ++i) {
      if (done[i]) continue;
      int flag = 0;
      int code = MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS) {
        *out_mpi_error = code;
        return false;
      }
      if (flag) {
        done[i] = true;
      } else {
        all = false;
      }
    }
    if (all) return true;
    if (now_seconds() >= deadline) return false;
    if (spin > 4096) {
      struct timespec pause = {.tv_sec = 0, .tv_nsec = 50000};
      nanosleep(&pause, NULL);
    }
  }
}

static void fill_header(const loom__collective_reduce_t* request, int kind,
                        int64_t* header) {
  memset(header, 0, sizeof(int64_t) * kHeaderSize);
  const loom_shape_t* shape = loom_tensor_shape(request->input);
  const int64_t* dims = loom_shape_dims(shape);
  header[kKind] = kind;
  header[kGroupSize] = request->group_size;
  header[kGroupKey] = request->group_key;
  header[kInstanceKey] = request->instance_key;
  header[kDtype] = loom_tensor_dtype(request->input);
  header[kMerge] = request->merge;
  header[kFinal] = request->final_op;
  header[kRank] = shape->rank;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the dims
  for (int32_t d = 0; d < shape->rank; ++d) {
    hash = (hash ^ (uint64_t)dims[d]) * 1099511628211ull;
    if (d < kInlineDims) header[kDims + d] = dims[d];
  }
  header[kDimsHash] = (int64_t)hash;
}

// "float [2,3]" (dims beyond the header's shown as "...").
static void format_input(const int64_t* header, char* text, size_t size) {
  int used = snprintf(text, size, "%s [",
                      loom_dtype_name((loom_dtype_t)header[kDtype]));
  for (int64_t d = 0; d < header[kRank] && used > 0 && (size_t)used < size;
       ++d) {
    if (d == kInlineDims) {
      used += snprintf(text + used, size - (size_t)used, ",...");
      break;
    }
    used += snprintf(text + used, size - (size_t)used, "%s%lld", d ? "," : "",
                     (long long)header[kDims + d]);
  }
  if (used > 0 && (size_t)used < size) {
    snprintf(text + used, size - (size_t)used, "]");
  }
}

static bool same_input(const int64_t* a, const int64_t* b) {
  return a[kDtype] == b[kDtype] && a[kRank] == b[kRank] &&
         a[kDimsHash] == b[kDimsHash] &&
         memcmp(&a[kDims], &b[kDims], sizeof(int64_t) * kInlineDims) == 0;
}

// Appends "; rank r: <what>" for each rank whose header differs from rank
// 0's in `field` (or in dtype and shape for field < 0).
static void list_ranks(const int64_t* headers, int size, int field, char* text,
                       size_t capacity) {
  size_t used = strlen(text);
  for (int r = 0; r < size && used + 1 < capacity; ++r) {
    const int64_t* h = headers + (size_t)r * kHeaderSize;
    char value[128];
    if (field < 0) {
      format_input(h, value, sizeof(value));
    } else if (field == kKind) {
      static const char* const kKinds[] = {
          "?",        "all-reduce",     "all-gather", "sends",
          "receives", "reduce-scatter", "all-to-all"};
      snprintf(value, sizeof(value), "%s",
               h[field] >= 1 && h[field] <= 6 ? kKinds[h[field]] : "?");
    } else if (field == kMerge) {
      snprintf(value, sizeof(value), "%s",
               loom__collective_merge_name((loom__collective_merge_t)h[field]));
    } else if (field == kFinal) {
      snprintf(value, sizeof(value), "%s",
               loom__collective_final_name((loom__collective_final_t)h[field]));
    } else {
      snprintf(value, sizeof(value), "%lld", (long long)h[field]);
    }
    int n = snprintf(text + used, capacity - used, "%srank %d: %s",
                     r ? "; " : "", r, value);
    if (n < 0) break;
    used += (size_t)n;
  }
}

// The same verdict on every rank: the headers are the same everywhere.
static loom_status_t check_headers(const loom__collective_reduce_t* request,
                                   const int64_t* headers, int size) {
  char what[1024];
  static const struct {
    int field;
    const char* name;
  } kFields[] = {{kKind, "collective"},          {kGroupKey, "group_key"},
                 {kInstanceKey, "instance_key"}, {kGroupSize, "group_size"},
                 {kMerge, "merge_op"},           {kFinal, "final_op"}};
  for (size_t f = 0; f < sizeof(kFields) / sizeof(kFields[0]); ++f) {
    int field = kFields[f].field;
    for (int r = 1; r < size; ++r) {
      int64_t mine = headers[(size_t)r * kHeaderSize + field];
      if (field == kKind ? family(mine) == family(headers[field])
                         : mine == headers[field]) {
        continue;
      }
      snprintf(what, sizeof(what),
               "the ranks disagree on %s (%s): ", kFields[f].name,
               field == kKind ? "a different collective was called"
                              : "all must agree");
      list_ranks(headers, size, field, what, sizeof(what));
      return request_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
    }
  }
  for (int r = 1; r < size; ++r) {
    if (same_input(headers + (size_t)r * kHeaderSize, headers)) continue;
    snprintf(what, sizeof(what),
             "the ranks' inputs differ (all must have the same dtype and "
             "shape): ");
    list_ranks(headers, size, -1, what, sizeof(what));
    return request_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
  }
  if (family(headers[kKind]) == kKindBcastSend) {
    int senders = 0;
    for (int r = 0; r < size; ++r) {
      senders += headers[(size_t)r * kHeaderSize + kKind] == kKindBcastSend;
    }
    if (senders != 1) {
      snprintf(what, sizeof(what),
               "a broadcast needs exactly one sender, got %d: ", senders);
      list_ranks(headers, size, kKind, what, sizeof(what));
      return request_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
    }
  }
  if (headers[kGroupSize] != size) {
    snprintf(what, sizeof(what),
             "group_size is %lld, but there are %d MPI ranks: a group is "
             "every rank",
             (long long)headers[kGroupSize], size);
    return request_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
  }
  return loom_ok_status();
}

static loom_status_t timed_out(const loom__collective_reduce_t* request,
                               double timeout, const char* step,
                               const bool* received, int size) {
  g_mpi.broken = true;
  char what[1024];
  int used = snprintf(what, sizeof(what), "timed out after %g seconds %s",
                      timeout, step);
  if (received && used > 0 && (size_t)used < sizeof(what)) {
    used += snprintf(what + used, sizeof(what) - (size_t)used,
                     " (rank %d of %d; no word from rank", g_mpi.rank, size);
    bool first = true;
    for (int r = 0; r < size && used > 0 && (size_t)used < sizeof(what); ++r) {
      if (r == g_mpi.rank || received[r]) continue;
      used += snprintf(what + used, sizeof(what) - (size_t)used, "%s %d",
                       first ? "" : ",", r);
      first = false;
    }
    if (used > 0 && (size_t)used < sizeof(what)) {
      snprintf(what + used, sizeof(what) - (size_t)used, ")");
    }
  }
  return request_error(request, LOOM_STATUS_DEADLINE_EXCEEDED, what);
}

// Step 1. On success *out_headers holds every rank's header (free it).
static loom_status_t exchange_headers(const loom__collective_reduce_t* request,
                                      int kind, double timeout, double deadline,
                                      int64_t** out_headers) {
  int size = g_mpi.size, rank = g_mpi.rank;
  int64_t* headers = calloc((size_t)size, sizeof(int64_t) * kHeaderSize);
  // Receives from every other rank, then sends to them: 2 (size - 1).
  MPI_Request* requests = calloc((size_t)size * 2, sizeof(MPI_Request));
  bool* done = calloc((size_t)size * 2, sizeof(bool));
  if (!headers || !requests || !done) {
    free(headers);
    free(requests);
    free(done);
    return request_error(request, LOOM_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory for the headers");
  }
  int64_t* mine = headers + (size_t)rank * kHeaderSize;
  fill_header(request, kind, mine);
  int count = 0, code = MPI_SUCCESS;
  const char* call = "MPI_Irecv";
  for (int r = 0; r < size && code == MPI_SUCCESS; ++r) {
    if (r == rank) continue;
    code = MPI_Irecv(headers + (size_t)r * kHeaderSize, kHeaderSize,
                     MPI_INT64_T, r, kHeaderTag, g_mpi.comm, &requests[count]);
    if (code == MPI_SUCCESS) count++;
  }
  for (int r = 0; r < size && code == MPI_SUCCESS; ++r) {
    if (r == rank) continue;
    call = "MPI_Isend";
    code = MPI_Isend(mine, kHeaderSize, MPI_INT64_T, r, kHeaderTag, g_mpi.comm,
                     &requests[count]);
    if (code == MPI_SUCCESS) count++;
  }
  loom_status_t status = loom_ok_status();
  if (code != MPI_SUCCESS) {
    status = mpi_error(request, call, code);
  } else if (!wait_until(requests, done, count, deadline, &code)) {
    if (code != MPI_SUCCESS) {
      status = mpi_error(request, "MPI_Test", code);
    } else {
      // Which ranks were heard from: receive i is from the i-th other rank.
      bool* received = calloc((size_t)size, sizeof(bool));
      for (int r = 0, i = 0; received && r < size; ++r) {
        if (r == rank) continue;
        received[r] = done[i++];
      }
      status =
          timed_out(request, timeout, "waiting for the other ranks' headers",
                    received, size);
      free(received);
    }
  }
  if (status) {
    // Take back what can be: receives cancel; sends complete on their own.
    for (int i = 0; i < count; ++i) {
      if (done[i]) continue;
      if (i < size - 1) MPI_Cancel(&requests[i]);
      MPI_Request_free(&requests[i]);
    }
    g_mpi.broken = true;
    free(headers);
    headers = NULL;
  }
  free(requests);
  free(done);
  *out_headers = headers;
  return status;
}

static MPI_Datatype mpi_type(loom_dtype_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      return MPI_FLOAT;
    case LOOM_DTYPE_DOUBLE:
      return MPI_DOUBLE;
    case LOOM_DTYPE_INT32:
      return MPI_INT32_T;
    case LOOM_DTYPE_INT64:
      return MPI_INT64_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

static MPI_Op mpi_op(loom__collective_merge_t merge) {
  switch (merge) {
    case LOOM__COLLECTIVE_MERGE_MIN:
      return MPI_MIN;
    case LOOM__COLLECTIVE_MERGE_MAX:
      return MPI_MAX;
    case LOOM__COLLECTIVE_MERGE_MUL:
      return MPI_PROD;
    case LOOM__COLLECTIVE_MERGE_ADD:
      break;
  }
  return MPI_SUM;
}

static void divide(loom_dtype_t dtype, void* data, int64_t n, int32_t by) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      for (int64_t i = 0; i < n; ++i) ((float*)data)[i] /= (float)by;
      break;
    case LOOM_DTYPE_DOUBLE:
      for (int64_t i = 0; i < n; ++i) ((double*)data)[i] /= (double)by;
      break;
    case LOOM_DTYPE_INT32:
      for (int64_t i = 0; i < n; ++i) ((int32_t*)data)[i] /= by;
      break;
    case LOOM_DTYPE_INT64:
      for (int64_t i = 0; i < n; ++i) ((int64_t*)data)[i] /= by;
      break;
    default:
      break;
  }
}

// Step 2, after the headers agreed: the data, by a non-blocking call.
static loom_status_t move_data(const loom__collective_reduce_t* request,
                               int kind, int root, double timeout,
                               double deadline, loom_tensor_t* output) {
  loom_dtype_t dtype = loom_tensor_dtype(request->input);
  MPI_Datatype type = mpi_type(dtype);
  if (type == MPI_DATATYPE_NULL) {
    char what[96];
    snprintf(what, sizeof(what), "dtype %s is not supported",
             loom_dtype_name(dtype));
    return request_error(request, LOOM_STATUS_UNIMPLEMENTED, what);
  }
  int64_t n = loom_tensor_num_elements(request->input);
  if (n > INT32_MAX) {
    return request_error(request, LOOM_STATUS_UNIMPLEMENTED,
                         "inputs above 2^31 - 1 elements are not supported");
  }
  MPI_Request pending;
  const char* call;
  int code;
  // A reduce-scatter's and an all-to-all's parts (the kernel checked that
  // dim 0 divides).
  int part = (int)(n / g_mpi.size);
  if (kind == kKindReduceScatter) {
    call = "MPI_Ireduce_scatter_block";
    code = MPI_Ireduce_scatter_block(
        loom_tensor_data(request->input), loom_tensor_data(output), part, type,
        mpi_op(request->merge), g_mpi.comm, &pending);
  } else if (kind == kKindAllToAll) {
    call = "MPI_Ialltoall";
    code = MPI_Ialltoall(loom_tensor_data(request->input), part, type,
                         loom_tensor_data(output), part, type, g_mpi.comm,
                         &pending);
  } else if (kind == kKindAllGather) {
    call = "MPI_Iallgather";
    code = MPI_Iallgather(loom_tensor_data(request->input), (int)n, type,
                          loom_tensor_data(output), (int)n, type, g_mpi.comm,
                          &pending);
  } else if (family(kind) == kKindBcastSend) {
    call = "MPI_Ibcast";
    code = MPI_Ibcast(loom_tensor_data(output), (int)n, type, root, g_mpi.comm,
                      &pending);
  } else {
    call = "MPI_Iallreduce";
    code = MPI_Iallreduce(loom_tensor_data(request->input),
                          loom_tensor_data(output), (int)n, type,
                          mpi_op(request->merge), g_mpi.comm, &pending);
  }
  if (code != MPI_SUCCESS) return mpi_error(request, call, code);
  bool done = false;
  if (!wait_until(&pending, &done, 1, deadline, &code)) {
    if (code != MPI_SUCCESS) return mpi_error(request, "MPI_Test", code);
    char step[64];
    snprintf(step, sizeof(step), "in %s", call);
    return timed_out(request, timeout, step, NULL, g_mpi.size);
  }
  if ((kind == kKindAllReduce || kind == kKindReduceScatter) &&
      request->final_op == LOOM__COLLECTIVE_FINAL_DIV) {
    divide(dtype, loom_tensor_data(output), loom_tensor_num_elements(output),
           request->group_size);
  }
  return loom_ok_status();
}

static loom_status_t run(const loom__collective_reduce_t* request, int kind,
                         loom_tensor_t* output) {
  pthread_mutex_lock(&g_mpi.mutex);
  loom_status_t status = loom_ok_status();
  if (g_mpi.broken) {
    status = request_error(request, LOOM_STATUS_FAILED_PRECONDITION,
                           "an earlier collective timed out on this rank, "
                           "which leaves the MPI backend out of step with "
                           "the other ranks");
  } else if (!g_mpi.active) {
    status = request_error(request, LOOM_STATUS_FAILED_PRECONDITION,
                           "the MPI backend was finalized");
  }
  if (!status) {
    double timeout = request->timeout_seconds > 0 ? request->timeout_seconds
                                                  : g_mpi.default_timeout;
    double deadline = now_seconds() + timeout;
    int64_t* headers = NULL;
    status = exchange_headers(request, kind, timeout, deadline, &headers);
    if (!status) status = check_headers(request, headers, g_mpi.size);
    int root = 0;  // a broadcast's sender
    for (int r = 0; !status && r < g_mpi.size; ++r) {
      if (headers[(size_t)r * kHeaderSize + kKind] == kKindBcastSend) root = r;
    }
    free(headers);
    if (!status) {
      status = move_data(request, kind, root, timeout, deadline, output);
    }
  }
  pthread_mutex_unlock(&g_mpi.mutex);
  return status;
}

static loom_status_t mpi_all_reduce(void* state,
                                    const loom__collective_reduce_t* request,
                                    loom_tensor_t* output) {
  (void)state;
  return run(request, kKindAllReduce, output);
}

static loom_status_t mpi_all_gather(void* state,
                                    const loom__collective_reduce_t* request,
                                    loom_tensor_t* output) {
  (void)state;
  return run(request, kKindAllGather, output);
}

static loom_status_t mpi_reduce_scatter(
    void* state, const loom__collective_reduce_t* request,
    loom_tensor_t* output) {
  (void)state;
  return run(request, kKindReduceScatter, output);
}

static loom_status_t mpi_all_to_all(void* state,
                                    const loom__collective_reduce_t* request,
                                    loom_tensor_t* output) {
  (void)state;
  return run(request, kKindAllToAll, output);
}

static loom_status_t mpi_broadcast(void* state,
                                   const loom__collective_reduce_t* request,
                                   bool is_sender, loom_tensor_t* data) {
  (void)state;
  return run(request, is_sender ? kKindBcastSend : kKindBcastRecv, data);
}

static const loom__collective_backend_t kMpiBackend = {
    .name = "mpi",
    .all_reduce = mpi_all_reduce,
    .all_gather = mpi_all_gather,
    .broadcast = mpi_broadcast,
    .reduce_scatter = mpi_reduce_scatter,
    .all_to_all = mpi_all_to_all,
    .state = NULL,
};

bool loom_collective_mpi_available(void) {
  return true;
}

loom_status_t loom_collective_use_mpi(double default_timeout_seconds,
                                      int32_t* out_rank, int32_t* out_size) {
  if (!isfinite(default_timeout_seconds) || default_timeout_seconds < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_collective_use_mpi: default_timeout_seconds "
                            "must be finite and >= 0, got %g",
                            default_timeout_seconds);
  }
  pthread_mutex_lock(&g_mpi.mutex);
  loom_status_t status = loom_ok_status();
  int finalized = 0, initialized = 0;
  MPI_Finalized(&finalized);
  MPI_Initialized(&initialized);
  if (g_mpi.finalized || finalized) {
    status = loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                              "loom_collective_use_mpi: MPI was finalized "
                              "and cannot be initialized again");
  } else if (!g_mpi.active) {
    int provided = 0;
    int code = MPI_SUCCESS;
    if (!initialized) {
      code = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
      if (code == MPI_SUCCESS) g_mpi.initialized = true;
    } else {
      code = MPI_Query_thread(&provided);
    }
    if (code != MPI_SUCCESS) {
      status = loom_make_status(LOOM_STATUS_INTERNAL,
                                "loom_collective_use_mpi: initializing MPI "
                                "failed (MPI error %d)",
                                code);
    } else if (provided < MPI_THREAD_SERIALIZED) {
      status = loom_make_status(
          LOOM_STATUS_FAILED_PRECONDITION,
          "loom_collective_use_mpi: MPI gives thread level %d, Loom needs "
          "MPI_THREAD_SERIALIZED (%d) or above (collectives run on kernel "
          "threads)",
          provided, (int)MPI_THREAD_SERIALIZED);
    } else if ((code = MPI_Comm_dup(MPI_COMM_WORLD, &g_mpi.comm)) !=
               MPI_SUCCESS) {
      status = loom_make_status(LOOM_STATUS_INTERNAL,
                                "loom_collective_use_mpi: MPI_Comm_dup "
                                "failed (MPI error %d)",
                                code);
    } else {
      MPI_Comm_set_errhandler(g_mpi.comm, MPI_ERRORS_RETURN);
      MPI_Comm_rank(g_mpi.comm, &g_mpi.rank);
      MPI_Comm_size(g_mpi.comm, &g_mpi.size);
      g_mpi.active = true;
    }
  }
  if (!status) {
    if (default_timeout_seconds > 0 || g_mpi.default_timeout <= 0) {
      g_mpi.default_timeout = default_timeout_seconds > 0
                                  ? default_timeout_seconds
                                  : LOOM_COLLECTIVE_MPI_DEFAULT_TIMEOUT_SECONDS;
    }
    if (out_rank) *out_rank = g_mpi.rank;
    if (out_size) *out_size = g_mpi.size;
    loom__collective_set_backend(&kMpiBackend);
  }
  pthread_mutex_unlock(&g_mpi.mutex);
  return status;
}

loom_status_t loom_collective_mpi_finalize(void) {
  loom__collective_set_backend(NULL);
  pthread_mutex_lock(&g_mpi.mutex);
  loom_status_t status = loom_ok_status();
  if (g_mpi.active) {
    MPI_Comm_free(&g_mpi.comm);
    g_mpi.active = false;
    g_mpi.finalized = true;
    if (g_mpi.initialized) {
      int code = MPI_Finalize();
      if (code != MPI_SUCCESS) {
        status = loom_make_status(LOOM_STATUS_INTERNAL,
                                  "loom_collective_mpi_finalize: "
                                  "MPI_Finalize failed (MPI error %d)",
                                  code);
      }
    }
  }
  pthread_mutex_unlock(&g_mpi.mutex);
  return status;
}

#else  // !LOOM_HAVE_MPI

bool loom_collective_mpi_available(void) {
  return false;
}

loom_status_t loom_collective_use_mpi(double default_timeout_seconds,
                                      int32_t* out_rank, int32_t* out_size) {
  (void)default_timeout_seconds;
  (void)out_rank;
  (void)out_size;
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "loom_collective_use_mpi: this build of Loom has no "
                          "MPI (configure it with MPI installed: Debian's "
                          "libopenmpi-dev)");
}

loom_status_t loom_collective_mpi_finalize(void) {
  loom__collective_set_backend(NULL);
  return loom_ok_status();
}

#endif  // LOOM_HAVE_MPI

void loom_collective_use_local(void) {
  loom__collective_set_backend(NULL);
}
