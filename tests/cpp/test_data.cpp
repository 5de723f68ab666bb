// ember.data's C++ core (csrc/data): the tar writer's headers read back by the streaming reader,
// WebDataset's key/extension split and sample grouping, corrupt and truncated shards (a ShardError
// naming the shard and the offending header's offset, never a crash), skip/seek/read_at, the byte
// sources (files, `pipe:` commands, gzip), the .npy header parser and the JPEG decoder's refusals.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "data/byte_source.h"
#include "data/decode.h"
#include "data/tar_reader.h"
#include "data/tar_writer.h"

using namespace ember;
using namespace ember::data;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kBlock = 512;

int64_t padded(int64_t n) {
  return (n + kBlock - 1) / kBlock * kBlock;
}

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("ember_test_data_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter++) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run(const std::string& command) {
  const int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

std::string zeros(size_t n) {
  return std::string(n, '\0');
}
std::string pad(std::string s) {
  s.append(
      static_cast<size_t>(padded(static_cast<int64_t>(s.size())) - static_cast<int64_t>(s.size())),
      '\0');
  return s;
}
std::string end_blocks() {
  return zeros(2 * kBlock);
}

// Recomputes a header block's checksum after the test edited it (as GNU tar writes it).
void fix_checksum(char* h) {
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (int i = 0; i < kBlock; ++i) sum += static_cast<unsigned char>(h[i]);
  std::snprintf(h + 148, 8, "%06o", sum);
  h[155] = ' ';
}

// One member: the project's header(s), then the data padded to a block.
std::string member(const std::string& name, const std::string& data) {
  return tar_file_header(name, static_cast<int64_t>(data.size()), 1700000000, 0644) + pad(data);
}

// A single ustar header block of another type (directory, symlink, pax, long name), no data.
std::string typed_header(const std::string& name, int64_t size, char type,
                         const std::string& linkname = "") {
  std::string h = tar_file_header(name, size, 1700000000, 0644);
  REQUIRE(h.size() == static_cast<size_t>(kBlock));
  h[156] = type;
  std::memcpy(&h[157], linkname.data(), std::min<size_t>(linkname.size(), 100));
  fix_checksum(&h[0]);
  return h;
}

// "LEN key=value\n" where LEN counts the whole record.
std::string pax_record(const std::string& key, const std::string& value) {
  const size_t body = key.size() + value.size() + 3;
  size_t len = body + 1;
  while (std::to_string(len).size() + body > len) ++len;
  return std::to_string(len) + " " + key + "=" + value + "\n";
}

// A pax (or global) extended header with `records`, padded.
std::string pax_header(const std::string& records, char type = 'x') {
  return typed_header("PaxHeader/x", static_cast<int64_t>(records.size()), type) + pad(records);
}

// A GNU long-name ('L') header carrying `name`.
std::string long_name_header(const std::string& name) {
  return typed_header("././@LongLink", static_cast<int64_t>(name.size() + 1), 'L') +
         pad(name + '\0');
}

// An in-memory shard, seekable or a stream, handing out at most `chunk` bytes per read so that
// the reader's refills and partial reads are exercised.
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string bytes, bool seekable, size_t chunk = 1 << 20)
      : ByteSource("mem://shard.tar"),
        bytes_(std::move(bytes)),
        seekable_(seekable),
        chunk_(chunk) {}
  size_t read(char* dst, size_t n) override {
    const size_t take = std::min({n, chunk_, bytes_.size() - pos_});
    std::memcpy(dst, bytes_.data() + pos_, take);
    pos_ += take;
    return take;
  }
  bool seekable() const override { return seekable_; }
  int64_t size() const override { return seekable_ ? static_cast<int64_t>(bytes_.size()) : -1; }
  void seek(int64_t offset) override {
    if (!seekable_) ByteSource::seek(offset);
    pos_ = static_cast<size_t>(std::min<int64_t>(offset, static_cast<int64_t>(bytes_.size())));
  }

 private:
  std::string bytes_;
  size_t pos_ = 0;
  bool seekable_;
  size_t chunk_;
};

std::unique_ptr<ByteSource> memory(std::string bytes, bool seekable, size_t chunk = 1 << 20) {
  return std::make_unique<MemorySource>(std::move(bytes), seekable, chunk);
}

std::vector<TarEntry> read_entries(std::unique_ptr<ByteSource> source) {
  TarReader reader(std::move(source));
  std::vector<TarEntry> out;
  TarEntry e;
  while (reader.next_header(e)) {
    reader.read_data(e);
    out.push_back(e);
  }
  reader.close();
  return out;
}

std::vector<Sample> read_samples(std::unique_ptr<ByteSource> source, bool want_data = true) {
  SampleReader reader(std::move(source));
  std::vector<Sample> out;
  Sample s;
  while (reader.next(s, want_data)) out.push_back(s);
  reader.close();
  return out;
}

std::vector<Sample> read_samples(const std::string& url, bool want_data = true) {
  return read_samples(open_source(url), want_data);
}

// What a ShardError said, or thrown == false.
struct Failure {
  bool thrown = false;
  int64_t offset = -1;
  std::string url, what;
};

template <typename F>
Failure shard_failure(F&& f) {
  try {
    f();
  } catch (const ShardError& e) {
    return {true, e.offset(), e.url(), e.what()};
  }
  return {};
}

// Reading every sample (with data) of `url` fails with a ShardError at `offset` naming the shard.
void expect_failure(const std::string& url, int64_t offset, const std::string& message = "") {
  INFO(url);
  const Failure f = shard_failure([&] { read_samples(url); });
  REQUIRE(f.thrown);
  CHECK(f.offset == offset);
  CHECK(f.url == url);
  CHECK_THAT(f.what, Contains(url));
  if (!message.empty()) CHECK_THAT(f.what, Contains(message));
}

using Fields = std::vector<std::pair<std::string, std::string>>;

bool same_samples(const std::vector<Sample>& a, const std::vector<Sample>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].key != b[i].key || a[i].fields != b[i].fields || a[i].start != b[i].start ||
        a[i].end != b[i].end)
      return false;
  return true;
}

