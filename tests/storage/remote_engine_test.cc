// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// CurlEngine against remote_test_server.py: exact ranges, retries of injected faults,
// refusal of answers whose sizes disagree, the depth bound, timeouts and cancellation.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/str_cat.h"
#include "storage/remote/curl_engine.h"
#include "tests/storage/remote_test_servers.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::storage {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::PatternBytes;
using testing::RangeServer;

constexpr size_t kFileSize = 1 << 20;

// Collects results of requests that complete on the engine thread.
class Results {
 public:
  std::function<void(HttpResult&&)> Callback(int index) {
    return [this, index](HttpResult&& r) {
      std::lock_guard lock(mutex_);
      results_[index] = std::move(r);
      ++done_;
      cv_.notify_all();
    };
  }
  void Resize(int n) { results_.resize(static_cast<size_t>(n)); }
  void WaitFor(int n) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return done_ >= n; });
  }
  int done() {
    std::lock_guard lock(mutex_);
    return done_;
  }
  HttpResult& operator[](int i) { return results_[static_cast<size_t>(i)]; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<HttpResult> results_;
  int done_ = 0;
};

class CurlEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "files");
    data_ = PatternBytes(kFileSize, 7);
    std::ofstream(dir_ / "files/data.bin", std::ios::binary) << data_;
    std::string why;
    server_ = RangeServer::Start(dir_ / "files", &why);
    if (server_ == nullptr)
      GTEST_SKIP() << why;
  }

  std::unique_ptr<CurlEngine> Engine(CurlEngineOptions options = {}) {
    options.retry_base_delay_s = 0.001;  // keep retried tests fast
    auto engine = CurlEngine::Create(options);
    EXPECT_OK(engine);
    return std::move(*engine);
  }

  HttpRequest Get(uint64_t offset, std::span<std::byte> out) const {
    HttpRequest r;
    r.url = server_->url() + "/files/data.bin";
    r.label = "data.bin";
    r.ranged = true;
    r.offset = offset;
    r.out = out;
    return r;
  }

  static HttpResult Wait(CurlEngine& engine, HttpRequest request) {
    Results results;
    results.Resize(1);
    request.done = results.Callback(0);
    engine.Submit(std::move(request));
    results.WaitFor(1);
    return std::move(results[0]);
  }

  bool Equal(std::span<const std::byte> got, uint64_t offset) const {
    return std::memcmp(got.data(), data_.data() + offset, got.size()) == 0;
  }

  testing::TempDir dir_;
  std::string data_;
  std::unique_ptr<RangeServer> server_;
};

TEST_F(CurlEngineTest, ReadsExactRangesAndObjectInfo) {
  auto engine = Engine();
  for (const auto& [offset, length] : std::vector<std::pair<uint64_t, size_t>>{
           {0, 1}, {0, kFileSize}, {12345, 100000}, {kFileSize - 1, 1}, {kFileSize - 7, 7}}) {
    std::vector<std::byte> out(length);
    const HttpResult r = Wait(*engine, Get(offset, out));
    ASSERT_OK(r.status);
    EXPECT_EQ(r.http_status, 206);
    EXPECT_TRUE(Equal(out, offset)) << offset << "+" << length;
    EXPECT_EQ(r.info.size, kFileSize);
    EXPECT_FALSE(r.info.etag.empty());
  }
  HttpRequest head;
  head.method = HttpMethod::kHead;
  head.url = server_->url() + "/files/data.bin";
  const HttpResult h = Wait(*engine, std::move(head));
  ASSERT_OK(h.status);
  EXPECT_EQ(h.info.size, kFileSize);
  EXPECT_EQ(h.info.last_modified, "Thu, 01 Jan 2026 00:00:00 GMT");

  HttpRequest whole;
  whole.url = server_->url() + "/files/data.bin";
  whole.max_body = kFileSize;
  HttpResult w = Wait(*engine, std::move(whole));
  ASSERT_OK(w.status);
  EXPECT_EQ(w.body, data_);

  whole = {};
  whole.url = server_->url() + "/files/data.bin";
  whole.label = "data.bin";
  whole.max_body = kFileSize - 1;
  EXPECT_THAT(Wait(*engine, std::move(whole)).status,
              StatusIs(StatusCode::kResourceExhausted, HasSubstr("larger than")));
  const CurlEngineStats stats = engine->stats();
  EXPECT_EQ(stats.submitted, 8);
  EXPECT_EQ(stats.completed, 8);
  EXPECT_EQ(stats.errors, 1);
  EXPECT_EQ(stats.retries, 0);
}

