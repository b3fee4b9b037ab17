// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// RemoteStore against a real S3 server (SeaweedFS, started by the test) and against
// remote_test_server.py for http://. ctest runs every test in a process of its own, so each
// starts its own server (SeaweedFS: ~3 s); the S3 cases are therefore few and broad.
#include "storage/remote/remote_store.h"

#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/str_cat.h"
#include "tests/storage/remote_test_servers.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::storage {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::PatternBytes;
using testing::RangeServer;
using testing::SeaweedServer;

constexpr size_t kObjectSize = 300000;

bool Same(std::span<const std::byte> got, const std::string& want, size_t offset) {
  return std::memcmp(got.data(), want.data() + offset, got.size()) == 0;
}

// Store::OpenAsync with `head` bytes for the first bytes, waited for.
Result<OpenedFile> OpenAndWait(const Store& store, const std::string& path,
                               std::span<std::byte> head) {
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<Result<OpenedFile>> outcome;
  store.OpenAsync(path, IoMode::kPread, head, [&](Result<OpenedFile> opened) {
    std::lock_guard lock(mutex);
    outcome = std::move(opened);
    cv.notify_one();
  });
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return outcome.has_value(); });
  return std::move(*outcome);
}

class S3StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = SeaweedServer::Start(&why);
    if (server_ == nullptr)
      GTEST_SKIP() << why;
    data_ = PatternBytes(kObjectSize, 3);
    ASSERT_OK(server_->CreateBucket("private"));
    ASSERT_OK(server_->PutObject("private", "data/a.bin", data_));
    ASSERT_OK(server_->PutObject("private", "data/sub/b.bin", "b"));
    ASSERT_OK(server_->PutObject("private", "data/odd name+=&~.bin", data_.substr(0, 1000)));
    ASSERT_OK(server_->PutObject(SeaweedServer::kPublicBucket, "data/p.bin", data_));
  }

  // Signed as admin unless another key is given.
  RemoteOptions Options(std::string_view key = {}, std::string_view secret = {}) const {
    RemoteOptions options;
    options.endpoint_url = server_->endpoint();
    options.key = key.empty() ? server_->admin_key() : std::string(key);
    options.secret = key.empty() ? server_->admin_secret() : std::string(secret);
    return options;
  }

  std::shared_ptr<RemoteStore> Store(const RemoteOptions& options, const Environment& env = {}) {
    auto store = RemoteStore::Create(options, env);
    EXPECT_OK(store);
    return store.ok() ? *store : nullptr;
  }

  // The cases, run two tests to a server (see the file comment).
  void SignedRangeReadsGiveTheExactBytes();
  void HundredsOfReadsInFlightComplete();
  void OpensWithItsFirstBytesInOneRequest();
  void ListsNamesDirectlyInAFolder();
  void RefusedCredentialsFailAtOpenSayingWhereTheyCameFrom();
  void MissingObjectsAreNotFoundAndAnonymousSeesOnlyPublic();

  std::unique_ptr<SeaweedServer> server_;
  std::string data_;
};

void S3StoreTest::SignedRangeReadsGiveTheExactBytes() {
  auto store = Store(Options());
  ASSERT_OK_AND_ASSIGN(auto source, store->OpenRemote("s3://private/data/a.bin"));
  EXPECT_EQ(source->name(), "s3://private/data/a.bin");
  EXPECT_EQ(source->size(), kObjectSize);
  EXPECT_FALSE(source->info().etag.empty());
  EXPECT_FALSE(source->info().last_modified.empty());
  EXPECT_EQ(source->Data(0, 1), nullptr);
  EXPECT_EQ(source->fd(), -1);
  for (const auto& [offset, length] : std::vector<std::pair<uint64_t, size_t>>{
           {0, kObjectSize}, {0, 1}, {4095, 70000}, {kObjectSize - 1, 1}}) {
    std::vector<std::byte> out(length);
    ASSERT_OK(source->ReadAt(offset, out));
    EXPECT_TRUE(Same(out, data_, offset)) << offset;
  }
  std::vector<std::byte> past(10);
  EXPECT_THAT(source->ReadAt(kObjectSize - 5, past),
              StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr("s3://private/data/a.bin"),
                                                    HasSubstr("bytes 299995-300004"))));

  // A key with characters Signature V4 must encode, through the ByteSource interface.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<ByteSource> odd,
                       store->Open("s3://private/data/odd name+=&~.bin", IoMode::kMmap));
  EXPECT_TRUE(odd->reads_async());
  std::vector<std::byte> out(1000);
  ASSERT_OK(odd->ReadAt(0, out));
  EXPECT_TRUE(Same(out, data_, 0));

  // The read-only identity reads too.
  auto reader = Store(Options(server_->readonly_key(), server_->readonly_secret()));
  ASSERT_OK_AND_ASSIGN(auto via_reader, reader->Open("s3://private/data/a.bin", IoMode::kPread));
  ASSERT_OK(via_reader->ReadAt(1, std::span(out).first(10)));
  EXPECT_TRUE(Same(std::span(out).first(10), data_, 1));
  EXPECT_EQ(store->engine_stats().errors, 0);
}