// A shard of `n` samples "s00".."s{n-1}" with 1-3 fields of varying sizes; returns the bytes.
std::string numbered_shard(int n) {
  std::string tar;
  for (int i = 0; i < n; ++i) {
    char key[16];  // room for any int, so GCC's -Wformat-truncation has nothing to report
    std::snprintf(key, sizeof(key), "s%02d", i);
    tar += member(std::string(key) + ".txt",
                  std::string(static_cast<size_t>(i * 97 % 700), static_cast<char>('a' + i)));
    if (i % 3 != 1) tar += member(std::string(key) + ".cls", std::to_string(i));
    if (i % 3 == 2)
      tar += member(std::string(key) + ".bin", std::string(513, static_cast<char>(i)));
  }
  return tar + end_blocks();
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

// A .npy v1 header for `dict`, padded with spaces to a 64-byte boundary and ending in '\n'.
std::string npy(const std::string& dict, size_t data_bytes) {
  std::string text = dict;
  while ((10 + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(text.size() & 0xff);
  out += static_cast<char>(text.size() >> 8);
  return out + text + std::string(data_bytes, '\x01');
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// 1. Round trip of tar_file_header through TarReader and SampleReader.

TEST_CASE("tar_file_header round trip: names, sizes and block offsets", "[data]") {
  TempDir dir;
  const std::string prefixed = std::string(150, 'p') + "/" + std::string(90, 'n') + ".x";    // 243
  const std::string at_limit = std::string(155, 'q') + "/" + std::string(96, 'm') + ".bin";  // 256
  const std::string no_split = "dir0000000/" + std::string(135, 'r') + ".txt";  // rest > 100
  const std::string over_256 =
      "long/" + std::string(200, 'z') + "/" + std::string(100, 'w') + ".dat";
  const std::string exactly_100 = std::string(96, 'e') + ".txt";
  REQUIRE(at_limit.size() == 256);
  REQUIRE(exactly_100.size() == 100);
  struct Case {
    std::string name, data;
    bool pax;
  };
  std::vector<Case> cases = {
      {"empty.txt", "", false},
      {"one.bin", "x", false},
      {"block.bin", std::string(512, 'b'), false},
      {"block_plus.bin", random_bytes(513, 7), false},
      {"sub/dir/short.json", "{\"a\": 1}", false},
      {exactly_100, "hundred", false},
      {prefixed, "prefix split", false},
      {at_limit, std::string(1000, 'L'), false},
      {no_split, "no slash fits", true},
      {over_256, random_bytes(2000, 3), true},
      {"unicode/\xc3\xa9t\xc3\xa9.txt", "utf-8", false},
  };
  std::string tar;
  std::vector<int64_t> starts, header_sizes;
  for (const Case& c : cases) {
    const std::string h =
        tar_file_header(c.name, static_cast<int64_t>(c.data.size()), 1700000000, 0644);
    INFO(c.name);
    CHECK(h.size() % kBlock == 0);
    CHECK((h.size() > static_cast<size_t>(kBlock)) == c.pax);
    CHECK((h[156] == 'x') == c.pax);
    if (c.name == prefixed || c.name == at_limit) CHECK(h[345] != '\0');  // ustar prefix used
    starts.push_back(static_cast<int64_t>(tar.size()));
    header_sizes.push_back(static_cast<int64_t>(h.size()));
    tar += h + pad(c.data);
  }
  const int64_t archive_end = static_cast<int64_t>(tar.size());
  tar += end_blocks();
  const std::string path = dir / "round.tar";
  write_file(path, tar);

  for (const std::string& url : {path, "pipe:cat " + quote(path)}) {
    INFO(url);
    TarReader reader(open_source(url));
    TarEntry e;
    for (size_t i = 0; i < cases.size(); ++i) {
      INFO(cases[i].name);
      REQUIRE(reader.next_header(e));
      CHECK(e.name == cases[i].name);
      CHECK(e.type == '0');
      CHECK(e.size == static_cast<int64_t>(cases[i].data.size()));
      CHECK(e.start == starts[i]);
      CHECK(e.start % kBlock == 0);
      CHECK(e.data_offset == e.start + header_sizes[i]);
      CHECK(e.end == e.data_offset + padded(e.size));
      CHECK(reader.offset() == e.data_offset);
      reader.read_data(e);
      CHECK(e.data == cases[i].data);
      CHECK(reader.offset() == e.end);
      CHECK(e.end == (i + 1 < cases.size() ? starts[i + 1] : archive_end));
    }
    CHECK_FALSE(reader.next_header(e));
    CHECK(reader.offset() == archive_end + kBlock);  // one zero block read
    CHECK_FALSE(reader.next_header(e));
    CHECK_NOTHROW(reader.close());
  }

  // Every member has its own key, so each is a one-field sample with the same offsets.
  const std::vector<Sample> samples = read_samples(path);
  REQUIRE(samples.size() == cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string key, ext;
    REQUIRE(split_key(cases[i].name, key, ext));
    CHECK(samples[i].key == key);
    CHECK(samples[i].fields == Fields{{ext, cases[i].data}});
    CHECK(samples[i].start == starts[i]);
    CHECK(samples[i].end == (i + 1 < cases.size() ? starts[i + 1] : archive_end));
  }

  // GNU tar reads the same names and bytes back.
  REQUIRE(run("tar -tf " + quote(path) + " > " + quote(dir / "list.txt")) == 0);
  std::istringstream list(read_file(dir / "list.txt"));
  std::string line;
  for (const Case& c : cases) {
    REQUIRE(std::getline(list, line));
    CHECK(line == c.name);
  }
  CHECK_FALSE(std::getline(list, line));
  REQUIRE(run("mkdir -p " + quote(dir / "x") + " && tar -xf " + quote(path) + " -C " +
              quote(dir / "x")) == 0);
  for (const Case& c : cases) CHECK(read_file(dir / ("x/" + c.name)) == c.data);
}

TEST_CASE("tar_file_header: owner fields, huge sizes through pax, bad arguments", "[data]") {
  const std::string h = tar_file_header("a.txt", 5, 1700000000, 0640, "alice", "staff");
  REQUIRE(h.size() == static_cast<size_t>(kBlock));
  CHECK(std::string(&h[265]) == "alice");
  CHECK(std::string(&h[297]) == "staff");
  CHECK(std::string(&h[100]) == "0000640");
  CHECK(std::memcmp(&h[257],
                    "ustar\0"
                    "00",
                    8) == 0);

  // A size past ustar's 11 octal digits goes into a pax "size" record; a stream reads the header
  // without needing the bytes, a local file with too few bytes is a truncated shard.
  const int64_t huge = int64_t{1} << 34;
  const std::string big = tar_file_header("big.bin", huge, 0, 0644);
  CHECK(big[156] == 'x');
  CHECK_THAT(big, Contains(" size=17179869184\n"));
  TarReader stream(memory(big + zeros(4096), false));
  TarEntry e;
  REQUIRE(stream.next_header(e));
  CHECK(e.name == "big.bin");
  CHECK(e.size == huge);
  CHECK(e.start == 0);
  CHECK(e.data_offset == static_cast<int64_t>(big.size()));
  const Failure f =
      shard_failure([&] { TarReader(memory(big + zeros(4096), true)).next_header(e); });
  CHECK(f.thrown);
  CHECK(f.offset == 0);
  CHECK_THAT(f.what, Contains("truncated"));

  CHECK_THROWS_AS(tar_file_header("", 1, 0, 0644), ValueError);
  CHECK_THROWS_AS(tar_file_header(std::string("a\0b", 3), 1, 0, 0644), ValueError);
  CHECK_THROWS_AS(tar_file_header("a.txt", -1, 0, 0644), ValueError);
}

// ---------------------------------------------------------------------------------------------
// 2. WebDataset's key/extension rules.

TEST_CASE("split_key and is_meta_name follow WebDataset", "[data]") {
  std::string key, ext;
  REQUIRE(split_key("a/b.c/d.e.f", key, ext));
  CHECK(key == "a/b.c/d");
  CHECK(ext == "e.f");
  REQUIRE(split_key("x.JPG", key, ext));
  CHECK(key == "x");
  CHECK(ext == "jpg");
  REQUIRE(split_key("dir.with.dots/file.txt", key, ext));
  CHECK(key == "dir.with.dots/file");
  CHECK(ext == "txt");
  REQUIRE(split_key("s.Seg.PNG", key, ext));
  CHECK(key == "s");
  CHECK(ext == "seg.png");
  REQUIRE(split_key("trailing.", key, ext));
  CHECK(key == "trailing");
  CHECK(ext == "");
  CHECK_FALSE(split_key(".hidden", key, ext));
  CHECK_FALSE(split_key("dir/.hidden", key, ext));
  CHECK_FALSE(split_key("noext", key, ext));
  CHECK_FALSE(split_key("dir.d/noext", key, ext));
  CHECK_FALSE(split_key("dir/", key, ext));
  CHECK_FALSE(split_key("", key, ext));

  CHECK(is_meta_name("__meta__"));
  CHECK(is_meta_name("__dir__/x.txt"));
  CHECK(is_meta_name("__key__.txt__"));
  CHECK_FALSE(is_meta_name("a/__x__.txt"));
  CHECK_FALSE(is_meta_name("__x.txt"));
  CHECK_FALSE(is_meta_name("___"));
  CHECK_FALSE(is_meta_name("a.txt"));
  CHECK_FALSE(is_meta_name(""));
}

// ---------------------------------------------------------------------------------------------
// 3. Grouping members into samples.

TEST_CASE("SampleReader groups consecutive members by key, skipping non-sample members", "[data]") {
  std::string tar;
  std::vector<int64_t> at;  // offset of each piece's first header
  auto add = [&](const std::string& piece) {
    at.push_back(static_cast<int64_t>(tar.size()));
    tar += piece;
  };
  add(member("__meta__/info.json", "{}"));         // 0: meta
  add(member("a.jpg", "A-jpeg"));                  // 1
  add(member("a.cls", "0"));                       // 2
  add(typed_header("dir/", 0, '5'));               // 3: directory
  add(typed_header("link.jpg", 0, '2', "a.jpg"));  // 4: symlink
  add(typed_header("hard.jpg", 0, '1', "a.jpg"));  // 5: hard link
  add(member("b.jpg", std::string(600, 'B')));     // 6
  add(member("b.CLS", "1"));                       // 7
  add(member("README", "no extension"));           // 8
  add(member(".hidden", "dot file"));              // 9
  add(member("a.txt", "a again"));                 // 10: key reappears
  add(member("__dir__/x.txt", "meta"));            // 11
  add(pax_header(pax_record("path", "c.d/e.f.g")) + member("ignored.name", "pax"));  // 12
  add(typed_header("trailing/", 0, '\0'));  // 13: old-style directory
  const int64_t archive_end = static_cast<int64_t>(tar.size());
  tar += end_blocks();

  const std::vector<std::pair<std::string, Fields>> expected = {
      {"a", {{"jpg", "A-jpeg"}, {"cls", "0"}}},
      {"b", {{"jpg", std::string(600, 'B')}, {"cls", "1"}}},
      {"a", {{"txt", "a again"}}},
      {"c.d/e", {{"f.g", "pax"}}},
  };
  const std::vector<std::pair<int64_t, int64_t>> bounds = {
      {at[1], at[3]}, {at[6], at[8]}, {at[10], at[11]}, {at[12], at[13]}};

  for (bool seekable : {true, false}) {
    for (bool want_data : {true, false}) {
      INFO("seekable " << seekable << " want_data " << want_data);
      SampleReader reader(memory(tar, seekable, 100));
      Sample s;
      for (size_t i = 0; i < expected.size(); ++i) {
        REQUIRE(reader.next(s, want_data));
        CHECK(s.key == expected[i].first);
        REQUIRE(s.fields.size() == expected[i].second.size());
        for (size_t j = 0; j < s.fields.size(); ++j) {
          CHECK(s.fields[j].first == expected[i].second[j].first);
          CHECK(s.fields[j].second == (want_data ? expected[i].second[j].second : ""));
        }
        CHECK(s.start == bounds[i].first);
        CHECK(s.end == bounds[i].second);
        // The reader already holds the next sample's first header (or has skipped to the end).
        if (i + 1 < expected.size()) CHECK(reader.offset() == bounds[i + 1].first);
      }
      CHECK_FALSE(reader.next(s, want_data));
      CHECK(s.fields.empty());
      CHECK(reader.offset() == archive_end + kBlock);
      CHECK_NOTHROW(reader.close());
    }
  }

  // The raw reader returns every entry, with links and directories carrying no data.
  const std::vector<TarEntry> entries = read_entries(memory(tar, true));
  REQUIRE(entries.size() == 14);
  CHECK(entries[3].type == '5');
  CHECK(entries[4].type == '2');
  CHECK(entries[5].type == '1');
  CHECK(entries[12].name == "c.d/e.f.g");
  CHECK(entries[12].start == at[12]);
  CHECK(entries[13].type == '5');
  CHECK(entries[13].size == 0);
}

TEST_CASE("SampleReader: a repeated extension within a sample is a ShardError", "[data]") {
  for (const std::string second : {"a.jpg", "a.JPG"}) {
    const std::string first = member("a.jpg", "1");
    const std::string tar =
        member("z.txt", "z") + first + member(second, "2") + member("b.jpg", "3") + end_blocks();
    SampleReader reader(memory(tar, true));
    Sample s;
    REQUIRE(reader.next(s, true));
    CHECK(s.key == "z");
    const Failure f = shard_failure([&] { reader.next(s, true); });
    REQUIRE(f.thrown);
    CHECK(f.offset == 2 * kBlock + static_cast<int64_t>(first.size()));
    CHECK(f.url == "mem://shard.tar");
    CHECK_THAT(f.what, Contains("'a'") && Contains("'jpg'"));
  }
  // The same extension in different samples, and different extensions, are fine.
  const std::string tar =
      member("a.jpg", "1") + member("a.png", "2") + member("b.jpg", "3") + end_blocks();
  const std::vector<Sample> samples = read_samples(memory(tar, false));
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].fields.size() == 2);
}

TEST_CASE("GNU tar archives: long names, pax headers, links and directories", "[data]") {
  TempDir dir;
  const std::string src = dir / "src";
  const std::string long_name = "long_" + std::string(141, 'n') + ".txt";  // 150 chars
  const std::string pax_name = "sub/" + std::string(150, 'p') + ".seg.png";
  write_file(src + "/a.jpg", "jpeg bytes");
  write_file(src + "/a.cls", "7");
  write_file(src + "/sub/b.jpg", std::string(1500, 'b'));
  write_file(src + "/sub/b.cls", "8");
  write_file(src + "/" + long_name, "long name data");
  write_file(src + "/" + pax_name, random_bytes(777, 11));
  REQUIRE(run("ln -s a.jpg " + quote(src + "/link.jpg")) == 0);
  REQUIRE(run("ln " + quote(src + "/a.cls") + " " + quote(src + "/hard.cls")) == 0);
  const std::string members = "a.jpg a.cls hard.cls sub link.jpg sub/b.jpg sub/b.cls " +
                              quote(long_name) + " " + quote(pax_name);
  const std::vector<std::pair<std::string, Fields>> expected = {
      {"a", {{"jpg", "jpeg bytes"}, {"cls", "7"}}},
      {"sub/b", {{"jpg", std::string(1500, 'b')}, {"cls", "8"}}},
      {"long_" + std::string(141, 'n'), {{"txt", "long name data"}}},
      {"sub/" + std::string(150, 'p'), {{"seg.png", random_bytes(777, 11)}}},
  };
  for (const std::string format : {"gnu", "pax", "ustar"}) {
    INFO(format);
    const std::string path = dir / (format + ".tar");
    // ustar cannot store the long names: only the short members go in.
    const std::string list =
        format == "ustar" ? "a.jpg a.cls hard.cls sub link.jpg sub/b.jpg sub/b.cls" : members;
    REQUIRE(run("tar --format=" + format + " --no-recursion -C " + quote(src) + " -cf " +
                quote(path) + " " + list) == 0);
    const std::string bytes = read_file(path);
    if (format == "gnu") CHECK(bytes[156] == '0');

    const std::vector<TarEntry> entries = read_entries(open_source(path));
    const size_t want_entries = format == "ustar" ? 7 : 9;
    REQUIRE(entries.size() == want_entries);
    CHECK(entries[0].name == "a.jpg");
    CHECK(entries[0].start == 0);
    CHECK(entries[2].name == "hard.cls");
    CHECK(entries[2].type == '1');
    CHECK(entries[3].name == "sub/");
    CHECK(entries[3].type == '5');
    CHECK(entries[4].name == "link.jpg");
    CHECK(entries[4].type == '2');
    for (size_t i = 1; i < entries.size(); ++i) CHECK(entries[i].start == entries[i - 1].end);
    if (format != "ustar") {
      CHECK(entries[7].name == long_name);
      CHECK(entries[8].name == pax_name);
      // The long name's extra header belongs to its entry: the entry starts at it.
      const char first_type = bytes[static_cast<size_t>(entries[7].start) + 156];
      CHECK(first_type == (format == "gnu" ? 'L' : 'x'));
      CHECK(entries[7].data_offset >= entries[7].start + 3 * kBlock);
    }
    const std::vector<Sample> samples = read_samples(path);
    const size_t want_samples = format == "ustar" ? 2 : 4;
    REQUIRE(samples.size() == want_samples);
    for (size_t i = 0; i < want_samples; ++i) {
      CHECK(samples[i].key == expected[i].first);
      CHECK(samples[i].fields == expected[i].second);
    }
    CHECK(samples[0].start == 0);
    CHECK(samples[1].start == entries[5].start);
  }
}

TEST_CASE("pax headers: global headers, size records, precedence over long names", "[data]") {
  // A global header belongs to no entry; the entry after it starts at its own header.
  const std::string global = pax_header(pax_record("comment", "hello"), 'g');
  std::string tar = global + member("a.txt", "A") + end_blocks();
  std::vector<TarEntry> entries = read_entries(memory(tar, false));
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].start == static_cast<int64_t>(global.size()));
  CHECK(entries[0].data == "A");

  // A pax size record overrides the ustar size field (0 here).
  tar = pax_header(pax_record("size", "5") + pax_record("mtime", "1.5")) +
        typed_header("sized.bin", 0, '0') + pad("12345") + member("next.bin", "n") + end_blocks();
  entries = read_entries(memory(tar, true, 3));
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].name == "sized.bin");
  CHECK(entries[0].start == 0);
  CHECK(entries[0].size == 5);
  CHECK(entries[0].data == "12345");
  CHECK(entries[1].data == "n");

  // pax path wins over a GNU long name, which wins over the header's name field.
  tar = long_name_header("from_L.txt") + pax_header(pax_record("path", "from_pax.txt")) +
        member("from_field.txt", "x") + long_name_header("only_L.txt") + member("field2.txt", "y") +
        end_blocks();
  entries = read_entries(memory(tar, false));
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].name == "from_pax.txt");
  CHECK(entries[0].start == 0);
  CHECK(entries[1].name == "only_L.txt");
  CHECK(entries[1].start == entries[0].end);
}

