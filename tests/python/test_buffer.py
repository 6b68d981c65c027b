"""Buffers: NumPy round trips, and the mapping of HOST and SHARED buffers
through the buffer protocol, with no copy."""

import ctypes
import gc
import unittest

import numpy as np

import salvo
from support import DeviceTest

D = salvo.Domain


class TestBuffer(DeviceTest):
    def test_numpy_round_trips(self):
        rng = np.random.default_rng(1)
        arrays = [
            rng.standard_normal(1000).astype(np.float32),
            rng.standard_normal(333),
            rng.integers(-2**62, 2**62, 77, dtype=np.int64),
            rng.integers(0, 255, 1001, dtype=np.uint8),
            np.zeros(5, dtype=[("a", "f8"), ("b", "u4"), ("c", "u4")]),
        ]
        arrays[-1]["a"], arrays[-1]["b"] = np.arange(5) * 0.5, np.arange(5) + 3
        for domain in (D.DEVICE, D.HOST, D.SHARED):
            for a in arrays:
                with self.subTest(domain=domain.name, dtype=str(a.dtype)):
                    buf = self.dev.buffer_from(a, domain)
                    self.assertEqual(buf.size, a.nbytes)
                    self.assertEqual(buf.domain, domain)
                    back = buf.to_numpy(a.dtype)
                    np.testing.assert_array_equal(back, a)
                    buf.close()

    def test_offsets_and_partial_reads(self):
        buf = self.dev.buffer(64)
        buf.write(bytes(range(64)))
        buf.write(b"\xff\xfe", offset=10)
        self.assertEqual(bytes(buf.read(4, offset=9)), bytes([9, 0xFF, 0xFE, 12]))
        self.assertEqual(len(buf.read()), 64)
        self.assertEqual(bytes(buf.read(offset=60)), bytes([60, 61, 62, 63]))
        out = np.zeros(4, np.uint8)
        buf.read_into(out, 8)
        self.assertEqual(out.tolist(), [8, 9, 0xFF, 0xFE])
        self.assertEqual(buf.to_numpy(np.uint16, count=2, offset=10).tolist(), [0xFEFF, 0x0D0C])

    def test_host_buffer_is_mapped_without_copy(self):
        buf = self.dev.buffer(16, D.HOST)
        v = buf.view(np.uint32)
        v[:] = [5, 6, 7, 8]  # through the mapping ...
        self.assertEqual(buf.to_numpy(np.uint32).tolist(), [5, 6, 7, 8])  # ... salvo reads it
        buf.write(np.array([9], np.uint32), offset=4)  # salvo writes ...
        self.assertEqual(v.tolist(), [5, 9, 7, 8])  # ... the same memory
        mv = memoryview(buf)
        self.assertEqual(mv.nbytes, 16)
        self.assertFalse(mv.readonly)
        self.assertEqual(ctypes.addressof(ctypes.c_char.from_buffer(mv)),
                         v.__array_interface__["data"][0])
        mv.release()

    def test_device_sees_what_the_host_wrote_through_the_mapping(self):
        n = 256
        buf = self.dev.buffer(n * 4, D.HOST)
        view = buf.view(np.uint32)
        view[:] = np.arange(n)
        s = self.dev.stream()
        s.launch(self.add_kernel(), n // 64, [buf], (np.uint32(n), np.uint32(1000)))
        s.synchronize()
        self.assertEqual(view.tolist(), list(range(1000, 1000 + n)))

    def test_view_keeps_the_buffer_alive(self):
        live = self.dev.stats()["live_buffers"]
        buf = self.dev.buffer(8, D.HOST)
        view = buf.view(np.uint32)
        view[:] = [41, 42]
        del buf
        gc.collect()
        self.assertEqual(self.dev.stats()["live_buffers"], live + 1)
        self.assertEqual(view.tolist(), [41, 42])
        owner = view.base.obj if isinstance(view.base, memoryview) else view.base
        self.assertIsInstance(owner, salvo.Buffer)
        self.assertEqual(owner.to_numpy(np.uint32).tolist(), [41, 42])
        del owner, view
        gc.collect()
        self.dev.synchronize()
        self.assertEqual(self.dev.stats()["live_buffers"], live)

    def test_close_is_refused_while_viewed(self):
        buf = self.dev.buffer(8, D.SHARED)
        mv = memoryview(buf)
        with self.assertRaises(BufferError):
            buf.close()
        with self.assertRaises(BufferError):
            self.dev.close()
        self.assertFalse(self.dev.closed)
        mv.release()
        buf.close()
        with self.assertRaises(BufferError):
            memoryview(buf)  # closed: nothing to view

    def test_device_buffer_has_no_mapping(self):
        buf = self.dev.buffer(8)
        with self.assertRaises(BufferError):
            memoryview(buf)
        with self.assertRaises(BufferError):
            buf.view(np.uint8)

    def test_bad_input(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.buffer(0)
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        buf = self.dev.buffer(16)
        with self.assertRaises(salvo.Error) as cm:
            buf.write(bytes(8), offset=12)  # past the end
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(salvo.Error) as cm:
            buf.read(32)
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(TypeError):
            buf.write("text is not bytes")
        with self.assertRaises(TypeError):
            buf.read_into(b"read-only")
        with self.assertRaises(ValueError):
            buf.write(np.zeros((4, 4), np.uint8)[:, 1])  # not contiguous
        with self.assertRaises(OverflowError):
            self.dev.buffer(-1)

    def test_integers_out_of_range_are_refused_not_wrapped(self):
        # An offset, a fill value or a node past what the C argument holds is
        # refused here; cut down, it would name another, valid place.
        buf = self.u32(np.arange(4))
        s = self.dev.stream()
        for call in (lambda: buf.write(np.uint32([7]), 2**64),
                     lambda: buf.write(np.uint32([7]), -4),
                     lambda: buf.read(4, 2**64 + 4),
                     lambda: buf.read_into(np.zeros(1, np.uint32), 2**64),
                     lambda: s.fill(buf, 2**32 + 7),
                     lambda: s.fill(buf, 1, offset=2**64),
                     lambda: s.write(buf, b"abcd", 2**64),
                     lambda: s.copy(buf, buf, 4, src_offset=2**64 + 8),
                     lambda: self.dev.stream(batch_size=2**32 + 3),
                     lambda: s.wait_gate(self.dev.gate(), 2**64)):
            with self.assertRaises(OverflowError):
                call()
        s.synchronize()
        self.assertEqual(buf.to_numpy(np.uint32).tolist(), [0, 1, 2, 3])  # nothing written
        buf.write(np.uint32([9]), np.uint64(4))  # NumPy integers are integers
        s.fill(buf, np.uint32(5), offset=np.int64(8), size=4)
        s.synchronize()
        self.assertEqual(buf.to_numpy(np.uint32).tolist(), [0, 9, 5, 3])
        self.assertEqual(bytes(buf.read(np.uint8(4), np.uint16(4))), bytes([9, 0, 0, 0]))
        with self.assertRaises(TypeError):
            salvo.Buffer("not a device", 16)

    def test_address(self):
        buf = self.dev.buffer(64)
        if not self.dev.info["features"]["buffer_device_address"]:
            with self.assertRaises(salvo.Error) as cm:
                buf.address
            self.assertStatus(cm, salvo.Status.ERROR_UNSUPPORTED)
        else:
            self.assertGreater(buf.address, 0)


if __name__ == "__main__":
    unittest.main()
