"""salvo: batched Vulkan compute with CUDA-like streams, events and graphs.

The classes here are those of the C extension salvo._salvo (one per salvo
object, each call one salvo call) with a few Python conveniences: enums,
context managers, NumPy round trips and `with stream.capture() as graph:`.

    import numpy as np, salvo

    with salvo.Device() as dev:
        x = dev.buffer_from(np.arange(n, dtype=np.float32))
        y = dev.buffer_from(np.ones(n, dtype=np.float32))
        saxpy = dev.kernel(glsl=SAXPY_GLSL, spec={0: 256})
        s = dev.stream()
        s.launch(saxpy, (n + 255) // 256, [x, y], (np.float32(2.0), np.uint32(n)))
        s.synchronize()
        print(y.to_numpy(np.float32))

Failures raise salvo.Error (.status, a Status; .message, salvo_last_error()).
What the library logs (validation messages included) goes to the logger
"salvo" of Python's logging; each record carries salvo_file, salvo_line
and salvo_level.
"""

import contextlib
import enum
import logging
from collections import namedtuple

from . import _salvo

__all__ = [
    "Access", "AddressMode", "BindingKind", "Buffer", "Device", "DeviceFlag", "DeviceType",
    "Domain", "Error", "Event", "Filter", "Format", "Gate", "Graph", "Image", "ImageType",
    "ImageUsage", "Kernel", "LogLevel", "MAX_BINDINGS", "Region", "Sampler", "Status", "Stream",
    "enumerate_devices", "format_name", "format_texel_size", "logger", "status_string",
]

_constants = _salvo._constants()

Status = enum.IntEnum("Status", _constants["Status"], module=__name__)
Status.__doc__ = "salvo_status: 0 success, positive not an error, negative an error."
Domain = enum.IntEnum("Domain", _constants["Domain"], module=__name__)
DeviceType = enum.IntEnum("DeviceType", _constants["DeviceType"], module=__name__)
LogLevel = enum.IntEnum("LogLevel", _constants["LogLevel"], module=__name__)
DeviceFlag = enum.IntFlag("DeviceFlag", _constants["DeviceFlag"], module=__name__)
ImageType = enum.IntEnum("ImageType", _constants["ImageType"], module=__name__)
ImageUsage = enum.IntFlag("ImageUsage", _constants["ImageUsage"], module=__name__)
Format = enum.IntEnum("Format", _constants["Format"], module=__name__)
Filter = enum.IntEnum("Filter", _constants["Filter"], module=__name__)
AddressMode = enum.IntEnum("AddressMode", _constants["AddressMode"], module=__name__)
Access = enum.IntFlag("Access", _constants["Access"], module=__name__)
BindingKind = enum.IntEnum("BindingKind", _constants["BindingKind"], module=__name__)
MAX_BINDINGS = _constants["Limits"]["MAX_BINDINGS"]
__version__ = "{VERSION_MAJOR}.{VERSION_MINOR}.{VERSION_PATCH}".format(**_constants["Limits"])

#: A box of texels (salvo_image_region): zero extents reach to the end.
Region = namedtuple("Region", "x y z width height depth layer layers", defaults=(0,) * 8)


def status_string(status):
    """The name of a status, "SALVO_ERROR_DEVICE_LOST" say."""
    return _salvo.status_string(int(status))


def format_name(fmt):
    """"RGBA8_UNORM", or "unknown"."""
    return _salvo._format_info(int(fmt))[0]


def format_texel_size(fmt):
    """Bytes of one texel of fmt, 0 for an unknown one."""
    return _salvo._format_info(int(fmt))[1]


class Error(Exception):
    """A salvo call failed: .status is its Status, .message salvo_last_error()
    (file:line: reason; for a failed batch, the kernels it held)."""

    def __init__(self, status, message):
        try:
            status = Status(status)
        except ValueError:
            pass  # a code newer than this package: still an error
        super().__init__(status, message)
        self.status = status
        self.message = message

    def __str__(self):
        return f"{status_string(self.status)}: {self.message}"


# ------------------------------------------------------------------ log

logger = logging.getLogger("salvo")

_LEVELS = {
    LogLevel.DEBUG: logging.DEBUG,
    LogLevel.INFO: logging.INFO,
    LogLevel.WARNING: logging.WARNING,
    LogLevel.ERROR: logging.ERROR,
}