// ---------------------------------------------------------------------------------------------
// 4. Corrupt and truncated shards.

TEST_CASE("corrupt shards raise ShardError with the header's offset and the file's name",
          "[data]") {
  TempDir dir;
  const std::string a = member("a.txt", std::string(700, 'a'));  // header 0, data 512..1212
  const std::string b = member("b.txt", "bbbbbbbbbb");           // header at 1536
  const std::string c = member("c.txt", "c");                    // header at 2560
  REQUIRE(a.size() == 1536);
  const std::string good = a + b + c + end_blocks();
  const int64_t b_at = 1536, c_at = 2560;
  write_file(dir / "good.tar", good);
  REQUIRE(read_samples(dir / "good.tar").size() == 3);

  auto check_both = [&](const std::string& name, const std::string& bytes, int64_t offset,
                        const std::string& message) {
    const std::string path = dir / name;
    write_file(path, bytes);
    expect_failure(path, offset, message);                       // seekable
    expect_failure("pipe:cat " + quote(path), offset, message);  // stream
    // Skipping the data instead of reading it fails the same way.
    const Failure f = shard_failure([&] { read_samples(path, false); });
    CHECK(f.thrown);
    CHECK(f.offset == offset);
  };

  SECTION("bad checksum") {
    std::string bad = good;
    bad[static_cast<size_t>(b_at)] ^= 0x01;  // 'b' -> 'c' in the name
    check_both("checksum.tar", bad, b_at, "checksum");
    bad = good;
    bad[0] = 'x';
    check_both("checksum0.tar", bad, 0, "checksum");
    bad = good;
    bad[static_cast<size_t>(c_at) + 150] ^= 0x10;  // inside the checksum field itself
    check_both("checksum_field.tar", bad, c_at, "checksum");
  }
  SECTION("truncated inside data") {
    check_both("cut_data.tar", good.substr(0, 1000), 0, "truncated");
    check_both("cut_padding.tar", good.substr(0, 1300), 0, "truncated");
    check_both("cut_b_data.tar", good.substr(0, static_cast<size_t>(b_at) + 512 + 5), b_at,
               "truncated");
  }
  SECTION("truncated inside a header") {
    check_both("cut_header.tar", good.substr(0, static_cast<size_t>(b_at) + 100), b_at,
               "truncated");
    check_both("cut_first_header.tar", good.substr(0, 300), 0, "truncated");
    check_both("cut_end_block.tar", good.substr(0, static_cast<size_t>(c_at) + 1024 + 7),
               c_at + 1024, "truncated");
  }
  SECTION("size field with a non-octal character") {
    std::string bad = good;
    bad[static_cast<size_t>(b_at) + 124 + 9] = '9';
    fix_checksum(&bad[static_cast<size_t>(b_at)]);
    check_both("size9.tar", bad, b_at, "size");
    bad = good;
    bad[static_cast<size_t>(b_at) + 124 + 3] = 'z';
    fix_checksum(&bad[static_cast<size_t>(b_at)]);
    check_both("sizez.tar", bad, b_at, "size");
    bad = good;
    bad[124] = '\xff';  // negative base-256
    fix_checksum(&bad[0]);
    check_both("size_negative.tar", bad, 0, "size");
  }
  SECTION("a size larger than the shard") {
    std::string bad = good;
    std::memcpy(&bad[static_cast<size_t>(b_at) + 124], "07777777777", 11);
    fix_checksum(&bad[static_cast<size_t>(b_at)]);
    check_both("size_big.tar", bad, b_at, "truncated");
  }
  SECTION("garbage") {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
      std::string bytes = random_bytes(3000, seed);
      bytes[0] = 'G';  // not gzip's magic
      check_both("garbage.tar", bytes, 0, "");
    }
    check_both("short_garbage.tar", "not a tar file\n", 0, "truncated");
    check_both("text.tar", std::string(5000, 'x'), 0, "checksum");
  }
  SECTION("gzip magic followed by garbage") {
    const std::string path = dir / "garbage.tar.gz";
    write_file(path, "\x1f\x8b" + random_bytes(2000, 5));
    for (const std::string& url : {path, "pipe:cat " + quote(path)}) {
      const Failure f = shard_failure([&] { read_samples(url); });
      CHECK(f.thrown);
      CHECK_THAT(f.what, Contains(url));
    }
  }
  SECTION("long-name and pax headers without their entry") {
    check_both("L_then_end.tar", long_name_header("x.txt") + end_blocks(), 1024, "long-name");
    check_both("L_at_eof.tar", long_name_header("x.txt"), 1024, "truncated");
    check_both("L_cut.tar", long_name_header("x.txt").substr(0, 600), 0, "truncated");
    check_both("L_huge.tar", a + typed_header("././@LongLink", int64_t{1} << 30, 'L') + zeros(4096),
               b_at, "long-name");
  }
  SECTION("corrupt pax records") {
    const std::vector<std::string> records = {
        "abc",              // no length
        "99 path=x.txt\n",  // length past the data
        "14 path=x.txt!",   // record not ended by a newline
        "9 pathxx\n",       // no '='
        "1x path=a\n",      // non-digit length
        "0 \n",             // zero length
        "13 size=12a4\n",   // bad size
    };
    for (const std::string& r : records) {
      INFO(r);
      check_both("pax.tar", a + pax_header(r) + member("x.txt", "x") + end_blocks(), b_at, "pax");
    }
  }
}

