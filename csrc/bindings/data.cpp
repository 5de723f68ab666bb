// ember._C._data: the byte work of ember.data (tar shards, .npy and JPEG decoding). The pipeline
// itself is Python (python/ember/data); this file converts between its objects and csrc/data.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include "bindings/pybind_ember.h"
#include "core/parallel.h"
#include "data/byte_source.h"
#include "data/decode.h"
#include "data/tar_reader.h"
#include "data/tar_writer.h"

namespace ember {

namespace {

using data::Sample;
using data::SampleReader;
using data::ShardError;

py::handle& shard_error_class() {
  static py::handle cls;
  return cls;
}

// A sample as WebDataset gives it: {"__key__": str, "__url__": str, extension: bytes, ...}, and
// "__local_path__" for shards read from local files.
py::dict sample_dict(const Sample& sample, const py::object& url, const py::object& local_path) {
  py::dict d;
  d["__key__"] = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
      sample.key.data(), static_cast<Py_ssize_t>(sample.key.size()), "surrogateescape"));
  d["__url__"] = url;
  if (!local_path.is_none()) d["__local_path__"] = local_path;
  for (const auto& [extension, bytes] : sample.fields) {
    py::object value = py::reinterpret_steal<py::object>(
        PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size())));
    if (!value) throw py::error_already_set();
    d[py::str(extension)] = value;
  }
  return d;
}

class ShardReader {
 public:
  explicit ShardReader(const std::string& url) : url_object_(py::str(url)) {
    if (url.rfind("pipe:", 0) != 0 && url.rfind("http://", 0) != 0 &&
        url.rfind("https://", 0) != 0) {
      const size_t skip = url.rfind("file://", 0) == 0 ? 7 : url.rfind("file:", 0) == 0 ? 5 : 0;
      local_path_ = py::str(url.substr(skip));
    }
    py::gil_scoped_release nogil;  // a pipe: command starts, an HTTP transfer connects
    reader_ = std::make_unique<SampleReader>(data::open_source(url));
  }

  // Up to `max_samples` samples. Bytes are read with the GIL released. A failure after some
  // samples were read returns those first and raises on the next call, so an error handler skips
  // only what is bad.
  py::list read(int64_t max_samples) {
    if (deferred_) std::rethrow_exception(std::exchange(deferred_, nullptr));
    std::vector<Sample> samples;
    {
      py::gil_scoped_release nogil;
      samples.reserve(
          static_cast<size_t>(std::min<int64_t>(std::max<int64_t>(max_samples, 0), 4096)));
      try {
        Sample sample;
        while (static_cast<int64_t>(samples.size()) < max_samples && reader().next(sample, true))
          samples.push_back(std::move(sample));
      } catch (const ShardError&) {
        if (samples.empty()) throw;
        deferred_ = std::current_exception();
      }
    }
    py::list out(samples.size());
    for (size_t i = 0; i < samples.size(); ++i)
      out[i] = sample_dict(samples[i], url_object_, local_path_);
    return out;
  }

  int64_t skip(int64_t n) {
    py::gil_scoped_release nogil;
    return reader().skip(n);
  }

  void seek(int64_t offset) {
    py::gil_scoped_release nogil;
    reader().seek(offset);
  }

  py::dict read_at(int64_t offset, int64_t length) {
    Sample sample;
    {
      py::gil_scoped_release nogil;
      sample = reader().read_at(offset, length);
    }
    return sample_dict(sample, url_object_, local_path_);
  }

  // (keys, starts, lengths) of the samples from here to the end: an index.
  py::tuple scan() {
    std::vector<Sample> samples;
    {
      py::gil_scoped_release nogil;
      Sample sample;
      while (reader().next(sample, false)) {
        sample.fields.clear();
        samples.push_back(std::move(sample));
      }
    }
    py::list keys(samples.size()), starts(samples.size()), lengths(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) {
      keys[i] = py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(samples[i].key.data(),
                               static_cast<Py_ssize_t>(samples[i].key.size()), "surrogateescape"));
      starts[i] = py::int_(samples[i].start);
      lengths[i] = py::int_(samples[i].end - samples[i].start);
    }
    return py::make_tuple(keys, starts, lengths);
  }

  int64_t offset() const { return reader_ ? reader_->offset() : -1; }
  bool seekable() const { return reader_ && reader_->seekable(); }

  void close() {
    if (!reader_) return;
    std::unique_ptr<SampleReader> reader = std::move(reader_);
    py::gil_scoped_release nogil;
    reader->close();
  }

 private:
  SampleReader& reader() {
    if (!reader_) throw ShardError(py::cast<std::string>(url_object_), 0, "the reader is closed");
    return *reader_;
  }
  py::object url_object_;
  py::object local_path_ = py::none();
  std::unique_ptr<SampleReader> reader_;
  std::exception_ptr deferred_;
};

