# Homebrew formula for rv, built from the release source tarball (issue #40, docs/portability.md).
#
# `bash scripts/release.sh --source` writes that tarball (dist/rv-<version>.tar.gz) and this
# formula with its URL and SHA-256 filled in (dist/rv.rb): `brew install --formula ./dist/rv.rb`,
# or put it in a tap. tests/package/test_homebrew.sh checks both (ctest package.homebrew).
#
# macOS is built from this formula and NOT yet tested on a Mac: the code macOS compiles is built
# with clang and libc++ in CI (the libcxx lane, docs/testing.md), and the seam's POSIX side
# (core/platform/) is unit-tested on Linux; no Mac has run it.
class Rv < Formula
  desc "Run a command on a Slurm cluster's GPUs: plan, race partitions, follow the logs"
  homepage "@HOMEPAGE@"
  url "@URL@"
  sha256 "@SHA256@"

  depends_on "cli11" => :build
  depends_on "cmake" => :build
  depends_on "ninja" => :build
  depends_on "nlohmann-json" => :build
  depends_on "tomlplusplus" => :build # header-only here (cli/task_file.cpp)
  depends_on "fmt"
  depends_on "libssh"
  depends_on "spdlog"

  def install
    # No unit tests (doctest) and no -Werror: a newer Apple clang may warn where clang 16 did not.
    system "cmake", "-S", ".", "-B", "build", "-G", "Ninja",
           "-DBUILD_TESTING=OFF", "-DRV_WARNINGS_AS_ERRORS=OFF", *std_cmake_args
    system "cmake", "--build", "build", "--target", "rv", "rv_docs"
    bin.install "build/cli/rv"
    man1.install "build/share/rv.1"
    bash_completion.install "build/share/rv.bash" => "rv"
    zsh_completion.install "build/share/rv.zsh" => "_rv"
    fish_completion.install "build/share/rv.fish"
  end

  test do
    assert_match "rv #{version} (commit ", shell_output("#{bin}/rv --version")
    assert_match(/^target: \S+-apple-darwin$/, shell_output("#{bin}/rv --version"))
    assert_match "rv run [OPTIONS] CMD...", shell_output("#{bin}/rv help run")
  end
end
