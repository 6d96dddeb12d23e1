"""Peer libraries for pbj's benchmarks: Google's protobuf, pure-protobuf and betterproto2."""