void S3StoreTest::HundredsOfReadsInFlightComplete() {
  RemoteOptions options = Options();
  options.io_depth = 32;
  auto store = Store(options);
  ASSERT_OK_AND_ASSIGN(auto source, store->OpenRemote("s3://private/data/a.bin"));
  constexpr int kReads = 300;
  constexpr size_t kLength = 1000;
  std::vector<std::vector<std::byte>> buffers(kReads, std::vector<std::byte>(kLength));
  std::mutex mutex;
  std::condition_variable cv;
  int done = 0;
  std::vector<Status> statuses(kReads);
  for (int i = 0; i < kReads; ++i) {
    source->ReadAsync(static_cast<uint64_t>(i) * 997, buffers[static_cast<size_t>(i)],
                      [&, i](Status s) {
                        std::lock_guard lock(mutex);
                        statuses[static_cast<size_t>(i)] = std::move(s);
                        ++done;
                        cv.notify_all();
                      });
  }
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return done == kReads; });
  for (int i = 0; i < kReads; ++i) {
    ASSERT_OK(statuses[static_cast<size_t>(i)]);
    EXPECT_TRUE(Same(buffers[static_cast<size_t>(i)], data_, static_cast<size_t>(i) * 997)) << i;
  }
  const CurlEngineStats stats = store->engine_stats();
  EXPECT_LE(stats.max_in_flight, 32);
  EXPECT_EQ(stats.bytes, kReads * static_cast<int64_t>(kLength));
}

void S3StoreTest::OpensWithItsFirstBytesInOneRequest() {
  ASSERT_OK(server_->PutObject(SeaweedServer::kPublicBucket, "other/empty.bin", ""));
  auto store = Store(Options());
  std::vector<std::byte> head(4096);
  const auto requests = [&] { return store->engine_stats().submitted; };

  // One GET: size, identity and the first bytes, and later reads carry its ETag.
  ASSERT_OK_AND_ASSIGN(OpenedFile a, OpenAndWait(*store, "s3://private/data/a.bin", head));
  EXPECT_EQ(requests(), 1);
  EXPECT_EQ(a.head_bytes, head.size());
  EXPECT_TRUE(Same(head, data_, 0));
  EXPECT_EQ(a.file->size(), kObjectSize);
  EXPECT_FALSE(a.file->version().empty());
  std::vector<std::byte> out(100);
  ASSERT_OK(a.file->ReadAt(kObjectSize - 100, out));
  EXPECT_TRUE(Same(out, data_, kObjectSize - 100));

  // Remembered now: opening again asks for the bytes alone.
  std::vector<std::byte> again(100);
  ASSERT_OK_AND_ASSIGN(a, OpenAndWait(*store, "s3://private/data/a.bin", again));
  EXPECT_EQ(a.head_bytes, 100u);
  EXPECT_TRUE(Same(again, data_, 0));
  EXPECT_EQ(requests(), 3);

  // An object shorter than asked comes whole; an empty one, which has no first byte to ask
  // for, is opened with a HEAD.
  ASSERT_OK_AND_ASSIGN(OpenedFile b, OpenAndWait(*store, "s3://private/data/sub/b.bin", head));
  EXPECT_EQ(b.head_bytes, 1u);
  EXPECT_EQ(b.file->size(), 1u);
  EXPECT_EQ(static_cast<char>(head[0]), 'b');
  ASSERT_OK_AND_ASSIGN(OpenedFile empty, OpenAndWait(*store, "s3://public/other/empty.bin", head));
  EXPECT_EQ(empty.head_bytes, 0u);
  EXPECT_EQ(empty.file->size(), 0u);

  // Nothing there: kNotFound naming the URL, remembered (no second request).
  EXPECT_THAT(OpenAndWait(*store, "s3://private/data/missing.bin", head),
              StatusIs(StatusCode::kNotFound, HasSubstr("s3://private/data/missing.bin")));
  const int64_t before = requests();
  EXPECT_THAT(OpenAndWait(*store, "s3://private/data/missing.bin", head),
              StatusIs(StatusCode::kNotFound, HasSubstr("missing.bin")));
  EXPECT_EQ(requests(), before);

  // Refused credentials say so from the GET's own error document.
  auto wrong_secret = Store(Options(server_->admin_key(), "wrong"));
  EXPECT_THAT(OpenAndWait(*wrong_secret, "s3://private/data/a.bin", head),
              StatusIs(StatusCode::kIoError,
                       AllOf(HasSubstr("s3://private/data/a.bin"), HasSubstr("were refused"),
                             HasSubstr("SignatureDoesNotMatch"))));
}

