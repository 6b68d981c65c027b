"""Streams and launches: bindings in every form, push constants from
bytes, NumPy scalars, structured values and ctypes, copies, fills, stream
writes, and refusals of bad input."""

import ctypes
import struct
import unittest

import numpy as np

import salvo
from support import SCALE_GLSL, DeviceTest


class TestLaunch(DeviceTest):
    def setUp(self):
        super().setUp()
        self.s = self.dev.stream()
        self.scale = self.dev.kernel(glsl=SCALE_GLSL, name="scale")
        self.n = 200
        self.src = self.u32(np.arange(self.n))

    def run_scale(self, bindings, push, dst):
        self.s.launch(self.scale, (self.n + 63) // 64, bindings, push)
        self.s.synchronize()
        return dst.to_numpy(np.uint32, self.n).tolist()

    def expect(self, factor):
        return [factor * i for i in range(self.n)]

    def test_push_constant_forms(self):
        n = self.n

        class Push(ctypes.Structure):
            _fields_ = [("n", ctypes.c_uint32), ("factor", ctypes.c_uint32)]

        structured = np.array([(n, 6)], dtype=[("n", "u4"), ("factor", "u4")])[0]
        forms = {
            2: struct.pack("<II", n, 2),
            3: (np.uint32(n), np.uint32(3)),
            4: [np.uint32(n), np.int32(4)],
            5: np.array([n, 5], dtype=np.uint32),
            6: structured,
            7: Push(n, 7),
            8: bytearray(struct.pack("<II", n, 8)),
        }
        for factor, push in forms.items():
            with self.subTest(form=type(push).__name__):
                dst = self.dev.buffer(self.n * 4)
                self.assertEqual(self.run_scale([self.src, dst], push, dst), self.expect(factor))

    def test_push_scalars_take_std430_offsets(self):
        # uint then double: the double sits at offset 8, after 4 bytes of padding.
        src = """
        #version 450
        #extension GL_ARB_gpu_shader_fp64 : require
        layout(local_size_x = 1) in;
        layout(std430, binding = 0) buffer B { double v[]; };
        layout(push_constant) uniform P { uint index; double value; uint last; } pc;
        void main() { v[pc.index] = pc.value + double(pc.last); }
        """
        if not self.dev.info["features"]["shader_float64"]:
            self.skipTest("no float64")
        k = self.dev.kernel(glsl=src)
        self.assertEqual(k.push_constant_size, 20)
        buf = self.dev.buffer(16)
        buf.write(bytes(16))
        # 4 bytes, 4 of padding, 8, then 4: 20 bytes.
        self.s.launch(k, 1, [buf], (np.uint32(1), np.float64(2.25), np.uint32(3)))
        self.s.synchronize()
        self.assertEqual(buf.to_numpy(np.float64).tolist(), [0.0, 5.25])

    def test_push_scalar_bytes_exact(self):
        # The kernel copies its 32 bytes of push constants out as words: what
        # arrives must be each scalar's bytes at its std430 offset (8, 16
        # and 64-bit integers, half, single and double floats, bool), and
        # an array's bytes as they are.
        src = """
        #version 450
        layout(local_size_x = 1) in;
        layout(std430, binding = 0) writeonly buffer B { uint w[8]; };
        layout(push_constant) uniform P { uint v[8]; } pc;
        void main() { for (int i = 0; i < 8; i++) w[i] = pc.v[i]; }
        """
        k = self.dev.kernel(glsl=src)
        out = self.dev.buffer(32)
        values = [np.int8(-3), np.uint16(0xBEEF), np.float16(-0.75), np.bool_(True),
                  np.uint8(0xA5), np.float32(3.25), np.int16(-2), np.int64(-(2**40) - 5),
                  np.uint32(0xDEADBEEF), np.float64(1e-3)]
        want = bytearray()
        for v in values:
            size = v.itemsize
            while len(want) % size:
                want.append(0)
            want += v.tobytes()
        want = bytes(want)
        self.assertEqual(len(want), 40)  # 40 bytes: the last 8 go past the kernel's 32
        values, want = values[:8], want[:24]  # through the int64, which ends at 24
        want += bytes(8)  # and 8 zero bytes of numpy's own, to make 32
        values.append(np.zeros(8, np.uint8))
        for _ in range(2):
            self.s.fill(out, 0)
            self.s.launch(k, 1, [out], tuple(values))
            self.s.synchronize()
            self.assertEqual(bytes(out.read()), want)
        # One NumPy scalar alone, likewise.
        k1 = self.dev.kernel(glsl=src.replace("uint v[8]", "uint v[1]").replace("i < 8", "i < 1"))
        for _ in range(2):
            self.s.launch(k1, 1, [out], np.int32(-7))
            self.s.synchronize()
            self.assertEqual(out.to_numpy(np.int32)[0], -7)

    def test_binding_forms(self):
        dst = self.dev.buffer(self.n * 4 + 256)
        self.assertEqual(self.run_scale({0: self.src, 1: dst}, (np.uint32(self.n), np.uint32(2)),
                                        dst), self.expect(2))
        # (buffer, offset, size): the output 256 bytes in.
        self.s.launch(self.scale, 4, [self.src, (dst, 256, self.n * 4)],
                      (np.uint32(self.n), np.uint32(9)))
        self.s.synchronize()
        self.assertEqual(dst.to_numpy(np.uint32, self.n, 256).tolist(), self.expect(9))
        self.assertEqual(dst.to_numpy(np.uint32, 64).tolist(), self.expect(2)[:64])
        # (buffer, offset): to the end.
        self.s.launch(self.scale, 4, [self.src, (dst, 256)], push=(np.uint32(self.n), np.uint32(4)))
        self.s.synchronize()
        self.assertEqual(dst.to_numpy(np.uint32, self.n, 256).tolist(), self.expect(4))
        # Keywords, and groups as a tuple.
        self.s.launch(kernel=self.scale, groups=(4, 1, 1), bindings=(self.src, dst),
                      push=(np.uint32(self.n), np.uint32(5)))
        self.s.synchronize()
        self.assertEqual(dst.to_numpy(np.uint32, self.n).tolist(), self.expect(5))

    def test_sequence_follows_declared_bindings(self):
        # Bindings 3 and 7: a list maps onto them in ascending order.
        src = """
        #version 450
        layout(local_size_x = 1) in;
        layout(std430, binding = 7) writeonly buffer Out { uint o[]; };
        layout(std430, binding = 3) readonly buffer In { uint i[]; };
        void main() { o[0] = i[0] + 1u; }
        """
        k = self.dev.kernel(glsl=src)
        self.assertEqual([b["binding"] for b in k.bindings], [3, 7])
        inp, out = self.u32([41]), self.u32([0])
        self.s.launch(k, 1, [inp, out])
        self.s.synchronize()
        self.assertEqual(out.to_numpy(np.uint32).tolist(), [42])

    def test_array_binding(self):
        src = """
        #version 450
        layout(local_size_x = 1) in;
        layout(std430, binding = 0) buffer B { uint v[]; } b[3];
        void main() { b[0].v[0] = 1u; b[1].v[0] = 2u; b[2].v[0] = 3u; }
        """
        k = self.dev.kernel(glsl=src)
        self.assertEqual(k.bindings[0]["count"], 3)
        bufs = [self.u32([0]) for _ in range(3)]
        self.s.launch(k, 1, [bufs])  # one list: the elements of binding 0
        self.s.synchronize()
        self.assertEqual([b.to_numpy(np.uint32)[0] for b in bufs], [1, 2, 3])
        self.s.launch(k, 1, {(0, 0): bufs[2], (0, 1): bufs[1], (0, 2): bufs[0]})
        self.s.synchronize()
        self.assertEqual([b.to_numpy(np.uint32)[0] for b in bufs], [3, 2, 1])

    def test_fill_copy_and_stream_write(self):
        a, b = self.dev.buffer(64), self.dev.buffer(64)
        self.s.fill(a, 0x01020304)
        self.s.fill(a, 7, offset=8, size=8)
        self.s.copy(a, b)
        self.s.write(b, np.array([100, 101], np.uint32), offset=56)
        self.s.copy(b, a, 16, src_offset=48, dst_offset=0)
        self.s.synchronize()
        want_b = [0x01020304] * 2 + [7, 7] + [0x01020304] * 10 + [100, 101]
        self.assertEqual(b.to_numpy(np.uint32).tolist(), want_b)
        self.assertEqual(a.to_numpy(np.uint32).tolist()[:4], want_b[12:16])

    def test_query(self):
        self.assertIs(self.s.query(), salvo.Status.OK)
        self.s.fill(self.src, 0)
        self.assertIn(self.s.query(), (salvo.Status.OK, salvo.Status.NOT_READY))
        self.s.synchronize()
        self.assertIs(self.s.query(), salvo.Status.OK)

    def test_many_launches_in_order(self):
        add = self.add_kernel()
        buf = self.u32(np.zeros(64))
        s = self.dev.stream(batch_size=16)
        push = (np.uint32(64), np.uint32(1))
        for _ in range(1000):
            s.launch(add, 1, [buf], push)
        self.assertIs(s.synchronize(), salvo.Status.OK)
        self.assertEqual(buf.to_numpy(np.uint32).tolist(), [1000] * 64)
        self.assertGreaterEqual(self.dev.stats()["launches_total"], 1000)

    def test_repeated_round_trips(self):
        # The same launch synchronized again and again: salvo submits it as
        # recorded ahead from its third time (stats()["launches_ahead"]),
        # and each still runs.
        add = self.add_kernel()
        buf = self.u32(np.zeros(64))
        push = (np.uint32(64), np.uint32(3))
        ahead = self.dev.stats()["launches_ahead"]
        for i in range(1, 6):
            self.s.launch(add, 1, [buf], push)
            self.assertIs(self.s.synchronize(), salvo.Status.OK)
            self.assertEqual(buf.to_numpy(np.uint32).tolist(), [3 * i] * 64)
        self.assertEqual(self.dev.stats()["launches_ahead"] - ahead, 4)

    def test_bad_input(self):
        dst = self.dev.buffer(self.n * 4)
        push = (np.uint32(self.n), np.uint32(2))
        with self.assertRaises(ValueError):
            self.s.launch(self.scale, 1, [self.src, dst, dst], push)  # three for two
        with self.assertRaises(TypeError):
            self.s.launch(self.scale, 1, [self.src, "dst"], push)
        with self.assertRaises(TypeError):
            self.s.launch(self.scale, 1, 42, push)
        with self.assertRaises(salvo.Error) as cm:
            self.s.launch(self.scale, 1, [self.src], push)  # binding 1 missing
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(salvo.Error) as cm:
            self.s.launch(self.scale, 1, [self.src, dst], b"1234")  # 4 bytes for 8
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        self.assertIn("push", cm.exception.message)
        with self.assertRaises(TypeError):
            self.s.launch(self.scale, 1, [self.src, dst], (self.n, 2))  # Python ints
        with self.assertRaises(TypeError):
            self.s.launch(self.scale, 1, [self.src, dst], 3.5)
        with self.assertRaises(ValueError):
            self.s.launch(self.scale, (1, 1, 1, 1), [self.src, dst], push)
        with self.assertRaises(OverflowError):
            self.s.launch(self.scale, -1, [self.src, dst], push)
        with self.assertRaises(TypeError):
            self.s.launch(self.scale)
        with self.assertRaises(TypeError):
            self.s.launch(self.scale, 1, colour="red")
        with self.assertRaises(TypeError):
            self.s.launch(self.src, 1)  # not a kernel
        with self.assertRaises(salvo.Error) as cm:
            self.s.launch(self.scale, 1, [self.src, (dst, 3)], push)  # misaligned offset
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(salvo.Error) as cm:
            self.s.fill(dst, 1, offset=2)  # not a multiple of 4
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        # The stream still works after all that.
        self.assertEqual(self.run_scale([self.src, dst], push, dst), self.expect(2))

    def test_buffer_of_another_device(self):
        with salvo.Device(validation=True) as other:
            foreign = other.buffer(self.n * 4)
            with self.assertRaises(salvo.Error) as cm:
                self.s.launch(self.scale, 1, [self.src, foreign],
                              (np.uint32(self.n), np.uint32(2)))
            self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)

    def test_closed_objects_are_refused(self):
        dst = self.dev.buffer(16)
        dst.close()
        with self.assertRaises(salvo.Error) as cm:
            self.s.launch(self.scale, 1, [self.src, dst], (np.uint32(4), np.uint32(1)))
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_STATE)
        self.scale.close()
        with self.assertRaises(salvo.Error):
            self.s.launch(self.scale, 1, [self.src, self.src], (np.uint32(4), np.uint32(1)))
        self.s.close()
        with self.assertRaises(salvo.Error):
            self.s.synchronize()


if __name__ == "__main__":
    unittest.main()
