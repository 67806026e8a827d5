"""stylepipe.Chain on PyTorch and CuPy CUDA arrays: no copies, the caller's stream, the CPU's pictures."""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import stylepipe
from support import framemd5, photo, rng

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except ImportError:
    HAVE_TORCH = False
try:
    import cupy
    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no CuPy, or no driver
    HAVE_CUPY = False
GPU = "cuda" in stylepipe.build_backends() and stylepipe.cuda_device_count() > 0
WHY = "GPU test skipped: " + ("this build has no CUDA" if "cuda" not in stylepipe.build_backends() else "no CUDA device")

STAGES = {"pencil": [("pencil", {"color": True})], "xbr": [("xbr", {"scale": 2})]}


def assert_backends_agree(got, expected, name):
    """What the backends promise (README): xbr and pencil (its default fast tone) to the bit."""
    np.testing.assert_array_equal(got, expected, err_msg=name)


@unittest.skipUnless(GPU and HAVE_TORCH, WHY + " or no PyTorch with CUDA")
class ChainOnTorch(unittest.TestCase):
    def test_equals_the_cpu_in_place_without_allocating(self):
        generator = rng(11)
        image = photo(120, 170, generator)
        for name, stages in STAGES.items():
            with self.subTest(chain=name):
                expected = stylepipe.Chain(stages, device="cpu")(image)
                chain = stylepipe.Chain(stages, device="cuda:0")
                t = torch.from_numpy(image).cuda()
                out = chain(t)
                self.assertEqual(out.device, t.device)
                assert_backends_agree(out.cpu().numpy(), expected, name)
                if name == "pencil":  # same size: in place
                    pointer = t.data_ptr()
                    result = chain(t, out=t)
                    self.assertIs(result, t)
                    self.assertEqual(t.data_ptr(), pointer)
                    assert_backends_agree(t.cpu().numpy(), expected, name)

    def test_memory_stays_flat_over_a_thousand_calls(self):
        t = torch.from_numpy(photo(256, 320, rng(12))).cuda()
        out = torch.empty_like(t)
        chain = stylepipe.Chain(STAGES["pencil"], device="cuda")
        for _ in range(20):
            chain(t, out=out)
        torch.cuda.synchronize()
        allocated = torch.cuda.memory_allocated()
        for _ in range(1000):
            chain(t, out=out)
        torch.cuda.synchronize()
        self.assertEqual(torch.cuda.memory_allocated(), allocated)

    def test_work_follows_the_callers_stream(self):
        generator = rng(13)
        image = photo(200, 260, generator)
        expected = stylepipe.Chain(STAGES["xbr"], device="cpu")(image)
        source = torch.from_numpy(image).cuda()
        chain = stylepipe.Chain(STAGES["xbr"], device="cuda:0")

        class UnorderedInterface:  # CUDA memory that tells no stream: nothing orders the chain after its writer
            def __init__(self, tensor):
                self.__cuda_array_interface__ = dict(tensor.__cuda_array_interface__, stream=None)

        def run(stream_for_chain, unordered=False):
            frame = torch.zeros_like(source)
            out = torch.zeros((400, 520, 4), dtype=torch.uint8, device="cuda")
            torch.cuda.synchronize()
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time before the input is written
                frame.copy_(source)
                if stream_for_chain is None:
                    chain(frame, out=out)  # the current stream: `side`
                else:
                    if unordered:
                        chain(UnorderedInterface(frame), out=UnorderedInterface(out), stream=stream_for_chain)
                    else:
                        chain(frame, out=out, stream=stream_for_chain)
            torch.cuda.synchronize()
            return out.cpu().numpy()

        np.testing.assert_array_equal(run(None), expected)
        other = torch.cuda.Stream()
        # Another stream is ordered after `side` by DLPack's stream argument (torch records the order) ...
        np.testing.assert_array_equal(run(other), expected)
        # ... and the check can fail: without that order the chain reads the input before it is written.
        self.assertFalse(np.array_equal(run(other, unordered=True), expected))

    def test_wrong_device_or_dtype_is_refused(self):
        chain = stylepipe.Chain(STAGES["pencil"], device="cuda:0")
        with self.assertRaisesRegex(ValueError, "cpu"):
            chain(torch.zeros((8, 8, 4), dtype=torch.uint8))
        with self.assertRaisesRegex(TypeError, "uint8"):
            chain(torch.zeros((8, 8, 4), dtype=torch.float32, device="cuda"))
        with self.assertRaisesRegex(ValueError, "strides"):
            chain(torch.zeros((8, 16, 4), dtype=torch.uint8, device="cuda")[:, ::2])

    @unittest.skipUnless(GPU and HAVE_TORCH and torch.cuda.device_count() > 1, "needs 2 GPUs")
    def test_a_chain_on_the_second_gpu_stays_there(self):
        image = photo(64, 96, rng(14))
        expected = stylepipe.Chain(STAGES["xbr"], device="cpu")(image)
        chain = stylepipe.Chain(STAGES["xbr"], device="cuda:1")
        t = torch.from_numpy(image).to("cuda:1")
        out = chain(t)
        self.assertEqual(out.device, torch.device("cuda:1"))
        self.assertEqual(out.__dlpack_device__(), (2, 1))
        np.testing.assert_array_equal(out.cpu().numpy(), expected)
        with self.assertRaisesRegex(ValueError, "cuda:0"):
            chain(torch.from_numpy(image).to("cuda:0"))


