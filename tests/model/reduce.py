#!/usr/bin/env python3
"""Shrink a model_random trace to the fewest calls that still fail the same way.

    tests/model/reduce.py build/tests/model/model_random trace.txt 'SIGNATURE' [out.txt]

SIGNATURE is a piece of the failure's output (for example "CRASH",
"WATCHDOG" or "elements differ") that every smaller trace must still
produce when replayed. The config line is always kept. Removes chunks of
lines, then single lines, until no single line can go (ddmin). Each replay
is a new process, so a run takes a while: a replay opens the device.
"""
import os
import subprocess
import sys
import tempfile


def fails(binary, config, lines, signature, timeout):
    with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as f:
        f.write(config + "\n" + "\n".join(lines) + "\n")
        path = f.name
    try:
        env = dict(os.environ, MODEL_WATCHDOG=str(timeout))
        r = subprocess.run([binary, "--replay", path], capture_output=True, text=True,
                           timeout=timeout + 30, env=env)
        out = r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        out = "WATCHDOG (reducer timeout)"
    finally:
        os.unlink(path)
    return signature in out


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    binary, trace, signature = sys.argv[1:4]
    out = sys.argv[4] if len(sys.argv) > 4 else trace + ".min"
    timeout = int(os.environ.get("REDUCE_TIMEOUT", "30"))
    raw = [l.rstrip("\n") for l in open(trace) if l.strip() and not l.startswith("#")]
    config, lines = raw[0], raw[1:]
    if not fails(binary, config, lines, signature, timeout):
        print("the trace does not fail with that signature")
        return 1
    n = 2
    while len(lines) >= 2:
        chunk = max(1, len(lines) // n)
        reduced = False
        for start in range(0, len(lines), chunk):
            candidate = lines[:start] + lines[start + chunk:]
            if candidate and fails(binary, config, candidate, signature, timeout):
                lines = candidate
                n = max(n - 1, 2)
                reduced = True
                print(f"{len(lines)} lines", flush=True)
                with open(out, "w") as f:
                    f.write(config + "\n" + "\n".join(lines) + "\n")
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(n * 2, len(lines))
    with open(out, "w") as f:
        f.write(config + "\n" + "\n".join(lines) + "\n")
    print(f"{len(lines)} lines left: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
