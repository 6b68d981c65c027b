"""Stream calls beyond launch and copy: indirect launches, byte patterns,
image-to-image copies, stream-ordered reads, host calls, and the device's
memory figures."""

import gc
import sys
import threading
import weakref

import numpy as np

import salvo
from support import DeviceTest

F, T = salvo.Format, salvo.ImageType


def push(n, value):
    return (np.uint32(n), np.uint32(value))


class TestStreamCalls(DeviceTest):
    def setUp(self):
        super().setUp()
        self.s = self.dev.stream()
        self.add = self.add_kernel()

    def test_launch_indirect_reads_counts_when_it_runs(self):
        data = self.u32(np.zeros(256))
        # The counts sit at offset 16 of a larger buffer; the rest is noise.
        counts = self.u32([7, 7, 7, 7, 2, 1, 1, 9])
        self.s.launch_indirect(self.add, counts, 16, [data], push(256, 1))
        # Counts written in stream order after the first launch reach the second.
        self.s.write(counts, np.array([4, 1, 1], dtype=np.uint32).tobytes(), 16)
        self.s.launch_indirect(self.add, counts, offset=16, bindings=[data], push=push(256, 10))
        self.s.synchronize()
        self.assertEqual(data.to_numpy(np.uint32).tolist(), [11] * 128 + [10] * 128)

    def test_launch_indirect_in_a_graph(self):
        data, other = self.u32(np.zeros(128)), self.u32(np.zeros(128))
        counts = self.u32([1, 1, 1])
        with self.s.capture() as g:
            self.s.launch_indirect(self.add, counts, 0, [data], push(128, 2))
        self.assertEqual(g.nodes, (self.add,))
        g.launch(self.s)
        self.s.write(counts, np.array([2, 1, 1], dtype=np.uint32).tobytes())
        g.set_bindings(0, [other])  # a sequence, as for a launch node
        g.set_push(0, push(128, 5))
        g.launch(self.s)
        self.s.synchronize()
        self.assertEqual(data.to_numpy(np.uint32).tolist(), [2] * 64 + [0] * 64)
        self.assertEqual(other.to_numpy(np.uint32).tolist(), [5] * 128)

    def test_launch_indirect_refusals(self):
        data, counts = self.u32(np.zeros(64)), self.u32([1, 1, 1])
        with self.assertRaises(salvo.Error) as e:
            self.s.launch_indirect(self.add, counts, 2, [data], push(64, 1))  # not a multiple of 4
        self.assertStatus(e, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(salvo.Error) as e:
            self.s.launch_indirect(self.add, counts, 4, [data], push(64, 1))  # 12 bytes past 12
        self.assertStatus(e, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(TypeError):
            self.s.launch_indirect(self.add, data.to_numpy(), 0, [data])
        self.s.synchronize()
        self.assertEqual(data.to_numpy(np.uint32).tolist(), [0] * 64)

    def test_fill_pattern(self):
        buf = self.dev.buffer(64)
        self.s.fill(buf, 0)
        self.s.fill_pattern(buf, b"\xab", offset=3, size=5)
        self.s.fill_pattern(buf, np.uint16(0x1234), 10, 6)
        self.s.fill_pattern(buf, bytes([1, 2, 3, 4]), 21, 8)
        self.s.fill_pattern(buf, b"\x7f\x80", 50)  # size None: whole patterns to the end
        self.s.synchronize()
        want = bytearray(64)
        want[3:8] = b"\xab" * 5
        want[10:16] = b"\x34\x12" * 3
        want[21:29] = bytes([1, 2, 3, 4]) * 2
        want[50:64] = b"\x7f\x80" * 7
        self.assertEqual(bytes(buf.to_numpy()), bytes(want))

    def test_fill_pattern_refusals(self):
        buf = self.dev.buffer(64)
        for pattern, size in ((b"\x01\x02\x03", 6), (b"", 4), (bytes(8), 8), (b"\x01\x02", 3)):
            with self.subTest(pattern=pattern, size=size):
                with self.assertRaises(salvo.Error) as e:
                    self.s.fill_pattern(buf, pattern, 0, size)
                self.assertStatus(e, salvo.Status.ERROR_INVALID_ARGUMENT)

    def test_copy_image(self):
        src = self.dev.image(T.IMAGE_2D, F.R32_UINT, 8, 6)
        dst = self.dev.image(T.IMAGE_2D, F.R32_UINT, 8, 6)
        values = np.arange(48, dtype=np.uint32).reshape(6, 8, 1)
        src.write(values)
        dst.write(np.zeros((6, 8, 1), dtype=np.uint32))
        self.s.copy_image(src, dst)
        # A 3 x 2 region of src at (1, 2) onto (4, 0) of dst.
        self.s.copy_image(src, dst, (1, 2, 0, 3, 2), (4, 0, 0, 3, 2))
        self.s.synchronize()
        want = values.copy()
        want[0:2, 4:7] = values[2:4, 1:4]
        self.assertEqual(dst.to_numpy().tolist(), want.tolist())
        other = self.dev.image(T.IMAGE_2D, F.R32_UINT, 4, 4)
        with self.assertRaises(salvo.Error) as e:
            self.s.copy_image(src, other)  # extents differ
        self.assertStatus(e, salvo.Status.ERROR_INVALID_ARGUMENT)

    def test_read_in_stream_order(self):
        buf = self.u32(np.arange(64))
        first = np.zeros(64, dtype=np.uint32)
        later = bytearray(32)
        self.s.launch(self.add, 1, [buf], push(64, 100))
        self.s.read(buf, first)
        self.s.launch(self.add, 1, [buf], push(64, 1000))
        self.s.read(buf, later, offset=8)
        self.s.synchronize()
        self.assertEqual(first.tolist(), [100 + i for i in range(64)])
        self.assertEqual(np.frombuffer(later, dtype=np.uint32).tolist(),
                         [1100 + i for i in range(2, 10)])
        # The views are let go once the reads are over: a bytearray with a
        # view held cannot grow.
        later.extend(b"1234")
        self.assertEqual(len(later), 36)

    def test_read_refusals(self):
        buf = self.u32(np.arange(16))
        with self.assertRaises(BufferError):
            self.s.read(buf, b"\0" * 16)  # not writable
        out = bytearray(16)
        with self.assertRaises(salvo.Error) as e:
            self.s.read(buf, out, offset=60)  # past the end
        self.assertStatus(e, salvo.Status.ERROR_INVALID_ARGUMENT)
        out.extend(b"x")  # no view kept after a refusal
        self.s.begin_capture()
        try:
            with self.assertRaises(salvo.Error):
                self.s.read(buf, bytearray(16))
        finally:
            self.s.end_capture()

    def test_host_call_between_launches(self):
        buf = self.u32(np.zeros(64), salvo.Domain.HOST)
        seen = []

        def at_the_call():
            view = buf.view(np.uint32)
            seen.append((int(view[0]), threading.current_thread() is threading.main_thread()))
            view[:] = 100
            del view

        self.s.launch(self.add, 1, [buf], push(64, 1))
        self.s.host_call(at_the_call)
        self.s.launch(self.add, 1, [buf], push(64, 1))
        self.s.synchronize()
        self.assertEqual(seen, [(1, False)])  # after the first launch, on salvo's thread
        self.assertEqual(buf.to_numpy(np.uint32).tolist(), [101] * 64)

    def test_host_call_releases_and_reports(self):
        class Call:
            ran = 0

            def __call__(self):
                Call.ran += 1

        fn = Call()
        ref = weakref.ref(fn)
        self.s.host_call(fn)
        del fn
        self.s.synchronize()
        gc.collect()
        self.assertEqual(Call.ran, 1)
        self.assertIsNone(ref(), "the callable was not released after it ran")

        raised = []
        old = sys.unraisablehook
        sys.unraisablehook = lambda u: raised.append(u.exc_type)
        try:
            self.s.host_call(lambda: 1 / 0)
            self.s.host_call(Call())
            self.s.synchronize()
        finally:
            sys.unraisablehook = old
        self.assertEqual(raised, [ZeroDivisionError])
        self.assertEqual(Call.ran, 2)  # the next call still ran

    def test_host_call_refusals(self):
        with self.assertRaises(TypeError):
            self.s.host_call(3)
        self.s.begin_capture()
        try:
            with self.assertRaises(salvo.Error) as e:
                self.s.host_call(lambda: None)
            self.assertStatus(e, salvo.Status.ERROR_INVALID_STATE)
        finally:
            self.s.end_capture()

    def test_memory_info(self):
        def allocated():
            info = self.dev.memory_info()
            self.assertIsInstance(info["measured"], bool)
            self.assertGreater(len(info["heaps"]), 0)
            for h in info["heaps"]:
                self.assertGreater(h["size"], 0)
                self.assertGreater(h["budget"], 0)
                if not info["measured"]:  # salvo's own figures (lavapipe)
                    self.assertEqual((h["budget"], h["usage"]), (h["size"], h["allocated"]))
            return sum(h["allocated"] for h in info["heaps"])

        before = allocated()
        buf = self.dev.buffer(4 << 20)
        self.assertGreaterEqual(allocated() - before, 4 << 20)
        buf.close()
        self.dev.synchronize()
        self.assertEqual(allocated(), before)

    def test_host_call_pending_at_close(self):
        seen = []
        gate = self.dev.gate()
        self.s.launch(self.add, 1, [self.u32(np.zeros(64))], push(64, 3))
        self.s.wait_gate(gate, 1)  # the call waits behind the gate until close
        self.s.host_call(lambda: seen.append("ran"))
        self.s.flush()
        self.assertEqual(seen, [])
        # Close closes the device's objects, then runs every pending host
        # call before it returns (the GIL let go meanwhile).
        self.dev.close()
        self.assertEqual(seen, ["ran"])