@unittest.skipUnless(GPU and HAVE_TORCH, WHY + " or no PyTorch with CUDA")
class VideoOnTorch(unittest.TestCase):
    def setUp(self):
        import tempfile
        from test_video import make_clip
        self.tmp = tempfile.TemporaryDirectory()
        self.clip = self.tmp.name + "/in.mp4"
        make_clip(self.clip, size="320x240", seconds=0.8)

    def tearDown(self):
        self.tmp.cleanup()

    def test_decoded_frames_read_on_a_fresh_stream_are_complete(self):
        expected = [np.asarray(f).copy() for f in stylepipe.VideoReader(self.clip, device="cpu")]
        reader = stylepipe.VideoReader(self.clip, device="cuda:0")
        slow, fresh = torch.cuda.Stream(), torch.cuda.Stream()
        count = 0
        while True:
            with torch.cuda.stream(slow):
                torch.cuda._sleep(20_000_000)  # the conversion waits behind this on `slow`
                try:
                    frame = next(reader)
                except StopIteration:
                    break
            with torch.cuda.stream(fresh):
                t = torch.from_dlpack(frame)  # `fresh` is ordered after `slow`
                copy = t.clone()
                self.assertEqual(torch.from_dlpack(frame).data_ptr(), t.data_ptr(), "an export is the frame itself")
            fresh.synchronize()
            np.testing.assert_array_equal(copy.cpu().numpy(), expected[frame.index], err_msg="frame %d" % frame.index)
            count += 1
        self.assertEqual(count, len(expected))
        print("NVDEC: %s" % reader.hardware_decoding)
        # The check can fail: an export that orders nothing (stream -1) is read before the conversion ran.
        # Its clip has a size of its own, so that no pooled buffer already holds its pictures, and it
        # reads the second frame: a fresh reader's first next() opens the decoder, which waits for the
        # whole device (the sleep ran out before the conversion was queued, on H200 and H100 alike).
        from test_video import make_clip
        other = self.tmp.name + "/other.mp4"
        make_clip(other, size="336x256", seconds=0.2)
        other_expected = [np.asarray(f).copy() for f in stylepipe.VideoReader(other, device="cpu")]
        reader = stylepipe.VideoReader(other, device="cuda:0")
        next(reader)
        torch.cuda.synchronize()
        with torch.cuda.stream(slow):
            torch.cuda._sleep(1_000_000_000)
            frame = next(reader)
        with torch.cuda.stream(fresh):
            early = torch.utils.dlpack.from_dlpack(frame.__dlpack__(stream=-1)).clone()
        torch.cuda.synchronize()
        self.assertEqual(frame.index, 1)
        self.assertFalse(np.array_equal(early.cpu().numpy(), other_expected[1]))

    def test_reader_chain_writer_on_the_gpu_equals_the_cpu(self):
        config = {"pipeline": [{"xbr": {"scale": 2}}]}  # CPU and CUDA agree to the bit
        outputs = {}
        for device in ("cpu", "cuda:0"):
            chain = stylepipe.Chain.from_dict(config, device=device)
            reader = stylepipe.VideoReader(self.clip, device=device)
            path = "%s/%s.mkv" % (self.tmp.name, device.replace(":", ""))
            with stylepipe.VideoWriter(path, width=640, height=480, frame_rate=reader.frame_rate, device=device,
                                       codec="ffv1") as writer:
                for frame in reader:
                    writer.write(chain(frame), time=frame.time)
            outputs[device] = framemd5(path)
        self.assertEqual(outputs["cuda:0"], outputs["cpu"])


