"""VideoReader and VideoWriter against `stylepipe run` on the same clip."""
import gc
import os
import subprocess
import tempfile
import unittest

import numpy as np

import stylepipe
from support import UNDER_ASAN, framemd5, SEED, stylepipe_binary

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")


def make_clip(path, size="176x144", seconds=1.2, codec="libx264"):
    # A window of a larger moving testsrc2 at a place this run's seed picks, so runs see different
    # pictures (crop is in the GPU machine's minimal FFmpeg too; drawbox and noise are not).
    width, height = (int(v) for v in size.split("x"))
    x, y = SEED % 97 * 2, (SEED // 97) % 61 * 2
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=%dx%d:rate=25,crop=%d:%d:%d:%d" % (width + 200, height + 130, width, height, x, y),
                    "-t", str(seconds), "-c:v", codec, "-pix_fmt", "yuv420p", path], check=True)


def cli_rgba(clip, config, out_shape):
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "out.rgba")
        subprocess.run([stylepipe_binary(), "run", config, "-i", clip, "--backend", "cpu", "--progress", "none",
                        "--codec", "rawvideo", "-f", "rawvideo", "--pix-fmt", "rgba", "-o", raw],
                       check=True, capture_output=True)
        return np.fromfile(raw, np.uint8).reshape((-1,) + tuple(out_shape))


class Video(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.clip = os.path.join(self.tmp.name, "in.mp4")
        make_clip(self.clip)

    def tearDown(self):
        self.tmp.cleanup()

    def test_frames_are_the_clis_pictures_and_stay_while_held(self):
        reader = stylepipe.VideoReader(self.clip, device="cpu")
        self.assertEqual((reader.width, reader.height), (176, 144))
        expected = cli_rgba(self.clip, os.path.join(SOURCE, "configs", "identity.yaml"), (144, 176, 4))
        frames = list(reader)
        self.assertEqual(len(frames), len(expected))
        first = np.asarray(frames[0])
        self.assertTrue(np.shares_memory(first, np.from_dlpack(frames[0])), "two exports of a frame are one buffer")
        for i, frame in enumerate(frames):
            self.assertEqual(frame.index, i)
            np.testing.assert_array_equal(np.asarray(frame), expected[i], err_msg="frame %d" % i)
        times = [f.time for f in frames]
        self.assertEqual(times, sorted(times))
        self.assertAlmostEqual(times[1] - times[0], 1 / 25, places=6)
        # Every frame was held to the end: none was overwritten by a later one.
        np.testing.assert_array_equal(first, expected[0])

    def test_reader_chain_writer_equals_stylepipe_run(self):
        config = os.path.join(SOURCE, "configs", "pencil.yaml")
        by_cli = os.path.join(self.tmp.name, "cli.mkv")
        subprocess.run([stylepipe_binary(), "run", config, "-i", self.clip, "-o", by_cli, "--backend", "cpu",
                        "--codec", "ffv1", "--progress", "none"], check=True, capture_output=True)
        by_python = os.path.join(self.tmp.name, "python.mkv")
        chain = stylepipe.Chain.from_yaml(config)
        reader = stylepipe.VideoReader(self.clip)
        with stylepipe.VideoWriter(by_python, like=reader, codec="ffv1") as writer:
            for frame in reader:
                writer.write(chain(frame), time=frame.time)
        self.assertEqual(framemd5(by_python, "0:v"), framemd5(by_cli, "0:v"))

    @unittest.skipIf(UNDER_ASAN, "under ASan the resident size is ASan's (shadow, stack depot), not the module's;"
                                 " the release build runs this check")
    def test_unconsumed_capsules_leave_the_memory_flat(self):
        frame = next(iter(stylepipe.VideoReader(self.clip)))
        for _ in range(200):
            frame.__dlpack__()
        gc.collect()
        with open("/proc/self/statm") as f:
            before = int(f.read().split()[1]) * 4096
        for i in range(10000):
            frame.__dlpack__(max_version=(1, 0) if i % 2 else None)
        gc.collect()
        with open("/proc/self/statm") as f:
            grown = int(f.read().split()[1]) * 4096 - before
        self.assertLess(grown, 1 << 20, "10,000 capsules grew the process by %d bytes" % grown)

    def test_bad_input_raises_media_error(self):
        broken = os.path.join(self.tmp.name, "broken.mp4")
        with open(broken, "wb") as f:
            f.write(os.urandom(4096))
        with self.assertRaises(stylepipe.MediaError) as caught:
            stylepipe.VideoReader(broken)
        self.assertIsInstance(caught.exception, OSError)
        with self.assertRaises(stylepipe.MediaError):
            stylepipe.VideoReader(os.path.join(self.tmp.name, "missing.mp4"))
        out = os.path.join(self.tmp.name, "exists.mkv")
        open(out, "wb").close()
        with self.assertRaises(stylepipe.Error):
            stylepipe.VideoWriter(out, width=64, height=48, frame_rate=25, codec="ffv1")


if __name__ == "__main__":
    unittest.main()
