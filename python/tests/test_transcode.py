"""stylepipe.transcode against `stylepipe run` on the same clip."""
import os
import subprocess
import tempfile
import unittest

import stylepipe
from support import framemd5, stylepipe_binary

CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "pencil.yaml")


class Transcode(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.clip = os.path.join(self.tmp.name, "in.mkv")
        # A moving pattern with a tone; noise so that no two runs of the test see the same frames.
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25,noise=alls=20:allf=t",
                        "-f", "lavfi", "-i", "sine=frequency=%d:sample_rate=48000" % (200 + os.getpid() % 800),
                        "-t", "1.2", "-c:v", "ffv1", "-c:a", "flac", self.clip], check=True)

    def tearDown(self):
        self.tmp.cleanup()

    def test_equals_stylepipe_run_and_reports_progress(self):
        by_cli = os.path.join(self.tmp.name, "cli.mkv")
        by_python = os.path.join(self.tmp.name, "python.mkv")
        subprocess.run([stylepipe_binary(), "run", CONFIG, "-i", self.clip, "-o", by_cli, "--backend", "cpu",
                        "--codec", "ffv1", "--progress", "none"], check=True, capture_output=True)
        reports = []
        code = stylepipe.transcode(self.clip, by_python, CONFIG, backend="cpu", codec="ffv1", progress=reports.append)
        self.assertEqual(code, 0)
        self.assertEqual(framemd5(by_python), framemd5(by_cli))
        self.assertTrue(reports, "no progress was reported")
        self.assertEqual(reports[-1]["frames"], 30)
        frames = [r["frames"] for r in reports]
        self.assertEqual(frames, sorted(frames))

    def test_errors_are_raised_before_any_work(self):
        out = os.path.join(self.tmp.name, "out.mkv")
        with self.assertRaises(stylepipe.MediaError):
            stylepipe.transcode(os.path.join(self.tmp.name, "missing.mkv"), out, CONFIG, backend="cpu")
        bad = os.path.join(self.tmp.name, "bad.yaml")
        with open(bad, "w") as f:
            f.write("pipeline:\n  - pencil: {colour: true}\n")
        with self.assertRaises(stylepipe.ConfigError) as caught:
            stylepipe.transcode(self.clip, out, bad, backend="cpu")
        self.assertEqual((caught.exception.line, caught.exception.field), (2, "pencil.colour"))
        with self.assertRaisesRegex(TypeError, "bogus"):
            stylepipe.transcode(self.clip, out, CONFIG, bogus=1)
        self.assertFalse(os.path.exists(out))

    def test_a_list_of_inputs_with_a_pattern_runs_each_as_alone(self):
        second = os.path.join(self.tmp.name, "second.mkv")
        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25,noise=alls=20:allf=t",
                        "-t", "0.4", "-c:v", "ffv1", second], check=True)
        alone = os.path.join(self.tmp.name, "alone.mkv")
        stylepipe.transcode(second, alone, CONFIG, backend="cpu", codec="ffv1")
        missing = os.path.join(self.tmp.name, "missing.mkv")
        pattern = os.path.join(self.tmp.name, "{index}_{stem}_out.mkv")
        reports = []
        code = stylepipe.transcode([self.clip, missing, second], pattern, CONFIG, backend="cpu", codec="ffv1",
                                   jobs=2, progress=reports.append)
        self.assertEqual(code, 65, "a failed input makes the batch's code 65")
        self.assertEqual(framemd5(os.path.join(self.tmp.name, "2_second_out.mkv")), framemd5(alone))
        self.assertEqual(len(framemd5(os.path.join(self.tmp.name, "0_in_out.mkv"), "0:v")), 30)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "1_missing_out.mkv")))
        self.assertEqual(reports[-1]["frames"], 30 + 10)


if __name__ == "__main__":
    unittest.main()