@unittest.skipUnless(GPU and HAVE_CUPY, WHY + " or no CuPy")
class ChainOnCupy(unittest.TestCase):
    def test_equals_the_cpu_in_place(self):
        image = photo(90, 130, rng(21))
        expected = stylepipe.Chain(STAGES["pencil"], device="cpu")(image)
        chain = stylepipe.Chain(STAGES["pencil"], device="cuda:0")
        c = cupy.asarray(image)
        pointer = c.data.ptr
        self.assertIs(chain(c, out=c), c)
        self.assertEqual(c.data.ptr, pointer)
        assert_backends_agree(cupy.asnumpy(c), expected, "pencil")
        chain.reset()
        fresh = chain(cupy.asarray(image))
        self.assertIsInstance(fresh, cupy.ndarray)
        assert_backends_agree(cupy.asnumpy(fresh), expected, "pencil")

    def test_cuda_array_interface_alone_is_taken(self):
        image = photo(70, 50, rng(22))
        expected = stylepipe.Chain(STAGES["xbr"], device="cpu")(image)

        class OnlyInterface:  # what Numba and others hand over
            def __init__(self, array):
                self.array = array
                self.__cuda_array_interface__ = array.__cuda_array_interface__

        chain = stylepipe.Chain(STAGES["xbr"], device="cuda:0")
        src, out = cupy.asarray(image), cupy.zeros((140, 100, 4), cupy.uint8)
        chain(OnlyInterface(src), out=OnlyInterface(out), stream=cupy.cuda.get_current_stream())
        np.testing.assert_array_equal(cupy.asnumpy(out), expected)


@unittest.skipUnless(GPU and HAVE_TORCH, WHY + " or no PyTorch with CUDA")
class TranscodeBesideTorch(unittest.TestCase):
    def test_the_hosts_gpu_memory_outlives_a_transcode(self):
        """A run shares the primary context with PyTorch: done, it must leave it be. Before session 26 a run
        decoding in software (here: a short input) reset the context, and the tensor below with it."""
        generator = rng(29)
        values = torch.from_numpy(generator.integers(0, 1 << 30, size=1 << 20, dtype=np.int64)).cuda()
        expected = int(values.sum().item())
        config = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "pencil.yaml")
        with tempfile.TemporaryDirectory() as tmp:
            raw, clip = os.path.join(tmp, "in.yuv"), os.path.join(tmp, "in.mp4")
            generator.integers(0, 256, size=12 * 96 * 64 * 3 // 2, dtype=np.uint8).tofile(raw)
            subprocess.run(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "96x64", "-r", "25",
                            "-i", raw, "-c:v", "libx264", "-pix_fmt", "yuv420p", clip], check=True)
            out = os.path.join(tmp, "out.mkv")
            self.assertEqual(stylepipe.transcode(clip, out, config, backend="cuda", codec="ffv1"), 0)
            self.assertTrue(os.path.getsize(out) > 0)
        torch.cuda.synchronize()
        self.assertEqual(int(values.sum().item()), expected)
        self.assertEqual(int((values * 3).sum().item()), 3 * expected)  # and new work on the same context

    @unittest.skipUnless(GPU and HAVE_TORCH and torch.cuda.device_count() > 1, "needs 2 GPUs")
    def test_a_run_stays_on_the_callers_gpu_with_or_without_progress(self):
        """A run reporting progress runs on a thread of its own; until session 37 that thread was on GPU 0
        whatever the caller's GPU was."""
        config = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "pencil.yaml")
        generator = rng(37)
        with tempfile.TemporaryDirectory() as tmp:
            raw, clip = os.path.join(tmp, "in.yuv"), os.path.join(tmp, "in.mp4")
            generator.integers(0, 256, size=12 * 96 * 64 * 3 // 2, dtype=np.uint8).tofile(raw)
            subprocess.run(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "96x64", "-r", "25",
                            "-i", raw, "-c:v", "libx264", "-pix_fmt", "yuv420p", clip], check=True)
            for progress in (None, []):
                stats, out = os.path.join(tmp, "stats.json"), os.path.join(tmp, "out.mkv")
                with torch.cuda.device(1):
                    code = stylepipe.transcode(clip, out, config, backend="cuda", codec="ffv1", overwrite=True,
                                               stats_json=stats, progress=None if progress is None else progress.append)
                self.assertEqual(code, 0)
                with open(stats) as f:
                    self.assertEqual(json.load(f)["cuda_device"]["ordinal"], 1, "progress=%r" % progress)
                if progress is not None:
                    self.assertTrue(progress, "no progress was reported")


if __name__ == "__main__":
    unittest.main()