TEST_CASE("shards that are empty, lack end blocks or carry trailing bytes are accepted", "[data]") {
  TempDir dir;
  const std::string body = member("a.txt", "A") + member("a.json", "{}") + member("b.txt", "B");
  const std::vector<std::pair<std::string, std::string>> shards = {
      {"empty.tar", ""},
      {"only_end.tar", end_blocks()},
      {"no_end.tar", body},
      {"one_end_block.tar", body + zeros(512)},
      {"with_end.tar", body + end_blocks()},
      {"trailing.tar", body + end_blocks() + "trailing junk after the end marker"},
      {"record_padding.tar", body + zeros(10240 - body.size())},
  };
  for (const auto& [name, bytes] : shards) {
    const std::string path = dir / name;
    write_file(path, bytes);
    for (const std::string& url : {path, "pipe:cat " + quote(path)}) {
      INFO(url);
      std::vector<Sample> samples;
      REQUIRE_NOTHROW(samples = read_samples(url));
      if (bytes.size() < body.size()) {
        CHECK(samples.empty());
      } else {
        REQUIRE(samples.size() == 2);
        CHECK(samples[0].fields == Fields{{"txt", "A"}, {"json", "{}"}});
        CHECK(samples[1].fields == Fields{{"txt", "B"}});
        CHECK(samples[1].end == static_cast<int64_t>(body.size()));
      }
    }
  }
}