def _deliver(level, file, line, message, raised):
    """The library's log callback, as the module hands it over (after the
    salvo call that logged returned): one record on the logger "salvo".
    The failure a salvo.Error is being raised for (raised) goes at DEBUG:
    the exception carries it."""
    py_level = logging.DEBUG if raised else _LEVELS.get(level, logging.ERROR)
    if not logger.isEnabledFor(py_level):
        return
    where = f"{file}:{line}: " if line else (f"{file}: " if file else "")
    logger.log(py_level, "%s%s", where, message,
               extra={"salvo_level": LogLevel(level) if level in _LEVELS else level,
                      "salvo_file": file, "salvo_line": line})


def _numpy():
    import numpy  # only the NumPy conveniences need it

    return numpy


# ------------------------------------------------------------------ objects

class _Closing:
    """Objects that close at the end of a with block."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Device(_Closing, _salvo.Device):
    """A salvo device (salvo_device_create); closing it waits for its work
    and closes every object made from it.

    Device(name=None, batch_size=0, fence_timeout_s=0.0, flags=0,
           validation=None, pipeline_cache_path=None, fault=None,
           release_max_count=0, release_max_bytes=0)

    validation: None ($SALVO_VALIDATION decides), True or 1 (the layer),
    2 (synchronization validation too).
    """

    __slots__ = ()

    def buffer(self, size, domain=Domain.DEVICE):
        """A Buffer of size bytes in domain (contents undefined)."""
        return Buffer(self, size, domain)

    def buffer_from(self, data, domain=Domain.DEVICE):
        """A Buffer holding a copy of data (bytes, a C-contiguous array)."""
        view = memoryview(data)
        buf = Buffer(self, view.nbytes, domain)
        buf.write(view)
        return buf

    def kernel(self, spirv=None, *, glsl=None, entry=None, name=None, spec=None):
        """A Kernel from SPIR-V bytes or GLSL source; spec: {id: value}."""
        return Kernel(self, spirv, glsl, entry, name, spec)

    def stream(self, batch_size=0, first_batch=0, priority=0):
        return Stream(self, batch_size, first_batch, priority)

    def event(self, timing=True):
        return Event(self, timing=timing)

    def gate(self):
        return Gate(self)

    def image(self, type, format, width, height=0, depth=0, layers=0, usage=0):
        return Image(self, type, format, width, height, depth, layers, usage)

    def sampler(self, filter=Filter.NEAREST, address=None, unnormalized=False):
        return Sampler(self, filter, address, unnormalized)

    @property
    def name(self):
        return self.info["name"]

    def __repr__(self):
        if self.closed:
            return "<salvo.Device closed>"
        return f"<salvo.Device {self.info['name']!r}>"


class Buffer(_Closing, _salvo.Buffer):
    """A salvo buffer: Buffer(device, size, domain=Domain.DEVICE).

    HOST and SHARED buffers are mapped: memoryview(buf) and buf.view(dtype)
    see their memory with no copy (synchronize the streams that write it
    before reading). Any buffer copies to and from NumPy arrays with
    write(array) and to_numpy(dtype).
    """

    __slots__ = ()

    def to_numpy(self, dtype="u1", count=None, offset=0):
        """A new array of count elements of dtype read from offset (to the end)."""
        np = _numpy()
        dtype = np.dtype(dtype)
        if count is None:
            count = (self.size - offset) // dtype.itemsize
        out = np.empty(count, dtype=dtype)
        self.read_into(out, offset)
        return out

    def view(self, dtype="u1", count=-1, offset=0):
        """A NumPy array over the buffer's mapping (HOST and SHARED buffers):
        no copy; the array keeps the buffer alive."""
        return _numpy().frombuffer(self, dtype=dtype, count=count, offset=offset)

    def __len__(self):
        return self.size

    def __repr__(self):
        state = " closed" if self.closed else ""
        return f"<salvo.Buffer {self.size} bytes {Domain(self.domain).name}{state}>"


class Kernel(_Closing, _salvo.Kernel):
    """A compute kernel: Kernel(device, spirv=None, glsl=None, entry=None,
    name=None, spec=None). info holds what salvo reflected."""

    __slots__ = ()

    @property
    def name(self):
        return self.info["name"]

    @property
    def bindings(self):
        """The declared bindings (dicts: binding, access, uniform, count,
        kind, image_type, image_format), ascending: the order in which
        launch takes a sequence of bindings."""
        return self.info["bindings"]

    @property
    def push_constant_size(self):
        return self.info["push_constant_size"]

    @property
    def local_size(self):
        return self.info["local_size"]

    def __repr__(self):
        return f"<salvo.Kernel {self.info['name']!r}>"


class Stream(_Closing, _salvo.Stream):
    """An in-order queue of launches: Stream(device, batch_size=0,
    first_batch=0, priority=0)."""

    __slots__ = ()

    @contextlib.contextmanager
    def capture(self):
        """Capture the block's launches, copies and fills into a Graph:

            with stream.capture() as graph:
                stream.launch(...)
            graph.launch(stream)

        The graph is made when the block ends; an exception in the block
        abandons the capture (no graph) and propagates."""
        graph = Graph(self.device)
        self.begin_capture()
        try:
            yield graph
        except BaseException:
            with contextlib.suppress(Error):
                self.end_capture().close()
            raise
        self.end_capture(into=graph)

    def launch_graph(self, graph):
        """Replay graph on this stream (salvo_graph_launch)."""
        graph.launch(self)

    def __repr__(self):
        return f"<salvo.Stream{' closed' if self.closed else ''}>"


class Event(_Closing, _salvo.Event):
    """A marker in a stream: Event(device, timing=True). timing=False
    (SALVO_EVENT_DISABLE_TIMING): a point to wait for only; records write
    no timestamp and elapsed_ns refuses it."""

    __slots__ = ()


class Gate(_Closing, _salvo.Gate):
    """A host gate: Gate(device). Streams wait for a value
    (Stream.wait_gate); raise_to(value) releases them."""

    __slots__ = ()


class Graph(_Closing, _salvo.Graph):
    """Work captured once and replayed (Stream.capture, Stream.end_capture)."""

    __slots__ = ()

    def __repr__(self):
        return f"<salvo.Graph {self.node_count} nodes{' closed' if self.closed else ''}>"


# Component type of each format's name suffix, by component bits.
_KINDS = {"UNORM": "u", "UINT": "u", "SNORM": "i", "SINT": "i", "FLOAT": "f"}


def format_dtype(fmt):
    """(NumPy dtype of one component, components per texel) of a Format."""
    np = _numpy()
    name = format_name(fmt)
    channels, _, kind = name.partition("_")
    comps = sum(1 for c in channels if c.isalpha())
    bits = int("".join(c for c in channels if c.isdigit()))
    return np.dtype(f"{_KINDS[kind]}{bits // 8}"), comps


class Image(_Closing, _salvo.Image):
    """An image in device memory: Image(device, type, format, width,
    height=0, depth=0, layers=0, usage=0)."""

    __slots__ = ()

    def _extent(self, region):
        d = self.desc
        r = Region(*(region or ()))
        width = r.width or d["width"] - r.x
        height = r.height or max(d["height"], 1) - r.y
        depth = r.depth or max(d["depth"], 1) - r.z
        layers = r.layers or max(d["layers"], 1) - r.layer
        return layers, depth, height, width

    def to_numpy(self, region=None):
        """The region's texels (the whole image by default) as an array of
        shape (layers, depth, height, width, components), squeezed of the
        axes the image type does not have."""
        np = _numpy()
        dtype, comps = format_dtype(self.desc["format"])
        layers, depth, height, width = self._extent(region)
        out = np.empty((layers, depth, height, width, comps), dtype=dtype)
        self.read_into(out, region)
        t = self.desc["type"]
        if t == ImageType.IMAGE_1D:
            return out[0, 0, 0]
        if t == ImageType.IMAGE_2D:
            return out[0, 0]
        if t == ImageType.IMAGE_3D:
            return out[0]
        return out[:, 0]

    def __repr__(self):
        d = self.desc
        return (f"<salvo.Image {ImageType(d['type']).name} {format_name(d['format'])} "
                f"{d['width']}x{d['height']}x{d['depth']}x{d['layers']}>")


class Sampler(_Closing, _salvo.Sampler):
    """A sampler: Sampler(device, filter=Filter.NEAREST, address=None,
    unnormalized=False)."""

    __slots__ = ()


def enumerate_devices():
    """The Vulkan devices that can run compute, as dicts (name, type,
    vendor_id, device_id, api_version); [] where there is none."""
    out = _salvo.enumerate_devices()
    for d in out:
        d["type"] = DeviceType(d["type"])
    return out


_salvo._configure(error=Error, status=Status, log=_deliver, graph=Graph)