py::object decode_npy(const py::bytes& blob) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(blob.ptr(), &data, &size);
  data::NpyHeader header;
  if (!data::parse_npy_header(data, static_cast<size_t>(size), header)) return py::none();
  py::dtype dtype(header.descr);
  std::vector<py::ssize_t> shape(header.shape.begin(), header.shape.end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = dtype.itemsize();
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t i = header.fortran_order ? k : shape.size() - 1 - k;
    strides[i] = stride;
    stride *= std::max<py::ssize_t>(shape[i], 1);
  }
  py::array array(dtype, shape, strides);
  if (header.data_bytes)
    std::memcpy(array.mutable_data(), data + header.data_offset, header.data_bytes);
  return std::move(array);
}

int jpeg_channels(const std::string& mode) {
  const int channels = mode == "l" ? 1 : mode == "rgb" ? 3 : mode == "rgba" ? 4 : 0;
  EMBER_CHECK_T(ValueError, channels != 0, "[decode jpeg] mode must be 'l', 'rgb' or 'rgba', got '",
                mode, "'");
  return channels;
}

// Interleaved pixels (HWC, as libjpeg gives them) into the output layout: channels first when
// `transpose`, and v / 255 in float32 when `as_float` (NumPy's astype(float32) / 255: a table of
// the 256 quotients, so no division per element).
void convert_pixels(const uint8_t* src, size_t plane, int channels, bool as_float, bool transpose,
                    void* out) {
  static const std::array<float, 256> scaled = [] {
    std::array<float, 256> table{};
    for (int v = 0; v < 256; ++v) table[v] = static_cast<float>(v) / 255.0f;
    return table;
  }();
  const size_t count = plane * static_cast<size_t>(channels);
  if (!transpose) {
    if (!as_float) {
      std::memcpy(out, src, count);
      return;
    }
    float* dst = static_cast<float*>(out);
    for (size_t i = 0; i < count; ++i) dst[i] = scaled[src[i]];
    return;
  }
  if (as_float && channels == 3) {
    float* red = static_cast<float*>(out);
    float* green = red + plane;
    float* blue = green + plane;
    for (size_t p = 0; p < plane; ++p, src += 3) {
      red[p] = scaled[src[0]];
      green[p] = scaled[src[1]];
      blue[p] = scaled[src[2]];
    }
    return;
  }
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < channels; ++c) {
      const uint8_t v = src[p * channels + c];
      if (as_float) {
        static_cast<float*>(out)[c * plane + p] = scaled[v];
      } else {
        static_cast<uint8_t*>(out)[c * plane + p] = v;
      }
    }
}

std::vector<py::ssize_t> image_shape(int height, int width, int channels, bool chw) {
  if (channels == 1) return {height, width};
  if (chw) return {channels, height, width};
  return {height, width, channels};
}

// mode "l" | "rgb" | "rgba"; as_float divides by 255 in float32 (as NumPy's astype(float32) / 255
// does); chw gives channels first (PyTorch's image layout). None for JPEGs left to PIL.
py::object decode_jpeg(const py::bytes& blob, const std::string& mode, bool as_float, bool chw) {
  const int channels = jpeg_channels(mode);
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(blob.ptr(), &data, &size);
  std::vector<uint8_t> pixels;
  int height = 0, width = 0;
  bool decoded = false;
  {
    py::gil_scoped_release nogil;
    decoded = data::decode_jpeg(reinterpret_cast<const uint8_t*>(data), static_cast<size_t>(size),
                                channels, [&](int h, int w) {
                                  height = h;
                                  width = w;
                                  pixels.resize(static_cast<size_t>(h) * static_cast<size_t>(w) *
                                                static_cast<size_t>(channels));
                                  return pixels.data();
                                });
  }
  if (!decoded) return py::none();
  const std::vector<py::ssize_t> shape = image_shape(height, width, channels, chw);
  const size_t plane = static_cast<size_t>(height) * static_cast<size_t>(width);
  const bool transpose = chw && channels > 1;
  py::array out = as_float ? py::array(py::dtype::of<float>(), shape)
                           : py::array(py::dtype::of<uint8_t>(), shape);
  void* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  convert_pixels(pixels.data(), plane, channels, as_float, transpose, dst);
  return std::move(out);
}