void S3StoreTest::ListsNamesDirectlyInAFolder() {
  auto store = Store(Options());
  ASSERT_OK_AND_ASSIGN(auto names, store->List("s3://private/data"));
  EXPECT_THAT(names, ElementsAre("a.bin", "odd name+=&~.bin", "sub/"));
  ASSERT_OK_AND_ASSIGN(names, store->List("s3://private/data/sub/"));
  EXPECT_THAT(names, ElementsAre("b.bin"));
  ASSERT_OK_AND_ASSIGN(names, store->List("s3://private"));
  EXPECT_THAT(names, ElementsAre("data/"));
  EXPECT_THAT(store->List("s3://private/nothing"),
              StatusIs(StatusCode::kNotFound,
                       AllOf(HasSubstr("s3://private/nothing"), HasSubstr("no such folder"))));

  const auto stat = [&](const std::string& path) {
    const Result<EntryKind> kind = store->Stat(path);
    EXPECT_TRUE(kind.ok()) << path << ": " << kind.status().ToString();
    return kind.ok() ? *kind : EntryKind::kNone;
  };
  EXPECT_EQ(stat("s3://private/data/a.bin"), EntryKind::kFile);
  EXPECT_EQ(stat("s3://private/data/sub"), EntryKind::kFolder);
  EXPECT_EQ(stat("s3://private/data/sub/"), EntryKind::kFolder);
  EXPECT_EQ(stat("s3://private"), EntryKind::kFolder);
  EXPECT_EQ(stat("s3://private/data/none.bin"), EntryKind::kNone);
  EXPECT_EQ(stat("s3://private/data/a.bi"), EntryKind::kNone);  // a prefix of a name is not one
  EXPECT_EQ(stat("s3://no-such-bucket"), EntryKind::kNone);

  // More names than one page holds (1000): continuation tokens, one request per page.
  for (int i = 0; i < 1005; ++i)
    ASSERT_OK(server_->PutObject("private", StrCat("many/case_", 10000 + i), "x"));
  const int64_t before = store->engine_stats().submitted;
  ASSERT_OK_AND_ASSIGN(names, store->List("s3://private/many"));
  ASSERT_EQ(names.size(), 1005u);
  EXPECT_EQ(names.front(), "case_10000");
  EXPECT_EQ(names.back(), "case_11004");
  EXPECT_EQ(store->engine_stats().submitted - before, 2);
}

void S3StoreTest::RefusedCredentialsFailAtOpenSayingWhereTheyCameFrom() {
  auto wrong_secret = Store(Options(server_->admin_key(), "wrong"));
  EXPECT_THAT(wrong_secret->Open("s3://private/data/a.bin", IoMode::kPread),
              StatusIs(StatusCode::kIoError,
                       AllOf(HasSubstr("s3://private/data/a.bin"),
                             HasSubstr("credentials from the storage options (key, secret) were "
                                       "refused"),
                             HasSubstr("SignatureDoesNotMatch"))));
  auto unknown_key = Store(Options("NOSUCHKEY", "x"));
  EXPECT_THAT(unknown_key->Open("s3://private/data/a.bin", IoMode::kPread),
              StatusIs(StatusCode::kIoError,
                       AllOf(HasSubstr("were refused"), HasSubstr("InvalidAccessKeyId"))));

  // From a profile in a credentials file named by the environment.
  testing::TempDir dir;
  std::ofstream(dir / "credentials") << "[bad]\naws_access_key_id = " << server_->admin_key()
                                     << "\naws_secret_access_key = wrong\n";
  const Environment env = {{"AWS_PROFILE", "bad"},
                           {"AWS_SHARED_CREDENTIALS_FILE", dir / "credentials"},
                           {"AWS_ENDPOINT_URL", server_->endpoint()}};
  auto from_profile = Store(RemoteOptions(), env);
  EXPECT_THAT(from_profile->Open("s3://private/data/a.bin", IoMode::kPread),
              StatusIs(StatusCode::kIoError, HasSubstr("credentials from AWS_PROFILE=bad in " +
                                                       dir / "credentials" + " were refused")));
}

