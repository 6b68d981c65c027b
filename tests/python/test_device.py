"""Devices: identity, counters, closing, and errors as salvo.Error."""

import unittest

import numpy as np

import salvo
from support import DeviceTest


class TestDevice(DeviceTest):
    def test_info_and_enumeration(self):
        info = self.dev.info
        self.assertTrue(info["name"])
        self.assertGreater(info["batch_size"], 0)
        self.assertGreaterEqual(info["max_push_constants_size"], 128)
        self.assertEqual(len(info["max_workgroup_count"]), 3)
        self.assertIsInstance(info["features"]["shader_float64"], bool)
        names = [d["name"] for d in salvo.enumerate_devices()]
        self.assertIn(info["name"], names)
        self.assertIsInstance(salvo.enumerate_devices()[0]["type"], salvo.DeviceType)
        self.assertFalse(self.dev.is_lost)

    def test_batch_size_reaches_the_device(self):
        with salvo.Device(validation=True, batch_size=7) as dev:
            self.assertEqual(dev.info["batch_size"], 7)

    def test_stats_count_objects(self):
        before = self.dev.stats()
        buf = self.dev.buffer(4096)
        k = self.dev.kernel(glsl="void main() {}")
        s = self.dev.stream()
        ev, gate = self.dev.event(), self.dev.gate()
        st = self.dev.stats()
        self.assertEqual(st["live_buffers"], before["live_buffers"] + 1)
        self.assertEqual(st["live_buffer_bytes"], before["live_buffer_bytes"] + 4096)
        self.assertEqual(st["live_kernels"], before["live_kernels"] + 1)
        self.assertEqual(st["live_streams"], before["live_streams"] + 1)
        self.assertEqual(st["live_events"], before["live_events"] + 1)
        self.assertEqual(st["live_gates"], before["live_gates"] + 1)
        for obj in (buf, k, s, ev, gate):
            obj.close()
            obj.close()  # twice is fine
            self.assertTrue(obj.closed)
        self.dev.synchronize()
        st = self.dev.stats()
        self.assertEqual(st["live_buffers"], before["live_buffers"])
        self.assertEqual(st["live_streams"], before["live_streams"])
        self.assertEqual(st["live_gates"], before["live_gates"])

    def test_collected_objects_are_destroyed(self):
        live = self.dev.stats()["live_buffers"]
        buf = self.dev.buffer(256)
        self.assertEqual(self.dev.stats()["live_buffers"], live + 1)
        del buf
        self.dev.synchronize()
        self.assertEqual(self.dev.stats()["live_buffers"], live)

    def test_close_closes_every_object(self):
        dev = salvo.Device(validation=True)
        buf = dev.buffer_from(np.arange(16, dtype=np.uint32))
        s = dev.stream()
        k = dev.kernel(glsl="void main() {}")
        dev.close()
        dev.close()
        self.assertTrue(dev.closed)
        for obj in (buf, s, k):
            self.assertTrue(obj.closed)
        with self.assertRaises(salvo.Error) as cm:
            buf.read()
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_STATE)
        self.assertIn("closed", cm.exception.message)
        with self.assertRaises(salvo.Error):
            s.launch(k, 1)
        with self.assertRaises(salvo.Error):
            dev.stream()
        with self.assertRaises(salvo.Error):
            dev.stats()
        del buf, s, k  # their collection after the device's close is harmless

    def test_device_with_objects_collected_in_any_order(self):
        dev = salvo.Device(validation=True)
        bufs = [dev.buffer(64) for _ in range(4)]
        s = dev.stream()
        del dev  # the objects keep it alive
        s.fill(bufs[0], 7)
        s.synchronize()
        self.assertEqual(bufs[0].to_numpy(np.uint32).tolist(), [7] * 16)
        del s, bufs

    def test_no_device_of_that_name(self):
        with self.assertRaises(salvo.Error) as cm:
            salvo.Device(name="no such device, surely")
        self.assertStatus(cm, salvo.Status.ERROR_NO_DEVICE)

    def test_error_carries_status_and_message(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.buffer(0)
        e = cm.exception
        self.assertIs(e.status, salvo.Status.ERROR_INVALID_ARGUMENT)
        self.assertTrue(e.message)
        self.assertEqual(e.message, salvo._salvo.last_error())
        self.assertTrue(str(e).startswith("SALVO_ERROR_INVALID_ARGUMENT: "))
        self.assertIsInstance(e, Exception)

    def test_status_helpers(self):
        self.assertEqual(salvo.status_string(salvo.Status.ERROR_DEVICE_LOST),
                         "SALVO_ERROR_DEVICE_LOST")
        self.assertEqual(salvo.format_name(salvo.Format.RGBA8_UNORM), "RGBA8_UNORM")
        self.assertEqual(salvo.format_texel_size(salvo.Format.RGBA32_FLOAT), 16)
        self.assertEqual(salvo.MAX_BINDINGS, 32)
        # A number no salvo enum holds is refused, not cut to 32 bits.
        for call in (salvo.status_string, salvo.format_name, self.dev.format_support):
            with self.assertRaises(OverflowError):
                call(2**32 + 5)

    def test_synchronize_returns_a_status(self):
        self.assertIs(self.dev.synchronize(), salvo.Status.OK)


if __name__ == "__main__":
    unittest.main()
