"""Tests of scripts/device/pack_traces.sh: a SQLite file comes back whole from its .xz, with the
xz program and, as on the GPU machine where it may be missing, with Python's lzma alone. Run by
ctest as device.pack_traces: python3 tests/device/test_pack_traces.py
"""
import lzma
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "device" / "pack_traces.sh"


class PackTraces(unittest.TestCase):
    def setUp(self):
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="pack_traces_"))
        self.database = self.folder / "traces.db"
        connection = sqlite3.connect(self.database)
        connection.execute("CREATE TABLE actions (rank INTEGER, start_ns INTEGER, end_ns INTEGER)")
        connection.executemany("INSERT INTO actions VALUES (?, ?, ?)",
                               [(index % 8, index * 1000, index * 1000 + 700)
                                for index in range(20000)])
        connection.commit()
        connection.close()

    def tearDown(self):
        shutil.rmtree(self.folder)

    def pack(self, path_value):
        packed = self.folder / "traces.db.xz"
        result = subprocess.run(["bash", str(SCRIPT), str(self.database), str(packed)],
                                capture_output=True, text=True,
                                env=dict(os.environ, PATH=path_value))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(lzma.decompress(packed.read_bytes()), self.database.read_bytes())
        self.assertLess(packed.stat().st_size, self.database.stat().st_size // 3)
        return result.stdout

    def test_with_the_xz_program(self):
        if shutil.which("xz") is None:
            self.skipTest("no xz program here")
        self.assertIn("traces.db.xz", self.pack(os.environ["PATH"]))

    def test_with_pythons_lzma_where_xz_is_missing(self):
        tools = self.folder / "tools"
        tools.mkdir()
        for tool in ("bash", "stat"):
            (tools / tool).symlink_to(shutil.which(tool))
        (tools / "python3").symlink_to(sys.executable)
        self.assertIn("traces.db.xz", self.pack(str(tools)))

    def test_a_missing_argument_is_a_usage_error(self):
        result = subprocess.run(["bash", str(SCRIPT), str(self.database)], capture_output=True,
                                text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("usage", result.stderr)


if __name__ == "__main__":
    unittest.main()