TEST_CASE("mutated and truncated headers never crash the reader", "[data]") {
  // Every header byte of a small shard (long name, pax and plain headers) set to a few values with
  // the checksum fixed, read through a seekable and a streaming source: it reads or raises
  // ShardError at a block boundary, nothing else.
  const std::string tar = long_name_header("long/" + std::string(120, 'l') + ".txt") +
                          member("long/x", "") + pax_header(pax_record("path", "p.bin")) +
                          member("y.bin", std::string(600, 'y')) + member("y.cls", "3") +
                          end_blocks();
  std::vector<size_t> headers;
  for (size_t at = 0; at < tar.size(); at += kBlock) {
    const char t = tar[at + 156];
    const bool zero =
        std::all_of(tar.begin() + static_cast<long>(at),
                    tar.begin() + static_cast<long>(at + kBlock), [](char ch) { return ch == 0; });
    if (!zero && std::memcmp(&tar[at + 257], "ustar", 5) == 0 && t != 0) headers.push_back(at);
  }
  REQUIRE(headers.size() == 5);
  REQUIRE(read_samples(memory(tar, true)).size() == 3);
  int failures = 0, reads = 0;
  auto try_read = [&](const std::string& bytes) {
    for (bool seekable : {true, false}) {
      ++reads;
      const Failure f = shard_failure([&] { read_samples(memory(bytes, seekable, 257), true); });
      if (f.thrown) {
        ++failures;
        CHECK(f.offset >= 0);
        CHECK(f.offset % kBlock == 0);
        CHECK(f.offset <= static_cast<int64_t>(bytes.size()));
        CHECK(f.url == "mem://shard.tar");
      }
    }
  };
  const char values[] = {'\0', '\xff', '\x80', '7', ' ', 'x', 'L', 'g', '5', '/'};
  for (size_t h : headers) {
    for (size_t i = 0; i < static_cast<size_t>(kBlock); ++i) {
      if (i >= 148 && i < 156) continue;
      for (char v : values) {
        std::string bytes = tar;
        bytes[h + i] = v;
        fix_checksum(&bytes[h]);
        try_read(bytes);
      }
    }
  }
  // Data bytes of the long-name and pax headers (the name and the records).
  for (size_t i = 512; i < 1024; i += 3) {
    for (char v : values) {
      std::string bytes = tar;
      bytes[i] = v;
      try_read(bytes);
      bytes = tar;
      bytes[1536 + i] = v;
      try_read(bytes);
    }
  }
  // Every cut of the shard.
  for (size_t n = 0; n <= tar.size(); ++n) try_read(tar.substr(0, n));
  CHECK(failures > 0);
  CHECK(failures < reads);
}

