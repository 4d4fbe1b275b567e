#pragma once
// `rv forward`: a local port carried to a port on a running job's node, through the login node's
// direct-tcpip channels (or a plain TCP connection with rv on the login node), until the job ends.
// Each running forward has a record in rv's state dir (`forwards/`, one per local port) so that
// `rv forward --list` and `--stop` find it. Schema: docs/forward.md.

#include "app/env.hpp"
#include "app/login_backoff.hpp"
#include "app/node/job_target.hpp"
#include "core/ssh/stream.hpp"
#include "core/store/record_store.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace rv::app {

// One running (or recorded) forward.
struct ForwardRecord {
  int local_port = 0;
  int remote_port = 0;
  std::string node;    // Slurm's name of the node
  std::string address; // what the login node connects to (NodeAddr)
  std::string request; // request id
  std::string job_id;
  std::string host; // where rv was connected (runner.where())
  long pid = 0;     // the rv process that holds the forward
  std::string started_at;
  std::string log; // its log file ("" in the foreground)
};

nlohmann::json to_json(const ForwardRecord& f);
Result<ForwardRecord> forward_from_json(const nlohmann::json& j);
// The record's id in the store: `port-<local port>`.
std::string forward_id(int local_port);

// Writes (replacing) the record of a forward about to run.
Result<void> save_forward(store::RecordStore& store, const ForwardRecord& f);
// Every readable forward record, by local port.
Result<std::vector<ForwardRecord>> load_forwards(const store::RecordStore& store);

// The lock the rv process holding a forward keeps for its whole life (`forwards/port-N.lock`,
// removed as it is released). Only a held lock proves that the record's pid is still that rv and
// not a stale pid the system has given to another process since (N6).
Result<store::FileLock> hold_forward_lock(const store::RecordStore& store, int local_port);
// Whether the forward of `f` still runs: its lock is held. `--list` shows and `--stop` signals only
// those; the record of any other is stale.
bool forward_alive(const store::RecordStore& store, const ForwardRecord& f);

// How a forward ended.
struct ForwardEnd {
  bool job_ended = false;    // the job left RUNNING (the usual end)
  std::string job_state;     // its state then (COMPLETED, CANCELLED, TIMEOUT, ...)
  bool interrupted = false;  // SIGINT/SIGTERM (rv forward --stop)
  bool login_failed = false; // the job's state could not be read: LoginBackoff::k_max failed logins in a row
  long connections = 0;
  long long bytes_in = 0, bytes_out = 0;
};

// One check of the forwarded job (run_forward's, every check_every): whether to go on. The job
// ended (or is gone): false, recorded in `end`. A failed read is passing (true), but after a failed
// login (no terminal to answer it) the job is not read again before LoginBackoff's wait, and
// LoginBackoff::k_max failures in a row end the forward (`end.login_failed`): security-review-3 S9.
bool check_forwarded_job(Env& env, const NodeTarget& target, LoginBackoff& logins, ForwardEnd& end);

// Carries connections on `listen_fd` to `target.address`:`remote_port` (opened by `opener`) until the job ends (its
// state is polled every `check_every`) or an interrupt arrives; what happened to each connection
// is logged. Says why it ended on env.output's stderr.
Result<ForwardEnd> run_forward(Env& env, proc::StreamOpener& opener, const NodeTarget& target, int listen_fd,
                               int remote_port, std::chrono::milliseconds check_every = std::chrono::seconds(5));

// One line for people: `127.0.0.1:8888 -> a100-1:8888 (request 3f9c02ab, job 812)`.
std::string forward_text(const ForwardRecord& f);

} // namespace rv::app