// decode_jpeg over a list of JPEGs at once, spread over Ember's threads (ember.data's decode
// stage reads a few samples ahead for it). An entry is None where decode_jpeg would return None
// or raise: the caller decodes that one alone, which gives the same result or error.
py::list decode_jpegs(const py::list& blobs, const std::string& mode, bool as_float, bool chw) {
  const int channels = jpeg_channels(mode);
  const size_t count = blobs.size();
  struct Job {
    const uint8_t* data = nullptr;
    size_t size = 0;
    void* out = nullptr;  // malloc'd; owned by the array made of it
    int height = 0, width = 0;
  };
  std::vector<Job> jobs(count);
  for (size_t i = 0; i < count; ++i) {
    PyObject* item = PyList_GET_ITEM(blobs.ptr(), static_cast<Py_ssize_t>(i));
    EMBER_CHECK_T(TypeError, PyBytes_Check(item), "[decode jpegs] entry ", i, " is ",
                  Py_TYPE(item)->tp_name, ", not bytes");
    jobs[i].data = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(item));
    jobs[i].size = static_cast<size_t>(PyBytes_GET_SIZE(item));
  }
  const size_t element = as_float ? sizeof(float) : 1;
  {
    py::gil_scoped_release nogil;
    parallel_for(0, static_cast<int64_t>(count), 1, [&](int64_t begin, int64_t end) {
      std::vector<uint8_t> pixels;
      for (int64_t i = begin; i < end; ++i) {
        Job& job = jobs[static_cast<size_t>(i)];
        try {
          const bool decoded =
              job.size > 0 && data::decode_jpeg(job.data, job.size, channels, [&](int h, int w) {
                job.height = h;
                job.width = w;
                pixels.resize(static_cast<size_t>(h) * static_cast<size_t>(w) *
                              static_cast<size_t>(channels));
                return pixels.data();
              });
          if (!decoded) continue;
          const size_t plane = static_cast<size_t>(job.height) * static_cast<size_t>(job.width);
          void* out = std::malloc(std::max<size_t>(plane * channels * element, 1));
          if (out == nullptr) continue;
          convert_pixels(pixels.data(), plane, channels, as_float, chw && channels > 1, out);
          job.out = out;
        } catch (...) {  // decoded again alone, which raises it
        }
      }
    });
  }
  py::list result(count);
  for (size_t i = 0; i < count; ++i) {
    Job& job = jobs[i];
    if (job.out == nullptr) {
      result[i] = py::none();
      continue;
    }
    py::capsule owner(job.out, [](void* p) { std::free(p); });
    job.out = nullptr;
    const std::vector<py::ssize_t> shape = image_shape(job.height, job.width, channels, chw);
    result[i] = as_float ? py::array(py::dtype::of<float>(), shape, {},
                                     static_cast<float*>(owner.get_pointer()), owner)
                         : py::array(py::dtype::of<uint8_t>(), shape, {},
                                     static_cast<uint8_t*>(owner.get_pointer()), owner);
  }
  return result;
}

}  // namespace

void init_data(py::module_& m) {
  py::module_ d = m.def_submodule("_data", "tar shards and field decoders behind ember.data");
  shard_error_class() = [&] {
    // An OSError (what a missing or unreadable file raises in the webdataset package) and a
    // tarfile.ReadError (what it raises for a damaged archive), so existing handlers catch it.
    py::object read_error = py::module_::import("tarfile").attr("ReadError");
    py::tuple bases = py::make_tuple(py::handle(PyExc_OSError), read_error);
    PyObject* cls = PyErr_NewException("ember.data.ShardError", bases.ptr(), nullptr);
    if (cls == nullptr) throw py::error_already_set();
    d.attr("ShardError") = py::handle(cls);
    return py::handle(cls);
  }();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ShardError& e) {
      py::object error = shard_error_class()(e.what());
      error.attr("url") = py::str(e.url());
      error.attr("offset") = py::int_(e.offset());
      PyErr_SetObject(shard_error_class().ptr(), error.ptr());
    }
  });

  py::class_<ShardReader>(d, "ShardReader")
      .def(py::init<const std::string&>(), py::arg("url"))
      .def("read", &ShardReader::read, py::arg("max_samples") = 1)
      .def("skip", &ShardReader::skip, py::arg("n"))
      .def("seek", &ShardReader::seek, py::arg("offset"))
      .def("read_at", &ShardReader::read_at, py::arg("offset"), py::arg("length"))
      .def("scan", &ShardReader::scan)
      .def_property_readonly("offset", &ShardReader::offset)
      .def_property_readonly("seekable", &ShardReader::seekable)
      .def("close", &ShardReader::close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](ShardReader& self, const py::args&) { self.close(); });

  d.def("decode_npy", &decode_npy, py::arg("data"));
  d.def("decode_jpeg", &decode_jpeg, py::arg("data"), py::arg("mode") = "rgb",
        py::arg("as_float") = false, py::arg("chw") = false);
  d.def("decode_jpegs", &decode_jpegs, py::arg("data"), py::arg("mode") = "rgb",
        py::arg("as_float") = false, py::arg("chw") = false);
  d.def(
      "tar_header",
      [](const std::string& name, int64_t size, int64_t mtime, int mode, const std::string& user,
         const std::string& group) {
        return py::bytes(data::tar_file_header(name, size, mtime, mode, user, group));
      },
      py::arg("name"), py::arg("size"), py::arg("mtime") = 0, py::arg("mode") = 0444,
      py::arg("user") = "", py::arg("group") = "");
  d.def("http_supported", &data::http_supported);
}

}  // namespace ember