TEST_F(CurlEngineTest, RetriesTransientFailuresWithoutAWrongByte) {
  auto engine = Engine({.max_retries = 6});
  ASSERT_OK(server_->QueueFaults({"503", "429", "reset", "short", "500"}));
  std::vector<std::byte> out(200000);
  const HttpResult r = Wait(*engine, Get(1000, out));
  ASSERT_OK(r.status);
  EXPECT_EQ(r.attempts, 6);
  EXPECT_TRUE(Equal(out, 1000));
  EXPECT_EQ(engine->stats().retries, 5);
  EXPECT_EQ(engine->stats().errors, 0);
  EXPECT_EQ(engine->stats().bytes, 200000);
}

TEST_F(CurlEngineTest, GivesUpAfterMaxRetriesWithTheLastAnswer) {
  auto engine = Engine({.max_retries = 2});
  ASSERT_OK(server_->QueueFaults({"503", "503", "503"}));
  std::vector<std::byte> out(10);
  const HttpResult r = Wait(*engine, Get(0, out));
  EXPECT_THAT(r.status, StatusIs(StatusCode::kIoError,
                                 AllOf(HasSubstr("data.bin bytes 0-9"), HasSubstr("HTTP 503"),
                                       HasSubstr("after 3 attempts"))));
  EXPECT_EQ(r.http_status, 503);
  EXPECT_THAT(r.body, HasSubstr("<Code>SlowDown</Code>"));
  EXPECT_EQ(r.attempts, 3);
}

TEST_F(CurlEngineTest, RefusesAnswersWhoseSizesDisagree) {
  auto engine = Engine();
  std::vector<std::byte> out(100);
  ASSERT_OK(server_->QueueFaults({"long"}));
  HttpResult r = Wait(*engine, Get(50, out));
  EXPECT_THAT(r.status, StatusIs(StatusCode::kDataLoss, HasSubstr("more than the 100 bytes")));
  EXPECT_EQ(r.attempts, 1);

  ASSERT_OK(server_->QueueFaults({"wrong_range"}));
  r = Wait(*engine, Get(50, out));
  EXPECT_THAT(r.status, StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr("asked for bytes 50-149"),
                                                              HasSubstr("bytes 51-150/1048576"))));

  ASSERT_OK(server_->QueueFaults({"ignore_range"}));
  r = Wait(*engine, Get(50, out));
  EXPECT_THAT(r.status,
              StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support range requests")));

  // Past the end: the server answers 416; a range that starts inside but ends past it gets
  // the shorter Content-Range, which is refused.
  r = Wait(*engine, Get(kFileSize, out));
  EXPECT_EQ(r.http_status, 416);
  EXPECT_THAT(r.status, StatusIs(StatusCode::kIoError, HasSubstr("HTTP 416")));
  r = Wait(*engine, Get(kFileSize - 50, out));
  EXPECT_THAT(r.status, StatusIs(StatusCode::kDataLoss, HasSubstr("holds 1048576 bytes")));

  HttpRequest changed = Get(0, out);
  changed.if_match = "\"an-older-etag\"";
  r = Wait(*engine, std::move(changed));
  EXPECT_EQ(r.http_status, 412);
}

TEST_F(CurlEngineTest, KeepsAtMostDepthInFlight) {
  constexpr int kDepth = 8;
  constexpr int kReads = 100;
  auto engine = Engine({.depth = kDepth});
  ASSERT_OK(server_->SetDelay(0.05));
  std::vector<std::vector<std::byte>> buffers(kReads, std::vector<std::byte>(4096));
  Results results;
  results.Resize(kReads);
  for (int i = 0; i < kReads; ++i) {
    HttpRequest r = Get(static_cast<uint64_t>(i) * 5000, buffers[static_cast<size_t>(i)]);
    r.done = results.Callback(i);
    engine->Submit(std::move(r));
  }
  results.WaitFor(kReads);
  for (int i = 0; i < kReads; ++i) {
    ASSERT_OK(results[i].status);
    EXPECT_TRUE(Equal(buffers[static_cast<size_t>(i)], static_cast<uint64_t>(i) * 5000)) << i;
  }
  const CurlEngineStats stats = engine->stats();
  EXPECT_EQ(stats.completed, kReads);
  EXPECT_LE(stats.max_in_flight, kDepth);
  EXPECT_GT(stats.max_in_flight, 1);
  ASSERT_OK_AND_ASSIGN(auto server_stats, server_->RequestsAndMaxInFlight());
  EXPECT_EQ(server_stats.first, kReads);
  EXPECT_LE(server_stats.second, kDepth);
}

