#!/usr/bin/env python3
"""Rewrites raw NV12 or I420 frames as GStreamer's filesink wrote them into
FFmpeg's rawvideo layout, so that `stylepipe run -f rawvideo` reads the very
frames the element saw.

GStreamer rounds each row up to 4 bytes and the height up to 2 rows
(video-info.c, fill_planes); FFmpeg's rawvideo packs rows with no padding.
For an odd size the two differ, and reading one as the other shears the
picture, so the test would compare different inputs.

usage: pack_gst_raw.py FORMAT WIDTH HEIGHT IN OUT
"""
import sys


def round_up(value, multiple):
    return (value + multiple - 1) // multiple * multiple


def planes(fmt, width, height):
    """(stride, rows, bytes of a row FFmpeg keeps, rows GStreamer allocates) per plane, in file order."""
    chroma_rows = (height + 1) // 2
    luma_stride = round_up(width, 4)
    if fmt == "NV12":
        return [(luma_stride, height, width, round_up(height, 2)),
                (luma_stride, chroma_rows, round_up(width, 2), round_up(height, 2) // 2)]
    if fmt == "I420":
        chroma_width = (width + 1) // 2
        chroma_stride = round_up(chroma_width, 4)
        chroma = (chroma_stride, chroma_rows, chroma_width, round_up(height, 2) // 2)
        return [(luma_stride, height, width, round_up(height, 2)), chroma, chroma]
    raise SystemExit(f"pack_gst_raw.py: format {fmt}: only NV12 and I420")


def main():
    fmt, width, height, source, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    layout = planes(fmt, width, height)
    gst_frame = sum(stride * allocated_rows for stride, _, _, allocated_rows in layout)
    data = open(source, "rb").read()
    if not data or len(data) % gst_frame:
        raise SystemExit(f"pack_gst_raw.py: {source}: {len(data)} bytes is not a whole number of "
                         f"{gst_frame}-byte {fmt} {width}x{height} frames")
    with open(target, "wb") as out:
        for frame_start in range(0, len(data), gst_frame):
            plane_start = frame_start
            for stride, rows, kept, allocated_rows in layout:
                for row in range(rows):
                    start = plane_start + row * stride
                    out.write(data[start:start + kept])
                plane_start += stride * allocated_rows


if __name__ == "__main__":
    main()
