"""The library's log, routed to the logger "salvo"."""

import logging
import os
import tempfile
import unittest

import salvo
from support import DeviceTest


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


class TestLog(DeviceTest):
    def setUp(self):
        super().setUp()
        self.log = Capture()
        salvo.logger.addHandler(self.log)

    def tearDown(self):
        salvo.logger.removeHandler(self.log)
        super().tearDown()

    def test_a_raised_failure_is_logged_at_debug_only(self):
        with self.assertRaises(salvo.Error) as cm:
            self.dev.buffer(0)
        mine = [r for r in self.log.records if cm.exception.message.endswith(
            r.getMessage().split(": ", 1)[-1])]
        self.assertEqual(len(mine), 1, [r.getMessage() for r in self.log.records])
        r = mine[0]
        self.assertEqual(r.levelno, logging.DEBUG)  # the exception carries it
        self.assertEqual(r.salvo_level, salvo.LogLevel.ERROR)
        self.assertEqual(r.name, "salvo")
        self.assertTrue(r.salvo_file.endswith(".c"))
        self.assertGreater(r.salvo_line, 0)
        self.assertTrue(cm.exception.message.startswith(f"{r.salvo_file}:{r.salvo_line}: "))

    def test_text_that_is_not_utf8(self):
        # A path's bytes that are not UTF-8 reach the message; the error is
        # still salvo.Error, and its record still reaches the logger.
        with self.assertRaises(salvo.Error) as cm:
            self.dev.trace_start(b"/nonexistent/\xff/t.json")
        self.assertStatus(cm, salvo.Status.ERROR_INVALID_ARGUMENT)
        self.assertIn("/nonexistent/\ufffd/t.json", cm.exception.message)
        self.assertTrue(any("/nonexistent/\ufffd/t.json" in r.getMessage()
                            for r in self.log.records))
        # A character cut at the message's limit (1024 bytes).
        with self.assertRaises(salvo.Error) as cm:
            self.dev.trace_start("/nonexistent/x" + "\u00e9" * 600 + "/t.json")
        self.assertIn("/nonexistent/x\u00e9\u00e9", cm.exception.message)

    def test_device_let_go_in_a_host_call(self):
        # salvo refuses a device's destroy inside a host call's function: a
        # device closed, or collected, there is destroyed afterwards on a
        # thread of Python's, and nothing says it was refused.
        s = self.dev.stream()
        other = salvo.Device()
        s.host_call((lambda d: (lambda: d))(other))  # its last holder
        del other
        closed = salvo.Device()
        scratch = self.dev.buffer(64)
        s.host_call(lambda: (scratch.close(), closed.close()))  # both poll the log
        s.synchronize()
        self.assertTrue(closed.closed)
        self.assertTrue(scratch.closed)
        salvo._salvo.last_error()  # polls nothing; the records below are all there were
        self.dev.synchronize()
        refused = [r.getMessage() for r in self.log.records
                   if "host call" in r.getMessage() or r.salvo_level == salvo.LogLevel.ERROR]
        self.assertEqual(refused, [])
        s.close()

    def test_warnings_arrive_with_their_place(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cache.bin")
            with open(path, "wb") as f:
                f.write(b"not a pipeline cache")
            with salvo.Device(validation=True, pipeline_cache_path=path) as dev:
                dev.kernel(glsl="void main() {}")
        warnings = [r for r in self.log.records if r.levelno == logging.WARNING]
        self.assertTrue(warnings, [r.getMessage() for r in self.log.records])
        self.assertTrue(any("pipeline cache" in r.getMessage() for r in warnings))
        w = warnings[0]
        self.assertEqual(w.salvo_level, salvo.LogLevel.WARNING)
        self.assertTrue(w.getMessage().startswith(f"{w.salvo_file}:{w.salvo_line}: "))

    def test_closing_a_device_releases_its_objects_first(self):
        # salvo_device_destroy warns of objects left alive; Device.close
        # releases them itself, so a `with` block's objects raise nothing.
        with salvo.Device(validation=True) as dev:
            objs = [dev.buffer(64), dev.stream(), dev.event(), dev.gate(),
                    dev.kernel(glsl="void main() {}")]
            s = objs[1]
            with s.capture() as g:
                s.fill(objs[0], 1)
            objs.append(g)
        self.assertTrue(all(o.closed for o in objs))
        warnings = [r.getMessage() for r in self.log.records if r.levelno >= logging.WARNING]
        self.assertEqual(warnings, [])

    def test_level_filters(self):
        salvo.logger.setLevel(logging.ERROR)
        try:
            with self.assertRaises(salvo.Error):
                self.dev.buffer(0)
        finally:
            salvo.logger.setLevel(logging.DEBUG)
        self.assertEqual([r for r in self.log.records if r.levelno < logging.ERROR], [])


if __name__ == "__main__":
    unittest.main()
