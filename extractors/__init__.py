"""Extractors: pure functions over the message model that find what a checkpoint keeps."""
