"""Registry-wide views: ``param_explorer()`` lists every registered track generator.

- ``param_explorer(generator=None, **options)``: a picker of every generator registered in
  ``track_gen.plugin.registry`` (entry points included), the picked one's default
  ``Params`` as a table, and ``procgen_nb.ui.explore`` of it.
- ``write_html(path)``: the same overview as a static HTML page (default Params tables and
  a matplotlib PNG of a few tracks per generator); ``procgen-nb explore`` writes it.
"""

from __future__ import annotations

from .param_explorer import (
    ParamExplorer,
    default_params,
    generator_names,
    param_explorer,
    write_html,
)

__all__ = ["ParamExplorer", "default_params", "generator_names", "param_explorer", "write_html"]
