// http(s):// shards streamed through libcurl's multi interface, pulled by read(): no thread and no
// local copy; at most one transfer buffer of bytes is held.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.h"
#include "data/byte_source.h"

#ifdef EMBER_HAVE_CURL
#include <curl/curl.h>
#endif

namespace ember::data {

#ifdef EMBER_HAVE_CURL
namespace {

class HttpSource final : public ByteSource {
 public:
  explicit HttpSource(const std::string& url) : ByteSource(url) {
    static std::once_flag global_init;
    std::call_once(global_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    easy_ = curl_easy_init();
    multi_ = curl_multi_init();
    if (easy_ == nullptr || multi_ == nullptr) throw ShardError(url_, 0, "libcurl init failed");
    curl_easy_setopt(easy_, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy_, CURLOPT_FAILONERROR, 1L);  // HTTP >= 400 is an error, not a body
    curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT, 60L);
    // A stalled server (under 1 byte/s for 120 s) fails the read instead of hanging it.
    curl_easy_setopt(easy_, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy_, CURLOPT_LOW_SPEED_TIME, 120L);
    curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &HttpSource::on_data);
    curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_);
    curl_multi_add_handle(multi_, easy_);
  }
  ~HttpSource() override { HttpSource::close(false); }

  size_t read(char* dst, size_t n) override {
    while (pos_ == buffer_.size() && !done_) {
      buffer_.clear();
      pos_ = 0;
      pump();
    }
    if (pos_ == buffer_.size()) return 0;
    const size_t take = std::min(n, buffer_.size() - pos_);
    std::memcpy(dst, buffer_.data() + pos_, take);
    pos_ += take;
    return take;
  }

  void close(bool) override {
    if (multi_ != nullptr) {
      curl_multi_remove_handle(multi_, easy_);
      curl_multi_cleanup(multi_);
    }
    if (easy_ != nullptr) curl_easy_cleanup(easy_);
    multi_ = nullptr;
    easy_ = nullptr;
  }

 private:
  static size_t on_data(char* data, size_t size, size_t count, void* self) {
    auto* source = static_cast<HttpSource*>(self);
    source->buffer_.append(data, size * count);
    source->received_ += static_cast<int64_t>(size * count);
    return size * count;
  }

  // Runs the transfer until bytes arrive or it ends; a failed transfer raises.
  void pump() {
    if (multi_ == nullptr) throw ShardError(url_, received_, "read after close");
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi_, &running);
    if (mc != CURLM_OK) throw ShardError(url_, received_, curl_multi_strerror(mc));
    if (running == 0) {
      int left = 0;
      CURLcode result = CURLE_OK;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg == CURLMSG_DONE) result = msg->data.result;
      }
      done_ = true;
      if (result != CURLE_OK) {
        const std::string why = error_[0] != '\0' ? error_ : curl_easy_strerror(result);
        throw ShardError(url_, received_, str_cat("HTTP transfer failed: ", why));
      }
      return;
    }
    if (buffer_.empty()) curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
  }

  CURL* easy_ = nullptr;
  CURLM* multi_ = nullptr;
  std::string buffer_;
  size_t pos_ = 0;
  int64_t received_ = 0;
  bool done_ = false;
  char error_[CURL_ERROR_SIZE] = {0};
};

}  // namespace

bool http_supported() {
  return true;
}

std::unique_ptr<ByteSource> open_http_source(const std::string& url) {
  return std::make_unique<HttpSource>(url);
}

#else

bool http_supported() {
  return false;
}

std::unique_ptr<ByteSource> open_http_source(const std::string& url) {
  throw ShardError(url, 0,
                   "this build of Ember has no HTTP client (libcurl was not found when it was "
                   "built): install libcurl's development files and rebuild, or use "
                   "'pipe:curl -s -L URL'");
}

#endif

}  // namespace ember::data
