"""What a tool call does, read from its input alone: the shell parser, the patch and Python
readers, and `touches` (the files a call shows and changes) that every other layer asks."""
