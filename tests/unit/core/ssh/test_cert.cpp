#include "core/ssh/cert.hpp"

#include <doctest/doctest.h>

using namespace rv::proc;

namespace {
// Made with `ssh-keygen -s CA -I exp-id -n rvtest,alice -V 20200101:20200102 u.pub`.
const char* expired_ed25519 =
    "ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAII4DhuKqmOpHN3D"
    "IzTg8ugskMQEJgusHxP1BFh1BF0v8AAAAIHKhEBp36wcQtTkh5qcbEBmMUzqsg/B7c8P84qsRTny5AAAAAAAAAAAAAAABAAAABmV"
    "4cC1pZAAAABMAAAAGcnZ0ZXN0AAAABWFsaWNlAAAAAF4L4QAAAAAAXg0ygAAAAAAAAACCAAAAFXBlcm1pdC1YMTEtZm9yd2FyZGl"
    "uZwAAAAAAAAAXcGVybWl0LWFnZW50LWZvcndhcmRpbmcAAAAAAAAAFnBlcm1pdC1wb3J0LWZvcndhcmRpbmcAAAAAAAAACnBlcm1"
    "pdC1wdHkAAAAAAAAADnBlcm1pdC11c2VyLXJjAAAAAAAAAAAAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIDh56dMOhcP/CN7NQNBlz/R"
    "G+uLLeYmumt/RbPhF1VtcAAAAUwAAAAtzc2gtZWQyNTUxOQAAAECwLFiQ5Fnr+AInzd5v7J+y8kpCH/UaEqr89GYzaoIcUSX3M5R"
    "jje6bsxSqbbnju3wIAbaWox7lw6h6/Vl0VzMH";
// `ssh-keygen -s CA -I forever-id ur.pub` (RSA, no principals, no limits).
const char* forever_rsa =
    "ssh-rsa-cert-v01@openssh.com AAAAHHNzaC1yc2EtY2VydC12MDFAb3BlbnNzaC5jb20AAAAgS4weflhxApwiXsTYoj5PV7m"
    "7/QzddHqFvldKfmP4g8QAAAADAQABAAAAgQCl2Aqc8hBGcNPiGA4++L4J0jhSj8DlLnNz3yYl4bn1JlhMuBdiMD+woIHz8FjmPfy"
    "pTSqf3lto2T5K8LM8UuelQN7XCJoNHntgSDXIl/mlkCVe4jAKtVBE4xz/ms+6UkJUcAxC/i5u8Abfzt2i0zo7AYVbnLAKXCxMfRa"
    "E7twnAwAAAAAAAAAAAAAAAQAAAApmb3JldmVyLWlkAAAAAAAAAAAAAAAA//////////8AAAAAAAAAggAAABVwZXJtaXQtWDExLWZ"
    "vcndhcmRpbmcAAAAAAAAAF3Blcm1pdC1hZ2VudC1mb3J3YXJkaW5nAAAAAAAAABZwZXJtaXQtcG9ydC1mb3J3YXJkaW5nAAAAAAA"
    "AAApwZXJtaXQtcHR5AAAAAAAAAA5wZXJtaXQtdXNlci1yYwAAAAAAAAAAAAAAMwAAAAtzc2gtZWQyNTUxOQAAACA4eenTDoXD/wj"
    "ezUDQZc/0Rvriy3mJrprf0Wz4RdVbXAAAAFMAAAALc3NoLWVkMjU1MTkAAABA2HJfWAHlI6+dNKuSS4bMmHQxHqV9Bhzn9uoOqOb"
    "IoZsvlY+YCm6zpigKjgyW4ZxIpZmzOzqfobpIyr/E/itSCg==";
// `ssh-keygen -s CA -I host-id -h -n login1 u.pub`.
const char* host_cert =
    "ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIHRhSlV7ScFr6Wn"
    "EP31zoGNsji61L2NW65tfE1zbjYl6AAAAIHKhEBp36wcQtTkh5qcbEBmMUzqsg/B7c8P84qsRTny5AAAAAAAAAAAAAAACAAAAB2h"
    "vc3QtaWQAAAAKAAAABmxvZ2luMQAAAAAAAAAA//////////8AAAAAAAAAAAAAAAAAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIDh56dM"
    "OhcP/CN7NQNBlz/RG+uLLeYmumt/RbPhF1VtcAAAAUwAAAAtzc2gtZWQyNTUxOQAAAECQtXdRtOQXOiPpIgwgtR2iR8EfBmfpO7+"
    "O6jkvC4N27K5dOhy9MtrDo2Xne5Q+ZU1h1QQb8ljKXZy9zEkEr+kK";
constexpr std::int64_t nov_2026 = 1795737600; // 2026-11-27 00:00 UTC
} // namespace

TEST_CASE("parse_certificate reads what an OpenSSH certificate says of itself")
{
  auto cert = parse_certificate(std::string(expired_ed25519) + " alice@laptop");
  REQUIRE(cert);
  CHECK(cert->type == "ssh-ed25519-cert-v01@openssh.com");
  CHECK(cert->user_cert);
  CHECK(cert->key_id == "exp-id");
  CHECK(cert->principals == std::vector<std::string>{"rvtest", "alice"});
  CHECK(cert->valid_after == 1577836800);  // 2020-01-01 00:00 UTC
  CHECK(cert->valid_before == 1577923200); // 2020-01-02 00:00 UTC

  cert = parse_certificate(forever_rsa);
  REQUIRE(cert);
  CHECK(cert->key_id == "forever-id");
  CHECK(cert->principals.empty());
  CHECK(cert->valid_after == 0);
  CHECK(cert->valid_before == UINT64_MAX);

  cert = parse_certificate(host_cert);
  REQUIRE(cert);
  CHECK_FALSE(cert->user_cert);
}

TEST_CASE("parse_certificate refuses what is not a certificate")
{
  CHECK_FALSE(parse_certificate(""));
  CHECK_FALSE(parse_certificate("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDh56dMOhcP/CN7NQNBlz/RG+uLLeYmumt/RbPhF1Vtc"));
  CHECK_FALSE(parse_certificate("ssh-ed25519-cert-v01@openssh.com AAAA")); // truncated
  CHECK_FALSE(parse_certificate("ssh-ed25519-cert-v01@openssh.com !!!"));
  // The type word and the blob's own type disagree.
  std::string swapped = forever_rsa;
  swapped.replace(0, swapped.find(' '), "ssh-ed25519-cert-v01@openssh.com");
  CHECK_FALSE(parse_certificate(swapped));
}

TEST_CASE("certificate_problem says why a certificate cannot log in")
{
  auto expired = *parse_certificate(expired_ed25519);
  CHECK(certificate_problem(expired, nov_2026, "rvtest") == "it expired on 2020-01-02 00:00 UTC");
  CHECK(certificate_problem(expired, 1577800000, "rvtest") == "it is not valid before 2020-01-01 00:00 UTC");
  CHECK(certificate_problem(expired, 1577836800, "rvtest").empty()); // its first second
  CHECK(certificate_problem(expired, 1577900000, "alice").empty());
  CHECK(certificate_problem(expired, 1577900000, "bob") == "it is for rvtest, alice, not for bob");
  CHECK(certificate_problem(expired, 1577900000, "").empty()); // user not known yet
  auto forever = *parse_certificate(forever_rsa);
  CHECK(certificate_problem(forever, nov_2026, "anyone").empty());
  CHECK(certificate_problem(*parse_certificate(host_cert), nov_2026, "rvtest") ==
        "it is a host certificate, not a user certificate");
}
