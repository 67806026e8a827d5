"""stylepipe.Chain on NumPy images, against the CLI on the same frames."""
import gc
import os
import threading
import time
import unittest

import numpy as np

import stylepipe
from support import UNDER_ASAN, cli_frames, photo, rng

# Each chain as the CLI reads it, and as a dict for Chain.from_dict.
CHAINS = {
    "pencil_temporal": ("pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n",
                        {"pipeline": [{"pencil": {"color": True, "temporal_smoothing": 0.8}}]}),
    "xbr": ("pipeline:\n  - xbr: {scale: 2}\n", {"pipeline": [{"xbr": {"scale": 2}}]}),
    "scale_then_pencil": ("pipeline:\n  - scale: {factor: 0.5}\n  - pencil: {color: false}\n",
                          {"pipeline": [{"scale": {"factor": 0.5}}, {"pencil": {"color": False}}]}),
}


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


class ChainOnNumPy(unittest.TestCase):
    def test_equals_the_cli_bit_for_bit(self):
        generator = rng(1)
        for name, (text, config) in CHAINS.items():
            with self.subTest(chain=name):
                height, width = int(generator.integers(40, 90)), int(generator.integers(41, 97))
                frames = [photo(height, width, generator) for _ in range(3)]
                chain = stylepipe.Chain.from_dict(config)
                expected = cli_frames(text, frames, chain.output_shape(frames[0].shape))
                self.assertEqual(len(expected), len(frames))
                for i, frame in enumerate(frames):
                    out = chain(frame)
                    self.assertIsInstance(out, np.ndarray)
                    self.assertEqual(out.shape, chain.output_shape(frame.shape))
                    np.testing.assert_array_equal(out, expected[i], err_msg="%s frame %d" % (name, i))

    def test_out_is_written_in_place_without_a_copy(self):
        generator = rng(2)
        image = photo(50, 70, generator)
        chain = stylepipe.Chain([("pencil", {"color": True})])
        expected = chain(image.copy())
        buffer = image.copy()
        result = chain(buffer, out=buffer)
        self.assertIs(result, buffer)
        self.assertTrue(np.shares_memory(result, buffer))
        np.testing.assert_array_equal(buffer, expected)
        # A row-pitched view (every other row of a taller array) is taken as it is.
        tall = np.zeros((100, 70, 4), np.uint8)
        tall[::2] = image
        out = np.zeros_like(image)
        chain(tall[::2], out=out)
        np.testing.assert_array_equal(out, expected)

    def test_wrong_arrays_raise_and_nothing_is_converted(self):
        generator = rng(3)
        image = photo(30, 40, generator)
        before = image.copy()
        chain = stylepipe.Chain([("xbr", {"scale": 2})])
        with self.assertRaisesRegex(TypeError, "uint8"):
            chain(image.astype(np.float32))
        with self.assertRaisesRegex(ValueError, "strides"):
            chain(image[:, ::2])
        with self.assertRaisesRegex(ValueError, "strides"):
            chain(np.asfortranarray(image))
        with self.assertRaisesRegex(ValueError, "HxWx4"):
            chain(image[..., :3].copy())
        out = np.full((60, 80, 4), 7, np.uint8)
        with self.assertRaisesRegex(stylepipe.Error, "80x60"):
            chain(image, out=np.full((60, 81, 4), 7, np.uint8))
        with self.assertRaisesRegex(ValueError, "read-only"):
            readonly = out.copy()
            readonly.flags.writeable = False
            chain(image, out=readonly)
        with self.assertRaisesRegex(TypeError, "array"):
            chain("not an image")
        np.testing.assert_array_equal(image, before)
        self.assertTrue((out == 7).all())

    def test_bad_config_raises_config_error_with_its_line(self):
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.yaml")
            with open(path, "w") as f:
                f.write("pipeline:\n  - pencil: {color: true}\n  - xbr: {scale: 9}\n")
            with self.assertRaises(stylepipe.ConfigError) as caught:
                stylepipe.Chain.from_yaml(path)
        e = caught.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual((e.file, e.line, e.column, e.field), (path, 3, 18, "xbr.scale"))
        self.assertIn(":3:18: error:", str(e))
        with self.assertRaises(stylepipe.MediaError) as missing:
            stylepipe.Chain.from_yaml("/nonexistent/config.yaml")
        self.assertIsInstance(missing.exception, OSError)
        with self.assertRaises(stylepipe.ConfigError) as unknown:
            stylepipe.Chain([("pencl", {})])
        self.assertEqual(unknown.exception.field, "pencl")
        if "cuda" not in stylepipe.build_backends():
            with self.assertRaises(stylepipe.DeviceError) as no_gpu:
                stylepipe.Chain([("pencil", {})], device="cuda:0")
            self.assertIsInstance(no_gpu.exception, RuntimeError)

    @unittest.skipIf(UNDER_ASAN, "under ASan the resident size is ASan's (shadow, stack depot), not the module's;"
                                 " the release build runs this check")
    def test_ten_thousand_calls_leave_the_memory_flat(self):
        generator = rng(4)
        image = photo(24, 32, generator)
        out = np.empty((48, 64, 4), np.uint8)
        chain = stylepipe.Chain([("xbr", {"scale": 2})])
        for _ in range(500):
            chain(image, out=out)
        gc.collect()
        start = rss_bytes()
        for _ in range(10000):
            chain(image, out=out)
        gc.collect()
        grown = rss_bytes() - start
        self.assertLess(grown, 1 << 20, "10,000 calls grew the process by %d bytes" % grown)

    def test_python_threads_run_while_the_chain_works(self):
        # The GIL is released for the whole C++ call: another thread keeps
        # running Python meanwhile.
        generator = rng(5)
        # Calls long against the interpreter's 5 ms switch interval.
        image = photo(720, 960, generator)
        chain = stylepipe.Chain([("xbr", {"scale": 3})])
        out = np.empty((2160, 2880, 4), np.uint8)
        chain(image, out=out)

        def count_for(seconds):
            n, end = 0, time.perf_counter() + seconds
            while time.perf_counter() < end:
                n += 1
            return n

        alone = count_for(0.3) / 0.3
        done = threading.Event()

        def work():
            for _ in range(3):
                chain(image, out=out)
            done.set()

        worker = threading.Thread(target=work)
        start = time.perf_counter()
        worker.start()
        counted = 0
        while not done.is_set():
            counted += count_for(0.01)
        worker.join()
        elapsed = time.perf_counter() - start
        share = counted / (alone * elapsed)
        # Held, the counting thread would run only between calls: a few percent.
        self.assertGreater(share, 0.35, "the counting thread ran %.0f%% of its speed alone" % (100 * share))

    @unittest.skipIf((os.cpu_count() or 1) < 2, "one core: the shared pool would be the caller's thread too")
    def test_chains_with_their_own_thread_run_there_side_by_side(self):
        # Chains of the shared pool (threads=0) take it in turn and run on its
        # threads; with threads=1 a chain runs on its caller's thread, so two
        # Python threads run two chains side by side. Measured in CPU time
        # (where the work ran) and in overlapping calls, not in speed: a loaded
        # machine slows both alike.
        generator = rng(6)
        images = [photo(480, 640, generator) for _ in range(2)]
        config = [("pencil", {"color": True}), ("xbr", {"scale": 2})]
        expected = [stylepipe.Chain(config)(image) for image in images]

        def caller_share(chain, image):  # of the process's CPU time, the share spent on the calling thread
            process, caller = time.process_time(), time.thread_time()
            for _ in range(3):
                chain.reset()
                chain(image)
            return (time.thread_time() - caller) / (time.process_time() - process)

        own = caller_share(stylepipe.Chain(config, threads=1), images[0])
        shared = caller_share(stylepipe.Chain(config), images[0])
        self.assertGreater(own, 0.9, "threads=1 ran %.0f%% of its work on the caller's thread" % (100 * own))
        self.assertLess(shared, 0.8, "the shared pool ran %.0f%% of the work on the caller's thread" % (100 * shared))

        chains = [stylepipe.Chain(config, threads=1) for _ in images]
        self.assertEqual([chain.threads for chain in chains], [1, 1])
        outs = [np.empty_like(e) for e in expected]
        calls = [[], []]

        def work(i):
            for _ in range(4):
                chains[i].reset()
                start = time.perf_counter()
                chains[i](images[i], out=outs[i])
                calls[i].append((start, time.perf_counter()))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for out, want in zip(outs, expected):
            np.testing.assert_array_equal(out, want, "a chain of its own thread gives other pictures")
        overlap = sum(max(0.0, min(a[1], b[1]) - max(a[0], b[0])) for a in calls[0] for b in calls[1])
        busy = min(sum(end - start for start, end in c) for c in calls)
        self.assertGreater(overlap, 0.5 * busy, "the two threads' calls overlapped %.0f%% of the time" % (100 * overlap / busy))

    def test_threads_is_checked(self):
        chain = stylepipe.Chain([("xbr", {"scale": 2})])
        self.assertEqual(chain.threads, 0)
        with self.assertRaises(ValueError):
            chain.threads = -1


if __name__ == "__main__":
    unittest.main()