void S3StoreTest::MissingObjectsAreNotFoundAndAnonymousSeesOnlyPublic() {
  auto store = Store(Options());
  EXPECT_THAT(store->Open("s3://private/data/missing.bin", IoMode::kPread),
              StatusIs(StatusCode::kNotFound,
                       AllOf(HasSubstr("s3://private/data/missing.bin"), HasSubstr("HTTP 404"))));
  EXPECT_THAT(store->Open("s3://no-such-bucket/x", IoMode::kPread),
              StatusIs(StatusCode::kNotFound, HasSubstr("s3://no-such-bucket/x")));
  EXPECT_THAT(store->List("s3://no-such-bucket"),
              StatusIs(StatusCode::kNotFound,
                       AllOf(HasSubstr("s3://no-such-bucket (listing)"),
                             HasSubstr("no such bucket"), HasSubstr("NoSuchBucket"))));

  RemoteOptions anonymous;
  anonymous.endpoint_url = server_->endpoint();
  anonymous.anon = true;
  auto anonymous_store = Store(anonymous);
  ASSERT_OK_AND_ASSIGN(auto source,
                       anonymous_store->Open("s3://public/data/p.bin", IoMode::kPread));
  std::vector<std::byte> out(100);
  ASSERT_OK(source->ReadAt(500, out));
  EXPECT_TRUE(Same(out, data_, 500));
  ASSERT_OK_AND_ASSIGN(auto names, anonymous_store->List("s3://public/data"));
  EXPECT_THAT(names, ElementsAre("p.bin"));
  EXPECT_THAT(anonymous_store->Open("s3://private/data/a.bin", IoMode::kPread),
              StatusIs(StatusCode::kIoError,
                       AllOf(HasSubstr("s3://private/data/a.bin"),
                             HasSubstr("access denied to an unsigned request"),
                             HasSubstr("AccessDenied"), Not(HasSubstr("were refused")))));
  EXPECT_THAT(anonymous_store->List("s3://private"),
              StatusIs(StatusCode::kIoError, HasSubstr("access denied")));
}

TEST_F(S3StoreTest, SignedReadsListingAndHundredsInFlight) {
  ASSERT_NO_FATAL_FAILURE(SignedRangeReadsGiveTheExactBytes());
  ASSERT_NO_FATAL_FAILURE(HundredsOfReadsInFlightComplete());
  ASSERT_NO_FATAL_FAILURE(OpensWithItsFirstBytesInOneRequest());
  ASSERT_NO_FATAL_FAILURE(ListsNamesDirectlyInAFolder());
}

TEST_F(S3StoreTest, ErrorsNameTheUrlAndTheCause) {
  ASSERT_NO_FATAL_FAILURE(RefusedCredentialsFailAtOpenSayingWhereTheyCameFrom());
  ASSERT_NO_FATAL_FAILURE(MissingObjectsAreNotFoundAndAnonymousSeesOnlyPublic());
}

class HttpStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "files/cases");
    data_ = PatternBytes(kObjectSize, 5);
    std::ofstream(dir_ / "files/cases/a.bin", std::ios::binary) << data_;
    std::string why;
    server_ = RangeServer::Start(dir_ / "files", &why);
    if (server_ == nullptr)
      GTEST_SKIP() << why;
    auto store = RemoteStore::Create(RemoteOptions(), {});
    ASSERT_OK(store);
    store_ = *store;
    cases_ = server_->url() + "/files/cases/";
  }

  testing::TempDir dir_;
  std::string data_;
  std::unique_ptr<RangeServer> server_;
  std::shared_ptr<RemoteStore> store_;
  std::string cases_;
};

