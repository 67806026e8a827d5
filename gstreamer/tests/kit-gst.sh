# Sourced by the GPU machine's GStreamer scripts (gpu_check.sh,
# live_latency.sh), from the checkout's root: the kit's GStreamer tools with
# the plugin of build-gpu/ (a subshell each: the kit's GLib stays out of
# everything else), and the element's stats line as its log gives it.
kit=/tmp/kit/gst-kit
kit_root=$PWD
gst() { (. "$kit/env.sh"; export GST_PLUGIN_PATH=$kit_root/build-gpu/gstreamer; "$@"); }
# The element's stats line (logged when it stops), and one of its counters.
stats_of() { grep -o "stats: stylepipe-stats.*" "$1" | tail -1; }
field() { sed -n "s/.*, $2=(guint64)\([0-9]*\).*/\1/p" <<<"$1"; }
