"""Text helpers the compressors share: the one text field of a part (`fields`), line patterns
worth keeping (`patterns`) and keeping some lines while marking the cut runs (`lines`).

They sit below the compressors and know nothing of routing or facts, so that every module
of `deepmem.compressors` is a compressor.
"""
