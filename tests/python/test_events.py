"""Events and host gates, and waits that another Python thread ends."""

import threading
import time
import unittest

import numpy as np

import salvo
from support import ADD_GLSL, DeviceTest

S = salvo.Status


class TestEvents(DeviceTest):
    def test_record_query_synchronize(self):
        s = self.dev.stream()
        ev = self.dev.event()
        self.assertIs(ev.query(), S.OK)  # never recorded
        buf = self.u32(np.zeros(64))
        add = self.add_kernel()
        for _ in range(10):
            s.launch(add, 1, [buf], (np.uint32(64), np.uint32(1)))
        ev.record(s)
        self.assertIs(ev.synchronize(), S.OK)
        self.assertIs(ev.query(), S.OK)
        self.assertIs(ev.wait(0), S.OK)
        self.assertEqual(buf.to_numpy(np.uint32)[0], 10)

    def test_cross_stream_wait(self):
        # timing=False (SALVO_EVENT_DISABLE_TIMING) orders the streams the
        # same way.
        for timing in (True, False):
            with self.subTest(timing=timing):
                a, b = self.dev.stream(), self.dev.stream()
                ev = self.dev.event(timing=timing)
                src, dst = self.u32(np.zeros(64)), self.dev.buffer(256)
                add = self.add_kernel()
                for _ in range(5):
                    a.launch(add, 1, [src], (np.uint32(64), np.uint32(3)))
                ev.record(a)
                b.wait_event(ev)
                b.copy(src, dst)
                b.synchronize()
                self.assertEqual(dst.to_numpy(np.uint32).tolist(), [15] * 64)
                self.assertIs(ev.synchronize(), S.OK)
                a.synchronize()

    def test_elapsed(self):
        s = self.dev.stream()
        start, end = self.dev.event(), self.dev.event()
        buf = self.u32(np.zeros(64))
        try:
            start.record(s)
        except salvo.Error as e:
            self.assertIs(e.status, S.ERROR_UNSUPPORTED)
            self.skipTest("no timestamps")
        s.launch(self.add_kernel(), 1, [buf], (np.uint32(64), np.uint32(1)))
        end.record(s)
        end.synchronize()
        ns = start.elapsed_ns(end)
        self.assertIsInstance(ns, int)
        self.assertGreaterEqual(ns, 0)
        with self.assertRaises(salvo.Error) as cm:
            end.elapsed_ns(self.dev.event())  # never recorded
        self.assertStatus(cm, S.ERROR_INVALID_ARGUMENT)

    def test_untimed_elapsed_refused(self):
        # timing=False: a point to wait for only (test_cross_stream_wait);
        # elapsed_ns refuses it, even recorded and complete.
        s = self.dev.stream()
        ev = self.dev.event(timing=False)
        s.launch(self.add_kernel(), 1, [self.u32(np.zeros(64))], (np.uint32(64), np.uint32(1)))
        ev.record(s)
        self.assertIs(ev.synchronize(), S.OK)
        with self.assertRaises(salvo.Error) as cm:
            ev.elapsed_ns(ev)
        self.assertStatus(cm, S.ERROR_INVALID_ARGUMENT)
        with self.assertRaises(TypeError):
            salvo.Event(self.dev, False)  # keyword only

    def test_cancel(self):
        s = self.dev.stream(batch_size=64)
        buf = self.u32(np.zeros(64))
        add = self.add_kernel()
        ev = self.dev.event()
        s.launch(add, 1, [buf], (np.uint32(64), np.uint32(1)))
        ev.record(s)
        s.launch(add, 1, [buf], (np.uint32(64), np.uint32(10)))
        try:
            ev.cancel()
        except salvo.Error as e:
            self.skipTest(f"the batch was submitted already: {e}")
        self.assertIs(ev.query(), S.CANCELLED)
        s.synchronize()
        self.assertEqual(buf.to_numpy(np.uint32)[0], 10)  # the first launch never ran

    def test_gate_holds_work_until_raised(self):
        s = self.dev.stream()
        gate = self.dev.gate()
        self.assertEqual(gate.value, 0)
        buf = self.u32(np.zeros(64))
        s.wait_gate(gate, 1)
        s.launch(self.add_kernel(), 1, [buf], (np.uint32(64), np.uint32(5)))
        self.assertIs(s.query(), S.NOT_READY)
        time.sleep(0.05)
        self.assertIs(s.query(), S.NOT_READY)
        gate.raise_to(1)
        self.assertEqual(gate.value, 1)
        self.assertIs(s.synchronize(), S.OK)
        self.assertEqual(buf.to_numpy(np.uint32)[0], 5)
        with self.assertRaises(salvo.Error) as cm:
            gate.raise_to(0)  # not below the current value
        self.assertStatus(cm, S.ERROR_INVALID_ARGUMENT)

    def test_gate_raised_by_another_thread_while_this_one_waits(self):
        # The synchronize waits with the GIL released: the raising thread runs.
        s = self.dev.stream()
        gate = self.dev.gate()
        buf = self.u32(np.zeros(64), salvo.Domain.HOST)
        view = buf.view(np.uint32)
        s.wait_gate(gate, 1)
        s.launch(self.add_kernel(), 1, [buf], (np.uint32(64), np.uint32(1)))

        def raiser():
            time.sleep(0.2)
            view[:] = 100  # before the raise, which orders it before the launch
            gate.raise_to(1)

        t = threading.Thread(target=raiser)
        t0 = time.monotonic()
        t.start()
        self.assertIs(s.synchronize(), S.OK)
        t.join()
        self.assertGreaterEqual(time.monotonic() - t0, 0.15)
        self.assertEqual(view.tolist(), [101] * 64)

    def _synchronize_held_in_another_thread(self, dev):
        # A thread inside Stream.synchronize, held there by a gate: returns
        # (stream, gate, buffer, thread, result). Waits until the thread's
        # synchronize has submitted the gated batch, which it does inside
        # the call, with the GIL let go.
        s, gate = dev.stream(), dev.gate()
        buf = dev.buffer_from(np.zeros(64, np.uint32))
        s.wait_gate(gate, 1)
        s.launch(dev.kernel(glsl=ADD_GLSL, spec={0: 64}), 1, [buf],
                 (np.uint32(64), np.uint32(1)))
        submitted = dev.stats()["batches_submitted"]
        result = []
        t = threading.Thread(target=lambda: result.append(s.synchronize()))
        t.start()
        deadline = time.monotonic() + 30
        while dev.stats()["batches_submitted"] == submitted:
            self.assertLess(time.monotonic(), deadline, "the synchronize never submitted")
            time.sleep(0.001)
        self.assertTrue(t.is_alive())
        return s, gate, buf, t, result

    def test_close_while_another_thread_is_in_a_call_defers_the_destroy(self):
        # Closing a stream while another thread synchronizes it must not free
        # the stream under that call: the destroy waits for the call to
        # return. Closing the gate raises it, which ends the synchronize.
        s, gate, buf, t, result = self._synchronize_held_in_another_thread(self.dev)
        s.close()
        buf.close()
        self.assertTrue(s.closed)
        stats = self.dev.stats()
        self.assertEqual((stats["live_streams"], stats["live_buffers"]), (1, 1))  # in use
        gate.close()
        t.join(30)
        self.assertFalse(t.is_alive())
        self.assertEqual(result, [S.OK])
        stats = self.dev.stats()
        self.assertEqual((stats["live_streams"], stats["live_buffers"], stats["live_gates"]),
                         (0, 0, 0))

    def test_device_close_while_another_thread_is_in_a_call(self):
        dev = salvo.Device(validation=True)
        s, gate, buf, t, result = self._synchronize_held_in_another_thread(dev)
        dev.close()  # the gate is raised; the device goes once the call returns
        self.assertTrue(dev.closed)
        t.join(30)
        self.assertFalse(t.is_alive())
        self.assertEqual(result, [S.OK])
        with self.assertRaises(salvo.Error) as cm:
            s.synchronize()
        self.assertStatus(cm, S.ERROR_INVALID_STATE)

    def test_launches_past_the_slots_wait_for_another_thread(self):
        # A launch that needs a batch slot held behind the gate waits for it,
        # with the GIL released, until another thread raises the gate.
        s = self.dev.stream(batch_size=1)
        gate = self.dev.gate()
        buf = self.u32(np.zeros(64))
        add = self.add_kernel()
        s.wait_gate(gate, 1)
        timer = threading.Timer(0.3, gate.raise_to, (1,))
        timer.start()
        for _ in range(6):
            s.launch(add, 1, [buf], (np.uint32(64), np.uint32(1)))
        timer.join()
        s.synchronize()
        self.assertEqual(buf.to_numpy(np.uint32)[0], 6)

    def test_event_of_closed_device(self):
        dev = salvo.Device(validation=True)
        ev = dev.event()
        dev.close()
        with self.assertRaises(salvo.Error) as cm:
            ev.query()
        self.assertStatus(cm, S.ERROR_INVALID_STATE)


if __name__ == "__main__":
    unittest.main()
