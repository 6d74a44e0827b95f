"""The README's kernel-asset example runs as written (so the documentation cannot rot)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import warp as wp

import procgen_nb as pg

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_kernel_asset_example(tmp_path):
    text = README.read_text()
    section = text[text.index("## Writing a kernel asset") :]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
    yaml_src = next(b for lang, b in blocks if lang == "yaml")
    source, usage = [b for lang, b in blocks if lang == "python"][:2]
    folder = tmp_path / "kernels" / "scale"
    folder.mkdir(parents=True)
    (folder / "bindings.yaml").write_text(yaml_src)
    (folder / "scale.py").write_text(source)
    col = pg.ops.transfer.upload(values={"a": [1.0, 2.0, 3.0]})["columns"]["a"]
    scope = {"pg": pg, "col": col}
    try:
        exec(usage.replace('"mylab/kernels"', repr(str(tmp_path / "kernels"))), scope)
        assert pg.ops.transfer.readback(columns={"b": scope["out"]["columns"]["b"]})["values"][
            "b"
        ] == [2.0, 4.0, 6.0]
        live = pg.LiveCount(wp.array([2], dtype=wp.uint32, device=col.device), 3)
        out = pg.ops.device.kernel(
            kernel=scope["SCALE"], bind={"a": col}, domain=live, uniforms={"factor": 2.0}
        )
        np.testing.assert_array_equal(out["columns"]["b"].numpy(), [2.0, 4.0, 0.0])
    finally:
        pg.asset.remove_path("mylab")
