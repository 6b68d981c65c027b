"""Kernels from SPIR-V bytes and from GLSL, and what salvo reflects."""

import os
import unittest

import numpy as np

import salvo
from support import ADD_GLSL, SCALE_GLSL, DeviceTest, spirv_path


class TestKernel(DeviceTest):
    def test_glsl_reflection(self):
        k = self.dev.kernel(glsl=SCALE_GLSL, name="scale")
        self.assertEqual(k.name, "scale")
        self.assertEqual(k.push_constant_size, 8)
        self.assertEqual(k.local_size, (64, 1, 1))
        b = k.bindings
        self.assertEqual([x["binding"] for x in b], [0, 1])
        self.assertEqual(b[0]["access"], salvo.Access.READ)
        self.assertEqual(b[1]["access"], salvo.Access.WRITE)
        self.assertEqual(b[0]["kind"], salvo.BindingKind.BUFFER)

    def test_spec_constants(self):
        self.assertEqual(self.dev.kernel(glsl=ADD_GLSL, spec={0: 32}).local_size, (32, 1, 1))
        self.assertEqual(self.dev.kernel(glsl=ADD_GLSL, spec=[(0, 128)]).local_size, (128, 1, 1))
        self.assertEqual(self.dev.kernel(glsl=ADD_GLSL, spec=[[0, 16]]).local_size, (16, 1, 1))
        src = """
        #version 450
        layout(local_size_x = 1) in;
        layout(constant_id = 1) const float scale = 1.0;
        layout(constant_id = 2) const bool twice = false;
        layout(constant_id = 3) const int bias = 0;
        layout(std430, binding = 0) buffer B { float v[]; };
        void main() { v[0] = (twice ? 2.0 : 1.0) * scale + float(bias); }
        """
        k = self.dev.kernel(glsl=src, spec={1: 2.5, 2: True, 3: -4})
        buf = self.dev.buffer(4)
        s = self.dev.stream()
        s.launch(k, 1, [buf])
        s.synchronize()
        self.assertEqual(buf.to_numpy(np.float32)[0], 2 * 2.5 - 4)

    @unittest.skipUnless(os.path.exists(spirv_path("scale")), "no SPIR-V built for the suite")
    def test_spirv_bytes(self):
        with open(spirv_path("scale"), "rb") as f:
            words = f.read()
        k = self.dev.kernel(words, name="scale_spv", spec={0: 64})
        self.assertEqual(k.local_size, (64, 1, 1))
        # From any bytes-like object, aligned or not.
        k2 = self.dev.kernel(memoryview(bytearray(b"x" + words))[1:], spec={0: 64})
        src = self.u32(np.arange(100))
        dst = self.dev.buffer(400)
        s = self.dev.stream()
        s.launch(k2, 2, [src, dst], (np.uint32(100), np.uint32(3)))
        s.synchronize()
        self.assertEqual(dst.to_numpy(np.uint32).tolist(), [3 * i for i in range(100)])

    def test_bad_glsl_names_the_compiler_message(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.kernel(glsl="void main() { this is not glsl; }")
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        self.assertIn("ERROR", cm.exception.message)

    def test_bad_spirv(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.kernel(b"\x03\x02\x23\x07" + bytes(16))
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(salvo.Error) as cm:
            self.dev.kernel(bytes(7))  # not whole words
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)

    def test_neither_or_both_sources(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.kernel()
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(salvo.Error) as cm:
            self.dev.kernel(b"\x03\x02\x23\x07", glsl=ADD_GLSL)
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)

    def test_bad_spec(self):
        with self.assertRaises(TypeError):
            self.dev.kernel(glsl=ADD_GLSL, spec={0: "64"})
        with self.assertRaises(OverflowError):
            self.dev.kernel(glsl=ADD_GLSL, spec={-1: 64})
        for bad in ([(0,)], [(0, 64, 1)], [64]):
            with self.assertRaises(TypeError):
                self.dev.kernel(glsl=ADD_GLSL, spec=bad)

    def test_missing_entry_point(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.kernel(glsl=ADD_GLSL, entry="nope", spec={0: 64})
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)


if __name__ == "__main__":
    unittest.main()
