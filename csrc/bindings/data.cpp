// ember._C._data: the byte work of ember.data (tar shards, .npy and JPEG decoding). The pipeline
// itself is Python (python/ember/data); this file converts between its objects and csrc/data.
#include <cstring>

#include "bindings/pybind_ember.h"
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

// mode "l" | "rgb" | "rgba"; as_float divides by 255 in float32 (as NumPy's astype(float32) / 255
// does); chw gives channels first (PyTorch's image layout). None for JPEGs left to PIL.
py::object decode_jpeg(const py::bytes& blob, const std::string& mode, bool as_float, bool chw) {
  const int channels = mode == "l" ? 1 : mode == "rgb" ? 3 : mode == "rgba" ? 4 : 0;
  EMBER_CHECK_T(ValueError, channels != 0, "[decode jpeg] mode must be 'l', 'rgb' or 'rgba', got '",
                mode, "'");
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
  std::vector<py::ssize_t> shape;
  if (channels == 1) {
    shape = {height, width};
  } else if (chw) {
    shape = {channels, height, width};
  } else {
    shape = {height, width, channels};
  }
  const size_t plane = static_cast<size_t>(height) * static_cast<size_t>(width);
  const bool transpose = chw && channels > 1;
  if (as_float) {
    py::array_t<float> out(shape);
    float* dst = out.mutable_data();
    py::gil_scoped_release nogil;
    for (size_t p = 0; p < plane; ++p)
      for (int c = 0; c < channels; ++c) {
        const float v = static_cast<float>(pixels[p * channels + c]) / 255.0f;
        dst[transpose ? c * plane + p : p * channels + c] = v;
      }
    return std::move(out);
  }
  py::array_t<uint8_t> out(shape);
  uint8_t* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  if (!transpose) {
    std::memcpy(dst, pixels.data(), pixels.size());
  } else {
    for (size_t p = 0; p < plane; ++p)
      for (int c = 0; c < channels; ++c) dst[c * plane + p] = pixels[p * channels + c];
  }
  return std::move(out);
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
