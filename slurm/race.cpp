#include "slurm/race.hpp"

#include "slurm/pending_reason.hpp"

#include <algorithm>

namespace rv::slurm {

Race::Race(std::vector<RaceEntry> entries) : m_entries(std::move(entries)) {}

bool Race::needs_claimant(const std::map<std::string, JobView>& views, int min_candidates) const
{
  if (m_winner) {
    return false;
  }
  int candidates = 0;
  for (const auto& e : m_entries) {
    auto it = views.find(e.job_id);
    if (it != views.end() && is_started(it->second.state)) {
      ++candidates;
    }
  }
  return candidates >= min_candidates;
}

bool Race::cancelled_by_a_claim(const std::map<std::string, JobView>& views) const
{
  if (m_winner) {
    return false;
  }
  auto state_of = [&](const RaceEntry& e) {
    auto it = views.find(e.job_id);
    return it != views.end() ? it->second : e.last;
  };
  // Only on the poll that would end the race without a winner: every sibling over (or hopeless).
  const bool all_over = std::all_of(m_entries.begin(), m_entries.end(), [&](const RaceEntry& e) {
    return is_terminal(state_of(e).state) || !e.hopeless_reason.empty();
  });
  return all_over && std::any_of(m_entries.begin(), m_entries.end(), [&](const RaceEntry& e) {
           const auto v = state_of(e);
           return !e.cancel_sent && v.state == JobState::cancelled && v.start_epoch == 0;
         });
}

RaceDecision Race::observe(const std::map<std::string, JobView>& views, const std::string& claimant,
                           bool decide_without_claimant)
{
  RaceDecision decision;
  for (auto& e : m_entries) {
    auto it = views.find(e.job_id);
    if (it == views.end() || (it->second.source.empty() && it->second.state == JobState::unknown)) {
      continue; // no news (accounting lag): the job is kept alive as it was
    }
    e.last = it->second;
  }

  // A claimant rv does not track: a job of the request whose sbatch answer was lost (N3). It runs
  // the command, so it is the request's winner; adopted, never left to run unseen.
  const bool digits = !claimant.empty() && claimant.size() <= 20 &&
                      std::all_of(claimant.begin(), claimant.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!m_winner && digits &&
      std::none_of(m_entries.begin(), m_entries.end(), [&](const RaceEntry& e) { return e.job_id == claimant; })) {
    RaceEntry adopted{"orphan-" + claimant, claimant, {}, false, {}};
    if (auto it = views.find(claimant); it != views.end()) {
      adopted.last = it->second;
    }
    m_entries.push_back(std::move(adopted));
    decision.adopted = claimant;
  }

  if (!m_winner) {
    // Candidates: siblings that hold (or held) an allocation. A job that completed between two
    // polls counts: it started.
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
      const auto& v = m_entries[i].last;
      if (is_started(v.state) || (is_terminal(v.state) && v.start_epoch > 0 && v.state != JobState::cancelled)) {
        candidates.push_back(i);
      }
    }
    // The claim is the ground truth: the in-job guard lets exactly that job run the command.
    for (std::size_t i = 0; !claimant.empty() && i < m_entries.size(); ++i) {
      if (m_entries[i].job_id == claimant && std::find(candidates.begin(), candidates.end(), i) == candidates.end()) {
        candidates.insert(candidates.begin(), i); // this poll did not show it started yet
      }
    }
    // Every sibling has ended: no claim can appear any more (its file may never have been written,
    // e.g. on a full file system), so a sibling that ran wins without it (#15 campaign, fs_full).
    const bool all_ended =
        std::all_of(m_entries.begin(), m_entries.end(), [](const RaceEntry& e) { return is_terminal(e.last.state); });
    if (!candidates.empty() && (decide_without_claimant || !claimant.empty() || all_ended)) {
      auto best = candidates.front();
      for (auto i : candidates) {
        const auto& a = m_entries[i];
        const auto& b = m_entries[best];
        if (!claimant.empty() && (a.job_id == claimant) != (b.job_id == claimant)) {
          if (a.job_id == claimant) {
            best = i;
          }
          continue;
        }
        if (a.last.start_epoch > 0 && b.last.start_epoch > 0 && a.last.start_epoch != b.last.start_epoch) {
          if (a.last.start_epoch < b.last.start_epoch) {
            best = i;
          }
          continue;
        }
        // Same start (or unknown): entries are in rank order, so the earlier index wins.
      }
      m_winner = best;
      decision.new_winner = best;
    }
  }

  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    auto& e = m_entries[i];
    if (m_winner && i == *m_winner) {
      continue;
    }
    if (e.hopeless_reason.empty() && e.last.state == JobState::pending && is_hopeless_reason(e.last.reason)) {
      e.hopeless_reason = e.last.reason;
      decision.newly_hopeless.push_back(i);
    }
    const bool should_cancel = m_winner.has_value() || !e.hopeless_reason.empty();
    if (should_cancel && !e.cancel_sent && !is_terminal(e.last.state)) {
      e.cancel_sent = true;
      decision.cancel.push_back(e.job_id);
    }
  }

  if (!m_winner) {
    decision.all_failed = std::all_of(m_entries.begin(), m_entries.end(), [](const RaceEntry& e) {
      return is_terminal(e.last.state) || !e.hopeless_reason.empty();
    });
  }
  return decision;
}

std::vector<std::string> Race::cancel_all()
{
  std::vector<std::string> ids;
  for (auto& e : m_entries) {
    if (!e.cancel_sent && !is_terminal(e.last.state)) {
      e.cancel_sent = true;
      ids.push_back(e.job_id);
    }
  }
  return ids;
}

void Race::mark_cancelled(const std::string& job_id)
{
  for (auto& e : m_entries) {
    if (e.job_id == job_id) {
      e.cancel_sent = true;
    }
  }
}

} // namespace rv::slurm
