"""Data pipeline (ember.data): reading and decoding WebDataset tar shards, by ember.data against
the `webdataset` package, litdata (its own chunk format, converted from the same samples) and a
directory of individual files read by a map-style torch Dataset; each through its DataLoader with
0, 1 and 2 workers. Two workloads:

  small  100,000 samples of three fields: npy (float32 (16,)), cls (int), json (a small record),
         decoded to (numpy array, int, dict);
  jpeg   20,000 synthetic 128x128 RGB JPEGs (quality 90) with a cls label, decoded to float CHW
         tensors in [0, 1] (webdataset's "torchrgb").

The shards are written once by webdataset's ShardWriter (10 shards per workload), so every
library reads the same bytes: litdata stores each field's encoded bytes and decodes them with
the same decoders (its transform), the files are the tar members extracted. The data is kept in
--dir (a temporary directory by default) under a name made of its parameters and reused by later
runs. Before timing, the first samples of every library are compared with the samples read
straight from the tar files (the script fails on a difference), and every timed pass checks its
sample count and the sum of its labels.

With workers, every library sends lists of --batch samples (64; uncollated, each sample converted
as batch_size=None would) rather than one message per sample, as a training loader does; the
in-process runs yield single samples. Each pass builds a fresh loader and times it from
iter(loader): the time to the first sample and
the samples per second over the full pass (worker start-up included). The libraries alternate
pass by pass; the numbers are medians of --repeat passes. Ember is skipped with a note while
ember.data is missing; a library that fails records its error in the JSON and the run goes on.

    python benchmarks/bench_data_pipeline.py [--small-count 100000] [--jpeg-count 20000]
        [--workers 0,1,2] [--batch 64] [--repeat 3] [--libs ember,webdataset,litdata,files]
        [--workloads small,jpeg] [--dir /tmp/...] [--json benchmarks/results/data_pipeline.json]
        [--chart docs/images/data_pipeline.png] [--chart-only]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARIES = ("ember", "webdataset", "litdata", "files")
FIELDS = {"small": ("npy", "cls", "json"), "jpeg": ("jpg", "cls")}
CHECK_SAMPLES = 8  # samples compared across libraries before timing
BATCH = 64  # samples per worker message (--batch); set in main()


# ---------------------------------------------------------------------------------------------
# Decoders (the litdata and individual-files readers use these; webdataset and ember.data
# decode by their own .decode()). They give what webdataset's default decoders and its
# "torchrgb" image spec give. litdata hands over memoryviews of its chunks, hence bytes().


def decode_npy(data: bytes):
    import numpy as np

    return np.load(io.BytesIO(data), allow_pickle=False)


def decode_cls(data: bytes) -> int:
    return int(bytes(data))


def decode_json(data: bytes):
    return json.loads(bytes(data))


def decode_torchrgb(data: bytes):
    """JPEG bytes to a float32 CHW torch tensor in [0, 1]. The transpose is NumPy's: torch's
    contiguous() would run on the intra-op thread pool of the main process."""
    import numpy as np
    import torch
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        img.load()
        rgb = np.asarray(img.convert("RGB"), dtype=np.float32) / np.float32(255.0)
    return torch.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1)))


DECODERS = {"npy": decode_npy, "cls": decode_cls, "json": decode_json, "jpg": decode_torchrgb}


def decode_small(fields: dict) -> tuple:
    return tuple(DECODERS[k](fields[k]) for k in FIELDS["small"])


def decode_jpeg(fields: dict) -> tuple:
    return tuple(DECODERS[k](fields[k]) for k in FIELDS["jpeg"])


DECODE_SAMPLE = {"small": decode_small, "jpeg": decode_jpeg}


# ---------------------------------------------------------------------------------------------
# Data generation: tar shards (webdataset's ShardWriter), individual files, litdata chunks.


def tar_samples(path: str):
    """(key, {extension: bytes}) of the samples of one tar shard, in order."""
    key, fields = None, {}
    with tarfile.open(path) as tar:
        for member in tar:
            if not member.isfile():
                continue
            stem, _, ext = member.name.partition(".")
            if stem != key and fields:
                yield key, fields
                fields = {}
            key = stem
            fields[ext] = tar.extractfile(member).read()
    if fields:
        yield key, fields


def synthetic_jpeg(rng, size: int, quality: int) -> bytes:
    """A smooth, natural-ish picture: blurred colour blobs, a gradient, shapes and sensor noise."""
    import numpy as np
    from PIL import Image, ImageDraw

    coarse = rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)
    img = Image.fromarray(coarse, "RGB").resize((size, size), Image.BICUBIC)
    draw = ImageDraw.Draw(img)
    for _ in range(int(rng.integers(2, 6))):
        x0, y0 = rng.integers(0, size, 2)
        w, h = rng.integers(size // 8, size // 2, 2)
        color = tuple(int(c) for c in rng.integers(0, 256, 3))
        box = [int(x0), int(y0), int(x0 + w), int(y0 + h)]
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=color)
    pixels = np.asarray(img, dtype=np.float32)
    ramp = np.linspace(-30.0, 30.0, size, dtype=np.float32)
    pixels += ramp[None, :, None] * rng.uniform(-1, 1) + ramp[:, None, None] * rng.uniform(-1, 1)
    pixels += rng.normal(0.0, 6.0, pixels.shape).astype(np.float32)
    out = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB").save(
        out, format="JPEG", quality=quality
    )
    return out.getvalue()


def generate_samples(workload: str, args):
    """The samples to write, as ShardWriter dicts."""
    import numpy as np

    if workload == "small":
        rng = np.random.default_rng(args.seed)
        arrays = rng.standard_normal((args.small_count, args.small_dim), dtype=np.float32)
        labels = rng.integers(0, 1000, args.small_count)
        scores = rng.random(args.small_count)
        for i in range(args.small_count):
            yield {
                "__key__": f"{i:08d}",
                "npy": arrays[i],
                "cls": int(labels[i]),
                "json": {"id": i, "name": f"sample-{i}", "score": float(scores[i])},
            }
    else:
        for i in range(args.jpeg_count):
            rng = np.random.default_rng([args.seed, i])
            yield {
                "__key__": f"{i:08d}",
                "jpg": synthetic_jpeg(rng, args.jpeg_size, args.jpeg_quality),
                "cls": int(rng.integers(0, 1000)),
            }


def data_dir(workload: str, args) -> str:
    if workload == "small":
        name = f"small-n{args.small_count}-d{args.small_dim}-sh{args.shards}-seed{args.seed}"
    else:
        name = (f"jpeg-n{args.jpeg_count}-px{args.jpeg_size}-q{args.jpeg_quality}"
                f"-sh{args.shards}-seed{args.seed}")
    return os.path.join(args.dir, name)


def prepare_tar(workload: str, args) -> dict:
    """Writes the shards (unless already there) and returns the dataset's description."""
    root = data_dir(workload, args)
    meta_path = os.path.join(root, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            return json.load(f)
    import webdataset as wds

    count = args.small_count if workload == "small" else args.jpeg_count
    per_shard = -(-count // args.shards)
    os.makedirs(os.path.join(root, "tar"), exist_ok=True)
    start = time.perf_counter()
    cls_sum = 0
    pattern = os.path.join(root, "tar", "shard-%06d.tar")
    with wds.ShardWriter(pattern, maxcount=per_shard, verbose=0) as sink:
        for sample in generate_samples(workload, args):
            cls_sum += sample["cls"]
            sink.write(sample)
    shards = sorted(os.listdir(os.path.join(root, "tar")))
    meta = {
        "workload": workload,
        "count": count,
        "per_shard": per_shard,
        "cls_sum": cls_sum,
        "shards": [os.path.join(root, "tar", s) for s in shards],
        "tar_bytes": sum(os.path.getsize(os.path.join(root, "tar", s)) for s in shards),
        "generate_s": round(time.perf_counter() - start, 2),
    }
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    print(f"  wrote {count} {workload} samples in {len(shards)} shards "
          f"({meta['tar_bytes'] / 1e6:.1f} MB) in {meta['generate_s']:.1f} s: {root}")
    return meta


def prepare_files(meta: dict, root: str) -> str:
    """The tar members as individual files, one directory per shard."""
    files = os.path.join(root, "files")
    done = os.path.join(root, "files.done")
    if not os.path.exists(done):
        for shard in meta["shards"]:
            sub = os.path.join(files, os.path.basename(shard).split(".")[0])
            os.makedirs(sub, exist_ok=True)
            for key, fields in tar_samples(shard):
                for ext, data in fields.items():
                    with open(os.path.join(sub, f"{key}.{ext}"), "wb") as f:
                        f.write(data)
        open(done, "w").close()
    return files


def litdata_fields_of_shard(shard: str):
    """litdata.optimize's fn: the encoded fields of each sample of one shard, as bytes."""
    for _, fields in tar_samples(shard):
        yield {k: v for k, v in fields.items() if k != "__key__"}


def prepare_litdata(meta: dict, root: str) -> str:
    """The same samples in litdata's chunk format (chunks of one shard's sample count); the
    conversion's seconds go to meta (and the marker file, for later runs)."""
    out = os.path.join(root, "litdata")
    done = os.path.join(root, "litdata.done")
    if os.path.exists(done):
        with open(done) as f:
            text = f.read()
        meta["litdata_convert_s"] = json.loads(text)["convert_s"] if text else None
    else:
        start = time.perf_counter()
        import shutil

        import litdata

        shutil.rmtree(out, ignore_errors=True)
        litdata.optimize(
            fn=litdata_fields_of_shard,
            inputs=list(meta["shards"]),
            output_dir=out,
            chunk_size=meta["per_shard"],
            num_workers=1,
            reorder_files=False,
            verbose=False,
        )
        meta["litdata_convert_s"] = round(time.perf_counter() - start, 2)
        with open(done, "w") as f:
            json.dump({"convert_s": meta["litdata_convert_s"]}, f)
    return out


# ---------------------------------------------------------------------------------------------
# The loaders: one factory per library, returning an iterable of decoded samples.


def unbatch_one(items: list):
    """litdata's collate_fn: the one sample of a batch of one, converted as a DataLoader with
    batch_size=None converts it (NumPy arrays to tensors)."""
    from torch.utils.data import default_convert

    return default_convert(items[0])


class FilesDataset:
    """Map-style dataset over key.<ext> files (torch.utils.data.Dataset protocol)."""

    def __init__(self, root: str, fields: tuple, decode):
        self.fields, self.decode = fields, decode
        self.paths = []
        for sub in sorted(os.listdir(root)):
            keys = sorted({name.split(".")[0] for name in os.listdir(os.path.join(root, sub))})
            self.paths += [os.path.join(root, sub, key) for key in keys]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        stem, raw = self.paths[index], {}
        for ext in self.fields:
            with open(f"{stem}.{ext}", "rb") as f:
                raw[ext] = f.read()
        return self.decode(raw)


def batch_for(workers: int) -> int:
    """Samples per message from a worker: with workers, each library sends lists of BATCH
    samples (one inter-process message each, as a training loader would); in-process, single
    samples. 0 turns batching off."""
    return BATCH if workers > 0 else 0


def as_list(items):
    """A DataLoader collate_fn that keeps a batch as a list of converted samples."""
    from torch.utils.data import default_convert

    return [default_convert(x) for x in items]


def loader_factories(workload: str, meta: dict, root: str, libs, errors: dict) -> dict:
    """{library: make(num_workers) -> loader} for the libraries that are available."""
    fields = FIELDS[workload]
    spec = "torchrgb" if workload == "jpeg" else None
    urls = meta["shards"]
    makers = {}
    if "ember" in libs:
        try:
            import ember.data as edata

            def make_ember(w):
                ds = edata.WebDataset(urls, shardshuffle=False)
                ds = (ds.decode(spec) if spec else ds.decode()).to_tuple(*fields)
                if batch_for(w):
                    ds = ds.batched(batch_for(w), collation_fn=None)
                return edata.WebLoader(ds, batch_size=None, num_workers=w)

            makers["ember"] = make_ember
        except ImportError as e:
            errors["ember"] = f"skipped: ember.data is not available ({e})"
            print(f"  note: {errors['ember']}")
    if "webdataset" in libs:
        try:
            import torch.utils.data
            import webdataset as wds

            def make_wds(w):
                ds = wds.WebDataset(urls, shardshuffle=False)
                ds = (ds.decode(spec) if spec else ds.decode()).to_tuple(*fields)
                if batch_for(w):
                    ds = ds.batched(batch_for(w), collation_fn=None)
                return torch.utils.data.DataLoader(ds, batch_size=None, num_workers=w)

            makers["webdataset"] = make_wds
        except ImportError as e:
            errors["webdataset"] = f"skipped: {e}"
    if "litdata" in libs:
        try:
            import litdata

            lit_dir = prepare_litdata(meta, root)
            meta["litdata_format"] = (
                "litdata.optimize of each sample's encoded fields as bytes, chunk_size "
                f"{meta['per_shard']}; decoded by StreamingDataset(transform=...) with the "
                "decoders of the individual-files reader; StreamingDataLoader batch_size=1 "
                "with a collate_fn that unwraps the sample"
            )

            def make_litdata(w):
                ds = litdata.StreamingDataset(
                    lit_dir, shuffle=False, drop_last=False, transform=DECODE_SAMPLE[workload]
                )
                # StreamingDataLoader asserts a batch_size: batches of one, unwrapped
                if batch_for(w):
                    return litdata.StreamingDataLoader(
                        ds, batch_size=batch_for(w), num_workers=w, collate_fn=as_list)
                return litdata.StreamingDataLoader(
                    ds, batch_size=1, num_workers=w, collate_fn=unbatch_one
                )

            makers["litdata"] = make_litdata
        except Exception as e:  # an install or conversion problem: recorded, the run goes on
            errors["litdata"] = f"failed to prepare: {type(e).__name__}: {e}"
            print(f"  note: litdata {errors['litdata']}")
    if "files" in libs:
        import torch.utils.data

        files_dir = prepare_files(meta, root)

        def make_files(w):
            ds = FilesDataset(files_dir, fields, DECODE_SAMPLE[workload])
            if batch_for(w):
                return torch.utils.data.DataLoader(ds, batch_size=batch_for(w), num_workers=w,
                                                   collate_fn=as_list)
            return torch.utils.data.DataLoader(ds, batch_size=None, num_workers=w)

        makers["files"] = make_files
    return makers


# ---------------------------------------------------------------------------------------------
# Checks and timing.


def as_plain(value):
    """A sample's field as NumPy / Python values, whatever tensor type the loader gave."""
    import numpy as np

    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_plain(v) for v in value]
    if isinstance(value, (str, bytes, int, float)):
        return value
    if hasattr(value, "numpy"):  # torch.Tensor, ember.Tensor
        value = value.numpy()
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


def same(a, b, atol: float) -> str:
    """'' when equal (floating-point arrays within atol), else what differs."""
    import numpy as np

    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"shape {a.shape} != {b.shape}"
        if a.dtype != b.dtype:
            return f"dtype {a.dtype} != {b.dtype}"
        diff = np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0)
        return "" if diff <= atol else f"max abs difference {diff:g}"
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((d for d in (same(x, y, atol) for x, y in zip(a, b)) if d), "")
    return "" if a == b else f"{a!r} != {b!r}"