TEST_CASE("TarReader refuses an unconsumed entry and seeks only to header boundaries", "[data]") {
  const std::string tar = member("a.txt", "A") + member("b.txt", "B") + end_blocks();
  TarReader reader(memory(tar, true));
  TarEntry e;
  REQUIRE(reader.next_header(e));
  CHECK_THROWS_AS(reader.next_header(e), Error);
  reader.skip_data(e);
  CHECK_THROWS_AS(reader.skip_data(e), Error);
  REQUIRE(reader.next_header(e));
  CHECK(e.name == "b.txt");
  reader.read_data(e);
  CHECK(e.data == "B");
  CHECK_FALSE(reader.next_header(e));
  reader.seek(1024);
  REQUIRE(reader.next_header(e));
  CHECK(e.name == "b.txt");
  reader.skip_data(e);
  CHECK_THROWS_AS(reader.seek(100), ShardError);
  CHECK_THROWS_AS(reader.seek(-512), ShardError);

  TarReader stream(memory(tar, false));
  CHECK_FALSE(stream.seekable());
  CHECK_THROWS_AS(stream.seek(512), ShardError);
}

// ---------------------------------------------------------------------------------------------
// 5. skip, seek and read_at.

TEST_CASE("SampleReader::skip, seek and read_at", "[data]") {
  TempDir dir;
  const int n = 10;
  const std::string path = dir / "numbered.tar";
  write_file(path, numbered_shard(n));
  const std::vector<Sample> all = read_samples(path);
  REQUIRE(all.size() == static_cast<size_t>(n));
  const std::vector<Sample> headers_only = read_samples(path, false);
  for (int i = 0; i < n; ++i) {
    char key[16];  // room for any int, so GCC's -Wformat-truncation has nothing to report
    std::snprintf(key, sizeof(key), "s%02d", i);
    CHECK(all[i].key == key);
    CHECK(all[i].start % kBlock == 0);
    CHECK(all[i].end % kBlock == 0);
    if (i > 0) CHECK(all[i].start == all[i - 1].end);
    CHECK(headers_only[i].start == all[i].start);
    CHECK(headers_only[i].end == all[i].end);
  }

  for (const std::string& url : {path, "pipe:cat " + quote(path)}) {
    INFO(url);
    for (int skip = 0; skip <= n + 2; ++skip) {
      INFO("skip " << skip);
      SampleReader reader(open_source(url));
      CHECK(reader.skip(skip) == std::min(skip, n));
      Sample s;
      if (skip < n) {
        REQUIRE(reader.next(s, true));
        CHECK(s.key == all[skip].key);
        CHECK(s.fields == all[skip].fields);
        CHECK(s.start == all[skip].start);
      } else {
        CHECK_FALSE(reader.next(s, true));
      }
      reader.close();
    }
  }

  // read_at from the scan's offsets, in any order, on one reader.
  SampleReader reader(open_source(path));
  REQUIRE(reader.seekable());
  for (int i : {7, 0, 9, 3, 3, 1, 8, 2, 6, 5, 4}) {
    const Sample s = reader.read_at(all[i].start, all[i].end - all[i].start);
    CHECK(s.key == all[i].key);
    CHECK(s.fields == all[i].fields);
    CHECK(s.start == all[i].start);
    CHECK(s.end == all[i].end);
  }
  // seek, then next() reads on from there.
  reader.seek(all[4].start);
  Sample s;
  REQUIRE(reader.next(s, true));
  CHECK(s.key == all[4].key);
  CHECK(reader.offset() == all[5].start);
  REQUIRE(reader.next(s, false));
  CHECK(s.key == all[5].key);

  // Wrong lengths and offsets are stale-index errors, not wrong samples.
  const Sample& two = all[2];  // three fields
  const int64_t len = two.end - two.start;
  for (int64_t bad : {len + 512, len - 1, len + 1, int64_t{512}, int64_t{0}, len + 4096}) {
    INFO("length " << bad);
    const Failure f = shard_failure([&] { reader.read_at(two.start, bad); });
    CHECK(f.thrown);
    CHECK(f.offset == two.start);
    CHECK_THAT(f.what, Contains(path));
  }
  CHECK_THROWS_AS(reader.read_at(two.start + 512, len), ShardError);         // inside data
  CHECK_THROWS_AS(reader.read_at(two.start + 1, len), ShardError);           // not a block
  CHECK_THROWS_AS(reader.read_at(all[n - 1].end, 1024), ShardError);         // the end marker
  CHECK_THROWS_AS(reader.read_at(all[n - 1].end + 8192, 1024), ShardError);  // past the end
  // After the errors the reader still works.
  CHECK(reader.read_at(two.start, len).fields == two.fields);

  SampleReader stream(open_source("pipe:cat " + quote(path)));
  CHECK_FALSE(stream.seekable());
  CHECK_THROWS_AS(stream.read_at(all[1].start, all[1].end - all[1].start), ShardError);
}

// Regressions of three reader/writer bugs found by these tests.