TEST_F(CurlEngineTest, TimesOutAndRetriesSlowAnswers) {
  auto engine = Engine({.request_timeout_s = 0.2, .max_retries = 1});
  ASSERT_OK(server_->QueueFaults({"delay:5", "delay:5"}));
  std::vector<std::byte> out(10);
  const HttpResult r = Wait(*engine, Get(0, out));
  EXPECT_THAT(r.status, StatusIs(StatusCode::kIoError,
                                 AllOf(HasSubstr("data.bin bytes 0-9"), HasSubstr("imed out"),
                                       HasSubstr("after 2 attempts"))));
  EXPECT_EQ(r.http_status, 0);
}

TEST_F(CurlEngineTest, ReportsRefusedConnections) {
  auto engine = Engine({.max_retries = 1});
  HttpRequest r;
  r.url = "http://127.0.0.1:1/nothing";
  r.label = "nothing";
  r.method = HttpMethod::kHead;
  EXPECT_THAT(Wait(*engine, std::move(r)).status,
              StatusIs(StatusCode::kIoError,
                       AllOf(HasSubstr("nothing (HEAD)"), HasSubstr("after 2 attempts"))));
}

TEST_F(CurlEngineTest, DestructionCancelsQueuedWaitingAndInFlightRequests) {
  constexpr int kReads = 20;
  auto engine = Engine({.depth = 4, .max_retries = 3});
  ASSERT_OK(server_->SetDelay(30));
  std::vector<std::vector<std::byte>> buffers(kReads + 1, std::vector<std::byte>(16));
  Results results;
  results.Resize(kReads + 1);
  CurlEngine* raw = engine.get();
  for (int i = 0; i < kReads; ++i) {
    HttpRequest r = Get(0, buffers[static_cast<size_t>(i)]);
    auto record = results.Callback(i);
    if (i == 0) {
      // A callback that submits again while the engine closes: that request is cancelled too.
      r.done = [&, raw, record](HttpResult&& result) {
        HttpRequest again = Get(0, buffers[kReads]);
        again.done = results.Callback(kReads);
        raw->Submit(std::move(again));
        record(std::move(result));
      };
    } else {
      r.done = std::move(record);
    }
    engine->Submit(std::move(r));
  }
  // Wait until the server holds requests (they are in flight), without a fixed sleep.
  for (int tries = 0; tries < 1000; ++tries) {
    auto stats = server_->RequestsAndMaxInFlight();
    if (stats.ok() && stats->first >= 4)
      break;
  }
  engine.reset();
  ASSERT_EQ(results.done(), kReads + 1);
  for (int i = 0; i <= kReads; ++i) {
    EXPECT_THAT(results[i].status,
                StatusIs(StatusCode::kCancelled, HasSubstr("closed before the request finished")))
        << i;
  }
}

// A callback may hold the engine's last owner (a remote file an open hands over): dropping it
// there, on the engine's own thread, stops the engine without it joining itself.
TEST_F(CurlEngineTest, ItsLastOwnerMayLetGoInsideACallback) {
  std::shared_ptr<CurlEngine> engine = Engine();
  std::vector<std::byte> out(100);
  std::mutex mutex;
  std::condition_variable cv;
  bool called = false;
  HttpRequest request = Get(0, out);
  request.done = [&, owner = engine](HttpResult&& r) mutable {
    EXPECT_OK(r.status);
    owner.reset();  // the last reference: ~CurlEngine on the engine's thread
    std::lock_guard lock(mutex);
    called = true;
    cv.notify_all();
  };
  engine->Submit(std::move(request));
  engine.reset();  // the callback's copy is the only one left
  std::unique_lock lock(mutex);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return called; }));
}

}  // namespace
}  // namespace patchfeed::storage