def check_samples(workload: str, meta: dict, makers: dict, errors: dict) -> dict:
    """Compares the first samples of each library (0 workers) with the tar's own."""
    decode = DECODE_SAMPLE[workload]
    expected = []
    for _, fields in tar_samples(meta["shards"][0]):
        expected.append(as_plain(list(decode(fields))))
        if len(expected) == CHECK_SAMPLES:
            break
    atol = 1e-6 if workload == "jpeg" else 0.0
    checked = {}
    for lib, make in list(makers.items()):
        try:
            got = []
            for sample in make(0):
                got.append(as_plain(list(sample)))
                if len(got) == len(expected):
                    break
        except Exception as e:
            errors[lib] = f"failed reading: {type(e).__name__}: {e}"
            print(f"  note: {lib} {errors[lib]}")
            traceback.print_exc()
            del makers[lib]
            continue
        for i, (g, e) in enumerate(zip(got, expected)):
            diff = same(g, e, atol)
            if diff:
                raise SystemExit(f"{workload}: {lib} sample {i} differs from the tar's: {diff}\n"
                                 f"  {lib}: {g!r}\n  tar: {e!r}")
        if len(got) != len(expected):
            raise SystemExit(f"{workload}: {lib} gave {len(got)} samples, not {len(expected)}")
        checked[lib] = len(got)
    return checked