TEST_CASE("read_at refuses a length that ends inside the sample", "[data]") {
  // A length that ends at a member boundary inside the sample (a stale index) used to return the
  // first fields only: the loop stopped at `offset + length` without checking that the next
  // member starts another sample.
  const std::string tar =
      member("k.jpg", "jpeg") + member("k.cls", "1") + member("l.jpg", "next") + end_blocks();
  SampleReader reader(memory(tar, true));
  CHECK(reader.read_at(0, 2048).fields.size() == 2);
  CHECK_THROWS_AS(reader.read_at(0, 1024), ShardError);
}

TEST_CASE("tar_file_header keeps the leading '/' of a 101-byte absolute name", "[data]") {
  // The ustar split used to take the '/' at index 0, leaving an empty prefix, so every reader
  // (GNU tar and Python's tarfile too) saw the name without its leading '/'.
  const std::string name = "/" + std::string(100, 'a');
  const std::string tar = tar_file_header(name, 1, 0, 0644) + pad("x") + end_blocks();
  const std::vector<TarEntry> entries = read_entries(memory(tar, true));
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].name == name);
}

TEST_CASE("a regular member named \"dir/\" with data is skipped whole", "[data]") {
  // GNU tar and Python's tarfile (so WebDataset) skip the data of a type '0' member named "dir/";
  // TarReader used to turn it into a directory without data and then parse the data as a header.
  const std::string tar = member("dir/", "xyz") + member("a.txt", "A") + end_blocks();
  std::vector<Sample> samples;
  REQUIRE_NOTHROW(samples = read_samples(memory(tar, true)));
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].key == "a");
}

// ---------------------------------------------------------------------------------------------
// 6. Byte sources.

TEST_CASE("sources: files, file: prefixes, pipe: commands and gzip read the same samples",
          "[data]") {
  TempDir dir;
  const std::string path = dir / "shard.tar";
  write_file(path, numbered_shard(7));
  const std::vector<Sample> want = read_samples(path);
  REQUIRE(want.size() == 7);
  REQUIRE(run("gzip -c " + quote(path) + " > " + quote(dir / "shard.tar.gz")) == 0);
  // Two gzip members concatenated (`cat a.gz b.gz`), split mid-block.
  REQUIRE(run("head -c 3000 " + quote(path) + " | gzip -c > " + quote(dir / "multi.tar.gz") +
              " && tail -c +3001 " + quote(path) + " | gzip -c >> " +
              quote(dir / "multi.tar.gz")) == 0);
  // gzip with a name that does not say so.
  REQUIRE(run("cp " + quote(dir / "shard.tar.gz") + " " + quote(dir / "disguised.tar")) == 0);

  const std::vector<std::string> urls = {
      "file:" + path,
      "file://" + path,
      "pipe:cat " + quote(path),
      "pipe:cat < " + quote(path),
      dir / "shard.tar.gz",
      "file:" + dir / "shard.tar.gz",
      "pipe:cat " + quote(dir / "shard.tar.gz"),
      "pipe:gzip -dc " + quote(dir / "shard.tar.gz"),
      dir / "multi.tar.gz",
      "pipe:cat " + quote(dir / "multi.tar.gz"),
      dir / "disguised.tar",
  };
  for (const std::string& url : urls) {
    INFO(url);
    const std::vector<Sample> got = read_samples(url);
    CHECK(same_samples(got, want));
    CHECK(same_samples(read_samples(url, false), read_samples(path, false)));
  }
  CHECK(open_source(path)->seekable());
  CHECK(open_source("file:" + path)->size() == static_cast<int64_t>(read_file(path).size()));
  CHECK_FALSE(open_source("pipe:cat " + quote(path))->seekable());
  CHECK_FALSE(open_source(dir / "shard.tar.gz")->seekable());
  CHECK(open_source(dir / "shard.tar.gz")->size() == -1);
  CHECK(open_source(path)->url() == path);
  (void)http_supported();

  // A truncated gzip stream is a ShardError naming the shard.
  const std::string gz = read_file(dir / "shard.tar.gz");
  write_file(dir / "cut.tar.gz", gz.substr(0, gz.size() / 2));
  for (const std::string& url : {dir / "cut.tar.gz", "pipe:cat " + quote(dir / "cut.tar.gz")}) {
    const Failure f = shard_failure([&] { read_samples(url); });
    CHECK(f.thrown);
    CHECK(f.url == url);
    CHECK_THAT(f.what, Contains("gzip") || Contains("truncated"));
  }
}

