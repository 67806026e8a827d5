#!/usr/bin/env python3
"""README's GStreamer recipes run as written.

    check_readme_gstreamer.py README STYLEPIPE PLUGIN_DIR

In a scratch folder (where `configs/` is the checkout's), with the plugin
found through GST_PLUGIN_PATH as the README says:
- the file recipe turns a generated in.mp4 into out.mp4 with as many frames,
  and its pictures equal `stylepipe run` of the same decoded frames;
- the live emulator recipes run with the window replaced by a live 60 fps
  BGRx source of an emulator's size and the screen by fakesink (what a
  machine without X can do); the recording is a video of every frame.
The GPU recipe (nvh264dec) runs on the GPU machine: gstreamer/tests/gpu_check.sh.
Exits 1 on any failure, 77 where a GStreamer element the recipes use is missing.
"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

LIVE_SOURCE = "videotestsrc is-live=true num-buffers=90 pattern=ball ! video/x-raw,format=BGRx,width=256,height=240"


def frames_of(path, cwd):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_frames,width,height", "-of", "csv=p=0", path],
                         cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()
    return out


def run(command, cwd, env, what):
    result = subprocess.run(["bash", "-e", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=240)
    if result.returncode != 0:
        sys.exit(f"the README's {what} failed (exit {result.returncode}):\n{command}\n{result.stdout[-2000:]}"
                 f"{result.stderr[-2000:]}")


def main():
    readme, stylepipe, plugin_dir = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    text = Path(readme).read_text(encoding="utf-8")
    section = text.split("\n## GStreamer\n", 1)
    if len(section) != 2:
        sys.exit(f"{readme}: no '## GStreamer' section")
    blocks = re.findall(r"```sh\n(.*?)```", section[1].split("\n## ", 1)[0], re.S)
    file_recipe = next((b for b in blocks if "filesrc location=in.mp4 ! decodebin" in b), None)
    live_recipe = next((b for b in blocks if "ximagesrc" in b), None)
    if not file_recipe or not live_recipe:
        sys.exit(f"{readme}: the GStreamer section lacks the file (decodebin) or the live (ximagesrc) recipe")
    for element in ("decodebin", "avdec_h264", "x264enc", "mp4mux", "matroskamux", "videotestsrc", "qtdemux"):
        if subprocess.run(["gst-inspect-1.0", "--exists", element]).returncode != 0:
            print(f"SKIP: no GStreamer element {element} (gstreamer1.0-libav, -plugins-good, -plugins-ugly)")
            sys.exit(77)

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.symlink(Path(readme).resolve().parent / "configs", root / "configs")
        env = dict(os.environ)
        env["GST_REGISTRY_1_0"] = str(root / "registry.bin")
        # The README's own `export GST_PLUGIN_PATH=$PWD/build/gstreamer`, for this build.
        setup = f"export GST_PLUGIN_PATH={plugin_dir}\n"

        subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=176x144:rate=15", "-frames:v", "12",
                        "-c:v", "libx264", "-pix_fmt", "yuv420p", "in.mp4"], cwd=root, check=True)
        run(setup + file_recipe, root, env, "file recipe")
        if frames_of("out.mp4", root) != "176,144,12":
            sys.exit(f"out.mp4 is {frames_of('out.mp4', root)}, not 176x144 with 12 frames")
        # The element's frames against the CLI's on the same decoded frames:
        # out.mp4 is x264's, so compare before the encoder.
        element = setup + file_recipe.split("videoconvert ! x264enc", 1)[0].replace("\\\n", " ").strip()
        run(element + " video/x-raw,format=RGBA ! filesink location=element.rgba", root, env, "file recipe's element")
        subprocess.run(["ffmpeg", "-v", "error", "-i", "in.mp4", "-f", "rawvideo", "-pix_fmt", "yuv420p", "in.yuv"],
                       cwd=root, check=True)
        subprocess.run([stylepipe, "run", "configs/pencil.yaml", "-f", "rawvideo", "--pix-fmt", "yuv420p", "--size",
                        "176x144", "--rate", "15", "-i", "in.yuv", "--backend", "cpu", "--progress", "none", "--codec",
                        "rawvideo", "-f", "rawvideo", "--pix-fmt", "rgba", "-o", "cli.rgba"], cwd=root, check=True,
                       env=dict(os.environ, LD_PRELOAD=""))
        element_bytes, cli_bytes = (root / "element.rgba").read_bytes(), (root / "cli.rgba").read_bytes()
        if len(cli_bytes) != 176 * 144 * 4 * 12 or element_bytes != cli_bytes:
            sys.exit(f"the element's frames ({len(element_bytes)} bytes) differ from stylepipe run's ({len(cli_bytes)})")

        for line in re.findall(r"gst-launch-1\.0 .*?(?<!\\)\n", live_recipe.replace("\\\n", " ") + "\n", re.S):
            command = line.replace("ximagesrc xid=$EMULATOR_WINDOW use-damage=false ! video/x-raw,framerate=60/1",
                                   LIVE_SOURCE + ",framerate=60/1").replace("autovideosink", "fakesink")
            if "ximagesrc" in command or "autovideosink" in command:
                sys.exit(f"the live recipe's source or sink is not the README's: {line}")
            run(setup + command, root, env, "live recipe")
        if frames_of("session.mkv", root) != "1024,960,90":
            sys.exit(f"session.mkv is {frames_of('session.mkv', root)}, not 1024x960 (xbr 4x) with 90 frames")
    print("the README's GStreamer recipes run: the file's frames equal stylepipe run's; the live one records every frame")


if __name__ == "__main__":
    main()
