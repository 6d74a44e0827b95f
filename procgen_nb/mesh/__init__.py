"""Meshes: triangle-triangle intersection, booleans and road overlap on the device.

``mesh_intersect(a, b, mode)`` (a node: ``mode`` and ``room`` are its params; it is
called like a function too) wires the kernels ``procgen/intersect_pairs`` (the
triangles of B each triangle of A crosses, through a uniform grid over B),
``procgen/intersect_cuts`` (the segment of each pair), ``procgen/intersect_unify`` (the
cut ends welded into vertices) and ``procgen/intersect_retri`` (the cut triangles split
along their cuts, each piece classified inside or outside the other closed mesh by its
ray parity). ``mode="cut"`` answers the cut curves (welded vertices and edges); the
booleans keep the pieces of A and B by side (``union``: both outside; ``intersection``:
both inside; ``difference``: A outside B and B inside A turned over).

Coplanar faces (boxes stacked or side by side, or flush with each other): the rim of
the overlap of two faces in one plane is where the faces of the other mesh out of that
plane touch it, and those pairs are cut like any other, so no piece straddles it; a
piece lying on the other surface is classified by its normal against the other's
there (the "same/opposite" rule of Carve, Cork and libigl): ``union`` and
``intersection`` keep the pieces of A whose normals agree with B's (once: B's copies
are dropped) and drop both where they oppose; ``difference`` keeps A's where they
oppose and drops both where they agree. On axis-aligned planes and float32 corners the
tests are exact; off the axes a corner within ``1e-6`` of the corners' reach from a
plane lies on it. The output is a soup with T-junctions (a piece's corner may lie on
a neighbour's edge): closed once each edge is split at the corners lying on it.

``road_mesh(xy, width)`` triangulates the ribbon of a closed centerline (two triangles
per segment); ``road_overlap`` lists the triangles of a road that overlap (in the xy
plane) non-adjacent triangles of the same road, or the triangles of another road.

What is read back: the grid over a mesh is built on the host from its corners (the
inputs are host arrays); the pair total is read once to size the pair list (a pair list
has no smaller bound than A times B); the result mesh is read back at the end. Between
those, every count stays on the device and each kernel runs over it as a live count.
"""

from __future__ import annotations

from ._cells import MAX_CELLS as MAX_CELLS
from ._intersect import MODES as MODES
from ._intersect import IntersectResult, mesh_intersect
from ._roads import RoadOverlap, road_mesh, road_overlap, road_overlap_batch
from ._shapes import Mesh, box_mesh, mesh_volume, sphere_mesh

#: handed on as well: ``MODES`` (the modes ``mesh_intersect`` takes) and ``MAX_CELLS`` (the
#: most grid cells a call lays over a mesh: the track door's road check sizes its chunks by it)
__all__ = [
    "IntersectResult",
    "Mesh",
    "RoadOverlap",
    "box_mesh",
    "mesh_intersect",
    "mesh_volume",
    "road_mesh",
    "road_overlap",
    "road_overlap_batch",
    "sphere_mesh",
]