TEST_CASE("sources: pipe exit status, early close and missing files", "[data]") {
  TempDir dir;
  const std::string path = dir / "shard.tar";
  write_file(path, numbered_shard(4));
  const std::vector<Sample> want = read_samples(path);

  SECTION("a command that fails after a complete archive raises at close") {
    const std::string url = "pipe:cat " + quote(path) + "; exit 3";
    SampleReader reader(open_source(url));
    Sample s;
    int count = 0;
    while (reader.next(s, true)) ++count;
    CHECK(count == 4);
    const Failure f = shard_failure([&] { reader.close(); });
    REQUIRE(f.thrown);
    CHECK(f.url == url);
    CHECK_THAT(f.what, Contains("status 3"));
    CHECK_NOTHROW(reader.close());  // already closed
  }
  SECTION("the same through gzip") {
    REQUIRE(run("gzip -c " + quote(path) + " > " + quote(dir / "s.tar.gz")) == 0);
    const std::string url = "pipe:cat " + quote(dir / "s.tar.gz") + "; exit 4";
    const Failure f = shard_failure([&] { read_samples(url); });
    REQUIRE(f.thrown);
    CHECK_THAT(f.what, Contains("status 4"));
  }
  SECTION("a command that fails with no output") {
    for (const std::string& url :
         {std::string("pipe:exit 5"), "pipe:cat " + quote(dir / "missing.tar") + " 2>/dev/null"}) {
      const Failure f = shard_failure([&] { read_samples(url); });
      REQUIRE(f.thrown);
      CHECK(f.url == url);
      CHECK_THAT(f.what, Contains("status"));
    }
  }
  SECTION("a successful command closes cleanly, drained or not") {
    CHECK(same_samples(read_samples("pipe:cat " + quote(path) + "; exit 0"), want));
    // The end marker read, bytes after it are drained and the status still checked.
    write_file(dir / "trailing.tar", read_file(path) + std::string(100000, '\0'));
    CHECK(read_samples("pipe:cat " + quote(dir / "trailing.tar")).size() == 4);
    const Failure f = shard_failure(
        [&] { read_samples("pipe:cat " + quote(dir / "trailing.tar") + "; exit 6"); });
    CHECK(f.thrown);
  }
  SECTION("closing early stops the command and ignores its status") {
    const auto t0 = std::chrono::steady_clock::now();
    {
      SampleReader reader(open_source("pipe:cat " + quote(path) + "; sleep 5; exit 7"));
      Sample s;
      REQUIRE(reader.next(s, true));
      CHECK(s.key == want[0].key);
      CHECK_NOTHROW(reader.close());
    }
    {
      SampleReader reader(open_source("pipe:while true; do cat " + quote(path) + "; done"));
      Sample s;
      REQUIRE(reader.next(s, true));
    }  // destroyed without close()
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
  }
  SECTION("a missing file or a directory fails at open") {
    for (const std::string& url : {dir / "missing.tar", "file:" + dir / "missing.tar", dir.str()}) {
      const Failure f = shard_failure([&] { open_source(url); });
      REQUIRE(f.thrown);
      CHECK(f.offset == 0);
      CHECK(f.url == url);
      CHECK_THAT(f.what, Contains(url));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 7. .npy headers.

TEST_CASE("parse_npy_header", "[data]") {
  NpyHeader h;
  std::string f = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
  REQUIRE(parse_npy_header(f.data(), f.size(), h));
  CHECK(h.descr == "<f4");
  CHECK_FALSE(h.fortran_order);
  CHECK(h.shape == std::vector<int64_t>{2, 3});
  CHECK(h.data_offset == 128);
  CHECK(h.data_offset % 64 == 0);
  CHECK(h.data_bytes == 24);
  CHECK(f.size() - h.data_offset == 24);

  f = npy("{'descr': '>i8', 'fortran_order': True, 'shape': (4,), }", 32);
  REQUIRE(parse_npy_header(f.data(), f.size(), h));
  CHECK(h.fortran_order);
  CHECK(h.descr == ">i8");
  CHECK(h.shape == std::vector<int64_t>{4});
  CHECK(h.data_bytes == 32);

  f = npy("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 1);
  REQUIRE(parse_npy_header(f.data(), f.size(), h));
  CHECK(h.shape.empty());
  CHECK(h.data_bytes == 1);

  f = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }", 0);
  REQUIRE(parse_npy_header(f.data(), f.size(), h));
  CHECK(h.data_bytes == 0);

  f = npy("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", 24);
  REQUIRE(parse_npy_header(f.data(), f.size(), h));
  CHECK(h.data_bytes == 24);

  // Version 2: a 4-byte header length.
  std::string v2 = npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 6);
  const std::string text = v2.substr(10);
  v2 = std::string("\x93NUMPY\x02\x00", 8) + std::string(1, static_cast<char>(v2[8])) +
       std::string(1, v2[9]) + std::string(2, '\0') + text;
  REQUIRE(parse_npy_header(v2.data(), v2.size(), h));
  CHECK(h.data_offset == 12 + (v2.size() - 12 - 6));
  CHECK(h.data_bytes == 6);

  // Structured dtypes are left to NumPy.
  f = npy("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", 8);
  CHECK_FALSE(parse_npy_header(f.data(), f.size(), h));

  // Object arrays, short data and malformed headers are ValueErrors.
  f = npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16);
  CHECK_THROWS_AS(parse_npy_header(f.data(), f.size(), h), ValueError);
  CHECK_THROWS_WITH(parse_npy_header(f.data(), f.size(), h), Contains("object"));
  f = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 23);
  CHECK_THROWS_AS(parse_npy_header(f.data(), f.size(), h), ValueError);
  CHECK_THROWS_WITH(parse_npy_header(f.data(), f.size(), h), Contains("truncated"));
  for (size_t n = 0; n < f.size(); ++n) {
    INFO("cut at " << n);
    CHECK_THROWS_AS(parse_npy_header(f.data(), n, h), ValueError);
  }
  const std::vector<std::string> bad = {
      "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3",
      "{'descr': '<q9', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<f', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<M8[ns', 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<f4', 'shape': (2,), }",
      "{'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999), }",
  };
  for (const std::string& dict : bad) {
    INFO(dict);
    f = npy(dict, 64);
    CHECK_THROWS_AS(parse_npy_header(f.data(), f.size(), h), ValueError);
  }
  const std::string not_npy = "PK\x03\x04 a zip file, not an npy";
  CHECK_THROWS_AS(parse_npy_header(not_npy.data(), not_npy.size(), h), ValueError);
  std::string v9 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
  v9[6] = 9;
  CHECK_THROWS_AS(parse_npy_header(v9.data(), v9.size(), h), ValueError);
  std::string long_len = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
  long_len[9] = '\x7f';  // header length past the end
  CHECK_THROWS_AS(parse_npy_header(long_len.data(), long_len.size(), h), ValueError);
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::string g = "\x93NUMPY\x01" + random_bytes(200, seed);
    g[7] = 0;
    g[8] = static_cast<char>(seed * 3);
    g[9] = 0;
    CHECK_THROWS_AS(parse_npy_header(g.data(), g.size(), h), ValueError);
  }
}

// ---------------------------------------------------------------------------------------------
// 8. JPEG decoding refuses what is not a JPEG.

TEST_CASE("decode_jpeg raises ValueError on garbage, empty and truncated data", "[data]") {
  int calls = 0;
  std::vector<uint8_t> buffer;
  auto allocate = [&](int height, int width) {
    ++calls;
    buffer.assign(static_cast<size_t>(height) * static_cast<size_t>(width) * 4, 0);
    return buffer.data();
  };
  const std::string garbage = random_bytes(4096, 42);
  for (int channels : {1, 3, 4}) {
    CHECK_THROWS_AS(decode_jpeg(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(),
                                channels, allocate),
                    ValueError);
    CHECK_THROWS_AS(decode_jpeg(nullptr, 0, channels, allocate), ValueError);
  }
  CHECK_THROWS_WITH(
      decode_jpeg(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(), 3, allocate),
      Contains("corrupt JPEG"));
  const uint8_t empty[1] = {0};
  CHECK_THROWS_WITH(decode_jpeg(empty, 0, 3, allocate), Contains("empty"));
  CHECK_THROWS_AS(
      decode_jpeg(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(), 2, allocate),
      ValueError);
  // A start-of-image marker and nothing else, then with random bytes after it.
  for (uint32_t seed = 0; seed < 20; ++seed) {
    std::string bytes = "\xff\xd8" + random_bytes(seed * 37, seed);
    CHECK_THROWS_AS(
        decode_jpeg(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 3, allocate),
        ValueError);
  }
  // A JFIF-looking header cut short.
  const std::string jfif("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
                         20);
  CHECK_THROWS_AS(
      decode_jpeg(reinterpret_cast<const uint8_t*>(jfif.data()), jfif.size(), 3, allocate),
      ValueError);
  CHECK(calls == 0);
}
