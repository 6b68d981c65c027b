"""Images and samplers: NumPy round trips, storage images in a kernel,
copies between buffers and images, and a sampled image."""

import unittest

import numpy as np

import salvo
from support import DeviceTest

F, T, U = salvo.Format, salvo.ImageType, salvo.ImageUsage

IMG_ADD = """
#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0, r32ui) uniform uimage2D img;
layout(push_constant) uniform P { uint value; } pc;
void main()
{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(img);
    if (p.x >= size.x || p.y >= size.y)
        return;
    imageStore(img, p, imageLoad(img, p) + uvec4(pc.value));
}
"""

FETCH = """
#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(binding = 0) uniform sampler2D src;
layout(std430, binding = 1) writeonly buffer Out { float v[]; };
layout(push_constant) uniform P { uint w; uint h; } pc;
void main()
{
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x < pc.w && p.y < pc.h)
        v[p.y * pc.w + p.x] = texelFetch(src, ivec2(p), 0).x;
}
"""


class TestImage(DeviceTest):
    def test_round_trips(self):
        rng = np.random.default_rng(3)
        cases = [
            (F.RGBA8_UNORM, np.uint8, 4),
            (F.R32_FLOAT, np.float32, 1),
            (F.RG16_SINT, np.int16, 2),
            (F.RGBA32_UINT, np.uint32, 4),
        ]
        for fmt, dtype, comps in cases:
            with self.subTest(format=fmt.name):
                if not self.dev.format_support(fmt):
                    continue
                img = self.dev.image(T.IMAGE_2D, fmt, 13, 7)
                data = (rng.integers(0, 100, (7, 13, comps)) - (0 if dtype in (
                    np.uint8, np.uint32) else 50)).astype(dtype)
                img.write(data)
                back = img.to_numpy()
                self.assertEqual(back.shape, (7, 13, comps))
                self.assertEqual(back.dtype, dtype)
                np.testing.assert_array_equal(back, data)
                # A region: 4x3 texels from (2, 1).
                part = img.to_numpy(salvo.Region(x=2, y=1, width=4, height=3))
                np.testing.assert_array_equal(part, data[1:4, 2:6])

    def test_desc_and_kinds(self):
        img = self.dev.image(T.IMAGE_3D, F.R32_UINT, 4, 4, 2)
        d = img.desc
        self.assertEqual((d["type"], d["format"], d["width"], d["depth"]),
                         (T.IMAGE_3D, F.R32_UINT, 4, 2))
        self.assertTrue(d["usage"] & U.STORAGE)
        data = np.arange(32, dtype=np.uint32).reshape(2, 4, 4, 1)
        img.write(data)
        np.testing.assert_array_equal(img.to_numpy(), data)
        arr = self.dev.image(T.IMAGE_2D_ARRAY, F.R8_UINT, 3, 2, layers=2)
        arr.write(np.arange(12, dtype=np.uint8))
        self.assertEqual(arr.to_numpy().shape, (2, 2, 3, 1))
        self.assertEqual(arr.to_numpy()[1, 1, 2, 0], 11)

    def test_storage_image_kernel_and_stream_copies(self):
        w, h = 20, 10
        img = self.dev.image(T.IMAGE_2D, F.R32_UINT, w, h)
        k = self.dev.kernel(glsl=IMG_ADD, name="img_add")
        self.assertEqual(k.bindings[0]["kind"], salvo.BindingKind.STORAGE_IMAGE)
        src = self.u32(np.arange(w * h))
        out = self.dev.buffer(w * h * 4)
        s = self.dev.stream()
        s.copy_buffer_to_image(src, img)
        s.launch(k, (3, 2), [img], np.uint32(1000))
        s.copy_image_to_buffer(img, out)
        s.synchronize()
        self.assertEqual(out.to_numpy(np.uint32).tolist(), [1000 + i for i in range(w * h)])
        np.testing.assert_array_equal(img.to_numpy()[..., 0],
                                      np.arange(w * h).reshape(h, w) + 1000)

    def test_sampled_image(self):
        w, h = 8, 4
        img = self.dev.image(T.IMAGE_2D, F.R32_FLOAT, w, h, usage=U.SAMPLED)
        data = np.linspace(0, 1, w * h, dtype=np.float32).reshape(h, w, 1)
        img.write(data)
        sampler = self.dev.sampler(salvo.Filter.NEAREST, salvo.AddressMode.CLAMP_TO_EDGE)
        k = self.dev.kernel(glsl=FETCH, name="fetch")
        self.assertEqual(k.bindings[0]["kind"], salvo.BindingKind.IMAGE_SAMPLER)
        out = self.dev.buffer(w * h * 4)
        s = self.dev.stream()
        s.launch(k, (1, 1), [(img, sampler), out], (np.uint32(w), np.uint32(h)))
        s.synchronize()
        np.testing.assert_array_equal(out.to_numpy(np.float32), data.ravel())

    def test_bad_input(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.image(T.IMAGE_2D, F.R8_UNORM, 0, 4)
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        img = self.dev.image(T.IMAGE_2D, F.RGBA8_UNORM, 4, 4)
        with self.assertRaises(salvo.Error) as cm:
            img.write(bytes(10))  # 64 bytes expected
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(salvo.Error) as cm:
            img.to_numpy(salvo.Region(x=3, width=2))  # past the edge
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(ValueError):
            img.write(bytes(64), region=tuple(range(9)))
        with self.assertRaises(OverflowError):
            self.dev.image(T.IMAGE_2D, F.R8_UNORM, 2**32 + 4, 4)  # not an image 4 wide
        A = salvo.AddressMode
        with self.assertRaises(ValueError):  # u, v, w and a fourth
            self.dev.sampler(address=[A.REPEAT, A.REPEAT, A.REPEAT, A.REPEAT])
        with self.assertRaises(OverflowError):  # not CLAMP_TO_EDGE (0)
            self.dev.sampler(address=2**32)
        with self.assertRaises(OverflowError):
            self.dev.sampler(address=[A.REPEAT, 2**40])
        k = self.dev.kernel(glsl=FETCH)
        with self.assertRaises(TypeError):
            self.dev.stream().launch(k, 1, [(img, img), self.dev.buffer(4)], b"12345678")


if __name__ == "__main__":
    unittest.main()
