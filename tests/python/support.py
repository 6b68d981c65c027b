"""What the Python suites share: a device per test under the validation
layer, and the count of validation messages the package logged.

Every message of the library reaches the logger "salvo" (the package's
log routing); the handler below keeps those from the validation layer
(salvo_file "validation"), echoes them, and fails the test in which they
arrived, beside the device's own counter (stats()["validation_messages"]).
"""

import gc
import logging
import os
import sys
import unittest

import numpy as np

import salvo

validation_records = []


class _Counter(logging.Handler):
    def emit(self, record):
        if getattr(record, "salvo_file", None) == "validation":
            validation_records.append(record)
            print(f"VALIDATION: {record.getMessage()}", file=sys.stderr)


salvo.logger.addHandler(_Counter(level=logging.DEBUG))
salvo.logger.setLevel(logging.DEBUG)
# Only what the tests look at: records still reach their own handlers.
salvo.logger.propagate = False

# A kernel on one buffer: data[i] += value for i < n (shaders/add.comp).
ADD_GLSL = """
#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint n; uint value; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        data[i] += pc.value;
}
"""

# dst[i] = src[i] * factor (shaders/scale.comp).
SCALE_GLSL = """
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint n; uint factor; } pc;
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n)
        dst[i] = src[i] * pc.factor;
}
"""


def spirv_path(name):
    """A SPIR-V module the build compiled for the suite ($SALVO_TEST_SPIRV_DIR)."""
    return os.path.join(os.environ.get("SALVO_TEST_SPIRV_DIR", ""), f"{name}.spv")


class DeviceTest(unittest.TestCase):
    """A device with the validation layer for each test; a test fails on any
    validation message."""

    device_args = {}

    def setUp(self):
        self.seen = len(validation_records)
        self.dev = salvo.Device(validation=True, **self.device_args)

    def tearDown(self):
        if not self.dev.closed:
            self.dev.synchronize()
            count = self.dev.stats()["validation_messages"]
            gc.collect()  # views of mapped buffers a failed test left behind
            self.dev.close()
            self.assertEqual(count, 0, "the validation layer reported messages")
        self.assertEqual(len(validation_records), self.seen, "validation messages were logged")

    # Helpers

    def add_kernel(self, local=64):
        return self.dev.kernel(glsl=ADD_GLSL, name="add", spec={0: local})

    def u32(self, values, domain=salvo.Domain.DEVICE):
        return self.dev.buffer_from(np.asarray(values, dtype=np.uint32), domain)

    def assertStatus(self, error_context, status):
        self.assertEqual(error_context.exception.status, status, error_context.exception.message)
