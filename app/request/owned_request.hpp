#pragma once
// The owner of one request this process created: the record in the local store and the secrets
// file on the cluster. Every way out of `rv run`/`rv up` ends through it: finish(state) records
// the final state and removes the secrets file; release() leaves a live request to its jobs (rv run
// without -f); an owner destroyed without either (an error, an interrupt, an early return) saves
// the record and removes the secrets file unless a job of the request may still be live (a
// Ctrl-C while following leaves the job running, and a checkpoint job's later segments still read
// the file; `rv ps` removes it once they have ended). No exit path leaves them behind.

#include "app/request/requests.hpp"
#include "core/process/runner.hpp"
#include "core/store/record_store.hpp"

namespace rv::app {

class OwnedRequest {
public:
  // Takes `rec`, already created in `store` (its `base` set).
  OwnedRequest(proc::Runner& runner, store::RecordStore& store, RequestRecord rec);
  OwnedRequest(OwnedRequest&& other) noexcept;
  OwnedRequest(const OwnedRequest&) = delete;
  OwnedRequest& operator=(const OwnedRequest&) = delete;
  OwnedRequest& operator=(OwnedRequest&&) = delete;
  // Not finished or released: saves the record; removes the secrets file when no job is live.
  ~OwnedRequest();

  RequestRecord rec; // the lifecycle edits it, then save()s

  // Writes the record's changes to the store (merged: docs/requests.md).
  void save();
  // Records `state` and closes: the request has ended as far as this process is concerned.
  void finish(RequestState state);
  // Saves the record as it is and removes the secrets file now (once; later calls do nothing).
  void close();
  // Nothing of the request reached Slurm (no sbatch ran): closes it as failed, then removes its
  // record, since there is nothing to track (UX review N11: a refused --workdir stayed in
  // `rv ps -a`). The record stays, failed, when the secrets file could not be removed: `rv ps`
  // retries that.
  void discard();
  // The request lives on without this process: saved, and its secrets stay for its jobs (`rv ps`
  // removes them once the jobs have ended).
  void release();
  // Whether close() or release() has run.
  bool settled() const { return m_settled; }

private:
  proc::Runner* m_runner;
  store::RecordStore* m_store;
  bool m_settled = false;
};

} // namespace rv::app
