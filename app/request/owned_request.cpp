#include "app/request/owned_request.hpp"

#include "app/request/reap.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace rv::app {

OwnedRequest::OwnedRequest(proc::Runner& runner, store::RecordStore& store, RequestRecord r)
    : rec(std::move(r)), m_runner(&runner), m_store(&store)
{}

OwnedRequest::OwnedRequest(OwnedRequest&& other) noexcept
    : rec(std::move(other.rec)), m_runner(other.m_runner), m_store(other.m_store), m_settled(other.m_settled)
{
  other.m_settled = true; // the moved-from owner owns nothing
}

OwnedRequest::~OwnedRequest()
{
  if (m_settled) {
    return;
  }
  try {
    spdlog::debug("request {}: left early ({})", rec.id, to_string(rec.state));
    m_settled = true;
    save();
    remove_secrets(*m_runner, *m_store, {&rec}); // only when every job has ended: see the header
  } catch (const std::exception& e) {
    spdlog::warn("request {}: cleanup failed: {}", rec.id, e.what()); // a destructor never throws
  }
}

void OwnedRequest::save()
{
  app::save(*m_store, rec);
}

void OwnedRequest::finish(RequestState state)
{
  rec.state = state;
  close();
}

void OwnedRequest::close()
{
  if (m_settled) {
    return;
  }
  m_settled = true;
  save();
  remove_secrets(*m_runner, *m_store, {&rec}, true);
}

void OwnedRequest::discard()
{
  if (m_settled) {
    return;
  }
  finish(RequestState::failed);
  if (!rec.secrets_file.empty()) {
    return;
  }
  if (auto removed = m_store->remove(rec.id); !removed) {
    spdlog::warn("request {}: could not remove its record: {}", rec.id, removed.error().message);
  }
}

void OwnedRequest::release()
{
  m_settled = true;
  save();
}

} // namespace rv::app