def one_pass(make, workers: int, meta: dict, lib: str, label: int) -> tuple[float, float]:
    """(seconds to the first sample, samples per second) of a full pass of a fresh loader;
    `label` is the index of the cls field in a sample."""
    loader = make(workers)
    start = time.perf_counter()
    it = iter(loader)
    first = next(it)
    first_s = time.perf_counter() - start
    batched = batch_for(workers) > 0
    count, cls_sum = 0, 0
    for item in [first] if not batched else first:
        count += 1
        cls_sum += int(item[label])
    for sample in it:
        for item in ([sample] if not batched else sample):
            count += 1
            cls_sum += int(item[label])
    total_s = time.perf_counter() - start
    del it, loader
    if (count, cls_sum) != (meta["count"], meta["cls_sum"]):
        raise SystemExit(f"{lib} with {workers} workers: {count} samples with label sum "
                         f"{cls_sum}, expected {meta['count']} and {meta['cls_sum']}")
    return first_s, count / total_s


def versions() -> dict:
    from importlib import metadata

    out = {}
    for dist in ("torch", "webdataset", "litdata", "numpy", "pillow"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    try:
        import ember

        out["ember"] = ember.__version__
    except ImportError:
        out["ember"] = None
    return out


def environment() -> dict:
    import platform

    try:
        sys.path.insert(0, HERE)
        from common import environment as common_environment

        info = common_environment()
    except Exception:  # Ember not importable: the machine only
        info = {"python": platform.python_version(), "machine": platform.machine(),
                "cpus": os.cpu_count()}
        try:
            with open("/proc/cpuinfo") as f:
                fields = {}
                for line in f:
                    if not line.strip():
                        break  # the first CPU's block
                    key, _, value = line.partition(":")
                    fields[key.strip()] = value.strip()
            info["cpu"] = fields.get("model name", "")
            info["cpu_family_model"] = f"{fields.get('cpu family')}/{fields.get('model')}"
        except OSError:
            pass
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    return info


def run_workload(workload: str, args) -> dict:
    print(f"\n== {workload} ==")
    meta = prepare_tar(workload, args)
    root = data_dir(workload, args)
    errors: dict = {}
    makers = loader_factories(workload, meta, root, args.libs, errors)
    checked = check_samples(workload, meta, makers, errors)
    label = FIELDS[workload].index("cls")
    times: dict = {(lib, w): ([], []) for lib in makers for w in args.workers}
    for w in args.workers:
        for _ in range(args.repeat):
            for lib in list(makers):
                if lib in errors:
                    continue
                try:
                    first_s, rate = one_pass(makers[lib], w, meta, lib, label)
                except SystemExit:
                    raise
                except Exception as e:  # recorded; the other libraries go on
                    errors[lib] = f"failed with {w} workers: {type(e).__name__}: {e}"
                    print(f"  note: {lib} {errors[lib]}")
                    traceback.print_exc()
                    continue
                times[(lib, w)][0].append(first_s)
                times[(lib, w)][1].append(rate)
    rows = []
    for (lib, w), (firsts, rates) in times.items():
        if rates:
            rows.append({
                "library": lib,
                "workers": w,
                "samples_per_s": statistics.median(rates),
                "first_sample_s": statistics.median(firsts),
                "samples_per_s_all": rates,
                "first_sample_s_all": firsts,
            })
    ratios = {}
    rate = {(r["library"], r["workers"]): r["samples_per_s"] for r in rows}
    for ref in ("webdataset", "litdata"):
        for w in args.workers:
            if ("ember", w) in rate and (ref, w) in rate:
                ratios[f"ember/{ref} {w} workers"] = rate[("ember", w)] / rate[(ref, w)]
    return {"data": meta, "checked_samples": checked, "errors": errors, "results": rows,
            "ratios": ratios}


def print_table(workload: str, out: dict, workers) -> None:
    meta = out["data"]
    print(f"\n{workload}: {meta['count']} samples in {len(meta['shards'])} shards, "
          f"{meta['tar_bytes'] / 1e6:.1f} MB; samples/s (time to first sample)")
    cells = {(r["library"], r["workers"]): r for r in out["results"]}
    print(f"  {'library':<12}" + "".join(f"{f'{w} workers':>24}" for w in workers))
    for lib in LIBRARIES:
        if not any((lib, w) in cells for w in workers):
            if lib in out["errors"]:
                print(f"  {lib:<12}  {out['errors'][lib]}")
            continue
        line = f"  {lib:<12}"
        for w in workers:
            r = cells.get((lib, w))
            line += (f"{r['samples_per_s']:>12,.0f} ({r['first_sample_s'] * 1e3:6.1f} ms)"
                     if r else f"{'-':>24}")
        print(line)
        if lib in out["errors"]:
            print(f"  {'':<12}  {out['errors'][lib]}")
    for name, value in out["ratios"].items():
        print(f"  samples/s {name}: {value:.2f}")


def chart(json_path: str, path: str) -> None:
    """Bars of samples/s per library and worker count, one panel per workload."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no chart written ({path})")
        return
    with open(json_path) as f:
        data = json.load(f)
    workloads = [w for w in ("small", "jpeg") if w in data["workloads"]]
    fig, axes = plt.subplots(1, len(workloads), figsize=(5.5 * len(workloads), 4), squeeze=False)
    colors = {"ember": "#e76f51", "webdataset": "#2a9d8f", "litdata": "#264653",
              "files": "#e9c46a"}
    for ax, workload in zip(axes[0], workloads):
        rows = data["workloads"][workload]["results"]
        workers = sorted({r["workers"] for r in rows})
        libs = [lib for lib in LIBRARIES if any(r["library"] == lib for r in rows)]
        width = 0.8 / max(len(libs), 1)
        for i, lib in enumerate(libs):
            rate = {r["workers"]: r["samples_per_s"] for r in rows if r["library"] == lib}
            xs = [j + (i - (len(libs) - 1) / 2) * width for j in range(len(workers))]
            ys = [rate.get(w, 0.0) for w in workers]
            ax.bar(xs, ys, width, label=lib, color=colors.get(lib))
            for x, y in zip(xs, ys):
                if y:
                    ax.text(x, y, f"{y / 1e3:.1f}k", ha="center", va="bottom", fontsize=7)
        meta = data["workloads"][workload]["data"]
        ax.set_title(f"{workload}: {meta['count']:,} samples, {len(meta['shards'])} shards")
        ax.set_xticks(range(len(workers)))
        ax.set_xticklabels([f"{w} workers" for w in workers])
        ax.set_ylabel("samples / s (higher is better)")
        ax.legend(fontsize=8)
    cpu = data.get("environment", {}).get("cpu", "")
    fig.suptitle(f"Tar-shard data pipelines, {cpu}".rstrip(", "), fontsize=9)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


def csv(kind):
    return lambda text: [kind(x) for x in text.split(",") if x]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--small-count", type=int, default=100_000)
    p.add_argument("--small-dim", type=int, default=16)
    p.add_argument("--jpeg-count", type=int, default=20_000)
    p.add_argument("--jpeg-size", type=int, default=128)
    p.add_argument("--jpeg-quality", type=int, default=90)
    p.add_argument("--shards", type=int, default=10, help="tar shards (and litdata chunks)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=64,
                   help="with workers, samples per message (lists, no collation); 0: single")
    p.add_argument("--workers", type=csv(int), default=[0, 1, 2])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--libs", type=csv(str), default=list(LIBRARIES))
    p.add_argument("--workloads", type=csv(str), default=["small", "jpeg"])
    p.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "ember_bench_data"),
                   help="where the generated data is kept (reused when present)")
    p.add_argument("--json", default=os.path.join(HERE, "results", "data_pipeline.json"))
    p.add_argument("--chart", default=None, help="PNG path: a chart of the --json results")
    p.add_argument("--chart-only", action="store_true", help="only draw --chart from --json")
    args = p.parse_args()
    global BATCH
    BATCH = args.batch
    for name in args.libs:
        if name not in LIBRARIES:
            p.error(f"unknown library {name!r} (choose from {', '.join(LIBRARIES)})")
    for name in args.workloads:
        if name not in FIELDS:
            p.error(f"unknown workload {name!r} (choose from small, jpeg)")
    if args.chart_only:
        if not args.chart:
            p.error("--chart-only needs --chart PATH")
        chart(args.json, args.chart)
        return

    os.makedirs(args.dir, exist_ok=True)
    report = {
        "environment": environment(),
        "versions": versions(),
        "params": {k: v for k, v in vars(args).items() if k not in ("json", "chart")},
        "workloads": {},
    }
    env = report["environment"]
    print(f"{env.get('cpu', '?')}, {env.get('cpus')} cpus; versions {report['versions']}")
    for workload in args.workloads:
        report["workloads"][workload] = run_workload(workload, args)
    for workload, out in report["workloads"].items():
        print_table(workload, out, args.workers)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
        print(f"results: {args.json}")
        if args.chart:
            chart(args.json, args.chart)


if __name__ == "__main__":
    main()