TEST_F(HttpStoreTest, ReadsRangesStatsAndRefusesToList) {
  ASSERT_OK_AND_ASSIGN(auto source, store_->Open(cases_ + "a.bin", IoMode::kPread));
  EXPECT_EQ(source->name(), cases_ + "a.bin");
  EXPECT_EQ(source->size(), kObjectSize);
  std::vector<std::byte> out(5000);
  ASSERT_OK(source->ReadAt(123, out));
  EXPECT_TRUE(Same(out, data_, 123));
  EXPECT_THAT(store_->Open(cases_ + "missing.bin", IoMode::kPread),
              StatusIs(StatusCode::kNotFound, HasSubstr(cases_ + "missing.bin")));
  ASSERT_OK_AND_ASSIGN(EntryKind kind, store_->Stat(cases_ + "a.bin"));
  EXPECT_EQ(kind, EntryKind::kFile);
  ASSERT_OK_AND_ASSIGN(kind, store_->Stat(cases_ + "missing.bin"));
  EXPECT_EQ(kind, EntryKind::kNone);
  EXPECT_THAT(store_->List(cases_),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("offer no listing")));

  // Opened with its first bytes: a fresh store asks once.
  ASSERT_OK_AND_ASSIGN(auto fresh, RemoteStore::Create(RemoteOptions(), {}));
  std::vector<std::byte> head(kObjectSize + 10);
  ASSERT_OK_AND_ASSIGN(OpenedFile whole, OpenAndWait(*fresh, cases_ + "a.bin", head));
  EXPECT_EQ(whole.head_bytes, kObjectSize);
  EXPECT_EQ(whole.file->size(), kObjectSize);
  EXPECT_TRUE(Same(std::span(head).first(kObjectSize), data_, 0));
  EXPECT_EQ(fresh->engine_stats().submitted, 1);
}

TEST_F(HttpStoreTest, KeepsWhatReadersAskItToKeep) {
  const std::string index = "sixteen bytes!!!";
  const auto bytes = std::as_bytes(std::span(index));
  EXPECT_EQ(store_->Recall("a.zarr/c/0\n\"etag\"\nzarr shard index"), nullptr);
  store_->Keep("a.zarr/c/0\n\"etag\"\nzarr shard index", bytes);
  const auto kept = store_->Recall("a.zarr/c/0\n\"etag\"\nzarr shard index");
  ASSERT_NE(kept, nullptr);
  EXPECT_TRUE(std::equal(kept->begin(), kept->end(), bytes.begin(), bytes.end()));
  // Another version is another key; local files keep nothing (they are read again).
  EXPECT_EQ(store_->Recall("a.zarr/c/0\n\"other\"\nzarr shard index"), nullptr);
  LocalFiles()->Keep("x", bytes);
  EXPECT_EQ(LocalFiles()->Recall("x"), nullptr);
}

TEST_F(HttpStoreTest, AnObjectReplacedAfterOpenIsAnErrorNotAMix) {
  ASSERT_OK_AND_ASSIGN(auto source, store_->Open(cases_ + "a.bin", IoMode::kPread));
  std::ofstream(dir_ / "files/cases/a.bin", std::ios::binary) << PatternBytes(kObjectSize, 6);
  std::vector<std::byte> out(10);
  EXPECT_THAT(source->ReadAt(0, out),
              StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr("a.bin bytes 0-9"),
                                                    HasSubstr("changed since it was opened"))));
}

TEST_F(HttpStoreTest, ServerErrorsNameTheRangeStatusAndCode) {
  RemoteOptions options;
  options.max_retries = 1;
  ASSERT_OK_AND_ASSIGN(auto store, RemoteStore::Create(options, {}));
  ASSERT_OK_AND_ASSIGN(auto source, store->Open(cases_ + "a.bin", IoMode::kPread));
  ASSERT_OK(server_->QueueFaults({"503", "503"}));
  std::vector<std::byte> out(100);
  EXPECT_THAT(source->ReadAt(1000, out),
              StatusIs(StatusCode::kIoError,
                       AllOf(HasSubstr(cases_ + "a.bin bytes 1000-1099"),
                             HasSubstr("HTTP 503 SlowDown: Please reduce your request rate."),
                             HasSubstr("after 2 attempts"))));
}

}  // namespace
}  // namespace patchfeed::storage
